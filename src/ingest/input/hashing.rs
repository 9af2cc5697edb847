//! SHA-256 of a file's bytes as they are read ([`Hashing`]), or of a whole file
//! ([`file_digest`]), and the digest's hex form.
use super::*;

/// Counts and hashes the bytes read from the file, and hands a copy of them on when asked.
pub struct Hashing<R> {
    pub(super) inner: R,
    pub(super) hasher: Sha256,
    pub(super) read: Arc<AtomicU64>,
    pub(super) copy: Option<Copy>,
}

/// Where [`Hashing`] sends a copy of the bytes, in chunks of about [`CHUNK`].
pub(super) struct Copy {
    pub(super) tx: SyncSender<Vec<u8>>,
    pub(super) buf: Vec<u8>,
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

/// Lower-case hexadecimal of `bytes` (how SHA-256 digests are written).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
