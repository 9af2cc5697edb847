//! ovni's nOS-V (`V`) and Nanos6 (`6`) emulator models, replayed from the events: each
//! thread's raw channels (task body id, task id, task type, app id, subsystem, MPI rank,
//! idle state; Nanos6: thread type), changed by the model's events, and the task bodies each
//! thread runs (ovni's per-thread body stack). The channels shown on the thread and CPU rows
//! are computed from these by [`super::emu`], as ovni's emulator tracks them:
//!
//! * thread row: the raw value while the thread is Running (`TRACK_TH_RUN`: ids, type, rank,
//!   idle), active (`TRACK_TH_ACT`: the subsystem), or always (`TRACK_TH_ANY`: Nanos6's
//!   thread type); else nothing;
//! * CPU row: the raw value of the one thread Running on it; with none or several, nothing,
//!   except the idle channel, which shows Resting once the CPU has had a running thread
//!   (ovni's mux default).
//!
//! Spec digest (bsc-pm/ovni `src/emu/nosv/{setup,event}.c`, `src/emu/nanos6/{setup,event}.c`,
//! `src/emu/{task,body,chan,mux,cpu,model_cpu,track}.c`; the emulator's Paraver output of
//! ovni 1.14 is the arbiter where stored versions differ):
//!
//! ```text
//! VTc/VTC/6Tc create task (u32 id, u32 type); VTC: parallel (bodies 1.., no pause, no rerun)
//! VTx/VTp/VTr/VTe (u32 task, u32 body; 0 for an ordinary task, taken as body 1)
//! 6Tx/6Tp/6Tr/6Te (u32 task; body 1)
//! x: Created (or Dead, an ordinary nOS-V task runs again) -> Running, pushed on the thread's
//!    stack; refused over a Running body (Nanos6 allows it: nested inline tasks)
//! p: Running -> Paused, r: Paused -> Running, e: Running -> Dead, popped; on top only
//! subsystem: x pushes "Task: In body" (Nanos6 "Task: Running body"), e pops it
//! task channels: after the event, those of the Running body on top of the stack, if any
//! task type value: ovni's hash of the type label (uthash's Jenkins hash + 666, 31 bits,
//!    >= 1000), labelled with it
//! ```
//!
//! What ovni's emulator refuses (and stops at) is a warning here, never a stop: the event
//! leaves the task state and the channels as they were (`bad_task_event`, a task id 0 run
//! included: ovni's task channels refuse it; [`Runtime::ignored`] tells the task instances to
//! leave it too), a pop of a subsystem that is not on top pops the top anyway
//! (`bad_subsystem_pop`), a push on a stack 512 deep is ignored with its pop
//! (`subsystem_stack_full`), a channel without `CHAN_ALLOW_DUP` (idle; Nanos6's subsystem and
//! thread type; the task id, which the transitions always change) set to its value is applied
//! (`same_channel_value`), a label of 512 bytes or more is cut to 511. An event of a thread
//! that is not active is refused before it reaches this model (`thread_not_active`, see
//! [`super::emu`]). An event the model has no rule for is an info (`unmodelled_event`).
//!
//! Memory: tasks not ended (and parallel tasks' bodies not ended) at most [`MAX_FOLLOWED`];
//! an ended task leaves them and is remembered as its type and its run (a parallel task: its
//! number of bodies) while its end is among the last [`MAX_ENDED`] ([`Recent`]): an ordinary
//! nOS-V task runs again from there, a parallel one runs a further body, a task id is not
//! created again. This is the one memory of tasks: the task instances ([`super::tasks`])
//! read it ([`Runtime::task_info`]). A parallel task ends when its bodies 1 to n have all
//! ended (its bodies 1, 2, ... leave as they end): the stream never says how many bodies it
//! has, and a later body brings it back. [`MAX_TYPES`] types, each label held once
//! (`Rc<str>`, shared with the instances).
use super::super::Sink;
use super::emu::{warn, At};
use super::spec::Decoded;
use crate::Result;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

mod chans;
mod recent;
mod task;
#[cfg(test)]
mod tests;

pub use chans::*;
use chans::{simple, Op, IDX};
pub use recent::Recent;
pub use task::{Caps, TaskInfo};
use task::{Ended, Key, Task};

/// Depth of a subsystem stack (ovni's `MAX_CHAN_STACK`, where its emulator stops).
pub const MAX_STACK: usize = 512;
/// Bodies a thread holds on its stack at most (paused, nested): beyond, an execute is refused.
pub const MAX_BODY_STACK: usize = 4096;
/// Tasks not ended (and bodies of parallel tasks not ended) followed at once, all models and
/// processes (memory bound).
pub const MAX_FOLLOWED: usize = 1 << 20;
/// Ended tasks remembered (an ordinary nOS-V task may run again, a parallel one run a further
/// body, a task id may not be created again): those whose end is among the last this many
/// (memory bound).
pub const MAX_ENDED: usize = 1 << 20;
/// Task types followed, all models and processes (memory bound; real traces have tens).
pub const MAX_TYPES: usize = 1 << 16;
/// Longest task type label ovni accepts, in bytes (`MAX_PCF_LABEL` 512, its NUL included).
pub const MAX_LABEL: usize = 511;

/// A thread's raw channels of one model.
#[derive(Debug, Clone, Default)]
pub struct Chans {
    /// Single channels' values (0: none); a stack channel's top is in `stacks`.
    vals: Vec<i64>,
    stacks: Vec<Vec<i64>>,
    /// Pushes refused on a full stack, not popped yet, per channel.
    refused: Vec<u32>,
    /// Bodies executed and not ended, innermost last: (task id, body id).
    bodies: Vec<(u32, u32)>,
}

impl Chans {
    fn new(n: usize) -> Self {
        Chans {
            vals: vec![0; n],
            stacks: vec![Vec::new(); n],
            refused: vec![0; n],
            bodies: Vec::new(),
        }
    }
    /// The raw value of channel `ch` (0: none).
    pub fn raw(&self, ch: usize, spec: &ChanSpec) -> i64 {
        if spec.stack {
            self.stacks.get(ch).and_then(|s| s.last()).copied().unwrap_or(0)
        } else {
            self.vals.get(ch).copied().unwrap_or(0)
        }
    }
}

/// A thread as the runtime models see it.
#[derive(Debug, Clone, Default)]
pub struct RtThread {
    /// Index of its process.
    pub proc: usize,
    /// Application id (`app_id`).
    pub appid: i64,
    /// MPI rank (`rank`), if the metadata gives one.
    pub rank: Option<i64>,
    /// Raw channels per model (empty until the model is enabled).
    pub chans: [Chans; 2],
}

/// Task types and tasks of both models, and which models are enabled.
#[derive(Debug)]
pub struct Runtime {
    /// Enabled models (ovni's `require`, or their first event in a trace whose metadata
    /// requires nothing).
    pub on: [bool; 2],
    /// Type (model, process, id) -> value.
    types: HashMap<Key, i64>,
    /// Tasks not ended.
    tasks: HashMap<Key, Task>,
    /// Ended tasks (an ordinary nOS-V task runs again at its next execute, a parallel one runs
    /// further bodies; a Nanos6 task id is never created again), those whose end is among the
    /// last [`Caps::ended`]. The one memory of ended tasks: the task instances read it too
    /// ([`Runtime::task_info`]).
    ended: Recent<Key, Ended>,
    /// Type value -> label (each label held once, shared with the task instances).
    type_labels: HashMap<i64, Rc<str>>,
    /// Tasks not ended plus bodies of parallel tasks followed.
    followed: usize,
    max_followed: usize,
    max_types: usize,
    full: Cell<bool>,
    /// The event last applied was refused (it changed no task state).
    ignored: Cell<bool>,
    /// Notes given once (per code, per model).
    said: HashSet<String>,
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime::with_caps(Caps::default())
    }
}

impl Runtime {
    /// A runtime within the memory bounds `caps`.
    pub fn with_caps(caps: Caps) -> Self {
        Runtime {
            on: [false; 2],
            types: HashMap::new(),
            tasks: HashMap::new(),
            ended: Recent::new(caps.ended),
            type_labels: HashMap::new(),
            followed: 0,
            max_followed: caps.followed,
            max_types: caps.types,
            full: Cell::new(false),
            ignored: Cell::new(false),
            said: HashSet::new(),
        }
    }

    /// The event last applied was refused: it changed no task (its instances must not
    /// follow it).
    pub fn ignored(&self) -> bool {
        self.ignored.get()
    }

    /// A new event is being applied.
    pub fn clear_ignored(&self) {
        self.ignored.set(false);
    }

    /// Marks the event being applied as refused (ovni's emulator stops at it).
    pub fn ignore(&self) {
        self.ignored.set(true);
    }

    /// Says once, as info, that the model has no rule for event `code` (it changes nothing).
    fn unmodelled(&mut self, code: &str, at: At, sink: &mut dyn Sink) -> Result<()> {
        if !self.said.insert(code.to_string()) {
            return Ok(());
        }
        sink.diagnostic(super::super::Diagnostic {
            severity: super::super::Severity::Info,
            kind: "unmodelled_event",
            pos: at.pos,
            ts: Some(at.ts),
            message: format!(
                "{code}: the runtime model has no rule for this event (a newer nOS-V/Nanos6 \
                 event, or one ovni's emulator ignores): kept in events, it changes no channel \
                 (reported once per code)"
            ),
        })
    }
    /// Enables model `m` for `threads`: its channels, idle Progressing (ovni's connection).
    pub fn enable(&mut self, m: usize, threads: &mut [RtThread]) {
        let Some(slot) = self.on.get_mut(m) else { return };
        if *slot {
            return;
        }
        *slot = true;
        let (Some((_, specs)), Some(ix)) = (MODELS.get(m), IDX.get(m)) else { return };
        for t in threads {
            if let Some(c) = t.chans.get_mut(m) {
                *c = Chans::new(specs.len());
                if let Some(v) = c.vals.get_mut(ix.idle) {
                    *v = ST_PROGRESSING;
                }
            }
        }
    }

    /// The label of value `v` of channel `ch` of model `m` (task types: their labels).
    pub fn label(&self, m: usize, ch: usize, v: i64) -> Option<Cow<'static, str>> {
        let (_, specs) = MODELS.get(m)?;
        let spec = specs.get(ch)?;
        if let Some((_, l)) = spec.labels.iter().find(|(k, _)| *k == v) {
            return Some(Cow::Borrowed(l));
        }
        let ix = IDX.get(m)?;
        if ch == ix.ty && v != 0 {
            return self.type_labels.get(&v).map(|l| Cow::Owned(l.to_string()));
        }
        None
    }

    /// Gives a thread added after a model was enabled that model's channels.
    pub fn add_thread(&self, t: Option<&mut RtThread>) {
        let Some(t) = t else { return };
        for (m, on) in self.on.iter().enumerate() {
            if *on {
                if let (Some((_, specs)), Some(ix), Some(c)) =
                    (MODELS.get(m), IDX.get(m), t.chans.get_mut(m))
                {
                    *c = Chans::new(specs.len());
                    if let Some(v) = c.vals.get_mut(ix.idle) {
                        *v = ST_PROGRESSING;
                    }
                }
            }
        }
    }

    /// Applies event `mcv` (payload `d`) of thread `th` (named `name`), of model `m`.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        m: usize,
        mcv: [u8; 3],
        d: Option<&Decoded>,
        threads: &mut [RtThread],
        th: usize,
        name: &str,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let [_, cat, val] = mcv;
        let code = String::from_utf8_lossy(&mcv).into_owned();
        match cat {
            b'Y' if val == b'c' => {
                let proc = threads.get(th).map_or(0, |t| t.proc);
                return self.new_type(m, proc, d, name, &code, at, sink);
            }
            b'T' => return self.task_event(m, val, d, threads, th, name, &code, at, sink),
            _ => {}
        }
        let Some(op) = simple(m, cat, val) else {
            if cat == b'Y' || cat == b'T' {
                return Ok(());
            }
            return self.unmodelled(&code, at, sink);
        };
        let Some(chans) = threads.get_mut(th).and_then(|t| t.chans.get_mut(m)) else {
            return Ok(());
        };
        match op {
            Op::Push(ch, v) => {
                // Nanos6's subsystem and thread type refuse a value equal to the one shown
                // (ovni's channels without `CHAN_ALLOW_DUP`); nOS-V's subsystem allows it.
                if m == 1 && chans.stacks.get(ch).and_then(|s| s.last()) == Some(&v) {
                    same_value(m, ch, v, name, &code, at, sink)?;
                }
                push(chans, m, ch, v, name, &code, at, sink)
            }
            Op::Pop(ch, v) => pop(chans, m, ch, v, name, &code, at, sink),
            Op::Set(ch, v) => {
                if let Some(x) = chans.vals.get_mut(ch) {
                    if *x == v {
                        same_value(m, ch, v, name, &code, at, sink)?;
                    }
                    *x = v;
                }
                Ok(())
            }
            Op::Ignore => Ok(()),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn push(
    chans: &mut Chans,
    m: usize,
    ch: usize,
    v: i64,
    name: &str,
    code: &str,
    at: At,
    sink: &mut dyn Sink,
) -> Result<()> {
    let Some(stack) = chans.stacks.get_mut(ch) else { return Ok(()) };
    if stack.len() >= MAX_STACK {
        if let Some(r) = chans.refused.get_mut(ch) {
            *r += 1;
        }
        let msg = format!(
            "{name} {code} pushes {} on a stack of {MAX_STACK} (ovni's limit, where its emulator \
             stops): not pushed, nor popped later",
            value_text(m, ch, v)
        );
        return warn(sink, "subsystem_stack_full", at, msg);
    }
    stack.push(v);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn pop(
    chans: &mut Chans,
    m: usize,
    ch: usize,
    v: i64,
    name: &str,
    code: &str,
    at: At,
    sink: &mut dyn Sink,
) -> Result<()> {
    if let Some(r) = chans.refused.get_mut(ch).filter(|r| **r > 0) {
        *r -= 1;
        return Ok(());
    }
    let Some(stack) = chans.stacks.get_mut(ch) else { return Ok(()) };
    let top = stack.pop();
    if top == Some(v) {
        return Ok(());
    }
    let msg = format!(
        "{name} {code} pops {} but {} is on top: {}",
        value_text(m, ch, v),
        top.map_or("nothing".to_string(), |t| value_text(m, ch, t)),
        if top.is_some() { "the top is popped" } else { "nothing to pop" }
    );
    warn(sink, "bad_subsystem_pop", at, msg)
}

/// Says that channel `ch` is set to the value it shows (ovni refuses it on channels without
/// `CHAN_ALLOW_DUP`: the idle state, Nanos6's subsystem and thread type); it is applied.
#[allow(clippy::too_many_arguments)]
fn same_value(
    m: usize,
    ch: usize,
    v: i64,
    name: &str,
    code: &str,
    at: At,
    sink: &mut dyn Sink,
) -> Result<()> {
    let chan = MODELS.get(m).and_then(|(_, s)| s.get(ch)).map_or("", |s| s.thread);
    let msg = format!(
        "{name} {code} sets '{chan}' to {}, the value it has (ovni's emulator refuses a \
         channel set to its last value and stops here): applied",
        value_text(m, ch, v)
    );
    warn(sink, "same_channel_value", at, msg)
}

fn value_text(m: usize, ch: usize, v: i64) -> String {
    let label = MODELS
        .get(m)
        .and_then(|(_, s)| s.get(ch))
        .and_then(|s| s.labels.iter().find(|(k, _)| *k == v))
        .map(|(_, l)| *l);
    match label {
        Some(l) => format!("'{l}'"),
        None => v.to_string(),
    }
}
