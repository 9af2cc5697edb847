//! The ground truth a simulated run hands back ([`SynthTruth`]): what each instance did,
//! its activations, lock requests, preemptions, core occupancy, semaphore states and signal
//! writes, in ns. The tests compare tracedb's tables with these, field by field.

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
