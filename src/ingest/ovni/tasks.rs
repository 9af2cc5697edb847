//! nOS-V (`VT*`, `VYc`) and Nanos6 (`6T*`, `6Yc`) tasks as BTF-shaped process events, so
//! that the derive stage gives them `instances` rows (response times) and `state`
//! intervals:
//!
//! | stream event | BTF event on `T <type label>`, instance = task id | source |
//! |---|---|---|
//! | `VTc`/`VTC`/`6Tc` create | `activate` | the thread |
//! | `VTx`/`6Tx` execute | `start` | the CPU of the thread |
//! | `VTp`/`6Tp` pause | `wait` | the CPU |
//! | `VTr`/`6Tr` resume | `release`, then `resume` | the CPU |
//! | `VTe`/`6Te` end | `terminate` | the CPU |
//!
//! A parallel nOS-V task (`VTC`) runs several bodies, each its own instance: instance =
//! task id * 2^32 + body id (the body id of `VTx`/`VTp`/`VTr`/`VTe`, numbered from 1 in
//! ovni), so bodies on different CPUs run concurrently. Body 1 is activated at the task's
//! creation; another body is activated when it first executes (the derive stage takes events
//! in time order, and the stream does not say at `VTC` how many bodies will run).
//!
//! A task executed on a thread whose current task runs (a nested task run inline, ovni's
//! per-thread task stack) preempts that task (`preempt`), and its end resumes it
//! (`resume`), so the outer task's net execution time leaves the inner one's out.
//!
//! A task follows its thread (ovni shows a task on a CPU only while its thread runs there):
//! the task on top of a thread's stack is preempted when its thread stops running (`OHp`,
//! `OHc`, `OHe`) and resumed when it runs again, on its CPU then; a thread moved while it
//! runs (`OAs`, `OAr`) moves its task (preempt, resume elsewhere: a migration); see
//! [`Tasks::follow`].
//!
//! An ordinary nOS-V task runs again after its end (ovni's resurrect, a task iteration):
//! each later run is a new instance, task id * 2^32 + run (2, 3, ...), activated at its
//! `VTx`. What is known of a task (type, parallel, run) is the runtime model's, ended tasks
//! included ([`Runtime::task_info`]): one memory of tasks, bounded there. Only events the
//! runtime model accepted reach [`Tasks::apply`].
//!
//! Task and type ids are per process in ovni (each process numbers its own from 1), so they
//! are followed per process. The entity is the task type's label (`VYc`/`6Yc`; `task type
//! <id>` without one), so all tasks of a type are instances of one entity; when the trace
//! has several processes, the label is followed by the process, `<label>
//! (loom.<L>/proc.<P>)`, so that task 1 of two processes are two instances. These rows come in addition to the
//! `events` row of the stream event itself (their action is the BTF action, their note names
//! the stream event). A paused task's wait for resubmission and for a CPU are one `waiting`
//! state (nothing in the stream tells them apart).
use super::super::Sink;
use super::runtime::{self, Runtime, TaskInfo};
use super::spec::Decoded;
use crate::model::{Event, Pos};
use crate::Result;
use std::collections::HashMap;
use std::rc::Rc;

/// A task or type id of one model in one process: (model, process index, id).
type Key = (u8, usize, u32);

/// The instance of body `body` of task `task`: the task id for an ordinary task (body 0),
/// `task * 2^32 + body` for a body of a parallel one (and for the `body`-th run of an
/// ordinary task that runs again).
pub fn instance_of(task: u32, body: Option<u32>) -> i64 {
    match body {
        Some(b) => (i64::from(task) << 32) | i64::from(b),
        None => i64::from(task),
    }
}

/// Task types, and the tasks executed on each thread. What is known of each task (its type,
/// whether parallel, its run) is the runtime model's ([`Runtime::task_info`]): one memory of
/// tasks, ended ones included.
#[derive(Debug)]
pub struct Tasks {
    /// The processes' suffixes of entity names (empty with one process), by process index.
    procs: Vec<String>,
    /// Type -> entity name (the runtime model's label, shared; with its process's suffix
    /// when there are several).
    names: HashMap<Key, Rc<str>>,
    /// Thread -> its executed tasks not ended, innermost last (ovni's task stack).
    stacks: HashMap<String, Vec<Running>>,
}

impl Tasks {
    /// Tasks of the processes `procs` (`loom.<L>/proc.<P>`, indexed as [`Tasks::apply`]'s
    /// `proc`).
    pub fn new(procs: Vec<String>) -> Self {
        let procs = if procs.len() > 1 {
            procs.into_iter().map(|p| format!(" ({p})")).collect()
        } else {
            Vec::new()
        };
        Tasks { procs, names: HashMap::new(), stacks: HashMap::new() }
    }

    /// The entity of a task of model `model` in process `proc`: its type's label, or `task
    /// type <id>` for a type not created when the task was.
    fn name(&self, model: u8, proc: usize, info: TaskInfo) -> Rc<str> {
        if info.typed {
            if let Some(n) = self.names.get(&(model, proc, info.ty)) {
                return n.clone();
            }
        }
        let p = self.procs.get(proc).map_or("", String::as_str);
        Rc::from(format!("task type {}{p}", info.ty))
    }

    /// Applies one stream event (`d` its decoded payload) of thread `thread` of process
    /// `proc` on `core`, which the runtime model `rt` accepted (and has applied); `running`:
    /// the thread is Running after the event.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        mcv: [u8; 3],
        d: Option<&Decoded>,
        rt: &Runtime,
        proc: usize,
        thread: &str,
        running: bool,
        ts: i64,
        core: Option<&str>,
        pos: Pos,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let [model, cat, val] = mcv;
        let Some(m) = runtime::model_index(model) else { return Ok(()) };
        let Some(d) = d else { return Ok(()) };
        match (cat, val) {
            (b'Y', b'c') => {
                let Some(id) = d.int("typeid").and_then(|i| u32::try_from(i).ok()) else {
                    return Ok(());
                };
                if let Some(label) = rt.type_label_of(m, proc, id) {
                    let name = match self.procs.get(proc) {
                        Some(p) => Rc::from(format!("{label}{p}")),
                        None => label,
                    };
                    self.names.insert((model, proc, id), name);
                }
                return Ok(());
            }
            (b'T', _) => {}
            _ => return Ok(()),
        }
        let Some(task) = d.int("taskid").and_then(|i| u32::try_from(i).ok()) else {
            return Ok(());
        };
        let Some(info) = rt.task_info(m, proc, task) else { return Ok(()) };
        let key = (model, proc, task);
        let name = self.name(model, proc, info);
        let code = String::from_utf8_lossy(&mcv).into_owned();
        if matches!(val, b'c' | b'C') {
            // A parallel task: body 1 is activated at its creation.
            let instance = instance_of(task, info.parallel.then_some(1));
            let note = if info.parallel {
                format!("{code} of task {task} (parallel: body 1)")
            } else {
                format!("{code} of task {task}")
            };
            return self.emit(&name, instance, "activate", ts, thread, None, pos, &note, sink);
        }
        let actions: &[&str] = match val {
            b'x' => &["start"],
            b'p' => &["wait"],
            b'r' => &["release", "resume"],
            b'e' => &["terminate"],
            _ => return Ok(()),
        };
        // The body of a parallel task (its id from the event); none for an ordinary task.
        let body = match info.parallel {
            true => match d.int("bodyid").and_then(|b| u32::try_from(b).ok()) {
                Some(b) if b > 0 => Some(b),
                // Not a body (the runtime model refuses it): no instance to follow.
                _ => return Ok(()),
            },
            false => None,
        };
        // A thread that does not run (Cooling, Warming: ovni allows task events there) takes
        // its CPU for the instant of the event: the task the thread running there runs gives
        // it up for that instant (a preempt now, a resume once the event is applied), rather
        // than being taken as displaced until an event of its own.
        let lenders = if running { Vec::new() } else { self.running_on(thread, core) };
        let lend = format!("{code} of {thread}, which does not run: its CPU lent for an instant");
        for (name, instance) in &lenders {
            let src = core.unwrap_or(thread);
            self.emit(name, *instance, "preempt", ts, src, core, pos, &lend, sink)?;
        }
        // Its thread's task on top runs while the event is applied (a thread that stopped
        // running had it preempted).
        self.follow(thread, true, core, &code, ts, pos, sink)?;
        let run = info.run;
        let instance = match body {
            Some(_) => instance_of(task, body),
            None if run > 1 => instance_of(task, Some(run)),
            None => instance_of(task, None),
        };
        let note = match body {
            Some(b) => format!("{code} of task {task} body {b}"),
            None if run > 1 => format!("{code} of task {task} (run {run})"),
            None => format!("{code} of task {task}"),
        };
        if val == b'x' {
            match body {
                // A body of a parallel task other than 1 is activated when it executes
                // (each body executes once).
                Some(b) if b != 1 => {
                    self.emit(&name, instance, "activate", ts, thread, None, pos, &note, sink)?;
                }
                // An ordinary nOS-V task that ended runs again (ovni's resurrect): a new run,
                // activated at this execute.
                None if run > 1 => {
                    let note = format!("{code} of task {task} (runs again: run {run})");
                    self.emit(&name, instance, "activate", ts, thread, None, pos, &note, sink)?;
                }
                _ => {}
            }
        }
        let me = (key, body);
        let here = core.map(str::to_string);
        // A task executed on a thread whose current task runs (nested, inline) preempts it.
        if val == b'x' {
            let stack = self.stacks.entry(thread.to_string()).or_default();
            let top = stack.last_mut().filter(|t| t.running && t.id != me).map(|t| {
                t.running = false;
                t.preempted = true;
                t.id
            });
            if !stack.iter().any(|t| t.id == me) {
                stack.push(Running {
                    id: me,
                    name: name.clone(),
                    instance,
                    running: true,
                    preempted: false,
                    off: false,
                    core: here.clone(),
                });
            }
            if let Some((k, b)) = top {
                self.emit_nested(k, b, "preempt", ts, thread, core, pos, &note, sink)?;
            }
        }
        for a in actions {
            self.emit(&name, instance, a, ts, core.unwrap_or(thread), core, pos, &note, sink)?;
        }
        // The thread's task stack: a pause, resume or end of the task on top; the end of a
        // nested task resumes the one it preempted.
        let mut resumed = None;
        if let Some(stack) = self.stacks.get_mut(thread) {
            match val {
                b'p' | b'r' => {
                    if let Some(t) = stack.iter_mut().find(|t| t.id == me) {
                        t.running = val == b'r';
                        t.core = here.clone();
                    }
                }
                b'e' => {
                    stack.retain(|t| t.id != me);
                    if let Some(t) = stack.last_mut().filter(|t| t.preempted) {
                        t.preempted = false;
                        t.running = true;
                        t.core = here.clone();
                        resumed = Some(t.id);
                    }
                    if stack.is_empty() {
                        self.stacks.remove(thread);
                    }
                }
                _ => {}
            }
        }
        if let Some((k, b)) = resumed {
            self.emit_nested(k, b, "resume", ts, thread, core, pos, &note, sink)?;
        }
        // And the thread's state after the event.
        self.follow(thread, running, core, &code, ts, pos, sink)?;
        for (name, instance) in &lenders {
            let src = core.unwrap_or(thread);
            self.emit(name, *instance, "resume", ts, src, core, pos, &lend, sink)?;
        }
        Ok(())
    }

    /// The tasks that run on `core` (on top of a running thread's stack) other than those of
    /// `thread`, in name and instance order.
    fn running_on(&self, thread: &str, core: Option<&str>) -> Vec<(Rc<str>, i64)> {
        let Some(core) = core else { return Vec::new() };
        let mut out: Vec<(Rc<str>, i64)> = self
            .stacks
            .iter()
            .filter(|(t, _)| t.as_str() != thread)
            .filter_map(|(_, s)| s.last())
            .filter(|t| t.running && !t.off && t.core.as_deref() == Some(core))
            .map(|t| (Rc::clone(&t.name), t.instance))
            .collect();
        out.sort();
        out
    }

    /// Has the task on top of thread `thread`'s stack follow its thread, now `running` or not,
    /// on `core`: a running task whose thread stops running is preempted (on the CPU it ran
    /// on), resumed when its thread runs again (on its CPU then: another one is a migration);
    /// a thread that moves while it runs moves its task (preempt, resume elsewhere). Called
    /// after the ovni model's thread events (`code`) and around task events.
    #[allow(clippy::too_many_arguments)]
    pub fn follow(
        &mut self,
        thread: &str,
        running: bool,
        core: Option<&str>,
        code: &str,
        ts: i64,
        pos: Pos,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(top) = self.stacks.get_mut(thread).and_then(|s| s.last_mut()) else {
            return Ok(());
        };
        if !top.running {
            return Ok(());
        }
        let moved = top.core.as_deref() != core;
        let (preempt, resume) = match (top.off, running) {
            (false, false) => (true, false),
            (true, true) => (false, true),
            (false, true) if moved => (true, true),
            _ => return Ok(()),
        };
        let old = top.core.clone();
        top.off = !running;
        if resume {
            top.core = core.map(str::to_string);
        }
        let (name, instance) = (top.name.clone(), top.instance);
        let note = format!("{code}: its thread {}", if running { "runs" } else { "stops running" });
        if preempt {
            let c = old.as_deref();
            self.emit(&name, instance, "preempt", ts, c.unwrap_or(thread), c, pos, &note, sink)?;
        }
        if resume {
            self.emit(
                &name,
                instance,
                "resume",
                ts,
                core.unwrap_or(thread),
                core,
                pos,
                &note,
                sink,
            )?;
        }
        Ok(())
    }
    /// One BTF event on instance `instance` of task entity `name`.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        name: &str,
        instance: i64,
        action: &str,
        ts: i64,
        source: &str,
        core: Option<&str>,
        pos: Pos,
        note: &str,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        sink.event(&Event {
            ts,
            source,
            source_instance: -1,
            target_type: "T",
            target: name,
            target_instance: instance,
            action,
            note: Some(note),
            value: None,
            core,
            pos,
        })
    }

    /// A BTF action on the task (body) `key`/`body` on thread `thread`'s stack, caused by the
    /// stream event `note` of another task.
    #[allow(clippy::too_many_arguments)]
    fn emit_nested(
        &self,
        key: Key,
        body: Option<u32>,
        action: &str,
        ts: i64,
        thread: &str,
        core: Option<&str>,
        pos: Pos,
        note: &str,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(name) = self
            .stacks
            .get(thread)
            .and_then(|s| s.iter().find(|t| t.id == (key, body)))
            .map(|t| Rc::clone(&t.name))
        else {
            return Ok(());
        };
        let note = format!("{note}: nested task on its thread");
        let instance = self
            .stacks
            .get(thread)
            .and_then(|s| s.iter().find(|t| t.id == (key, body)))
            .map_or_else(|| instance_of(key.2, body), |t| t.instance);
        self.emit(&name, instance, action, ts, core.unwrap_or(thread), core, pos, &note, sink)
    }
}

/// A task (body) executed on a thread, not ended.
#[derive(Debug)]
struct Running {
    id: (Key, Option<u32>),
    /// Its entity.
    name: Rc<str>,
    /// Its instance.
    instance: i64,
    /// Running (not paused, not preempted by a nested task).
    running: bool,
    /// Preempted by a nested task executed on the thread.
    preempted: bool,
    /// Preempted because its thread does not run (paused, cooling, ended).
    off: bool,
    /// The CPU it runs (or last ran) on.
    core: Option<String>,
}
