#!/usr/bin/env python3
"""An independent reading of hardware-trace exports (S32DS / TRACE32 style CSV).

Written from /work/shared FORMATS.md section 5, SEMANTICS.md ("Hardware traces: from
hardware events to system events") and the README's "Hardware-trace exports", "The mapping
file" and "From rows to tables", before tracedb's hw importer (src/ingest/hw*) was read, so
that the two can be compared row by row (differential testing). It reads the export, the
mapping file and the ELF's .symtab (its own ELF reader) and gives:

* the system events tracedb should store (the `events` rows with a target): task
  activate/start/preempt/resume/terminate per core, ISR activate/start/terminate,
  runnable start/terminate, signal writes, with their sources and instances;
* the `running` intervals of every core (the innermost ISR, else the current task).

    hw_oracle.py EXPORT --mapping M --elf E       print the oracle's rows as CSV
    hw_oracle.py --tracedb BIN EXPORT --mapping M --elf E
                                                   ingest with BIN, compare, print every
                                                   difference (the first 20; ORACLE_SHOW=N
                                                   for more); exit 1 when there is one
    hw_oracle.py --generate DIR --seeds A-B [--tracedb BIN]
                                                   write random exports DIR/gen-<seed>.csv
                                                   (with .elf and .json), and with --tracedb
                                                   compare each

Only what the generator writes is read: headers by the README's names, `,` `;` or tab,
absolute times (ns, us decimals, cycles with a frequency) and `ti.back` deltas in seconds,
marker times; layouts in time order or core by core.

Readings where the contract is silent (this oracle's choices; "open readings" where they
are tracedb's, found by comparing):
* a task's call stack belongs to its instance: a terminated task's open calls are dropped
  (its next instance starts with none);
* an ISR starts with `activate` and `start` caused by its core and ends with `terminate`
  caused by its core; the task it interrupts gets no preempt/resume event (the derive
  stage's implicit_preemption);
* a runnable's start/terminate are caused by the task or ISR that runs it (with its
  instance) and carry the row's core;
* a signal write's source is the innermost ISR on the row's core, else its task;
* a terminated task's open runnables get no terminate event (the derive stage ends them
  with the task, `ended_with_task`), and its open calls are dropped.
Open readings (tracedb's, found by comparing; the README now says them):
* a write of the value already in force (the running task, idle on an idle core, a held
  switch's last value) changes nothing, unless the task entered a terminate function
  (then it terminates and starts again as a new instance);
* an idle core's signal write has the core as its source (instance -1);
* a return whose destination is a function deeper in the stack of its context returns to
  the nearest such frame even when the innermost call is that function too (a recursion's
  caller), before "inside the innermost open call, ends nothing".
Not compared: the record rows (target NULL), `instances`, diagnostics.
"""
import csv
import fnmatch
import json
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)
from fractions import Fraction

# ------------------------------------------------------------------------------------
# ELF .symtab


def read_elf(path):
    """[(name, start, size, is_func)] of the .symtab's STT_FUNC/STT_OBJECT/STT_COMMON."""
    with open(path, "rb") as f:
        b = f.read()
    assert b[:4] == b"\x7fELF", path
    is64 = b[4] == 2
    e = "<" if b[5] == 1 else ">"
    machine = struct.unpack_from(e + "H", b, 18)[0]
    if is64:
        shoff = struct.unpack_from(e + "Q", b, 40)[0]
        shentsize, shnum = struct.unpack_from(e + "HH", b, 58)
    else:
        shoff = struct.unpack_from(e + "I", b, 32)[0]
        shentsize, shnum = struct.unpack_from(e + "HH", b, 46)
    secs = []
    for i in range(shnum):
        o = shoff + i * shentsize
        if is64:
            _n, typ, _fl, _a, off, size, link, _i, _al, ent = struct.unpack_from(
                e + "IIQQQQIIQQ", b, o)
        else:
            _n, typ, _fl, _a, off, size, link, _i, _al, ent = struct.unpack_from(
                e + "IIIIIIIIII", b, o)
        secs.append((typ, off, size, link, ent))
    out = []
    for typ, off, size, link, ent in secs:
        if typ != 2:  # SHT_SYMTAB
            continue
        stroff = secs[link][1]
        for k in range(size // ent):
            o = off + k * ent
            if is64:
                name, info, _other, _shn, value, sz = struct.unpack_from(e + "IBBHQQ", b, o)
            else:
                name, value, sz, info, _other, _shn = struct.unpack_from(e + "IIIBBH", b, o)
            kind = info & 0xF
            if kind not in (1, 2, 5):
                continue
            end = b.index(b"\0", stroff + name)
            nm = b[stroff + name:end].decode()
            if kind == 2 and machine == 40:
                value &= ~1
            out.append((nm, value, sz, kind == 2))
    return out


class Symbols:
    def __init__(self, syms):
        self.syms = syms
        self.by_name = {s[0]: s for s in syms}

    def lookup(self, addr):
        """The innermost symbol holding addr: (name, start, is_func) or None."""
        best = None
        for name, start, size, func in self.syms:
            inside = start <= addr < start + size if size else addr == start
            if inside and (best is None or size < best[3]):
                best = (name, start, func, size)
        return best and best[:3]


# ------------------------------------------------------------------------------------
# The export

ROLES = {
    "time": ["timestamp", "globaltimestamp", "time", "ti.back", "ti.zero", "ti.abs", "ti"],
    "core": ["source", "core", "cpu", "coreid", "master"],
    "type": ["type", "cycle", "kind", "eventtype", "event"],
    "access": ["access", "dir", "direction", "rw"],
    "address": ["address", "addr", "pc"],
    "destination": ["destination", "dest", "target", "branchtarget"],
    "data": ["data", "value"],
    "symbol": ["symbol", "sym", "function", "variable", "label"],
    "index": ["index", "record", "rec", "no", "#"],
}
UNITS = {"ps": Fraction(1, 1000), "ns": Fraction(1), "us": Fraction(1000),
         "µs": Fraction(1000), "ms": Fraction(10**6), "s": Fraction(10**9)}


def canon(h):
    return "".join(c for c in h.lower() if c not in " _-")


def parse_int(text, radix):
    t = text.strip()
    if ":" in t:
        t = t.split(":", 1)[1]
    t = t.replace("_", "")
    if t.lower().startswith("0x"):
        return int(t[2:], 16)
    if t.lower().endswith("h") and radix == 16:
        return int(t[:-1], 16)
    return int(t, radix)


def read_export(path, mapping):
    """[(line, core, type, address, dest, data, time_ns)] in the order tracedb reads them,
    and the header's roles."""
    with open(path, newline="") as f:
        lines = f.read().split("\n")
    body = [(i + 1, l.rstrip("\r")) for i, l in enumerate(lines)]
    body = [(n, l) for n, l in body if l.strip() and not l.startswith("#")]
    (_, header), rows = body[0], body[1:]
    delim = mapping.get("delimiter") or max([",", ";", "\t"], key=header.count)
    head = next(csv.reader([header], delimiter=delim))
    roles, unit = {}, None
    for i, h in enumerate(head):
        name = h
        if "[" in h or "(" in h:
            cut = h.index("[") if "[" in h else h.index("(")
            name, u = h[:cut], h[cut + 1:].strip("[]() ")
            unit = UNITS.get(u, unit)
        for role, names in ROLES.items():
            if canon(name) in names and role not in roles:
                roles[role] = i
    time_head = canon(head[roles["time"]].split("[")[0].split("(")[0])
    tmap = mapping.get("time", {})
    enc = tmap.get("encoding") or ("delta" if time_head == "ti.back" else "absolute")
    if tmap.get("unit") == "cycles":
        scale = Fraction(10**9, tmap["frequency_hz"])
    elif tmap.get("unit"):
        scale = UNITS[tmap["unit"]]
    elif unit is not None:
        scale = unit
    elif time_head in ("ti.back", "ti.zero", "ti.abs", "ti"):
        scale = UNITS["s"]
    else:
        scale = Fraction(1)
    cores = mapping.get("cores", {})
    out = []
    for n, l in rows:
        f = next(csv.reader([l], delimiter=delim))
        get = lambda r: f[roles[r]].strip() if r in roles and roles[r] < len(f) else ""
        core = get("core")
        core = cores.get(core, core) if core else "Core_0"
        t = get("time")
        tv = None
        if t:
            num = t
            u = scale
            for suf in sorted(UNITS, key=len, reverse=True):
                if num.endswith(suf) and num[:-len(suf)].strip():
                    num, u = num[:-len(suf)], UNITS[suf]
                    break
            tv = Fraction(num.strip()) * u
        a, d, v = get("address"), get("destination"), get("data")
        out.append({
            "line": n, "core": core, "type": get("type").lower(), "raw_time": tv,
            "addr": parse_int(a, mapping.get("address_radix", 16)) if a else None,
            "dest": parse_int(d, mapping.get("address_radix", 16)) if d else None,
            "data": parse_int(v, mapping.get("data_radix", 10)) if v else None,
            "access": get("access").lower(),
        })
    # Streams: per core when the file lists its cores one after another, else the file.
    first, last = {}, {}
    for i, r in enumerate(out):
        first.setdefault(r["core"], i)
        last[r["core"]] = i
    blocks = len(first) > 1 and all(
        out[j]["core"] == c for c in first for j in range(first[c], last[c] + 1))
    by_time_order = all(
        out[i]["raw_time"] is None or out[i - 1]["raw_time"] is None
        or out[i]["raw_time"] >= out[i - 1]["raw_time"] for i in range(1, len(out)))
    if enc == "absolute":
        per_core = len(first) > 1 and not by_time_order
    else:
        per_core = blocks
    streams = {}
    for r in out:
        streams.setdefault(r["core"] if per_core else "", []).append(r)
    for rs in streams.values():
        if enc == "delta":
            acc = Fraction(0)
            for r in rs:
                acc += r["raw_time"] or 0
                r["t"] = acc
        elif enc == "absolute":
            for r in rs:
                r["t"] = r["raw_time"]
        else:  # marker
            msgs = [i for i, r in enumerate(rs) if r["raw_time"] is not None]
            for i, r in enumerate(rs):
                if r["raw_time"] is not None:
                    r["t"] = r["raw_time"]
                    continue
                before = [m for m in msgs if m < i]
                after = [m for m in msgs if m > i]
                if not before:
                    r["t"] = rs[after[0]]["raw_time"]
                elif not after:
                    r["t"] = rs[before[-1]]["raw_time"]
                else:
                    tp, tn = rs[before[-1]]["raw_time"], rs[after[0]]["raw_time"]
                    r["t"] = (tp + tn) // 2 if (tp.denominator == 1 == tn.denominator) \
                        else Fraction(int((tp + tn) / 2))
    for r in out:
        r["t"] = int(r["t"] // 1)
    out.sort(key=lambda r: (r["t"], r["line"]))
    return out


# ------------------------------------------------------------------------------------
# Rows to system events


class System:
    def __init__(self, mapping, syms):
        self.m = mapping
        self.syms = syms
        self.events = []  # (ts, source, source_instance, target, target_type, inst, action, core, note)
        self.instances = {}  # entity -> next instance number
        self.live = {}  # task -> live instance
        self.cur = {}  # core -> (task, inst) or None
        self.isrs = {}  # core -> [(isr, inst, [calls])]
        self.held = {}  # core -> value
        self.stacks = {}  # (task, inst) -> [calls]; a call: (func, start, runnable-inst)
        self.entered_term = {}  # core -> bool
        self.occupant = {}  # core -> (entity, inst, since)
        self.running = []  # (core, entity, inst, ts, dur, open)
        self.cur_vars = {}
        for key, core in mapping.get("current_task", {}).items():
            if key[0].isdigit():
                self.cur_vars[("addr", parse_int(key, mapping.get("address_radix", 16)))] = core
            else:
                self.cur_vars[("name", key)] = core

    def match(self, key, name):
        return name is not None and any(fnmatch.fnmatchcase(name, g)
                                        for g in self.m.get(key, []))

    def emit(self, ts, src, si, tgt, tt, ti, action, core, note=None):
        self.events.append((ts, src, si, tgt, tt, ti, action, core, note))

    def new_instance(self, name):
        n = self.instances.get(name, 0)
        self.instances[name] = n + 1
        return n

    def occupy(self, core, ts):
        """Update the core's running interval to its innermost ISR, else its task."""
        isr = self.isrs.get(core)
        who = (isr[-1][0], isr[-1][1]) if isr else self.cur.get(core)
        old = self.occupant.get(core)
        if old and who and old[:2] == who:
            return
        if old:
            self.running.append((core, old[0], old[1], old[2], ts - old[2], False))
        self.occupant[core] = (who[0], who[1], ts) if who else None

    def context(self, core):
        """(name, inst, calls) of what runs on core: innermost ISR, else its task."""
        isr = self.isrs.get(core)
        if isr:
            return isr[-1][0], isr[-1][1], isr[-1][2]
        c = self.cur.get(core)
        if c:
            return c[0], c[1], self.stacks.setdefault(c, [])
        return None, None, None

    def task_value(self, v):
        if str(v) in [str(x) for x in self.m.get("idle", [])]:
            return None
        tasks = self.m.get("tasks", {})
        for k, name in tasks.items():
            if parse_int(k, 10) == v:
                return name
        return "TASK_%d" % v

    def switch(self, ts, core, v):
        task = self.task_value(v)
        c = self.cur.get(core)
        if c and c[0] == task and not self.entered_term.get(core):
            self.occupy(core, ts)  # the task already running: no switch
            return
        if c:
            if self.entered_term.get(core):
                self.emit(ts, core, -1, c[0], "T", c[1], "terminate", core)
                self.live.pop(c[0], None)
                self.stacks.pop(c, None)
            else:
                self.emit(ts, core, -1, c[0], "T", c[1], "preempt", core)
        self.entered_term[core] = False
        if task is None:
            self.cur[core] = None
        elif task in self.live:
            inst = self.live[task]
            self.emit(ts, core, -1, task, "T", inst, "resume", core)
            self.cur[core] = (task, inst)
        else:
            inst = self.new_instance(task)
            self.live[task] = inst
            self.emit(ts, core, -1, task, "T", inst, "activate", core)
            self.emit(ts, core, -1, task, "T", inst, "start", core)
            self.cur[core] = (task, inst)
        self.occupy(core, ts)

    def write_current(self, ts, core, v):
        if self.isrs.get(core):
            self.held[core] = v
        else:
            self.switch(ts, core, v)

    def call(self, ts, core, func, start):
        name, inst, calls = self.context(core)
        if calls is None:
            return  # nothing runs: a call of no one (not generated)
        if calls and calls[-1][0] == func:
            return
        if self.match("terminate_functions", func) and self.isrs.get(core) in (None, []):
            self.entered_term[core] = True
        rinst = None
        if self.match("runnables", func):
            rinst = self.new_instance(func)
            self.emit(ts, name, inst, func, "R", rinst, "start", core)
        calls.append((func, start, rinst, name, inst))

    def end_call(self, ts, core, c):
        func, _s, rinst, owner, oinst = c
        if rinst is not None:
            self.emit(ts, owner, oinst, func, "R", rinst, "terminate", core)

    def interrupt(self, ts, core, func, frm):
        isr = func if func else "ISR"
        inst = self.new_instance(isr)
        self.emit(ts, core, -1, isr, "I", inst, "activate", core)
        self.emit(ts, core, -1, isr, "I", inst, "start", core)
        f = self.syms.lookup(frm) if frm is not None else None
        self.isrs.setdefault(core, []).append((isr, inst, [], f[0] if f else None))
        self.occupy(core, ts)

    def end_isr(self, ts, core):
        isr = self.isrs[core]
        name, inst = isr[-1][0], isr[-1][1]
        self.emit(ts, core, -1, name, "I", inst, "terminate", core)
        isr.pop()
        if not isr and core in self.held:
            self.switch(ts, core, self.held.pop(core))
        else:
            self.occupy(core, ts)

    def ret(self, ts, core, dest):
        """A return pops the innermost call (an ISR is the bottom call of its context), or
        every call above the deeper one its destination is in (or, in an ISR, the whole
        ISR when it goes to the code the interrupt interrupted); inside the innermost
        call it ends nothing; with no call open it ends nothing."""
        isr = self.isrs.get(core)
        _name, _inst, calls = self.context(core)
        if calls is None:
            return
        d = self.syms.lookup(dest) if dest is not None else None
        dfunc = d[0] if d else None
        frames = [c[0] for c in calls]
        if isr:
            frames = [isr[-1][0]] + frames
        if not frames:
            return  # unmatched_return
        if dfunc is not None and dfunc in frames[:-1]:
            # the nearest deeper frame of that function (a recursion's caller)
            pops = frames[-2::-1].index(dfunc) + 1
        elif dfunc is not None and dfunc == frames[-1]:
            return  # inside the innermost open call
        elif isr and dfunc is not None and dfunc == isr[-1][3]:
            pops = len(frames)
        else:
            pops = 1
        for _ in range(pops):
            if calls:
                self.end_call(ts, core, calls.pop())
            else:
                self.end_isr(ts, core)

    def row(self, r):
        ts, core, typ = r["t"], r["core"], r["type"]
        sym = lambda a: self.syms.lookup(a) if a is not None else None
        if typ == "data" or typ.startswith("wr-"):
            if r["access"] in ("r", "rd", "read"):
                return
            s = sym(r["addr"])
            var = s[0] if s else None
            core_of = self.cur_vars.get(("addr", r["addr"])) or (
                self.cur_vars.get(("name", var)) if s and s[1] == r["addr"] else None)
            if core_of is not None and r["data"] is not None:
                self.write_current(ts, core_of, r["data"])
            elif r["data"] is not None and (self.match("signals", var) or any(
                    g.lower().startswith("0x") and parse_int(g, 16) == r["addr"]
                    for g in self.m.get("signals", []))):
                name, inst, _c = self.context(core)
                if name is None:
                    name, inst = core, -1  # an idle core's write: the core's
                self.emit(ts, name, inst, var, "SIG", -1, "write", core, str(r["data"]))
        elif "branch" in typ or "call" in typ or "jump" in typ or typ == "linear":
            target = r["dest"] if typ != "linear" else r["addr"]
            s = sym(target)
            if s and s[2] and s[1] == target:
                if self.match("isrs", s[0]):
                    self.interrupt(ts, core, s[0], r["addr"])
                else:
                    self.call(ts, core, s[0], s[1])
        elif "context" in typ or "ownership" in typ:
            if r["data"] is not None:
                self.write_current(ts, core, r["data"])
        elif typ in ("interrupt", "exception", "irq", "trap"):
            s = sym(r["dest"])
            self.interrupt(ts, core, s[0] if s else None, r["addr"])
        elif typ in ("return", "ret", "rfi"):
            self.ret(ts, core, r["dest"])

    def finish(self, end):
        for core, occ in self.occupant.items():
            if occ:
                self.running.append((core, occ[0], occ[1], occ[2], end - occ[2], True))


def oracle_rows(export, mapping_path, elf):
    with open(mapping_path) as f:
        mapping = json.load(f)
    rows = read_export(export, mapping)
    s = System(mapping, Symbols(read_elf(elf)))
    for r in rows:
        s.row(r)
    s.finish(max(r["t"] for r in rows))
    events = [dict(zip(EV_COLS, [str(x) if x is not None else "" for x in e]))
              for e in s.events]
    running = [dict(zip(RUN_COLS, [str(x) for x in r])) for r in s.running]
    return {"events": events, "running": running}


EV_COLS = ["ts", "source", "source_instance", "target", "target_type", "target_instance",
           "action", "core", "note"]
RUN_COLS = ["entity", "state", "value", "ts", "dur", "open"]
TABLES = {
    "events": (["ts", "target", "action"], EV_COLS,
               "SELECT capture_id, " + ", ".join(EV_COLS) + " FROM events "
               "WHERE target IS NOT NULL"),
    "running": (["entity", "ts"], RUN_COLS,
                "SELECT capture_id, entity, state, value, ts, dur, open FROM intervals "
                "WHERE channel = 'running'"),
}


# ------------------------------------------------------------------------------------
# Comparing


def check(tracedb, items):
    theirs_all = common.ingest_each(
        tracedb, [(export, ["--hw-map", mapping, "--hw-elf", elf, export])
                  for export, mapping, elf in items],
        {n: sql for n, (_k, _c, sql) in TABLES.items()})
    total = 0
    for export, mapping, elf in items:
        ours = oracle_rows(export, mapping, elf)
        theirs, err = theirs_all[export]
        if theirs is None:
            total += common.refused(export, err)
            continue
        report = []
        found, counts = common.compare_tables(
            ours, theirs, [(n, k, c) for n, (k, c, _s) in TABLES.items()], report)
        total += common.summary(export, counts, found, report)
    return total


# ------------------------------------------------------------------------------------
# Random exports


def elf32(machine, syms):
    """A little-endian ELF32 with .symtab, .strtab, .shstrtab (no code)."""
    strtab = b"\0"
    symtab = b"\0" * 16
    for name, value, size, func in syms:
        off = len(strtab)
        strtab += name.encode() + b"\0"
        info = (1 << 4) | (2 if func else 1)
        symtab += struct.pack("<IIIBBH", off, value, size, info, 0, 0xFFF1)
    shstr = b"\0.symtab\0.strtab\0.shstrtab\0"
    data = symtab + strtab + shstr
    base = 52
    shoff = base + len(data)
    head = b"\x7fELF" + bytes([1, 1, 1]) + b"\0" * 9
    head += struct.pack("<HHIIIIIHHHHHH", 2, machine, 1, 0, 0, shoff, 0, 52, 0, 0, 40, 4, 3)
    sh = b"\0" * 40
    sh += struct.pack("<IIIIIIIIII", 1, 2, 0, 0, base, len(symtab), 2, 1, 4, 16)
    sh += struct.pack("<IIIIIIIIII", 9, 3, 0, 0, base + len(symtab), len(strtab), 0, 0, 1, 0)
    sh += struct.pack("<IIIIIIIIII", 17, 3, 0, 0, base + len(symtab) + len(strtab),
                      len(shstr), 0, 0, 1, 0)
    return head + data + sh


def generate(seed):
    """(export text, mapping dict, ELF bytes) of a random valid system."""
    rng = random.Random(seed)
    ncores = rng.randint(2, 4)
    cores = ["Core%d" % i for i in range(ncores)]
    funcs = [("os_dispatch", 0x1000, 0x100), ("OS_TerminateTask", 0x4000, 0x40)]
    runnables = ["Run_%d" % i for i in range(4)]
    funcs += [(r, 0x2000 + 0x100 * i, 0x80) for i, r in enumerate(runnables)]
    helpers = ["helper_%d" % i for i in range(3)]
    funcs += [(h, 0x5000 + 0x100 * i, 0x80) for i, h in enumerate(helpers)]
    isrs = ["ISR_%d" % i for i in range(3)]
    funcs += [(h, 0x3000 + 0x100 * i, 0x80) for i, h in enumerate(isrs)]
    fstart = {f: s for f, s, _ in funcs}
    fsize = {f: z for f, _, z in funcs}
    sigs = ["sig_%d" % i for i in range(3)]
    objs = [("cur_task_c%d" % i, 0x20000000 + 4 * i, 4) for i in range(ncores)]
    objs += [(s, 0x20000100 + 4 * i, 4) for i, s in enumerate(sigs)]
    syms = [(f, s | 1, z, True) for f, s, z in funcs] + [(o, a, z, False) for o, a, z in objs]
    ntask = 3
    tasks = {}
    for c in range(ncores):
        for k in range(ntask):
            tasks[str(1 + c * ntask + k)] = "T_%d_%d" % (c, k)
    mapping = {
        "cores": {c: "Core_%d" % i for i, c in enumerate(cores)},
        "current_task": {("cur_task_c%d" % i) if i % 2 == 0 else "0x%08X" % (0x20000000 + 4 * i):
                         "Core_%d" % i for i in range(ncores)},
        "tasks": tasks, "idle": ["0"], "terminate_functions": ["OS_TerminateTask"],
        "runnables": ["Run_*"], "isrs": ["ISR_*"], "signals": ["sig_*"],
    }
    enc = rng.choice(["ns", "cycles", "us", "delta", "marker"])
    if enc == "cycles":
        mapping["time"] = {"unit": "cycles", "frequency_hz": rng.choice([100_000_000, 3_000_000])}
    if enc == "marker":
        mapping["time"] = {"encoding": "marker", "unit": "ns"}

    def pc(f):
        return fstart[f] + rng.randrange(4, fsize[f], 2)

    def fn_of(a):
        return next(f for f, st, z in funcs if st <= a < st + z)

    rows = []  # (tick, core index, type, addr, dest, data)
    for c in range(ncores):
        tick = rng.randint(0, 20)
        cur = None  # effective current task value (held included)
        applied = None
        live = set()
        stacks = {}  # task value -> [funcs]
        isr = []  # [(isr, [funcs])]
        held = False
        mine = [1 + c * ntask + k for k in range(ntask)]
        if rng.random() < 0.3:
            mine.append(90 + c)  # an unmapped value: TASK_<v>
        for _ in range(rng.randint(30, 150)):
            tick += rng.randint(1, 40)

            def code():
                frames = isr[-1][1] if isr else stacks.get(applied, [])
                if frames:
                    return pc(frames[-1])
                return pc(isr[-1][0]) if isr else pc("os_dispatch")

            frames = isr[-1][1] if isr else (stacks.setdefault(applied, [])
                                              if applied else None)
            p = rng.random()
            if p < 0.2:
                choices = [v for v in mine + [0] if v != cur]
                if rng.random() < 0.1:
                    choices = [cur or 0]  # the value already there: no switch
                v = rng.choice(choices)
                if not isr and applied and v != applied and rng.random() < 0.4 and (
                        not stacks[applied] or rng.random() < 0.3):
                    # the task ends (from inside a runnable, sometimes)
                    rows.append((tick, c, "Branch", code(), fstart["OS_TerminateTask"], None))
                    tick += rng.randint(1, 5)
                    stacks.pop(applied)
                var = 0x20000000 + 4 * c
                if rng.random() < 0.15:  # a Nexus ownership record instead of the write
                    rows.append((tick, c, "Software Context", None, None, v))
                else:
                    rows.append((tick, c, rng.choice(["Data", "wr-long"]), var, None, v))
                cur = v
                if isr:
                    held = True
                else:
                    applied = v if v else None
            elif p < 0.4 and frames is not None and len(frames) < 4:
                f = rng.choice(runnables + helpers)
                if f in frames:
                    continue
                rows.append((tick, c, rng.choice(["Branch", "Call"]), code(), fstart[f], None))
                frames.append(f)
                if rng.random() < 0.3:
                    tick += rng.randint(1, 5)
                    rows.append((tick, c, "Linear", fstart[f], None, None))
            elif p < 0.55 and frames:
                q = rng.random()
                if q < 0.15 and (len(frames) >= 3 or (isr and len(frames) >= 2)):
                    f = frames.pop()  # and the one below it: its return is not traced
                    frames.pop()
                    rows.append((tick, c, "Return", pc(f), code(), None))
                elif q < 0.22:
                    # a stub's return inside the innermost open call: ends nothing
                    rows.append((tick, c, "Return", pc("OS_TerminateTask"), pc(frames[-1]),
                                 None))
                else:
                    f = frames.pop()
                    back = code()
                    rows.append((tick, c, "Return", pc(f),
                                 back if rng.random() < 0.7 else None, None))
            elif p < 0.58 and frames == [] and not isr:
                # a return with no call open (the trace began inside): ends nothing
                rows.append((tick, c, "Return", pc(rng.choice(helpers)), code(), None))
            elif p < 0.67 and len(isr) < 3 and (applied or isr or rng.random() < 0.3):
                f = rng.choice(isrs)
                if any(f == i for i, _, _ in isr):
                    continue
                frm = code()
                typ = "Interrupt" if rng.random() < 0.8 else "Branch"
                rows.append((tick, c, typ, frm, fstart[f], None))
                isr.append((f, [], frm))
            elif p < 0.77 and isr and (not isr[-1][1] or rng.random() < 0.2):
                f, fr, frm = isr[-1]
                if fr and fn_of(frm) in fr:
                    continue  # the interrupted function is open in the ISR too: ambiguous
                isr.pop()
                # to the code it interrupted (its open calls' returns not traced), or nowhere
                back = frm if fr or rng.random() < 0.7 else None
                rows.append((tick, c, "Return", pc(fr[-1] if fr else f), back, None))
                if not isr and held:
                    held = False
                    applied = cur if cur else None
            elif p < 0.9 and (applied or isr or rng.random() < 0.2):
                s = rng.choice(sigs)
                rows.append((tick, c, "Data", 0x20000100 + 4 * sigs.index(s), None,
                             rng.randint(-5, 1000)))
            else:
                rows.append((tick, c, rng.choice(["Linear", "Info"]), code(), None, None))
    # Layout: by time (ties: core order) or core by core.
    blocks = rng.random() < 0.4
    order = sorted(range(len(rows)), key=lambda i: (rows[i][1], rows[i][0]) if blocks
                   else (rows[i][0], i))
    delim = rng.choice([",", ";", "\t"])
    if enc == "delta":
        head = ["Record", "Core", "Cycle", "Address", "Destination", "Data", "ti.back"]
    else:
        head = ["Index", "Source", "Type", "Address", "Destination", "Timestamp", "Data"]
    if enc == "us":
        head[5] = "Time [us]"
    out = [delim.join(head)]
    prev = {}
    last_msg = None
    for n, i in enumerate(order):
        tick, c, typ, a, d, v = rows[i]
        ns = tick * 10
        if enc == "delta":
            key = c if blocks else None
            delta = ns - prev.get(key, 0)
            prev[key] = ns
            t = "" if delta == 0 else "%.9f" % (delta / 1e9)
        elif enc == "cycles":
            t = str(tick)
        elif enc == "us":
            t = "%.3f" % (ns / 1000)
        elif enc == "marker":
            # a timestamp message per new time, then the row without time
            if last_msg != (c if blocks else None, tick):
                last_msg = (c if blocks else None, tick)
                msg = [str(n), cores[c], "Info", "", "", str(ns), ""]
                out.append(delim.join(msg))
            t = ""
        else:
            t = str(ns)
        fields = {"Index": str(n), "Record": str(n), "Source": cores[c], "Core": cores[c],
                  "Type": typ, "Cycle": typ, "Address": "0x%08X" % a if a is not None else "",
                  "Destination": "0x%08X" % d if d is not None else "",
                  "Data": str(v) if v is not None else "", "Timestamp": t, "ti.back": t, "Time [us]": t}
        out.append(delim.join(fields[h] for h in head))
    return "\n".join(out) + "\n", mapping, elf32(40, syms)


def write_generated(directory, seed):
    os.makedirs(directory, exist_ok=True)
    text, mapping, elf = generate(seed)
    base = os.path.join(directory, "gen-%d" % seed)
    with open(base + ".csv", "w") as f:
        f.write(text)
    with open(base + ".json", "w") as f:
        json.dump(mapping, f, indent=1)
    with open(base + ".elf", "wb") as f:
        f.write(elf)
    return base + ".csv", base + ".json", base + ".elf"


def main(argv):
    args, files = common.options(argv, ["--tracedb", "--mapping", "--elf", "--generate",
                                        "--seeds"])
    items = []
    if args["--generate"]:
        for seed in common.seeds(args["--seeds"]):
            items.append(write_generated(args["--generate"], seed))
    else:
        items = [(f, args["--mapping"], args["--elf"]) for f in files]
    if args["--tracedb"]:
        return 1 if check(args["--tracedb"], items) else 0
    if not args["--generate"]:
        for export, mapping, elf in items:
            rows = oracle_rows(export, mapping, elf)
            common.write_tables((n, c, rows[n]) for n, (_k, c, _s) in TABLES.items())
    return 0


if __name__ == "__main__":
    common.run(main)
