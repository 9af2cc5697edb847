//! Deterministic generator of synthetic, semantically valid BTF traces.
//!
//! The generator simulates a small fixed-priority preemptive multi-core RTOS
//! and writes what it does as a BTF 2.1 text trace (time scale ns). It exists
//! for two users: the ingest benchmark, which needs files of hundreds of MB
//! quickly, and tests, which need traces whose facts are known.
//!
//! # Model
//!
//! * `cores` cores `Core_0`, `Core_1`, ...; every process is bound to one core.
//! * `tasks` periodic tasks `TASK_<period>MS_<k>` (period among 1, 2, 5, 10,
//!   20, 50 and 100 ms), spread round robin over the cores, with rate-monotonic
//!   priorities (shorter period first, then lower `k`). Each task runs 1 to 4
//!   runnables `R_<task>_<j>` in order; execution times are drawn so that each
//!   core is about 55 % busy with tasks, and vary by up to 25 % per instance.
//! * One stimulus `STI_<period>MS` per period in use triggers at every
//!   multiple of the period (from time 0) and activates all tasks of that
//!   period. A task activated while its previous instance has not finished
//!   keeps one pending activation; a further one is dropped (no line).
//! * `isrs` interrupt service routines (`ISR_CAN`, `ISR_TIMER`, `ISR_ADC`,
//!   `ISR_SPI`, then `ISR_<i>`), type `I`, each triggered sporadically by its
//!   own stimulus `STI_<isr>` every 150..1000 µs and running 3..12 µs. They
//!   outrank every task and are never preempted.
//! * Two spinlock semaphores `SEM_A` and `SEM_B`. About 40 % of the tasks have
//!   one runnable that takes one of them for a few µs in the middle of its
//!   work. The critical section and the active wait (polling) before it are
//!   not preemptible, interrupts included, as with AUTOSAR spinlocks; so a
//!   semaphore is only ever contended from another core.
//! * Signals `SIG_<n>`: a runnable may read one signal when it starts and
//!   write one just before it terminates.
//!
//! # Determinism
//!
//! Everything is derived from `seed` through a small xorshift generator, and
//! simultaneous events are handled in the order they were scheduled, so the
//! same configuration always produces the same bytes.
//!
//! # Lines written
//!
//! ```text
//! t,STI_10MS,0,STI,STI_10MS,n,trigger           stimulus n fires
//! t,STI_10MS,n,T,TASK_10MS_3,i,activate         task instance i activated
//! t,Core_1,0,T,TASK_10MS_3,i,start|preempt|resume|poll|run|terminate
//! t,TASK_10MS_3,i,R,R_TASK_10MS_3_0,r,start|suspend|resume|terminate
//! t,TASK_10MS_3,i,SEM,SEM_A,0,requestsemaphore|assigned|waiting|released
//! t,SEM_A,0,SEM,SEM_A,0,ready|lock|unlock|overfull|full,<count>
//! t,R_TASK_10MS_3_0,r,SIG,SIG_4,0,read|write,<value>
//! ```
//!
//! The semaphore follows `ready` (to free), free `lock` full, full `unlock`
//! free, full `overfull` overfull (a request while held), overfull `full` full
//! (the holder released and the last waiter got it). While more than one task
//! waits, a hand-over leaves it overfull and logs no semaphore line.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, BufWriter, Write};

const MS: i64 = 1_000_000;
const US: i64 = 1_000;
/// Task periods to draw from, in ms.
const PERIODS_MS: [i64; 7] = [1, 2, 5, 10, 20, 50, 100];
/// Share of each core that tasks are meant to use, in per mille.
const CORE_LOAD_PERMILLE: i64 = 550;
/// Shortest base execution time of a runnable, so that every phase lasts.
const MIN_RUNNABLE_NS: i64 = 4 * US;
/// Activations a busy process keeps besides the one it is working on.
const MAX_QUEUED: u32 = 1;
const ISR_NAMES: [&str; 4] = ["ISR_CAN", "ISR_TIMER", "ISR_ADC", "ISR_SPI"];
const ISR_GAP_NS: (i64, i64) = (150 * US, 1000 * US);
const ISR_EXEC_NS: (i64, i64) = (3 * US, 12 * US);
const SEM_NAMES: [&str; 2] = ["SEM_A", "SEM_B"];
const HOLD_NS: (i64, i64) = (2 * US, 10 * US);
const HEADER: &[u8] =
    b"#version 2.1.0\n#creator tracedb synth\n#creationDate 2026-01-01T00:00:00Z\n#timeScale ns\n";

/// What to simulate and when to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthConfig {
    /// Number of cores (at least 1).
    pub cores: u32,
    /// Number of periodic tasks.
    pub tasks: u32,
    /// Number of sporadic interrupt service routines.
    pub isrs: u32,
    /// Simulated time in ns: no stimulus fires at or after it, and the work
    /// already activated is run to its end. Ignored when `target_bytes` is set.
    pub duration_ns: i64,
    /// Seed of every pseudo-random choice.
    pub seed: u64,
    /// Stop as soon as this many bytes (header included) were written, between
    /// two lines, however long that takes in simulated time.
    pub target_bytes: Option<u64>,
}

impl Default for SynthConfig {
    /// 4 cores, 24 tasks, 2 ISRs, 1 s, seed 1, no byte target.
    fn default() -> Self {
        SynthConfig {
            cores: 4,
            tasks: 24,
            isrs: 2,
            duration_ns: 1_000 * MS,
            seed: 1,
            target_bytes: None,
        }
    }
}

/// What a call of [`write_btf`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// Data lines written (header lines excluded).
    pub lines: u64,
    /// Bytes written, header included.
    pub bytes: u64,
    /// Task and ISR `activate` lines.
    pub activations: u64,
    /// Task and ISR `terminate` lines (runnables excluded).
    pub terminations: u64,
    /// Task `preempt` lines.
    pub preemptions: u64,
    /// Time of the last data line, ns (0 when there is none).
    pub last_ts: i64,
}

/// Simulates the system described by `cfg` and writes its BTF trace to `out`.
///
/// The output is buffered here, so `out` may be a bare file.
///
/// # Errors
///
/// `InvalidInput` for a configuration without cores, else the first write
/// error of `out`.
pub fn write_btf<W: Write>(out: W, cfg: &SynthConfig) -> io::Result<SynthStats> {
    if cfg.cores == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "synth: cores must be at least 1"));
    }
    let out = Out::new(BufWriter::with_capacity(1 << 20, out), cfg.target_bytes);
    let mut sim = Sim::new(out, cfg);
    sim.run();
    sim.out.finish()
}

/// xorshift64* generator: tiny, fast and the same on every platform.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // splitmix64 spreads small seeds (1, 2, ...) over the whole state,
        // and xorshift must not start from zero.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 0..n (0 when n is 0); the modulo bias is irrelevant here.
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// lo..=hi.
    fn range(&mut self, (lo, hi): (i64, i64)) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as u64) as i64
    }

    /// `base` shortened by up to a quarter, so instances differ.
    fn jitter(&mut self, base: i64) -> i64 {
        (base - self.below((base / 4 + 1) as u64) as i64).max(1)
    }
}

/// Life-cycle state of the current instance of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Active,
    Running,
    Ready,
    Polling,
}

/// Where the current instance is in its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
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
struct Proc {
    name: Vec<u8>,
    code: &'static [u8],
    isr: bool,
    core: usize,
    period: i64,
    runnables: Vec<usize>,
    isr_exec: i64,
    state: State,
    next_inst: u64,
    inst: u64,
    queued: u32,
    ridx: usize,
    rinst: u64,
    phase: Phase,
    remaining: i64,
    seg_end: Option<i64>,
    hold: i64,
    post: i64,
}

impl Proc {
    fn new(name: String, isr: bool, core: usize, period: i64) -> Self {
        Proc {
            name: name.into_bytes(),
            code: if isr { b"I" } else { b"T" },
            isr,
            core,
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

struct Runnable {
    name: Vec<u8>,
    exec: i64,
    /// Semaphore taken in the middle of the runnable, and for how long.
    lock: Option<(usize, i64)>,
    read: Option<usize>,
    write: Option<usize>,
    next_inst: u64,
}

struct Stim {
    name: Vec<u8>,
    /// 0 for the sporadic stimulus of an ISR.
    period: i64,
    procs: Vec<usize>,
    next_n: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SemState {
    Free,
    Full,
    Overfull,
}

struct Sem {
    name: Vec<u8>,
    state: SemState,
    waiters: VecDeque<usize>,
}

struct Signal {
    name: Vec<u8>,
    value: i64,
}

struct Core {
    name: Vec<u8>,
    /// Processes bound to the core, highest priority first.
    order: Vec<usize>,
    running: Option<usize>,
    /// Bumped when a scheduled segment end becomes void (preemption).
    token: u64,
    dirty: bool,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EvKind {
    Stim(usize),
    SegEnd { core: usize, token: u64 },
}

/// `seq` makes simultaneous events come out in the order they were scheduled.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ev {
    t: i64,
    seq: u64,
    kind: EvKind,
}

/// Line formatter and writer. A write error is kept and ends the run, so the
/// simulation code need not thread `Result` through every line it writes.
struct Out<W: Write> {
    w: BufWriter<W>,
    line: Vec<u8>,
    limit: Option<u64>,
    done: bool,
    err: Option<io::Error>,
    stats: SynthStats,
}

impl<W: Write> Out<W> {
    fn new(w: BufWriter<W>, limit: Option<u64>) -> Self {
        Out {
            w,
            line: Vec::with_capacity(128),
            limit,
            done: false,
            err: None,
            stats: SynthStats::default(),
        }
    }

    fn header(&mut self) {
        if let Err(e) = self.w.write_all(HEADER) {
            self.fail(e);
            return;
        }
        self.stats.bytes += HEADER.len() as u64;
        self.check_limit();
    }

    /// Writes one line; false when nothing was written because the run ended.
    fn emit(
        &mut self,
        t: i64,
        src: (&[u8], u64),
        ty: &[u8],
        tgt: (&[u8], u64),
        act: &[u8],
        note: Option<i64>,
    ) -> bool {
        if self.done {
            return false;
        }
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
        if let Some(v) = note {
            l.push(b',');
            push_i64(l, v);
        }
        l.push(b'\n');
        self.commit(t)
    }

    fn commit(&mut self, t: i64) -> bool {
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

    fn check_limit(&mut self) {
        if self.limit.is_some_and(|lim| self.stats.bytes >= lim) {
            self.done = true;
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.err = Some(e);
        self.done = true;
    }

    fn finish(mut self) -> io::Result<SynthStats> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.w.flush()?;
        Ok(self.stats)
    }
}

fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
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

fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// The static system: processes, runnables, stimuli, semaphores, signals, cores.
struct Model {
    procs: Vec<Proc>,
    runs: Vec<Runnable>,
    stims: Vec<Stim>,
    sems: Vec<Sem>,
    sigs: Vec<Signal>,
    cores: Vec<Core>,
}

fn build_model(cfg: &SynthConfig, rng: &mut Rng) -> Model {
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
            })
            .collect(),
        sigs: (0..nsigs)
            .map(|i| Signal { name: format!("SIG_{i}").into_bytes(), value: 0 })
            .collect(),
        cores: Vec::new(),
    };
    build_tasks(&mut m, cfg, rng);
    build_isrs(&mut m, cfg, rng);
    build_cores(&mut m, ncores);
    m
}

/// Tasks, their runnables and one stimulus per period in use.
fn build_tasks(m: &mut Model, cfg: &SynthConfig, rng: &mut Rng) {
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
fn build_runnables(m: &mut Model, task: &[u8], budget: i64, rng: &mut Rng) -> Vec<usize> {
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
        let lock = match locking {
            Some((lj, sem)) if lj == j => Some((sem, rng.range(HOLD_NS).min(exec / 2))),
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
fn build_isrs(m: &mut Model, cfg: &SynthConfig, rng: &mut Rng) {
    for i in 0..cfg.isrs as usize {
        let name = ISR_NAMES.get(i).map_or_else(|| format!("ISR_{i}"), ToString::to_string);
        let stim_name = format!("STI_{name}").into_bytes();
        let mut p = Proc::new(name, true, i % cfg.cores as usize, 0);
        p.isr_exec = rng.range(ISR_EXEC_NS);
        m.stims.push(Stim { name: stim_name, period: 0, procs: vec![m.procs.len()], next_n: 0 });
        m.procs.push(p);
    }
}

fn build_cores(m: &mut Model, ncores: usize) {
    for c in 0..ncores {
        let mut order: Vec<usize> = (0..m.procs.len()).filter(|&p| m.procs[p].core == c).collect();
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

/// The discrete-event simulation. Events are handled in time order, and
/// every line is written while its event is handled, so the file is in time
/// order by construction.
struct Sim<W: Write> {
    out: Out<W>,
    rng: Rng,
    procs: Vec<Proc>,
    runs: Vec<Runnable>,
    stims: Vec<Stim>,
    sems: Vec<Sem>,
    sigs: Vec<Signal>,
    cores: Vec<Core>,
    heap: BinaryHeap<Reverse<Ev>>,
    seq: u64,
    duration: i64,
    endless: bool,
}

impl<W: Write> Sim<W> {
    fn new(out: Out<W>, cfg: &SynthConfig) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let m = build_model(cfg, &mut rng);
        Sim {
            out,
            rng,
            procs: m.procs,
            runs: m.runs,
            stims: m.stims,
            sems: m.sems,
            sigs: m.sigs,
            cores: m.cores,
            heap: BinaryHeap::new(),
            seq: 0,
            duration: cfg.duration_ns,
            endless: cfg.target_bytes.is_some(),
        }
    }

    fn push(&mut self, t: i64, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Reverse(Ev { t, seq: self.seq, kind }));
    }

    /// Schedules a stimulus unless the simulated time is over.
    fn push_stim(&mut self, t: i64, s: usize) {
        if self.endless || t < self.duration {
            self.push(t, EvKind::Stim(s));
        }
    }

    fn run(&mut self) {
        self.out.header();
        for s in 0..self.sems.len() {
            self.sem_self(0, s, b"ready", 0);
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
            for c in 0..self.cores.len() {
                if self.cores[c].dirty {
                    self.cores[c].dirty = false;
                    self.dispatch(c, t);
                }
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev.kind {
            EvKind::Stim(s) => self.on_stim(s, ev.t),
            EvKind::SegEnd { core, token } => self.on_seg_end(core, token, ev.t),
        }
    }

    fn on_stim(&mut self, s: usize, t: i64) {
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

    fn activate(&mut self, p: usize, t: i64, s: usize, n: u64) {
        let pr = &mut self.procs[p];
        match pr.state {
            State::Idle => {
                pr.inst = pr.next_inst;
                pr.state = State::Active;
            }
            _ if pr.queued < MAX_QUEUED => pr.queued += 1,
            // Overload: the activation is lost, as an OS would refuse it.
            _ => return,
        }
        let inst = pr.next_inst;
        pr.next_inst += 1;
        let sti = (&self.stims[s].name[..], n);
        if self.out.emit(t, sti, pr.code, (&pr.name, inst), b"activate", None) {
            self.out.stats.activations += 1;
        }
        self.cores[pr.core].dirty = true;
    }

    /// Puts the best ready process on core `c` and keeps it going.
    fn dispatch(&mut self, c: usize, t: i64) {
        if let Some(p) = self.cores[c].running {
            let pr = &self.procs[p];
            if pr.isr || matches!(pr.phase, Phase::Locked | Phase::Polling) {
                return;
            }
        }
        let best =
            self.cores[c].order.iter().copied().find(|&p| self.procs[p].state != State::Idle);
        match (self.cores[c].running, best) {
            (Some(p), Some(b)) if p != b => {
                self.preempt(p, t);
                self.switch_in(b, t);
            }
            (None, Some(b)) => self.switch_in(b, t),
            _ => {}
        }
        if let Some(p) = self.cores[c].running {
            if self.procs[p].seg_end.is_none() {
                self.advance(p, t);
            }
        }
    }

    fn preempt(&mut self, p: usize, t: i64) {
        let c = self.procs[p].core;
        if let Some(end) = self.procs[p].seg_end.take() {
            self.procs[p].remaining = end - t;
            self.cores[c].token += 1;
        }
        self.procs[p].state = State::Ready;
        self.cores[c].running = None;
        if self.proc_line(t, p, b"preempt") {
            self.out.stats.preemptions += 1;
        }
        if matches!(self.procs[p].phase, Phase::Pre | Phase::Post) {
            self.run_line(t, p, b"suspend");
        }
    }

    fn switch_in(&mut self, p: usize, t: i64) {
        self.cores[self.procs[p].core].running = Some(p);
        match self.procs[p].state {
            State::Active => {
                if self.procs[p].isr {
                    let exec = self.rng.jitter(self.procs[p].isr_exec);
                    let pr = &mut self.procs[p];
                    pr.phase = Phase::Body;
                    pr.remaining = exec;
                } else {
                    self.procs[p].phase = Phase::Between;
                    self.procs[p].ridx = 0;
                }
                self.proc_line(t, p, b"start");
            }
            State::Ready => {
                self.proc_line(t, p, b"resume");
                if matches!(self.procs[p].phase, Phase::Pre | Phase::Post) {
                    self.run_line(t, p, b"resume");
                }
            }
            _ => {}
        }
        self.procs[p].state = State::Running;
    }

    /// Continues the running process `p`, which has no segment under way.
    fn advance(&mut self, p: usize, t: i64) {
        match self.procs[p].phase {
            Phase::Between => self.start_runnable(p, t),
            Phase::Pre | Phase::Post | Phase::Body => self.run_phase(p, t),
            // Both wait for an event of their own (release, segment end).
            Phase::Polling | Phase::Locked => {}
        }
    }

    fn start_runnable(&mut self, p: usize, t: i64) {
        let r = self.procs[p].runnables[self.procs[p].ridx];
        self.procs[p].rinst = self.runs[r].next_inst;
        self.runs[r].next_inst += 1;
        self.run_line(t, p, b"start");
        if let Some(sig) = self.runs[r].read {
            self.sig_line(t, p, sig, b"read");
        }
        let exec = self.rng.jitter(self.runs[r].exec);
        let pr = &mut self.procs[p];
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
        self.run_phase(p, t);
    }

    fn run_phase(&mut self, p: usize, t: i64) {
        let c = self.procs[p].core;
        let end = t + self.procs[p].remaining;
        self.procs[p].seg_end = Some(end);
        let token = self.cores[c].token;
        self.push(end, EvKind::SegEnd { core: c, token });
    }

    /// The running process finished a phase: do what follows at once, except
    /// starting a runnable, which waits for the dispatcher so that a higher
    /// priority process activated at the same time gets the core first.
    fn on_seg_end(&mut self, c: usize, token: u64, t: i64) {
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
                self.cores[c].dirty = true;
            }
            Phase::Between | Phase::Polling => {}
        }
    }

    fn current_lock(&self, p: usize) -> Option<usize> {
        let pr = &self.procs[p];
        let r = *pr.runnables.get(pr.ridx)?;
        self.runs[r].lock.map(|(sem, _)| sem)
    }

    fn end_runnable(&mut self, p: usize, t: i64) {
        let r = self.procs[p].runnables[self.procs[p].ridx];
        if let Some(sig) = self.runs[r].write {
            let step = 1 + self.rng.below(7) as i64;
            self.sigs[sig].value = (self.sigs[sig].value + step) % 10_000;
            self.sig_line(t, p, sig, b"write");
        }
        self.run_line(t, p, b"terminate");
        let pr = &mut self.procs[p];
        pr.ridx += 1;
        pr.phase = Phase::Between;
        if pr.ridx >= pr.runnables.len() {
            self.terminate(p, t);
        } else {
            self.cores[pr.core].dirty = true;
        }
    }

    fn terminate(&mut self, p: usize, t: i64) {
        if self.proc_line(t, p, b"terminate") {
            self.out.stats.terminations += 1;
        }
        let pr = &mut self.procs[p];
        self.cores[pr.core].running = None;
        self.cores[pr.core].dirty = true;
        if pr.queued > 0 {
            // The pending activation carries the next instance number.
            pr.queued -= 1;
            pr.inst += 1;
            pr.state = State::Active;
        } else {
            pr.state = State::Idle;
        }
    }

    fn request(&mut self, p: usize, t: i64) {
        let Some(s) = self.current_lock(p) else {
            return;
        };
        self.sem_line(t, p, s, b"requestsemaphore");
        match self.sems[s].state {
            SemState::Free => {
                self.sems[s].state = SemState::Full;
                self.sem_self(t, s, b"lock", 1);
                self.sem_line(t, p, s, b"assigned");
                self.lock_granted(p, t);
            }
            state => {
                if state == SemState::Full {
                    self.sems[s].state = SemState::Overfull;
                    self.sem_self(t, s, b"overfull", 1);
                }
                self.sem_line(t, p, s, b"waiting");
                self.proc_line(t, p, b"poll");
                self.procs[p].state = State::Polling;
                self.procs[p].phase = Phase::Polling;
                self.sems[s].waiters.push_back(p);
            }
        }
    }

    fn release(&mut self, p: usize, t: i64) {
        let Some(s) = self.current_lock(p) else {
            return;
        };
        self.sem_line(t, p, s, b"released");
        match self.sems[s].waiters.pop_front() {
            None => {
                self.sems[s].state = SemState::Free;
                self.sem_self(t, s, b"unlock", 0);
            }
            Some(q) => {
                if self.sems[s].waiters.is_empty() {
                    self.sems[s].state = SemState::Full;
                    self.sem_self(t, s, b"full", 1);
                }
                self.proc_line(t, q, b"run");
                self.sem_line(t, q, s, b"assigned");
                self.procs[q].state = State::Running;
                self.lock_granted(q, t);
            }
        }
    }

    /// The critical section is timed here because the dispatcher leaves a
    /// process in a critical section alone.
    fn lock_granted(&mut self, p: usize, t: i64) {
        let pr = &mut self.procs[p];
        pr.phase = Phase::Locked;
        pr.remaining = pr.hold;
        self.run_phase(p, t);
    }

    /// `t,Core_k,0,T|I,<process>,<inst>,<act>`.
    fn proc_line(&mut self, t: i64, p: usize, act: &[u8]) -> bool {
        let pr = &self.procs[p];
        let core = (&self.cores[pr.core].name[..], 0);
        self.out.emit(t, core, pr.code, (&pr.name, pr.inst), act, None)
    }

    /// `t,<task>,<inst>,R,<runnable>,<rinst>,<act>`.
    fn run_line(&mut self, t: i64, p: usize, act: &[u8]) {
        let pr = &self.procs[p];
        let r = &self.runs[pr.runnables[pr.ridx]];
        self.out.emit(t, (&pr.name, pr.inst), b"R", (&r.name, pr.rinst), act, None);
    }

    /// `t,<task>,<inst>,SEM,<sem>,0,<act>`.
    fn sem_line(&mut self, t: i64, p: usize, s: usize, act: &[u8]) {
        let pr = &self.procs[p];
        let sem = (&self.sems[s].name[..], 0);
        self.out.emit(t, (&pr.name, pr.inst), b"SEM", sem, act, None);
    }

    /// `t,<sem>,0,SEM,<sem>,0,<act>,<count>`.
    fn sem_self(&mut self, t: i64, s: usize, act: &[u8], count: i64) {
        let sem = (&self.sems[s].name[..], 0);
        self.out.emit(t, sem, b"SEM", sem, act, Some(count));
    }

    /// `t,<runnable>,<rinst>,SIG,<signal>,0,<act>,<value>`.
    fn sig_line(&mut self, t: i64, p: usize, sig: usize, act: &[u8]) {
        let pr = &self.procs[p];
        let r = &self.runs[pr.runnables[pr.ridx]];
        let sg = &self.sigs[sig];
        self.out.emit(t, (&r.name, pr.rinst), b"SIG", (&sg.name, 0), act, Some(sg.value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use std::time::Instant;

    fn gen(cfg: &SynthConfig) -> (Vec<u8>, SynthStats) {
        let mut buf = Vec::new();
        let stats = write_btf(&mut buf, cfg).unwrap();
        (buf, stats)
    }

    fn short() -> SynthConfig {
        SynthConfig { duration_ns: 200 * MS, ..SynthConfig::default() }
    }

    #[derive(Debug, Clone, Copy)]
    struct Line<'a> {
        ts: i64,
        src: &'a str,
        si: u64,
        ty: &'a str,
        tgt: &'a str,
        ti: u64,
        act: &'a str,
        note: Option<&'a str>,
    }

    fn parse(text: &str) -> Vec<Line<'_>> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let f: Vec<&str> = l.splitn(8, ',').collect();
                assert!(f.len() >= 7, "short line: {l}");
                Line {
                    ts: f[0].parse().unwrap(),
                    src: f[1],
                    si: f[2].parse().unwrap(),
                    ty: f[3],
                    tgt: f[4],
                    ti: f[5].parse().unwrap(),
                    act: f[6],
                    note: f.get(7).copied(),
                }
            })
            .collect()
    }

    fn is_proc(l: &Line) -> bool {
        l.ty == "T" || l.ty == "I"
    }

    #[test]
    fn same_seed_same_bytes() {
        let (a, sa) = gen(&short());
        let (b, sb) = gen(&short());
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        let (c, _) = gen(&SynthConfig { seed: 2, ..short() });
        assert_ne!(a, c);
    }

    #[test]
    fn header_is_written() {
        let (buf, _) = gen(&short());
        assert!(buf.starts_with(HEADER));
        let text = String::from_utf8(buf).unwrap();
        let first = parse(&text)[0];
        assert_eq!((first.ts, first.act, first.note), (0, "ready", Some("0")));
    }

    #[test]
    fn time_never_goes_backwards() {
        for seed in 1..4 {
            let (buf, _) = gen(&SynthConfig { seed, ..short() });
            let text = String::from_utf8(buf).unwrap();
            let lines = parse(&text);
            for w in lines.windows(2) {
                assert!(w[1].ts >= w[0].ts, "{:?} after {:?}", w[1], w[0]);
            }
        }
    }

    #[test]
    fn stats_match_the_text() {
        let (buf, st) = gen(&short());
        let text = String::from_utf8(buf.clone()).unwrap();
        let lines = parse(&text);
        let count = |act: &str| lines.iter().filter(|l| is_proc(l) && l.act == act).count() as u64;
        assert_eq!(st.lines, lines.len() as u64);
        assert_eq!(st.bytes, buf.len() as u64);
        assert_eq!(st.activations, count("activate"));
        assert_eq!(st.terminations, count("terminate"));
        assert_eq!(st.preemptions, count("preempt"));
        assert_eq!(st.last_ts, lines.last().unwrap().ts);
    }

    #[test]
    fn the_model_exercises_every_feature() {
        let (buf, st) = gen(&short());
        let text = String::from_utf8(buf).unwrap();
        let lines = parse(&text);
        let has = |ty: &str, act: &str| lines.iter().any(|l| l.ty == ty && l.act == act);
        assert!(st.preemptions > 0);
        for (ty, act) in [
            ("T", "poll"),
            ("T", "run"),
            ("I", "start"),
            ("R", "suspend"),
            ("R", "resume"),
            ("SEM", "waiting"),
            ("SEM", "overfull"),
            ("SEM", "full"),
            ("SEM", "unlock"),
            ("SIG", "read"),
            ("SIG", "write"),
            ("STI", "trigger"),
        ] {
            assert!(has(ty, act), "no {ty} {act} line");
        }
        // The first activation of every task comes from its stimulus at 0.
        let first = lines.iter().find(|l| l.ty == "T").unwrap();
        assert!(first.src.starts_with("STI_") && first.ts == 0);
    }

    /// Replays the process, runnable and semaphore state machines.
    #[derive(Default)]
    struct Replay<'a> {
        proc_state: HashMap<(&'a str, u64), &'a str>,
        core_of: HashMap<&'a str, &'a str>,
        on_core: HashMap<&'a str, (&'a str, u64)>,
        busy: HashSet<&'a str>,
        run_state: HashMap<(&'a str, u64), &'a str>,
        open_runs: HashMap<(&'a str, u64), u32>,
        expect: Option<(&'a str, u64, &'a str)>,
        sem_state: HashMap<&'a str, &'a str>,
        holder: HashMap<&'a str, (&'a str, u64)>,
    }

    impl<'a> Replay<'a> {
        fn line(&mut self, l: &Line<'a>) {
            if let Some((src, si, act)) = self.expect.take() {
                assert!(
                    l.ty == "R" && (l.src, l.si, l.act) == (src, si, act),
                    "expected runnable {act}: {l:?}"
                );
            }
            match l.ty {
                "T" | "I" => self.process(l),
                "R" => self.runnable(l),
                "SEM" if l.src == l.tgt => self.semaphore(l),
                "SEM" => self.lock_request(l),
                _ => {}
            }
        }

        fn step(&mut self, key: (&'a str, u64), from: &str, to: &'a str, l: &Line) {
            let now = self.proc_state.get(&key).copied().unwrap_or("none");
            assert_eq!(now, from, "bad transition: {l:?}");
            self.proc_state.insert(key, to);
        }

        fn process(&mut self, l: &Line<'a>) {
            let key = (l.tgt, l.ti);
            if l.act == "activate" {
                assert!(l.src.starts_with("STI_"), "{l:?}");
                return self.step(key, "none", "active", l);
            }
            assert!(l.src.starts_with("Core_"), "{l:?}");
            let core = *self.core_of.entry(l.tgt).or_insert(l.src);
            assert_eq!(core, l.src, "process changed core: {l:?}");
            let occupant = self.on_core.get(l.src).copied();
            match l.act {
                "start" | "resume" => {
                    assert_eq!(occupant, None, "core busy: {l:?}");
                    self.on_core.insert(l.src, key);
                    if l.act == "start" {
                        assert!(self.busy.insert(l.tgt), "started twice: {l:?}");
                        self.step(key, "active", "running", l);
                    } else {
                        self.step(key, "ready", "running", l);
                        self.expect_runnable(key, "resume");
                    }
                }
                "preempt" | "terminate" => {
                    assert_eq!(occupant, Some(key), "not on core: {l:?}");
                    self.on_core.remove(l.src);
                    if l.act == "preempt" {
                        self.step(key, "running", "ready", l);
                        self.expect_runnable(key, "suspend");
                    } else {
                        assert_eq!(self.open_runs.get(&key).copied().unwrap_or(0), 0, "{l:?}");
                        self.busy.remove(l.tgt);
                        self.step(key, "running", "terminated", l);
                    }
                }
                "poll" | "run" => {
                    assert_eq!(occupant, Some(key), "not on core: {l:?}");
                    let (from, to) = if l.act == "poll" {
                        ("running", "polling")
                    } else {
                        ("polling", "running")
                    };
                    self.step(key, from, to, l);
                }
                other => panic!("unexpected process action {other}"),
            }
        }

        /// A preempted or resumed task's open runnable must follow at once.
        fn expect_runnable(&mut self, key: (&'a str, u64), act: &'a str) {
            if self.open_runs.get(&key).copied().unwrap_or(0) > 0 {
                self.expect = Some((key.0, key.1, act));
            }
        }

        fn runnable(&mut self, l: &Line<'a>) {
            let key = (l.tgt, l.ti);
            let parent = self.proc_state.get(&(l.src, l.si)).copied();
            let now = self.run_state.get(&key).copied().unwrap_or("none");
            let (from, to, parent_ok) = match l.act {
                "start" => ("none", "running", "running"),
                "suspend" => ("running", "suspended", "ready"),
                "resume" => ("suspended", "running", "running"),
                "terminate" => ("running", "terminated", "running"),
                other => panic!("unexpected runnable action {other}"),
            };
            assert_eq!((now, parent), (from, Some(parent_ok)), "bad runnable transition: {l:?}");
            self.run_state.insert(key, to);
            let open = self.open_runs.entry((l.src, l.si)).or_insert(0);
            match l.act {
                "start" => *open += 1,
                "terminate" => *open -= 1,
                _ => {}
            }
            assert!(*open <= 1, "two runnables of one task at once: {l:?}");
        }

        fn semaphore(&mut self, l: &Line<'a>) {
            let now = self.sem_state.get(l.tgt).copied().unwrap_or("none");
            let (from, to, note) = match l.act {
                "ready" => ("none", "free", "0"),
                "lock" => ("free", "full", "1"),
                "unlock" => ("full", "free", "0"),
                "overfull" => ("full", "overfull", "1"),
                "full" => ("overfull", "full", "1"),
                other => panic!("unexpected semaphore action {other}"),
            };
            assert_eq!((now, l.note), (from, Some(note)), "bad semaphore transition: {l:?}");
            if l.act == "unlock" {
                assert!(!self.holder.contains_key(l.tgt), "unlocked while held: {l:?}");
            }
            self.sem_state.insert(l.tgt, to);
        }

        fn lock_request(&mut self, l: &Line<'a>) {
            let who = (l.src, l.si);
            let state = self.sem_state.get(l.tgt).copied();
            match l.act {
                "requestsemaphore" => {
                    assert_eq!(self.proc_state.get(&who), Some(&"running"), "{l:?}")
                }
                "waiting" => assert!(state == Some("overfull"), "{l:?}"),
                "assigned" => {
                    assert!(matches!(state, Some("full" | "overfull")), "{l:?}");
                    assert!(self.holder.insert(l.tgt, who).is_none(), "two holders: {l:?}");
                }
                "released" => assert_eq!(self.holder.remove(l.tgt), Some(who), "{l:?}"),
                other => panic!("unexpected lock action {other}"),
            }
        }
    }

    fn replay(cfg: &SynthConfig) -> String {
        let (buf, _) = gen(cfg);
        let text = String::from_utf8(buf).unwrap();
        let mut r = Replay::default();
        for l in parse(&text) {
            r.line(&l);
        }
        text
    }

    #[test]
    fn state_machines_are_consistent() {
        for (cores, tasks, isrs, seed) in
            [(4, 24, 2, 1), (2, 10, 3, 7), (1, 6, 1, 3), (8, 40, 6, 9)]
        {
            let cfg = SynthConfig { cores, tasks, isrs, seed, ..short() };
            replay(&cfg);
        }
    }

    #[test]
    fn every_activated_instance_terminates() {
        let text = replay(&short());
        let lines = parse(&text);
        let set = |ty: &[&str], act: &str| -> HashSet<(&str, u64)> {
            lines
                .iter()
                .filter(|l| ty.contains(&l.ty) && l.act == act)
                .map(|l| (l.tgt, l.ti))
                .collect()
        };
        let activated = set(&["T", "I"], "activate");
        assert!(!activated.is_empty());
        assert_eq!(activated, set(&["T", "I"], "terminate"));
        assert_eq!(set(&["R"], "start"), set(&["R"], "terminate"));
        // Nothing is triggered at or after the end of the simulated time.
        let last = lines.iter().filter(|l| l.act == "trigger").map(|l| l.ts).max();
        assert!(last.unwrap() < 200 * MS);
    }

    #[test]
    fn instances_count_from_zero_per_entity() {
        let (buf, _) = gen(&short());
        let text = String::from_utf8(buf).unwrap();
        let mut next: HashMap<&str, u64> = HashMap::new();
        for l in parse(&text) {
            if (is_proc(&l) && l.act == "activate")
                || (l.ty == "R" && l.act == "start")
                || l.act == "trigger"
            {
                let n = next.entry(l.tgt).or_insert(0);
                assert_eq!(l.ti, *n, "{l:?}");
                *n += 1;
            }
        }
    }

    #[test]
    fn target_bytes_is_honoured() {
        for target in [1u64, 50_000, 3 << 20] {
            // 1 ms of simulated time is far too short: the target must win.
            let cfg = SynthConfig {
                duration_ns: MS,
                target_bytes: Some(target),
                ..SynthConfig::default()
            };
            let (buf, st) = gen(&cfg);
            assert_eq!(st.bytes, buf.len() as u64);
            assert!(st.bytes >= target);
            if target <= HEADER.len() as u64 {
                // The header is written whole, and nothing after it.
                assert_eq!((st.lines, st.bytes), (0, HEADER.len() as u64));
                continue;
            }
            let before_last =
                buf[..buf.len() - 1].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            assert!((before_last as u64) < target, "went on past the target");
            if target > 1 << 20 {
                assert!(st.last_ts > MS, "stopped at the duration");
                replay(&cfg);
            }
        }
    }

    #[test]
    fn zero_cores_is_an_error() {
        let cfg = SynthConfig { cores: 0, ..short() };
        let err = write_btf(Vec::new(), &cfg).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn an_empty_system_still_ends() {
        let cfg = SynthConfig { tasks: 0, isrs: 0, target_bytes: Some(1 << 20), ..short() };
        let (_, st) = gen(&cfg);
        assert_eq!(st.lines, 2); // the semaphores' ready lines
    }

    /// Not an assertion: prints the throughput of a 200 MB run.
    /// `rustc -O --test synth.rs -o t && ./t --ignored --nocapture throughput`
    #[test]
    #[ignore = "measurement, run by hand with rustc -O"]
    fn throughput() {
        let target = 200u64 << 20;
        let cfg = SynthConfig { target_bytes: Some(target), ..SynthConfig::default() };
        let start = Instant::now();
        let st = write_btf(io::sink(), &cfg).unwrap();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "sink: {} MB, {} lines in {secs:.2} s = {:.0} MB/s",
            st.bytes >> 20,
            st.lines,
            st.bytes as f64 / 1_048_576.0 / secs
        );
        let path = std::env::temp_dir().join("tracedb_synth_throughput.btf");
        let start = Instant::now();
        let st = write_btf(std::fs::File::create(&path).unwrap(), &cfg).unwrap();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "file: {} MB in {secs:.2} s = {:.0} MB/s, simulated {} ms",
            st.bytes >> 20,
            st.bytes as f64 / 1_048_576.0 / secs,
            st.last_ts / MS
        );
        std::fs::remove_file(&path).unwrap();
    }
}
