#!/usr/bin/env python3
"""An independent reading of BTF: instances, lock_requests, intervals and seven analyses.

Written from /work/shared DESIGN.md ("Tables", "Metric definitions"), SEMANTICS.md (BTF
state machines, file format), FORMATS.md section 1 and the README's definitions (the
`intervals` table, Analyses), without tracedb's derive code or queries, so that the two
can be compared field by field (differential testing). Tables: `instances`,
`lock_requests`, and `intervals` of tasks, ISRs and runnables (channel `state`) and of
cores (channel `running`); analyses, computed from the oracle's own rows: `response_times`,
`preemption_pairs`, `cpu_load` with 1 ms and 7 ms windows, `execution_times`,
`activation_jitter`, `deadline_summary` (implicit deadlines, and with --deadlines a file's,
compared with `tracedb query deadline_summary --param deadlines=F`) and
`semaphore_contention`.

    btf_oracle.py TRACE.btf[.gz]                 print the oracle's table rows as CSV
    btf_oracle.py [--deadlines F] --tracedb BIN TRACE.btf...
                                                 ingest each trace with BIN into a temporary
                                                 archive, compare, print every difference;
                                                 exit 1 when there is one

Readings of the contract this oracle makes (where it is silent, the README's choice):
* time = the line's integer time x #timeScale, in ns from the file's own zero;
* an instance is (entity, BTF instance number); an event for a terminated instance, or a
  second activate of an open one, opens a new life cycle of the same number;
* a transition the table does not allow resynchronises (the instance takes the event's
  destination state) and makes the instance incomplete; the first event of an instance
  with no activate finds it in an unknown state (a first `preempt` is a preemption, but
  for the FreeRTOS trace logger's `preempt` noted `create pri:N` or `task_create`, its
  creation: ready, having run nowhere);
* a file whose `#creator` is the FreeRTOS trace logger (or `synthetic_trace_gen`, the
  generator of its repository) names a task after each event's
  core in its older labels, `[core/id]name`: they are the one task `name[id]`, and such a
  label as a resume's source (the task switched out) is the core `Core_<core>`;
* a line whose time is before the previous line's takes that time (the README's
  `time_backwards`: states never go back in time);
* start_ts = its `start` only; net_exec and ready/waiting/polling/parking time are summed
  over every state seen, up to terminate or to the capture's last event;
* migrations = times it runs again on a core other than the one it last ran on;
* the core of a process event is its source when that source is a core (a `C` target
  somewhere in the file, a name like `Core_0` or `CPU1`, anything that is not a process when
  the file names no core, or an undeclared source moving a process whose core is not known
  yet: core_inferred); a process as source means the core that process last ran on; else
  the instance's own last core; instances.core = the core of its first start or resume;
* at most one process runs on a core: an ISR starting on a busy core with no preempt
  preempts the process there (parks it if it polls) until the ISR terminates, a task
  until the displaced process's next event, unless that process's own preempt, wait or
  terminate follows at the same instant; a resume on another core while still running
  implies the lost preempt; a later preempt from the core it left is ignored;
* an activate written after the start at the same instant is that instance's activation;
* runnables: no activate (activate_ts = start_ts, start_ts only from `start`); they run
  in their task's instance (a runnable started by a runnable, in the caller's; one started
  by an instance not seen yet, in that one once it appears other than at its activate),
  are suspended when it leaves the core (their own suspend at that instant is the
  task's) and resumed when it runs again, end with it; suspended time is their
  ready_time, suspensions their preemptions; their core is their task's where they first
  run (else the core the task entity ran on last);
* lock_requests: one row per requestsemaphore/exclusivesemaphore of a process instance,
  matched first in first out with its assigned and released; a new request before the
  open one was assigned gives that one up; a release with no assigned closes the open
  one; a waiting with no open request opens one then; contended = a waiting or queued
  step of that process, an overfull of the semaphore while the request waited, or assigned
  later than requested;
* a source named like a core (`Core_0`, `CPU1`: the word core or cpu) is one, declared or
  not; a poll_parking on another core moves the polling process there (a migration);
* intervals: one per stretch in one state (active, running, ready, waiting, polling,
  parking; a runnable's running, suspended), with the action that entered and left it;
  terminated leaves no interval; core only while on a core (running, polling); a state
  still held at the end is open, closed at the capture's last event; a transition implied
  for another process names the action BTF would have written (`preempt` or `park` when an
  ISR or a task takes its core, `resume` or `poll_parking` when the ISR ends, `preempt`
  from the old core, ready for no time, when it resumes on another core while running),
  and its runnables follow with that action; an ISR starting at the instant the last one
  ended (tail-chaining) interrupts on, with no resume in between; a task that terminates
  or waits at the instant an ISR took its core left by its own event, and so did its
  runnables; an event of its own saying what an ISR or a task already implied for it (its
  preempt, its resume, at that instant or later with nothing of its own between) is folded
  in; a spinning task parked by an ISR whose lock comes meanwhile runs when the ISR ends;
* `running` intervals: per core, one per stretch a process instance occupies it (running
  and polling together), state = its name, value = its instance; it starts with the
  process's own (or implied) action and ends with the event that took the core or that
  the process left by (an ISR's `start`, not the `preempt` it implies);
* response_times: per task and ISR, over complete instances (the others counted as left
  out), min, max, average and sample standard deviation rounded to 0.1 as SQL rounds a
  double, nearest-rank p50/p90/p99 (the smallest value at least p% do not exceed);
* preemption_pairs: every preemption (implied ones and a first-event preempt included) on
  the core it was running on (a first-event preempt: its source's), preempted by the next
  process to occupy that core at or after it for a nonzero time (or at the capture's last
  instant), none when that is the preempted instance itself or nothing;
* cpu_load: per core (declared, or occupied by a process) and window aligned to multiples
  of its length, from the capture's first event to its last (a last event on a boundary
  ends the window before it), busy = occupancy by processes not named like `idle`, load =
  busy / window rounded to 4 decimals;
* execution_times: per task, ISR and runnable, net_exec and gross_exec min/avg/max over
  complete instances, net_exec_total over every instance that ran;
* activation_jitter: per task and ISR that has an instance with an activate or a start
  (tracedb lists no other; an instance with neither has no place in the order), instances
  in activation order (number breaking ties; one without an activate numbered below the
  first activated comes before it, another goes by its start), a distance per consecutive
  pair having both events, jitter = max - min;
* deadline_summary: per task and ISR, the deadline a file's rule gives (exact name, then
  the longer glob, fewer `*`, fewer `?`, then the later pattern text: the README says only
  "the pattern's text"), else the time to the next activation at a later instant (the
  last: the period before it; one activation: none); complete instances with one judged;
  an unfinished one (no terminate) whose activate + deadline is before the capture's last
  event is an unfinished miss; source file, implicit-period or mixed;
* semaphore_contention: per semaphore with a request row or a state of its own; requests =
  rows with a request or an assigned (a release alone is none); waits over rows with both
  (others left out), holds over rows assigned and released (assigned, not released: left
  out); p99 nearest rank; the process of the longest hold, the process with the largest
  total wait (none when it is 0); its own states (ready/free/unlock: free, used/unlock_full:
  used, lock/lock_used/full: full, overfull) held until the next or the capture's last
  event give locked (full or overfull) and overfull time and the episodes (entries into
  overfull); with no state of its own the times are NULL and the episodes 0 (tracedb's
  choice).
"""
import bisect
import fnmatch
import gzip
import io
import math
import os
import re
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)

SCALE = {"ps": 0.001, "ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}
CORE_NAME = re.compile(r"(^|[^a-z])(core|cpu)([^a-z]|$)", re.IGNORECASE)  # Core_0, ECU_CPU1
PROCESS_TYPES = {"T", "I", "ISR"}
CORE_TYPES = {"C", "CORE", "CPU"}  # in any case (README: Cores)
PROC_STATE = {  # action -> (allowed from states, destination)
    "activate": ({"init"}, "active"),
    "start": ({"active"}, "running"),
    "resume": ({"ready"}, "running"),
    "preempt": ({"running"}, "ready"),
    "terminate": ({"running"}, "terminated"),
    "poll": ({"running"}, "polling"),
    "wait": ({"running"}, "waiting"),
    "release": ({"waiting"}, "ready"),
    "run": ({"polling"}, "running"),
    "park": ({"polling"}, "parking"),
    "release_parking": ({"parking"}, "ready"),
    "poll_parking": ({"parking"}, "polling"),
}
INTERVAL_STATES = {"active", "running", "ready", "waiting", "polling", "parking", "suspended"}
INTERVALS = []  # the state intervals of every instance, as they close
ACTION = [None, None]  # the action ending one state and beginning the next (an implied one
# when the event implies another process's transition), and that of the event being read
RUNNABLE_STATE = {
    "start": "running",
    "resume": "running",
    "suspend": "suspended",
    "terminate": "terminated",
}
INSTANCE_COLUMNS = [
    "entity", "entity_type", "instance", "activate_ts", "start_ts", "terminate_ts", "core",
    "response_time", "start_delay", "gross_exec", "net_exec", "ready_time", "waiting_time",
    "polling_time", "parking_time", "preemptions", "migrations", "complete",
]
INTERVAL_COLUMNS = [
    "entity", "entity_type", "instance", "channel", "state", "value", "ts", "dur", "core",
    "start_action", "end_action", "open",
]
LOCK_COLUMNS = [
    "semaphore", "process", "process_instance", "request_ts", "assigned_ts", "released_ts",
    "contended",
]


def open_text(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    raw = gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)


def to_int(text):
    try:
        return int(text)
    except ValueError:
        return -1


FREERTOS_LABEL = re.compile(r"^\[(0[xX][0-9a-fA-F]+|[0-9]+)/(0[xX][0-9a-fA-F]+|[0-9]+)\](.*)$")


def freertos(field, as_source):
    """The FreeRTOS trace logger's older label `[core/id]name`: the task `name[id]` as a
    target; as a source (the task switched out before a resume), the core `Core_<core>`."""
    m = FREERTOS_LABEL.match(field)
    if not m:
        return field
    core, ident = (int(x, 0) if x[:2].lower() == "0x" else int(x) for x in m.group(1, 2))
    return f"Core_{core}" if as_source else f"{m.group(3)}[{ident}]"


def read_btf(path):
    """Yield (ts_ns, source, source_instance, target_type, target, target_instance, action,
    note)."""
    scale = 1
    labels = False  # the FreeRTOS logger's (or its generator's): a label is one task on every core
    last = None  # a time before the previous line's: the states take that one (README)
    with open_text(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                key, _, value = line[1:].partition(" ")
                if key.lower() == "timescale":
                    scale = SCALE.get(value.strip().lower(), 1)
                if key.lower() == "creator":
                    labels = value.strip().lower().startswith(
                        ("freertos trace logger", "synthetic_trace_gen"))
                continue
            fields = [x.strip() for x in line.split(",", 7)]
            if len(fields) < 7:
                continue
            try:
                raw = int(fields[0])
            except ValueError:
                continue
            ts = raw // 1000 if scale == 0.001 else raw * scale
            ts = last = ts if last is None else max(ts, last)
            note = fields[7] if len(fields) > 7 else ""
            if labels:
                fields[1], fields[4] = freertos(fields[1], True), freertos(fields[4], False)
            yield (ts, fields[1], to_int(fields[2]), fields[3].upper(), fields[4],
                   to_int(fields[5]), fields[6].lower(), note)


class Instance:
    def __init__(self, entity, etype, number):
        self.entity, self.etype, self.number = entity, etype, number
        self.state, self.since = "init", None
        self.activate_ts = self.start_ts = self.terminate_ts = None
        self.core = self.last_core = None
        self.acc = {"running": 0, "ready": 0, "waiting": 0, "polling": 0, "parking": 0,
                    "suspended": 0}
        self.preemptions = self.migrations = 0
        self.runnables = []  # a process's runnable instances
        self.task = None  # a runnable's process instance
        self.displaced = self.displaced_by = None  # implicit preemption by an ISR
        self.resume_state, self.by_task = "running", False
        self.resynced = False
        self.implicit = None  # (time, state) of a transition an ISR implied
        self.conflict = False  # displaced by a task that started on its core
        self.first_ts = None  # time of its first event
        self.with_task = False  # a runnable ended by its task's terminate
        self.lost = None  # (time, core) of a preempt taken as lost, not seen yet
        self.adopted = []  # runnables it started before the capture showed it
        self.was_resynced = False
        self.entered_by = self.on_core = None  # the action and core of its current state
        self.cause = None  # the action that took its core, when a move was taken back
        self.tail = None  # when an ISR's end gave it its core back

    def move(self, ts, state, is_open=False):
        if self.since is not None and self.state in self.acc:
            self.acc[self.state] += ts - self.since
        if self.since is not None and self.state in INTERVAL_STATES:
            INTERVALS.append({
                "entity": self.entity, "entity_type": self.etype, "instance": self.number,
                "channel": "state", "state": self.state, "value": None, "ts": self.since,
                "dur": ts - self.since, "core": self.on_core, "start_action": self.entered_by,
                "end_action": None if is_open else ACTION[0], "open": is_open,
                "cause": None if is_open else self.cause or ACTION[1]})
            self.cause = None
        self.state, self.since, self.entered_by = state, ts, ACTION[0]
        self.on_core = None
        if state in ("running", "polling"):
            task = self.task if self.etype == "R" else self
            self.on_core = (task.last_core if task is not None else None) or self.core

    def undo_move(self):
        """Take back its last move: the state it left goes on (and its interval with it)."""
        k = max(k for k, i in enumerate(INTERVALS) if i["entity"] == self.entity
                and i["entity_type"] == self.etype and i["instance"] == self.number)
        last = INTERVALS.pop(k)
        self.acc[last["state"]] -= last["dur"]
        self.state, self.since, self.entered_by = last["state"], last["ts"], last["start_action"]
        self.on_core, self.cause = last["core"], last["cause"]  # (the core was taken then)

    def runs_on(self, core):
        if core is not None:
            if self.last_core is not None and core != self.last_core:
                self.migrations += 1
            self.last_core = core
            if self.core is None:
                self.core = core

    def row(self, end_ts):
        if self.state not in ("terminated", "closed", "init") and self.since is not None:
            self.move(end_ts, self.state, True)
        runnable = self.etype == "R"
        activate = self.start_ts if runnable else self.activate_ts
        start, term = self.start_ts, self.terminate_ts

        def diff(a, b):
            return None if a is None or b is None else a - b

        started = self.since is not None
        return {
            "entity": self.entity, "entity_type": self.etype, "instance": self.number,
            "activate_ts": activate, "start_ts": start, "terminate_ts": term,
            "core": self.core,
            "response_time": diff(term, activate), "start_delay": diff(start, activate),
            "gross_exec": diff(term, start),
            "net_exec": self.acc["running"] if started else None,
            "ready_time": (self.acc["suspended"] if runnable else self.acc["ready"])
            if started else None,
            "waiting_time": None if runnable or not started else self.acc["waiting"],
            "polling_time": None if runnable or not started else self.acc["polling"],
            "parking_time": None if runnable or not started else self.acc["parking"],
            "preemptions": self.preemptions,
            "migrations": None if runnable else self.migrations,
            "complete": activate is not None and term is not None and not self.resynced,
        }


class Oracle:
    def __init__(self, events):
        self.events = events
        self.cores, self.processes = set(), set()
        for e in events:
            if e[3].upper() in CORE_TYPES:
                self.cores.add(e[4])
            elif e[3] in PROCESS_TYPES:
                self.processes.add(e[4])
            if CORE_NAME.search(e[1]):
                self.cores.add(e[1])
        self.occupant = {}  # core -> the process instance running or polling on it
        self.used_cores = set()  # cores that caused a process event (cpu_load lists them)
        self.entity_core = {}  # process -> the core any instance of it last ran on
        self.orphans = {}  # (process, instance) not seen yet -> runnables it started
        self.live = {}  # (entity, number) -> current Instance
        self.done = []  # every Instance ever made, in creation order
        self.locks = []  # rows of lock_requests
        self.preempted = []  # (process instance, time, core) of every preemption
        self.open_locks = {}  # (semaphore, process, instance) -> [rows not yet released]

    def instance(self, entity, etype, number, adopt=True):
        inst = self.live.get((entity, number))
        if inst is None or inst.state in ("terminated", "closed"):
            inst = Instance(entity, etype, number)
            self.live[(entity, number)] = inst
            self.done.append(inst)
            for r in self.orphans.pop((entity, number), []) if adopt else []:
                if r.task is None:
                    r.task = inst
                    inst.runnables.append(r)
                    inst.adopted.append(r)
        return inst

    def latest(self, entity, number):
        return self.live.get((entity, number))

    def core_of(self, source, source_instance):
        if source in self.processes:
            inst = self.latest(source, source_instance)
            return inst.last_core if inst is not None else None
        if source in self.cores or not self.cores:
            return source
        return None

    def process_event(self, ts, src, src_i, ttype, target, t_i, action, note=""):
        if src in self.cores:
            self.used_cores.add(src)  # a core by name or declaration: in entities as one
        if action not in PROC_STATE:
            return
        # (runnables started by an instance not seen yet are its own unless it first
        # appears at its activate: tracedb's reading)
        inst = self.instance(target, ttype, t_i, adopt=action != "activate")
        # The FreeRTOS trace logger's creation of a task: ready, having run nowhere.
        created = (action == "preempt" and (note.startswith("create pri:") or note == "task_create")
                   and inst.state == "init")
        allowed, dest = PROC_STATE[action]
        if inst.conflict:
            # Displaced by a task with no preempt: its next event is where it stands again
            # (its own preempt, wait or park then changes nothing more).
            inst.conflict = False
            if action in ("preempt",) and inst.state == "ready":
                inst.implicit = None
                return
        if (inst.implicit is not None and inst.implicit[1] == dest
                and self.core_of(src, src_i) in (None, inst.last_core)):
            # Its own preempt (resume) that an ISR implied already, written after it (at
            # that instant or later, nothing of its own in between): folded in.
            inst.implicit = None
            if inst.displaced_by is not None:
                inst.displaced_by.displaced, inst.displaced_by = None, None
            return
        if (inst.implicit is not None and inst.implicit[0] == ts and inst.displaced_by
                and action in ("terminate", "wait")):
            # It left by its own event at the instant the ISR came, written after: it ran
            # until then, no preemption.
            if inst.state == "ready":
                inst.preemptions -= 1
                self.preempted.pop()  # (the displacement was the last one recorded)
            inst.undo_move()
            inst.implicit = None
            for r in inst.runnables:
                if r.by_task and r.state == "suspended" and r.since == ts:
                    r.undo_move()
                    r.by_task = False
                    r.preemptions -= 1
            inst.displaced_by.displaced, inst.displaced_by = None, None
        inst.implicit = None  # (an event of its own: a later one folds nothing)
        if (src not in self.processes and src not in self.cores and self.cores
                and action != "activate" and inst.last_core is None
                and self.entity_core.get(target) is None):
            # An undeclared source moving a process whose core is not known yet is a core
            # (the README's core_inferred).
            self.cores.add(src)
            self.used_cores.add(src)
        source_core = self.core_of(src, src_i)
        if (action == "preempt" and inst.state == "running" and source_core is not None
                and inst.last_core is not None and source_core != inst.last_core):
            # From a core it has left (it resumed elsewhere while running): ignored; when
            # it is that resume's preempt, written after it at the same instant, the pair
            # was only written in the other order.
            if inst.lost == (ts, source_core):
                inst.resynced, inst.lost = inst.was_resynced, None
            return
        if action == "activate" and inst.activate_ts is None and inst.first_ts == ts:
            inst.activate_ts = ts  # its start was written before its activate
            return
        if inst.first_ts is None:
            inst.first_ts = ts
        if action == "activate" and inst.state != "init":
            # A second activate of an open instance: the earlier life cycle ends there,
            # incomplete, and a new one begins (a producer that reuses numbers).
            inst.move(ts, "closed")
            inst.resynced = True
            inst = self.instance(target, ttype, t_i)
        elif inst.state != "init" and inst.state not in allowed:
            inst.was_resynced = inst.resynced
            inst.resynced = True  # a transition the table does not allow
        if action == "activate":
            inst.activate_ts = ts
        if action == "preempt" and inst.state in ("running", "init") and not created:
            inst.preemptions += 1
            self.preempted.append((inst, ts, inst.last_core if inst.state == "running"
                                   else source_core))
        if (action in ("resume", "run") and inst.state == "running" and source_core is not None
                and inst.last_core is not None and source_core != inst.last_core):
            inst.preemptions += 1  # the preempt on its old core is lost: taken as then
            self.preempted.append((inst, ts, inst.last_core))
            inst.lost = (ts, inst.last_core)
            ACTION[:] = ["preempt", "preempt"]  # it left that core, ready for no time
            self.leave_core(ts, inst, "ready")
            ACTION[:] = [action, action]
        if action == "start" and inst.start_ts is None:
            inst.start_ts = ts
        if (action == "release_parking" and inst.displaced_by is not None
                and inst.displaced_by.etype in ("I", "ISR")):
            inst.resume_state = "running"  # its lock came: it runs when the ISR ends
        elif inst.displaced_by is not None:  # its own event ends an implicit preemption
            inst.displaced_by.displaced, inst.displaced_by = None, None
        core = None if action == "activate" or created else source_core or inst.last_core
        if inst.adopted and action in ("preempt", "wait", "poll", "park", "terminate"):
            for r in inst.adopted:  # they started where it ran until this first event
                if r.state == "running" and r.core is None:
                    r.core = r.on_core = core
        inst.adopted = []
        if dest in ("running", "polling"):
            inst.runs_on(core)  # (a poll_parking on another core migrates too)
            if core is not None and dest == "running":
                self.entity_core[target] = core
            other = self.occupant.get(core)
            if (other is not None and other is not inst and core is not None
                    and other.state in ("running", "polling") and ttype in ("I", "ISR")
                    and other.tail == ts):
                # Tail-chaining: an ISR taking the core at the instant the last one gave it
                # back interrupts on what that one interrupted, with no resume in between.
                other.undo_move()
                for r in other.runnables:
                    if r.state == "running" and r.since == ts and r.entered_by == "resume":
                        r.undo_move()
                        r.by_task = True
                other.implicit, other.displaced_by, other.tail = (ts, other.state), inst, None
                inst.displaced = other
            elif (other is not None and other is not inst and core is not None
                    and other.state in ("running", "polling")):
                # At most one process runs on a core: an ISR that starts there with no
                # preempt of the process running there preempts it until it terminates;
                # a task, until the displaced one's next event (a polling process that
                # loses its core parks: BTF's park).
                other.resume_state = other.state
                if other.state == "running":
                    other.preemptions += 1
                    self.preempted.append((other, ts, core))
                ACTION[0] = "preempt" if other.state == "running" else "park"  # implied
                self.leave_core(ts, other, "ready" if other.state == "running" else "parking")
                ACTION[0] = action
                other.implicit = (ts, other.state)
                other.displaced_by = inst
                if ttype in ("I", "ISR"):
                    inst.displaced = other
                else:
                    other.conflict = True
            if core is not None:
                self.occupant[core] = inst
        elif core is not None and inst.last_core is None:
            inst.last_core = core
        if dest in ("running", "polling"):
            inst.move(ts, dest)
            self.follow(ts, inst, "running")
        else:
            self.leave_core(ts, inst, dest)
        if action == "terminate":
            inst.terminate_ts = ts
            back = inst.displaced
            if back is not None and back.state in ("ready", "parking"):
                ACTION[0] = "resume" if back.resume_state == "running" else "poll_parking"
                back.move(ts, back.resume_state)
                back.implicit, back.tail = (ts, back.state), ts
                self.follow(ts, back, "running")
                ACTION[0] = action
                back.displaced_by, inst.displaced = None, None
                if back.last_core is not None:
                    self.occupant[back.last_core] = back

    def leave_core(self, ts, inst, dest):
        """`inst` leaves running or polling for `dest`; its runnables follow it."""
        was_on_core = inst.state in ("running", "polling")
        if was_on_core and self.occupant.get(inst.last_core) is inst:
            del self.occupant[inst.last_core]
        inst.move(ts, dest)
        if dest == "terminated":
            for r in inst.runnables:
                if r.state in ("running", "suspended"):
                    r.move(ts, "terminated")
                    r.terminate_ts, r.with_task = ts, True
        elif dest in ("ready", "waiting", "parking") and (was_on_core or inst.first_ts == ts):
            self.follow(ts, inst, "suspended")

    def follow(self, ts, task, state):
        """A task's running runnables are suspended with it, and resumed when it runs."""
        for r in task.runnables:
            if state == "suspended" and r.state == "running":
                r.preemptions += 1
                r.by_task = True
                r.move(ts, "suspended")
            elif state == "suspended" and r.state == "suspended" and r.since == ts:
                r.by_task = True  # its own suspend, written just before: the task's
            elif state == "running" and r.state == "running" and r.core is None:
                r.core = r.on_core = task.last_core  # it started before its task ran
            elif state == "running" and r.state == "suspended" and r.by_task:
                r.by_task = False
                r.move(ts, "running")

    def runnable_event(self, ts, src, src_i, target, t_i, action):
        dest = RUNNABLE_STATE.get(action)
        if dest is None:
            return
        ended = self.live.get((target, t_i))
        if (action == "terminate" and ended is not None and ended.state == "terminated"
                and ended.with_task and ended.terminate_ts == ts):
            ended.with_task = False  # its own terminate, after its task's at that instant
            return
        inst = self.instance(target, "R", t_i)
        task = self.latest(src, src_i)
        if task is not None and task.etype == "R":
            task = task.task  # a runnable called by a runnable runs in the caller's task
        if task is not None and inst not in task.runnables:
            task.runnables.append(inst)
            inst.task = task
        elif task is None and src in self.processes and inst.task is None:
            # Started by a task instance not seen yet: its own once it appears.
            self.orphans.setdefault((src, src_i), []).append(inst)
        core = task.last_core if task is not None else None
        if core is None and task is not None:
            core = self.entity_core.get(task.entity)  # (its task's start was not seen)
        if dest == inst.state:  # already done by its task's event
            return
        if action == "suspend" and inst.state in ("running", "init"):
            inst.preemptions += 1
        if action == "start" and inst.start_ts is None:
            inst.start_ts = ts
        if dest == "running":
            if core is not None and inst.core is None:
                inst.core = core
        inst.by_task = False
        inst.move(ts, dest)
        if action == "terminate":
            inst.terminate_ts = ts

    def semaphore_event(self, ts, src, src_i, target, action):
        if src == target:  # the semaphore's own state
            if action == "overfull":
                waiting = [r for rows in self.open_locks.values() for r in rows
                           if r["semaphore"] == target and r["assigned_ts"] is None
                           and r["request_ts"] is not None]
                if waiting:
                    max(waiting, key=lambda r: r["request_ts"])["contended"] = True
            return
        key = (target, src, src_i)
        rows = self.open_locks.setdefault(key, [])
        if action in ("requestsemaphore", "exclusivesemaphore"):
            for r in rows:  # a retry gives up the request that was not granted
                if r["assigned_ts"] is None and r["request_ts"] is not None:
                    r["given_up"] = True
            rows[:] = [r for r in rows if not r.get("given_up")]
            row = {"semaphore": target, "process": src, "process_instance": src_i,
                   "request_ts": ts, "assigned_ts": None, "released_ts": None,
                   "contended": False}
            rows.append(row)
            self.locks.append(row)
        elif action in ("waiting", "queued"):
            pending = [r for r in rows if r["assigned_ts"] is None]
            if not pending and action == "waiting":  # its request was not seen: now
                row = {"semaphore": target, "process": src, "process_instance": src_i,
                       "request_ts": ts, "assigned_ts": None, "released_ts": None,
                       "contended": False}
                rows.append(row)
                self.locks.append(row)
                pending = [row]
            if pending:
                pending[0]["contended"] = True
        elif action == "assigned":
            pending = [r for r in rows if r["assigned_ts"] is None]
            if not pending:
                row = {"semaphore": target, "process": src, "process_instance": src_i,
                       "request_ts": None, "assigned_ts": None, "released_ts": None,
                       "contended": False}
                rows.append(row)
                self.locks.append(row)
                pending = [row]
            pending[0]["assigned_ts"] = ts
            if pending[0]["request_ts"] is not None and ts > pending[0]["request_ts"]:
                pending[0]["contended"] = True
        elif action == "released":
            held = [r for r in rows if r["assigned_ts"] is not None] or rows[:1]
            if held:  # (a request whose assigned is missing is the one released)
                held[0]["released_ts"] = ts
                rows.remove(held[0])
            else:
                row = {"semaphore": target, "process": src, "process_instance": src_i,
                       "request_ts": None, "assigned_ts": None, "released_ts": ts,
                       "contended": False}
                self.locks.append(row)

    def run(self):
        end_ts = 0
        del INTERVALS[:]
        for ts, src, src_i, ttype, target, t_i, action, note in self.events:
            end_ts = max(end_ts, ts)
            ACTION[0] = ACTION[1] = action
            if ttype in PROCESS_TYPES:
                self.process_event(ts, src, src_i, ttype, target, t_i, action, note)
            elif ttype == "R":
                self.runnable_event(ts, src, src_i, target, t_i, action)
            elif ttype == "SEM":
                self.semaphore_event(ts, src, src_i, target, action)
        instances = [i.row(end_ts) for i in self.done]
        preempted = [(i.entity, i.number, ts, core) for i, ts, core in self.preempted]
        return instances, self.locks, INTERVALS + running_channel(INTERVALS), preempted


def running_channel(intervals):
    """What occupies each core: a process instance's running and polling, one stretch."""
    out = []
    last = {}  # core -> its latest occupancy
    for i in sorted((i for i in intervals if i["entity_type"] != "R" and i["core"] is not None),
                    key=lambda i: (i["ts"], i["dur"] > 0)):
        prev = last.get(i["core"])
        if (prev is not None and (prev["state"], prev["value"]) == (i["entity"], i["instance"])
                and prev["ts"] + prev["dur"] == i["ts"] and not prev["open"]):
            prev["dur"] += i["dur"]
            prev["end_action"], prev["open"] = i["cause"], i["open"]
            continue
        # (an occupancy ends with the event that took the core: an ISR's start, not the
        # preempt it implies for the process it displaced)
        row = dict(i, entity=i["core"], entity_type="C", instance=-1, channel="running",
                   state=i["entity"], value=i["instance"], end_action=i["cause"])
        last[i["core"]] = row
        out.append(row)
    return out


def derive(path):
    """The oracle's tables and analyses of one trace: {name: [row]}."""
    events = list(read_btf(path))
    oracle = Oracle(events)
    instances, locks, intervals, preempted = oracle.run()
    out = {"instances": instances, "lock_requests": locks, "intervals": intervals}
    span = (min(e[0] for e in events), max(e[0] for e in events)) if events else None
    cores = {e[4] for e in events if e[3].upper() in CORE_TYPES} | oracle.used_cores
    out["response_times"] = response_times(instances)
    out["preemption_pairs"] = preemption_pairs(preempted, intervals)
    for window in (1000000, 7000000):
        out["cpu_load %d" % window] = cpu_load(intervals, cores, span, window)
    out["execution_times"] = execution_times(instances)
    out["activation_jitter"] = activation_jitter(instances)
    end = span[1] if span else 0
    out["semaphore_contention"] = semaphore_contention(locks, events, end)
    out["deadline_summary"] = deadline_summary(instances, {}, end)
    if DEADLINES[0] is not None:
        out["deadline_summary file"] = deadline_summary(instances, DEADLINES[1], end)
    return out


STATS = ("min", "avg", "p50", "p90", "p99", "max", "stddev")
METRICS = ("response_time", "start_delay", "net_exec", "gross_exec")
# name (and parameters) -> (columns compared, key columns, arguments of `tracedb query`)
ANALYSES = {
    "response_times": (["instances", "instances_left_out"] + [
        "%s_%s" % (m, s) for m in METRICS for s in STATS], ["entity", "entity_type"], []),
    "preemption_pairs": (["preemptions", "first_ts", "last_ts"],
                         ["preempted", "preempted_by", "core"], []),
    "cpu_load 1000000": (["window_end", "busy", "load"], ["core", "window_start"], []),
    "cpu_load 7000000": (["window_end", "busy", "load"], ["core", "window_start"],
                         ["--param", "window=7ms"]),
    "execution_times": (["instances", "instances_left_out", "net_exec_total"] + [
        "%s_%s" % (m, s) for m in ("net_exec", "gross_exec") for s in ("min", "avg", "max")],
        ["entity", "entity_type"], []),
    "activation_jitter": (["activations", "starts"] + [
        "%s_to_%s_%s" % (m, m, s) for m in ("activate", "start") for s in ("min", "avg", "max")]
        + ["activate_jitter", "start_jitter"], ["entity", "entity_type"], []),
    "deadline_summary": (["instances", "instances_left_out", "unfinished_misses", "misses",
                          "miss_ratio", "worst_lateness", "deadline_source"], ["entity"], []),
    "semaphore_contention": ([
        "requests", "contended_requests", "contention_ratio", "overfull_episodes",
        "wait_total", "wait_avg", "wait_max", "wait_p99", "waits_left_out", "hold_total",
        "hold_avg", "hold_max", "holds_left_out", "longest_holding_process",
        "most_waiting_process", "locked_time", "overfull_time"], ["semaphore"], []),
}
DEADLINES = [None, {}]  # --deadlines: the file, and its rules {pattern: ns}


def read_deadlines(path):
    """A deadline file (README: deadline_misses): `entity,deadline` lines, a unit suffix
    (a bare number is ns), `#` comments, a first line of column names skipped."""
    units = {"ps": Fraction(1, 1000), "ns": 1, "us": 1000, "\u00b5s": 1000, "ms": 1000000,
             "s": 1000000000}
    rules = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            line = line.strip()  # (a comment is a line of its own: tracedb refuses `1ms # x`)
            if not line or line.startswith("#") or (n == 0 and line.replace(" ", "") == "entity,deadline"):
                continue
            pattern, value = (x.strip() for x in line.rsplit(",", 1))
            m = re.fullmatch(r"([0-9.]+)\s*([a-z\u00b5]*)", value)
            rules[pattern] = int(Fraction(m.group(1)) * units[m.group(2) or "ns"])
    return rules


def deadline_rule(rules, entity):
    """The deadline a file gives an entity: an exact name beats a glob, a longer glob a
    shorter one, then fewer `*`, fewer `?`, then the pattern's text: the later in
    character order (the README says only "the pattern's text"; tracedb's choice)."""
    if entity in rules:
        return rules[entity]
    globs = [p for p in rules if any(c in p for c in "*?[") and fnmatch.fnmatchcase(entity, p)]
    if not globs:
        return None
    best = max(globs, key=lambda p: (len(p), -p.count("*"), -p.count("?"), p))
    return rules[best]


def rounded(fraction, digits):
    """As SQL's round of a double: the double times 10^digits, half away from zero (so
    0.02405 rounds down, its double being a little less, and 0.55275 up)."""
    scaled = abs(float(fraction) * 10 ** digits)
    whole = math.floor(scaled) + (1 if scaled - math.floor(scaled) >= 0.5 else 0)
    return math.copysign(whole / 10 ** digits, fraction)


def response_times(instances):
    """Per task and ISR, statistics over complete instances (README: Analyses)."""
    out = {}
    for i in instances:
        if i["entity_type"] == "R":
            continue
        row = out.setdefault(i["entity"], {"entity": i["entity"], "entity_type":
                                           i["entity_type"], "values": []})
        row["values"].append(i)
    for row in out.values():
        done = [i for i in row.pop("values") if i["complete"]]
        row["instances"] = len(done)
        row["instances_left_out"] = sum(1 for i in instances if i["entity"] == row["entity"]
                                        and i["entity_type"] != "R") - len(done)
        for m in METRICS:
            values = sorted(i[m] for i in done if i[m] is not None)
            n = len(values)
            for s in STATS:
                row["%s_%s" % (m, s)] = None
            if not n:
                continue
            row[m + "_min"], row[m + "_max"] = values[0], values[-1]
            row[m + "_avg"] = rounded(Fraction(sum(values), n), 1)
            for p in (50, 90, 99):  # nearest rank
                row["%s_p%d" % (m, p)] = values[max(1, -(-p * n // 100)) - 1]
            if n > 1:
                mean = Fraction(sum(values), n)
                var = sum((v - mean) ** 2 for v in values) / (n - 1)
                row[m + "_stddev"] = round(math.sqrt(var), 1)
    return list(out.values())


def by_entity(instances, runnables):
    out = {}
    for i in instances:
        if runnables or i["entity_type"] != "R":
            out.setdefault((i["entity"], i["entity_type"]), []).append(i)
    return out


def execution_times(instances):
    """Per task, ISR and runnable: net and gross execution over complete instances, and
    the running time of all of them (README: Analyses)."""
    out = []
    for (entity, etype), rows in by_entity(instances, True).items():
        done = [i for i in rows if i["complete"]]
        row = {"entity": entity, "entity_type": etype, "instances": len(done),
               "instances_left_out": len(rows) - len(done)}
        nets = [i["net_exec"] for i in rows if i["net_exec"] is not None]
        row["net_exec_total"] = sum(nets) if nets else None
        for m in ("net_exec", "gross_exec"):
            values = [i[m] for i in done if i[m] is not None]
            row[m + "_min"] = min(values) if values else None
            row[m + "_max"] = max(values) if values else None
            row[m + "_avg"] = rounded(Fraction(sum(values), len(values)), 1) if values else None
        out.append(row)
    return out


def activation_jitter(instances):
    """Per task and ISR: distances between consecutive instances' activates and first
    starts, consecutive in activation order (README: activation_jitter)."""
    out = []
    for (entity, etype), rows in by_entity(instances, False).items():
        # an instance with neither event has no place in that order and no distance; an
        # entity with no such event at all has a row of 0 activations and no distances
        rows = [i for i in rows if i["activate_ts"] is not None or i["start_ts"] is not None]
        activated = [i for i in rows if i["activate_ts"] is not None]
        first = min(activated, key=lambda i: (i["activate_ts"], i["instance"]), default=None)

        def order(i):
            if i["activate_ts"] is not None:
                return (i["activate_ts"], 0, i["instance"])
            if first is not None and i["instance"] < first["instance"]:
                return (first["activate_ts"], -1, i["instance"])  # before the capture
            ts = i["start_ts"] if i["start_ts"] is not None else math.inf
            return (ts, 0, i["instance"])
        rows = sorted(rows, key=order)
        row = {"entity": entity, "entity_type": etype, "activations": len(activated),
               "starts": sum(1 for i in rows if i["start_ts"] is not None)}
        for m, col in (("activate", "activate_ts"), ("start", "start_ts")):
            d = [b[col] - a[col] for a, b in zip(rows, rows[1:])
                 if a[col] is not None and b[col] is not None]
            name = "%s_to_%s_" % (m, m)
            row[name + "min"] = min(d) if d else None
            row[name + "max"] = max(d) if d else None
            row[name + "avg"] = rounded(Fraction(sum(d), len(d)), 1) if d else None
            row[m + "_jitter"] = max(d) - min(d) if d else None
        out.append(row)
    return out


def deadline_summary(instances, rules, end_ts):
    """Per task and ISR: complete instances judged against their deadline (a file's rule,
    else the activation period), misses among them, and unfinished instances whose
    deadline passed before the capture's last event (README: deadline_misses)."""
    out = []
    for (entity, etype), rows in by_entity(instances, False).items():
        times = sorted({i["activate_ts"] for i in rows if i["activate_ts"] is not None})
        fixed = deadline_rule(rules, entity)
        judged, unfinished, sources = [], 0, set()
        for i in rows:
            a = i["activate_ts"]
            if a is None:
                continue
            if fixed is not None:
                deadline, source = fixed, "file"
            else:
                k = bisect.bisect_right(times, a)
                if k < len(times):
                    deadline = times[k] - a
                elif len(times) > 1:
                    deadline = times[-1] - times[-2]
                else:
                    continue
                source = "implicit-period"
            if i["complete"]:
                judged.append(i["terminate_ts"] - (a + deadline))
                sources.add(source)
            elif i["terminate_ts"] is None and a + deadline < end_ts:
                unfinished += 1
        misses = sum(1 for x in judged if x > 0)
        out.append({
            "entity": entity, "instances": len(judged),
            "instances_left_out": len(rows) - len(judged), "unfinished_misses": unfinished,
            "misses": misses if judged else None,
            "miss_ratio": rounded(Fraction(misses, len(judged)), 4) if judged else None,
            "worst_lateness": max(judged) if judged else None,
            "deadline_source": (sources.pop() if len(sources) == 1 else "mixed")
            if judged else None})
    return out


SEM_STATE = {"ready": "free", "lock": "full", "used": "used", "free": "free",
             "lock_used": "full", "unlock": "free", "unlock_full": "used",
             "overfull": "overfull", "full": "full"}


def semaphore_contention(locks, events, end_ts):
    """Per semaphore: its lock requests' contention, waits and holds, and the time its own
    states (SEMANTICS.md: semaphores) show it full or overfull (README: Analyses)."""
    states = {}
    for e in events:
        if e[3] == "SEM" and e[1] == e[4] and e[6] in SEM_STATE:
            states.setdefault(e[4], []).append((e[0], SEM_STATE[e[6]]))
    rows = {}
    for r in locks:
        rows.setdefault(r["semaphore"], []).append(r)
    out = []
    for sem in sorted(set(rows) | set(states)):
        reqs = [r for r in rows.get(sem, []) if r["request_ts"] is not None
                or r["assigned_ts"] is not None]  # a release alone is no request
        waits = [(r["assigned_ts"] - r["request_ts"], r) for r in reqs
                 if r["request_ts"] is not None and r["assigned_ts"] is not None]
        holds = [(r["released_ts"] - r["assigned_ts"], r) for r in reqs
                 if r["assigned_ts"] is not None and r["released_ts"] is not None]
        contended = sum(1 for r in reqs if r["contended"])
        row = {"semaphore": sem, "requests": len(reqs), "contended_requests": contended,
               "contention_ratio": rounded(Fraction(contended, len(reqs)), 4) if reqs
               else None,
               "waits_left_out": len(reqs) - len(waits),
               "holds_left_out": sum(1 for r in reqs if r["assigned_ts"] is not None
                                     and r["released_ts"] is None)}
        for name, values in (("wait", waits), ("hold", holds)):
            v = sorted(x for x, _ in values)
            row[name + "_total"] = sum(v) if v else None
            row[name + "_avg"] = rounded(Fraction(sum(v), len(v)), 1) if v else None
            row[name + "_max"] = v[-1] if v else None
        v = sorted(x for x, _ in waits)
        row["wait_p99"] = v[max(1, -(-99 * len(v) // 100)) - 1] if v else None
        # ties: the hold that began first, then the process name first in order
        row["longest_holding_process"] = min(
            holds, key=lambda h: (-h[0], h[1]["assigned_ts"], h[1]["process"]))[1]["process"] \
            if holds else None
        per_process = {}
        for w, r in waits:
            if w > 0:
                total, first = per_process.get(r["process"], (0, r["request_ts"]))
                per_process[r["process"]] = (total + w, min(first, r["request_ts"]))
        # ties: the process that began waiting first, then the name
        most = min(per_process.items(), key=lambda p: (-p[1][0], p[1][1], p[0]), default=None)
        row["most_waiting_process"] = most[0] if most else None
        # with no state of its own, its time locked and overfull and its overfull episodes
        # are unknown, NULL
        episodes, locked, overfull = None, None, None
        if sem in states:
            episodes = locked = overfull = 0
            seq = states[sem] + [(end_ts, None)]
            prev = None
            for (ts, state), (nxt, _s) in zip(seq, seq[1:]):
                if state == "overfull" and prev != "overfull":
                    episodes += 1
                if state in ("full", "overfull"):
                    locked += nxt - ts
                if state == "overfull":
                    overfull += nxt - ts
                prev = state
        row["overfull_episodes"], row["locked_time"], row["overfull_time"] = \
            episodes, locked, overfull
        out.append(row)
    return out


def preemption_pairs(preempted, intervals):
    """Who preempted whom, per core: the next process to occupy the core at or after the
    preemption (one resumed and left at one instant occupies nothing; one the capture ends
    in, however short, does), unless that is the preempted instance itself."""
    occupancy = {}
    for r in intervals:
        if r["channel"] == "running" and (r["dur"] > 0 or r["open"]):
            occupancy.setdefault(r["entity"], []).append(r)
    for rows in occupancy.values():
        rows.sort(key=lambda r: r["ts"])
    out = {}
    for entity, number, ts, core in preempted:
        rows = occupancy.get(core, [])
        k = bisect.bisect_left([r["ts"] for r in rows], ts)
        by = None
        if k < len(rows) and (rows[k]["state"], rows[k]["value"]) != (entity, number):
            by = rows[k]["state"]
        row = out.setdefault((entity, by, core), {
            "preempted": entity, "preempted_by": by, "core": core, "preemptions": 0,
            "first_ts": ts, "last_ts": ts})
        row["preemptions"] += 1
        row["first_ts"], row["last_ts"] = min(row["first_ts"], ts), max(row["last_ts"], ts)
    return list(out.values())


def cpu_load(intervals, cores, span, window):
    """Per core and aligned window: time a non-idle process occupied it, and its share."""
    if span is None:
        return []
    busy = {}
    for r in intervals:
        if r["channel"] != "running":
            continue
        cores.add(r["entity"])
        if "idle" in r["state"].lower():
            continue
        start, end = r["ts"], r["ts"] + r["dur"]
        w = start // window * window
        while w < end:
            key = (r["entity"], w)
            busy[key] = busy.get(key, 0) + min(end, w + window) - max(start, w)
            w += window
    first = span[0] // window * window
    last = max(first, (span[1] - 1) // window * window) if span[1] > span[0] else first
    out = []
    for core in sorted(cores):
        for w in range(first, last + 1, window):
            b = busy.get((core, w), 0)
            out.append({"core": core, "window_start": w, "window_end": w + window, "busy": b,
                        "load": rounded(Fraction(b, window), 4)})
    return out


# ----------------------------------------------------------------------------- comparison

# name -> (columns compared, key columns, columns ordering rows of one key, tracedb's SQL)
TABLES = {
    "instances": (INSTANCE_COLUMNS[3:], INSTANCE_COLUMNS[:3],
                  ("activate_ts", "start_ts"), "instances"),
    "lock_requests": (LOCK_COLUMNS[3:], LOCK_COLUMNS[:3],
                      ("request_ts", "assigned_ts", "released_ts"), "lock_requests"),
    "intervals": (INTERVAL_COLUMNS[4:], INTERVAL_COLUMNS[:4], ("ts", "dur"),
                  "intervals WHERE channel = 'running' OR (channel = 'state' "
                  "AND entity_type IN ('T', 'I', 'ISR', 'R'))"),
}


def tracedb_rows(tracedb, traces):
    """tracedb's tables and analyses of each trace: {path: {name: [row]}}."""
    with common.Archive(tracedb) as db:
        err = db.ingest(["--format", "btf"] + traces)
        if err is not None:
            sys.exit("tracedb ingest failed:\n" + err)
        queries = {name: "SELECT capture_id, %s FROM %s" % (", ".join(key + cols), sql)
                   for name, (cols, key, _order, sql) in TABLES.items()}
        queries.update((name, ["query", name.split()[0]] + args)
                       for name, (_cols, _key, args) in ANALYSES.items())
        return db.tables(traces, queries)


def main(argv):
    if len(argv) >= 2 and argv[0] == "--deadlines":
        DEADLINES[:] = [os.path.abspath(argv[1]), read_deadlines(argv[1])]
        ANALYSES["deadline_summary file"] = ANALYSES["deadline_summary"][:2] + (
            ["--param", "deadlines=" + DEADLINES[0]],)
        argv = argv[2:]
    if len(argv) >= 2 and argv[0] == "--tracedb":
        tracedb, traces = argv[1], [os.path.abspath(t) for t in argv[2:]]
        total = 0
        all_theirs = tracedb_rows(tracedb, traces)
        for trace in traces:
            ours, theirs = derive(trace), all_theirs[trace]
            report, counts, found = [], [], {}
            # rows sharing a key are told apart by their order: a table's by the integer
            # columns `order`, an analysis's as the query gives them
            for name, (cols, key, order, _sql) in TABLES.items():
                found[name] = common.compare(name, ours[name], theirs[name], key, cols, report,
                                             order=order)
                counts.append("%d %s" % (len(ours[name]), name))
            for name, (cols, key, _args) in ANALYSES.items():
                found[name] = common.compare(name, ours[name], theirs[name], key, cols, report,
                                             order=())
                counts.append("%d %s" % (len(ours[name]), name))
            total += common.summary(trace, counts, found, report)
        return 1 if total else 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    ours = derive(argv[0])
    common.write_tables((n, k + c, ours[n]) for n, (c, k, _o, _s) in TABLES.items())
    return 0


if __name__ == "__main__":
    common.run(main)
