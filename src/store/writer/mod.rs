//! The derive stage's [`Output`] for the archive: rows go into Arrow builders on the caller's
//! thread, full batches go to a writer thread that encodes zstd Parquet, so parsing and
//! compression overlap. One file per table: `<dir>/<table>/part-0.parquet` (the staging
//! directory of a capture; the archive renames it into place).
//!
//! [`CaptureWriter`] (here) owns the tables' [`Batch`]es (`batch`: Arrow builders, names as
//! per-batch dictionaries) and the writer thread, which writes each table's `TableFile`
//! (`table_file`: row groups, parquet-rs column writers and [`NameChunk`]s) with the
//! encodings and properties chosen per column in `encoding`; [`TableSink`] (`table_sink`)
//! feeds it the derive stage's rows.
//!
//! [`Output`]: crate::derive::Output
//! [`NameChunk`]: super::name_chunk::NameChunk
use super::schema::{self, Table};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

mod batch;
mod encoding;
mod table_file;
mod table_sink;
#[cfg(test)]
mod tests;

pub use batch::{Batch, ColData, TableBatch};
use encoding::writer_schema;
pub use encoding::COMPUTED_KEY;
use table_file::TableFile;
pub use table_sink::{TableSink, EVENTS, INSTANCES, INTERVALS, LOCK_REQUESTS, MESSAGES};

/// zstd level of the Parquet pages unless `--zstd-level` says otherwise: level 3 keeps the
/// writer thread off the critical path of an ingest; 19 saves about 10% more and writes
/// several times slower.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

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
