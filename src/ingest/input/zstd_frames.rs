//! [`ZstdReader`]: a zstd stream decoded block by block, so that a damaged frame keeps the
//! blocks before the damage.
use super::*;

/// Size of a zstd block header, which the decoder's input hint counts in.
pub(super) const ZSTD_BLOCK_HEADER: usize = 3;

/// Zstandard decoding that keeps everything decoded before damage.
///
/// `zstd::stream::read::Decoder` hands the input over in large pieces; when a block is
/// corrupt, the call that meets it fails and the text of the whole blocks decoded in the same
/// call is lost with it (a megabyte of good lines, or the whole file when it is small). Here
/// each call of the decoder completes at most one block or header (the input given is its
/// hint less the next block header), and output left over from a full buffer is flushed by a
/// call given no input, so an error costs only the damaged block itself.
pub(super) struct ZstdReader<R> {
    pub(super) inner: R,
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
    pub(super) fn new(inner: R) -> io::Result<ZstdReader<R>> {
        ZstdReader::with_buf(inner, 256 << 10)
    }

    pub(super) fn with_buf(inner: R, size: usize) -> io::Result<ZstdReader<R>> {
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
