//! One binary stream (`stream.obs`, or `thread.<tid>.obs` of the v2 layout): its header and
//! its events, read one at a time (memory: one event, a jumbo payload at most
//! [`MAX_JUMBO`] bytes).
use super::super::{Diagnostic, Severity};
use crate::model::Pos;
use std::io::{self, Read};

/// Bytes of the stream header: `ovni` and a u32 version.
pub const HEADER_LEN: u64 = 8;
/// Bytes of an event header: flags, model, category, value, u64 clock.
pub const EVENT_HEADER_LEN: u64 = 12;
/// Flag of a jumbo event (its 4-byte payload is the size of the jumbo data that follows).
pub const JUMBO: u8 = 0x10;
/// Largest jumbo data kept (ovni's own writer limits a jumbo event to its 1 MiB-ish buffer;
/// larger data is skipped over, with a diagnostic, and the event kept without it).
pub const MAX_JUMBO: u32 = 1 << 20;

/// Byte order of a stream: that of the machine that wrote it (no marker in the format).
/// Detected from the header's version field, 1 in the writer's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (x86, most ARM, RISC-V).
    Little,
    /// Big-endian (POWER in BE mode, SPARC, s390x).
    Big,
}

impl Endian {
    /// A u32 from 4 bytes.
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    /// A u64 from 8 bytes.
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
}

/// One event as read.
#[derive(Debug, Clone)]
pub struct RawEvent {
    /// Model, category, value: `OHx`.
    pub mcv: [u8; 3],
    /// Clock as written (ns, the tracing machine's epoch).
    pub clock: u64,
    /// Payload bytes (at most 16) of a normal event.
    pub payload: [u8; 16],
    /// Bytes of `payload` in use.
    pub payload_len: u8,
    /// The jumbo data, for a jumbo event (empty when it was beyond [`MAX_JUMBO`]).
    pub jumbo: Option<Vec<u8>>,
    /// Size the jumbo event announced (also when its data was not kept).
    pub jumbo_len: u32,
    /// Byte offset of the event in its stream.
    pub offset: u64,
}

impl RawEvent {
    /// The payload: the normal payload, or the jumbo data.
    pub fn data(&self) -> &[u8] {
        match &self.jumbo {
            Some(j) => j,
            None => self.payload.get(..usize::from(self.payload_len)).unwrap_or_default(),
        }
    }

    /// The MCV code as text (bytes that are not printable ASCII as `\xNN`).
    pub fn mcv_text(&self) -> String {
        mcv_text(self.mcv)
    }
}

/// An MCV code as text (bytes that are not printable ASCII as `\xNN`).
pub fn mcv_text(mcv: [u8; 3]) -> String {
    let mut s = String::with_capacity(3);
    for b in mcv {
        if b.is_ascii_graphic() {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// Why the header could not be read (a fatal error for the capture: not this format).
#[derive(Debug)]
pub enum HeaderError {
    /// Fewer than 8 bytes.
    Short(usize),
    /// Not `ovni` at byte 0.
    Magic([u8; 4]),
    /// A version other than 1, in either byte order.
    Version([u8; 4]),
    /// Reading failed.
    Io(io::Error),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::Short(n) => {
                write!(f, "{n} bytes: too short for the 8-byte stream header ('ovni', version)")
            }
            HeaderError::Magic(m) => write!(
                f,
                "not an ovni stream: it starts with {:02x} {:02x} {:02x} {:02x}, not 'ovni'",
                m[0], m[1], m[2], m[3]
            ),
            HeaderError::Version(v) => write!(
                f,
                "stream version bytes {:02x} {:02x} {:02x} {:02x}: only version 1 is known (in \
                 either byte order)",
                v[0], v[1], v[2], v[3]
            ),
            HeaderError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads as many bytes as there are up to `buf.len()`; returns how many.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let Some(rest) = buf.get_mut(n..) else { break };
        match r.read(rest) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The byte order a stream header announces.
pub fn read_header<R: Read>(r: &mut R) -> Result<Endian, HeaderError> {
    let mut h = [0u8; 8];
    let n = read_full(r, &mut h).map_err(HeaderError::Io)?;
    if n < 8 {
        return Err(HeaderError::Short(n));
    }
    let [m0, m1, m2, m3, v0, v1, v2, v3] = h;
    if [m0, m1, m2, m3] != *b"ovni" {
        return Err(HeaderError::Magic([m0, m1, m2, m3]));
    }
    match [v0, v1, v2, v3] {
        [1, 0, 0, 0] => Ok(Endian::Little),
        [0, 0, 0, 1] => Ok(Endian::Big),
        v => Err(HeaderError::Version(v)),
    }
}

/// Reads the events of one stream after its header.
pub struct StreamReader<R> {
    inner: R,
    endian: Endian,
    offset: u64,
    done: bool,
    /// A problem with the event last returned that did not stop the reading.
    warning: Option<Diagnostic>,
}

impl<R: Read> StreamReader<R> {
    /// A reader of the events after the header (already read) of a stream in `endian`.
    pub fn new(inner: R, endian: Endian) -> Self {
        StreamReader { inner, endian, offset: HEADER_LEN, done: false, warning: None }
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// A problem with the event last returned that did not stop the reading (taken once).
    pub fn take_warning(&mut self) -> Option<Diagnostic> {
        self.warning.take()
    }

    /// The next event; `Ok(None)` at the end. A cut event or a read error ends the stream
    /// with the diagnostic returned in `Err` (what was read before stays).
    pub fn next_event(&mut self) -> Result<Option<RawEvent>, Diagnostic> {
        self.warning = None;
        if self.done {
            return Ok(None);
        }
        let start = self.offset;
        let mut h = [0u8; 12];
        let n = read_full(&mut self.inner, &mut h).map_err(|e| self.lost(start, &e))?;
        if n == 0 {
            self.done = true;
            return Ok(None);
        }
        if n < 12 {
            return Err(self.cut(start, n as u64, EVENT_HEADER_LEN, "event header"));
        }
        let [flags, m, c, v, k0, k1, k2, k3, k4, k5, k6, k7] = h;
        let clock = self.endian.u64([k0, k1, k2, k3, k4, k5, k6, k7]);
        let code = flags & 0x0f;
        // A jumbo event's payload is its 4-byte size whatever the low bits say (ovni's
        // `ovni_payload_size` does not look at them; libovni writes 3 there).
        let size = if flags & JUMBO != 0 {
            4
        } else if code == 0 {
            0
        } else {
            usize::from(code) + 1
        };
        let mut ev = RawEvent {
            mcv: [m, c, v],
            clock,
            payload: [0; 16],
            payload_len: 0,
            jumbo: None,
            jumbo_len: 0,
            offset: start,
        };
        let mut pos = start + EVENT_HEADER_LEN;
        if let Some(buf) = ev.payload.get_mut(..size) {
            let got = read_full(&mut self.inner, buf).map_err(|e| self.lost(pos, &e))?;
            if got < size {
                return Err(self.cut(
                    start,
                    EVENT_HEADER_LEN + got as u64,
                    12 + size as u64,
                    "payload",
                ));
            }
            // size <= 16
            ev.payload_len = u8::try_from(size).unwrap_or(16);
        }
        pos += size as u64;
        if flags & JUMBO != 0 {
            let [a, b, c2, d, ..] = ev.payload;
            if code != 3 {
                self.warning = Some(Diagnostic {
                    severity: Severity::Warning,
                    kind: "malformed_event",
                    pos: Pos::Byte(start),
                    ts: None,
                    message: format!(
                        "a jumbo event ({}) with flags {flags:#04x}: the low bits give a \
                         {size_told}-byte payload where libovni writes the 4-byte size; read as \
                         ovni's reader reads it, the size and that many bytes",
                        ev.mcv_text(),
                        size_told = if code == 0 { 0 } else { u32::from(code) + 1 }
                    ),
                });
            }
            let len = self.endian.u32([a, b, c2, d]);
            ev.jumbo_len = len;
            if len <= MAX_JUMBO {
                let mut data = vec![0u8; len as usize];
                let got = read_full(&mut self.inner, &mut data).map_err(|e| self.lost(pos, &e))?;
                if got < data.len() {
                    return Err(self.cut(
                        start,
                        pos - start + got as u64,
                        pos - start + u64::from(len),
                        "jumbo data",
                    ));
                }
                ev.jumbo = Some(data);
            } else {
                // Skipped over in bounded chunks; the event is kept without its data.
                let skipped =
                    io::copy(&mut (&mut self.inner).take(u64::from(len)), &mut io::sink())
                        .map_err(|e| self.lost(pos, &e))?;
                if skipped < u64::from(len) {
                    return Err(self.cut(
                        start,
                        pos - start + skipped,
                        pos - start + u64::from(len),
                        "jumbo data",
                    ));
                }
                ev.jumbo = Some(Vec::new());
            }
            pos += u64::from(len);
        }
        self.offset = pos;
        Ok(Some(ev))
    }

    fn cut(&mut self, start: u64, have: u64, need: u64, what: &str) -> Diagnostic {
        self.done = true;
        Diagnostic {
            severity: Severity::DataLoss,
            kind: "truncated_event",
            pos: Pos::Byte(start),
            ts: None,
            message: format!(
                "the stream ends inside an event ({what}): {have} of its {need} bytes; the \
                 events before it are kept"
            ),
        }
    }

    fn lost(&mut self, at: u64, e: &io::Error) -> Diagnostic {
        self.done = true;
        Diagnostic {
            severity: Severity::DataLoss,
            kind: "input_truncated",
            pos: Pos::Byte(at),
            ts: None,
            message: format!("{e}: the rest of the stream from byte {at} on is lost"),
        }
    }
}
