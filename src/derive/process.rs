//! The process (task, ISR) state machine: one [`Proc`] per open instance, fed by
//! [`Deriver::process_event`]; it writes the instance's `state` intervals and, once it
//! terminates (or at the end, incomplete), its `instances` row.
//!
//! Process transitions (SEMANTICS.md): activate: (none) → active; start: active → running;
//! resume: ready → running; preempt: running → ready; terminate: running → terminated;
//! poll: running → polling; wait: running → waiting; release: waiting → ready;
//! run: polling → running; park: polling → parking; release_parking: parking → ready;
//! poll_parking: parking → polling. `mtalimitexceeded`, `interrupt_suspended` and migration
//! notices change no state. A process occupies its core while running or polling: entering
//! and leaving those states takes and gives back the core (`cores.rs`) and makes its
//! runnables follow (`runnable.rs`).
//!
//! Memory is bounded: past [`MAX_OPEN_INSTANCES`] open instances of one entity, or
//! [`MAX_OPEN_TOTAL`] of all, the oldest is closed as incomplete.
use super::{Deriver, InstanceRow, IntervalRow, Output, StateText};
use crate::ingest::Severity;
use crate::model::{Pos, Sym};
use crate::Result;
use std::collections::VecDeque;

/// An event as the state machines see it.
#[derive(Clone, Copy)]
pub(super) struct Act {
    pub ts: i64,
    pub pos: Pos,
    pub action: Sym,
    pub core: Option<Sym>,
    pub source: Sym,
    pub source_instance: i64,
    /// A `preempt` noted `create pri:<n>` (or `task_create`): the FreeRTOS trace logger's
    /// record of a task's creation (it enters ready; it did not run before).
    pub created: bool,
}

/// Whether a `preempt`'s note says it is a task's creation: `create pri:<n>` (the FreeRTOS
/// trace logger), `task_create` (its older exporter after a `start`, and the synthetic
/// generator of its repository alone).
pub(super) fn is_creation_note(note: &str) -> bool {
    note.starts_with("create pri:") || note == "task_create"
}

/// Life-cycle state of a process instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PState {
    Active,
    Running,
    Ready,
    Waiting,
    Polling,
    Parking,
    Terminated,
}

impl PState {
    fn name(self) -> &'static str {
        match self {
            PState::Active => "active",
            PState::Running => "running",
            PState::Ready => "ready",
            PState::Waiting => "waiting",
            PState::Polling => "polling",
            PState::Parking => "parking",
            PState::Terminated => "terminated",
        }
    }

    pub(super) fn on_core(self) -> bool {
        matches!(self, PState::Running | PState::Polling)
    }
}

/// What a process action does: the states it may come from, and the state it leads to.
pub(super) fn process_transition(action: &str) -> Option<(&'static [PState], PState)> {
    use PState::*;
    Some(match action {
        "start" => (&[Active], Running),
        "resume" => (&[Ready], Running),
        "preempt" => (&[Running], Ready),
        "terminate" => (&[Running], Terminated),
        "poll" => (&[Running], Polling),
        "wait" => (&[Running], Waiting),
        "release" => (&[Waiting], Ready),
        "run" => (&[Polling], Running),
        "park" => (&[Polling], Parking),
        "release_parking" => (&[Parking], Ready),
        "poll_parking" => (&[Parking], Polling),
        _ => return None,
    })
}

/// Actions on processes that are notifications: no state change, no diagnostic. BTF 2.1.5
/// lists four migration notices (libBtf writes `enforcedmigration` from the old core then
/// `fullmigration` from the new one); libBtf also writes `nowait` (a wait that did not
/// block).
const PROCESS_NOTICES: &[&str] = &[
    "mtalimitexceeded",
    "interrupt_suspended",
    "migration",
    "migrate",
    "fullmigration",
    "enforcedmigration",
    "boundedmigration",
    "phasemigration",
    "nowait",
];

/// Adds `dur` spent in `state` to the instance's totals (active time is the start delay,
/// derived from the timestamps, not a total).
fn account(row: &mut InstanceRow, state: PState, dur: i64) {
    match state {
        PState::Running => row.net_exec += dur,
        PState::Ready => row.ready_time += dur,
        PState::Waiting => *row.waiting_time.get_or_insert(0) += dur,
        PState::Polling => *row.polling_time.get_or_insert(0) += dur,
        PState::Parking => *row.parking_time.get_or_insert(0) += dur,
        PState::Active | PState::Terminated => {}
    }
}

/// A fresh instance row of a process: totals at zero.
fn proc_row(entity: Sym, entity_type: Sym, instance: i64) -> InstanceRow {
    InstanceRow {
        entity,
        entity_type,
        instance,
        clean: true,
        migrations: Some(0),
        waiting_time: Some(0),
        polling_time: Some(0),
        parking_time: Some(0),
        ..Default::default()
    }
}

/// A process instance between its first event and its termination.
pub(super) struct Proc {
    pub(super) etype: Sym,
    pub(super) state: PState,
    pub(super) since: i64,
    pub(super) since_action: Sym,
    pub(super) core: Option<Sym>,
    pub(super) row: InstanceRow,
    /// Its open runnable instances, in the order they started.
    pub(super) runnables: VecDeque<(Sym, i64)>,
    /// The last transition was implied by an ISR taking or leaving its core; an explicit
    /// event saying the same is folded into it.
    pub(super) implicit: bool,
    /// Its first event was the FreeRTOS trace logger's creation (see [`Act::created`]).
    pub(super) created: bool,
}

/// Instances of one task or ISR open at once beyond which the oldest is closed (a trace
/// whose instances never terminate would otherwise hold them all in memory).
const MAX_OPEN_INSTANCES: usize = 4096;

/// Process instances open at once, all tasks and ISRs together, beyond which the oldest is
/// closed: about 500 bytes each, so memory stays bounded whatever the number of tasks.
pub(super) const MAX_OPEN_TOTAL: usize = 1 << 18;

impl<O: Output> Deriver<O> {
    pub(super) fn process_event(&mut self, e: Sym, etype: Sym, inst: i64, a: Act) -> Result<()> {
        let action = self.names.resolve(a.action);
        if action == "activate" {
            return self.activate(e, etype, inst, a);
        }
        let Some((from, to)) = process_transition(action) else {
            if !PROCESS_NOTICES.contains(&action) {
                self.unknown_action(etype, a)?;
            }
            return Ok(());
        };
        let key = (e, inst);
        match self.procs.get(&key).map(|p| p.state) {
            None => {
                let name = self.names.resolve(e).to_string();
                let action = self.names.resolve(a.action).to_string();
                if self.last_terminated.get(&e) == Some(&inst) {
                    let msg = format!("{action} of {name} instance {inst} after it terminated");
                    self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
                    if to == PState::Terminated {
                        // A repeated terminate: nothing new to record, no second instance row.
                        return Ok(());
                    }
                } else if !a.created {
                    let msg = format!(
                        "first event of {name} instance {inst} is {action}: state before it unknown \
                         (trace starts mid-life or the producer logs no activate)"
                    );
                    self.diag(Severity::Info, "unknown_prior_state", a.pos, a.ts, msg)?;
                }
                let row =
                    InstanceRow { activate_ts: None, clean: false, ..proc_row(e, etype, inst) };
                // Placeholder state (off core) so that `enter` does the bookkeeping of a real entry.
                let p = Proc {
                    etype,
                    state: PState::Terminated,
                    since: a.ts,
                    since_action: a.action,
                    core: None,
                    row,
                    runnables: VecDeque::new(),
                    implicit: false,
                    created: a.created,
                };
                self.procs.insert(key, p);
                self.track_open(key, a)?;
                self.adopt_runnables(key);
                // An event that takes it off a core says it ran there until now: so did the
                // runnables it was running (adopted just now), started there.
                let was_on_core =
                    matches!(action.as_str(), "preempt" | "wait" | "poll" | "park" | "terminate");
                if let (true, Some(c)) = (was_on_core, a.core) {
                    let list = self.procs.get(&key).map(|p| p.runnables.clone());
                    for rk in list.into_iter().flatten() {
                        if let Some(r) = self.runnables.get_mut(&rk).filter(|r| r.running) {
                            r.core = r.core.or(Some(c));
                            r.row.core = r.row.core.or(Some(c));
                        }
                    }
                }
                // It ran until then: that is a preemption like any other (`enter` counts
                // only those of a process it saw running). Not a FreeRTOS task's creation,
                // which makes it ready without having run anywhere.
                if action == "preempt" && !a.created {
                    if let Some(p) = self.procs.get_mut(&key) {
                        p.row.preemptions += 1;
                    }
                }
                let a = if a.created { Act { core: None, ..a } } else { a };
                self.enter(key, to, a)?;
                // Adopted runnables were running; the task may not be.
                if self.procs.get(&key).is_some_and(|p| !p.state.on_core()) {
                    self.runnables_follow(key, false, a)?;
                }
                Ok(())
            }
            Some(state) => {
                if self.fold_implied(key, state, to, a) {
                    return Ok(());
                }
                if matches!(to, PState::Terminated | PState::Waiting)
                    && self.end_displaced(key, state, to, a)?
                {
                    return self.enter(key, to, a);
                }
                if state.on_core() && !to.on_core() && to != PState::Terminated {
                    if self.confirm_move(key, a) {
                        return Ok(());
                    }
                    if let Some(c) = self.core_elsewhere(key, a) {
                        let msg = format!(
                            "{} of {} instance {inst} from {} while it runs on {}; ignored (the event \
                             stays in `events`)",
                            self.names.resolve(a.action),
                            self.names.resolve(e),
                            self.names.resolve(a.source),
                            self.names.resolve(c)
                        );
                        self.diag(Severity::Warning, "wrong_core", a.pos, a.ts, msg)?;
                        return Ok(());
                    }
                }
                if let Some(p) = self.procs.get_mut(&key) {
                    p.implicit = false;
                }
                // A resume (or poll_parking) from another core while it runs (or spins) here.
                if state == to && matches!(state, PState::Running | PState::Polling) {
                    if let Some(c) = self.core_elsewhere(key, a) {
                        return self.move_by_resume(key, c, a);
                    }
                }
                let allowed = from.contains(&state);
                if !allowed && self.first_switch_in_unlogged(key, state, a) {
                    // Its state before the preempt is unknown, as for a first-event preempt;
                    // the machine goes on as for any transition it does not allow.
                    let msg = format!(
                        "preempt of {} instance {inst}, created and never seen running, from {}, \
                         which has run nothing yet: that core's first switch-in is not in the \
                         trace (FreeRTOS SMP loggers write none for cores but the first)",
                        self.names.resolve(e),
                        self.names.resolve(a.core.unwrap_or(a.source)),
                    );
                    self.diag(Severity::Info, "unknown_prior_state", a.pos, a.ts, msg)?;
                    if let Some(p) = self.procs.get_mut(&key) {
                        p.row.clean = false;
                    }
                } else if !allowed {
                    let expected: Vec<&str> = from.iter().map(|s| s.name()).collect();
                    // A preempt after the process left its core by its own wait (or was
                    // parked): the switch-out of a logger that writes it after the wait, as
                    // FreeRTOS's BTF logger does for a task that suspends itself. It takes
                    // nothing off a core: the process stays waiting (parking) until its
                    // release, instead of turning ready.
                    let stays = self.names.resolve(a.action) == "preempt"
                        && matches!(state, PState::Waiting | PState::Parking);
                    let msg = format!(
                        "{} of {} instance {inst} in state {} (expected {}){}",
                        self.names.resolve(a.action),
                        self.names.resolve(e),
                        state.name(),
                        expected.join(" or "),
                        if stays { format!("; it stays {}", state.name()) } else { String::new() }
                    );
                    self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
                    if let Some(p) = self.procs.get_mut(&key) {
                        p.row.clean = false;
                    }
                    if stays {
                        return Ok(());
                    }
                }
                self.leave(key, a)?;
                self.enter(key, to, a)
            }
        }
    }

    fn activate(&mut self, e: Sym, etype: Sym, inst: i64, a: Act) -> Result<()> {
        let key = (e, inst);
        // Started at this instant as its first event, the activate written after the start:
        // this is its activation, not a new life cycle.
        if let Some(p) = self.procs.get_mut(&key) {
            let started_now = p.row.activate_ts.is_none()
                && p.row.start_ts == Some(a.ts)
                && p.since == a.ts
                && p.row.preemptions == 0
                && p.row.migrations.unwrap_or(0) == 0;
            if started_now {
                p.row.activate_ts = Some(a.ts);
                p.row.clean = true;
                return Ok(());
            }
        }
        if let Some(state) = self.procs.get(&key).map(|p| p.state) {
            let msg = format!(
                "activate of {} instance {inst} while it is {}; the earlier life cycle is closed \
                 as incomplete",
                self.names.resolve(e),
                state.name()
            );
            self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
            self.leave(key, a)?;
            let on_core = self.procs.get(&key).filter(|p| p.state.on_core()).and_then(|p| p.core);
            if let Some(c) = on_core {
                self.vacate(c, key, a)?;
            }
            if let Some(mut p) = self.procs.remove(&key) {
                p.row.clean = false;
                self.inst_core.remove(&key);
                self.untrack_open(key);
                self.emit_instance(p.row)?;
            }
            self.requests_end_with(key)?;
        }
        let row = InstanceRow { activate_ts: Some(a.ts), ..proc_row(e, etype, inst) };
        let p = Proc {
            etype,
            state: PState::Active,
            since: a.ts,
            since_action: a.action,
            core: None,
            row,
            runnables: VecDeque::new(),
            implicit: false,
            created: false,
        };
        self.procs.insert(key, p);
        self.track_open(key, a)
    }

    /// A `preempt` of an instance that a FreeRTOS creation made ready and that was never on
    /// a core since, from a core that has run nothing yet in the trace: the instance ran
    /// there, but the logger did not write that core's first switch-in (FreeRTOS SMP
    /// loggers write none for the idle task each core other than the first starts with).
    /// Only its state before the preempt is unknown; anywhere else such a preempt is an
    /// invalid transition.
    fn first_switch_in_unlogged(&self, key: (Sym, i64), state: PState, a: Act) -> bool {
        let Some(p) = self.procs.get(&key) else { return false };
        state == PState::Ready
            && p.created
            && p.core.is_none()
            && self.names.resolve(a.action) == "preempt"
            && a.core.is_some_and(|c| !self.cores.contains_key(&c))
    }

    /// Counts a new open instance of its entity; past [`MAX_OPEN_INSTANCES`] of them, the
    /// oldest is closed as incomplete, so that a trace whose instances never end (activates
    /// without terminates) keeps memory bounded.
    fn track_open(&mut self, key: (Sym, i64), a: Act) -> Result<()> {
        if !self.unparented.is_empty() {
            for r in self.unparented.remove(&key.0).unwrap_or_default() {
                self.unparented_seen.remove(&r);
                if let Some(ent) = self.entity_ids.get(&r).copied() {
                    if let Some(info) = self.entities.get_mut(ent) {
                        info.parent.get_or_insert(key.0);
                    }
                }
            }
        }
        let open = self.open_by_entity.entry(key.0).or_default();
        open.push_back(key.1);
        if open.len() > MAX_OPEN_INSTANCES {
            if let Some(oldest) = open.pop_front() {
                let msg = format!(
                    "{} has more than {MAX_OPEN_INSTANCES} instances open at once; the oldest, \
                     instance {oldest}, is kept as incomplete from here on (its state is shown \
                     open)",
                    self.names.resolve(key.0)
                );
                self.close_oldest((key.0, oldest), a, msg)?;
            }
        }
        self.open_order.push_back(key);
        while self.procs.len() > MAX_OPEN_TOTAL {
            let Some(old) = self.open_order.pop_front() else { break };
            if old == key || !self.procs.contains_key(&old) {
                continue;
            }
            let msg = format!(
                "more than {MAX_OPEN_TOTAL} task and ISR instances are open at once; the oldest, \
                 {} instance {}, is kept as incomplete from here on (its state is shown open)",
                self.names.resolve(old.0),
                old.1
            );
            self.untrack_open(old);
            self.close_oldest(old, a, msg)?;
        }
        // Entries of instances closed since: dropped once they outnumber the open ones.
        if self.open_order.len() > 2 * self.procs.len() + 1024 {
            let procs = &self.procs;
            self.open_order.retain(|k| procs.contains_key(k));
        }
        Ok(())
    }

    /// Closes open instance `old` as incomplete at `a.ts` (too many open), saying `msg`.
    fn close_oldest(&mut self, old: (Sym, i64), a: Act, msg: String) -> Result<()> {
        let Some(mut p) = self.procs.remove(&old) else { return Ok(()) };
        self.diag(Severity::Warning, "too_many_open_instances", a.pos, a.ts, msg)?;
        self.emit_open_state(old, &mut p, a.ts)?;
        if let Some(c) = p.core.filter(|_| p.state.on_core()) {
            self.vacate(c, old, a)?;
        }
        self.inst_core.remove(&old);
        self.requests_end_with(old)?;
        p.row.clean = false;
        self.emit_instance(p.row)
    }

    /// Emits the state `p` is still in as an `open` interval up to `end`, adding it to the
    /// instance's totals.
    fn emit_open_state(&mut self, key: (Sym, i64), p: &mut Proc, end: i64) -> Result<()> {
        let dur = end - p.since;
        account(&mut p.row, p.state, dur);
        let row = IntervalRow {
            entity: key.0,
            entity_type: p.etype,
            instance: key.1,
            channel: self.known.state,
            state: StateText::Sym(self.names.intern(p.state.name())),
            value: None,
            ts: p.since,
            dur,
            core: if p.state.on_core() { p.core } else { None },
            start_action: Some(p.since_action),
            end_action: None,
            open: true,
        };
        self.emit_interval(row)
    }

    /// An instance of `key.0` is no longer open.
    fn untrack_open(&mut self, key: (Sym, i64)) {
        if let Some(open) = self.open_by_entity.get_mut(&key.0) {
            if let Some(k) = open.iter().position(|i| *i == key.1) {
                open.remove(k);
            }
            // Most entities have no instance open most of the time: keep no empty queue
            // (about 90 bytes each, a million entities on a trace of a million task names).
            if open.is_empty() {
                self.open_by_entity.remove(&key.0);
            }
        }
    }

    /// Closes the current state's interval at `a.ts`, adding its length to the totals.
    pub(super) fn leave(&mut self, key: (Sym, i64), a: Act) -> Result<()> {
        let Some(p) = self.procs.get_mut(&key) else { return Ok(()) };
        let dur = a.ts - p.since;
        let (state, core) = (p.state, p.core);
        account(&mut p.row, state, dur);
        let row = IntervalRow {
            entity: key.0,
            entity_type: p.etype,
            instance: key.1,
            channel: self.known.state,
            state: StateText::Sym(self.names.intern(state.name())),
            value: None,
            ts: p.since,
            dur,
            core: if state.on_core() { core } else { None },
            start_action: Some(p.since_action),
            end_action: Some(a.action),
            open: false,
        };
        self.emit_interval(row)
    }

    /// Enters `to` at `a.ts`: core bookkeeping, runnables following their task, and the
    /// instance row when the process terminates.
    pub(super) fn enter(&mut self, key: (Sym, i64), to: PState, a: Act) -> Result<()> {
        let Some(p) = self.procs.get_mut(&key) else { return Ok(()) };
        let was = p.state;
        p.state = to;
        p.since = a.ts;
        p.since_action = a.action;
        let action = self.names.resolve(a.action);
        // A process seen off-core first (created by a core's preempt) takes that core as its
        // last known one; later off-core events (a release from another core) do not move it.
        if p.core.is_none() && a.core.is_some() {
            p.core = a.core;
            if let Some(c) = a.core {
                self.entity_core.entry(key.0).or_insert(c);
                self.inst_core.insert(key, c);
            }
        }
        let Some(p) = self.procs.get_mut(&key) else { return Ok(()) };
        if to.on_core() {
            let core = a.core.or(p.core);
            if action == "start" && p.row.start_ts.is_none() {
                p.row.start_ts = Some(a.ts);
            }
            // A migration is a change of core: a resume or poll_parking elsewhere, or (a
            // resynchronised machine) an event from another core while it ran.
            let left = p.core.filter(|old| core.is_some_and(|new| new != *old));
            if left.is_some() && action != "start" {
                *p.row.migrations.get_or_insert(0) += 1;
            }
            if p.row.core.is_none() {
                p.row.core = core;
            }
            p.core = core;
            let moved = was.on_core() && left.is_some();
            if let Some(old) = left.filter(|_| moved) {
                self.vacate(old, key, a)?;
            }
            if !was.on_core() || moved {
                if let Some(c) = core {
                    self.entity_core.insert(key.0, c);
                    self.inst_core.insert(key, c);
                    self.occupy(c, key, a)?;
                }
            }
            if !was.on_core() {
                self.runnables_follow(key, true, a)?;
            }
        } else if was.on_core() {
            if action == "preempt" {
                p.row.preemptions += 1;
            }
            if let Some(c) = p.core {
                self.vacate(c, key, a)?;
                if matches!(to, PState::Terminated | PState::Waiting) {
                    self.resume_interrupted(c, key, a)?;
                }
            }
            if to != PState::Terminated {
                self.runnables_follow(key, false, a)?;
            }
        }
        if to == PState::Terminated {
            self.runnables_end_with_task(key, a)?;
            self.requests_end_with(key)?;
            if let Some(mut p) = self.procs.remove(&key) {
                p.row.terminate_ts = Some(a.ts);
                self.last_terminated.insert(key.0, key.1);
                self.inst_core.remove(&key);
                self.untrack_open(key);
                self.emit_instance(p.row)?;
            }
        }
        Ok(())
    }

    pub(super) fn unknown_action(&mut self, etype: Sym, a: Act) -> Result<()> {
        let msg = format!(
            "action '{}' on type {} is not in the BTF tables; kept in events, no state change",
            self.names.resolve(a.action),
            self.names.resolve(etype)
        );
        self.diag(Severity::Info, "unknown_action", a.pos, a.ts, msg)
    }

    /// At the end of the trace: every open process, runnable and core interval is emitted
    /// `open`, and every unfinished instance as incomplete.
    pub(super) fn close_processes(&mut self, end: i64) -> Result<()> {
        let mut keys: Vec<(Sym, i64)> = self.procs.keys().copied().collect();
        keys.sort_by(|a, b| (self.names.resolve(a.0), a.1).cmp(&(self.names.resolve(b.0), b.1)));
        for key in keys {
            let Some(mut p) = self.procs.remove(&key) else { continue };
            self.emit_open_state(key, &mut p, end)?;
            self.emit_instance(p.row)?;
        }
        let mut rkeys: Vec<(Sym, i64)> = self.runnables.keys().copied().collect();
        rkeys.sort_by(|a, b| (self.names.resolve(a.0), a.1).cmp(&(self.names.resolve(b.0), b.1)));
        for key in rkeys {
            self.runnable_cut(key, end)?;
        }
        let mut cores: Vec<Sym> = self.cores.keys().copied().collect();
        cores.sort_by(|a, b| self.names.resolve(*a).cmp(self.names.resolve(*b)));
        for c in cores {
            if let Some(occ) = self.cores.get_mut(&c).and_then(|s| s.occupant.take()) {
                self.emit_occupancy(c, occ, end, None, true)?;
            }
        }
        Ok(())
    }
}
