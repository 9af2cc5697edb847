//! Ground truth: what every task, ISR and runnable instance did, kept from the simulator's
//! own decisions (the execution times it drew, the moments it chose to preempt, resume,
//! grant a lock) rather than read back from the lines it writes.
//!
//! Running time is the sum of the execution budgets drawn for the instance, so it checks
//! the simulator's time keeping as well as a reader's; ready and polling time are the
//! spans between the moments the simulator took a process off its core and gave it back,
//! or made it spin and granted its lock.
//!
//! Besides the instances ([`SynthTruth`]): every activation and first start, lock request,
//! preemption (who took the core from whom), core occupancy, semaphore state, signal write
//! and dropped activation, each recorded where the simulator decides it. A deadline is
//! derived only from those recorded activations, never from the text.
//!
//! A run cut by `target_bytes` stops in the middle of an event: every record is made right
//! after the line that shows it, and nothing is recorded once a line was refused, so the
//! truth is what the trace holds. The instances the cut leaves under way are in
//! [`SynthTruth::cut`], with their times up to the last line.
use super::model::{Core, Event, Proc, Runnable, Sem, SemState, Signal};
use std::collections::VecDeque;

mod finish;
mod locks;
mod types;
pub use types::*;

/// Life-cycle state of an instance, for the time it spends in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ps {
    Active,
    Running,
    Ready,
    Waiting,
    Polling,
    Parking,
}

impl Ps {
    fn name(self) -> &'static str {
        match self {
            Ps::Active => "active",
            Ps::Running => "running",
            Ps::Ready => "ready",
            Ps::Waiting => "waiting",
            Ps::Polling => "polling",
            Ps::Parking => "parking",
        }
    }
}

/// The instance a process is working on.
struct OpenProc {
    /// Its entry in `Truth::acts` of the process.
    act: usize,
    activate: i64,
    start: Option<i64>,
    first_core: Option<usize>,
    last_core: usize,
    state: Ps,
    /// When it entered `state`.
    since: i64,
    /// Time spent in each state before `state`, by `Ps` index.
    time: [i64; 6],
    /// Running time from the budgets the simulator drew.
    net: i64,
    preemptions: u64,
    migrations: u64,
}

impl OpenProc {
    fn new((activate, act): (i64, usize)) -> Self {
        OpenProc {
            act,
            activate,
            start: None,
            first_core: None,
            last_core: 0,
            state: Ps::Active,
            since: activate,
            time: [0; 6],
            net: 0,
            preemptions: 0,
            migrations: 0,
        }
    }

    /// Enters `to` at `t`; returns the time spent in the state it left.
    fn enter(&mut self, to: Ps, t: i64) -> i64 {
        let d = t - self.since;
        self.time[self.state as usize] += d;
        self.state = to;
        self.since = t;
        d
    }

    /// Time in `s` up to `end`, the current state's share included.
    fn time_in(&self, s: Ps, end: i64) -> i64 {
        self.time[s as usize] + if self.state == s { end - self.since } else { 0 }
    }

    fn moved_to(&mut self, core: usize) {
        if core != self.last_core {
            self.migrations += 1;
        }
        self.last_core = core;
    }
}

/// The runnable instance a task is running.
struct OpenRun {
    runnable: usize,
    instance: u64,
    core: usize,
    start: i64,
    running: bool,
    since: i64,
    /// Running time from the budgets, plus its task's active waits.
    net: i64,
    /// Time running by its transitions (for an instance the trace cuts).
    ran: i64,
    ready: i64,
    suspends: u64,
}

impl OpenRun {
    fn suspend(&mut self, t: i64) {
        if self.running {
            self.ran += t - self.since;
            self.running = false;
            self.suspends += 1;
            self.since = t;
        }
    }

    fn resume(&mut self, t: i64) {
        if !self.running {
            self.ready += t - self.since;
            self.running = true;
            self.since = t;
        }
    }
}

#[derive(Default)]
struct ProcTruth {
    cur: Option<OpenProc>,
    /// Activation times of the queued activations (and their entries in `acts`), oldest
    /// first.
    pending: VecDeque<(i64, usize)>,
    run: Option<OpenRun>,
    /// Every logged activation, in instance order.
    acts: Vec<TruthActivation>,
    dropped: u64,
    /// The lock request of the running runnable (index in `Truth::locks`).
    lock: Option<usize>,
    /// The wait under way (index in `Truth::waits`).
    wait: Option<usize>,
}

/// What the truth follows of a semaphore.
struct SemTruth {
    name: String,
    state: &'static str,
    count: i64,
    since: i64,
    since_action: &'static str,
    /// The requests holding it (a slot each), and the requests waiting for it (indices in
    /// `Truth::locks`).
    holders: Vec<usize>,
    waiting: Vec<usize>,
}

/// Collects [`TruthInstance`]s while the simulation runs. Every hook takes the process
/// index; a hook for an instance that is not open does nothing.
pub(super) struct Truth {
    proc_names: Vec<String>,
    proc_codes: Vec<&'static str>,
    run_names: Vec<String>,
    core_names: Vec<String>,
    sig_names: Vec<String>,
    event_names: Vec<String>,
    periods: Vec<i64>,
    cores_of: Vec<usize>,
    procs: Vec<ProcTruth>,
    sems: Vec<SemTruth>,
    /// Per core, the process instance occupying it and since when.
    occupied: Vec<Option<(usize, u64, i64)>>,
    /// Complete instances, in the order they terminated.
    done: Vec<TruthInstance>,
    locks: Vec<TruthLock>,
    /// Per lock request, the requests that held the semaphore while it waited.
    blockers: Vec<Vec<usize>>,
    preemptions: Vec<TruthPreemption>,
    occupancy: Vec<TruthOccupancy>,
    sem_states: Vec<TruthSemState>,
    writes: Vec<TruthSignalWrite>,
    waits: Vec<TruthWait>,
}

fn text(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl Truth {
    pub(super) fn new(
        procs: &[Proc],
        runs: &[Runnable],
        cores: &[Core],
        sems: &[Sem],
        sigs: &[Signal],
        events: &[Event],
    ) -> Self {
        Truth {
            proc_names: procs.iter().map(|p| text(&p.name)).collect(),
            proc_codes: procs.iter().map(|p| if p.isr { "I" } else { "T" }).collect(),
            run_names: runs.iter().map(|r| text(&r.name)).collect(),
            core_names: cores.iter().map(|c| text(&c.name)).collect(),
            sig_names: sigs.iter().map(|s| text(&s.name)).collect(),
            event_names: events.iter().map(|e| text(&e.name)).collect(),
            periods: procs.iter().map(|p| p.period).collect(),
            cores_of: procs.iter().map(|p| p.core).collect(),
            procs: procs.iter().map(|_| ProcTruth::default()).collect(),
            sems: sems
                .iter()
                .map(|s| SemTruth {
                    name: text(&s.name),
                    state: "",
                    count: 0,
                    since: 0,
                    since_action: "",
                    holders: Vec::new(),
                    waiting: Vec::new(),
                })
                .collect(),
            occupied: cores.iter().map(|_| None).collect(),
            done: Vec::new(),
            locks: Vec::new(),
            blockers: Vec::new(),
            preemptions: Vec::new(),
            occupancy: Vec::new(),
            sem_states: Vec::new(),
            writes: Vec::new(),
            waits: Vec::new(),
        }
    }

    /// An activation of instance `inst` was logged: a new instance, or one queued behind
    /// the current one.
    pub(super) fn activate(&mut self, p: usize, inst: u64, t: i64, queued: bool) {
        let pt = &mut self.procs[p];
        let act = pt.acts.len();
        pt.acts.push(TruthActivation {
            process: self.proc_names[p].clone(),
            instance: inst,
            activate_ts: t,
            start_ts: None,
        });
        if queued {
            pt.pending.push_back((t, act));
        } else {
            pt.cur = Some(OpenProc::new((t, act)));
        }
    }

    /// An activation was refused: one was pending already.
    pub(super) fn dropped(&mut self, p: usize) {
        self.procs[p].dropped += 1;
    }

    pub(super) fn start(&mut self, p: usize, t: i64, core: usize) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            if let Some(a) = pt.acts.get_mut(o.act) {
                a.start_ts = Some(t);
            }
            o.start = Some(t);
            o.first_core = Some(core);
            o.last_core = core;
            o.enter(Ps::Running, t);
        }
    }

    pub(super) fn preempt(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.preemptions += 1;
            o.enter(Ps::Ready, t);
        }
        if let Some(r) = pt.run.as_mut() {
            r.suspend(t);
        }
    }

    pub(super) fn resume(&mut self, p: usize, t: i64, core: usize) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.enter(Ps::Running, t);
            o.moved_to(core);
        }
        if let Some(r) = pt.run.as_mut() {
            r.resume(t);
        }
    }

    /// The simulator gave the instance `d` ns of work to do (one phase of a runnable, or an
    /// ISR body): that much running time, whatever preemptions split it.
    pub(super) fn work(&mut self, p: usize, d: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.net += d;
        }
        if let Some(r) = pt.run.as_mut() {
            r.net += d;
        }
    }

    pub(super) fn poll(&mut self, p: usize, t: i64) {
        if let Some(o) = self.procs[p].cur.as_mut() {
            o.enter(Ps::Polling, t);
        }
    }

    /// The polling process `p` was preempted at `t`: it parks, its runnable is suspended
    /// (having run while its task polled).
    pub(super) fn park(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            let polled = o.enter(Ps::Parking, t);
            if let Some(r) = pt.run.as_mut() {
                r.net += polled;
                r.suspend(t);
            }
        }
    }

    /// The parked process `p` polls again on `core` from `t`.
    pub(super) fn poll_parking(&mut self, p: usize, t: i64, core: usize) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.enter(Ps::Polling, t);
            o.moved_to(core);
        }
        if let Some(r) = pt.run.as_mut() {
            r.resume(t);
        }
    }

    /// The parked process `p` was made ready at `t` (its runnable stays suspended).
    pub(super) fn release_parking(&mut self, p: usize, t: i64) {
        if let Some(o) = self.procs[p].cur.as_mut() {
            o.enter(Ps::Ready, t);
        }
    }

    /// The lock a polling process waited for was granted at `t`.
    pub(super) fn granted(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            let polled = o.enter(Ps::Running, t);
            if let Some(r) = pt.run.as_mut() {
                r.net += polled;
            }
        }
    }

    pub(super) fn runnable_start(&mut self, p: usize, t: i64, runnable: usize, instance: u64) {
        let pt = &mut self.procs[p];
        let core = pt.cur.as_ref().map_or(0, |o| o.last_core);
        pt.run = Some(OpenRun {
            runnable,
            instance,
            core,
            start: t,
            running: true,
            since: t,
            net: 0,
            ran: 0,
            ready: 0,
            suspends: 0,
        });
    }

    /// Task `p` (instance `inst`) began waiting for event `e` at `t`.
    pub(super) fn wait(&mut self, p: usize, inst: u64, e: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.enter(Ps::Waiting, t);
        }
        pt.wait = Some(self.waits.len());
        self.waits.push(TruthWait {
            process: self.proc_names[p].clone(),
            instance: inst,
            event: self.event_names[e].clone(),
            wait_ts: t,
            release_ts: None,
            at_once: false,
            set_by: None,
        });
    }

    /// Task `p` (instance `inst`) waited for event `e` at `t`, which was set: no wait.
    pub(super) fn wait_at_once(&mut self, p: usize, inst: u64, e: usize, t: i64) {
        self.waits.push(TruthWait {
            process: self.proc_names[p].clone(),
            instance: inst,
            event: self.event_names[e].clone(),
            wait_ts: t,
            release_ts: Some(t),
            at_once: true,
            set_by: None,
        });
    }

    /// Task `p` was queued at `t` for a slot of the counting semaphore: a passive wait, its
    /// runnable suspended.
    pub(super) fn queue(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.enter(Ps::Waiting, t);
        }
        if let Some(r) = pt.run.as_mut() {
            r.suspend(t);
        }
    }

    /// The waiting task `p` was released at `t` (its event was set, by process `by` instance
    /// `by_inst`, or it was handed a slot): it is ready from now on.
    pub(super) fn release(&mut self, p: usize, t: i64, by: Option<(usize, u64)>) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.enter(Ps::Ready, t);
        }
        if let Some(w) = pt.wait.take().and_then(|w| self.waits.get_mut(w)) {
            w.release_ts = Some(t);
            w.set_by = by.map(|(q, i)| (self.proc_names[q].clone(), i));
        }
    }

    /// The runnable of process `p` (instance `inst`) terminated at `t`; `logged` is false
    /// when its line was not written (the run ended), which leaves it incomplete.
    pub(super) fn runnable_end(&mut self, p: usize, inst: u64, t: i64, logged: bool) {
        let pt = &mut self.procs[p];
        if !logged || pt.cur.is_none() {
            return;
        }
        let Some(r) = pt.run.take() else { return };
        self.done.push(TruthInstance {
            entity: self.run_names[r.runnable].clone(),
            entity_type: "R",
            instance: r.instance,
            activate_ts: r.start,
            start_ts: r.start,
            terminate_ts: t,
            core: self.core_names[r.core].clone(),
            net_exec: r.net,
            ready_time: r.ready,
            waiting_time: 0,
            polling_time: 0,
            parking_time: 0,
            preemptions: r.suspends,
            migrations: 0,
            task: Some((self.proc_names[p].clone(), inst)),
            deadline: None,
        });
    }

    /// Process `p` (instance `inst`) terminated at `t`; its queued activation, if any,
    /// becomes the current instance.
    pub(super) fn terminate(&mut self, p: usize, inst: u64, t: i64, logged: bool) {
        if !logged {
            return;
        }
        let pt = &mut self.procs[p];
        let next = pt.pending.pop_front().map(OpenProc::new);
        let Some(o) = std::mem::replace(&mut pt.cur, next) else { return };
        self.done.push(TruthInstance {
            entity: self.proc_names[p].clone(),
            entity_type: self.proc_codes[p],
            instance: inst,
            activate_ts: o.activate,
            start_ts: o.start.unwrap_or(o.activate),
            terminate_ts: t,
            core: self.core_names[o.first_core.unwrap_or(0)].clone(),
            net_exec: o.net,
            ready_time: o.time_in(Ps::Ready, t),
            waiting_time: o.time_in(Ps::Waiting, t),
            polling_time: o.time_in(Ps::Polling, t),
            parking_time: o.time_in(Ps::Parking, t),
            preemptions: o.preemptions,
            migrations: o.migrations,
            task: None,
            deadline: None,
        });
    }

    /// Process instance `inst` of `p` took core `c` at `t`.
    pub(super) fn occupy(&mut self, c: usize, p: usize, inst: u64, t: i64) {
        self.vacate(c, t);
        self.occupied[c] = Some((p, inst, t));
    }

    /// Core `c` was left at `t` by whoever occupied it.
    pub(super) fn vacate(&mut self, c: usize, t: i64) {
        if let Some((p, inst, start)) = self.occupied[c].take() {
            self.occupancy.push(TruthOccupancy {
                core: self.core_names[c].clone(),
                process: self.proc_names[p].clone(),
                instance: inst,
                start,
                end: t,
            });
        }
    }

    /// `p` (instance `inst`) lost core `c` at `t` to `by` (instance `by_inst`).
    pub(super) fn preempted_by(
        &mut self,
        c: usize,
        (p, inst): (usize, u64),
        (by, by_inst): (usize, u64),
        t: i64,
    ) {
        self.preemptions.push(TruthPreemption {
            process: self.proc_names[p].clone(),
            instance: inst,
            by: self.proc_names[by].clone(),
            by_instance: by_inst,
            core: self.core_names[c].clone(),
            ts: t,
        });
    }
}
