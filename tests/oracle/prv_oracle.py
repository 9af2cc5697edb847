#!/usr/bin/env python3
"""An independent reading of Paraver traces (.prv with its .pcf and .row).

Written from /work/shared FORMATS.md section 2, the README's "Paraver and ovni" section and
table reference, and paraver-kernel's readers (bsc-performance-tools/paraver-kernel:
utils/traceparser/traceheader, resourcemodel, processmodel, tracebodyio_v1, pcffileparser,
rowfileparser), before tracedb's Paraver importer (src/ingest/paraver*) was read, so that
the two can be compared row by row (differential testing). Rows: `entities` (name, type),
`events` (seq, ts, source, target, action, note, value, core), `intervals` (entity,
channel, ts: state, value, dur, open) and `messages` (sender, receiver, the four times,
size, tag), and the count of each warning or error `diagnostics` kind (a valid trace has
none).

    prv_oracle.py TRACE                 print the oracle's rows as CSV
    prv_oracle.py --tracedb BIN TRACE...
                                        ingest each trace (a .prv, or an ovni output
                                        directory) with BIN (one archive), compare, print
                                        every difference (the first 20 per trace;
                                        ORACLE_SHOW=N for more); exit 1 when there is one
    prv_oracle.py --generate DIR --seeds A-B [--tracedb BIN]
                                        write random valid traces DIR/gen-<seed>.{prv,pcf,row},
                                        and with --tracedb compare

The generator: 1 to 4 nodes of 1 to 4 CPUs (or no resource model: `0`, `0()`; or `n`),
1 to 3 applications of 1 to 4 tasks of 1 to 3 threads on any node, separated by `:` or
`,`; time units ns, us, ms, none (us) or an unknown `_s`; states that overlap, leave gaps
or stay open (end -1); events of up to 12 types, several `type:value` pairs a line, values
with and without labels (up to 2^64 - 1, down to -2^63), 0 ending a channel, a value
repeated; types without a .pcf name; .pcf blocks of several types sharing their VALUES,
two types with one label, two states with one label, empty labels, a type labelled
`state` or with a type's number (its own or another's); .row labels for threads and CPUs (two threads with one label, a CPU view, a block
one label short), or no .row; communications with logical times before the physical ones;
cpus and threads outside the model; records out of time order; `#` comment lines, the
cutter's lines and communicator lines; the `new format` layout (state ends, communication
marks); ovni's date (its PRV_ZERO types); Dimemas' communicator counts, an ad-hoc
`tasks:(threads:node)`; CRLF, a BOM in the .pcf, `#PARAVER`, zero-padded end times, a
.prv.gz.

Readings where the contract is silent (tracedb's, found by comparing; "open readings" in the
report of the session that wrote this) are marked `reading:` in the code.
"""
import os
import random
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)

UNITS = {"ns": 1, "us": 1000, "ms": 1000000}
OVNI_DATE = "19/01/38 at 03:14"
OWN_CHANNELS = {"state", "running", "value"}
CPU_LABEL = re.compile(r"^(v?CPU|LT VCPU|ET VCPU)\b")


def read_text(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"\x1f\x8b"):
        import gzip
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def companion(prv, ext):
    base = prv
    for suffix in (".gz", ".xz", ".bz2", ".zst"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if base.endswith(".prv"):
        base = base[:-4]
    for suffix in ("", ".gz"):
        if os.path.exists(base + ext + suffix):
            return base + ext + suffix
    return None


# --------------------------------------------------------------------------------------
# Header


def split_top(text, sep):
    """Split at `sep` outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def lead_int(text):
    m = re.match(r"\s*(-?\d+)", text)
    return int(m.group(1))


def parse_header(line):
    """{date, end, unit_scale, cpus (per node), apps: [[(threads, node) per task]]}"""
    assert line.upper().startswith("#PARAVER"), line
    close = line.index(")")
    date = line[line.index("(") + 1: close]
    rest = line[close + 2:]  # past "):"
    end_text, rest = rest.split(":", 1)
    scale = 1000
    unknown_unit = False
    if "_" in end_text:
        end_text, unit = end_text.split("_", 1)
        scale = UNITS.get(unit, 1000)
        unknown_unit = unit not in UNITS
    parts = split_top(rest, ":")
    res = parts[0]
    if res.strip() in ("0", "0()") or res == "":
        cpus = []
    elif "(" in res:
        cpus = [int(c) for c in res[res.index("(") + 1: res.rindex(")")].split(",") if c]
    else:
        cpus = [1] * int(res)
    # the process model, read as paraver-kernel's ProcessModel reads it: per application
    # up to `(` the task count, per task up to `:` the threads and up to `,` (`)` for the
    # last) the node, then one character skipped (`:` or `,`: Extrae separates
    # applications with either)
    rest = rest[len(res) + 1:]
    napps_text, rest = rest.split(":", 1)
    apps = []
    pos = 0
    for _ in range(int(napps_text)):
        k = rest.index("(", pos)
        ntasks = lead_int(rest[pos:k])
        pos = k + 1
        tasks = []
        for n in range(ntasks):
            k = rest.index(":", pos)
            th = lead_int(rest[pos:k])
            pos = k + 1
            k = rest.index(")" if n == ntasks - 1 else ",", pos)
            tasks.append((th, lead_int(rest[pos:k])))
            pos = k + 1
        # Dimemas follows an application that has communicators with `,<count>`: a `,`
        # then a number then `:` (or the end), where Extrae's next application has a `(`
        # (an ad-hoc writer's, `:(`)
        m = re.match(r",\d+(:(?!\()|$)", rest[pos:])
        if m:
            pos += len(m.group(0)) - 1
        pos += 1
        apps.append(tasks)
    return {"date": date, "end": int(end_text) * scale, "scale": scale, "cpus": cpus,
            "unknown_unit": unknown_unit,
            "apps": apps}


# --------------------------------------------------------------------------------------
# .pcf and .row


def parse_pcf(path):
    """(states {n: label}, types {t: label}, values {t: {v: label}}, notes), notes counting
    the README's `malformed_companion` lines (in STATES, EVENT_TYPE, VALUES: not
    `<number> <label>`, `<color> <type> <label>`) and `relabelled_companion` lines (a state,
    type, or value of one block, labelled again with another label; an empty label is none)"""
    states, types, values = {}, {}, {}
    notes = {"malformed_companion": 0, "relabelled_companion": 0}
    if not path:
        return states, types, values, notes
    section, block, in_values, table = None, [], False, {}

    def label_again(old, new):
        if old and new and old != new:
            notes["relabelled_companion"] += 1

    for raw in read_text(path).splitlines():
        line = raw.replace("\t", " ").strip()
        if not line or line.startswith("#"):
            continue
        word = line.split()[0]
        if word in ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR",
                    "GRADIENT_COLOR", "GRADIENT_NAMES", "EVENT_TYPE"):
            section = word
            if word == "EVENT_TYPE":
                block, in_values, table = [], False, {}
            continue
        if section == "STATES":
            num, _, label = line.partition(" ")
            try:
                n = int(num)
            except ValueError:
                notes["malformed_companion"] += 1
                continue
            label = label.strip()
            if label:
                label_again(states.get(n), label)
                states[n] = label
        elif section == "EVENT_TYPE":
            if word == "VALUES":
                in_values = True
                continue
            if word == "PRECISION":
                continue
            fields = line.split(None, 2)
            try:
                if in_values:
                    v = int(fields[0])
                    label = line.split(None, 1)[1].strip() if len(fields) > 1 else ""
                    if label:
                        label_again(table.get(v), label)
                        table[v] = label
                    for t in block:
                        values.setdefault(t, {})[v] = label
                else:
                    t = int(fields[1])
                    label = fields[2].strip() if len(fields) > 2 else ""
                    if label or t not in types:
                        label_again(types.get(t), label)
                        types[t] = label
                    block.append(t)
            except (ValueError, IndexError):
                notes["malformed_companion"] += 1
    return states, types, values, notes


def parse_row(path):
    """({level: [labels]}, blocks with fewer labels than their SIZE)"""
    levels, short = {}, 0
    if not path:
        return levels, short
    lines = read_text(path).splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^LEVEL\s+(\S+)\s+SIZE\s+(\d+)", lines[i].strip())
        i += 1
        if not m:
            continue
        n, labels = int(m.group(2)), []
        while len(labels) < n and i < len(lines) and not lines[i].startswith("LEVEL "):
            labels.append(lines[i].rstrip("\r").strip())
            i += 1
        short += len(labels) < n
        levels[m.group(1)] = labels
    return levels, short


def distinct(labels, suffix):
    """A label on several objects gets each one's id appended."""
    count = {}
    for l in labels:
        count[l] = count.get(l, 0) + 1
    return [("%s (%s)" % (l, suffix(i)) if count[l] > 1 else l) for i, l in enumerate(labels)]


# --------------------------------------------------------------------------------------
# One .prv file


class File:
    def __init__(self, path):
        self.path = path
        text = read_text(path)
        lines = text.splitlines()
        i = 0
        self.v2 = bool(lines) and lines[0].strip() == "new format"
        if self.v2:
            i = 1
        self.header = parse_header(lines[i].strip())
        self.body = lines[i + 1:]
        self.states, self.types, self.values, self.pcf_notes = parse_pcf(
            companion(path, ".pcf"))
        self.rows, self.short_row_blocks = parse_row(companion(path, ".row"))
        self.ovni = self.header["date"] == OVNI_DATE
        # Paraver's cutter: `#<date>:CUTTER:<kind>:"<original>":<offset>:<begin>:<end>`
        self.cuts = []
        for line in self.body:
            m = re.match(r'^#[^:]*:CUTTER:[^:]*:"(.*)":(-?\d+):', line.strip())
            if m:
                self.cuts.append((int(m.group(2)) * self.header["scale"], m.group(1)))
        # threads, in process-model order
        self.threads = []  # (appl, task, thread)
        for a, tasks in enumerate(self.header["apps"], 1):
            for t, (nth, _node) in enumerate(tasks, 1):
                for th in range(1, nth + 1):
                    self.threads.append((a, t, th))
        labels = self.rows.get("THREAD")
        names = []
        cpu_view = bool(labels) and CPU_LABEL.match(labels[0]) is not None
        for k, (a, t, th) in enumerate(self.threads):
            if labels and k < len(labels) and labels[k]:
                names.append(labels[k])
            elif cpu_view:  # reading: a CPU view's row without a label is a CPU by number
                names.append("CPU ROW %d" % (k + 1))
            else:
                names.append("THREAD %d.%d.%d" % (a, t, th))
        ids = self.threads
        self.thread_name = dict(zip(ids, distinct(names, lambda k: "%d.%d.%d" % ids[k])))
        self.thread_type = {}
        for k, key in enumerate(ids):
            lab = labels[k] if labels and k < len(labels) else ""
            self.thread_type[key] = "CPU" if cpu_view or CPU_LABEL.match(lab) else "THREAD"
        ncpu = sum(self.header["cpus"])
        clabels = self.rows.get("CPU") or []
        cnames = [(clabels[c] if c < len(clabels) and clabels[c] else "CPU %d" % (c + 1))
                  for c in range(ncpu)]
        self.cpu_names = distinct(cnames, lambda k: str(k + 1))
        # state labels: two states with one label get their numbers appended
        self.state_label = dict(zip(self.states, distinct(
            list(self.states.values()), lambda k: str(list(self.states)[k]))))
        # type labels
        tl = {}
        by_label = {}
        for t, l in self.types.items():
            by_label.setdefault(l, []).append(t)
        for t, l in self.types.items():
            if not l:
                tl[t] = str(t)
            elif (len(by_label[l]) > 1 or l in OWN_CHANNELS
                  or (re.fullmatch(r"-?[1-9][0-9]*|0", l) and int(l) != t)):
                # (a label that is another number would be the name of a type without one)
                tl[t] = "%s (%d)" % (l, t)
            else:
                tl[t] = l
        self.type_label = tl

    def core(self, n, key):
        """reading: an event of a row that is a CPU (ovni's cpu.prv) happens on that CPU
        when its cpu field names none (tracedb's derivation: an event whose target is a
        core is on it); the intervals it makes have the cpu field's core (NULL)."""
        if n <= 0 and self.thread_type.get(key) == "CPU":
            return self.thread(*key)
        return self.cpu(n)

    def cpu(self, n):
        if n <= 0:
            return None
        if n <= len(self.cpu_names):
            return self.cpu_names[n - 1]
        return "CPU %d" % n

    def thread(self, a, t, th):
        return self.thread_name.get((a, t, th), "THREAD %d.%d.%d" % (a, t, th))

    def state_name(self, s):
        label = self.state_label.get(s)
        return label if label else str(s)

    def action(self, t):
        return self.type_label.get(t, str(t))

    def value_label(self, t, v):
        label = self.values.get(t, {}).get(v)
        return label if label else None

    def records(self):
        """Yield (kind, fields) of the body's records, in the usual layout (`1` state, `2`
        events, `3` communication with appl, task, thread): paraver-kernel's other body
        layout (after a first line `new format`, TraceBodyIO_v2) is turned into it, its
        records told from the usual ones by their number of fields."""
        for line in self.body:
            line = line.strip()
            if not line or line[0] in "#cCiI":
                continue
            f = line.split(":")
            if f and f[-1] == "":
                f = f[:-1]
            kind = f[0]
            if self.v2:
                if kind == "1" and len(f) == 6:  # 1:cpu:thread:begin:end:state
                    v = [int(x) for x in f[1:]]
                    yield "1", [v[0]] + self.global_thread(v[1]) + v[2:]
                    continue
                if kind == "2" and len(f) == 6:  # 2:cpu:thread:end:end:state repeats it
                    continue
                if kind == "3" and len(f) % 2 == 0:  # 3:cpu:thread:time:type:value...
                    v = [int(x) for x in f[1:]]
                    yield "2", [v[0]] + self.global_thread(v[1]) + v[2:]
                    continue
                if kind == "d":  # d:cpu:thread:ls:ps:cpu:thread:lr:pr:size:tag
                    v = [int(x) for x in f[1:]]
                    yield "3", ([v[0]] + self.global_thread(v[1]) + v[2:5]
                                + self.global_thread(v[5]) + v[6:])
                    continue
                if kind in ("4", "5", "6", "7", "8"):  # a communication's marks: `4:<id>`
                    continue  # (and 8, a global communication)
            yield kind, [int(x) for x in f[1:]]

    def global_thread(self, n):
        """A v2 object: one thread number counted from 1 over the whole process model."""
        if 1 <= n <= len(self.threads):
            return list(self.threads[n - 1])
        return [0, 0, n]  # named `THREAD 0.0.n`


def exact(v):
    """reading: an event's note without a value label is NULL, unless the DOUBLE `value`
    cannot hold the number exactly (beyond 2^53): then its decimal."""
    return str(v) if abs(v) > 2 ** 53 else None


def oracle_rows(path):
    """The rows tracedb should store for a .prv or an ovni output directory."""
    if os.path.isdir(path):
        d = path
        if os.path.isdir(os.path.join(d, "ovni")):
            d = os.path.join(d, "ovni")
        files = [File(os.path.join(d, "thread.prv")), File(os.path.join(d, "cpu.prv"))]
    else:
        files = [File(path)]
    entities, events, intervals, messages, diags = {}, [], [], [], {}

    def entity(name, typ):
        entities.setdefault(name, typ)

    last = max(f.header["end"] for f in files)
    per_file_events = []
    for f in files:
        sc = f.header["scale"]
        for key in f.threads:
            entity(f.thread_name[key], f.thread_type[key])
        fev = []
        prev_state = {}
        for kind, n in f.pcf_notes.items():
            if n:
                diags[kind] = diags.get(kind, 0) + n
        if f.short_row_blocks:
            diags["malformed_companion"] = (diags.get("malformed_companion", 0)
                                            + f.short_row_blocks)
        if f.header["unknown_unit"]:
            diags["unknown_time_unit"] = diags.get("unknown_time_unit", 0) + 1
        for kind, v in f.records():
            ncpu = sum(f.header["cpus"])
            bad = [c for c in ([v[0], v[6]] if kind == "3" else [v[0]])
                   if ncpu and (c > ncpu or c < 0)]
            objs = [tuple(v[1:4])] + ([tuple(v[7:10])] if kind == "3" else [])
            bad += [o for o in objs if o not in f.thread_name]
            if bad:
                diags["unknown_object"] = diags.get("unknown_object", 0) + len(bad)
            if kind == "1":
                cpu, a, t, th, b, e, s = v[:7]
                name = f.thread(a, t, th)
                entity(name, f.thread_type.get((a, t, th), "THREAD"))
                if f.cpu(cpu):
                    entity(f.cpu(cpu), "CPU")
                last = max(last, b * sc, e * sc)
                prev = prev_state.get((a, t, th))
                inf = float("inf")
                # reading: they share time when each starts before the other ends, so
                # a state of no length strictly inside the one before overlaps it
                if prev is not None and prev[0] < (inf if e == -1 else e) and b < (
                        inf if prev[1] == -1 else prev[1]):
                    diags["overlapping_state"] = diags.get("overlapping_state", 0) + 1
                prev_state[(a, t, th)] = (b, e)
                intervals.append({"entity": name, "channel": "state", "ts": b * sc,
                                  "end": None if e == -1 else e * sc,
                                  "state": f.state_name(s), "value": s,
                                  "core": f.cpu(cpu)})
            elif kind == "2":
                cpu, a, t, th, ts = v[:5]
                name = f.thread(a, t, th)
                entity(name, f.thread_type.get((a, t, th), "THREAD"))
                if f.cpu(cpu):
                    entity(f.cpu(cpu), "CPU")
                last = max(last, ts * sc)
                pairs = v[5:]
                fev.append((ts * sc, f, name, f.cpu(cpu), f.core(cpu, (a, t, th)),
                            [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs) - 1, 2)]))
            elif kind == "3":
                (c1, a1, t1, h1, ls, ps, c2, a2, t2, h2, lr, pr, size, tag) = v[:14]
                s, r = f.thread(a1, t1, h1), f.thread(a2, t2, h2)
                entity(s, f.thread_type.get((a1, t1, h1), "THREAD"))
                entity(r, f.thread_type.get((a2, t2, h2), "THREAD"))
                for c in (c1, c2):
                    if f.cpu(c):
                        entity(f.cpu(c), "CPU")
                last = max(last, ls * sc, ps * sc, lr * sc, pr * sc)
                messages.append({"sender": s, "receiver": r, "send_ts": ls * sc,
                                 "recv_ts": lr * sc, "phys_send_ts": ps * sc,
                                 "phys_recv_ts": pr * sc, "size": size, "tag": tag})
        fev.sort(key=lambda e: e[0])  # stable: equal times keep file order
        per_file_events.append(fev)
    # events and channels
    seq = 0
    open_ch = {}  # (thread, channel) -> interval
    for fev in per_file_events:
        for ts, f, name, core, ev_core, pairs in fev:
            for typ, val in pairs:
                label = f.value_label(typ, val)
                events.append({"seq": seq, "ts": ts, "source": name, "target": name,
                               "action": f.action(typ), "note": label or exact(val),
                               "value": val, "core": ev_core})
                seq += 1
                ch = f.action(typ)
                key = (name, ch)
                cur = open_ch.get(key)
                zero_is_value = f.ovni and (typ in (3, 17) or 200 <= typ <= 299)
                if cur is not None and cur["value"] == val:
                    continue  # the same value again continues the interval
                if cur is not None:
                    cur["end"] = ts
                    intervals.append(cur)
                    del open_ch[key]
                if val == 0 and not zero_is_value:
                    continue
                open_ch[key] = {"entity": name, "channel": ch, "ts": ts, "end": None,
                                "state": label or str(val), "value": val, "core": core}
    intervals += open_ch.values()
    out_iv = []
    for iv in intervals:
        end = iv.pop("end")
        iv["open"] = end is None
        iv["dur"] = (last if end is None else end) - iv["ts"]
        out_iv.append(iv)
    ents = [{"name": n, "type": t} for n, t in entities.items()]
    f0 = files[0]
    cuts = [c for f in files for c in f.cuts]
    cap = {"capture_id": "", "format": "prv", "time_unit": {1: "ns", 1000: "us", 1000000: "ms"}[f0.header["scale"]],
           "ts_max": last, "cuts": len(cuts) or None,
           "cut_offset_ns": sum(o for o, _ in cuts) if cuts else None,
           "cut_from": cuts[0][1] if cuts else None}
    return {"captures": [cap], "entities": ents, "events": events, "intervals": out_iv, "messages": messages,
            "diagnostics": [{"kind": k, "count": n} for k, n in diags.items()]}


# --------------------------------------------------------------------------------------
# Comparison with tracedb

EVENT_COLS = ["ts", "source", "target", "action", "note", "value", "core"]
IV_COLS = ["state", "value", "dur", "open", "core"]
MSG_COLS = ["phys_send_ts", "phys_recv_ts", "size"]
TABLES = {  # name -> (key columns, compared columns, tracedb's SQL)
    "entities": (["name"], ["type"], "SELECT capture_id, name, type FROM entities"),
    "events": (["seq"], EVENT_COLS,
               "SELECT capture_id, seq, %s FROM events" % ", ".join(EVENT_COLS)),
    "intervals": (["entity", "channel", "ts"], IV_COLS,
                  "SELECT capture_id, entity, channel, ts, %s FROM intervals"
                  % ", ".join(IV_COLS)),
    "messages": (["sender", "receiver", "send_ts", "recv_ts", "tag"], MSG_COLS,
                 "SELECT capture_id, sender, receiver, send_ts, recv_ts, tag, %s FROM messages"
                 % ", ".join(MSG_COLS)),
    "captures": (["capture_id"], ["format", "time_unit", "ts_max", "cuts", "cut_offset_ns", "cut_from"],
                 "SELECT capture_id, format, time_unit, ts_max, "
                 "json_extract_string(meta, '$.\"paraver.cuts\"') AS cuts, "
                 "json_extract_string(meta, '$.\"paraver.cut_offset_ns\"') AS cut_offset_ns, "
                 "json_extract_string(meta, '$.\"paraver.cut_from\"') AS cut_from "
                 "FROM captures"),
    "diagnostics": (["kind"], ["count"],
                    "SELECT capture_id, kind, sum(count) AS count FROM diagnostics "
                    "WHERE severity <> 'info' OR kind = 'relabelled_companion' GROUP BY ALL"),
}


def check(tracedb, traces, descs=None):
    theirs_all = common.ingest_each(tracedb, [(t, [t]) for t in traces],
                                    {n: sql for n, (_k, _c, sql) in TABLES.items()})
    total = 0
    for i, trace in enumerate(traces):
        if descs:
            print(descs[i])
        ours = oracle_rows(trace)
        theirs, err = theirs_all[trace]
        if theirs is None:
            total += common.refused(trace, err)
            continue
        report = []
        for r in theirs["captures"]:
            r["capture_id"] = ""
        # `value` is a DOUBLE column
        found, counts = common.compare_tables(
            ours, theirs, [(n, k, c) for n, (k, c, _s) in TABLES.items()], report,
            uncounted=("diagnostics", "captures"), doubles=("value",))
        total += common.summary(trace.rstrip("/"), counts, found, report)
    return total


# --------------------------------------------------------------------------------------
# Random traces


def generate(seed):
    """(prv, pcf or None, row or None, description)"""
    rng = random.Random(seed)
    unit = rng.choice(["_ns", "_us", "_ms", "", "_s"])  # `_s`: unknown, read as us
    nodes = [rng.randint(1, 4) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.2:
        nodes = []
    ncpu = sum(nodes)
    apps = []
    for _ in range(rng.randint(1, 3)):
        apps.append([(rng.randint(1, 3), rng.randint(1, max(1, len(nodes))))
                     for _ in range(rng.randint(1, 4))])
    threads = [(a, t, th) for a, tasks in enumerate(apps, 1)
               for t, (n, _) in enumerate(tasks, 1) for th in range(1, n + 1)]
    v2 = rng.random() < 0.25
    crlf = rng.random() < 0.15
    horizon = rng.choice([1000, 50000, 10 ** 7])
    end = horizon + rng.randint(-horizon // 10, horizon // 10)
    if not nodes:
        res = rng.choice(["0", "0()"])
    elif all(c == 1 for c in nodes) and rng.random() < 0.5:
        res = str(len(nodes))  # nodes of one CPU each
    else:
        res = "%d(%s)" % (len(nodes), ",".join(map(str, nodes)))
    sep = rng.choice([":", ":", ","])  # Extrae separates applications with either
    adhoc = rng.random() < 0.1  # an ad-hoc writer's `tasks:(threads:node)`
    dimemas = sep == ":" and rng.random() < 0.2  # `,<communicators>` after applications
    appl = sep.join("%d%s(%s)%s" % (len(tasks), ":" if adhoc else "",
                                    ",".join("%d:%d" % x for x in tasks),
                                    ",%d" % rng.randint(1, 3) if dimemas and i < len(apps) - 1
                                    and rng.random() < 0.6 else "")
                    for i, tasks in enumerate(apps, 1))
    ncomm = rng.randint(0, 2)
    end_text = ("%020d" if rng.random() < 0.2 else "%d") % end
    ovni = rng.random() < 0.15  # ovni's date: its PRV_ZERO types' 0 is a value
    date = "19/01/38 at 03:14" if ovni else "23/11/2026 at 01:%02d" % (seed % 60)
    header = "%s (%s):%s%s:%s:%d:%s%s" % (
        rng.choice(["#Paraver", "#Paraver", "#PARAVER"]), date, end_text, unit, res,
        len(apps), appl, ",%d" % ncomm if ncomm else "")
    recs = []

    def cpu():
        if ncpu and rng.random() < 0.01:
            return ncpu + 1  # beyond the resource model: kept, unknown_object
        return rng.randint(0, ncpu) if ncpu else 0

    def obj(th):
        if rng.random() < 0.005:  # outside the process model: kept, unknown_object
            return "%d" % (len(threads) + 1) if v2 else "%d:%d:%d" % (th[0], th[1], 9)
        return "%d" % (threads.index(th) + 1) if v2 else "%d:%d:%d" % th

    states = list(range(rng.randint(2, 10)))
    types = rng.sample([1, 2, 3, 9, 17, 40, 250, 50000001, 50000002, 50000003, 60000019,
                        70000001, 90000000, 123, 2 ** 31 + 5], rng.randint(3, 12))
    for th in threads:
        t = 0
        for _ in range(rng.randint(0, 25)):
            t += rng.randint(0, horizon // 20)
            b = t - rng.randint(0, horizon // 40) if rng.random() < 0.2 else t  # overlaps
            b = max(0, b)
            e = b + rng.randint(0, horizon // 15)
            if rng.random() < 0.05:
                e = -1
            c, st = cpu(), rng.choice(states)
            recs.append((b, "1:%d:%s:%d:%d:%d" % (c, obj(th), b, e, st)))
            if v2 and e != -1 and rng.random() < 0.5:  # its end record, skipped
                recs.append((e, "2:%d:%s:%d:%d:%d" % (c, obj(th), e, e, st)))
        t = 0
        for _ in range(rng.randint(0, 40)):
            t += rng.randint(0, horizon // 30)
            pairs = []
            for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
                typ = rng.choice(types)
                val = rng.choice([0, 0, 1, 2, 3, 5, 7, 1000, rng.randint(-5, 2 ** 40),
                                  rng.choice([2 ** 53 + 1, 2 ** 64 - 1, -2 ** 63, -1])])
                pairs.append("%d:%d" % (typ, val))
            trail = ":" if rng.random() < 0.05 and not v2 else ""
            recs.append((t, "%s:%d:%s:%d:%s%s" % ("3" if v2 else "2", cpu(), obj(th), t,
                                                  ":".join(pairs), trail)))
    for _ in range(rng.randint(0, 30)):
        s, r = rng.choice(threads), rng.choice(threads)
        lr = rng.randint(0, horizon)
        ps = rng.randint(0, horizon)
        ls = max(0, ps - rng.randint(0, 50))
        pr = max(lr, ps) + rng.randint(0, 100)
        recs.append((ps, "%s:%d:%s:%d:%d:%d:%s:%d:%d:%d:%d" % (
            "d" if v2 else "3", cpu(), obj(s), ls, ps, cpu(), obj(r), lr, pr,
            rng.randint(0, 1 << 20), rng.randint(0, 1000))))
        if v2 and rng.random() < 0.5:  # its marks, skipped
            recs.append((ps, "%d:%d" % (rng.randint(4, 7), rng.randint(0, 30))))
    recs.sort(key=lambda x: x[0] + rng.choice([0, 0, 0, horizon // 50]))  # roughly sorted
    body = ["c:1:%d:1:1" % (i + 1) for i in range(ncomm)]
    for i in range(rng.choice([0, 0, 1, 2])):  # Paraver's cutter, the earlier cut copied
        body.append('#2022112%d164408:CUTTER:%s:"/runs/a:b/t%d.prv":%d:%d:%d' % (
            i, rng.choice(["ORIGINAL", "RUNAPP"]), i, 1000 * (i + 1), 1000 * (i + 1), 9000))
    for i, (_t, line) in enumerate(recs):
        if rng.random() < 0.02:
            body.append("# a comment")
        body.append(line)
    nl = "\r\n" if crlf else "\n"
    prv = ("new format" + nl if v2 else "") + header + nl + nl.join(body) + nl
    pcf = None
    if rng.random() < 0.85:
        out = ["DEFAULT_OPTIONS", "", "LEVEL               THREAD", "UNITS NANOSEC", "",
               "STATES"]
        names = ["Idle", "Running", "Not created", "Waiting a message", "Blocking Send",
                 "Synchronization", "Running", "I/O", "", "Sched"]
        # Lines the README says are noted: not `<number> <label>` (malformed_companion), a
        # second label (relabelled_companion). Their own generator, so that the rest of each
        # seed's trace stays as it was.
        odd = random.Random(seed * 7919 + 1)
        for st in states:
            if rng.random() < 0.9:
                out.append("%d%s%s" % (st, rng.choice(["    ", "\t", " "]), names[st]))
            if odd.random() < 0.05:
                out.append(odd.choice(["Idle %d" % st, "%d    %s" % (st, odd.choice(names)),
                                       "%d" % st, "0x%x Hex" % st]))
        out += ["", "STATES_COLOR", "0    {117,195,255}", "1    {0, 0, 255}", ""]
        named = [t for t in types if rng.random() < 0.8]
        while named:
            block = named[: rng.randint(1, 3)]
            named = named[len(block):]
            out.append("EVENT_TYPE")
            for t in block:
                label = rng.choice(["MPI Point-to-point", "User function", "Caller line",
                                    "state", "Flushing ovni buffer ", "Counter %d" % t,
                                    "Counter %d" % t, "Counter %d" % t,
                                    str(rng.choice(types))])
                out.append("%d    %d    %s" % (rng.randint(0, 9), t, label))
                if odd.random() < 0.05:
                    out.append(odd.choice(["%d" % t, "0 x%d Bad" % t, "0    %d" % t,
                                           "0    %d    Other %d" % (t, t), "0 %d %s" % (t, label)]))
            if rng.random() < 0.7:
                out.append("VALUES")
                for v in (0, 1, 2, 3, 7, 1000, 2 ** 64 - 1):
                    if rng.random() < 0.6:
                        out.append("%d%s%s" % (v, rng.choice(["      ", "\t"]), rng.choice(
                            ["End", "MPI_Send", "MPI_Recv", " CPU 0.0", "main", "x y  z", ""])))
                        if odd.random() < 0.05:
                            out.append(odd.choice(["%d other" % v, "%d End" % v, "v%d x" % v]))
            out.append("")
        pcf = ("\ufeff" if rng.random() < 0.1 else "") + nl.join(out) + nl
    row = None
    if rng.random() < 0.8:
        out = []
        if ncpu:
            out.append("LEVEL CPU SIZE %d" % ncpu)
            out += ["%d.node%d" % (c + 1, c % 2) for c in range(ncpu)]
            out.append("")
        out.append("LEVEL NODE SIZE %d" % max(1, len(nodes)))
        out += ["node%d" % i for i in range(max(1, len(nodes)))]
        out.append("")
        out.append("LEVEL THREAD SIZE %d" % len(threads))
        out += [rng.choice(["THREAD %d.%d.%d" % th, "worker", "  rank %d  " % th[1],
                            "CPU %d" % th[2], "T%d" % th[2]])
                for th in threads]
        if rng.random() < 0.1:
            out = out[:-1]  # one label short: the last thread keeps its number
        row = nl.join(out) + nl
    desc = "seed %d: unit %s, %d nodes, %d apps, %d threads, %d records%s%s%s%s" % (
        seed, unit or "(us)", len(nodes), len(apps), len(threads), len(recs),
        "" if pcf else ", no .pcf", "" if row else ", no .row", ", new format" if v2 else "",
        ", CRLF" if crlf else "") + (", ovni date" if ovni else "") + (
        ", Dimemas" if dimemas else "") + (", tasks:(...)" if adhoc else "")
    return prv, pcf, row, desc


def write_generated(d, seed):
    prv, pcf, row, desc = generate(seed)
    base = os.path.join(d, "gen-%d" % seed)
    gz = random.Random(seed).random() < 0.1  # a compressed trace, its companions not
    for ext in (".prv", ".prv.gz", ".pcf", ".row"):
        if os.path.exists(base + ext):
            os.remove(base + ext)
    for ext, text in ((".prv", prv), (".pcf", pcf), (".row", row)):
        if text is None:
            continue
        if gz and ext == ".prv":
            import gzip
            with gzip.open(base + ext + ".gz", "wb") as f:
                f.write(text.encode())
            continue
        with open(base + ext, "w", newline="") as f:
            f.write(text)
    return base + (".prv.gz" if gz else ".prv"), desc + (", .prv.gz" if gz else "")


def main(argv):
    opts, files = common.options(argv, ["--tracedb", "--generate", "--seeds"])
    if opts["--generate"]:
        os.makedirs(opts["--generate"], exist_ok=True)
        paths, descs = [], []
        for seed in common.seeds(opts["--seeds"]):
            path, desc = write_generated(opts["--generate"], seed)
            paths.append(path)
            descs.append(desc)
            if not opts["--tracedb"]:
                print("%s: %s" % (path, desc))
        if not opts["--tracedb"]:
            return 0
        return 1 if check(opts["--tracedb"], paths, descs) else 0
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    if opts["--tracedb"]:
        return 1 if check(opts["--tracedb"], [os.path.abspath(f) for f in files]) else 0
    ours = oracle_rows(files[0])
    common.write_tables((n, k + c, ours[n]) for n, (k, c, _s) in TABLES.items())
    return 0


if __name__ == "__main__":
    common.run(main)
