//! The record reader: the header, then each body line as a state (`1:`), events (`2:`), a
//! communication (`3:`), a global communication (`4:`, ignored with an info), a
//! communicator line or a `#` line, pushed to the [`Sink`].
//!
//! Input: the lines of the `.prv` and its [`Companions`]. Output: `state` spans, `events`
//! rows with their channel sets, messages, entities, `captures.meta` entries and
//! diagnostics (`malformed_record`, `unknown_object`, `missing_companion`,
//! `communicator_count`, ...). Event records are held back in a reorder window
//! ([`EVENT_REORDER`] records, [`EVENT_REORDER_FIELDS`] fields at most) and given out in
//! time order; states and messages keep file order.
use super::clip;
use super::companions::without;
use super::cuts::Cuts;
use super::header::{parse_header, Header};
use super::names::{is_ovni_cpu_file, Names};
use super::new_format::new_format_record;
use super::pcf::{parse_value, Pcf};
use super::Companions;
use crate::derive::Reorder;
use crate::ingest::diag::{Diagnostic, Severity};
use crate::ingest::lines::LineReader;
use crate::ingest::{ChannelSet, Message, Sink, Span};
use crate::model::strings::FastMap;
use crate::model::{Event, Pos, TimeUnit};
use crate::{Error, Result};
use std::borrow::Cow;
use std::io::Read;
use std::rc::Rc;

/// Rows of the process model declared as entities up front (so that threads without a
/// record are listed too); a header announcing more declares only the rows records name.
const DECLARE_ROWS_MAX: u64 = 1 << 20;

/// Event records held back to be sorted by time: Paraver writers emit them only roughly
/// in order, and a channel's states need them in order.
const EVENT_REORDER: usize = 1 << 17;

/// Fields (8 bytes each) the event reorder buffer holds at most: 128 MiB.
const EVENT_REORDER_FIELDS: usize = 16 << 20;

/// The integer fields of a record, exact from `i64::MIN` to `u64::MAX` in 8 bytes each: a
/// field above `i64::MAX` keeps its `u64` bits and its index is listed in `wide` (empty, so
/// never allocated, for almost every record).
struct Fields {
    words: Vec<i64>,
    wide: Vec<usize>,
}

impl Fields {
    fn len(&self) -> usize {
        self.words.len()
    }

    /// Field `i` (0 when there is none).
    fn get(&self, i: usize) -> i128 {
        match self.words.get(i) {
            Some(&w) if self.wide.contains(&i) => i128::from(w.cast_unsigned()),
            Some(&w) => i128::from(w),
            None => 0,
        }
    }

    /// Fields `i`, `i + 1`, `i + 2`: the `appl.task.thread` of an object.
    fn object(&self, i: usize) -> [i128; 3] {
        [self.get(i), self.get(i + 1), self.get(i + 2)]
    }
}

/// An event record waiting in the reorder buffer: its time, where it was read, its fields.
struct PendingEvents {
    ts: i64,
    pos: Pos,
    fields: Fields,
}

/// Whether a 0 of event type `etype` is a value rather than the end of the channel's state.
/// Paraver's convention (and Extrae's) is that 0 ends it; ovni registers a few channels with
/// `PRV_ZERO` (`src/emu/cpu.c`, `src/emu/nosv/hwc.c`, `src/emu/nosv/breakdown.c`), whose 0
/// is a real value: the number of running threads of a CPU (type 3), the nOS-V breakdown
/// of a breakdown trace (type 17) and the nOS-V hardware counters (types 200-299).
fn zero_is_value(ovni: bool, etype: i128) -> bool {
    ovni && (etype == 3 || etype == 17 || (200..300).contains(&etype))
}

struct Reader<'p> {
    path: &'p str,
    unit: TimeUnit,
    names: Names,
    pcf: Option<Pcf>,
    /// Written by ovni's emulator: some channels take 0 as a value ([`zero_is_value`]).
    ovni: bool,
    pending: Reorder<PendingEvents>,
    ready: Vec<PendingEvents>,
    /// Fields held in `pending`, bounded by [`EVENT_REORDER_FIELDS`].
    pending_fields: usize,
    /// The cuts Paraver's cutter recorded in `#...:CUTTER:...` lines ([`Cuts`]).
    cuts: Cuts,
    /// Entity names of the process model's threads met so far (a name is made once, not
    /// per record).
    threads: FastMap<[i128; 3], (Rc<str>, &'static str)>,
    /// Entity names of the resource model's CPUs met so far, each declared once.
    cpus: FastMap<i128, Rc<str>>,
}

/// Reads one `.prv` from `lines`, with the names in `comp`, into `sink`.
pub fn read<R: Read>(
    lines: &mut LineReader<R>,
    path: &str,
    comp: &Companions,
    sink: &mut dyn Sink,
) -> Result<()> {
    for m in &comp.missing {
        sink.diagnostic(Diagnostic {
            severity: Severity::Info,
            kind: "missing_companion",
            pos: Pos::None,
            ts: None,
            message: format!("no {} beside the trace: {}", m.display(), without(m)),
        })?;
    }
    for d in &comp.problems {
        sink.diagnostic(d.clone())?;
    }
    for (d, n) in &comp.repeats {
        sink.diagnostics(d.clone(), *n)?;
    }
    let mut header: Option<(Header, Pos)> = None;
    let mut reader: Option<Reader<'_>> = None;
    let mut comm_lines = 0u64;
    // The body is paraver-kernel's "new format" (its first line says so).
    let mut new_format = false;
    loop {
        let (line, number, truncated) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            // Cut before the header was whole: nothing can be read, and that is the error.
            Err(e) if header.is_none() => {
                let at = format!("line {}", lines.line_number() + 1);
                return Err(Error::input(path, at, format!("the header cannot be read: {e}")));
            }
            Err(e) => {
                crate::ingest::input_lost(sink, lines.line_number(), &e)?;
                break;
            }
        };
        let pos = Pos::Line(number);
        let text = String::from_utf8_lossy(line);
        let text = if number == 1 { text.trim_start_matches('\u{feff}') } else { &text };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let Some(r) = reader.as_mut() else {
            if header.is_none() && text.eq_ignore_ascii_case("new format") {
                new_format = true;
                continue;
            }
            if !text.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("#paraver")) {
                return Err(Error::input(
                    path,
                    pos.to_string(),
                    "not a Paraver trace: the first line does not start with #Paraver",
                ));
            }
            let (h, problems, meta) = parse_header(text, path, pos)?;
            for (k, v) in &meta {
                sink.meta(k, v);
            }
            for (severity, kind, message) in problems {
                sink.diagnostic(Diagnostic { severity, kind, pos, ts: None, message })?;
            }
            sink.time_unit(h.unit);
            sink.trace_end(h.end);
            let cpu_rows = comp.row.is_none() && is_ovni_cpu_file(path);
            let (names, notes) = Names::new(&h, comp, cpu_rows);
            for (kind, message) in notes {
                let severity =
                    if kind == "bad_header" { Severity::Warning } else { Severity::Info };
                sink.diagnostic(Diagnostic { severity, kind, pos: Pos::None, ts: None, message })?;
            }
            if names.rows <= DECLARE_ROWS_MAX {
                for (name, ty) in names.all_rows() {
                    sink.declare_entity(&name, Some(ty), None);
                }
            } else {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "bad_header",
                    pos,
                    ts: None,
                    message: format!(
                        "the header announces {} threads: only those records name are listed \
                         in entities",
                        names.rows
                    ),
                })?;
            }
            reader = Some(Reader {
                path,
                unit: h.unit,
                names,
                pcf: comp.pcf.clone(),
                ovni: h.ovni,
                pending: Reorder::new(EVENT_REORDER),
                ready: Vec::new(),
                pending_fields: 0,
                cuts: Cuts::default(),
                threads: FastMap::default(),
                cpus: FastMap::default(),
            });
            header = Some((h, pos));
            continue;
        };
        if truncated {
            r.malformed(pos, "line longer than 16 MiB, cut".into(), sink)?;
            continue;
        }
        let v1;
        let text = if new_format {
            let Some(line) = new_format_record(text, &r.names) else { continue };
            v1 = line;
            v1.as_str()
        } else {
            text
        };
        match text.as_bytes().first() {
            Some(b'#') => {
                r.cuts.note(text);
                continue;
            }
            // A communicator line is `c:app:comm:size:tasks...` (or `C:`, `i:`, `I:`); any
            // other line starting with one of these letters is not one, and is reported below
            // rather than skipped unseen.
            Some(b'c' | b'C' | b'i' | b'I') if text.as_bytes().get(1) == Some(&b':') => {
                comm_lines += 1;
            }
            Some(b'1') if text.as_bytes().get(1) == Some(&b':') => r.state(text, pos, sink)?,
            Some(b'2') if text.as_bytes().get(1) == Some(&b':') => r.events(text, pos, sink)?,
            Some(b'3') if text.as_bytes().get(1) == Some(&b':') => r.comm(text, pos, sink)?,
            Some(b'4') if text.as_bytes().get(1) == Some(&b':') => sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "global_comm_ignored",
                pos,
                ts: None,
                message: "global communication record (type 4) ignored, as paraver-kernel does"
                    .into(),
            })?,
            _ => r.malformed(pos, format!("unknown record type: '{}'", clip(text)), sink)?,
        }
    }
    if let Some(r) = reader.as_mut() {
        r.flush_events(sink)?;
        r.cuts.meta(r.unit, sink);
    }
    match header {
        None => Err(Error::input(path, "", "not a Paraver trace: no #Paraver header")),
        Some((h, pos)) => {
            if comm_lines != h.comms {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "communicator_count",
                    pos,
                    ts: None,
                    message: format!(
                        "the header announces {} communicator lines, the file has {comm_lines}",
                        h.comms
                    ),
                })?;
            }
            Ok(())
        }
    }
}

impl Reader<'_> {
    fn malformed(&self, pos: Pos, message: String, sink: &mut dyn Sink) -> Result<()> {
        let _ = self.path;
        sink.diagnostic(Diagnostic {
            severity: Severity::Error,
            kind: "malformed_record",
            pos,
            ts: None,
            message,
        })
    }

    /// Integer fields of a record, or a diagnostic.
    fn fields(&self, text: &str, pos: Pos, sink: &mut dyn Sink) -> Result<Option<Fields>> {
        let mut out = Fields { words: Vec::with_capacity(16), wide: Vec::new() };
        // paraver-kernel skips one separator after each number: a record ending with `:`
        // (`2:...:10:1:`) is whole there, and is here.
        let body = text.strip_suffix(':').unwrap_or(text);
        // Fields are a few bytes: a byte loop finds each `:` sooner than a searcher call.
        let mut rest = Some(body);
        let fields = std::iter::from_fn(|| {
            let r = rest?;
            match r.bytes().position(|b| b == b':') {
                Some(at) => {
                    rest = r.get(at + 1..);
                    r.get(..at)
                }
                None => rest.take(),
            }
        });
        for (i, f) in fields.enumerate() {
            match parse_value(f.trim()) {
                Some(v) => match i64::try_from(v) {
                    Ok(w) => out.words.push(w),
                    Err(_) => {
                        out.words.push(u64::try_from(v).map_or(0, u64::cast_signed));
                        out.wide.push(i);
                    }
                },
                None => {
                    self.malformed(
                        pos,
                        format!("field '{}' is not an integer: '{}'", clip(f), clip(text)),
                        sink,
                    )?;
                    return Ok(None);
                }
            }
        }
        Ok(Some(out))
    }

    /// Time field `i` of `f` scaled to ns, or a diagnostic quoting the field as written.
    fn time(
        &self,
        f: &Fields,
        i: usize,
        text: &str,
        pos: Pos,
        sink: &mut dyn Sink,
    ) -> Result<Option<i64>> {
        let raw = f.get(i);
        let written = || text.split(':').nth(i).map_or("", str::trim).to_string();
        if raw < 0 {
            let m = format!("negative time {}: '{}'", written(), clip(text));
            self.malformed(pos, m, sink)?;
            return Ok(None);
        }
        match i64::try_from(raw).ok().and_then(|r| self.unit.to_ns(r)) {
            Some((t, _)) => Ok(Some(t)),
            None => {
                let m = format!(
                    "time {} is beyond 2^62 ns (about 146 years): '{}'",
                    written(),
                    clip(text)
                );
                self.malformed(pos, m, sink)?;
                Ok(None)
            }
        }
    }

    /// The entity of a record's object, with a diagnostic when it is outside the model.
    fn object(
        &mut self,
        [a, t, th]: [i128; 3],
        pos: Pos,
        sink: &mut dyn Sink,
    ) -> Result<(Rc<str>, &'static str)> {
        if let Some((name, ty)) = self.threads.get(&[a, t, th]) {
            return Ok((Rc::clone(name), ty));
        }
        if let Some((name, ty)) = self.names.thread(a, t, th) {
            let name: Rc<str> = name.into();
            self.threads.insert([a, t, th], (Rc::clone(&name), ty));
            return Ok((name, ty));
        }
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "unknown_object",
            pos,
            ts: None,
            message: format!("thread {a}.{t}.{th} is not in the header's process model; kept as THREAD {a}.{t}.{th}"),
        })?;
        Ok((format!("THREAD {a}.{t}.{th}").into(), "THREAD"))
    }

    /// The CPU entity of a record's cpu field (0 = none), declared as an entity of type CPU,
    /// with a diagnostic when the header's resource model does not have it.
    fn cpu(&mut self, cpu: i128, pos: Pos, sink: &mut dyn Sink) -> Result<Option<Rc<str>>> {
        if cpu == 0 {
            return Ok(None);
        }
        if let Some(name) = self.cpus.get(&cpu) {
            return Ok(Some(Rc::clone(name)));
        }
        let Some((name, in_model)) = self.names.cpu(cpu) else {
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "unknown_object",
                pos,
                ts: None,
                message: format!("cpu {cpu} is not a CPU number; the record is kept without one"),
            })?;
            return Ok(None);
        };
        let name: Rc<str> = name.into();
        if in_model {
            self.cpus.insert(cpu, Rc::clone(&name));
        } else {
            // Said for every record (one warning per field).
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "unknown_object",
                pos,
                ts: None,
                message: format!(
                    "cpu {cpu} is not in the header's resource model ({} CPUs); kept as {name}",
                    self.names.cpus.unwrap_or(0)
                ),
            })?;
        }
        sink.declare_entity(&name, Some("CPU"), None);
        Ok(Some(name))
    }

    fn state(&mut self, text: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let Some(f) = self.fields(text, pos, sink)? else { return Ok(()) };
        if f.len() != 8 {
            return self.malformed(
                pos,
                format!("a state record has 8 fields, this one {}: '{}'", f.len(), clip(text)),
                sink,
            );
        }
        let (cpu, begin_raw, end_raw, state) = (f.get(1), f.get(5), f.get(6), f.get(7));
        let Some(begin) = self.time(&f, 5, text, pos, sink)? else { return Ok(()) };
        let end = if end_raw == -1 {
            None
        } else {
            let Some(e) = self.time(&f, 6, text, pos, sink)? else { return Ok(()) };
            if e < begin {
                return self.malformed(
                    pos,
                    format!(
                        "state ends ({end_raw}) before it begins ({begin_raw}): '{}'",
                        clip(text)
                    ),
                    sink,
                );
            }
            Some(e)
        };
        let (entity, ty) = self.object(f.object(2), pos, sink)?;
        let core = self.cpu(cpu, pos, sink)?;
        let name = match self.pcf.as_ref().and_then(|p| p.states.get(&state)) {
            Some(n) => Cow::Borrowed(n.as_str()),
            None => Cow::Owned(state.to_string()),
        };
        #[allow(clippy::cast_precision_loss)]
        let value = Some(state as f64);
        sink.span(&Span {
            entity: &entity,
            entity_type: ty,
            channel: "state",
            state: &name,
            value,
            begin,
            end,
            core: core.as_deref(),
            pos,
        })
    }

    fn events(&mut self, text: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let Some(f) = self.fields(text, pos, sink)? else { return Ok(()) };
        if f.len() < 8 || (f.len() - 6) % 2 != 0 {
            return self.malformed(
                pos,
                format!(
                    "an event record has 6 fields then type:value pairs, this one {} fields: '{}'",
                    f.len(),
                    clip(text)
                ),
                sink,
            );
        }
        let Some(ts) = self.time(&f, 5, text, pos, sink)? else { return Ok(()) };
        self.pending_fields += f.len();
        self.pending.push(ts, PendingEvents { ts, pos, fields: f }, &mut self.ready);
        // Records of hundreds of pairs: the window is bounded in fields too (memory).
        if self.pending_fields > EVENT_REORDER_FIELDS {
            self.pending.drain(&mut self.ready);
        }
        self.emit_ready(sink)
    }

    /// Every event record still held back, in time order.
    fn flush_events(&mut self, sink: &mut dyn Sink) -> Result<()> {
        self.pending.drain(&mut self.ready);
        self.emit_ready(sink)
    }

    fn emit_ready(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for rec in std::mem::take(&mut self.ready) {
            self.pending_fields = self.pending_fields.saturating_sub(rec.fields.len());
            self.emit_events(&rec, sink)?;
        }
        Ok(())
    }

    /// The `events` rows and channel changes of one event record, in time order.
    fn emit_events(&mut self, rec: &PendingEvents, sink: &mut dyn Sink) -> Result<()> {
        let (f, ts, pos) = (&rec.fields, rec.ts, rec.pos);
        let (entity, ty) = self.object(f.object(2), pos, sink)?;
        let core = self.cpu(f.get(1), pos, sink)?;
        for i in (6..f.len()).step_by(2) {
            let (etype, value) = (f.get(i), f.get(i + 1));
            let type_name = match self.pcf.as_ref().and_then(|p| p.types.get(&etype)) {
                Some(n) if !n.is_empty() => Cow::Borrowed(n.as_str()),
                _ => Cow::Owned(etype.to_string()),
            };
            let label = self.pcf.as_ref().and_then(|p| p.value_label(etype, value));
            // `value` is a DOUBLE, exact up to 2^53: beyond (up to u64::MAX), the exact number
            // is the note and `value` the nearest double.
            let exact =
                (label.is_none() && value.unsigned_abs() > 1 << 53).then(|| value.to_string());
            #[allow(clippy::cast_precision_loss)]
            let v = Some(value as f64);
            sink.event(&Event {
                ts,
                source: &entity,
                source_instance: -1,
                target_type: ty,
                target: &entity,
                target_instance: -1,
                action: &type_name,
                note: label.or(exact.as_deref()),
                value: v,
                core: core.as_deref(),
                pos,
            })?;
            sink.channel_set(&ChannelSet {
                entity: &entity,
                entity_type: ty,
                channel: &type_name,
                ts,
                value,
                zero_ends: !zero_is_value(self.ovni, etype),
                label,
                core: core.as_deref(),
                pos,
            })?;
        }
        Ok(())
    }

    fn comm(&mut self, text: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let Some(f) = self.fields(text, pos, sink)? else { return Ok(()) };
        if f.len() != 15 {
            return self.malformed(
                pos,
                format!(
                    "a communication record has 15 fields, this one {}: '{}'",
                    f.len(),
                    clip(text)
                ),
                sink,
            );
        }
        let mut times = [0i64; 4];
        for (slot, i) in times.iter_mut().zip([5, 6, 11, 12]) {
            let Some(t) = self.time(&f, i, text, pos, sink)? else { return Ok(()) };
            *slot = t;
        }
        let (Ok(size), Ok(tag)) = (i64::try_from(f.get(13)), i64::try_from(f.get(14))) else {
            return self.malformed(
                pos,
                format!("a size or tag is beyond 2^63 - 1: '{}'", clip(text)),
                sink,
            );
        };
        let (sender, sender_type) = self.object(f.object(2), pos, sink)?;
        let (receiver, receiver_type) = self.object(f.object(8), pos, sink)?;
        // Entities outside the header's model still get their `entities` row.
        sink.declare_entity(&sender, Some(sender_type), None);
        sink.declare_entity(&receiver, Some(receiver_type), None);
        // The cpus are checked and listed as a state's or an event's are (`messages` has no
        // column for them).
        for i in [1, 7] {
            self.cpu(f.get(i), pos, sink)?;
        }
        sink.message(&Message {
            sender: &sender,
            receiver: &receiver,
            send_ts: times[0],
            recv_ts: Some(times[2]),
            phys_send_ts: times[1],
            phys_recv_ts: Some(times[3]),
            size,
            tag,
            pos,
        })
    }
}
