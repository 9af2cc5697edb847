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

/// Task types and live tasks.
#[derive(Debug, Default)]
pub struct Tasks {
    /// The processes' suffixes of entity names (empty with one process), by process index.
    procs: Vec<String>,
    /// Type -> label.
    types: HashMap<Key, String>,
    /// Task -> entity name.
    live: HashMap<Key, String>,
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
                    self.types.insert((model, proc, id), label.to_string());
                }
                return Ok(());
            }
            (b'T', _) => {}
            _ => return Ok(()),
        }
        let Some(task) = d.int("taskid") else { return Ok(()) };
        let code = String::from_utf8_lossy(&mcv).into_owned();
        let actions: &[&str] = match val {
            b'c' | b'C' => {
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
                if self.live.len() >= MAX_TASKS && !self.live.contains_key(&(model, proc, task)) {
                    if !std::mem::replace(&mut self.full_said, true) {
                        sink.diagnostic(Diagnostic {
                            severity: Severity::Warning,
                            kind: "too_many_tasks",
                            pos,
                            ts: Some(ts),
                            message: format!(
                                "more than {MAX_TASKS} tasks alive at once: later ones have no \
                                 instances rows (their stream events are kept)"
                            ),
                        })?;
                    }
                    return Ok(());
                }
                self.live.insert((model, proc, task), name);
                &["activate"]
            }
            b'x' => &["start"],
            b'p' => &["wait"],
            b'r' => &["release", "resume"],
            b'e' => &["terminate"],
            _ => return Ok(()),
        };
        let Some(name) = self.live.get(&(model, proc, task)).cloned() else {
            // Created before the trace began (or beyond the bound): no instance to follow.
            return Ok(());
        };
        let key = (model, proc, task);
        if val == b'e' {
            self.live.remove(&key);
        }
        let instance = i64::try_from(task).unwrap_or(-1);
        let note = format!("{code} of task {task}");
        // A task executed on a thread whose current task runs (nested, inline) preempts it.
        if val == b'x' {
            let stack = self.stacks.entry(thread.to_string()).or_default();
            let top = stack.last_mut().filter(|t| t.running && t.key != key).map(|t| {
                t.running = false;
                t.preempted = true;
                t.key
            });
            if !stack.iter().any(|t| t.key == key) {
                stack.push(Running { key, running: true, preempted: false });
            }
            if let Some(top) = top {
                self.emit_on(top, "preempt", ts, thread, core, pos, &note, sink)?;
            }
        }
        for a in actions {
            let source = if *a == "activate" { thread } else { core.unwrap_or(thread) };
            sink.event(&Event {
                ts,
                source,
                source_instance: -1,
                target_type: "T",
                target: &name,
                target_instance: instance,
                action: a,
                note: Some(&note),
                value: None,
                core: if *a == "activate" { None } else { core },
                pos,
            })?;
        }
        // The thread's task stack: a pause, resume or end of the task on top; the end of a
        // nested task resumes the one it preempted.
        let mut resumed = None;
        if let Some(stack) = self.stacks.get_mut(thread) {
            match val {
                b'p' | b'r' => {
                    if let Some(t) = stack.iter_mut().find(|t| t.key == key) {
                        t.running = val == b'r';
                    }
                }
                b'e' => {
                    stack.retain(|t| t.key != key);
                    if let Some(t) = stack.last_mut().filter(|t| t.preempted) {
                        t.preempted = false;
                        t.running = true;
                        resumed = Some(t.key);
                    }
                    if stack.is_empty() {
                        self.stacks.remove(thread);
                    }
                }
                _ => {}
            }
        }
        if let Some(k) = resumed {
            self.emit_on(k, "resume", ts, thread, core, pos, &note, sink)?;
        }
        Ok(())
    }

    /// A BTF action on the live task `key` of thread `thread`, caused by the stream event
    /// `note` of another task.
    #[allow(clippy::too_many_arguments)]
    fn emit_on(
        &self,
        key: Key,
        action: &str,
        ts: i64,
        thread: &str,
        core: Option<&str>,
        pos: Pos,
        note: &str,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(name) = self.live.get(&key) else { return Ok(()) };
        let note = format!("{note}: nested task on its thread");
        sink.event(&Event {
            ts,
            source: core.unwrap_or(thread),
            source_instance: -1,
            target_type: "T",
            target: name,
            target_instance: i64::try_from(key.2).unwrap_or(-1),
            action,
            note: Some(&note),
            value: None,
            core,
            pos,
        })
    }
}

/// A task executed on a thread, not ended.
#[derive(Debug)]
struct Running {
    key: Key,
    /// Running (not paused, not preempted by a nested task).
    running: bool,
    /// Preempted by a nested task executed on the thread.
    preempted: bool,
}
