//! The task state machine of ovni's nOS-V and Nanos6 models: task types created, tasks and
//! their bodies executed, paused, resumed and ended (ovni's `task.c` and `body.c`), within
//! the memory bounds [`Caps`]. What ovni refuses is a warning and changes nothing
//! (`bad_task_event`); the thread's task channels follow the body on top of its stack.
use super::*;

/// A body's state (ovni's `enum body_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BState {
    Running,
    Paused,
    Dead,
}

impl BState {
    fn name(self) -> &'static str {
        match self {
            BState::Running => "Running",
            BState::Paused => "Paused",
            BState::Dead => "Dead",
        }
    }
}

#[derive(Debug)]
pub(super) struct Body {
    id: u32,
    state: BState,
}

/// A task not ended (a parallel one: some body not ended, or its ended bodies not numbered
/// 1, 2, ... without a gap).
#[derive(Debug)]
pub(super) struct Task {
    /// Type value.
    gid: i64,
    /// Type id, and whether that type was created when the task was.
    ty: u32,
    typed: bool,
    parallel: bool,
    /// An ordinary task's run: 1, then 2, 3, ... each time it runs again (ovni's iteration
    /// + 1).
    run: u32,
    /// A parallel task's bodies 1 to `dead_upto` ended (and are no longer in `bodies`).
    dead_upto: u32,
    /// Bodies executed (a parallel task's above `dead_upto`).
    bodies: Vec<Body>,
}

impl Task {
    /// Runs again after its end (an ordinary nOS-V task: ovni's `TASK_FLAG_RESURRECT`).
    fn resurrect(m: usize, parallel: bool) -> bool {
        m == 0 && !parallel
    }
    /// Executes over a running body (Nanos6's inline tasks: `TASK_FLAG_RELAX_NESTING`).
    fn relax(m: usize) -> bool {
        m == 1
    }
    fn state(&self, body: u32) -> Option<BState> {
        if body > 0 && body <= self.dead_upto {
            return Some(BState::Dead);
        }
        self.bodies.iter().find(|b| b.id == body).map(|b| b.state)
    }
}

/// What is remembered of an ended task (a parallel one: all its bodies ended, numbered 1 to
/// `n`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Ended {
    ty: u32,
    /// An ordinary task's runs so far; a parallel task's bodies.
    n: u32,
    typed: bool,
    parallel: bool,
}

/// What the task instances need of a task, not ended or remembered as ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfo {
    /// Type id.
    pub ty: u32,
    /// That type was created when the task was (else it is named `task type <ty>`).
    pub typed: bool,
    /// A parallel nOS-V task (`VTC`).
    pub parallel: bool,
    /// An ordinary task's current (or last) run: 1, then 2, 3, ... each time it runs again.
    pub run: u32,
}

/// A task or type of one model in one process: (model, process, id).
pub(super) type Key = (u8, u32, u32);

pub(super) fn key(m: usize, proc: usize, id: u32) -> Key {
    // Two models; processes are streams' (fewer than 2^32).
    (u8::try_from(m).unwrap_or(u8::MAX), u32::try_from(proc).unwrap_or(u32::MAX), id)
}

/// The memory bounds of the runtime models.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Tasks not ended plus bodies of parallel tasks not ended.
    pub followed: usize,
    /// Ended tasks remembered.
    pub ended: usize,
    /// Task types.
    pub types: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps { followed: MAX_FOLLOWED, ended: MAX_ENDED, types: MAX_TYPES }
    }
}

impl Runtime {
    /// The label of task type `id` of model `m` in process `proc`, if created.
    pub fn type_label_of(&self, m: usize, proc: usize, id: u32) -> Option<Rc<str>> {
        let gid = self.types.get(&key(m, proc, id))?;
        self.type_labels.get(gid).cloned()
    }

    /// Task `id` of model `m` in process `proc`, not ended or remembered as ended.
    pub fn task_info(&self, m: usize, proc: usize, id: u32) -> Option<TaskInfo> {
        let k = key(m, proc, id);
        if let Some(t) = self.tasks.get(&k) {
            return Some(TaskInfo { ty: t.ty, typed: t.typed, parallel: t.parallel, run: t.run });
        }
        let e = self.ended.get(&k)?;
        let run = if e.parallel { 1 } else { e.n };
        Some(TaskInfo { ty: e.ty, typed: e.typed, parallel: e.parallel, run })
    }

    /// Tasks followed now (not ended, and bodies of parallel ones) and ended tasks remembered.
    pub fn followed(&self) -> (usize, usize) {
        (self.followed, self.ended.len())
    }

    /// The type value of type `ty` of model `m` in process `proc` (`typed`: created when
    /// the task was; else ovni's value of the label `task type <ty>`).
    pub(super) fn gid_of(&self, m: usize, proc: usize, ty: u32, typed: bool) -> i64 {
        match self.types.get(&key(m, proc, ty)) {
            Some(g) if typed => *g,
            _ => type_gid(&format!("task type {ty}")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn new_type(
        &mut self,
        m: usize,
        proc: usize,
        d: Option<&Decoded>,
        name: &str,
        code: &str,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let (Some(id), Some(label)) = (
            d.and_then(|d| d.int("typeid")).and_then(|i| u32::try_from(i).ok()),
            d.and_then(|d| d.text("label")),
        ) else {
            return Ok(());
        };
        let k = key(m, proc, id);
        if id == 0 || self.types.contains_key(&k) {
            self.ignore();
            let why = if id == 0 { "type id 0 is not valid" } else { "the type already exists" };
            let msg = format!("{name} {code} creates task type {id}: {why}; ignored");
            return warn(sink, "bad_task_event", at, msg);
        }
        if self.types.len() >= self.max_types {
            self.ignore();
            return self.say_full(at, sink);
        }
        let (label, cut) = type_label(label, id);
        if let Some(n) = cut {
            let msg = format!(
                "{name} {code} creates task type {id} with a label of {n} bytes, longer than \
                 ovni's {MAX_LABEL} (MAX_PCF_LABEL; its emulator stops here): the label is cut \
                 to its first {} bytes",
                label.len()
            );
            warn(sink, "bad_task_event", at, msg)?;
        }
        let gid = type_gid(&label);
        self.type_labels.entry(gid).or_insert_with(|| Rc::from(label));
        self.types.insert(k, gid);
        Ok(())
    }

    pub(super) fn say_full(&self, at: At, sink: &mut dyn Sink) -> Result<()> {
        if self.full.replace(true) {
            return Ok(());
        }
        let msg = format!(
            "more than {} nOS-V/Nanos6 tasks not ended (and bodies of parallel tasks), or {} task \
             types, followed at once: later ones change no task channel and have no instances \
             rows (their events are kept)",
            self.max_followed, self.max_types
        );
        warn(sink, "too_many_tasks", at, msg)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn task_event(
        &mut self,
        m: usize,
        val: u8,
        d: Option<&Decoded>,
        threads: &mut [RtThread],
        th: usize,
        name: &str,
        code: &str,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(d) = d else { return Ok(()) };
        let Some(task_id) = d.int("taskid").and_then(|i| u32::try_from(i).ok()) else {
            return Ok(());
        };
        let Some(t) = threads.get(th) else { return Ok(()) };
        let (proc, appid, rank) = (t.proc, t.appid, t.rank);
        let k = key(m, proc, task_id);
        let ignored = &self.ignored;
        let refuse = |why: String, sink: &mut dyn Sink| {
            ignored.set(true);
            let msg = format!(
                "{name} {code} of task {task_id}: {why} (ovni's emulator stops here); the task \
                 channels are left as they were"
            );
            warn(sink, "bad_task_event", at, msg)
        };
        if matches!(val, b'c' | b'C') {
            if m == 1 && val == b'C' {
                // ovni ignores Nanos6's old 6TC (a warning of its own, not a stop).
                self.ignore();
                return Ok(());
            }
            if self.tasks.contains_key(&k) {
                return refuse("the task already exists".into(), sink);
            }
            if self.ended.get(&k).is_some() {
                return refuse(
                    "the task already exists (it ended; ovni keeps every task id)".into(),
                    sink,
                );
            }
            if self.followed >= self.max_followed {
                self.ignore();
                return self.say_full(at, sink);
            }
            let ty = d.int("typeid").and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
            let (gid, typed) = match self.types.get(&key(m, proc, ty)) {
                Some(g) => (*g, true),
                None => {
                    let msg = format!(
                        "{name} {code} of task {task_id}: its type {ty} was not created (no \
                         VYc/6Yc before it; ovni's emulator stops here); it is taken as 'task \
                         type {ty}'"
                    );
                    warn(sink, "bad_task_event", at, msg)?;
                    let l = format!("task type {ty}");
                    let g = type_gid(&l);
                    if self.type_labels.len() < self.max_types {
                        self.type_labels.entry(g).or_insert_with(|| Rc::from(l));
                    }
                    (g, false)
                }
            };
            let parallel = val == b'C';
            let task = Task { gid, ty, typed, parallel, run: 1, dead_upto: 0, bodies: Vec::new() };
            self.tasks.insert(k, task);
            self.followed += 1;
            return Ok(());
        }
        if !matches!(val, b'x' | b'p' | b'r' | b'e') {
            return Ok(());
        }
        // The task: not ended, or remembered as ended (it may come back: an ordinary nOS-V
        // task runs again, a parallel one runs a further body).
        let (parallel, ended) = match (self.tasks.get(&k), self.ended.get(&k)) {
            (Some(t), _) => (t.parallel, None),
            (None, Some(e)) => (e.parallel, Some(*e)),
            (None, None) => {
                if self.full.get() {
                    self.ignore();
                    return Ok(());
                }
                let why = if self.ended.forgot {
                    "no such task was created (or it ended long ago and was forgotten: memory \
                     bound)"
                } else {
                    "no such task was created"
                };
                return refuse(why.into(), sink);
            }
        };
        let body_id = if m == 0 {
            let b = d.int("bodyid").and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
            match (parallel, b) {
                (true, 0) => return refuse("body id 0 in a parallel task".into(), sink),
                (false, b) if b != 0 => {
                    return refuse(format!("body id {b} in a task that is not parallel"), sink)
                }
                (true, b) => b,
                (false, _) => 1,
            }
        } else {
            1
        };
        let state = match ended {
            // An ended ordinary task's body, a parallel one's bodies 1 to n, ended.
            Some(e) => (!e.parallel || body_id <= e.n).then_some(BState::Dead),
            None => self.tasks.get(&k).and_then(|t| t.state(body_id)),
        };
        let Some(chans) = threads.get(th).and_then(|t| t.chans.get(m)) else { return Ok(()) };
        let top = chans.bodies.last().copied();
        let prev = top.filter(|&(t, b)| self.body_state(m, proc, t, b) == Some(BState::Running));
        let on_top = top == Some((task_id, body_id));
        // Followed once accepted: the task, if it had ended; a new body of a parallel task.
        let more = usize::from(ended.is_some()) + usize::from(parallel && state.is_none());
        let problem = match val {
            b'x' => match state {
                Some(s @ (BState::Running | BState::Paused)) => {
                    Some(format!("body {body_id} is {} (it runs once at a time)", s.name()))
                }
                Some(BState::Dead) if !Task::resurrect(m, parallel) => {
                    Some(format!("body {body_id} ended and its task cannot run again"))
                }
                _ if prev.is_some() && !Task::relax(m) => {
                    Some("another task body runs on top of the thread's stack".into())
                }
                _ if chans.bodies.len() >= MAX_BODY_STACK => {
                    Some(format!("the thread holds {MAX_BODY_STACK} bodies already"))
                }
                // ovni's task channels refuse a task id 0 (`task id cannot be 0`).
                _ if task_id == 0 => Some("task id 0 cannot run".into()),
                _ if more > 0 && self.followed.saturating_add(more) > self.max_followed => {
                    self.ignore();
                    return self.say_full(at, sink);
                }
                _ => None,
            },
            b'p' if parallel => Some("the task cannot pause (a parallel task)".into()),
            _ => {
                let want = if val == b'r' { BState::Paused } else { BState::Running };
                if state != Some(want) {
                    Some(format!(
                        "body {body_id} is {}, not {}",
                        state.map_or("not executed", |s| s.name()),
                        want.name()
                    ))
                } else if !on_top {
                    Some(format!("body {body_id} is not on top of this thread's stack"))
                } else {
                    None
                }
            }
        };
        if let Some(why) = problem {
            return refuse(why, sink);
        }
        // The transition. An ended task comes back: its next run, or its further bodies.
        if let Some(e) = ended {
            self.ended.remove(&k);
            let gid = self.gid_of(m, proc, e.ty, e.typed);
            let (run, dead_upto) = if e.parallel { (1, e.n) } else { (e.n.saturating_add(1), 0) };
            let task = Task {
                gid,
                ty: e.ty,
                typed: e.typed,
                parallel: e.parallel,
                run,
                dead_upto,
                bodies: Vec::new(),
            };
            self.tasks.insert(k, task);
            self.followed += 1;
        }
        let Some(task) = self.tasks.get_mut(&k) else { return Ok(()) };
        let new_state = match val {
            b'x' | b'r' => BState::Running,
            b'p' => BState::Paused,
            _ => BState::Dead,
        };
        match task.bodies.iter_mut().find(|b| b.id == body_id) {
            Some(b) => b.state = new_state,
            None => {
                task.bodies.push(Body { id: body_id, state: new_state });
                if task.parallel {
                    self.followed += 1;
                }
            }
        }
        let gid = task.gid;
        // Ended: off the tasks followed, remembered (bounded) so that an ordinary nOS-V task
        // runs again at its next execute, a parallel one runs further bodies, and a task id
        // is not created again. A parallel task's bodies 1, 2, ... leave as they end; the
        // task ends with its last body running or paused (the stream never says how many
        // bodies it has: a later body brings it back).
        let mut gone = None;
        if val == b'e' {
            if task.parallel {
                while let Some(i) = task.dead_upto.checked_add(1).and_then(|next| {
                    task.bodies.iter().position(|b| b.id == next && b.state == BState::Dead)
                }) {
                    task.bodies.swap_remove(i);
                    task.dead_upto += 1;
                    self.followed = self.followed.saturating_sub(1);
                }
                if task.bodies.is_empty() {
                    gone = Some(task.dead_upto);
                }
            } else {
                gone = Some(task.run);
            }
            if let Some(n) = gone {
                let e = Ended { ty: task.ty, n, typed: task.typed, parallel: task.parallel };
                self.tasks.remove(&k);
                self.followed = self.followed.saturating_sub(1);
                if self.ended.insert(k, e) && self.said.insert("ended_forgotten".into()) {
                    let msg = format!(
                        "more than {} task ends: the tasks whose end is older are forgotten \
                         (memory bound): a later execute of one (an ordinary nOS-V task running \
                         again, a further body of a parallel one) is refused as of a task never \
                         created",
                        self.ended.cap()
                    );
                    sink.diagnostic(super::super::Diagnostic {
                        severity: super::super::Severity::Info,
                        kind: "ended_tasks_forgotten",
                        pos: at.pos,
                        ts: Some(at.ts),
                        message: msg,
                    })?;
                }
            }
        }
        let Some(chans) = threads.get_mut(th).and_then(|t| t.chans.get_mut(m)) else {
            return Ok(());
        };
        match val {
            b'x' => chans.bodies.push((task_id, body_id)),
            b'e' => {
                chans.bodies.pop();
            }
            _ => {}
        }
        let Some(ix) = IDX.get(m) else { return Ok(()) };
        match val {
            b'x' => push(chans, m, ix.ss, ix.in_body, name, code, at, sink)?,
            b'e' => pop(chans, m, ix.ss, ix.in_body, name, code, at, sink)?,
            _ => {}
        }
        // The task channels show the running body on top of the stack, if any.
        // (An ended body is off the stack: a task that ended is not on top.)
        let next = chans
            .bodies
            .last()
            .copied()
            .filter(|&(t, b)| self.body_state(m, proc, t, b) == Some(BState::Running));
        let values = next.map(|(t, b)| {
            let g = self.tasks.get(&key(m, proc, t)).map_or(gid, |t| t.gid);
            (i64::from(b), i64::from(t), g)
        });
        let (b, t, g) = values.unwrap_or((0, 0, 0));
        // The task id channel refuses its own value (ovni's channels without
        // `CHAN_ALLOW_DUP`): the model's transitions always change it, so this is a guard.
        if chans.vals.get(ix.task) == Some(&t) {
            same_value(m, ix.task, t, name, code, at, sink)?;
        }
        let set = |chans: &mut Chans, ch: Option<usize>, v: i64| {
            if let Some(x) = ch.and_then(|c| chans.vals.get_mut(c)) {
                *x = v;
            }
        };
        set(chans, ix.body, b);
        set(chans, Some(ix.task), t);
        set(chans, Some(ix.ty), g);
        set(chans, ix.appid, if values.is_some() { appid } else { 0 });
        if let Some(r) = rank.filter(|r| *r >= 0) {
            set(chans, Some(ix.rank), if values.is_some() { r.saturating_add(1) } else { 0 });
        }
        Ok(())
    }

    pub(super) fn body_state(&self, m: usize, proc: usize, task: u32, body: u32) -> Option<BState> {
        self.tasks.get(&key(m, proc, task))?.state(body)
    }
}
