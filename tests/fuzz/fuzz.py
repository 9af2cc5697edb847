#!/usr/bin/env python3
"""Mutation fuzzing of every tracedb importer, through the release binary.

Builds a small seed corpus (cuts of ../shared/datasets when it is there, the project's own
datasets/ and oracle cases, and S.Ha.R.K. runs, hardware-trace exports with an ELF and a
mapping, deadline files and compressed variants generated here from the documented layouts),
mutates one file of a seed per case and runs `tracedb ingest` on it with a fresh archive.
Every case is checked against the contract of README "Bad input":

* the exit status is 0 or 1 (never 101 or a signal, never 2: the options are right), no
  "panicked" on standard error, no command runs longer than --timeout seconds;
* a fatal error (exit 1) names the input file;
* on success: the summary line's diagnostic counts equal the `diagnostics` table's
  (sum of `count` per kind); `--strict` fails iff a diagnostic of severity warning, error or
  data_loss was recorded; `tracedb verify` passes; every predefined analysis runs (in one
  `sql` script; every --query-every cases also `tracedb query NAME` for each, and
  `tracedb report`); `export --to btf` then ingesting that file succeeds;
* BTF read plainly: every data line is an `events` row or a `malformed_line` diagnostic.

Archive cases (--archive-cases) damage an archive made from a good seed (its manifest, a
Parquet file, a missing file) and run `captures`, `query`, `verify`, `rm`, `ingest`
(append) on it: exit 0 or 1, no panic, and an error naming a file.

Each case is reproducible from (--seed, case number): `--replay N` runs case N again and
keeps its files. Failures are saved under --out/failures/<signature>/<case>/ with the
inputs and what happened; `--minimise DIR` shrinks a saved failure's mutated file while
the same signature persists.

    python3 tests/fuzz/fuzz.py --bin target/release/tracedb --seed 1 --minutes 10
"""

import argparse
import bz2
import collections
import gzip
import hashlib
import io
import json
import lzma
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

ANALYSES = [
    "activation_jitter", "deadline_misses", "deadline_summary", "execution_times",
    "response_times", "runnable_times", "cpu_load", "preemption_instances",
    "preemption_pairs", "preemptions", "blocking", "blocking_instances",
    "semaphore_contention", "priority_inversions", "data_loss", "signal_values",
    "state_time", "channel_time", "messages_summary",
]
MACROS = {"cpu_load"}
# cpu_load's documented refusal of a window count past its bound (README "cpu_load").
WINDOW_REFUSED = re.compile(r"cpu_load: a \d+ ns window makes \d+ rows .*at most 10,000,000")

# ---------------------------------------------------------------------------------------
# Seeds


class Seed:
    """Files of one input (relative path -> bytes), the path given to ingest, its options,
    the files a mutation may hit and whether each is text."""

    def __init__(self, name, fmt, files, target, args=(), mutable=None, text=(), btf_plain=False):
        self.name = name
        self.fmt = fmt
        self.files = files
        self.target = target
        self.args = list(args)
        self.mutable = list(mutable if mutable is not None else [target])
        self.text = set(text)
        self.btf_plain = btf_plain


def head_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[:n])


def read(path):
    with open(path, "rb") as f:
        return f.read()


def maybe_gunzip(data):
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def zstd_compress(data):
    if not shutil.which("zstd"):
        return None
    p = subprocess.run(["zstd", "-q", "-c", "-3"], input=data, capture_output=True)
    return p.stdout if p.returncode == 0 else None


def zip_one(name, data):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, data)
    return buf.getvalue()


def compressed_forms(name, data):
    """(file name, bytes) of `data` in every compressed form tracedb reads."""
    out = [
        (name + ".gz", gzip.compress(data, 6, mtime=0)),
        (name + ".xz", lzma.compress(data)),
        (name + ".bz2", bz2.compress(data)),
        (name + ".zip", zip_one(name, data)),
    ]
    z = zstd_compress(data)
    if z is not None:
        out.append((name + ".zst", z))
    return out


def shark_rec(ty, par1, tsc, par2):
    return struct.pack("<HHIII", ty, par1, (tsc >> 32) & 0xFFFFFFFF, tsc & 0xFFFFFFFF, par2)


def shark_run():
    """tests/shark.rs's generated run: two periodic tasks, an interrupt, a contended mutex,
    a recorded miss, a fast-variant record."""
    t1, t2, m = 1, 2, 7
    r = [
        (0x10, 0, 10, 1_000_000), (0x60, t1, 20, 11), (0x60, t2, 30, 12), (0x12, t1, 100, 0),
        (0x12, t2, 100, 0), (0x22, t1, 110, 0), (0x62, t1, 300, 0), (0x22, t2, 310, 0),
        (0x03, 5, 400, 0), (0x13, 5, 450, 0), (0x16, t2, 500, m), (0x12, t1, 1100, 0),
        (0x32, t2, 1100, 0), (0x22, t1, 1110, 0), (0x46, t1, 1200, m), (0x22, t2, 1210, 0),
        (0x36, t2, 1300, m), (0x16, t1, 1300, m), (0x32, t2, 1300, 0), (0x22, t1, 1310, 0),
        (0x36, t1, 1400, m), (0x62, t1, 1500, 0), (0x22, t2, 1510, 0), (0x62, t2, 1900, 0),
        (0x12, t1, 2100, 0), (0x12, t2, 2100, 0), (0x22, t1, 2110, 0), (0x62, t1, 2200, 0),
        (0x22, t2, 2210, 0), (0x12, t1, 3100, 0), (0x32, t2, 3100, 0), (0x22, t1, 3110, 0),
        (0x62, t1, 3200, 0), (0x8022, t2, 3210, 0xDEADBEEF), (0xB2, t2, 4100, 0),
        (0x12, t1, 4100, 0), (0x32, t2, 4100, 0), (0x22, t1, 4110, 0), (0x62, t1, 4200, 0),
        (0x22, t2, 4210, 0), (0x62, t2, 4300, 0), (0x24, 0, 4400, 0), (0x34, 0, 4450, 0),
        (0x30, 0, 4500, 0), (0x05, 3, 4600, 0), (0x06, 3, 4700, 0), (0x20, 0, 4800, 5),
        (0x21, 0, 4900, 0), (0x2A, 0, 5000, 0), (0x42, 1, 5100, 0), (0x42, 0, 5200, 0),
    ]
    return [shark_rec(*x) for x in r]


def shark_udp(recs):
    out = b""
    for n, i in enumerate(range(0, len(recs), 10)):
        chunk = recs[i:i + 10]
        out += b"TRACER-V1.0\0" + struct.pack("<III", n + 1, len(chunk), 24 + 16 * len(chunk))
        out += b"".join(chunk)
    return out


def elf32(syms, big=False):
    """tests' testelf.rs: an ELF32 (ARM) whose .symtab holds `syms` (name, value, size,
    is_function)."""
    e = ">" if big else "<"
    strtab = b"\0"
    names = []
    for n, *_ in syms:
        names.append(len(strtab))
        strtab += n.encode() + b"\0"
    while len(strtab) % 4:
        strtab += b"\0"
    symtab = b"\0" * 16
    for (n, value, size, func), name in zip(syms, names):
        symtab += struct.pack(e + "III", name, value, size) + bytes([0x12 if func else 0x11, 0])
        symtab += struct.pack(e + "H", 0xFFF1)
    shstrtab = b"\0.strtab\0.symtab\0.shstrtab\0\0\0\0\0"
    strtab_off = 52
    symtab_off = strtab_off + len(strtab)
    shstr_off = symtab_off + len(symtab)
    sh_off = shstr_off + len(shstrtab)
    out = bytes([0x7F, ord("E"), ord("L"), ord("F"), 1, 2 if big else 1, 1, 0]) + b"\0" * 8
    out += struct.pack(e + "HHIIIIIHHHHHH", 2, 40, 1, 0, 0, sh_off, 0, 52, 0, 0, 40, 4, 3)
    out += strtab + symtab + shstrtab
    for f in ([0] * 10,
              [1, 3, 0, 0, strtab_off, len(strtab), 0, 0, 1, 0],
              [9, 2, 0, 0, symtab_off, len(symtab), 1, 1, 4, 16],
              [17, 3, 0, 0, shstr_off, len(shstrtab), 0, 0, 1, 0]):
        out += struct.pack(e + "10I", *f)
    return out


HW_MAP = json.dumps({
    "time": {"unit": "cycles", "frequency_hz": 100000000},
    "cores": {"Core0": "Core_0", "Core1": "Core_1"},
    "current_task": {"cur_task_c0": "Core_0", "0x20000004": "Core_1"},
    "tasks": {"1": "T_A0", "2": "T_B0", "3": "T_A1", "4": "T_B1"},
    "idle": ["0"],
    "runnables": ["Run_*"],
    "isrs": ["ISR_*"],
    "terminate_functions": ["OS_TerminateTask"],
    "signals": ["speed"],
}, indent=1).encode()

HW_ROWS = [
    (0, "Core0", "Data", "0x20000000", "", "1"), (50, "Core1", "Data", "0x20000004", "", "3"),
    (100, "Core0", "Branch", "0x1010", "0x2000", ""), (150, "Core1", "Branch", "0x1020", "0x2100", ""),
    (200, "Core0", "Data", "0x20000010", "", "5"), (250, "Core1", "Data", "0x20000004", "", "4"),
    (300, "Core0", "Return", "0x2040", "0x1014", ""), (350, "Core1", "Data", "0x20000004", "", "3"),
    (400, "Core0", "Branch", "0x1018", "0x4000", ""), (450, "Core1", "Return", "0x2140", "", ""),
    (500, "Core0", "Data", "0x20000000", "", "2"), (550, "Core1", "Data", "0x20000010", "", "7"),
    (600, "Core0", "Interrupt", "0x1030", "0x3000", ""), (650, "Core1", "Data", "0x20000004", "", "0"),
    (700, "Core0", "Return", "0x3040", "", ""), (800, "Core0", "Data", "0x20000000", "", "0"),
    (900, "Core0", "Data", "0x20000000", "", "2"), (1000, "Core0", "Linear", "0x1040", "", ""),
]


def hw_export(order="time"):
    rows = list(enumerate(HW_ROWS))
    if order == "core":
        rows.sort(key=lambda r: r[1][1])
    s = "Index,Source,Type,Address,Destination,Timestamp,Data\n"
    for i, (t, core, ty, a, d, data) in rows:
        s += f"{i},{core},{ty},{a},{d},{t},{data}\n"
    return s.encode()


TRACE32 = (b"record;cycle;address;data;symbol;ti.back\n"
           b"-6;ptrace;P:00001000;;\\\\app\\main\\main;\n"
           b"-5;wr-long;D:40000000;00000002;\\\\app\\os\\cur_task;0.000001000\n"
           b"-4;ptrace;P:00002000;;\\\\app\\main\\Run_A;0.000000500\n"
           b"-3;rd-long;D:40000004;00000007;\\\\app\\main\\speed;0.000000500\n"
           b"-2;wr-long;D:40000000;00000000;\\\\app\\os\\cur_task;0.000002000\n"
           b"-1;ptrace;P:00001010;;\\\\app\\main\\main+0x10;0.000000100\n")
TRACE32_MAP = (b'{"data_radix": 16, "current_task": {"cur_task": "Core_0"},'
               b' "tasks": {"2": "TASK_B"}, "runnables": ["Run_*"], "signals": ["speed"]}')

DEADLINES = b"entity,deadline\n# comment\nTASK_1MS_*,600us\nTASK_5MS_1?,3ms\nTASK_100MS_*,15ms\n"


def build_seeds(shared):
    seeds = []
    ds = os.path.join(shared, "datasets") if shared else None
    have = ds and os.path.isdir(ds)

    # BTF
    btf_texts = []
    ecu = maybe_gunzip(read(os.path.join(REPO, "datasets/btf/ecu-4cores.btf.gz")))
    btf_texts.append(("ecu", head_lines(ecu, 400)))
    if have:
        btf_texts.append(("fr1", head_lines(read(os.path.join(ds, "btf/freertos-1core.btf")), 300)))
        btf_texts.append(("fr2", head_lines(maybe_gunzip(read(os.path.join(ds, "btf/freertos-2cores.btf.gz"))), 300)))
        btf_texts.append(("fr4", head_lines(maybe_gunzip(read(os.path.join(ds, "btf/freertos-4cores.btf.gz"))), 300)))
        btf_texts.append(("hdr", read(os.path.join(ds, "btf/header-only.btf"))))
    cases = os.path.join(REPO, "tests/oracle/cases")
    for f in sorted(os.listdir(cases)):
        if f.endswith(".btf"):
            btf_texts.append(("case-" + f[:-4], read(os.path.join(cases, f))))
    for name, data in btf_texts:
        seeds.append(Seed(name, "btf", {"t.btf": data}, "t.btf", text={"t.btf"}, btf_plain=True))
    # numeric mode BTF 2.1.5
    numeric = (b"#version 2.1.5\n#timeScale ns\n#typeTable\n#-0 T\n#-1 C\n#-2 SEM\n#entityTable\n"
               b"#-0 TASK_A\n#-1 Core_0\n#-2 TASK_B\n#-3 sem1\n"
               b"0,1,0,0,0,0,activate\n10,1,0,0,0,0,start\n20,1,0,0,2,0,activate\n"
               b"30,0,0,2,3,0,requestsemaphore\n35,0,0,2,3,0,assigned\n40,1,0,0,0,0,preempt\n"
               b"45,1,0,0,2,0,start\n50,0,0,2,3,0,released\n55,1,0,0,2,0,terminate\n"
               b"60,1,0,0,0,0,resume\n70,1,0,0,0,0,terminate\n")
    seeds.append(Seed("numeric", "btf", {"t.btf": numeric}, "t.btf", text={"t.btf"}, btf_plain=True))
    # deadlines file
    seeds.append(Seed("deadlines", "deadlines", {"t.btf": head_lines(ecu, 400), "d.csv": DEADLINES},
                      "t.btf", args=["--deadlines", "d.csv"], mutable=["d.csv"], text={"d.csv"}))
    # compressed BTF
    for fname, data in compressed_forms("t.btf", head_lines(ecu, 300)):
        seeds.append(Seed("ecu" + fname[5:], "compressed", {fname: data}, fname))

    # Paraver
    if have:
        for base, n in (("extrae-test1", 1000), ("extrae-lulesh-7+1-chop8", 250)):
            p = os.path.join(ds, "paraver", base)
            files = {"t.prv": head_lines(read(p + ".prv"), n), "t.pcf": read(p + ".pcf"),
                     "t.row": read(p + ".row")}
            seeds.append(Seed(base, "paraver", files, "t.prv", mutable=list(files), text=set(files)))
        p = os.path.join(ds, "paraver", "extrae-test1")
        for fname, data in compressed_forms("t.prv", read(p + ".prv")):
            files = {fname: data, "t.pcf.gz": gzip.compress(read(p + ".pcf"), mtime=0),
                     "t.row": read(p + ".row")}
            seeds.append(Seed("extrae-test1" + fname[5:], "compressed", files, fname,
                              mutable=[fname, "t.pcf.gz"]))

    # ovni: streams and the emulator's Paraver output
    if have:
        for emu in sorted(os.listdir(os.path.join(ds, "ovni"))):
            root = os.path.join(ds, "ovni", emu, "ovni")
            streams, views = {}, {}
            for dp, _, fs in os.walk(root):
                for f in fs:
                    rel = os.path.relpath(os.path.join(dp, f), root)
                    if rel.startswith("loom."):
                        streams[os.path.join(emu, "ovni", rel)] = read(os.path.join(dp, f))
                    else:
                        data = read(os.path.join(dp, f))
                        if f.endswith(".prv"):
                            data = head_lines(data, 300)
                        views[os.path.join(emu, "ovni", rel)] = data
            seeds.append(Seed(emu + "-streams", "ovni", streams, emu, args=["--format", "ovni"],
                              mutable=sorted(streams), text={k for k in streams if k.endswith(".json")}))
            seeds.append(Seed(emu + "-prv", "ovni-prv", views, emu, mutable=sorted(views),
                              text=set(views)))

    # QS
    if have:
        # The QP 5 and 4.2 samples carry no target info: tests/qs.rs's QSPY options.
        for f, cut, dic in (("qp5-dpp.qs", None, b"-v540 -T4 -O4 -F4 -S2 -C4\n"),
                            ("qp5-dpp64.qs", 20000, b"-v420\n-T4 -O8 -F8 -S2 -E4 -Q4 -P4 -B4 -C4\n"),
                            ("qp694-dpp-qpc.bin", None, None)):
            data = read(os.path.join(ds, "qs", f))
            if cut:
                data = data[:cut]
            ext = os.path.splitext(f)[1]
            if dic:
                seeds.append(Seed(f, "qs", {"t" + ext: data, "o.dic": dic}, "t" + ext,
                                  args=["--format", "qs", "--qs-dic", "o.dic"],
                                  mutable=["t" + ext, "t" + ext, "o.dic"], text={"o.dic"}))
            else:
                seeds.append(Seed(f, "qs", {"t" + ext: data}, "t" + ext))
        files = {"t.bin": read(os.path.join(ds, "qs/qp8-dpp-qpc-nodict.bin")),
                 "t.dic": read(os.path.join(ds, "qs/qp8-dpp-qpc-nodict.dic"))}
        seeds.append(Seed("qp8", "qs", files, "t.bin", mutable=["t.bin", "t.dic"], text={"t.dic"}))
        seeds.append(Seed("qp8-tick", "qs", dict(files), "t.bin", args=["--tick-rate", "1MHz"],
                          mutable=["t.bin"]))
        seeds.append(Seed("qp8-1hz", "qs", dict(files), "t.bin", args=["--tick-rate", "1"],
                          mutable=["t.bin"]))

    # S.Ha.R.K.
    recs = shark_run()
    one = b"".join(recs[:24])
    old, new = recs[24:36], recs[36:]
    wrapped = b"".join(new) + b"\0" * 32 + b"".join(old)
    seeds.append(Seed("shark-run", "shark", {"0trace.dat": one, "1trace.dat": wrapped},
                      "0trace.dat", mutable=["0trace.dat", "1trace.dat"]))
    seeds.append(Seed("shark-forced", "shark", {"t.dat": b"".join(recs)}, "t.dat",
                      args=["--format", "shark", "--tick-rate", "1GHz"]))
    seeds.append(Seed("shark-udp", "shark", {"udp.bin": shark_udp(recs)}, "udp.bin"))
    seeds.append(Seed("shark-1hz", "shark", {"t.dat": b"".join(recs[1:])}, "t.dat",
                      args=["--format", "shark", "--tick-rate", "1"]))
    seeds.append(Seed("shark-gz", "shark", {"0trace.dat.gz": gzip.compress(b"".join(recs), mtime=0)},
                      "0trace.dat.gz", args=["--format", "shark"]))

    # hardware-trace exports
    elf = elf32([("os_dispatch", 0x1001, 0x100, True), ("Run_Ctrl", 0x2001, 0x80, True),
                 ("Run_Log", 0x2101, 0x80, True), ("ISR_CAN", 0x3001, 0x80, True),
                 ("OS_TerminateTask", 0x4001, 0x40, True), ("cur_task_c0", 0x20000000, 4, False),
                 ("cur_task_c1", 0x20000004, 4, False), ("speed", 0x20000010, 4, False)])
    for order in ("time", "core"):
        files = {"trace.csv": hw_export(order), "app.elf": elf, "map.json": HW_MAP}
        seeds.append(Seed("hw-s32-" + order, "hw", files, "trace.csv",
                          args=["--hw-elf", "app.elf", "--hw-map", "map.json"],
                          mutable=["trace.csv", "trace.csv", "map.json", "app.elf"],
                          text={"trace.csv", "map.json"}))
    seeds.append(Seed("hw-s32-nomap", "hw", {"trace.csv": hw_export()}, "trace.csv",
                      text={"trace.csv"}))
    seeds.append(Seed("hw-trace32", "hw", {"t32.txt": TRACE32, "map.json": TRACE32_MAP}, "t32.txt",
                      args=["--hw-map", "map.json"], mutable=["t32.txt", "t32.txt", "map.json"],
                      text={"t32.txt", "map.json"}))
    return seeds


# ---------------------------------------------------------------------------------------
# Mutations

EXTREMES = [
    b"9223372036854775807", b"-9223372036854775808", b"18446744073709551615",
    b"18446744073709551616", b"-1", b"0", b"4294967295", b"4294967296", b"65535", b"65536",
    b"4611686018427387904", b"4611686018427387903", b"-4611686018427387904",
    b"-4611686018427387903", b"2305843009213693952", b"-2305843009213693952", b"1e400",
    b"-1e400", b"NaN", b"nan", b"inf", b"-inf", b"1e308", b"1.5", b"-0", b"+5", b"0x7fffffffffffffff",
    b"0xFFFFFFFFFFFFFFFFFF", b"99999999999999999999999999999999999999", b"1" + b"0" * 400,
    b"1" * 5000, b"", b" ", b"1_000", b"1e-400", b"0.000000001", b"12abc",
]
INTS = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
        0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 1 << 62, (1 << 62) - 1, 0x10000,
        0x100000, 0x1000000]
NUM = re.compile(rb"-?\d+(\.\d+)?")


def lines_of(b):
    return b.splitlines(keepends=True)


def m_bitflip(r, b):
    b = bytearray(b)
    for _ in range(r.randint(1, 8)):
        if b:
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
    return bytes(b)


def m_random_bytes(r, b):
    b = bytearray(b)
    if not b:
        return bytes(r.randrange(256) for _ in range(8))
    i = r.randrange(len(b))
    n = r.randint(1, 16)
    b[i:i + n] = bytes(r.randrange(256) for _ in range(n))
    return bytes(b)


def m_truncate(r, b):
    if not b:
        return b
    # Favour the start (headers) a third of the time.
    i = r.randrange(min(len(b), 64)) if r.random() < 0.33 else r.randrange(len(b))
    return b[:i]


def m_delete_chunk(r, b):
    if not b:
        return b
    i = r.randrange(len(b))
    return b[:i] + b[i + r.randint(1, 64):]


def m_dup_chunk(r, b):
    if not b:
        return b
    i = r.randrange(len(b))
    n = r.randint(1, 64)
    return b[:i] + b[i:i + n] * r.randint(2, 4) + b[i:]


def m_insert_random(r, b):
    i = r.randrange(len(b) + 1)
    return b[:i] + bytes(r.randrange(256) for _ in range(r.randint(1, 64))) + b[i:]


def m_int(r, b, align=1):
    if len(b) < 8:
        return m_random_bytes(r, b)
    size = r.choice([1, 2, 4, 8])
    fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
    v = r.choice(INTS) & ((1 << (8 * size)) - 1)
    i = r.randrange(0, len(b) - size + 1)
    i -= i % align
    return b[:i] + struct.pack(r.choice("<>") + fmt, v) + b[i + size:]


def m_splice_self(r, b):
    if len(b) < 4:
        return b
    i, j = sorted(r.randrange(len(b)) for _ in range(2))
    k = r.randrange(len(b))
    return b[:k] + b[i:j] + b[k:]


BINARY = {
    "bitflip": m_bitflip, "random_bytes": m_random_bytes, "truncate": m_truncate,
    "delete_chunk": m_delete_chunk, "dup_chunk": m_dup_chunk, "insert_random": m_insert_random,
    "int": m_int, "splice": m_splice_self,
}


def t_line_delete(r, b):
    ls = lines_of(b)
    if ls:
        del ls[r.randrange(len(ls))]
    return b"".join(ls)


def t_line_dup(r, b):
    ls = lines_of(b)
    if ls:
        i = r.randrange(len(ls))
        ls[i:i] = [ls[i]] * r.randint(1, 3)
    return b"".join(ls)


def t_line_swap(r, b):
    ls = lines_of(b)
    if len(ls) > 1:
        i, j = r.randrange(len(ls)), r.randrange(len(ls))
        ls[i], ls[j] = ls[j], ls[i]
    return b"".join(ls)


def t_line_shuffle(r, b):
    ls = lines_of(b)
    if len(ls) > 2:
        i = r.randrange(len(ls))
        block = ls[i:i + r.randint(2, 20)]
        r.shuffle(block)
        ls[i:i + len(block)] = block
    return b"".join(ls)


def t_number(r, b):
    ms = list(NUM.finditer(b))
    if not ms:
        return b
    for _ in range(r.randint(1, 3)):
        m = r.choice(ms)
        b = b[:m.start()] + r.choice(EXTREMES) + b[m.end():]
        ms = list(NUM.finditer(b))
        if not ms:
            break
    return b


def t_time_back(r, b):
    """A line's first number (the time of line formats) made smaller."""
    ls = lines_of(b)
    cand = [i for i, l in enumerate(ls) if NUM.search(l) and not l.startswith(b"#")]
    if not cand:
        return b
    i = r.choice(cand)
    m = NUM.search(ls[i])
    try:
        v = int(m.group(0).split(b".")[0])
    except ValueError:
        return b
    nv = r.choice([0, v // 2, v - 1, -v, -1, (1 << 62) - 1, -(1 << 62) + 1, 1 << 61, -(1 << 61)])
    ls[i] = ls[i][:m.start()] + str(nv).encode() + ls[i][m.end():]
    return b"".join(ls)


def field_split(line):
    return re.split(rb"([,:;\t ]|\r?\n)", line)


def t_field(r, b, how):
    ls = lines_of(b)
    if not ls:
        return b
    i = r.randrange(len(ls))
    parts = field_split(ls[i])
    fields = [k for k in range(0, len(parts), 2)]
    k = r.choice(fields)
    if how == "empty":
        parts[k] = b""
    elif how == "long":
        parts[k] = r.choice([b"A", b"9", b"\xc3\xa9", b"x,"]) * r.choice([300, 70000, 1 << 20])
    elif how == "nonutf8":
        parts[k] = parts[k] + r.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80\x80"])
    elif how == "nul":
        parts[k] = parts[k] + b"\0"
    elif how == "drop":
        del parts[k:k + 2]
    elif how == "extra":
        parts[k] = parts[k] + b",x,y,z"
    ls[i] = b"".join(parts)
    return b"".join(ls)


def t_crlf(r, b):
    c = r.randrange(4)
    if c == 0:
        return b.replace(b"\n", b"\r\n")
    if c == 1:
        return b.replace(b"\n", b"\r")
    ls = lines_of(b)
    if not ls:
        return b
    i = r.randrange(len(ls))
    ls[i] = ls[i].replace(b"\n", b"\r\n") if c == 2 else ls[i][: len(ls[i]) // 2] + b"\r" + ls[i][len(ls[i]) // 2:]
    return b"".join(ls)


def t_bom(r, b):
    return r.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + b


def t_truncate_line(r, b):
    ls = lines_of(b)
    if not ls:
        return b
    i = r.randrange(len(ls))
    return b"".join(ls[:i]) + ls[i][: r.randrange(len(ls[i]) + 1)]


def t_blank(r, b):
    ls = lines_of(b)
    i = r.randrange(len(ls) + 1)
    ls.insert(i, r.choice([b"\n", b"   \n", b"#\n", b"\t\n", b",,,,,,\n", b"::::\n"]))
    return b"".join(ls)


TEXT = {
    "line_delete": t_line_delete, "line_dup": t_line_dup, "line_swap": t_line_swap,
    "line_shuffle": t_line_shuffle, "number": t_number, "number2": t_number,
    "time_back": t_time_back,
    "field_empty": lambda r, b: t_field(r, b, "empty"),
    "field_long": lambda r, b: t_field(r, b, "long"),
    "field_nonutf8": lambda r, b: t_field(r, b, "nonutf8"),
    "field_nul": lambda r, b: t_field(r, b, "nul"),
    "field_drop": lambda r, b: t_field(r, b, "drop"),
    "field_extra": lambda r, b: t_field(r, b, "extra"),
    "crlf": t_crlf, "bom": t_bom, "truncate_line": t_truncate_line, "blank": t_blank,
    "bitflip": m_bitflip, "truncate": m_truncate,
}


def q_frames(r, b, how):
    frames = b.split(b"\x7e")
    if len(frames) < 3:
        return m_bitflip(r, b)
    i = r.randrange(len(frames) - 1)
    if how == "delete":
        del frames[i]
    elif how == "dup":
        frames[i:i] = [frames[i]] * r.randint(1, 3)
    elif how == "swap":
        j = r.randrange(len(frames) - 1)
        frames[i], frames[j] = frames[j], frames[i]
    elif how == "checksum" and frames[i]:
        f = bytearray(frames[i])
        f[-1] ^= 0xFF
        frames[i] = bytes(f)
    elif how == "escape":
        f = frames[i]
        k = r.randrange(len(f) + 1)
        frames[i] = f[:k] + r.choice([b"\x7d", b"\x7d\x7d", b"\x7d\x00", b"\x7d\x5e\x7d\x5d"]) + f[k:]
    elif how == "long":
        frames[i] = bytes(r.randrange(0x7E) for _ in range(r.choice([300, 5000, 70000])))
    elif how == "field":
        frames[i] = m_int(r, frames[i] + b"\0" * 8)[: len(frames[i])]
    return b"\x7e".join(frames)


QS = {k: (lambda how: lambda r, b: q_frames(r, b, how))(k)
      for k in ("delete", "dup", "swap", "checksum", "escape", "long", "field")}


def s_record(r, b, how):
    n = len(b) // 16
    if n == 0:
        return m_int(r, b)
    if b.startswith(b"TRACER"):
        # UDP: hit a datagram header.
        heads = [m.start() for m in re.finditer(rb"TRACER-V1\.0\0", b)]
        h = r.choice(heads)
        off = h + 12 + 4 * r.randrange(3)
        v = r.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 1 << 28, r.randrange(100)])
        return b[:off] + struct.pack("<I", v) + b[off + 4:]
    i = r.randrange(n) * 16
    rec = bytearray(b[i:i + 16])
    if how == "type":
        struct.pack_into("<H", rec, 0, r.choice([0, 0x8000, 0xFFFF, r.randrange(256), 0x8000 | r.randrange(256)]))
    elif how == "par":
        off = r.choice([2, 12])
        struct.pack_into("<H" if off == 2 else "<I", rec, off, r.choice([0, 0xFFFF]) if off == 2 else r.choice(INTS) & 0xFFFFFFFF)
    elif how == "tsc":
        v = r.choice([0, 1, 1 << 62, (1 << 62) - 1, 1 << 61, (1 << 64) - 1, 1 << 63, r.randrange(1 << 40)])
        struct.pack_into("<II", rec, 4, v >> 32, v & 0xFFFFFFFF)
    elif how == "swap":
        j = r.randrange(n) * 16
        return b[:i] + b[j:j + 16] + b[i + 16:j] + b[i:i + 16] + b[j + 16:] if j > i else b
    return b[:i] + bytes(rec) + b[i + 16:]


SHARK = {"rec_" + k: (lambda how: lambda r, b: s_record(r, b, how))(k)
         for k in ("type", "par", "tsc", "swap")}
SHARK["rec_int8"] = lambda r, b: m_int(r, b, 8)


def o_stream(r, b):
    """ovni: an aligned int (clocks are u64 at header offset 8, sizes/flags in the first
    bytes of an event)."""
    return m_int(r, b, r.choice([1, 2, 4, 8]))


def j_value(r, b):
    try:
        doc = json.loads(b)
    except Exception:
        return t_number(r, b)
    paths = []

    def walk(v, p):
        paths.append(p)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, p + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, p + [i])

    walk(doc, [])
    p = r.choice(paths)
    new = r.choice([None, -1, 0, 2 ** 64, 2 ** 63, -(2 ** 63), 1e308, "x" * 1000, [], {}, "", True,
                    "\ud800x", 1.5, [1, 2, 3], {"a": 1}])
    if not p:
        return json.dumps(new).encode()
    cur = doc
    for k in p[:-1]:
        cur = cur[k]
    if r.random() < 0.2 and isinstance(cur, dict):
        del cur[p[-1]]
    else:
        cur[p[-1]] = new
    return json.dumps(doc).encode("utf-8", "surrogatepass")


def mutators_for(seed, fname):
    if fname.endswith(".json"):
        return {**{"json_" + k: v for k, v in TEXT.items()}, "json_value": j_value, "json_value2": j_value}
    if fname in seed.text:
        return TEXT
    if seed.fmt == "qs" and not fname.endswith(".dic"):
        return {**BINARY, **{"qs_" + k: v for k, v in QS.items()}}
    if seed.fmt == "shark":
        return {**BINARY, **SHARK}
    if seed.fmt == "ovni" and fname.endswith(".obs"):
        return {**BINARY, "ovni_int": o_stream, "ovni_int2": o_stream}
    return BINARY


def compress_like(name, data):
    for ext, f in ((".gz", lambda d: gzip.compress(d, 6, mtime=0)), (".xz", lzma.compress),
                   (".bz2", bz2.compress), (".zst", zstd_compress)):
        if name.endswith(ext):
            return f(data)
    if name.endswith(".zip"):
        return zip_one(name[:-4], data)
    return None


def decompress(name, data):
    try:
        if name.endswith(".gz"):
            return gzip.decompress(data)
        if name.endswith(".xz"):
            return lzma.decompress(data)
        if name.endswith(".bz2"):
            return bz2.decompress(data)
        if name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                return z.read(z.namelist()[0])
        if name.endswith(".zst"):
            p = subprocess.run(["zstd", "-q", "-d", "-c"], input=data, capture_output=True)
            return p.stdout if p.returncode == 0 else None
    except Exception:
        return None
    return None


def make_case(seeds, master, n, only=None):
    r = random.Random(f"{master}:{n}")
    pool = [s for s in seeds if not only or s.fmt in only]
    fmts = sorted({s.fmt for s in pool})
    fmt = r.choice(fmts)
    seed = r.choice([s for s in pool if s.fmt == fmt])
    files = dict(seed.files)
    fname = r.choice(seed.mutable)
    data = files[fname]
    kinds = []
    inner = decompress(fname, data) if fname.endswith((".gz", ".xz", ".bz2", ".zip", ".zst")) else None
    if inner is not None and r.random() < 0.5:
        # Mutate the text, then compress it again.
        muts = TEXT
        for _ in range(r.randint(1, 3)):
            k = r.choice(sorted(muts))
            inner = muts[k](r, inner)
            kinds.append("inner_" + k)
        data = compress_like(fname, inner)
    else:
        muts = mutators_for(seed, fname)
        for _ in range(r.choices([1, 2, 3, 4], [5, 3, 1, 1])[0]):
            k = r.choice(sorted(muts))
            data = muts[k](r, data)
            kinds.append(k)
    files[fname] = data
    return {"n": n, "seed": seed, "files": files, "file": fname, "kinds": kinds}


# ---------------------------------------------------------------------------------------
# Running


class Runner:
    def __init__(self, binary, timeout):
        self.binary = binary
        self.timeout = timeout
        self.runs = 0

    def run(self, args, cwd, stdin=None):
        self.runs += 1
        t0 = time.time()
        try:
            p = subprocess.run([self.binary] + args, cwd=cwd, capture_output=True,
                               timeout=self.timeout, stdin=subprocess.DEVNULL)
            return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"), time.time() - t0
        except subprocess.TimeoutExpired as e:
            return None, e.stdout or b"", (e.stderr or b"").decode("utf-8", "replace"), time.time() - t0


SUMMARY = re.compile(r"^capture (\d+) '.*' \((\w+)\): (\d+) events, .*?; (no diagnostics|diagnostics: (.*?)); [\d.]+ \w*B in", re.M)
DIAG = re.compile(r"(\d+) (\w+) \((\w+)\)")


def parse_summaries(stderr):
    out = []
    for m in SUMMARY.finditer(stderr):
        d = collections.Counter()
        if m.group(5):
            for c, kind, _sev in DIAG.findall(m.group(5)):
                d[kind] += int(c)
        out.append((int(m.group(1)), int(m.group(3)), d, m.group(2)))
    return out


def check_basic(name, rc, err, findings, allowed=(0, 1)):
    if rc is None:
        findings.append((f"timeout:{name}", err[-2000:]))
        return False
    if "panicked" in err or rc == 101:
        loc = re.search(r"panicked at ([^\n]*)", err)
        findings.append((f"panic:{name}:{loc.group(1) if loc else rc}", err[-3000:]))
        return False
    if rc < 0:
        findings.append((f"signal:{name}:{-rc}", err[-2000:]))
        return False
    if rc not in allowed:
        findings.append((f"exit{rc}:{name}", err[-2000:]))
        return False
    return True


def sql_rows(runner, cwd, archive, query):
    rc, out, err, _ = runner.run(["sql", "--archive", archive, "--format", "json", "-c", query], cwd)
    if rc != 0:
        return rc, err, None
    return rc, err, json.loads(out.decode("utf-8", "replace") or "[]")


def btf_data_lines(data):
    if b"\r" in data.replace(b"\r\n", b""):
        return None
    n = 0
    for line in data.split(b"\n"):
        # A UTF-8 byte-order mark is skipped at the start of any line (files joined by `cat`).
        if line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        t = line.strip(b" \t\r\n\x0b\x0c")
        if t and not t.startswith(b"#"):
            n += 1
    return n


def hw_rows(data):
    """Rows of a CSV export: the lines after the header that are not blank (None when the
    header cannot be told)."""
    if b"\r" in data.replace(b"\r\n", b"") or data.startswith(b"\xef\xbb\xbf"):
        return None
    lines = [l for l in data.split(b"\n") if l.strip(b" \t\r")]
    if not lines or not lines[0].startswith(b"Index,"):
        return None
    return len(lines) - 1


def run_case(runner, case, workdir, query_every, stats):
    seed = case["seed"]
    findings = []
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    for rel, data in case["files"].items():
        p = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    args = ["ingest", seed.target] + seed.args
    rc, out, err, dt = runner.run(args + ["--archive", "db"], workdir)
    stats["rc"][str(rc)] += 1
    if not check_basic("ingest", rc, err, findings):
        return findings, rc, err
    target = os.path.basename(seed.target)
    if rc == 1:
        # A fatal message names the file (or a file of the directory or run).
        names = [os.path.basename(k) for k in case["files"]] + [target]
        if not any(n in err for n in names):
            findings.append(("fatal_without_file", err[-2000:]))
        return findings, rc, err
    sums = parse_summaries(err)
    if len(sums) != 1:
        findings.append(("summary_unparsed", err[-2000:]))
        return findings, rc, err
    cap, events, sdiag, fmt = sums[0]
    rc2, e2, rows = sql_rows(runner, workdir, "db",
                             "SELECT kind, list(DISTINCT severity) AS sev, sum(count)::BIGINT AS n,"
                             " (SELECT count(*) FROM events) AS events FROM diagnostics GROUP BY kind")
    if rows is None:
        findings.append(("sql_failed:diagnostics", e2[-2000:]))
        return findings, rc, err
    tdiag = collections.Counter({x["kind"]: x["n"] for x in rows})
    sevs = {s for x in rows for s in x["sev"]}
    if tdiag != sdiag:
        findings.append(("summary_diag_mismatch", f"summary {dict(sdiag)} table {dict(tdiag)}"))
    # --strict
    rc3, _, e3, _ = runner.run(args + ["--strict", "--archive", "db-strict"], workdir)
    if check_basic("ingest-strict", rc3, e3, findings):
        want = 1 if sevs - {"info"} else 0
        if rc3 != want:
            findings.append((f"strict_rc{rc3}_want{want}", f"severities {sorted(sevs)}\n{e3[-1500:]}"))
    # verify
    rc4, o4, e4, _ = runner.run(["verify", "--archive", "db"], workdir)
    if check_basic("verify", rc4, e4, findings) and rc4 != 0:
        findings.append(("verify_failed", e4[-2000:]))
    # analyses, in one script
    # (cpu_load last: a span too long for its default window is refused, as documented,
    # and the first failing statement stops the script)
    stmts = []
    for a in sorted(ANALYSES, key=lambda a: a in MACROS):
        stmts += ["-c", f"SELECT count(*) FROM {a}{'()' if a in MACROS else ''}"]
    rc5, _, e5, _ = runner.run(["sql", "--archive", "db", "--format", "csv"] + stmts, workdir)
    if check_basic("analyses", rc5, e5, findings) and rc5 != 0 and not WINDOW_REFUSED.search(e5):
        findings.append(("analysis_failed", e5[-2000:]))
    if query_every and case["n"] % query_every == 0:
        for a in ANALYSES:
            rq, _, eq, _ = runner.run(["query", a, "--archive", "db", "--format", "csv"], workdir)
            if check_basic(f"query-{a}", rq, eq, findings) and rq != 0 and not WINDOW_REFUSED.search(eq):
                findings.append((f"query_failed:{a}", eq[-2000:]))
        for form in ("json", "md", "html"):
            rr, _, er, _ = runner.run(["report", "-o", "r." + form, "--archive", "db"], workdir)
            if check_basic("report-" + form, rr, er, findings) and rr != 0:
                findings.append(("report_failed:" + form, er[-2000:]))
    # export to BTF and ingest it again
    re_, _, ee, _ = runner.run(["export", str(cap), "--to", "btf", "out.btf", "--archive", "db"], workdir)
    if check_basic("export", re_, ee, findings):
        if re_ != 0:
            findings.append(("export_failed", ee[-2000:]))
        else:
            ri, _, ei, _ = runner.run(["ingest", "out.btf", "--archive", "db-btf", "--format", "btf"], workdir)
            if check_basic("reingest-btf", ri, ei, findings) and ri != 0:
                findings.append(("exported_btf_refused", ei[-2000:]))
    # a hardware-trace export without a mapping: every row is one events row (bad rows are
    # kept, README "Hardware-trace exports")
    # (An export whose header a mutation broke is not detected as one: its lines are then
    # BTF's, each an event or a malformed_line.)
    if seed.name == "hw-s32-nomap" and fmt == "hw":
        n = hw_rows(case["files"][seed.target])
        if n is not None and "input_truncated" not in tdiag and n != events:
            findings.append(("hw_rows_lost", f"{n} rows, {events} events"))
    # a S.Ha.R.K. chunk dump: every non-empty 16-byte slot is one events row (the rows a
    # record implies have a note starting `implied by`)
    if seed.fmt == "shark" and seed.target == "t.dat":
        data = case["files"][seed.target]
        n = sum(1 for i in range(0, len(data) - 15, 16) if data[i:i + 2] != b"\0\0")
        rc6, e6, got = sql_rows(runner, workdir, "db", "SELECT count(*) AS n FROM events "
                                "WHERE note IS NULL OR note NOT LIKE 'implied by %'")
        if got is not None and got[0]["n"] != n:
            findings.append(("shark_records_lost", f"{n} records, {got[0]['n']} events"))
    # every BTF data line is an event or a malformed_line
    if fmt == "btf" and case["file"] == seed.target and seed.target.endswith((".btf", ".csv", ".txt")):
        n = btf_data_lines(case["files"][seed.target])
        if n is not None and "input_truncated" not in tdiag:
            got = events + tdiag.get("malformed_line", 0)
            if got != n:
                findings.append(("btf_lines_lost", f"{n} data lines, {events} events + "
                                 f"{tdiag.get('malformed_line', 0)} malformed_line"))
    return findings, rc, err


# ---------------------------------------------------------------------------------------
# Archive damage


def archive_case(runner, seeds, master, n, workdir, stats):
    r = random.Random(f"{master}:archive:{n}")
    findings = []
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    good = [s for s in seeds if s.fmt in ("btf", "paraver", "qs") and not s.args]
    picks = r.sample(good, 2)
    for s in picks + [good[0]]:
        for rel, data in s.files.items():
            p = os.path.join(workdir, s.name, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
    for s in picks:
        rc, _, err, _ = runner.run(["ingest", os.path.join(s.name, s.target), "--archive", "db"], workdir)
        if rc != 0:
            findings.append((f"archive_seed_failed", err[-1500:]))
            return findings, {}
    files = []
    for dp, _, fs in os.walk(os.path.join(workdir, "db")):
        for f in fs:
            if f != ".lock":
                files.append(os.path.relpath(os.path.join(dp, f), workdir))
    files.sort()
    victim = r.choice(files)
    p = os.path.join(workdir, victim)
    data = read(p)
    how = r.choice(["bitflip", "truncate", "delete", "random_bytes", "json_value", "number", "empty"])
    if how == "delete":
        os.remove(p)
    else:
        if how == "json_value" and victim.endswith(".json"):
            data = j_value(r, data)
        elif how == "number":
            data = t_number(r, data)
        elif how == "empty":
            data = b""
        elif how in BINARY:
            data = BINARY[how](r, data)
        else:
            data = m_bitflip(r, data)
        with open(p, "wb") as f:
            f.write(data)
    kind = ("manifest" if victim.endswith("manifest.json") else os.path.splitext(victim)[1].lstrip(".") or "other")
    stats["archive"][f"{kind}:{how}"] += 1
    cmds = [["captures", "--archive", "db"],
            ["query", "response_times", "--archive", "db"],
            ["query", "state_time", "--archive", "db"],
            ["sql", "--archive", "db", "-c", "SELECT count(*) FROM events"],
            ["verify", "--archive", "db"],
            ["export", "1", "--to", "btf", "-", "--archive", "db"],
            ["reingest", "1", "--archive", "db"],
            ["ingest", os.path.join(good[0].name, good[0].target), "--archive", "db"],
            ["rm", "1", "--archive", "db"],
            ["captures", "--archive", "db"]]
    for c in cmds:
        rc, _, err, _ = runner.run(c, workdir)
        if not check_basic("archive-" + c[0], rc, err, findings, allowed=(0, 1, 2)):
            continue
        if rc == 1 and not re.search(r"(db|manifest|parquet|traces)", err):
            findings.append((f"archive_error_without_file:{c[0]}", err[-1500:]))
    return findings, {"victim": victim, "how": how}


# ---------------------------------------------------------------------------------------
# Saving, minimising


def sig_dir(sig):
    s = re.sub(r"[^A-Za-z0-9_.-]+", "_", sig)[:80]
    return s + "-" + hashlib.sha1(sig.encode()).hexdigest()[:8]


def save_failure(out, sig, detail, case, workdir, extra=None):
    d = os.path.join(out, "failures", sig_dir(sig))
    os.makedirs(d, exist_ok=True)
    existing = [x for x in os.listdir(d) if x.startswith("case-")]
    if len(existing) >= 3:
        return
    cd = os.path.join(d, f"case-{case}")
    if os.path.exists(cd):
        shutil.rmtree(cd)
    shutil.copytree(workdir, cd, ignore=shutil.ignore_patterns("db", "db-*", "out.btf", "r.*"))
    with open(os.path.join(cd, "finding.json"), "w") as f:
        json.dump({"signature": sig, "detail": detail, **(extra or {})}, f, indent=1)


def normalise_sig(sig):
    # Panics at one place are one defect whatever the line/column of the message.
    return re.sub(r"(\.rs):\d+:\d+.*", r"\1", sig)


def minimise(args, runner):
    """Shrinks the mutated file of a saved case (by lines for text, by byte chunks for
    binary) while run_case still reports the same signature."""
    d = args.minimise
    info = json.load(open(os.path.join(d, "finding.json")))
    seeds = build_seeds(args.shared)
    seed = next(s for s in seeds if s.name == info["seed"])
    files = {}
    for rel in seed.files:
        files[rel] = read(os.path.join(d, rel)) if os.path.exists(os.path.join(d, rel)) else seed.files[rel]
    fname = info["file"]
    want = normalise_sig(info["signature"])
    work = os.path.join(args.out, "min-work")

    def still(data):
        c = {"n": 1, "seed": seed, "files": {**files, fname: data}, "file": fname, "kinds": []}
        if want.startswith(("query_failed:", "report_failed:")):
            # Only the command that failed, after the ingest (a whole case runs 30 commands).
            if os.path.exists(work):
                shutil.rmtree(work)
            for rel, b in c["files"].items():
                os.makedirs(os.path.dirname(os.path.join(work, rel)), exist_ok=True)
                with open(os.path.join(work, rel), "wb") as f:
                    f.write(b)
            if runner.run(["ingest", seed.target] + seed.args + ["--archive", "db"], work)[0] != 0:
                return False
            what = want.split(":", 1)[1]
            cmd = (["query", what, "--format", "csv"] if want.startswith("query")
                   else ["report", "-o", "r." + what])
            rc, _, err, _ = runner.run(cmd + ["--archive", "db"], work)
            return rc == 1 and not WINDOW_REFUSED.search(err)
        fs, _, _ = run_case(runner, c, work, 0, collections.defaultdict(collections.Counter))
        return any(normalise_sig(s) == want for s, _ in fs)

    data = files[fname]
    if not still(data):
        print("does not reproduce")
        return
    textual = fname in seed.text
    unit = lines_of(data) if textual else [data[i:i + 1] for i in range(len(data))]
    smallest = 1 if textual else args.min_chunk
    out = os.path.join(d, "minimised-" + os.path.basename(fname))
    chunk = max(1, len(unit) // 2)
    while chunk >= smallest:
        i = 0
        changed = False
        while i < len(unit):
            cand = unit[:i] + unit[i + chunk:]
            if cand and still(b"".join(cand)):
                unit = cand
                changed = True
                with open(out, "wb") as f:  # the best so far, should it be stopped
                    f.write(b"".join(unit))
            else:
                i += chunk
        if not changed:
            chunk //= 2
    data = b"".join(unit)
    with open(out, "wb") as f:
        f.write(data)
    print(f"{len(data)} bytes -> {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")), "release", "tracedb"))
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"),
                    help="the shared datasets' parent (default ../shared beside the checkout)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--runs", type=int, default=0, help="stop after this many cases (0: by time)")
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--only", action="append", help="formats: btf deadlines compressed paraver ovni ovni-prv qs shark hw")
    ap.add_argument("--archive-cases", type=int, default=0, help="one archive case every N cases (0: none)")
    ap.add_argument("--query-every", type=int, default=10, help="also run `query NAME` for each analysis and `report` every N cases")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--replay", type=int, help="run case N (of --seed) again, keep its files in --out/replay")
    ap.add_argument("--minimise", help="a saved failure's case directory")
    ap.add_argument("--min-chunk", type=int, default=4,
                    help="--minimise: smallest run of bytes removed from a binary file at once")
    ap.add_argument("--list-seeds", action="store_true")
    ap.add_argument("--check-seeds", action="store_true", help="run every seed unmutated (all must pass)")
    args = ap.parse_args()
    runner = Runner(os.path.abspath(args.bin), args.timeout)
    os.makedirs(args.out, exist_ok=True)
    args.out = os.path.abspath(args.out)
    if args.minimise:
        return minimise(args, runner)
    seeds = build_seeds(args.shared if os.path.isdir(args.shared) else None)
    if args.list_seeds:
        for s in seeds:
            print(s.fmt, s.name, sorted(s.files)[:3], s.args)
        return
    stats = collections.defaultdict(collections.Counter)
    if args.check_seeds:
        bad = 0
        for i, s in enumerate(seeds):
            case = {"n": 0, "seed": s, "files": dict(s.files), "file": s.target, "kinds": []}
            fs, rc, err = run_case(runner, case, os.path.join(args.out, "seed"), 0, stats)
            print(f"{s.fmt:10} {s.name:45} exit {rc} {len(fs)} findings", flush=True)
            for sig, d in fs:
                bad += 1
                print("   ", sig, d[:800])
        sys.exit(1 if bad else 0)
    if args.replay is not None:
        case = make_case(seeds, args.seed, args.replay, args.only)
        wd = os.path.join(args.out, "replay")
        fs, rc, err = run_case(runner, case, wd, args.query_every, stats)
        print(f"seed {case['seed'].name}, file {case['file']}, mutations {case['kinds']}, ingest exit {rc}")
        print(err)
        for s, d in fs:
            print("FINDING", s, d[:1500])
        return
    # A SIGTERM (or ^C) ends the campaign with its summary written.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    t_end = time.time() + args.minutes * 60
    n = args.start
    stats["cases"]["next"] = n
    found = collections.Counter()
    t0 = time.time()
    try:
        campaign(args, runner, seeds, stats, found, t_end, t0, n)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    n = stats["cases"]["next"]
    summary = {"seed": args.seed, "cases": n - args.start, "runs": runner.runs,
               "seconds": round(time.time() - t0), "findings": dict(found),
               **{k: dict(v) for k, v in stats.items() if k != "cases"}}
    with open(os.path.join(args.out, f"summary-{args.seed}-{args.start}.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print(json.dumps({"cases": summary["cases"], "runs": summary["runs"], "seconds": summary["seconds"],
                      "findings": summary["findings"], "format": summary.get("format", {}),
                      "rc": summary.get("rc", {})}, indent=1))


def campaign(args, runner, seeds, stats, found, t_end, t0, n):
    while (args.runs and n < args.start + args.runs) or (not args.runs and time.time() < t_end):
        stats["cases"]["next"] = n
        if args.archive_cases and n % args.archive_cases == 0:
            wd = os.path.join(args.out, "work-archive")
            fs, extra = archive_case(runner, seeds, args.seed, n, wd, stats)
            for s, d in fs:
                found[normalise_sig(s)] += 1
                save_failure(args.out, normalise_sig(s), d, f"archive-{n}", wd, extra)
                print(f"[{n}] archive {extra}: {s}", flush=True)
        case = make_case(seeds, args.seed, n, args.only)
        wd = os.path.join(args.out, "work")
        fs, rc, err = run_case(runner, case, wd, args.query_every, stats)
        key = case["seed"].fmt
        stats["format"][key] += 1
        for k in case["kinds"]:
            stats["mutation"][f"{key}:{k}"] += 1
        for s, d in fs:
            ns = normalise_sig(s)
            found[ns] += 1
            save_failure(args.out, ns, d, n, wd, {"seed": case["seed"].name, "file": case["file"],
                                                   "kinds": case["kinds"], "case": n, "master_seed": args.seed})
            print(f"[{n}] {case['seed'].name} {case['file']} {case['kinds']}: {s}", flush=True)
        n += 1
        stats["cases"]["next"] = n
        if n % 50 == 0:
            print(f"... {n - args.start} cases, {runner.runs} runs, {time.time() - t0:.0f} s, "
                  f"{sum(found.values())} findings ({len(found)} kinds)", flush=True)


if __name__ == "__main__":
    main()
