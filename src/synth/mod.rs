//! Deterministic generator of synthetic, semantically valid BTF traces.
//!
//! The generator simulates a small fixed-priority preemptive multi-core RTOS
//! and writes what it does as a BTF 2.1 text trace (time scale ns). It exists
//! for two users: the ingest benchmark, which needs files of hundreds of MB
//! quickly, and tests, which need traces whose facts are known: [`write_btf_with_truth`]
//! also returns what every instance did, for comparison with what a reader derives.
//!
//! # Model
//!
//! * `cores` cores `Core_0`, `Core_1`, ...; every process is bound to one core, except
//!   with `migrating_tasks` every third task, which may run on any core.
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
//!   outrank every task and are never preempted, except with `nested_isrs`, where they
//!   share cores in pairs and the first of a pair preempts the second.
//! * Two spinlock semaphores `SEM_A` and `SEM_B`. About 40 % of the tasks have
//!   one runnable that takes one of them for a few µs in the middle of its
//!   work. The critical section and the active wait (polling) before it are
//!   not preemptible, interrupts included, as with AUTOSAR spinlocks; so a
//!   semaphore is only ever contended from another core.
//! * Signals `SIG_<n>`: a runnable may read one signal when it starts and
//!   write one just before it terminates.
//! * Passive waits, only when asked (`passive_waits`): some tasks wait once per instance,
//!   between their first two runnables, for an OS event `EV_<task>` that an ISR or the
//!   fastest task sets when it next terminates (only when that comes within the run, so
//!   every wait ends).
//! * Parking, only when asked (`parking`): a polling task may be preempted (it parks),
//!   and is made ready when handed the semaphore while parked.
//! * A counting semaphore, only when asked (`counting_slots`): `SEM_C` with n slots, taken
//!   by every other task in its first runnable and held preemptibly; a task that finds
//!   every slot taken is queued (a passive wait) until a release hands it one.
//! * Mutexes, only when asked (`preemptible_locks`): every one-slot semaphore is held
//!   preemptibly, and a task that finds it held is queued (a passive wait) until the
//!   release hands it over; so a waiter waits while the holder is preempted, whatever runs
//!   on the holder's core meanwhile (a priority inversion).
//! * Cleared events, only when asked (`clear_events`): the setter sets the event whenever
//!   the waiter is active, the waiter clears it when it starts and after its wait, and a wait
//!   for an event that is set returns at once.
//! * Overload, only when asked (`overrun_every`): every n-th instance of each task runs
//!   its runnables 4 times as long, so tasks miss deadlines, and activations queue and
//!   are dropped.
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
//! t,Core_1,0,T,TASK_10MS_3,i,start|preempt|resume|poll|run|wait|release|terminate
//! t,Core_1,0,T,TASK_10MS_3,i,park|poll_parking|release_parking
//! t,TASK_50MS_7,i,EVENT,EV_TASK_50MS_7,0,wait_event|clear_event
//! t,ISR_CAN,n,EVENT,EV_TASK_50MS_7,0,set_event,TASK_50MS_7
//! t,TASK_10MS_3,i,R,R_TASK_10MS_3_0,r,start|suspend|resume|terminate
//! t,TASK_10MS_3,i,SEM,SEM_A,0,requestsemaphore|assigned|waiting|queued|released
//! t,SEM_A,0,SEM,SEM_A,0,ready|lock|unlock|overfull|full,<count>
//! t,SEM_C,0,SEM,SEM_C,0,ready|used|lock_used|unlock_full|free|overfull|full,<count>
//! t,R_TASK_10MS_3_0,r,SIG,SIG_4,0,read|write,<value>
//! ```
//!
//! The semaphore follows `ready` (to free), free `lock` full, full `unlock`
//! free, full `overfull` overfull (a request while held), overfull `full` full
//! (the holder released and the last waiter got it). While more than one task
//! waits, a hand-over leaves it overfull and logs no semaphore line. The counting semaphore's
//! count is its slots taken: `used` free → used and used → used (up or down by one),
//! `lock_used` used → full, `unlock_full` full → used, `free` used → free, and `overfull` for
//! every request that finds it full (the count staying at n).

mod model;
mod sim;
#[cfg(test)]
mod tests;
mod truth;

use sim::{Out, Sim};
use std::io::{self, BufWriter, Write};
pub use truth::{
    SynthTruth, TruthActivation, TruthCutInstance, TruthInstance, TruthLock, TruthOccupancy,
    TruthPreemption, TruthProcess, TruthSemState, TruthSignalWrite, TruthWait,
};

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
/// How long a slot of the counting semaphore is held ([`SynthConfig::counting_slots`]).
const COUNTING_HOLD_NS: (i64, i64) = (50 * US, 300 * US);
/// How much longer than drawn an overrunning task instance runs ([`SynthConfig::overrun_every`]).
const OVERRUN_FACTOR: i64 = 4;
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
    /// When n > 0, every n-th instance of every task (instance numbers n-1, 2n-1, ...)
    /// runs each of its runnables 4 times as long as drawn (critical sections excepted),
    /// so that tasks overrun, miss their implicit deadlines and have activations queued
    /// and dropped. 0 (the default) leaves the workload, and so the bytes, as they were.
    pub overrun_every: u64,
    /// Global scheduling: every third task (model index 2, 5, 8, ...) may run on any core;
    /// it starts or resumes on whichever core is free of higher-priority work first, so a
    /// preempt on one core can be followed by a resume on another (a migration). Off by
    /// default.
    pub migrating_tasks: bool,
    /// ISR nesting: ISRs share cores in pairs (ISR i on core (i / 2) mod cores), and the
    /// higher one (lower index) preempts the lower one when it fires while the lower one
    /// runs. Off by default (ISRs are then never preempted).
    pub nested_isrs: bool,
    /// Passive waits: some tasks (every other task with two or more runnables and a
    /// period of at least 10 ms) wait once per instance, between their first and second
    /// runnable, for an OS event `EV_<task>` (`wait_event`, then the core's `wait`), which an
    /// ISR or a task sets when it next terminates (`set_event`, then the core's `release`);
    /// the task then resumes like a preempted one. Off by default.
    pub passive_waits: bool,
    /// Parking: a task polling for a semaphore may be preempted (critical sections still
    /// may not): it parks (`park`); when the semaphore is handed to it while parked it is
    /// made ready (`release_parking`, `assigned`) and holds it from its next resume, and
    /// when it gets its core back first it polls again (`poll_parking`). Semaphores are
    /// held 10 times as long, so that polls last and get preempted. Off by default.
    pub parking: bool,
    /// A counting semaphore: when n > 0, `SEM_C` with n slots, taken in the first runnable
    /// of every other task (model index 1, 3, 5, ...) for 50..300 µs (at most half the
    /// runnable). Its own lines follow
    /// the counter (`used` free → used and used → used, `lock_used` used → full,
    /// `unlock_full` full → used, `free` used → free, `overfull` per request that finds
    /// every slot taken, `full` when the last waiter is served; with one slot `lock` and
    /// `unlock`), the note carrying the slots taken. A task that finds every slot taken is
    /// queued: `requestsemaphore`, `overfull`, `queued`, then its core's `wait` (a passive
    /// wait, its runnable suspended); a release hands the slot to the first queued task
    /// (`released`, `assigned`, the waiter's core's `release`: ready, holding the slot from
    /// then). Unlike the spinlocks, a holder may be preempted. 0 (the default): no `SEM_C`.
    pub counting_slots: u32,
    /// OS events set and cleared as an AUTOSAR OS does (implies `passive_waits`'s events):
    /// the setter sets its event (`set_event`) whenever it terminates while the waiter has an
    /// instance activated, not only while it waits; the waiter clears it (`clear_event`) when
    /// it starts, which discards a set made before, and again when its wait returns; a wait
    /// for an event already set returns at once (`wait_event` and no `wait`). Off by default.
    pub clear_events: bool,
    /// Mutexes: every one-slot semaphore (`SEM_A`, `SEM_B`, and `SEM_C` when `counting_slots`
    /// is 1) is held as the counting semaphore is: a holder may be preempted by a higher
    /// priority task or ISR of its core, and a task that finds it held is queued
    /// (`requestsemaphore`, `overfull` for the first waiter only, `queued`, its core's
    /// `wait`) until a release hands it over (`released`, `assigned`, `release`: ready,
    /// holding it from then). A waiter on another core, or the very task that preempted the
    /// holder, then waits while the holder is off its core, for as long as higher-priority
    /// work runs there: a priority inversion. Nobody polls, so `parking` changes nothing but
    /// the hold times. Off by default.
    pub preemptible_locks: bool,
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
            overrun_every: 0,
            migrating_tasks: false,
            nested_isrs: false,
            passive_waits: false,
            parking: false,
            counting_slots: 0,
            clear_events: false,
            preemptible_locks: false,
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
    /// Task and ISR `preempt` lines (an ISR is preempted only with `nested_isrs`).
    pub preemptions: u64,
    /// Time of the last data line, ns (0 when there is none).
    pub last_ts: i64,
}

/// The `synth` example's command line.
pub const USAGE: &str = "usage: synth OUT.btf [--mb N | --ms N] [--cores N] [--tasks N] [--isrs N] [--seed N] [--overrun-every N] [--migrating-tasks] [--nested-isrs] [--passive-waits] [--parking] [--counting-slots N] [--clear-events] [--preemptible-locks]";

/// Reads the `synth` example's arguments (after the program name, `OUT.btf` first; see
/// [`USAGE`]) into the output path and the configuration. A function of the library so that
/// tests can run the README's `cargo run --example synth -- ...` lines as the example does.
///
/// # Errors
///
/// A message naming the unknown option, the missing or bad value, or the missing output file.
pub fn config_from_args(args: &[String]) -> Result<(String, SynthConfig), String> {
    let mut args = args.iter();
    let out = args.next().ok_or(USAGE)?.clone();
    if out.starts_with('-') {
        return Err(format!(
            "the first argument is the output file, not an option ({out}); {USAGE}"
        ));
    }
    let mut cfg = SynthConfig::default();
    while let Some(flag) = args.next() {
        let switch = match flag.as_str() {
            "--migrating-tasks" => Some(&mut cfg.migrating_tasks),
            "--nested-isrs" => Some(&mut cfg.nested_isrs),
            "--passive-waits" => Some(&mut cfg.passive_waits),
            "--parking" => Some(&mut cfg.parking),
            "--clear-events" => Some(&mut cfg.clear_events),
            "--preemptible-locks" => Some(&mut cfg.preemptible_locks),
            _ => None,
        };
        if let Some(on) = switch {
            *on = true;
            continue;
        }
        const VALUED: [&str; 8] = [
            "--mb",
            "--ms",
            "--cores",
            "--tasks",
            "--isrs",
            "--seed",
            "--overrun-every",
            "--counting-slots",
        ];
        if !VALUED.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag}"));
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let n: u64 = value.parse().map_err(|_| format!("{flag}: '{value}' is not a number"))?;
        match flag.as_str() {
            "--mb" => cfg.target_bytes = Some(n << 20),
            "--ms" => cfg.duration_ns = i64::try_from(n * 1_000_000).map_err(|e| e.to_string())?,
            "--cores" => cfg.cores = u32::try_from(n).map_err(|e| e.to_string())?,
            "--tasks" => cfg.tasks = u32::try_from(n).map_err(|e| e.to_string())?,
            "--isrs" => cfg.isrs = u32::try_from(n).map_err(|e| e.to_string())?,
            "--seed" => cfg.seed = n,
            "--overrun-every" => cfg.overrun_every = n,
            "--counting-slots" => {
                cfg.counting_slots = u32::try_from(n).map_err(|e| e.to_string())?;
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok((out, cfg))
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
    generate(out, cfg, false).map(|(stats, _)| stats)
}

/// As [`write_btf`], and also returns the ground truth ([`SynthTruth`]): what every task,
/// ISR and runnable instance that terminated in the trace did, as the simulator decided it
/// (not read back from the text), in the order the instances terminated, runnables before
/// their task; and its activations, lock requests, preemptions, core occupancy, semaphore
/// states, signal writes and waits for OS events.
///
/// Instances still under way when a run cut by `target_bytes` ends are not among them but
/// in [`SynthTruth::cut`], with their times up to the last line; every other record holds
/// only what the written lines show. Bookkeeping costs time and memory in proportion to the
/// instances, so the benchmark path ([`write_btf`]) skips it.
///
/// # Errors
///
/// As [`write_btf`].
pub fn write_btf_with_truth<W: Write>(
    out: W,
    cfg: &SynthConfig,
) -> io::Result<(SynthStats, SynthTruth)> {
    generate(out, cfg, true).map(|(stats, truth)| (stats, truth.unwrap_or_default()))
}

fn generate<W: Write>(
    out: W,
    cfg: &SynthConfig,
    truth: bool,
) -> io::Result<(SynthStats, Option<SynthTruth>)> {
    if cfg.cores == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "synth: cores must be at least 1"));
    }
    let out = Out::new(BufWriter::with_capacity(1 << 20, out), cfg.target_bytes);
    let mut sim = Sim::new(out, cfg, truth);
    sim.run();
    let end = sim.out.stats.last_ts;
    let truth = sim.truth.take().map(|t| t.finish(end));
    Ok((sim.out.finish()?, truth))
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
