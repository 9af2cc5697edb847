#!/usr/bin/env python3
"""An independent reading of ovni streams: the emulator's thread and CPU channels, task instances.

Written from SEMANTICS.md ("Channels: from events to state intervals"), FORMATS.md (the
ovni output), the README's "ovni binary streams" section and ovni's own emulator source
(bsc-pm/ovni src/emu: ovni/event.c, ovni/mark.c, cpu.c, thread.c, chan.c, mux.c, track.c,
model_cpu.c, model_thread.c, pv/prv.c, task.c, body.c, nosv/{event,setup}.c,
nanos6/{event,setup}.c), without tracedb's ovni importer or derive code, so that the two
can be compared row by row (differential testing). It reads the binary streams itself
(header, byte order, events with 0 or 2-16 byte payloads, jumbo events, v3
`thread.T/stream.obs` + `stream.json` and v2 `thread.T.obs` + `metadata.json`,
`clock-offsets.txt`), replays ovni's emulator (the ovni model: thread states, CPU
affinity, flush, marks; the nOS-V and Nanos6 models: subsystem stacks, idle state, thread
type, task bodies on each thread's stack) and writes, for every thread and CPU, the value
each Paraver channel holds after each event, as `ovniemu` writes it into thread.prv and
cpu.prv; from those values it makes the `intervals` rows tracedb's Paraver ingest makes
(0 or no value ends a state, but type 3, a CPU's running threads, where 0 is a value).

    ovni_oracle.py TRACE_DIR                     print the oracle's intervals as CSV
    ovni_oracle.py --prv TRACE_DIR               compare the oracle with the emulator's own
                                                 thread.prv/cpu.prv in TRACE_DIR/ovni
    ovni_oracle.py --tracedb BIN TRACE_DIR...    ingest each trace (--format ovni) with BIN,
                                                 compare, print every difference; exit 1
                                                 when there is one
    ovni_oracle.py --generate DIR --seed N [--looms N] [--model ovni|nosv|nanos6|mixed]
                                                 write a random valid trace (stream.obs,
                                                 stream.json, clock-offsets.txt) into DIR

Readings (where the contract is silent, the README's choice or what ovniemu does):
* events are merged by clock plus the loom's clock offset (ovnisync's median, matched by
  host name: the loom name up to its first dot); equal clocks keep stream order (loom name,
  pid, tid) and file order; times are ns from the first merged event; the capture ends at
  the last event, where every state still held is an open interval (one that starts there
  is an open interval of 0 ns);
* a channel shows a value while set; a value written again continues its interval; values
  that change and change back within one event are never written (ovniemu emits each
  channel once per event, after the whole event is applied);
* a CPU's channels that mirror its running thread show nothing before the CPU's first
  running thread (its mux has not selected yet); after that, with no or several running
  threads, nothing, but the idle state, which is Resting;
* task types are numbered as ovniemu numbers them (uthash's Jenkins hash of the label +
  666, 31 bits, +1000 below 1000); an empty label is `(unlabeled task type N)`;
* channels are named as the Paraver ingest names the emulator's .pcf types: the label,
  trimmed; the type number when empty; `label (type)` when two types of thread.pcf (or of
  cpu.pcf) share a label (a mark's and one of the emulator's own channels' too), or it is
  `state`, `running`, `value` or a number other than the type (cpu.pcf's types 1-3 have no
  label, so the Paraver ingest names them by number); a label two threads share
  (a tid on two looms) gets the thread's Paraver row, ` (1.1.<row>)`.
Task instances (ovniemu has none: the README's readings, in BTF actions on the entity
`<type label>`, ` (loom.<L>/proc.<P>)` appended when the trace has several processes):
* instance = task id; a body of a parallel task `id << 32 | body`; the n-th run of an
  ordinary nOS-V task that ran before `id << 32 | n`;
* create = activate (source: the thread; a parallel task's body 1; another body, and a run
  again, are activated at their execute); execute = start, pause = wait, resume = release
  and resume, end = terminate (source: the thread's CPU);
* a nested execute over a running task (Nanos6) preempts it, its end resumes it; a task
  follows its thread: preempted when the thread stops running (OHp, OHc, OHe) or moves
  (OAs, OAr: then resumed on the new CPU), resumed when it runs again (OHr, OHx);
* a task event of a thread that does not run resumes its task for the event and preempts it
  after (so an outer task of a nested execute too), and the task of a thread running on
  that CPU gives it up for that instant (a preempt before, a resume after).
"""
import csv
import json
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)

# ---------------------------------------------------------------- reading the streams


class OracleError(Exception):
    pass


def strip_comments(text):
    """JSON with // and /* */ comments (libovni's metadata allows them)."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.loads(strip_comments(f.read()))


def read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".gz"):
        import gzip
        return gzip.decompress(raw)
    if path.endswith(".bz2"):
        import bz2
        return bz2.decompress(raw)
    if path.endswith(".xz"):
        import lzma
        return lzma.decompress(raw)
    return raw


def read_stream(path):
    """[(clock, mcv bytes, payload bytes, is_jumbo)] and the byte order ('<' or '>')."""
    data = read_bytes(path)
    if data[:4] != b"ovni":
        raise OracleError("%s: not an ovni stream" % path)
    if data[4:8] == b"\x01\x00\x00\x00":
        bo = "<"
    elif data[4:8] == b"\x00\x00\x00\x01":
        bo = ">"
    else:
        raise OracleError("%s: unknown version" % path)
    evs, i = [], 8
    while i < len(data):
        if i + 12 > len(data):
            raise OracleError("%s: cut event at byte %d" % (path, i))
        flags = data[i]
        mcv = data[i + 1:i + 4]
        (clock,) = struct.unpack(bo + "Q", data[i + 4:i + 12])
        i += 12
        if flags & 0x10:
            (size,) = struct.unpack(bo + "I", data[i:i + 4])
            payload, jumbo = data[i + 4:i + 4 + size], True
            i += 4 + size
        else:
            size = (flags & 0x0F) + 1 if flags & 0x0F else 0
            payload, jumbo = data[i:i + size], False
            i += size
        evs.append((clock, mcv, payload, jumbo))
    return evs, bo


def find_ovni_dir(trace):
    for d in (trace, os.path.join(trace, "ovni")):
        if os.path.isdir(d) and any(n.startswith("loom.") for n in os.listdir(d)):
            return d
    raise OracleError("%s: no loom.* folders" % trace)


def discover(trace):
    """The streams of a trace, in ovni's order: [{loom, pid, tid, path, meta}]."""
    root = find_ovni_dir(trace)
    streams = []
    for loom in sorted(n for n in os.listdir(root) if n.startswith("loom.")):
        ldir = os.path.join(root, loom)
        for proc in os.listdir(ldir):
            if not proc.startswith("proc."):
                continue
            pid = int(proc[5:])
            pdir = os.path.join(ldir, proc)
            pmeta = os.path.join(pdir, "metadata.json")
            for name in os.listdir(pdir):
                full = os.path.join(pdir, name)
                if not name.startswith("thread."):
                    continue
                if os.path.isdir(full):
                    obs = [n for n in os.listdir(full) if n.startswith("stream.obs")]
                    if not obs:
                        continue
                    tid = int(name[7:])
                    meta = load_json(os.path.join(full, "stream.json"))["ovni"]
                    path = os.path.join(full, obs[0])
                elif ".obs" in name:
                    tid = int(name[7:name.index(".obs")])
                    m = load_json(pmeta)
                    meta = {"app_id": m.get("app_id", 0), "rank": m.get("rank"),
                            "loom_cpus": m.get("cpus", []), "finished": 1}
                    tj = os.path.join(pdir, "thread.%d.json" % tid)
                    if os.path.exists(tj):
                        meta.update(load_json(tj).get("ovni", {}))
                    path = full
                else:
                    continue
                streams.append({"loom": loom[5:], "pid": pid, "tid": tid, "path": path,
                                "meta": meta})
    streams.sort(key=lambda s: (s["loom"], s["pid"], s["tid"]))
    offsets = {}
    cfile = os.path.join(root, "clock-offsets.txt")
    if os.path.exists(cfile):
        with open(cfile) as f:
            for line in f.read().splitlines()[1:]:
                p = line.split()
                if len(p) >= 3:
                    offsets[p[1]] = int(float(p[2]))
    return streams, offsets


# ---------------------------------------------------------------- the emulator's model

RUNNING, PAUSED, DEAD, COOLING, WARMING = 1, 2, 3, 4, 5
STATE_NAMES = {0: "Unknown", 1: "Running", 2: "Paused", 3: "Dead", 4: "Cooling", 5: "Warming"}
IDLE_NAMES = {100: "Progressing", 101: "Resting", 102: "Absorbing noise"}
PROGRESSING, RESTING = 100, 101

NOSV_SS = {
    "Sh": ("push", 6), "Sf": ("pop", 6), "S[": ("push", 7), "S]": ("pop", 7),
    "U[": ("push", 8), "U]": ("pop", 8),
    "Ma": ("push", 9), "MA": ("pop", 9), "Mf": ("push", 10), "MF": ("pop", 10),
    "Ar": ("push", 12), "AR": ("pop", 12), "Ad": ("push", 13), "AD": ("pop", 13),
    "As": ("push", 14), "AS": ("pop", 14), "Ap": ("push", 15), "AP": ("pop", 15),
    "Ay": ("push", 16), "AY": ("pop", 16), "Aw": ("push", 17), "AW": ("pop", 17),
    "Ac": ("push", 18), "AC": ("pop", 18), "Aa": ("push", 19), "AA": ("pop", 19),
    "Ae": ("push", 20), "AE": ("pop", 20), "Al": ("push", 21), "AL": ("pop", 21),
    "At": ("push", 22), "AT": ("pop", 22), "Au": ("push", 23), "AU": ("pop", 23),
    "Ab": ("push", 24), "AB": ("pop", 24),
    "Hw": ("push", 32), "HW": ("pop", 32), "Hd": ("push", 33), "HD": ("pop", 33),
    "Ha": ("ign", 0), "HA": ("ign", 0), "S@": ("ign", 0), "Sr": ("ign", 0), "Ss": ("ign", 0),
    "Pp": ("idle", 100), "Pr": ("idle", 101), "Pa": ("idle", 102),
}
NOSV_BODY = 11
NOSV_SS_NAMES = {
    2: "Unknown subsystem", 6: "Scheduler: Hungry", 7: "Scheduler: Serving",
    8: "Scheduler: Submitting", 9: "Memory: Allocating", 10: "Memory: Freeing",
    11: "Task: In body", 12: "API: Create", 13: "API: Destroy", 14: "API: Submit",
    15: "API: Pause", 16: "API: Yield", 17: "API: Waitfor", 18: "API: Scheduling point",
    19: "API: Attach", 20: "API: Detach", 21: "API: Mutex lock", 22: "API: Mutex trylock",
    23: "API: Mutex unlock", 24: "API: Barrier wait", 32: "Thread: Worker",
    33: "Thread: Delegate"}

N6_SS = {
    "W[": 19, "W]": -19, "Wt": 18, "WT": -18, "Ww": 20, "WW": -20, "Wm": 21, "WM": -21,
    "Ws": 22, "WS": -22, "Wr": 23, "WR": -23, "Wg": 24, "WG": -24,
    "C[": 3, "C]": -3, "U[": 4, "U]": -4, "F[": 5, "F]": -5, "O[": 6, "O]": -6,
    "Ma": 16, "MA": -16, "Mf": 17, "MF": -17, "Dr": 10, "DR": -10, "Du": 11, "DU": -11,
    "S[": 9, "S]": -9, "Sa": 7, "SA": -7, "Sp": 8, "SP": -8,
    "Bb": 14, "BB": -14, "Bu": 15, "BU": -15, "Bw": 12, "BW": -12, "Bf": 13, "BF": -13,
}
N6_IGN = {"W*", "S@", "Sr", "Ss", "t[", "t]", "TC"}
N6_TH = {"He": 4, "HE": -4, "Hw": 3, "HW": -3, "Hl": 1, "HL": -1, "Hm": 2, "HM": -2}
N6_BODY = 1
N6_SS_NAMES = {
    1: "Task: Running body", 2: "Unknown subsystem", 3: "Task: Creating",
    4: "Task: Submitting", 5: "Task: Spawning function", 6: "Task: Running task for",
    7: "Scheduler: Adding ready tasks", 8: "Scheduler: Processing ready tasks",
    9: "Scheduler: Serving tasks", 10: "Dependency: Registering",
    11: "Dependency: Unregistering", 12: "Blocking: Taskwait", 13: "Blocking: Wait for deadline",
    14: "Blocking: Blocking current task", 15: "Blocking: Unblocking remote task",
    16: "Memory: Allocating", 17: "Memory: Freeing", 18: "Worker: Handling task",
    19: "Worker: Looking for work", 20: "Worker: Switching to another thread",
    21: "Worker: Migrating CPU", 22: "Worker: Suspending thread",
    23: "Worker: Resuming another thread", 24: "Worker: Sponge mode"}
N6_TH_NAMES = {1: "Leader", 2: "Main", 3: "Worker", 4: "External"}


def jenkins(key):
    """uthash's HASH_JEN of bytes `key` (32-bit)."""
    m = 0xFFFFFFFF

    def mix(a, b, c):
        a = (a - b - c) & m; a ^= c >> 13
        b = (b - c - a) & m; b ^= (a << 8) & m
        c = (c - a - b) & m; c ^= b >> 13
        a = (a - b - c) & m; a ^= c >> 12
        b = (b - c - a) & m; b ^= (a << 16) & m
        c = (c - a - b) & m; c ^= b >> 5
        a = (a - b - c) & m; a ^= c >> 3
        b = (b - c - a) & m; b ^= (a << 10) & m
        c = (c - a - b) & m; c ^= b >> 15
        return a, b, c

    h, i, j, k, p = 0xFEEDBEEF, 0x9E3779B9, 0x9E3779B9, len(key), 0
    while k >= 12:
        i = (i + key[p] + (key[p + 1] << 8) + (key[p + 2] << 16) + (key[p + 3] << 24)) & m
        j = (j + key[p + 4] + (key[p + 5] << 8) + (key[p + 6] << 16) + (key[p + 7] << 24)) & m
        h = (h + key[p + 8] + (key[p + 9] << 8) + (key[p + 10] << 16) + (key[p + 11] << 24)) & m
        i, j, h = mix(i, j, h)
        p += 12
        k -= 12
    h = (h + len(key)) & m
    rest = key[p:]
    for idx in range(len(rest) - 1, -1, -1):
        b = rest[idx]
        if idx >= 8:
            h = (h + (b << (8 * (idx - 7)))) & m
        elif idx >= 4:
            j = (j + (b << (8 * (idx - 4)))) & m
        else:
            i = (i + (b << (8 * idx))) & m
    i, j, h = mix(i, j, h)
    return h


def type_gid(label):
    g = (jenkins(label.encode()) + 666) & 0x7FFFFFFF
    return g + 1000 if g < 1000 else g


class Cpu:
    def __init__(self, loom, gindex, phyid, virtual):
        self.loom, self.gindex, self.phyid, self.virtual = loom, gindex, phyid, virtual
        self.name = "vCPU %d.*" % loom.gindex if virtual else "CPU %d.%d" % (loom.gindex, phyid)
        self.threads = []
        self.updated = False
        self.had_running = False

    def running(self):
        return [t for t in self.threads if t.state == RUNNING]


class Loom:
    def __init__(self, name, gindex):
        self.name, self.gindex = name, gindex
        self.cpus = []  # by index
        self.vcpu = None
        self.procs = {}


class Proc:
    def __init__(self, loom, pid, meta):
        self.loom, self.pid = loom, pid
        self.appid = int(meta.get("app_id", 0) or 0)
        r = meta.get("rank")
        self.rank = int(r) if r is not None else -1
        self.threads = {}
        self.types = {"V": {}, "6": {}}   # type id -> (gid, label)
        self.tasks = {"V": {}, "6": {}}   # task id -> Task


class Task:
    def __init__(self, tid, ttype, parallel, pausable, resurrect, relax):
        self.id, self.type = tid, ttype
        self.parallel, self.pausable, self.resurrect, self.relax = (
            parallel, pausable, resurrect, relax)
        self.bodies = {}


class Body:
    def __init__(self, task, bid):
        self.task, self.id, self.state, self.stack = task, bid, "created", None


class Thread:
    def __init__(self, proc, tid, meta):
        self.proc, self.tid = proc, tid
        self.name = "TH %d.%d" % (proc.appid, tid)
        self.state, self.cpu = 0, None
        self.flush = None
        self.marks = {}
        self.ss = {"V": [], "6": []}
        self.idle = {"V": PROGRESSING, "6": PROGRESSING}
        self.last = {"idleV": PROGRESSING, "idle6": PROGRESSING}  # values at the last flush
        self.bodies = {"V": [], "6": []}
        self.n6th = []

    def active(self):
        return self.state in (RUNNING, COOLING, WARMING)

    def running_body(self, m):
        st = self.bodies[m]
        return st[-1] if st and st[-1].state == "running" else None


class Emu:
    def __init__(self, trace):
        self.streams, self.offsets = discover(trace)
        self.looms = {}
        self.threads = []
        self.models = set()
        self.mark_types = {}  # type -> {title, stack, labels}
        for s in self.streams:
            meta = s["meta"]
            if s["loom"] not in self.looms:
                self.looms[s["loom"]] = Loom(s["loom"], len(self.looms))
            loom = self.looms[s["loom"]]
            if not loom.cpus and meta.get("loom_cpus"):
                cpus = sorted(meta["loom_cpus"], key=lambda c: c["phyid"])
                loom.cpus = [None] * len(cpus)
                for c in cpus:
                    loom.cpus[c["index"]] = c["phyid"]
            if s["pid"] not in loom.procs:
                loom.procs[s["pid"]] = Proc(loom, s["pid"], meta)
            proc = loom.procs[s["pid"]]
            th = Thread(proc, s["tid"], meta)
            proc.threads[s["tid"]] = th
            s["thread"] = th
            self.threads.append(th)
            for model in (meta.get("require") or {}):
                self.models.add(model)
            for t, mk in (meta.get("mark") or {}).items():
                # tabs read as spaces, as in the emulator's .pcf; value labels trimmed there
                # too, and an empty one is no label
                d = self.mark_types.setdefault(int(t), {
                    "title": mk["title"].replace("\t", " "),
                    "stack": mk["chan_type"] == "stack", "labels": {}})
                for v, lab in (mk.get("labels") or {}).items():
                    lab = lab.replace("\t", " ").strip()
                    if lab:
                        d["labels"][int(v)] = lab
        # CPUs: per loom (by name), physical ones by phyid, then the virtual one.
        g = 0
        self.cpus = []
        for name in sorted(self.looms):
            loom = self.looms[name]
            phys = sorted(range(len(loom.cpus)), key=lambda i: loom.cpus[i])
            objs = {}
            for i in phys:
                objs[i] = Cpu(loom, g, loom.cpus[i], False)
                self.cpus.append(objs[i])
                g += 1
            loom.cpus = [objs[i] for i in range(len(loom.cpus))]
            loom.vcpu = Cpu(loom, g, -1, True)
            self.cpus.append(loom.vcpu)
            g += 1
        for th in self.threads:
            th.marks = {t: ([] if d["stack"] else None) for t, d in self.mark_types.items()}
        # a label two threads share (a tid on two looms) gets its Paraver row appended
        names = [th.name for th in self.threads]
        for row, th in enumerate(self.threads):
            if names.count(th.name) > 1:
                th.name += " (1.1.%d)" % (row + 1)

    # -- helpers that mirror ovni's checks: an input ovniemu refuses is an OracleError
    def fail(self, msg):
        raise OracleError("%s at %s (t=%d)" % (msg, self.where, self.now))

    def cpu_update(self, cpu):
        run = cpu.running()
        if len(run) > 1 and not cpu.virtual:
            self.fail("physical %s has %d running threads" % (cpu.name, len(run)))
        cpu.updated = True
        if len(run) == 1:
            cpu.had_running = True

    def get_cpu(self, loom, index):
        if index == -1:
            return loom.vcpu
        if 0 <= index < len(loom.cpus):
            return loom.cpus[index]
        self.fail("no CPU index %d" % index)

    def set_single(self, th, key, value, allow_dup=False):
        if not allow_dup and th.last.get(key) == value and key in th.last:
            self.fail("same value %r again in %s" % (value, key))
        th.pending[key] = value

    def run(self):
        evs = []
        for si, s in enumerate(self.streams):
            events, bo = read_stream(s["path"])
            off = self.offsets.get(s["loom"].split(".")[0], 0)
            for k, (clock, mcv, payload, jumbo) in enumerate(events):
                evs.append((clock + off, si, k, mcv, payload, jumbo, bo))
        evs.sort(key=lambda e: (e[0], e[1], e[2]))
        self.origin = evs[0][0] if evs else 0
        self.prv_names = self.paraver_names()
        self.vcpu_tasks = False  # two threads ran tasks on a virtual CPU at once
        self.tevents = []   # the task instances' BTF-shaped events
        self.nprocs = sum(len(lo.procs) for lo in self.looms.values())
        self.changes = {}   # (entity, type, channel) -> [(t, value)]
        self.current = {}
        self.labels = {}
        for clock, si, k, mcv, payload, jumbo, bo in evs:
            s = self.streams[si]
            self.now = clock - self.origin
            self.where = "%s event %d %s" % (os.path.relpath(s["path"]), k, mcv)
            th = s["thread"]
            th.pending = {}
            code = mcv.decode("latin-1")
            moved = self.snapshot(th, code, payload, bo) if code[:1] == "O" else []
            self.event(th, code, payload, jumbo, bo)
            self.follow_threads(moved)
            for key, v in th.pending.items():
                th.last[key] = v
            self.sample()
            for loom in self.looms.values():
                if sum(1 for o in loom.vcpu.running() if self.body_now(o)) > 1:
                    self.vcpu_tasks = True
        self.end = evs[-1][0] - self.origin if evs else 0
        return self

    def event(self, th, mcv, p, jumbo, bo):
        m, c, v = mcv[0], mcv[1], mcv[2]
        loom = th.proc.loom
        if m == "O":
            if c == "H":
                if v == "x":
                    if th.state == RUNNING:
                        self.fail("already running")
                    (idx,) = struct.unpack(bo + "i", p[:4])
                    cpu = self.get_cpu(loom, idx)
                    if th.cpu is not None:
                        self.fail("already has a CPU")
                    th.cpu, th.state = cpu, RUNNING
                    cpu.threads.append(th)
                    self.cpu_update(cpu)
                elif v == "e":
                    if th.state not in (RUNNING, COOLING):
                        self.fail("end not running")
                    th.state = DEAD
                    th.cpu.threads.remove(th)
                    self.cpu_update(th.cpu)
                    th.cpu = None
                elif v == "p":
                    if th.state not in (RUNNING, COOLING):
                        self.fail("pause not running")
                    th.state = PAUSED
                    self.cpu_update(th.cpu)
                elif v == "r":
                    if th.state not in (PAUSED, WARMING):
                        self.fail("resume not paused")
                    th.state = RUNNING
                    self.cpu_update(th.cpu)
                elif v == "c":
                    if th.state != RUNNING:
                        self.fail("cool not running")
                    th.state = COOLING
                    self.cpu_update(th.cpu)
                elif v == "w":
                    if th.state != PAUSED:
                        self.fail("warm not paused")
                    th.state = WARMING
                    self.cpu_update(th.cpu)
                elif v != "C":
                    self.fail("unknown")
            elif c == "A":
                if v == "s":
                    if th.cpu is None or not th.active():
                        self.fail("affinity of inactive thread")
                    (idx,) = struct.unpack(bo + "i", p[:4])
                    new = self.get_cpu(loom, idx)
                    target = th
                else:
                    idx, tid = struct.unpack(bo + "ii", p[:8])
                    new = self.get_cpu(loom, idx)
                    target = th.proc.threads.get(tid)
                    if target is None:
                        for pr in loom.procs.values():
                            target = target or pr.threads.get(tid)
                    if target is None or target.state in (0, DEAD) or target.cpu is None:
                        self.fail("remote affinity of thread %d" % tid)
                if target.cpu is not new or v == "r":
                    old = target.cpu
                    old.threads.remove(target)
                    self.cpu_update(old)
                    new.threads.append(target)
                    self.cpu_update(new)
                    target.cpu = new
            elif c == "F":
                th.flush = 1 if v == "[" else None
            elif c == "M":
                value, ty = struct.unpack(bo + "qi", p[:12])
                if ty not in self.mark_types or value == 0:
                    self.fail("bad mark")
                if v == "[":
                    if not self.mark_types[ty]["stack"]:
                        self.fail("push on single mark")
                    th.marks[ty].append(value)
                elif v == "]":
                    if not th.marks[ty] or th.marks[ty][-1] != value:
                        self.fail("bad mark pop")
                    th.marks[ty].pop()
                else:
                    if self.mark_types[ty]["stack"]:
                        self.fail("set on stack mark")
                    th.marks[ty] = value
            return
        model = {"V": "nosv", "6": "nanos6"}.get(m)
        if model is None:
            return  # models the oracle does not follow
        if model not in self.models:
            self.fail("model %s not enabled" % model)
        if not th.active():
            self.fail("thread not active")
        cv = c + v
        if m == "V" and cv in NOSV_SS:
            act, st = NOSV_SS[cv]
            if act == "push":
                th.ss["V"].append(st)
            elif act == "pop":
                self.pop(th, "V", st)
            elif act == "idle":
                self.set_single(th, "idleV", st)
                th.idle["V"] = st
            return
        if m == "6":
            if cv in N6_IGN:
                return
            if cv in N6_SS:
                st = N6_SS[cv]
                if st > 0:
                    self.push_nodup(th, "6", st)
                else:
                    self.pop(th, "6", -st)
                return
            if cv in N6_TH:
                st = N6_TH[cv]
                if st > 0:
                    last = th.last.get("th6")
                    if last == st:
                        self.fail("same thread type again")
                    th.n6th.append(st)
                    th.pending["th6"] = st
                else:
                    if not th.n6th or th.n6th[-1] != -st:
                        self.fail("bad thread type pop")
                    th.n6th.pop()
                    th.pending["th6"] = th.n6th[-1] if th.n6th else None
                return
            if cv in ("Pp", "Pr", "Pa"):
                st = {"Pp": 100, "Pr": 101, "Pa": 102}[cv]
                self.set_single(th, "idle6", st)
                th.idle["6"] = st
                return
        if c == "Y" and v == "c":
            if not jumbo:
                self.fail("type not jumbo")
            (typeid,) = struct.unpack(bo + "I", p[:4])
            label = p[4:].split(b"\0")[0].decode("utf-8", "replace")
            if not label:
                label = "(unlabeled task type %d)" % typeid
            if typeid in th.proc.types[m] or typeid == 0:
                self.fail("task type %d again" % typeid)
            th.proc.types[m][typeid] = (type_gid(label), label)
            return
        if c == "T":
            self.task_event(th, m, v, p, bo)
            return
        self.fail("unknown event")

    def push_nodup(self, th, m, st):
        top = th.ss[m][-1] if th.ss[m] else None
        if m == "6" and top == st:
            self.fail("same subsystem pushed again")
        th.ss[m].append(st)

    def pop(self, th, m, st):
        if not th.ss[m] or th.ss[m][-1] != st:
            self.fail("bad subsystem pop %d" % st)
        th.ss[m].pop()

    def task_event(self, th, m, v, p, bo):
        proc = th.proc
        if v in ("c", "C"):
            if m == "6" and v == "C":
                return
            task_id, type_id = struct.unpack(bo + "II", p[:8])
            if task_id in proc.tasks[m]:
                self.fail("task %d exists" % task_id)
            if type_id not in proc.types[m]:
                self.fail("unknown type %d" % type_id)
            if m == "V":
                par = v == "C"
                task = Task(task_id, type_id, par, not par, not par, False)
            else:
                task = Task(task_id, type_id, False, True, False, True)
            proc.tasks[m][task_id] = task
            label = proc.types[m][type_id][1]
            task.entity = label + (" (loom.%s/proc.%d)" % (proc.loom.name, proc.pid)
                                   if self.nprocs > 1 else "")
            task.runs = 0
            first = Body(task, 1)
            first.inst = task_id if not task.parallel else (task_id << 32) + 1
            self.temit(first, "activate", th.name)
            return
        (task_id,) = struct.unpack(bo + "I", p[:4])
        task = proc.tasks[m].get(task_id)
        if task is None:
            self.fail("unknown task %d" % task_id)
        if m == "V":
            (bid,) = struct.unpack(bo + "I", p[4:8])
            if task.parallel and bid == 0 or not task.parallel and bid != 0:
                self.fail("bad body id")
            if not task.parallel:
                bid = 1
        else:
            bid = 1
        stack = th.bodies[m]
        prev = th.running_body(m)
        body = task.bodies.get(bid)
        running = th.state == RUNNING
        src = th.cpu.name
        # A thread that does not run takes its CPU for the instant of a task event: the task
        # of the thread running there gives it up for that instant (the README's reading)
        lenders = [] if running else [
            self.body_now(o) for o in th.cpu.threads
            if o is not th and o.state == RUNNING and self.body_now(o) is not None]
        for b in lenders:
            self.temit(b, "preempt", src)
        if v == "x":
            rerun = False
            if body is None:
                body = task.bodies[bid] = Body(task, bid)
            if body.state == "dead":
                if not task.resurrect:
                    self.fail("body runs again")
                body.state = "created"
                rerun = True
            if body.state != "created" or body.stack is not None:
                self.fail("execute of a %s body" % body.state)
            if prev is not None and not task.relax:
                self.fail("nested over a running body")
            body.stack, body.state = stack, "running"
            stack.append(body)
            if prev is not None:
                # (on a thread that is not running, the outer task is resumed for the
                # event, then preempted: the README's reading, which keeps BTF's states)
                if not running:
                    self.temit(prev, "resume", src)
                self.temit(prev, "preempt", src)
            task.runs += 1
            if task.parallel:
                body.inst = (task.id << 32) + bid
                if bid != 1:
                    self.temit(body, "activate", th.name)
            elif task.runs == 1:
                body.inst = task.id
            else:
                body.inst = (task.id << 32) + task.runs
                self.temit(body, "activate", th.name)
            self.temit(body, "start", src)
            if not running:
                self.temit(body, "preempt", src)
        else:
            if body is None or body.stack is not stack or stack[-1] is not body:
                self.fail("body not on top of this thread")
            if v == "p":
                if not task.pausable or body.state != "running":
                    self.fail("bad pause")
                body.state = "paused"
                if not running:
                    self.temit(body, "resume", src)
                self.temit(body, "wait", src)
            elif v == "r":
                if body.state != "paused":
                    self.fail("bad resume")
                body.state = "running"
                self.temit(body, "release", src)
                self.temit(body, "resume", src)
                if not running:
                    self.temit(body, "preempt", src)
            elif v == "e":
                if body.state != "running":
                    self.fail("bad end")
                body.state = "dead"
                body.stack = None
                stack.pop()
                if not running:
                    self.temit(body, "resume", src)
                self.temit(body, "terminate", src)
                nxt = th.running_body(m)
                if nxt is not None:
                    self.temit(nxt, "resume", src)
                    if not running:
                        self.temit(nxt, "preempt", src)
            else:
                self.fail("bad task event")
        for b in lenders:
            self.temit(b, "resume", src)
        # the subsystem: in body from execute to end
        if v == "x":
            if m == "V":
                th.ss[m].append(NOSV_BODY)
            else:
                self.push_nodup(th, m, N6_BODY)
        elif v == "e":
            self.pop(th, m, NOSV_BODY if m == "V" else N6_BODY)
        nxt = th.running_body(m)
        if m == "6":
            # Nanos6's task id channel refuses the value it already has
            key = "task6"
            val = nxt.task.id if nxt else None
            if val is not None and th.last.get(key) == val:
                self.fail("same task id again")
            th.pending[key] = val

    # -- task instances: BTF-shaped events (the README's reading of ovni's task model)

    def body_now(self, th):
        return th.running_body("V") or th.running_body("6")

    def temit(self, body, action, source):
        self.tevents.append({"entity": body.task.entity, "instance": str(body.inst),
                             "ts": str(self.now), "action": action, "source": source})

    def snapshot(self, th, code, p, bo):
        """The threads an ovni event may stop, start or move, with what they ran before."""
        out = [th]
        if code == "OAr" and len(p) >= 8:
            tid = struct.unpack(bo + "ii", p[:8])[1]
            for pr in th.proc.loom.procs.values():
                if tid in pr.threads and pr.threads[tid] is not th:
                    out.append(pr.threads[tid])
        return [(t, t.state == RUNNING, t.cpu, self.body_now(t)) for t in out]

    def follow_threads(self, moved):
        """A task follows its thread: preempted when it stops running or moves, resumed on
        the thread's CPU when it runs again."""
        for t, was, cpu, body in moved:
            now = t.state == RUNNING
            if was and body is not None and (not now or t.cpu is not cpu):
                self.temit(body, "preempt", cpu.name)
            cur = self.body_now(t)
            if now and cur is not None and (not was or t.cpu is not cpu or cur is not body):
                self.temit(cur, "resume", t.cpu.name)

    # -- the Paraver channels, as ovniemu writes them after each event

    def thread_raw(self, th):
        """Raw (untracked) channel values of a thread: {name: (value, label)}."""
        raw = {"flush": th.flush}
        for ty, d in self.mark_types.items():
            x = th.marks[ty]
            raw["mark%d" % ty] = (x[-1] if x else None) if d["stack"] else x
        for m in ("V", "6"):
            b = th.running_body(m)
            raw[m + "task"] = b.task.id if b else None
            raw[m + "body"] = b.id if b else None
            raw[m + "type"] = th.proc.types[m][b.task.type][0] if b else None
            raw[m + "appid"] = th.proc.appid if b else None
            raw[m + "rank"] = th.proc.rank + 1 if b and th.proc.rank >= 0 else None
            raw[m + "idle"] = th.idle[m]
            raw[m + "ss"] = th.ss[m][-1] if th.ss[m] else None
        raw["6th"] = th.n6th[-1] if th.n6th else None
        return raw

    def model_chans(self, run):
        """[(channel name suffix-less, raw key, RUN or ACT, label table)]"""
        out = []
        if "nosv" in self.models:
            out += [("nOS-V task body ID", "Vbody", "run", None, 15),
                    ("nOS-V task ID", "Vtask", "run", None, 10),
                    ("nOS-V task type", "Vtype", "run", "Vtype", 11),
                    ("nOS-V task AppID", "Vappid", "run", None, 12),
                    ("nOS-V subsystem", "Vss", "act", NOSV_SS_NAMES, 13),
                    ("nOS-V task MPI rank", "Vrank", "run", None, 14),
                    ("nOS-V idle state", "Vidle", "run", IDLE_NAMES, 16)]
        if "nanos6" in self.models:
            out += [("Nanos6 task ID", "6task", "run", None, 35),
                    ("Nanos6 task type", "6type", "run", "6type", 36),
                    ("Nanos6 subsystem", "6ss", "act", N6_SS_NAMES, 37),
                    ("Nanos6 task MPI rank", "6rank", "run", None, 38),
                    ("Nanos6 thread type", "6th", "any", N6_TH_NAMES, 39),
                    ("Nanos6 idle state", "6idle", "run", IDLE_NAMES, 40)]
        return out

    def label(self, table, value, proc=None):
        if value is None:
            return None
        if table == "Vtype" or table == "6type":
            for g, lab in self.all_types(table[0]):
                if g == value:
                    return lab
            return str(value)
        if isinstance(table, dict):
            return table.get(value, str(value))
        return str(value)

    def all_types(self, m):
        for loom in self.looms.values():
            for proc in loom.procs.values():
                yield from proc.types[m].values()

    def thread_view(self, th):
        raw = self.thread_raw(th)
        n = self.prv_names["THREAD"]
        view = {
            n[4]: (th.state or None, STATE_NAMES),
            n[6]: (th.cpu.gindex + 1 if th.cpu else None,
                   {th.cpu.gindex + 1: th.cpu.name} if th.cpu else {}),
            n[2]: (th.tid if th.active() else None, None),
            n[7]: (raw["flush"], {1: "Flushing"}),
        }
        for ty, d in self.mark_types.items():
            view[n[100 + ty]] = (raw["mark%d" % ty] if th.active() else None, d["labels"])
        for _name, key, track, table, ptype in self.model_chans(False):
            shown = {"run": th.state == RUNNING, "act": th.active(), "any": True}[track]
            view[n[ptype]] = (raw[key] if shown else None, table)
        return view

    def paraver_names(self):
        """The channel name of each Paraver type of thread.pcf and cpu.pcf, as the Paraver
        ingest names them: the label, trimmed; the type when empty; the label and the type
        when two types share it, it is one of tracedb's own channels or it is another type's
        number."""
        out = {}
        for side in ("THREAD", "CPU"):
            if side == "THREAD":
                labels = {6: "Thread: CPU affinity", 2: "Thread: TID of the ACTIVE thread",
                          4: "Thread: thread state", 7: "Flushing ovni buffer"}
            else:
                labels = {7: "Flushing ovni buffer of the RUNNING thread"}
            for name, _key, track, _table, ptype in self.model_chans(side == "CPU"):
                if side == "CPU":
                    track = "run"
                labels[ptype] = name + {"run": " of the RUNNING thread",
                                        "act": " of the ACTIVE thread", "any": ""}[track]
            for ty, d in self.mark_types.items():
                # (libovni refuses an empty title; tracedb names such a type `Mark N`)
                labels[100 + ty] = d["title"].strip() if d["title"] else "Mark %d" % ty
            count = {}
            for lab in labels.values():
                count[lab] = count.get(lab, 0) + 1
            names = {}
            for ty, lab in labels.items():
                if not lab:
                    names[ty] = str(ty)
                elif (count[lab] > 1 or lab in ("state", "running", "value")
                      or (lab.lstrip("-").isdigit() and str(int(lab)) == lab and int(lab) != ty)):
                    names[ty] = "%s (%d)" % (lab, ty)
                else:
                    names[ty] = lab
            names.update({1: "1", 2: "2", 3: "3"} if side == "CPU" else {})
            out[side] = names
        return out

    def cpu_view(self, cpu):
        run = cpu.running()
        one = run[0] if len(run) == 1 else None
        raw = self.thread_raw(one) if one else None
        n = self.prv_names["CPU"]
        view = {
            n[1]: (one.proc.pid if one else None, None),
            n[2]: (one.tid if one else None, None),
            n[3]: (len(run) if cpu.updated else None, None),
            n[7]: (raw["flush"] if raw else None, {1: "Flushing"}),
        }
        for ty, d in self.mark_types.items():
            view[n[100 + ty]] = (raw["mark%d" % ty] if raw else None, d["labels"])
        for _name, key, _track, table, ptype in self.model_chans(True):
            val = raw[key] if raw else None
            if raw is None and key.endswith("idle") and cpu.had_running:
                val = RESTING
            view[n[ptype]] = (val, table)
        return view

    def sample(self):
        for th in self.threads:
            self.record(th.name, "THREAD", self.thread_view(th))
        for cpu in self.cpus:
            self.record(cpu.name, "CPU", self.cpu_view(cpu))

    def record(self, entity, etype, view):
        for chan, (value, table) in view.items():
            key = (entity, etype, chan)
            if self.current.get(key) != value:
                self.current[key] = value
                self.changes.setdefault(key, []).append((self.now, value))
                if value is not None:
                    self.labels[(key, value)] = self.label(table, value)

    def intervals(self):
        """The intervals rows: [{entity, entity_type, channel, state, value, ts, dur, open}]."""
        out = []
        for key, changes in self.changes.items():
            entity, etype, chan = key
            cur = None
            for t, v in changes + [(None, None)]:
                if cur is not None:
                    end = self.end if t is None else t
                    out.append({"entity": entity, "entity_type": etype, "channel": chan,
                                "state": self.labels[(key, cur[1])], "value": str(cur[1]),
                                "ts": str(cur[0]), "dur": str(end - cur[0]),
                                "open": "true" if t is None else "false"})
                cur = (t, v) if v is not None and t is not None else None
        return out


# ---------------------------------------------------------------- comparing

COLS = ["state", "value", "ts", "dur", "open"]
KEY = ["entity", "entity_type", "channel"]


# Warnings the derive stage gives valid ovni traces where two threads run tasks on a loom's
# virtual CPU at once (ovni allows several running threads there; a BTF core runs one task):
# counted apart, and only for such traces.
VCPU_WARNINGS = {"core_conflict", "invalid_transition"}


def tracedb_rows(tracedb, traces):
    """tracedb's rows of each trace, ingested together (one capture each):
    {trace: (intervals, task events, warnings, task instances)}."""
    with common.Archive(tracedb) as db:
        err = db.ingest(["--format", "ovni"] + traces)
        if err is not None:
            sys.exit("tracedb ingest failed:\n" + err)
        out = db.tables(traces, {
            "intervals": "SELECT capture_id, entity, entity_type, channel, state, value, ts, "
                         "dur, open FROM intervals WHERE entity_type IN ('THREAD', 'CPU')",
            "tasks": "SELECT capture_id, target AS entity, target_instance AS instance, ts, "
                     "action, source FROM events WHERE target_type = 'T' ORDER BY seq",
            "warnings": "SELECT capture_id, kind, severity, message FROM diagnostics WHERE "
                        "severity NOT IN ('info')",
            "instances": "SELECT capture_id, entity, instance, complete FROM instances "
                         "WHERE entity_type = 'T'"})
    return {t: (d["intervals"], d["tasks"], d["warnings"], d["instances"])
            for t, d in out.items()}


def compare_instances(tevents, theirs, report):
    """One `instances` row per task instance, complete when it was activated and ended."""
    ours = {}
    for e in tevents:
        ours.setdefault((e["entity"], e["instance"]), set()).add(e["action"])
    b = {(r["entity"], common.norm(r["instance"])): r["complete"] for r in theirs}
    diffs = {}
    for key in sorted(set(ours) | set(b)):
        want = "true" if {"activate", "terminate"} <= ours.get(key, set()) else "false"
        if key not in ours or key not in b or b[key] != want:
            what = ("missing in oracle" if key not in ours else "missing in tracedb"
                    if key not in b else "complete")
            diffs[what] = diffs.get(what, 0) + 1
            report.append("instances %s: %s (oracle complete=%s, tracedb=%s)" % (
                key, what, want, b.get(key)))
    return diffs


def compare_tasks(ours, theirs, report):
    """Per task instance (entity, instance), its events' (ts, action, source) in order."""
    def group(rows):
        g = {}
        for r in rows:
            g.setdefault((r["entity"], common.norm(r["instance"])), []).append(
                (common.norm(r["ts"]), r["action"], r["source"]))
        return g
    a, b = group(ours), group(theirs)
    diffs = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        what = ("missing in oracle" if x is None else "missing in tracedb" if y is None
                else "task events")
        diffs[what] = diffs.get(what, 0) + 1
        if x is None or y is None:
            report.append("task %s: %s (%s)" % (key, what, x or y))
        else:
            i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            report.append("task %s: from event %d oracle=%s tracedb=%s" % (
                key, i, x[i:i + 3], y[i:i + 3]))
    return diffs


def compare(ours, theirs, report):
    """The intervals rows by (entity, entity_type, channel), rows of one key in time order."""
    return common.compare("intervals", ours, theirs, KEY, COLS, report, order=("ts", "dur"))


# ---------------------------------------------------------------- the emulator's own .prv

def prv_intervals(trace):
    """Intervals from the emulator's thread.prv/cpu.prv, as the oracle makes its own."""
    root = find_ovni_dir(trace)
    out = []
    for part, etype in (("thread", "THREAD"), ("cpu", "CPU")):
        rows = []
        with open(os.path.join(root, part + ".row")) as f:
            lines = f.read().splitlines()
        i = [k for k, line in enumerate(lines) if line.startswith("LEVEL THREAD")][0]
        n = int(lines[i].split()[-1])
        rows = [x.strip() for x in lines[i + 1:i + 1 + n]]
        names = {}
        with open(os.path.join(root, part + ".pcf")) as f:
            pl = f.read().splitlines()
        for k, line in enumerate(pl):
            if line.startswith("EVENT_TYPE"):
                p = pl[k + 1].split(None, 2)
                names[int(p[1])] = p[2].strip()
        seen = {}
        with open(os.path.join(root, part + ".prv")) as f:
            header = f.readline()
            end = int(header.split(":")[2].split("_")[0]) if "_ns" in header else None
            for line in f:
                p = line.strip().split(":")
                if p[0] != "2":
                    continue
                row, t = int(p[4]), int(p[5])
                for k in range(6, len(p), 2):
                    ty, v = int(p[k]), int(p[k + 1])
                    key = (rows[row - 1], etype, names.get(ty, str(ty)) if not (
                        part == "cpu" and ty in (1, 2, 3)) else str(ty))
                    val = None if v == 0 and ty != 3 else v
                    seen.setdefault(key, []).append((t, val))
        for key, ch in seen.items():
            cur = None
            for t, v in ch + [(None, None)]:
                if cur is not None and (t is None or v != cur[1]):
                    e = end if t is None else t
                    out.append({"entity": key[0], "entity_type": key[1], "channel": key[2],
                                "state": "", "value": str(cur[1]), "ts": str(cur[0]),
                                "dur": str(e - cur[0]), "open": "true" if t is None else "false"})
                    cur = None
                if cur is None and v is not None and t is not None:
                    cur = (t, v)
    return out


def main(argv):
    if argv[:1] == ["--generate"]:
        import ovni_gen
        return ovni_gen.main(argv[1:])
    if len(argv) == 2 and argv[0] == "--prv":
        ours = Emu(argv[1]).run().intervals()
        theirs = prv_intervals(argv[1])
        for r in ours:
            r["state"] = ""
        report = []
        found = compare(ours, theirs, report)
        return 1 if common.summary(argv[1], ["%d intervals" % len(ours)], found, report) else 0
    if len(argv) >= 2 and argv[0] == "--tracedb":
        tracedb, traces = argv[1], [os.path.abspath(t) for t in argv[2:]]
        total = 0
        theirs_all = tracedb_rows(tracedb, traces)
        for trace in traces:
            try:
                emu = Emu(trace).run()
                ours = emu.intervals()
            except OracleError as e:
                print("%s: the oracle refuses the trace: %s" % (trace, e))
                total += 1
                continue
            theirs, their_tasks, warnings, instances = theirs_all[trace]
            report = []
            found = compare(ours, theirs, report)
            found.update(("task " + k, v) for k, v in
                         compare_tasks(emu.tevents, their_tasks, report).items())
            if not emu.vcpu_tasks:
                found.update(("instances " + k, v) for k, v in
                             compare_instances(emu.tevents, instances, report).items())
            known = 0
            for w in warnings:
                if w["kind"] in VCPU_WARNINGS and emu.vcpu_tasks:
                    known += 1
                    continue
                found["warning"] = found.get("warning", 0) + 1
                report.append("%s %s: %s" % (w["severity"], w["kind"], w["message"]))
            total += common.summary(
                trace, ["%d intervals" % len(ours), "%d task events" % len(emu.tevents)], found,
                report,
                " (%d warnings of tasks run at once on a virtual CPU)" % known if known else "")
        return 1 if total else 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    w = csv.writer(sys.stdout)
    w.writerow(KEY + COLS)
    for r in Emu(argv[0]).run().intervals():
        w.writerow([r[c] for c in KEY + COLS])
    return 0


if __name__ == "__main__":
    common.run(main)
