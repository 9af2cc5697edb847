//! Parquet column chunks of the name columns, encoded from the dictionaries the ingest
//! already has.
//!
//! A name column reaches the writer thread as a [`NameBatch`]: a key per row into the batch's
//! own small dictionary, and for each entry the interned [`Sym`] it stands for. parquet-rs,
//! given the same column as an Arrow dictionary array, hashes every row's string again to
//! build the row group's dictionary (about a third of the writer thread's time on a BTF
//! ingest). [`NameChunk`] builds it from the syms instead: a batch entry is looked up once
//! per batch, a row costs an array index. The file holds what parquet-rs writes for such a
//! column: a PLAIN dictionary page, then RLE_DICTIONARY data pages (format v1, definition
//! levels RLE, zstd), falling back to PLAIN pages once the dictionary reaches 1 MiB at the
//! end of a batch, as parquet-rs did.
//!
//! Layout: this file builds the dictionary and the pages' indices; `pages.rs` cuts and
//! compresses the pages and closes the chunk; `hybrid.rs` is Parquet's RLE/bit-packing
//! encoding.
use crate::model::strings::FastMap;
use crate::model::Sym;
use arrow::array::{Array, Int64Array};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{
    ColumnChunkMetaData, LevelHistogram, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use std::ops::Range;

mod hybrid;
mod pages;

use hybrid::{encode_hybrid, rle_run};

/// Key of a NULL row in [`NameBatch::keys`].
pub const NULL_KEY: u32 = u32::MAX;

/// Syms below this have their row-group index in a table; the others in a map.
const DENSE_SYMS: usize = 1 << 16;

/// Integers from -1 to this - 2 have their row-group index in a table; the others in a map.
const DENSE_INTS: usize = 1 << 16;

/// Dictionary size from which a chunk falls back to PLAIN pages (parquet-rs's default
/// limit), looked at between batches.
const DICT_LIMIT: usize = 1 << 20;

/// Rows of PLAIN values between two looks at the page's size (parquet-rs's write batch).
const PLAIN_STEP: usize = 1024;

/// Largest data page, bytes before compression (as for the other columns).
const PAGE_BYTES: usize = 1 << 20;

/// What a batch's dictionary entry is: an interned name, or text that is not interned
/// (a signal's value as an interval's state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameId {
    /// An interned name.
    Sym(Sym),
    /// Text of its own, told apart by its bytes.
    Text,
}

/// One batch of a name column.
#[derive(Debug, Default)]
pub struct NameBatch {
    /// Per row: its entry in this batch's dictionary, or [`NULL_KEY`].
    pub keys: Vec<u32>,
    /// Per entry: what it is.
    pub ids: Vec<NameId>,
    /// The entries' text, back to back.
    pub text: String,
    /// Where each entry's text ends in `text`.
    pub ends: Vec<usize>,
}

impl NameBatch {
    /// An empty batch with room for `rows` rows.
    pub fn with_capacity(rows: usize) -> Self {
        NameBatch { keys: Vec::with_capacity(rows), ..NameBatch::default() }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the batch has no row.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Appends a new entry; returns its key.
    pub fn push_entry(&mut self, id: NameId, text: &str) -> u32 {
        let key = u32::try_from(self.ids.len()).unwrap_or(NULL_KEY);
        self.ids.push(id);
        self.text.push_str(text);
        self.ends.push(self.text.len());
        key
    }

    /// The text of entry `key`.
    pub fn entry(&self, key: usize) -> &str {
        let start = match key.checked_sub(1) {
            Some(prev) => self.ends.get(prev).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(key).copied().unwrap_or(start);
        self.text.get(start..end).unwrap_or("")
    }

    /// The length in bytes of entry `key`'s text.
    #[inline]
    pub fn entry_len(&self, key: usize) -> usize {
        let start = key.checked_sub(1).and_then(|p| self.ends.get(p)).copied().unwrap_or(0);
        self.ends.get(key).map_or(0, |&end| end - start)
    }

    /// The text of row `row` (`None` for NULL).
    pub fn value(&self, row: usize) -> Option<&str> {
        match self.keys.get(row) {
            Some(&k) if k != NULL_KEY => Some(self.entry(k as usize)),
            _ => None,
        }
    }
}

/// Page bytes and row count of a data page waiting for the chunk's end.
struct DataPage {
    page: CompressedPage,
    rows: usize,
}

/// Min, max and NULL count of an integer chunk: its statistics in the footer, as
/// parquet-rs writes them.
#[derive(Debug, Clone, Copy)]
struct IntStats {
    min: i64,
    max: i64,
    nulls: u64,
}

impl IntStats {
    const EMPTY: IntStats = IntStats { min: i64::MAX, max: i64::MIN, nulls: 0 };
}

/// One row group's chunk of a name column, built from [`NameBatch`]es, or of a dictionary
/// integer column, built from Arrow arrays ([`NameChunk::new_ints`]).
pub struct NameChunk {
    descr: ColumnDescPtr,
    level: ZstdLevel,
    compressor: zstd::bulk::Compressor<'static>,
    /// zstd's output, reused from page to page.
    zstd_out: Vec<u8>,
    /// Row-group index + 1 of each sym below [`DENSE_SYMS`] (0: not in the dictionary).
    by_sym: Vec<u32>,
    /// The same for larger syms.
    by_big_sym: FastMap<Sym, u32>,
    /// The same for text that is not interned.
    by_text: FastMap<Box<str>, u32>,
    /// Syms below [`DENSE_SYMS`] in the dictionary, to clear `by_sym` for the next chunk.
    dense_syms: Vec<Sym>,
    /// An integer column's statistics (`None`: a name column, which has none).
    ints: Option<IntStats>,
    /// Row-group index + 1 of each integer `v` from -1 to [`DENSE_INTS`] - 2, at `v + 1`.
    by_int: Vec<u32>,
    /// The same for other integers.
    by_big_int: FastMap<i64, u32>,
    /// Slots of `by_int` in use, to clear it for the next chunk.
    dense_ints: Vec<usize>,
    /// The dictionary page's values, PLAIN-encoded (length, bytes).
    dict: Vec<u8>,
    /// Values in the dictionary.
    dict_values: u32,
    /// The dictionary reached [`DICT_LIMIT`]: values are written PLAIN from then on.
    fallback: bool,
    /// The dictionary index of each entry of the batch being written.
    translate: Vec<u32>,
    /// Rows in the current page.
    page_rows: usize,
    /// The current page's NULL rows (their positions in the page).
    page_nulls: Vec<u32>,
    /// Indices a page holds at most at the dictionary's current bit width.
    max_indices: usize,
    /// The current page's dictionary indices (dictionary mode).
    indices: Vec<u32>,
    /// The current page's PLAIN values (fallback mode).
    plain: Vec<u8>,
    /// Data pages of this chunk.
    pages: Vec<DataPage>,
    /// Bytes held by `pages`.
    pages_bytes: usize,
    /// Dictionary pages written before the fallback (`RLE_DICTIONARY`) and after (`PLAIN`).
    dict_pages: i32,
    plain_pages: i32,
    rows: usize,
}

impl NameChunk {
    /// A chunk of the column `descr`, compressed with zstd at `level`.
    pub fn new(descr: ColumnDescPtr, level: i32) -> Result<Self> {
        let compressor = zstd::bulk::Compressor::new(level)
            .map_err(|e| ParquetError::General(format!("zstd level {level}: {e}")))?;
        Ok(NameChunk {
            descr,
            level: ZstdLevel::try_new(level)?,
            compressor,
            zstd_out: Vec::new(),
            by_sym: Vec::new(),
            by_big_sym: FastMap::default(),
            by_text: FastMap::default(),
            dense_syms: Vec::new(),
            ints: None,
            by_int: Vec::new(),
            by_big_int: FastMap::default(),
            dense_ints: Vec::new(),
            dict: Vec::new(),
            dict_values: 0,
            fallback: false,
            translate: Vec::new(),
            page_rows: 0,
            page_nulls: Vec::new(),
            max_indices: PAGE_BYTES * 8,
            indices: Vec::new(),
            plain: Vec::new(),
            pages: Vec::new(),
            pages_bytes: 0,
            dict_pages: 0,
            plain_pages: 0,
            rows: 0,
        })
    }

    /// A chunk of the BIGINT column `descr` whose values few are distinct (instance numbers,
    /// counts): parquet-rs hashed every value to find its dictionary index (~3% of an
    /// ingest's CPU time); here a value from -1 to 65,534 is an index into a table. The
    /// pages are the same kinds (a PLAIN dictionary, RLE_DICTIONARY pages, PLAIN ones past
    /// 1 MiB of dictionary), with min/max and NULL count in the footer.
    pub fn new_ints(descr: ColumnDescPtr, level: i32) -> Result<Self> {
        let mut chunk = NameChunk::new(descr, level)?;
        chunk.ints = Some(IntStats::EMPTY);
        Ok(chunk)
    }

    /// Rows written to this chunk.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes this chunk holds in memory.
    pub fn memory_size(&self) -> usize {
        self.pages_bytes
            + self.dict.len()
            + self.page_nulls.len() * 4
            + self.indices.len() * 4
            + self.plain.len()
            + self.by_sym.len() * 4
            + self.by_int.len() * 4
    }

    /// Appends rows `rows` of `batch`.
    pub fn write(&mut self, batch: &NameBatch, rows: Range<usize>) -> Result<()> {
        let keys = batch.keys.get(rows).unwrap_or_default();
        if !self.fallback && self.dict.len() >= DICT_LIMIT {
            // The dictionary filled up with the previous batch: the pages so far refer to
            // it, the next ones hold values.
            self.flush_page()?;
            self.fallback = true;
        }
        if self.fallback {
            return self.write_plain(batch, keys);
        }
        // The batch's entries in the dictionary first: the rows then cost an index each.
        // The dictionary's size is looked at between batches, as parquet-rs did when it was
        // handed whole batches (its check comes after each write), so it holds at most
        // [`DICT_LIMIT`] plus one batch's names: a dictionary of repeated long names keeps
        // them indexed (a trace of 2,000 names of 10 kB is 10% larger when the dictionary
        // stops at exactly 1 MiB).
        self.translate.clear();
        for key in 0..batch.ids.len() {
            let index = self.index_of(batch, key)?;
            self.translate.push(index);
        }
        let mut rest = keys;
        while !rest.is_empty() {
            // Rows up to the page's end, if they all hold a value.
            let room = self.max_indices.saturating_sub(self.indices.len()).max(1);
            let (now, later) = rest.split_at(room.min(rest.len()));
            for &key in now {
                match self.translate.get(key as usize) {
                    Some(&index) => self.indices.push(index),
                    None => self.page_nulls.push(len_u32(self.page_rows)?),
                }
                self.page_rows += 1;
            }
            self.rows += now.len();
            if self.page_full() {
                self.flush_page()?;
            }
            rest = later;
        }
        Ok(())
    }

    /// Appends rows `rows` of `values` (a chunk made by [`NameChunk::new_ints`]).
    pub fn write_ints(&mut self, values: &Int64Array, rows: Range<usize>) -> Result<()> {
        let start = rows.start;
        let all = values.values().get(rows).unwrap_or_default();
        let nulls = values.nulls().filter(|n| n.null_count() > 0);
        let is_null = |i: usize| nulls.is_some_and(|n| n.is_null(start + i));
        let mut stats = self.ints.unwrap_or(IntStats::EMPTY);
        if !self.fallback && self.dict.len() >= DICT_LIMIT {
            self.flush_page()?;
            self.fallback = true;
        }
        // Rows up to the page's end (or a PLAIN step) at a time, then a look at its size.
        let mut at = 0;
        while at < all.len() {
            let room = if self.fallback {
                PLAIN_STEP
            } else {
                self.max_indices.saturating_sub(self.indices.len()).max(1)
            };
            let end = all.len().min(at + room);
            for (i, &v) in (at..end).zip(all.get(at..end).unwrap_or_default()) {
                if is_null(i) {
                    self.page_nulls.push(len_u32(self.page_rows)?);
                    stats.nulls += 1;
                } else {
                    stats.min = stats.min.min(v);
                    stats.max = stats.max.max(v);
                    if self.fallback {
                        self.plain.extend_from_slice(&v.to_le_bytes());
                    } else {
                        let index = self.int_index(v);
                        self.indices.push(index);
                    }
                }
                self.page_rows += 1;
            }
            self.rows += end - at;
            at = end;
            if self.page_full() {
                self.flush_page()?;
            }
        }
        self.ints = Some(stats);
        Ok(())
    }

    /// The dictionary index of the integer `v`, added when new.
    #[inline]
    fn int_index(&mut self, v: i64) -> u32 {
        let slot = usize::try_from(v.wrapping_add(1)).ok().filter(|&s| s < DENSE_INTS);
        let found = match slot {
            Some(s) => self.by_int.get(s).copied().filter(|&i| i > 0).map(|i| i - 1),
            None => self.by_big_int.get(&v).copied(),
        };
        found.unwrap_or_else(|| self.add_int(v, slot))
    }

    #[cold]
    #[inline(never)]
    fn add_int(&mut self, v: i64, slot: Option<usize>) -> u32 {
        let index = self.dict_values;
        self.dict_values += 1;
        self.max_indices = PAGE_BYTES * 8 / usize::from(self.bit_width());
        self.dict.extend_from_slice(&v.to_le_bytes());
        match slot {
            Some(s) => {
                if s >= self.by_int.len() {
                    self.by_int.resize(s + 1, 0);
                }
                if let Some(i) = self.by_int.get_mut(s) {
                    *i = index + 1;
                }
                self.dense_ints.push(s);
            }
            None => {
                self.by_big_int.insert(v, index);
            }
        }
        index
    }

    /// [`NameChunk::write`] once the dictionary is full: values written PLAIN. The page's
    /// size is looked at every [`PLAIN_STEP`] rows and at the end of the batch, as
    /// parquet-rs does: a page of long names then holds more of them (zstd finds the
    /// repeats), at most 1 MiB plus a step's or a batch's text (itself at most 16 MiB).
    fn write_plain(&mut self, batch: &NameBatch, keys: &[u32]) -> Result<()> {
        for step in keys.chunks(PLAIN_STEP) {
            for &key in step {
                self.page_rows += 1;
                if key == NULL_KEY {
                    self.page_nulls.push(len_u32(self.page_rows - 1)?);
                } else {
                    let text = batch.entry(key as usize).as_bytes();
                    self.plain.extend_from_slice(&len_u32(text.len())?.to_le_bytes());
                    self.plain.extend_from_slice(text);
                }
            }
            self.rows += step.len();
            if self.page_full() {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// The dictionary index of batch entry `key`, added when new.
    fn index_of(&mut self, batch: &NameBatch, key: usize) -> Result<u32> {
        let id = batch.ids.get(key).copied().unwrap_or(NameId::Text);
        let text = batch.entry(key);
        let found = match id {
            NameId::Sym(s) if (s as usize) < DENSE_SYMS => {
                self.by_sym.get(s as usize).copied().filter(|&i| i > 0).map(|i| i - 1)
            }
            NameId::Sym(s) => self.by_big_sym.get(&s).copied(),
            NameId::Text => self.by_text.get(text).copied(),
        };
        if let Some(i) = found {
            return Ok(i);
        }
        let index = self.dict_values;
        self.dict_values += 1;
        self.max_indices = PAGE_BYTES * 8 / usize::from(self.bit_width());
        self.dict.extend_from_slice(&len_u32(text.len())?.to_le_bytes());
        self.dict.extend_from_slice(text.as_bytes());
        match id {
            NameId::Sym(s) if (s as usize) < DENSE_SYMS => {
                let s = s as usize;
                if s >= self.by_sym.len() {
                    self.by_sym.resize(s + 1, 0);
                }
                if let Some(slot) = self.by_sym.get_mut(s) {
                    *slot = index + 1;
                }
                self.dense_syms.push(s as Sym);
            }
            NameId::Sym(s) => {
                self.by_big_sym.insert(s, index);
            }
            NameId::Text => {
                self.by_text.insert(text.into(), index);
            }
        }
        Ok(index)
    }
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| ParquetError::General(format!("{n} bytes in a page")))
}

#[cfg(test)]
mod tests;
