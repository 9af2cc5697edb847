//! Ground truth: what every task, ISR and runnable instance did, kept from the simulator's
//! own decisions (the execution times it drew, the moments it chose to preempt, resume,
//! grant a lock) rather than read back from the lines it writes.
//!
//! Running time is the sum of the execution budgets drawn for the instance, so it checks
//! the simulator's time keeping as well as a reader's; ready and polling time are the
//! spans between the moments the simulator took a process off its core and gave it back,
//! or made it spin and granted its lock.
use super::model::{Core, Proc, Runnable};
use std::collections::VecDeque;

/// What one complete task, ISR or runnable instance did, in ns (the trace's time unit).
///
/// Fields follow the `instances` table (DESIGN.md, AMALTHEA). Its derived metrics follow:
/// response time `terminate_ts - activate_ts`, start delay `start_ts - activate_ts`, gross
/// execution `terminate_ts - start_ts`, which is `net_exec + ready_time + polling_time` (the
/// simulator has no passive waits and no parking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthInstance {
    /// Task, ISR or runnable name.
    pub entity: String,
    /// `T`, `I` or `R`.
    pub entity_type: &'static str,
    /// Instance number, as in the trace.
    pub instance: u64,
    /// Activation (a runnable: its start).
    pub activate_ts: i64,
    /// First start.
    pub start_ts: i64,
    /// Termination.
    pub terminate_ts: i64,
    /// Core of the first start.
    pub core: String,
    /// Time running. For a runnable this includes its task's active waits for a semaphore
    /// (the runnable is not suspended while its task spins).
    pub net_exec: i64,
    /// Time preempted (a runnable: suspended) between start and terminate.
    pub ready_time: i64,
    /// Time spent in active waits for a semaphore (0 for runnables).
    pub polling_time: i64,
    /// Running → ready transitions (a runnable: suspensions).
    pub preemptions: u64,
    /// Resumes on another core than the one last run on (always 0 here: processes are bound
    /// to one core).
    pub migrations: u64,
    /// For a runnable: the task instance that ran it.
    pub task: Option<(String, u64)>,
}

/// The instance a process is working on.
struct OpenProc {
    activate: i64,
    start: i64,
    first_core: usize,
    last_core: usize,
    /// When it last left the running state (preempted or started polling).
    since: i64,
    net: i64,
    ready: i64,
    polling: i64,
    preemptions: u64,
    migrations: u64,
}

impl OpenProc {
    fn new(activate: i64) -> Self {
        OpenProc {
            activate,
            start: activate,
            first_core: 0,
            last_core: 0,
            since: activate,
            net: 0,
            ready: 0,
            polling: 0,
            preemptions: 0,
            migrations: 0,
        }
    }
}

/// The runnable instance a task is running.
struct OpenRun {
    runnable: usize,
    instance: u64,
    start: i64,
    since: i64,
    net: i64,
    ready: i64,
    suspends: u64,
}

#[derive(Default)]
struct ProcTruth {
    cur: Option<OpenProc>,
    /// Activation times of the queued activations, oldest first.
    pending: VecDeque<i64>,
    run: Option<OpenRun>,
}

/// Collects [`TruthInstance`]s while the simulation runs. Every hook takes the process
/// index; a hook for an instance that is not open does nothing.
pub(super) struct Truth {
    proc_names: Vec<String>,
    proc_codes: Vec<&'static str>,
    run_names: Vec<String>,
    core_names: Vec<String>,
    procs: Vec<ProcTruth>,
    /// Complete instances, in the order they terminated.
    pub(super) done: Vec<TruthInstance>,
}

fn text(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl Truth {
    pub(super) fn new(procs: &[Proc], runs: &[Runnable], cores: &[Core]) -> Self {
        Truth {
            proc_names: procs.iter().map(|p| text(&p.name)).collect(),
            proc_codes: procs.iter().map(|p| if p.isr { "I" } else { "T" }).collect(),
            run_names: runs.iter().map(|r| text(&r.name)).collect(),
            core_names: cores.iter().map(|c| text(&c.name)).collect(),
            procs: procs.iter().map(|_| ProcTruth::default()).collect(),
            done: Vec::new(),
        }
    }

    /// An activation was logged: a new instance, or one queued behind the current one.
    pub(super) fn activate(&mut self, p: usize, t: i64, queued: bool) {
        let pt = &mut self.procs[p];
        if queued {
            pt.pending.push_back(t);
        } else {
            pt.cur = Some(OpenProc::new(t));
        }
    }

    pub(super) fn start(&mut self, p: usize, t: i64, core: usize) {
        if let Some(o) = self.procs[p].cur.as_mut() {
            o.start = t;
            o.first_core = core;
            o.last_core = core;
            o.since = t;
        }
    }

    pub(super) fn preempt(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.preemptions += 1;
            o.since = t;
        }
        if let Some(r) = pt.run.as_mut() {
            r.suspends += 1;
            r.since = t;
        }
    }

    pub(super) fn resume(&mut self, p: usize, t: i64, core: usize) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.ready += t - o.since;
            if core != o.last_core {
                o.migrations += 1;
            }
            o.last_core = core;
        }
        if let Some(r) = pt.run.as_mut() {
            r.ready += t - r.since;
        }
    }

    /// The simulator gave the instance `d` ns of work to do (one phase of a runnable, or an
    /// ISR body): that much running time, whatever preemptions split it.
    pub(super) fn work(&mut self, p: usize, d: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.net += d;
        }
        if let Some(r) = pt.run.as_mut() {
            r.net += d;
        }
    }

    pub(super) fn poll(&mut self, p: usize, t: i64) {
        if let Some(o) = self.procs[p].cur.as_mut() {
            o.since = t;
        }
    }

    /// The lock a polling process waited for was granted at `t`.
    pub(super) fn granted(&mut self, p: usize, t: i64) {
        let pt = &mut self.procs[p];
        if let Some(o) = pt.cur.as_mut() {
            o.polling += t - o.since;
            if let Some(r) = pt.run.as_mut() {
                r.net += t - o.since;
            }
        }
    }

    pub(super) fn runnable_start(&mut self, p: usize, t: i64, runnable: usize, instance: u64) {
        let run = OpenRun { runnable, instance, start: t, since: t, net: 0, ready: 0, suspends: 0 };
        self.procs[p].run = Some(run);
    }

    /// The runnable of process `p` (instance `inst`) terminated at `t`; `logged` is false
    /// when its line was not written (the run ended), which leaves it incomplete.
    pub(super) fn runnable_end(&mut self, p: usize, inst: u64, t: i64, logged: bool) {
        let pt = &mut self.procs[p];
        let (Some(r), Some(o)) = (pt.run.take(), pt.cur.as_ref()) else { return };
        if !logged {
            return;
        }
        self.done.push(TruthInstance {
            entity: self.run_names[r.runnable].clone(),
            entity_type: "R",
            instance: r.instance,
            activate_ts: r.start,
            start_ts: r.start,
            terminate_ts: t,
            core: self.core_names[o.last_core].clone(),
            net_exec: r.net,
            ready_time: r.ready,
            polling_time: 0,
            preemptions: r.suspends,
            migrations: 0,
            task: Some((self.proc_names[p].clone(), inst)),
        });
    }

    /// Process `p` (instance `inst`) terminated at `t`; its queued activation, if any,
    /// becomes the current instance.
    pub(super) fn terminate(&mut self, p: usize, inst: u64, t: i64, logged: bool) {
        let pt = &mut self.procs[p];
        let next = pt.pending.pop_front().map(OpenProc::new);
        let Some(o) = std::mem::replace(&mut pt.cur, next) else { return };
        if !logged {
            return;
        }
        self.done.push(TruthInstance {
            entity: self.proc_names[p].clone(),
            entity_type: self.proc_codes[p],
            instance: inst,
            activate_ts: o.activate,
            start_ts: o.start,
            terminate_ts: t,
            core: self.core_names[o.first_core].clone(),
            net_exec: o.net,
            ready_time: o.ready,
            polling_time: o.polling,
            preemptions: o.preemptions,
            migrations: o.migrations,
            task: None,
        });
    }
}
