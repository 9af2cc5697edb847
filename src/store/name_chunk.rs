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

    /// Bits per dictionary index: enough for every value (at least 1).
    fn bit_width(&self) -> u8 {
        let max = self.dict_values.saturating_sub(1);
        u8::try_from(32 - max.leading_zeros()).unwrap_or(32).max(1)
    }

    fn page_full(&self) -> bool {
        if self.fallback {
            self.plain.len() >= PAGE_BYTES
        } else {
            self.indices.len() >= self.max_indices
        }
    }

    /// Encodes and compresses the current page.
    fn flush_page(&mut self) -> Result<()> {
        let rows = self.page_rows;
        if rows == 0 {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(rows / 2 + self.plain.len() + 64);
        // Definition levels: a 4-byte length, then RLE/bit-packed levels of 1 bit.
        let mut levels = Vec::new();
        if self.page_nulls.is_empty() {
            rle_run(1, rows, 1, &mut levels);
        } else {
            let mut defs = vec![1u8; rows];
            for &i in &self.page_nulls {
                if let Some(d) = defs.get_mut(i as usize) {
                    *d = 0;
                }
            }
            encode_hybrid(&defs, 1, &mut levels);
        }
        buf.extend_from_slice(&len_u32(levels.len())?.to_le_bytes());
        buf.extend_from_slice(&levels);
        let encoding = if self.fallback {
            buf.extend_from_slice(&self.plain);
            self.plain_pages += 1;
            Encoding::PLAIN
        } else {
            let width = self.bit_width();
            buf.push(width);
            encode_hybrid(&self.indices, width, &mut buf);
            self.dict_pages += 1;
            Encoding::RLE_DICTIONARY
        };
        let compressed = self.compress(&buf)?;
        let page = Page::DataPage {
            buf: compressed,
            num_values: len_u32(rows)?,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        let page = CompressedPage::new(page, buf.len());
        self.pages_bytes += page.compressed_size();
        self.pages.push(DataPage { page, rows });
        self.page_rows = 0;
        self.page_nulls.clear();
        self.indices.clear();
        self.plain.clear();
        Ok(())
    }

    /// `data` compressed, in a buffer of its own size (zstd's output buffer is sized for
    /// the worst case, which the page would otherwise hold until the row group is written).
    fn compress(&mut self, data: &[u8]) -> Result<Bytes> {
        self.zstd_out.clear();
        self.zstd_out.reserve(zstd::zstd_safe::compress_bound(data.len()));
        self.compressor
            .compress_to_buffer(data, &mut self.zstd_out)
            .map_err(|e| ParquetError::General(format!("zstd: {e}")))?;
        Ok(Bytes::copy_from_slice(&self.zstd_out))
    }

    /// Ends the chunk: its bytes (dictionary page first) and what the row group records of
    /// it. The chunk is empty again afterwards, ready for the next row group.
    pub fn close(&mut self) -> Result<(Bytes, ColumnCloseResult)> {
        self.flush_page()?;
        let dict = std::mem::take(&mut self.dict);
        let dict_page = Page::DictionaryPage {
            buf: self.compress(&dict)?,
            num_values: self.dict_values,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        let mut sink = TrackedWrite::new(Vec::with_capacity(self.pages_bytes + 64));
        let mut offsets = OffsetIndexBuilder::new();
        let (mut compressed, mut uncompressed) = (0i64, 0i64);
        let (dict_offset, data_offset) = {
            let mut pw = SerializedPageWriter::new(&mut sink);
            let spec = pw.write_page(CompressedPage::new(dict_page, dict.len()))?;
            compressed += i64::try_from(spec.compressed_size).unwrap_or(i64::MAX);
            uncompressed += i64::try_from(spec.uncompressed_size).unwrap_or(i64::MAX);
            let dict_offset = spec.offset;
            let mut data_offset = None;
            for DataPage { page, rows } in self.pages.drain(..) {
                let spec = pw.write_page(page)?;
                data_offset.get_or_insert(spec.offset);
                let size = i64::try_from(spec.compressed_size).unwrap_or(i64::MAX);
                compressed += size;
                uncompressed += i64::try_from(spec.uncompressed_size).unwrap_or(i64::MAX);
                offsets.append_offset_and_size(
                    i64::try_from(spec.offset).unwrap_or(i64::MAX),
                    i32::try_from(size).unwrap_or(i32::MAX),
                );
                offsets.append_row_count(i64::try_from(rows).unwrap_or(i64::MAX));
            }
            pw.close()?;
            (dict_offset, data_offset.unwrap_or(spec.offset + spec.bytes_written))
        };
        let mut encodings = vec![Encoding::PLAIN, Encoding::RLE];
        let mut stats = vec![PageEncodingStats {
            page_type: PageType::DICTIONARY_PAGE,
            encoding: Encoding::PLAIN,
            count: 1,
        }];
        if self.dict_pages > 0 {
            encodings.push(Encoding::RLE_DICTIONARY);
            stats.push(PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding: Encoding::RLE_DICTIONARY,
                count: self.dict_pages,
            });
        }
        if self.plain_pages > 0 {
            stats.push(PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding: Encoding::PLAIN,
                count: self.plain_pages,
            });
        }
        let rows = i64::try_from(self.rows).unwrap_or(i64::MAX);
        let to_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(Compression::ZSTD(self.level))
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(stats)
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(rows)
            .set_data_page_offset(to_i64(data_offset))
            .set_dictionary_page_offset(Some(to_i64(dict_offset)));
        if let Some(s) = self.ints {
            // What parquet-rs records of a chunk with statistics: min/max of the values
            // (none when all are NULL), the NULL count, and the definition levels' histogram.
            let values = self.rows as u64 - s.nulls;
            let (min, max) = if values > 0 { (Some(s.min), Some(s.max)) } else { (None, None) };
            let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            metadata = metadata
                .set_statistics(Statistics::int64(min, max, None, Some(s.nulls), false))
                .set_definition_level_histogram(
                    (self.descr.max_def_level() > 0)
                        .then(|| LevelHistogram::from(vec![to_i64(s.nulls), to_i64(values)])),
                );
        }
        let metadata = metadata.build()?;
        let bytes = sink.into_inner()?;
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: self.rows as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(offsets.build()),
        };
        self.reset();
        Ok((Bytes::from(bytes), close))
    }

    /// Empties the chunk for the next row group, keeping its allocations.
    fn reset(&mut self) {
        for &s in &self.dense_syms {
            if let Some(slot) = self.by_sym.get_mut(s as usize) {
                *slot = 0;
            }
        }
        self.dense_syms.clear();
        self.by_big_sym.clear();
        for &s in &self.dense_ints {
            if let Some(slot) = self.by_int.get_mut(s) {
                *slot = 0;
            }
        }
        self.dense_ints.clear();
        self.by_big_int.clear();
        if self.ints.is_some() {
            self.ints = Some(IntStats::EMPTY);
        }
        self.by_text.clear();
        self.dict.clear();
        self.dict_values = 0;
        self.max_indices = PAGE_BYTES * 8;
        self.fallback = false;
        self.pages_bytes = 0;
        self.dict_pages = 0;
        self.plain_pages = 0;
        self.rows = 0;
    }
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| ParquetError::General(format!("{n} bytes in a page")))
}

/// Writes `v` as an unsigned LEB128 varint.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An RLE run of `count` times `value`, `width` bits wide.
fn rle_run(value: u64, count: usize, width: u8, out: &mut Vec<u8>) {
    varint((count as u64) << 1, out);
    let bytes = usize::from(width).div_ceil(8);
    out.extend_from_slice(value.to_le_bytes().get(..bytes).unwrap_or_default());
}

/// Bit-packed runs of `values` (padded with zeros to a multiple of 8), `width` bits each.
fn bit_packed<T: Copy + Into<u64>>(values: &[T], width: u8, out: &mut Vec<u8>) {
    // At most 63 groups of 8 per run: the header then fits in one byte, as other writers do.
    for run in values.chunks(63 * 8) {
        let groups = run.len().div_ceil(8);
        varint(((groups as u64) << 1) | 1, out);
        for group in run.chunks(8) {
            let mut v = [0u64; 8];
            for (d, &s) in v.iter_mut().zip(group) {
                *d = s.into();
            }
            pack8(&v, width, out);
        }
    }
}

/// Eight values of `width` bits, packed from the lowest bit up (`width` bytes).
fn pack8(v: &[u64; 8], width: u8, out: &mut Vec<u8>) {
    let w = u32::from(width);
    if w <= 16 {
        // All 8 fit in 128 bits.
        let mut acc = 0u128;
        for (k, &x) in (0u32..).zip(v) {
            acc |= u128::from(x) << (k * w);
        }
        out.extend_from_slice(acc.to_le_bytes().get(..usize::from(width)).unwrap_or_default());
        return;
    }
    let (mut acc, mut bits) = (0u64, 0u32);
    for &x in v {
        acc |= x << bits;
        bits += w;
        // At most 7 bits are left over before each value: `acc` never overflows.
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// The RLE/bit-packing hybrid encoding of `values`, `width` bits each: groups of 8 equal
/// values (and the equal values after them) as RLE runs, the rest bit-packed. Runs are
/// looked for a group at a time, counted from the end of the last run (one comparison of 8
/// values per group, not a branch per value); a run of 8 to 14 values that straddles two
/// groups is bit-packed.
fn encode_hybrid<T: Copy + PartialEq + Into<u64>>(values: &[T], width: u8, out: &mut Vec<u8>) {
    // Values from `start` on are not written yet; `g` is the next group to look at.
    let (mut start, mut g) = (0, 0);
    while let Some(group) = values.get(g..g + 8) {
        let Some(&v) = group.first() else { break };
        if group.iter().all(|&x| x == v) {
            let mut end = g + 8;
            while values.get(end) == Some(&v) {
                end += 1;
            }
            if g > start {
                bit_packed(values.get(start..g).unwrap_or_default(), width, out);
            }
            rle_run(v.into(), end - g, width, out);
            start = end;
            g = end;
        } else {
            g += 8;
        }
    }
    if start < values.len() {
        bit_packed(values.get(start..).unwrap_or_default(), width, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid encoding of `n` values (the reference for the tests).
    fn decode_hybrid(mut data: &[u8], width: u8, n: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let read_varint = |data: &mut &[u8]| {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let b = data[0];
                *data = &data[1..];
                v |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    return v;
                }
                shift += 7;
            }
        };
        while out.len() < n {
            let header = read_varint(&mut data);
            if header & 1 == 0 {
                let bytes = usize::from(width).div_ceil(8);
                let mut v = [0u8; 8];
                v[..bytes].copy_from_slice(&data[..bytes]);
                data = &data[bytes..];
                out.extend(std::iter::repeat_n(u64::from_le_bytes(v), (header >> 1) as usize));
            } else {
                let count = (header >> 1) as usize * 8;
                let (mut acc, mut bits) = (0u128, 0u32);
                let mask = (1u128 << width) - 1;
                for _ in 0..count {
                    while bits < u32::from(width) {
                        acc |= u128::from(data[0]) << bits;
                        data = &data[1..];
                        bits += 8;
                    }
                    out.push((acc & mask) as u64);
                    acc >>= width;
                    bits -= u32::from(width);
                }
            }
        }
        assert!(data.is_empty(), "{} bytes left over", data.len());
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_encoding_round_trips_runs_literals_and_their_mixes() {
        let mut cases: Vec<(Vec<u32>, u8)> = vec![
            (vec![], 1),
            (vec![1], 1),
            (vec![1; 7], 1),
            (vec![1; 8], 1),
            (vec![3; 1000], 2),
            ((0..1000).map(|i| i % 5).collect(), 3),
            ((0..20_000).map(|i| (i * 7919) % 65_536).collect(), 16),
            ((0..20_000).map(|i| (i * 7919) % (1 << 17)).collect(), 17),
            ((0..5_000).map(|i| (i * 104_729) % (1 << 20)).collect(), 20),
            ((0..100).map(|i| u32::from(i % 9 == 0) * 0xFFFF_FFFF).collect(), 32),
        ];
        // Literals then a run whose start completes a group, runs of every length around 8.
        for lead in 0..10u32 {
            for run in 6..11 {
                let mut v: Vec<u32> = (0..lead).map(|i| i % 4).collect();
                v.extend(std::iter::repeat_n(5, run));
                v.extend([1, 2, 3]);
                cases.push((v, 3));
            }
        }
        for (values, width) in cases {
            let mut out = Vec::new();
            encode_hybrid(&values, width, &mut out);
            let want: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
            assert_eq!(decode_hybrid(&out, width, values.len()), want, "width {width}");
        }
        // A run is an RLE run (2 bytes), not 1000 bit-packed values.
        let mut out = Vec::new();
        encode_hybrid(&[3u32; 1000], 2, &mut out);
        assert_eq!(out.len(), 3);
    }
}
