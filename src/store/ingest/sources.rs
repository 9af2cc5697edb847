//! The source files kept in the archive (`--keep-source`, the default): [`SourceKeeper`]
//! stores each trace file from the very bytes the ingest reads, on a thread of its own, and
//! the companions at the end, refusing one whose bytes differ from those read; plain files
//! are stored as zstd frames, gzip and zstd ones as they are. [`extract_sources`] writes
//! them back out for `reingest`, after checking each against the manifest's hash.
use super::run::durable_rename;
use crate::ingest::input::{Compression, Digest256, Hashing};
use crate::store::manifest::CaptureEntry;
use crate::store::Archive;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Keeps copies of a capture's source files: each trace file is stored on a thread of its
/// own from the bytes the ingest reads (compressing overlaps parsing, and the file is read
/// once), companions at the end.
pub(super) struct SourceKeeper {
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
pub(super) fn changed_during_ingest(src: &Path, read: u64, later: u64, when: &str) -> Error {
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
    pub(super) fn new(staging: &Path) -> Result<Self> {
        let dir = staging.join("sources");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(SourceKeeper { dir, traces: Vec::new(), later: Vec::new() })
    }

    /// `src` is to be stored at the end as `name` (its own name when `None`), as a trace
    /// file or a companion.
    pub(super) fn later(&mut self, src: &Path, name: Option<String>, trace: bool) {
        self.later.push((src.to_path_buf(), name, trace));
    }

    /// Where the ingest sends the bytes it reads of the trace file `src`, stored on a thread
    /// of their own.
    pub(super) fn copy_of(&mut self, src: &Path) -> Result<std::sync::mpsc::SyncSender<Vec<u8>>> {
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
    pub(super) fn finish(
        self,
        archive_dir: &Path,
        id: i64,
        all: &[String],
        read: &[Digest256],
    ) -> Result<Vec<crate::store::manifest::SourceEntry>> {
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
            entries.push(crate::store::manifest::SourceEntry {
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
        let sha256 = crate::store::verify::file_sha256(&from).map_err(|e| Error::io(&from, e))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::input::Input;

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
}
