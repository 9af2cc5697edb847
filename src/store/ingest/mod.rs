//! One source file into one capture: read (decompressing), import, derive, write the table
//! files into a staging directory, then publish them and the manifest entry.
//! On any error the staging directory is removed and the archive is as it was.
//!
//! The steps live in submodules: `run` reads the files into the tables and publishes the
//! capture, `ovni_streams` reads ovni's binary streams (together, merged by time),
//! `sources` keeps copies of the source files in the archive, `capture_dir` picks the
//! files of an ovni directory, `format` tells a file's format, `identity` finds the
//! capture the same files already made, and `names` gives a capture its default name.
use super::manifest::CaptureEntry;
use super::Archive;
use crate::ingest::diag::Severity;
use crate::ingest::{hw, qs, shark, Format};
use crate::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod capture_dir;
mod format;
mod identity;
mod names;
mod ovni_streams;
mod run;
mod sources;
#[cfg(test)]
mod tests;

pub use capture_dir::{capture_dir, capture_dir_as};
pub use format::format_of_file;
pub use identity::{combined_sha256, find_identical, find_identical_as};
pub use names::{default_name, is_number, not_a_number};
pub use run::now_rfc3339;
use run::{next_generation, run};
pub use sources::extract_sources;

/// Options of one ingest.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    /// Format, or `None` to detect it.
    pub format: Option<Format>,
    /// Capture name; default: the file name without its extensions.
    pub name: Option<String>,
    /// Stop at the first diagnostic of severity warning or worse.
    pub strict: bool,
    /// Deadlines to store with the capture (entity pattern, ns), from `--deadlines FILE`.
    pub deadlines: Vec<(String, i64)>,
    /// Free-form labels (`--tag key=value`), kept in the manifest and in `captures.tags`.
    pub tags: BTreeMap<String, String>,
    /// Keep the source files in the archive (zstd-compressed unless they already are).
    pub keep_source: bool,
    /// Rebuild this existing capture (same id) instead of adding one: `reingest`.
    pub replace: Option<CaptureEntry>,
    /// zstd level of the Parquet files (`None`:
    /// [`DEFAULT_ZSTD_LEVEL`](crate::store::writer::DEFAULT_ZSTD_LEVEL)).
    pub zstd_level: Option<i32>,
    /// QS options (`--tick-rate`, `--qs-dic`).
    pub qs: qs::QsOptions,
    /// S.Ha.R.K. options (`--tick-rate`).
    pub shark: shark::SharkOptions,
    /// Hardware-trace options (`--hw-elf`, `--hw-map`).
    pub hw: hw::HwOptions,
}

/// What an ingest produced.
#[derive(Debug, Clone)]
pub struct IngestReport {
    /// The new capture's manifest entry.
    pub capture: CaptureEntry,
    /// Entities.
    pub entities: u64,
    /// Interval rows.
    pub intervals: u64,
    /// Instance rows.
    pub instances: u64,
    /// Lock request rows.
    pub lock_requests: u64,
    /// Message rows.
    pub messages: u64,
    /// Diagnostics per kind: (kind, severity, count).
    pub diagnostics: Vec<(String, Severity, u64)>,
    /// Plain-text bytes read (after decompression).
    pub text_bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Deadlines were given (`--deadlines`) and none of their patterns names a task or ISR
    /// of the capture: its deadlines stay implicit (a pattern with `[...]` counts as a
    /// match, not checked here).
    pub deadlines_match_nothing: bool,
}

/// Progress callback: (bytes of the file read so far, file size).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Ingests `path` into `archive` as a new capture (the caller holds the writer lock).
pub fn ingest_file(
    archive: &mut Archive,
    path: &Path,
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<IngestReport> {
    ingest_files(archive, &[path.to_path_buf()], &default_name(path), opts, progress)
}

/// Ingests a file, or a directory that holds one capture made of several files (an ovni
/// output directory: its `thread.prv` and `cpu.prv`, or those of its `ovni/` folder).
pub fn ingest_path(
    archive: &mut Archive,
    path: &Path,
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<IngestReport> {
    if !path.is_dir() {
        return ingest_file(archive, path, opts, progress);
    }
    let (files, name) = capture_dir_as(path, opts.format)?;
    ingest_files(archive, &files, &name, opts, progress)
}

/// Ingests `paths` into `archive` as ONE new capture named `default` unless `opts` names it.
pub fn ingest_files(
    archive: &mut Archive,
    paths: &[PathBuf],
    default: &str,
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<IngestReport> {
    let started = Instant::now();
    let id =
        opts.replace.as_ref().map_or_else(|| archive.manifest.new_capture_id(), |c| c.capture_id);
    let staging = archive.staging_dir(id);
    let result = run(archive, paths, default, opts, id, &staging, started, progress);
    if result.is_err() {
        // Files already renamed into the capture's partitions (kept sources, a part of the
        // tables) when the error or signal came: no manifest ever listed them.
        let _ = archive.remove_never_listed(id, opts.replace.as_ref().map(next_generation));
    }
    let _ = std::fs::remove_dir_all(&staging);
    if let Some(parent) = staging.parent() {
        // Only when empty: another ingest's staging directory stays.
        let _ = std::fs::remove_dir(parent);
    }
    result
}
