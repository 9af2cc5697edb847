//! Core occupancy: which process instance holds each core (the core's `running`
//! intervals), and the decisions that depend on what else happens at the same instant.
//!
//! A process takes its core when it starts running or polling and gives it back when it
//! leaves those states ([`Deriver::occupy`], [`Deriver::vacate`]). One that takes a core
//! still held with no preempt in the trace displaces the holder: an ISR interrupts it
//! (`implicit_preemption`, resumed when the ISR leaves the core for good), anything else is
//! a `core_conflict`. Events of one instant come in any order, so some decisions wait until
//! the time moves on (pending lists in [`Deriver`]): the resume of an interrupted process
//! (an ISR arriving at the same instant chains on), a resume from another core taken as a
//! move (its preempt may follow), and a conflict (the displaced process's own end may
//! follow).
//!
//! It also says on which core an event happens (`Deriver::resolve_core`, the `core` of
//! `events` rows and of the state machines' rows): the source when it is a core, else where
//! the source instance (or entity) runs, else, for a process event, the source itself when
//! it is undeclared and a core by its name (`looks_like_core`) or by causing a process
//! transition other than activate (info `core_inferred`), else the target's core.
use super::process::{self, Act, PState};
use super::runnable::PendingEnd;
use super::{Deriver, IntervalRow, Output, StateText};
use crate::ingest::Severity;
use crate::model::{Event, Pos, Sym};
use crate::Result;

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
    pub(super) occupant: Option<(Sym, i64, i64, Sym)>,
    /// Processes an ISR took the core from with no preempt in the trace, innermost last,
    /// each with the ISR: it gets the core back when that ISR leaves it for good.
    interrupted: Vec<((Sym, i64), (Sym, i64))>,
}

impl<O: Output> Deriver<O> {
    /// An explicit event that says what an ISR's arrival or departure already implied (the
    /// preempt of the process it interrupted, or that process's resume): nothing new.
    pub(super) fn fold_implied(
        &mut self,
        key: (Sym, i64),
        state: PState,
        to: PState,
        a: Act,
    ) -> bool {
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
    pub(super) fn end_displaced(
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
    pub(super) fn move_by_resume(&mut self, key: (Sym, i64), from: Sym, a: Act) -> Result<()> {
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
    pub(super) fn confirm_move(&mut self, key: (Sym, i64), a: Act) -> bool {
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
    pub(super) fn core_elsewhere(&mut self, key: (Sym, i64), a: Act) -> Option<Sym> {
        let on = self.procs.get(&key).and_then(|p| p.core)?;
        (a.source != on && self.is_core(a.source)).then_some(on)
    }

    /// `key` takes `core`. A process still running there with no preempt in the trace
    /// is preempted by it: by an ISR, an interruption that ends when the ISR leaves the
    /// core (info `implicit_preemption`); by anything else, a conflict (warning
    /// `core_conflict`), the displaced process staying ready until its next event.
    pub(super) fn occupy(&mut self, core: Sym, key: (Sym, i64), a: Act) -> Result<()> {
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
    pub(super) fn resume_interrupted(&mut self, core: Sym, by: (Sym, i64), a: Act) -> Result<()> {
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

    pub(super) fn vacate(&mut self, core: Sym, key: (Sym, i64), a: Act) -> Result<()> {
        let Some(slot) = self.cores.get_mut(&core) else { return Ok(()) };
        match slot.occupant {
            Some((e, i, since, since_action)) if (e, i) == key => {
                slot.occupant = None;
                self.emit_occupancy(core, (e, i, since, since_action), a.ts, Some(a.action), false)
            }
            _ => Ok(()),
        }
    }

    pub(super) fn emit_occupancy(
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

    /// Core on which an event happens: the source when it is a core, else where the source
    /// instance (or, failing that, the source entity) runs, else (for process events) a
    /// source that is a core by name or by what it does, else where the target instance last
    /// ran.
    pub(super) fn resolve_core(
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

/// Whether an undeclared entity's name says it is a core: `Core_0`, `core1`, `CPU0`,
/// `ECU1_Core0`, `P0/cpu1` (a word `core` or `cpu` in it, in any case, followed by nothing,
/// a digit or a separator). A task named like `CoreMonitor` or `Scoreboard` is not one.
pub(super) fn looks_like_core(name: &str) -> bool {
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
