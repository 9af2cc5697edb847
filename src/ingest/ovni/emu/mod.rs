//! ovni's own model, replayed from the events: thread states, the CPU each thread runs on,
//! the threads on each CPU, buffer flushes and libovni marks. Each change is a channel set
//! named as ovni's emulator names the Paraver event type (so intervals from the streams and
//! from the emulator's `thread.prv`/`cpu.prv` land in the same channels). The nOS-V and
//! Nanos6 models' raw channels ([`super::runtime`]) are shown here too, on the thread row as
//! its state allows and on the CPU row as its one running thread's.
use super::super::{ChannelSet, Diagnostic, Severity, Sink};
use super::meta::MarkType;
use super::runtime::{self, Caps, RtThread, Runtime, Track};
use super::spec::Decoded;
use crate::model::strings::FastMap;
use crate::model::Pos;
use crate::Result;
use std::collections::{BTreeMap, HashMap};

mod channels;
mod marks;

/// ovni's thread states (`enum thread_state`), their Paraver values and labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum St {
    /// Before its first `OHx`.
    Unknown = 0,
    /// Running on its CPU.
    Running = 1,
    /// Paused (`OHp`).
    Paused = 2,
    /// Ended (`OHe`).
    Dead = 3,
    /// About to be paused (`OHc`).
    Cooling = 4,
    /// About to run again (`OHw`).
    Warming = 5,
}

impl St {
    fn label(self) -> &'static str {
        match self {
            St::Unknown => "Unknown",
            St::Running => "Running",
            St::Paused => "Paused",
            St::Dead => "Dead",
            St::Cooling => "Cooling",
            St::Warming => "Warming",
        }
    }
    fn active(self) -> bool {
        matches!(self, St::Running | St::Cooling | St::Warming)
    }
}

/// Channel names (the Paraver type names ovni's PCF gives; CPU types 1-3 have no name in
/// ovni's `cpu.pcf`, so the Paraver importer names them by number, and so do we).
/// Thread channel: its CPU (value: global CPU index + 1, label: CPU name).
pub const CH_TH_CPU: &str = "Thread: CPU affinity";
/// Thread channel: its tid while it is active.
pub const CH_TH_TID: &str = "Thread: TID of the ACTIVE thread";
/// Thread channel: its state.
pub const CH_TH_STATE: &str = "Thread: thread state";
/// Thread channel: flushing its buffer.
pub const CH_TH_FLUSH: &str = "Flushing ovni buffer";
/// CPU channel: pid of the one thread running on it.
pub const CH_CPU_PID: &str = "1";
/// CPU channel: tid of the one thread running on it.
pub const CH_CPU_TID: &str = "2";
/// CPU channel: number of threads running on it (0 is a value).
pub const CH_CPU_NRUN: &str = "3";
/// CPU channel: its running thread flushes its buffer.
pub const CH_CPU_FLUSH: &str = "Flushing ovni buffer of the RUNNING thread";

/// The Paraver types of ovni's own channels in thread.pcf (`model_thread.c`, `ovni/setup.c`).
const TH_TYPES: [(i64, &str); 4] =
    [(6, CH_TH_CPU), (2, CH_TH_TID), (4, CH_TH_STATE), (7, CH_TH_FLUSH)];
/// The Paraver types of ovni's own channels in cpu.pcf (its types 1-3 are not there).
const CPU_TYPES: [(i64, &str); 1] = [(7, CH_CPU_FLUSH)];

/// A CPU of a loom (or its virtual CPU).
#[derive(Debug, Clone)]
pub struct Cpu {
    /// `CPU <loom>.<phyid>` / `vCPU <loom>.*`.
    pub name: String,
    /// Position in ovni's global CPU list (the Paraver value is this + 1).
    pub gindex: i64,
    /// Threads assigned to it, in the order they came.
    threads: Vec<usize>,
    /// It has had one running thread (ovni's select channel was set): from then on, its
    /// runtime channels show their default when no single thread runs on it.
    had_running: bool,
}

/// A thread (one stream).
#[derive(Debug, Clone)]
pub struct Thread {
    /// `TH <app>.<tid>`.
    pub name: String,
    /// Thread id.
    pub tid: i64,
    /// Process id.
    pub pid: i64,
    /// Index of its loom.
    pub loom: usize,
    /// State.
    pub state: St,
    /// Index of its CPU in [`Model::cpus`].
    pub cpu: Option<usize>,
    flushing: bool,
    /// Mark channels: type -> stack (a single channel holds at most one value).
    marks: BTreeMap<i64, Vec<i64>>,
}

/// A loom: its CPUs by index (`OHx`'s cpu field), and its virtual CPU.
#[derive(Debug, Clone, Default)]
pub struct Loom {
    /// CPU (in [`Model::cpus`]) of each index.
    pub by_index: HashMap<i64, usize>,
    /// Its virtual CPU.
    pub vcpu: usize,
}

/// The model state and what was emitted last per channel (only changes are emitted).
pub struct Model {
    /// All CPUs, in ovni's global order.
    pub cpus: Vec<Cpu>,
    /// All threads, in stream order.
    pub threads: Vec<Thread>,
    /// Looms, sorted by name.
    pub looms: Vec<Loom>,
    marks: BTreeMap<i64, MarkType>,
    /// Each mark type's channel name on a thread row and on a CPU row.
    mark_names: BTreeMap<i64, [String; 2]>,
    /// Per thread row (0) and CPU row (1): the built-in channels renamed because a mark type
    /// shares their title (built-in name -> channel name).
    renamed: [HashMap<&'static str, String>; 2],
    /// Per thread row (0) and CPU row (1), the value each channel last emitted.
    last: [Vec<channels::Shown>; 2],
    /// Mark types already reported unknown, and other once-per-kind notes.
    said: std::collections::HashSet<String>,
    /// (thread, mark type) -> pushes refused on a full stack, not popped yet.
    mark_overflow: FastMap<(usize, i64), u64>,
    /// Mark types used without being declared (each gets a channel).
    unknown_marks: usize,
    /// The nOS-V and Nanos6 models.
    runtime: Runtime,
    /// Per thread (as `threads`), what the runtime models hold.
    rt: Vec<RtThread>,
    /// A runtime model is enabled by its first event (no stream's metadata requires any
    /// model, as before ovni 1.5); else only by the metadata.
    lazy_models: bool,
    /// The other thread the event last applied moved (`OAr`).
    moved: Option<usize>,
}

/// Depth of a thread's stack of one mark type: ovni's `MAX_CHAN_STACK`, beyond which its
/// emulator stops.
pub const MAX_MARK_STACK: usize = 512;

/// Mark types that no metadata declares followed at most (each is a channel on every thread
/// and CPU row): the events of further ones change no channel (`too_many_mark_types`).
pub const MAX_UNKNOWN_MARK_TYPES: usize = 256;

/// Where the event being applied comes from.
#[derive(Debug, Clone, Copy)]
pub struct At {
    /// Time (ns from the origin).
    pub ts: i64,
    /// Position in its stream.
    pub pos: Pos,
}

/// A warning about a thread's event at `at` (the ovni model's and the runtimes').
pub(super) fn warn(sink: &mut dyn Sink, kind: &'static str, at: At, message: String) -> Result<()> {
    sink.diagnostic(Diagnostic {
        severity: Severity::Warning,
        kind,
        pos: at.pos,
        ts: Some(at.ts),
        message,
    })
}

impl Model {
    /// A model of `threads` on `cpus` (grouped by `looms`), with the mark types declared, its
    /// runtime models within the memory bounds `caps`.
    pub fn new(
        cpus: Vec<Cpu>,
        looms: Vec<Loom>,
        marks: BTreeMap<i64, MarkType>,
        caps: Caps,
    ) -> Self {
        let mut model = Model {
            cpus,
            threads: Vec::new(),
            looms,
            marks,
            mark_names: BTreeMap::new(),
            renamed: Default::default(),
            last: Default::default(),
            said: Default::default(),
            mark_overflow: FastMap::default(),
            unknown_marks: 0,
            runtime: Runtime::with_caps(caps),
            rt: Vec::new(),
            lazy_models: true,
            moved: None,
        };
        // Until the metadata says which runtime models the trace requires, any may be.
        model.name_channels([true; runtime::MODELS.len()]);
        model
    }

    /// The runtime models (task types, whether the last event was refused).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Thread `th` is Running.
    pub fn running(&self, th: usize) -> bool {
        self.threads.get(th).is_some_and(|t| t.state == St::Running)
    }

    /// The other thread the event last applied moved to a CPU (`OAr`), if any.
    pub fn moved(&self) -> Option<usize> {
        self.moved
    }

    /// Enables the runtime models the streams' metadata requires (`ovni.require`:
    /// `nosv`, `nanos6`), once all threads are added; with no requirement at all, a model is
    /// enabled by its first event.
    pub fn require(&mut self, required: &[String]) {
        if required.is_empty() {
            return;
        }
        self.lazy_models = false;
        let mut on = [false; runtime::MODELS.len()];
        for (m, name) in ["nosv", "nanos6"].iter().enumerate() {
            if required.iter().any(|r| r.split('=').next() == Some(name)) {
                self.runtime.enable(m, &mut self.rt);
                if let Some(o) = on.get_mut(m) {
                    *o = true;
                }
            }
        }
        self.name_channels(on);
    }

    /// A new CPU.
    pub fn cpu(name: String, gindex: i64) -> Cpu {
        Cpu { name, gindex, threads: Vec::new(), had_running: false }
    }

    /// Adds a thread of process `proc` (application `appid`, MPI `rank`); returns its index.
    #[allow(clippy::too_many_arguments)]
    pub fn add_thread(
        &mut self,
        name: String,
        tid: i64,
        pid: i64,
        loom: usize,
        proc: usize,
        appid: i64,
        rank: Option<i64>,
    ) -> usize {
        self.rt.push(RtThread { proc, appid, rank, ..RtThread::default() });
        self.runtime.add_thread(self.rt.last_mut());
        self.threads.push(Thread {
            name,
            tid,
            pid,
            loom,
            state: St::Unknown,
            cpu: None,
            flushing: false,
            marks: BTreeMap::new(),
        });
        self.threads.len() - 1
    }

    /// The CPU thread `th` is on, if any.
    pub fn cpu_of(&self, th: usize) -> Option<&str> {
        let c = self.threads.get(th)?.cpu?;
        self.cpus.get(c).map(|c| c.name.as_str())
    }

    fn th_name(&self, th: usize) -> String {
        self.threads.get(th).map(|t| t.name.clone()).unwrap_or_default()
    }

    /// The CPU of loom `loom` at `index` (-1: the virtual CPU).
    fn find_cpu(
        &mut self,
        loom: usize,
        index: i128,
        th: usize,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<Option<usize>> {
        let Some(l) = self.looms.get(loom) else { return Ok(None) };
        if index == -1 {
            return Ok(Some(l.vcpu));
        }
        let found = i64::try_from(index).ok().and_then(|i| l.by_index.get(&i).copied());
        if found.is_none() {
            let msg = format!(
                "{}: CPU index {index} is not among its loom's CPUs (stream.json loom_cpus): \
                 the event is kept, the thread's CPU is unchanged",
                self.th_name(th)
            );
            warn(sink, "unknown_cpu", at, msg)?;
        }
        Ok(found)
    }

    fn attach(&mut self, th: usize, cpu: usize) {
        if let Some(old) = self.threads.get(th).and_then(|t| t.cpu) {
            if let Some(c) = self.cpus.get_mut(old) {
                c.threads.retain(|&t| t != th);
            }
        }
        if let Some(c) = self.cpus.get_mut(cpu) {
            if !c.threads.contains(&th) {
                c.threads.push(th);
            }
        }
        if let Some(t) = self.threads.get_mut(th) {
            t.cpu = Some(cpu);
        }
    }

    fn detach(&mut self, th: usize) {
        if let Some(old) = self.threads.get(th).and_then(|t| t.cpu) {
            if let Some(c) = self.cpus.get_mut(old) {
                c.threads.retain(|&t| t != th);
            }
        }
        if let Some(t) = self.threads.get_mut(th) {
            t.cpu = None;
        }
    }

    /// Moves thread `th` to state `to` if it is in one of `from`; else says so and moves it
    /// anyway (the stream says where it is now).
    fn transition(
        &mut self,
        th: usize,
        from: &[St],
        to: St,
        mcv: &str,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(t) = self.threads.get_mut(th) else { return Ok(()) };
        let was = t.state;
        t.state = to;
        if !from.contains(&was) {
            let msg = format!(
                "{} {mcv} in state {}: ovni's emulator allows it only from {}; the thread is \
                 taken as {} from here",
                self.th_name(th),
                was.label(),
                from.iter().map(|s| s.label()).collect::<Vec<_>>().join(" or "),
                to.label()
            );
            warn(sink, "bad_thread_transition", at, msg)?;
        }
        Ok(())
    }

    /// Applies one event of thread `th`; then emits the channels it changed.
    pub fn apply(
        &mut self,
        th: usize,
        mcv: [u8; 3],
        d: Option<&Decoded>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let before_cpu = self.threads.get(th).and_then(|t| t.cpu);
        let loom = self.threads.get(th).map_or(0, |t| t.loom);
        let mut other: Option<usize> = None;
        let mut other_cpu: Option<usize> = None;
        self.moved = None;
        self.runtime.clear_ignored();
        let code = String::from_utf8_lossy(&mcv);
        match &mcv {
            b"OHx" => {
                let cpu = d.and_then(|d| d.int("cpu"));
                // ovni executes only a thread with no CPU: before its first OHx or after its
                // OHe (`pre_thread_execute` refuses a running one, `thread_set_cpu` one that
                // has a CPU, as Paused, Cooling and Warming threads do).
                self.transition(th, &[St::Unknown, St::Dead], St::Running, &code, at, sink)?;
                if let Some(idx) = cpu {
                    if let Some(c) = self.find_cpu(loom, idx, th, at, sink)? {
                        self.attach(th, c);
                    }
                }
            }
            b"OHe" => {
                self.transition(th, &[St::Running, St::Cooling], St::Dead, &code, at, sink)?;
                self.detach(th);
            }
            b"OHp" => {
                self.transition(th, &[St::Running, St::Cooling], St::Paused, &code, at, sink)?
            }
            b"OHr" => {
                self.transition(th, &[St::Paused, St::Warming], St::Running, &code, at, sink)?
            }
            b"OHc" => self.transition(th, &[St::Running], St::Cooling, &code, at, sink)?,
            b"OHw" => self.transition(th, &[St::Paused], St::Warming, &code, at, sink)?,
            b"OAs" => {
                let (state, has_cpu) = self
                    .threads
                    .get(th)
                    .map_or((St::Unknown, false), |t| (t.state, t.cpu.is_some()));
                if !state.active() || !has_cpu {
                    // ovni's `pre_affinity_set` refuses it (and its emulator stops).
                    let msg = format!(
                        "{} OAs while the thread is {}{}: ovni's emulator refuses it; ignored, \
                         the thread's CPU is unchanged",
                        self.th_name(th),
                        state.label(),
                        if has_cpu { "" } else { " with no CPU" }
                    );
                    warn(sink, "bad_affinity", at, msg)?;
                } else if let Some(idx) = d.and_then(|d| d.int("cpu")) {
                    if let Some(c) = self.find_cpu(loom, idx, th, at, sink)? {
                        self.attach(th, c);
                    }
                }
            }
            b"OAr" => {
                let tid = d.and_then(|d| d.int("tid"));
                let remote = self
                    .threads
                    .iter()
                    .position(|t| t.loom == loom && tid == Some(i128::from(t.tid)));
                let refused = remote.and_then(|r| self.threads.get(r)).and_then(|t| {
                    // ovni's `pre_affinity_remote` refuses a thread that is Dead, has not
                    // run yet or has no CPU (and its emulator stops).
                    let bad = matches!(t.state, St::Dead | St::Unknown) || t.cpu.is_none();
                    bad.then(|| (t.name.clone(), t.state, t.cpu.is_some()))
                });
                match (remote, d.and_then(|d| d.int("cpu"))) {
                    (Some(_), Some(_)) if refused.is_some() => {
                        let (name, state, has_cpu) =
                            refused.unwrap_or((String::new(), St::Unknown, false));
                        let msg = format!(
                            "{} OAr moves {name} while it is {}{}: ovni's emulator refuses it; \
                             ignored, the thread's CPU is unchanged",
                            self.th_name(th),
                            state.label(),
                            if has_cpu { "" } else { " with no CPU" }
                        );
                        warn(sink, "bad_affinity", at, msg)?;
                    }
                    (Some(r), Some(idx)) => {
                        other = Some(r);
                        self.moved = Some(r);
                        other_cpu = self.threads.get(r).and_then(|t| t.cpu);
                        if let Some(c) = self.find_cpu(loom, idx, th, at, sink)? {
                            self.attach(r, c);
                        }
                    }
                    _ => {
                        let msg = format!(
                            "{} OAr names thread {} that has no stream in its loom: ignored",
                            self.th_name(th),
                            tid.map_or("?".into(), |t| t.to_string())
                        );
                        warn(sink, "unknown_thread", at, msg)?;
                    }
                }
            }
            b"OF[" | b"OF]" => {
                if let Some(t) = self.threads.get_mut(th) {
                    t.flushing = mcv[2] == b'[';
                }
            }
            b"OM[" | b"OM]" | b"OM=" => self.mark(th, mcv[2], d, at, sink)?,
            [m, ..] => {
                let Some(mi) = runtime::model_index(*m) else { return Ok(()) };
                if !self.runtime.on.get(mi).copied().unwrap_or(false) {
                    if !self.lazy_models {
                        // ovni's emulator stops at an event of a model no stream requires.
                        self.runtime.ignore();
                        let model = if mi == 0 { "nosv" } else { "nanos6" };
                        if self.said.insert(format!("model {model}")) {
                            let msg = format!(
                                "{} {code}: model {model} not enabled (no stream's metadata \
                                 requires it, ovni.require; ovni's emulator stops here): its \
                                 events are kept in events, they change no channel and no task \
                                 (reported once per model)",
                                self.th_name(th)
                            );
                            warn(sink, "model_not_enabled", at, msg)?;
                        }
                        return Ok(());
                    }
                    // ovni connects a model for every thread: all rows may change.
                    self.runtime.enable(mi, &mut self.rt);
                    for t in 0..self.threads.len() {
                        if t != th {
                            self.emit_thread(t, at, sink)?;
                        }
                    }
                    for c in 0..self.cpus.len() {
                        self.emit_cpu(c, at, sink)?;
                    }
                }
                let (name, state) =
                    self.threads.get(th).map_or(("", St::Unknown), |t| (t.name.as_str(), t.state));
                if !state.active() {
                    // ovni's models refuse an event of a thread that is not active
                    // ("current thread not active") and its emulator stops.
                    self.runtime.ignore();
                    let msg = format!(
                        "{name} {code} while the thread is {} (not Running, Cooling or \
                         Warming; ovni's emulator refuses a nOS-V/Nanos6 event there and stops): \
                         kept in events, it changes no channel and no task",
                        state.label()
                    );
                    warn(sink, "thread_not_active", at, msg)?;
                } else {
                    self.runtime.apply(mi, mcv, d, &mut self.rt, th, name, at, sink)?;
                }
            }
        }
        self.emit_thread(th, at, sink)?;
        let after_cpu = self.threads.get(th).and_then(|t| t.cpu);
        if let Some(r) = other {
            self.emit_thread(r, at, sink)?;
        }
        let other_after = other.and_then(|r| self.threads.get(r)).and_then(|t| t.cpu);
        let cpus = [before_cpu, after_cpu, other_cpu, other_after];
        for (i, c) in cpus.iter().enumerate() {
            // Each CPU once, in this order.
            if let Some(c) = *c {
                if !cpus.iter().take(i).any(|d| *d == Some(c)) {
                    self.emit_cpu(c, at, sink)?;
                }
            }
        }
        Ok(())
    }
}
