//! Opening a source file: compression detected by content (gzip, zstd, bzip2, xz, a zip
//! archive of one file, or plain), SHA-256 of the bytes on disk, and decompression on a
//! thread of its own so it overlaps parsing.
//!
//! The returned [`Input`] is a `Read` of the plain text plus a peek at its first bytes for
//! format sniffing. Errors of the decoder (a truncated `.gz`) arrive through `read` and name
//! the compression; the caller adds the file name.
//!
//! Layout: this file opens and decodes ([`Input`]); `hashing.rs` hashes the bytes read,
//! `zstd_frames.rs` decodes zstd block by block, `small.rs` reads companion files whole.
use super::zip::{self, ZipReader};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

mod hashing;
mod small;
mod zstd_frames;

use hashing::Copy;
pub use hashing::{file_digest, hex, Digest256, Hashing};
pub use small::SmallInput;
use zstd_frames::ZstdReader;

const CHUNK: usize = 1 << 20;

/// Most plain text asked of the gzip decoder at once (see `pump`).
const GZIP_STEP: usize = 8 << 10;

/// Compression of a source file, told from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain bytes.
    None,
    /// gzip (one or more members).
    Gzip,
    /// Zstandard (one or more frames).
    Zstd,
    /// bzip2 (one or more streams).
    Bzip2,
    /// xz (one or more streams).
    Xz,
    /// A zip archive of one file, stored or deflated (see [`super::zip`]).
    Zip,
}

/// File name endings of compressed files, stripped to find a file's own extension
/// (`t.prv.bz2` is a `.prv`, its `.pcf` may be `t.pcf.xz`). The content decides how a file is
/// read, never its name.
pub const COMPRESSED_SUFFIXES: [&str; 6] = [".gz", ".zst", ".zstd", ".bz2", ".xz", ".zip"];

/// `name` without one compressed-file ending ([`COMPRESSED_SUFFIXES`], any case).
pub fn strip_compressed(name: &str) -> &str {
    for c in COMPRESSED_SUFFIXES {
        let cut = name.len().saturating_sub(c.len());
        if name.get(cut..).is_some_and(|e| e.eq_ignore_ascii_case(c)) {
            return name.get(..cut).unwrap_or(name);
        }
    }
    name
}

impl Compression {
    /// Tells the compression from the magic number.
    pub fn sniff(prefix: &[u8]) -> Compression {
        match prefix {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            [0xfd, b'7', b'z', b'X', ..] => Compression::Xz,
            // A local file header, or the end record of an empty archive.
            [b'P', b'K', 3, 4, ..] | [b'P', b'K', 5, 6, ..] => Compression::Zip,
            _ => Compression::None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zip => "zip",
        }
    }

    /// Decoders whose read that meets damage loses what it decoded in the same call: they
    /// are asked for little at a time (see `pump`).
    fn small_steps(self) -> bool {
        matches!(self, Compression::Gzip | Compression::Bzip2 | Compression::Xz | Compression::Zip)
    }
}

/// Plain text of a source file, decoded on a background thread.
pub struct Input {
    rx: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    offset: usize,
    done: bool,
    /// A read error met while peeking, for `read` to return after the text before it.
    pending: Option<io::Error>,
    handle: Option<JoinHandle<Digest256>>,
    /// Set when the input is dropped before [`Input::finish`]: the reading thread then
    /// stops instead of hashing the rest of the file for nobody.
    abandoned: Arc<AtomicBool>,
    /// Bytes of the file on disk read so far (for progress).
    pub raw_read: Arc<AtomicU64>,
    /// Size of the file on disk.
    pub raw_size: u64,
    /// Compression found.
    pub compression: Compression,
}

impl Input {
    /// Opens `path` and starts decoding it.
    pub fn open(path: &Path) -> io::Result<Input> {
        Input::open_copying(path, None)
    }

    /// Opens `path` and starts decoding it; every byte read from the file is also sent to
    /// `copy` (closed once the file was read to its end), so that what is kept of a source
    /// is exactly what its tables were read from, read once.
    pub fn open_copying(path: &Path, copy: Option<SyncSender<Vec<u8>>>) -> io::Result<Input> {
        let mut file = File::open(path)?;
        let raw_size = file.metadata()?.len();
        let prefix = leading_bytes(&mut file)?;
        let prefix = prefix.as_slice();
        let compression = Compression::sniff(prefix);
        let member = zip_member(&mut file, compression, prefix.len())?;
        let raw_read = Arc::new(AtomicU64::new(0));
        let hashing = Hashing {
            inner: io::Cursor::new(prefix.to_vec()).chain(file),
            hasher: Sha256::new(),
            read: raw_read.clone(),
            copy: copy.map(|tx| Copy { tx, buf: Vec::with_capacity(CHUNK) }),
        };
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
        let abandoned = Arc::new(AtomicBool::new(false));
        let stop = abandoned.clone();
        let handle = std::thread::Builder::new().name("tracedb-read".into()).spawn(move || {
            let mut hashing = hashing;
            let result = match compression {
                Compression::None => pump(&mut hashing, &tx, compression),
                Compression::Gzip => {
                    pump(&mut flate2::read::MultiGzDecoder::new(&mut hashing), &tx, compression)
                }
                Compression::Zstd => match ZstdReader::new(&mut hashing) {
                    Ok(mut d) => pump(&mut d, &tx, compression),
                    Err(e) => Err(e),
                },
                Compression::Bzip2 => {
                    pump(&mut bzip2::read::MultiBzDecoder::new(&mut hashing), &tx, compression)
                }
                Compression::Xz => pump(
                    &mut liblzma::read::XzDecoder::new_multi_decoder(&mut hashing),
                    &tx,
                    compression,
                ),
                Compression::Zip => match member {
                    Some(m) => pump(&mut ZipReader::new(&mut hashing, m, 0), &tx, compression),
                    None => Ok(()),
                },
            };
            if let Err(e) = result {
                let _ = tx.send(Err(e));
            }
            // Hash what a decoder left unread (trailing bytes after the stream, or all
            // after the damage), so the hash is that of the whole file; unless the input
            // was dropped (a format check that peeked at the first bytes): then nobody
            // waits for the hash, and reading a large file to its end cost a whole pass.
            let _ = io::copy(&mut Until { stop: &stop, inner: &mut hashing }, &mut io::sink());
            hashing.digest()
        })?;
        Ok(Input {
            rx,
            current: Vec::new(),
            offset: 0,
            done: false,
            pending: None,
            handle: Some(handle),
            abandoned,
            raw_read,
            raw_size,
            compression,
        })
    }

    /// Up to `n` first bytes of the plain text, without consuming them.
    pub fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.current.len() - self.offset < n && !self.done {
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.current.drain(..self.offset);
                    self.offset = 0;
                    self.current.extend_from_slice(&chunk);
                }
                Ok(Err(e)) => {
                    // Given to `read` after the text before it, so it can say after which
                    // line the input was lost.
                    self.pending = Some(e);
                    self.done = true;
                }
                Err(_) => self.done = true,
            }
        }
        let end = (self.offset + n).min(self.current.len());
        Ok(self.current.get(self.offset..end).unwrap_or_default())
    }

    /// The decoding error [`Input::peek`] met, if any: the text ends where it stops.
    pub fn damage(&self) -> Option<&io::Error> {
        self.pending.as_ref()
    }

    /// Waits for the reading thread and returns the file's hash and size. Call after the
    /// text was read to the end.
    pub fn finish(mut self) -> io::Result<Digest256> {
        // Drain anything left so the thread can finish.
        while self.rx.recv().is_ok() {}
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(d)) => Ok(d),
            _ => Err(io::Error::other("the reading thread failed")),
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
    }
}

/// Reads `inner` until `stop` is set, then ends as if at the end of the file.
struct Until<'a, R> {
    stop: &'a AtomicBool,
    inner: R,
}

impl<R: Read> Read for Until<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let avail = self.current.get(self.offset..).unwrap_or_default();
            if !avail.is_empty() {
                let n = avail.len().min(buf.len());
                if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
                    dst.copy_from_slice(src);
                }
                self.offset += n;
                return Ok(n);
            }
            if self.done {
                return self.pending.take().map_or(Ok(0), Err);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.offset = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => self.done = true,
            }
        }
    }
}

/// Read-ahead of a [`SmallInput`]: what one open file of many costs.
pub const SMALL_BUF: usize = 64 << 10;

/// The member of the zip archive `file` when `compression` says it is one, read from its
/// central directory; `file` is then put back at `at`, where its reading goes on.
fn zip_member(
    file: &mut File,
    compression: Compression,
    at: usize,
) -> io::Result<Option<zip::Member>> {
    if compression != Compression::Zip {
        return Ok(None);
    }
    let m = zip::member(file)?;
    file.seek(SeekFrom::Start(at as u64))?;
    Ok(Some(m))
}

/// What a [`SmallInput`] reads the file through: its hash, and the file's first bytes.
type Hashed = Hashing<io::Chain<io::Cursor<Vec<u8>>, File>>;

/// The decoder of a [`SmallInput`], reading the file through its hash.
enum Decoder {
    Plain(Hashed),
    Gzip(flate2::read::MultiGzDecoder<Hashed>),
    Zstd(ZstdReader<Hashed>),
    Bzip2(bzip2::read::MultiBzDecoder<Hashed>),
    Xz(liblzma::read::XzDecoder<Hashed>),
    Zip(ZipReader<Hashed>),
}

impl Read for Decoder {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Small calls: what a call that meets damage decoded is lost (see `pump`).
        let n = buf.len().min(GZIP_STEP);
        let small = buf.get_mut(..n).unwrap_or_default();
        let (r, c) = match self {
            Decoder::Plain(h) => return h.read(buf),
            Decoder::Zstd(d) => return d.read(buf).map_err(|e| describe(e, Compression::Zstd)),
            Decoder::Gzip(d) => (d.read(small), Compression::Gzip),
            Decoder::Bzip2(d) => (d.read(small), Compression::Bzip2),
            Decoder::Xz(d) => (d.read(small), Compression::Xz),
            Decoder::Zip(d) => (d.read(small), Compression::Zip),
        };
        r.map_err(|e| describe(e, c))
    }
}

/// The first 4 bytes of `file` (fewer when it is shorter), enough to tell its compression.
fn leading_bytes(file: &mut File) -> io::Result<Vec<u8>> {
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < magic.len() {
        let n = file.read(magic.get_mut(got..).unwrap_or_default())?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(magic.get(..got).unwrap_or_default().to_vec())
}

fn pump<R: Read>(
    r: &mut R,
    tx: &std::sync::mpsc::SyncSender<io::Result<Vec<u8>>>,
    compression: Compression,
) -> io::Result<()> {
    // A gzip decoder's read that meets damage loses the text it decoded in that call: the
    // calls are kept small, so little more than the damaged part is lost.
    let step = if compression.small_steps() { GZIP_STEP } else { CHUNK };
    loop {
        let mut chunk = vec![0u8; CHUNK];
        let mut filled = 0;
        while filled < CHUNK {
            let end = (filled + step).min(CHUNK);
            match r.read(chunk.get_mut(filled..end).unwrap_or_default()) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // What was decoded before the damage is read first, so the error comes
                    // after the last whole line and can name it.
                    chunk.truncate(filled);
                    if filled > 0 && tx.send(Ok(chunk)).is_err() {
                        return Ok(());
                    }
                    return Err(describe(e, compression));
                }
            }
        }
        if filled == 0 {
            return Ok(());
        }
        chunk.truncate(filled);
        if tx.send(Ok(chunk)).is_err() {
            return Ok(()); // the reader stopped listening (an error downstream)
        }
        if filled < CHUNK {
            return Ok(());
        }
    }
}

fn describe(e: io::Error, compression: Compression) -> io::Error {
    let what = compression.name();
    if e.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(e.kind(), format!("{what} stream ends early (truncated file?)"))
    } else {
        // Streams are checked at the end of a block (bzip2: up to 900 kB of text), a frame
        // or a member (gzip, xz, a zip member: the whole file, often), and their decoders
        // hand out the text before it: a flipped bit may have made wrong lines before the
        // error, which is all any streaming reader (`zcat | ...`) can know.
        io::Error::new(
            e.kind(),
            format!(
                "{what} stream is corrupt: {e} (found where {what} checks its data, so the \
                 lines just before may hold damage too)"
            ),
        )
    }
}

#[cfg(test)]
mod tests;
