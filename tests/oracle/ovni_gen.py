#!/usr/bin/env python3
"""Random but valid ovni traces, for tests/oracle/ovni_oracle.py (standard library only).

    ovni_gen.py DIR --seed N [--looms N] [--model ovni|nosv|nanos6|mixed] [--steps N]
                [--ties] [--v2]

(--ties: most events at the instant of the one before; --v2: libovni's v2 layout, no
runtime, no marks)

writes DIR/ovni/loom.<L>/proc.<P>/thread.<T>/stream.obs + stream.json (libovni's v3
layout; some streams big-endian, some gzip-compressed) and, for several looms,
DIR/ovni/clock-offsets.txt (each loom's clock is behind by its offset). What it writes is
what the runtimes write and what ovniemu accepts: a thread's life (OHx on a free CPU or the
loom's virtual CPU, OHp/OHr, OHc/OHp, OHw/OHr, OHe), affinity changes of the running thread
(OAs) and of another, paused one (OAr), flushes, marks of single and stack mark types
declared in the metadata (some labels declared by one thread only), and per process one
runtime: nOS-V (subsystem pushes and pops, idle states, task types, tasks created on one
thread and run on another, a task paused to run a nested one, tasks run again after their
end, parallel tasks whose bodies run on several threads at once) or Nanos6 (subsystems,
thread types, idle states, tasks blocked and resumed, nested tasks inline over a running
one) or none. Equal clocks of two threads are written only in the order ovni merges them
(loom, pid, tid), so the trace means one thing.
"""
import gzip
import json
import os
import random
import struct
import sys

UNSTARTED, RUNNING, PAUSED, DEAD, COOLING, WARMING = 0, 1, 2, 3, 4, 5

NOSV_PAIRS = [("VSh", "VSf"), ("VS[", "VS]"), ("VU[", "VU]"), ("VMa", "VMA"), ("VMf", "VMF"),
              ("VAr", "VAR"), ("VAd", "VAD"), ("VAs", "VAS"), ("VAp", "VAP"), ("VAy", "VAY"),
              ("VAw", "VAW"), ("VAc", "VAC"), ("VAa", "VAA"), ("VAe", "VAE"), ("VAl", "VAL"),
              ("VAt", "VAT"), ("VAu", "VAU"), ("VAb", "VAB"), ("VHw", "VHW"), ("VHd", "VHD")]
NOSV_IGN = ["VSr", "VSs", "VS@", "VHa", "VHA"]
N6_PAIRS = [("6W[", "6W]", 19), ("6Wt", "6WT", 18), ("6Ww", "6WW", 20), ("6Wm", "6WM", 21),
            ("6Ws", "6WS", 22), ("6Wr", "6WR", 23), ("6Wg", "6WG", 24), ("6C[", "6C]", 3),
            ("6U[", "6U]", 4), ("6F[", "6F]", 5), ("6O[", "6O]", 6), ("6Ma", "6MA", 16),
            ("6Mf", "6MF", 17), ("6Dr", "6DR", 10), ("6Du", "6DU", 11), ("6S[", "6S]", 9),
            ("6Sa", "6SA", 7), ("6Sp", "6SP", 8), ("6Bb", "6BB", 14), ("6Bu", "6BU", 15),
            ("6Bw", "6BW", 12), ("6Bf", "6BF", 13)]
N6_IGN = ["6W*", "6S@", "6Sr", "6Ss", "6t[", "6t]"]
N6_TH = [("6He", "6HE", 4), ("6Hw", "6HW", 3), ("6Hl", "6HL", 1), ("6Hm", "6HM", 2)]
# Titles of the emulator's own channels (thread.pcf, cpu.pcf, the nOS-V and Nanos6 ones; the
# CPU's tid, type 2, has no label in cpu.pcf, so the Paraver ingest names it `2`)
BUILTIN_TITLES = ["Thread: thread state", " Flushing ovni buffer ", "Thread: CPU affinity",
                  "Flushing ovni buffer of the RUNNING thread", "Thread: TID of the ACTIVE thread",
                  "nOS-V subsystem of the ACTIVE thread", "nOS-V task ID of the RUNNING thread",
                  "Nanos6 thread type", "Nanos6 subsystem of the RUNNING thread",
                  "2"]
LABELS = ["solve", "init", "dgemm", "halo exchange", "io", "", "reduce", "task_ü"]


class T:
    """A thread being generated."""

    def __init__(self, g, loom, proc, tid):
        self.g, self.loom, self.proc, self.tid = g, loom, proc, tid
        self.be = g.rng.random() < 0.25
        self.bytes = bytearray(b"ovni" + (b"\0\0\0\1" if self.be else b"\1\0\0\0"))
        self.state, self.cpu = UNSTARTED, None
        self.stack = []       # ("ss", pop code, value) | ("body", task, body id)
        self.marks = {}
        self.flush = False
        self.idle = 100
        self.n6th = []
        self.budget = g.rng.randint(5, g.steps)
        self.key = (loom.name, proc.pid, tid)
        self.marks_used = []

    def bo(self):
        return ">" if self.be else "<"

    def ev(self, mcv, payload=b"", jumbo=False):
        g = self.g
        dt = g.rng.choice([0, 0, 0, 0, 0, 0, 1, 10] if g.ties else [0, 0, 1, 3, 10, 10, 50, 120, 400])
        if dt == 0 and g.last_key is not None and g.last_key > self.key:
            dt = 1
        g.now += dt
        g.last_key = self.key
        clock = g.now - self.loom.offset
        b = self.bytes
        if jumbo:
            b.append(0x10 | 3)
            b += mcv.encode()
            b += struct.pack(self.bo() + "Q", clock)
            b += struct.pack(self.bo() + "I", len(payload))
            b += payload
        else:
            b.append(len(payload) - 1 if payload else 0)
            b += mcv.encode()
            b += struct.pack(self.bo() + "Q", clock)
            b += payload
        g.nevents += 1

    def u32(self, *v):
        return struct.pack(self.bo() + "I" * len(v), *v)

    def i32(self, *v):
        return struct.pack(self.bo() + "i" * len(v), *v)

    def active(self):
        return self.state in (RUNNING, COOLING, WARMING)

    def running_body(self):
        bodies = [e for e in self.stack if e[0] == "body"]
        if bodies and bodies[-1][1].state.get(bodies[-1][2]) == "running":
            return bodies[-1]
        return None

    def top_body(self):
        bodies = [e for e in self.stack if e[0] == "body"]
        return bodies[-1] if bodies else None


class Task:
    def __init__(self, tid, ttype, parallel):
        self.id, self.type, self.parallel = tid, ttype, parallel
        self.state = {}       # body id -> created/running/paused/dead
        self.next_body = 1
        self.runs = 0


class Proc:
    def __init__(self, loom, pid, appid, rank, model):
        self.loom, self.pid, self.appid, self.rank, self.model = loom, pid, appid, rank, model
        self.threads = []
        self.types = []
        self.tasks = []
        self.next_task = 1
        self.next_type = 1


class Loom:
    def __init__(self, name, phyids, offset):
        self.name, self.phyids, self.offset = name, phyids, offset
        self.procs = []

    def threads(self):
        return [t for p in self.procs for t in p.threads]

    def free(self, index):
        """No running thread on CPU `index` (a physical one)."""
        return not any(t.cpu == index and t.state == RUNNING for t in self.threads())


class Gen:
    def __init__(self, seed, nlooms, model, steps, ties=False, v2=False):
        self.rng = random.Random(seed)
        self.ties, self.v2 = ties, v2
        self.steps = steps
        self.now = 1_000_000 + self.rng.randint(0, 10_000)
        self.last_key = None
        self.nevents = 0
        rng = self.rng
        nlooms = nlooms or rng.randint(1, 3)
        names = sorted("n%d.%s" % (i + 1, rng.choice(["a", "bsc", "x.y"]))
                       for i in range(nlooms))
        self.looms = []
        tids = rng.sample(range(100, 99999), 40)
        rank = 0
        self.offsets = nlooms > 1 or rng.random() < 0.3
        for name in names:
            n = rng.randint(1, 4)
            phyids = sorted(rng.sample(range(0, 12), n))
            offset = rng.randint(-5000, 5000) if self.offsets and names.index(name) else 0
            loom = Loom(name, phyids, offset)
            for pid in sorted(rng.sample(range(1000, 9999), rng.randint(1, 2))):
                m = model if model != "mixed" else rng.choice(["ovni", "nosv", "nanos6"])
                if v2:
                    m = "ovni"
                appid = rng.choice([1, 1, 2, 7])
                proc = Proc(loom, pid, appid, rank if nlooms > 1 else None, m)
                rank += 1
                mine = [tids.pop() for _ in range(rng.randint(1, 3))]
                if self.looms and rng.random() < 0.2:
                    # a tid another loom has too (ovni names both threads TH <app>.<tid>)
                    tid = rng.choice(self.looms[-1].threads()).tid
                    if all(t.tid != tid for t in loom.threads()):
                        mine[0] = tid
                for tid in sorted(set(mine)):
                    proc.threads.append(T(self, loom, proc, tid))
                loom.procs.append(proc)
            self.looms.append(loom)
        self.nranks = rank
        # mark types: a single and a stack one; each thread declares some of them
        self.marks = {}
        for ty in rng.sample(range(1, 100), 0 if v2 else rng.randint(0, 2)):
            stack = rng.random() < 0.5
            labels = {str(v): rng.choice(["Blue", "Gray", " Red\t", "phase\t%d" % v])
                      for v in rng.sample(range(1, 6), rng.randint(0, 3))}
            # titles two types share, or like tracedb's own channels or the emulator's
            # (thread.pcf's, cpu.pcf's, a runtime's), now and then
            title = rng.choice(["Mark %d %s" % (ty, "stack" if stack else "single")] * 4
                               + ["Phase", "state", "value", " Spaced\tout\t"]
                               + (BUILTIN_TITLES if rng.random() < 0.3 else []))
            self.marks[ty] = {"title": title,
                              "chan_type": "stack" if stack else "single", "labels": labels}
        self.declarer = {}
        for t in self.threads():
            t.marks_used = [ty for ty in self.marks if rng.random() < 0.7]
            t.marks = {ty: [] for ty in t.marks_used}
            for ty in t.marks_used:
                self.declarer.setdefault(ty, t)

    def threads(self):
        return [t for lo in self.looms for t in lo.threads()]

    # ------------------------------------------------------------ actions

    def actions(self, t):
        """The actions thread `t` may take now: [(weight, function)]."""
        rng, lo = self.rng, t.loom
        acts = []
        if t.state == UNSTARTED:
            acts.append((5, lambda: self.start(t)))
            return acts
        if t.state == RUNNING:
            acts += [(1, lambda: self.pause(t)), (1, lambda: self.cool(t)),
                     (1, lambda: self.move(t)), (1, lambda: self.remote(t)),
                     (1, lambda: self.flush(t)), (0.3, lambda: self.noise(t))]
        elif t.state == COOLING:
            acts += [(2, lambda: self.to(t, "OHp", PAUSED))]
        elif t.state == PAUSED:
            acts.append((1, lambda: self.to(t, "OHw", WARMING)))
            if t.cpu == -1 or lo.free(t.cpu):
                acts.append((3, lambda: self.to(t, "OHr", RUNNING)))
        elif t.state == WARMING:
            if t.cpu == -1 or lo.free(t.cpu):
                acts.append((3, lambda: self.to(t, "OHr", RUNNING)))
        if t.active():
            if t.marks_used:
                acts.append((2, lambda: self.mark(t)))
            if t.proc.model == "nosv":
                acts += [(6, lambda: self.nosv(t))]
            elif t.proc.model == "nanos6":
                acts += [(6, lambda: self.nanos6(t))]
        return acts

    def start(self, t):
        lo = t.loom
        free = [i for i in range(len(lo.phyids)) if lo.free(i)]
        cpu = self.rng.choice(free) if free and self.rng.random() < 0.85 else -1
        t.cpu, t.state = cpu, RUNNING
        t.ev("OHx", t.i32(cpu, -1) + struct.pack(t.bo() + "Q", 0))
        if t.proc.model == "nosv" and self.rng.random() < 0.7:
            t.ev("VHw")
            t.stack.append(("ss", "VHW", 32))
        if t.proc.model == "nanos6":
            code, close, v = self.rng.choice(N6_TH)
            t.ev(code)
            t.n6th.append((close, v))

    def pause(self, t):
        if self.rng.random() < 0.5:
            self.to(t, "OHc", COOLING)
        self.to(t, "OHp", PAUSED)

    def cool(self, t):
        self.to(t, "OHc", COOLING)

    def to(self, t, code, state):
        t.state = state
        t.ev(code)

    def move(self, t):
        lo = t.loom
        free = [i for i in range(len(lo.phyids)) if lo.free(i) and i != t.cpu]
        cands = free + ([-1] if t.cpu != -1 else [])
        if self.rng.random() < 0.1:
            cands.append(t.cpu)    # to where it is: ovniemu ignores it
        if not cands:
            return
        t.cpu = self.rng.choice(cands)
        t.ev("OAs", t.i32(t.cpu))

    def remote(self, t):
        others = [o for o in t.loom.threads()
                  if o is not t and o.state in (PAUSED, COOLING, WARMING, RUNNING)]
        if not others:
            return
        o = self.rng.choice(others)
        cpus = list(range(len(t.loom.phyids)))
        if o.state == RUNNING:
            # a running thread moves to a CPU no other thread runs on (or the virtual one)
            cpus = [i for i in cpus if i == o.cpu or t.loom.free(i) and t.cpu != i]
        o.cpu = self.rng.choice(cpus + [-1])
        t.ev("OAr", t.i32(o.cpu, o.tid))

    def noise(self, t):
        """ovni events that change no channel: a thread creation, a burst, a sort region."""
        code = self.rng.choice(["OHC", "OB.", "OU[", "OU]"])
        if code == "OHC":
            t.ev(code, t.i32(t.cpu if t.cpu is not None else -1) + struct.pack(t.bo() + "Q", 7))
        else:
            t.ev(code)

    def flush(self, t):
        t.ev("OF]" if t.flush else "OF[")
        t.flush = not t.flush

    def mark(self, t):
        rng = self.rng
        ty = rng.choice(t.marks_used)
        value = rng.choice([1, 2, 3, 4, 5, 1 << 40, -7])
        pl = lambda v: struct.pack(t.bo() + "qi", v, ty)
        if self.marks[ty]["chan_type"] == "single":
            t.ev("OM=", pl(value))
        elif t.marks[ty] and rng.random() < 0.5:
            t.ev("OM]", pl(t.marks[ty].pop()))
        else:
            t.marks[ty].append(value)
            t.ev("OM[", pl(value))

    # ------------------------------------------------------------ nOS-V

    def new_type(self, t, m):
        p = t.proc
        tid = p.next_type
        p.next_type += 1
        label = self.rng.choice(LABELS)
        p.types.append(tid)
        t.ev(m + "Yc", t.u32(tid) + label.encode() + b"\0", jumbo=True)

    def nosv(self, t):
        rng, p = self.rng, t.proc
        top = t.stack[-1] if t.stack else None
        rb = t.running_body()
        choice = rng.random()
        if choice < 0.22:
            code, close = rng.choice(NOSV_PAIRS)
            v = 6 + NOSV_PAIRS.index((code, close))
            t.ev(code)
            t.stack.append(("ss", close, v))
        elif choice < 0.4:
            if top and top[0] == "ss":
                t.ev(top[1])
                t.stack.pop()
            elif top and top[0] == "body" and rb is top:
                self.end_body(t, "V")
        elif choice < 0.45:
            code = rng.choice([c for c in ("VPp", "VPr", "VPa")
                               if {"VPp": 100, "VPr": 101, "VPa": 102}[c] != t.idle])
            t.idle = {"VPp": 100, "VPr": 101, "VPa": 102}[code]
            t.ev(code)
        elif choice < 0.48:
            t.ev(rng.choice(NOSV_IGN))
        elif choice < 0.55 or not p.types:
            self.new_type(t, "V")
        elif choice < 0.65:
            par = rng.random() < 0.3
            task = Task(p.next_task, rng.choice(p.types), par)
            p.next_task += 1
            p.tasks.append(task)
            t.ev("VTC" if par else "VTc", t.u32(task.id, task.type))
        elif choice < 0.8:
            if rb is not None:
                # nOS-V pauses the running task before running a nested one
                self.pause_body(t, "V")
                return
            cands = []
            for task in p.tasks:
                if task.parallel:
                    if task.next_body <= 4:
                        cands.append((task, task.next_body))
                elif task.state.get(1) in (None, "created", "dead"):
                    cands.append((task, 1))
            if not cands:
                return
            task, bid = rng.choice(cands)
            if task.parallel:
                task.next_body += 1
            task.state[bid] = "running"
            t.stack.append(("body", task, bid))
            t.ev("VTx", t.u32(task.id, bid if task.parallel else 0))
        elif choice < 0.9:
            tb = t.top_body()
            if tb and tb[1].state[tb[2]] == "paused":
                self.resume_body(t, "V")
            elif rb is not None and not rb[1].parallel:
                self.pause_body(t, "V")
        else:
            if rb is not None and top is rb:
                self.end_body(t, "V")

    def body_payload(self, t, m, task, bid):
        if m == "V":
            return t.u32(task.id, bid if task.parallel else 0)
        return t.u32(task.id)

    def pause_body(self, t, m):
        _, task, bid = t.running_body()
        if task.parallel:
            return
        task.state[bid] = "paused"
        t.ev(m + "Tp", self.body_payload(t, m, task, bid))

    def resume_body(self, t, m):
        _, task, bid = t.top_body()
        task.state[bid] = "running"
        t.ev(m + "Tr", self.body_payload(t, m, task, bid))

    def end_body(self, t, m):
        _, task, bid = t.stack.pop()
        task.state[bid] = "dead"
        t.ev(m + "Te", self.body_payload(t, m, task, bid))

    # ------------------------------------------------------------ Nanos6

    def ss_top(self, t):
        for e in reversed(t.stack):
            return e[2] if e[0] == "ss" else 1
        return None

    def nanos6(self, t):
        rng, p = self.rng, t.proc
        top = t.stack[-1] if t.stack else None
        rb = t.running_body()
        choice = rng.random()
        if choice < 0.22:
            code, close, v = rng.choice(N6_PAIRS)
            if v != self.ss_top(t):
                t.ev(code)
                t.stack.append(("ss", close, v))
        elif choice < 0.4:
            if top and top[0] == "ss":
                t.ev(top[1])
                t.stack.pop()
            elif top and top[0] == "body" and rb is top:
                self.end_body(t, "6")
        elif choice < 0.45:
            code = rng.choice([c for c in ("6Pp", "6Pr", "6Pa")
                               if {"6Pp": 100, "6Pr": 101, "6Pa": 102}[c] != t.idle])
            t.idle = {"6Pp": 100, "6Pr": 101, "6Pa": 102}[code]
            t.ev(code)
        elif choice < 0.48:
            t.ev(rng.choice(N6_IGN))
        elif choice < 0.52:
            if t.n6th and rng.random() < 0.5:
                close, _ = t.n6th.pop()
                t.ev(close)
            else:
                cur = t.n6th[-1][1] if t.n6th else None
                code, close, v = rng.choice([x for x in N6_TH if x[2] != cur])
                t.n6th.append((close, v))
                t.ev(code)
        elif choice < 0.58 or not p.types:
            self.new_type(t, "6")
        elif choice < 0.68:
            task = Task(p.next_task, rng.choice(p.types), False)
            p.next_task += 1
            p.tasks.append(task)
            t.ev("6Tc", t.u32(task.id, task.type))
        elif choice < 0.8:
            # Nanos6 runs a task inline over a running one, or over one it paused, from a
            # subsystem (its subsystem channel refuses Task: Running body pushed twice)
            if self.ss_top(t) == 1:
                return
            cands = [task for task in p.tasks if not task.state]
            if not cands:
                return
            task = rng.choice(cands)
            task.state[1] = "running"
            t.stack.append(("body", task, 1))
            t.ev("6Tx", t.u32(task.id))
        elif choice < 0.9:
            tb = t.top_body()
            if tb and tb[1].state[1] == "paused":
                self.resume_body(t, "6")
            elif rb is not None:
                self.pause_body(t, "6")
        else:
            if rb is not None and top is rb:
                self.end_body(t, "6")

    # ------------------------------------------------------------ the end of a thread

    def finish(self, t):
        """Unwind what `t` has open (it is active) and end it: True when done."""
        m = {"nosv": "V", "nanos6": "6"}.get(t.proc.model)
        while t.stack:
            top = t.stack[-1]
            if top[0] == "ss":
                t.ev(top[1])
                t.stack.pop()
            else:
                if top[1].state[top[2]] == "paused":
                    self.resume_body(t, m)
                self.end_body(t, m)
        while t.n6th:
            t.ev(t.n6th.pop()[0])
        if t.flush:
            self.flush(t)
        for ty, st in t.marks.items():
            while st:
                t.ev("OM]", struct.pack(t.bo() + "qi", st.pop(), ty))
        t.ev("OHe")
        t.state, t.cpu = DEAD, None

    def run(self):
        rng = self.rng
        while True:
            live = [t for t in self.threads() if t.state != DEAD]
            if not live:
                break
            t = rng.choice(live)
            if t.budget <= 0:
                if t.state in (RUNNING, COOLING) or (t.state == UNSTARTED):
                    if t.state == UNSTARTED:
                        self.start(t)
                    self.finish(t)
                    continue
            t.budget -= 1
            acts = self.actions(t)
            if not acts:
                continue
            w = sum(a for a, _ in acts)
            x = rng.uniform(0, w)
            for a, f in acts:
                x -= a
                if x <= 0:
                    f()
                    break
            else:
                acts[-1][1]()

    def write(self, out):
        root = os.path.join(out, "ovni")
        for lo in self.looms:
            for p in lo.procs:
                require = {"ovni": "1.1.0"}
                if p.model == "nosv":
                    require["nosv"] = "2.3.0"
                elif p.model == "nanos6":
                    require["nanos6"] = "1.1.0"
                for t in p.threads:
                    d = os.path.join(root, "loom." + lo.name, "proc.%d" % p.pid,
                                     "thread.%d" % t.tid)
                    os.makedirs(d, exist_ok=True)
                    meta = {"lib": {"version": "1.14.0", "commit": "gen"}, "part": "thread",
                            "tid": t.tid, "pid": p.pid, "loom": lo.name, "app_id": p.appid,
                            "require": require,
                            "loom_cpus": [{"index": i, "phyid": ph}
                                          for i, ph in enumerate(lo.phyids)],
                            "finished": 1}
                    if p.rank is not None:
                        meta["rank"], meta["nranks"] = p.rank, self.nranks
                    marks = {}
                    for ty in t.marks_used:
                        # one thread's declaration defines a type for all (libovni's
                        # ovni_mark_type): the first thread using it always declares it
                        if self.rng.random() < 0.3 and self.declarer[ty] is not t:
                            continue
                        mk = dict(self.marks[ty])
                        labels = mk["labels"]
                        if labels and self.rng.random() < 0.5:
                            keep = self.rng.sample(sorted(labels), self.rng.randint(0, len(labels)))
                            mk["labels"] = {k: labels[k] for k in keep}
                        marks[str(ty)] = mk
                    if marks:
                        meta["mark"] = marks
                    if self.v2:
                        # libovni's v2 layout: thread.<tid>.obs beside the process metadata
                        pdir = os.path.dirname(d)
                        os.rmdir(d)
                        with open(os.path.join(pdir, "metadata.json"), "w") as f:
                            json.dump({"version": 2, "app_id": p.appid, "rank": p.rank or 0,
                                       "cpus": meta["loom_cpus"]}, f)
                        with open(os.path.join(pdir, "thread.%d.obs" % t.tid), "wb") as f:
                            f.write(bytes(t.bytes))
                        continue
                    with open(os.path.join(d, "stream.json"), "w") as f:
                        json.dump({"version": 3, "ovni": meta}, f, indent=1, ensure_ascii=False)
                    if self.rng.random() < 0.2:
                        with open(os.path.join(d, "stream.obs.gz"), "wb") as f:
                            f.write(gzip.compress(bytes(t.bytes)))
                    else:
                        with open(os.path.join(d, "stream.obs"), "wb") as f:
                            f.write(bytes(t.bytes))
        if self.offsets:
            with open(os.path.join(root, "clock-offsets.txt"), "w") as f:
                f.write("rank       hostname                     median                       mean                      stdev\n")
                for i, lo in enumerate(self.looms):
                    f.write("%d %s %d %d 0\n" % (i, lo.name.split(".")[0], lo.offset, lo.offset))


def generate(out, seed, looms=None, model="mixed", steps=60, ties=False, v2=False):
    g = Gen(seed, looms, model, steps, ties, v2)
    g.run()
    g.write(out)
    return g


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out, seed, looms, model, steps, ties, v2 = argv[0], 1, None, "mixed", 60, False, False
    i = 1
    while i < len(argv):
        if argv[i] in ("--ties", "--v2"):
            ties, v2 = ties or argv[i] == "--ties", v2 or argv[i] == "--v2"
            i += 1
            continue
        if argv[i] == "--seed":
            seed = int(argv[i + 1])
        elif argv[i] == "--looms":
            looms = int(argv[i + 1])
        elif argv[i] == "--model":
            model = argv[i + 1]
        elif argv[i] == "--steps":
            steps = int(argv[i + 1])
        else:
            print(__doc__, file=sys.stderr)
            return 2
        i += 2
    g = generate(out, seed, looms, model, steps, ties, v2)
    print("%s: %d looms, %d threads, %d events" % (out, len(g.looms), len(g.threads()),
                                                   g.nevents))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
