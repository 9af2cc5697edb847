//! The derive stage, shared by every format: it receives normalised events (it is the
//! importers' [`Sink`](crate::ingest::Sink)), runs one state machine per entity instance
//! (SEMANTICS.md: processes, runnables, semaphores, signals, core occupancy) and produces
//! `intervals`, `instances` and `lock_requests` rows, plus a `diagnostics` row for every
//! transition the BTF tables do not allow. The machine then resynchronises on the state the
//! event implies: an event is never dropped and an ingest never aborts here (unless
//! `--strict`).
//!
//! Conventions (documented in the README's table reference):
//! * an entity instance first seen in the middle of its life (a trace that starts while a
//!   task runs, producers that never log `activate`) starts in the state the event leads to,
//!   with an `info` diagnostic `unknown_prior_state`; its instance row is `complete = false`;
//! * times go through `max(ts, previous ts)` so durations are never negative even when the
//!   file's time goes backwards (the `events` row keeps the time as read);
//! * when a task leaves its core (preempt, wait, park) its running runnables are suspended
//!   with it, and resumed when it runs again; explicit `suspend`/`resume` events that follow
//!   are folded into these transitions.
//! * records that carry their own times (Paraver states, channel updates, messages: see
//!   [`Sink::span`](crate::ingest::Sink::span)) keep them: they are not clamped, only
//!   buffered and written sorted. A channel update earlier than the channel's current state
//!   start is clamped to that start for that channel only (a `time_backwards` info
//!   diagnostic). States still open at the end close at the capture end: the latest time
//!   seen or the end the header declares, whichever is later, with `open = true`.
//!
//! Files: `sink.rs` takes each importer call and sends an event to its entity's state
//! machine (`process.rs` for tasks and ISRs, `runnable.rs`, `semaphore.rs` for semaphores
//! and signals) or a timed record to `channels.rs`; `cores.rs` says on which core an event
//! happens and keeps core occupancy; `entity.rs` keeps the entities and their types;
//! `rows.rs` holds the rows written and the reorder buffer that sorts them. This file holds
//! the stage's state ([`Deriver`]), the row emitters and the end of the capture
//! ([`Deriver::finish`]).
mod channels;
mod cores;
mod entity;
mod process;
pub mod rows;
mod runnable;
mod semaphore;
mod signal;
mod sink;

use crate::ingest::diag::{DiagRow, Diagnostics};
use crate::ingest::{Diagnostic, Severity};
use crate::model::strings::FastMap;
use crate::model::{Interner, Pos, Sym, TimeUnit};
use crate::Result;
use channels::Chan;
use entity::Class;
pub use rows::{EventRow, InstanceRow, IntervalRow, LockRow, MessageRow, Reorder, StateText};
use std::collections::BTreeMap;

/// Rows held back for time ordering, per table.
const REORDER_CAP: usize = 1 << 18;

/// Where derived rows go (the store's writer, or a vector in tests).
pub trait Output {
    /// One event, in file order (BTF) or time order (Paraver, sorted within a window).
    fn event(&mut self, row: &EventRow<'_>, names: &Interner) -> Result<()>;
    /// Intervals, sorted by start within the reorder window.
    fn intervals(&mut self, rows: &[IntervalRow], names: &Interner) -> Result<()>;
    /// Instances, sorted by their first time.
    fn instances(&mut self, rows: &[InstanceRow], names: &Interner) -> Result<()>;
    /// Lock requests, sorted by their first time.
    fn lock_requests(&mut self, rows: &[LockRow], names: &Interner) -> Result<()>;
    /// Messages, sorted by logical send time. Outputs without a messages table ignore them.
    fn messages(&mut self, _rows: &[MessageRow], _names: &Interner) -> Result<()> {
        Ok(())
    }
}

/// One row of the `entities` table.
#[derive(Debug, Clone)]
pub struct EntityInfo {
    /// Name.
    pub name: Sym,
    /// Type code, when known.
    pub entity_type: Option<Sym>,
    /// Parent (the task of a runnable).
    pub parent: Option<Sym>,
    /// Line where it first appeared.
    pub first_line: Option<u64>,
    /// Id from a BTF `#entityTable`.
    pub btf_id: Option<i64>,
    /// The type was inferred (a core named as a source), not written in the file.
    pub inferred: bool,
    /// The type is the one a header declared (a BTF `#entityTypeTable`).
    pub declared: bool,
}

/// What the derive stage knows at the end.
pub struct Summary {
    /// Entities in order of first appearance.
    pub entities: Vec<EntityInfo>,
    /// Name table for the entity rows.
    pub names: Interner,
    /// Header metadata (last value of a key wins).
    pub meta: BTreeMap<String, String>,
    /// Unit of the source times.
    pub unit: TimeUnit,
    /// Events seen.
    pub events: u64,
    /// First and last event time.
    pub ts_range: Option<(i64, i64)>,
    /// Row counts written.
    pub intervals: u64,
    /// Instance rows written.
    pub instances: u64,
    /// Lock request rows written.
    pub lock_requests: u64,
    /// Message rows written.
    pub messages: u64,
    /// Diagnostics per kind.
    pub diag_counts: BTreeMap<&'static str, (Severity, u64)>,
    /// Diagnostics rows.
    pub diagnostics: Vec<DiagRow>,
}

/// Well-known strings, interned once.
struct Known {
    state: Sym,
    running: Sym,
    value: Sym,
    core_type: Sym,
    isr_type: Sym,
    /// `ISR`, the older files' code for an ISR.
    isr_type_old: Sym,
    /// `Core`, the older files' code for a core.
    core_type_old: Sym,
    sem_type: Sym,
    sig_type: Sym,
}

/// The derive stage. Feed it events through [`Sink`](crate::ingest::Sink), then call
/// [`Deriver::finish`].
pub struct Deriver<O: Output> {
    out: O,
    names: Interner,
    known: Known,
    /// Entity id by name symbol.
    entity_ids: FastMap<Sym, usize>,
    entities: Vec<EntityInfo>,
    /// Class per type symbol, cached.
    classes: FastMap<Sym, Class>,
    procs: FastMap<(Sym, i64), process::Proc>,
    last_terminated: FastMap<Sym, i64>,
    runnables: FastMap<(Sym, i64), runnable::Runnable>,
    cores: FastMap<Sym, cores::CoreSlot>,
    /// Last core each process or runnable entity was on (any instance).
    entity_core: FastMap<Sym, Sym>,
    /// Core of each live process or runnable instance: two instances of one task may run
    /// on two cores at once.
    inst_core: FastMap<(Sym, i64), Sym>,
    /// Per semaphore, an `overfull` step no open request could take yet: its time, and the
    /// request marked contended meanwhile with its previous mark.
    overfull_pending: FastMap<Sym, semaphore::PendingOverfull>,
    /// Open process instances per entity, oldest first (see `MAX_OPEN_INSTANCES`).
    open_by_entity: FastMap<Sym, std::collections::VecDeque<i64>>,
    /// Process instances in the order they opened, all entities together (see
    /// `MAX_OPEN_TOTAL`); entries of instances closed since are skipped and dropped lazily.
    open_order: std::collections::VecDeque<(Sym, i64)>,
    /// Runnables started by a process instance not seen yet, by that instance.
    orphans: FastMap<(Sym, i64), std::collections::VecDeque<(Sym, i64)>>,
    /// Runnable entities with no parent yet, started by a source whose type was not known
    /// then, by that source: a process appearing later is their parent (a capture that
    /// begins while a task runs runnables that end before the task's first event). One
    /// entry per runnable entity (`unparented_seen`), so memory is bounded by the names.
    unparented: FastMap<Sym, Vec<Sym>>,
    unparented_seen: FastMap<Sym, ()>,
    /// Runnable instances in the order they started (see `MAX_OPEN_RUNNABLES`); entries of
    /// instances ended since are skipped and dropped lazily.
    runnable_order: std::collections::VecDeque<(Sym, i64)>,
    /// Last instance of each runnable that ended (terminated, or ended with its task).
    runnable_ended: FastMap<Sym, i64>,
    /// Runnables ended by their task's terminate at [`Deriver::pending_ends_ts`]: their own
    /// terminate at that same time is folded in; one that never comes is reported.
    pending_ends: Vec<runnable::PendingEnd>,
    pending_ends_ts: i64,
    /// Processes given their core back by an ISR that left it (see
    /// `cores::resume_interrupted`), resumed only once nothing else happens at that time:
    /// an ISR taking the core at the same instant (tail-chaining) interrupts them on.
    resumes: Vec<cores::PendingResume>,
    /// Processes that resumed on another core while running, waiting at that time for the
    /// preempt from the core they left (see `cores::move_by_resume`).
    moves: Vec<cores::PendingMove>,
    /// Processes another task took the core from with no preempt, waiting at that time for
    /// their own end there (see `cores::end_displaced`) before a `core_conflict` is said.
    conflicts: Vec<cores::PendingConflict>,
    sems: FastMap<Sym, semaphore::Sem>,
    requests: FastMap<Sym, Vec<semaphore::Request>>,
    /// Releases of one instant by `released` or by `decrement` alone, not yet paired with the
    /// other at that instant (see `semaphore::ReleaseStep`).
    release_steps: (i64, Vec<semaphore::ReleaseStep>),
    signals: FastMap<Sym, signal::Signal>,
    diags: Diagnostics,
    meta: BTreeMap<String, String>,
    unit: TimeUnit,
    seq: i64,
    last_ts: Option<i64>,
    ts_range: Option<(i64, i64)>,
    intervals: Reorder<IntervalRow>,
    instances: Reorder<InstanceRow>,
    locks: Reorder<LockRow>,
    ready_intervals: Vec<IntervalRow>,
    ready_instances: Vec<InstanceRow>,
    ready_locks: Vec<LockRow>,
    counts: [u64; 4],
    /// Channels with a current state, by (entity, channel).
    channels: FastMap<(Sym, Sym), Chan>,
    /// Per entity, its channels in the order they got a state (see `MAX_OPEN_CHANNELS`), and
    /// how many have one now; entries of channels ended since are dropped lazily.
    channel_order: FastMap<Sym, (std::collections::VecDeque<Sym>, usize)>,
    /// When each channel that a 0 ended was ended: a change dated before that is as late
    /// as a change before the current state's start.
    channels_ended: FastMap<(Sym, Sym), i64>,
    /// Spans without an end, closed at the capture end.
    open_spans: Vec<IntervalRow>,
    /// The last span of each (entity, channel): begin and end (`i64::MAX` when open).
    last_span: FastMap<(Sym, Sym), (i64, i64)>,
    messages: Reorder<MessageRow>,
    ready_messages: Vec<MessageRow>,
    /// End of the trace as declared by its header.
    declared_end: Option<i64>,
}

impl<O: Output> Deriver<O> {
    /// A derive stage writing to `out`; diagnostics name `path`; `strict` makes warnings fatal.
    pub fn new(out: O, path: &str, strict: bool) -> Self {
        let mut names = Interner::default();
        let known = Known {
            state: names.intern("state"),
            running: names.intern("running"),
            value: names.intern("value"),
            core_type: names.intern("C"),
            isr_type: names.intern("I"),
            isr_type_old: names.intern("ISR"),
            core_type_old: names.intern("Core"),
            sem_type: names.intern("SEM"),
            sig_type: names.intern("SIG"),
        };
        Deriver {
            out,
            names,
            known,
            entity_ids: FastMap::default(),
            entities: Vec::new(),
            classes: FastMap::default(),
            procs: FastMap::default(),
            last_terminated: FastMap::default(),
            runnables: FastMap::default(),
            cores: FastMap::default(),
            entity_core: FastMap::default(),
            inst_core: FastMap::default(),
            runnable_ended: FastMap::default(),
            orphans: FastMap::default(),
            unparented: FastMap::default(),
            unparented_seen: FastMap::default(),
            runnable_order: std::collections::VecDeque::new(),
            open_by_entity: FastMap::default(),
            open_order: std::collections::VecDeque::new(),
            overfull_pending: FastMap::default(),
            pending_ends: Vec::new(),
            pending_ends_ts: i64::MIN,
            resumes: Vec::new(),
            moves: Vec::new(),
            conflicts: Vec::new(),
            sems: FastMap::default(),
            requests: FastMap::default(),
            release_steps: (i64::MIN, Vec::new()),
            signals: FastMap::default(),
            diags: Diagnostics::new(path, strict),
            meta: BTreeMap::new(),
            unit: TimeUnit::Ns,
            seq: 0,
            last_ts: None,
            ts_range: None,
            intervals: Reorder::new(REORDER_CAP),
            instances: Reorder::new(REORDER_CAP),
            locks: Reorder::new(REORDER_CAP),
            ready_intervals: Vec::new(),
            ready_instances: Vec::new(),
            ready_locks: Vec::new(),
            counts: [0; 4],
            channels: FastMap::default(),
            channels_ended: FastMap::default(),
            channel_order: FastMap::default(),
            open_spans: Vec::new(),
            last_span: FastMap::default(),
            messages: Reorder::new(REORDER_CAP),
            ready_messages: Vec::new(),
            declared_end: None,
        }
    }

    /// Names `path` in the positions of later diagnostics (the next file of a capture).
    pub fn set_source(&mut self, path: &str) {
        self.diags.set_path(path);
    }

    fn diag(
        &mut self,
        severity: Severity,
        kind: &'static str,
        pos: Pos,
        ts: i64,
        message: String,
    ) -> Result<()> {
        self.diags.push(Diagnostic { severity, kind, pos, ts: Some(ts), message })
    }

    fn emit_interval(&mut self, row: IntervalRow) -> Result<()> {
        self.counts[0] += 1;
        let ts = row.ts;
        let size = match &row.state {
            StateText::Owned(text) => text.len(),
            StateText::Sym(_) => 0,
        };
        self.intervals.push_sized(ts, row, size, &mut self.ready_intervals);
        if !self.ready_intervals.is_empty() {
            self.out.intervals(&self.ready_intervals, &self.names)?;
            self.ready_intervals.clear();
        }
        Ok(())
    }

    fn emit_instance(&mut self, row: InstanceRow) -> Result<()> {
        self.counts[1] += 1;
        let ts = row.activate_ts.or(row.start_ts).or(row.terminate_ts).unwrap_or(i64::MIN);
        self.instances.push(ts, row, &mut self.ready_instances);
        if !self.ready_instances.is_empty() {
            self.out.instances(&self.ready_instances, &self.names)?;
            self.ready_instances.clear();
        }
        Ok(())
    }

    fn emit_lock(&mut self, row: LockRow) -> Result<()> {
        self.counts[2] += 1;
        let ts = row.request_ts.or(row.assigned_ts).or(row.released_ts).unwrap_or(i64::MIN);
        self.locks.push(ts, row, &mut self.ready_locks);
        if !self.ready_locks.is_empty() {
            self.out.lock_requests(&self.ready_locks, &self.names)?;
            self.ready_locks.clear();
        }
        Ok(())
    }

    /// Widens the capture's time range to `ts`.
    fn see(&mut self, ts: i64) {
        self.ts_range = Some(match self.ts_range {
            None => (ts, ts),
            Some((lo, hi)) => (lo.min(ts), hi.max(ts)),
        });
    }

    fn emit_message(&mut self, row: MessageRow) -> Result<()> {
        self.counts[3] += 1;
        let ts = row.send_ts;
        self.messages.push(ts, row, &mut self.ready_messages);
        if !self.ready_messages.is_empty() {
            self.out.messages(&self.ready_messages, &self.names)?;
            self.ready_messages.clear();
        }
        Ok(())
    }

    /// Closes every open state at the last event time, flushes all rows, and returns the
    /// summary and the output.
    pub fn finish(mut self) -> Result<(Summary, O)> {
        self.resume_pending(None)?;
        self.report_moves(None)?;
        self.report_conflicts(None)?;
        self.report_pending_ends()?;
        let mut end = self.last_ts.unwrap_or(0);
        if let Some((_, hi)) = self.ts_range {
            end = end.max(hi);
        }
        // Not when the input was cut short: the states open at the cut are not known to
        // have lasted to the declared end (the `input_truncated` row says where it was cut).
        let cut = self.diags.counts().contains_key("input_truncated");
        if let Some(d) = self.declared_end.filter(|_| !cut) {
            end = end.max(d);
            // The capture spans what its header declares: open intervals run to that end,
            // and so must `captures.ts_max` (CPU load and report spans use it).
            if let Some((lo, hi)) = self.ts_range {
                self.ts_range = Some((lo, hi.max(d)));
            }
        }
        self.close_processes(end)?;
        self.close_semaphores(end)?;
        self.close_channels(end)?;
        self.messages.drain(&mut self.ready_messages);
        self.out.messages(&self.ready_messages, &self.names)?;
        self.intervals.drain(&mut self.ready_intervals);
        self.out.intervals(&self.ready_intervals, &self.names)?;
        self.instances.drain(&mut self.ready_instances);
        self.out.instances(&self.ready_instances, &self.names)?;
        self.locks.drain(&mut self.ready_locks);
        self.out.lock_requests(&self.ready_locks, &self.names)?;
        let summary = Summary {
            entities: self.entities,
            names: self.names,
            meta: self.meta,
            unit: self.unit,
            events: u64::try_from(self.seq).unwrap_or(0),
            ts_range: self.ts_range,
            intervals: self.counts[0],
            instances: self.counts[1],
            lock_requests: self.counts[2],
            messages: self.counts[3],
            diag_counts: self.diags.counts().clone(),
            diagnostics: self.diags.into_rows(),
        };
        Ok((summary, self.out))
    }
}

/// `name` as one of the `known` static names ("" when it is none of them), so that state
/// machines can match on it without holding a borrow of the interner.
fn known(name: &str, known: &[&'static str]) -> &'static str {
    known.iter().find(|k| **k == name).copied().unwrap_or("")
}

#[cfg(test)]
mod tests;
