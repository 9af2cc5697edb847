//! Process (task, ISR) and runnable state machines, and core occupancy.
//!
//! Process transitions (SEMANTICS.md): activate: (none) → active; start: active → running;
//! resume: ready → running; preempt: running → ready; terminate: running → terminated;
//! poll: running → polling; wait: running → waiting; release: waiting → ready;
//! run: polling → running; park: polling → parking; release_parking: parking → ready;
//! poll_parking: parking → polling. `mtalimitexceeded`, `interrupt_suspended` and migration
//! notices change no state. A process occupies its core while running or polling.
//!
//! Runnables: start: (none) → running; suspend: running → suspended; resume: suspended →
//! running; terminate: running → terminated.
use super::{Class, Deriver, InstanceRow, IntervalRow, Output, StateText};
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
    /// A `preempt` noted `create pri:<n>`: the FreeRTOS trace logger's record of a task's
    /// creation (it enters ready; it did not run before).
    pub created: bool,
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

    fn on_core(self) -> bool {
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
    etype: Sym,
    state: PState,
    since: i64,
    since_action: Sym,
    core: Option<Sym>,
    row: InstanceRow,
    /// Its open runnable instances, in the order they started.
    runnables: VecDeque<(Sym, i64)>,
    /// The last transition was implied by an ISR taking or leaving its core; an explicit
    /// event saying the same is folded into it.
    implicit: bool,
}

/// A runnable instance between its start and its termination.
pub(super) struct Runnable {
    etype: Sym,
    running: bool,
    since: i64,
    since_action: Sym,
    core: Option<Sym>,
    task: Option<(Sym, i64)>,
    /// The process instance it was started by, not seen yet when it started (the capture
    /// began while that task ran): it becomes the task when it appears.
    orphan_of: Option<(Sym, i64)>,
    /// The last transition was implied by the task; an explicit event saying the same is
    /// folded into it.
    implicit: bool,
    /// Suspended by its own `suspend` while its task ran (it called another runnable, as
    /// libBtf and TA Tool Suite write a nested call): its task getting a core back does not
    /// resume it, its own `resume` does.
    held: bool,
    row: InstanceRow,
}

/// Instances of one task or ISR open at once beyond which the oldest is closed (a trace
/// whose instances never terminate would otherwise hold them all in memory).
const MAX_OPEN_INSTANCES: usize = 4096;

/// Process instances open at once, all tasks and ISRs together, beyond which the oldest is
/// closed: about 500 bytes each, so memory stays bounded whatever the number of tasks.
pub(super) const MAX_OPEN_TOTAL: usize = 1 << 18;

/// Runnable instances open at once in one task instance (or started by one not seen yet)
/// beyond which the oldest is closed: runnables nest or follow each other, so a real task
/// holds a few dozen at most; one whose runnables never terminate would otherwise hold
/// them all in memory.
const MAX_RUNNABLES_PER_TASK: usize = 4096;

/// Runnable instances open at once, all together, beyond which the oldest is closed (about
/// 700 bytes each).
pub(super) const MAX_OPEN_RUNNABLES: usize = 1 << 17;

/// Takes `key` out of `list`, looking at its ends first: runnables end last-started first
/// (nested) or first-started first (evicted), so this is constant time but for odd orders.
fn unlist(list: &mut VecDeque<(Sym, i64)>, key: (Sym, i64)) {
    if list.front() == Some(&key) {
        list.pop_front();
    } else if list.back() == Some(&key) {
        list.pop_back();
    } else if let Some(i) = list.iter().rposition(|k| *k == key) {
        list.remove(i);
    }
}

/// A runnable ended by its task's terminate, waiting for its own terminate at the same time.
pub(super) struct PendingEnd {
    runnable: (Sym, i64),
    task: (Sym, i64),
    pos: Pos,
}

/// A process that resumed on another core while it ran on `from`, taken as preempted there
/// at that instant (see `Deriver::moves`): the preempt from `from`, written after the
/// resume at the same time, confirms it.
pub(super) struct PendingMove {
    key: (Sym, i64),
    from: Sym,
    ts: i64,
    pos: Pos,
    /// The instance's `clean` before: given back when the preempt shows up.
    was_clean: bool,
    message: String,
}

/// A `core_conflict` of `occupy` (another task took the core of a running process), said
/// once nothing else happens at that time: the displaced process's own terminate or wait
/// at that instant, written after the other's start, shows there was none (see
/// `end_displaced`).
pub(super) struct PendingConflict {
    key: (Sym, i64),
    ts: i64,
    pos: Pos,
    message: String,
}

/// Takes out of `items` those whose time is before `before` (all with None): pending
/// same-instant decisions whose instant has passed.
fn take_due<T>(items: &mut Vec<T>, before: Option<i64>, ts: impl Fn(&T) -> i64) -> Vec<T> {
    let (now, later) =
        std::mem::take(items).into_iter().partition(|i| before.is_none_or(|b| ts(i) < b));
    *items = later;
    now
}

/// A process to resume on `core` (see `Deriver::resumes`), with the ISR's leaving event.
pub(super) struct PendingResume {
    core: Sym,
    key: (Sym, i64),
    act: Act,
}

/// What occupies a core.
#[derive(Default)]
pub(super) struct CoreSlot {
    occupant: Option<(Sym, i64, i64, Sym)>,
    /// Processes an ISR took the core from with no preempt in the trace, innermost last,
    /// each with the ISR: it gets the core back when that ISR leaves it for good.
    interrupted: Vec<((Sym, i64), (Sym, i64))>,
}

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
                if !from.contains(&state) {
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

    /// An explicit event that says what an ISR's arrival or departure already implied (the
    /// preempt of the process it interrupted, or that process's resume): nothing new.
    fn fold_implied(&mut self, key: (Sym, i64), state: PState, to: PState, a: Act) -> bool {
        let Some(p) = self.procs.get_mut(&key) else { return false };
        if !p.implicit || state != to || a.core.is_some_and(|c| Some(c) != p.core) {
            return false;
        }
        p.implicit = false;
        if !to.on_core() {
            // The trace handles this preemption itself, resume included.
            if let Some(slot) = p.core.and_then(|c| self.cores.get_mut(&c)) {
                slot.interrupted.retain(|(k, _)| *k != key);
            }
            // Its preempt at the instant another task took its core, written after that
            // one's start: no conflict.
            self.conflicts.retain(|c| !(c.key == key && c.ts == a.ts));
        }
        true
    }

    /// A process an ISR (or another task, a `core_conflict`) took the core from at this
    /// instant (`occupy`: no preempt in the trace) terminating or waiting at the same
    /// instant: it ran until now and left the core by this event, and the other took the
    /// core as it left, the two written the other way round. The implied preemption is undone (its running interval ends with this event,
    /// no preemption counted) and the processes it had interrupted itself, an ISR
    /// tail-chained by the next, stay interrupted, now by that ISR. Its runnables, suspended
    /// with it by the implied preemption, were not either: their running interval ends with
    /// this event too, and its terminate ends them there. True when so.
    fn end_displaced(
        &mut self,
        key: (Sym, i64),
        state: PState,
        to: PState,
        a: Act,
    ) -> Result<bool> {
        let Some(p) = self.procs.get(&key) else { return Ok(false) };
        if !p.implicit || p.since != a.ts || !matches!(state, PState::Ready | PState::Parking) {
            return Ok(false);
        }
        let Some(core) = p.core else { return Ok(false) };
        if a.core.is_some_and(|c| c != core) {
            return Ok(false);
        }
        let Some(slot) = self.cores.get_mut(&core) else { return Ok(false) };
        if let Some(i) = slot.interrupted.iter().rposition(|(k, _)| *k == key) {
            let (_, by) = slot.interrupted.remove(i);
            for entry in &mut slot.interrupted {
                if entry.1 == key {
                    entry.1 = by;
                }
            }
        } else if let Some(i) = self.conflicts.iter().position(|c| c.key == key && c.ts == a.ts) {
            // Not an ISR's arrival: a task that took the core at this instant, its start
            // written before this end: no conflict after all.
            self.conflicts.remove(i);
        } else {
            return Ok(false);
        }
        let implied = p.since_action;
        if let Some(p) = self.procs.get_mut(&key) {
            if state == PState::Ready {
                p.row.preemptions = p.row.preemptions.saturating_sub(1);
            }
            p.implicit = false;
        }
        // Its running (or polling) interval, ended by the implied preempt (or park) just
        // now, ends with this event instead: queries on preemptions do not see one.
        let ts = a.ts;
        if let Some(row) = self.intervals.recent_mut(256, |r| {
            r.entity == key.0
                && r.instance == key.1
                && r.ts + r.dur == ts
                && r.end_action == Some(implied)
        }) {
            row.end_action = Some(a.action);
        }
        let list = self.procs.get(&key).map(|p| p.runnables.clone()).unwrap_or_default();
        for rk in list {
            let Some(r) = self.runnables.get_mut(&rk) else { continue };
            if r.running || !r.implicit || r.since != ts || r.since_action != implied {
                continue;
            }
            // Suspended from now by this event (a wait), not by the implied preempt.
            r.since_action = a.action;
            if let Some(row) = self.intervals.recent_mut(256, |x| {
                x.entity == rk.0
                    && x.instance == rk.1
                    && x.ts + x.dur == ts
                    && x.end_action == Some(implied)
            }) {
                row.end_action = Some(a.action);
            }
            if to == PState::Terminated {
                r.row.preemptions = r.row.preemptions.saturating_sub(1);
                // It ended with its task here (its own terminate of this instant follows).
                self.runnable_end(rk, ts, true)?;
                self.pending_ends.push(PendingEnd { runnable: rk, task: key, pos: a.pos });
                self.pending_ends_ts = ts;
            }
        }
        Ok(true)
    }

    /// A resume of `key` from another core while it runs on `from`: equal-time events of two
    /// cores come in either order, so this is taken as its preempt on `from` (same time)
    /// followed by the resume, as if written the other way round. The preempt from `from`
    /// at that time confirms it (`confirm_move`); without one, the instance is not clean
    /// and an `invalid_transition` says so (`report_moves`).
    fn move_by_resume(&mut self, key: (Sym, i64), from: Sym, a: Act) -> Result<()> {
        let Some(was_clean) = self.procs.get(&key).map(|p| p.row.clean) else { return Ok(()) };
        // Running: preempted, then resumed; spinning: parked, then back to polling.
        let Some(state) = self.procs.get(&key).map(|p| p.state) else { return Ok(()) };
        let (out, off) = if state == PState::Polling {
            ("park", PState::Parking)
        } else {
            ("preempt", PState::Ready)
        };
        let message = format!(
            "{} of {} instance {} from {} while it runs on {}, with no {out} there at that \
             time: taken as {} on {} then",
            self.names.resolve(a.action),
            self.names.resolve(key.0),
            key.1,
            self.names.resolve(a.source),
            self.names.resolve(from),
            if out == "park" { "parked" } else { "preempted" },
            self.names.resolve(from)
        );
        let left = Act { action: self.names.intern(out), core: Some(from), source: from, ..a };
        self.leave(key, left)?;
        self.enter(key, off, left)?;
        if let Some(p) = self.procs.get_mut(&key) {
            p.row.clean = false;
        }
        self.moves.push(PendingMove { key, from, ts: a.ts, pos: a.pos, was_clean, message });
        self.leave(key, a)?;
        self.enter(key, state, a)
    }

    /// Whether `a` is the preempt, from the core `key` left at this same time, that a
    /// `move_by_resume` took as given: then it is folded in, and the instance is as clean
    /// as before.
    fn confirm_move(&mut self, key: (Sym, i64), a: Act) -> bool {
        let Some(i) =
            self.moves.iter().position(|m| m.key == key && m.ts == a.ts && Some(m.from) == a.core)
        else {
            return false;
        };
        if !matches!(self.names.resolve(a.action), "preempt" | "park") {
            return false;
        }
        let m = self.moves.remove(i);
        if let Some(p) = self.procs.get_mut(&key) {
            p.row.clean = m.was_clean;
        }
        true
    }

    /// Reports the moves (`move_by_resume`) whose preempt did not come: those from before
    /// `before`, or all.
    pub(super) fn report_moves(&mut self, before: Option<i64>) -> Result<()> {
        for m in take_due(&mut self.moves, before, |m| m.ts) {
            self.diag(Severity::Warning, "invalid_transition", m.pos, m.ts, m.message)?;
        }
        Ok(())
    }

    /// Reports the `core_conflict`s (`occupy`) that no end of the displaced process at the
    /// same instant explained: those from before `before`, or all.
    pub(super) fn report_conflicts(&mut self, before: Option<i64>) -> Result<()> {
        for c in take_due(&mut self.conflicts, before, |c| c.ts) {
            self.diag(Severity::Warning, "core_conflict", c.pos, c.ts, c.message)?;
        }
        Ok(())
    }

    /// The core the instance runs on, when the event's source is another core (only a
    /// core as source says where an event happened; other sources' cores are inferred).
    fn core_elsewhere(&mut self, key: (Sym, i64), a: Act) -> Option<Sym> {
        let on = self.procs.get(&key).and_then(|p| p.core)?;
        (a.source != on && self.is_core(a.source)).then_some(on)
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
        };
        self.procs.insert(key, p);
        self.track_open(key, a)
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
    fn leave(&mut self, key: (Sym, i64), a: Act) -> Result<()> {
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
    fn enter(&mut self, key: (Sym, i64), to: PState, a: Act) -> Result<()> {
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

    /// `key` takes `core`. A process still running there with no preempt in the trace
    /// is preempted by it: by an ISR, an interruption that ends when the ISR leaves the
    /// core (info `implicit_preemption`); by anything else, a conflict (warning
    /// `core_conflict`), the displaced process staying ready until its next event.
    fn occupy(&mut self, core: Sym, key: (Sym, i64), a: Act) -> Result<()> {
        if let Some(i) = self.resumes.iter().position(|r| r.core == core) {
            let is_isr = self.is_isr(key);
            let r = self.resumes.remove(i);
            if r.key == key {
                // Its own event gives it the core.
            } else if is_isr && r.act.ts == a.ts {
                // Tail-chaining: the next ISR takes the core at the instant the last left
                // it; the process stays interrupted, now by this one.
                self.cores.entry(core).or_default().interrupted.push((r.key, key));
            } else if r.act.ts == a.ts {
                // Another process gets the core as the ISR leaves it: the interrupted one
                // stays ready (preempted once, by the ISR) until its next event.
            } else {
                self.resume_now(r.core, r.key, r.act)?;
            }
        }
        // An ISR arriving on the core a process left for another at this same instant, by
        // a resume written first: for a logger of ISRs only, that is the preempt awaited.
        if self.is_isr(key) {
            if let Some(m) = self.moves.iter().position(|m| m.from == core && m.ts == a.ts) {
                let m = self.moves.remove(m);
                if let Some(p) = self.procs.get_mut(&m.key) {
                    p.row.clean = m.was_clean;
                }
            }
        }
        let slot = self.cores.entry(core).or_default();
        let prev = slot.occupant.replace((key.0, key.1, a.ts, a.action));
        let Some((pe, pi, since, since_action)) = prev else { return Ok(()) };
        if (pe, pi) == key {
            return Ok(());
        }
        self.emit_occupancy(core, (pe, pi, since, since_action), a.ts, Some(a.action), false)?;
        let displaced = (pe, pi);
        let running_here =
            self.procs.get(&displaced).is_some_and(|p| p.state.on_core() && p.core == Some(core));
        let by_isr = self
            .procs
            .get(&key)
            .is_some_and(|p| p.etype == self.known.isr_type || p.etype == self.known.isr_type_old);
        let (who, whom) = (self.names.resolve(key.0), self.names.resolve(pe));
        if running_here && by_isr {
            let msg = format!(
                "ISR {who} instance {} starts on {} while {whom} instance {pi} runs there, with \
                 no preempt of it: {whom} is taken as interrupted until {who} leaves the core",
                key.1,
                self.names.resolve(core)
            );
            self.diag(Severity::Info, "implicit_preemption", a.pos, a.ts, msg)?;
            if let Some(slot) = self.cores.get_mut(&core) {
                slot.interrupted.push((displaced, key));
            }
        } else {
            let msg = format!(
                "{who} instance {} gets {} while {whom} instance {pi} still occupies it{}",
                key.1,
                self.names.resolve(core),
                if running_here { "; that one is taken as preempted" } else { "" }
            );
            if running_here {
                let c = PendingConflict { key: displaced, ts: a.ts, pos: a.pos, message: msg };
                self.conflicts.push(c);
            } else {
                self.diag(Severity::Warning, "core_conflict", a.pos, a.ts, msg)?;
            }
        }
        if running_here {
            self.displace(displaced, a)?;
        }
        Ok(())
    }

    /// Preempts a process that lost its core with no event of its own (see `occupy`). Its
    /// intervals name the implied action (`preempt`, or `park` when it was polling), so
    /// that queries on preemptions see it.
    fn displace(&mut self, key: (Sym, i64), a: Act) -> Result<()> {
        let Some(polling) = self.procs.get(&key).map(|p| p.state == PState::Polling) else {
            return Ok(());
        };
        let a = Act { action: self.names.intern(if polling { "park" } else { "preempt" }), ..a };
        self.leave(key, a)?;
        let Some(p) = self.procs.get_mut(&key) else { return Ok(()) };
        p.state = if polling { PState::Parking } else { PState::Ready };
        if !polling {
            p.row.preemptions += 1;
        }
        p.since = a.ts;
        p.since_action = a.action;
        p.implicit = true;
        self.runnables_follow(key, false, a)
    }

    /// `by` left `core` for good: the process it interrupted (see `occupy`) runs again,
    /// unless its own events took it elsewhere meanwhile. It resumes when the next event
    /// at a later time, or not an ISR's arrival, comes (`resume_pending`): an ISR that
    /// takes the core at this same instant (tail-chaining) interrupts it on, with no
    /// resume and second preemption in between.
    fn resume_interrupted(&mut self, core: Sym, by: (Sym, i64), a: Act) -> Result<()> {
        let Some(slot) = self.cores.get_mut(&core) else { return Ok(()) };
        let Some(k) = slot.interrupted.iter().rposition(|(_, isr)| *isr == by) else {
            return Ok(());
        };
        let (key, _) = slot.interrupted.remove(k);
        self.resumes.push(PendingResume { core, key, act: a });
        Ok(())
    }

    /// Resumes the process instances waiting for it (see `resume_interrupted`) that are the
    /// source or target of an event: their own, or their runnables'. Its own preempt at
    /// that time says it did not get the core back: it stays ready, and the preempt is
    /// folded in. Its own resume on that core at that time says what the ISR's leaving
    /// implied: it stays pending, so that an ISR arriving at this instant still chains on
    /// (no resume and second preemption in between); true then, and the event changes no
    /// state of its own.
    pub(super) fn resume_involved(
        &mut self,
        source: (Sym, i64),
        target: (Sym, i64),
        action: Sym,
        ts: i64,
    ) -> Result<bool> {
        if !self.resumes.iter().any(|r| r.key == source || r.key == target) {
            return Ok(false);
        }
        let action = self.names.resolve(action);
        let (preempt, resume) = (action == "preempt", action == "resume");
        let from_core = resume && self.is_core(source.0);
        let here = |r: &PendingResume| !from_core || source.0 == r.core;
        if resume && self.resumes.iter().any(|r| r.key == target && r.act.ts == ts && here(r)) {
            return Ok(true);
        }
        for r in self.take_resumes(|r| r.key == source || r.key == target) {
            if !(preempt && r.key == target) {
                self.resume_now(r.core, r.key, r.act)?;
            }
        }
        Ok(false)
    }

    /// Resumes the processes waiting for it (see `resume_interrupted`): all of them, or
    /// (`Some(ts)`) those from before `ts`.
    pub(super) fn resume_pending(&mut self, before: Option<i64>) -> Result<()> {
        for r in self.take_resumes(|r| before.is_none_or(|ts| r.act.ts < ts)) {
            self.resume_now(r.core, r.key, r.act)?;
        }
        Ok(())
    }

    /// The waiting resumes that `pick` picks, taken out of the list.
    fn take_resumes(&mut self, pick: impl Fn(&PendingResume) -> bool) -> Vec<PendingResume> {
        let (picked, rest) = std::mem::take(&mut self.resumes).into_iter().partition(pick);
        self.resumes = rest;
        picked
    }

    fn is_isr(&self, key: (Sym, i64)) -> bool {
        self.procs
            .get(&key)
            .is_some_and(|p| p.etype == self.known.isr_type || p.etype == self.known.isr_type_old)
    }

    fn resume_now(&mut self, core: Sym, key: (Sym, i64), a: Act) -> Result<()> {
        if self.cores.get(&core).is_none_or(|slot| slot.occupant.is_some()) {
            return Ok(());
        }
        let Some(p) = self.procs.get(&key) else { return Ok(()) };
        // Still off the core it was interrupted on: ready (also made ready meanwhile, as a
        // spinning task whose lock came while the ISR had it parked) or parked.
        if p.core != Some(core) || !matches!(p.state, PState::Ready | PState::Parking) {
            return Ok(());
        }
        let (to, action) = if p.state == PState::Parking {
            (PState::Polling, "poll_parking")
        } else {
            (PState::Running, "resume")
        };
        let a = Act { action: self.names.intern(action), ..a };
        self.leave(key, a)?;
        self.enter(key, to, a)?;
        if let Some(p) = self.procs.get_mut(&key) {
            p.implicit = true;
        }
        Ok(())
    }

    fn vacate(&mut self, core: Sym, key: (Sym, i64), a: Act) -> Result<()> {
        let Some(slot) = self.cores.get_mut(&core) else { return Ok(()) };
        match slot.occupant {
            Some((e, i, since, since_action)) if (e, i) == key => {
                slot.occupant = None;
                self.emit_occupancy(core, (e, i, since, since_action), a.ts, Some(a.action), false)
            }
            _ => Ok(()),
        }
    }

    fn emit_occupancy(
        &mut self,
        core: Sym,
        occ: (Sym, i64, i64, Sym),
        end: i64,
        end_action: Option<Sym>,
        open: bool,
    ) -> Result<()> {
        let (e, i, since, since_action) = occ;
        #[allow(clippy::cast_precision_loss)]
        let row = IntervalRow {
            entity: core,
            entity_type: self.known.core_type,
            instance: -1,
            channel: self.known.running,
            state: StateText::Sym(e),
            value: Some(i as f64),
            ts: since,
            dur: end - since,
            core: Some(core),
            start_action: Some(since_action),
            end_action,
            open,
        };
        self.emit_interval(row)
    }

    /// Links to a process instance seen for the first time the runnables it started before
    /// the capture knew it.
    fn adopt_runnables(&mut self, task: (Sym, i64)) {
        let Some(list) = self.orphans.remove(&task) else { return };
        for rk in list {
            let Some(r) = self.runnables.get_mut(&rk) else { continue };
            if r.task.is_some() {
                continue;
            }
            r.task = Some(task);
            r.orphan_of = None;
            if let Some(p) = self.procs.get_mut(&task) {
                p.runnables.push_back(rk);
            }
            if let Some(ent) = self.entity_ids.get(&rk.0).copied() {
                if let Some(info) = self.entities.get_mut(ent) {
                    info.parent.get_or_insert(task.0);
                }
            }
        }
    }

    /// Suspends (`on_core == false`) or resumes the runnables a task is running.
    fn runnables_follow(&mut self, task: (Sym, i64), on_core: bool, a: Act) -> Result<()> {
        let list = match self.procs.get(&task) {
            Some(p) if !p.runnables.is_empty() => p.runnables.clone(),
            _ => return Ok(()),
        };
        let core = self.procs.get(&task).and_then(|p| p.core);
        for key in list {
            if on_core {
                // Running with no core known yet (started by a task instance not seen then):
                // the first core the capture shows it on is this one.
                if let Some(r) = self.runnables.get_mut(&key).filter(|r| r.running) {
                    if r.row.core.is_none() {
                        r.row.core = core;
                        r.core = r.core.or(core);
                    }
                }
            }
            let Some(r) = self.runnables.get(&key) else { continue };
            if !on_core && r.held && r.since == a.ts {
                // Its own suspend of this instant, written before its task's preempt (wait,
                // park): it was suspended with its task, not by a call.
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.held = false;
                }
                continue;
            }
            if on_core && !r.running && r.held {
                // Suspended by a call to another runnable: that one's end resumes it.
                continue;
            }
            if on_core && r.running && r.since == a.ts {
                // Resumed (or started) by its own line written before its task's at this
                // instant: it runs where the task now runs, not where the task ran last.
                // Its first run, when it began with this start, or with this resume as
                // the capture's first sight of it running.
                let first = self.names.resolve(r.since_action) == "start"
                    || (r.row.start_ts.is_none() && r.row.net_exec == 0);
                if let (Some(c), Some(r)) = (core, self.runnables.get_mut(&key)) {
                    r.core = Some(c);
                    if first {
                        // Its first core is this one.
                        r.row.core = Some(c);
                    }
                    self.entity_core.insert(key.0, c);
                    self.inst_core.insert(key, c);
                }
                continue;
            }
            if r.running != on_core {
                self.runnable_switch(key, a)?;
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.implicit = true;
                    if on_core {
                        r.core = core.or(r.core);
                        // Its first core is the first one it runs on (it may have been
                        // first seen suspended).
                        r.row.core = r.row.core.or(r.core);
                        if let Some(c) = r.core {
                            self.entity_core.insert(key.0, c);
                            self.inst_core.insert(key, c);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A task terminated while running runnables: they cannot outlive it, so they terminate
    /// with it. Their own terminate usually follows at the same time (folded in then);
    /// [`Deriver::report_pending_ends`] reports those for which it never comes.
    fn runnables_end_with_task(&mut self, task: (Sym, i64), a: Act) -> Result<()> {
        let list = match self.procs.get(&task) {
            Some(p) if !p.runnables.is_empty() => p.runnables.clone(),
            _ => return Ok(()),
        };
        for key in list {
            if self.runnables.contains_key(&key) {
                self.runnable_close(key, a, true)?;
                self.pending_ends.push(PendingEnd { runnable: key, task, pos: a.pos });
                self.pending_ends_ts = a.ts;
            }
        }
        Ok(())
    }

    /// Reports the runnables that ended with their task and logged no terminate of their own
    /// at that time.
    pub(super) fn report_pending_ends(&mut self) -> Result<()> {
        for p in std::mem::take(&mut self.pending_ends) {
            let msg = format!(
                "runnable {} instance {} was running when its task {} instance {} terminated; \
                 it terminates with the task",
                self.names.resolve(p.runnable.0),
                p.runnable.1,
                self.names.resolve(p.task.0),
                p.task.1
            );
            self.diag(Severity::Info, "ended_with_task", p.pos, self.pending_ends_ts, msg)?;
        }
        Ok(())
    }

    pub(super) fn runnable_event(&mut self, e: Sym, etype: Sym, inst: i64, a: Act) -> Result<()> {
        let key = (e, inst);
        let action = super::known(
            self.names.resolve(a.action),
            &["start", "suspend", "resume", "terminate"],
        );
        let exists = self.runnables.get(&key).map(|r| (r.running, r.implicit));
        // Its task was preempted and resumed at this instant (a migration, its lines in any
        // order): the runnable followed it out and back already, so its own suspend of that
        // instant, wherever it was written, is folded in.
        if action == "suspend" && exists.is_some_and(|(running, _)| running) {
            let task = self.runnables.get(&key).and_then(|r| r.task);
            let back = task.and_then(|t| self.procs.get(&t)).is_some_and(|p| {
                p.state == PState::Running
                    && p.since == a.ts
                    && self.names.resolve(p.since_action) == "resume"
            });
            if back {
                return Ok(());
            }
        }
        match (action, exists) {
            ("start", None) => self.runnable_start(key, etype, a, true),
            ("start", Some(_)) => {
                let msg = format!("start of runnable {} instance {inst} that has not terminated; the earlier one is closed as incomplete", self.names.resolve(e));
                self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
                self.runnable_close(key, a, false)?;
                self.runnable_start(key, etype, a, true)
            }
            ("suspend", Some((true, _))) | ("resume", Some((false, _))) => {
                self.runnable_switch(key, a)?;
                if action == "resume" {
                    // First seen suspended: its first core is the one it resumes on.
                    let task_core = self
                        .runnables
                        .get(&key)
                        .and_then(|r| r.task)
                        .and_then(|t| self.procs.get(&t))
                        .and_then(|p| p.core);
                    if let Some(r) = self.runnables.get_mut(&key) {
                        r.row.core = r.row.core.or(task_core).or(a.core);
                    }
                }
                // A suspend while its task still runs: a call of another runnable.
                let task_on_core = self
                    .runnables
                    .get(&key)
                    .and_then(|r| r.task)
                    .and_then(|t| self.procs.get(&t))
                    .is_some_and(|p| p.state.on_core());
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.implicit = false;
                    r.held = action == "suspend" && task_on_core;
                }
                Ok(())
            }
            ("suspend", Some((false, true))) | ("resume", Some((true, true))) => {
                // Already done when the task left or got its core.
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.implicit = false;
                }
                Ok(())
            }
            ("terminate", Some((true, _))) => self.runnable_close(key, a, true),
            ("terminate", None)
                if self.pending_ends_ts == a.ts
                    && self.pending_ends.iter().any(|p| p.runnable == key) =>
            {
                // Its task's terminate came first at the same time and ended it already
                // (whatever other instances of the runnable ended since).
                self.pending_ends.retain(|p| p.runnable != key);
                Ok(())
            }
            ("terminate", None) if self.runnable_ended.get(&e) == Some(&inst) => {
                let msg = format!(
                    "terminate of runnable {} instance {inst} after it ended",
                    self.names.resolve(e)
                );
                self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)
            }
            ("suspend" | "resume" | "terminate", None) => {
                let msg = format!(
                    "first event of runnable {} instance {inst} is {action}: state before it unknown",
                    self.names.resolve(e)
                );
                self.diag(Severity::Info, "unknown_prior_state", a.pos, a.ts, msg)?;
                let running = action == "resume";
                self.runnable_start(key, etype, a, false)?;
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.running = running;
                    r.row.start_ts = None;
                    r.row.activate_ts = None;
                    // Its core is that of its first resume: the capture has not seen it run.
                    if !running {
                        r.row.core = None;
                    }
                    // It ran until then: that is a preemption like any other.
                    if action == "suspend" {
                        r.row.preemptions += 1;
                    }
                }
                if action == "terminate" {
                    // Nothing is known of its state before: no interval, as for a process
                    // whose first event is its terminate.
                    self.runnable_end(key, a.ts, true)?;
                }
                Ok(())
            }
            ("suspend" | "resume" | "terminate", Some((running, _))) => {
                let msg = format!(
                    "{action} of runnable {} instance {inst} while {}",
                    self.names.resolve(e),
                    if running { "running" } else { "suspended" }
                );
                self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
                if let Some(r) = self.runnables.get_mut(&key) {
                    r.row.clean = false;
                }
                if action == "terminate" {
                    self.runnable_close(key, a, true)
                } else {
                    Ok(())
                }
            }
            _ => self.unknown_action(etype, a),
        }
    }

    fn runnable_start(&mut self, key: (Sym, i64), etype: Sym, a: Act, clean: bool) -> Result<()> {
        // The task running it: the source process instance; for a runnable called by
        // another, the caller's task; for a process not seen yet, that one once it appears.
        let src = (a.source, a.source_instance);
        let src_class = self.type_of(a.source).map(|t| self.class(t));
        let (task, orphan_of) = if self.procs.contains_key(&src) {
            (Some(src), None)
        } else if let Some(caller) = self.runnables.get(&src) {
            (caller.task, caller.orphan_of)
        } else if let Some(running) = self.only_running_instance(a.source) {
            let msg = format!(
                "runnable {} instance {} is started by {} instance {}, which is not open; it \
                 runs in instance {running}, the one running",
                self.names.resolve(key.0),
                key.1,
                self.names.resolve(a.source),
                a.source_instance
            );
            self.diag(Severity::Info, "runnable_task_guessed", a.pos, a.ts, msg)?;
            (Some((a.source, running)), None)
        } else if matches!(src_class, None | Some(Class::Process)) {
            (None, Some(src))
        } else {
            (None, None)
        };
        // The oldest open runnable of the same task (or waiting for the same one) beyond
        // MAX_RUNNABLES_PER_TASK of them.
        let mut evict = None;
        if let Some(t) = task {
            if let Some(p) = self.procs.get_mut(&t) {
                p.runnables.push_back(key);
                if p.runnables.len() > MAX_RUNNABLES_PER_TASK {
                    evict = p.runnables.front().copied().map(|r| (r, t));
                }
            }
        }
        if let Some(o) = orphan_of {
            let list = self.orphans.entry(o).or_default();
            list.push_back(key);
            if list.len() > MAX_RUNNABLES_PER_TASK {
                evict = list.front().copied().map(|r| (r, o));
            }
        }
        let parent = task.map(|t| t.0).or((src_class == Some(Class::Process)).then_some(a.source));
        if let Some(parent) = parent {
            if let Some(ent) = self.entity_ids.get(&key.0).copied() {
                if let Some(info) = self.entities.get_mut(ent) {
                    info.parent.get_or_insert(parent);
                }
            }
        } else if src_class.is_none() && self.unparented_seen.insert(key.0, ()).is_none() {
            // Its source may turn out to be a process (see `Deriver::unparented`).
            self.unparented.entry(a.source).or_default().push(key.0);
        }
        if let Some(c) = a.core {
            self.entity_core.insert(key.0, c);
            self.inst_core.insert(key, c);
        }
        let row = InstanceRow {
            entity: key.0,
            entity_type: etype,
            instance: key.1,
            activate_ts: Some(a.ts),
            start_ts: Some(a.ts),
            core: a.core,
            clean,
            ..Default::default()
        };
        let r = Runnable {
            etype,
            running: true,
            since: a.ts,
            since_action: a.action,
            core: a.core,
            task,
            orphan_of,
            implicit: false,
            held: false,
            row,
        };
        self.runnables.insert(key, r);
        if let Some((old, task)) = evict {
            let msg = format!(
                "{} instance {} has more than {MAX_RUNNABLES_PER_TASK} runnable instances open \
                 at once; the oldest, {} instance {}, is kept as incomplete from here on (its \
                 state is shown open)",
                self.names.resolve(task.0),
                task.1,
                self.names.resolve(old.0),
                old.1
            );
            self.runnable_evict(old, a, msg)?;
        }
        self.runnable_order.push_back(key);
        while self.runnables.len() > MAX_OPEN_RUNNABLES {
            let Some(old) = self.runnable_order.pop_front() else { break };
            if old == key || !self.runnables.contains_key(&old) {
                continue;
            }
            let msg = format!(
                "more than {MAX_OPEN_RUNNABLES} runnable instances are open at once; the oldest, \
                 {} instance {}, is kept as incomplete from here on (its state is shown open)",
                self.names.resolve(old.0),
                old.1
            );
            self.runnable_evict(old, a, msg)?;
        }
        // Entries of instances ended since: dropped once they outnumber the open ones.
        if self.runnable_order.len() > 2 * self.runnables.len() + 1024 {
            let open = &self.runnables;
            self.runnable_order.retain(|k| open.contains_key(k));
        }
        Ok(())
    }

    /// Closes open runnable instance `old` as incomplete at `a.ts` (too many open), its
    /// state shown open, saying `msg`.
    fn runnable_evict(&mut self, old: (Sym, i64), a: Act, msg: String) -> Result<()> {
        self.diag(Severity::Warning, "too_many_open_instances", a.pos, a.ts, msg)?;
        self.runnable_cut(old, a.ts)
    }

    /// Ends open runnable instance `key` at `ts` unfinished: its state shown open, the
    /// instance incomplete (too many open, or the capture's end).
    fn runnable_cut(&mut self, key: (Sym, i64), ts: i64) -> Result<()> {
        if let Some(row) = self.runnable_interval(key, ts, None, true) {
            self.emit_interval(row)?;
        }
        self.runnable_end(key, ts, false)
    }

    /// The one open instance of process `e` on a core (running or polling), if exactly one
    /// is.
    fn only_running_instance(&self, e: Sym) -> Option<i64> {
        let open = self.open_by_entity.get(&e)?;
        let mut on_core =
            open.iter().filter(|i| self.procs.get(&(e, **i)).is_some_and(|p| p.state.on_core()));
        let first = *on_core.next()?;
        on_core.next().is_none().then_some(first)
    }

    /// Running ↔ suspended at `a.ts`.
    fn runnable_switch(&mut self, key: (Sym, i64), a: Act) -> Result<()> {
        let Some(r) = self.runnables.get_mut(&key) else { return Ok(()) };
        let dur = a.ts - r.since;
        let was_running = r.running;
        if was_running {
            r.row.net_exec += dur;
            r.row.preemptions += 1;
        } else {
            r.row.ready_time += dur;
        }
        let row = self.runnable_interval(key, a.ts, Some(a.action), false);
        if let Some(r) = self.runnables.get_mut(&key) {
            r.running = !was_running;
            r.since = a.ts;
            r.since_action = a.action;
        }
        match row {
            Some(row) => self.emit_interval(row),
            None => Ok(()),
        }
    }

    fn runnable_interval(
        &mut self,
        key: (Sym, i64),
        end: i64,
        end_action: Option<Sym>,
        open: bool,
    ) -> Option<IntervalRow> {
        let r = self.runnables.get(&key)?;
        let state = if r.running { "running" } else { "suspended" };
        let (etype, since, since_action, core, running) =
            (r.etype, r.since, r.since_action, r.core, r.running);
        Some(IntervalRow {
            entity: key.0,
            entity_type: etype,
            instance: key.1,
            channel: self.known.state,
            state: StateText::Sym(self.names.intern(state)),
            value: None,
            ts: since,
            dur: end - since,
            core: if running { core } else { None },
            start_action: Some(since_action),
            end_action,
            open,
        })
    }

    /// Ends a runnable instance at `a.ts` (terminated when `terminated`, else incomplete).
    fn runnable_close(&mut self, key: (Sym, i64), a: Act, terminated: bool) -> Result<()> {
        if let Some(row) = self.runnable_interval(key, a.ts, Some(a.action), false) {
            self.emit_interval(row)?;
        }
        self.runnable_end(key, a.ts, terminated)
    }

    /// Forgets runnable instance `key` and emits its instance row, ended at `ts` (its last
    /// interval is emitted already).
    fn runnable_end(&mut self, key: (Sym, i64), ts: i64, terminated: bool) -> Result<()> {
        let Some(mut r) = self.runnables.remove(&key) else { return Ok(()) };
        self.inst_core.remove(&key);
        self.runnable_ended.insert(key.0, key.1);
        if let Some(o) = r.orphan_of {
            if let Some(list) = self.orphans.get_mut(&o) {
                unlist(list, key);
                if list.is_empty() {
                    self.orphans.remove(&o);
                }
            }
        }
        let dur = ts - r.since;
        if r.running {
            r.row.net_exec += dur;
        } else {
            r.row.ready_time += dur;
        }
        if terminated {
            r.row.terminate_ts = Some(ts);
        } else {
            r.row.clean = false;
        }
        if let Some(t) = r.task {
            if let Some(p) = self.procs.get_mut(&t) {
                unlist(&mut p.runnables, key);
            }
        }
        self.emit_instance(r.row)
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
