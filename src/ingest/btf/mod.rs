//! BTF (Best Trace Format) text importer.
//!
//! Spec digest (BTF 2.1/2.2, Timing-Architects / Vector; quirks from real files):
//!
//! ```text
//! #version 2.1.0                     header: `#<key> <value>`, keys case-insensitive
//! #timeScale ns                      ps | ns | us | ms | s, default ns
//! #entityTypeTable                   table block, rows start with `#-`
//! #-T TASK_10MS                      (#entityType or #typeTable: `#-<id> <TYPE>`,
//!                                     #entityTable: `#-<id> <name>`)
//! 5,3,0,0,0,0,start                  numeric mode (BTF 2.1.5): type, source and target
//!                                     as table ids, resolved to names here
//! # a comment                        `# ` anywhere, also between data lines
//! 0,STI_10MS,0,T,TASK_10MS,0,activate
//! 10,Core_0,0,T,TASK_10MS,0,start
//! 25,TASK_10MS,0,SIG,speed,0,write,42, with a comma   <- note = rest of the line
//! time,source,source_instance,target_type,target,target_instance,action[,note]
//! ```
//!
//! Whitespace around fields is ignored, CRLF is accepted, an empty or non-numeric instance
//! is -1 (as Trace Compass does), unknown target types and actions are kept. A line with
//! fewer than 7 fields or a bad time becomes a `malformed_line` diagnostic; time going
//! backwards is a `time_backwards` diagnostic (the event is kept). Header blocks may repeat;
//! the last value of a key wins. References: Trace Compass `BtfTrace.java`,
//! kuopinghsu/FreeRTOS-BTF-Trace, RTFParallella `trace_utils_BTF.c`.
//!
//! Layout: this file reads the data lines (the hot path); `header.rs` the header and its
//! tables, `fields.rs` the comma scan and field parsers, `sniff.rs` format detection.
use super::diag::{Diagnostic, Severity};
use super::lines::LineReader;
use super::Sink;
use crate::model::{Event, Pos, TimeUnit};
use crate::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;

mod fields;
mod header;
mod sniff;

use fields::{clip, find_commas, freertos_label, parse_int};
pub use sniff::sniff;

/// Which `#-` table block the reader is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    EntityType,
    EntityTable,
    EntityTypeTable,
}

/// Reads a whole BTF text from `lines`, pushing events and metadata to `sink`.
pub fn read<R: Read>(lines: &mut LineReader<R>, path: &str, sink: &mut dyn Sink) -> Result<()> {
    let mut reader = BtfReader {
        path,
        unit: TimeUnit::Ns,
        block: Block::None,
        last_ts: None,
        type_ids: HashMap::new(),
        entity_ids: HashMap::new(),
        freertos: false,
        freertos_said: false,
    };
    sink.time_unit(TimeUnit::Ns);
    loop {
        let (line, number, truncated) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(()),
            Err(e) => {
                super::input_lost(sink, lines.line_number(), &e)?;
                return Ok(());
            }
        };
        let pos = Pos::Line(number);
        let text = super::lines::text_of(line, pos, "line", sink)?;
        if truncated {
            sink.diagnostic(Diagnostic {
                severity: Severity::Error,
                kind: "malformed_line",
                pos,
                ts: None,
                message: format!("line longer than {} bytes; skipped", super::lines::MAX_LINE),
            })?;
            continue;
        }
        let text = text.trim_ascii();
        if memchr::memchr2(b'\r', b'\n', text.as_bytes()).is_some() {
            // A CR inside an LF-ended line, or an LF inside a CR-ended one: files with
            // different line ends joined. Each piece is a record of its own (they would
            // otherwise be read as notes of the first records).
            let pieces = text.split(['\r', '\n']).count();
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "mixed_line_ends",
                pos,
                ts: None,
                message: format!(
                    "line holds {pieces} lines separated by a bare CR or LF (mixed line ends): \
                     each is read as a line of its own, at this line number"
                ),
            })?;
            for piece in text.split(['\r', '\n']) {
                reader.line(piece.trim_ascii(), pos, sink)?;
            }
            continue;
        }
        reader.line(text, pos, sink)?;
    }
}

struct BtfReader<'p> {
    path: &'p str,
    unit: TimeUnit,
    block: Block,
    last_ts: Option<i64>,
    /// `#entityType` / `#typeTable` rows: type id to type code (the last row of an id wins).
    type_ids: HashMap<i64, Box<str>>,
    /// `#entityTable` rows: entity id to name (the last row of an id wins).
    entity_ids: HashMap<i64, Box<str>>,
    /// `#creator FreeRTOS trace logger` (or `synthetic_trace_gen`, the generator of its
    /// repository): its older task labels `[<core>/<id>]<name>` are read as the one task
    /// `<name>[<id>]` (see [`freertos_label`]).
    freertos: bool,
    /// Whether a label has been rewritten yet (said once, as a `freertos_labels` row).
    freertos_said: bool,
}

impl BtfReader<'_> {
    fn line(&mut self, line: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let line = line.strip_prefix('\u{feff}').unwrap_or(line);
        if line.is_empty() {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix('#') {
            return self.header(rest, pos, sink);
        }
        self.block = Block::None;
        self.data(line, pos, sink)
    }

    fn data(&mut self, line: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let mut commas = [0usize; 7];
        let found = find_commas(line.as_bytes(), &mut commas);
        if found < 6 {
            return self.malformed(
                pos,
                format!(
                    "expected at least 7 comma-separated fields, found {}: '{}'",
                    found + 1,
                    clip(line)
                ),
                sink,
            );
        }
        // A comma is ASCII: the text either side of one stays valid UTF-8.
        let mut fields = [""; 7];
        let mut start = 0;
        for (slot, &end) in fields.iter_mut().zip(&commas) {
            let end = if end == usize::MAX { line.len() } else { end };
            *slot = line.get(start..end).unwrap_or("").trim_ascii();
            start = end + 1;
        }
        // A comma after the action: the note is the rest of the line, commas included.
        let note = match found {
            7 => Some(line.get(start..).unwrap_or("").trim_ascii()).filter(|t| !t.is_empty()),
            _ => None,
        };
        let [time, source, src_inst, target_type, target, tgt_inst, action] = fields;
        let Some(raw) = parse_int(time) else {
            return self.malformed(pos, format!("time '{}' is not an integer", clip(time)), sink);
        };
        let Some((ts, lost)) = self.unit.to_ns(raw) else {
            return self.malformed(
                pos,
                format!(
                    "time {raw} {} is beyond ±2^62 ns (about 146 years), the range tracedb keeps",
                    self.unit.as_str()
                ),
                sink,
            );
        };
        // A skipped line says nothing about time: it neither warns nor moves the clock.
        if target.is_empty() || action.is_empty() {
            let what = if target.is_empty() { "target" } else { "action" };
            return self.malformed(pos, format!("empty {what} field: '{}'", clip(line)), sink);
        }
        if lost {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "precision_lost",
                pos,
                ts: Some(ts),
                message: format!("time {raw} ps floored to {ts} ns"),
            })?;
        }
        if let Some(last) = self.last_ts {
            if ts < last {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "time_backwards",
                    pos,
                    ts: Some(ts),
                    message: format!(
                        "time {ts} ns is before the previous event's {last} ns; event kept, \
                         states use {last} ns"
                    ),
                })?;
            }
        }
        self.last_ts = Some(self.last_ts.map_or(ts, |l| l.max(ts)));
        let source_instance = self.instance(src_inst, "source", pos, ts, sink)?;
        let target_instance = self.instance(tgt_inst, "target", pos, ts, sink)?;
        // The FreeRTOS trace logger's older labels name a task after the core of each event
        // (`[0/0007]CS`, `[1/0007]CS`): one task, which its current exporter writes `CS[7]`
        // with the core as the source of the line. Read them so (never numeric: its type
        // column is `T`).
        let (mut freertos_source, mut freertos_target) = (None, None);
        if self.freertos {
            if let Some((core, _, _)) = freertos_label(source) {
                freertos_source = Some(format!("Core_{core}"));
            }
            if let Some((_, id, name)) = freertos_label(target) {
                freertos_target = Some(format!("{name}[{id}]"));
            }
            if !self.freertos_said && (freertos_source.is_some() || freertos_target.is_some()) {
                self.freertos_said = true;
                sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "freertos_labels",
                    pos,
                    ts: Some(ts),
                    message: format!(
                        "FreeRTOS trace logger labels '[<core>/<id>]<name>' (here '{}') are read \
                         as the task '<name>[<id>]' on every core, as the logger now writes \
                         them, and a resume's source '[<core>/<id>]<name>' (the task switched \
                         out) as its core 'Core_<core>'",
                        clip(if freertos_target.is_some() { target } else { source })
                    ),
                })?;
            }
        }
        let source = freertos_source.as_deref().unwrap_or(source);
        let target = freertos_target.as_deref().unwrap_or(target);
        // BTF 2.1.5's numeric mode: the type column holds a `#typeTable` id (no type code
        // begins with a digit), source and target `#entityTable` ids.
        let (source, target_type, target) =
            if target_type.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                (
                    self.resolve(source, "source", pos, ts, sink)?,
                    self.resolve(target_type, "type", pos, ts, sink)?,
                    self.resolve(target, "target", pos, ts, sink)?,
                )
            } else {
                (source, target_type, target)
            };
        sink.event(&Event {
            ts,
            source,
            source_instance,
            target_type,
            target,
            target_instance,
            action,
            note,
            value: None,
            core: None,
            pos,
        })
    }

    /// The name (or, for `which` = "type", the type code) that id `field` of a numeric line
    /// stands for; a field that is no integer is a name as written. An id the table does not
    /// list is kept as written, with an `unknown_id` warning.
    fn resolve<'a>(
        &'a self,
        field: &'a str,
        which: &str,
        pos: Pos,
        ts: i64,
        sink: &mut dyn Sink,
    ) -> Result<&'a str> {
        let Some(id) = parse_int(field) else { return Ok(field) };
        let (table, listed) = match which {
            "type" => ("#typeTable", self.type_ids.get(&id)),
            _ => ("#entityTable", self.entity_ids.get(&id)),
        };
        if let Some(name) = listed {
            return Ok(name);
        }
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "unknown_id",
            pos,
            ts: Some(ts),
            message: format!(
                "numeric line: {which} id {id} is not in the {table}; kept as '{field}'"
            ),
        })?;
        Ok(field)
    }

    fn instance(
        &self,
        field: &str,
        which: &str,
        pos: Pos,
        ts: i64,
        sink: &mut dyn Sink,
    ) -> Result<i64> {
        if field.is_empty() {
            return Ok(-1);
        }
        match parse_int(field) {
            Some(v) => Ok(v),
            None => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_instance",
                    pos,
                    ts: Some(ts),
                    message: format!(
                        "{which} instance '{}' is not an integer from -2^63 to 2^63 - 1; taken as \
                         -1",
                        clip(field)
                    ),
                })?;
                Ok(-1)
            }
        }
    }

    fn malformed(&self, pos: Pos, message: String, sink: &mut dyn Sink) -> Result<()> {
        sink.diagnostic(Diagnostic {
            severity: Severity::Error,
            kind: "malformed_line",
            pos,
            ts: None,
            message: format!("{message}; line skipped"),
        })
    }
}

#[cfg(test)]
mod tests;
