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

/// What one complete task, ISR or runnable instance did, in ns (the trace's time unit).
///
/// Fields follow the `instances` table (DESIGN.md, AMALTHEA). Its derived metrics follow:
/// response time `terminate_ts - activate_ts`, start delay `start_ts - activate_ts`, gross
/// execution `terminate_ts - start_ts`, which is `net_exec + ready_time + waiting_time +
/// polling_time + parking_time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthInstance {
    /// Task, ISR or runnable name.
    pub entity: String,
    /// `T`, `I` or `R`.
    pub entity_type: &'static str,
    /// Instance number, as in the trace.
    pub instance: u64,
    /// Activation (a runnable: its start).
    pub activate_ts: i64,
    /// First start.
    pub start_ts: i64,
    /// Termination.
    pub terminate_ts: i64,
    /// Core of the first start (a runnable: its task's core when it started).
    pub core: String,
    /// Time running. For a runnable this includes its task's active waits for a semaphore
    /// (the runnable is not suspended while its task spins).
    pub net_exec: i64,
    /// Time preempted (a runnable: suspended) between start and terminate.
    pub ready_time: i64,
    /// Time spent in passive waits for an OS event, from `wait` to `release` (0 for
    /// runnables: a task waits between two of them).
    pub waiting_time: i64,
    /// Time spent in active waits for a semaphore (0 for runnables).
    pub polling_time: i64,
    /// Time parked: preempted while polling, until it polls again or is made ready (0 for
    /// runnables, which are suspended then: their `ready_time`).
    pub parking_time: i64,
    /// Running → ready transitions (a runnable: suspensions).
    pub preemptions: u64,
    /// Resumes on another core than the one last run on (0 unless
    /// [`super::SynthConfig::migrating_tasks`]; 0 for runnables).
    pub migrations: u64,
    /// For a runnable: the task instance that ran it.
    pub task: Option<(String, u64)>,
    /// Tasks and ISRs: the implicit deadline (DESIGN.md, README "deadline_misses"), the time
    /// from this activation to the process's next one, or for its last one the time since
    /// the one before (None when it was activated once). It is the task's period unless an
    /// activation was dropped (the next one then comes a period later); an ISR's is the gap
    /// the simulator drew. None for runnables.
    pub deadline: Option<i64>,
}

/// Everything the simulator knows about a run ([`super::write_btf_with_truth`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthTruth {
    /// Complete task, ISR and runnable instances, in the order they terminated.
    pub instances: Vec<TruthInstance>,
    /// Tasks and ISRs of the model.
    pub processes: Vec<TruthProcess>,
    /// Every logged activation, per process in instance order.
    pub activations: Vec<TruthActivation>,
    /// Every lock request, in request order.
    pub lock_requests: Vec<TruthLock>,
    /// Every preemption, in time order.
    pub preemptions: Vec<TruthPreemption>,
    /// Every stretch of time a process occupied a core (running, or polling for a lock).
    pub occupancy: Vec<TruthOccupancy>,
    /// Every state of every semaphore, from its `ready` at 0 to the end of the run.
    pub semaphore_states: Vec<TruthSemState>,
    /// Every signal write, in time order.
    pub signal_writes: Vec<TruthSignalWrite>,
    /// Every wait for an OS event (`wait_event`), in the order the waits began.
    pub waits: Vec<TruthWait>,
    /// Task, ISR and runnable instances activated (a runnable: started) but not terminated
    /// when the trace ends (a run cut by `target_bytes`), with their times up to its last
    /// line; ordered by entity and instance.
    pub cut: Vec<TruthCutInstance>,
}

/// An instance the end of the trace cut: what it did up to the last line. tracedb shows it
/// `complete = false`, with its totals up to the capture's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthCutInstance {
    /// Task, ISR or runnable name.
    pub entity: String,
    /// `T`, `I` or `R`.
    pub entity_type: &'static str,
    /// Instance number.
    pub instance: u64,
    /// The state the trace ends in: `active`, `running`, `ready`, `waiting`, `polling` or
    /// `parking` (a runnable: `running` or `suspended`).
    pub state: &'static str,
    /// Activation (a runnable: its start).
    pub activate_ts: i64,
    /// First start; None when it never started (an activation queued, or one waiting for
    /// its core).
    pub start_ts: Option<i64>,
    /// Core of the first start (a runnable: its task's core when it started).
    pub core: Option<String>,
    /// Time running up to the end (a runnable: its task's active waits included).
    pub net_exec: i64,
    /// Time ready (a runnable: suspended).
    pub ready_time: i64,
    /// Time in passive waits (0 for runnables).
    pub waiting_time: i64,
    /// Time polling (0 for runnables).
    pub polling_time: i64,
    /// Time parked (0 for runnables).
    pub parking_time: i64,
    /// Preemptions (a runnable: suspensions).
    pub preemptions: u64,
    /// Changes of core (0 for runnables).
    pub migrations: u64,
    /// For a runnable: the task instance that ran it.
    pub task: Option<(String, u64)>,
}

/// A task instance waited for an OS event from `wait_ts` until released at `release_ts`
/// (None when the run ended first); or, when the event was set already
/// ([`super::SynthConfig::clear_events`]), its `wait_event` returned at once: `at_once`, with
/// `release_ts` = `wait_ts` and no passive wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthWait {
    /// The task.
    pub process: String,
    /// Its instance.
    pub instance: u64,
    /// The OS event.
    pub event: String,
    /// When it began waiting (its `wait_event` and `wait`).
    pub wait_ts: i64,
    /// When it was released (`set_event`, `release`).
    pub release_ts: Option<i64>,
    /// The event was set when waited for: no wait.
    pub at_once: bool,
    /// Who set the event that released it (task or ISR, instance).
    pub set_by: Option<(String, u64)>,
}

/// A task or ISR of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthProcess {
    /// Task or ISR name.
    pub name: String,
    /// `T` or `I`.
    pub entity_type: &'static str,
    /// Core it is bound to.
    pub core: String,
    /// Activation period, ns (0 for an ISR: sporadic).
    pub period: i64,
    /// Activations refused because one was already pending (no line in the trace).
    pub dropped_activations: u64,
}

/// One activation and the first start of the instance it made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthActivation {
    /// Task or ISR.
    pub process: String,
    /// Instance the activation made.
    pub instance: u64,
    /// Activation time.
    pub activate_ts: i64,
    /// None when the instance never started within the run.
    pub start_ts: Option<i64>,
}

/// One request of a semaphore by a task instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthLock {
    /// Semaphore asked for.
    pub semaphore: String,
    /// Task that asked.
    pub process: String,
    /// Its instance.
    pub process_instance: u64,
    /// Request time.
    pub request_ts: i64,
    /// When it got the semaphore.
    pub assigned_ts: Option<i64>,
    /// When it released it.
    pub released_ts: Option<i64>,
    /// Every slot was taken when asked (for a mutex: it was held): it had to wait until one
    /// was handed over (the trace says so: `overfull`, `waiting` or `queued`).
    pub contended: bool,
    /// It waited passively (`queued`, the counting semaphore) rather than polling.
    pub queued: bool,
    /// Who blocked it: the task instances that held the semaphore (a slot of it) while it
    /// waited, in the order they got it (ties by name and instance): the holders at the
    /// request, then the earlier waiters served first.
    pub blocked_by: Vec<(String, u64)>,
}

/// One preemption: `process` lost `core` to `by` at `ts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthPreemption {
    /// Task that lost the core.
    pub process: String,
    /// Its instance.
    pub instance: u64,
    /// Process that took the core.
    pub by: String,
    /// Its instance.
    pub by_instance: u64,
    /// The core.
    pub core: String,
    /// When.
    pub ts: i64,
}

/// A process instance occupying a core from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthOccupancy {
    /// The core.
    pub core: String,
    /// Task or ISR on it.
    pub process: String,
    /// Its instance.
    pub instance: u64,
    /// From.
    pub start: i64,
    /// To.
    pub end: i64,
}

/// A semaphore in `state` (`free`, `used`, `full` or `overfull`) with `count` slots taken
/// from `start` to `end`; `open` when the run ended in it (`end` is then the last line's
/// time). A line that changes neither (a repeated `overfull`) starts no new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthSemState {
    /// The semaphore.
    pub semaphore: String,
    /// `free`, `used`, `full` or `overfull`.
    pub state: &'static str,
    /// Slots taken (the note of its line).
    pub count: i64,
    /// From.
    pub start: i64,
    /// To.
    pub end: i64,
    /// The semaphore's action that entered it.
    pub start_action: &'static str,
    /// The one that left it (None when open).
    pub end_action: Option<&'static str>,
    /// The run ended in this state.
    pub open: bool,
}

/// A runnable instance wrote `value` to `signal` at `ts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthSignalWrite {
    /// The signal.
    pub signal: String,
    /// When.
    pub ts: i64,
    /// Value written.
    pub value: i64,
    /// Runnable that wrote it.
    pub writer: String,
    /// Its instance.
    pub writer_instance: u64,
}

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

fn sem_state_name(s: SemState) -> &'static str {
    match s {
        SemState::Free => "free",
        SemState::Used => "used",
        SemState::Full => "full",
        SemState::Overfull => "overfull",
    }
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

    /// Semaphore `s` entered `state` with `count` slots taken at `t`, by its `action`.
    pub(super) fn sem_state(
        &mut self,
        s: usize,
        state: SemState,
        count: i64,
        action: &'static str,
        t: i64,
    ) {
        let name = sem_state_name(state);
        let st = &mut self.sems[s];
        if st.state == name && st.count == count {
            return;
        }
        if !st.state.is_empty() {
            self.sem_states.push(TruthSemState {
                semaphore: st.name.clone(),
                state: st.state,
                count: st.count,
                start: st.since,
                end: t,
                start_action: st.since_action,
                end_action: Some(action),
                open: false,
            });
        }
        st.state = name;
        st.count = count;
        st.since = t;
        st.since_action = action;
    }

    /// Process `p` (instance `inst`) asked for semaphore `s` at `t`; `held`: no slot was
    /// free, so the holders block it.
    pub(super) fn lock_request(&mut self, p: usize, inst: u64, s: usize, t: i64, held: bool) {
        let i = self.locks.len();
        let st = &mut self.sems[s];
        let blockers = if held {
            st.waiting.push(i);
            st.holders.clone()
        } else {
            Vec::new()
        };
        self.blockers.push(blockers);
        self.locks.push(TruthLock {
            semaphore: st.name.clone(),
            process: self.proc_names[p].clone(),
            process_instance: inst,
            request_ts: t,
            assigned_ts: None,
            released_ts: None,
            contended: false,
            queued: false,
            blocked_by: Vec::new(),
        });
        self.procs[p].lock = Some(i);
    }

    /// The trace said the open request of `p` had to wait (`overfull`, `waiting`); `queued`:
    /// it waits passively (`queued`).
    pub(super) fn lock_contended(&mut self, p: usize, queued: bool) {
        if let Some(l) = self.procs[p].lock.and_then(|i| self.locks.get_mut(i)) {
            l.contended = true;
            l.queued |= queued;
        }
    }

    /// The open request of `p` got semaphore `s` at `t`: the waiting ones now wait for it too.
    pub(super) fn lock_assigned(&mut self, p: usize, s: usize, t: i64) {
        let Some(i) = self.procs[p].lock else { return };
        self.locks[i].assigned_ts = Some(t);
        let st = &mut self.sems[s];
        st.holders.push(i);
        st.waiting.retain(|&w| w != i);
        for &w in &st.waiting {
            self.blockers[w].push(i);
        }
    }

    /// `p` released semaphore `s` at `t`.
    pub(super) fn lock_released(&mut self, p: usize, s: usize, t: i64) {
        let Some(i) = self.procs[p].lock.take() else { return };
        self.locks[i].released_ts = Some(t);
        self.sems[s].holders.retain(|&h| h != i);
    }

    /// Runnable `r` (instance `rinst`) wrote `value` to signal `sig` at `t`.
    pub(super) fn signal_write(&mut self, sig: usize, t: i64, value: i64, r: usize, rinst: u64) {
        self.writes.push(TruthSignalWrite {
            signal: self.sig_names[sig].clone(),
            ts: t,
            value,
            writer: self.run_names[r].clone(),
            writer_instance: rinst,
        });
    }

    /// The instances under way at `end`, the last line's time: what the trace cut.
    fn cut_instances(&self, end: i64) -> Vec<TruthCutInstance> {
        let mut cut = Vec::new();
        for (p, pt) in self.procs.iter().enumerate() {
            let proc_cut = |activate, o: Option<&OpenProc>, inst| TruthCutInstance {
                entity: self.proc_names[p].clone(),
                entity_type: self.proc_codes[p],
                instance: inst,
                state: o.map_or("active", |o| o.state.name()),
                activate_ts: activate,
                start_ts: o.and_then(|o| o.start),
                core: o.and_then(|o| o.first_core).map(|c| self.core_names[c].clone()),
                net_exec: o.map_or(0, |o| o.time_in(Ps::Running, end)),
                ready_time: o.map_or(0, |o| o.time_in(Ps::Ready, end)),
                waiting_time: o.map_or(0, |o| o.time_in(Ps::Waiting, end)),
                polling_time: o.map_or(0, |o| o.time_in(Ps::Polling, end)),
                parking_time: o.map_or(0, |o| o.time_in(Ps::Parking, end)),
                preemptions: o.map_or(0, |o| o.preemptions),
                migrations: o.map_or(0, |o| o.migrations),
                task: None,
            };
            let Some(o) = pt.cur.as_ref() else { continue };
            let Some(act) = pt.acts.get(o.act) else { continue };
            cut.push(proc_cut(o.activate, Some(o), act.instance));
            for &(t, a) in &pt.pending {
                if let Some(act) = pt.acts.get(a) {
                    cut.push(proc_cut(t, None, act.instance));
                }
            }
            if let Some(r) = pt.run.as_ref() {
                let tail = end - r.since;
                cut.push(TruthCutInstance {
                    entity: self.run_names[r.runnable].clone(),
                    entity_type: "R",
                    instance: r.instance,
                    state: if r.running { "running" } else { "suspended" },
                    activate_ts: r.start,
                    start_ts: Some(r.start),
                    core: Some(self.core_names[r.core].clone()),
                    net_exec: r.ran + if r.running { tail } else { 0 },
                    ready_time: r.ready + if r.running { 0 } else { tail },
                    waiting_time: 0,
                    polling_time: 0,
                    parking_time: 0,
                    preemptions: r.suspends,
                    migrations: 0,
                    task: Some((self.proc_names[p].clone(), act.instance)),
                });
            }
        }
        cut.sort_by(|a, b| (&a.entity, a.instance).cmp(&(&b.entity, b.instance)));
        cut
    }

    /// Everything, with the implicit deadlines; `end` is the time of the last line (where
    /// the trace closes what is still open).
    pub(super) fn finish(mut self, end: i64) -> SynthTruth {
        let cut = self.cut_instances(end);
        for c in 0..self.occupied.len() {
            self.vacate(c, end);
        }
        for st in &self.sems {
            if !st.state.is_empty() {
                self.sem_states.push(TruthSemState {
                    semaphore: st.name.clone(),
                    state: st.state,
                    count: st.count,
                    start: st.since,
                    end,
                    start_action: st.since_action,
                    end_action: None,
                    open: true,
                });
            }
        }
        // Who blocked whom, in the order they got the semaphore.
        for (i, b) in self.blockers.iter().enumerate() {
            let mut by: Vec<&TruthLock> = b.iter().map(|&h| &self.locks[h]).collect();
            by.sort_by(|x, y| {
                (x.assigned_ts, &x.process, x.process_instance).cmp(&(
                    y.assigned_ts,
                    &y.process,
                    y.process_instance,
                ))
            });
            let by: Vec<(String, u64)> =
                by.iter().map(|h| (h.process.clone(), h.process_instance)).collect();
            self.locks[i].blocked_by = by;
        }
        // Time to the next activation of the same process; the last one uses the period
        // before it.
        let mut deadlines = std::collections::HashMap::new();
        for (p, pt) in self.procs.iter().enumerate() {
            let a = &pt.acts;
            for (k, act) in a.iter().enumerate() {
                let next = a.get(k + 1).map(|n| n.activate_ts - act.activate_ts);
                let prev = k
                    .checked_sub(1)
                    .and_then(|j| a.get(j))
                    .map(|b| act.activate_ts - b.activate_ts);
                if let Some(d) = next.or(prev) {
                    deadlines.insert((p, act.instance), d);
                }
            }
        }
        let index: std::collections::HashMap<&str, usize> =
            self.proc_names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
        for i in &mut self.done {
            if i.entity_type != "R" {
                i.deadline = index
                    .get(i.entity.as_str())
                    .and_then(|&p| deadlines.get(&(p, i.instance)).copied());
            }
        }
        let processes = self
            .procs
            .iter()
            .enumerate()
            .map(|(p, pt)| TruthProcess {
                name: self.proc_names[p].clone(),
                entity_type: self.proc_codes[p],
                core: self.core_names[self.cores_of[p]].clone(),
                period: self.periods[p],
                dropped_activations: pt.dropped,
            })
            .collect();
        let mut occupancy = self.occupancy;
        occupancy.sort_by(|a, b| (&a.core, a.start).cmp(&(&b.core, b.start)));
        SynthTruth {
            instances: self.done,
            processes,
            activations: self.procs.into_iter().flat_map(|pt| pt.acts).collect(),
            lock_requests: self.locks,
            preemptions: self.preemptions,
            occupancy,
            semaphore_states: self.sem_states,
            signal_writes: self.writes,
            waits: self.waits,
            cut,
        }
    }
}
