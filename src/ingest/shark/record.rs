//! S.Ha.R.K. tracer records: the 16-byte event, the event-code table, and a reader of the
//! two file forms (a raw chunk dump, and a capture of the UDP datagrams).
use crate::ingest::{Diagnostic, Severity};
use crate::model::Pos;
use std::io::{self, Read};

/// Bytes of one event record.
pub const RECORD: usize = 16;
/// The first bytes of every UDP datagram (`char id[12] = "TRACER-V1.0"`, NUL-terminated).
pub const MAGIC: &[u8; 12] = b"TRACER-V1.0\0";
/// Bytes of a datagram header: id[12], pkt_number, number_of_events, total_size (u32 LE).
pub const PACKET_HEADER: usize = 24;
/// Most events a datagram may announce: the sender keeps packets under 1000 bytes (61
/// events); a larger count is a damaged header, not a packet to allocate for.
pub const MAX_PACKET_EVENTS: u32 = 4096;

/// One event record, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    /// The type word as written (event code in the low byte, 0x8000 = fast variant).
    pub raw_type: u16,
    /// par1: task context, interrupt number, ipoint number...
    pub par1: u16,
    /// Time stamp counter: `(hi << 32) | lo`.
    pub tsc: u64,
    /// par2: pid, level, mutex, clk-per-ms... (stale in the fast variant).
    pub par2: u32,
    /// Index of the chunk file it was read from (0: the file given).
    pub file: u16,
    /// Byte offset of the record in its file.
    pub at: u64,
}

impl Rec {
    /// Decodes the 16 bytes of a record.
    pub fn parse(b: &[u8; RECORD], file: u16, at: u64) -> Rec {
        let [t0, t1, p0, p1, h0, h1, h2, h3, l0, l1, l2, l3, q0, q1, q2, q3] = *b;
        let (hi, lo) = (
            u64::from(u32::from_le_bytes([h0, h1, h2, h3])),
            u64::from(u32::from_le_bytes([l0, l1, l2, l3])),
        );
        Rec {
            raw_type: u16::from_le_bytes([t0, t1]),
            par1: u16::from_le_bytes([p0, p1]),
            tsc: (hi << 32) | lo,
            par2: u32::from_le_bytes([q0, q1, q2, q3]),
            file,
            at,
        }
    }

    /// The event code (`type & 0xFF`, as the reference decoder masks it).
    pub fn code(&self) -> u8 {
        self.raw_type.to_le_bytes()[0]
    }

    /// Written by the fast ("unsafe") variant: par2 is stale.
    pub fn fast(&self) -> bool {
        self.raw_type & 0x8000 != 0
    }

    /// par2 when it was written.
    pub fn par2(&self) -> Option<u32> {
        (!self.fast()).then_some(self.par2)
    }

    /// Position for diagnostics (a byte offset in its file).
    pub fn pos(&self) -> Pos {
        Pos::Byte(self.at)
    }
}

/// The name of an event code (FTrace.h's `FTrace_EVT_<name>`), `None` when unknown.
pub fn name(code: u8) -> Option<&'static str> {
    const USER: [&str; 15] = [
        "user_event_0",
        "user_event_1",
        "user_event_2",
        "user_event_3",
        "user_event_4",
        "user_event_5",
        "user_event_6",
        "user_event_7",
        "user_event_8",
        "user_event_9",
        "user_event_10",
        "user_event_11",
        "user_event_12",
        "user_event_13",
        "user_event_14",
    ];
    const FILTER: [&str; 12] = [
        "filter_0",
        "filter_1",
        "filter_2",
        "filter_3",
        "filter_4",
        "filter_5",
        "filter_6",
        "filter_7",
        "filter_8",
        "filter_9",
        "filter_10",
        "filter_11",
    ];
    Some(match code {
        0x10 => "cycles_per_msec",
        0x20 => "trace_start",
        0x30 => "trace_stop",
        0x40 => "blackout_start",
        0x50 => "blackout_end",
        0x60 => "id",
        0x70 => "numevents",
        0x01 => "ipoint",
        0x02 => "task_create",
        0x12 => "task_activate",
        0x22 => "task_dispatch",
        0x32 => "task_epilogue",
        0x42 => "task_end",
        0x52 => "task_begin_cycle",
        0x62 => "task_end_cycle",
        0x72 => "task_sleep",
        0x82 => "task_schedule",
        0x92 => "task_timer",
        0xA2 => "task_disable",
        0xB2 => "task_deadline_miss",
        0xC2 => "task_wcet_violation",
        0x03 => "interrupt_start",
        0x13 => "interrupt_end",
        0x23 => "interrupt_hit",
        0x33 => "interrupt_count",
        0x04 => "to_real_mode",
        0x14 => "to_protected_mode",
        0x24 => "CLI",
        0x34 => "STI",
        0x05 => "set_priority",
        0x15 => "context_switch",
        0x25 => "inheritance",
        0x06 => "mutex_create",
        0x16 => "mutex_lock",
        0x26 => "mutex_inherit",
        0x36 => "mutex_unlock",
        0x46 => "mutex_wait",
        0x56 => "mutex_post",
        0x07 => "signal",
        0x08 => "server_create",
        0x18 => "server_replenish",
        0x28 => "server_exhaust",
        0x38 => "server_reclaiming",
        0x48 => "server_remove",
        0x58 => "server_active",
        0x68 => "server_using_rec",
        0x1A => "data_pointer",
        0x0B => "timer_post",
        0x1B => "timer_delete",
        0x2B => "timer_wakeup_start",
        0x3B => "timer_wakeup_end",
        0xFF => "next_chunk",
        c if c & 0x0F == 0x09 && c <= 0xE9 => USER.get(usize::from(c >> 4))?,
        c @ 0xF0..=0xFB => FILTER.get(usize::from(c - 0xF0))?,
        _ => return None,
    })
}

/// Whether par1 of this code names a task context.
pub fn par1_is_ctx(code: u8) -> bool {
    code & 0x0F == 0x02 || code & 0x0F == 0x06 || matches!(code, 0x15 | 0x25 | 0x3B | 0x60)
}

/// The little-endian u32 at `i` of `b` (0 past its end).
pub fn le32(b: &[u8], i: usize) -> u32 {
    b.get(i..i + 4).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_le_bytes)
}

/// What the reader hands out.
#[derive(Debug)]
pub enum Item {
    /// A non-empty record.
    Rec(Rec),
    /// A problem in the bytes (a cut record, a damaged datagram header, a packet gap).
    Problem(Diagnostic),
}

/// File forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A chunk dump: 16-byte records, no header.
    Raw,
    /// Captured UDP datagrams: a 24-byte header each, then its records.
    Udp,
}

/// Reads the records of one file (raw or UDP form, told by the magic).
pub struct Reader<R> {
    inner: R,
    file: u16,
    /// Bytes consumed so far.
    pub read: u64,
    /// Empty slots skipped.
    pub empty: u64,
    /// Non-empty records read.
    pub records: u64,
    /// Datagrams read (UDP form).
    pub packets: u64,
    /// The form, once the first bytes were seen.
    pub form: Option<Form>,
    /// Records left in the current datagram.
    left: u32,
    last_packet: Option<u32>,
    /// The header before was rejected (its loss said): it is taken for the datagram after the
    /// last one, so that a jump in the packet number does not count it again.
    after_bad: bool,
    pending: Vec<u8>,
    done: bool,
}

impl<R: Read> Reader<R> {
    /// A reader of file number `file` of the run.
    pub fn new(inner: R, file: u16) -> Self {
        Reader {
            inner,
            file,
            read: 0,
            empty: 0,
            records: 0,
            packets: 0,
            form: None,
            left: 0,
            last_packet: None,
            after_bad: false,
            pending: Vec::new(),
            done: false,
        }
    }

    /// Fills `buf` from the pending bytes then the input; returns how many were read (fewer
    /// only at the end of the input).
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        if !self.pending.is_empty() {
            let n = self.pending.len().min(buf.len());
            for (d, s) in buf.iter_mut().zip(self.pending.drain(..n)) {
                *d = s;
            }
            got = n;
        }
        while got < buf.len() {
            let Some(rest) = buf.get_mut(got..) else { break };
            match self.inner.read(rest) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    /// The next record or problem; `None` at the end. An I/O error (a corrupt `.gz`) ends
    /// the reading: the caller reports it.
    pub fn next_item(&mut self) -> io::Result<Option<Item>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.form.is_none() {
                let mut head = [0u8; 12];
                let n = self.fill(&mut head)?;
                let got = head.get(..n).unwrap_or_default();
                self.form = Some(if got == MAGIC { Form::Udp } else { Form::Raw });
                self.pending = got.to_vec();
            }
            if self.form == Some(Form::Udp) && self.left == 0 {
                if let Some(p) = self.packet_header()? {
                    return Ok(Some(Item::Problem(p)));
                }
                continue;
            }
            let at = self.read;
            let mut b = [0u8; RECORD];
            let n = self.fill(&mut b)?;
            self.read += n as u64;
            if n == 0 {
                self.done = true;
                if self.left > 0 {
                    return Ok(Some(Item::Problem(self.cut_packet(at))));
                }
                return Ok(None);
            }
            if n < RECORD {
                self.done = true;
                let what = if self.left > 0 { " inside a datagram" } else { "" };
                return Ok(Some(Item::Problem(Diagnostic {
                    severity: Severity::DataLoss,
                    kind: "partial_record",
                    pos: Pos::Byte(at),
                    ts: None,
                    message: format!(
                        "the file ends {n} bytes into a 16-byte record{what} (byte {at}): that \
                         record is lost"
                    ),
                })));
            }
            if self.left > 0 && b.starts_with(MAGIC) {
                // A datagram header where a record should be: the datagram announced more
                // events than it holds; the header is read as one.
                self.unread(&b, n);
                self.read = at;
                let left = std::mem::take(&mut self.left);
                return Ok(Some(Item::Problem(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_packet",
                    pos: Pos::Byte(at),
                    ts: None,
                    message: format!(
                        "datagram {} announced {left} more events than it holds: a TRACER-V1.0 \
                         header follows at byte {at}, read as the next datagram",
                        self.last_packet.map_or_else(|| "?".into(), |p| p.to_string())
                    ),
                })));
            }
            self.left = self.left.saturating_sub(1);
            let r = Rec::parse(&b, self.file, at);
            if r.raw_type == 0 {
                self.empty += 1;
                continue;
            }
            self.records += 1;
            return Ok(Some(Item::Rec(r)));
        }
    }

    /// Puts the first `n` bytes of `bytes` back in front of what is still to read (the
    /// caller keeps `read` right).
    fn unread(&mut self, bytes: &[u8], n: usize) {
        let mut back = bytes.get(..n).unwrap_or_default().to_vec();
        back.append(&mut self.pending);
        self.pending = back;
    }

    /// Whether a datagram header starts `off` bytes into `body` (or the file ends there).
    fn header_at(body: &[u8], off: usize) -> bool {
        body.len() == off || body.get(off..off + MAGIC.len()) == Some(&MAGIC[..])
    }

    fn cut_packet(&mut self, at: u64) -> Diagnostic {
        let left = std::mem::take(&mut self.left);
        Diagnostic {
            severity: Severity::DataLoss,
            kind: "partial_record",
            pos: Pos::Byte(at),
            ts: None,
            message: format!(
                "the file ends inside datagram {}: its last {left} records are lost",
                self.last_packet.map_or_else(|| "?".into(), |p| p.to_string())
            ),
        }
    }

    /// Reads a datagram header; a problem with it is returned (the reader has moved on to
    /// the next magic, or to the end).
    fn packet_header(&mut self) -> io::Result<Option<Diagnostic>> {
        let at = self.read;
        let mut h = [0u8; PACKET_HEADER];
        let n = self.fill(&mut h)?;
        self.read += n as u64;
        if n == 0 {
            self.done = true;
            return Ok(None);
        }
        let bad = |message: String| Diagnostic {
            severity: Severity::DataLoss,
            kind: "bad_packet",
            pos: Pos::Byte(at),
            ts: None,
            message,
        };
        if n < PACKET_HEADER {
            self.done = true;
            return Ok(Some(bad(format!(
                "the file ends {n} bytes into a 24-byte datagram header (byte {at})"
            ))));
        }
        let (number, events, total) = (le32(&h, 12), le32(&h, 16), le32(&h, 20));
        if h.get(..12) != Some(&MAGIC[..]) {
            // Not a header where one should be: skip to the next magic.
            let skipped = 1 + self.resync(h.get(1..).unwrap_or_default())?;
            self.after_bad = true;
            return Ok(Some(bad(format!(
                "no TRACER-V1.0 datagram header at byte {at}: {skipped} bytes skipped to the \
                 next one{}; the events in them are lost",
                if self.done { " (none: the end of the file)" } else { "" }
            ))));
        }
        self.packets += 1;
        let expected =
            u32::try_from(PACKET_HEADER).unwrap_or(24).saturating_add(events.saturating_mul(16));
        let mut problem = None;
        if events > MAX_PACKET_EVENTS {
            let skipped = self.resync(&[])?;
            self.last_packet = Some(number);
            self.after_bad = false;
            return Ok(Some(bad(format!(
                "datagram {number} at byte {at} announces {events} events (at most \
                 {MAX_PACKET_EVENTS} fit a datagram): {skipped} bytes skipped to the next header"
            ))));
        }
        let mut events = events;
        if total != expected {
            // Which of the two to trust: the one after which the next header (or the end of
            // the file) comes. The bytes looked at are put back.
            let by_total = usize::try_from(total)
                .ok()
                .and_then(|t| t.checked_sub(PACKET_HEADER))
                .filter(|b| b % RECORD == 0 && b / RECORD <= MAX_PACKET_EVENTS as usize);
            let by_count = (events as usize) * RECORD;
            let mut trusted = false;
            if let Some(tb) = by_total {
                let mut body = vec![0u8; tb.max(by_count) + MAGIC.len()];
                let n = self.fill(&mut body)?;
                body.truncate(n);
                if Self::header_at(&body, tb) && !Self::header_at(&body, by_count) {
                    events = u32::try_from(tb / RECORD).unwrap_or(events);
                    trusted = true;
                }
                self.unread(&body, n);
            }
            let what = if trusted {
                format!(
                    "the next header follows after {events} records, as total_size says: they \
                     are read"
                )
            } else {
                format!("the {events} events are read")
            };
            problem = Some(Diagnostic {
                severity: Severity::Warning,
                ..bad(format!(
                    "datagram {number} at byte {at}: total_size {total} but {} events make \
                     {expected} bytes; {what}",
                    le32(&h, 16)
                ))
            });
        }
        if let Some(last) = self.last_packet {
            let next = last.wrapping_add(1);
            // A damaged header is the datagram after the last (its loss is said already).
            let (next, after) = if self.after_bad {
                (next.wrapping_add(1), format!("the damaged one after {last}"))
            } else {
                (next, last.to_string())
            };
            if number != next
                && problem.is_none()
                && !(self.after_bad && number == last.wrapping_add(1))
            {
                problem = Some(if number > next {
                    Diagnostic {
                        severity: Severity::DataLoss,
                        kind: "packet_gap",
                        pos: Pos::Byte(at),
                        ts: None,
                        message: format!(
                            "datagram {number} follows {after}: {} datagrams (and their events) \
                             lost",
                            number - next
                        ),
                    }
                } else {
                    Diagnostic {
                        severity: Severity::Warning,
                        kind: "packet_out_of_order",
                        pos: Pos::Byte(at),
                        ts: None,
                        message: format!(
                            "datagram {number} follows {last} (repeated or reordered): its events \
                             are kept, sorted by time with the others (a repeated one shows twice)"
                        ),
                    }
                });
            }
        }
        if self.last_packet.is_none() && problem.is_none() {
            // The sender numbers datagrams from 1 and goes on across the chunks it sends; a
            // damaged header before the first one stands for datagram 1.
            let first = if self.after_bad { 2 } else { 1 };
            if number > first {
                problem = Some(Diagnostic {
                    severity: Severity::DataLoss,
                    kind: "packet_gap",
                    pos: Pos::Byte(at),
                    ts: None,
                    message: format!(
                        "datagram {number} is the first of the capture, but the sender numbers \
                         them from 1: {} datagrams (and their events) before it lost",
                        number - first
                    ),
                });
            }
        }
        self.last_packet = Some(number);
        self.after_bad = false;
        self.left = events;
        Ok(problem)
    }

    /// Skips bytes up to the next magic (which stays to be read); `seen` are bytes already
    /// taken after the damaged spot. Returns how many bytes were skipped.
    fn resync(&mut self, seen: &[u8]) -> io::Result<u64> {
        let mut window: Vec<u8> = seen.to_vec();
        let mut skipped = 0u64;
        loop {
            if let Some(i) = window.windows(MAGIC.len()).position(|w| w == MAGIC) {
                skipped += i as u64;
                self.pending = window.split_off(i);
                // The bytes put back are read again.
                self.read -= self.pending.len() as u64;
                self.left = 0;
                return Ok(skipped);
            }
            // Keep the last 11 bytes: a magic may straddle two reads.
            let keep = window.len().min(MAGIC.len() - 1);
            let drop = window.len() - keep;
            skipped += drop as u64;
            window.drain(..drop);
            let mut buf = [0u8; 4096];
            let n = self.fill(&mut buf)?;
            if n == 0 {
                skipped += window.len() as u64;
                self.done = true;
                return Ok(skipped);
            }
            self.read += n as u64;
            window.extend_from_slice(buf.get(..n).unwrap_or_default());
        }
    }
}
