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
    /// Per CPU (`true`) or thread: channel -> value last emitted.
    last: FastMap<(bool, usize), FastMap<String, i128>>,
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

/// The channel names the Paraver ingest gives the types of one .pcf of the emulator (thread.pcf
/// or cpu.pcf): ovni's own channels `builtin` (type, title) and the mark types, Paraver types
/// `100 + type` labelled with their titles, trimmed. An empty title is the number, and a title
/// two types of the file share (two marks, or a mark and an own channel), one of tracedb's own
/// channel names (`state`, `running`, `value`) or another number (cpu.pcf leaves its types 1-3
/// unnamed) gets the type appended (`Phase (101)`, `Thread: thread state (4)`, `1 (101)`), so
/// two types never share a channel. Returns the own channels so renamed and each mark type's
/// name.
fn paraver_names(
    builtin: &[(i64, &'static str)],
    marks: &BTreeMap<i64, MarkType>,
) -> (HashMap<&'static str, String>, BTreeMap<i64, String>) {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    for (_, title) in builtin {
        *seen.entry(title).or_default() += 1;
    }
    for m in marks.values() {
        *seen.entry(m.title.trim()).or_default() += 1;
    }
    let name = |title: &str, prv_type: i64| {
        let shared = seen.get(title).is_some_and(|n| *n > 1);
        crate::ingest::prv::pcf::channel_name(title, i128::from(prv_type), shared)
    };
    let renamed = builtin
        .iter()
        .filter_map(|&(ty, title)| Some((title, name(title, ty))).filter(|(t, n)| t != n))
        .collect();
    let names = marks.iter().map(|(ty, m)| (*ty, name(m.title.trim(), ty.saturating_add(100))));
    (renamed, names.collect())
}

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
            last: FastMap::default(),
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

    /// Names the mark channels and renames the built-in ones a mark shares a title with, as
    /// the Paraver ingest names the types of the emulator's thread.pcf and cpu.pcf, where the
    /// channels of the runtime models `models` (as [`runtime::MODELS`]) are.
    fn name_channels(&mut self, models: [bool; runtime::MODELS.len()]) {
        for (side, cpu) in [false, true].into_iter().enumerate() {
            let mut builtin: Vec<(i64, &'static str)> =
                if cpu { CPU_TYPES.to_vec() } else { TH_TYPES.to_vec() };
            for ((_, specs), on) in runtime::MODELS.iter().zip(models) {
                if on {
                    builtin
                        .extend(specs.iter().map(|c| (c.prv, if cpu { c.cpu } else { c.thread })));
                }
            }
            let (renamed, names) = paraver_names(&builtin, &self.marks);
            if let Some(r) = self.renamed.get_mut(side) {
                *r = renamed;
            }
            for (ty, name) in names {
                if let Some(n) = self.mark_names.entry(ty).or_default().get_mut(side) {
                    *n = name;
                }
            }
        }
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
        let code = String::from_utf8_lossy(&mcv).into_owned();
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
                let name = self.th_name(th);
                let state = self.threads.get(th).map_or(St::Unknown, |t| t.state);
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
                    self.runtime.apply(mi, mcv, d, &mut self.rt, th, &name, at, sink)?;
                }
            }
        }
        self.emit_thread(th, at, sink)?;
        let after_cpu = self.threads.get(th).and_then(|t| t.cpu);
        if let Some(r) = other {
            self.emit_thread(r, at, sink)?;
        }
        let mut cpus = vec![before_cpu, after_cpu, other_cpu];
        if let Some(r) = other {
            cpus.push(self.threads.get(r).and_then(|t| t.cpu));
        }
        let mut done = Vec::new();
        for c in cpus.into_iter().flatten() {
            if !done.contains(&c) {
                done.push(c);
                self.emit_cpu(c, at, sink)?;
            }
        }
        Ok(())
    }

    fn mark(
        &mut self,
        th: usize,
        op: u8,
        d: Option<&Decoded>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let (Some(value), Some(ty)) =
            (d.and_then(|d| d.int("value")), d.and_then(|d| d.int("type")))
        else {
            return Ok(());
        };
        let (Ok(value), Ok(ty)) = (i64::try_from(value), i64::try_from(ty)) else { return Ok(()) };
        if !self.marks.contains_key(&ty) {
            if self.unknown_marks >= MAX_UNKNOWN_MARK_TYPES {
                if self.said.insert("marks_full".into()) {
                    let msg = format!(
                        "more than {MAX_UNKNOWN_MARK_TYPES} mark types that no metadata declares: \
                         the events of further undeclared types are kept, they change no channel"
                    );
                    warn(sink, "too_many_mark_types", at, msg)?;
                }
                return Ok(());
            }
            self.unknown_marks += 1;
            // A declared mark may be titled `Mark <ty>` (or a built-in channel so renamed):
            // the type is then appended, as for two declared types titled alike, so that
            // the two never share a channel.
            let plain = format!("Mark {ty}");
            let taken = self.mark_names.values().flatten().any(|n| *n == plain)
                || self.renamed.iter().flat_map(HashMap::values).any(|n| *n == plain);
            let name = if taken { format!("{plain} ({})", ty.saturating_add(100)) } else { plain };
            if self.said.insert(format!("mark{ty}")) {
                let msg = format!(
                    "mark type {ty} is not declared in any stream's metadata (ovni.mark): its \
                     events are kept, its channel is named '{name}'"
                );
                warn(sink, "unknown_mark_type", at, msg)?;
            }
            self.mark_names.insert(ty, [name.clone(), name.clone()]);
            self.marks
                .insert(ty, MarkType { title: name, stack: op != b'=', labels: BTreeMap::new() });
        }
        if value == 0 {
            let msg =
                format!("{} mark value 0 (type {ty}): ovni refuses it; ignored", self.th_name(th));
            return warn(sink, "bad_mark", at, msg);
        }
        let name = self.th_name(th);
        // ovni's emulator sets only a single channel and pushes and pops only a stack one
        // (`chan_set`/`chan_push`/`chan_pop` refuse the other type, and it stops): said, and
        // applied all the same (a set replaces the whole stack).
        let stack = self.marks.get(&ty).is_some_and(|m| m.stack);
        if stack == (op == b'=') {
            let (what, kind) = if stack { ("sets", "stack") } else { ("pushes or pops", "single") };
            let msg = format!(
                "{name} {what} mark {value} of type {ty}, a {kind} channel (metadata chan_type; \
                 ovni's emulator refuses it and stops): applied all the same"
            );
            warn(sink, "bad_mark", at, msg)?;
        }
        let Some(t) = self.threads.get_mut(th) else { return Ok(()) };
        let stack = t.marks.entry(ty).or_default();
        match op {
            b'[' if stack.len() >= MAX_MARK_STACK => {
                // Its pop is then a pop of nothing pushed (counted, not a bad_mark).
                *self.mark_overflow.entry((th, ty)).or_default() += 1;
                let msg = format!(
                    "{name} pushes mark {value} of type {ty} on a stack of {MAX_MARK_STACK} \
                     (ovni's limit, where its emulator stops): not pushed, nor popped later"
                );
                return warn(sink, "mark_stack_full", at, msg);
            }
            b']' if self.mark_overflow.get(&(th, ty)).is_some_and(|&n| n > 0) => {
                if let Some(n) = self.mark_overflow.get_mut(&(th, ty)) {
                    *n -= 1;
                }
            }
            b'[' => stack.push(value),
            b'=' => {
                self.mark_overflow.remove(&(th, ty));
                stack.clear();
                stack.push(value);
            }
            _ => match stack.last() {
                Some(&top) if top == value => {
                    stack.pop();
                }
                top => {
                    let msg = format!(
                        "{name} pops mark {value} of type {ty} but {} is on top: the top is \
                         popped",
                        top.map_or("nothing".into(), |v| v.to_string())
                    );
                    stack.pop();
                    return warn(sink, "bad_mark", at, msg);
                }
            },
        }
        Ok(())
    }

    /// Sets `channel` of a CPU (`who.0`) or thread `who.1` to `value`, when it changes.
    fn set(
        &mut self,
        who: (bool, usize),
        channel: &str,
        value: i128,
        label: Option<&str>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let (cpu_side, idx) = who;
        // A built-in channel a mark type shares its title with has the name the Paraver
        // ingest gives it (a mark's own name is never a built-in one's on its row).
        let renamed = self.renamed.get(usize::from(cpu_side)).and_then(|r| r.get(channel));
        let channel = renamed.map_or(channel, String::as_str);
        // A CPU's number of running threads is ovni's PRV_ZERO: 0 is a value, which ovni's
        // `cpu_update` writes as soon as a thread is placed on the CPU, also one that does
        // not run there (a paused thread moved by `OAr`).
        let zero_ends = !(cpu_side && channel == CH_CPU_NRUN);
        let placed = !zero_ends && self.cpus.get(idx).is_some_and(|c| !c.threads.is_empty());
        let seen = self.last.entry(who).or_default();
        match seen.get_mut(channel) {
            Some(v) if *v == value => return Ok(()),
            Some(v) => *v = value,
            None if value == 0 && !placed => return Ok(()),
            None => {
                seen.insert(channel.to_string(), value);
            }
        }
        let (entity, ty) = if cpu_side {
            (self.cpus.get(idx).map(|c| c.name.clone()).unwrap_or_default(), "CPU")
        } else {
            (self.th_name(idx), "THREAD")
        };
        sink.channel_set(&ChannelSet {
            entity: &entity,
            entity_type: ty,
            channel,
            ts: at.ts,
            value,
            zero_ends,
            label,
            core: None,
            pos: at.pos,
        })
    }

    fn mark_value(&self, th: usize, ty: i64) -> i128 {
        self.threads
            .get(th)
            .and_then(|t| t.marks.get(&ty))
            .and_then(|s| s.last())
            .map_or(0, |&v| i128::from(v))
    }

    fn emit_thread(&mut self, th: usize, at: At, sink: &mut dyn Sink) -> Result<()> {
        let Some(t) = self.threads.get(th) else { return Ok(()) };
        let (state, tid, flushing, cpu) = (t.state, t.tid, t.flushing, t.cpu);
        let (cpu_v, cpu_label) = match cpu.and_then(|c| self.cpus.get(c)) {
            Some(c) => (i128::from(c.gindex) + 1, Some(c.name.clone())),
            None => (0, None),
        };
        self.set((false, th), CH_TH_CPU, cpu_v, cpu_label.as_deref(), at, sink)?;
        let active = state.active();
        self.set((false, th), CH_TH_TID, if active { i128::from(tid) } else { 0 }, None, at, sink)?;
        if state != St::Unknown {
            self.set((false, th), CH_TH_STATE, state as i128, Some(state.label()), at, sink)?;
        }
        self.set((false, th), CH_TH_FLUSH, i128::from(flushing), Some("Flushing"), at, sink)?;
        // Taken out while the channels are set (`set` does not use them).
        let marks = std::mem::take(&mut self.marks);
        let names = std::mem::take(&mut self.mark_names);
        let mut result = Ok(());
        for (ty, m) in &marks {
            // Marks follow the thread while it is active (ovni's TRACK_TH_ACT).
            let v = if active { self.mark_value(th, *ty) } else { 0 };
            let label = i64::try_from(v).ok().and_then(|v| m.labels.get(&v));
            let name = names.get(ty).map_or(m.title.as_str(), |n| n[0].as_str());
            result = self.set((false, th), name, v, label.map(String::as_str), at, sink);
            if result.is_err() {
                break;
            }
        }
        self.marks = marks;
        self.mark_names = names;
        result?;
        self.emit_runtime_thread(th, at, sink)
    }

    /// The runtime models' channels of thread `th`, as its row shows them.
    fn emit_runtime_thread(&mut self, th: usize, at: At, sink: &mut dyn Sink) -> Result<()> {
        let Some(state) = self.threads.get(th).map(|t| t.state) else { return Ok(()) };
        for (m, (_, specs)) in runtime::MODELS.iter().enumerate() {
            if !self.runtime.on.get(m).copied().unwrap_or(false) {
                continue;
            }
            for (ch, spec) in specs.iter().enumerate() {
                let shown = match spec.track {
                    Track::Run => state == St::Running,
                    Track::Act => state.active(),
                    Track::Any => true,
                };
                let raw =
                    self.rt.get(th).and_then(|t| t.chans.get(m)).map_or(0, |c| c.raw(ch, spec));
                let v = if shown { raw } else { 0 };
                let label = self.runtime.label(m, ch, v);
                self.set((false, th), spec.thread, i128::from(v), label.as_deref(), at, sink)?;
            }
        }
        Ok(())
    }

    /// The runtime models' channels of CPU `c`: those of its one running thread `one`; with
    /// none or several, nothing, or the channel's default once it has had one.
    fn emit_runtime_cpu(
        &mut self,
        c: usize,
        one: Option<usize>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let had = self.cpus.get(c).is_some_and(|c| c.had_running);
        for (m, (_, specs)) in runtime::MODELS.iter().enumerate() {
            if !self.runtime.on.get(m).copied().unwrap_or(false) {
                continue;
            }
            for (ch, spec) in specs.iter().enumerate() {
                let v = match one {
                    Some(t) => {
                        self.rt.get(t).and_then(|t| t.chans.get(m)).map_or(0, |c| c.raw(ch, spec))
                    }
                    None if had => spec.cpu_default,
                    None => 0,
                };
                let label = self.runtime.label(m, ch, v);
                self.set((true, c), spec.cpu, i128::from(v), label.as_deref(), at, sink)?;
            }
        }
        Ok(())
    }

    fn emit_cpu(&mut self, c: usize, at: At, sink: &mut dyn Sink) -> Result<()> {
        let Some(cpu) = self.cpus.get(c) else { return Ok(()) };
        let running: Vec<usize> = cpu
            .threads
            .iter()
            .copied()
            .filter(|&t| self.threads.get(t).is_some_and(|t| t.state == St::Running))
            .collect();
        // One running thread: its ids, flush and marks; none or several: nothing (ovni
        // shows no value then).
        let one = match running.as_slice() {
            [t] => Some(*t),
            _ => None,
        };
        let nrun = running.len() as i128;
        // Only a virtual CPU may have several threads running (ovni's `cpu_update` stops on a
        // physical one): said when it starts.
        let virt = self.looms.iter().any(|l| l.vcpu == c);
        let before = self.last.get(&(true, c)).and_then(|m| m.get(CH_CPU_NRUN)).copied();
        if !virt && nrun > 1 && before.is_none_or(|b| b <= 1) {
            let names: Vec<String> = running.iter().map(|&t| self.th_name(t)).collect();
            let msg = format!(
                "{}: {nrun} threads running at the same time ({}): ovni's emulator allows it \
                 only on a virtual CPU and stops here; the CPU shows no thread's channels \
                 meanwhile",
                self.cpus.get(c).map_or("", |c| c.name.as_str()),
                names.join(", ")
            );
            warn(sink, "cpu_oversubscribed", at, msg)?;
        }
        let t = one.and_then(|t| self.threads.get(t)).map(|t| (t.pid, t.tid, t.flushing));
        self.set((true, c), CH_CPU_PID, t.map_or(0, |t| i128::from(t.0)), None, at, sink)?;
        self.set((true, c), CH_CPU_TID, t.map_or(0, |t| i128::from(t.1)), None, at, sink)?;
        self.set((true, c), CH_CPU_NRUN, nrun, None, at, sink)?;
        let flushing = t.is_some_and(|t| t.2);
        self.set((true, c), CH_CPU_FLUSH, i128::from(flushing), Some("Flushing"), at, sink)?;
        let marks = std::mem::take(&mut self.marks);
        let names = std::mem::take(&mut self.mark_names);
        let mut result = Ok(());
        for (ty, m) in &marks {
            let v = one.map_or(0, |t| self.mark_value(t, *ty));
            let label = i64::try_from(v).ok().and_then(|v| m.labels.get(&v));
            let name = names.get(ty).map_or(m.title.as_str(), |n| n[1].as_str());
            result = self.set((true, c), name, v, label.map(String::as_str), at, sink);
            if result.is_err() {
                break;
            }
        }
        self.marks = marks;
        self.mark_names = names;
        result?;
        if one.is_some() {
            if let Some(cpu) = self.cpus.get_mut(c) {
                cpu.had_running = true;
            }
        }
        self.emit_runtime_cpu(c, one, at, sink)
    }
}
