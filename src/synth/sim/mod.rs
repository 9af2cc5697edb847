//! The discrete-event simulation and the BTF line writer.
use super::model::*;
use super::truth::Truth;
use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::BufWriter;

/// The truth, when it is recorded and the trace still goes on: a hook comes right after the
/// line that shows what it records, so once a line was refused (a run cut by size) nothing
/// more is recorded, and the truth is what the trace holds.
macro_rules! truth {
    ($s:ident) => {
        $s.truth.as_mut().filter(|_| !$s.out.refused)
    };
}

mod locks;
mod out;
pub(super) use out::*;

/// The discrete-event simulation. Events are handled in time order, and
/// every line is written while its event is handled, so the file is in time
/// order by construction.
pub(super) struct Sim<W: Write> {
    pub(super) out: Out<W>,
    pub(super) rng: Rng,
    pub(super) procs: Vec<Proc>,
    pub(super) runs: Vec<Runnable>,
    pub(super) stims: Vec<Stim>,
    pub(super) sems: Vec<Sem>,
    pub(super) sigs: Vec<Signal>,
    pub(super) cores: Vec<Core>,
    pub(super) events: Vec<Event>,
    pub(super) nested_isrs: bool,
    pub(super) parking: bool,
    pub(super) clear_events: bool,
    pub(super) heap: BinaryHeap<Reverse<Ev>>,
    pub(super) seq: u64,
    pub(super) duration: i64,
    pub(super) endless: bool,
    pub(super) overrun_every: u64,
    /// Ground truth of every instance, when asked for (`None` costs nothing).
    pub(super) truth: Option<Truth>,
}

impl<W: Write> Sim<W> {
    /// `truth`: also record what every instance did ([`Sim::truth`]).
    pub(super) fn new(out: Out<W>, cfg: &SynthConfig, truth: bool) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let m = build_model(cfg, &mut rng);
        let truth =
            truth.then(|| Truth::new(&m.procs, &m.runs, &m.cores, &m.sems, &m.sigs, &m.events));
        Sim {
            out,
            rng,
            procs: m.procs,
            runs: m.runs,
            stims: m.stims,
            sems: m.sems,
            sigs: m.sigs,
            cores: m.cores,
            events: m.events,
            nested_isrs: cfg.nested_isrs,
            parking: cfg.parking,
            clear_events: cfg.clear_events,
            heap: BinaryHeap::new(),
            seq: 0,
            duration: cfg.duration_ns,
            endless: cfg.target_bytes.is_some(),
            overrun_every: cfg.overrun_every,
            truth,
        }
    }

    pub(super) fn push(&mut self, t: i64, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Reverse(Ev { t, seq: self.seq, kind }));
    }

    /// Schedules a stimulus unless the simulated time is over.
    pub(super) fn push_stim(&mut self, t: i64, s: usize) {
        if self.endless || t < self.duration {
            self.push(t, EvKind::Stim(s));
        }
    }

    pub(super) fn run(&mut self) {
        self.out.header();
        for s in 0..self.sems.len() {
            self.sem_self(0, s, "ready", 0);
            if let Some(tr) = truth!(self) {
                tr.sem_state(s, SemState::Free, 0, "ready", 0);
            }
        }
        for s in 0..self.stims.len() {
            let t = if self.stims[s].period > 0 { 0 } else { self.rng.range(ISR_GAP_NS) };
            self.push_stim(t, s);
        }
        while !self.out.done {
            let Some(Reverse(ev)) = self.heap.pop() else {
                break;
            };
            let t = ev.t;
            self.handle(ev);
            // Everything that happens at t is known before any core is
            // scheduled, so no process starts only to be preempted at once.
            while self.heap.peek().is_some_and(|Reverse(e)| e.t == t) {
                if let Some(Reverse(ev)) = self.heap.pop() {
                    self.handle(ev);
                }
            }
            // Until no core needs it: a task that migrates or waits frees a core
            // another was dispatched before.
            while let Some(c) = self.cores.iter().position(|c| c.dirty) {
                self.cores[c].dirty = false;
                self.dispatch(c, t);
            }
        }
    }

    pub(super) fn handle(&mut self, ev: Ev) {
        match ev.kind {
            EvKind::Stim(s) => self.on_stim(s, ev.t),
            EvKind::SegEnd { core, token } => self.on_seg_end(core, token, ev.t),
        }
    }

    pub(super) fn on_stim(&mut self, s: usize, t: i64) {
        let n = self.stims[s].next_n;
        self.stims[s].next_n += 1;
        let name = &self.stims[s].name;
        self.out.emit(t, (name, 0), b"STI", (name, n), b"trigger", None);
        for i in 0..self.stims[s].procs.len() {
            let p = self.stims[s].procs[i];
            self.activate(p, t, s, n);
        }
        let next = match self.stims[s].period {
            0 => t + self.rng.range(ISR_GAP_NS),
            period => t + period,
        };
        self.push_stim(next, s);
    }

    pub(super) fn activate(&mut self, p: usize, t: i64, s: usize, n: u64) {
        let pr = &mut self.procs[p];
        let queued = pr.state != State::Idle;
        match pr.state {
            State::Idle => {
                pr.inst = pr.next_inst;
                pr.state = State::Active;
            }
            _ if pr.queued < MAX_QUEUED => pr.queued += 1,
            // Overload: the activation is lost, as an OS would refuse it.
            _ => {
                if let Some(tr) = truth!(self) {
                    tr.dropped(p);
                }
                return;
            }
        }
        let inst = pr.next_inst;
        pr.next_inst += 1;
        let sti = (&self.stims[s].name[..], n);
        if self.out.emit(t, sti, pr.code, (&pr.name, inst), b"activate", None) {
            self.out.stats.activations += 1;
            if let Some(tr) = truth!(self) {
                tr.activate(p, inst, t, queued);
            }
        }
        self.wake(p);
    }

    /// The dispatcher of every core that may run `p` must look again.
    pub(super) fn wake(&mut self, p: usize) {
        if self.procs[p].global {
            self.cores.iter_mut().for_each(|c| c.dirty = true);
        } else {
            self.cores[self.procs[p].core].dirty = true;
        }
    }

    /// Puts the best ready process on core `c` and keeps it going.
    pub(super) fn dispatch(&mut self, c: usize, t: i64) {
        if let Some(p) = self.cores[c].running {
            let pr = &self.procs[p];
            let spins = pr.phase == Phase::Polling && !self.parking;
            // A spinlock's critical section is not preemptible; a counting semaphore's is, and
            // a mutex's (`preemptible_locks`).
            let locked = pr.phase == Phase::Locked && !self.holds_preemptible(p);
            if pr.isr && !self.nested_isrs || locked || spins {
                return;
            }
        }
        // A process running (or spinning) elsewhere is not for this core.
        let procs = &self.procs;
        let best = self.cores[c].order.iter().copied().find(|&p| match procs[p].state {
            State::Idle | State::Waiting | State::Queued => false,
            State::Active | State::Ready | State::Parking => true,
            State::Running | State::Polling => procs[p].core == c,
        });
        match (self.cores[c].running, best) {
            (Some(p), Some(b)) if p != b => {
                let parks = self.procs[p].phase == Phase::Polling;
                self.preempt(p, t);
                if let Some(tr) = truth!(self).filter(|_| !parks) {
                    let (pi, bi) = (self.procs[p].inst, self.procs[b].inst);
                    tr.preempted_by(c, (p, pi), (b, bi), t);
                }
                self.switch_in(b, c, t);
            }
            (None, Some(b)) => self.switch_in(b, c, t),
            _ => {}
        }
        if let Some(p) = self.cores[c].running {
            if self.procs[p].seg_end.is_none() {
                self.advance(p, t);
            }
        }
    }

    pub(super) fn preempt(&mut self, p: usize, t: i64) {
        let c = self.procs[p].core;
        if let Some(end) = self.procs[p].seg_end.take() {
            self.procs[p].remaining = end - t;
            self.cores[c].token += 1;
        }
        self.cores[c].running = None;
        if self.procs[p].phase == Phase::Polling {
            // Preempted while polling: it parks, and its runnable is suspended.
            self.procs[p].state = State::Parking;
            self.proc_line(t, p, b"park");
            if let Some(tr) = truth!(self) {
                tr.park(p, t);
                tr.vacate(c, t);
            }
            self.run_line(t, p, b"suspend");
        } else {
            self.procs[p].state = State::Ready;
            if self.proc_line(t, p, b"preempt") {
                self.out.stats.preemptions += 1;
            }
            if let Some(tr) = truth!(self) {
                tr.preempt(p, t);
                tr.vacate(c, t);
            }
            // Locked: a holder of the counting semaphore or of a mutex.
            if matches!(self.procs[p].phase, Phase::Pre | Phase::Post | Phase::Locked) {
                self.run_line(t, p, b"suspend");
            }
        }
        if self.procs[p].global {
            // Another core may take it at once.
            self.wake(p);
        }
    }

    pub(super) fn switch_in(&mut self, p: usize, core: usize, t: i64) {
        self.procs[p].core = core;
        self.cores[core].running = Some(p);
        let inst = self.procs[p].inst;
        match self.procs[p].state {
            State::Active => {
                let exec = if self.procs[p].isr {
                    let exec = self.rng.jitter(self.procs[p].isr_exec);
                    let pr = &mut self.procs[p];
                    pr.phase = Phase::Body;
                    pr.remaining = exec;
                    Some(exec)
                } else {
                    self.procs[p].phase = Phase::Between;
                    self.procs[p].ridx = 0;
                    self.procs[p].waited = false;
                    None
                };
                self.proc_line(t, p, b"start");
                if let Some(tr) = truth!(self) {
                    tr.occupy(core, p, inst, t);
                    tr.start(p, t, core);
                    if let Some(exec) = exec {
                        tr.work(p, exec);
                    }
                }
                // The waiter clears its event first: a set made before does not count.
                if let Some(e) = self.procs[p].waits.filter(|_| self.clear_events) {
                    self.clear_event(p, e, t);
                }
            }
            State::Ready => {
                self.proc_line(t, p, b"resume");
                if let Some(tr) = truth!(self) {
                    tr.occupy(core, p, inst, t);
                    tr.resume(p, t, core);
                }
                // Locked: handed the semaphore while parked or queued, or preempted holding
                // the counting semaphore or a mutex.
                if matches!(self.procs[p].phase, Phase::Pre | Phase::Post | Phase::Locked) {
                    self.run_line(t, p, b"resume");
                }
            }
            State::Parking => {
                // Back on a core before the semaphore was handed over: it polls again.
                self.proc_line(t, p, b"poll_parking");
                if let Some(tr) = truth!(self) {
                    tr.occupy(core, p, inst, t);
                    tr.poll_parking(p, t, core);
                }
                self.run_line(t, p, b"resume");
                self.procs[p].state = State::Polling;
                return;
            }
            _ => {}
        }
        self.procs[p].state = State::Running;
    }

    /// Continues the running process `p`, which has no segment under way.
    pub(super) fn advance(&mut self, p: usize, t: i64) {
        let pr = &self.procs[p];
        match pr.phase {
            Phase::Between if pr.ridx == 1 && !pr.waited && self.may_wait(p, t) => self.wait(p, t),
            Phase::Between => self.start_runnable(p, t),
            Phase::Pre | Phase::Post | Phase::Body => self.run_phase(p, t),
            // Handed the semaphore while parked: the critical section starts now.
            Phase::Locked => self.run_phase(p, t),
            // Waits for the semaphore's release.
            Phase::Polling => {}
        }
    }

    pub(super) fn start_runnable(&mut self, p: usize, t: i64) {
        // Back from its wait: the task clears the event it waited for.
        let waited = self.procs[p].ridx == 1 && self.procs[p].waited;
        if let Some(e) = self.procs[p].waits.filter(|_| waited && self.clear_events) {
            self.clear_event(p, e, t);
        }
        let r = self.procs[p].runnables[self.procs[p].ridx];
        let rinst = self.runs[r].next_inst;
        self.procs[p].rinst = rinst;
        self.runs[r].next_inst += 1;
        self.run_line(t, p, b"start");
        if let Some(tr) = truth!(self) {
            tr.runnable_start(p, t, r, rinst);
        }
        if let Some(sig) = self.runs[r].read {
            self.sig_line(t, p, sig, b"read");
        }
        let mut exec = self.rng.jitter(self.runs[r].exec);
        let pr = &mut self.procs[p];
        if self.overrun_every > 0 && pr.inst % self.overrun_every == self.overrun_every - 1 {
            exec *= OVERRUN_FACTOR;
        }
        pr.remaining = match self.runs[r].lock {
            Some((_, hold)) => {
                // Every phase lasts at least 1 ns, so no segment ends at once.
                pr.hold = hold.min(exec / 2).max(1);
                let pre = ((exec - pr.hold) / 2).max(1);
                pr.post = (exec - pr.hold - pre).max(1);
                pre
            }
            None => exec,
        };
        pr.phase = Phase::Pre;
        if let Some(tr) = truth!(self) {
            tr.work(p, pr.remaining);
        }
        self.run_phase(p, t);
    }

    pub(super) fn run_phase(&mut self, p: usize, t: i64) {
        let c = self.procs[p].core;
        let end = t + self.procs[p].remaining;
        self.procs[p].seg_end = Some(end);
        let token = self.cores[c].token;
        self.push(end, EvKind::SegEnd { core: c, token });
    }

    /// The running process finished a phase: do what follows at once, except
    /// starting a runnable, which waits for the dispatcher so that a higher
    /// priority process activated at the same time gets the core first.
    pub(super) fn on_seg_end(&mut self, c: usize, token: u64, t: i64) {
        if self.cores[c].token != token {
            return;
        }
        let Some(p) = self.cores[c].running else {
            return;
        };
        self.procs[p].seg_end = None;
        self.procs[p].remaining = 0;
        match self.procs[p].phase {
            Phase::Body => self.terminate(p, t),
            Phase::Pre if self.current_lock(p).is_some() => self.request(p, t),
            Phase::Pre | Phase::Post => self.end_runnable(p, t),
            Phase::Locked => {
                self.release(p, t);
                let pr = &mut self.procs[p];
                pr.phase = Phase::Post;
                pr.remaining = pr.post;
                if let Some(tr) = truth!(self) {
                    tr.work(p, pr.remaining);
                }
                self.cores[c].dirty = true;
            }
            Phase::Between | Phase::Polling => {}
        }
    }

    pub(super) fn current_lock(&self, p: usize) -> Option<usize> {
        let pr = &self.procs[p];
        let r = *pr.runnables.get(pr.ridx)?;
        self.runs[r].lock.map(|(sem, _)| sem)
    }

    pub(super) fn end_runnable(&mut self, p: usize, t: i64) {
        let r = self.procs[p].runnables[self.procs[p].ridx];
        if let Some(sig) = self.runs[r].write {
            let step = 1 + self.rng.below(7) as i64;
            self.sigs[sig].value = (self.sigs[sig].value + step) % 10_000;
            self.sig_line(t, p, sig, b"write");
            if let Some(tr) = truth!(self) {
                tr.signal_write(sig, t, self.sigs[sig].value, r, self.procs[p].rinst);
            }
        }
        let logged = self.run_line(t, p, b"terminate");
        if let Some(tr) = truth!(self) {
            tr.runnable_end(p, self.procs[p].inst, t, logged);
        }
        let pr = &mut self.procs[p];
        pr.ridx += 1;
        pr.phase = Phase::Between;
        if pr.ridx >= pr.runnables.len() {
            self.terminate(p, t);
        } else {
            self.cores[pr.core].dirty = true;
        }
    }

    pub(super) fn terminate(&mut self, p: usize, t: i64) {
        self.set_events(p, t);
        let logged = self.proc_line(t, p, b"terminate");
        if logged {
            self.out.stats.terminations += 1;
        }
        if let Some(tr) = truth!(self) {
            tr.terminate(p, self.procs[p].inst, t, logged);
        }
        let pr = &mut self.procs[p];
        self.cores[pr.core].running = None;
        self.cores[pr.core].dirty = true;
        if let Some(tr) = truth!(self) {
            tr.vacate(pr.core, t);
        }
        if pr.queued > 0 {
            // The pending activation carries the next instance number.
            pr.queued -= 1;
            pr.inst += 1;
            pr.state = State::Active;
            self.wake(p);
        } else {
            pr.state = State::Idle;
        }
    }

    /// `t,Core_k,0,T|I,<process>,<inst>,<act>`.
    pub(super) fn proc_line(&mut self, t: i64, p: usize, act: &[u8]) -> bool {
        let pr = &self.procs[p];
        let core = (&self.cores[pr.core].name[..], 0);
        self.out.emit(t, core, pr.code, (&pr.name, pr.inst), act, None)
    }

    /// `t,<task>,<inst>,R,<runnable>,<rinst>,<act>`; false when not written.
    pub(super) fn run_line(&mut self, t: i64, p: usize, act: &[u8]) -> bool {
        let pr = &self.procs[p];
        let r = &self.runs[pr.runnables[pr.ridx]];
        self.out.emit(t, (&pr.name, pr.inst), b"R", (&r.name, pr.rinst), act, None)
    }

    /// `t,<task>,<inst>,SEM,<sem>,0,<act>`.
    pub(super) fn sem_line(&mut self, t: i64, p: usize, s: usize, act: &[u8]) {
        let pr = &self.procs[p];
        let sem = (&self.sems[s].name[..], 0);
        self.out.emit(t, (&pr.name, pr.inst), b"SEM", sem, act, None);
    }

    /// `t,<sem>,0,SEM,<sem>,0,<act>,<count>`.
    pub(super) fn sem_self(&mut self, t: i64, s: usize, act: &str, count: i64) {
        let sem = (&self.sems[s].name[..], 0);
        self.out.emit(t, sem, b"SEM", sem, act.as_bytes(), Some(count));
    }

    /// `t,<runnable>,<rinst>,SIG,<signal>,0,<act>,<value>`.
    pub(super) fn sig_line(&mut self, t: i64, p: usize, sig: usize, act: &[u8]) {
        let pr = &self.procs[p];
        let r = &self.runs[pr.runnables[pr.ridx]];
        let sg = &self.sigs[sig];
        self.out.emit(t, (&r.name, pr.rinst), b"SIG", (&sg.name, 0), act, Some(sg.value));
    }
}
