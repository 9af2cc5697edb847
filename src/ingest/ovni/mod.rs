//! ovni binary runtime streams: what libovni writes and `ovniemu` reads, ingested without
//! running the emulator.
//!
//! Spec digest (FORMATS.md §2 "ovni binary runtime streams"; bsc-pm/ovni 1.14
//! `src/emu/stream.c`, `src/emu/player.c`, `src/emu/ovni/event.c`, `src/emu/system.c`):
//!
//! ```text
//! ovni/loom.<L>/proc.<P>/thread.<T>/stream.obs + stream.json      spec v3 (one dir a thread)
//! ovni/loom.<L>/proc.<P>/thread.<T>.obs + thread.<T>.json
//!                        + metadata.json                          v2 layout
//! stream.obs: "ovni" u32 version=1 | event* (packed, no padding)
//! event:      u8 flags | u8 model | u8 category | u8 value | u64 clock | payload
//!             flags & 0x0f: 0 = no payload, n = n+1 bytes; flags & 0x10 = jumbo:
//!             payload = u32 size N, then N bytes of jumbo data
//! ```
//!
//! Byte order is the tracing machine's and is not written: it is read from the header's
//! version field (`01 00 00 00` little-endian, `00 00 00 01` big-endian; anything else is
//! not a stream version this reader knows, and an error).
//!
//! Streams are merged by clock (k-way merge, one cursor per stream: memory grows with the
//! number of streams, not their length). Equal clocks keep stream order (loom name, then
//! process id, then thread id, as ovni sorts them), and file order within a stream. A clock
//! lower than the one before it in its stream is a `clock_backwards` diagnostic (info inside
//! an `OU[`..`OU]` unordered region, which ovni allows); the event keeps its time in
//! `events`, and is merged and applied to the channels at its stream's previous time, so
//! states never go back in time. Times are ns from the first event of the merged sequence
//! (what `ovniemu` takes as the start of its Paraver output), stored as `captures.ts_origin`
//! (the raw clock). Per-loom offsets of a `clock-offsets.txt` beside the looms (ovnisync's
//! table: `index hostname median mean stdev`, the median used) are added to the clocks.
//!
//! Output: one `events` row per event (action = the MCV code, source and target = the
//! thread `TH <app_id>.<tid>`, note = ovnidump's description of it, value = its first
//! numeric field, core = the CPU the thread is on); the ovni model's channels (see
//! [`emu`]) and the nOS-V and Nanos6 models' (see [`runtime`]), named and valued as
//! ovni's emulator writes them; nOS-V and Nanos6 task instances (see [`tasks`]).
pub mod emu;
mod files;
pub mod meta;
pub mod runtime;
pub mod spec;
pub mod stream;
pub mod tasks;

/// A `bad_metadata` warning: a metadata file, or a clock-offset line, that is not used.
fn bad_metadata(sink: &mut dyn Sink, pos: Pos, message: String) -> Result<()> {
    sink.diagnostic(Diagnostic {
        severity: Severity::Warning,
        kind: "bad_metadata",
        pos,
        ts: None,
        message,
    })
}

#[cfg(test)]
mod tests;

use super::input::Digest256;
use super::{Diagnostic, Severity, Sink};
use crate::model::{Event, Pos, TimeUnit, MAX_ABS_NS};
use crate::{Error, Result};
use emu::{At, Model};
use meta::{Meta, StreamFile};
use spec::Lookup;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use stream::{RawEvent, StreamReader};

use files::{clip_key, clock_offsets, offset_of, Shower};
pub use files::{
    companion_paths, root_of, shown_of, shown_root_of, streams_dir, Companion, CLOCK_OFFSETS,
};
pub use meta::{find_streams, stream_of};

/// True when `prefix` starts like an ovni stream (`ovni` and version 1 in either order).
pub fn sniff(prefix: &[u8]) -> bool {
    matches!(
        prefix.get(..8),
        Some([b'o', b'v', b'n', b'i', 1, 0, 0, 0] | [b'o', b'v', b'n', b'i', 0, 0, 0, 1])
    )
}

/// What reading the streams gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Clock of the first event (the origin of the times), with its loom's offset.
    pub origin: Option<u64>,
    /// Companion files read, in the order read.
    pub companions: Vec<Companion>,
}

/// Jumbo data held at most by the streams' next events (each waits in the merge for its
/// turn): 32 streams' worth of ovni's largest jumbo event (1 MiB). A jumbo event read while
/// the others hold this much is kept without its data (`jumbo_over_budget`).
pub const MAX_JUMBO_HELD: usize = 32 << 20;

struct Cursor<R> {
    reader: StreamReader<R>,
    thread: usize,
    /// Index of its process (loom, pid) in the trace.
    proc: usize,
    relpath: String,
    /// The file shown in positions.
    shown: String,
    offset: i64,
    prev: Option<u64>,
    unsorted: bool,
    events: u64,
}

/// Reads the streams `inputs` (sorted as [`meta::sort_streams`] sorts them), each opened
/// by the caller (decompressed, hashed) and shown in messages by its relpath, into `sink`.
pub fn read<R: Read>(inputs: Vec<(StreamFile, R)>, sink: &mut dyn Sink) -> Result<Outcome> {
    read_with(inputs, sink, runtime::Caps::default())
}

/// [`read`], the runtime models within the memory bounds `caps`.
pub fn read_with<R: Read>(
    inputs: Vec<(StreamFile, R)>,
    sink: &mut dyn Sink,
    caps: runtime::Caps,
) -> Result<Outcome> {
    let mut outcome = Outcome::default();
    sink.time_unit(TimeUnit::Ns);
    // Metadata, per stream; each JSON file read once (a v2 process's metadata.json is
    // shared by its threads).
    let mut read_json: HashMap<PathBuf, String> = HashMap::new();
    let mut metas = Vec::new();
    let mut marks: BTreeMap<i64, meta::MarkType> = BTreeMap::new();
    let shower = Shower {
        root: inputs.first().and_then(|(s, _)| root_of(s)),
        shown_root: inputs.first().and_then(|(s, _)| shown_root_of(s)),
    };
    for (s, _) in &inputs {
        let mut m = Meta::default();
        sink.source_file(&shown_of(s));
        if s.json.is_empty() {
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "missing_metadata",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{}: no stream.json (or v2 metadata.json): the thread is named with app id \
                     1, its loom's CPUs are those other streams declare",
                    s.relpath
                ),
            })?;
        }
        for j in &s.json {
            if !read_json.contains_key(j) {
                match meta::read_json_text(j) {
                    Ok((text, digest, len)) => {
                        outcome.companions.push(Companion {
                            path: j.clone(),
                            digest,
                            text_bytes: len,
                        });
                        read_json.insert(j.clone(), text);
                    }
                    Err(e) => {
                        let msg = format!("{}: {e}: its metadata is not used", shower.show(j));
                        bad_metadata(sink, Pos::None, msg)?;
                        read_json.insert(j.clone(), String::new());
                    }
                }
            }
            if let Some(text) = read_json.get(j).filter(|t| !t.is_empty()) {
                m.merge_json(text, &shower.show(j));
            }
        }
        for p in std::mem::take(&mut m.problems) {
            bad_metadata(sink, Pos::None, p)?;
        }
        // The mark types of all threads make one table, as in ovni's emulator (a thread's
        // `ovni_mark_label` calls are in its own metadata): labels add up; a declaration
        // that disagrees with an earlier one is said, and the earlier one kept.
        for (t, mt) in &m.marks {
            match marks.get_mut(t) {
                None => {
                    marks.insert(*t, mt.clone());
                }
                Some(old) => {
                    for p in meta::merge_mark(old, mt) {
                        bad_metadata(
                            sink,
                            Pos::None,
                            format!("{}: mark type {t}: {p}", s.relpath),
                        )?;
                    }
                }
            }
        }
        if m.finished == Some(false) {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unfinished_stream",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{}: its metadata says the thread did not finish (no ovni_thread_free): \
                     events after the last flush may be missing",
                    s.relpath
                ),
            })?;
        }
        metas.push(m);
    }
    drop(read_json);
    let root = inputs.first().and_then(|(s, _)| root_of(s));
    let (offsets, off_file) = match &root {
        Some(r) => {
            let path = r.join(CLOCK_OFFSETS);
            clock_offsets(&path, &shower.show(&path), sink)?
        }
        None => (HashMap::new(), None),
    };
    let off_path = root.as_ref().map(|r| shower.show(&r.join(CLOCK_OFFSETS)));
    let had_offsets = off_file.is_some();
    outcome.companions.extend(off_file);

    // The system: looms sorted by name, their CPUs by physical id then the virtual CPU.
    let mut loom_names: Vec<String> = inputs.iter().map(|(s, _)| s.loom.clone()).collect();
    loom_names.sort();
    loom_names.dedup();
    // As ovni's emulator: several looms without offsets is said (their clocks may not
    // agree), and an offset whose host is no loom's (which it refuses) too.
    if let Some(shown) = &off_path {
        sink.source_file(shown);
        if !had_offsets && loom_names.len() > 1 {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "no_clock_offsets",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{} looms and no {CLOCK_OFFSETS} (ovnisync's table) beside them: each \
                     loom's clocks are taken as they are, which aligns them only if the nodes \
                     share a clock",
                    loom_names.len()
                ),
            })?;
        }
        let mut hosts: Vec<&String> = offsets.keys().collect();
        hosts.sort();
        for h in hosts {
            let one = HashMap::from([(h.clone(), 0i64)]);
            if !loom_names.iter().any(|l| offset_of(&one, l).is_some()) {
                let msg =
                    format!("{shown}: host '{h}' is no loom's (loom.{h}): its offset is not used");
                bad_metadata(sink, Pos::None, msg)?;
            }
        }
    }
    let mut cpus = Vec::new();
    let mut looms = Vec::new();
    for (li, name) in loom_names.iter().enumerate() {
        let mut list: Vec<(i64, i64)> = Vec::new();
        for ((s, _), m) in inputs.iter().zip(&metas) {
            if &s.loom == name {
                for &(index, phyid) in &m.loom_cpus {
                    // One CPU per index and per physical id (ovni's emulator refuses a second
                    // CPU with a phyid, and a loom whose streams disagree): the first kept.
                    let clash = list.iter().find(|&&(i, p)| (i == index) != (p == phyid));
                    if let Some(&(i, p)) = clash {
                        sink.source_file(&shown_of(s));
                        let msg = format!(
                            "{}: loom_cpus lists CPU index {index} with phyid {phyid}, where the \
                             loom's metadata already has index {i} with phyid {p}: not used",
                            s.relpath
                        );
                        bad_metadata(sink, Pos::None, msg)?;
                    } else if !list.contains(&(index, phyid)) {
                        list.push((index, phyid));
                    }
                }
            }
        }
        list.sort_by_key(|(i, p)| (*p, *i));
        let mut loom = emu::Loom::default();
        for (index, phyid) in list {
            loom.by_index.insert(index, cpus.len());
            let gi = cpus.len() as i64;
            cpus.push(Model::cpu(format!("CPU {li}.{phyid}"), gi));
        }
        loom.vcpu = cpus.len();
        let gi = cpus.len() as i64;
        cpus.push(Model::cpu(format!("vCPU {li}.*"), gi));
        looms.push(loom);
    }
    for c in &cpus {
        sink.declare_entity(&c.name, Some("CPU"), None);
    }
    let mut model = Model::new(cpus, looms, marks, caps);
    let mut cursors = Vec::new();
    let mut heap = BinaryHeap::new();
    let mut heads: Vec<Option<(RawEvent, u64)>> = Vec::new();
    // Bytes of jumbo data `heads` holds.
    let mut held = 0usize;
    // The stream the sink's positions name.
    let mut src: Option<usize> = None;
    let mut libs = Vec::new();
    // ovni's thread label `TH <app>.<tid>` repeats when tids do across looms: as the
    // Paraver importer does with the emulator's rows, each such thread gets its row id
    // (`1.1.<row>`, rows in stream order) appended, so both ingests name it alike.
    let labels: Vec<String> = inputs
        .iter()
        .zip(&metas)
        .map(|((s, _), m)| format!("TH {}.{}", m.app_id.unwrap_or(1), s.tid))
        .collect();
    // Processes, for the task ids (per process in ovni).
    let mut procs: Vec<(String, i64)> = Vec::new();
    for (s, _) in &inputs {
        if !procs.iter().any(|(l, p)| *l == s.loom && *p == s.pid) {
            procs.push((s.loom.clone(), s.pid));
        }
    }
    let mut names = Vec::new();
    for ((row, l), (s, _)) in labels.iter().enumerate().zip(&inputs) {
        if labels.iter().filter(|o| *o == l).count() > 1 {
            let name = format!("{l} (1.1.{})", row + 1);
            sink.source_file(&shown_of(s));
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "duplicate_row_label",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "thread label '{l}' is also another stream's: this one is named '{name}'"
                ),
            })?;
            names.push(name);
        } else {
            names.push(l.clone());
        }
    }
    for (((s, r), m), name) in inputs.into_iter().zip(&metas).zip(names) {
        let li = loom_names.iter().position(|l| *l == s.loom).unwrap_or(0);
        sink.declare_entity(&name, Some("THREAD"), None);
        let proc = procs.iter().position(|(l, p)| *l == s.loom && *p == s.pid).unwrap_or(0);
        let th = model.add_thread(name, s.tid, s.pid, li, proc, m.app_id.unwrap_or(1), m.rank);
        if let Some(v) = &m.lib_version {
            if !libs.contains(v) {
                libs.push(v.clone());
            }
        }
        let mut r = r;
        let endian = stream::read_header(&mut r)
            .map_err(|e| Error::input(&shown_of(&s), "byte 0", format!("{e}")))?;
        if endian == stream::Endian::Big {
            sink.meta("ovni.big_endian_streams", "true");
        }
        let offset = offset_of(&offsets, &s.loom).unwrap_or(0);
        cursors.push(Cursor {
            reader: StreamReader::new(r, endian),
            thread: th,
            proc,
            relpath: s.relpath.clone(),
            shown: shown_of(&s),
            offset,
            prev: None,
            unsorted: false,
            events: 0,
        });
        heads.push(None);
    }
    let required: Vec<String> = metas.iter().flat_map(|m| m.require.iter().cloned()).collect();
    model.require(&required);
    sink.meta("ovni.streams", &cursors.len().to_string());
    sink.meta("ovni.looms", &loom_names.len().to_string());
    if !libs.is_empty() {
        sink.meta("ovni.lib_version", &libs.join(","));
    }
    if !offsets.is_empty() {
        sink.meta("ovni.clock_offsets", CLOCK_OFFSETS);
    }
    for i in 0..cursors.len() {
        advance(&mut cursors, &mut heads, &mut held, &mut heap, &mut src, i, sink)?;
    }
    let mut unknown: HashSet<[u8; 3]> = HashSet::new();
    let mut unknown_models: HashSet<u8> = HashSet::new();
    let mut tasks = tasks::Tasks::new(procs.iter().map(|(l, p)| format!("{l}/proc.{p}")).collect());
    while let Some(Reverse((key, i))) = heap.pop() {
        let Some((ev, _)) = heads.get_mut(i).and_then(Option::take) else { continue };
        held = held.saturating_sub(ev.jumbo.as_ref().map_or(0, Vec::len));
        if let Some(c) = cursors.get(i) {
            name_stream(sink, &mut src, i, &c.shown);
        }
        let (thread, proc, offset, relpath, endian) = match cursors.get(i) {
            Some(c) => (c.thread, c.proc, c.offset, c.relpath.clone(), c.reader.endian()),
            None => continue,
        };
        let origin = *outcome.origin.get_or_insert(key);
        let pos = Pos::Byte(ev.offset);
        let raw_key = clip_key(ev.clock, offset);
        let to_ns = |k: u64| -> Option<i64> {
            let d = i128::from(k) - i128::from(origin);
            i64::try_from(d).ok().filter(|t| t.abs() <= MAX_ABS_NS)
        };
        let (Some(ts), Some(applied)) = (to_ns(raw_key), to_ns(key)) else {
            sink.diagnostic(Diagnostic {
                severity: Severity::Error,
                kind: "clock_out_of_range",
                pos,
                ts: None,
                message: format!(
                    "{relpath}: clock {} is more than 2^62 ns from the first event's: event \
                     {} dropped",
                    ev.clock,
                    ev.mcv_text()
                ),
            })?;
            advance(&mut cursors, &mut heads, &mut held, &mut heap, &mut src, i, sink)?;
            continue;
        };
        if ev.jumbo_len > stream::MAX_JUMBO {
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "jumbo_too_large",
                pos,
                ts: Some(ts),
                message: format!(
                    "{relpath}: {} jumbo event of {} bytes, beyond the {} kept: the event is \
                     kept without its data",
                    ev.mcv_text(),
                    ev.jumbo_len,
                    stream::MAX_JUMBO
                ),
            })?;
        }
        let lookup = spec::decode(&ev, endian);
        let (note, value, decoded) = match &lookup {
            Lookup::Known(d) => {
                #[allow(clippy::cast_precision_loss)]
                let v = d.first_int().map(|v| v as f64);
                (Some(d.note.clone()), v, Some(d))
            }
            Lookup::Undescribed => (None, None, None),
            Lookup::Unknown(why) => {
                if unknown.insert(ev.mcv) {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Warning,
                        kind: "unknown_event",
                        pos,
                        ts: Some(ts),
                        message: format!(
                            "{relpath}: {why}: kept in events with its payload as hex; no state \
                             is derived from it (reported once per code)"
                        ),
                    })?;
                }
                let data = ev.data();
                (
                    Some(if data.is_empty() { String::new() } else { spec::hex(data) })
                        .filter(|s| !s.is_empty()),
                    None,
                    None,
                )
            }
        };
        if let Some(name) = spec::underived_model(ev.mcv[0]) {
            if unknown_models.insert(ev.mcv[0]) {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "unmodelled_event",
                    pos,
                    ts: Some(ts),
                    message: format!(
                        "{relpath}: {} is an event of ovni's {name} model, from which tracedb \
                         derives no channel (ovni's emulator does): its events are kept in \
                         events only (reported once per model)",
                        ev.mcv_text()
                    ),
                })?;
            }
        }
        let at = At { ts: applied, pos };
        let core_before = model.cpu_of(thread).map(str::to_string);
        // The ovni model's events whose payload did not decode change nothing, but for an
        // `OHx` with at least its cpu, all ovni's emulator reads of it.
        let short_execute = if decoded.is_none() { spec::execute_cpu(&ev, endian) } else { None };
        if matches!(lookup, Lookup::Known(_)) || ev.data().is_empty() {
            model.apply(thread, ev.mcv, decoded, at, sink)?;
        } else if let Some(d) = &short_execute {
            model.apply(thread, ev.mcv, Some(d), at, sink)?;
        }
        let core = model.cpu_of(thread).map(str::to_string).or(core_before);
        let name = model.threads.get(thread).map(|t| t.name.clone()).unwrap_or_default();
        let mcv = ev.mcv_text();
        sink.event(&Event {
            ts,
            source: &name,
            source_instance: -1,
            target_type: "THREAD",
            target: &name,
            target_instance: -1,
            action: &mcv,
            note: note.as_deref(),
            value,
            core: core.as_deref(),
            pos,
        })?;
        let t_ts = ts.max(applied);
        if ev.mcv[0] == b'O' {
            // The task on top of a thread's stack follows its thread (and the thread `OAr`
            // moved).
            let run = model.running(thread);
            tasks.follow(&name, run, model.cpu_of(thread), &mcv, t_ts, pos, sink)?;
            if let Some(r) = model.moved() {
                let rn = model.threads.get(r).map(|t| t.name.clone()).unwrap_or_default();
                tasks.follow(&rn, model.running(r), model.cpu_of(r), &mcv, t_ts, pos, sink)?;
            }
        } else if !model.runtime().ignored() {
            // What the runtime model refused changes no task either.
            let run = model.running(thread);
            tasks.apply(
                ev.mcv,
                decoded,
                model.runtime(),
                proc,
                &name,
                run,
                t_ts,
                core.as_deref(),
                pos,
                sink,
            )?;
        }
        if ev.mcv == *b"OU[" || ev.mcv == *b"OU]" {
            if let Some(c) = cursors.get_mut(i) {
                c.unsorted = ev.mcv[2] == b'[';
            }
        }
        advance(&mut cursors, &mut heads, &mut held, &mut heap, &mut src, i, sink)?;
    }
    for c in &cursors {
        if c.events == 0 {
            sink.source_file(&c.shown);
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "empty_stream",
                pos: Pos::None,
                ts: None,
                message: format!("{}: the stream holds no event", c.relpath),
            })?;
        }
    }
    if let Some(o) = outcome.origin {
        sink.meta("ovni.origin_clock", &o.to_string());
    }
    // What the derive stage says at the end is about the trace, not one stream.
    if let Some(r) = &shower.shown_root {
        sink.source_file(&r.display().to_string());
    }
    Ok(outcome)
}

/// Has the sink's positions name stream `i` (shown as `shown`), unless they do.
fn name_stream(sink: &mut dyn Sink, src: &mut Option<usize>, i: usize, shown: &str) {
    if *src != Some(i) {
        sink.source_file(shown);
        *src = Some(i);
    }
}

/// Reads the next event of stream `i` into its head slot and the heap.
fn advance<R: Read>(
    cursors: &mut [Cursor<R>],
    heads: &mut [Option<(RawEvent, u64)>],
    held: &mut usize,
    heap: &mut BinaryHeap<Reverse<(u64, usize)>>,
    src: &mut Option<usize>,
    i: usize,
    sink: &mut dyn Sink,
) -> Result<()> {
    let Some(c) = cursors.get_mut(i) else { return Ok(()) };
    let mut ev = match c.reader.next_event() {
        Ok(Some(ev)) => ev,
        Ok(None) => return Ok(()),
        Err(mut d) => {
            name_stream(sink, src, i, &c.shown);
            d.message = format!("{}: {}", c.relpath, d.message);
            return sink.diagnostic(d);
        }
    };
    c.events += 1;
    if let Some(mut d) = c.reader.take_warning() {
        name_stream(sink, src, i, &c.shown);
        d.message = format!("{}: {}", c.relpath, d.message);
        sink.diagnostic(d)?;
    }
    let jumbo = ev.jumbo.as_ref().map_or(0, Vec::len);
    if jumbo > 0 && held.saturating_add(jumbo) > MAX_JUMBO_HELD {
        name_stream(sink, src, i, &c.shown);
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "jumbo_over_budget",
            pos: Pos::Byte(ev.offset),
            ts: None,
            message: format!(
                "{}: {} jumbo event of {jumbo} bytes while the other streams' next events hold \
                 {held} bytes of jumbo data (at most {MAX_JUMBO_HELD} are held): the event is \
                 kept without its data",
                c.relpath,
                ev.mcv_text()
            ),
        })?;
        ev.jumbo = Some(Vec::new());
    } else {
        *held = held.saturating_add(jumbo);
    }
    let mut key = clip_key(ev.clock, c.offset);
    if let Some(prev) = c.prev.filter(|&p| key < p) {
        let (severity, why) = if c.unsorted {
            (Severity::Info, "inside an OU[ unordered region, which ovni allows")
        } else {
            (Severity::Warning, "the reference reader stops here")
        };
        name_stream(sink, src, i, &c.shown);
        sink.diagnostic(Diagnostic {
            severity,
            kind: "clock_backwards",
            pos: Pos::Byte(ev.offset),
            ts: None,
            message: format!(
                "{}: {} clock {} is {} ns before the event before it ({why}): kept with its own \
                 time in events, applied to states at the earlier event's time",
                c.relpath,
                ev.mcv_text(),
                ev.clock,
                prev - key
            ),
        })?;
        key = prev;
    }
    c.prev = Some(key);
    if let Some(h) = heads.get_mut(i) {
        *h = Some((ev, key));
    }
    heap.push(Reverse((key, i)));
    Ok(())
}
