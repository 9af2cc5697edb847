//! Paraver `.prv` importer (Extrae, ovni's emulator), with its `.pcf` and `.row` companions.
//!
//! Spec digest (paraver-kernel `traceheader.h`, `tracebodyio_v1.cpp`; ovni `src/emu/pv/prv.c`;
//! FORMATS.md section 2):
//!
//! ```text
//! new format                                     optional first line: the body is then
//!                                                paraver-kernel's v2 layout (objects are a
//!                                                global thread number), translated record by
//!                                                record ([`new_format_record`])
//! #Paraver (21/01/2022 at 16:37):1616378951_ns:1(20):2:8(1:1,...),12(1:1,...),14
//!          `date: read to ')'`  end[_ns|_us|_ms]  resources  n_appl  appl...  [,n_comms]
//!   end without unit = µs; an unknown suffix = µs plus a `unknown_time_unit` diagnostic
//!   resources: `0` (none: ovni), `0()` (none: Extrae) | `<nodes>(<cpus>,...)` | `<nodes>`
//!   appl: `<n_tasks>(<n_threads>:<node>,...)`, applications separated by `:`; Dimemas
//!   writes `,<n_comms>` after each application that has communicators (added up here)
//! c:1:1:12:1:2:...                               n_comms communicator lines (c:, C:, i:, I:)
//! 1:cpu:appl:task:thread:begin:end:state         state (end -1: not ended)
//! 2:cpu:appl:task:thread:time:type:value[:type:value]...   events, several per line
//! 3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag   message
//! 4:...                                          global communication: ignored (info)
//! #...                                           comment/metadata line in the body: skipped,
//!                                                the cutter's `#d:CUTTER:...` go to meta
//! ```
//!
//! Ids are 1-based; cpu 0 = no CPU. Times are integers >= 0 in the header's unit, scaled to
//! ns. Records are only roughly in time order (messages are written at their physical send
//! time): they keep their own times and the derive stage writes the tables sorted.
//!
//! Mapping: a thread `appl.task.thread` is an entity named by its `.row` THREAD label
//! (trimmed) or `THREAD a.t.th`, of type THREAD; a row whose label is a CPU's (` CPU 0.0`,
//! `vCPU 0.*`: ovni's cpu.prv puts CPUs in the THREAD rows; so do Nanos6's `CPU 3`,
//! `LT VCPU 4`, `ET VCPU 5`) is of type CPU. A record's cpu is an entity of type CPU named by
//! its `.row` CPU label or `CPU n`, given as `core`.
//! A label on several rows of a level gets each row's id appended (`worker (1.1.2)`,
//! `cpu (2)`), with an info diagnostic: one entity per row. So does a THREAD label equal to
//! a CPU label, and a label equal to a name made so. Labels after an unreadable application
//! of the header are not used (their rows are unknown).
//! State records are `state` intervals named from `.pcf` STATES; each event pair is one
//! `events` row (action = the type's name, value, note = the value's label) and a set of
//! the channel named after the type (0 ends its state); communications are `messages`.
//! Without a `.pcf`/`.row` names are numbers, with an info diagnostic saying so.
//! Numbers are 64-bit, signed or unsigned, and kept exact (`i128` here): a value beyond 2^53
//! is the nearest double in `value` and exact in the text beside it (the note, the state).
//! A record that cannot be read (wrong field count, not a number, negative time or one
//! beyond 2^62 ns, end before begin) is a `malformed_record` diagnostic naming its line and
//! is skipped.
pub mod pcf;
pub mod row;

use super::diag::{Diagnostic, Severity, ROWS_PER_KIND};
use super::input::{strip_compressed, Digest256, Input, COMPRESSED_SUFFIXES};
use super::lines::LineReader;
use super::{ChannelSet, Message, Sink, Span};
use crate::derive::Reorder;
use crate::model::{Event, Pos, TimeUnit, MAX_ABS_NS};
use crate::{Error, Result};
use pcf::{parse_value, Pcf};
use row::Row;
use std::borrow::Cow;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// True when `prefix` starts (after an optional `new format` line) with `#Paraver`, in any
/// letter case.
pub fn sniff(prefix: &[u8]) -> bool {
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let text = String::from_utf8_lossy(prefix.get(..prefix.len().min(4096)).unwrap_or(prefix));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut first = lines.next().unwrap_or("");
    if first.eq_ignore_ascii_case("new format") {
        first = lines.next().unwrap_or("");
    }
    first.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("#paraver"))
}

/// The `.pcf` and `.row` read beside a `.prv`.
#[derive(Debug, Default)]
pub struct Companions {
    /// Names, when the `.pcf` was found.
    pub pcf: Option<Pcf>,
    /// Labels, when the `.row` was found.
    pub row: Option<Row>,
    /// Path of the `.row` read, for diagnostics about its lines.
    pub row_path: Option<PathBuf>,
    /// Paths of the companions found (also those that could not be read: they are part
    /// of what was ingested, and of its hash).
    pub found: Vec<PathBuf>,
    /// Paths looked for and not found.
    pub missing: Vec<PathBuf>,
    /// Problems in the companions, reported when the trace is read.
    pub problems: Vec<Diagnostic>,
    /// Hash and size on disk of each file of `found`, taken from the bytes read, so that a
    /// companion changed before it is hashed again or kept is told.
    pub digests: Vec<Digest256>,
    /// Bytes of text of the companions read (decompressed).
    pub text_bytes: u64,
}

/// `x.prv`, `x.prv.gz`, `x.prv.zst` (any of [`COMPRESSED_SUFFIXES`]) -> `x.<ext>` in the
/// same directory.
pub fn companion_path(prv: &Path, ext: &str) -> PathBuf {
    let name = prv.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = strip_compressed(&name);
    if stem.len() > 4 && stem.get(stem.len() - 4..).is_some_and(|e| e.eq_ignore_ascii_case(".prv"))
    {
        stem = stem.get(..stem.len() - 4).unwrap_or(stem);
    }
    prv.with_file_name(format!("{stem}.{ext}"))
}

/// Most text read of a companion (decompressed).
const MAX_COMPANION: u64 = 128 << 20;

/// A companion's text (a byte-order mark dropped), the hash of its bytes on disk, and
/// whether bytes that are not UTF-8 were replaced.
fn read_text(path: &Path) -> std::io::Result<(String, Digest256, u64, bool)> {
    let mut input = Input::open(path)?;
    let mut bytes = Vec::new();
    (&mut input).take(MAX_COMPANION + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_COMPANION {
        // A .pcf or .row is kilobytes to megabytes: this is not one (or a decompression
        // bomb), and holding it would break the memory bound.
        return Err(std::io::Error::other(format!(
            "more than {} MiB of text: not read",
            MAX_COMPANION >> 20
        )));
    }
    let digest = input.finish()?;
    let len = bytes.len() as u64;
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let lossy = std::str::from_utf8(text).is_err();
    Ok((String::from_utf8_lossy(text).into_owned(), digest, len, lossy))
}

/// What is lost without the companion at `path` (a `.pcf` or a `.row`).
fn without(path: &Path) -> &'static str {
    let name = path.to_string_lossy();
    if strip_compressed(&name).ends_with(".pcf") {
        "state and event names and value labels are shown as numbers"
    } else {
        "threads and CPUs are named by their numbers"
    }
}

/// The `.pcf` or `.row` file (`ext`) beside `prv`, plain or compressed (`.gz`, `.zst`, any of
/// [`COMPRESSED_SUFFIXES`]), when there is one.
fn companion_file(prv: &Path, ext: &str) -> Option<PathBuf> {
    let plain = companion_path(prv, ext);
    let packed: Vec<PathBuf> = COMPRESSED_SUFFIXES
        .iter()
        .map(|c| PathBuf::from(format!("{}{c}", plain.display())))
        .collect();
    std::iter::once(plain).chain(packed).find(|p| p.is_file())
}

impl Companions {
    /// The companion files beside `prv` that [`Companions::find`] would read, in its order,
    /// without reading them.
    pub fn paths(prv: &Path) -> Vec<PathBuf> {
        ["pcf", "row"].iter().filter_map(|ext| companion_file(prv, ext)).collect()
    }

    /// Looks for the `.pcf` and `.row` beside `prv` (also compressed: `.pcf.gz`, `.pcf.zst`).
    pub fn find(prv: &Path) -> Companions {
        let mut c = Companions::default();
        for ext in ["pcf", "row"] {
            let plain = companion_path(prv, ext);
            let hit = companion_file(prv, ext).map(|p| {
                let text = read_text(&p);
                (p, text)
            });
            match hit {
                Some((p, Err(e))) => {
                    // A companion that is there but cannot be read (a truncated .gz) is not
                    // missing: say what went wrong with which file.
                    c.problems.push(Diagnostic {
                        severity: Severity::Warning,
                        kind: "unreadable_companion",
                        pos: Pos::None,
                        ts: None,
                        message: format!("{}: {e}: {}", p.display(), without(&p)),
                    });
                    // Hashed as it is on disk (it is part of what was ingested), if it can be.
                    if let Ok(d) = super::input::file_digest(&p) {
                        c.digests.push(d);
                        c.found.push(p);
                    }
                }
                Some((p, Ok((text, digest, len, lossy)))) => {
                    c.digests.push(digest);
                    c.text_bytes += len;
                    if lossy {
                        c.problems.push(Diagnostic {
                            severity: Severity::Warning,
                            kind: "invalid_utf8",
                            pos: Pos::None,
                            ts: None,
                            message: format!(
                                "{}: bytes that are not UTF-8, replaced by U+FFFD in the names \
                                 it gives",
                                p.display()
                            ),
                        });
                    }
                    if ext == "pcf" {
                        c.pcf = Some(Pcf::parse(&text));
                    } else {
                        let row = Row::parse(&text);
                        for (line, problem) in &row.problems {
                            c.problems.push(Diagnostic {
                                severity: Severity::Warning,
                                kind: "malformed_companion",
                                pos: Pos::None,
                                ts: None,
                                message: format!(
                                    "{}:{line}: {problem}: the labels found are used",
                                    p.display()
                                ),
                            });
                        }
                        c.row = Some(row);
                        c.row_path = Some(p.clone());
                    }
                    c.found.push(p);
                }
                None => c.missing.push(plain),
            }
        }
        c
    }
}

/// One application of the header's process model: threads per task.
#[derive(Debug, Clone, Default)]
struct Appl {
    tasks: Vec<u64>,
    /// The header's text for it could not be read: its rows, and so the flat row index of
    /// every later application's rows, are unknown.
    unreadable: bool,
}

/// The parsed header.
#[derive(Debug, Clone)]
struct Header {
    unit: TimeUnit,
    end: i64,
    appls: Vec<Appl>,
    comms: u64,
    /// CPUs of the resource model; `None` when there is none (`0`, ovni) or it is unreadable.
    cpus: Option<u64>,
    /// Written by ovni's emulator (its fixed fake date, `19/01/38 at 03:14`).
    ovni: bool,
}

/// CPUs of a resource model: `<nodes>(<cpus>,<cpus>,...)`, or `<nodes>` with one CPU each;
/// `None` for `0` (no resource model) or anything unreadable.
fn parse_cpus(resources: &str) -> Option<u64> {
    let r = resources.trim();
    let total = match r.split_once('(') {
        Some((_, inner)) => inner
            .trim()
            .strip_suffix(')')?
            .split(',')
            .map(|c| c.trim().parse::<u64>().ok())
            .try_fold(0u64, |acc, c| acc.checked_add(c?))?,
        None => r.parse::<u64>().ok()?,
    };
    (total > 0).then_some(total)
}

/// Splits `s` at `sep` outside parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(s.get(start..i).unwrap_or(""));
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(s.get(start..).unwrap_or(""));
    out
}

/// `1:(1:1)` -> `1(1:1)`: a `:` (and spaces) between a task count and the `(` of its thread
/// list is dropped. paraver-kernel reads the task count up to the `(`, so it reads the
/// `%d:(%d:%d)` an energy-measurement writer prints as `%d(%d:%d)`.
fn task_count_joined(s: &str) -> Cow<'_, str> {
    let mut depth = 0i32;
    let mut drop = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' if depth == 0
                && s.get(i + 1..).is_some_and(|r| r.trim_start().starts_with('('))
                && s.get(..i)
                    .is_some_and(|l| l.trim_end().ends_with(|d: char| d.is_ascii_digit())) =>
            {
                drop.push(i);
            }
            _ => {}
        }
    }
    if drop.is_empty() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.char_indices().filter(|(i, _)| !drop.contains(i)).map(|(_, c)| c).collect::<String>(),
    )
}

/// `8(1:1,1:1)` -> threads per task.
fn parse_appl(s: &str) -> Option<Appl> {
    let (n, rest) = s.split_once('(')?;
    let n: usize = n.trim().parse().ok()?;
    let inner = rest.trim().strip_suffix(')')?;
    let tasks: Option<Vec<u64>> = inner
        .split(',')
        .map(|t| t.split(':').next().and_then(|x| x.trim().parse::<u64>().ok()))
        .collect();
    let tasks = tasks?;
    (tasks.len() == n).then_some(Appl { tasks, unreadable: false })
}

/// A problem found in the header: severity, kind, message.
type Problem = (Severity, &'static str, String);
/// The header, its problems, its metadata entries.
type HeaderParts = (Header, Vec<Problem>, Vec<(String, String)>);

/// Parses the header line after `#Paraver`. Returns the header, problems to report and
/// metadata entries.
fn parse_header(line: &str, path: &str, pos: Pos) -> Result<HeaderParts> {
    let bad = |m: &str| {
        Error::input(
            path,
            pos.to_string(),
            format!("unreadable Paraver header: {m}: '{}'", clip(line)),
        )
    };
    let rest = line.get(8..).ok_or_else(|| bad("too short"))?;
    let open = rest.find('(').ok_or_else(|| bad("no '(' before the date"))?;
    let close = rest.find(')').ok_or_else(|| bad("no ')' after the date"))?;
    let date = rest.get(open + 1..close).unwrap_or("").to_string();
    let after = rest.get(close + 1..).unwrap_or("");
    let after = after.strip_prefix(':').ok_or_else(|| bad("no ':' after the date"))?;
    let fields = split_top(after, ':');
    let mut problems = Vec::new();
    let end_field = fields.first().copied().unwrap_or("").trim();
    let (num, unit) = match end_field.split_once('_') {
        Some((n, u)) => (n, Some(u)),
        None => (end_field, None),
    };
    let unit = match unit {
        None => TimeUnit::Us,
        Some(u) => match u.to_ascii_lowercase().as_str() {
            "ns" => TimeUnit::Ns,
            "us" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            _ => {
                problems.push((
                    Severity::Warning,
                    "unknown_time_unit",
                    format!("unknown time unit '_{u}' in the header: times taken as microseconds (as paraver-kernel does)"),
                ));
                TimeUnit::Us
            }
        },
    };
    let end = match num.parse::<i64>() {
        Ok(v) => unit.to_ns(v).map(|t| t.0).filter(|&t| t >= 0),
        // Float end times (`%0Lf` writers): scaled to ns before rounding (`0.4_ms` is
        // 400000 ns, not 0).
        Err(_) => {
            let v = num.parse::<f64>().map_err(|_| bad("the end time is not a number"))?;
            let ns_per_unit = match unit {
                TimeUnit::Ps => 1e-3,
                TimeUnit::Ns => 1.0,
                TimeUnit::Us => 1e3,
                TimeUnit::Ms => 1e6,
                TimeUnit::S => 1e9,
                TimeUnit::Tick => 1.0,
            };
            let ns = (v * ns_per_unit).round();
            #[allow(clippy::cast_precision_loss)]
            let max = MAX_ABS_NS as f64;
            #[allow(clippy::cast_possible_truncation)]
            (ns.is_finite() && (0.0..max).contains(&ns)).then_some(ns as i64)
        }
    };
    // The end time only extends the capture: one that cannot be a time is left out.
    let end = end.unwrap_or_else(|| {
        problems.push((
            Severity::Warning,
            "bad_header",
            format!(
                "the end time '{end_field}' is negative or beyond 2^62 ns: ignored, states \
                 still open close at the last record"
            ),
        ));
        0
    });
    let resources = fields.get(1).copied().unwrap_or("").trim().to_string();
    let cpus = parse_cpus(&resources);
    // No resource model: `0`, or `0()` (Extrae's mpi2prv when it knows of no node);
    // paraver-kernel takes a node count of 0 as none.
    let no_model = resources.is_empty()
        || resources.split('(').next().is_some_and(|n| n.trim().parse::<u64>() == Ok(0));
    if cpus.is_none() && !no_model {
        problems.push((
            Severity::Warning,
            "bad_header",
            format!(
                "the resource model '{}' is unreadable: cpu fields are not checked against it",
                clip(&resources)
            ),
        ));
    }
    // `<nodes>(<cpus>,...)` lists the CPU count of each node: a node count that is not the
    // length of the list (paraver-kernel reads that many counts) is a damaged header.
    if let (Some(_), Some((nodes, list))) = (cpus, resources.split_once('(')) {
        let listed = list.split(',').count();
        if nodes.trim().parse::<u64>().ok() != u64::try_from(listed).ok() {
            problems.push((
                Severity::Warning,
                "bad_header",
                format!(
                    "the resource model '{}' gives {} nodes but lists the CPUs of {listed}: \
                     the {listed} listed are the model",
                    clip(&resources),
                    clip(nodes.trim())
                ),
            ));
        }
    }
    let n_appl: usize = fields
        .get(2)
        .and_then(|f| f.trim().parse().ok())
        .ok_or_else(|| bad("no application count"))?;
    // Applications are separated by `:` (the format manual) or `,` (Extrae's files); the
    // communicator count follows the last one after a `,`.
    let tail = fields.get(3..).unwrap_or_default().join(":");
    let tail = task_count_joined(&tail);
    let tokens: Vec<&str> =
        split_top(&tail, ':').into_iter().flat_map(|t| split_top(t, ',')).collect();
    let mut appls = Vec::new();
    // Communicator counts written after an application other than the last (Dimemas writes
    // `,<count>` after each application that has communicators): a bare number where an
    // application is due, followed by one, is such a count.
    let mut comms: u64 = 0;
    let mut next = 0usize;
    for i in 0..n_appl {
        while i > 0 && tokens.get(next + 1).is_some_and(|t| t.contains('(')) {
            let Some(c) = tokens.get(next).and_then(|c| c.trim().parse::<u64>().ok()) else {
                break;
            };
            comms = comms.saturating_add(c);
            next += 1;
        }
        let Some(f) = tokens.get(next).copied() else {
            problems.push((
                Severity::Warning,
                "bad_header",
                format!("the header announces {n_appl} applications but lists {i}"),
            ));
            break;
        };
        match parse_appl(f) {
            Some(a) => appls.push(a),
            None => {
                problems.push((
                    Severity::Warning,
                    "bad_header",
                    format!("application {} is unreadable: '{f}'", i + 1),
                ));
                appls.push(Appl { tasks: Vec::new(), unreadable: true });
            }
        }
        next += 1;
    }
    let last: u64 = tokens.get(next).and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    let comms = comms.saturating_add(last);
    let ovni = date.trim() == OVNI_DATE;
    let meta = vec![
        ("paraver.date".to_string(), date),
        ("paraver.end_time".to_string(), end_field.to_string()),
        ("paraver.resources".to_string(), resources),
        ("paraver.applications".to_string(), n_appl.to_string()),
        ("paraver.communicators".to_string(), comms.to_string()),
    ];
    Ok((Header { unit, end, appls, comms, cpus, ovni }, problems, meta))
}

fn clip(s: &str) -> Cow<'_, str> {
    if s.len() <= 120 {
        return Cow::Borrowed(s);
    }
    let mut end = 120;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", s.get(..end).unwrap_or("")))
}

/// Entity names of the rows of the process model and of the CPUs, made when asked for:
/// nothing is allocated per declared row or CPU, whatever the header announces.
struct Names {
    /// First flat row index and thread count of each task, per application.
    task_base: Vec<Vec<(u64, u64)>>,
    /// Rows in the process model.
    rows: u64,
    /// CPUs in the resource model, when it has one.
    cpus: Option<u64>,
    /// Entity names from the `.row` THREAD labels, per flat row (`None`: no label).
    thread_labels: Vec<Option<String>>,
    /// Entity names from the `.row` CPU labels, per CPU from 1.
    cpu_labels: Vec<Option<String>>,
    /// The rows are CPUs: ovni's `cpu.prv` without a `.row`, or a `.row` whose THREAD level
    /// starts with a CPU label (a CPU view).
    cpu_rows: bool,
}

/// The `duplicate_row_label` notes of a `.row`: every one counted, only the first
/// [`ROWS_PER_KIND`] by line with their text, as the diagnostics table lists no more (two
/// million repeated labels made two million message strings: 1.2 GB).
#[derive(Default)]
struct Notes {
    all: Vec<(u64, Option<String>)>,
    /// Lines and indices of the notes holding their text, greatest line on top.
    kept: BinaryHeap<(u64, usize)>,
}

impl Notes {
    fn push(&mut self, line: u64, message: impl FnOnce() -> String) {
        let i = self.all.len();
        if self.kept.len() >= ROWS_PER_KIND {
            match self.kept.peek() {
                Some(&(max, j)) if line < max => {
                    self.kept.pop();
                    if let Some(n) = self.all.get_mut(j) {
                        n.1 = None;
                    }
                }
                _ => {
                    self.all.push((line, None));
                    return;
                }
            }
        }
        self.kept.push((line, i));
        self.all.push((line, Some(message())));
    }
}

/// Entity names of the first `n` labels of `level` (trimmed; `None` for an empty one). A
/// label on several rows would merge them into one entity: each such row gets its Paraver
/// id appended (`id(i)` of row `i`), with a note (line, message) per repeat. So does a label
/// that is one of the `taken` names (another level's), and a name made so that equals
/// another row's label, until every name is unique.
#[allow(clippy::too_many_arguments)]
fn unique_labels(
    level: &row::Level,
    n: usize,
    what: &str,
    path: &str,
    id: impl Fn(usize) -> String,
    row_of: impl Fn(&str) -> Option<usize>,
    taken: &HashSet<String>,
    notes: &mut Notes,
) -> Vec<Option<String>> {
    let mut names: Vec<Option<String>> = level
        .labels
        .iter()
        .take(n)
        .map(|l| Some(l.trim()).filter(|l| !l.is_empty()).map(str::to_string))
        .collect();
    let line = |i: usize| level.first_line.saturating_add(i as u64);
    let mut made = vec![false; names.len()];
    // Each round appends ids to the names still shared; ids differ, so it ends.
    // Each round can make a name that clashes again (a `.row` written to chain them): after
    // a few, what is still shared is made unique in one pass below.
    let rounds = names.len().min(MAX_RENAME_ROUNDS);
    for round in 0..=rounds {
        let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, l) in names.iter().enumerate() {
            if let Some(l) = l {
                holders.entry(l.as_str()).or_default().push(i);
            }
        }
        let mut renamed: Vec<(usize, String)> = Vec::new();
        for (l, rows) in &holders {
            // `THREAD 1.1.2` on another row than 1.1.2 (or `CPU 3` on another CPU than 3)
            // is the name row 1.1.2 gets when it has no label: it would merge with that row.
            let posing =
                !made.get(rows.first().copied().unwrap_or_default()).copied().unwrap_or(true)
                    && l.strip_prefix(what)
                        .and_then(|r| r.strip_prefix(' '))
                        .and_then(&row_of)
                        .is_some_and(|j| {
                            names.get(j).is_none_or(Option::is_none) && rows.iter().any(|&i| i != j)
                        });
            let clash = taken.contains(*l) || posing;
            if rows.len() < 2 && !clash {
                continue;
            }
            // A made name clashing with a row's own label: the label gives way.
            let own: Vec<usize> =
                rows.iter().copied().filter(|&i| !made.get(i).copied().unwrap_or(true)).collect();
            let rows = if round > 0 && !clash && !own.is_empty() { &own } else { rows };
            let first = rows.first().copied().unwrap_or_default();
            for &i in rows {
                let name = format!("{l} ({})", id(i));
                let why = if posing {
                    "is the name another row gets without a label: this row is named".to_string()
                } else if clash {
                    "is also the name of a CPU: this row is named".to_string()
                } else if round > 0 {
                    "is also another row's name: this row is named".to_string()
                } else if i != first {
                    format!(
                        "is also on line {}: each of these rows is named with its Paraver id \
                         appended, as",
                        line(first)
                    )
                } else {
                    renamed.push((i, name));
                    continue;
                };
                notes.push(line(i), || {
                    format!("{path}:{}: {what} label '{l}' {why} '{name}'", line(i))
                });
                renamed.push((i, name));
            }
        }
        if renamed.is_empty() {
            break;
        }
        for (i, name) in renamed {
            if let (Some(n), Some(m)) = (names.get_mut(i), made.get_mut(i)) {
                *n = Some(name);
                *m = true;
            }
        }
    }
    // Still shared after the rounds: a counter appended, in row order, makes every name
    // unique in one pass.
    let all: HashSet<String> = names.iter().flatten().cloned().collect();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, n) in names.iter_mut().enumerate() {
        let Some(name) = n else { continue };
        if seen.insert(name.clone()) {
            continue;
        }
        let base = format!("{name} ({})", id(i));
        let unique = (1u64..)
            .map(|k| format!("{base} #{k}"))
            .find(|c| !all.contains(c) && !seen.contains(c))
            .unwrap_or(base);
        notes.push(line(i), || format!("{path}:{}: {what} label named '{unique}'", line(i)));
        seen.insert(unique.clone());
        *name = unique;
    }
    names
}

/// Renaming rounds of [`unique_labels`] before the one-pass fallback.
const MAX_RENAME_ROUNDS: usize = 16;

/// Rows (threads) of the process model's applications `appls`.
fn task_rows(appls: &[Appl]) -> u64 {
    appls.iter().flat_map(|a| &a.tasks).fold(0u64, |n, &t| n.saturating_add(t))
}

impl Names {
    /// The names, and a diagnostic (kind, message) per `.row` label that repeats on another
    /// row and for labels that cannot be placed.
    fn new(
        header: &Header,
        comp: &Companions,
        cpu_rows: bool,
    ) -> (Names, Vec<(&'static str, String)>) {
        let mut task_base = Vec::new();
        let mut flat = 0u64;
        for appl in &header.appls {
            let mut bases = Vec::new();
            for &n in &appl.tasks {
                bases.push((flat, n));
                flat = flat.saturating_add(n);
            }
            task_base.push(bases);
        }
        let mut names = Names {
            task_base,
            rows: flat,
            cpus: header.cpus,
            thread_labels: Vec::new(),
            cpu_labels: Vec::new(),
            cpu_rows,
        };
        let path = comp
            .row_path
            .as_ref()
            .map_or_else(|| "the .row".to_string(), |p| p.display().to_string());
        let level = |name: &str| comp.row.as_ref().and_then(|r| r.levels.get(name));
        let limit =
            |n: Option<u64>| n.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let mut notes = Notes::default();
        let mut unused = None;
        if let Some(l) = level("CPU") {
            let n = limit(names.cpus);
            names.cpu_labels = unique_labels(
                l,
                n,
                "CPU",
                &path,
                |i| (i + 1).to_string(),
                |r| {
                    let j = r.parse::<usize>().ok()?.checked_sub(1)?;
                    (j < n && (j + 1).to_string() == r).then_some(j)
                },
                &HashSet::new(),
                &mut notes,
            );
        }
        if let Some(l) = level("THREAD") {
            // Rows after an unreadable application have unknown positions: their labels
            // would name the wrong threads.
            let known = header
                .appls
                .iter()
                .position(|a| a.unreadable)
                .map(|a| (a, task_rows(header.appls.get(..a).unwrap_or_default())));
            let mut n = limit(Some(names.rows));
            if let Some((a, rows)) = known {
                let rows = limit(Some(rows));
                if l.labels.len() > rows {
                    unused = Some(format!(
                        "{path}: THREAD labels from line {} on are not used: application {} of \
                         the header is unreadable, so which rows they name is unknown",
                        l.first_line.saturating_add(rows as u64),
                        a + 1
                    ));
                }
                n = n.min(rows);
            }
            // A thread must not take a CPU's name (a label like `CPU 1` on a THREAD row is
            // ovni's way of saying the row is that CPU, and stays).
            let taken: HashSet<String> =
                names.cpu_labels.iter().flatten().filter(|l| !is_cpu_label(l)).cloned().collect();
            names.thread_labels = unique_labels(
                l,
                n,
                "THREAD",
                &path,
                |i| names.flat_id(i),
                |r| names.flat_of(r).filter(|&j| j < n),
                &taken,
                &mut notes,
            );
        }
        // A THREAD level that starts with a CPU is a CPU view (ovni's cpu.row, Nanos6's
        // ctf2prv): every row is a CPU, its virtual CPUs too whatever their label (`vCPU 0.*`,
        // `UNSET` in older ovni, `LEADER` and `EXT 0` in an older Nanos6 converter).
        if names.thread_labels.first().and_then(Option::as_deref).is_some_and(is_cpu_label) {
            names.cpu_rows = true;
        }
        notes.all.sort_by_key(|n| n.0);
        let mut notes: Vec<(&'static str, String)> = notes
            .all
            .into_iter()
            .map(|n| ("duplicate_row_label", n.1.unwrap_or_default()))
            .collect();
        notes.extend(unused.map(|m| ("bad_header", m)));
        (names, notes)
    }

    /// The flat row (0-based) whose Paraver id is `id` (`appl.task.thread`, as
    /// [`Names::flat_id`] writes it).
    fn flat_of(&self, id: &str) -> Option<usize> {
        let mut parts = id.split('.').map(|p| p.parse::<usize>().ok());
        let (a, t, th) = (parts.next()??, parts.next()??, parts.next()??);
        if parts.next().is_some() {
            return None;
        }
        let &(base, n) = self.task_base.get(a.checked_sub(1)?)?.get(t.checked_sub(1)?)?;
        let th = u64::try_from(th.checked_sub(1)?).ok()?;
        let flat = usize::try_from(base.checked_add(th).filter(|_| th < n)?).ok()?;
        (self.flat_id(flat) == id).then_some(flat)
    }

    /// The Paraver id `appl.task.thread` of flat row `flat` (0-based).
    fn flat_id(&self, flat: usize) -> String {
        let flat = flat as u64;
        for (a, tasks) in self.task_base.iter().enumerate() {
            let t = tasks.partition_point(|&(base, _)| base <= flat);
            if let Some(&(base, n)) = t.checked_sub(1).and_then(|t| tasks.get(t)) {
                if flat - base < n {
                    return format!("{}.{t}.{}", a + 1, flat - base + 1);
                }
            }
        }
        format!("row {}", flat + 1)
    }

    /// The `appl:task:thread` (1-based, as a record writes it) of thread `global` (1-based
    /// over the whole process model, as a "new format" record writes it); `0:0:<global>`,
    /// which no model has, when the model has no such thread.
    fn locate(&self, global: &str) -> String {
        let flat = global.trim().parse::<u64>().ok().and_then(|g| g.checked_sub(1));
        for (a, tasks) in self.task_base.iter().enumerate() {
            let Some(flat) = flat else { break };
            let t = tasks.partition_point(|&(base, _)| base <= flat);
            if let Some(&(base, n)) = t.checked_sub(1).and_then(|t| tasks.get(t)) {
                if flat - base < n {
                    return format!("{}:{t}:{}", a + 1, flat - base + 1);
                }
            }
        }
        format!("0:0:{}", global.trim())
    }

    /// Name and type of flat row `flat` of thread `a.t.th` (1-based).
    fn row_name(&self, flat: u64, a: i128, t: i128, th: i128) -> (String, &'static str) {
        let label = usize::try_from(flat)
            .ok()
            .and_then(|i| self.thread_labels.get(i))
            .and_then(Option::as_deref);
        match label {
            Some(l) => {
                (l.to_string(), if self.cpu_rows || is_cpu_label(l) { "CPU" } else { "THREAD" })
            }
            None if self.cpu_rows => (format!("CPU ROW {}", flat + 1), "CPU"),
            None => (format!("THREAD {a}.{t}.{th}"), "THREAD"),
        }
    }

    /// Every row of the process model, in order.
    fn all_rows(&self) -> impl Iterator<Item = (String, &'static str)> + '_ {
        self.task_base.iter().enumerate().flat_map(move |(a, tasks)| {
            tasks.iter().enumerate().flat_map(move |(t, &(base, n))| {
                (0..n).map(move |th| {
                    let (a, t, th1) = (a as i128 + 1, t as i128 + 1, i128::from(th) + 1);
                    self.row_name(base + th, a, t, th1)
                })
            })
        })
    }

    /// The entity of `appl.task.thread` (1-based), or `None` when outside the model.
    fn thread(&self, appl: i128, task: i128, thread: i128) -> Option<(String, &'static str)> {
        let a = usize::try_from(appl - 1).ok()?;
        let t = usize::try_from(task - 1).ok()?;
        let th = u64::try_from(thread - 1).ok()?;
        let (base, n) = *self.task_base.get(a)?.get(t)?;
        if th >= n {
            return None;
        }
        Some(self.row_name(base + th, appl, task, thread))
    }

    /// The CPU entity name of `cpu` (1-based; 0 = none), and whether the header's resource
    /// model has it (always true when there is no model).
    fn cpu(&self, cpu: i128) -> Option<(String, bool)> {
        let i = usize::try_from(cpu - 1).ok()?;
        let in_model = self.cpus.is_none_or(|n| u64::try_from(cpu).is_ok_and(|c| c <= n));
        let label = self.cpu_labels.get(i).filter(|_| in_model).and_then(Option::as_deref);
        Some((label.map_or_else(|| format!("CPU {cpu}"), str::to_string), in_model))
    }
}

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

/// The date in every header ovni's emulator writes (`#Paraver (19/01/38 at 03:14):...`).
const OVNI_DATE: &str = "19/01/38 at 03:14";

/// Whether a 0 of event type `etype` is a value rather than the end of the channel's state.
/// Paraver's convention (and Extrae's) is that 0 ends it; ovni registers a few channels with
/// `PRV_ZERO` (`src/emu/cpu.c`, `src/emu/nosv/hwc.c`, `src/emu/nosv/breakdown.c`), whose 0
/// is a real value: the number of running threads of a CPU (type 3), the nOS-V breakdown
/// of a breakdown trace (type 17) and the nOS-V hardware counters (types 200-299).
fn zero_is_value(ovni: bool, etype: i128) -> bool {
    ovni && (etype == 3 || etype == 17 || (200..300).contains(&etype))
}

/// ovni's emulator writes the CPU view as `cpu.prv`, whose rows are CPUs.
fn is_ovni_cpu_file(path: &str) -> bool {
    let name = Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or("");
    strip_compressed(name) == "cpu.prv"
}

/// A THREAD row label naming a CPU: ovni's `cpu.row` (` CPU 0.0`, `vCPU 0.*`) and Nanos6's
/// ctf2prv `.row` (`CPU 3`, and the virtual CPUs of its leader thread and external threads,
/// `LT VCPU 4`, `ET VCPU 5`) give each CPU a row of the process model.
fn is_cpu_label(l: &str) -> bool {
    ["CPU ", "vCPU ", "LT VCPU ", "ET VCPU "].iter().any(|p| l.starts_with(p))
}

/// A record of paraver-kernel's "new format" body (`TraceBodyIO_v2`, chosen by a first line
/// `new format`) as the record of the usual body it stands for, or `None` for one that adds
/// nothing: a state's end (its begin record has both times) and the send/receive marks of a
/// communication (`4`..`7`: a communication's index, whose `d` record has its times). Objects
/// are one global thread number (1-based) there, `appl:task:thread` here.
/// ```text
/// 1:cpu:thread:begin:end:state          -> 1:cpu:a:t:th:begin:end:state
/// 2:cpu:thread:begin:end:state          (state end)  -> None
/// 3:cpu:thread:time:type:value...       -> 2:cpu:a:t:th:time:type:value...
/// d:cpu:thread:lsend:psend:cpu:thread:lrecv:precv:size:tag -> 3:cpu:a:t:th:...:cpu:a:t:th:...
/// 4..7:comm                             -> None
/// 8:...                                 -> 4:... (global communication)
/// ```
/// Anything else is returned as it is (comments, communicator lines, records of the usual
/// layout, and lines of no known type, which are reported as such).
fn new_format_record(text: &str, names: &Names) -> Option<String> {
    let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
    let object = |f: &mut std::str::Split<'_, char>| -> Option<String> {
        let cpu = f.next()?;
        let thread = f.next()?;
        Some(format!("{cpu}:{}", names.locate(thread)))
    };
    let mut f = rest.split(':');
    // A record of the usual layout after a `new format` line (a writer that puts the line
    // before a usual body) is told by its number of fields, which no record of the new
    // layout has: 8 for a state (6 there), at least 8 for events (a state's end: 6), 15 for a
    // communication (events: an even number), more than 2 for a global communication.
    let fields = text.strip_suffix(':').unwrap_or(text).split(':').count();
    match kind {
        "1" if fields != 6 => Some(text.to_string()),
        "2" if fields != 6 => Some(text.to_string()),
        "3" if fields % 2 == 1 => Some(text.to_string()),
        "4" if fields != 2 => Some(text.to_string()),
        "2" | "4" | "5" | "6" | "7" => None,
        "1" | "3" => {
            let Some(o) = object(&mut f) else { return Some(text.to_string()) };
            let v1 = if kind == "1" { "1" } else { "2" };
            Some(
                std::iter::once(format!("{v1}:{o}"))
                    .chain(f.map(str::to_string))
                    .collect::<Vec<_>>()
                    .join(":"),
            )
        }
        "d" => {
            let sender = object(&mut f);
            let times: Vec<&str> = f.by_ref().take(2).collect();
            let receiver = object(&mut f);
            match (sender, receiver) {
                (Some(s), Some(r)) if times.len() == 2 => Some(
                    std::iter::once(format!("3:{s}:{}:{r}", times.join(":")))
                        .chain(f.map(str::to_string))
                        .collect::<Vec<_>>()
                        .join(":"),
                ),
                _ => Some(text.to_string()),
            }
        }
        "8" => Some(format!("4:{rest}")),
        _ => Some(text.to_string()),
    }
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
}

/// What the `#` metadata lines of a trace cut by Paraver say: each cut adds
/// `#<date>:CUTTER:<ORIGINAL|RUNAPP>:"<original trace>":<offset>:<begin>:<end>` (times in the
/// trace's unit) to those of the trace it cut; paraver-kernel (`ParaverMetadataManager`) adds
/// up their offsets.
#[derive(Default)]
struct Cuts {
    count: u64,
    /// Sum of the offsets, in the trace's unit.
    offset: u128,
    /// The original trace named by the first cut.
    from: Option<String>,
}

impl Cuts {
    /// Takes note of body line `text` (starting with `#`) when it is a cutter record.
    fn note(&mut self, text: &str) {
        let fields = metadata_fields(text.get(1..).unwrap_or(""));
        let [_, action, _, original, offset, _, _] = fields.as_slice() else { return };
        let Ok(offset) = offset.parse::<u64>() else { return };
        if action != "CUTTER" {
            return;
        }
        self.count += 1;
        self.offset = self.offset.saturating_add(u128::from(offset));
        if self.from.is_none() {
            self.from = Some(original.clone());
        }
    }

    /// The `captures.meta` entries: `paraver.cuts`, `paraver.cut_offset_ns`,
    /// `paraver.cut_from`.
    fn meta(&self, unit: TimeUnit, sink: &mut dyn Sink) {
        if self.count == 0 {
            return;
        }
        sink.meta("paraver.cuts", &self.count.to_string());
        let ns = match unit {
            TimeUnit::Us => self.offset.saturating_mul(1_000),
            TimeUnit::Ms => self.offset.saturating_mul(1_000_000),
            _ => self.offset,
        };
        sink.meta("paraver.cut_offset_ns", &ns.to_string());
        if let Some(from) = &self.from {
            sink.meta("paraver.cut_from", from);
        }
    }
}

/// The `:`-separated fields of a metadata line, trimmed; a field that starts with `"` runs
/// to its closing `"` (`""` inside is one `"`), so a quoted path may hold `:`.
fn metadata_fields(text: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if !quoted && current.trim().is_empty() => {
                current.clear();
                quoted = true;
            }
            '"' if quoted => {
                if chars.peek() == Some(&'"') {
                    current.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            }
            ':' if !quoted => fields.push(std::mem::take(&mut current).trim().to_string()),
            c => current.push(c),
        }
    }
    fields.push(current.trim().to_string());
    fields
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
        for (i, f) in body.split(':').enumerate() {
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
    ) -> Result<(String, &'static str)> {
        if let Some(named) = self.names.thread(a, t, th) {
            return Ok(named);
        }
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "unknown_object",
            pos,
            ts: None,
            message: format!("thread {a}.{t}.{th} is not in the header's process model; kept as THREAD {a}.{t}.{th}"),
        })?;
        Ok((format!("THREAD {a}.{t}.{th}"), "THREAD"))
    }

    /// The CPU entity of a record's cpu field (0 = none), with a diagnostic when the
    /// header's resource model does not have it.
    fn cpu(&mut self, cpu: i128, pos: Pos, sink: &mut dyn Sink) -> Result<Option<String>> {
        if cpu == 0 {
            return Ok(None);
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
        if !in_model {
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
        if let Some(c) = &core {
            sink.declare_entity(c, Some("CPU"), None);
        }
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
        if let Some(c) = &core {
            sink.declare_entity(c, Some("CPU"), None);
        }
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
            if let Some(c) = self.cpu(f.get(i), pos, sink)? {
                sink.declare_entity(&c, Some("CPU"), None);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_label_notes_keep_the_text_of_the_first_lines_only() {
        // 3,000 notes in a scattered line order: all counted, the 1,000 of the smallest
        // lines with their text, the others without.
        let mut notes = Notes::default();
        for k in 0..3000u64 {
            let line = (k * 7919) % 3000 + 1;
            notes.push(line, || format!("line {line}"));
        }
        assert_eq!(notes.all.len(), 3000);
        notes.all.sort_by_key(|n| n.0);
        let (with, without) = notes.all.split_at(ROWS_PER_KIND);
        assert!(with.iter().all(|(l, m)| m.as_deref() == Some(format!("line {l}").as_str())));
        assert!(without.iter().all(|(_, m)| m.is_none()));
    }

    #[test]
    fn sniffs_paraver_headers() {
        assert!(sniff(
            b"#Paraver (19/01/38 at 03:14):00000000000052265789_ns:0:1:1(4:1)\n2:0:1:1:1:0:6:1\n"
        ));
        assert!(sniff(b"new format\n#PARAVER (x):10:0:1:1(1:1)\n"));
        assert!(!sniff(b"#version 2.1\n0,a,0,T,b,0,start\n"));
        assert!(!sniff(b"hello"));
    }

    #[test]
    fn header_with_units_applications_and_communicators() {
        let line = "#Paraver (21/01/2022 at 16:37):1616378951_ns:1(20):2:8(1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1):2(3:1,1:1),14";
        let (h, problems, meta) = parse_header(line, "t.prv", Pos::Line(1)).unwrap();
        assert!(problems.is_empty());
        assert_eq!(h.unit, TimeUnit::Ns);
        assert_eq!(h.end, 1_616_378_951);
        assert_eq!(h.appls.len(), 2);
        assert_eq!(h.appls[1].tasks, vec![3, 1]);
        assert_eq!(h.comms, 14);
        assert_eq!(meta[0].1, "21/01/2022 at 16:37");
        // Extrae separates applications with commas.
        let (h, problems, _) =
            parse_header("#Paraver (d):5_ms:1(2):2:1(1:1),2(1:1,2:1),3", "t", Pos::Line(1))
                .unwrap();
        assert!(problems.is_empty());
        assert_eq!((h.appls.len(), h.comms, h.end), (2, 3, 5_000_000));
        let (h, problems, _) =
            parse_header("#Paraver (d):10:0:1:1(2:1)", "t", Pos::Line(1)).unwrap();
        assert_eq!((h.unit, h.end, problems.len()), (TimeUnit::Us, 10_000, 0));
        let (h, problems, _) =
            parse_header("#Paraver (d):10_xs:0:1:1(2:1)", "t", Pos::Line(1)).unwrap();
        assert_eq!((h.unit, problems.len()), (TimeUnit::Us, 1));
        assert!(parse_header("#Paraver 10:0", "t", Pos::Line(1)).is_err());
    }

    #[test]
    fn a_colon_between_the_task_count_and_its_threads_is_read_as_paraver_kernel_does() {
        // An energy-measurement writer prints `%0Lf_%s:1(1):1:1:(1:1)`: paraver-kernel reads
        // the task count up to the `(`, so `1:(1:1)` is one task of one thread on node 1.
        let line = "#Paraver (22/11/2026 at 14:00):123456.000000_ns:1(1):1:1:(1:1)";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((h.appls.len(), h.end, h.comms), (1, 123_456, 0));
        assert_eq!(h.appls[0].tasks, vec![1]);
        // Also between applications, and before the communicator count as before.
        let line = "#Paraver (d):5_ns:0:2:2:(1:1,2:1):1 : (3:1),4";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((h.appls[0].tasks.clone(), h.appls[1].tasks.clone()), (vec![1, 2], vec![3]));
        assert_eq!(h.comms, 4);
    }

    #[test]
    fn communicator_counts_after_each_application_are_added_up() {
        // Dimemas' Paraver writer (prv_utils/paraver.cc) follows each application that has
        // communicators with `,<count>`, and writes their lines after the header.
        let line = "#Paraver (22/11/26 at 15:00):100_ns:0:3:2(1:0,1:0),3:1(2:0):2(1:0,1:0),2";
        let (h, problems, meta) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let tasks: Vec<_> = h.appls.iter().map(|a| a.tasks.clone()).collect();
        assert_eq!(tasks, [vec![1, 1], vec![2], vec![1, 1]]);
        assert_eq!(h.comms, 5);
        assert_eq!(meta[4], ("paraver.communicators".to_string(), "5".to_string()));
    }

    #[test]
    fn an_unusable_end_time_or_resource_model_is_a_warning_not_the_end() {
        for (line, end) in [
            ("#Paraver (d):-5_ns:0:1:1(1:1)", 0),
            ("#Paraver (d):99999999999999999999_ns:0:1:1(1:1)", 0),
            ("#Paraver (d):9223372036854775807_ms:0:1:1(1:1)", 0),
            ("#Paraver (d):-0.5_ms:0:1:1(1:1)", 0),
        ] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert_eq!(h.end, end, "{line}");
            assert_eq!(problems.len(), 1, "{line}");
            assert_eq!(problems[0].1, "bad_header", "{line}");
        }
        let line = "#Paraver (d):100_ns:2(18446744073709551615,5):1:1(1:1)";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert_eq!((h.cpus, h.end), (None, 100));
        assert!(problems[0].2.contains("resource model"), "{problems:?}");
        // A node count that is not the length of the node list: the list is the model.
        for (line, cpus) in [
            ("#Paraver (d):100_ns:18446744073709551615(4):1:1(1:1)", 4),
            ("#Paraver (d):100_ns:1(4,4):1:1(1:1)", 8),
            ("#Paraver (d):100_ns:3(4,4):1:1(1:1)", 8),
        ] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert_eq!(h.cpus, Some(cpus), "{line}");
            assert_eq!(problems.len(), 1, "{line}: {problems:?}");
            assert!(problems[0].2.contains("nodes but lists the CPUs of"), "{problems:?}");
        }
        let (_, problems, _) =
            parse_header("#Paraver (d):100_ns:2(4,4):1:1(1:1)", "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // No resource model at all is no problem: `0`, or Extrae's `0()` (mpi2prv writes
        // `<nodes>(` and then the CPUs of each node, none when it knows of no node), which
        // paraver-kernel also reads as no model (a node count of 0).
        for line in ["#Paraver (d):1:0:1:1(1:1)", "#Paraver (d):1_ns:0():1:1(1:1),0"] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert!(problems.is_empty(), "{line}: {problems:?}");
            assert_eq!((h.cpus, h.appls.len()), (None, 1), "{line}");
        }
    }

    #[test]
    fn companions_beside_compressed_files() {
        assert_eq!(companion_path(Path::new("/a/b/t.prv.gz"), "pcf"), PathBuf::from("/a/b/t.pcf"));
        assert_eq!(companion_path(Path::new("cpu.prv"), "row"), PathBuf::from("cpu.row"));
    }

    #[test]
    fn a_corrupt_companion_is_reported_as_unreadable_not_missing() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let prv = dir.path().join("z1.prv");
        std::fs::write(&prv, "#Paraver (d):10_ns:0:1:1(1:1)\n").unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all("STATES\n1 Running\n".repeat(200).as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let pcf = dir.path().join("z1.pcf.gz");
        std::fs::write(&pcf, &gz[..gz.len() / 2]).unwrap();
        let c = Companions::find(&prv);
        assert!(c.pcf.is_none());
        assert_eq!(c.missing, [dir.path().join("z1.row")]);
        assert_eq!(c.found, std::slice::from_ref(&pcf));
        let msgs: Vec<_> =
            c.problems.iter().map(|d| (d.severity, d.kind, d.message.as_str())).collect();
        let expected = format!(
            "{}: gzip stream ends early (truncated file?): state and event names and value \
             labels are shown as numbers",
            pcf.display()
        );
        assert_eq!(msgs, [(Severity::Warning, "unreadable_companion", expected.as_str())]);
    }

    #[test]
    fn a_short_row_block_is_reported_with_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let prv = dir.path().join("t.prv");
        std::fs::write(&prv, "#Paraver (d):10_ns:1(3):1:1(2:1)\n").unwrap();
        std::fs::write(
            dir.path().join("t.row"),
            "LEVEL CPU SIZE 3\ncpuA\ncpuB\nLEVEL THREAD SIZE 2\nthA\nthB\n",
        )
        .unwrap();
        let c = Companions::find(&prv);
        assert_eq!(c.row.as_ref().and_then(|r| r.label("THREAD", 1)), Some("thB"));
        let msgs: Vec<_> = c.problems.iter().map(|d| (d.kind, d.message.as_str())).collect();
        let expected = format!(
            "{}:1: LEVEL CPU declares 3 labels, found 2 (the next LEVEL header is on line 4): \
             the labels found are used",
            dir.path().join("t.row").display()
        );
        assert_eq!(msgs, [("malformed_companion", expected.as_str())]);
    }
}
