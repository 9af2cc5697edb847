//! The row loop: header, fields, time, symbols, one `events` row per record, then the
//! system events the mapping makes of it.
use super::super::input::{Compression, SmallInput};
use super::super::lines::LineReader;
use super::super::{Diagnostic, Severity, Sink};
use super::clock::{midpoint, Base, Clock, TimeError};
use super::columns::Columns;
use super::elf::Symbols;
use super::fields::{detect_delimiter, excel_sep, parse_int, split};
use super::map::{Encoding, Mapping};
use super::system::{At, Entry, System};
use crate::model::{Event, Pos, TimeUnit};
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Read;
use std::path::Path;

/// Rows held between two timestamp messages (marker encoding) before they are given the
/// last one's time: the bound on what a marker-less stretch can hold in memory.
pub const MAX_PENDING: usize = 1 << 16;

/// Core of rows when the export has no core column (and the mapping names none).
pub const DEFAULT_CORE: &str = "Core_0";

/// Distinct cores kept; the rows of further ones go on [`OTHER_CORE`].
pub const MAX_CORES: usize = 1 << 12;

/// The core of rows whose own core is beyond [`MAX_CORES`] (their core is in the note).
pub const OTHER_CORE: &str = "Core_other";

/// Streams merged at most: the first cores have one each, further cores share the last
/// (their rows in file order). Each costs a reader of the file (a 1 MiB line buffer, up to
/// 16 MiB for a long line) and up to [`MAX_PENDING`] rows held between timestamp messages.
pub const MAX_STREAMS: usize = 16;

/// A `malformed_line` for a line cut at the line bound.
fn malformed(line: u64, sink: &mut dyn Sink) -> Result<()> {
    sink.diagnostic(Diagnostic {
        severity: Severity::Error,
        kind: "malformed_line",
        pos: Pos::Line(line),
        ts: None,
        message: format!("line longer than {} bytes; skipped", super::super::lines::MAX_LINE),
    })
}

/// What a record is, from its type (and access) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A data write.
    Write,
    /// A data read.
    Read,
    /// A branch or call (to its destination).
    Branch,
    /// A return.
    Return,
    /// An exception or interrupt (to its destination).
    Interrupt,
    /// An OS-aware context record (S32DS "Software Context", Nexus ownership trace): its data
    /// is the id of the task now running.
    Context,
    /// Code executed at its address (S32DS "Linear", TRACE32 `ptrace`/`exec`).
    Flow,
    /// Anything else (Info, Error, Custom).
    Other,
}

/// The kind of a record whose type field is `ty` and access field `access`.
pub fn classify(ty: &str, access: &str) -> Kind {
    let t = ty.trim().to_ascii_lowercase();
    let a = access.trim().to_ascii_lowercase();
    let access_kind = match a.as_str() {
        "r" | "rd" | "read" => Some(Kind::Read),
        "w" | "wr" | "write" => Some(Kind::Write),
        _ => None,
    };
    if t.starts_with("wr") || t.contains("write") {
        return Kind::Write;
    }
    if t.starts_with("rd") || t.contains("read") {
        return Kind::Read;
    }
    match t.as_str() {
        "data" | "data trace" | "dtm" | "" if access_kind.is_some() => {
            access_kind.unwrap_or(Kind::Write)
        }
        "data" | "data trace" | "dtm" => Kind::Write,
        "return" | "ret" | "rfi" | "exception return" => Kind::Return,
        "interrupt" | "exception" | "irq" | "trap" => Kind::Interrupt,
        "software context" | "context" | "ownership" | "otm" => Kind::Context,
        "linear" | "ptrace" | "exec" | "fetch" | "program" | "sequential" => Kind::Flow,
        _ if ["branch", "call", "jump"].iter().any(|w| t.contains(w)) => Kind::Branch,
        _ => access_kind.unwrap_or(Kind::Other),
    }
}

/// One record's fields.
#[derive(Debug, Clone, Default)]
struct Record {
    pos: u64,
    time: String,
    ty: String,
    access: String,
    address: String,
    destination: String,
    data: String,
    symbol: String,
    core: String,
}

/// Reads the rows of an export.
pub struct Reader<'a> {
    map: &'a Mapping,
    syms: Option<&'a Symbols>,
    cols: Columns,
    delim: u8,
    width: usize,
    encoding: Encoding,
    base: Base,
    system: System,
    cores: BTreeSet<String>,
    /// Cores with a stream of their own when rows are merged per core (first pass).
    streams: BTreeMap<String, usize>,
    /// The stream of cores beyond [`MAX_STREAMS`] - 1.
    rest: Option<usize>,
    /// Unknown task values reported already.
    unknown_values: BTreeSet<i128>,
    /// The unit times are in once read (`ns`, or `cycles` of unknown rate).
    unit: &'static str,
    /// Rows read.
    rows: u64,
}

/// `unit` as a [`TimeUnit`] (ps per unit).
fn unit_of(base: Base) -> TimeUnit {
    match base {
        Base::Time(1) => TimeUnit::Ps,
        Base::Time(1_000) => TimeUnit::Ns,
        Base::Time(1_000_000) => TimeUnit::Us,
        Base::Time(1_000_000_000) => TimeUnit::Ms,
        Base::Time(_) => TimeUnit::S,
        Base::Cycles(Some(_)) => TimeUnit::Ns,
        Base::Cycles(None) => TimeUnit::Tick,
    }
}

/// A symbol column's text without a TRACE32 path (`\\app\\main\\f` → `f`), and its
/// `+offset` split off: (name, whether it had an offset).
fn symbol_name(text: &str) -> Option<(&str, bool)> {
    let t = text.trim();
    let t = t.rsplit('\\').next().unwrap_or(t).trim();
    if t.is_empty() {
        return None;
    }
    match t.split_once('+') {
        Some((n, _)) => Some((n.trim(), true)),
        None => Some((t, false)),
    }
}

impl<'a> Reader<'a> {
    /// Reads the header (the first line that is not empty or a `#` comment), chooses the
    /// columns and the clock, and tells the sink the unit and metadata.
    pub fn start<R: Read>(
        lines: &mut LineReader<R>,
        path: &'a str,
        map: &'a Mapping,
        syms: Option<&'a Symbols>,
        sink: &mut dyn Sink,
    ) -> Result<Reader<'a>> {
        // Excel's `sep=;` line before the header names the delimiter.
        let mut sep: Option<u8> = None;
        let header = loop {
            let (line, number) = match lines.next_line() {
                Ok(Some((_, n, true))) => {
                    return Err(Error::input(
                        path,
                        format!("line {n}"),
                        format!(
                            "header row longer than {} bytes: not a hardware-trace export",
                            super::super::lines::MAX_LINE
                        ),
                    ))
                }
                Ok(Some((l, n, _))) => (l, n),
                Ok(None) => {
                    return Err(Error::input(
                        path,
                        "",
                        "no header row: not a hardware-trace export",
                    ))
                }
                Err(e) => return Err(Error::input(path, "line 1", e.to_string())),
            };
            let text = String::from_utf8_lossy(line);
            let text = text.trim_start_matches('\u{feff}').trim_end_matches(['\r', '\n']);
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            if let Some(d) = excel_sep(text) {
                sep = sep.or(Some(d));
                continue;
            }
            break (text.to_string(), number);
        };
        let (header, hline) = header;
        let delim = map.delimiter.or(sep).unwrap_or_else(|| detect_delimiter(&header));
        let cols = Columns::new(&header, delim, map)
            .map_err(|m| Error::input(path, format!("line {hline}"), format!("mapping: {m}")))?;
        if cols.time.is_none() {
            return Err(Error::input(
                path,
                format!("line {hline}"),
                format!(
                    "no time column in the header ({}): expected Timestamp, Time, ti.back or \
                     ti.zero, or columns.time in the mapping file (--hw-map)",
                    cols.names.join(", ")
                ),
            ));
        }
        let encoding = map.encoding.or(cols.header_encoding).unwrap_or(Encoding::Absolute);
        let base = if map.unit.as_deref() == Some("cycles") {
            Base::Cycles(map.frequency_hz)
        } else {
            Base::Time(map.unit_ps.or(cols.header_unit).unwrap_or(1_000))
        };
        let unit = unit_of(base);
        sink.time_unit(unit);
        sink.meta("hw.columns", &cols.describe());
        let enc = match encoding {
            Encoding::Absolute => "absolute",
            Encoding::Delta => "delta",
            Encoding::Marker => "marker",
        };
        sink.meta("hw.time_encoding", enc);
        let delim_name = match delim {
            b'\t' => "tab".to_string(),
            d => char::from(d).to_string(),
        };
        sink.meta("hw.delimiter", &delim_name);
        match base {
            Base::Cycles(Some(hz)) => sink.meta("hw.cycle_rate_hz", &hz.to_string()),
            Base::Cycles(None) => sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unknown_cycle_rate",
                pos: Pos::None,
                ts: None,
                message: "times are cycles of unknown rate: the tables hold cycles \
                          (captures.time_unit = tick); give time.frequency_hz in the mapping \
                          file to get nanoseconds"
                    .into(),
            })?,
            Base::Time(_) => {
                if map.unit_ps.is_none() && cols.header_unit.is_none() {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Info,
                        kind: "time_unit_assumed",
                        pos: Pos::Line(hline),
                        ts: None,
                        message: "neither the header nor the mapping gives the time unit: \
                                  times without a unit suffix are taken as ns"
                            .into(),
                    })?;
                }
            }
        }
        if let Some(s) = syms {
            sink.meta("hw.symbols", &s.len().to_string());
        }
        let width = cols.names.len();
        Ok(Reader {
            map,
            syms,
            cols,
            delim,
            width,
            encoding,
            base,
            system: System::default(),
            cores: BTreeSet::new(),
            streams: BTreeMap::new(),
            rest: None,
            unknown_values: BTreeSet::new(),
            unit: if base == Base::Cycles(None) { "cycles" } else { "ns" },
            rows: 0,
        })
    }

    /// Reads every row after the header. With a core column and `reopen` (the export's
    /// path) a regular file, a first pass over `lines` finds the cores and whether the file
    /// is in one time order; rows are then read again from the file, one reader per core
    /// when they need merging ([`Plan`]). Otherwise rows are taken in file order from
    /// `lines`.
    pub fn rows<R: Read>(
        &mut self,
        lines: &mut LineReader<R>,
        reopen: Option<&Path>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let reopen = match (reopen, self.cols.core.is_some()) {
            (Some(p), true) if std::fs::metadata(p).is_ok_and(|m| m.is_file()) => Some(p),
            (Some(_), true) => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "no_prepass",
                    pos: Pos::None,
                    ts: None,
                    message: "the export is not a regular file (a pipe?) and cannot be read \
                              twice: rows are taken in file order, not merged per core"
                        .into(),
                })?;
                None
            }
            _ => None,
        };
        let Some(path) = reopen else {
            sink.meta("hw.order", "file");
            let mut s = Stream::new(lines, None, (0, u64::MAX), self.timing(), true);
            return self.drain(&mut s, sink);
        };
        let plan = self.scan(lines, sink)?;
        let open = |p: &Path| -> Result<LineReader<Reopened>> {
            Ok(LineReader::new(Reopened::open(p).map_err(|e| Error::io(p, e))?))
        };
        if !plan.merge {
            sink.meta("hw.order", "file");
            let Some(&(first, last)) = plan.spans.first() else {
                return self.finish(sink);
            };
            let span = plan.spans.iter().fold((first, last), |a, b| (a.0.min(b.0), a.1.max(b.1)));
            let mut lines = open(path)?;
            let mut s = Stream::new(&mut lines, None, span, self.timing(), false);
            return self.drain(&mut s, sink);
        }
        sink.meta("hw.order", &format!("merged per core ({} streams)", plan.spans.len()));
        self.streams = plan.names;
        self.rest = plan.rest;
        let mut readers = Vec::new();
        for _ in &plan.spans {
            readers.push(open(path)?);
        }
        let mut streams: Vec<Stream<'_, Reopened>> = readers
            .iter_mut()
            .zip(&plan.spans)
            .enumerate()
            .map(|(i, (l, &span))| Stream::new(l, Some(i), span, self.timing(), false))
            .collect();
        loop {
            let mut best: Option<(usize, (i64, u64))> = None;
            for (i, s) in streams.iter_mut().enumerate() {
                self.fill(s, sink)?;
                if let Some(t) = s.queue.front() {
                    let k = (t.key, t.rec.pos);
                    if best.is_none_or(|(_, b)| k < b) {
                        best = Some((i, k));
                    }
                }
            }
            let Some(t) = best.and_then(|(i, _)| streams.get_mut(i)?.queue.pop_front()) else {
                break;
            };
            self.emit(t.rec, t.ts, sink)?;
        }
        self.finish(sink)
    }

    /// A clock and marker state for one stream.
    fn timing(&self) -> Timing {
        Timing {
            clock: Clock::new(self.encoding, self.base),
            pending: Vec::new(),
            before_first: None,
            after_last: None,
            unit: self.unit,
            key: i64::MIN,
        }
    }

    /// Every row of one stream, in its order.
    fn drain<R: Read>(&mut self, s: &mut Stream<'_, R>, sink: &mut dyn Sink) -> Result<()> {
        loop {
            self.fill(s, sink)?;
            let Some(t) = s.queue.pop_front() else { break };
            self.emit(t.rec, t.ts, sink)?;
        }
        self.finish(sink)
    }

    /// The stream of a row whose core field is `core`, by its core's name: one of the first
    /// [`MAX_STREAMS`] - 1 cores, else the shared last one.
    fn stream_of(&self, core: &str) -> Option<usize> {
        let text = core.trim();
        let name = match self.map.cores.get(text) {
            _ if text.is_empty() => DEFAULT_CORE,
            Some(n) => n.as_str(),
            None => text,
        };
        self.streams.get(name).copied().or(self.rest)
    }

    /// The first pass: every row's core and (absolute times) time, without diagnostics but
    /// those of lines no stream reads (cut lines, a lost input).
    fn scan<R: Read>(&mut self, lines: &mut LineReader<R>, sink: &mut dyn Sink) -> Result<Plan> {
        let mut plan = Plan::default();
        let mut clock = Clock::new(Encoding::Absolute, self.base);
        let mut sorted = true;
        let mut last_ts: Option<i64> = None;
        let mut prev: Option<usize> = None;
        let mut changes = 0u64;
        loop {
            let (line, number, truncated) = match lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    super::super::input_lost(sink, lines.line_number(), &e)?;
                    break;
                }
            };
            if truncated {
                malformed(number, sink)?;
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            let (fields, _) = split(text, self.delim);
            let field = |i: Option<usize>| i.and_then(|i| fields.get(i)).map_or("", |f| f.as_str());
            let name = self.core_name(field(self.cols.core));
            let id = match plan.names.get(name.as_str()) {
                Some(&id) => id,
                None if plan.names.len() + 1 < MAX_STREAMS => {
                    let id = plan.spans.len();
                    plan.names.insert(name, id);
                    plan.spans.push((number, number));
                    id
                }
                None => *plan.rest.get_or_insert_with(|| {
                    plan.spans.push((number, number));
                    plan.spans.len() - 1
                }),
            };
            if let Some(span) = plan.spans.get_mut(id) {
                span.1 = number;
            }
            if prev.is_some_and(|p| p != id) {
                changes += 1;
            }
            prev = Some(id);
            if self.encoding == Encoding::Absolute && sorted {
                if let Ok(r) = clock.read(field(self.cols.time)) {
                    sorted = last_ts.is_none_or(|l| r.ns >= l);
                    last_ts = Some(r.ns);
                }
            }
        }
        // Each core one block: a file listed core by core.
        let blocks = changes + 1 == plan.spans.len() as u64;
        plan.merge = plan.spans.len() > 1
            && match self.encoding {
                Encoding::Absolute => !sorted,
                Encoding::Delta | Encoding::Marker => blocks,
            };
        Ok(plan)
    }

    /// Reads rows of stream `s` until one is timed (or its end).
    fn fill<R: Read>(&mut self, s: &mut Stream<'_, R>, sink: &mut dyn Sink) -> Result<()> {
        while s.queue.is_empty() && !s.done {
            let (line, number, truncated) = match s.lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    s.end(sink)?;
                    break;
                }
                Err(e) => {
                    if s.direct {
                        super::super::input_lost(sink, s.lines.line_number(), &e)?;
                    }
                    s.end(sink)?;
                    break;
                }
            };
            if number < s.span.0 {
                continue;
            }
            if number > s.span.1 {
                s.end(sink)?;
                break;
            }
            if truncated {
                if s.direct {
                    malformed(number, sink)?;
                }
                continue;
            }
            if let (Some(id), Some(i)) = (s.id, self.cols.core) {
                // Another stream's row, told from its bytes without decoding the line (a
                // row with quotes or a core that is not UTF-8 is looked at below).
                if memchr::memchr(b'"', line).is_none() {
                    let field = line.split(|b| *b == self.delim).nth(i).unwrap_or_default();
                    if let Ok(core) = std::str::from_utf8(field) {
                        if self.stream_of(core) != Some(id) {
                            continue;
                        }
                    }
                }
            }
            let (text, utf8) = match std::str::from_utf8(line) {
                Ok(t) => (std::borrow::Cow::Borrowed(t), true),
                Err(_) => (String::from_utf8_lossy(line), false),
            };
            // Only the line end goes: a tab-delimited row's empty first or last field is a
            // field (the fields themselves are trimmed when split).
            let text = text.trim_end_matches(['\r', '\n']);
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            if let (Some(id), Some(i)) = (s.id, self.cols.core) {
                // Every reader looks at every row of its span: the core field is found
                // without splitting the row when it has no quotes (split trims the same).
                let mine = if text.contains('"') {
                    let (fields, _) = split(text, self.delim);
                    self.stream_of(fields.get(i).map_or("", |f| f.as_str())) == Some(id)
                } else {
                    let core = text.split(char::from(self.delim)).nth(i).unwrap_or("");
                    self.stream_of(core) == Some(id)
                };
                if !mine {
                    continue;
                }
            }
            let (fields, open_quote) = split(text, self.delim);
            if !utf8 {
                super::super::lines::text_of(line, Pos::Line(number), "row", sink)?;
            }
            let rec = self.record(fields, open_quote, number, sink)?;
            self.rows += 1;
            s.timing.row(rec, sink, &mut s.queue)?;
        }
        Ok(())
    }

    fn record(
        &self,
        mut fields: Vec<String>,
        open_quote: bool,
        line: u64,
        sink: &mut dyn Sink,
    ) -> Result<Record> {
        // A trailing delimiter (on the rows, the header, or both) makes an empty last field
        // or an unnamed last column: holding nothing, it is no bad row.
        while fields.len() > self.width && fields.last().is_some_and(String::is_empty) {
            fields.pop();
        }
        let unnamed_tail = self.width > fields.len()
            && self.cols.names.get(fields.len()..).is_some_and(|t| t.iter().all(String::is_empty));
        if (fields.len() != self.width && !unnamed_tail) || open_quote {
            let what = if open_quote {
                "a quote is not closed (records do not span lines): the field runs to the end \
                 of the line"
                    .to_string()
            } else if fields.len() < self.width {
                format!(
                    "{} fields, the header has {}: the missing ones are empty",
                    fields.len(),
                    self.width
                )
            } else {
                format!(
                    "{} fields, the header has {}: the extra ones are ignored",
                    fields.len(),
                    self.width
                )
            };
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "bad_row",
                pos: Pos::Line(line),
                ts: None,
                message: format!("{what}; row kept"),
            })?;
        }
        // Each field is moved out once (a column in two roles is read by the first only).
        let mut get = |i: Option<usize>| {
            i.and_then(|i| fields.get_mut(i)).map(std::mem::take).unwrap_or_default()
        };
        Ok(Record {
            pos: line,
            time: get(self.cols.time),
            ty: get(self.cols.kind),
            access: get(self.cols.access),
            address: get(self.cols.address),
            destination: get(self.cols.destination),
            data: get(self.cols.data),
            symbol: get(self.cols.symbol),
            core: get(self.cols.core),
        })
    }

    fn finish(&mut self, sink: &mut dyn Sink) -> Result<()> {
        self.system.finish(sink)?;
        sink.meta("hw.rows", &self.rows.to_string());
        Ok(())
    }

    /// The name of the core a row's core field names.
    fn core_name(&self, text: &str) -> String {
        let text = text.trim();
        if text.is_empty() {
            DEFAULT_CORE.to_string()
        } else {
            self.map.cores.get(text).cloned().unwrap_or_else(|| text.to_string())
        }
    }

    /// The core of a row, and whether it is one beyond [`MAX_CORES`] (then [`OTHER_CORE`]).
    fn core_of(&mut self, rec: &Record, sink: &mut dyn Sink) -> Result<(String, bool)> {
        let name = self.core_name(&rec.core);
        if !self.cores.contains(&name) && self.cores.len() >= MAX_CORES {
            if !self.cores.contains(OTHER_CORE) {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "too_many_entities",
                    pos: Pos::Line(rec.pos),
                    ts: None,
                    message: format!(
                        "{name}: more than {MAX_CORES} cores; the rows of this and further ones \
                         are on {OTHER_CORE} (their core in the note, as core=...), with no \
                         system event"
                    ),
                })?;
                self.declare_core(OTHER_CORE, sink);
            }
            return Ok((OTHER_CORE.to_string(), true));
        }
        self.declare_core(&name, sink);
        Ok((name, false))
    }

    fn declare_core(&mut self, name: &str, sink: &mut dyn Sink) {
        if !self.cores.contains(name) {
            self.cores.insert(name.to_string());
            sink.declare_entity(name, Some("C"), None);
        }
    }

    fn number(
        &self,
        text: &str,
        what: &str,
        radix: u32,
        at: (Pos, i64),
        sink: &mut dyn Sink,
    ) -> Result<Option<i128>> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        match parse_int(text, radix) {
            Some(v) => Ok(Some(v)),
            None => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_field",
                    pos: at.0,
                    ts: Some(at.1),
                    message: format!("{what} '{text}' is not a number; row kept without it"),
                })?;
                Ok(None)
            }
        }
    }

    /// A number read from an address field as an address: a negative one (or one beyond 64
    /// bits) is none, and said.
    fn address(
        &self,
        v: Option<i128>,
        text: &str,
        what: &str,
        at: (Pos, i64),
        sink: &mut dyn Sink,
    ) -> Result<Option<u64>> {
        let Some(v) = v else { return Ok(None) };
        match u64::try_from(v) {
            Ok(a) => Ok(Some(a)),
            Err(_) => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_field",
                    pos: at.0,
                    ts: Some(at.1),
                    message: format!(
                        "{what} '{}' is not an address (negative or beyond 64 bits); row kept \
                         without it",
                        text.trim()
                    ),
                })?;
                Ok(None)
            }
        }
    }

    /// One record at `ts`: its `events` row, then its system events.
    fn emit(&mut self, rec: Record, ts: i64, sink: &mut dyn Sink) -> Result<()> {
        let pos = Pos::Line(rec.pos);
        let (core, other) = self.core_of(&rec, sink)?;
        let ar = self.map.address_radix;
        let addr = self.number(&rec.address, "address", ar, (pos, ts), sink)?;
        let dest = self.number(&rec.destination, "destination", ar, (pos, ts), sink)?;
        let data = self.number(&rec.data, "data", self.map.data_radix, (pos, ts), sink)?;
        let addr = self.address(addr, &rec.address, "address", (pos, ts), sink)?;
        let dest = self.address(dest, &rec.destination, "destination", (pos, ts), sink)?;
        let kind = classify(&rec.ty, &rec.access);
        let syms = self.syms;
        let hit = |a: Option<u64>| a.and_then(|a| syms?.lookup(a));
        let (addr_hit, dest_hit) = (hit(addr), hit(dest));
        let shown = |h: Option<super::elf::Hit<'_>>| {
            h.map(|h| {
                if h.offset == 0 {
                    format!(" <{}>", h.name)
                } else {
                    format!(" <{}+0x{:x}>", h.name, h.offset)
                }
            })
            .unwrap_or_default()
        };
        let mut note = Vec::new();
        if other {
            note.push(format!("core={}", rec.core.trim()));
        }
        if let Some(a) = addr {
            note.push(format!("addr=0x{a:08x}{}", shown(addr_hit)));
        }
        if let Some(d) = dest {
            note.push(format!("dest=0x{d:08x}{}", shown(dest_hit)));
        }
        if !rec.symbol.trim().is_empty() {
            note.push(format!("sym={}", rec.symbol.trim()));
        }
        if !rec.data.trim().is_empty() {
            note.push(format!("data={}", rec.data.trim()));
        }
        if !rec.access.trim().is_empty() {
            note.push(format!("access={}", rec.access.trim()));
        }
        let note = note.join(", ");
        let action = {
            let t = rec.ty.trim().to_lowercase().replace(' ', "_");
            if t.is_empty() {
                "record".to_string()
            } else {
                t
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let value = data.map(|v| v as f64);
        sink.event(&Event {
            ts,
            source: &core,
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action: &action,
            note: (!note.is_empty()).then_some(note.as_str()),
            value,
            core: Some(&core),
            pos,
        })?;
        if other || (!self.map.has_system() && self.map.tasks.is_empty()) {
            return Ok(());
        }
        let at = At { ts, pos, core: &core };
        let sym_col = symbol_name(&rec.symbol);
        match kind {
            Kind::Write => {
                // The variable: the ELF object at the address, else the export's symbol.
                let name = match addr_hit {
                    Some(h) if !h.func => Some(h.name.to_string()),
                    _ => sym_col.map(|(n, _)| n.to_string()),
                };
                self.write(addr, name.as_deref(), data, at, sink)?;
            }
            Kind::Context => {
                if let Some(v) = data {
                    let task = self.task_of(v, at, sink)?;
                    self.system.switch(task.as_deref(), at, sink)?;
                }
            }
            Kind::Branch | Kind::Interrupt | Kind::Flow => {
                let target = if kind == Kind::Flow { addr } else { dest.or(addr) };
                let target_hit = if kind == Kind::Flow { addr_hit } else { dest_hit.or(addr_hit) };
                let entered = match (target_hit, syms) {
                    (Some(h), _) if h.func && (h.offset == 0 || kind == Kind::Interrupt) => {
                        Some(h.name.to_string())
                    }
                    (_, Some(_)) if target.is_some() => None,
                    _ => match sym_col {
                        Some((n, off)) if !off || kind == Kind::Interrupt => Some(n.to_string()),
                        _ => None,
                    },
                };
                let isr_row = kind == Kind::Interrupt && self.map.isrs.is_empty();
                let entered = match (entered, isr_row, target) {
                    (Some(n), _, _) => Some(n),
                    (None, true, Some(t)) => Some(format!("IRQ@0x{t:x}")),
                    _ => None,
                };
                // With `isrs` mapped, an interrupt row into anything else (a vector table)
                // opens no call: the handler's own entry does, and its return closes it.
                let vector = kind == Kind::Interrupt
                    && !isr_row
                    && entered.as_deref().is_some_and(|f| !self.map.is_isr(f));
                let from = addr_hit.filter(|h| h.func).map(|h| h.name.to_string());
                if vector {
                    self.system.interrupted_from(&core, from.as_deref(), true);
                }
                if let Some(f) = entered.filter(|_| !vector) {
                    if self.system.top(&core) != Some(f.as_str()) {
                        let e = if isr_row || self.map.is_isr(&f) {
                            Entry::Isr
                        } else if self.map.is_runnable(&f) {
                            Entry::Runnable
                        } else if self.map.is_terminate(&f) {
                            Entry::Terminate
                        } else {
                            Entry::Plain
                        };
                        if e == Entry::Isr {
                            self.system.interrupted_from(&core, from.as_deref(), false);
                        }
                        self.system.enter(&f, e, at, sink)?;
                    }
                }
            }
            Kind::Return => {
                let to = dest_hit.filter(|h| h.func).map(|h| h.name.to_string());
                let from = addr_hit.filter(|h| h.func).map(|h| h.name.to_string());
                self.system.leave(from.as_deref(), to.as_deref(), at, sink)?;
            }
            Kind::Read | Kind::Other => {}
        }
        Ok(())
    }

    /// A data write: a task switch when the variable is a "current task" one, a signal
    /// write when it is a mapped signal.
    fn write(
        &mut self,
        addr: Option<u64>,
        name: Option<&str>,
        data: Option<i128>,
        at: At<'_>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let task_core = self.map.task_var_core(addr, name).map(str::to_string);
        let signal = task_core.is_none() && self.map.is_signal(addr, name);
        if task_core.is_none() && !signal {
            return Ok(());
        }
        let shown = name
            .map_or_else(|| addr.map(|a| format!("0x{a:x}")).unwrap_or_default(), str::to_string);
        let Some(v) = data else {
            return sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "missing_value",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!("write of {shown} with no data value: no system event"),
            });
        };
        match task_core {
            Some(core) => {
                self.declare_core(&core, sink);
                let task = self.task_of(v, at, sink)?;
                let at = At { core: &core, ..at };
                self.system.switch(task.as_deref(), at, sink)
            }
            None => self.system.signal(&shown, v, at, sink),
        }
    }

    /// The task a "current task" value names (`None`: idle).
    fn task_of(&mut self, v: i128, at: At<'_>, sink: &mut dyn Sink) -> Result<Option<String>> {
        if self.map.idle.contains(&v) {
            return Ok(None);
        }
        if let Some(t) = self.map.tasks.get(&v) {
            return Ok(Some(t.clone()));
        }
        let name = format!("TASK_{v}");
        if self.unknown_values.len() < 4096 && self.unknown_values.insert(v) {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unknown_task_value",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!(
                    "current-task value {v} is not in the mapping's tasks (nor idle): the task \
                     is named {name}"
                ),
            })?;
        }
        Ok(Some(name))
    }
}

/// The export read again: a plain file as it is (no hash: the first pass made it), a
/// compressed one decoded with a small read-ahead.
enum Reopened {
    Plain(std::fs::File),
    Packed(Box<SmallInput>),
}

impl Reopened {
    fn open(path: &Path) -> std::io::Result<Reopened> {
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
struct Timed {
    rec: Record,
    ts: i64,
    key: i64,
}

/// What the first pass found: the line span of each stream's rows, the cores with their own
/// stream, the one shared by further cores, and whether rows need merging.
#[derive(Default)]
struct Plan {
    spans: Vec<(u64, u64)>,
    names: BTreeMap<String, usize>,
    rest: Option<usize>,
    merge: bool,
}

/// One reader of rows: the whole file in its order (`id` none), or the rows of one stream.
struct Stream<'l, R> {
    lines: &'l mut LineReader<R>,
    id: Option<usize>,
    /// Lines of its first and last row.
    span: (u64, u64),
    timing: Timing,
    queue: VecDeque<Timed>,
    done: bool,
    /// Reading the export's first (only) pass: says what lines it cannot read.
    direct: bool,
}

impl<'l, R: Read> Stream<'l, R> {
    fn new(
        lines: &'l mut LineReader<R>,
        id: Option<usize>,
        span: (u64, u64),
        timing: Timing,
        direct: bool,
    ) -> Self {
        Stream { lines, id, span, timing, queue: VecDeque::new(), done: false, direct }
    }

    fn end(&mut self, sink: &mut dyn Sink) -> Result<()> {
        self.done = true;
        self.timing.finish(sink, &mut self.queue)
    }
}

/// The clock of one stream, with the rows it holds between timestamp messages.
struct Timing {
    clock: Clock,
    /// Rows waiting for the next timestamp message (marker encoding).
    pending: Vec<Record>,
    /// Rows before the first timestamp message: first line, count, and how many of them
    /// were placed at 0 because more than [`MAX_PENDING`] waited.
    before_first: Option<(u64, u64, u64)>,
    /// Rows after the last timestamp message: first line, count.
    after_last: Option<(u64, u64)>,
    /// The unit times are in once read (`ns`, or `cycles` of unknown rate).
    unit: &'static str,
    /// Latest time given out.
    key: i64,
}

impl Timing {
    fn out(&mut self, rec: Record, ts: i64, out: &mut VecDeque<Timed>) {
        self.key = self.key.max(ts);
        out.push_back(Timed { rec, ts, key: self.key });
    }

    /// Times a record, holding it while it waits for a timestamp message.
    fn row(&mut self, rec: Record, sink: &mut dyn Sink, out: &mut VecDeque<Timed>) -> Result<()> {
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
