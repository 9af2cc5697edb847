//! One stream of rows and its clock. A [`Stream`] is one reader of the export (the whole file
//! in its order, or the rows of one stream of cores) with the rows timed and not yet given
//! out; its [`Timing`] gives each row its time: absolute, delta, or, for rows between
//! timestamp messages (marker encoding), the midpoint of the two, holding at most
//! [`MAX_PENDING`] rows. [`Reopened`] is the export opened again for the second pass.
//!
//! Invariant: a stream gives its rows out in its own order; each carries the latest time its
//! stream has reached ([`Timed`]'s `key`), which is what the merge orders streams by.
use super::super::clock::{midpoint, Clock, TimeError};
use super::super::map::Encoding;
use super::{Record, MAX_PENDING};
use crate::ingest::input::{Compression, SmallInput};
use crate::ingest::lines::LineReader;
use crate::ingest::{Diagnostic, Severity, Sink};
use crate::model::Pos;
use crate::Result;
use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;

/// The export read again: a plain file as it is (no hash: the first pass made it), a
/// compressed one decoded with a small read-ahead.
pub(super) enum Reopened {
    Plain(std::fs::File),
    Packed(Box<SmallInput>),
}

impl Reopened {
    pub(super) fn open(path: &Path) -> std::io::Result<Reopened> {
        let mut file = std::fs::File::open(path)?;
        let mut magic = Vec::new();
        (&mut file).take(6).read_to_end(&mut magic)?;
        let plain = Compression::sniff(&magic) == Compression::None;
        if plain {
            std::io::Seek::rewind(&mut file)?;
            Ok(Reopened::Plain(file))
        } else {
            Ok(Reopened::Packed(Box::new(SmallInput::open(path)?)))
        }
    }
}

impl Read for Reopened {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Reopened::Plain(f) => f.read(buf),
            Reopened::Packed(s) => s.read(buf),
        }
    }
}

/// A record with its time, and the time the merge orders it by: the latest its stream has
/// reached (a row earlier than the one before it in its stream keeps its place there).
pub(super) struct Timed {
    pub(super) rec: Record,
    pub(super) ts: i64,
    pub(super) key: i64,
}

/// One reader of rows: the whole file in its order (`id` none), or the rows of one stream.
pub(super) struct Stream<'l, R> {
    pub(super) lines: &'l mut LineReader<R>,
    pub(super) id: Option<usize>,
    /// Lines of its first and last row.
    pub(super) span: (u64, u64),
    pub(super) timing: Timing,
    pub(super) queue: VecDeque<Timed>,
    pub(super) done: bool,
    /// Reading the export's first (only) pass: says what lines it cannot read.
    pub(super) direct: bool,
}

impl<'l, R: Read> Stream<'l, R> {
    pub(super) fn new(
        lines: &'l mut LineReader<R>,
        id: Option<usize>,
        span: (u64, u64),
        timing: Timing,
        direct: bool,
    ) -> Self {
        Stream { lines, id, span, timing, queue: VecDeque::new(), done: false, direct }
    }

    pub(super) fn end(&mut self, sink: &mut dyn Sink) -> Result<()> {
        self.done = true;
        self.timing.finish(sink, &mut self.queue)
    }
}

/// The clock of one stream, with the rows it holds between timestamp messages.
pub(super) struct Timing {
    pub(super) clock: Clock,
    /// Rows waiting for the next timestamp message (marker encoding).
    pub(super) pending: Vec<Record>,
    /// Rows before the first timestamp message: first line, count, and how many of them
    /// were placed at 0 because more than [`MAX_PENDING`] waited.
    pub(super) before_first: Option<(u64, u64, u64)>,
    /// Rows after the last timestamp message: first line, count.
    pub(super) after_last: Option<(u64, u64)>,
    /// The unit times are in once read (`ns`, or `cycles` of unknown rate).
    pub(super) unit: &'static str,
    /// Latest time given out.
    pub(super) key: i64,
}

impl Timing {
    fn out(&mut self, rec: Record, ts: i64, out: &mut VecDeque<Timed>) {
        self.key = self.key.max(ts);
        out.push_back(Timed { rec, ts, key: self.key });
    }

    /// Times a record, holding it while it waits for a timestamp message.
    pub(super) fn row(
        &mut self,
        rec: Record,
        sink: &mut dyn Sink,
        out: &mut VecDeque<Timed>,
    ) -> Result<()> {
        let pos = Pos::Line(rec.pos);
        let marker = self.clock.encoding == Encoding::Marker;
        if marker && rec.time.trim().is_empty() {
            return self.hold(rec, sink, out);
        }
        let prev = self.clock.last;
        let ts = match self.clock.read(&rec.time) {
            Ok(r) => {
                if r.floored {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Info,
                        kind: "precision_lost",
                        pos,
                        ts: Some(r.ns),
                        message: format!("time '{}' floored to {} ns", rec.time, r.ns),
                    })?;
                }
                if let Some(last) = r.backwards {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Warning,
                        kind: "time_backwards",
                        pos,
                        ts: Some(r.ns),
                        message: format!(
                            "time {} {u} is before the previous row's {last} {u}; row kept, \
                             states use {last} {u}",
                            r.ns,
                            u = self.unit
                        ),
                    })?;
                }
                r.ns
            }
            Err(TimeError::Bad(m) | TimeError::Range(m)) => {
                let at = prev.unwrap_or(0);
                let message = if marker {
                    format!("{m}; row kept between the timestamp messages around it")
                } else {
                    format!("{m}; row kept at the previous row's time ({at} {})", self.unit)
                };
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_time",
                    pos,
                    ts: Some(at),
                    message,
                })?;
                if marker {
                    // Not a timestamp message after all: a row between two.
                    return self.hold(rec, sink, out);
                }
                at
            }
        };
        if marker {
            let waiting = std::mem::take(&mut self.pending);
            if let (Some(first), None) = (waiting.first(), prev) {
                self.count_before_first(first.pos, waiting.len(), 0);
            }
            for r in waiting {
                let t = prev.map_or(ts, |p| midpoint(p, ts));
                self.out(r, t, out);
            }
        }
        self.out(rec, ts, out);
        Ok(())
    }

    /// Holds a row until the next timestamp message (marker encoding); more than
    /// [`MAX_PENDING`] held are placed now: at the last message's time, or, before the
    /// first message, at 0 (its time is not known yet).
    fn hold(&mut self, rec: Record, sink: &mut dyn Sink, out: &mut VecDeque<Timed>) -> Result<()> {
        if self.pending.len() >= MAX_PENDING {
            let at = self.clock.last.unwrap_or(0);
            let first = self.pending.first().map_or(rec.pos, |r| r.pos);
            let last = self.pending.last().map_or(rec.pos, |r| r.pos);
            let n = self.pending.len();
            let u = self.unit;
            let message = if self.clock.last.is_some() {
                format!(
                    "more than {MAX_PENDING} rows since the last timestamp message: lines \
                     {first} to {last} take its time ({at} {u}) instead of the midpoint to the \
                     next"
                )
            } else {
                self.count_before_first(first, n, n);
                format!(
                    "more than {MAX_PENDING} rows before the first timestamp message: lines \
                     {first} to {last} are placed at 0 {u} (the message's time is not known \
                     yet)"
                )
            };
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "marker_gap_too_long",
                pos: Pos::Line(rec.pos),
                ts: Some(at),
                message,
            })?;
            for r in std::mem::take(&mut self.pending) {
                self.out(r, at, out);
            }
        }
        self.pending.push(rec);
        Ok(())
    }

    fn count_before_first(&mut self, line: u64, n: usize, at_zero: usize) {
        let e = self.before_first.get_or_insert((line, 0, 0));
        e.1 += n as u64;
        e.2 += at_zero as u64;
    }

    /// Places the rows still held and says what was unbracketed.
    fn finish(&mut self, sink: &mut dyn Sink, out: &mut VecDeque<Timed>) -> Result<()> {
        let waiting = std::mem::take(&mut self.pending);
        if let Some(first) = waiting.first() {
            if self.clock.last.is_some() {
                self.after_last = Some((first.pos, waiting.len() as u64));
            } else {
                self.count_before_first(first.pos, waiting.len(), waiting.len());
            }
        }
        let at = self.clock.last.unwrap_or(0);
        for r in waiting {
            self.out(r, at, out);
        }
        let u = self.unit;
        let before = self.before_first.take().map(|(line, n, zero)| {
            let message = if self.clock.last.is_none() {
                format!("{n} rows and no timestamp message at all: they are all at 0 {u}")
            } else if zero > 0 {
                format!(
                    "{n} rows before the first timestamp message: the first {zero} are at 0 {u} \
                     (more than {MAX_PENDING} waited: marker_gap_too_long), the rest take its \
                     time"
                )
            } else {
                format!("{n} rows before the first timestamp message take its time")
            };
            (line, message)
        });
        let after = self.after_last.take().map(|(line, n)| {
            (line, format!("{n} rows after the last timestamp message take its time ({at} {u})"))
        });
        for (line, message) in before.into_iter().chain(after) {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unbracketed_rows",
                pos: Pos::Line(line),
                ts: None,
                message,
            })?;
        }
        Ok(())
    }
}
