#!/usr/bin/env python3
"""An independent reading of S.Ha.R.K. "new tracer" (FTrace) logs.

Written from /work/shared FORMATS.md section 4, SEMANTICS.md and the README's S.Ha.R.K.
section (the record layout, the event codes, the mapping of each record to BTF-shaped
events), before tracedb's S.Ha.R.K. importer (src/ingest/shark) was read, so that the two
can be compared row by row (differential testing). Rows: `events` (ts, source,
source_type, source_instance, target, target_type, target_instance, action, note, value),
`instances` (entity, instance: activate, start, terminate, preemptions, complete) and the
count of the decoding `diagnostics` kinds this oracle gives.

    shark_oracle.py [--tick-rate HZ] TRACE      print the oracle's rows as CSV
    shark_oracle.py --tracedb BIN [--tick-rate HZ] TRACE...
                                    ingest each log with BIN (`--format shark`, one archive),
                                    compare, print every difference (the first 20 per log;
                                    ORACLE_SHOW=N for more); exit 1 when there is one
    shark_oracle.py --generate DIR --seeds A-B [--tracedb BIN]
                                    write random logs DIR/gen-<seed>/0trace.dat (and its
                                    chunk files) or DIR/gen-<seed>.udp, and with --tracedb
                                    compare

TRACE is a chunk dump `<index><name>` (chunk 0 reads its sibling chunk files 1, 2... up to
the first missing one) or a UDP capture (datagrams `TRACER-V1.0\\0`, packet number, number of
events, total size, records).

The generator simulates one CPU under fixed priorities (rate monotonic) or EDF: periodic
tasks (first job by `task_activate`, later ones by `task_timer`, the first release that
EDF logs right after `task_activate` too), aperiodic ones (`task_activate` only, sometimes
while a job is still open: a queued activation), each pick logged as `task_schedule`
(exec_shadow, exec: the mutex holder runs for a task blocked on it, as under priority
inheritance) or `task_dispatch`, jobs ending by `task_end_cycle`, `task_sleep` or
`task_end`, mutexes locked (`mutex_lock`, which blocks when held) and unlocked, interrupts
(nested too), user events, ipoints, CLI/STI, codes FTrace.h does not define, fast-variant
records (stale par2), the rate as `cycles_per_msec`, as `trace_start`'s par2 or absent,
`id` records before or after the tasks' first records; the log split into JTN chunk files,
the last chunk wrapped (a cyclic chunk: slot order rotated), empty slots at a chunk's end,
or sent as UDP datagrams.

Readings where the contract is silent, taken from tracedb (found by running it on small
logs, not by reading its code; "open readings" in the report of the session that wrote
this): a task record that moves no state (create, id, mutex_create...) has source the task,
no target; its source instance, and a mutex record's, is the task's open instance, else
the last one it had (-1 before its first; a `task_deadline_miss` with none open: -1);
a blocked task that gets the mutex at its schedule writes, in this order, the implied
`preempt` of the running task, the implied `release`, its `resume`/`start` and the implied
`assigned`; instance preemptions count ISR interruptions of a running task.
"""
import os
import random
import re
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)

MAGIC = b"TRACER-V1.0\0"
LIMIT = 2**62 - 1  # the latest time tracedb stores

GENERAL = {0x00: "empty", 0x10: "cycles_per_msec", 0x20: "trace_start", 0x30: "trace_stop",
           0x40: "blackout_start", 0x50: "blackout_end", 0x60: "id", 0x70: "numevents"}
TASK = ["task_create", "task_activate", "task_dispatch", "task_epilogue", "task_end",
        "task_begin_cycle", "task_end_cycle", "task_sleep", "task_schedule", "task_timer",
        "task_disable", "task_deadline_miss", "task_wcet_violation"]
NAMES = dict(GENERAL)
NAMES[0x01] = "ipoint"
for i, n in enumerate(TASK):
    NAMES[0x02 | i << 4] = n
for i, n in enumerate(["interrupt_start", "interrupt_end", "interrupt_hit", "interrupt_count"]):
    NAMES[0x03 | i << 4] = n
for i, n in enumerate(["to_real_mode", "to_protected_mode", "CLI", "STI"]):
    NAMES[0x04 | i << 4] = n
for i, n in enumerate(["set_priority", "context_switch", "inheritance"]):
    NAMES[0x05 | i << 4] = n
for i, n in enumerate(["mutex_create", "mutex_lock", "mutex_inherit", "mutex_unlock",
                       "mutex_wait", "mutex_post"]):
    NAMES[0x06 | i << 4] = n
NAMES[0x07] = "signal"
for i, n in enumerate(["server_create", "server_replenish", "server_exhaust",
                       "server_reclaiming", "server_remove", "server_active",
                       "server_using_rec"]):
    NAMES[0x08 | i << 4] = n
for i in range(15):
    NAMES[0x09 | i << 4] = "user_event_%d" % i
NAMES[0x1A] = "data_pointer"
for i, n in enumerate(["timer_post", "timer_delete", "timer_wakeup_start", "timer_wakeup_end"]):
    NAMES[0x0B | i << 4] = n
NAMES[0xFF] = "next_chunk"
for i in range(12):
    NAMES[0xF0 | i] = "filter_%d" % i

# Records whose par1 is a task context (README: "source = the task for records whose par1
# is a context").
CTX_PLAIN = {"id", "context_switch", "inheritance", "timer_wakeup_end"}


def name_of(code):
    return NAMES.get(code) or "code_0x%02X" % code


class Rec:
    __slots__ = ("tsc", "order", "code", "fast", "par1", "par2")

    def __init__(self, tsc, order, typ, par1, par2):
        self.tsc, self.order = tsc, order
        self.code, self.fast = typ & 0xFF, bool(typ & 0x8000)
        self.par1, self.par2 = par1, par2

    @property
    def name(self):
        return name_of(self.code)

    def note(self):
        return "par1=%d par2=%s" % (self.par1, "stale" if self.fast else self.par2)


def chunk_files(path):
    """The run's files: chunk 0 and its siblings 1, 2... up to the first missing one."""
    d, base = os.path.split(path)
    m = re.match(r"^(\d+)(.+)$", base)
    if not m or int(m.group(1)) != 0:
        return [path]
    out = [path]
    i = 1
    while os.path.isfile(os.path.join(d, "%d%s" % (i, m.group(2)))):
        out.append(os.path.join(d, "%d%s" % (i, m.group(2))))
        i += 1
    return out


def slots(data, diag, order0):
    """The 16-byte records of a chunk dump's bytes, empty slots skipped."""
    out = []
    n = len(data) // 16
    empty = 0
    for i in range(n):
        typ, par1, hi, lo, par2 = struct.unpack_from("<HHIII", data, 16 * i)
        if typ == 0:
            empty += 1
            continue
        out.append(Rec(hi << 32 | lo, order0 + i, typ, par1, par2))
    if empty:
        diag["empty_slots"] = diag.get("empty_slots", 0) + 1
    if len(data) % 16:
        diag["partial_record"] = diag.get("partial_record", 0) + 1
    drops = sum(1 for a, b in zip(out, out[1:]) if b.tsc < a.tsc)
    if drops:
        diag["chunk_wrapped"] = diag.get("chunk_wrapped", 0) + 1
    return out


def read_log(path):
    """All records in file order (chunk file, then slot) and the decoding diagnostics."""
    diag = {}
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(MAGIC):
        recs = []
        pos = 0
        while pos + 24 <= len(data) and data[pos:pos + 12] == MAGIC:
            _pkt, n, _size = struct.unpack_from("<III", data, pos + 12)
            recs += slots(data[pos + 24:pos + 24 + 16 * n], {}, len(recs) + pos)
            pos += 24 + 16 * n
        drops = sum(1 for a, b in zip(recs, recs[1:]) if b.tsc < a.tsc)
        if drops:
            diag["chunk_wrapped"] = 1
        return recs, diag
    recs = []
    for i, f in enumerate(chunk_files(path)):
        with open(f, "rb") as fh:
            recs += slots(fh.read(), diag, i << 40)
    return recs, diag


class Log:
    """The state machines of the README's mapping table, over the records sorted by time."""

    def __init__(self, recs, tick_rate):
        self.recs = sorted(recs, key=lambda r: (r.tsc, r.order))
        self.rate = None
        self.out_of_range = 0
        for r in self.recs:
            if r.fast:
                continue
            if r.code == 0x10 or (r.code == 0x20 and r.par2 != 0):
                self.rate = r.par2
                break
        self.tick_rate = tick_rate if self.rate is None else None
        self.events = []
        self.inst = {}  # (entity, n) -> instance row
        self.diag = {}
        # ctx -> [(position, pid)] from `id` and `task_create` (not fast)
        self.maps = {}
        for i, r in enumerate(self.recs):
            if r.code in (0x60, 0x02) and not r.fast:
                self.maps.setdefault(r.par1, []).append((i, r.par2))

    def ns(self, tsc):
        if self.rate:
            ns = tsc * 10**6 // self.rate
        elif self.tick_rate:
            ns = tsc * 10**9 // self.tick_rate
        else:
            ns = tsc
        if ns > LIMIT:
            self.out_of_range += 1
            return LIMIT
        return ns

    def task(self, ctx, pos):
        m = self.maps.get(ctx)
        if not m:
            return "ctx_%d" % ctx
        before = [pid for p, pid in m if p <= pos]
        name = "task_%d" % (before[-1] if before else m[0][1])
        old = self.bound.get(ctx)
        if old != name and hasattr(self, "open"):
            # The context holds another task from here (tracedb's reading): the task it
            # names starts with no job open or queued, its instances numbered on.
            self.bound[ctx] = name
            if old is not None and self.running == old:
                self.running = None
            self.open.pop(name, None)
            self.queued.pop(name, None)
            self.started[name] = False
            self.preempted[name] = False
            self.waiting.pop(name, None)
            if name in self.count:  # its latest instance: the last number given
                self.last[name] = self.count[name] - 1
        return name

    def row(self, r, action, source="Core_0", stype="C", sinst=-1, target="", ttype="",
            tinst=-1, implied=False, plain=False):
        note = r.note() if plain else ("%s%s %s" % ("implied by " if implied else "",
                                                     r.name, r.note()))
        value = "" if (not plain or r.fast) else r.par2
        self.events.append({"ts": self.ns(r.tsc), "source": source, "source_type": stype,
                            "source_instance": sinst, "target": target, "target_type": ttype,
                            "target_instance": tinst, "action": action, "note": note,
                            "value": value})

    def note_diag(self, kind):
        self.diag[kind] = self.diag.get(kind, 0) + 1

    # -- task instances
    def new_instance(self, t, ts_act):
        n = self.count.get(t, 0)
        self.count[t] = n + 1
        self.inst[(t, n)] = {"entity": t, "instance": n, "activate_ts": ts_act,
                             "start_ts": None, "terminate_ts": None, "preemptions": 0}
        return n

    def run(self):
        self.count = {}
        self.bound = {}  # context -> the task it holds
        self.open = {}  # task -> open instance
        self.last = {}  # task -> its last instance that was open
        self.queued = {}  # task -> [instances activated while one was open]
        self.started = {}  # task -> whether its open instance started
        self.preempted = {}  # task -> its open instance is preempted (resume next)
        self.running = None
        self.irqs = []  # open interrupts: (irq, instance)
        self.irq_victim = []  # per open interrupt: (instance it interrupted, counts?)
        self.pending = {}  # task -> (instance, end of the interruption, counts?)
        self.run_since = 0
        self.holder = {}  # mutex -> task
        self.waiting = {}  # task -> mutex it is blocked on
        self.released = {}  # task -> blocked, but released from its wait
        self.semq = {}  # semaphore -> tasks blocked on it by `mutex_wait`, in order
        for i, r in enumerate(self.recs):
            self.record(i, r)
        for t in list(self.pending):
            self.flush(t, None)
        out = []
        for (t, n), v in sorted(self.inst.items()):
            v = dict(v)
            v.pop("by", None)
            v["complete"] = v["activate_ts"] is not None and v["terminate_ts"] is not None \
                and v["start_ts"] is not None
            out.append(v)
        return out

    def flush(self, t, ts, merged=False):
        """Count the interruption of t that ended last, unless a preemption at its end
        continues it."""
        p = self.pending.pop(t, None)
        if p and p[2] and not (merged and p[1] == ts):
            self.inst[p[0]]["preemptions"] += 1

    def open_inst(self, t):
        return self.open.get(t, -1)

    def last_inst(self, t):
        """The task's open instance, else the last that was (a record between jobs)."""
        return self.open.get(t, self.last.get(t, -1))

    def activate(self, r, t, ts):
        if t in self.open:
            q = self.queued.setdefault(t, [])
            n = self.new_instance(t, ts)
            q.append(n)
            self.note_diag("activate_while_active")
        else:
            n = self.new_instance(t, ts)
            self.open[t] = n
            self.last[t] = n
            self.started[t] = False
            self.preempted[t] = False
        self.inst[(t, n)]["by"] = r.name
        self.row(r, "activate", target=t, ttype="T", tinst=n)
        return n

    def record(self, i, r):
        ts = self.ns(r.tsc)
        name = r.name
        fam = r.code & 0x0F
        if fam == 2 and r.code <= 0xC2:
            t = self.task(r.par1, i)
            if name == "task_activate":
                self.activate(r, t, ts)
                return
            if name == "task_timer":
                if t in self.open and not self.started[t] and \
                        self.inst[(t, self.open[t])].get("by") == "task_activate" \
                        and not self.queued.get(t):
                    self.inst[(t, self.open[t])]["by"] = "released"
                    self.row(r, name, source=t, stype="T", sinst=self.open[t], plain=True)
                    return
                self.activate(r, t, ts)
                return
            if name in ("task_dispatch", "task_schedule"):
                self.dispatch(r, t, ts)
                return
            if name == "task_epilogue" and self.running == t and not self.irqs \
                    and not self.keeps_cpu(i, r.par1):
                n = self.open[t]
                self.flush(t, ts, merged=True)
                self.inst[(t, n)]["preemptions"] += 1
                self.preempted[t] = True
                self.running = None
                self.row(r, "preempt", target=t, ttype="T", tinst=n)
                return
            if name == "task_deadline_miss":
                if t not in self.open:
                    self.note_diag("miss_without_instance")
                self.row(r, name, source=t, stype="T", sinst=self.open_inst(t), plain=True)
                return
            if name in ("task_end_cycle", "task_sleep", "task_end"):
                if t in self.open:
                    n = self.open[t]
                    self.inst[(t, n)]["terminate_ts"] = ts
                    self.row(r, "terminate", target=t, ttype="T", tinst=n)
                    q = self.queued.get(t)
                    if q:
                        self.open[t] = q.pop(0)
                        self.last[t] = self.open[t]
                    else:
                        del self.open[t]
                    self.started[t] = False
                    self.preempted[t] = False
                    self.flush(t, ts)
                    self.waiting.pop(t, None)  # an instance's wait ends with it
                    self.released.pop(t, None)
                    if self.running == t:
                        self.running = None
                    return
            sinst = self.last_inst(t)
            self.row(r, name, source=t, stype="T", sinst=sinst, plain=True)
            return
        if fam == 3 and r.code <= 0x33:
            irq = "IRQ%d" % r.par1
            if name == "interrupt_start":
                n = self.count.get(irq, 0)
                self.count[irq] = n + 1
                self.inst[(irq, n)] = {"entity": irq, "instance": n, "activate_ts": ts,
                                       "start_ts": ts, "terminate_ts": None,
                                       "preemptions": 0}
                # A nested interrupt preempts the one it interrupts, the outermost the
                # running task.
                if self.irqs:
                    self.irq_victim.append((self.irqs[-1], None))
                elif self.running is not None:
                    self.flush(self.running, ts)
                    self.irq_victim.append(((self.running, self.open[self.running]),
                                            ts > self.run_since))
                else:
                    self.irq_victim.append((None, None))
                self.irqs.append((irq, n))
                self.row(r, "activate", target=irq, ttype="I", tinst=n, implied=True)
                self.row(r, "start", target=irq, ttype="I", tinst=n)
                return
            if name == "interrupt_end" and any(q == irq for q, _n in self.irqs):
                while True:
                    q, n = self.irqs.pop()
                    victim, counts = self.irq_victim.pop()
                    if victim is not None and counts is None:
                        self.inst[victim]["preemptions"] += 1
                    elif victim is not None:  # the task runs again from here, unless
                        # preempted at this same instant (one ready stretch: tracedb
                        # counts it once)
                        self.pending[victim[0]] = (victim, ts, counts)
                        self.run_since = ts
                    self.inst[(q, n)]["terminate_ts"] = ts
                    if q == irq:
                        break
                    self.note_diag("lost_interrupt_end")
                    self.row(r, "terminate", target=q, ttype="I", tinst=n, implied=True)
                self.row(r, "terminate", target=irq, ttype="I", tinst=n)
                return
            if name == "interrupt_end":
                self.note_diag("lost_interrupt_start")
            self.row(r, name, source=irq, stype="I", plain=True)
            return
        if r.code in (0x46, 0x56) and not r.fast:
            self.semaphore(i, r, ts)
            return
        if fam == 6 and r.code <= 0x56 and not r.fast and r.code in (0x16, 0x36):
            t = self.task(r.par1, i)
            m = "mutex_%d" % r.par2
            args = dict(source=t, stype="T", sinst=self.last_inst(t), target=m, ttype="SEM")
            if name == "mutex_lock":
                if self.holder.get(m) not in (None, t):
                    self.row(r, "requestsemaphore", **args)
                    self.row(r, "waiting", implied=True, **args)
                    self.row(r, "wait", target=t, ttype="T", tinst=self.open_inst(t),
                             implied=True)
                    self.waiting[t] = m
                    if self.running == t:
                        self.running = None
                    return
                self.row(r, "requestsemaphore", implied=True, **args)
                self.row(r, "assigned", **args)
                self.holder[m] = t
                return
            if self.holder.get(m) == t:
                del self.holder[m]
            self.row(r, "released", **args)
            return
        if fam in (2, 6) or name in CTX_PLAIN or (
                name in ("trace_start", "server_active") and r.par1 != 0):
            t = self.task(r.par1, i)
            sinst = self.last_inst(t)
            self.row(r, name, source=t, stype="T", sinst=sinst, plain=True)
            return
        self.row(r, name, plain=True)

    def semaphore(self, i, r, ts):
        """`mutex_wait` (sem_wait) and `mutex_post` (sem_post)."""
        t = self.task(r.par1, i)
        m = "mutex_%d" % r.par2
        args = dict(source=t, stype="T", sinst=self.last_inst(t), target=m, ttype="SEM")
        if r.name == "mutex_wait":
            self.row(r, "requestsemaphore", **args)
            nxt = None
            for q in self.recs[i + 1:]:
                if q.name == "task_epilogue" and q.par1 == r.par1:
                    continue
                nxt = q
                break
            if nxt is None or (nxt.name in ("task_dispatch", "task_schedule")
                               and nxt.par1 != r.par1):
                self.row(r, "waiting", implied=True, **args)
                self.row(r, "wait", target=t, ttype="T", tinst=self.open_inst(t),
                         implied=True)
                self.semq.setdefault(m, []).append(t)
                if self.running == t:
                    self.running = None
            else:
                self.row(r, "assigned", implied=True, **args)
                self.holder[m] = t
            return
        if self.holder.get(m) == t:
            del self.holder[m]
            self.row(r, "released", **args)
        else:  # a signal
            self.row(r, r.name, source=t, stype="T", sinst=self.last_inst(t), plain=True)
        q = self.semq.get(m)
        if q:
            w = q.pop(0)
            self.row(r, "release", target=w, ttype="T", tinst=self.open_inst(w), implied=True)
            self.row(r, "assigned", source=w, stype="T", sinst=self.open_inst(w), target=m,
                     ttype="SEM", implied=True)
            self.holder[m] = w

    def keeps_cpu(self, i, ctx):
        """An epilogue is no preemption when the task's next scheduling record (within
        4,096) is its own dispatch or schedule, end of cycle, sleep, end or mutex wait."""
        for r in self.recs[i + 1:i + 1 + 4096]:
            if r.name in ("task_dispatch", "task_schedule"):
                return r.par1 == ctx
            if r.par1 == ctx and r.name in ("task_end_cycle", "task_sleep", "task_end",
                                             "mutex_wait"):
                return True
        return False

    def dispatch(self, r, t, ts):
        if self.running == t:
            self.row(r, r.name, source=t, stype="T", sinst=self.open_inst(t), plain=True)
            return
        if self.running is not None:
            p = self.running
            n = self.open[p]
            self.flush(p, ts, merged=True)
            self.inst[(p, n)]["preemptions"] += 1
            self.preempted[p] = True
            self.row(r, "preempt", target=p, ttype="T", tinst=n, implied=True)
        # A task blocked on a mutex is released (ready) at its first dispatch, and assigned
        # the mutex at its first dispatch with the mutex free (tracedb's reading when it is
        # dispatched while another still holds it).
        m = self.waiting.get(t)
        if m is not None and not self.released.get(t):
            self.released[t] = True
            self.row(r, "release", target=t, ttype="T", tinst=self.open_inst(t), implied=True)
        if m is not None and self.holder.get(m) is None:
            del self.waiting[t]
            self.released[t] = False
        else:
            m = None
        if t not in self.open:
            n = self.new_instance(t, None)
            self.open[t] = n
            self.last[t] = n
            self.started[t] = False
            self.preempted[t] = False
            self.note_diag("unknown_prior_state")
        n = self.open[t]
        if self.started[t]:
            self.row(r, "resume", target=t, ttype="T", tinst=n)
        else:
            self.started[t] = True
            self.inst[(t, n)]["start_ts"] = ts
            self.row(r, "start", target=t, ttype="T", tinst=n)
        self.running = t
        self.run_since = ts
        if m is not None:
            self.holder[m] = t
            self.row(r, "assigned", source=t, stype="T", sinst=n, target=m, ttype="SEM",
                     implied=True)


EVENT_COLS = ["ts", "source", "source_type", "source_instance", "target", "target_type",
              "target_instance", "action", "note", "value"]
INST_COLS = ["activate_ts", "start_ts", "terminate_ts", "preemptions", "complete"]
DIAG_KINDS = ["empty_slots", "partial_record", "unknown_code", "activate_while_active",
              "miss_without_instance", "lost_interrupt_end", "lost_interrupt_start",
              "chunk_wrapped", "time_out_of_range", "cycle_rate_changed",
              "unknown_cycle_rate", "tick_rate_ignored"]


def oracle_rows(path, tick_rate=None):
    recs, diag = read_log(path)
    log = Log(recs, tick_rate)
    instances = log.run()
    unknown = {r.code for r in log.recs if r.code not in NAMES}
    diag["unknown_code"] = len(unknown)
    diag["time_out_of_range"] = 1 if log.out_of_range else 0
    rates = [r.par2 for r in log.recs if not r.fast and (
        r.code == 0x10 or (r.code == 0x20 and r.par2 != 0))]
    diag["cycle_rate_changed"] = 1 if any(x != rates[0] for x in rates) else 0
    diag["unknown_cycle_rate"] = 1 if not rates and not tick_rate else 0
    diag["tick_rate_ignored"] = 1 if rates and tick_rate else 0
    diag.update({k: v for k, v in log.diag.items() if k in DIAG_KINDS})
    events = [dict(e, seq=i) for i, e in enumerate(log.events)]
    return {"events": events, "instances": instances,
            "diagnostics": [{"kind": k, "count": diag.get(k, 0)} for k in DIAG_KINDS]}


TABLES = {  # name -> (key columns, compared columns, tracedb's SQL)
    "events": (["seq"], EVENT_COLS,
               "SELECT capture_id, seq, %s FROM events" % ", ".join(EVENT_COLS)),
    "instances": (["entity", "instance"], INST_COLS,
                  "SELECT capture_id, entity, instance, %s FROM instances" %
                  ", ".join(INST_COLS)),
    "diagnostics": (["kind"], ["count"],
                    "SELECT capture_id, kind, count(*) AS count FROM diagnostics WHERE kind IN "
                    "('%s') GROUP BY ALL UNION ALL SELECT capture_id, unnest(['%s']), 0 FROM "
                    "captures" % ("', '".join(DIAG_KINDS), "', '".join(DIAG_KINDS))),
}


def tracedb_rows(tracedb, items):
    runs = []
    for trace, rate in items:
        args = ["--format", "shark", trace]
        if rate:
            args += ["--tick-rate", str(rate)]
        runs.append((trace, args))
    out = common.ingest_each(tracedb, runs, {n: sql for n, (_k, _c, sql) in TABLES.items()})
    for t, (tables, _err) in out.items():
        if tables:  # the UNION's zero and the counted rows: keep the largest
            best = {}
            for r in tables["diagnostics"]:
                best[r["kind"]] = max(best.get(r["kind"], 0), int(r["count"]))
            tables["diagnostics"] = [{"kind": k, "count": v} for k, v in best.items()]
    return out


def check(tracedb, items):
    """Compare each (trace, tick rate, description); return the number of differences."""
    all_theirs = tracedb_rows(tracedb, [(t, r) for t, r, _d in items])
    total = 0
    for trace, rate, desc in items:
        if desc:
            print(desc)
        ours = oracle_rows(trace, rate)
        theirs, err = all_theirs[trace]
        if theirs is None:
            total += common.refused(trace, err)
            continue
        report = []
        found, counts = common.compare_tables(
            ours, theirs, [(n, k, c) for n, (k, c, _s) in TABLES.items()], report)
        total += common.summary(trace, counts, found, report)
    return total


# --------------------------------------------------------------------------------------
# Random logs
def rec(typ, par1, tsc, par2):
    return struct.pack("<HHIII", typ, par1 & 0xFFFF, tsc >> 32 & 0xFFFFFFFF, tsc & 0xFFFFFFFF,
                       par2 & 0xFFFFFFFF)


def code(name):
    return next(c for c, n in NAMES.items() if n == name)


def generate(seed):
    """A random valid log: (list of (typ, par1, tsc, par2) in time order, description,
    how to write it)."""
    rng = random.Random(seed)
    rate = rng.choice([1000, 233_000, 1_000_000, 2_400_000, 3_000_000])
    rate_kind = rng.choice(["cycles_per_msec", "trace_start", "trace_start", "none",
                            "tick_rate", "changed", "zero", "fast", "given_twice"])
    tick_rate = rate * 1000 if rate_kind in ("tick_rate", "given_twice") else None
    policy = rng.choice(["rm", "edf"])
    sched = rng.choice(["task_schedule", "task_dispatch", "mixed"])
    ntasks = rng.randint(2, 5)
    ctxs = rng.sample(range(1, 64), ntasks)
    pids = rng.sample(range(1, 400), ntasks)
    tasks = []
    for k in range(ntasks):
        periodic = rng.random() < 0.7
        period = rng.randint(8, 40)
        tasks.append({"ctx": ctxs[k], "pid": pids[k], "periodic": periodic,
                      "period": period, "wcet": rng.randint(1, max(1, period // 2)),
                      "prio": period if periodic else rng.randint(5, 60),
                      "next": rng.randint(0, 10), "jobs": [], "mutex": rng.random() < 0.6,
                      "sem": rng.random() < 0.5,
                      "end": rng.choice(["task_end_cycle", "task_end_cycle", "task_sleep"])})
    mutexes = rng.sample(range(1, 1000), 2)
    sem, signal_sem = rng.sample(range(1000, 2000), 2)  # semaphores (sem_wait/sem_post)
    sem_holder = [None]
    freed = []  # pids of destroyed tasks
    sem_queue = []  # tasks blocked on it, in the order they blocked
    unit = max(1, rate // 100)  # cycles per step (10 us)
    tsc0 = rng.randint(10**6, 10**9)
    late = rng.random() < 0.1
    if late:  # times pass 2^62 - 1 ns half way
        tsc0 = max(0, (LIMIT * rate // 10**6) - unit * 200)
    out = []
    clock = [tsc0]

    def emit(name, par1, par2=0, fast=False):
        if rng.random() > 0.03:  # else the same TSC as the record before
            clock[0] += rng.randint(1, max(1, unit // 20))
        typ = code(name) if not name.startswith("code_") else int(name[7:], 16)
        out.append(((0x8000 if fast else 0) | typ, par1, clock[0], par2))

    if rate_kind in ("cycles_per_msec", "changed", "given_twice"):
        emit("cycles_per_msec", 0, rate)
    elif rate_kind == "trace_start":
        emit("trace_start", 0, rate)
    elif rate_kind == "zero":  # a trace_start with no rate, then the rate
        emit("trace_start", 0, 0)
        emit("cycles_per_msec", 0, rate)
    elif rate_kind == "fast":  # a stale rate is no rate: then the real one
        emit("cycles_per_msec", 0, rng.randint(1, 2**32 - 1), fast=True)
        emit("trace_start", 0, rate)
    ids_late = rng.random() < 0.4
    if not ids_late:
        for t in tasks:
            emit("id", t["ctx"], t["pid"])
    for t in tasks:
        if rng.random() < 0.5:
            emit("task_create", t["ctx"], t["pid"])
    steps = rng.randint(300, 900)
    running = None
    holder = {}
    blocked = {}  # ctx -> mutex
    sleeping_irq = 0
    for step in range(steps):
        clock[0] = max(clock[0], tsc0 + step * unit)
        if rate_kind == "changed" and step == 50:
            emit("cycles_per_msec", 0, rate + 1000)  # the first still scales the log
        if ids_late and step == 5:
            for t in tasks:
                emit("id", t["ctx"], t["pid"])
        # releases
        for t in tasks:
            if step < t["next"]:
                continue
            if t["periodic"]:
                t["next"] = step + t["period"]
                first = not t.get("released")
                t["released"] = True
                if first:
                    emit("task_activate", t["ctx"])
                    if policy == "edf":
                        emit("task_timer", t["ctx"], 1)
                elif t["jobs"] and not t["jobs"][0]["started"] and len(t["jobs"]) == 1 \
                        and t["jobs"][0].get("by") == "task_activate":
                    # would read as EDF's first release: keep the job count simple
                    continue
                else:
                    emit("task_timer", t["ctx"], 1)
                t["jobs"].append({"left": t["wcet"], "started": False,
                                  "by": "task_activate" if first else "task_timer",
                                  "deadline": step + t["period"],
                                  "lock_at": rng.randint(0, t["wcet"] - 1)
                                  if t["mutex"] else None, "hold": 0,
                                  "sem_at": rng.randint(0, t["wcet"] - 1)
                                  if t["sem"] and not t["mutex"] else None, "shold": 0,
                                  "m": rng.choice(mutexes)})
            else:
                t["next"] = step + rng.randint(2, 80)  # may come while a job is open
                emit("task_activate", t["ctx"])
                t["jobs"].append({"left": t["wcet"], "started": False, "by": "task_activate",
                                  "deadline": step + t["prio"], "lock_at": None, "hold": 0,
                                  "m": None})
        # an interrupt now and then
        # (none once times are past 2^62 - 1 ns: all at one instant, an interrupt there
        # is a zero-length preemption, which tracedb's derive counts or not by order)
        if rng.random() < 0.05 and clock[0] * 10**6 // rate < LIMIT - 10**9:
            n = rng.randint(0, 15)
            emit("interrupt_start", n)
            aper = [t for t in tasks if not t["periodic"]]
            if aper and rng.random() < 0.3:  # the handler activates a task
                t = rng.choice(aper)
                emit("task_activate", t["ctx"])
                t["jobs"].append({"left": t["wcet"], "started": False,
                                  "by": "task_activate", "deadline": step + t["prio"],
                                  "lock_at": None, "hold": 0, "m": None})
            if rng.random() < 0.3:
                n2 = rng.choice([x for x in range(16) if x != n])
                emit("interrupt_start", n2)
                if rng.random() < 0.8:
                    emit("interrupt_end", n2)  # else its end is lost
            emit("interrupt_end", n)
        if rng.random() < 0.005 and clock[0] * 10**6 // rate < LIMIT - 10**9:
            emit("interrupt_end", rng.randint(0, 15))  # its start is lost
            if running is not None and rng.random() < 0.3:  # the kernel gave it back
                emit("task_epilogue", running["ctx"])
                emit("task_schedule", running["ctx"], running["ctx"])
        # pick
        ready = [t for t in tasks if t["jobs"] and t["ctx"] not in blocked
                 and t["ctx"] not in sem_queue]
        key = (lambda t: (t["prio"], t["ctx"])) if policy == "rm" else \
            (lambda t: (t["jobs"][0]["deadline"], t["ctx"]))
        waiting = [t for t in tasks if t["jobs"] and t["ctx"] in blocked
                   and t["ctx"] not in sem_queue]
        best = min(ready + waiting, key=key) if ready + waiting else None
        if best is None:
            running = None
            continue
        want = best["jobs"][0].get("want")
        if want is not None and holder.get(want) not in (None, best["ctx"]):
            blocked[best["ctx"]] = want  # another took it first: blocked again
        exec_t = best
        if best["ctx"] in blocked:  # inheritance: the holder runs for it
            m = blocked[best["ctx"]]
            exec_t = next(t for t in tasks if t["ctx"] == holder[m])
        if running is not None and running is not exec_t and running["jobs"] \
                and rng.random() < 0.5:
            emit("task_epilogue", running["ctx"])  # the kernel takes the CPU from it
        if running is not exec_t:
            how = sched if sched != "mixed" else rng.choice(["task_schedule", "task_dispatch"])
            if how == "task_schedule":
                emit("task_schedule", exec_t["ctx"], best["ctx"])
            else:
                emit("task_dispatch", exec_t["ctx"])
            running = exec_t
        if want is not None and best is exec_t:  # scheduled with the mutex free: its
            holder[want] = best["ctx"]  # (the reading of the README: not at the unlock)
            best["jobs"][0]["want"] = None
            best["jobs"][0]["hold"] = rng.randint(1, 8)
        t = exec_t
        job = t["jobs"][0]
        job["started"] = True
        if rng.random() < 0.05:
            emit("user_event_%d" % rng.randint(0, 14), rng.randint(0, 9),
                 rng.randint(0, 2**32 - 1), fast=rng.random() < 0.3)
        if rng.random() < 0.02:
            emit("ipoint", rng.randint(0, 99), rng.randint(0, 5))
        if rng.random() < 0.02:
            emit("CLI", 0)
            emit("STI", 0)
        if rng.random() < 0.01:
            emit("code_0x%02X" % rng.choice([0x0C, 0x0D, 0x9A, 0x2F]), rng.randint(0, 5), 7)
        contended = job["m"] in holder and holder[job["m"]] != t["ctx"]
        others = blocked or any(x["jobs"] and x["jobs"][0].get("want") is not None
                                for x in tasks)
        if job["lock_at"] is not None and job["left"] <= t["wcet"] - job["lock_at"] \
                and job["hold"] == 0 and t is best and not (contended and others) \
                and job.get("want") is None:
            # (one waiter at a time, and not while running for another: no deadlock)
            m = job["m"]
            emit("mutex_lock", t["ctx"], m)
            if m in holder and holder[m] != t["ctx"]:
                blocked[t["ctx"]] = m
                running = None
                continue  # the next step schedules the holder for it
            holder[m] = t["ctx"]
            job["hold"] = rng.randint(1, 8)
            job["lock_at"] = None
        if job.get("sem_at") is not None and job["left"] <= t["wcet"] - job["sem_at"] \
                and t is best and not job["hold"]:
            if sem_holder[0] is None:  # sem_wait that does not block
                emit("mutex_wait", t["ctx"], sem)
                emit("ipoint", rng.randint(0, 99), 0)
                sem_holder[0] = t["ctx"]
                job["shold"] = rng.randint(1, 6)
                job["sem_at"] = None
            else:
                cand = [x for x in tasks if x["jobs"] and x is not t
                        and x["ctx"] not in blocked and x["ctx"] not in sem_queue
                        and x["jobs"][0].get("want") is None]
                if cand:  # sem_wait blocks: the scheduler runs another at once
                    emit("mutex_wait", t["ctx"], sem)
                    if rng.random() < 0.5:
                        emit("task_epilogue", t["ctx"])
                    nxt = min(cand, key=key)
                    if rng.random() < 0.5:
                        emit("task_schedule", nxt["ctx"], nxt["ctx"])
                    else:
                        emit("task_dispatch", nxt["ctx"])
                    sem_queue.append(t["ctx"])
                    job["sem_at"] = None
                    running = nxt
                    continue
        if rng.random() < 0.01 and not sem_queue:  # a signal: posted, never waited on
            emit("mutex_post", t["ctx"], signal_sem)
        job["left"] -= 1
        if job.get("shold"):
            job["shold"] -= 1
            if job["shold"] == 0 or job["left"] <= 0:
                emit("mutex_post", t["ctx"], sem)
                job["shold"] = 0
                if sem_queue:  # the first blocked on it gets it, ready
                    w = sem_queue.pop(0)
                    sem_holder[0] = w
                    wt = next(x for x in tasks if x["ctx"] == w)
                    wt["jobs"][0]["shold"] = rng.randint(1, 6)
                else:
                    sem_holder[0] = None
        if job["hold"]:
            job["hold"] -= 1
            if job["hold"] == 0 or job["left"] <= 0:
                m = job["m"]
                emit("mutex_unlock", t["ctx"], m)
                del holder[m]
                job["hold"] = 0
                for c, bm in list(blocked.items()):
                    if bm == m:  # ready again; takes it when next scheduled, if free
                        del blocked[c]
                        w = next(x for x in tasks if x["ctx"] == c)
                        w["jobs"][0]["lock_at"] = None
                        w["jobs"][0]["want"] = m
        if policy == "edf" and step > job["deadline"] and not job.get("missed"):
            job["missed"] = True
            emit("task_deadline_miss", t["ctx"])
        if rng.random() < 0.01:  # an `id` of the fast variant: its pid is stale
            emit("id", t["ctx"], rng.randint(0, 2**32 - 1), fast=True)
        if job["left"] <= 0 and not job["hold"]:
            if rng.random() < 0.2:
                emit("task_epilogue", t["ctx"])  # leaving by itself: no preemption
            if not t["periodic"] and rng.random() < 0.15:
                emit("task_end", t["ctx"], t["pid"])  # destroyed; the context is reused
                # with a pid no live task has: a freed one (the kernel's pids are
                # proc_table slots: this context's own, or one another context freed)
                # or a new one
                freed.append(t["pid"])
                live = {x["pid"] for x in tasks}
                if rng.random() < 0.5:
                    t["pid"] = freed.pop(rng.randrange(len(freed)))
                else:
                    t["pid"] = rng.choice([p for p in range(400, 800) if p not in live
                                           and p not in freed])
                emit("task_create", t["ctx"], t["pid"])
            else:
                emit(t["end"] if t["periodic"] else "task_end_cycle", t["ctx"], 1)
            t["jobs"].pop(0)
            running = None
            if not t["jobs"] and rng.random() < 0.05:
                emit("task_deadline_miss", t["ctx"])  # logged after the job ended
    return out, "rate %s (%s), %s, %s, %d tasks, %d records%s" % (
        rate, rate_kind, policy, sched, ntasks, len(out),
        ", past 2^62 ns" if late else ""), rng, tick_rate


def write_generated(directory, seed):
    recs, desc, rng, tick_rate = generate(seed)
    form = rng.choice(["dump", "dump", "udp"])
    data = [rec(*r) for r in recs]
    if form == "udp":
        path = os.path.join(directory, "gen-%d.udp" % seed)
        out = b""
        for k, i in enumerate(range(0, len(data), 61)):
            part = data[i:i + 61]
            out += MAGIC + struct.pack("<III", k + 1, len(part), 24 + 16 * len(part))
            out += b"".join(part)
        with open(path, "wb") as f:
            f.write(out)
        return path, desc + ", UDP", tick_rate
    d = os.path.join(directory, "gen-%d" % seed)
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        os.unlink(os.path.join(d, old))
    nchunks = rng.randint(1, 4)
    size = -(-len(data) // nchunks)
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    wrapped = rng.random() < 0.5
    if wrapped:  # a cyclic last chunk: its slots hold the newest records first
        last = chunks[-1]
        if len(chunks) == 1 and rng.random() < 0.5:  # the oldest ones overwritten (in a
            # run of several chunks that would be a hole in the middle, where the states
            # that are left are the derive stage's resynchronisation, not the importer's)
            last = last[rng.randint(0, len(last) // 4):]
        k = rng.randint(1, len(last) - 1) if len(last) > 1 else 0
        chunks[-1] = last[k:] + last[:k]
    cut = rng.random() < 0.15
    for i, c in enumerate(chunks):
        empty = rng.choice([0, 0, 3])
        with open(os.path.join(d, "%dtrace.dat" % i), "wb") as f:
            tail = b"\0" * 16 * empty
            if cut and i == len(chunks) - 1:  # the file ends inside a record
                tail = rng.randbytes(rng.randint(1, 15))
            f.write(b"".join(c) + tail)
    return os.path.join(d, "0trace.dat"), "%s, %d chunk files%s%s" % (
        desc, len(chunks), ", last wrapped" if wrapped else "",
        ", cut" if cut else ""), tick_rate


def main(argv):
    opts, files = common.options(argv, ["--tracedb", "--tick-rate", "--generate", "--seeds"])
    rate = int(opts["--tick-rate"]) if opts["--tick-rate"] else None
    if opts["--generate"]:
        os.makedirs(opts["--generate"], exist_ok=True)
        items = []
        for seed in common.seeds(opts["--seeds"]):
            path, desc, seed_rate = write_generated(opts["--generate"], seed)
            items.append((path, rate or seed_rate, "seed %d: %s" % (seed, desc)))
            if not opts["--tracedb"]:
                print("%s: %s" % (path, desc))
        if not opts["--tracedb"]:
            return 0
        return 1 if check(opts["--tracedb"], items) else 0
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    if opts["--tracedb"]:
        return 1 if check(opts["--tracedb"], [(os.path.abspath(f), rate, None)
                                               for f in files]) else 0
    ours = oracle_rows(files[0], rate)
    common.write_tables((n, k + c, ours[n]) for n, (k, c, _s) in TABLES.items())
    return 0


if __name__ == "__main__":
    common.run(main)
