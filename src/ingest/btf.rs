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
use super::diag::{Diagnostic, Severity};
use super::lines::LineReader;
use super::Sink;
use crate::model::{Event, Pos, TimeUnit};
use crate::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;

/// Header keys that identify a BTF file when sniffing.
const KNOWN_KEYS: &[&str] = &[
    "version",
    "creator",
    "creationdate",
    "timescale",
    "inputfile",
    "entitytype",
    "typetable",
    "entitytable",
    "entitytypetable",
];

/// True when `prefix` looks like BTF: a known `#key` header line, or data lines most of
/// which have at least 7 comma-separated fields, an integer time, a target and an action. Up to
/// [`SNIFF_DATA_LINES`] data lines are looked at, so that one malformed line at the top
/// (a diagnostic like any other) does not make the whole file unrecognised. A NUL byte
/// (binary data) leaves only the header to go by: one stray NUL in a BTF file is a
/// malformed line, not a reason to refuse the file.
pub fn sniff(prefix: &[u8]) -> bool {
    // A hardware-trace export with 7 columns or more and a numeric first one has BTF-like
    // data lines: its header row tells it apart.
    if super::hw::sniff(prefix) {
        return false;
    }
    let binary = prefix.contains(&0);
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let text = String::from_utf8_lossy(prefix);
    let (mut good, mut seen) = (0, 0);
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let key = rest.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
            if key.starts_with("paraver") {
                return false;
            }
            if KNOWN_KEYS.contains(&key.as_str()) {
                return true;
            }
            continue;
        }
        // Good: what the reader keeps (an integer time, a target and an action), not only
        // seven fields after a number (a hardware-trace export whose header row is damaged
        // has those, with its Destination or Data column empty on most rows).
        let fields: Vec<&str> = line.splitn(8, ',').map(str::trim).collect();
        if let [time, _, _, _, target, _, action, ..] = fields.as_slice() {
            if parse_int(time).is_some() && !target.is_empty() && !action.is_empty() {
                good += 1;
            }
        }
        seen += 1;
        if seen == SNIFF_DATA_LINES {
            break;
        }
    }
    !binary && good * 2 > seen
}

/// Data lines [`sniff`] looks at.
const SNIFF_DATA_LINES: usize = 8;

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
    /// `#creator FreeRTOS trace logger`: its older task labels `[<core>/<id>]<name>` are
    /// read as the one task `<name>[<id>]` (see [`freertos_label`]).
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

    fn header(&mut self, rest: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        if let Some(row) = rest.strip_prefix('-') {
            if self.block != Block::None {
                return self.table_row(row.trim(), pos, sink);
            }
            return Ok(()); // a `#-` line outside a block: a comment
        }
        self.block = Block::None;
        if rest.starts_with(char::is_whitespace) || rest.is_empty() {
            return Ok(()); // `# comment`
        }
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (rest, ""),
        };
        let key = key.to_ascii_lowercase();
        match key.as_str() {
            // `#typeTable` is BTF 2.1.5's name for the block earlier files call `#entityType`.
            "entitytype" | "typetable" => self.block = Block::EntityType,
            "entitytable" => self.block = Block::EntityTable,
            "entitytypetable" => self.block = Block::EntityTypeTable,
            "timescale" => {
                let unit = TimeUnit::parse(value).ok_or_else(|| {
                    Error::input(
                        self.path,
                        pos.to_string(),
                        format!("unknown #timeScale '{value}' (expected ps, ns, us, ms or s)"),
                    )
                })?;
                if unit != self.unit && self.last_ts.is_some() {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Warning,
                        kind: "timescale_changed",
                        pos,
                        ts: self.last_ts,
                        message: format!(
                            "#timeScale changes from {} to {} after events; later lines use {}",
                            self.unit.as_str(),
                            unit.as_str(),
                            unit.as_str()
                        ),
                    })?;
                }
                self.unit = unit;
                sink.time_unit(unit);
                sink.meta(&key, value);
            }
            "creator" => {
                self.freertos = value.to_ascii_lowercase().starts_with("freertos trace logger");
                sink.meta(&key, value);
            }
            _ => sink.meta(&key, value),
        }
        Ok(())
    }

    fn table_row(&mut self, row: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let (first, second) = match row.split_once(char::is_whitespace) {
            Some((f, s)) => (f, s.trim()),
            None => (row, ""),
        };
        let bad = |what: &str| Diagnostic {
            severity: Severity::Warning,
            kind: "malformed_header",
            pos,
            ts: None,
            message: format!("{what} row '#-{row}' not understood; ignored"),
        };
        match self.block {
            Block::EntityType => match parse_int(first) {
                Some(id) if !second.is_empty() => {
                    self.type_ids.insert(id, second.into());
                    sink.meta(&format!("entitytype.{first}"), second);
                }
                _ => sink.diagnostic(bad("#entityType"))?,
            },
            Block::EntityTable => match parse_int(first) {
                Some(id) if !second.is_empty() => {
                    self.entity_ids.insert(id, second.into());
                    sink.declare_entity(second, None, Some(id));
                }
                _ => sink.diagnostic(bad("#entityTable"))?,
            },
            Block::EntityTypeTable => {
                if second.is_empty() {
                    sink.diagnostic(bad("#entityTypeTable"))?;
                } else {
                    sink.declare_entity(second, Some(first), None);
                }
            }
            Block::None => {}
        }
        Ok(())
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

/// Where the first 7 commas of `line` are; returns how many there are. The slots after the
/// last comma found hold `usize::MAX`. Eight bytes at a time: BTF fields are a few bytes
/// long, shorter than a `memchr` call per field pays for (7 calls per line were ~20% of
/// reading a line).
fn find_commas(line: &[u8], commas: &mut [usize; 7]) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
    *commas = [usize::MAX; 7];
    let mut n = 0;
    let mut push = |at: usize| {
        if let Some(slot) = commas.get_mut(n) {
            *slot = at;
        }
        n += 1;
        n == 7
    };
    let mut words = line.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w) ^ COMMAS;
        // The high bit of each byte that is zero in `x` (a comma in the line), exactly: no
        // carry crosses a byte.
        let mut zero = !(((x & LOW7) + LOW7) | x | LOW7);
        while zero != 0 {
            if push(base + (zero.trailing_zeros() / 8) as usize) {
                return 7;
            }
            zero &= zero - 1;
        }
        base += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b',' && push(base + i) {
            return 7;
        }
    }
    n
}

/// Parses an optionally signed decimal integer, without overflow.
/// A task label of the FreeRTOS trace logger's older exporter, `[<core>/<task id>]<name>`
/// (`[0/0007]CS`; core and id decimal or `0x` hexadecimal): core, id and name. The logger
/// documents it (its docs/ "Task identity and labels", legacy label forms): the core is the
/// one the event happened on, and tasks are one across cores by their id.
fn freertos_label(label: &str) -> Option<(u64, u64, &str)> {
    let (inside, name) = label.strip_prefix('[')?.split_once(']')?;
    let (core, id) = inside.split_once('/')?;
    Some((freertos_number(core)?, freertos_number(id)?, name))
}

/// A decimal or `0x` hexadecimal number of a FreeRTOS label (digits only, no sign).
fn freertos_number(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn parse_int(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (neg, digits) = match b {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    if digits.len() <= 18 {
        // Up to 18 digits fit in an i64 whatever they are: no overflow to check.
        let mut v: i64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(d - b'0');
        }
        return Some(if neg { -v } else { v });
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        // Counted towards its sign, so that i64::MIN, whose magnitude no i64 holds, parses.
        let d = i64::from(d - b'0');
        v = v.checked_mul(10)?;
        v = if neg { v.checked_sub(d)? } else { v.checked_add(d)? };
    }
    Some(v)
}

/// The first 120 characters of `s`, for messages.
fn clip(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(120) {
        Some((i, _)) => Cow::Owned(format!("{}...", s.get(..i).unwrap_or(s))),
        None => Cow::Borrowed(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events as `ts|source|instance|type|target|instance|action|note|position`.
    struct Btf;

    impl crate::ingest::test_sink::Shape for Btf {
        fn event(e: &Event<'_>) -> String {
            format!(
                "{}|{}|{}|{}|{}|{}|{}|{:?}|{}",
                e.ts,
                e.source,
                e.source_instance,
                e.target_type,
                e.target,
                e.target_instance,
                e.action,
                e.note,
                e.pos
            )
        }
    }

    type Rec = crate::ingest::test_sink::Recorder<Btf>;

    fn run(text: &str) -> Rec {
        let mut sink = Rec::default();
        read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut sink).unwrap();
        sink
    }

    #[test]
    fn reads_header_and_scales_time() {
        let r = run("#Version 2.1.0\r\n#TIMESCALE us\r\n#creator  TA Simulator (14.01) \r\n\
                     5,Core_0,0,T,A,0,start\r\n");
        assert_eq!(r.unit, Some(TimeUnit::Us));
        assert!(r.meta.contains(&("version".into(), "2.1.0".into())));
        assert!(r.meta.contains(&("creator".into(), "TA Simulator (14.01)".into())));
        assert_eq!(r.events, ["5000|Core_0|0|T|A|0|start|None|line 4"]);
    }

    /// The FreeRTOS trace logger's older labels (`[<core>/<id>]<name>`: the event's core, then
    /// the task's id) name one task per core; its current exporter writes `<name>[<id>]`
    /// with the core as the source. Only its files are read so; once said.
    #[test]
    fn freertos_logger_labels_are_one_task_on_every_core() {
        let body = "1,Core_0,0,T,[0/0005]CS,0,preempt,create pri:3\n\
                    3,[1/0000],0,T,[1/0005]CS,0,resume,\n\
                    4,[0x1/0x0b]Med,0,T,[0X1/0xb]Med,0,resume,\n\
                    5,Core_1,0,STI,task,0,trigger,suspend CS[5]\n\
                    6,[1/5],0,T,[1/]x,0,resume,\n";
        let r = run(&format!("#version 2.2.0\n#creator FreeRTOS trace logger\n{body}"));
        assert_eq!(
            r.events,
            [
                "1|Core_0|0|T|CS[5]|0|preempt|Some(\"create pri:3\")|line 3",
                "3|Core_1|0|T|CS[5]|0|resume|None|line 4",
                "4|Core_1|0|T|Med[11]|0|resume|None|line 5",
                "5|Core_1|0|STI|task|0|trigger|Some(\"suspend CS[5]\")|line 6",
                // An id that is no number is no label.
                "6|Core_1|0|T|[1/]x|0|resume|None|line 7",
            ]
        );
        assert_eq!(r.kinds(), ["freertos_labels"]);
        assert!(r.diags[0].1.starts_with("line 3: FreeRTOS trace logger labels"), "{:?}", r.diags);
        // Another producer's names are its own.
        let r = run(&format!("#version 2.2.0\n#creator libBtf\n{body}"));
        assert_eq!(r.events[1], "3|[1/0000]|0|T|[1/0005]CS|0|resume|None|line 4");
        assert!(r.diags.is_empty(), "{:?}", r.diags);
    }

    #[test]
    fn note_is_rest_of_line_with_commas_and_spaces_trimmed() {
        let r = run(" 1 , R1 , 0 , SIG , speed , 0 , write , 42, and more \n2,C,0,T,A,0,resume,\n");
        assert_eq!(r.events[0], "1|R1|0|SIG|speed|0|write|Some(\"42, and more\")|line 1");
        assert_eq!(r.events[1], "2|C|0|T|A|0|resume|None|line 2");
    }

    #[test]
    fn instances_minus_one_and_empty() {
        let r = run("1,SIM,-1,STI,S,,trigger\n2,SIM,x,STI,S,0,trigger\n");
        assert_eq!(r.events[0], "1|SIM|-1|STI|S|-1|trigger|None|line 1");
        assert_eq!(r.events[1], "2|SIM|-1|STI|S|0|trigger|None|line 2");
        assert_eq!(r.diags[0].0, "bad_instance");
    }

    #[test]
    fn malformed_lines_are_diagnostics_and_reading_goes_on() {
        let r = run("1,a,0,T,A,0\nxx,a,0,T,A,0,start\n5,a,0,T,A,0,start\n3,a,0,T,A,0,preempt\n");
        let kinds: Vec<_> = r.diags.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(kinds, ["malformed_line", "malformed_line", "time_backwards"]);
        assert!(r.diags[0]
            .1
            .starts_with("line 1: expected at least 7 comma-separated fields, found 6"));
        assert!(r.diags[1].1.starts_with("line 2: time 'xx' is not an integer"));
        assert_eq!(r.events.len(), 2, "the backwards event is kept");
    }

    #[test]
    fn tables_comments_and_repeated_headers() {
        let r = run("#version 2.2.0\n#entityType\n#-0 T\n#entityTable\n#-0 TASK_A\n\
                     #entityTypeTable\n#-T TASK_A\n#-SEM S1\n# comment\n#version 2.1.0\n\
                     1,C,0,T,TASK_A,0,start\n# between data lines\n2,C,0,T,TASK_A,0,terminate\n");
        assert_eq!(r.events.len(), 2);
        assert_eq!(
            r.decl,
            [
                ("TASK_A".into(), None, Some(0)),
                ("TASK_A".into(), Some("T".into()), None),
                ("S1".into(), Some("SEM".into()), None)
            ]
        );
        let versions: Vec<_> = r.meta.iter().filter(|m| m.0 == "version").collect();
        assert_eq!(versions.last().unwrap().1, "2.1.0");
    }

    #[test]
    fn type_table_is_the_entity_type_block() {
        // BTF 2.1.5's example header: `#typeTable` (earlier files: `#entityType`), then the
        // entity table and the entity-type table, a comment among the header lines.
        let r = run("#version 1.0\n#creator TA-Toolsuite 12.06.1\n# Simulation of dualcore\n\
                     #timeScale ns\n#typeTable\n#-0 T\n#-1 R\n#entityTable\n#-0 Task_1ms\n\
                     #-2 Runnable_1ms_Init\n#entityTypeTable\n#-T Task_1ms\n\
                     #-R Runnable_1ms_Init\n0,S,0,T,Task_1ms,0,activate\n");
        assert!(r.diags.is_empty(), "{:?}", r.diags);
        assert!(r.meta.contains(&("entitytype.0".into(), "T".into())));
        assert!(r.meta.contains(&("entitytype.1".into(), "R".into())));
        assert_eq!(r.decl.len(), 4);
        assert_eq!(r.decl[3], ("Runnable_1ms_Init".into(), Some("R".into()), None));
        assert!(sniff(b"#typeTable\n#-0 T\n"));
    }

    #[test]
    fn numeric_lines_resolve_through_the_tables() {
        // BTF 2.1.5's numeric mode: the type column is a #typeTable id, source and target
        // #entityTable ids. An id no table lists is kept as written, with a warning; a line
        // with a type code is read as written, numbers and all (a name may be a number).
        let r = run("#typeTable\n#-0 T\n#-3 C\n#entityTable\n#-0 Task_1ms\n#-7 Core_1\n\
                     10,7,0,0,0,0,start\n11,9,0,0,0,0,preempt\n12,7,0,5,0,0,resume\n\
                     13,Core_1,0,3,7,0,idle\n14,7,0,T,0,0,terminate\n");
        assert_eq!(
            r.events,
            [
                "10|Core_1|0|T|Task_1ms|0|start|None|line 7",
                "11|9|0|T|Task_1ms|0|preempt|None|line 8",
                "12|Core_1|0|5|Task_1ms|0|resume|None|line 9",
                "13|Core_1|0|C|Core_1|0|idle|None|line 10",
                "14|7|0|T|0|0|terminate|None|line 11"
            ]
        );
        let diags: Vec<_> = r.diags.iter().map(|d| format!("{} {}", d.0, d.1)).collect();
        assert_eq!(
            diags,
            [
                "unknown_id line 8: numeric line: source id 9 is not in the #entityTable; kept \
                 as '9'",
                "unknown_id line 9: numeric line: type id 5 is not in the #typeTable; kept as '5'"
            ]
        );
    }

    #[test]
    fn picoseconds_and_unknown_timescale() {
        let r = run("#timeScale ps\n1500,C,0,T,A,0,start\n");
        assert_eq!(r.events[0].split('|').next(), Some("1"));
        assert_eq!(r.diags[0].0, "precision_lost");
        let mut sink = Rec::default();
        let e =
            read(&mut LineReader::new(&b"#timeScale min\n"[..]), "t.btf", &mut sink).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.btf: line 1: unknown #timeScale 'min' (expected ps, ns, us, ms or s)"
        );
    }

    #[test]
    fn header_only_file_has_no_events() {
        let r = run("#version 2.2.0\n#scenario priority_inversion\n");
        assert!(r.events.is_empty());
        assert!(r.meta.contains(&("scenario".into(), "priority_inversion".into())));
    }

    #[test]
    fn sniffs_btf_not_paraver() {
        assert!(sniff(b"#version 2.2.0\n"));
        assert!(sniff(b"# hello\n0,Core_0,0,T,A,0,start\n"));
        assert!(!sniff(b"#Paraver (01/01/2020 at 10:00):100_ns:0:1:1(1:1)\n"));
        assert!(!sniff(b"hello world\n"));
        assert!(!sniff(b"\x00\x01binary"));
        // A stray NUL: the header still says BTF; without one, data lines do not.
        assert!(sniff(b"#version 2.1.0\n5,Core_0,0,T,A,0,st\x00art\n"));
        assert!(!sniff(b"5,Core_0,0,T,A,0,st\x00art\n6,Core_0,0,T,A,0,start\n"));
        // One bad line at the top is a record-level problem, not another format.
        assert!(sniff(b"0,STI,0,T,A\n0,STI,0,T,A,0,activate\n1,Core_0,0,T,A,0,start\n"));
        assert!(!sniff(b"a,b\nc,d\n0,STI,0,T,A,0,activate\n"));
        assert!(!sniff(b"0,STI,0,T,A\n"));
        // A hardware-trace export whose header row is damaged: seven fields after a number,
        // but what a BTF line needs (target, action) empty on most rows.
        let export = b"Indx,Sorce,Type,Address,Destination,Timestamp,Data\n\
            0,Core0,Data,0x20000000,,0,1\n1,Core1,Data,0x20000004,,50,3\n\
            2,Core0,Branch,0x1010,0x2000,100,\n3,Core1,Branch,0x1020,0x2100,150,\n";
        assert!(!sniff(export));
        // The same rows with a target and an action are BTF-shaped, whatever they mean.
        assert!(sniff(b"0,Core0,Data,0x20000000,X,0,1\n1,Core1,Data,0x20000004,X,50,3\n"));
    }

    #[test]
    fn commas_are_found_as_a_byte_scan_finds_them() {
        // Every byte next to a comma that word-at-a-time tricks can mistake for one ('-' is
        // ',' ^ 1, '+' is ',' - 1; UTF-8 bytes have the high bit set), at every offset.
        let pieces: [&[u8]; 9] =
            [b",", b"-", b"+", b"-1", b"\xc3\xa9", b"ab", b",,", b"\x80", b" "];
        let mut seed = 7u64;
        for _ in 0..20_000 {
            let mut line = Vec::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            for k in 0..(seed >> 59) {
                line.extend_from_slice(pieces[((seed >> (k * 3 % 56)) % 9) as usize]);
            }
            let want: Vec<usize> = line
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b',')
                .map(|(i, _)| i)
                .take(7)
                .collect();
            let mut got = [0; 7];
            let n = find_commas(&line, &mut got);
            assert_eq!(n, want.len(), "{line:?}");
            assert_eq!(&got[..n], &want[..], "{line:?}");
            assert!(got[n..].iter().all(|&g| g == usize::MAX));
        }
    }

    #[test]
    fn parse_int_rejects_overflow_and_junk() {
        assert_eq!(parse_int("-12"), Some(-12));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int("-9223372036854775809"), None);
        assert_eq!(parse_int("9223372036854775808"), None);
        assert_eq!(parse_int("1.5"), None);
        assert_eq!(parse_int("999999999999999999"), Some(999_999_999_999_999_999));
        assert_eq!(parse_int("-999999999999999999"), Some(-999_999_999_999_999_999));
        assert_eq!(parse_int("1234567890123456789"), Some(1_234_567_890_123_456_789));
        assert_eq!(parse_int("12345678901234567x"), None);
        assert_eq!(parse_int("-"), None);
        assert_eq!(parse_int(""), None);
    }
}
