//! Software events to system events (SEMANTICS.md, "Hardware traces"): writes of "current
//! task" variables become task switches, entries and returns of mapped functions runnable
//! and ISR instances, writes of mapped variables signal writes; all as BTF-shaped events
//! for the derive stage (process transitions caused by the core, runnables by their task or
//! ISR, signal writes by the process that ran).
//!
//! What a trace of writes and calls can tell, and what it cannot:
//! * a task that leaves its core was preempted, unless it entered one of the mapping's
//!   `terminate_functions` since it got the core (then it terminated, at the switch); it
//!   cannot tell a wait from a preemption: both are `preempt`;
//! * a task that gets its core starts a new instance when it has none live (never seen, or
//!   terminated), else resumes; its activation time is not in the trace: it is taken as
//!   the start (`activate` and `start` at one time, caused by the core);
//! * calls nest per task (a task's stack survives its preemption) and per core for ISRs;
//!   a return pops one frame, or, when its destination is a function deeper in the stack,
//!   every frame above it (their returns were lost: `missing_return`); a return into the
//!   innermost open function pops nothing (a vector stub's return: its entry was no call);
//! * a switch written while an ISR runs on the core is held until the outermost ISR returns
//!   (dispatchers write the current task in the ISR epilogue).
use super::super::{Diagnostic, Severity, Sink};
use crate::model::{Event, Pos};
use crate::Result;
use std::collections::{BTreeMap, BTreeSet};

/// Deepest call stack kept; a deeper one loses its oldest frame.
pub const MAX_DEPTH: usize = 256;

/// Tasks, ISRs and runnables tracked at once beyond which no new one is accepted.
pub const MAX_ENTITIES: usize = 1 << 16;

/// What a stack frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    Plain,
    /// A runnable instance, started by `by` (process name, instance).
    Runnable(i64, String, i64),
    /// An ISR instance.
    Isr(i64),
}

#[derive(Debug, Clone)]
struct Frame {
    func: String,
    role: Role,
}

#[derive(Debug, Default)]
struct CoreState {
    /// Task running, with its instance.
    current: Option<(String, i64)>,
    /// The current task entered a terminate function.
    terminating: bool,
    /// ISR frames and the calls made inside them.
    isr_stack: Vec<Frame>,
    /// Calls made while no task is known to run.
    base_stack: Vec<Frame>,
    /// A switch written while an ISR ran (an OS dispatches in the ISR epilogue): the task
    /// (or idle) and the row that wrote it, applied when the outermost ISR ends.
    held: Option<(Option<String>, Pos)>,
    /// The function the outermost ISR interrupted (where the row entering it, or the
    /// interrupt row into a vector before it, was): a return there ends every ISR frame,
    /// even when that code is no open call (a task's own code, an idle loop).
    interrupted_in: Option<String>,
    /// The function an interrupt row into a vector (no call opened) interrupted, until
    /// the handler's entry takes it.
    vector_from: Option<String>,
}

#[derive(Debug, Default)]
struct TaskState {
    next_inst: i64,
    live: Option<i64>,
    stack: Vec<Frame>,
}

/// Per-core and per-task state of the system view.
#[derive(Debug, Default)]
pub struct System {
    cores: BTreeMap<String, CoreState>,
    tasks: BTreeMap<String, TaskState>,
    /// Next instance of each runnable and ISR.
    counters: BTreeMap<String, i64>,
    /// Signals written.
    signals: BTreeSet<String>,
    /// The core each running task runs on (no scan of every core per switch).
    running: BTreeMap<String, String>,
}

/// One system event, owned until sent.
struct Out {
    source: String,
    source_instance: i64,
    target_type: &'static str,
    target: String,
    target_instance: i64,
    action: &'static str,
    note: Option<String>,
    value: Option<f64>,
}

/// Where a system event is sent: time, position, core of the row.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Time, ns.
    pub ts: i64,
    /// Row.
    pub pos: Pos,
    /// Core the change happens on.
    pub core: &'a str,
}

impl System {
    fn send(&self, sink: &mut dyn Sink, at: At<'_>, o: Out) -> Result<()> {
        sink.event(&Event {
            ts: at.ts,
            source: &o.source,
            source_instance: o.source_instance,
            target_type: o.target_type,
            target: &o.target,
            target_instance: o.target_instance,
            action: o.action,
            note: o.note.as_deref(),
            value: o.value,
            core: Some(at.core),
            pos: at.pos,
        })
    }

    fn process(core: &str, ty: &'static str, name: &str, inst: i64, action: &'static str) -> Out {
        Out {
            source: core.to_string(),
            source_instance: -1,
            target_type: ty,
            target: name.to_string(),
            target_instance: inst,
            action,
            note: None,
            value: None,
        }
    }

    fn full(&self, name: &str, at: At<'_>, sink: &mut dyn Sink) -> Result<bool> {
        let known = self.tasks.contains_key(name)
            || self.counters.contains_key(name)
            || self.signals.contains(name);
        if known || self.tasks.len() + self.counters.len() + self.signals.len() < MAX_ENTITIES {
            return Ok(false);
        }
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "too_many_entities",
            pos: at.pos,
            ts: Some(at.ts),
            message: format!(
                "{name}: more than {MAX_ENTITIES} tasks, ISRs, runnables and signals; its \
                 events are kept as rows, with no system event"
            ),
        })?;
        Ok(true)
    }

    /// The process running on `core` now: its innermost ISR, else its task.
    fn running_on(&self, core: &str) -> Option<(String, i64)> {
        let c = self.cores.get(core)?;
        let isr = c.isr_stack.iter().rev().find_map(|f| match f.role {
            Role::Isr(i) => Some((f.func.clone(), i)),
            _ => None,
        });
        isr.or_else(|| c.current.clone())
    }

    /// `task` (or nothing: idle) now runs on `at.core`, as a write of the core's "current
    /// task" variable says.
    pub fn switch(&mut self, task: Option<&str>, at: At<'_>, sink: &mut dyn Sink) -> Result<()> {
        if let Some(t) = task {
            if self.full(t, at, sink)? {
                return Ok(());
            }
        }
        let core = self.cores.entry(at.core.to_string()).or_default();
        if !core.isr_stack.is_empty() {
            // The dispatcher runs in the ISR's epilogue: the new task gets the core when the
            // outermost ISR returns, not while the ISR still runs.
            core.held = Some((task.map(str::to_string), at.pos));
            return Ok(());
        }
        core.held = None;
        let same = core.current.as_ref().map(|c| c.0.as_str()) == task;
        if same && !core.terminating {
            return Ok(());
        }
        let terminating = std::mem::take(&mut core.terminating);
        if let Some((prev, inst)) = core.current.take() {
            self.running.remove(&prev);
            let action = if terminating { "terminate" } else { "preempt" };
            if terminating {
                if let Some(ts) = self.tasks.get_mut(&prev) {
                    ts.live = None;
                    // Its runnables end with it (the derive stage says so: ended_with_task).
                    ts.stack.clear();
                }
            }
            self.send(sink, at, System::process(at.core, "T", &prev, inst, action))?;
        }
        let Some(next) = task else { return Ok(()) };
        // A task still shown running on another core left it unseen.
        if let Some(other) = self.running.insert(next.to_string(), at.core.to_string()) {
            if let Some(c) = self.cores.get_mut(&other).filter(|_| other != at.core) {
                c.current = None;
                c.terminating = false;
            }
        }
        let ts = self.tasks.entry(next.to_string()).or_default();
        let (inst, actions): (i64, &[&'static str]) = match ts.live {
            Some(i) => (i, &["resume"]),
            None => {
                let i = ts.next_inst;
                ts.next_inst += 1;
                ts.live = Some(i);
                (i, &["activate", "start"])
            }
        };
        for a in actions {
            self.send(sink, at, System::process(at.core, "T", next, inst, a))?;
        }
        if let Some(c) = self.cores.get_mut(at.core) {
            c.current = Some((next.to_string(), inst));
        }
        Ok(())
    }

    /// The function last entered on `core` (in its current context) and not returned from.
    pub fn top(&self, core: &str) -> Option<&str> {
        let c = self.cores.get(core)?;
        let stack = if !c.isr_stack.is_empty() {
            &c.isr_stack
        } else {
            match &c.current {
                Some((t, _)) => &self.tasks.get(t)?.stack,
                None => &c.base_stack,
            }
        };
        stack.last().map(|f| f.func.as_str())
    }

    /// The stack calls on `core` go to now.
    fn stack_mut(&mut self, core: &str) -> &mut Vec<Frame> {
        let c = self.cores.entry(core.to_string()).or_default();
        if !c.isr_stack.is_empty() {
            return &mut c.isr_stack;
        }
        match &c.current {
            Some((t, _)) => &mut self.tasks.entry(t.clone()).or_default().stack,
            None => &mut c.base_stack,
        }
    }

    /// Where an interrupt was taken on `core` (the function its row's address is in), noted
    /// only when no ISR runs there: `vector` for an interrupt row that opens no call (into
    /// a vector stub), whose handler's entry comes next and takes it.
    pub fn interrupted_from(&mut self, core: &str, from: Option<&str>, vector: bool) {
        let c = self.cores.entry(core.to_string()).or_default();
        if !c.isr_stack.is_empty() {
            return;
        }
        if vector {
            c.vector_from = from.map(str::to_string);
        } else {
            c.interrupted_in = c.vector_from.take().or_else(|| from.map(str::to_string));
        }
    }

    /// Function `func` entered on `at.core`: `isr` when it is an interrupt handler,
    /// `runnable` when the mapping names it one, `terminate` when it ends its task.
    pub fn enter(
        &mut self,
        func: &str,
        kind: Entry,
        at: At<'_>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let role = match kind {
            Entry::Isr | Entry::Runnable if self.full(func, at, sink)? => Role::Plain,
            Entry::Isr => {
                let n = self.counters.entry(func.to_string()).or_insert(0);
                let inst = *n;
                *n += 1;
                for a in ["activate", "start"] {
                    self.send(sink, at, System::process(at.core, "I", func, inst, a))?;
                }
                let c = self.cores.entry(at.core.to_string()).or_default();
                c.isr_stack.push(Frame { func: func.to_string(), role: Role::Isr(inst) });
                return self.bound(at, sink, true);
            }
            Entry::Runnable => {
                let n = self.counters.entry(func.to_string()).or_insert(0);
                let inst = *n;
                *n += 1;
                let (by, by_inst) =
                    self.running_on(at.core).unwrap_or_else(|| (at.core.to_string(), -1));
                self.send(
                    sink,
                    at,
                    Out {
                        source: by.clone(),
                        source_instance: by_inst,
                        target_type: "R",
                        target: func.to_string(),
                        target_instance: inst,
                        action: "start",
                        note: None,
                        value: None,
                    },
                )?;
                Role::Runnable(inst, by, by_inst)
            }
            Entry::Terminate => {
                let c = self.cores.entry(at.core.to_string()).or_default();
                if c.isr_stack.is_empty() && c.current.is_some() {
                    c.terminating = true;
                }
                Role::Plain
            }
            Entry::Plain => Role::Plain,
        };
        self.stack_mut(at.core).push(Frame { func: func.to_string(), role });
        self.bound(at, sink, false)
    }

    /// Keeps the stack just pushed within [`MAX_DEPTH`].
    fn bound(&mut self, at: At<'_>, sink: &mut dyn Sink, isr: bool) -> Result<()> {
        let stack = if isr {
            &mut self.cores.entry(at.core.to_string()).or_default().isr_stack
        } else {
            self.stack_mut(at.core)
        };
        if stack.len() <= MAX_DEPTH {
            return Ok(());
        }
        let dropped = stack.remove(0);
        sink.diagnostic(Diagnostic {
            severity: Severity::Warning,
            kind: "call_stack_overflow",
            pos: at.pos,
            ts: Some(at.ts),
            message: format!(
                "more than {MAX_DEPTH} nested calls on {} (returns lost?): the oldest, {}, is \
                 forgotten (a runnable or ISR it was stays open)",
                at.core, dropped.func
            ),
        })
    }

    /// A return on `at.core`, from function `from` (where the return instruction is) and to
    /// function `to` when the row says them.
    pub fn leave(
        &mut self,
        from: Option<&str>,
        to: Option<&str>,
        at: At<'_>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        // The functions an interrupt's return goes back to: the innermost open call of the
        // context it interrupted, and the function its entry row was in.
        let interrupted: Vec<String> = self
            .cores
            .get(at.core)
            .filter(|c| !c.isr_stack.is_empty())
            .map(|c| {
                let open = match &c.current {
                    Some((t, _)) => self.tasks.get(t).and_then(|t| t.stack.last()),
                    None => c.base_stack.last(),
                };
                open.map(|f| f.func.clone()).into_iter().chain(c.interrupted_in.clone()).collect()
            })
            .unwrap_or_default();
        let stack = self.stack_mut(at.core);
        if stack.is_empty() {
            return sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unmatched_return",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!(
                    "return on {} with no call open (the trace began inside the function, or \
                     its entry was lost): nothing ends",
                    at.core
                ),
            });
        }
        // Frames above the caller it returns to: one, unless the caller is deeper. A return
        // inside an ISR reaches no deeper than that ISR's frame, or the frame it interrupted
        // (a function open below it is not returned to across it).
        let below = stack.len().saturating_sub(1);
        let isr_at = stack.iter().rposition(|f| matches!(f.role, Role::Isr(_)));
        let lo = isr_at.unwrap_or(0).min(below);
        let deeper = to.and_then(|t| {
            let inside = stack.get(lo..below)?.iter().rposition(|f| f.func == t);
            if inside.is_none() && stack.last().is_some_and(|f| f.func == t) {
                return None; // into the innermost open function: below
            }
            inside
                .map(|i| lo + i + 1)
                .or_else(|| {
                    let under = isr_at?.checked_sub(1)?;
                    (stack.get(under)?.func == t).then_some(under + 1)
                })
                // Back to the code the outermost ISR interrupted: every ISR frame ends.
                .or_else(|| interrupted.iter().any(|f| f == t).then_some(0))
        });
        let keep = match deeper {
            Some(k) => k,
            // Back into the innermost open function: the return of something never seen
            // entered (a vector stub's, a tail-called helper's), not that function's.
            None if to.is_some() && stack.last().map(|f| f.func.as_str()) == to => {
                return Ok(());
            }
            None => below,
        };
        let popped: Vec<Frame> = stack.drain(keep..).collect();
        if popped.len() > 1 {
            // The function the return instruction is in returned; the others' returns were
            // lost (without its address: the innermost, which was running).
            let returned = from
                .and_then(|f| popped.iter().rposition(|p| p.func == f))
                .unwrap_or(popped.len() - 1);
            let lost: Vec<&str> = popped
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != returned)
                .map(|(_, f)| f.func.as_str())
                .collect();
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "missing_return",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!(
                    "return to {} on {}: the returns of {} were not in the trace; they end here",
                    to.unwrap_or("?"),
                    at.core,
                    lost.join(", ")
                ),
            })?;
        }
        for f in popped.into_iter().rev() {
            match f.role {
                Role::Plain => {}
                Role::Runnable(inst, by, by_inst) => self.send(
                    sink,
                    at,
                    Out {
                        source: by,
                        source_instance: by_inst,
                        target_type: "R",
                        target: f.func,
                        target_instance: inst,
                        action: "terminate",
                        note: None,
                        value: None,
                    },
                )?,
                Role::Isr(inst) => {
                    self.send(sink, at, System::process(at.core, "I", &f.func, inst, "terminate"))?
                }
            }
        }
        self.release(at, sink)
    }

    /// Applies the switch held on `at.core` once its last ISR has ended.
    fn release(&mut self, at: At<'_>, sink: &mut dyn Sink) -> Result<()> {
        let Some(c) = self.cores.get_mut(at.core) else { return Ok(()) };
        if !c.isr_stack.is_empty() {
            return Ok(());
        }
        match c.held.take() {
            Some((task, _)) => self.switch(task.as_deref(), at, sink),
            None => Ok(()),
        }
    }

    /// At the end of the export: switches still held (the trace ended inside the ISR that
    /// wrote them) are said, not applied.
    pub fn finish(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for (core, c) in &mut self.cores {
            let Some((task, pos)) = c.held.take() else { continue };
            let isr = c.isr_stack.first().map_or("?", |f| f.func.as_str());
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "held_switch",
                pos,
                ts: None,
                message: format!(
                    "switch of {core} to {} written inside {isr}, which had not returned when \
                     the export ended: not applied (the task that ran before keeps the core)",
                    task.as_deref().unwrap_or("idle")
                ),
            })?;
        }
        Ok(())
    }

    /// A write of `value` to the signal `name` on `at.core`, by what runs there.
    pub fn signal(
        &mut self,
        name: &str,
        value: i128,
        at: At<'_>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        if self.full(name, at, sink)? {
            return Ok(());
        }
        if !self.signals.contains(name) {
            self.signals.insert(name.to_string());
        }
        let (by, by_inst) = self.running_on(at.core).unwrap_or_else(|| (at.core.to_string(), -1));
        #[allow(clippy::cast_precision_loss)]
        let v = value as f64;
        self.send(
            sink,
            at,
            Out {
                source: by,
                source_instance: by_inst,
                target_type: "SIG",
                target: name.to_string(),
                target_instance: -1,
                action: "write",
                note: Some(value.to_string()),
                value: Some(v),
            },
        )
    }
}

/// What entering a function means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A plain call.
    Plain,
    /// A mapped runnable.
    Runnable,
    /// An interrupt handler.
    Isr,
    /// A function that ends the task that calls it.
    Terminate,
}
