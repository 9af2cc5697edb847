//! S.Ha.R.K. records (sorted by time) to BTF-shaped events.
//!
//! Every record is one `events` row; a record that means more than one BTF transition
//! also writes the rows it implies just before or after it (their note starts `implied
//! by`). Task records drive the task state machine on the one core `Core_0`:
//!
//! | record | BTF event(s) |
//! |---|---|
//! | `task_activate` (ctx) | `activate` of a new instance (while one is open: of the instance queued after it, `activate_while_active`) |
//! | `task_timer` (ctx, level) | a periodic job's release: `activate` as `task_activate` (EDF's first one, right after a `task_activate`, is kept as is) |
//! | `task_schedule` (exec_shadow, exec) | as `task_dispatch` of par1 (exec_shadow runs) |
//! | `task_dispatch` (ctx) | `start` (first run of the instance) or `resume`; implied `preempt` of another task still running, implied `release` of a task waiting on a mutex |
//! | `task_epilogue` (ctx) | `preempt`, unless the task's next scheduling record is its own dispatch, end or wait (then kept as is) |
//! | `task_end_cycle`, `task_sleep`, `task_end` (ctx) | `terminate` of the open instance (a queued one is open next) |
//! | `task_deadline_miss` (ctx) | kept as is on the open instance; on instance -1 when none is open |
//! | `interrupt_start` / `interrupt_end` (n) | `activate` + `start` / `terminate` of ISR `IRQ<n>` (nesting allowed) |
//! | `mutex_wait` (ctx, m) | blocking (the next record schedules another task): `requestsemaphore` + `waiting` on SEM `mutex_<m>`, and `wait` of the task |
//! | `mutex_lock` (ctx, m) | `assigned` (after an implied `requestsemaphore` when no wait came first; after an implied `release` of the task when it waited); while another task holds `m`: `requestsemaphore` + `waiting` + `wait`, assigned at the task's next dispatch with `m` free |
//! | `mutex_wait` not blocking (the kernel logs both) | `requestsemaphore` + `assigned` |
//! | `mutex_unlock` (ctx, m) | `released` |
//! | `mutex_post` (ctx, m) | `released` when the task holds it, else kept as is; frees the first task blocked on it (`release` + `assigned`) |
//! | `CLI` / `STI` | kept as is; the core's `interrupts` channel is `disabled` from CLI to STI |
//! | anything else | kept as is: action = the record's name, source = its task or `Core_0` |
use super::record::{self, Rec};
use super::SharkOptions;
use crate::ingest::{Diagnostic, Severity, Sink, Span};
use crate::model::{Event, Pos, TimeUnit, MAX_ABS_NS};
use crate::Result;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

mod mutex;
mod records;

use mutex::hold;

mod lookahead;
mod names;

pub(super) use lookahead::rate_of;
use lookahead::{blocks, preempted};
use names::{action_of, family_name, pars};

/// The one core of a S.Ha.R.K. system (i386), named as BTF names cores.
pub const CORE: &str = "Core_0";

/// Records looked at after an epilogue to tell a preemption from a task that ends or is
/// dispatched again.
pub(super) const LOOKAHEAD: usize = 4096;

/// Tasks named by a pid, and mutexes, held at most (each is an entity the derive stage keeps
/// state for): beyond, a further task keeps its context's name `ctx_<ctx>` (at most 65,536,
/// as contexts are 16-bit) and a further mutex's records are kept as events with no
/// semaphore (`too_many_entities`).
pub const MAX_ENTITIES: usize = 1 << 16;

/// Interrupts open at once (nested) at most; a deeper `interrupt_start` is kept as an event
/// (`interrupt_nesting_too_deep`).
pub const MAX_NESTING: usize = 256;

/// Semaphores one task is followed holding at once, and tasks followed blocked on one
/// semaphore (the oldest are forgotten beyond: memory stays bounded).
const MAX_HELD: usize = 256;
const MAX_BLOCKED: usize = 4096;

/// How TSC cycles become the tables' time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// The log's `cycles_per_msec`.
    PerMs(u64),
    /// `--tick-rate` cycles per second.
    Hz(u64),
    /// Raw cycles (`captures.time_unit = tick`).
    Tick,
}

/// Where a task's open instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// No open instance.
    Idle,
    Active,
    Running,
    Ready,
    Waiting,
}

/// A task context's current task.
#[derive(Debug, Clone)]
struct Task {
    name: String,
    /// Current (latest) instance, -1 before the first.
    inst: i64,
    state: St,
    waiting_on: Option<u32>,
    /// Semaphores (mutexes) assigned to it and not released yet, the latest last (at most
    /// [`MAX_HELD`]): a `mutex_post` of one of them is its release.
    holds: Vec<u32>,
    /// The open instance was activated by `task_activate` and has not started, and no
    /// `task_timer` came since: the next `task_timer` is its first release (EDF logs it right
    /// after the activation), not another job.
    unreleased: bool,
    /// A mutex its `mutex_lock` found held by another task: it takes it when it runs again
    /// with the mutex free.
    lock_wait: Option<u32>,
    /// Activations logged while an instance was open (the kernel queues them): instances
    /// `inst + 1 ..= inst + queued`, activated already, each started after the one before.
    queued: i64,
}

/// The mapping state, kept across sort windows.
pub(super) struct Mapper<'a> {
    pub(super) sink: &'a mut dyn Sink,
    files: Vec<String>,
    cur_file: u16,
    tick_rate: Option<u64>,
    scale: Option<Scale>,
    tasks: HashMap<u16, Task>,
    /// `task_<pid>` names given so far (at most [`MAX_ENTITIES`]).
    task_names: HashSet<String>,
    /// The latest instance of a task no context holds now (its context got another pid):
    /// the kernel's pids are `proc_table` slots, reused, and a task that comes back goes on
    /// numbering from there, so `(entity, instance)` stays a key. At most one per task
    /// name, so bounded as the names are.
    left_inst: HashMap<String, i64>,
    /// The context that took each task name last: a pid freed by one context may be
    /// created again in another, and its instances go on from the first's.
    name_ctx: HashMap<String, u16>,
    /// The last task name refused per context (beyond [`MAX_ENTITIES`]), said once.
    capped: HashMap<u16, String>,
    /// Mutexes declared so far (at most [`MAX_ENTITIES`]).
    sems: HashSet<u32>,
    /// IRQ numbers declared so far.
    irq_names: HashSet<u16>,
    /// Contexts blocked in a `mutex_wait` of each semaphore, in the order they blocked (the
    /// kernel's queue is FIFO): a `mutex_post` frees the first still blocked.
    blocked: HashMap<u32, VecDeque<u16>>,
    /// The context each mutex (`mutex_lock`/`mutex_unlock`) is assigned to.
    owner: HashMap<u32, u16>,
    /// The first pid of each context in the whole run (the pre-pass over a run sorted in
    /// windows): a context's records before its first `id` take it.
    first_pid: HashMap<u16, u32>,
    /// The first `cycles_per_msec` of the whole run (pre-pass), when the first window has
    /// none.
    first_cpm: Option<u64>,
    ctx_pid: HashMap<u16, u32>,
    running: Option<u16>,
    irqs: Vec<(u16, i64)>,
    irq_next: HashMap<u16, i64>,
    cli_since: Option<i64>,
    blackout: Option<(i64, Pos, u16)>,
    /// Per family (the filter code's low nibble): since when FTrace_set_filter keeps its
    /// records out of the log.
    filtered: [Option<(i64, Pos, u16)>; 16],
    unknown: BTreeMap<u8, (u64, Pos, u16)>,
    fast_unmapped: u64,
    out_of_range: Option<(u64, Pos, u16, u64)>,
    file_counts: Vec<u64>,
    numevents: Vec<(u32, Pos, u16, i64)>,
    last_ts: i64,
    /// Position of the record being mapped.
    cur_pos: Pos,
}

impl<'a> Mapper<'a> {
    pub(super) fn new(sink: &'a mut dyn Sink, opts: &SharkOptions, files: Vec<String>) -> Self {
        // Typed before its first row (a `cycles_per_msec` at time 0): an export to BTF
        // then writes it as a core.
        sink.declare_entity(CORE, Some("C"), None);
        Mapper {
            sink,
            files,
            cur_file: 0,
            tick_rate: opts.tick_rate,
            scale: None,
            tasks: HashMap::new(),
            task_names: HashSet::new(),
            left_inst: HashMap::new(),
            name_ctx: HashMap::new(),
            sems: HashSet::new(),
            capped: HashMap::new(),
            irq_names: HashSet::new(),
            blocked: HashMap::new(),
            owner: HashMap::new(),
            first_pid: HashMap::new(),
            first_cpm: None,
            ctx_pid: HashMap::new(),
            running: None,
            irqs: Vec::new(),
            irq_next: HashMap::new(),
            cli_since: None,
            blackout: None,
            filtered: Default::default(),
            unknown: BTreeMap::new(),
            fast_unmapped: 0,
            out_of_range: None,
            file_counts: Vec::new(),
            numevents: Vec::new(),
            last_ts: 0,
            cur_pos: Pos::None,
        }
    }

    /// The non-empty records of the next file read.
    pub(super) fn file_records(&mut self, n: u64) {
        self.file_counts.push(n);
    }

    fn diag(
        &mut self,
        severity: Severity,
        kind: &'static str,
        pos: Pos,
        ts: Option<i64>,
        message: String,
    ) -> Result<()> {
        self.sink.diagnostic(Diagnostic { severity, kind, pos, ts, message })
    }

    /// Names `file` in the positions of what follows.
    /// The sink was told of another file (a chunk file is being read while records of the
    /// ones before wait to be mapped): the next record's file is told again.
    pub(super) fn path_changed(&mut self) {
        self.cur_file = u16::MAX;
    }

    fn in_file(&mut self, file: u16) {
        if file != self.cur_file {
            self.cur_file = file;
            if let Some(f) = self.files.get(usize::from(file)) {
                self.sink.source_file(f);
            }
        }
    }

    /// What a pre-pass over the whole run found (it is sorted in windows): the first pid of
    /// each context and the first `cycles_per_msec`.
    pub(super) fn prepass(&mut self, first_pid: HashMap<u16, u32>, first_cpm: Option<u64>) {
        self.first_pid = first_pid;
        self.first_cpm = first_cpm;
    }

    /// Settles the time scale from the first window (or the pre-pass over the run): the
    /// log's `cycles_per_msec`, else
    /// `--tick-rate`, else raw cycles.
    fn settle_scale(&mut self, recs: &[Rec]) -> Result<()> {
        if self.scale.is_some() {
            return Ok(());
        }
        let cpm = recs.iter().find_map(rate_of).map(u64::from).or(self.first_cpm);
        let scale = match (cpm, self.tick_rate) {
            (Some(c), given) => {
                if let Some(hz) = given {
                    self.diag(
                        Severity::Info,
                        "tick_rate_ignored",
                        Pos::None,
                        None,
                        format!(
                            "--tick-rate {hz} is not used: the log gives its own rate \
                             (cycles_per_msec = {c})"
                        ),
                    )?;
                }
                self.sink.meta("shark.cycles_per_msec", &c.to_string());
                Scale::PerMs(c)
            }
            (None, Some(hz)) => {
                self.sink.meta("shark.tick_rate_hz", &hz.to_string());
                Scale::Hz(hz)
            }
            (None, None) => {
                self.diag(
                    Severity::Info,
                    "unknown_cycle_rate",
                    Pos::None,
                    None,
                    "the log gives no rate (no cycles_per_msec record, no trace_start with a \
                     par2): times are raw TSC cycles (captures.time_unit = tick); give \
                     --tick-rate HZ (cycles per second) to get nanoseconds"
                        .into(),
                )?;
                Scale::Tick
            }
        };
        self.sink.time_unit(if scale == Scale::Tick { TimeUnit::Tick } else { TimeUnit::Ns });
        self.scale = Some(scale);
        Ok(())
    }

    /// The record's time in the tables' unit, exact (i128), at most 2^62 - 1.
    fn time(&mut self, r: &Rec) -> i64 {
        let tsc = i128::from(r.tsc);
        let t = match self.scale.unwrap_or(Scale::Tick) {
            Scale::PerMs(c) => tsc * 1_000_000 / i128::from(c),
            Scale::Hz(hz) => tsc * 1_000_000_000 / i128::from(hz),
            Scale::Tick => tsc,
        };
        match i64::try_from(t).ok().filter(|t| *t < MAX_ABS_NS) {
            Some(t) => t,
            None => {
                let e = self.out_of_range.get_or_insert((0, r.pos(), r.file, r.tsc));
                e.0 += 1;
                MAX_ABS_NS - 1
            }
        }
    }

    /// Maps the first `upto` records of a window sorted by TSC; the ones after them are
    /// looked at only (the next window maps them), so that what follows a record is seen
    /// across the windows' border.
    pub(super) fn window(&mut self, recs: &[Rec], upto: usize) -> Result<()> {
        self.settle_scale(recs)?;
        // Context -> pid as `id` and `create` records say, with where they say it: a
        // record takes the latest mapping before it, else the first after it (the ids are
        // often logged once the tasks exist).
        let mut points: HashMap<u16, Vec<(usize, u32)>> = HashMap::new();
        for (i, r) in recs.iter().enumerate() {
            if matches!(r.code(), 0x60 | 0x02) {
                if let Some(pid) = r.par2() {
                    points.entry(r.par1).or_default().push((i, pid));
                }
            }
        }
        for (i, r) in recs.iter().enumerate().take(upto) {
            self.record(recs, i, r, &points)?;
        }
        for (ctx, v) in points {
            if let Some((_, pid)) = v.iter().rev().find(|(j, _)| *j < upto) {
                self.ctx_pid.insert(ctx, *pid);
            }
        }
        Ok(())
    }

    fn pid_at(&self, points: &HashMap<u16, Vec<(usize, u32)>>, ctx: u16, i: usize) -> Option<u32> {
        if let Some(v) = points.get(&ctx) {
            let k = v.partition_point(|(j, _)| *j <= i);
            if let Some((_, pid)) = k.checked_sub(1).and_then(|k| v.get(k)) {
                return Some(*pid);
            }
        }
        if let Some(p) = self.ctx_pid.get(&ctx) {
            return Some(*p);
        }
        // The first after it: in this window, else in a later one (pre-pass).
        points
            .get(&ctx)
            .and_then(|v| v.first().map(|(_, p)| *p))
            .or_else(|| self.first_pid.get(&ctx).copied())
    }

    /// The task of context `ctx` at record `i`: `task_<pid>` when its pid is known, else
    /// `ctx_<ctx>`. A context that gets another pid holds a new task from then on.
    fn task(
        &mut self,
        points: &HashMap<u16, Vec<(usize, u32)>>,
        ctx: u16,
        i: usize,
    ) -> Result<Task> {
        let mut name = match self.pid_at(points, ctx, i) {
            Some(pid) => format!("task_{pid}"),
            None => format!("ctx_{ctx}"),
        };
        if let Some(t) = self.tasks.get(&ctx).filter(|t| t.name == name) {
            return Ok(t.clone());
        }
        if name.starts_with("task_") && !self.task_names.contains(&name) {
            if self.task_names.len() >= MAX_ENTITIES {
                // Said once per context and pid (a context's records each ask).
                let said = self.capped.get(&ctx) == Some(&name);
                self.capped.insert(ctx, name.clone());
                let m = format!(
                    "more than {MAX_ENTITIES} tasks named by a pid: context {ctx}'s new pid \
                     ({name}) is not a new task, its records go to ctx_{ctx} (memory stays \
                     bounded)"
                );
                if !said {
                    self.diag(Severity::Warning, "too_many_entities", self.cur_pos, None, m)?;
                }
                name = format!("ctx_{ctx}");
                if let Some(t) = self.tasks.get(&ctx).filter(|t| t.name == name) {
                    return Ok(t.clone());
                }
            } else {
                self.task_names.insert(name.clone());
            }
        }
        self.sink.declare_entity(&name, Some("T"), None);
        if self.running == Some(ctx) {
            self.running = None;
        }
        if let Some(old) = self.tasks.get(&ctx) {
            // Its queued activations have their numbers already.
            self.left_inst.insert(old.name.clone(), old.inst + old.queued);
        }
        let mut inst = self.left_inst.remove(&name).unwrap_or(-1);
        if let Some(other) = self.name_ctx.insert(name.clone(), ctx).filter(|c| *c != ctx) {
            if let Some(t) = self.tasks.get(&other).filter(|t| t.name == name) {
                inst = inst.max(t.inst + t.queued);
            }
        }
        let t = Task {
            name,
            inst,
            state: St::Idle,
            waiting_on: None,
            holds: Vec::new(),
            unreleased: false,
            lock_wait: None,
            queued: 0,
        };
        self.tasks.insert(ctx, t.clone());
        Ok(t)
    }

    /// `IRQ<n>`, typed as an ISR before its first row.
    fn irq(&mut self, n: u16) -> String {
        let name = format!("IRQ{n}");
        if self.irq_names.insert(n) {
            self.sink.declare_entity(&name, Some("I"), None);
        }
        name
    }

    fn set_task(&mut self, ctx: u16, t: Task) {
        self.tasks.insert(ctx, t);
    }

    /// One `events` row on the core. An empty `target` makes a row about `source` alone.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        r: &Rec,
        ts: i64,
        source: &str,
        source_instance: i64,
        (target_type, target, target_instance): (&str, &str, i64),
        action: &str,
        note: &str,
        value: Option<f64>,
    ) -> Result<()> {
        self.sink.event(&Event {
            ts,
            source,
            source_instance,
            target_type,
            target,
            target_instance,
            action,
            note: Some(note),
            value,
            core: Some(CORE),
            pos: r.pos(),
        })
    }

    /// The record kept as is: action its name, source `source` (instance `inst`).
    fn plain(&mut self, r: &Rec, ts: i64, source: &str, inst: i64) -> Result<()> {
        let action = action_of(r);
        let value = r.par2().map(f64::from);
        self.emit(r, ts, source, inst, ("", "", -1), &action, &pars(r), value)
    }

    /// A BTF process event of task `t` (main row, or `implied` by the record).
    fn proc(
        &mut self,
        r: &Rec,
        ts: i64,
        ty: &str,
        t: (&str, i64),
        action: &str,
        implied: bool,
    ) -> Result<()> {
        let note = self.note(r, implied);
        self.emit(r, ts, CORE, -1, (ty, t.0, t.1), action, &note, None)
    }

    fn note(&self, r: &Rec, implied: bool) -> String {
        let name = action_of(r);
        if implied {
            format!("implied by {name} {}", pars(r))
        } else {
            format!("{name} {}", pars(r))
        }
    }

    fn unit(&self) -> &'static str {
        if self.scale == Some(Scale::Tick) {
            "cycles"
        } else {
            "ns"
        }
    }

    /// Closes what is open at the end of the log and reports what was counted.
    pub(super) fn finish(mut self) -> Result<&'a mut dyn Sink> {
        self.in_file(0);
        self.interrupts_enabled(None, Pos::None)?;
        if let Some((since, pos, file)) = self.blackout.take() {
            self.in_file(file);
            let m = format!(
                "blackout from {since} with no end logged: the tracer lost the events from \
                 there to the end of the log"
            );
            self.diag(Severity::DataLoss, "blackout", pos, Some(since), m)?;
        }
        for (fam, open) in std::mem::take(&mut self.filtered).into_iter().enumerate() {
            if let Some((since, pos, file)) = open {
                self.in_file(file);
                let m = format!(
                    "{} events (family 0x{fam:X}) were not logged from {since} to the end of the \
                     log: a filter (filter_{fam} par1=1) kept them out of it",
                    family_name(fam)
                );
                self.diag(Severity::Warning, "filtered_family", pos, Some(since), m)?;
            }
        }
        for (code, (n, pos, file)) in std::mem::take(&mut self.unknown) {
            self.in_file(file);
            let m = format!(
                "event code 0x{code:02X} is not in FTrace.h: {n} records kept as code_0x{code:02X} \
                 with par1 and par2 in the note"
            );
            self.diag(Severity::Warning, "unknown_code", pos, None, m)?;
        }
        if let Some((n, pos, file, tsc)) = self.out_of_range.take() {
            self.in_file(file);
            let m = format!(
                "{n} records have a time beyond the tables' range (2^62 - 1 ns, about 146 years) \
                 once scaled (the first: TSC {tsc}): they are kept at 2^62 - 1"
            );
            self.diag(Severity::Warning, "time_out_of_range", pos, None, m)?;
        }
        if self.fast_unmapped > 0 {
            let m = format!(
                "{} records of the fast variant (type bit 0x8000) needed their par2 (a pid, \
                 mutex, clock rate or event count), which that variant does not write: they are \
                 kept as events with par2=stale, and mean nothing more",
                self.fast_unmapped
            );
            self.diag(Severity::Info, "fast_record", Pos::None, None, m)?;
        }
        let total: u64 = self.file_counts.iter().sum();
        for (claimed, pos, file, ts) in std::mem::take(&mut self.numevents) {
            self.in_file(file);
            let here = self.file_counts.get(usize::from(file)).copied().unwrap_or(0);
            let c = u64::from(claimed);
            // The count may or may not include the numevents record itself.
            let fits = |n: u64| c == n || c + 1 == n;
            if fits(here) || fits(total) {
                continue;
            }
            let (severity, what) = if c > here.max(total) {
                (Severity::DataLoss, format!("{} events are missing", c - here.max(total)))
            } else {
                (Severity::Warning, "more were read than it counts".to_string())
            };
            let m = format!(
                "numevents says {c} events, but {here} were read in this chunk file and {total} \
                 in the run: {what}"
            );
            self.diag(severity, "numevents_mismatch", pos, Some(ts), m)?;
        }
        self.in_file(0);
        Ok(self.sink)
    }
}
