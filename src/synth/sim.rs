//! The discrete-event simulation and the BTF line writer.
use super::model::*;
use super::truth::Truth;
use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::BufWriter;

/// Line formatter and writer. A write error is kept and ends the run, so the
/// simulation code need not thread `Result` through every line it writes.
pub(super) struct Out<W: Write> {
    pub(super) w: BufWriter<W>,
    pub(super) line: Vec<u8>,
    pub(super) limit: Option<u64>,
    pub(super) done: bool,
    /// A line was not written because the run had ended: nothing after it is in the trace.
    pub(super) refused: bool,
    pub(super) err: Option<io::Error>,
    pub(super) stats: SynthStats,
}

impl<W: Write> Out<W> {
    pub(super) fn new(w: BufWriter<W>, limit: Option<u64>) -> Self {
        Out {
            w,
            line: Vec::with_capacity(128),
            limit,
            done: false,
            refused: false,
            err: None,
            stats: SynthStats::default(),
        }
    }

    pub(super) fn header(&mut self) {
        if let Err(e) = self.w.write_all(HEADER) {
            self.fail(e);
            return;
        }
        self.stats.bytes += HEADER.len() as u64;
        self.check_limit();
    }

    /// Writes one line; false when nothing was written because the run ended.
    pub(super) fn emit(
        &mut self,
        t: i64,
        src: (&[u8], u64),
        ty: &[u8],
        tgt: (&[u8], u64),
        act: &[u8],
        note: Option<i64>,
    ) -> bool {
        if self.done {
            self.refused = true;
            return false;
        }
        self.fill(t, src, ty, tgt, act);
        if let Some(v) = note {
            self.line.push(b',');
            push_i64(&mut self.line, v);
        }
        self.line.push(b'\n');
        self.commit(t)
    }

    /// As [`Out::emit`], with a text note.
    pub(super) fn emit_text(
        &mut self,
        t: i64,
        src: (&[u8], u64),
        ty: &[u8],
        tgt: (&[u8], u64),
        act: &[u8],
        note: &[u8],
    ) -> bool {
        if self.done {
            self.refused = true;
            return false;
        }
        self.fill(t, src, ty, tgt, act);
        self.line.push(b',');
        self.line.extend_from_slice(note);
        self.line.push(b'\n');
        self.commit(t)
    }

    /// The line up to its action.
    fn fill(&mut self, t: i64, src: (&[u8], u64), ty: &[u8], tgt: (&[u8], u64), act: &[u8]) {
        let l = &mut self.line;
        l.clear();
        push_i64(l, t);
        l.push(b',');
        l.extend_from_slice(src.0);
        l.push(b',');
        push_u64(l, src.1);
        l.push(b',');
        l.extend_from_slice(ty);
        l.push(b',');
        l.extend_from_slice(tgt.0);
        l.push(b',');
        push_u64(l, tgt.1);
        l.push(b',');
        l.extend_from_slice(act);
    }

    pub(super) fn commit(&mut self, t: i64) -> bool {
        if let Err(e) = self.w.write_all(&self.line) {
            self.fail(e);
            return false;
        }
        self.stats.lines += 1;
        self.stats.bytes += self.line.len() as u64;
        self.stats.last_ts = t;
        self.check_limit();
        true
    }

    pub(super) fn check_limit(&mut self) {
        if self.limit.is_some_and(|lim| self.stats.bytes >= lim) {
            self.done = true;
        }
    }

    pub(super) fn fail(&mut self, e: io::Error) {
        self.err = Some(e);
        self.done = true;
    }

    pub(super) fn finish(mut self) -> io::Result<SynthStats> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.w.flush()?;
        Ok(self.stats)
    }
}

pub(super) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

pub(super) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// The truth, when it is recorded and the trace still goes on: a hook comes right after the
/// line that shows what it records, so once a line was refused (a run cut by size) nothing
/// more is recorded, and the truth is what the trace holds.
macro_rules! truth {
    ($s:ident) => {
        $s.truth.as_mut().filter(|_| !$s.out.refused)
    };
}

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
