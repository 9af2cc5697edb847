//! The runnable state machine: one [`Runnable`] per open instance, fed by
//! [`Deriver::runnable_event`] and by its task (a runnable runs only while its task
//! does): it writes the instance's `state` intervals and its `instances` row.
//!
//! Runnables: start: (none) → running; suspend: running → suspended; resume: suspended →
//! running; terminate: running → terminated. When a task leaves its core (preempt, wait,
//! park) its running runnables are suspended with it, and resumed when it runs again
//! ([`Deriver::runnables_follow`]); explicit `suspend`/`resume` events that follow are folded
//! into these transitions. A task's terminate ends its runnables; their own terminate at
//! that time is folded in, one that never comes is reported (`ended_with_task`).
//!
//! A runnable started by a task instance not seen yet waits for it (`Deriver::orphans`).
//! Memory is bounded: past [`MAX_RUNNABLES_PER_TASK`] open in one task instance, or
//! [`MAX_OPEN_RUNNABLES`] of all, the oldest is closed as incomplete.
use super::process::{Act, PState};
use super::{Class, Deriver, InstanceRow, IntervalRow, Output, StateText};
use crate::ingest::Severity;
use crate::model::{Pos, Sym};
use crate::Result;
use std::collections::VecDeque;

/// A runnable instance between its start and its termination.
pub(super) struct Runnable {
    etype: Sym,
    pub(super) running: bool,
    pub(super) since: i64,
    pub(super) since_action: Sym,
    pub(super) core: Option<Sym>,
    task: Option<(Sym, i64)>,
    /// The process instance it was started by, not seen yet when it started (the capture
    /// began while that task ran): it becomes the task when it appears.
    orphan_of: Option<(Sym, i64)>,
    /// The last transition was implied by the task; an explicit event saying the same is
    /// folded into it.
    pub(super) implicit: bool,
    /// Suspended by its own `suspend` while its task ran (it called another runnable, as
    /// libBtf and TA Tool Suite write a nested call): its task getting a core back does not
    /// resume it, its own `resume` does.
    held: bool,
    pub(super) row: InstanceRow,
}

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
    pub(super) runnable: (Sym, i64),
    pub(super) task: (Sym, i64),
    pub(super) pos: Pos,
}

impl<O: Output> Deriver<O> {
    /// Links to a process instance seen for the first time the runnables it started before
    /// the capture knew it.
    pub(super) fn adopt_runnables(&mut self, task: (Sym, i64)) {
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
    pub(super) fn runnables_follow(
        &mut self,
        task: (Sym, i64),
        on_core: bool,
        a: Act,
    ) -> Result<()> {
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
    pub(super) fn runnables_end_with_task(&mut self, task: (Sym, i64), a: Act) -> Result<()> {
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
    pub(super) fn runnable_cut(&mut self, key: (Sym, i64), ts: i64) -> Result<()> {
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
    pub(super) fn runnable_end(
        &mut self,
        key: (Sym, i64),
        ts: i64,
        terminated: bool,
    ) -> Result<()> {
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
}
