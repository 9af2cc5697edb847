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
//! Task and type ids are per process in ovni (each process numbers its own from 1), so they
//! are followed per process. The entity is the task type's label (`VYc`/`6Yc`; `task type
//! <id>` without one), so all tasks of a type are instances of one entity; when the trace
//! has several processes, the label is followed by the process, `<label>
//! (loom.<L>/proc.<P>)`, so that task 1 of two processes are two instances. These rows come in addition to the
//! `events` row of the stream event itself (their action is the BTF action, their note names
//! the stream event). A paused task's wait for resubmission and for a CPU are one `waiting`
//! state (nothing in the stream tells them apart).
use super::super::{Diagnostic, Severity, Sink};
use super::spec::Decoded;
use crate::model::{Event, Pos};
use crate::Result;
use std::collections::HashMap;

/// Tasks followed at once beyond which new ones are not (memory bound).
pub const MAX_TASKS: usize = 1 << 20;

/// A task or type id of one model in one process: (model, process index, id).
type Key = (u8, usize, i128);

/// The instance of body `body` of task `task`: the task id for an ordinary task (body 0),
/// `task * 2^32 + body` for a body of a parallel one.
pub fn instance_of(task: i128, body: Option<u32>) -> i64 {
    match body {
        Some(b) => u32::try_from(task).map_or(-1, |t| (i64::from(t) << 32) | i64::from(b)),
        None => i64::try_from(task).unwrap_or(-1),
    }
}

/// A live task.
#[derive(Debug)]
struct Live {
    /// Entity name.
    name: String,
    /// Bodies of a parallel task activated so far (`None`: an ordinary task).
    bodies: Option<Vec<u32>>,
}

/// Task types and live tasks.
#[derive(Debug, Default)]
pub struct Tasks {
    /// The processes' suffixes of entity names (empty with one process), by process index.
    procs: Vec<String>,
    /// Type -> label.
    types: HashMap<Key, String>,
    /// Task -> what is followed of it.
    live: HashMap<Key, Live>,
    /// Bodies of parallel tasks followed (counted with `live` against the bound).
    bodies: usize,
    /// Thread -> its executed tasks not ended, innermost last (ovni's task stack).
    stacks: HashMap<String, Vec<Running>>,
    full_said: bool,
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
        Tasks { procs, ..Tasks::default() }
    }

    fn full(&mut self, ts: i64, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        if std::mem::replace(&mut self.full_said, true) {
            return Ok(());
        }
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "too_many_tasks",
            pos,
            ts: Some(ts),
            message: format!(
                "more than {MAX_TASKS} tasks (and bodies of parallel tasks) alive at once: later \
                 ones have no instances rows (their stream events are kept)"
            ),
        })
    }

    /// Applies one stream event (`d` its decoded payload) of thread `thread` of process
    /// `proc` on `core`.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        mcv: [u8; 3],
        d: Option<&Decoded>,
        proc: usize,
        thread: &str,
        ts: i64,
        core: Option<&str>,
        pos: Pos,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let [model, cat, val] = mcv;
        if !(model == b'V' || model == b'6') {
            return Ok(());
        }
        let Some(d) = d else { return Ok(()) };
        match (cat, val) {
            (b'Y', b'c') => {
                if let (Some(id), Some(label)) = (d.int("typeid"), d.text("label")) {
                    if self.types.len() < MAX_TASKS || self.types.contains_key(&(model, proc, id)) {
                        self.types.insert((model, proc, id), label.to_string());
                    }
                }
                return Ok(());
            }
            (b'T', _) => {}
            _ => return Ok(()),
        }
        let Some(task) = d.int("taskid") else { return Ok(()) };
        let key = (model, proc, task);
        let code = String::from_utf8_lossy(&mcv).into_owned();
        if matches!(val, b'c' | b'C') {
            let ty = d.int("typeid").unwrap_or(-1);
            let label = self
                .types
                .get(&(model, proc, ty))
                .cloned()
                .unwrap_or_else(|| format!("task type {ty}"));
            let name = match self.procs.get(proc) {
                Some(p) => label + p,
                None => label,
            };
            if self.live.len() + self.bodies >= MAX_TASKS && !self.live.contains_key(&key) {
                return self.full(ts, pos, sink);
            }
            // A parallel task: body 1 is activated at its creation.
            let parallel = model == b'V' && val == b'C';
            if let Some(old) = self
                .live
                .insert(key, Live { name: name.clone(), bodies: parallel.then(|| vec![1]) })
            {
                self.bodies = self.bodies.saturating_sub(old.bodies.map_or(0, |b| b.len()));
            }
            if parallel {
                self.bodies += 1;
            }
            let instance = instance_of(task, parallel.then_some(1));
            let note = if parallel {
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
        let Some(live) = self.live.get(&key) else {
            // Created before the trace began (or beyond the bound): no instance to follow.
            return Ok(());
        };
        let name = live.name.clone();
        // The body of a parallel task (its id from the event); none for an ordinary task.
        let body = match &live.bodies {
            Some(_) => match d.int("bodyid").and_then(|b| u32::try_from(b).ok()) {
                Some(b) if b > 0 => Some(b),
                // Not a body (ovni refuses it): no instance to follow.
                _ => return Ok(()),
            },
            None => None,
        };
        let instance = instance_of(task, body);
        let note = match body {
            Some(b) => format!("{code} of task {task} body {b}"),
            None => format!("{code} of task {task}"),
        };
        // A body of a parallel task other than 1 is activated when it first executes.
        if let (Some(b), b'x') = (body, val) {
            let seen =
                self.live.get(&key).and_then(|l| l.bodies.as_ref()).is_some_and(|v| v.contains(&b));
            if !seen {
                if self.live.len() + self.bodies >= MAX_TASKS {
                    return self.full(ts, pos, sink);
                }
                if let Some(v) = self.live.get_mut(&key).and_then(|l| l.bodies.as_mut()) {
                    v.push(b);
                    self.bodies += 1;
                }
                self.emit(&name, instance, "activate", ts, thread, None, pos, &note, sink)?;
            }
        }
        if val == b'e' && body.is_none() {
            self.live.remove(&key);
        }
        let me = (key, body);
        // A task executed on a thread whose current task runs (nested, inline) preempts it.
        if val == b'x' {
            let stack = self.stacks.entry(thread.to_string()).or_default();
            let top = stack.last_mut().filter(|t| t.running && t.id != me).map(|t| {
                t.running = false;
                t.preempted = true;
                t.id
            });
            if !stack.iter().any(|t| t.id == me) {
                stack.push(Running { id: me, name: name.clone(), running: true, preempted: false });
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
                    }
                }
                b'e' => {
                    stack.retain(|t| t.id != me);
                    if let Some(t) = stack.last_mut().filter(|t| t.preempted) {
                        t.preempted = false;
                        t.running = true;
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
            .map(|t| t.name.clone())
        else {
            return Ok(());
        };
        let note = format!("{note}: nested task on its thread");
        let instance = instance_of(key.2, body);
        self.emit(&name, instance, action, ts, core.unwrap_or(thread), core, pos, &note, sink)
    }
}

/// A task (body) executed on a thread, not ended.
#[derive(Debug)]
struct Running {
    id: (Key, Option<u32>),
    /// Its entity.
    name: String,
    /// Running (not paused, not preempted by a nested task).
    running: bool,
    /// Preempted by a nested task executed on the thread.
    preempted: bool,
}
