//! Line reader over any `Read`: 1-based line numbers, LF or CRLF (or CR alone, as old Mac
//! and some embedded loggers write, when the first MiB holds CRs and no LF), no allocation
//! per line.
//! Lines longer than [`MAX_LINE`] are cut there and reported by the caller as malformed.
use super::{Diagnostic, Severity, Sink};
use crate::model::Pos;
use crate::Result;
use memchr::memchr;
use std::borrow::Cow;
use std::io::{self, Read};

/// The text of a line (`what`: "line", "row"). Bytes that are not UTF-8 are replaced by
/// U+FFFD, with an `invalid_utf8` warning saying so: the line is kept, never dropped.
pub fn text_of<'l>(
    line: &'l [u8],
    pos: Pos,
    what: &str,
    sink: &mut dyn Sink,
) -> Result<Cow<'l, str>> {
    match std::str::from_utf8(line) {
        Ok(t) => Ok(Cow::Borrowed(t)),
        Err(_) => {
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "invalid_utf8",
                pos,
                ts: None,
                message: format!("{what} is not valid UTF-8; invalid bytes replaced by U+FFFD"),
            })?;
            Ok(Cow::Owned(String::from_utf8_lossy(line).into_owned()))
        }
    }
}

/// Longest line kept whole; the buffer never grows beyond this.
pub const MAX_LINE: usize = 16 << 20;

/// Reads lines from `inner`.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
    truncated: bool,
    skipping: bool,
    /// The byte that ends a line: `\n`, or `\r` in a file of CR-only line ends.
    terminator: u8,
    /// Whether the line ends have been looked at (on the first read).
    detected: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader with a 1 MiB buffer.
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: vec![0; 1 << 20],
            start: 0,
            end: 0,
            eof: false,
            line: 0,
            truncated: false,
            skipping: false,
            terminator: b'\n',
            detected: false,
        }
    }

    /// Number of the line last returned (1-based).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// True when the line last returned was longer than [`MAX_LINE`] and was cut.
    pub fn was_truncated(&self) -> bool {
        self.truncated
    }

    /// The next line without its terminator, with its 1-based number and whether it was cut
    /// at [`MAX_LINE`], or `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<(&[u8], u64, bool)>> {
        self.truncated = false;
        let (s, e) = loop {
            let avail = self.buf.get(self.start..self.end).unwrap_or_default();
            let newline = memchr(self.terminator, avail);
            if self.skipping {
                // Dropping the tail of a line that was cut at MAX_LINE.
                match newline {
                    Some(i) => {
                        self.start += i + 1;
                        self.skipping = false;
                    }
                    None if self.eof => return Ok(None),
                    None => {
                        self.start = self.end;
                        self.fill()?;
                    }
                }
                continue;
            }
            // A CR right after MAX_LINE bytes may be the CR of a CRLF.
            let limit = MAX_LINE + usize::from(avail.get(MAX_LINE) == Some(&b'\r'));
            if let Some(i) = newline {
                let s = self.start;
                self.start += i + 1;
                if i > limit {
                    self.truncated = true;
                    break (s, s + MAX_LINE);
                }
                break (s, s + i);
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let s = self.start;
                self.start = self.end;
                break (s, self.end);
            }
            // The buffer holds up to MAX_LINE + 2 bytes: a line of exactly MAX_LINE bytes
            // still finds its end, CRLF included.
            if avail.len() > limit {
                let s = self.start;
                self.start = s + MAX_LINE;
                self.skipping = true;
                self.truncated = true;
                break (s, s + MAX_LINE);
            }
            self.fill()?;
        };
        self.line += 1;
        let mut line = self.buf.get(s..e).unwrap_or_default();
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        Ok(Some((line, self.line, self.truncated)))
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_LINE + 2);
            self.buf.resize(grown.max(self.end + 1), 0);
        }
        let n = loop {
            match self.inner.read(self.buf.get_mut(self.end..).unwrap_or_default()) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            self.eof = true;
        }
        if !self.detected && n > 0 {
            self.detected = true;
            let first = self.buf.get(self.end..self.end + n).unwrap_or_default();
            if memchr(b'\n', first).is_none() && memchr(b'\r', first).is_some() {
                self.terminator = b'\r';
            }
        }
        self.end += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(u64, String)> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some((l, n, _)) = r.next_line().unwrap() {
            out.push((n, String::from_utf8_lossy(l).into_owned()));
        }
        out
    }

    #[test]
    fn splits_lf_crlf_and_last_line_without_newline() {
        let got = lines(b"a\r\nbb\n\nccc");
        let want = [(1, "a"), (2, "bb"), (3, ""), (4, "ccc")];
        assert_eq!(got, want.map(|(n, s)| (n, s.to_string())).to_vec());
    }

    #[test]
    fn handles_lines_across_buffer_refills() {
        let mut text = Vec::new();
        for i in 0..200_000 {
            text.extend_from_slice(format!("{i},x\n").as_bytes());
        }
        let got = lines(&text);
        assert_eq!(got.len(), 200_000);
        assert_eq!(got[199_999], (200_000, "199999,x".to_string()));
    }

    #[test]
    fn cr_only_line_ends_are_line_ends() {
        let got = lines(b"#version 2.1.0\r0,S,0,T,A,0,activate\r\r1,C,0,T,A,0,start");
        let want =
            [(1, "#version 2.1.0"), (2, "0,S,0,T,A,0,activate"), (3, ""), (4, "1,C,0,T,A,0,start")];
        assert_eq!(got, want.map(|(n, s)| (n, s.to_string())).to_vec());
        // With LF line ends, a CR inside a line stays in it.
        assert_eq!(lines(b"a\rb\nc\n"), [(1, "a\rb".to_string()), (2, "c".to_string())]);
    }

    #[test]
    fn a_line_of_max_line_bytes_is_whole_and_one_more_is_cut() {
        let cases = [(MAX_LINE, "\n", false), (MAX_LINE + 1, "\n", true)];
        let crlf = [(MAX_LINE, "\r\n", false), (MAX_LINE + 1, "\r\n", true)];
        for (len, end, cut) in cases.into_iter().chain(crlf) {
            let mut text = vec![b'x'; len];
            text.extend_from_slice(end.as_bytes());
            text.extend_from_slice(b"next\n");
            let mut r = LineReader::new(&text[..]);
            let (line, n, truncated) = r.next_line().unwrap().unwrap();
            assert_eq!((line.len().min(MAX_LINE), n, truncated), (MAX_LINE, 1, cut), "{len}");
            let (line, n, _) = r.next_line().unwrap().unwrap();
            assert_eq!((line, n), (&b"next"[..], 2), "{len}");
        }
        // A CR that does not end the line is the line's 16 Mi + 1st byte.
        let mut text = vec![b'x'; MAX_LINE];
        text.extend_from_slice(b"\rmore\nnext\n");
        let mut r = LineReader::new(&text[..]);
        let (line, n, truncated) = r.next_line().unwrap().unwrap();
        assert_eq!((line.len(), n, truncated), (MAX_LINE, 1, true));
        let (line, n, _) = r.next_line().unwrap().unwrap();
        assert_eq!((line, n), (&b"next"[..], 2));
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert!(lines(b"").is_empty());
    }
}
