//! The ovni streams of one capture, read together (`run` reads other formats file by
//! file): they are merged by time, so every stream is open at once.
use super::sources::SourceKeeper;
use crate::derive::Deriver;
use crate::ingest::input::{Digest256, Input, SmallInput};
use crate::ingest::ovni;
use crate::ingest::Format;
use crate::store::ingest::IngestOptions;
use crate::store::writer::TableSink;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// A stream that stops being read at a signal (the ingest then ends as interrupted).
struct Stoppable<R> {
    inner: R,
}

impl<R: std::io::Read> std::io::Read for Stoppable<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if crate::signals::interrupted().is_some() {
            return Err(std::io::Error::other("interrupted by a signal"));
        }
        self.inner.read(buf)
    }
}

/// What the capture's common part needs from the reading.
pub(super) struct Read {
    pub sources: Vec<String>,
    pub digests: Vec<Digest256>,
    pub companions: Vec<String>,
    pub companion_digests: Vec<Digest256>,
    pub text_bytes: u64,
    pub origin: Option<i64>,
}

/// True when `paths` are to be read as ovni streams: `--format ovni`, or (detecting) the
/// first file is a regular file that starts like a stream (a pipe is not opened here: what
/// this read would be lost to the ingest; a stream given as one is refused by `run`).
pub(super) fn is_ovni(paths: &[PathBuf], opts: &IngestOptions) -> bool {
    match opts.format {
        Some(f) => f == Format::Ovni,
        None => paths.first().is_some_and(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file())
                && Input::open(p).ok().is_some_and(|mut i| i.peek(8).is_ok_and(ovni::sniff))
        }),
    }
}

/// The folder the stream `s` is named relative to (the one holding its `loom.*`).
fn root_of(s: &ovni::meta::StreamFile) -> Option<PathBuf> {
    s.obs.ancestors().nth(if s.v2 { 3 } else { 4 }).map(Path::to_path_buf)
}

/// Name of a file of the trace in the kept sources: its path below the trace folder, so
/// that the many `stream.obs` do not collide and a rebuild finds the layout again.
fn kept_name(root: Option<&Path>, p: &Path) -> Option<String> {
    let rel = p.strip_prefix(root?).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// Reads the streams `paths` into `deriver`.
pub(super) fn read(
    paths: &[PathBuf],
    opts: &IngestOptions,
    deriver: &mut Deriver<TableSink>,
    keeper: Option<&mut SourceKeeper>,
) -> Result<Read> {
    let mut files = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let mut s = ovni::stream_of(p).ok_or_else(|| {
            Error::input(
                &p.display().to_string(),
                "",
                "not in an ovni trace layout: streams are read as \
                 loom.<L>/proc.<P>/thread.<T>/stream.obs (or v2 loom.<L>/proc.<P>/thread.<T>.obs)",
            )
        })?;
        // A rebuild reads extracted copies; positions keep naming the files first ingested.
        let shown = match opts.replace.as_ref().and_then(|old| old.source_files.get(i)) {
            Some(original) => original.clone(),
            None => p.display().to_string(),
        };
        s.shown = Some(shown.clone());
        files.push((s, shown));
    }
    files.sort_by(|a, b| {
        (&a.0.loom, a.0.pid, a.0.tid, &a.0.obs).cmp(&(&b.0.loom, b.0.pid, b.0.tid, &b.0.obs))
    });
    let root = files.first().and_then(|(s, _)| root_of(s));
    // Positions name the trace folder first ingested (each stream's own diagnostics name
    // the stream).
    let shown_root = files.first().and_then(|(s, _)| ovni::shown_root_of(s));
    deriver.set_source(&shown_root.map_or_else(String::new, |r| r.display().to_string()));
    let mut inputs = Vec::new();
    let mut before = Vec::new();
    for (s, _) in &files {
        before.push(std::fs::metadata(&s.obs).ok().filter(std::fs::Metadata::is_file));
        // Every stream is open at once: a small read-ahead each, on this thread (memory:
        // input::SMALL_BUF a stream, not Input's reading thread and megabyte chunks).
        inputs.push(SmallInput::open(&s.obs).map_err(|e| Error::io(&s.obs, e))?);
    }
    let streams: Vec<_> = files
        .iter()
        .map(|(s, _)| s.clone())
        .zip(inputs.iter_mut().map(|inner| Stoppable { inner }))
        .collect();
    let outcome = ovni::read(streams, deriver)?;
    if let Some(sig) = crate::signals::interrupted() {
        return Err(Error::Interrupted(sig));
    }
    let mut out = Read {
        sources: Vec::new(),
        digests: Vec::new(),
        companions: Vec::new(),
        companion_digests: Vec::new(),
        text_bytes: 0,
        origin: outcome.origin.and_then(|o| i64::try_from(o).ok()),
    };
    for (((s, shown), input), before) in files.iter().zip(inputs).zip(before) {
        let digest = input.finish().map_err(|e| Error::input(shown, "", e.to_string()))?;
        if let Some(before) = before {
            let now = std::fs::metadata(&s.obs).map_err(|e| Error::io(&s.obs, e))?;
            if now.len() != before.len() || now.modified().ok() != before.modified().ok() {
                return Err(Error::input(
                    shown,
                    "",
                    "the file changed while it was being ingested: nothing was stored; ingest \
                     it again once it is complete",
                ));
            }
        }
        out.text_bytes += digest.bytes;
        out.digests.push(digest);
        out.sources.push(shown.clone());
    }
    for c in &outcome.companions {
        out.text_bytes += c.text_bytes;
        out.companions.push(c.path.display().to_string());
        out.companion_digests.push(c.digest.clone());
    }
    if let Some(k) = keeper {
        for (s, _) in &files {
            k.later(&s.obs, kept_name(root.as_deref(), &s.obs), true);
        }
        for c in &outcome.companions {
            k.later(&c.path, kept_name(root.as_deref(), &c.path), false);
        }
    }
    Ok(out)
}
