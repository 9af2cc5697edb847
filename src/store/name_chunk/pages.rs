//! A chunk's pages: data pages cut when full and compressed, then, at the chunk's end, the
//! dictionary page and the column chunk's metadata ([`NameChunk::close`]).
use super::*;

impl NameChunk {
    /// Bits per dictionary index: enough for every value (at least 1).
    pub(super) fn bit_width(&self) -> u8 {
        let max = self.dict_values.saturating_sub(1);
        u8::try_from(32 - max.leading_zeros()).unwrap_or(32).max(1)
    }

    pub(super) fn page_full(&self) -> bool {
        if self.fallback {
            self.plain.len() >= PAGE_BYTES
        } else {
            self.indices.len() >= self.max_indices
        }
    }

    /// Encodes and compresses the current page.
    pub(super) fn flush_page(&mut self) -> Result<()> {
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
    pub(super) fn compress(&mut self, data: &[u8]) -> Result<Bytes> {
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
    pub(super) fn reset(&mut self) {
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
