//! One table's Parquet file on the writer thread ([`TableFile`]): [`TableBatch`]es go into
//! row groups of at most [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`] of encoded data;
//! finishing closes the last row group, syncs the file and returns it as a
//! [`WrittenFile`] with its rows, size and SHA-256.
use super::batch::{ColData, TableBatch};
use super::encoding::{dict_columns, is_int_dict, properties};
use super::WrittenFile;
use crate::store::name_chunk::NameChunk;
use crate::store::schema::Table;
use crate::{Error, Result};
use arrow::array::AsArray;
use arrow::datatypes::Fields;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowSchemaConverter;
use parquet::file::writer::SerializedFileWriter;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per Parquet row group (DESIGN.md: 100k to 1M).
pub(super) const ROW_GROUP_ROWS: usize = 1 << 20;
/// Bytes of encoded data a row group holds at most in memory before it is written.
const ROW_GROUP_BYTES: usize = 64 << 20;

/// One table's Parquet file on the writer thread. Rows go into row groups of at most
/// [`ROW_GROUP_ROWS`] rows (or [`ROW_GROUP_BYTES`] of encoded data): parquet-rs's column
/// writers encode the plain columns, [`NameChunk`]s the name columns.
pub(super) struct TableFile {
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
    pub(super) fn create(dir: &Path, table: &Table, zstd_level: i32) -> Result<TableFile> {
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

    pub(super) fn write(&mut self, batch: &TableBatch) -> Result<()> {
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

    pub(super) fn finish(mut self) -> Result<WrittenFile> {
        self.close_row_group()?;
        let file = self
            .writer
            .into_inner()
            .map_err(|e| Error::Archive { path: self.path.clone(), message: e.to_string() })?;
        let path = self.path;
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        let bytes = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let sha256 = crate::store::verify::file_sha256(&path).map_err(|e| Error::io(&path, e))?;
        Ok(WrittenFile { table: self.table, path, rows: self.rows, bytes, sha256 })
    }
}
