//! The ingest proper ([`run`]): reads the trace files one by one (ovni streams together, in
//! `ovni_streams`) through their format's importer into the derive stage, whose rows go to
//! a [`CaptureWriter`] in the staging directory; refuses a file that changed while it was
//! read; writes the rows known only at the end ([`write_side_tables`]); stores the kept
//! sources; then publishes: the table files renamed into their partitions
//! ([`durable_rename`]), then the manifest entry, the commit point.
//! Input: the files, the options, the capture id (new, or the one `reingest` rebuilds) and
//! its staging directory. Output: an [`IngestReport`]. On an error or a signal nothing is in
//! the manifest; [`super::ingest_files`] removes what was staged or already renamed.
use super::format::format_of;
use super::identity::combined_sha256;
use super::sources::{changed_during_ingest, SourceKeeper};
use super::{ovni_streams, IngestOptions, IngestReport, Progress};
use crate::derive::{Deriver, Summary};
use crate::ingest::input::{file_digest, Input};
use crate::ingest::lines::LineReader;
use crate::ingest::{btf, hw, prv, qs, shark, Format};
use crate::store::manifest::{CaptureEntry, FileEntry};
use crate::store::writer::{CaptureWriter, TableSink, DEFAULT_ZSTD_LEVEL};
use crate::store::{schema, Archive};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

#[allow(clippy::too_many_arguments)]
pub(super) fn run(
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
pub(super) fn next_generation(c: &CaptureEntry) -> u64 {
    c.files
        .values()
        .filter_map(|f| {
            f.path.rsplit_once("part-")?.1.strip_suffix(".parquet")?.parse::<u64>().ok()
        })
        .max()
        .map_or(0, |g| g + 1)
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
pub(super) fn durable_rename(from: &Path, to: &Path) -> Result<()> {
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
    fn rfc3339_looks_right() {
        let s = now_rfc3339();
        assert_eq!(s.len(), 20);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
