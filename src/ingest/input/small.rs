//! [`SmallInput`]: a companion file read whole on the caller's thread (no decoder thread),
//! decompressed and hashed like an [`Input`].
use super::*;

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
