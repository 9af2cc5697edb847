//! [`Batch`]: one table's rows on the parse/derive thread, appended value by value into
//! Arrow builders sized for a whole batch; name columns go into a per-batch dictionary
//! ([`DictCol`]). A batch is full at [`BATCH_ROWS`] rows or [`BATCH_TEXT_BYTES`] of text;
//! [`Batch::finish`] hands its rows over as a [`TableBatch`] for the writer thread and
//! starts the next batch with empty builders and an empty dictionary.
use crate::derive::StateText;
use crate::model::strings::FastMap;
use crate::model::{Interner, Sym};
use crate::store::name_chunk::{NameBatch, NameId, NULL_KEY};
use crate::Result;
use arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow::datatypes::{DataType, Schema};
use std::sync::Arc;

/// Names interned first (the usual trace has a few hundred) have their batch key in a
/// table indexed by [`Sym`]; later ones in a map.
const DENSE_SYMS: usize = 1 << 16;
/// Rows per Arrow batch handed to the writer thread.
const BATCH_ROWS: usize = 65_536;
/// Bytes of text a batch holds at most, counted as Parquet sees it (a name once per row,
/// though the batch keeps it once): the writer encodes a whole batch as one page when it can,
/// so rows of long names would otherwise make pages, and buffers, of hundreds of MB.
const BATCH_TEXT_BYTES: usize = 16 << 20;

// A dozen of these per table, each appended to for every row: the dictionary column stays
// inline (boxing it would add a pointer chase per name on the hot path for no memory gain).
#[allow(clippy::large_enum_variant)]
pub(super) enum Col {
    I64(Int64Builder),
    I32(Int32Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Dict(DictCol),
    Bool(BooleanBuilder),
}

/// A column of interned names, built as a small dictionary per batch: each row costs a key,
/// and each distinct name is copied once per batch instead of once per row (copying names
/// was ~8% of the parse/derive thread). The writer thread turns the batch's entries into
/// the row group's dictionary by their [`Sym`] ([`NameChunk`]), without hashing the names
/// again. One lives for one batch ([`Batch::finish`] empties it).
///
/// [`NameChunk`]: crate::store::name_chunk::NameChunk
pub(super) struct DictCol {
    batch: NameBatch,
    /// Key + 1 of each [`Sym`] below [`DENSE_SYMS`] in this batch (0: not yet in it).
    by_sym: Vec<u32>,
    /// The same for the others: a batch holds at most [`BATCH_ROWS`] of them, whereas a
    /// dense table up to the largest would cost 4 bytes per name ever interned, per column
    /// and batch (4 MB each on a trace of a million task names).
    by_big_sym: FastMap<Sym, u32>,
    /// Keys of text appended as `&str` (names that are not interned).
    by_str: FastMap<Box<str>, u32>,
}

impl DictCol {
    fn new() -> Self {
        DictCol {
            batch: NameBatch::with_capacity(BATCH_ROWS),
            by_sym: Vec::new(),
            by_big_sym: FastMap::default(),
            by_str: FastMap::default(),
        }
    }

    /// Appends `s`; returns its length in bytes.
    #[inline(always)]
    pub(super) fn sym(&mut self, s: Option<Sym>, names: &Interner) -> usize {
        let Some(s) = s else {
            self.batch.keys.push(NULL_KEY);
            return 0;
        };
        let known = match self.by_sym.get(s as usize) {
            Some(&k) => k,
            None => self.by_big_sym.get(&s).copied().unwrap_or(0),
        };
        let key = match known {
            0 => self.add(s, names),
            k => k - 1,
        };
        self.batch.keys.push(key);
        self.batch.entry_len(key as usize)
    }

    /// Adds `s` to the batch's dictionary; returns its key.
    #[cold]
    #[inline(never)]
    fn add(&mut self, s: Sym, names: &Interner) -> u32 {
        let key = self.batch.push_entry(NameId::Sym(s), names.resolve(s));
        let i = s as usize;
        if i < DENSE_SYMS {
            if i >= self.by_sym.len() {
                self.by_sym.resize(i + 1, 0);
            }
            if let Some(k) = self.by_sym.get_mut(i) {
                *k = key + 1;
            }
        } else {
            self.by_big_sym.insert(s, key + 1);
        }
        key
    }

    /// Appends `v`; returns its length in bytes.
    pub(super) fn str(&mut self, v: Option<&str>) -> usize {
        let Some(v) = v else {
            self.batch.keys.push(NULL_KEY);
            return 0;
        };
        let key = match self.by_str.get(v) {
            Some(&k) => k,
            None => {
                let key = self.batch.push_entry(NameId::Text, v);
                self.by_str.insert(v.into(), key);
                key
            }
        };
        self.batch.keys.push(key);
        v.len()
    }

    /// Takes the batch's rows, and forgets its dictionary.
    fn finish(&mut self) -> NameBatch {
        let batch = std::mem::replace(&mut self.batch, NameBatch::with_capacity(BATCH_ROWS));
        for id in &batch.ids {
            if let NameId::Sym(s) = id {
                if let Some(k) = self.by_sym.get_mut(*s as usize) {
                    *k = 0;
                }
            }
        }
        self.by_big_sym.clear();
        self.by_str.clear();
        batch
    }
}

/// Builders for every column of `schema`, sized for a whole batch: arrow's builders lose their
/// capacity on `finish`, and growing them again by doubling (reallocate, copy, fault in new
/// pages) took about a tenth of an ingest's main thread.
fn builders(schema: &Schema) -> Vec<Col> {
    schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Int64 => Col::I64(Int64Builder::with_capacity(BATCH_ROWS)),
            DataType::Int32 => Col::I32(Int32Builder::with_capacity(BATCH_ROWS)),
            DataType::Float64 => Col::F64(Float64Builder::with_capacity(BATCH_ROWS)),
            DataType::Boolean => Col::Bool(BooleanBuilder::with_capacity(BATCH_ROWS)),
            DataType::Dictionary(_, _) => Col::Dict(DictCol::new()),
            _ => Col::Str(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16)),
        })
        .collect()
}

/// Builders for one table's columns; values are appended row by row in schema order.
pub struct Batch {
    pub(super) cols: Vec<Col>,
    at: usize,
    rows: usize,
    /// Bytes of text appended since the last [`Batch::finish`] (see [`BATCH_TEXT_BYTES`]).
    text_bytes: usize,
}

impl Batch {
    /// Empty builders for `schema`.
    pub fn new(schema: Arc<Schema>) -> Self {
        Batch { cols: builders(&schema), at: 0, rows: 0, text_bytes: 0 }
    }

    fn next(&mut self) -> Option<&mut Col> {
        let c = self.cols.get_mut(self.at);
        self.at += 1;
        c
    }

    /// Appends an integer (or NULL) to the next column.
    pub fn i64(&mut self, v: Option<i64>) -> &mut Self {
        match self.next() {
            Some(Col::I64(b)) => b.append_option(v),
            Some(Col::I32(b)) => b.append_option(v.and_then(|v| i32::try_from(v).ok())),
            _ => debug_assert!(false, "column type mismatch"),
        }
        self
    }

    /// Appends a float (or NULL) to the next column.
    pub fn f64(&mut self, v: Option<f64>) -> &mut Self {
        if let Some(Col::F64(b)) = self.next() {
            b.append_option(v);
        }
        self
    }

    /// Appends a string (or NULL) to the next column.
    pub fn str(&mut self, v: Option<&str>) -> &mut Self {
        let n = match self.next() {
            Some(Col::Str(b)) => {
                b.append_option(v);
                v.map_or(0, str::len)
            }
            Some(Col::Dict(d)) => d.str(v),
            _ => {
                debug_assert!(false, "column type mismatch");
                0
            }
        };
        self.text_bytes += n;
        self
    }

    /// Appends an interned name (or NULL) to the next column.
    pub fn sym(&mut self, v: Option<Sym>, names: &Interner) -> &mut Self {
        let n = match self.next() {
            Some(Col::Dict(d)) => d.sym(v, names),
            Some(Col::Str(b)) => {
                let v = v.map(|s| names.resolve(s));
                b.append_option(v);
                v.map_or(0, str::len)
            }
            _ => {
                debug_assert!(false, "column type mismatch");
                0
            }
        };
        self.text_bytes += n;
        self
    }

    /// Appends an interval's state (an interned name or free text) to the next column.
    pub fn state(&mut self, t: &StateText, names: &Interner) -> &mut Self {
        match t {
            StateText::Sym(s) => self.sym(Some(*s), names),
            StateText::Owned(text) => self.str(Some(text)),
        }
    }

    /// Appends a boolean to the next column.
    pub fn bool(&mut self, v: Option<bool>) -> &mut Self {
        if let Some(Col::Bool(b)) = self.next() {
            b.append_option(v);
        }
        self
    }

    /// Ends a row whose values were appended to the builders directly, `text` bytes of
    /// text in all.
    pub(super) fn end_row_of(&mut self, text: usize) {
        debug_assert_eq!(self.at, 0, "row appended both ways");
        self.rows += 1;
        self.text_bytes += text;
    }

    /// Ends the current row.
    pub fn end_row(&mut self) {
        debug_assert_eq!(self.at, self.cols.len(), "row has the wrong number of values");
        self.at = 0;
        self.rows += 1;
    }

    /// Rows appended since the last [`Batch::finish`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when the batch should go to the writer: [`BATCH_ROWS`] rows, or
    /// [`BATCH_TEXT_BYTES`] of text.
    pub fn is_full(&self) -> bool {
        self.rows >= BATCH_ROWS || self.text_bytes >= BATCH_TEXT_BYTES
    }

    /// True when no row is pending.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Takes the appended rows, and starts the next batch.
    pub fn finish(&mut self) -> Result<TableBatch> {
        let rows = self.rows;
        let cols = self
            .cols
            .iter_mut()
            .map(|c| match c {
                // New builders of full size (see `builders`).
                Col::I64(b) => arrow_col(
                    std::mem::replace(b, Int64Builder::with_capacity(BATCH_ROWS)).finish(),
                ),
                Col::I32(b) => arrow_col(
                    std::mem::replace(b, Int32Builder::with_capacity(BATCH_ROWS)).finish(),
                ),
                Col::F64(b) => arrow_col(
                    std::mem::replace(b, Float64Builder::with_capacity(BATCH_ROWS)).finish(),
                ),
                Col::Str(b) => arrow_col(
                    std::mem::replace(b, StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16))
                        .finish(),
                ),
                Col::Bool(b) => arrow_col(
                    std::mem::replace(b, BooleanBuilder::with_capacity(BATCH_ROWS)).finish(),
                ),
                Col::Dict(d) => ColData::Names(d.finish()),
            })
            .collect();
        self.rows = 0;
        self.text_bytes = 0;
        Ok(TableBatch { rows, cols })
    }
}

fn arrow_col(a: impl arrow::array::Array + 'static) -> ColData {
    ColData::Arrow(Arc::new(a))
}

/// One column of a [`TableBatch`].
pub enum ColData {
    /// Values as Arrow builds them.
    Arrow(ArrayRef),
    /// A name column.
    Names(NameBatch),
}

/// Rows of one table on their way to the writer thread.
pub struct TableBatch {
    /// Rows.
    pub rows: usize,
    /// Columns, in the file's order.
    pub cols: Vec<ColData>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::Field;

    /// A name column, as the writer schema makes it.
    fn name_field(name: &str) -> Field {
        Field::new(
            name,
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        )
    }

    /// The first column of the finished batch as text, and its dictionary's size.
    fn names_of(batch: &mut Batch) -> (Vec<Option<String>>, usize) {
        let tb = batch.finish().unwrap();
        let Some(ColData::Names(col)) = tb.cols.first() else { panic!("not a name column") };
        assert_eq!(tb.rows, col.len());
        let text = (0..col.len()).map(|r| col.value(r).map(str::to_string));
        (text.collect(), col.ids.len())
    }

    #[test]
    fn name_columns_keep_every_value_across_batches() {
        let schema = Arc::new(Schema::new(vec![name_field("name")]));
        let mut n = Interner::default();
        let (a, b) = (n.intern("alpha"), n.intern("beta"));
        let mut batch = Batch::new(schema);
        let text = |batch: &mut Batch| names_of(batch).0;
        for (v, by_name) in [(Some(a), false), (None, false), (Some(b), false), (Some(a), true)] {
            if by_name {
                batch.str(v.map(|s| n.resolve(s)));
            } else {
                batch.sym(v, &n);
            }
            batch.end_row();
        }
        let want = |v: &[Option<&str>]| v.iter().map(|x| x.map(str::to_string)).collect::<Vec<_>>();
        assert_eq!(text(&mut batch), want(&[Some("alpha"), None, Some("beta"), Some("alpha")]));
        // A new batch starts its own dictionary: no key from the previous one leaks in.
        batch.sym(Some(b), &n).end_row();
        batch.state(&StateText::Owned("free text".into()), &n).end_row();
        assert_eq!(text(&mut batch), want(&[Some("beta"), Some("free text")]));
    }

    #[test]
    fn names_interned_late_share_their_key_too() {
        let schema = Arc::new(Schema::new(vec![name_field("name")]));
        let mut n = Interner::default();
        let syms: Vec<Sym> = (0..DENSE_SYMS + 10).map(|i| n.intern(&format!("T_{i}"))).collect();
        let (low, high) = (syms[3], syms[DENSE_SYMS + 5]);
        let mut batch = Batch::new(schema);
        for s in [high, low, high, low] {
            batch.sym(Some(s), &n).end_row();
        }
        let (text, distinct) = names_of(&mut batch);
        assert_eq!(distinct, 2, "each name once in the batch's dictionary");
        let (h, l) = (Some(format!("T_{}", DENSE_SYMS + 5)), Some("T_3".to_string()));
        assert_eq!(text, [h.clone(), l.clone(), h, l]);
    }

    #[test]
    fn a_batch_of_long_names_goes_out_by_size() {
        // Parquet sees a name once per row, though the batch stores it once: 2,000 names of
        // 10 kB in 65,536-row batches made pages of 160 MB and a peak that grew with the input.
        let schema = Arc::new(Schema::new(vec![
            name_field("name"),
            Field::new("note", DataType::Utf8, true),
        ]));
        let mut n = Interner::default();
        let long = n.intern(&"x".repeat(1 << 20));
        let short = n.intern("T");
        let mut batch = Batch::new(schema);
        let mut rows = 0;
        while !batch.is_full() {
            batch.sym(Some(long), &n).str(Some("note")).end_row();
            rows += 1;
        }
        assert_eq!(rows, 16, "16 rows of a 1 MiB name fill a batch");
        batch.finish().unwrap();
        assert!(!batch.is_full(), "finish starts counting again");
        for _ in 0..BATCH_ROWS - 1 {
            batch.sym(Some(short), &n).str(None).end_row();
        }
        assert!(!batch.is_full());
        batch.sym(Some(short), &n).str(Some(&"y".repeat(100))).end_row();
        assert!(batch.is_full(), "a full row count still sends the batch");
    }
}
