//! One source file into one capture: read (decompressing), import, derive, write the table
//! files into a staging directory, then publish them and the manifest entry.
//! On any error the staging directory is removed and the archive is as it was.
use super::manifest::{CaptureEntry, FileEntry};
use super::writer::{CaptureWriter, TableSink, DEFAULT_ZSTD_LEVEL};
use super::{schema, Archive};
use crate::derive::{Deriver, Summary};
use crate::ingest::diag::Severity;
use crate::ingest::input::{
    file_digest, Compression, Digest256, Hashing, Input, COMPRESSED_SUFFIXES,
};
use crate::ingest::lines::LineReader;
use crate::ingest::{self, btf, hw, prv, qs, shark, Format};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "ingest_ovni.rs"]
mod ovni_streams;

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
    /// zstd level of the Parquet files (`None`: [`DEFAULT_ZSTD_LEVEL`]).
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

struct Counting<'a, R> {
    inner: R,
    read: u64,
    next_report: u64,
    raw: std::sync::Arc<std::sync::atomic::AtomicU64>,
    size: u64,
    progress: Progress<'a>,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // A signal stops the reading at once; `run` then turns it into an error (not of kind
        // Interrupted, which readers retry).
        if crate::signals::interrupted().is_some() {
            return Err(std::io::Error::other("interrupted by a signal"));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read >= self.next_report {
            self.next_report = self.read + (4 << 20);
            (self.progress)(self.raw.load(std::sync::atomic::Ordering::Relaxed), self.size);
        }
        Ok(n)
    }
}

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

/// The trace files of a capture directory and the capture's default name.
pub fn capture_dir(dir: &Path) -> Result<(Vec<PathBuf>, String)> {
    capture_dir_as(dir, None)
}

/// [`capture_dir`] for the format `format`: an ovni directory gives its emulator output
/// (`thread.prv`, `cpu.prv`) unless `--format ovni` asks for its binary streams, or there
/// is no emulator output beside them.
pub fn capture_dir_as(dir: &Path, format: Option<Format>) -> Result<(Vec<PathBuf>, String)> {
    let streams = || {
        ingest::ovni::streams_dir(dir)
            .map(|(_, s)| s.into_iter().map(|s| s.obs).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    if format == Some(Format::Ovni) {
        let files = streams();
        if files.is_empty() {
            return Err(Error::input(
                &dir.display().to_string(),
                "",
                "--format ovni: no ovni streams here (loom.*/proc.*/thread.*/stream.obs, or v2 \
                 loom.*/proc.*/thread.*.obs, in it or in its ovni/ folder)",
            ));
        }
        return Ok((files, dir_capture_name(dir)));
    }
    // One file per view: `thread.prv` and `thread.prv.gz` side by side would be read twice.
    let pick = |d: &Path| -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for n in ["thread.prv", "cpu.prv"] {
            let found: Vec<PathBuf> = std::iter::once(d.join(n))
                .chain(COMPRESSED_SUFFIXES.iter().map(|c| d.join(format!("{n}{c}"))))
                .filter(|p| p.is_file())
                .collect();
            if found.len() > 1 {
                let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
                return Err(Error::input(
                    &d.display().to_string(),
                    "",
                    format!(
                        "{} copies of {n}: {}; keep one, or give the trace files instead",
                        found.len(),
                        names.join(", ")
                    ),
                ));
            }
            files.extend(found);
        }
        Ok(files)
    };
    let mut files = pick(dir)?;
    // The name comes from the resolved path, so that however the directory is written
    // (`.` inside `emu-x/ovni`, `ovni/`, `emu-x/ovni/..`, a symlink) it names the same capture.
    let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut named = resolved.clone();
    if files.is_empty() {
        files = pick(&dir.join("ovni"))?;
    } else if resolved.file_name().is_some_and(|n| n == "ovni") {
        // `emu-x/ovni/`: the experiment's directory names the capture.
        if let Some(parent) = resolved.parent() {
            named = parent.to_path_buf();
        }
    }
    if files.is_empty() {
        files = streams();
    }
    if files.is_empty() {
        return Err(Error::input(
            &dir.display().to_string(),
            "",
            "a directory is ingested only when it is an ovni output directory (thread.prv and/or cpu.prv, or ovni's binary streams loom.*/proc.*/thread.*/stream.obs, in it or in its ovni/ folder); give trace files instead",
        ));
    }
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    Ok((files, not_a_number(name)))
}

/// The capture name of an ovni directory: its own, or the experiment's for `x/ovni`.
fn dir_capture_name(dir: &Path) -> String {
    let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let named = match resolved.parent() {
        Some(p) if resolved.file_name().is_some_and(|n| n == "ovni") => p.to_path_buf(),
        _ => resolved,
    };
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    not_a_number(name)
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

/// Format of the file `shown` from its first bytes and the options.
fn format_of(prefix: &[u8], shown: &str, opts: &IngestOptions) -> Result<Format> {
    // Detection reads the first lines: a refusal points at the first.
    let at = if prefix.is_empty() { "" } else { "line 1" };
    match opts.format {
        Some(f) => {
            // Forcing BTF reads any text: every line is an event or a malformed_line
            // diagnostic. Paraver's reader needs its header line. QS has no magic: forced,
            // any bytes are read as frames (bad ones become diagnostics); S.Ha.R.K. forced
            // reads any bytes as 16-byte records (unknown codes become diagnostics).
            if f == Format::Prv && !f.sniff(prefix) {
                return Err(Error::input(
                    shown,
                    at,
                    format!("not a {} file (its first lines do not look like one)", f.name()),
                ));
            }
            Ok(f)
        }
        // Before detection: a tar of one BTF file reads as BTF with its headers as
        // malformed lines, and a tar of several as one capture of all of them.
        None => match container(prefix) {
            Some(kind) => Err(Error::input(
                shown,
                "",
                format!(
                    "{kind} archive: extract it and ingest the trace files in it (tracedb \
                     decompresses single files: .gz, .zst, .bz2, .xz, or a .zip of one file)"
                ),
            )),
            None => ingest::detect(prefix).ok_or_else(|| {
                Error::input(
                    shown,
                    at,
                    format!(
                        "unrecognised format (supported: {}); use --format to force one",
                        ingest::format_names()
                    ),
                )
            }),
        },
    }
}

/// The kind of multi-file archive whose first bytes (decompressed) are `prefix`: a trace
/// directory shipped as `.tar.gz` or `.7z` is not a trace, and saying so beats
/// "unrecognised format".
fn container(prefix: &[u8]) -> Option<&'static str> {
    // POSIX `ustar\0` or GNU `ustar  \0` at byte 257 of the first 512-byte header.
    if prefix.get(257..263).is_some_and(|m| m == b"ustar\0" || m == b"ustar ") {
        Some("a tar")
    } else if prefix.starts_with(b"7z\xBC\xAF\x27\x1C") {
        Some("a 7z")
    } else if prefix.starts_with(b"Rar!\x1A\x07") {
        Some("a RAR")
    } else {
        None
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    archive: &mut Archive,
    paths: &[PathBuf],
    default: &str,
    opts: &IngestOptions,
    id: i64,
    staging: &Path,
    started: Instant,
    progress: Progress<'_>,
) -> Result<IngestReport> {
    let first = paths.first().ok_or_else(|| Error::Usage("no file to ingest".into()))?;
    let writer = CaptureWriter::create(staging, opts.zstd_level.unwrap_or(DEFAULT_ZSTD_LEVEL))?;
    let mut keeper = if opts.keep_source && opts.replace.is_none() {
        Some(SourceKeeper::new(staging)?)
    } else {
        None
    };
    let mut deriver =
        Deriver::new(TableSink::new(writer), &first.display().to_string(), opts.strict);
    let mut format = None;
    let mut first_format: Option<(Format, String)> = None;
    let mut sources = Vec::new();
    let mut companions = Vec::new();
    let mut companion_digests = Vec::new();
    let mut digests = Vec::new();
    let mut text_bytes = 0;
    // ovni streams are merged by time: read together, not one by one below.
    let ovni_read = if ovni_streams::is_ovni(paths, opts) {
        let r = ovni_streams::read(paths, opts, &mut deriver, keeper.as_mut())?;
        (format, sources, digests) = (Some(Format::Ovni), r.sources, r.digests);
        (companions, companion_digests, text_bytes) =
            (r.companions, r.companion_digests, r.text_bytes);
        Some(r.origin)
    } else {
        None
    };
    let one_by_one = if ovni_read.is_some() { &[] } else { paths };
    for (i, path) in one_by_one.iter().enumerate() {
        // A rebuild reads extracted copies; positions keep naming the files first ingested.
        let shown = match opts.replace.as_ref().and_then(|old| old.source_files.get(i)) {
            Some(original) => original.clone(),
            None => path.display().to_string(),
        };
        deriver.set_source(&shown);
        let copy = keeper.as_mut().map(|k| k.copy_of(path)).transpose()?;
        // A regular file's size and time now, to tell at the end whether it changed meanwhile.
        let before = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file);
        let mut input = Input::open_copying(path, copy).map_err(|e| Error::io(path, e))?;
        let prefix =
            input.peek(64 << 10).map_err(|e| Error::input(&shown, "", e.to_string()))?.to_vec();
        // An empty file alone is no capture whatever its format; in a capture of several
        // files (S.Ha.R.K. chunks) the format reader decides.
        if prefix.is_empty()
            && input.damage().is_none()
            && (opts.format.is_none() || paths.len() == 1)
        {
            return Err(Error::input(&shown, "", "empty file: no trace to ingest"));
        }
        let f = format_of(&prefix, &shown, opts).map_err(|e| match (e, input.damage()) {
            // Too little text to tell the format: the damage is the news.
            (Error::Input { message, .. }, Some(d)) => Error::input(
                &shown,
                "",
                format!("{message}: only {} bytes of text decode ({d})", prefix.len()),
            ),
            (e, _) => e,
        })?;
        match &first_format {
            Some((g, first_shown)) if *g != f => {
                return Err(Error::input(
                    &shown,
                    "",
                    format!(
                        "read as {}, but {first_shown} was read as {}: the files of one capture \
                         must have one format",
                        f.name(),
                        g.name()
                    ),
                ));
            }
            Some(_) => {}
            None => first_format = Some((f, shown.clone())),
        }
        format = Some(f);
        let raw = input.raw_read.clone();
        let size = input.raw_size;
        let mut counting = Counting {
            inner: &mut input,
            read: 0,
            next_report: 0,
            raw,
            size,
            progress: &mut *progress,
        };
        // Where the reading stopped, for an error found after it: a line, or a byte offset
        // in a binary format.
        let last_line = if f == Format::Qs {
            let comp = qs::Companion::find(path, opts.qs.dic.as_deref())?;
            qs::read(&mut counting, &shown, &opts.qs, &comp, &mut deriver)?;
            if let (Some(p), Some(d)) = (&comp.path, &comp.digest) {
                let p = p.display().to_string();
                if !companions.contains(&p) {
                    companions.push(p);
                    companion_digests.push(d.clone());
                    text_bytes += comp.text_bytes;
                }
            }
            format!("byte {}", counting.read)
        } else if f == Format::Shark {
            // Its sibling chunk files (`1trace.dat`...) are read with it: companions.
            let chunks = shark::read(&mut counting, path, &shown, &opts.shark, &mut deriver)?;
            for (p, d) in chunks.files {
                let p = p.display().to_string();
                if !companions.contains(&p) {
                    companions.push(p);
                    companion_digests.push(d);
                }
            }
            text_bytes += chunks.text_bytes;
            format!("byte {}", counting.read)
        } else {
            let mut lines = LineReader::new(&mut counting);
            match f {
                Format::Btf | Format::Qs | Format::Shark => {
                    btf::read(&mut lines, &shown, &mut deriver)?
                }
                Format::Hw => {
                    // The ELF and mapping are part of the capture, hashed and kept with it.
                    let comp = hw::Companions::load(&opts.hw)?;
                    hw::read(&mut lines, &shown, Some(path), &comp, &mut deriver)?;
                    for (k, kept) in comp.files() {
                        let p = k.path.display().to_string();
                        if let Some(keeper) = keeper.as_mut() {
                            keeper.later(&k.path, Some(kept), false);
                        }
                        if !companions.contains(&p) {
                            companions.push(p);
                            companion_digests.push(k.digest.clone());
                            text_bytes += k.text_bytes;
                        }
                    }
                }
                // Read above, all streams together; one after other files is refused above.
                Format::Ovni => {
                    return Err(Error::input(&shown, "", "ovni streams are read together"))
                }
                Format::Prv => {
                    let comp = prv::Companions::find(path);
                    prv::read(&mut lines, &shown, &comp, &mut deriver)?;
                    companions.extend(comp.found.iter().map(|p| p.display().to_string()));
                    companion_digests.extend(comp.digests.iter().cloned());
                    text_bytes += comp.text_bytes;
                }
            }
            format!("line {}", lines.line_number())
        };
        if let Some(sig) = crate::signals::interrupted() {
            return Err(Error::Interrupted(sig));
        }
        text_bytes += counting.read;
        (counting.progress)(size, size);
        // A truncated or corrupt .gz/.zst may only show here, after its last whole line.
        let digest = input
            .finish()
            .map_err(|e| Error::input(&shown, format!("after {last_line}"), e.to_string()))?;
        if let Some(before) = before {
            let now = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
            if now.len() != digest.bytes || now.modified().ok() != before.modified().ok() {
                return Err(Error::input(
                    &shown,
                    "",
                    format!(
                        "the file changed while it was being ingested ({} bytes when it was \
                         opened, {} read, {} now): nothing was stored; ingest it again once it \
                         is complete",
                        before.len(),
                        digest.bytes,
                        now.len()
                    ),
                ));
            }
        }
        digests.push(digest);
        sources.push(shown);
    }
    let format = format.unwrap_or(Format::Btf);
    let (summary, mut sink) = deriver.finish()?;
    // One file: its hash. Several (trace files, then a Paraver trace's .pcf and .row): the
    // hash of their hashes, one per line, in order. The companions count: a .prv ingested
    // again with a corrected .pcf is a different capture.
    // The companions as they were read; one changed since is refused, as a trace file is.
    for (c, read) in companions.iter().zip(companion_digests) {
        let p = Path::new(c);
        let now = file_digest(p).map_err(|e| Error::io(p, e))?;
        if now != read {
            return Err(changed_during_ingest(p, read.bytes, now.bytes, "hashed again"));
        }
        digests.push(read);
    }
    let hashes: Vec<String> = digests.iter().map(|d| d.sha256.clone()).collect();
    let sha256 = combined_sha256(&hashes);
    // Every file read: the trace files and a Paraver trace's companions.
    let source_bytes = digests.iter().map(|d| d.bytes).sum();
    sources.extend(companions);

    let name = match &opts.replace {
        Some(old) => old.name.clone(),
        None => opts.name.clone().unwrap_or_else(|| default.to_string()),
    };
    let mut capture = CaptureEntry {
        capture_id: id,
        name,
        format: format.name().to_string(),
        source_files: sources,
        source_sha256: sha256,
        source_bytes,
        source_text_bytes: text_bytes,
        // A rebuild keeps the date the capture came into the archive.
        ingested_at: opts.replace.as_ref().map_or_else(now_rfc3339, |c| c.ingested_at.clone()),
        time_unit: summary.unit.as_str().to_string(),
        ts_origin: ovni_read.flatten().unwrap_or(0),
        ts_min: summary.ts_range.map(|r| r.0),
        ts_max: summary.ts_range.map(|r| r.1),
        event_count: summary.events,
        meta: summary.meta.clone(),
        tool_version: crate::TOOL_VERSION.to_string(),
        schema_version: schema::SCHEMA_VERSION,
        files: BTreeMap::new(),
        tags: opts.replace.as_ref().map_or_else(|| opts.tags.clone(), |c| c.tags.clone()),
        sources: Vec::new(),
    };
    if let Some(old) = &opts.replace {
        // A rebuild keeps what identifies the capture: its sources as first given.
        capture.source_files = old.source_files.clone();
        capture.sources = old.sources.clone();
    }
    write_side_tables(&mut sink.writer, &summary, &capture, &opts.deadlines)?;
    let files = sink.writer.finish()?;

    if let Some(sig) = crate::signals::interrupted() {
        return Err(Error::Interrupted(sig));
    }
    if let Some(k) = keeper {
        capture.sources = k.finish(&archive.dir, id, &capture.source_files, &digests)?;
    }
    if let Some(sig) = crate::signals::interrupted() {
        return Err(Error::Interrupted(sig));
    }
    // Publish: files into their partitions, then the manifest entry (the commit point). A
    // rebuild writes the next generation of files beside the old ones, which go after.
    let generation = opts.replace.as_ref().map_or(0, next_generation);
    for f in files {
        let rel = format!("{}/capture_id={id}/part-{generation}.parquet", f.table);
        let dest = archive.dir.join(&rel);
        durable_rename(&f.path, &dest)?;
        capture.files.insert(
            f.table.clone(),
            FileEntry { path: rel, rows: f.rows, bytes: f.bytes, sha256: f.sha256 },
        );
    }
    match opts
        .replace
        .as_ref()
        .and_then(|_| archive.manifest.captures.iter().position(|c| c.capture_id == id))
    {
        Some(at) => {
            // Changed in memory only once saved: a failed save (a full disk) leaves the
            // manifest in use as it was, which the clean-up after an error relies on.
            let mut next = archive.manifest.clone();
            let old = std::mem::replace(&mut next.captures[at], capture.clone());
            next.save(&archive.dir)?;
            archive.manifest = next;
            // The old generation, unless a query may be reading it: then the next writer
            // removes it (see `ReadLock`).
            if let Some(_unread) = archive.unread()? {
                for f in old.files.values() {
                    if !capture.files.values().any(|n| n.path == f.path) {
                        let _ = std::fs::remove_file(archive.dir.join(&f.path));
                    }
                }
            }
        }
        None => {
            let mut next = archive.manifest.clone();
            next.captures.push(capture.clone());
            next.next_capture_id = id + 1;
            next.save(&archive.dir)?;
            archive.manifest = next;
        }
    }

    let diagnostics =
        summary.diag_counts.iter().map(|(k, (s, n))| (k.to_string(), *s, *n)).collect();
    let deadlines_match_nothing = !opts.deadlines.is_empty()
        && !opts.deadlines.iter().any(|(pattern, _)| {
            pattern.contains('[')
                || summary.entities.iter().any(|e| {
                    let ty = e.entity_type.map(|t| summary.names.resolve(t));
                    matches!(ty, Some("T" | "I" | "ISR")) && {
                        let name = summary.names.resolve(e.name);
                        name == pattern || crate::ingest::hw::glob(pattern, name)
                    }
                })
        });
    Ok(IngestReport {
        capture,
        entities: summary.entities.len() as u64,
        intervals: summary.intervals,
        instances: summary.instances,
        lock_requests: summary.lock_requests,
        messages: summary.messages,
        diagnostics,
        text_bytes,
        elapsed: started.elapsed(),
        deadlines_match_nothing,
    })
}

/// The file generation after the capture's current one (`part-<n>.parquet`).
fn next_generation(c: &CaptureEntry) -> u64 {
    c.files
        .values()
        .filter_map(|f| {
            f.path.rsplit_once("part-")?.1.strip_suffix(".parquet")?.parse::<u64>().ok()
        })
        .max()
        .map_or(0, |g| g + 1)
}

/// Keeps copies of a capture's source files: each trace file is stored on a thread of its
/// own from the bytes the ingest reads (compressing overlaps parsing, and the file is read
/// once), companions at the end.
struct SourceKeeper {
    dir: PathBuf,
    traces: Vec<(PathBuf, std::thread::JoinHandle<Result<StoredFile>>)>,
    /// Files stored at the end under another name than their own (ovni's stream tree:
    /// their path below the trace folder), and whether each is a trace file.
    later: Vec<(PathBuf, Option<String>, bool)>,
}

/// A source file as stored in the archive.
struct StoredFile {
    /// Its name in `sources/capture_id=N/`.
    name: String,
    /// Whether tracedb compressed it (zstd); else it is stored as it was (gzip, zstd).
    compressed: bool,
    /// Size of the stored file.
    bytes: u64,
    /// SHA-256 of the stored file.
    sha256: String,
}

/// Counts and hashes what is written through it.
struct HashingWriter<W> {
    inner: W,
    hasher: sha2::Sha256,
    bytes: u64,
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        sha2::Digest::update(&mut self.hasher, buf.get(..n).unwrap_or_default());
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Stores the bytes of a source file named `name`, as they arrive in `chunks`, in `dir`: as
/// they are when already gzip or zstd, else zstd-compressed (level 1: as small as level 3
/// on traces, and faster).
fn store_chunks(
    name: &str,
    chunks: impl IntoIterator<Item = std::io::Result<Vec<u8>>>,
    dir: &Path,
) -> Result<StoredFile> {
    use std::io::Write;
    let mut chunks = chunks.into_iter().peekable();
    let first = match chunks.peek() {
        Some(Ok(c)) => c.get(..4.min(c.len())).unwrap_or_default(),
        _ => &[],
    };
    let plain = Compression::sniff(first) == Compression::None;
    let stored = if plain { format!("{name}.zst") } else { name.to_string() };
    let out = dir.join(&stored);
    let file = std::fs::File::create(&out).map_err(|e| Error::io(&out, e))?;
    let hashed = HashingWriter { inner: file, hasher: sha2::Digest::new(), bytes: 0 };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, hashed);
    let io = |e| Error::io(&out, e);
    if plain {
        // One zstd frame per chunk (about 1 MiB), each compressed whole: a streaming encoder
        // copies its input into a ring buffer whose wrap-around sends most blocks through
        // the slower two-segment ("extDict") match search (this thread's samples: -16%).
        // Readers of zstd read concatenated frames as one stream; level 1's window is
        // 512 KiB, so little is lost at frame boundaries (256 MiB benchmark trace: +0.01%).
        let mut zstd = zstd::bulk::Compressor::new(1).map_err(io)?;
        // A 4k-entry match table instead of level 1's 8k: it stays in the L1 cache, and
        // traces, whose repeats are near, lose nothing by it (256 MiB benchmark trace: ~5%
        // less of this thread's time, and 0.9% smaller; 1-4% smaller on the shared samples).
        zstd.set_parameter(zstd::zstd_safe::CParameter::HashLog(12)).map_err(io)?;
        let mut frame = Vec::new();
        let mut put = |chunk: &[u8]| -> std::io::Result<()> {
            frame.clear();
            frame.reserve(zstd::zstd_safe::compress_bound(chunk.len()));
            zstd.compress_to_buffer(chunk, &mut frame)?;
            w.write_all(&frame)
        };
        let mut frames = 0;
        for chunk in chunks {
            put(&chunk.map_err(io)?).map_err(io)?;
            frames += 1;
        }
        if frames == 0 {
            // An empty file still gets a frame (of nothing), as the stream encoder wrote.
            put(&[]).map_err(io)?;
        }
    } else {
        for chunk in chunks {
            w.write_all(&chunk.map_err(io)?).map_err(io)?;
        }
    }
    let hashed = w.into_inner().map_err(|e| io(e.into_error()))?;
    hashed.inner.sync_all().map_err(io)?;
    let sha256 = crate::ingest::input::hex(&sha2::Digest::finalize(hashed.hasher));
    Ok(StoredFile { name: stored, compressed: plain, bytes: hashed.bytes, sha256 })
}

/// Stores the file `src` in `dir` (see [`store_chunks`]); returns it with the hash and size
/// of the original bytes.
fn store_source(src: &Path, name: Option<&str>, dir: &Path) -> Result<(StoredFile, Digest256)> {
    let name = name.map_or_else(|| file_name(src), str::to_string);
    if let Some(parent) = dir.join(&name).parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut r = Hashing::new(std::fs::File::open(src).map_err(|e| Error::io(src, e))?);
    let chunks = std::iter::from_fn(|| {
        let mut buf = vec![0u8; 1 << 20];
        match std::io::Read::read(&mut r, &mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some(Ok(buf))
            }
            Err(e) => Some(Err(e)),
        }
    });
    let stored = store_chunks(&name, chunks, dir)?;
    Ok((stored, r.digest()))
}

fn file_name(src: &Path) -> String {
    src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "source".into())
}

/// The error when the bytes kept of `src` are not the ones read for the tables: the file
/// changed (grew, was rewritten) during the ingest.
fn changed_during_ingest(src: &Path, read: u64, later: u64, when: &str) -> Error {
    Error::input(
        &src.display().to_string(),
        "",
        format!(
            "the file changed while it was being ingested ({read} bytes read for the tables, \
             {later} bytes when it was {when}): nothing was stored; ingest it again once it is \
             complete"
        ),
    )
}

impl SourceKeeper {
    fn new(staging: &Path) -> Result<Self> {
        let dir = staging.join("sources");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(SourceKeeper { dir, traces: Vec::new(), later: Vec::new() })
    }

    /// `src` is to be stored at the end as `name` (its own name when `None`), as a trace
    /// file or a companion.
    fn later(&mut self, src: &Path, name: Option<String>, trace: bool) {
        self.later.push((src.to_path_buf(), name, trace));
    }

    /// Where the ingest sends the bytes it reads of the trace file `src`, stored on a thread
    /// of their own.
    fn copy_of(&mut self, src: &Path) -> Result<std::sync::mpsc::SyncSender<Vec<u8>>> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
        let (name, dir) = (file_name(src), self.dir.clone());
        let handle = std::thread::Builder::new()
            .name("tracedb-keep".into())
            .spawn(move || store_chunks(&name, rx.into_iter().map(Ok), &dir))
            .map_err(|e| Error::io(src, e))?;
        self.traces.push((src.to_path_buf(), handle));
        Ok(tx)
    }

    /// Waits for the trace copies, stores the companions (the rest of `all`), and renames
    /// everything into `sources/capture_id=<id>/`; returns the manifest entries. `read`
    /// holds the digest of each file as the tables were read from it, in the order of
    /// `all`: a companion kept with other bytes is an error (trace files are kept from the
    /// very bytes read).
    fn finish(
        self,
        archive_dir: &Path,
        id: i64,
        all: &[String],
        read: &[Digest256],
    ) -> Result<Vec<super::manifest::SourceEntry>> {
        let mut stored = Vec::new();
        for (src, handle) in self.traces {
            match handle.join() {
                Ok(r) => stored.push((src, r?, "trace")),
                Err(_) => {
                    return Err(Error::Sql("internal: the source-keeping thread panicked".into()))
                }
            }
        }
        for (i, shown) in all.iter().enumerate() {
            let src = PathBuf::from(shown);
            if stored.iter().any(|(p, _, _)| *p == src) {
                continue;
            }
            let late = self.later.iter().find(|(p, _, _)| *p == src);
            let (s, kept) = store_source(&src, late.and_then(|l| l.1.as_deref()), &self.dir)?;
            if let Some(r) = read.get(i).filter(|r| **r != kept) {
                return Err(changed_during_ingest(&src, r.bytes, kept.bytes, "kept"));
            }
            stored.push((src, s, if late.is_some_and(|l| l.2) { "trace" } else { "companion" }));
        }
        let mut entries = Vec::new();
        for (src, s, role) in stored {
            let from = self.dir.join(&s.name);
            let rel = format!("sources/capture_id={id}/{}", s.name);
            durable_rename(&from, &archive_dir.join(&rel))?;
            entries.push(super::manifest::SourceEntry {
                path: rel,
                name: self
                    .later
                    .iter()
                    .find(|(p, _, _)| *p == src)
                    .and_then(|l| l.1.clone())
                    .unwrap_or_else(|| file_name(&src)),
                role: role.into(),
                compressed: s.compressed,
                bytes: s.bytes,
                sha256: s.sha256,
            });
        }
        Ok(entries)
    }
}

/// Writes the kept sources of `c` into `dir` under their original names (decompressing the
/// ones tracedb compressed) and returns the trace files, in order.
pub fn extract_sources(archive: &Archive, c: &CaptureEntry, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut traces = Vec::new();
    for s in &c.sources {
        let from = archive.dir.join(&s.path);
        // ovni's streams keep their path below the trace folder; nothing may point outside.
        if Path::new(&s.name).components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            return Err(Error::Archive {
                path: from,
                message: format!("kept source name '{}' is not a relative path", s.name),
            });
        }
        let to = dir.join(&s.name);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        // A rebuild replaces the capture's tables: never from bytes that are not the ones
        // the manifest recorded.
        let sha256 = super::verify::file_sha256(&from).map_err(|e| Error::io(&from, e))?;
        if sha256 != s.sha256 {
            return Err(Error::Archive {
                path: from,
                message: format!(
                    "this kept source of capture {} differs from the one recorded in the \
                     manifest (altered or damaged); the capture is left as it was",
                    c.capture_id
                ),
            });
        }
        if s.compressed {
            let r = std::fs::File::open(&from).map_err(|e| Error::io(&from, e))?;
            let mut w = std::fs::File::create(&to).map_err(|e| Error::io(&to, e))?;
            zstd::stream::copy_decode(r, &mut w).map_err(|e| Error::io(&from, e))?;
        } else {
            std::fs::copy(&from, &to).map_err(|e| Error::io(&from, e))?;
        }
        if s.role == "trace" {
            traces.push(to);
        }
    }
    Ok(traces)
}

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
        hashes.push(super::verify::file_sha256(f).map_err(|e| Error::io(f, e))?);
    }
    let sha = combined_sha256(&hashes);
    Ok(archive.manifest.captures.iter().find(|c| candidate(c) && c.source_sha256 == sha).cloned())
}

/// The format `path` is read as with `opts`: forced, or detected from its first bytes.
/// `None` when that cannot be told here (not a regular file, unreadable, unrecognised):
/// the ingest then says why.
pub fn format_of_file(path: &Path, opts: &IngestOptions) -> Option<Format> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    if let Some(f) = opts.format.filter(|f| *f != Format::Prv) {
        return Some(f);
    }
    let mut input = Input::open(path).ok()?;
    let prefix = input.peek(64 << 10).ok()?;
    format_of(prefix, "", opts).ok()
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

/// Rows known only at the end: entities, diagnostics, and the capture's own row.
fn write_side_tables(
    w: &mut CaptureWriter,
    s: &Summary,
    c: &CaptureEntry,
    deadlines: &[(String, i64)],
) -> Result<()> {
    let missing = |t: &str| Error::Sql(format!("internal: no table {t} in the schema"));
    let dl = w.table_index("deadlines").ok_or_else(|| missing("deadlines"))?;
    for (entity, ns) in deadlines {
        if let Some(b) = w.batch(dl) {
            b.str(Some(entity)).i64(Some(*ns)).str(Some("file")).end_row();
        }
    }
    let ent = w.table_index("entities").ok_or_else(|| missing("entities"))?;
    for (id, e) in s.entities.iter().enumerate() {
        let mut attrs = serde_json::Map::new();
        if let Some(l) = e.first_line {
            attrs.insert("first_line".into(), l.into());
        }
        if let Some(b) = e.btf_id {
            attrs.insert("btf_id".into(), b.into());
        }
        if e.inferred {
            attrs.insert("inferred_type".into(), true.into());
        }
        if e.declared {
            attrs.insert("declared_type".into(), true.into());
        }
        let attrs = serde_json::Value::Object(attrs).to_string();
        if let Some(b) = w.batch(ent) {
            b.i64(i64::try_from(id).ok())
                .str(Some(s.names.resolve(e.name)))
                .str(e.entity_type.map(|t| s.names.resolve(t)))
                .str(e.parent.map(|p| s.names.resolve(p)))
                .str(Some(&attrs))
                .end_row();
        }
        w.flush(ent, false)?;
    }
    let diag = w.table_index("diagnostics").ok_or_else(|| missing("diagnostics"))?;
    for d in &s.diagnostics {
        if let Some(b) = w.batch(diag) {
            b.str(Some(d.severity.as_str()))
                .str(Some(d.kind))
                .str(Some(&d.position))
                .i64(d.ts)
                .str(Some(&d.message))
                .i64(i64::try_from(d.count).ok())
                .end_row();
        }
        w.flush(diag, false)?;
    }
    let cap = w.table_index("captures").ok_or_else(|| missing("captures"))?;
    let meta = serde_json::to_string(&c.meta).unwrap_or_else(|_| "{}".into());
    let sources = serde_json::to_string(&c.source_files).unwrap_or_else(|_| "[]".into());
    if let Some(b) = w.batch(cap) {
        b.str(Some(&c.name))
            .str(Some(&c.format))
            .str(Some(&sources))
            .str(Some(&c.source_sha256))
            .i64(i64::try_from(c.source_bytes).ok())
            .str(Some(&c.ingested_at))
            .str(Some(&c.time_unit))
            .i64(Some(c.ts_origin))
            .i64(c.ts_min)
            .i64(c.ts_max)
            .i64(i64::try_from(c.event_count).ok())
            .str(Some(&meta))
            .str(Some(&c.tool_version))
            .i64(Some(c.schema_version))
            .str(Some(&serde_json::to_string(&c.tags).unwrap_or_else(|_| "{}".into())))
            .i64(i64::try_from(c.source_text_bytes).ok().filter(|&n| n > 0))
            .end_row();
    }
    Ok(())
}

/// Moves a finished file into place so that it survives a power cut once the manifest
/// names it: the file's data is flushed, then the rename, then the directory entries the
/// rename created (its directory, and that directory's entry in its parent). Without the
/// directory flushes a durable manifest could name files a crash has lost.
fn durable_rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::File::open(from).and_then(|f| f.sync_all()).map_err(|e| Error::io(from, e))?;
    let parent = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    std::fs::rename(from, to).map_err(|e| Error::io(to, e))?;
    for dir in [Some(parent), parent.parent()].into_iter().flatten() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The file name without directory and without `.gz`/`.zip`/`.btf`/`.bin`-like extensions; the
/// whole file name when that would be a number (`5.btf`), see [`not_a_number`].
pub fn default_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    let whole = name.clone();
    name = crate::ingest::input::strip_compressed(&name).to_string();
    for ext in [".btf", ".prv", ".qs", ".bin", ".txt", ".csv"] {
        if let Some(stripped) = name.strip_suffix(ext) {
            name = stripped.to_string();
        }
    }
    // A file called `.btf` keeps its whole name rather than none.
    if name.is_empty() || is_number(&name) {
        name = whole;
    }
    not_a_number(name)
}

/// True when commands would read `name` as a capture id (`5`, ` 5`, `+5`, `05`): such a
/// name could never be given to `rm`, `export` or `--capture`.
pub fn is_number(name: &str) -> bool {
    name.trim().parse::<i64>().is_ok()
}

/// `name`, or `capture-<name>` when it is a number: the name of `ingest <(zcat t.btf.gz)`
/// (`/dev/fd/63`) or of an experiment directory called `2024`.
pub fn not_a_number(name: String) -> String {
    if is_number(&name) {
        format!("capture-{}", name.trim())
    } else {
        name
    }
}

/// Current UTC time as RFC 3339 (seconds), without a date crate.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_extensions() {
        assert_eq!(default_name(Path::new("/x/freertos-4cores.btf.gz")), "freertos-4cores");
        assert_eq!(default_name(Path::new("a.BTF")), "a.BTF");
        assert_eq!(default_name(Path::new("/x/.btf")), ".btf");
        assert_eq!(default_name(Path::new(".btf.gz")), ".btf.gz");
        // Commands read a number as a capture id: such a name could not be given to them.
        assert_eq!(default_name(Path::new("/x/5.btf")), "5.btf");
        assert_eq!(default_name(Path::new("/x/+5.btf.gz")), "+5.btf.gz");
        assert_eq!(default_name(Path::new("/dev/fd/63")), "capture-63");
        assert_eq!(default_name(Path::new("5.0.btf")), "5.0");
    }

    #[test]
    fn a_kept_trace_holds_the_bytes_read_and_a_changed_companion_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (trace, pcf) = (dir.path().join("t.prv"), dir.path().join("t.pcf"));
        std::fs::write(&trace, "abc\n").unwrap();
        std::fs::write(&pcf, "STATES\n").unwrap();
        let (staging, archive) = (dir.path().join("staging"), dir.path().join("db"));
        std::fs::create_dir_all(archive.join("sources/capture_id=1")).unwrap();
        let all = [trace.display().to_string(), pcf.display().to_string()];
        let digest_of = |text: &str| {
            let mut h = Hashing::new(text.as_bytes());
            std::io::copy(&mut h, &mut std::io::sink()).unwrap();
            h.digest()
        };
        let read_trace = |keeper: &mut SourceKeeper| {
            let copy = keeper.copy_of(&trace).unwrap();
            let mut input = Input::open_copying(&trace, Some(copy)).unwrap();
            std::io::copy(&mut input, &mut std::io::sink()).unwrap();
            input.finish().unwrap()
        };

        // The companion was read as "STATES\n" but is something else by the time it is kept.
        let mut keeper = SourceKeeper::new(&staging).unwrap();
        let read = [read_trace(&mut keeper), digest_of("STATES\nVALUES\n")];
        let e = keeper.finish(&archive, 1, &all, &read).unwrap_err().to_string();
        assert!(e.contains("t.pcf"), "{e}");
        assert!(
            e.contains(
                "the file changed while it was being ingested (14 bytes read for the tables, 7 \
                 bytes when it was kept)"
            ),
            "{e}"
        );

        // The trace grows after it was read: what is kept is what was read.
        let mut keeper = SourceKeeper::new(&staging).unwrap();
        let read = [read_trace(&mut keeper), digest_of("STATES\n")];
        std::fs::write(&trace, "abc\nmore\n").unwrap();
        let kept = keeper.finish(&archive, 1, &all, &read).unwrap();
        assert_eq!(kept.len(), 2);
        let stored = archive.join(&kept[0].path);
        let bytes = std::fs::read(&stored).unwrap();
        assert_eq!(zstd::decode_all(&bytes[..]).unwrap(), b"abc\n");
        assert_eq!(kept[0].bytes, bytes.len() as u64);
        assert_eq!(kept[0].sha256, crate::store::verify::file_sha256(&stored).unwrap());
        assert_eq!((kept[0].role.as_str(), kept[1].role.as_str()), ("trace", "companion"));
    }

    #[test]
    fn a_trace_that_grows_while_it_is_ingested_is_refused_and_nothing_stays() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.btf");
        std::fs::write(&trace, "#timeScale ns\n0,S,-1,T,A,0,activate\n").unwrap();
        let (mut archive, _lock) = Archive::open_for_write(&dir.path().join("db")).unwrap();
        let opts = IngestOptions { keep_source: true, ..Default::default() };
        // The writer of the trace appends a line while tracedb is still at it.
        let mut grown = false;
        let mut grow = |read: u64, size: u64| {
            if read == size && !std::mem::replace(&mut grown, true) {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().append(true).open(&trace).unwrap();
                f.write_all(b"5,Core_0,0,T,A,0,start\n").unwrap();
            }
        };
        let e = ingest_files(&mut archive, std::slice::from_ref(&trace), "t", &opts, &mut grow)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the file changed while it was being ingested (36 bytes when it was opened, 36 read, 59 now)"),
            "{e}"
        );
        assert!(super::super::Manifest::load(&archive.dir).unwrap().captures.is_empty());
        assert!(!archive.dir.join("sources/capture_id=1").exists());
        assert!(!archive.dir.join("events/capture_id=1").exists());
    }

    #[test]
    fn a_companion_changed_after_it_was_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (prv, pcf) = (dir.path().join("t.prv"), dir.path().join("t.pcf"));
        std::fs::write(
            &prv,
            "#Paraver (01/01/2024 at 00:00):100_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:40:1\n",
        )
        .unwrap();
        std::fs::write(&pcf, "STATES\n1\tRunning\n").unwrap();
        let (mut archive, _lock) = Archive::open_for_write(&dir.path().join("db")).unwrap();
        // Its names are in the tables by the time the trace has been read; then it changes.
        let mut edited = false;
        let mut edit = |read: u64, size: u64| {
            if read == size && !std::mem::replace(&mut edited, true) {
                std::fs::write(&pcf, "STATES\n1\tRunnin!\n").unwrap();
            }
        };
        let opts = IngestOptions { keep_source: true, ..Default::default() };
        let e = ingest_files(&mut archive, std::slice::from_ref(&prv), "t", &opts, &mut edit)
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.pcf: the file changed while it was being ingested"), "{e}");
        assert!(super::super::Manifest::load(&archive.dir).unwrap().captures.is_empty());
    }

    #[test]
    fn what_a_stopped_write_put_in_place_is_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (archive, lock) = Archive::open_for_write(&db).unwrap();
        for f in ["sources/capture_id=7/t.btf.zst", "events/capture_id=7/part-0.parquet"] {
            std::fs::create_dir_all(db.join(f).parent().unwrap()).unwrap();
            std::fs::write(db.join(f), "x").unwrap();
        }
        archive.remove_never_listed(7, None).unwrap();
        assert!(
            !db.join("sources/capture_id=7").exists() && !db.join("events/capture_id=7").exists()
        );
        // A rebuild's own generation only.
        for f in ["events/capture_id=8/part-0.parquet", "events/capture_id=8/part-1.parquet"] {
            std::fs::create_dir_all(db.join(f).parent().unwrap()).unwrap();
            std::fs::write(db.join(f), "x").unwrap();
        }
        archive.remove_never_listed(8, Some(1)).unwrap();
        assert!(db.join("events/capture_id=8/part-0.parquet").exists());
        assert!(!db.join("events/capture_id=8/part-1.parquet").exists());
        // The next writer removes a manifest a killed writer was writing.
        std::fs::write(db.join(".manifest.json.99999.tmp"), "{").unwrap();
        drop((archive, lock));
        let _reopened = Archive::open_for_write(&db).unwrap();
        assert!(!db.join(".manifest.json.99999.tmp").exists());
    }

    #[test]
    fn a_plain_source_is_kept_as_zstd_frames_that_decode_to_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let chunks: Vec<Vec<u8>> = (0..5u8)
            .map(|i| format!("{i},C,0,T,A,0,start\n").repeat(50_000).into_bytes())
            .collect();
        let stored = store_chunks("t.btf", chunks.iter().cloned().map(Ok), dir.path()).unwrap();
        assert!(stored.compressed && stored.name == "t.btf.zst");
        let bytes = std::fs::read(dir.path().join(&stored.name)).unwrap();
        assert_eq!(stored.bytes, bytes.len() as u64);
        assert_eq!(zstd::decode_all(&bytes[..]).unwrap(), chunks.concat());
        // Nothing to keep: one empty frame, which decodes to nothing.
        let empty = store_chunks("e.btf", std::iter::empty(), dir.path()).unwrap();
        let bytes = std::fs::read(dir.path().join(&empty.name)).unwrap();
        assert!(!bytes.is_empty());
        assert!(zstd::decode_all(&bytes[..]).unwrap().is_empty());
    }

    #[test]
    fn rfc3339_looks_right() {
        let s = now_rfc3339();
        assert_eq!(s.len(), 20);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
