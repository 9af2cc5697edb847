//! Semaphores and OS events in the simulation: waits and the events that set and clear
//! them, lock requests (spinning, parking or preempted while held), releases and grants.
use super::*;

impl<W: Write> Sim<W> {
    /// `p` waits for an event, and its setter surely comes within the run.
    pub(super) fn may_wait(&self, p: usize, t: i64) -> bool {
        let Some(e) = self.procs[p].waits else { return false };
        self.endless || t + self.events[e].gap < self.duration
    }

    /// The running task `p` waits for its OS event: `wait_event`, then its core's `wait`;
    /// when the event is set already, the wait returns at once and the task goes on.
    pub(super) fn wait(&mut self, p: usize, t: i64) {
        let Some(e) = self.procs[p].waits else { return };
        let pr = &mut self.procs[p];
        pr.waited = true;
        let c = pr.core;
        let ev = (&self.events[e].name[..], 0);
        self.out.emit(t, (&pr.name, pr.inst), b"EVENT", ev, b"wait_event", None);
        if self.events[e].set {
            if let Some(tr) = truth!(self) {
                tr.wait_at_once(p, self.procs[p].inst, e, t);
            }
            self.start_runnable(p, t);
            return;
        }
        self.procs[p].state = State::Waiting;
        self.proc_line(t, p, b"wait");
        self.cores[c].running = None;
        self.cores[c].dirty = true;
        if let Some(tr) = truth!(self) {
            let inst = self.procs[p].inst;
            tr.wait(p, inst, e, t);
            tr.vacate(c, t);
        }
    }

    /// `p` is about to terminate: it sets the events it sets whose waiter waits
    /// (`set_event`, the note naming the waiter), and the waiter's core releases it. With
    /// `clear_events` it sets them whenever the waiter has an instance activated (the OS
    /// refuses a set for a task that is not, and logs nothing), and they stay set until the
    /// waiter clears them.
    pub(super) fn set_events(&mut self, p: usize, t: i64) {
        for e in 0..self.events.len() {
            let w = self.events[e].waiter;
            let waiting = self.procs[w].state == State::Waiting;
            let active = self.procs[w].state != State::Idle;
            if self.events[e].setter != p || !(waiting || self.clear_events && active) {
                continue;
            }
            let (pr, ev) = (&self.procs[p], (&self.events[e].name[..], 0));
            let waiter = &self.procs[w].name;
            self.out.emit_text(t, (&pr.name, pr.inst), b"EVENT", ev, b"set_event", waiter);
            self.events[e].set = self.clear_events;
            if !waiting {
                continue;
            }
            self.proc_line(t, w, b"release");
            self.procs[w].state = State::Ready;
            self.wake(w);
            if let Some(tr) = truth!(self) {
                let by = self.procs[p].inst;
                tr.release(w, t, Some((p, by)));
            }
        }
    }

    /// Task `p` clears OS event `e` (`clear_event`).
    pub(super) fn clear_event(&mut self, p: usize, e: usize, t: i64) {
        let pr = &self.procs[p];
        let ev = (&self.events[e].name[..], 0);
        self.out.emit(t, (&pr.name, pr.inst), b"EVENT", ev, b"clear_event", None);
        self.events[e].set = false;
    }

    /// `p` holds (or is about to hold) a semaphore whose holders may be preempted (a slot
    /// of the counting semaphore, or a mutex).
    pub(super) fn holds_preemptible(&self, p: usize) -> bool {
        self.current_lock(p).is_some_and(|s| self.sems[s].preemptible)
    }

    pub(super) fn request(&mut self, p: usize, t: i64) {
        let Some(s) = self.current_lock(p) else {
            return;
        };
        self.sem_line(t, p, s, b"requestsemaphore");
        let (taken, slots) = (self.sems[s].taken, self.sems[s].slots);
        if let Some(tr) = truth!(self) {
            tr.lock_request(p, self.procs[p].inst, s, t, taken >= slots);
        }
        if taken < slots {
            // A slot is free: take it.
            let sem = &mut self.sems[s];
            sem.taken += 1;
            let (act, state) = match (sem.taken == sem.slots, taken) {
                (true, 0) => ("lock", SemState::Full),
                (true, _) => ("lock_used", SemState::Full),
                (false, _) => ("used", SemState::Used),
            };
            sem.state = state;
            let count = i64::from(sem.taken);
            self.sem_self(t, s, act, count);
            if let Some(tr) = truth!(self) {
                tr.sem_state(s, state, count, act, t);
            }
            self.sem_line(t, p, s, b"assigned");
            if let Some(tr) = truth!(self) {
                tr.lock_assigned(p, s, t);
            }
            self.lock_granted(p, t);
            return;
        }
        let (counting, queues) = (self.sems[s].counting(), self.sems[s].preemptible);
        // Every slot taken. A one-slot semaphore logs its first waiter's overfull only; the
        // counting semaphore one per request, as SEMANTICS.md has it.
        if self.sems[s].state == SemState::Full || counting {
            self.sems[s].state = SemState::Overfull;
            let count = i64::from(self.sems[s].taken);
            self.sem_self(t, s, "overfull", count);
            if let Some(tr) = truth!(self) {
                tr.sem_state(s, SemState::Overfull, count, "overfull", t);
                tr.lock_contended(p, false);
            }
        }
        self.sems[s].waiters.push_back(p);
        if queues {
            // Queued: a passive wait, off the core, its runnable suspended.
            self.sem_line(t, p, s, b"queued");
            if let Some(tr) = truth!(self) {
                tr.lock_contended(p, true);
            }
            self.procs[p].state = State::Queued;
            self.proc_line(t, p, b"wait");
            let c = self.procs[p].core;
            if let Some(tr) = truth!(self) {
                tr.queue(p, t);
                tr.vacate(c, t);
            }
            self.run_line(t, p, b"suspend");
            self.cores[c].running = None;
            self.cores[c].dirty = true;
            return;
        }
        self.sem_line(t, p, s, b"waiting");
        if let Some(tr) = truth!(self) {
            tr.lock_contended(p, false);
        }
        self.proc_line(t, p, b"poll");
        if let Some(tr) = truth!(self) {
            tr.poll(p, t);
        }
        self.procs[p].state = State::Polling;
        self.procs[p].phase = Phase::Polling;
    }

    pub(super) fn release(&mut self, p: usize, t: i64) {
        let Some(s) = self.current_lock(p) else {
            return;
        };
        self.sem_line(t, p, s, b"released");
        if let Some(tr) = truth!(self) {
            tr.lock_released(p, s, t);
        }
        let Some(q) = self.sems[s].waiters.pop_front() else {
            // Nobody waits: the slot is free.
            let sem = &mut self.sems[s];
            let was_full = sem.taken == sem.slots;
            sem.taken -= 1;
            let (act, state) = match (was_full, sem.taken) {
                (true, 0) => ("unlock", SemState::Free),
                (true, _) => ("unlock_full", SemState::Used),
                (false, 0) => ("free", SemState::Free),
                (false, _) => ("used", SemState::Used),
            };
            sem.state = state;
            let count = i64::from(sem.taken);
            self.sem_self(t, s, act, count);
            if let Some(tr) = truth!(self) {
                tr.sem_state(s, state, count, act, t);
            }
            return;
        };
        // The slot goes to the first waiter: the semaphore stays full, and is no longer
        // overfull when that was the last one.
        if self.sems[s].waiters.is_empty() {
            self.sems[s].state = SemState::Full;
            let count = i64::from(self.sems[s].taken);
            self.sem_self(t, s, "full", count);
            if let Some(tr) = truth!(self) {
                tr.sem_state(s, SemState::Full, count, "full", t);
            }
        }
        match self.procs[q].state {
            State::Parking | State::Queued => {
                // Handed over while parked or queued: ready, holding it from its next resume.
                if self.procs[q].state == State::Parking {
                    self.proc_line(t, q, b"release_parking");
                    if let Some(tr) = truth!(self) {
                        tr.release_parking(q, t);
                    }
                    self.sem_line(t, q, s, b"assigned");
                    if let Some(tr) = truth!(self) {
                        tr.lock_assigned(q, s, t);
                    }
                } else {
                    self.sem_line(t, q, s, b"assigned");
                    if let Some(tr) = truth!(self) {
                        tr.lock_assigned(q, s, t);
                    }
                    self.proc_line(t, q, b"release");
                    if let Some(tr) = truth!(self) {
                        tr.release(q, t, None);
                    }
                }
                let pr = &mut self.procs[q];
                pr.state = State::Ready;
                pr.phase = Phase::Locked;
                pr.remaining = pr.hold;
                if let Some(tr) = truth!(self) {
                    tr.work(q, pr.remaining);
                }
                self.wake(q);
            }
            _ => {
                self.proc_line(t, q, b"run");
                if let Some(tr) = truth!(self) {
                    tr.granted(q, t);
                }
                self.sem_line(t, q, s, b"assigned");
                if let Some(tr) = truth!(self) {
                    tr.lock_assigned(q, s, t);
                }
                self.procs[q].state = State::Running;
                self.lock_granted(q, t);
            }
        }
    }

    /// The critical section is timed here because the dispatcher leaves a
    /// process in a critical section alone.
    pub(super) fn lock_granted(&mut self, p: usize, t: i64) {
        let pr = &mut self.procs[p];
        pr.phase = Phase::Locked;
        pr.remaining = pr.hold;
        if let Some(tr) = truth!(self) {
            tr.work(p, pr.remaining);
        }
        self.run_phase(p, t);
    }
}
