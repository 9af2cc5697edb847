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
//!
//! Layout: `files.rs` finds the streams and the files beside them, `system.rs` reads the
//! metadata into the looms, CPUs and threads, `merge.rs` merges the streams by clock,
//! `stream.rs` and `spec.rs` read and describe each event, `emu/` the ovni model's
//! channels, `runtime/` nOS-V's and Nanos6's, `tasks.rs` their task instances.
pub mod emu;
mod files;
mod merge;
pub mod meta;
pub mod runtime;
pub mod spec;
pub mod stream;
mod system;
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
use merge::{Cursor, Merge};
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
    let shower = Shower {
        root: inputs.first().and_then(|(s, _)| root_of(s)),
        shown_root: inputs.first().and_then(|(s, _)| shown_root_of(s)),
    };
    let (metas, marks) = system::read_metadata(&inputs, &shower, &mut outcome, sink)?;
    let mut loom_names: Vec<String> = inputs.iter().map(|(s, _)| s.loom.clone()).collect();
    loom_names.sort();
    loom_names.dedup();
    let offsets = system::read_offsets(&inputs, &loom_names, &shower, &mut outcome, sink)?;
    let (cpus, looms) = system::loom_cpus(&inputs, &metas, &loom_names, sink)?;
    let mut model = Model::new(cpus, looms, marks, caps);
    // Processes, for the task ids (per process in ovni).
    let mut procs: Vec<(String, i64)> = Vec::new();
    for (s, _) in &inputs {
        if !procs.iter().any(|(l, p)| *l == s.loom && *p == s.pid) {
            procs.push((s.loom.clone(), s.pid));
        }
    }
    let names = system::thread_names(&inputs, &metas, sink)?;
    let mut merge = Merge::new();
    let mut libs = Vec::new();
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
        merge.push(Cursor {
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
    }
    let required: Vec<String> = metas.iter().flat_map(|m| m.require.iter().cloned()).collect();
    model.require(&required);
    sink.meta("ovni.streams", &merge.cursors.len().to_string());
    sink.meta("ovni.looms", &loom_names.len().to_string());
    if !libs.is_empty() {
        sink.meta("ovni.lib_version", &libs.join(","));
    }
    if !offsets.is_empty() {
        sink.meta("ovni.clock_offsets", CLOCK_OFFSETS);
    }
    merge.start(sink)?;
    let tasks = tasks::Tasks::new(procs.iter().map(|(l, p)| format!("{l}/proc.{p}")).collect());
    let mut replay = Replay {
        model,
        tasks,
        origin: None,
        unknown: HashSet::new(),
        unknown_models: HashSet::new(),
    };
    while let Some((key, i, ev)) = merge.next(sink) {
        let Some(c) = merge.cursors.get(i) else { continue };
        if replay.event(&ev, key, c, sink)? && (ev.mcv == *b"OU[" || ev.mcv == *b"OU]") {
            if let Some(c) = merge.cursors.get_mut(i) {
                c.unsorted = ev.mcv[2] == b'[';
            }
        }
        merge.advance(i, sink)?;
    }
    outcome.origin = replay.origin;
    for c in &merge.cursors {
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

/// The derive side of the read: the ovni model and the runtimes' tasks, given the events in
/// merge order.
struct Replay {
    model: Model,
    tasks: tasks::Tasks,
    /// The first event's merge key: the origin of the times.
    origin: Option<u64>,
    /// Event codes and models already reported (`unknown_event`, `unmodelled_event`).
    unknown: HashSet<[u8; 3]>,
    unknown_models: HashSet<u8>,
}

impl Replay {
    /// Writes `ev`, of stream `c` and merge key `key`, as an `events` row and applies it to
    /// the model and the tasks; false when it is dropped (its clock is out of range).
    fn event<R: Read>(
        &mut self,
        ev: &RawEvent,
        key: u64,
        c: &Cursor<R>,
        sink: &mut dyn Sink,
    ) -> Result<bool> {
        let (thread, proc, offset, endian) = (c.thread, c.proc, c.offset, c.reader.endian());
        let relpath = &c.relpath;
        let origin = *self.origin.get_or_insert(key);
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
            return Ok(false);
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
        let lookup = spec::decode(ev, endian);
        let (note, value, decoded) = match &lookup {
            Lookup::Known(d) => {
                #[allow(clippy::cast_precision_loss)]
                let v = d.first_int().map(|v| v as f64);
                (Some(d.note.clone()), v, Some(d))
            }
            Lookup::Undescribed => (None, None, None),
            Lookup::Unknown(why) => {
                if self.unknown.insert(ev.mcv) {
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
            if self.unknown_models.insert(ev.mcv[0]) {
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
        let core_before = self.model.cpu_of(thread).map(str::to_string);
        // The ovni model's events whose payload did not decode change nothing, but for an
        // `OHx` with at least its cpu, all ovni's emulator reads of it.
        let short_execute = if decoded.is_none() { spec::execute_cpu(ev, endian) } else { None };
        if matches!(lookup, Lookup::Known(_)) || ev.data().is_empty() {
            self.model.apply(thread, ev.mcv, decoded, at, sink)?;
        } else if let Some(d) = &short_execute {
            self.model.apply(thread, ev.mcv, Some(d), at, sink)?;
        }
        let core = self.model.cpu_of(thread).map(str::to_string).or(core_before);
        let name = self.model.threads.get(thread).map(|t| t.name.clone()).unwrap_or_default();
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
            let run = self.model.running(thread);
            self.tasks.follow(&name, run, self.model.cpu_of(thread), &mcv, t_ts, pos, sink)?;
            if let Some(r) = self.model.moved() {
                let rn = self.model.threads.get(r).map(|t| t.name.clone()).unwrap_or_default();
                self.tasks.follow(
                    &rn,
                    self.model.running(r),
                    self.model.cpu_of(r),
                    &mcv,
                    t_ts,
                    pos,
                    sink,
                )?;
            }
        } else if !self.model.runtime().ignored() {
            // What the runtime model refused changes no task either.
            let run = self.model.running(thread);
            self.tasks.apply(
                ev.mcv,
                decoded,
                self.model.runtime(),
                proc,
                &name,
                run,
                t_ts,
                core.as_deref(),
                pos,
                sink,
            )?;
        }
        Ok(true)
    }
}
