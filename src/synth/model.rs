//! The simulated system: processes, runnables, stimuli, semaphores, signals and cores,
//! and how a configuration builds them.
use super::*;
use std::collections::VecDeque;

/// Life-cycle state of the current instance of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Idle,
    Active,
    Running,
    Ready,
    Polling,
    /// Passive wait for an OS event ([`SynthConfig::passive_waits`]).
    Waiting,
    /// Preempted while polling ([`SynthConfig::parking`]).
    Parking,
    /// Passive wait for a slot of the counting semaphore ([`SynthConfig::counting_slots`]).
    Queued,
}

/// Where the current instance is in its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Runnable `ridx` not started yet.
    Between,
    /// Runnable running, before its critical section (or all of it).
    Pre,
    /// Active wait for a semaphore.
    Polling,
    /// Holding a semaphore.
    Locked,
    /// Runnable running, after its critical section.
    Post,
    /// ISR body.
    Body,
}

/// A task or an ISR, with the state of the instance it is working on.
pub(super) struct Proc {
    pub(super) name: Vec<u8>,
    pub(super) code: &'static [u8],
    pub(super) isr: bool,
    /// The core it runs on, or last ran on; a bound process never leaves its own.
    pub(super) core: usize,
    /// May run on any core ([`SynthConfig::migrating_tasks`]).
    pub(super) global: bool,
    /// The OS event it waits for once per instance ([`SynthConfig::passive_waits`]), and
    /// whether the current instance did.
    pub(super) waits: Option<usize>,
    pub(super) waited: bool,
    pub(super) period: i64,
    pub(super) runnables: Vec<usize>,
    pub(super) isr_exec: i64,
    pub(super) state: State,
    pub(super) next_inst: u64,
    pub(super) inst: u64,
    pub(super) queued: u32,
    pub(super) ridx: usize,
    pub(super) rinst: u64,
    pub(super) phase: Phase,
    pub(super) remaining: i64,
    pub(super) seg_end: Option<i64>,
    pub(super) hold: i64,
    pub(super) post: i64,
}

impl Proc {
    pub(super) fn new(name: String, isr: bool, core: usize, period: i64) -> Self {
        Proc {
            name: name.into_bytes(),
            code: if isr { b"I" } else { b"T" },
            isr,
            core,
            global: false,
            waits: None,
            waited: false,
            period,
            runnables: Vec::new(),
            isr_exec: 0,
            state: State::Idle,
            next_inst: 0,
            inst: 0,
            queued: 0,
            ridx: 0,
            rinst: 0,
            phase: Phase::Between,
            remaining: 0,
            seg_end: None,
            hold: 0,
            post: 0,
        }
    }
}

pub(super) struct Runnable {
    pub(super) name: Vec<u8>,
    pub(super) exec: i64,
    /// Semaphore taken in the middle of the runnable, and for how long.
    pub(super) lock: Option<(usize, i64)>,
    pub(super) read: Option<usize>,
    pub(super) write: Option<usize>,
    pub(super) next_inst: u64,
}

pub(super) struct Stim {
    pub(super) name: Vec<u8>,
    /// 0 for the sporadic stimulus of an ISR.
    pub(super) period: i64,
    pub(super) procs: Vec<usize>,
    pub(super) next_n: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SemState {
    Free,
    /// Some but not all slots taken (a counting semaphore).
    Used,
    Full,
    Overfull,
}

pub(super) struct Sem {
    pub(super) name: Vec<u8>,
    pub(super) state: SemState,
    pub(super) waiters: VecDeque<usize>,
    /// Slots: 1 for the spinlocks, more for the counting semaphore, whose waiters are
    /// queued (a passive wait) rather than polling, and whose holders may be preempted.
    pub(super) slots: u32,
    /// Slots taken.
    pub(super) taken: u32,
    /// Its holders may be preempted and its waiters are queued (a passive wait): the
    /// counting semaphore, and every semaphore with [`SynthConfig::preemptible_locks`].
    pub(super) preemptible: bool,
}

impl Sem {
    pub(super) fn counting(&self) -> bool {
        self.slots > 1
    }
}

/// An OS event one task waits for and one process sets when it terminates.
pub(super) struct Event {
    pub(super) name: Vec<u8>,
    pub(super) waiter: usize,
    pub(super) setter: usize,
    /// Longest time between two activations of the setter: the waiter only waits when the
    /// setter is sure to come again within the run.
    pub(super) gap: i64,
    /// Set and not cleared since ([`SynthConfig::clear_events`]).
    pub(super) set: bool,
}

pub(super) struct Signal {
    pub(super) name: Vec<u8>,
    pub(super) value: i64,
}

pub(super) struct Core {
    pub(super) name: Vec<u8>,
    /// Processes bound to the core, highest priority first.
    pub(super) order: Vec<usize>,
    pub(super) running: Option<usize>,
    /// Bumped when a scheduled segment end becomes void (preemption).
    pub(super) token: u64,
    pub(super) dirty: bool,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EvKind {
    Stim(usize),
    SegEnd { core: usize, token: u64 },
}

/// `seq` makes simultaneous events come out in the order they were scheduled.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Ev {
    pub(super) t: i64,
    pub(super) seq: u64,
    pub(super) kind: EvKind,
}

/// The static system: processes, runnables, stimuli, semaphores, signals, cores.
pub(super) struct Model {
    pub(super) procs: Vec<Proc>,
    pub(super) runs: Vec<Runnable>,
    pub(super) stims: Vec<Stim>,
    pub(super) sems: Vec<Sem>,
    pub(super) sigs: Vec<Signal>,
    pub(super) cores: Vec<Core>,
    pub(super) events: Vec<Event>,
    /// Semaphores are held 10 times as long ([`SynthConfig::parking`]).
    pub(super) long_holds: bool,
}

/// Index of the counting semaphore `SEM_C` among the semaphores, when there is one.
pub(super) const SEM_C: usize = SEM_NAMES.len();

pub(super) fn build_model(cfg: &SynthConfig, rng: &mut Rng) -> Model {
    let ncores = cfg.cores as usize;
    let nsigs = 4 + cfg.tasks as usize / 2;
    let mut m = Model {
        procs: Vec::new(),
        runs: Vec::new(),
        stims: Vec::new(),
        sems: SEM_NAMES
            .iter()
            .map(|n| Sem {
                name: n.as_bytes().to_vec(),
                state: SemState::Free,
                waiters: VecDeque::new(),
                slots: 1,
                taken: 0,
                preemptible: false,
            })
            .collect(),
        sigs: (0..nsigs)
            .map(|i| Signal { name: format!("SIG_{i}").into_bytes(), value: 0 })
            .collect(),
        cores: Vec::new(),
        events: Vec::new(),
        long_holds: cfg.parking,
    };
    build_tasks(&mut m, cfg, rng);
    build_isrs(&mut m, cfg, rng);
    if cfg.migrating_tasks {
        for (k, p) in m.procs.iter_mut().filter(|p| !p.isr).enumerate() {
            p.global = k % 3 == 2;
        }
    }
    if cfg.passive_waits || cfg.clear_events {
        build_events(&mut m);
    }
    if cfg.counting_slots > 0 {
        build_counting(&mut m, cfg.counting_slots, rng);
    }
    for s in &mut m.sems {
        s.preemptible = s.counting() || cfg.preemptible_locks;
    }
    build_cores(&mut m, ncores);
    m
}

/// The counting semaphore `SEM_C` with `slots` slots, taken in the first runnable of every
/// other task (model index 1, 3, 5, ...: spread over the cores) for 50..300 µs (at most half
/// the runnable); a spinlock that runnable took before is replaced.
pub(super) fn build_counting(m: &mut Model, slots: u32, rng: &mut Rng) {
    m.sems.push(Sem {
        name: b"SEM_C".to_vec(),
        state: SemState::Free,
        waiters: VecDeque::new(),
        slots: slots.max(1),
        taken: 0,
        preemptible: false,
    });
    let tasks: Vec<usize> = (0..m.procs.len()).filter(|&p| !m.procs[p].isr).collect();
    for &p in tasks.iter().skip(1).step_by(2) {
        let Some(&r) = m.procs[p].runnables.first() else { continue };
        let hold = rng.range(COUNTING_HOLD_NS).min(m.runs[r].exec * 3 / 4).max(1);
        m.runs[r].lock = Some((SEM_C, hold));
    }
}

/// Tasks, their runnables and one stimulus per period in use.
pub(super) fn build_tasks(m: &mut Model, cfg: &SynthConfig, rng: &mut Rng) {
    let ncores = cfg.cores as usize;
    let n = cfg.tasks as usize;
    let periods: Vec<i64> =
        (0..n).map(|_| PERIODS_MS[rng.below(PERIODS_MS.len() as u64) as usize] * MS).collect();
    let weights: Vec<i64> = (0..n).map(|_| 1 + rng.below(4) as i64).collect();
    // Each core's load is shared by weight, so no core is overloaded.
    let mut core_weight = vec![0i64; ncores];
    for k in 0..n {
        core_weight[k % ncores] += weights[k];
    }
    for k in 0..n {
        let core = k % ncores;
        let budget = periods[k] * CORE_LOAD_PERMILLE / 1000 * weights[k] / core_weight[core];
        let name = format!("TASK_{}MS_{k}", periods[k] / MS);
        let mut p = Proc::new(name, false, core, periods[k]);
        p.runnables = build_runnables(m, &p.name, budget, rng);
        m.procs.push(p);
    }
    let mut used: Vec<i64> = periods.clone();
    used.sort_unstable();
    used.dedup();
    for period in used {
        let procs = (0..n).filter(|&k| periods[k] == period).collect();
        m.stims.push(Stim {
            name: format!("STI_{}MS", period / MS).into_bytes(),
            period,
            procs,
            next_n: 0,
        });
    }
}

/// 1..4 runnables sharing `budget`; maybe one of them takes a semaphore.
pub(super) fn build_runnables(
    m: &mut Model,
    task: &[u8],
    budget: i64,
    rng: &mut Rng,
) -> Vec<usize> {
    let count = 1 + rng.below(4) as usize;
    let weights: Vec<i64> = (0..count).map(|_| 1 + rng.below(4) as i64).collect();
    let total: i64 = weights.iter().sum();
    let locking = if rng.below(5) < 2 {
        Some((rng.below(count as u64) as usize, rng.below(2) as usize))
    } else {
        None
    };
    let nsigs = m.sigs.len() as u64;
    let mut ids = Vec::with_capacity(count);
    for (j, w) in weights.iter().enumerate() {
        let exec = (budget * w / total).max(MIN_RUNNABLE_NS);
        let hold_factor = if m.long_holds { 40 } else { 1 };
        let lock = match locking {
            Some((lj, sem)) if lj == j => {
                Some((sem, (rng.range(HOLD_NS) * hold_factor).min(exec / 2)))
            }
            _ => None,
        };
        let read = (rng.below(2) == 0).then(|| rng.below(nsigs) as usize);
        let write = (rng.below(4) != 0).then(|| rng.below(nsigs) as usize);
        let mut name = b"R_".to_vec();
        name.extend_from_slice(task);
        name.extend_from_slice(format!("_{j}").as_bytes());
        ids.push(m.runs.len());
        m.runs.push(Runnable { name, exec, lock, read, write, next_inst: 0 });
    }
    ids
}

/// ISRs, each with its own sporadic stimulus.
pub(super) fn build_isrs(m: &mut Model, cfg: &SynthConfig, rng: &mut Rng) {
    for i in 0..cfg.isrs as usize {
        let name = ISR_NAMES.get(i).map_or_else(|| format!("ISR_{i}"), ToString::to_string);
        let stim_name = format!("STI_{name}").into_bytes();
        let core = if cfg.nested_isrs { i / 2 } else { i } % cfg.cores as usize;
        let mut p = Proc::new(name, true, core, 0);
        p.isr_exec = rng.range(ISR_EXEC_NS);
        m.stims.push(Stim { name: stim_name, period: 0, procs: vec![m.procs.len()], next_n: 0 });
        m.procs.push(p);
    }
}

pub(super) fn build_cores(m: &mut Model, ncores: usize) {
    for c in 0..ncores {
        let mut order: Vec<usize> =
            (0..m.procs.len()).filter(|&p| m.procs[p].core == c || m.procs[p].global).collect();
        // ISRs first, then rate monotonic; the index breaks ties.
        order.sort_by_key(|&p| (!m.procs[p].isr, m.procs[p].period, p));
        m.cores.push(Core {
            name: format!("Core_{c}").into_bytes(),
            order,
            running: None,
            token: 0,
            dirty: false,
        });
    }
}

/// Waiters: every other task with two or more runnables and a period of at least 10 ms.
/// Their setters alternate between an ISR (when there is one) and the task with the
/// shortest period, so that a wait lasts at most about a millisecond.
pub(super) fn build_events(m: &mut Model) {
    let isrs: Vec<usize> = (0..m.procs.len()).filter(|&p| m.procs[p].isr).collect();
    let eligible: Vec<usize> = (0..m.procs.len())
        .filter(|&p| !m.procs[p].isr && m.procs[p].runnables.len() >= 2)
        .filter(|&p| m.procs[p].period >= 10 * MS)
        .collect();
    for (j, &w) in eligible.iter().step_by(2).enumerate() {
        let fastest = (0..m.procs.len())
            .filter(|&p| !m.procs[p].isr && p != w)
            .min_by_key(|&p| (m.procs[p].period, p));
        let setter = match isrs.get(j / 2 % isrs.len().max(1)) {
            Some(&i) if j % 2 == 0 => Some(i),
            _ => fastest,
        };
        let Some(setter) = setter else { continue };
        m.procs[w].waits = Some(m.events.len());
        let mut name = b"EV_".to_vec();
        name.extend_from_slice(&m.procs[w].name);
        let gap = if m.procs[setter].isr { ISR_GAP_NS.1 } else { m.procs[setter].period };
        m.events.push(Event { name, waiter: w, setter, gap, set: false });
    }
}
