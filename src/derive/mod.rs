//! The derive stage, shared by every format: it receives normalised events (it is the
//! importers' [`Sink`]), runs one state machine per entity instance (SEMANTICS.md: processes,
//! runnables, semaphores, signals, core occupancy) and produces `intervals`, `instances` and
//! `lock_requests` rows, plus a `diagnostics` row for every transition the BTF tables do not
//! allow. The machine then resynchronises on the state the event implies: an event is never
//! dropped and an ingest never aborts here (unless `--strict`).
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
//!   [`Sink::span`]) keep them: they are not clamped, only buffered and written sorted. A
//!   channel update earlier than the channel's current state start is clamped to that start
//!   for that channel only (a `time_backwards` info diagnostic). States still open at the end
//!   close at the capture end: the latest time seen or the end the header declares, whichever
//!   is later, with `open = true`.
mod cores;
mod process;
pub mod rows;
mod runnable;
mod semaphore;

use crate::ingest::diag::{DiagRow, Diagnostics};
use crate::ingest::{ChannelSet, Diagnostic, Message, Severity, Sink, Span};
use crate::model::strings::FastMap;
use crate::model::{Event, Interner, Pos, Sym, TimeUnit};
use crate::Result;
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

/// Channels of one entity with a state at once beyond which the oldest is closed: real
/// threads have a few to a few hundred event types; one with millions would hold them all.
pub(crate) const MAX_OPEN_CHANNELS: usize = 1 << 16;

/// The current state of one channel of one entity (Paraver event types).
struct Chan {
    entity_type: Sym,
    ts: i64,
    value: i128,
    /// The value's label; without one the state is the value, written out when emitted.
    label: Option<Sym>,
    core: Option<Sym>,
}

impl Chan {
    /// Its interval on `channel` of `entity`, up to `end`: ended by the channel's next
    /// change, or still `open` (at the capture's end, or closed by the bound).
    fn row(&self, entity: Sym, channel: Sym, end: i64, open: bool) -> IntervalRow {
        IntervalRow {
            entity,
            entity_type: self.entity_type,
            instance: -1,
            channel,
            state: self
                .label
                .map_or_else(|| StateText::Owned(self.value.to_string().into()), StateText::Sym),
            #[allow(clippy::cast_precision_loss)]
            value: Some(self.value as f64),
            ts: self.ts,
            dur: (end - self.ts).max(0),
            core: self.core,
            start_action: Some(channel),
            end_action: (!open).then_some(channel),
            open,
        }
    }
}

/// What kind of state machine an entity type has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Process,
    Runnable,
    Semaphore,
    Signal,
    Core,
    Other,
}

fn class_of(ty: &str) -> Class {
    match ty {
        "T" | "I" | "ISR" => Class::Process,
        "R" => Class::Runnable,
        "SEM" => Class::Semaphore,
        "SIG" => Class::Signal,
        // `CPU`: the Paraver and ovni ingests' processors (a task event caused by one runs on
        // it, as a BTF core's does). In any case (`CORE`, `cpu`): a core declared so is
        // still a core, and no other type is spelled so.
        t if ["C", "Core", "CPU"].iter().any(|c| t.eq_ignore_ascii_case(c)) => Class::Core,
        _ => Class::Other,
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

/// The derive stage. Feed it events through [`Sink`], then call [`Deriver::finish`].
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
    signals: FastMap<Sym, semaphore::Signal>,
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

    /// The entity id of `name`, registering it when new.
    fn entity(&mut self, name: Sym, pos: Pos) -> usize {
        if let Some(&id) = self.entity_ids.get(&name) {
            return id;
        }
        let id = self.entities.len();
        let first_line = match pos {
            Pos::Line(n) => Some(n),
            _ => None,
        };
        self.entities.push(EntityInfo {
            name,
            entity_type: None,
            parent: None,
            first_line,
            btf_id: None,
            inferred: false,
            declared: false,
        });
        self.entity_ids.insert(name, id);
        id
    }

    /// Records `ty` as the type of `name` unless it already has one.
    fn set_type(&mut self, name: Sym, ty: Sym, inferred: bool, pos: Pos) {
        let id = self.entity(name, pos);
        self.set_type_of(id, ty, inferred);
    }

    /// [`Self::set_type`] of the entity with id `id`.
    fn set_type_of(&mut self, id: usize, ty: Sym, inferred: bool) {
        if let Some(e) = self.entities.get_mut(id) {
            if e.entity_type.is_none() || (e.inferred && !inferred) {
                e.entity_type = Some(ty);
                e.inferred = inferred;
            }
        }
    }

    /// Reports a target line giving `entity` another type than the one it has (declared or
    /// written first; names are unique across types, SEMANTICS.md). The entity keeps its
    /// first type; the line's own type drives this event's state machine, as before.
    fn type_conflict(&mut self, id: usize, written: Sym, ev: &Event<'_>, ts: i64) -> Result<()> {
        let Some(e) = self.entities.get(id) else { return Ok(()) };
        let Some(known) = e.entity_type.filter(|&t| t != written && !e.inferred) else {
            return Ok(());
        };
        let k = &self.known;
        let same = |a: Sym, b: Sym| {
            [(k.isr_type, k.isr_type_old), (k.core_type, k.core_type_old)]
                .iter()
                .any(|&(x, y)| (a == x && b == y) || (a == y && b == x))
        };
        if same(known, written) {
            return Ok(());
        }
        let whence = if e.declared { "declared" } else { "first written" };
        let msg = format!(
            "{} is written as type {} here but was {whence} as {}: names are unique across \
             types; the entity keeps type {}, this event is read as a {} event",
            ev.target,
            ev.target_type,
            self.names.resolve(known),
            self.names.resolve(known),
            ev.target_type
        );
        self.diag(Severity::Warning, "type_conflict", ev.pos, ts, msg)
    }

    /// BTF 2.1.5's signal initialisation, `0,SIG_X,-1,SIM,SIM,-1,tag,SIG_INIT_VALUE,5`
    /// (TA Simulator writes one per signal at the start): the signal named as the source
    /// holds that value from then on, as a `write` would set it. A source known as another
    /// type than a signal is left alone.
    fn signal_init_value(&mut self, source: Sym, ts: i64, action: Sym, ev: &Event) -> Result<()> {
        let Some(text) = ev.note.and_then(|n| n.strip_prefix("SIG_INIT_VALUE,")) else {
            return Ok(());
        };
        let id = self.entity(source, ev.pos);
        match self.type_of(source) {
            None => self.set_type_of(id, self.known.sig_type, true),
            Some(t) if t == self.known.sig_type => {}
            Some(_) => return Ok(()),
        }
        let text = text.trim();
        self.signal_write(source, ts, action, Some(text), numeric(Some(text)))
    }

    fn type_of(&self, name: Sym) -> Option<Sym> {
        let id = self.entity_ids.get(&name)?;
        self.entities.get(*id)?.entity_type
    }

    fn class(&mut self, ty: Sym) -> Class {
        if let Some(&c) = self.classes.get(&ty) {
            return c;
        }
        let c = class_of(self.names.resolve(ty));
        self.classes.insert(ty, c);
        c
    }

    fn is_core(&mut self, name: Sym) -> bool {
        match self.type_of(name) {
            Some(t) => self.class(t) == Class::Core,
            None => false,
        }
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

    /// Counts a channel of `entity` that got a state; past [`MAX_OPEN_CHANNELS`] of them,
    /// the one that got its state first is closed, so that a trace of millions of event
    /// types on one thread keeps memory bounded.
    fn channel_opened(&mut self, entity: Sym, channel: Sym, pos: Pos, ts: i64) -> Result<()> {
        let (order, open) = self.channel_order.entry(entity).or_default();
        order.push_back(channel);
        *open += 1;
        let mut evict = None;
        if *open > MAX_OPEN_CHANNELS {
            while let Some(c) = order.pop_front() {
                if c != channel && self.channels.contains_key(&(entity, c)) {
                    *open -= 1;
                    evict = Some(c);
                    break;
                }
            }
        }
        if order.len() > 2 * *open + 1024 {
            // Keep each open channel's latest entry, in order.
            let mut seen = FastMap::default();
            let channels = &self.channels;
            let mut kept: Vec<Sym> = order
                .iter()
                .rev()
                .filter(|c| channels.contains_key(&(entity, **c)) && seen.insert(**c, ()).is_none())
                .copied()
                .collect();
            kept.reverse();
            *order = kept.into();
        }
        let Some(old) = evict else { return Ok(()) };
        let Some(c) = self.channels.remove(&(entity, old)) else { return Ok(()) };
        let msg = format!(
            "{} has more than {MAX_OPEN_CHANNELS} channels (event types) with a state at once; \
             the state of the oldest, {}, is closed here, shown open",
            self.names.resolve(entity),
            self.names.resolve(old)
        );
        self.diag(Severity::Warning, "too_many_open_channels", pos, ts, msg)?;
        self.emit_interval(c.row(entity, old, ts, true))
    }

    /// Closes the open Paraver spans and channel states at `end`.
    fn close_channels(&mut self, end: i64) -> Result<()> {
        for mut row in std::mem::take(&mut self.open_spans) {
            row.dur = (end - row.ts).max(0);
            self.emit_interval(row)?;
        }
        // Sorted by keys alone: a copy of every open state would double the memory of
        // traces with millions of them.
        let mut open: Vec<(i64, Sym, Sym)> =
            self.channels.iter().map(|(k, c)| (c.ts, k.0, k.1)).collect();
        open.sort_unstable();
        for (_, entity, channel) in open {
            let Some(c) = self.channels.remove(&(entity, channel)) else { continue };
            self.emit_interval(c.row(entity, channel, end, true))?;
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

    /// Core on which an event happens: the source when it is a core, else where the source
    /// instance (or, failing that, the source entity) runs, else (for process events) a
    /// source that is a core by name or by what it does, else where the target instance last
    /// ran.
    fn resolve_core(
        &mut self,
        ev: &Event<'_>,
        source: Sym,
        target: Sym,
        process: bool,
    ) -> Result<Option<Sym>> {
        if self.is_core(source) {
            return Ok(Some(source));
        }
        if let Some(&c) = self.inst_core.get(&(source, ev.source_instance)) {
            return Ok(Some(c));
        }
        if let Some(&c) = self.entity_core.get(&source) {
            return Ok(Some(c));
        }
        if !process {
            return Ok(None);
        }
        // The target's core: its instance's, else (not for an activate, which makes a new
        // instance that runs nowhere yet) the core the entity ran on last.
        let target_core = self
            .inst_core
            .get(&(target, ev.target_instance))
            .or_else(|| (ev.action != "activate").then(|| self.entity_core.get(&target)).flatten())
            .copied();
        if self.type_of(source).is_none() {
            let by_name = looks_like_core(ev.source);
            // SEMANTICS.md: every process transition but activate is caused by a core. An
            // undeclared source doing one to a process whose core is not known yet is one.
            let by_role = target_core.is_none()
                && ev.action != "activate"
                && process::process_transition(ev.action).is_some();
            if by_name || by_role {
                let c = self.known.core_type;
                self.set_type(source, c, true, ev.pos);
                if !by_name {
                    let msg = format!(
                        "{} is taken for a core: it is the source of {}'s {} and is declared \
                         nowhere (process transitions other than activate are caused by a core)",
                        ev.source, ev.target, ev.action
                    );
                    self.diag(Severity::Info, "core_inferred", ev.pos, ev.ts, msg)?;
                }
                return Ok(Some(source));
            }
        }
        Ok(target_core)
    }
}

/// `name` as one of the `known` static names ("" when it is none of them), so that state
/// machines can match on it without holding a borrow of the interner.
fn known(name: &str, known: &[&'static str]) -> &'static str {
    known.iter().find(|k| **k == name).copied().unwrap_or("")
}

/// Actions SEMANTICS.md lists for types without a state machine (signals write through
/// `signal_write`; the others only keep their events).
fn listed_actions(ty: &str) -> Option<&'static [&'static str]> {
    Some(match ty {
        "SIG" => &["read", "write"],
        "EVENT" => &["wait_event", "set_event", "clear_event"],
        "STI" => &["trigger"],
        "SIM" => &["tag", "description", "finalize", "error"],
        _ => return None,
    })
}

/// Whether an undeclared entity's name says it is a core: `Core_0`, `core1`, `CPU0`,
/// `ECU1_Core0`, `P0/cpu1` (a word `core` or `cpu` in it, in any case, followed by nothing,
/// a digit or a separator). A task named like `CoreMonitor` or `Scoreboard` is not one.
fn looks_like_core(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["core", "cpu"].iter().any(|word| {
        lower.match_indices(word).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + word.len()..].chars().next();
            before.is_none_or(|c| !c.is_ascii_alphabetic())
                && after.is_none_or(|c| !c.is_ascii_alphabetic())
        })
    })
}

/// Parses a note that is a plain number (signal value, counter): decimal, or hexadecimal
/// with `0x` (`0x1F`, `-0x10`), as a register or address value often is written.
fn numeric(note: Option<&str>) -> Option<f64> {
    let n = note?;
    let (neg, digits) = match n.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, n.strip_prefix('+').unwrap_or(n)),
    };
    if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let v = u64::from_str_radix(hex, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    let first = *n.as_bytes().first()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    n.parse::<f64>().ok().filter(|v| v.is_finite())
}

impl<O: Output> Sink for Deriver<O> {
    fn meta(&mut self, key: &str, value: &str) {
        self.meta.insert(key.to_string(), value.to_string());
    }

    fn time_unit(&mut self, unit: TimeUnit) {
        self.unit = unit;
    }

    fn declare_entity(&mut self, name: &str, entity_type: Option<&str>, id: Option<i64>) {
        let n = self.names.intern(name);
        let e = self.entity(n, Pos::None);
        if let Some(t) = entity_type {
            let t = self.names.intern(t);
            self.set_type(n, t, false, Pos::None);
            if let Some(info) = self.entities.get_mut(e) {
                info.declared |= info.entity_type == Some(t);
            }
        }
        if let (Some(id), Some(info)) = (id, self.entities.get_mut(e)) {
            info.btf_id = Some(id);
        }
    }

    fn event(&mut self, ev: &Event<'_>) -> Result<()> {
        let seq = self.seq;
        self.seq += 1;
        self.ts_range = Some(match self.ts_range {
            None => (ev.ts, ev.ts),
            Some((lo, hi)) => (lo.min(ev.ts), hi.max(ev.ts)),
        });
        // States never go back in time: a late event takes effect at the latest time seen.
        let ts = self.last_ts.map_or(ev.ts, |l| l.max(ev.ts));
        self.last_ts = Some(ts);
        if !self.pending_ends.is_empty() && ts > self.pending_ends_ts {
            self.report_pending_ends()?;
        }
        if !self.resumes.is_empty() {
            self.resume_pending(Some(ts))?;
        }
        if !self.moves.is_empty() {
            self.report_moves(Some(ts))?;
        }
        if !self.conflicts.is_empty() {
            self.report_conflicts(Some(ts))?;
        }

        let source = self.names.intern(ev.source);
        let target = self.names.intern(ev.target);
        let mut target_type = self.names.intern(ev.target_type);
        let action = self.names.intern(ev.action);
        self.entity(source, ev.pos);
        let targetless = ev.target.is_empty() && ev.target_type.is_empty();
        if targetless {
            // An event about its source alone (a QS tick, an ISR entry): no target entity
            // to type, and no state machine runs (class Other below).
        } else if ev.target_type.is_empty() {
            // Names are unique across types: the type the target has elsewhere is its type.
            let known = self.type_of(target);
            let (severity, then) = match known {
                Some(t) => {
                    target_type = t;
                    (
                        Severity::Info,
                        format!("taken as {}, its type elsewhere", self.names.resolve(t)),
                    )
                }
                None => (
                    Severity::Warning,
                    "its type is not known yet: the event is kept in events, with no state change"
                        .to_string(),
                ),
            };
            let msg = format!("empty type field for {}: {then}", ev.target);
            self.diag(severity, "missing_type", ev.pos, ts, msg)?;
            self.entity(target, ev.pos);
        } else {
            // One look-up of the target for both.
            let id = self.entity(target, ev.pos);
            self.type_conflict(id, target_type, ev, ts)?;
            self.set_type_of(id, target_type, false);
        }
        let class = if targetless { Class::Other } else { self.class(target_type) };
        // The numeric payload, parsed once for the row and the state machines.
        let value = ev.value.or_else(|| numeric(ev.note));

        // The event as the state machines see it, once its core is known.
        let act = |core| process::Act {
            ts,
            pos: ev.pos,
            action,
            core,
            source,
            source_instance: ev.source_instance,
            created: ev.action == "preempt"
                && ev.note.is_some_and(|n| n.starts_with("create pri:")),
        };
        // A process an ISR gave its core back to resumes before an event of its own (or of
        // its runnables) at that time; another ISR arriving may take the core on from it,
        // and another process taking the core leaves it ready (see `occupy`).
        let folded = !self.resumes.is_empty()
            && self.resume_involved(
                (source, ev.source_instance),
                (target, ev.target_instance),
                action,
                ts,
            )?;
        let core = match class {
            Class::Process => {
                let core = self.resolve_core(ev, source, target, true)?;
                if !folded {
                    self.process_event(target, target_type, ev.target_instance, act(core))?;
                }
                core
            }
            Class::Runnable => {
                let core = self.resolve_core(ev, source, target, false)?;
                self.runnable_event(target, target_type, ev.target_instance, act(core))?;
                core
            }
            Class::Semaphore => {
                let core = self.resolve_core(ev, source, target, false)?;
                self.semaphore_event(target, act(core), value)?;
                core
            }
            Class::Signal => {
                let core = self.resolve_core(ev, source, target, false)?;
                if self.names.resolve(action) == "write" {
                    self.signal_write(target, ts, action, ev.note, value)?;
                }
                core
            }
            // An event of a core is on it, unless the event names the core it was on (a
            // Paraver row that is a CPU, with a record's cpu field naming another).
            Class::Core => Some(ev.core.map_or(target, |c| self.names.intern(c))),
            Class::Other if ev.action == "tag" && ev.target_type == "SIM" => {
                self.signal_init_value(source, ts, action, ev)?;
                match ev.core {
                    Some(c) => Some(self.names.intern(c)),
                    None => self.resolve_core(ev, source, target, false)?,
                }
            }
            Class::Other => match ev.core {
                Some(c) => Some(self.names.intern(c)),
                None => self.resolve_core(ev, source, target, false)?,
            },
        };
        // Types whose actions SEMANTICS.md lists but that have no state machine here: an
        // action outside the list is kept, and said.
        if let Some(known) = listed_actions(ev.target_type) {
            if !known.contains(&ev.action) {
                let msg = format!(
                    "action '{}' on type {} is not in the BTF tables; kept in events, no state \
                     change",
                    ev.action, ev.target_type
                );
                self.diag(Severity::Info, "unknown_action", ev.pos, ts, msg)?;
            }
        }
        // After dispatch: core resolution may have just inferred the source's type.
        let source_type = self.type_of(source);
        let row = EventRow {
            seq,
            ts: ev.ts,
            source,
            source_type,
            source_instance: ev.source_instance,
            target: (!targetless).then_some(target),
            target_type: (!targetless).then_some(target_type),
            target_instance: ev.target_instance,
            action,
            note: ev.note,
            value,
            core,
        };
        self.out.event(&row, &self.names)
    }

    fn diagnostic(&mut self, d: Diagnostic) -> Result<()> {
        self.diags.push(d)
    }

    fn span(&mut self, sp: &Span<'_>) -> Result<()> {
        let entity = self.names.intern(sp.entity);
        let entity_type = self.names.intern(sp.entity_type);
        self.set_type(entity, entity_type, false, sp.pos);
        let channel = self.names.intern(sp.channel);
        let state = StateText::Sym(self.names.intern(sp.state));
        let core = sp.core.map(|c| self.names.intern(c));
        self.see(sp.begin);
        if let Some(e) = sp.end {
            self.see(e);
        }
        let end = sp.end.unwrap_or(i64::MAX);
        if let Some((b, e)) = self.last_span.insert((entity, channel), (sp.begin, end)) {
            // One entity is in one state at a time: a span that shares time with the one
            // before it (not merely touching it) makes both count that time.
            if sp.begin < e && b < end {
                let shown =
                    |t: i64| if t == i64::MAX { "open".to_string() } else { format!("{t} ns") };
                let msg = format!(
                    "{} of {} from {} ns to {} overlaps the one before it ({} ns to {}): both are \
                     kept, and the time they share counts twice",
                    sp.channel,
                    sp.entity,
                    sp.begin,
                    shown(end),
                    b,
                    shown(e)
                );
                self.diag(Severity::Warning, "overlapping_state", sp.pos, sp.begin, msg)?;
            }
        }
        let row = IntervalRow {
            entity,
            entity_type,
            instance: -1,
            channel,
            state,
            value: sp.value,
            ts: sp.begin,
            dur: sp.end.map_or(0, |e| (e - sp.begin).max(0)),
            core,
            start_action: None,
            end_action: None,
            open: sp.end.is_none(),
        };
        if row.open {
            self.open_spans.push(row);
            Ok(())
        } else {
            self.emit_interval(row)
        }
    }

    fn channel_set(&mut self, set: &ChannelSet<'_>) -> Result<()> {
        let entity = self.names.intern(set.entity);
        let entity_type = self.names.intern(set.entity_type);
        self.set_type(entity, entity_type, false, set.pos);
        let channel = self.names.intern(set.channel);
        self.see(set.ts);
        let key = (entity, channel);
        let mut ts = set.ts;
        let current = match self.channels.get(&key) {
            Some(c) => Some((c.ts, Some(c.value))),
            None => self.channels_ended.get(&key).map(|&ended| (ended, None)),
        };
        if let Some((cur_ts, cur_value)) = current {
            if cur_value == Some(set.value)
                || (cur_value.is_none() && set.value == 0 && set.zero_ends)
            {
                return Ok(());
            }
            if ts < cur_ts {
                let since =
                    if cur_value.is_some() { "its current state began" } else { "it was ended" };
                let msg = format!(
                    "{} of {} set at {} ns, before {since} ({} ns): taken at {} ns",
                    set.channel, set.entity, ts, cur_ts, cur_ts
                );
                self.diag(Severity::Info, "time_backwards", set.pos, ts, msg)?;
                ts = cur_ts;
            }
        }
        let current = self.channels.remove(&key);
        let was_open = current.is_some();
        if let Some(cur) = current {
            self.emit_interval(cur.row(entity, channel, ts, false))?;
            if set.value == 0 && set.zero_ends {
                self.channels_ended.insert(key, ts);
                if let Some((_, open)) = self.channel_order.get_mut(&entity) {
                    *open = open.saturating_sub(1);
                }
            }
        }
        if set.value != 0 || !set.zero_ends {
            self.channels_ended.remove(&key);
            let label = set.label.map(|l| self.names.intern(l));
            let core = set.core.map(|c| self.names.intern(c));
            self.channels.insert(key, Chan { entity_type, ts, value: set.value, label, core });
            if !was_open {
                self.channel_opened(entity, channel, set.pos, ts)?;
            }
        }
        Ok(())
    }

    fn message(&mut self, m: &Message<'_>) -> Result<()> {
        let sender = self.names.intern(m.sender);
        let receiver = self.names.intern(m.receiver);
        for t in
            [Some(m.send_ts), m.recv_ts, Some(m.phys_send_ts), m.phys_recv_ts].into_iter().flatten()
        {
            self.see(t);
        }
        self.emit_message(MessageRow {
            sender,
            sender_instance: -1,
            receiver,
            receiver_instance: -1,
            send_ts: m.send_ts,
            recv_ts: m.recv_ts,
            phys_send_ts: m.phys_send_ts,
            phys_recv_ts: m.phys_recv_ts,
            size: m.size,
            tag: m.tag,
        })
    }

    fn trace_end(&mut self, ts: i64) {
        self.declared_end = Some(self.declared_end.map_or(ts, |d| d.max(ts)));
    }

    fn source_file(&mut self, path: &str) {
        self.set_source(path);
    }
}

#[cfg(test)]
mod tests;
