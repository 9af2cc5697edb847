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

/// `par1=3 par2=7` (`par2=stale` in the fast variant).
fn pars(r: &Rec) -> String {
    match r.par2() {
        Some(p) => format!("par1={} par2={p}", r.par1),
        None => format!("par1={} par2=stale", r.par1),
    }
}

/// The name of a record's code (`code_0x0C` for one FTrace.h does not define).
fn action_of(r: &Rec) -> String {
    record::name(r.code()).map_or_else(|| format!("code_0x{:02X}", r.code()), str::to_string)
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

    fn record(
        &mut self,
        recs: &[Rec],
        i: usize,
        r: &Rec,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        self.in_file(r.file);
        self.cur_pos = r.pos();
        let ts = self.time(r);
        self.last_ts = ts;
        let code = r.code();
        let ctx = r.par1;
        match code {
            0x12 => self.activate(r, ts, i, points),
            // task_timer: the release of a periodic job (EDF, CBS, HCBS log each one so).
            0x92 => {
                let mut t = self.task(points, ctx, i)?;
                if t.unreleased && t.state == St::Active {
                    t.unreleased = false;
                    self.set_task(ctx, t.clone());
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.activate(r, ts, i, points)
            }
            // task_schedule: the scheduler chose exec (par2) and runs exec_shadow (par1, the
            // end of the shadow chain, which differs under priority inheritance): par1 is
            // the task on the CPU, as for task_dispatch.
            0x22 | 0x82 => self.dispatch(r, ts, i, points),
            0x32 => {
                let mut t = self.task(points, ctx, i)?;
                if t.state == St::Running && preempted(recs, i, ctx) {
                    self.proc(r, ts, "T", (&t.name, t.inst), "preempt", false)?;
                    t.state = St::Ready;
                    self.running = None;
                    self.set_task(ctx, t);
                    Ok(())
                } else {
                    self.plain(r, ts, &t.name, t.inst)
                }
            }
            0x42 | 0x62 | 0x72 => {
                let mut t = self.task(points, ctx, i)?;
                if t.state == St::Idle {
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.proc(r, ts, "T", (&t.name, t.inst), "terminate", false)?;
                t.waiting_on = None;
                t.unreleased = false;
                t.lock_wait = None;
                if t.queued > 0 {
                    // A queued activation: its instance is the task's open one now.
                    t.queued -= 1;
                    t.inst += 1;
                    t.state = St::Active;
                } else {
                    t.state = St::Idle;
                }
                if self.running == Some(ctx) {
                    self.running = None;
                }
                self.set_task(ctx, t);
                Ok(())
            }
            0x03 => {
                let inst = *self.irq_next.entry(ctx).or_insert(0);
                let name = self.irq(ctx);
                if self.irqs.len() >= MAX_NESTING {
                    let m = format!(
                        "interrupt_start of {name} while {MAX_NESTING} interrupts are open \
                         (nested, none ended): kept as an event, no ISR instance (memory stays \
                         bounded)"
                    );
                    self.diag(
                        Severity::Warning,
                        "interrupt_nesting_too_deep",
                        r.pos(),
                        Some(ts),
                        m,
                    )?;
                    return self.plain(r, ts, &name, -1);
                }
                self.irq_next.insert(ctx, inst + 1);
                self.irqs.push((ctx, inst));
                self.proc(r, ts, "I", (&name, inst), "activate", true)?;
                self.proc(r, ts, "I", (&name, inst), "start", false)
            }
            0x13 => self.interrupt_end(r, ts),
            0xB2 => {
                let t = self.task(points, ctx, i)?;
                if t.state != St::Idle {
                    return self.plain(r, ts, &t.name, t.inst);
                }
                // No open instance: the one before ended, so the miss cannot be its (its
                // lateness would be negative); it is attached to no instance.
                let m = format!(
                    "task_deadline_miss of {} while it has no open instance (instance {} ended \
                     before it): kept as an event of the task with no instance",
                    t.name, t.inst
                );
                self.diag(Severity::Warning, "miss_without_instance", r.pos(), Some(ts), m)?;
                self.plain(r, ts, &t.name, -1)
            }
            0x46 | 0x16 | 0x36 | 0x56 => self.mutex(recs, r, ts, i, points),
            0x24 => {
                self.cli_since.get_or_insert(ts);
                self.plain(r, ts, CORE, -1)
            }
            0x34 => {
                self.interrupts_enabled(Some(ts), r.pos())?;
                self.plain(r, ts, CORE, -1)
            }
            0x40 => {
                if self.blackout.is_none() {
                    self.blackout = Some((ts, r.pos(), r.file));
                }
                self.plain(r, ts, CORE, -1)
            }
            0x50 => {
                let msg = match self.blackout.take() {
                    Some((since, _, _)) => format!(
                        "blackout from {since} to {ts} ({} {}): the tracer lost the events of \
                         that span",
                        ts - since,
                        self.unit()
                    ),
                    None => format!(
                        "blackout ended at {ts} with no start logged: the tracer lost events \
                         before it, since an unknown time"
                    ),
                };
                self.diag(Severity::DataLoss, "blackout", r.pos(), Some(ts), msg)?;
                self.plain(r, ts, CORE, -1)
            }
            // FTrace_set_filter(filter, status) logs the filter with par1 = status: while
            // it is on, FTrace_safe_ipoint drops every record of that family.
            0xF0..=0xFB => {
                let fam = usize::from(code & 0x0F);
                if r.par1 != 0 {
                    if let Some(slot @ None) = self.filtered.get_mut(fam) {
                        *slot = Some((ts, r.pos(), r.file));
                    }
                } else if let Some((since, _, _)) =
                    self.filtered.get_mut(fam).and_then(Option::take)
                {
                    let m = format!(
                        "{} events (family 0x{fam:X}) were not logged from {since} to {ts} ({} \
                         {}): a filter kept them out of the log ({} par1=1, then par1=0)",
                        family_name(fam),
                        ts - since,
                        self.unit(),
                        action_of(r)
                    );
                    self.diag(Severity::Warning, "filtered_family", r.pos(), Some(ts), m)?;
                }
                self.plain(r, ts, CORE, -1)
            }
            0x10 | 0x20 => {
                match (r.par2(), self.scale) {
                    (Some(0), _) if code == 0x20 => {}
                    (Some(c), Some(Scale::PerMs(used))) if u64::from(c) != used => {
                        let m = format!(
                            "{} {c} cycles per ms differs from the first rate, {used}, which \
                             scales the whole log",
                            action_of(r)
                        );
                        self.diag(Severity::Info, "cycle_rate_changed", r.pos(), Some(ts), m)?;
                    }
                    (None, _) if code == 0x10 => self.fast_unmapped += 1,
                    _ => {}
                }
                // The kernel's demos log trace_start with the running task's context.
                if code == 0x20 && ctx != 0 {
                    let t = self.task(points, ctx, i)?;
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.plain(r, ts, CORE, -1)
            }
            0x70 => {
                match r.par2() {
                    Some(n) => self.numevents.push((n, r.pos(), r.file, ts)),
                    None => self.fast_unmapped += 1,
                }
                self.plain(r, ts, CORE, -1)
            }
            _ => {
                if record::name(code).is_none() {
                    let e = self.unknown.entry(code).or_insert((0, r.pos(), r.file));
                    e.0 += 1;
                }
                if matches!(code, 0x60 | 0x02) && r.fast() {
                    self.fast_unmapped += 1;
                }
                // GRUBSTAR logs server_active with the context of the task that woke the
                // server, CBSSTAR with 0 (no task has context 0).
                if record::par1_is_ctx(code) || (code == 0x58 && ctx != 0) {
                    let t = self.task(points, ctx, i)?;
                    self.plain(r, ts, &t.name, t.inst)
                } else if code & 0x0F == 0x03 {
                    let name = self.irq(ctx);
                    self.plain(r, ts, &name, -1)
                } else {
                    self.plain(r, ts, CORE, -1)
                }
            }
        }
    }

    fn unit(&self) -> &'static str {
        if self.scale == Some(Scale::Tick) {
            "cycles"
        } else {
            "ns"
        }
    }

    fn activate(
        &mut self,
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let mut t = self.task(points, r.par1, i)?;
        if t.state != St::Idle {
            // The kernel queues the activation (a pending count): it is the activation of
            // the instance after the open one (and any queued before it), at its own time.
            let n = t.inst + t.queued + 1;
            let m = format!(
                "activate of {} while its instance {} is still active: the kernel queues it; \
                 instance {n} is activated now and starts once the instances before it ended",
                t.name, t.inst
            );
            self.diag(Severity::Info, "activate_while_active", r.pos(), Some(ts), m)?;
            self.proc(r, ts, "T", (&t.name, n), "activate", false)?;
            t.queued += 1;
            self.set_task(r.par1, t);
            return Ok(());
        }
        t.inst += 1;
        t.state = St::Active;
        t.unreleased = r.code() == 0x12;
        self.proc(r, ts, "T", (&t.name, t.inst), "activate", false)?;
        self.set_task(r.par1, t);
        Ok(())
    }

    fn dispatch(
        &mut self,
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let ctx = r.par1;
        // One CPU: a task still running loses it now.
        if let Some(other) = self.running.filter(|o| *o != ctx) {
            if let Some(mut o) = self.tasks.get(&other).cloned() {
                if o.state == St::Running {
                    self.proc(r, ts, "T", (&o.name, o.inst), "preempt", true)?;
                    o.state = St::Ready;
                    self.set_task(other, o);
                }
            }
            self.running = None;
        }
        let mut t = self.task(points, ctx, i)?;
        let action = match t.state {
            St::Running => {
                self.running = Some(ctx);
                return self.plain(r, ts, &t.name, t.inst);
            }
            St::Active => "start",
            St::Ready => "resume",
            St::Waiting => {
                self.proc(r, ts, "T", (&t.name, t.inst), "release", true)?;
                "resume"
            }
            St::Idle => {
                // Running with no activation logged: a new instance, whose start the
                // derive stage reports (`unknown_prior_state`).
                t.inst += 1;
                "start"
            }
        };
        self.proc(r, ts, "T", (&t.name, t.inst), action, false)?;
        t.state = St::Running;
        t.unreleased = false;
        self.running = Some(ctx);
        if let Some(m) = t.lock_wait.filter(|m| self.held_by_other(*m, ctx).is_none()) {
            // Its mutex_lock found the mutex held; it is free now and the task runs: the
            // kernel's lock loop takes it.
            t.lock_wait = None;
            let note = self.note(r, true);
            let sem = format!("mutex_{m}");
            self.emit(r, ts, &t.name, t.inst, ("SEM", &sem, -1), "assigned", &note, None)?;
            hold(&mut t, m);
            self.owner.insert(m, ctx);
        }
        self.set_task(ctx, t);
        Ok(())
    }

    /// The context other than `ctx` that mutex `m` is assigned to, if any.
    fn held_by_other(&self, m: u32, ctx: u16) -> Option<u16> {
        let o = *self.owner.get(&m)?;
        (o != ctx && self.tasks.get(&o).is_some_and(|t| t.holds.contains(&m))).then_some(o)
    }

    fn interrupt_end(&mut self, r: &Rec, ts: i64) -> Result<()> {
        let n = r.par1;
        let Some(at) = self.irqs.iter().rposition(|(k, _)| *k == n) else {
            let m = format!(
                "interrupt_end of IRQ{n} with no interrupt_start open for it (the log started \
                 inside it, or its start was lost): kept as an event"
            );
            self.diag(Severity::Info, "lost_interrupt_start", r.pos(), Some(ts), m)?;
            let name = self.irq(n);
            return self.plain(r, ts, &name, -1);
        };
        while self.irqs.len() > at + 1 {
            let Some((k, inst)) = self.irqs.pop() else { break };
            let name = format!("IRQ{k}");
            let m = format!(
                "IRQ{k} instance {inst}, nested in IRQ{n}, has no interrupt_end: it ends with \
                 IRQ{n}'s"
            );
            self.diag(Severity::Warning, "lost_interrupt_end", r.pos(), Some(ts), m)?;
            self.proc(r, ts, "I", (&name, inst), "terminate", true)?;
        }
        if let Some((_, inst)) = self.irqs.pop() {
            self.proc(r, ts, "I", (&format!("IRQ{n}"), inst), "terminate", false)?;
        }
        Ok(())
    }

    fn mutex(
        &mut self,
        recs: &[Rec],
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let ctx = r.par1;
        let mut t = self.task(points, ctx, i)?;
        let Some(m) = r.par2() else {
            // The fast variant did not write which mutex.
            self.fast_unmapped += 1;
            return self.plain(r, ts, &t.name, t.inst);
        };
        let sem = format!("mutex_{m}");
        if !self.sems.contains(&m) {
            if self.sems.len() >= MAX_ENTITIES {
                let msg = format!(
                    "more than {MAX_ENTITIES} mutexes: {sem} is not a semaphore, its record is \
                     kept as an event of the task (memory stays bounded)"
                );
                self.diag(Severity::Warning, "too_many_entities", r.pos(), Some(ts), msg)?;
                self.set_task(ctx, t.clone());
                return self.plain(r, ts, &t.name, t.inst);
            }
            self.sems.insert(m);
            self.sink.declare_entity(&sem, Some("SEM"), None);
        }
        let (task, inst) = (t.name.clone(), t.inst);
        let sem_event = |me: &mut Self, action: &str, implied: bool| {
            let note = me.note(r, implied);
            me.emit(r, ts, &task, inst, ("SEM", &sem, -1), action, &note, None)
        };
        // A contended request: the task waits (off its core when it was running).
        let block = |me: &mut Self, t: &mut Task| -> Result<()> {
            sem_event(me, "requestsemaphore", false)?;
            sem_event(me, "waiting", true)?;
            if t.state == St::Running {
                me.proc(r, ts, "T", (&t.name, t.inst), "wait", true)?;
                t.state = St::Waiting;
                me.running = None;
            }
            Ok(())
        };
        match r.code() {
            0x46 if !blocks(recs, i, ctx) => {
                // A semaphore wait that did not block (the kernel logs both): taken at once.
                sem_event(self, "requestsemaphore", false)?;
                sem_event(self, "assigned", true)?;
                hold(&mut t, m);
            }
            0x46 => {
                block(self, &mut t)?;
                t.waiting_on = Some(m);
                let q = self.blocked.entry(m).or_default();
                q.retain(|c| *c != ctx);
                if q.len() >= MAX_BLOCKED {
                    q.pop_front();
                }
                q.push_back(ctx);
            }
            0x16 if t.waiting_on != Some(m) && self.held_by_other(m, ctx).is_some() => {
                // mutex_lock() logs before it tries: the mutex is held, the task blocks
                // (under priority inheritance the holder runs in its place) and takes it
                // when it runs again once the mutex is free.
                block(self, &mut t)?;
                t.lock_wait = Some(m);
            }
            0x16 => {
                self.owner.insert(m, ctx);
                if t.waiting_on == Some(m) {
                    if t.state == St::Waiting {
                        self.proc(r, ts, "T", (&t.name, t.inst), "release", true)?;
                        t.state = St::Ready;
                    }
                    t.waiting_on = None;
                } else {
                    sem_event(self, "requestsemaphore", true)?;
                }
                sem_event(self, "assigned", false)?;
                hold(&mut t, m);
            }
            0x56 => {
                // sem_post: the release of a semaphore the task holds, else a signal (kept
                // as is); it frees the first task blocked on it, which is assigned it.
                if let Some(k) = t.holds.iter().rposition(|h| *h == m) {
                    t.holds.remove(k);
                    sem_event(self, "released", false)?;
                } else {
                    self.plain(r, ts, &t.name, t.inst)?;
                }
                self.set_task(ctx, t.clone());
                self.wake(r, ts, m, &sem)?;
                return Ok(());
            }
            _ => {
                if let Some(k) = t.holds.iter().rposition(|h| *h == m) {
                    t.holds.remove(k);
                }
                if self.owner.get(&m) == Some(&ctx) {
                    self.owner.remove(&m);
                }
                sem_event(self, "released", false)?;
            }
        }
        self.set_task(ctx, t);
        Ok(())
    }

    /// A `mutex_post` of semaphore `m`: the first task still blocked on it is released
    /// (ready) and assigned it.
    fn wake(&mut self, r: &Rec, ts: i64, m: u32, sem: &str) -> Result<()> {
        while let Some(c) = self.blocked.get_mut(&m).and_then(VecDeque::pop_front) {
            let Some(mut w) = self.tasks.get(&c).cloned() else { continue };
            if w.waiting_on != Some(m) {
                continue;
            }
            if w.state == St::Waiting {
                self.proc(r, ts, "T", (&w.name, w.inst), "release", true)?;
                w.state = St::Ready;
            }
            w.waiting_on = None;
            let note = self.note(r, true);
            self.emit(r, ts, &w.name, w.inst, ("SEM", sem, -1), "assigned", &note, None)?;
            hold(&mut w, m);
            self.set_task(c, w);
            break;
        }
        Ok(())
    }

    /// Ends the `interrupts` interval of the core opened by the first CLI, if one is open
    /// (`end`: the STI's time, `None` at the end of the log).
    fn interrupts_enabled(&mut self, end: Option<i64>, pos: Pos) -> Result<()> {
        if let Some(since) = self.cli_since.take() {
            self.sink.span(&Span {
                entity: CORE,
                entity_type: "C",
                channel: "interrupts",
                state: "disabled",
                value: None,
                begin: since,
                end,
                core: Some(CORE),
                pos,
            })?;
        }
        Ok(())
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

/// Notes that task `t` holds semaphore `m` (the oldest hold is forgotten beyond
/// [`MAX_HELD`]).
fn hold(t: &mut Task, m: u32) {
    if t.holds.len() >= MAX_HELD {
        t.holds.remove(0);
    }
    t.holds.push(m);
}

/// Whether the task `ctx`, whose `mutex_wait` is record `i`, blocks: the kernel's
/// `sem_wait` logs it whether it blocks or not, and, interrupts off, one that blocks calls
/// the scheduler at once, so the next record (past the task's own epilogue) is the
/// scheduling of another task. At the end of the log, with nothing to tell, it blocks.
fn blocks(recs: &[Rec], i: usize, ctx: u16) -> bool {
    match recs.iter().skip(i + 1).find(|r| !(r.code() == 0x32 && r.par1 == ctx)) {
        Some(r) => matches!(r.code(), 0x22 | 0x82) && r.par1 != ctx,
        None => true,
    }
}

/// The cycles per ms a record gives: `cycles_per_msec`'s par2, and `trace_start`'s, where
/// the kernel's demos log `clk_per_msec` (`TRACER_LOGEVENT(FTrace_EVT_trace_start, ctx,
/// clk_per_msec)`; `cycles_per_msec` itself is logged only when the CPU frequency changes).
/// Not 0 (FTrace.h calls trace_start's par2 empty) nor stale (the fast variant).
pub(super) fn rate_of(r: &Rec) -> Option<u32> {
    matches!(r.code(), 0x10 | 0x20).then(|| r.par2()).flatten().filter(|c| *c > 0)
}

/// Whether the task `ctx`, running when its epilogue `i` is logged, loses the CPU: the
/// next scheduling record is another task's dispatch (or none comes), not its own
/// dispatch, end of cycle, sleep, end or mutex wait.
fn preempted(recs: &[Rec], i: usize, ctx: u16) -> bool {
    for r in recs.iter().skip(i + 1).take(LOOKAHEAD) {
        match r.code() {
            0x22 | 0x82 => return r.par1 != ctx,
            0x42 | 0x62 | 0x72 | 0x46 if r.par1 == ctx => return false,
            _ => {}
        }
    }
    true
}

/// The family a filter code stands for, as FTrace.h names its `FTrace_filter_*` codes.
fn family_name(fam: usize) -> &'static str {
    const NAMES: [&str; 12] = [
        "general",
        "ipoint",
        "task",
        "interrupt",
        "CPU",
        "priority",
        "mutex",
        "signal",
        "server",
        "user",
        "data",
        "timer",
    ];
    NAMES.get(fam).copied().unwrap_or("unnamed")
}
