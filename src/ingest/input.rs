//! Opening a source file: compression detected by content (gzip, zstd, bzip2, xz, a zip
//! archive of one file, or plain), SHA-256 of the bytes on disk, and decompression on a
//! thread of its own so it overlaps parsing.
//!
//! The returned [`Input`] is a `Read` of the plain text plus a peek at its first bytes for
//! format sniffing. Errors of the decoder (a truncated `.gz`) arrive through `read` and name
//! the compression; the caller adds the file name.
use super::zip::{self, ZipReader};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

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

/// Counts and hashes the bytes read from the file, and hands a copy of them on when asked.
pub struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    read: Arc<AtomicU64>,
    copy: Option<Copy>,
}

/// Where [`Hashing`] sends a copy of the bytes, in chunks of about [`CHUNK`].
struct Copy {
    tx: SyncSender<Vec<u8>>,
    buf: Vec<u8>,
}

impl<R> Hashing<R> {
    /// Hashes what is read from `inner`.
    pub fn new(inner: R) -> Self {
        Hashing { inner, hasher: Sha256::new(), read: Arc::new(AtomicU64::new(0)), copy: None }
    }

    /// Sends what the copy holds; a receiver gone (it failed, and says so itself) ends the
    /// copying.
    fn send_copy(&mut self) {
        if let Some(c) = &mut self.copy {
            if c.buf.is_empty() {
                return;
            }
            let chunk = std::mem::replace(&mut c.buf, Vec::with_capacity(CHUNK));
            if c.tx.send(chunk).is_err() {
                self.copy = None;
            }
        }
    }

    /// Hash and count of the bytes read so far; the copy, if any, is complete and closed.
    pub fn digest(mut self) -> Digest256 {
        self.send_copy();
        Digest256 { sha256: hex(&self.hasher.finalize()), bytes: self.read.load(Ordering::Relaxed) }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let bytes = buf.get(..n).unwrap_or_default();
        self.hasher.update(bytes);
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(c) = &mut self.copy {
            c.buf.extend_from_slice(bytes);
            if n == 0 || c.buf.len() >= CHUNK {
                self.send_copy();
            }
        }
        Ok(n)
    }
}

/// Hash and size of the file at `path`, read once.
pub fn file_digest(path: &Path) -> io::Result<Digest256> {
    let mut h = Hashing::new(File::open(path)?);
    io::copy(&mut h, &mut io::sink())?;
    Ok(h.digest())
}

/// What the reading thread reports at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest256 {
    /// Hex SHA-256 of the bytes on disk.
    pub sha256: String,
    /// Bytes on disk.
    pub bytes: u64,
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

/// A source file read on the caller's thread with a small read-ahead ([`SMALL_BUF`]), for
/// formats that hold many files open at once (an ovni trace's streams, merged by time):
/// [`Input`]'s reading thread and megabyte chunks cost about 6 MiB a file. Decompressed
/// (gzip, zstd) and hashed as [`Input`] is.
pub struct SmallInput {
    inner: io::BufReader<Decoder>,
}

impl SmallInput {
    /// Opens `path`.
    pub fn open(path: &Path) -> io::Result<SmallInput> {
        let mut file = File::open(path)?;
        let prefix = leading_bytes(&mut file)?;
        let prefix = prefix.as_slice();
        let compression = Compression::sniff(prefix);
        let member = zip_member(&mut file, compression, prefix.len())?;
        let hashing = Hashing::new(io::Cursor::new(prefix.to_vec()).chain(file));
        let dec = match (compression, member) {
            (Compression::Gzip, _) => Decoder::Gzip(flate2::read::MultiGzDecoder::new(hashing)),
            (Compression::Zstd, _) => Decoder::Zstd(ZstdReader::with_buf(hashing, SMALL_BUF)?),
            (Compression::Bzip2, _) => Decoder::Bzip2(bzip2::read::MultiBzDecoder::new(hashing)),
            (Compression::Xz, _) => {
                Decoder::Xz(liblzma::read::XzDecoder::new_multi_decoder(hashing))
            }
            (Compression::Zip, Some(m)) => Decoder::Zip(ZipReader::new(hashing, m, 0)),
            (Compression::None | Compression::Zip, _) => Decoder::Plain(hashing),
        };
        Ok(SmallInput { inner: io::BufReader::with_capacity(SMALL_BUF, dec) })
    }

    /// The file's hash and size (the bytes not read yet are read for it).
    pub fn finish(self) -> io::Result<Digest256> {
        let mut hashing = match self.inner.into_inner() {
            Decoder::Plain(h) => h,
            Decoder::Gzip(d) => d.into_inner(),
            Decoder::Zstd(d) => d.inner,
            Decoder::Bzip2(d) => d.into_inner(),
            Decoder::Xz(d) => d.into_inner(),
            Decoder::Zip(d) => {
                d.into_inner().ok_or_else(|| io::Error::other("the zip reader lost its file"))?
            }
        };
        io::copy(&mut hashing, &mut io::sink())?;
        Ok(hashing.digest())
    }
}

impl Read for SmallInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

/// Size of a zstd block header, which the decoder's input hint counts in.
const ZSTD_BLOCK_HEADER: usize = 3;

/// Zstandard decoding that keeps everything decoded before damage.
///
/// `zstd::stream::read::Decoder` hands the input over in large pieces; when a block is
/// corrupt, the call that meets it fails and the text of the whole blocks decoded in the same
/// call is lost with it (a megabyte of good lines, or the whole file when it is small). Here
/// each call of the decoder completes at most one block or header (the input given is its
/// hint less the next block header), and output left over from a full buffer is flushed by a
/// call given no input, so an error costs only the damaged block itself.
struct ZstdReader<R> {
    inner: R,
    decoder: zstd::stream::raw::Decoder<'static>,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
    /// Input the decoder asked for last.
    hint: usize,
    /// Bytes of a frame were given and the frame is not finished.
    in_frame: bool,
    /// The last call filled the caller's buffer, so the decoder may hold more output.
    flush_first: bool,
}

impl<R: Read> ZstdReader<R> {
    fn new(inner: R) -> io::Result<ZstdReader<R>> {
        ZstdReader::with_buf(inner, 256 << 10)
    }

    fn with_buf(inner: R, size: usize) -> io::Result<ZstdReader<R>> {
        Ok(ZstdReader {
            inner,
            decoder: zstd::stream::raw::Decoder::new()?,
            buf: vec![0u8; size.max(1)].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
            hint: 1,
            in_frame: false,
            flush_first: false,
        })
    }
}

impl<R: Read> Read for ZstdReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let give = if self.flush_first {
                0
            } else {
                if self.start == self.end && !self.eof {
                    self.start = 0;
                    self.end = 0;
                    let n = loop {
                        match self.inner.read(&mut self.buf) {
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            r => break r?,
                        }
                    };
                    self.end = n;
                    self.eof = n == 0;
                }
                let avail = self.end - self.start;
                if avail == 0 {
                    return if self.in_frame {
                        Err(io::Error::new(io::ErrorKind::UnexpectedEof, "frame not finished"))
                    } else {
                        Ok(0)
                    };
                }
                let want = if self.hint > ZSTD_BLOCK_HEADER {
                    self.hint - ZSTD_BLOCK_HEADER
                } else {
                    self.hint.max(1)
                };
                avail.min(want)
            };
            let src = self.buf.get(self.start..self.start + give).unwrap_or_default();
            let mut input = InBuffer::around(src);
            let mut output = OutBuffer::around(&mut *out);
            let hint = self.decoder.run(&mut input, &mut output)?;
            let (consumed, produced) = (input.pos(), output.pos());
            self.start += consumed;
            self.flush_first = produced == out.len();
            if consumed > 0 {
                self.in_frame = true;
            }
            if hint == 0 {
                // A frame ended and is flushed; the next bytes, if any, begin another.
                self.decoder.reinit()?;
                self.in_frame = false;
                self.hint = 1;
            } else {
                self.hint = hint;
            }
            if produced > 0 {
                return Ok(produced);
            }
        }
    }
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

/// Lower-case hexadecimal of `bytes` (how SHA-256 digests are written).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text of `lines` numbered lines, which compresses to many blocks at level 1.
    fn text(lines: u64) -> Vec<u8> {
        let mut t = Vec::new();
        for i in 0..lines {
            // A little noise so blocks are not trivially small.
            t.extend_from_slice(
                format!("{i},{},line {}\n", i * 7919 % 10007, i ^ 0x5a5a).as_bytes(),
            );
        }
        t
    }

    /// Everything `Input` yields for the bytes `file`, and the error that ended it, if any.
    fn decode(file: &[u8]) -> (Vec<u8>, Option<io::Error>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        std::fs::write(&path, file).unwrap();
        let mut input = Input::open(&path).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; 100_000];
        let err = loop {
            match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => break Some(e),
            }
        };
        let digest = input.finish().unwrap();
        assert_eq!(digest.bytes, file.len() as u64, "the whole file is hashed");
        (out, err)
    }

    /// Offsets of the block headers of the single zstd frame `file`.
    fn block_headers(file: &[u8]) -> Vec<usize> {
        let fhd = file[4];
        let single_segment = fhd & 0x20 != 0;
        let fcs = match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
        let mut at = 5 + usize::from(!single_segment) + dict + fcs;
        let mut headers = Vec::new();
        loop {
            headers.push(at);
            let h = u32::from_le_bytes([file[at], file[at + 1], file[at + 2], 0]);
            let size = if (h >> 1) & 3 == 1 { 1 } else { (h >> 3) as usize }; // RLE: one byte
            at += 3 + size;
            if h & 1 == 1 {
                return headers;
            }
        }
    }

    #[test]
    fn zstd_frames_are_decoded_whole_and_in_order() {
        let a = text(200_000);
        let b = text(1_000);
        let mut file = zstd::encode_all(&a[..], 1).unwrap();
        file.extend(zstd::encode_all(&b[..], 1).unwrap());
        let (out, err) = decode(&file);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(out.len(), a.len() + b.len());
        assert!(out[..a.len()] == a[..] && out[a.len()..] == b[..]);
    }

    #[test]
    fn damaged_zstd_keeps_every_block_before_the_damage() {
        for lines in [30_000, 400_000] {
            damaged_zstd_keeps_blocks(lines);
        }
    }

    fn damaged_zstd_keeps_blocks(lines: u64) {
        let plain = text(lines); // 128 KiB blocks: 6 of them, then 80
        let mut file = zstd::encode_all(&plain[..], 1).unwrap();
        // Damage at the end, so all blocks but one come before it: the last block header
        // gets the reserved block type.
        let headers = block_headers(&file);
        let damaged = headers.len() - 1;
        file[headers[damaged]] |= 0b110;
        let (out, err) = decode(&file);
        let err = err.expect("the damage is reported");
        assert!(err.to_string().contains("zstd stream is corrupt"), "{err}");
        assert!(plain.starts_with(&out), "what is decoded is the text as it was");
        // Every block before the damaged one is kept (each holds 128 KiB of text). The zstd
        // reader used before lost all the blocks decoded in the call that met the damage:
        // several here, and the whole file when it is small.
        assert_eq!(out.len(), damaged * (128 << 10), "{damaged} whole blocks before the damage");
    }

    #[test]
    fn truncated_zstd_keeps_what_decodes_and_says_truncated() {
        let plain = text(100_000);
        let file = zstd::encode_all(&plain[..], 1).unwrap();
        let cut = &file[..file.len() / 2];
        let (out, err) = decode(cut);
        let err = err.expect("the truncation is reported");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("ends early"), "{err}");
        assert!(plain.starts_with(&out));
        assert!(out.len() > plain.len() / 3, "{} of {}", out.len(), plain.len());
    }

    #[test]
    fn an_input_dropped_after_a_peek_stops_reading_the_file() {
        // A format check peeks at the first bytes and drops the input: its reading thread
        // read and hashed the whole file anyway, a second pass over the trace per ingest.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.btf");
        let size = 64u64 << 20;
        std::fs::write(&path, text(size / 32)).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        let mut input = Input::open(&path).unwrap();
        assert!(!input.peek(8).unwrap().is_empty());
        let read = input.raw_read.clone();
        drop(input);
        // The thread holds the other reference to the counter until it ends.
        let waited = std::time::Instant::now();
        while Arc::strong_count(&read) > 1 && waited.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(Arc::strong_count(&read), 1, "the reading thread did not end");
        let n = read.load(Ordering::Relaxed);
        assert!(n < size / 4, "{n} of {size} bytes read after the input was dropped");
        // Read to its end, an input still hashes every byte.
        let mut input = Input::open(&path).unwrap();
        io::copy(&mut input, &mut io::sink()).unwrap();
        assert_eq!(input.finish().unwrap(), file_digest(&path).unwrap());
    }

    #[test]
    fn a_small_input_reads_and_hashes_as_input_does() {
        let plain = text(50_000);
        let gz = {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, &plain).unwrap();
            e.finish().unwrap()
        };
        let zst = zstd::encode_all(plain.as_slice(), 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("p", &plain), ("g", &gz), ("z", &zst)] {
            let path = dir.path().join(name);
            // Trailing bytes after a compressed stream are hashed too.
            let mut file = bytes.clone();
            file.extend_from_slice(b"\0\0");
            std::fs::write(&path, if name == "p" { bytes } else { &file }).unwrap();
            let mut small = SmallInput::open(&path).unwrap();
            let mut out = Vec::new();
            // A few bytes at a time, as the ovni stream reader asks.
            let mut buf = [0u8; 12];
            loop {
                match small.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) => {
                        assert!(name != "p", "{e}");
                        break;
                    }
                }
            }
            assert_eq!(out.len(), plain.len(), "{name}");
            assert!(out == plain, "{name}");
            let d = small.finish().unwrap();
            assert_eq!(d, file_digest(&path).unwrap(), "{name}");
        }
    }

    #[test]
    fn bzip2_and_xz_streams_are_decoded_whole_and_their_damage_said() {
        use std::io::Write;
        let a = text(60_000);
        let b = text(500);
        let bz = |t: &[u8]| {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        let xz = |t: &[u8]| {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        for (name, enc) in [("bzip2", &bz as &dyn Fn(&[u8]) -> Vec<u8>), ("xz", &xz)] {
            // Two streams one after the other, as `cat a.bz2 b.bz2` makes.
            let mut file = enc(&a);
            file.extend(enc(&b));
            assert_eq!(Compression::sniff(&file).name(), name);
            let (out, err) = decode(&file);
            assert!(err.is_none(), "{name}: {err:?}");
            assert!(out.len() == a.len() + b.len() && out[..a.len()] == a[..], "{name}");
            // Read the small way too, with the same hash.
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t");
            std::fs::write(&path, &file).unwrap();
            let mut small = SmallInput::open(&path).unwrap();
            let mut got = Vec::new();
            small.read_to_end(&mut got).unwrap();
            assert_eq!(got.len(), out.len(), "{name}");
            assert_eq!(small.finish().unwrap(), file_digest(&path).unwrap(), "{name}");
            // Cut short: what decodes is kept and the error says the stream ends early.
            let (out, err) = decode(&file[..file.len() - 40]);
            let err = err.unwrap_or_else(|| panic!("{name}: a cut stream must be said"));
            assert!(err.to_string().starts_with(name), "{err}");
            assert!(a.starts_with(&out[..out.len().min(a.len())]), "{name}");
        }
    }

    #[test]
    fn compressed_endings_are_stripped_once_in_any_case() {
        assert_eq!(strip_compressed("t.prv.XZ"), "t.prv");
        assert_eq!(strip_compressed("t.btf.bz2"), "t.btf");
        assert_eq!(strip_compressed("t.zip"), "t");
        assert_eq!(strip_compressed("t.gz.zst"), "t.gz");
        assert_eq!(strip_compressed("t.btf"), "t.btf");
        assert_eq!(Compression::sniff(b"BZh9"), Compression::Bzip2);
        assert_eq!(Compression::sniff(b"BZhx"), Compression::None, "plain text may start so");
        assert_eq!(Compression::sniff(b"PK\x03\x04"), Compression::Zip);
    }
}
