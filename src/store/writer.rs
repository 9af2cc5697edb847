//! The derive stage's [`Output`] for the archive: rows go into Arrow builders on the caller's
//! thread, full batches go to a writer thread that encodes zstd Parquet, so parsing and
//! compression overlap. One file per table: `<dir>/<table>/part-0.parquet` (the staging
//! directory of a capture; the archive renames it into place).
use super::name_chunk::{NameBatch, NameChunk, NameId, NULL_KEY};
use super::schema::{self, Table};
use crate::derive::{EventRow, InstanceRow, IntervalRow, LockRow, MessageRow, Output, StateText};
use crate::model::strings::FastMap;
use crate::model::{Interner, Sym};
use crate::{Error, Result};
use arrow::array::{
    ArrayRef, AsArray, BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowSchemaConverter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// zstd level of the Parquet pages unless `--zstd-level` says otherwise: level 3 keeps the
/// writer thread off the critical path of an ingest; 19 saves about 10% more and writes
/// several times slower.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// Names interned first (the usual trace has a few hundred) have their batch key in a
/// table indexed by [`Sym`]; later ones in a map.
const DENSE_SYMS: usize = 1 << 16;
/// Rows per Arrow batch handed to the writer thread.
const BATCH_ROWS: usize = 65_536;
/// Bytes of text a batch holds at most, counted as Parquet sees it (a name once per row,
/// though the batch keeps it once): the writer encodes a whole batch as one page when it can,
/// so rows of long names would otherwise make pages, and buffers, of hundreds of MB.
const BATCH_TEXT_BYTES: usize = 16 << 20;
/// Rows per Parquet row group (DESIGN.md: 100k to 1M).
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Bytes of encoded data a row group holds at most in memory before it is written.
const ROW_GROUP_BYTES: usize = 64 << 20;
/// Largest data page, bytes before compression.
const PAGE_BYTES: usize = 1 << 20;

/// Tables whose rows the derive stage streams, in [`Output`] order.
pub const EVENTS: usize = 0;
/// See [`EVENTS`].
pub const INTERVALS: usize = 1;
/// See [`EVENTS`].
pub const INSTANCES: usize = 2;
/// See [`EVENTS`].
pub const LOCK_REQUESTS: usize = 3;
/// See [`EVENTS`].
pub const MESSAGES: usize = 4;

// A dozen of these per table, each appended to for every row: the dictionary column stays
// inline (boxing it would add a pointer chase per name on the hot path for no memory gain).
#[allow(clippy::large_enum_variant)]
enum Col {
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
struct DictCol {
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
    fn sym(&mut self, s: Option<Sym>, names: &Interner) -> usize {
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
    fn str(&mut self, v: Option<&str>) -> usize {
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
    cols: Vec<Col>,
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
    fn end_row_of(&mut self, text: usize) {
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

/// A table file written by the writer thread.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// Table name.
    pub table: String,
    /// Path of the file.
    pub path: PathBuf,
    /// Rows.
    pub rows: u64,
    /// Bytes on disk.
    pub bytes: u64,
    /// Hex SHA-256 of the file.
    pub sha256: String,
}

/// Writes every table of one capture into `dir` as zstd Parquet.
pub struct CaptureWriter {
    tables: Vec<Table>,
    batches: Vec<Batch>,
    tx: Option<SyncSender<(usize, TableBatch)>>,
    handle: Option<JoinHandle<Result<Vec<WrittenFile>>>>,
}

/// Parquet footer key listing the columns a table's views compute, as `name = expression`
/// separated by `; `.
pub const COMPUTED_KEY: &str = "tracedb.computed_columns";

/// Integer columns with few distinct values, where a dictionary pays: written by
/// [`NameChunk::new_ints`], which finds a value's index without hashing it.
const SMALL_INT_COLUMNS: &[&str] = &[
    "instance",
    "source_instance",
    "target_instance",
    "process_instance",
    "sender_instance",
    "receiver_instance",
    "blocked_by_instance",
    "blockers",
    "preemptions",
    "migrations",
    "count",
    "tag",
    "size",
];

/// Whether `field` is written by a [`NameChunk`] of integers: a BIGINT column of
/// [`SMALL_INT_COLUMNS`], dictionary-encoded.
fn is_int_dict(field: &Field) -> bool {
    field.data_type() == &DataType::Int64 && SMALL_INT_COLUMNS.contains(&field.name().as_str())
}

/// Columns of interned names, appended with [`Batch::sym`] into per-batch dictionaries and
/// encoded by [`NameChunk`].
fn dict_columns(table: &str) -> &'static [&'static str] {
    match table {
        "events" => &["source", "source_type", "target", "target_type", "action", "core"],
        "intervals" => {
            &["entity", "entity_type", "channel", "state", "core", "start_action", "end_action"]
        }
        "instances" => &["entity", "entity_type", "core"],
        "lock_requests" => &["semaphore", "process", "blocked_by"],
        "messages" => &["sender", "receiver"],
        _ => &[],
    }
}

/// The schema [`Batch`] builds for `table`: its file schema with the name columns marked as
/// dictionaries (built as [`NameBatch`]es). In the files they are dictionary-encoded UTF-8
/// strings like any other (no Arrow schema is stored).
fn writer_schema(table: &Table) -> Arc<Schema> {
    let dicts = dict_columns(&table.name);
    let fields: Vec<Field> = table
        .file_schema()
        .fields()
        .iter()
        .map(|f| {
            if dicts.contains(&f.name().as_str()) {
                Field::new(
                    f.name(),
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    true,
                )
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// Sorted times and sequence numbers: delta encoding beats dictionaries.
fn delta_columns(table: &str) -> &'static [&'static str] {
    match table {
        "events" => &["seq", "ts"],
        "intervals" => &["ts"],
        "instances" => &["activate_ts", "start_ts", "terminate_ts"],
        "messages" => &["send_ts"],
        _ => &[],
    }
}

fn properties(table: &Table, zstd_level: i32) -> WriterProperties {
    let zstd = Compression::ZSTD(ZstdLevel::try_new(zstd_level).unwrap_or_default());
    // Pages of up to 1 MiB whatever their row count: zstd compresses each page on its own,
    // and arrow-rs's default of 20k rows per page cost ~15% of the archive's size.
    let mut b = WriterProperties::builder()
        .set_compression(zstd)
        .set_data_page_row_count_limit(usize::MAX)
        .set_data_page_size_limit(PAGE_BYTES)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        // Min/max per row group (in the footer) is what engines prune with; page-level
        // statistics and the page index cost ~100 bytes per column per file for nothing.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_created_by(format!("tracedb {}", crate::TOOL_VERSION));
    // Columns the views compute are not in the file; the file says how to compute them, so
    // a reader without tracedb (or its schema/*.sql) still finds the formulas.
    let computed: Vec<String> = table
        .columns
        .iter()
        .filter_map(|c| c.computed.as_ref().map(|e| format!("{} = {e}", c.name)))
        .collect();
    if !computed.is_empty() {
        b = b.set_key_value_metadata(Some(vec![KeyValue::new(
            COMPUTED_KEY.to_string(),
            computed.join("; "),
        )]));
    }
    for c in table.stored_columns() {
        let path = ColumnPath::from(c.name.as_str());
        if delta_columns(&table.name).contains(&c.name.as_str()) {
            b = b
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
        } else if c.sql_type == "VARCHAR" {
            // Min/max of names prunes nothing (a row group spans every name) and comparing
            // every string for them was ~5% of an ingest's CPU time.
            b = b.set_column_statistics_enabled(path, EnabledStatistics::None);
        } else if c.sql_type == "BIGINT" && !SMALL_INT_COLUMNS.contains(&c.name.as_str()) {
            // Durations and other wide integers: nearly every value distinct, so dictionary
            // indices cost more than zstd over the plain values (intervals.dur: 54 KB -> 42 KB
            // on freertos-4cores).
            b = b.set_column_dictionary_enabled(path, false);
        }
    }
    b.build()
}

/// One table's Parquet file on the writer thread. Rows go into row groups of at most
/// [`ROW_GROUP_ROWS`] rows (or [`ROW_GROUP_BYTES`] of encoded data): parquet-rs's column
/// writers encode the plain columns, [`NameChunk`]s the name columns.
struct TableFile {
    table: String,
    path: PathBuf,
    writer: SerializedFileWriter<File>,
    factory: ArrowRowGroupWriterFactory,
    fields: Fields,
    /// The current row group's parquet-rs writers (`None` at name columns, or before the
    /// row group's first row).
    arrow: Vec<Option<ArrowColumnWriter>>,
    /// The name columns' chunks, kept from one row group to the next.
    names: Vec<Option<NameChunk>>,
    /// Rows in the current row group.
    group_rows: usize,
    /// Rows written.
    rows: u64,
}

impl TableFile {
    fn create(dir: &Path, table: &Table, zstd_level: i32) -> Result<TableFile> {
        let tdir = dir.join(&table.name);
        std::fs::create_dir_all(&tdir).map_err(|e| Error::io(&tdir, e))?;
        let path = tdir.join("part-0.parquet");
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let bad = |e: parquet::errors::ParquetError| Error::Archive {
            path: path.clone(),
            message: e.to_string(),
        };
        // No ARROW:schema footer key: the Parquet types say it all (plain strings, integers,
        // doubles, booleans), and it cost ~0.3-1.4 KB per file.
        let schema = table.file_schema();
        let props = Arc::new(properties(table, zstd_level));
        let parquet_schema = ArrowSchemaConverter::new()
            .with_coerce_types(props.coerce_types())
            .convert(&schema)
            .map_err(bad)?;
        let writer = SerializedFileWriter::new(file, parquet_schema.root_schema_ptr(), props)
            .map_err(bad)?;
        let factory = ArrowRowGroupWriterFactory::new(&writer, schema.clone());
        let dicts = dict_columns(&table.name);
        let names = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let descr = parquet_schema.column(i);
                if dicts.contains(&f.name().as_str()) {
                    NameChunk::new(descr, zstd_level).map(Some).map_err(bad)
                } else if is_int_dict(f) {
                    NameChunk::new_ints(descr, zstd_level).map(Some).map_err(bad)
                } else {
                    Ok(None)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(TableFile {
            table: table.name.clone(),
            path,
            writer,
            factory,
            fields: schema.fields().clone(),
            arrow: Vec::new(),
            names,
            group_rows: 0,
            rows: 0,
        })
    }

    fn err(&self, e: parquet::errors::ParquetError) -> Error {
        Error::Archive { path: self.path.clone(), message: e.to_string() }
    }

    fn write(&mut self, batch: &TableBatch) -> Result<()> {
        if batch.cols.len() != self.fields.len() {
            return Err(Error::Sql(format!(
                "internal: {} columns for table {} of {}",
                batch.cols.len(),
                self.table,
                self.fields.len()
            )));
        }
        let mut at = 0;
        while at < batch.rows {
            if self.arrow.is_empty() {
                let index = self.writer.flushed_row_groups().len();
                let writers = self.factory.create_column_writers(index).map_err(|e| self.err(e))?;
                self.arrow = writers
                    .into_iter()
                    .zip(&self.names)
                    .map(|(w, n)| n.is_none().then_some(w))
                    .collect();
            }
            let n = (batch.rows - at).min(ROW_GROUP_ROWS - self.group_rows.min(ROW_GROUP_ROWS));
            let whole = at == 0 && n == batch.rows;
            for (i, col) in batch.cols.iter().enumerate() {
                let written = match (col, self.arrow.get_mut(i), self.names.get_mut(i)) {
                    (ColData::Names(b), _, Some(Some(chunk))) => chunk.write(b, at..at + n),
                    (ColData::Arrow(a), _, Some(Some(chunk))) => match a.as_primitive_opt() {
                        Some(ints) => chunk.write_ints(ints, at..at + n),
                        None => Err(parquet::errors::ParquetError::General(format!(
                            "column {i} is not BIGINT"
                        ))),
                    },
                    (ColData::Arrow(a), Some(Some(w)), _) => {
                        let a = if whole { a.clone() } else { a.slice(at, n) };
                        let field = self.fields.get(i).map(|f| f.as_ref());
                        let field = field.ok_or_else(|| Error::Sql("internal: no field".into()))?;
                        compute_leaves(field, &a)
                            .and_then(|leaves| leaves.iter().try_for_each(|leaf| w.write(leaf)))
                    }
                    _ => {
                        return Err(Error::Sql(format!(
                            "internal: column {i} of table {} has the wrong kind",
                            self.table
                        )))
                    }
                };
                written.map_err(|e| self.err(e))?;
            }
            at += n;
            self.group_rows += n;
            self.rows += n as u64;
            // Rows of long names or notes: a row group closes at a size too, so the memory
            // it holds stays bounded whatever the rows hold.
            if self.group_rows >= ROW_GROUP_ROWS || self.group_bytes() > ROW_GROUP_BYTES {
                self.close_row_group()?;
            }
        }
        Ok(())
    }

    /// Bytes the current row group holds, encoded.
    fn group_bytes(&self) -> usize {
        let arrow: usize =
            self.arrow.iter().flatten().map(ArrowColumnWriter::get_estimated_total_bytes).sum();
        arrow + self.names.iter().flatten().map(NameChunk::memory_size).sum::<usize>()
    }

    fn close_row_group(&mut self) -> Result<()> {
        if self.arrow.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let bad = |e: parquet::errors::ParquetError| Error::Archive {
            path: path.clone(),
            message: e.to_string(),
        };
        let mut group = self.writer.next_row_group().map_err(bad)?;
        for (w, n) in self.arrow.drain(..).zip(self.names.iter_mut()) {
            match (w, n) {
                (Some(w), _) => w.close().and_then(|c| c.append_to_row_group(&mut group)),
                (None, Some(chunk)) => {
                    chunk.close().and_then(|(bytes, close)| group.append_column(&bytes, close))
                }
                (None, None) => {
                    Err(parquet::errors::ParquetError::General("a column without a writer".into()))
                }
            }
            .map_err(bad)?;
        }
        group.close().map_err(bad)?;
        self.group_rows = 0;
        Ok(())
    }

    fn finish(mut self) -> Result<WrittenFile> {
        self.close_row_group()?;
        let file = self
            .writer
            .into_inner()
            .map_err(|e| Error::Archive { path: self.path.clone(), message: e.to_string() })?;
        let path = self.path;
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        let bytes = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let sha256 = super::verify::file_sha256(&path).map_err(|e| Error::io(&path, e))?;
        Ok(WrittenFile { table: self.table, path, rows: self.rows, bytes, sha256 })
    }
}

impl CaptureWriter {
    /// Creates `dir/<table>/part-0.parquet` for every table and starts the writer thread;
    /// pages are compressed with zstd at `zstd_level` (1 to 22).
    pub fn create(dir: &Path, zstd_level: i32) -> Result<Self> {
        let tables = schema::tables();
        let files = tables
            .iter()
            .map(|t| TableFile::create(dir, t, zstd_level))
            .collect::<Result<Vec<_>>>()?;
        let (tx, rx) = sync_channel::<(usize, TableBatch)>(8);
        let handle = std::thread::Builder::new()
            .name("tracedb-write".into())
            .spawn(move || -> Result<Vec<WrittenFile>> {
                let mut files = files;
                for (i, batch) in rx {
                    if let Some(f) = files.get_mut(i) {
                        f.write(&batch)?;
                    }
                }
                files.into_iter().map(TableFile::finish).collect()
            })
            .map_err(|e| Error::io(dir, e))?;
        let batches = tables.iter().map(|t| Batch::new(writer_schema(t))).collect();
        Ok(CaptureWriter { tables, batches, tx: Some(tx), handle: Some(handle) })
    }

    /// Index of table `name`.
    pub fn table_index(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.name == name)
    }

    /// The builders of table `i`.
    pub fn batch(&mut self, i: usize) -> Option<&mut Batch> {
        self.batches.get_mut(i)
    }

    /// Sends table `i`'s rows to the writer when the batch is full (or `force`).
    #[inline]
    pub fn flush(&mut self, i: usize, force: bool) -> Result<()> {
        // Asked after every row: the check inline, the sending out of line.
        match self.batches.get(i) {
            Some(b) if !b.is_empty() && (force || b.is_full()) => self.send(i),
            _ => Ok(()),
        }
    }

    /// Sends table `i`'s rows to the writer thread.
    #[inline(never)]
    fn send(&mut self, i: usize) -> Result<()> {
        let Some(b) = self.batches.get_mut(i) else { return Ok(()) };
        let batch = b.finish()?;
        let sent = self.tx.as_ref().map(|tx| tx.send((i, batch)));
        if let Some(Err(_)) = sent {
            // The writer thread stopped: its error is reported by `finish`.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Flushes everything, closes the files and returns them.
    pub fn finish(mut self) -> Result<Vec<WrittenFile>> {
        for i in 0..self.batches.len() {
            self.flush(i, true)?;
        }
        self.join()
    }

    fn join(&mut self) -> Result<Vec<WrittenFile>> {
        self.tx = None;
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Sql("internal: the Parquet writer thread panicked".into())),
            None => Err(Error::Sql("internal: the Parquet writer already stopped".into())),
        }
    }
}

/// A table's columns are not of the kinds its rows are written as.
fn mismatch(table: &str) -> Error {
    Error::Sql(format!("internal: the {table} row does not match schema/*.sql"))
}

/// Adapts [`CaptureWriter`] to the derive stage's [`Output`], table indexes resolved once.
pub struct TableSink {
    /// The writer.
    pub writer: CaptureWriter,
    idx: [usize; 5],
}

impl TableSink {
    /// Wraps `writer`.
    pub fn new(writer: CaptureWriter) -> Self {
        let find = |n| writer.table_index(n).unwrap_or(usize::MAX);
        let idx = [
            find("events"),
            find("intervals"),
            find("instances"),
            find("lock_requests"),
            find("messages"),
        ];
        TableSink { writer, idx }
    }
}

impl Output for TableSink {
    // The three large tables take each row's columns in one slice pattern, which checks
    // every column's kind at once; appending value by value through `Batch::i64` and
    // friends (a dispatch and a call per value) was ~15% of the parse/derive thread.
    fn event(&mut self, r: &EventRow<'_>, n: &Interner) -> Result<()> {
        let i = self.idx[EVENTS];
        if let Some(b) = self.writer.batch(i) {
            let text = match b.cols.as_mut_slice() {
                [Col::I64(seq), Col::I64(ts), Col::Dict(source), Col::Dict(source_type), Col::I64(source_instance), Col::Dict(target), Col::Dict(target_type), Col::I64(target_instance), Col::Dict(action), Col::Str(note), Col::F64(value), Col::Dict(core)] =>
                {
                    seq.append_value(r.seq);
                    ts.append_value(r.ts);
                    source_instance.append_value(r.source_instance);
                    target_instance.append_value(r.target_instance);
                    note.append_option(r.note);
                    value.append_option(r.value);
                    source.sym(Some(r.source), n)
                        + source_type.sym(r.source_type, n)
                        + target.sym(r.target, n)
                        + target_type.sym(r.target_type, n)
                        + action.sym(Some(r.action), n)
                        + core.sym(r.core, n)
                        + r.note.map_or(0, str::len)
                }
                _ => return Err(mismatch("events")),
            };
            b.end_row_of(text);
        }
        self.writer.flush(i, false)
    }

    fn intervals(&mut self, rows: &[IntervalRow], n: &Interner) -> Result<()> {
        let i = self.idx[INTERVALS];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                let text = match b.cols.as_mut_slice() {
                    [Col::Dict(entity), Col::Dict(entity_type), Col::I64(instance), Col::Dict(channel), Col::Dict(state), Col::F64(value), Col::I64(ts), Col::I64(dur), Col::Dict(core), Col::Dict(start_action), Col::Dict(end_action), Col::Bool(open)] =>
                    {
                        instance.append_value(r.instance);
                        value.append_option(r.value);
                        ts.append_value(r.ts);
                        dur.append_value(r.dur);
                        open.append_value(r.open);
                        let state = match &r.state {
                            StateText::Sym(s) => state.sym(Some(*s), n),
                            StateText::Owned(text) => state.str(Some(text)),
                        };
                        state
                            + entity.sym(Some(r.entity), n)
                            + entity_type.sym(Some(r.entity_type), n)
                            + channel.sym(Some(r.channel), n)
                            + core.sym(r.core, n)
                            + start_action.sym(r.start_action, n)
                            + end_action.sym(r.end_action, n)
                    }
                    _ => return Err(mismatch("intervals")),
                };
                b.end_row_of(text);
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn instances(&mut self, rows: &[InstanceRow], n: &Interner) -> Result<()> {
        let i = self.idx[INSTANCES];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                let text = match b.cols.as_mut_slice() {
                    [Col::Dict(entity), Col::Dict(entity_type), Col::I64(instance), Col::I64(activate_ts), Col::I64(start_ts), Col::I64(terminate_ts), Col::Dict(core), Col::I64(net_exec), Col::I64(ready_time), Col::I64(waiting_time), Col::I64(polling_time), Col::I64(parking_time), Col::I64(preemptions), Col::I64(migrations), Col::Bool(complete)] =>
                    {
                        instance.append_value(r.instance);
                        activate_ts.append_option(r.activate_ts);
                        start_ts.append_option(r.start_ts);
                        terminate_ts.append_option(r.terminate_ts);
                        net_exec.append_value(r.net_exec);
                        ready_time.append_value(r.ready_time);
                        waiting_time.append_option(r.waiting_time);
                        polling_time.append_option(r.polling_time);
                        parking_time.append_option(r.parking_time);
                        preemptions.append_value(r.preemptions);
                        migrations.append_option(r.migrations);
                        complete.append_value(r.complete());
                        entity.sym(Some(r.entity), n)
                            + entity_type.sym(Some(r.entity_type), n)
                            + core.sym(r.core, n)
                    }
                    _ => return Err(mismatch("instances")),
                };
                b.end_row_of(text);
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn lock_requests(&mut self, rows: &[LockRow], n: &Interner) -> Result<()> {
        let i = self.idx[LOCK_REQUESTS];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                b.sym(Some(r.semaphore), n)
                    .sym(Some(r.process), n)
                    .i64(Some(r.process_instance))
                    .i64(r.request_ts)
                    .i64(r.assigned_ts)
                    .i64(r.released_ts)
                    .bool(Some(r.contended()))
                    .sym(r.blocked_by.map(|b| b.0), n)
                    .i64(r.blocked_by.map(|b| b.1))
                    .i64(Some(r.blockers))
                    .end_row();
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn messages(&mut self, rows: &[MessageRow], n: &Interner) -> Result<()> {
        let i = self.idx[MESSAGES];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                b.sym(Some(r.sender), n)
                    .i64(Some(r.sender_instance))
                    .sym(Some(r.receiver), n)
                    .i64(Some(r.receiver_instance))
                    .i64(Some(r.send_ts))
                    .i64(r.recv_ts)
                    .i64(Some(r.phys_send_ts))
                    .i64(r.phys_recv_ts)
                    .i64(Some(r.size))
                    .i64(Some(r.tag))
                    .end_row();
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Array;

    /// The pages of column `name` in row group `rg` of the file `path`, as they are in the
    /// file: (dictionary page?, encoding), runs of one kind told once.
    fn page_kinds(path: &Path, rg: usize, name: &str) -> Vec<(bool, Encoding)> {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let file = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let g = file.get_row_group(rg).unwrap();
        let c = (0..g.num_columns())
            .find(|&c| g.metadata().column(c).column_path().string() == name)
            .unwrap();
        let mut kinds: Vec<(bool, Encoding)> = Vec::new();
        for page in g.get_column_page_reader(c).unwrap() {
            let page = page.unwrap();
            let kind = (page.is_dictionary_page(), page.encoding());
            if kinds.last() != Some(&kind) {
                kinds.push(kind);
            }
        }
        kinds
    }

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

    /// Row `r` of the intervals written by `name_columns_read_back_as_written`: entity,
    /// state, core, start_action.
    fn interval_names(r: usize) -> [Option<String>; 4] {
        let entity = match r {
            // Long names, more than the 1 MiB a dictionary holds: the chunk goes on in PLAIN.
            200_000..=203_999 => format!("{}{}", "L".repeat(500), r % 3000),
            // Names interned after the first 65,536 (looked up in a map, not a table).
            300_000..=399_999 => format!("E_{}", 60_000 + r % 9_000),
            // Runs of 20, then runs shorter than 8.
            _ if r % 100_000 < 50_000 => format!("E_{}", (r / 20) % 50),
            _ => format!("E_{}", (r / 3) % 7),
        };
        let state =
            if r.is_multiple_of(5) { format!("value {}", r % 1000) } else { "RUNNING".into() };
        let core = (!r.is_multiple_of(3)).then(|| format!("Core_{}", (r / 7) % 4));
        let start = (r % 1000 >= 10).then(|| "start".to_string());
        [Some(entity), Some(state), core, start]
    }

    #[test]
    fn name_columns_read_back_as_written() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let dir = tempfile::tempdir().unwrap();
        let mut sink =
            TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
        let mut n = Interner::default();
        for i in 0..70_000 {
            n.intern(&format!("E_{i}"));
        }
        let (t, channel) = (n.intern("T"), n.intern("state"));
        let rows = ROW_GROUP_ROWS + 100_000;
        for r in 0..rows {
            let [entity, state, core, start] = interval_names(r);
            let entity = n.intern(&entity.unwrap());
            let state = state.unwrap();
            let state = if state == "RUNNING" {
                StateText::Sym(n.intern(&state))
            } else {
                StateText::Owned(state.into())
            };
            let iv = IntervalRow {
                entity,
                entity_type: t,
                instance: 0,
                channel,
                state,
                value: None,
                ts: 0,
                dur: 1,
                core: core.map(|c| n.intern(&c)),
                start_action: start.map(|a| n.intern(&a)),
                end_action: None,
                open: false,
            };
            sink.intervals(&[iv], &n).unwrap();
        }
        sink.writer.finish().unwrap();
        let path = dir.path().join("intervals/part-0.parquet");
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata().clone();
        assert_eq!(meta.num_row_groups(), 2, "a row group holds 2^20 rows");
        let pages = |rg: usize, name: &str| page_kinds(&path, rg, name);
        let (dict, rle, plain) =
            ((true, Encoding::PLAIN), (false, Encoding::RLE_DICTIONARY), (false, Encoding::PLAIN));
        assert_eq!(pages(0, "entity"), [dict, rle, plain], "the dictionary filled up");
        assert_eq!(pages(1, "entity"), [dict, rle], "a new dictionary");
        assert_eq!(pages(0, "core"), [dict, rle]);
        let mut r = 0;
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            let col = |name: &str| {
                let a = batch.column_by_name(name).unwrap();
                a.as_any().downcast_ref::<arrow::array::StringArray>().unwrap().clone()
            };
            let cols = [col("entity"), col("state"), col("core"), col("start_action")];
            for i in 0..batch.num_rows() {
                let got: Vec<Option<String>> =
                    cols.iter().map(|c| c.is_valid(i).then(|| c.value(i).to_string())).collect();
                assert_eq!(got, interval_names(r), "row {r}");
                r += 1;
            }
        }
        assert_eq!(r, rows);
    }

    /// An instance number of row `r`: -1, small, beyond the dense table, extremes, and
    /// enough distinct ones for the dictionary to fill up.
    fn instance_of(r: i64) -> i64 {
        match r {
            _ if r % 7 == 0 => -1,
            _ if r % 11 == 0 => (1 << 40) + r,
            _ if r % 13 == 0 => i64::MIN,
            _ if r % 17 == 0 => i64::MAX,
            _ => r,
        }
    }

    #[test]
    fn integer_dictionary_columns_keep_every_value_and_their_statistics() {
        use arrow::array::Int64Array;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::file::statistics::Statistics;
        let dir = tempfile::tempdir().unwrap();
        let mut sink =
            TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
        let mut n = Interner::default();
        let (e, t) = (n.intern("E"), n.intern("T"));
        let rows = 300_000i64;
        let migrations = |r: i64| (r % 3 != 0).then_some(r % 5);
        for r in 0..rows {
            let row = InstanceRow {
                entity: e,
                entity_type: t,
                instance: instance_of(r),
                preemptions: r % 100_000,
                migrations: migrations(r),
                ..InstanceRow::default()
            };
            sink.instances(&[row], &n).unwrap();
        }
        sink.writer.finish().unwrap();
        let path = dir.path().join("instances/part-0.parquet");
        let file = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let g = file.get_row_group(0).unwrap();
        let column = |name: &str| {
            (0..g.num_columns()).find(|&c| g.metadata().column(c).column_path().string() == name)
        };
        let kinds = |name: &str| page_kinds(&path, 0, name);
        let (dict, rle, plain) =
            ((true, Encoding::PLAIN), (false, Encoding::RLE_DICTIONARY), (false, Encoding::PLAIN));
        assert_eq!(kinds("instance"), [dict, rle, plain], "the dictionary filled up");
        assert_eq!(kinds("migrations"), [dict, rle]);
        // Statistics as parquet-rs wrote them: min, max and the NULL count.
        let stats = |name: &str| match g.metadata().column(column(name).unwrap()).statistics() {
            Some(Statistics::Int64(s)) => {
                (*s.min_opt().unwrap(), *s.max_opt().unwrap(), s.null_count_opt())
            }
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(stats("instance"), (i64::MIN, i64::MAX, Some(0)));
        assert_eq!(stats("migrations"), (0, 4, Some(((rows + 2) / 3) as u64)));
        assert_eq!(stats("preemptions"), (0, 99_999, Some(0)));
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let mut r = 0;
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            let col = |name: &str| {
                let a = batch.column_by_name(name).unwrap();
                a.as_any().downcast_ref::<Int64Array>().unwrap().clone()
            };
            let (inst, pre, mig) = (col("instance"), col("preemptions"), col("migrations"));
            for i in 0..batch.num_rows() {
                assert_eq!(inst.value(i), instance_of(r), "row {r}");
                assert_eq!(pre.value(i), r % 100_000, "row {r}");
                assert_eq!(mig.is_valid(i).then(|| mig.value(i)), migrations(r), "row {r}");
                r += 1;
            }
        }
        assert_eq!(r, rows);
    }

    #[test]
    fn row_writers_match_the_schema_files() {
        // One row of each streamed table through the real Output; RecordBatch::try_new
        // rejects a wrong column count or type, so a drift between the code and the .sql
        // files fails here.
        let dir = tempfile::tempdir().unwrap();
        let mut sink =
            TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
        let mut n = Interner::default();
        let a = n.intern("A");
        let t = n.intern("T");
        let ev = EventRow {
            seq: 0,
            ts: 1,
            source: a,
            source_type: None,
            source_instance: 0,
            target: Some(a),
            target_type: Some(t),
            target_instance: 0,
            action: t,
            note: Some("x"),
            value: None,
            core: None,
        };
        sink.event(&ev, &n).unwrap();
        let iv = IntervalRow {
            entity: a,
            entity_type: t,
            instance: 0,
            channel: t,
            state: crate::derive::StateText::Sym(t),
            value: None,
            ts: 0,
            dur: 1,
            core: None,
            start_action: None,
            end_action: None,
            open: false,
        };
        sink.intervals(&[iv], &n).unwrap();
        sink.instances(&[InstanceRow::default()], &n).unwrap();
        let lr = LockRow {
            semaphore: a,
            process: a,
            process_instance: 0,
            request_ts: None,
            assigned_ts: None,
            released_ts: None,
            contended_step: false,
            blocked_by: None,
            blockers: 0,
        };
        sink.lock_requests(&[lr], &n).unwrap();
        let m = MessageRow {
            sender: a,
            sender_instance: -1,
            receiver: a,
            receiver_instance: -1,
            send_ts: 0,
            recv_ts: Some(1),
            phys_send_ts: 0,
            phys_recv_ts: Some(1),
            size: 8,
            tag: 1,
        };
        sink.messages(&[m], &n).unwrap();
        for i in 0..5 {
            let b = sink.writer.batch(sink.idx[i]).unwrap();
            assert_eq!(b.len(), 1);
            b.finish().unwrap();
        }
        let files = sink.writer.finish().unwrap();
        assert_eq!(files.len(), schema::tables().len());
    }
}
