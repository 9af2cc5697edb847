//! QS framing: the HDLC-like byte stream split into checked records.
//!
//! On the wire a record is `seq recID data… chksum 0x7E`; any `0x7E` (flag) or `0x7D`
//! (escape) inside is sent as `0x7D, b^0x20`. The unescaped bytes of a good record sum
//! (mod 256) to `0xFF`. The deframer yields each good record with its position, and the
//! framing problems QSPY reports (bad checksum, too short, too long) as diagnostics; the
//! sequence check is the caller's (it knows which record ID is `QS_EMPTY`).
use crate::ingest::{Diagnostic, Severity};
use crate::model::Pos;
use std::io::Read;

/// Flag byte ending every record.
pub const FLAG: u8 = 0x7E;
/// Escape byte: the next byte is XOR-ed with [`ESC_XOR`].
pub const ESC: u8 = 0x7D;
/// What an escaped byte is XOR-ed with.
pub const ESC_XOR: u8 = 0x20;
/// Longest record QSPY accepts (unescaped, seq and checksum included).
pub const MAX_RECORD: usize = 512;

/// One good record: unescaped `seq recID data…` (checksum dropped).
#[derive(Debug, Clone)]
pub struct Frame {
    /// Byte offset of its first byte in the (decompressed) input.
    pub offset: u64,
    /// 1-based index among all frames of the input (bad ones counted).
    pub number: u64,
    /// `seq`, `recID`, then the payload.
    pub bytes: Vec<u8>,
}

impl Frame {
    /// The sequence number.
    pub fn seq(&self) -> u8 {
        self.bytes.first().copied().unwrap_or(0)
    }
    /// The record ID.
    pub fn rec(&self) -> u8 {
        self.bytes.get(1).copied().unwrap_or(0)
    }
    /// The payload after seq and recID.
    pub fn payload(&self) -> &[u8] {
        self.bytes.get(2..).unwrap_or_default()
    }
    /// `byte 1234 (frame 56)`, the position text of diagnostics.
    pub fn pos(&self) -> Pos {
        Pos::Byte(self.offset)
    }
    /// Human position for messages.
    pub fn at(&self) -> String {
        format!("byte {} (frame {})", self.offset, self.number)
    }
}

/// What the deframer found next.
#[derive(Debug)]
pub enum Item {
    /// A record with a good checksum.
    Frame(Frame),
    /// A framing problem.
    Problem(Diagnostic),
}

/// Splits a byte stream into records.
pub struct Deframer<R> {
    inner: R,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    /// Offset of `buf[0]` in the input.
    base: u64,
    eof: bool,
    record: Vec<u8>,
    chksum: u8,
    esc: bool,
    /// The current record ran over [`MAX_RECORD`]: its bytes are skipped up to the flag.
    overlong: bool,
    start: u64,
    frames: u64,
    /// Bytes read so far.
    pub read: u64,
}

impl<R: Read> Deframer<R> {
    /// A deframer over `inner`.
    pub fn new(inner: R) -> Self {
        Deframer {
            inner,
            buf: vec![0; 1 << 16],
            at: 0,
            len: 0,
            base: 0,
            eof: false,
            record: Vec::with_capacity(MAX_RECORD),
            chksum: 0,
            esc: false,
            overlong: false,
            start: 0,
            frames: 0,
            read: 0,
        }
    }

    /// The next record or problem; `Ok(None)` at the end of the input. Bytes after the last
    /// flag (a record cut by the end of the capture) are reported as a too-short frame when
    /// there are any.
    pub fn next_item(&mut self) -> std::io::Result<Option<Item>> {
        loop {
            if self.at == self.len {
                if self.eof {
                    return Ok(self.tail());
                }
                self.base += self.len as u64;
                self.at = 0;
                self.len = loop {
                    match self.inner.read(&mut self.buf) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                };
                self.read += self.len as u64;
                if self.len == 0 {
                    self.eof = true;
                }
                continue;
            }
            let Some(&b) = self.buf.get(self.at) else { return Ok(None) };
            let offset = self.base + self.at as u64;
            self.at += 1;
            if self.record.is_empty() && !self.esc && !self.overlong && b != FLAG {
                self.start = offset;
            }
            if b == FLAG {
                if let Some(item) = self.end_frame(offset) {
                    return Ok(Some(item));
                }
                continue;
            }
            if self.overlong {
                continue;
            }
            if b == ESC {
                self.esc = true;
                continue;
            }
            let b = if std::mem::take(&mut self.esc) { b ^ ESC_XOR } else { b };
            if self.record.len() == MAX_RECORD {
                self.overlong = true;
                self.frames += 1;
                let msg = format!(
                    "record longer than {MAX_RECORD} bytes at byte {} (frame {}): skipped up to \
                     the next 0x7E flag",
                    self.start, self.frames
                );
                self.record.clear();
                return Ok(Some(Item::Problem(problem(
                    Severity::Warning,
                    "frame_too_long",
                    self.start,
                    msg,
                ))));
            }
            self.chksum = self.chksum.wrapping_add(b);
            self.record.push(b);
        }
    }

    /// The flag at `offset` ends the current frame.
    fn end_frame(&mut self, _offset: u64) -> Option<Item> {
        let chksum = std::mem::take(&mut self.chksum);
        self.esc = false;
        if std::mem::take(&mut self.overlong) {
            self.record.clear();
            return None;
        }
        if self.record.is_empty() {
            // Back-to-back flags (idle line): no frame.
            return None;
        }
        self.frames += 1;
        let bytes = std::mem::replace(&mut self.record, Vec::with_capacity(MAX_RECORD));
        let (start, number) = (self.start, self.frames);
        if chksum != 0xFF {
            let first = number == 1;
            let (severity, kind, what) = if first {
                (Severity::Info, "resync", "the capture starts in the middle of a record")
            } else {
                (Severity::Warning, "bad_checksum", "the record is skipped")
            };
            let rec = bytes.get(1).map_or_else(|| "?".into(), |r| r.to_string());
            let msg = format!(
                "bad checksum at byte {start} (frame {number}, record ID {rec}?, {} bytes): \
                 the bytes sum to 0x{chksum:02X}, expected 0xFF; {what}",
                bytes.len()
            );
            return Some(Item::Problem(problem(severity, kind, start, msg)));
        }
        if bytes.len() < 3 {
            let msg = format!(
                "record of {} bytes at byte {start} (frame {number}): at least 3 needed (seq, \
                 record ID, checksum); skipped",
                bytes.len()
            );
            return Some(Item::Problem(problem(Severity::Warning, "frame_too_short", start, msg)));
        }
        let mut bytes = bytes;
        bytes.pop(); // the checksum
        Some(Item::Frame(Frame { offset: start, number, bytes }))
    }

    /// Bytes after the last flag.
    fn tail(&mut self) -> Option<Item> {
        // A record over MAX_RECORD that the end cut was reported as too long already.
        self.overlong = false;
        if self.record.is_empty() {
            return None;
        }
        self.frames += 1;
        let n = std::mem::take(&mut self.record).len();
        let msg = format!(
            "{n} bytes after the last 0x7E flag at byte {} (frame {}): a record cut by the end \
             of the capture; skipped",
            self.start, self.frames
        );
        Some(Item::Problem(problem(Severity::Info, "frame_too_short", self.start, msg)))
    }
}

fn problem(severity: Severity, kind: &'static str, offset: u64, message: String) -> Diagnostic {
    Diagnostic { severity, kind, pos: Pos::Byte(offset), ts: None, message }
}

/// Escapes `bytes` (seq, recID, payload), appends the checksum and the flag: a record as a
/// target sends it. For generated test files.
pub fn encode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 4);
    let mut sum = 0u8;
    let push = |out: &mut Vec<u8>, b: u8, escape: bool| {
        if escape && (b == FLAG || b == ESC) {
            out.push(ESC);
            out.push(b ^ ESC_XOR);
        } else {
            out.push(b);
        }
    };
    for (i, &b) in bytes.iter().enumerate() {
        sum = sum.wrapping_add(b);
        // The record ID is never escaped (IDs are below 0x7D).
        push(&mut out, b, i != 1);
    }
    push(&mut out, !sum, true);
    out.push(FLAG);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(bytes: &[u8]) -> Vec<Item> {
        let mut d = Deframer::new(bytes);
        let mut out = Vec::new();
        while let Some(i) = d.next_item().unwrap() {
            out.push(i);
        }
        out
    }

    #[test]
    fn unescapes_and_checks_the_sum() {
        // seq 0x7E and a payload with both special bytes: all escaped on the wire.
        let wire = encode(&[0x7E, 0x40, 0x7D, 0x7E, 0x01]);
        assert_eq!(wire, vec![0x7D, 0x5E, 0x40, 0x7D, 0x5D, 0x7D, 0x5E, 0x01, 0x45, 0x7E]);
        let got = items(&wire);
        match got.as_slice() {
            [Item::Frame(f)] => {
                assert_eq!(f.bytes, vec![0x7E, 0x40, 0x7D, 0x7E, 0x01]);
                assert_eq!((f.seq(), f.rec(), f.payload()), (0x7E, 0x40, &[0x7D, 0x7E, 0x01][..]));
                assert_eq!((f.offset, f.number), (0, 1));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_checksum_byte_that_needs_escaping_is_escaped() {
        // Sum 0x81 -> checksum 0x7E.
        let wire = encode(&[0x01, 0x80]);
        assert_eq!(wire, vec![0x01, 0x80, 0x7D, 0x5E, 0x7E]);
        assert!(matches!(items(&wire).as_slice(), [Item::Frame(_)]));
    }

    #[test]
    fn bad_checksum_first_is_resync_then_warning() {
        let mut wire = vec![0x33, 0x44, 0x7E]; // the tail of a record cut at the start
        wire.extend(encode(&[1, 8, 0]));
        let mut bad = encode(&[2, 8, 0]);
        bad[2] ^= 1;
        wire.extend(&bad);
        wire.extend(encode(&[3, 8]));
        let got = items(&wire);
        let kinds: Vec<&str> = got
            .iter()
            .map(|i| match i {
                Item::Frame(_) => "frame",
                Item::Problem(d) => d.kind,
            })
            .collect();
        assert_eq!(kinds, ["resync", "frame", "bad_checksum", "frame"]);
        if let Some(Item::Problem(d)) = got.get(2) {
            assert_eq!(d.pos, Pos::Byte(8));
            assert_eq!(d.severity, Severity::Warning);
        }
        // [3, 8] alone: seq, rec, checksum = 3 bytes, the shortest good record.
        if let Some(Item::Frame(f)) = got.get(3) {
            assert_eq!((f.number, f.payload()), (4, &[][..]));
        }
    }

    /// Hands out its bytes `n` at a time, as a pipe or a decompressor may.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            let (head, tail) = self.0.split_at(n);
            buf.get_mut(..n).unwrap().copy_from_slice(head);
            self.0 = tail;
            Ok(n)
        }
    }

    #[test]
    fn records_split_across_reads_anywhere_are_whole() {
        // Escapes in seq, payload and checksum, a resync tail before, idle flags between.
        let mut wire = vec![0x31, 0x7D, 0x7E, 0x7E];
        wire.extend(encode(&[0x7D, 0x40, 0x7E, 0x7D, 0x01]));
        wire.extend(encode(&[0x7E, 0x08, 0x7D]));
        wire.push(0x7E);
        wire.extend(encode(&[0x01, 0x80]));
        let shape = |items: Vec<Item>| -> Vec<String> {
            items
                .into_iter()
                .map(|i| match i {
                    Item::Frame(f) => format!("{:?}@{}#{}", f.bytes, f.offset, f.number),
                    Item::Problem(d) => format!("{}@{:?}", d.kind, d.pos),
                })
                .collect()
        };
        let whole = shape(items(&wire));
        assert_eq!(
            whole,
            ["resync@Byte(0)", "[125, 64, 126, 125, 1]@4#2", "[126, 8, 125]@14#3", "[1, 128]@22#4",]
        );
        for n in 1..wire.len() {
            let mut d = Deframer::new(Trickle(&wire, n));
            let mut got = Vec::new();
            while let Some(i) = d.next_item().unwrap() {
                got.push(i);
            }
            assert_eq!(shape(got), whole, "reads of {n} bytes");
        }
    }

    #[test]
    fn too_short_and_too_long_and_cut_tail() {
        let mut wire = encode(&[1, 8, 0]);
        wire.extend([0xFF, 0x7E]); // 1 byte summing to 0xFF: too short
        wire.extend(std::iter::repeat_n(0x11, MAX_RECORD + 5));
        wire.push(0x7E);
        wire.extend(encode(&[2, 8, 0]));
        wire.extend([5, 6]);
        let kinds: Vec<&str> = items(&wire)
            .iter()
            .map(|i| match i {
                Item::Frame(_) => "frame",
                Item::Problem(d) => d.kind,
            })
            .collect();
        assert_eq!(
            kinds,
            ["frame", "frame_too_short", "frame_too_long", "frame", "frame_too_short"]
        );
    }

    #[test]
    fn a_too_long_record_cut_by_the_end_is_reported_once() {
        // Its bytes are reported lost as too long; no "0 bytes after the last flag" after.
        let mut wire = encode(&[1, 8, 0]);
        wire.extend(std::iter::repeat_n(0x11, MAX_RECORD + 5));
        let kinds: Vec<&str> = items(&wire)
            .iter()
            .map(|i| match i {
                Item::Frame(_) => "frame",
                Item::Problem(d) => d.kind,
            })
            .collect();
        assert_eq!(kinds, ["frame", "frame_too_long"]);
    }
}
