//! A capture's content identity: the combined hash of the files it reads
//! ([`combined_sha256`]), its format and the options that read those bytes otherwise.
//! [`find_identical_as`] finds the capture of the archive that an ingest would make again
//! (`ingest` looks for one before it ingests a file, unless `--force`).
use super::{capture_dir_as, format_of_file, IngestOptions};
use crate::ingest::{self, prv, qs, shark, Format};
use crate::store::manifest::CaptureEntry;
use crate::store::Archive;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// A capture's source hash: one file's SHA-256, or for several the SHA-256 of their hashes,
/// one per line, in order.
pub fn combined_sha256(hashes: &[String]) -> String {
    match hashes {
        [one] => one.clone(),
        many => {
            use sha2::Digest;
            let mut h = sha2::Sha256::new();
            for d in many {
                h.update(d.as_bytes());
                h.update(b"\n");
            }
            h.finalize().iter().map(|b| format!("{b:02x}")).collect()
        }
    }
}

/// The capture of the archive that ingesting `path` (a file, or an ovni directory's trace
/// files) would make again: the same content identity, see [`find_identical_as`].
pub fn find_identical(archive: &Archive, path: &Path) -> Result<Option<CaptureEntry>> {
    find_identical_as(archive, path, &IngestOptions::default())
}

/// [`find_identical`] with the options of the ingest. A capture's content identity is:
/// * the bytes of every file it reads, hashed as `run` hashes them (`source_sha256`): the
///   trace files, then the companions of their format: a Paraver trace's `.pcf` and `.row`,
///   the QS dictionary (given by `--qs-dic`, else found beside the trace), a S.Ha.R.K. run's
///   later chunk files, a hardware-trace export's `--hw-map` and `--hw-elf`, ovni's JSON
///   metadata and clock offsets;
/// * the format it is read as (detected, or forced by `--format`);
/// * the options recorded in `captures.meta` that read the same bytes otherwise: the
///   `--tick-rate` of QS (`qs.tick_rate_hz`) and of a S.Ha.R.K. log without its own rate
///   (`shark.tick_rate_hz`), and which of `--hw-map`/`--hw-elf` were given (`hw.map`,
///   `hw.elf`).
///
/// Files are hashed only when a capture at least as large as the trace files exists.
pub fn find_identical_as(
    archive: &Archive,
    path: &Path,
    opts: &IngestOptions,
) -> Result<Option<CaptureEntry>> {
    let files =
        if path.is_dir() { capture_dir_as(path, opts.format)?.0 } else { vec![path.to_path_buf()] };
    let size_of = |files: &[PathBuf]| -> Option<u64> {
        files.iter().map(|f| std::fs::metadata(f).ok().map(|m| m.len())).sum()
    };
    // The ingest itself reports an unreadable file.
    let Some(traces) = size_of(&files) else { return Ok(None) };
    if !archive.manifest.captures.iter().any(|c| c.source_bytes >= traces) {
        return Ok(None);
    }
    // Only regular files are looked into: what is read of a pipe here would be lost to the
    // ingest.
    let Some(format) = files.first().and_then(|f| format_of_file(f, opts)) else {
        return Ok(None);
    };
    let mut companions: Vec<PathBuf> = Vec::new();
    if format == Format::Ovni {
        companions = ingest::ovni::companion_paths(&files);
    }
    for f in files.iter().filter(|_| format != Format::Ovni) {
        let found = match format {
            Format::Prv => prv::Companions::paths(f),
            Format::Qs => opts.qs.dic.clone().map_or_else(|| qs::Companion::paths(f), |d| vec![d]),
            Format::Shark => shark::chunk_paths(f),
            Format::Hw => opts.hw.map.iter().chain(&opts.hw.elf).cloned().collect(),
            Format::Btf | Format::Ovni => Vec::new(),
        };
        for c in found {
            // Read once, as `run` reads a companion several trace files share.
            if format == Format::Prv || !companions.contains(&c) {
                companions.push(c);
            }
        }
    }
    let Some(all) = size_of(&companions).map(|c| traces + c) else { return Ok(None) };
    // Captures ingested before companions counted in `source_bytes` hold the traces' size.
    let size_matches = |c: &CaptureEntry| c.source_bytes == all || c.source_bytes == traces;
    let candidate = |c: &&CaptureEntry| size_matches(c) && same_reading(c, format, opts);
    if !archive.manifest.captures.iter().any(|c| candidate(&c)) {
        return Ok(None);
    }
    let mut hashes = Vec::new();
    for f in files.iter().chain(&companions) {
        hashes.push(crate::store::verify::file_sha256(f).map_err(|e| Error::io(f, e))?);
    }
    let sha = combined_sha256(&hashes);
    Ok(archive.manifest.captures.iter().find(|c| candidate(c) && c.source_sha256 == sha).cloned())
}

/// Whether the capture `c` was read as `format` with the options of `opts` that read the
/// same bytes otherwise, as far as its `meta` recorded them (see [`find_identical_as`]).
fn same_reading(c: &CaptureEntry, format: Format, opts: &IngestOptions) -> bool {
    let rate = |key: &str| c.meta.get(key).and_then(|s| s.parse::<u64>().ok());
    let has = |key: &str| c.meta.contains_key(key);
    c.format == format.name()
        && match format {
            Format::Qs => rate("qs.tick_rate_hz") == opts.qs.tick_rate,
            // A log with its own rate does not use --tick-rate.
            Format::Shark => {
                has("shark.cycles_per_msec") || rate("shark.tick_rate_hz") == opts.shark.tick_rate
            }
            Format::Hw => {
                has("hw.map") == opts.hw.map.is_some() && has("hw.elf") == opts.hw.elf.is_some()
            }
            Format::Btf | Format::Prv | Format::Ovni => true,
        }
}
