//! The row loop: header, fields, time, symbols, one `events` row per record, then the
//! system events the mapping makes of it.
//!
//! Here: the header ([`Reader::start`]) and the row loop ([`Reader::rows`]): the first pass
//! that finds the cores and whether the file is in time order ([`Plan`]), then the rows read
//! in file order or merged per core by time, ties in file order. `stream.rs` holds one
//! stream of rows and its clock; `emit.rs` makes a timed record's `events` row and system
//! events.
mod emit;
mod stream;

pub use emit::{classify, Kind};

use super::clock::{Base, Clock};
use super::columns::Columns;
use super::elf::Symbols;
use super::fields::{detect_delimiter, excel_sep, split};
use super::map::{Encoding, Mapping};
use super::system::System;
use crate::ingest::lines::LineReader;
use crate::ingest::{Diagnostic, Severity, Sink};
use crate::model::{Pos, TimeUnit};
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use stream::{Reopened, Stream, Timing};

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
        message: format!("line longer than {} bytes; skipped", crate::ingest::lines::MAX_LINE),
    })
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
                            crate::ingest::lines::MAX_LINE
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
                    crate::ingest::input_lost(sink, lines.line_number(), &e)?;
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
                        crate::ingest::input_lost(sink, s.lines.line_number(), &e)?;
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
                crate::ingest::lines::text_of(line, Pos::Line(number), "row", sink)?;
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
