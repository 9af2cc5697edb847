#!/usr/bin/env python3
"""An independent reading of Quantum Leaps QS binary streams (QSPY's input).

Written from /work/shared FORMATS.md section 3, DESIGN.md ("Tables"), the README's QS
section, table reference and diagnostics table, and QSPY's own parser (QuantumLeaps/qtools
qspy.c of QSPY 5.3, 7.2 and 8.x: QSPY_parse for the framing, QSpyRecord_process and
processUser for every record's layout per QP version, the target-info record, dictionaries;
qpc's qs.h of 5.1 and 6.3.6 for the record IDs, qf_time.c for QF_TIMEEVT_REARM), before
tracedb's QS importer was read, so that the two can be compared field by field
(differential testing). Rows: `events` (ts, source, source_type, target, target_type,
action, note, value), `entities` (name, type), `messages` (sender, receiver, tag, send_ts,
recv_ts) and the count of each `diagnostics` kind the decoding gives (lost_isr_exit,
lost_isr_entry and lost_critical_exit come from the interval derivation: not compared).
With --matlab it also compares its own decoding with QSPY's MATLAB output (qspy -m) of the
trace, line for line: a second truth.

    qs_oracle.py [--qs-dic F] [--tick-rate HZ] TRACE
                                    print the oracle's rows as CSV
    qs_oracle.py --tracedb BIN [--qs-dic F] [--tick-rate HZ] [--matlab M] TRACE...
                                    ingest each trace with BIN (one archive), compare, print
                                    every difference (the first 20 per trace; ORACLE_SHOW=N
                                    for more); exit 1 when there is one
    qs_oracle.py --generate DIR --seeds A-B [--tracedb BIN]
                                    write random QS streams DIR/gen-<seed>.bin (a .dic beside
                                    some; a tick rate, 1 Hz to 3 GHz, for some), and with --tracedb compare

The generator: QP 4.5, 5.4, 5.6, 6.1, 6.4, 6.7, 6.9.4, 7.0, 7.2, 7.3.4, 8.0, 8.1.2; the
old and the QP 8 target-info format, or a .dic with the sizes (and dictionaries when the
stream has none), or a .dic beside a target info, of its build or of another; object and
function pointers of 1, 2, 4, 8 bytes, timestamps of 1, 2, 4 bytes that wrap, signal,
event-size, queue, pool and time-event counters of 1, 2, 4 bytes; dictionaries in-band
(names with `&` and `[i]`), re-sent after a target reset or not; every record the version
defines with a layout, user records with every format byte and width, record IDs the
version does not define, posts got later (FIFO and LIFO), null senders; 0x7E/0x7D in
pointers, sequence numbers and checksums; a capture that starts mid-record, lost records,
bad checksums, records cut short or with bytes left over, a record over 512 bytes, a target
reset whose counter starts over or runs on, the tick rate left out of a time-event record.

Readings where the contract is silent: tracedb's (its choice, found by comparing; "open
readings" in the report of the session that wrote this):
* notes: the fields in wire order as `Label=value` (QSPY's labels), a transition's states
  as `State=src->dst` (only `State=src` when the record is cut before the destination,
  which is then the target), a scheduler lock's ceilings (and QK mutex records of QP 5) as
  `Ceil=before->after`, dictionary names with a leading `&` dropped and, before QP 6.9,
  `[i]` shown `<i>` (objects, functions and signals; user-record names keep brackets);
  user-record arguments unpadded (integers in decimal, hex formats as QSPY pads them
  (U8 2, U16 4, U32 and the HEX32 format 8, U64 16 digits), floats in their shortest
  form without a trailing `.0`, memory as spaced hex bytes, an empty string as nothing),
  one space before each argument but the first shown;
* a null pointer is `NULL` for every pointer size (QSPY: 4 and 8 bytes only) and an
  unknown one `0x%08X` (16 digits when 8 bytes) for every size (QSPY: `%03d` for 1 byte);
  signal 0 is `NULL`; an unknown signal its number in 8 digits;
* value: the first of Free, Len, Blocks, Size, Ctr, Tim, Pri, Nest, Ref the record has; a
  user record's first numeric argument (not a signal, object or function), else the note
  when it is a number (decimal, or hex with 0x);
* types: an object is an AO when an active-object record names its pointer (whatever its
  name then); a sender that is no AO has no type; semaphore records' objects are SEM,
  mutex records' MUTEX; a post's target is its receiver (AO), a LIFO post's its signal,
  a deferral's its queue (QUEUE);
* records cut short keep what decoded; the fields' owner missing, the source is `QF`
  (SCHED), but a post or publish cut before its sender is from `NULL`; a dictionary or
  target-info record cut short is kept as `Data=` and its hex payload, as are the records
  tracedb keeps whole (QS_EMPTY, QUERY_DATA, PEEK_DATA, QP 4's ASSERT, QP 5's TEST_RUN and
  TEST_FAIL) and an ID the version does not define (`REC_<id>`);
* record IDs: 48/49 are the mutex records before QP 7.1 in every version (reserved in QP
  5.1's qs.h: QSPY 7 reads them so); QUERY_DATA (67) from 6.2, QF_NEW_REF (27) from
  6.2, 23 QF_MPOOL_INIT before 6.2 and reserved until QF_NEW_ATTEMPT in 6.9 (qpc 6.3.6's
  qs.h); 64 to 69 are undefined in QP 4; RX_STATUS of QP before 6.6 is not generated
  (tracedb reads a timestamp before its byte there: not checked);
* back-to-back flags are an idle line (QSPY: a bad checksum); a post waiting when the
  target resets is never received; a message names its receiver as its post does;
* a time beyond 2^62 - 1 ns once scaled is kept at 2^62 - 1; `time_out_of_range` counts
  the records whose own timestamp is beyond, not those that take the last time over.
"""
import math
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (the oracles' shared plumbing, beside this file)

FLAG, ESC = 0x7E, 0x7D
MAX_RECORD = 512

# --------------------------------------------------------------------------------------
# Record-ID tables (FORMATS.md §3, qs_copy.h of QP 5.1, qspy.c of QSPY 7.2 and 8.x)


def record_names(v):
    """{id: name without QS_} and the first user record id, for QP version v (e.g. 694)."""
    if v < 550:
        t = {0: "QP_RESET"}
        t.update(enumerate(["QEP_STATE_ENTRY", "QEP_STATE_EXIT", "QEP_STATE_INIT",
                            "QEP_INIT_TRAN", "QEP_INTERN_TRAN", "QEP_TRAN", "QEP_IGNORED",
                            "QEP_DISPATCH", "QEP_UNHANDLED", "QF_ACTIVE_ADD",
                            "QF_ACTIVE_REMOVE", "QF_ACTIVE_SUBSCRIBE",
                            "QF_ACTIVE_UNSUBSCRIBE", "QF_ACTIVE_POST_FIFO",
                            "QF_ACTIVE_POST_LIFO",
                            "QF_ACTIVE_GET", "QF_ACTIVE_GET_LAST", "QF_EQUEUE_INIT",
                            "QF_EQUEUE_POST_FIFO", "QF_EQUEUE_POST_LIFO", "QF_EQUEUE_GET",
                            "QF_EQUEUE_GET_LAST", "QF_MPOOL_INIT", "QF_MPOOL_GET",
                            "QF_MPOOL_PUT", "QF_PUBLISH", None, "QF_NEW", "QF_GC_ATTEMPT",
                            "QF_GC", "QF_TICK", "QF_TIMEEVT_ARM", "QF_TIMEEVT_AUTO_DISARM",
                            "QF_TIMEEVT_DISARM_ATTEMPT", "QF_TIMEEVT_DISARM",
                            "QF_TIMEEVT_REARM", "QF_TIMEEVT_POST", "QF_TIMEEVT_CTR",
                            "QF_CRIT_ENTRY", "QF_CRIT_EXIT", "QF_ISR_ENTRY", "QF_ISR_EXIT",
                            "QF_INT_DISABLE", "QF_INT_ENABLE", "QF_ACTIVE_POST_ATTEMPT",
                            "QF_EQUEUE_POST_ATTEMPT", "QF_MPOOL_GET_ATTEMPT"], 1))
        # 48/49 are reserved in QP 5.1's qs.h; QSPY (7.x) reads them as the mutex records
        # of QP before 7.1 whatever the version, and so does tracedb (open reading)
        t.update({48: "MUTEX_LOCK", 49: "MUTEX_UNLOCK",
                  50: "QK_MUTEX_LOCK", 51: "QK_MUTEX_UNLOCK", 52: "QK_SCHEDULE",
                  60: "SIG_DICT", 61: "OBJ_DICT", 62: "FUN_DICT", 63: "USR_DICT",
                  64: "EMPTY", 67: "TEST_RUN", 68: "TEST_FAIL", 69: "ASSERT_FAIL"})
        if v < 500:  # QP 4.x: 63 is QS_ASSERT (FORMATS.md §3), 64 to 69 reserved
            t[63] = "ASSERT"
            for i in range(64, 70):
                t[i] = None
        return {k: n for k, n in t.items() if n}, 70
    names = ["EMPTY", "QEP_STATE_ENTRY", "QEP_STATE_EXIT", "QEP_STATE_INIT", "QEP_INIT_TRAN",
             "QEP_INTERN_TRAN", "QEP_TRAN", "QEP_IGNORED", "QEP_DISPATCH", "QEP_UNHANDLED",
             "QF_ACTIVE_DEFER", "QF_ACTIVE_RECALL", "QF_ACTIVE_SUBSCRIBE",
             "QF_ACTIVE_UNSUBSCRIBE", "QF_ACTIVE_POST", "QF_ACTIVE_POST_LIFO",
             "QF_ACTIVE_GET", "QF_ACTIVE_GET_LAST", "QF_ACTIVE_RECALL_ATTEMPT",
             "QF_EQUEUE_POST", "QF_EQUEUE_POST_LIFO", "QF_EQUEUE_GET", "QF_EQUEUE_GET_LAST",
             "QF_NEW_ATTEMPT", "QF_MPOOL_GET", "QF_MPOOL_PUT", "QF_PUBLISH", "QF_NEW_REF",
             "QF_NEW", "QF_GC_ATTEMPT", "QF_GC", "QF_TICK", "QF_TIMEEVT_ARM",
             "QF_TIMEEVT_AUTO_DISARM", "QF_TIMEEVT_DISARM_ATTEMPT", "QF_TIMEEVT_DISARM",
             "QF_TIMEEVT_REARM", "QF_TIMEEVT_POST", "QF_DELETE_REF", "QF_CRIT_ENTRY",
             "QF_CRIT_EXIT", "QF_ISR_ENTRY", "QF_ISR_EXIT", "QF_INT_DISABLE",
             "QF_INT_ENABLE", "QF_ACTIVE_POST_ATTEMPT", "QF_EQUEUE_POST_ATTEMPT",
             "QF_MPOOL_GET_ATTEMPT", "SCHED_PREEMPT", "SCHED_RESTORE", "SCHED_LOCK",
             "SCHED_UNLOCK", "SCHED_NEXT", "SCHED_IDLE", "ENUM_DICT", "QEP_TRAN_HIST",
             "QEP_TRAN_EP", "QEP_TRAN_XP", "TEST_PAUSED", "TEST_PROBE_GET", "SIG_DICT",
             "OBJ_DICT", "FUN_DICT", "USR_DICT", "TARGET_INFO", "TARGET_DONE", "RX_STATUS",
             "QUERY_DATA", "PEEK_DATA", "ASSERT_FAIL", "QF_RUN", "SEM_TAKE", "SEM_BLOCK",
             "SEM_SIGNAL", "SEM_BLOCK_ATTEMPT", "MTX_LOCK", "MTX_BLOCK", "MTX_UNLOCK",
             "MTX_LOCK_ATTEMPT", "MTX_BLOCK_ATTEMPT", "MTX_UNLOCK_ATTEMPT",
             "QF_ACTIVE_DEFER_ATTEMPT"]
    t = dict(enumerate(names))
    if v < 620:
        t.update({10: "QF_ACTIVE_ADD", 11: "QF_ACTIVE_REMOVE", 18: "QF_EQUEUE_INIT",
                  38: "QF_TIMEEVT_CTR"})
    if v < 690:  # QF_MPOOL_INIT before 6.2 (as in QP 5), then reserved until QF_NEW_ATTEMPT
        t[23] = "QF_MPOOL_INIT" if v < 620 else None
    if v < 620:
        t[27] = None
    if v < 620:  # QUERY_DATA came with QUTest (qpc 6.3.6 qs.h has it at 67)
        t[67] = None
    if v < 710:
        t.update({48: "MUTEX_LOCK", 49: "MUTEX_UNLOCK"})
    if v < 660:
        t.update({14: "QF_ACTIVE_POST_FIFO", 19: "QF_EQUEUE_POST_FIFO"})
    if v < 700:
        t[54] = "SCHED_RESUME"
    if v >= 800:
        t[56] = t[57] = None
    if v < 690:
        t[70] = None
    if v < 700:
        for i in range(71, 81):
            t[i] = None
    if v < 800:
        t[81] = None
    quser = 70 if v < 660 else 100
    return {k: n for k, n in t.items() if n and k < quser}, quser


# field kinds: t time, o object ptr, f function ptr, s signal, e event size, q queue ctr,
# p pool ctr, c time-event ctr, 1/2/4 unsigned ints, z NUL-terminated string
def canon(name):
    """QP before 6.6 names the FIFO posts QF_ACTIVE_POST_FIFO, QF_EQUEUE_POST_FIFO."""
    return name.replace("_POST_FIFO", "_POST") if name else name


def layout(name, v):
    """The fields of a predefined record (QSpyRecord_process), as (label, kind) pairs."""
    name = canon(name)
    # the tick rate (QP 5 on): some QP 5 targets leave it out (the QP 5 dpp.qs sample), so
    # it is read only when the payload has room for it and the fields after it
    rate = [("Rate", "?")] if v >= 500 else []
    L = {
        "QEP_STATE_ENTRY": "Obj:o State:f",
        "QEP_STATE_EXIT": "Obj:o State:f",
        "QEP_STATE_INIT": "Obj:o Src:f Dst:f",
        "QEP_TRAN_HIST": "Obj:o Src:f Dst:f",
        "QEP_TRAN_EP": "Obj:o Src:f Dst:f",
        "QEP_TRAN_XP": "Obj:o Src:f Dst:f",
        "QEP_INIT_TRAN": "t:t Obj:o State:f",
        "QEP_INTERN_TRAN": "t:t Sig:s Obj:o State:f",
        "QEP_IGNORED": "t:t Sig:s Obj:o State:f",
        "QEP_DISPATCH": "t:t Sig:s Obj:o State:f",
        "QEP_TRAN": "t:t Sig:s Obj:o Src:f Dst:f",
        "QEP_UNHANDLED": "Sig:s Obj:o State:f",
        "QF_ACTIVE_DEFER": "t:t Obj:o Que:o Sig:s Pool:1 Ref:1",
        "QF_ACTIVE_DEFER_ATTEMPT": "t:t Obj:o Que:o Sig:s Pool:1 Ref:1",
        "QF_ACTIVE_RECALL": "t:t Obj:o Que:o Sig:s Pool:1 Ref:1",
        "QF_ACTIVE_ADD": "t:t Obj:o Pri:1",
        "QF_ACTIVE_REMOVE": "t:t Obj:o Pri:1",
        "QF_ACTIVE_RECALL_ATTEMPT": "t:t Obj:o Que:o",
        "QF_EQUEUE_INIT": "Obj:o Len:q",
        "QF_ACTIVE_SUBSCRIBE": "t:t Sig:s Obj:o",
        "QF_ACTIVE_UNSUBSCRIBE": "t:t Sig:s Obj:o",
        "QF_ACTIVE_POST": "t:t Sdr:o Sig:s Obj:o Pool:1 Ref:1 Free:q Min:q",
        "QF_ACTIVE_POST_ATTEMPT": "t:t Sdr:o Sig:s Obj:o Pool:1 Ref:1 Free:q Mar:q",
        "QF_ACTIVE_POST_LIFO": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q Min:q",
        "QF_ACTIVE_GET": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q",
        "QF_EQUEUE_GET": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q",
        "QF_ACTIVE_GET_LAST": "t:t Sig:s Obj:o Pool:1 Ref:1",
        "QF_EQUEUE_GET_LAST": "t:t Sig:s Obj:o Pool:1 Ref:1",
        "QF_EQUEUE_POST": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q Min:q",
        "QF_EQUEUE_POST_LIFO": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q Min:q",
        "QF_EQUEUE_POST_ATTEMPT": "t:t Sig:s Obj:o Pool:1 Ref:1 Free:q Mar:q",
        "QF_MPOOL_GET": "t:t Obj:o Free:p Min:p",
        "QF_MPOOL_GET_ATTEMPT": "t:t Obj:o Free:p Mar:p",
        "QF_MPOOL_PUT": "t:t Obj:o Free:p",
        "QF_NEW": "t:t Size:e Sig:s",
        "QF_NEW_ATTEMPT": "t:t Size:e Sig:s",
        "QF_PUBLISH": "t:t Sdr:o Sig:s Pool:1 Ref:1",
        "QF_NEW_REF": "t:t Sig:s Pool:1 Ref:1",
        "QF_DELETE_REF": "t:t Sig:s Pool:1 Ref:1",
        "QF_GC": "t:t Sig:s Pool:1 Ref:1",
        "QF_GC_ATTEMPT": "t:t Sig:s Pool:1 Ref:1",
        "QF_TICK": "Ctr:c",
        "QF_TIMEEVT_ARM": "t:t Obj:o AO:o Tim:c Int:c",
        "QF_TIMEEVT_DISARM": "t:t Obj:o AO:o Tim:c Int:c",
        "QF_TIMEEVT_CTR": "t:t Obj:o AO:o Tim:c Int:c",
        "QF_TIMEEVT_AUTO_DISARM": "Obj:o AO:o",
        "QF_TIMEEVT_DISARM_ATTEMPT": "t:t Obj:o AO:o",
        "QF_TIMEEVT_REARM": "t:t Obj:o AO:o Tim:c Int:c",
        "QF_TIMEEVT_POST": "t:t Obj:o Sig:s AO:o",
        "QF_CRIT_ENTRY": "t:t Nest:1",
        "QF_CRIT_EXIT": "t:t Nest:1",
        "QF_ISR_ENTRY": "t:t Nest:1 Pri:1",
        "QF_ISR_EXIT": "t:t Nest:1 Pri:1",
        "SCHED_PREEMPT": "t:t Pri:1 Prev:1",
        "SCHED_RESTORE": "t:t Pri:1 Prev:1",
        "MUTEX_LOCK": "t:t Pro:1 Ceil:1",
        "MUTEX_UNLOCK": "t:t Pro:1 Ceil:1",
        "SCHED_LOCK": "t:t Prev:1 Ceil:1",
        "SCHED_UNLOCK": "t:t Prev:1 Ceil:1",
        "SCHED_NEXT": "t:t Pri:1 Prev:1",
        "SCHED_IDLE": "t:t Prev:1",
        "ENUM_DICT": "Value:1 Grp:1 Name:z",
        "TEST_PAUSED": "",
        "EMPTY": "Data:r",
        "QP_RESET": "Data:r",
        "ASSERT": "t:t Data:r",
        "QUERY_DATA": "t:t Data:r",
        "PEEK_DATA": "t:t Data:r",
        "TEST_RUN": "Data:r",
        "TEST_FAIL": "Data:r",
        "QF_MPOOL_INIT": "Obj:o Blocks:p",
        "SCHED_RESUME": "t:t Pri:1 Prev:1",
        "QK_MUTEX_LOCK": "t:t Pro:1 Ceil:1",
        "QK_MUTEX_UNLOCK": "t:t Pro:1 Ceil:1",
        "QK_SCHEDULE": "t:t Pri:1 Prev:1",
        "QF_INT_DISABLE": "t:t Nest:1 Pri:1",
        "QF_INT_ENABLE": "t:t Nest:1 Pri:1",
        "TEST_PROBE_GET": "t:t Fun:f Data:4",
        "SIG_DICT": "Sig:s Obj:o Name:z",
        "OBJ_DICT": "Ptr:o Name:z",
        "FUN_DICT": "Ptr:f Name:z",
        "USR_DICT": "Rec:1 Name:z",
        "TARGET_DONE": "t:t Rec:1",
        "RX_STATUS": "Status:1",
        "ASSERT_FAIL": "t:t Loc:2 Mod:z",
        "QF_RUN": "",
        "SEM_TAKE": "t:t Obj:o Thr:1 Cnt:1",
        "SEM_BLOCK": "t:t Obj:o Thr:1 Cnt:1",
        "SEM_SIGNAL": "t:t Obj:o Thr:1 Cnt:1",
        "SEM_BLOCK_ATTEMPT": "t:t Obj:o Thr:1 Cnt:1",
        "MTX_LOCK": "t:t Obj:o Hldr:1 Nest:1",
        "MTX_UNLOCK": "t:t Obj:o Hldr:1 Nest:1",
        "MTX_LOCK_ATTEMPT": "t:t Obj:o Hldr:1 Nest:1",
        "MTX_UNLOCK_ATTEMPT": "t:t Obj:o Hldr:1 Nest:1",
        "MTX_BLOCK": "t:t Obj:o Hldr:1 Thr:1",
        "MTX_BLOCK_ATTEMPT": "t:t Obj:o Hldr:1 Thr:1",
    }.get(name)
    if L is None:
        return None
    fields = [tuple(f.split(":")) for f in L.split()]
    if name in ("QF_TICK", "QF_TIMEEVT_ARM", "QF_TIMEEVT_DISARM", "QF_TIMEEVT_CTR",
                "QF_TIMEEVT_AUTO_DISARM", "QF_TIMEEVT_DISARM_ATTEMPT", "QF_TIMEEVT_POST",
                "QF_TIMEEVT_REARM"):
        fields += rate
    if name == "QF_TIMEEVT_REARM":  # qf_time.c: QS_2U8_PRE_(tickRate, wasArmed)
        fields += [("Was", "1")]
    return fields


# --------------------------------------------------------------------------------------
# Configuration: target-info record, .dic file


SIZE_OPTS = {"T": "tstamp", "O": "obj", "F": "fun", "S": "sig", "E": "evt", "Q": "queue",
             "P": "pool", "B": "poolblk", "C": "tevt"}
DEFAULT_SIZES = {"tstamp": 4, "obj": 4, "fun": 4, "sig": 2, "evt": 2, "queue": 1, "pool": 2,
                 "poolblk": 2, "tevt": 2}  # QSPY's defaults for options a .dic leaves out


def read_dic(path):
    """A `qspy -d` dictionary file: (version, sizes, build, {kind: {key: name}}, problems)."""
    version, sizes, build = None, dict(DEFAULT_SIZES), None
    dicts = {"obj": {}, "fun": {}, "usr": {}, "sig": {}}
    section, bad = None, 0
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if section is None:
            if line.endswith("-Dic:"):
                section = {"Obj-Dic:": "obj", "Fun-Dic:": "fun", "Usr-Dic:": "usr",
                           "Sig-Dic:": "sig"}.get(line)
                if section is None:
                    bad += 1
                    section = "skip"
                section = (section, None)
                continue
            for opt in line.split():
                if opt.startswith("-v"):
                    version = int(opt[2:])
                elif opt.startswith("-t"):
                    build = opt[2:]
                elif len(opt) >= 3 and opt[0] == "-" and opt[1] in SIZE_OPTS:
                    sizes[SIZE_OPTS[opt[1]]] = int(opt[2:])
            continue
        kind, keysize = section
        if line == "***":
            section = None
            continue
        if keysize is None:
            section = (kind, int(line))
            continue
        parts = line.split(None, 2 if kind == "sig" else 1)
        try:
            if kind == "sig":
                dicts["sig"][(int(parts[0]), int(parts[1], 16))] = parts[2]
            elif kind != "skip":
                dicts[kind][int(parts[0], 16)] = parts[1]
        except (ValueError, IndexError):
            bad += 1
    return version, sizes, build, dicts, bad


def parse_target_info(payload):
    """QS_TARGET_INFO (qspy.c): (reset, version, sizes, build) or None when too short."""
    if len(payload) < 1:
        return None
    b0 = payload[0]
    if (b0 & 3) == 2:  # new format (QP 8)
        if len(payload) < 5 + 13:
            return None
        t = (~struct.unpack_from("<I", payload, 1)[0]) & 0xFFFFFFFF
        reset, rest = (b0 >> 6) & 1, payload[5:18]
        version = t % 10000
    else:
        if len(payload) < 3 + 13:
            return None
        t = struct.unpack_from("<H", payload, 1)[0]
        reset, rest, version = b0 & 1, payload[3:16], t & 0x7FFF
    sizes = {"sig": rest[0] & 15, "evt": rest[0] >> 4, "queue": rest[1] & 15,
             "tevt": rest[1] >> 4, "poolblk": rest[2] & 15, "pool": rest[2] >> 4,
             "obj": rest[3] & 15, "fun": rest[3] >> 4, "tstamp": rest[4] & 15}
    build = "%02d%02d%02d_%02d%02d%02d" % (rest[12], rest[11], rest[10], rest[9], rest[8],
                                           rest[7])
    return reset, version, sizes, build


# --------------------------------------------------------------------------------------
# Framing (QSPY_parse)


def frames(data):
    """Yield (kind, start offset, unescaped bytes) per frame: 'ok', 'bad', 'short', 'long',
    and 'tail' for bytes after the last flag."""
    buf, start, esc, i = bytearray(), 0, False, 0
    n = len(data)
    while i < n:
        b = data[i]
        if b == FLAG:
            s = sum(buf) & 0xFF
            if s != 0xFF:
                yield ("bad", start, bytes(buf))
            elif len(buf) < 3:
                yield ("short", start, bytes(buf))
            else:
                yield ("ok", start, bytes(buf))
            buf, esc, start = bytearray(), False, i + 1
        elif esc:
            esc = False
            buf.append(b ^ 0x20)
        elif b == ESC:
            esc = True
        else:
            buf.append(b)
        if len(buf) > MAX_RECORD:
            yield ("long", start, bytes(buf))
            j = data.find(bytes([FLAG]), i + 1)  # tracedb: skipped up to the next flag
            if j < 0:
                return
            buf, esc, start, i = bytearray(), False, j + 1, j + 1
            continue
        i += 1
    if buf or esc:
        yield ("tail", start, bytes(buf))


# --------------------------------------------------------------------------------------
# Decoding records into rows


class Short(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def left(self):
        return len(self.data) - self.pos

    def uint(self, n):
        if n == 0:
            return 0
        if self.left() < n:
            self.pos = len(self.data)
            raise Short()
        v = int.from_bytes(self.data[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def sint(self, n):
        v = self.uint(n)
        return v - (1 << (8 * n)) if v >> (8 * n - 1) else v

    def string(self):
        j = self.data.find(b"\0", self.pos)
        if j < 0:
            self.pos = len(self.data)
            raise Short()
        s = self.data[self.pos:j].decode("utf-8", "replace")
        self.pos = j + 1
        return s


class Capture:
    """One QS capture read as tracedb should read it."""

    def __init__(self, path, dic_path=None, tick_rate=None):
        self.path, self.tick_rate = path, tick_rate
        with open(path, "rb") as f:
            self.data = f.read()
        if dic_path is None:
            base = os.path.splitext(path)[0] + ".dic"
            dic_path = base if os.path.exists(base) else None
        self.dic = read_dic(dic_path) if dic_path else None
        self.events, self.diags = [], {}
        self.entities = {}  # name -> type (first seen)
        self.entity_order = []
        self.messages = []

    def diag(self, kind, n=1):
        self.diags[kind] = self.diags.get(kind, 0) + n

    # ---- configuration
    def configure(self, fr):
        self.cfg = None
        for kind, _start, buf in fr:
            if kind == "ok" and buf[1] == 64:
                ti = parse_target_info(buf[2:-1])
                if ti and valid_sizes(ti[2]):
                    self.cfg = {"version": ti[1], "sizes": ti[2], "build": ti[3],
                                "from": "target info"}
                    break
        self.dic_dicts = {"obj": {}, "fun": {}, "usr": {}, "sig": {}}
        if self.dic:
            version, sizes, build, dicts, bad = self.dic
            if bad:
                self.diag("malformed_companion", bad)
            if self.cfg is None:
                self.cfg = {"version": version or 0, "sizes": sizes, "build": build,
                            "from": "dic"}
                self.dic_dicts = dicts
            elif (build and build != self.cfg["build"]) or sizes != self.cfg["sizes"]:
                self.diag("dic_mismatch")
            else:
                self.dic_dicts = dicts
        if self.cfg is None:
            sys.exit("%s: no target info and no .dic" % self.path)
        v = self.cfg["version"]
        self.names, self.quser = record_names(v)
        self.empty_id = 64 if v < 550 else 0

    def reset_dicts(self):
        self.inband = {"obj": {}, "fun": {}, "usr": {}, "sig": {}, "enum": {}}

    # ---- names
    def obj(self, key, kind="obj"):
        size = self.cfg["sizes"][kind]
        if key == 0:  # Dictionary_get: NULL (for pointers of 4 and 8 bytes; tracedb: all)
            return "NULL"
        name = self.inband[kind].get(key)
        if name is None:
            name = self.dic_dicts[kind].get(key)
        if name is not None:
            return name
        if key not in self.unknown[kind]:
            self.unknown[kind].add(key)
            self.diag("unknown_object")
        return ("0x%016X" if size > 4 else "0x%08X") % key

    def sig(self, sig, obj):
        if sig == 0:  # SigDictionary_get: signal 0 is NULL
            return "NULL"
        for d in (self.inband["sig"], self.dic_dicts["sig"]):
            if obj and (sig, obj) in d:
                return d[(sig, obj)]
            if (sig, 0) in d:
                return d[(sig, 0)]
            if not obj:
                for (s, _o), name in sorted(d.items()):
                    if s == sig:
                        return name
        return "%08d" % sig

    def clean(self, name, brackets=True):
        if name.startswith("&"):
            name = name[1:]
        if brackets and self.cfg["version"] < 690:
            name = name.replace("[", "<").replace("]", ">")
        return name

    # ---- time
    def time(self, raw):
        bits = 8 * self.cfg["sizes"]["tstamp"]
        if self.last_raw is not None and raw < self.last_raw:
            if self.after_reset:
                self.diag("time_restarted")
                self.offset = self.last_abs
            else:
                self.wraps += 1
                self.offset += 1 << bits
        self.after_reset = False
        self.last_raw = raw
        self.last_abs = raw + self.offset
        return self.last_abs


def valid_sizes(s):
    return (s["obj"] in (1, 2, 4, 8) and s["fun"] in (1, 2, 4, 8)
            and s["tstamp"] in (1, 2, 4) and s["sig"] in (1, 2, 4))


# action -> (source field, source type, target field, target type, value field); a source
# or target in quotes is that fixed name
ROLES = {
    "QEP_STATE_ENTRY": ("Obj", "SM", "State", "FUNC", None),
    "QEP_STATE_EXIT": ("Obj", "SM", "State", "FUNC", None),
    "QEP_STATE_INIT": ("Obj", "SM", "Dst", "FUNC", None),
    "QEP_TRAN_HIST": ("Obj", "SM", "Dst", "FUNC", None),
    "QEP_TRAN_EP": ("Obj", "SM", "Dst", "FUNC", None),
    "QEP_TRAN_XP": ("Obj", "SM", "Dst", "FUNC", None),
    "QEP_INIT_TRAN": ("Obj", "SM", "State", "FUNC", None),
    "QEP_INTERN_TRAN": ("Obj", "SM", "Sig", "QSIG", None),
    "QEP_IGNORED": ("Obj", "SM", "Sig", "QSIG", None),
    "QEP_DISPATCH": ("Obj", "SM", "Sig", "QSIG", None),
    "QEP_UNHANDLED": ("Obj", "SM", "Sig", "QSIG", None),
    "QEP_TRAN": ("Obj", "SM", "Dst", "FUNC", None),
    "QF_ACTIVE_DEFER": ("Obj", "AO", "Que", "QUEUE", "Ref"),
    "QF_ACTIVE_DEFER_ATTEMPT": ("Obj", "AO", "Que", "QUEUE", "Ref"),
    "QF_ACTIVE_RECALL": ("Obj", "AO", "Que", "QUEUE", "Ref"),
    "QF_ACTIVE_RECALL_ATTEMPT": ("Obj", "AO", "Que", "QUEUE", None),
    "QF_ACTIVE_ADD": ("Obj", "AO", None, None, "Pri"),
    "QF_ACTIVE_REMOVE": ("Obj", "AO", None, None, "Pri"),
    "QF_EQUEUE_INIT": ("Obj", "QUEUE", None, None, "Len"),
    "QF_ACTIVE_SUBSCRIBE": ("Obj", "AO", "Sig", "QSIG", None),
    "QF_ACTIVE_UNSUBSCRIBE": ("Obj", "AO", "Sig", "QSIG", None),
    "QF_ACTIVE_POST": ("Sdr", "AO", "Obj", "AO", "Free"),
    "QF_ACTIVE_POST_ATTEMPT": ("Sdr", "AO", "Obj", "AO", "Free"),
    "QF_ACTIVE_POST_LIFO": ("Obj", "AO", "Sig", "QSIG", "Free"),
    "QF_ACTIVE_GET": ("Obj", "AO", "Sig", "QSIG", "Free"),
    "QF_ACTIVE_GET_LAST": ("Obj", "AO", "Sig", "QSIG", "Ref"),
    "QF_EQUEUE_POST": ("Obj", "QUEUE", "Sig", "QSIG", "Free"),
    "QF_EQUEUE_POST_LIFO": ("Obj", "QUEUE", "Sig", "QSIG", "Free"),
    "QF_EQUEUE_POST_ATTEMPT": ("Obj", "QUEUE", "Sig", "QSIG", "Free"),
    "QF_EQUEUE_GET": ("Obj", "QUEUE", "Sig", "QSIG", "Free"),
    "QF_EQUEUE_GET_LAST": ("Obj", "QUEUE", "Sig", "QSIG", "Ref"),
    "QF_MPOOL_GET": ("Obj", "POOL", None, None, "Free"),
    "QF_MPOOL_GET_ATTEMPT": ("Obj", "POOL", None, None, "Free"),
    "QF_MPOOL_PUT": ("Obj", "POOL", None, None, "Free"),
    "QF_NEW": ("'QF", "SCHED", "Sig", "QSIG", "Size"),
    "QF_NEW_ATTEMPT": ("'QF", "SCHED", "Sig", "QSIG", "Size"),
    "QF_PUBLISH": ("Sdr", "AO", "Sig", "QSIG", "Ref"),
    "QF_NEW_REF": ("'QF", "SCHED", "Sig", "QSIG", "Ref"),
    "QF_DELETE_REF": ("'QF", "SCHED", "Sig", "QSIG", "Ref"),
    "QF_GC": ("'QF", "SCHED", "Sig", "QSIG", "Ref"),
    "QF_GC_ATTEMPT": ("'QF", "SCHED", "Sig", "QSIG", "Ref"),
    "QF_TICK": ("'QF", "SCHED", None, None, "Ctr"),
    "QF_TIMEEVT_ARM": ("Obj", "TIMER", "AO", "AO", "Tim"),
    "QF_TIMEEVT_DISARM": ("Obj", "TIMER", "AO", "AO", "Tim"),
    "QF_TIMEEVT_CTR": ("Obj", "TIMER", "AO", "AO", "Tim"),
    "QF_TIMEEVT_REARM": ("Obj", "TIMER", "AO", "AO", "Tim"),
    "QF_TIMEEVT_AUTO_DISARM": ("Obj", "TIMER", "AO", "AO", None),
    "QF_TIMEEVT_DISARM_ATTEMPT": ("Obj", "TIMER", "AO", "AO", None),
    "QF_TIMEEVT_POST": ("Obj", "TIMER", "AO", "AO", None),
    "QF_CRIT_ENTRY": ("'QF", "SCHED", None, None, "Nest"),
    "QF_CRIT_EXIT": ("'QF", "SCHED", None, None, "Nest"),
    "QF_ISR_ENTRY": ("'ISR", "I", None, None, "Pri"),
    "QF_INT_DISABLE": ("'QF", "SCHED", None, None, "Pri"),
    "QF_INT_ENABLE": ("'QF", "SCHED", None, None, "Pri"),
    "QF_MPOOL_INIT": ("Obj", "POOL", None, None, "Blocks"),
    "QF_ISR_EXIT": ("'ISR", "I", None, None, "Pri"),
}
for _a in ("SCHED_NEXT", "SCHED_PREEMPT", "SCHED_RESTORE", "SCHED_RESUME"):
    ROLES[_a] = ("'QF", "SCHED", None, None, "Pri")
for _a in ("SEM_TAKE", "SEM_BLOCK", "SEM_SIGNAL", "SEM_BLOCK_ATTEMPT"):
    ROLES[_a] = ("Obj", "SEM", None, None, None)
for _a in ("MTX_BLOCK", "MTX_BLOCK_ATTEMPT"):
    ROLES[_a] = ("Obj", "MUTEX", None, None, None)
for _a in ("MTX_LOCK", "MTX_UNLOCK", "MTX_LOCK_ATTEMPT", "MTX_UNLOCK_ATTEMPT"):
    ROLES[_a] = ("Obj", "MUTEX", None, None, "Nest")
for _a in ("SCHED_LOCK", "SCHED_UNLOCK",
           "SCHED_IDLE", "MUTEX_LOCK", "MUTEX_UNLOCK", "QK_MUTEX_LOCK",
           "QK_MUTEX_UNLOCK", "QK_SCHEDULE"):
    ROLES[_a] = ("'QF", "SCHED", None, None, None)
AO_FIELDS = {"QF_ACTIVE_POST": "Obj", "QF_ACTIVE_POST_ATTEMPT": "Obj",
             "QF_ACTIVE_POST_LIFO": "Obj", "QF_ACTIVE_GET": "Obj",
             "QF_ACTIVE_GET_LAST": "Obj", "QF_ACTIVE_SUBSCRIBE": "Obj",
             "QF_ACTIVE_UNSUBSCRIBE": "Obj", "QF_ACTIVE_DEFER": "Obj",
             "QF_ACTIVE_DEFER_ATTEMPT": "Obj", "QF_ACTIVE_RECALL": "Obj",
             "QF_ACTIVE_RECALL_ATTEMPT": "Obj", "QF_ACTIVE_ADD": "Obj",
             "QF_ACTIVE_REMOVE": "Obj", "QF_TIMEEVT_ARM": "AO", "QF_TIMEEVT_DISARM": "AO",
             "QF_TIMEEVT_CTR": "AO", "QF_TIMEEVT_REARM": "AO",
             "QF_TIMEEVT_AUTO_DISARM": "AO", "QF_TIMEEVT_DISARM_ATTEMPT": "AO",
             "QF_TIMEEVT_POST": "AO"}

VALUE_FIELDS = ["Free", "Len", "Blocks", "Size", "Ctr", "Tim", "Pri", "Nest", "Ref"]
SENDER_ROLE = {"QF_ACTIVE_POST", "QF_ACTIVE_POST_ATTEMPT", "QF_PUBLISH"}
def user_args(cap, r, v):
    """QSpyRecord_processUser: the arguments as text, and the first numeric one."""
    out, first = [], None
    try:
        user_args_into(cap, r, v, out)
    except Short:
            return [t for t, _ in out], first_number(out), True
    return [t for t, _ in out], first_number(out), False


def number(text):
    """A note that is a decimal number, or a hexadecimal one with 0x, else None."""
    t = text  # exactly: `12 ` (an empty argument after it) is no number
    # (Python's float() would also take surrounding spaces, `1_000`, `+inf` and `nan`.)
    if t != t.strip() or "_" in t:
        return None
    try:
        if t[:2].lower() == "0x":
            return int(t, 16) if t[2:] and all(c in "0123456789abcdefABCDEF" for c in t[2:]) \
                else None
        f = float(t) if t[:1] in "0123456789+-." and t[:1] else None
        return f if f is None or math.isfinite(f) else None
    except ValueError:
        return None


def first_number(args):
    """The value of a user record: its first numeric argument (integers of every size,
    hex, floats, enums; not a signal, object or function, even one shown as a number)."""
    return next((n for _t, n in args if n is not None), None)


def user_args_into(cap, r, v, out):
    while r.left() > 0:
        fmt = r.uint(1)
        width, typ = fmt >> 4, fmt & 15
        num = None
        if typ == 0:
            if v >= 700 and width & 8:
                num = r.uint(1)
                text = cap.inband["enum"].get((width & 7, num), "%03d" % num)
            else:
                num = r.sint(1)
                text = "%d" % num
        elif typ in (1, 3, 5):
            n = {1: 1, 3: 2, 5: 4}[typ]
            num = r.uint(n)
            text = ("0x%0" + str(2 * n) + "X" if width == 15 else "%d") % num
        elif typ in (2, 4):
            num = r.sint(2 if typ == 2 else 4)
            text = "%d" % num
        elif typ in (6, 7):
            raw = r.uint(4 if typ == 6 else 8)
            num = struct.unpack("<f" if typ == 6 else "<d",
                                raw.to_bytes(4 if typ == 6 else 8, "little"))[0]
            text = repr(num)
            if text.endswith(".0"):
                text = text[:-2]
        elif typ == 8:
            text = r.string()
        elif typ == 9:
            n = r.uint(1)
            if r.left() < n:
                r.pos = len(r.data)
                raise Short()
            text = " ".join("%02X" % b for b in r.data[r.pos:r.pos + n])
            r.pos += n
        elif typ == 10:
            s = r.uint(cap.cfg["sizes"]["sig"])
            o = r.uint(cap.cfg["sizes"]["obj"])
            text = cap.sig(s, o) + ((",Obj=" + cap.obj(o)) if o else "")
        elif typ == 11:
            text = cap.obj(r.uint(cap.cfg["sizes"]["obj"]))
        elif typ == 12:
            text = cap.obj(r.uint(cap.cfg["sizes"]["fun"]), "fun")
        elif typ == 13:
            num = r.sint(8)
            text = "%d" % num
        elif typ == 14:
            num = r.uint(8)
            text = ("0x%016X" if width == 15 else "%d") % num
        else:
            num = r.uint(4)
            text = "0x%08X" % num
        out.append((text, num))


def decode(cap):
    fr = list(frames(cap.data))
    cap.configure(fr)
    v, sizes = cap.cfg["version"], cap.cfg["sizes"]
    size_of = {"o": sizes["obj"], "f": sizes["fun"], "s": sizes["sig"], "e": sizes["evt"],
               "q": sizes["queue"], "p": sizes["pool"], "c": sizes["tevt"],
               "t": sizes["tstamp"], "1": 1, "2": 2, "4": 4, "?": 1}
    cap.reset_dicts()
    cap.unknown = {"obj": set(), "fun": set()}
    cap.last_raw, cap.last_abs, cap.offset, cap.wraps, cap.after_reset = None, 0, 0, 0, False
    seen_good, last_seq, unknown_ids = False, None, set()
    rows = []
    first = True  # before the first frame with bytes
    for kind, start, buf in fr:
        if kind == "bad" and not buf:  # back-to-back flags: an idle line, no frame
            continue
        was_first, first = first, False
        if kind == "bad":
            cap.diag("resync" if was_first else "bad_checksum")
            continue
        if kind in ("short", "tail"):
            cap.diag("frame_too_short")
            continue
        if kind == "long":
            cap.diag("frame_too_long")
            continue
        seq, rec, payload = buf[0], buf[1], buf[2:-1]
        is_reset = v < 550 and rec == 0  # QSPY: QS_EMPTY before 5.5 is a target reset
        if rec == 64 and v >= 550:
            ti = parse_target_info(payload)
            is_reset = bool(ti and ti[0])
        if is_reset and rec == 0:
            cap.reset_dicts()
            cap.after_reset = True
        if seen_good and rec != cap.empty_id and not is_reset and seq != (last_seq + 1) & 255:
            cap.diag("seq_gap")
        seen_good, last_seq = True, seq
        name = cap.names.get(rec)
        r = Reader(payload)
        fields, ts, note, value, short = {}, None, None, None, False
        src = tgt = src_t = tgt_t = None
        try:
            if rec >= cap.quser:
                usr = cap.inband["usr"].get(rec) or cap.dic_dicts["usr"].get(rec)
                name = usr or "USER_%d" % rec
                src, src_t = name, "USER"
                fields["t"] = r.uint(sizes["tstamp"])
                ts = cap.time(fields["t"])
                args, value, cut = user_args(cap, r, v)
                note = ""  # a space before each argument but the first that shows
                for a in args:
                    note += (" " if note else "") + a
                if value is None:  # no numeric argument: the note, if it is a number
                    value = number(note)
                if cut:
                    raise Short()
            elif name == "TARGET_INFO":
                ti = parse_target_info(payload)
                src = "QS"
                if ti is None:  # cut short: kept as hex, as a dictionary record is
                    note = "Data=" + spaced_hex(payload)
                    raise Short()
                r.pos = len(payload)
                src = "QS"
                note = "QP-Ver=%d,Build=%s,Reset=%d" % (ti[1], ti[3], ti[0])
                if ti[0]:
                    cap.reset_dicts()
                    cap.after_reset = True
            elif name is None or layout(name, v) is None:
                if name is None:
                    name = "REC_%d" % rec
                    if rec not in unknown_ids:
                        unknown_ids.add(rec)
                        cap.diag("unknown_record")
                src = "QS"
                note = "Data=" + spaced_hex(payload)
                r.pos = len(payload)
            else:
                lay = layout(name, v)
                for i, (label, k) in enumerate(lay):
                    if k == "?":
                        after = sum(size_of[k2] for _l, k2 in lay[i + 1:] if k2 in size_of)
                        if r.left() < 1 + after:
                            continue
                        fields[label] = r.uint(1)
                    elif k == "z":
                        fields[label] = r.string()
                    elif k == "r":
                        fields[label] = r.data[r.pos:]
                        r.pos = len(r.data)
                    else:
                        fields[label] = r.uint(size_of[k])
                        if k == "t":
                            ts = cap.time(fields[label])
        except Short:
            short = True
            cap.diag("truncated_record")
        if not short and r.left() > 0:
            cap.diag("trailing_bytes")
        row = {"reset": is_reset, "raw_t": fields.get("t"), "ts": ts, "action": name,
               "note": note, "value": value,
               "source": src,
               "source_type": src_t, "target": tgt, "target_type": tgt_t,
               "fields": fields, "rec": rec, "v": v}
        if name in ("SIG_DICT", "OBJ_DICT", "FUN_DICT", "USR_DICT", "ENUM_DICT"):
            if short:  # a dictionary record that does not decode: kept as hex
                row["note"], row["source"] = "Data=" + spaced_hex(payload), "QS"
                rows.append(row)
                continue
            put_dict(cap, name, fields)
        if rec < cap.quser and (fields or note is None):
            describe(cap, row)
        rows.append(row)
    # records before the first timestamp take it
    first = next((r["ts"] for r in rows if r["ts"] is not None), 0)
    last = first
    for r in rows:
        if r["ts"] is None:
            r["ts"] = last
        last = r["ts"]
    if cap.wraps:
        cap.diag("time_wrapped")
    if cap.tick_rate:
        for r in rows:
            r["ts"] = r["ts"] * 10**9 // cap.tick_rate
            if r["ts"] > (1 << 62) - 1:  # beyond the tables' range: kept at its end
                r["ts"] = (1 << 62) - 1
                if r["raw_t"] is not None:
                    cap.diag("time_out_of_range")  # a time read, not one taken over
    else:
        cap.diag("unknown_tick_rate")
    cap.events = rows
    return cap


def spaced_hex(data):
    return " ".join("%02X" % b for b in data)


def put_dict(cap, name, f):
    if name == "SIG_DICT":
        cap.inband["sig"][(f["Sig"], f["Obj"])] = cap.clean(f["Name"])
    elif name == "OBJ_DICT":
        cap.inband["obj"][f["Ptr"]] = cap.clean(f["Name"])
    elif name == "FUN_DICT":
        cap.inband["fun"][f["Ptr"]] = cap.clean(f["Name"])
    elif name == "USR_DICT":
        cap.inband["usr"][f["Rec"]] = cap.clean(f["Name"], brackets=False)
    else:
        cap.inband["enum"][(f["Grp"] & 7, f["Value"])] = cap.clean(f["Name"], False)
        f["Grp"] &= 7


def describe(cap, row):
    """Names, note, source, target and value of a decoded predefined record."""
    name, f = row["action"], row["fields"]
    shown = {}
    for label, k in layout(name, row["v"]) or []:
        if label not in f or k == "t":
            continue
        x = f[label]
        if k == "o" and name != "OBJ_DICT" or (name == "SIG_DICT" and label == "Obj"):
            shown[label] = cap.obj(x)
        elif k == "f" and name != "FUN_DICT":
            shown[label] = cap.obj(x, "fun")
        elif k == "s" and name != "SIG_DICT":
            shown[label] = cap.sig(x, f.get("Obj") if name != "QF_TIMEEVT_POST" else f.get("AO"))
        elif k == "r":
            shown[label] = spaced_hex(x)
        elif label == "Name":
            shown[label] = cap.clean(x, name not in ("USR_DICT", "ENUM_DICT"))
        elif label == "Ptr":
            size = cap.cfg["sizes"]["obj" if name == "OBJ_DICT" else "fun"]
            shown[label] = ("0x%016X" if size > 4 else "0x%08X") % x
        else:
            shown[label] = str(x)
    if name in ("SCHED_LOCK", "SCHED_UNLOCK", "QK_MUTEX_LOCK", "QK_MUTEX_UNLOCK") and shown:
        shown = {"Ceil": "->".join(shown.values())}  # the ceiling before and after
    if "Src" in shown or "Dst" in shown:
        merged = {}
        for k, x in shown.items():
            if k == "Src":
                merged["State"] = x + ("->" + shown["Dst"] if "Dst" in shown else "")
            elif k != "Dst":
                merged[k] = x
        note = ",".join("%s=%s" % kv for kv in merged.items())
    else:
        note = ",".join("%s=%s" % kv for kv in shown.items())
    row["note"] = note
    row["shown"] = shown
    role = ROLES.get(canon(name))
    if role is None:
        row["source"] = "QS"
        return
    s, st, t, tt, val = role
    row["src_ptr"] = f.get(s)
    row["source"] = s[1:] if s.startswith("'") else shown.get(s)
    row["source_type"] = st
    if row["source"] is None and s == "Sdr" and canon(name) != "QF_ACTIVE_POST_ATTEMPT":
        # a post (a publish) cut before its sender: as from a null one
        row["source"], row["source_type"] = "NULL", None
    elif row["source"] is None:  # cut before its object: the framework's record
        row["source"], row["source_type"] = "QF", "SCHED"
    row["target"] = t[1:] if t and t.startswith("'") else (shown.get(t) if t else None)
    if t == "Dst" and row["target"] is None:  # cut before the destination
        row["target"] = shown.get("Src")
    row["target_type"] = tt if row["target"] is not None else None
    # the main number: the first of these fields the record has (a record cut short has
    # fewer: a post cut before its queue counters shows its Ref)
    row["value"] = next((f[k] for k in VALUE_FIELDS if k in f), None)


def derive(cap):
    """AO typing, entities and messages from the decoded rows."""
    aos = set()  # pointers: a name may change (a reset clears the dictionaries)
    for r in cap.events:
        fld = AO_FIELDS.get(canon(r["action"]))
        if fld and r["fields"].get(fld) is not None:
            aos.add(r["fields"][fld])
    for r in cap.events:
        if r["source"] == "NULL":
            r["source_type"] = None
        if r["target"] == "NULL":
            r["target_type"] = None
        if r["source_type"] == "SM" and r.get("src_ptr") in aos:
            r["source_type"] = "AO"
        # a sender is an AO only when an active-object record names it so (an ISR posts too)
        if canon(r["action"]) in SENDER_ROLE and r["source"] != "QF" \
                and r.get("src_ptr") not in aos:
            r["source_type"] = None
    ents = {}
    for r in cap.events:
        for k in ("source", "target"):
            if r[k] is not None and r[k] not in ents:
                ents[r[k]] = r[k + "_type"]
    cap.entities = ents
    pending, msgs = {}, []
    for r in cap.events:
        a = canon(r["action"])
        if a in ("QF_ACTIVE_POST", "QF_ACTIVE_POST_LIFO"):
            rcv = r["shown"].get("Obj")
            if rcv is None:  # cut before its receiver
                continue
            m = {"sender": r["source"], "receiver": rcv, "send_ts": r["ts"],
                 "recv_ts": None, "tag": r["fields"].get("Sig")}
            q = pending.setdefault((rcv, m["tag"]), [])
            if a == "QF_ACTIVE_POST_LIFO":
                q.insert(0, m)
            else:
                q.append(m)
            msgs.append(m)
        elif a == "TARGET_INFO" and r["note"].endswith("Reset=1") or r.get("reset"):
            pending = {}  # a reset empties the queues: what was posted is never got
        elif a in ("QF_ACTIVE_GET", "QF_ACTIVE_GET_LAST"):
            q = pending.get((r["source"], r["fields"].get("Sig")))
            if q:
                q.pop(0)["recv_ts"] = r["ts"]
    cap.messages = msgs
    return cap




def oracle_rows(path, dic=None, tick_rate=None, matlab=None):
    cap = derive(decode(Capture(path, dic, tick_rate)))
    mat = matlab_check(cap, matlab) if matlab else []
    events = [{"seq": i, "ts": r["ts"], "source": r["source"], "source_type": r["source_type"],
               "target": r["target"], "target_type": r["target_type"], "action": r["action"],
               "note": r["note"], "value": r["value"]} for i, r in enumerate(cap.events)]
    entities = [{"name": n, "type": t} for n, t in cap.entities.items()]
    messages = [dict(m) for m in cap.messages]
    diags = [{"kind": k, "count": n} for k, n in sorted(cap.diags.items())]
    diags += [{"kind": k, "count": 0} for k in DERIVED_DIAGS]
    return {"events": events, "entities": entities, "messages": messages,
            "diagnostics": diags, "matlab": mat}


# kinds from the interval derivation (ISR nesting, critical sections), not from decoding:
# not compared (both sides list them)
DERIVED_DIAGS = {"lost_isr_exit", "lost_isr_entry", "lost_critical_exit"}
EVENT_COLS = ["ts", "source", "source_type", "target", "target_type", "action", "note",
              "value"]
TABLES = {  # name -> (key columns, compared columns, tracedb's SQL)
    "events": (["seq"], EVENT_COLS,
               "SELECT capture_id, seq, %s FROM events" % ", ".join(EVENT_COLS)),
    "entities": (["name"], ["type"], "SELECT capture_id, name, type FROM entities"),
    "messages": (["sender", "receiver", "tag", "send_ts"], ["recv_ts"],
                 "SELECT capture_id, sender, receiver, tag, send_ts, recv_ts FROM messages"),
    "diagnostics": (["kind"], ["count"],
                    "SELECT capture_id, kind, sum(count) AS count FROM diagnostics WHERE kind "
                    "NOT IN ('%s') GROUP BY ALL UNION ALL SELECT capture_id, unnest(['%s']), 0 "
                    "FROM captures" % ("', '".join(sorted(DERIVED_DIAGS)),
                                       "', '".join(sorted(DERIVED_DIAGS)))),
}


def tracedb_rows(tracedb, items):
    """tracedb's rows of each (trace, .dic, tick rate): {trace: {table: [row]}} (None and
    the message when tracedb refuses a trace), from one archive and one query per table."""
    runs = []
    for trace, dic, rate in items:
        args = ["--format", "qs", trace]
        if dic:
            args += ["--qs-dic", dic]
        if rate:
            args += ["--tick-rate", str(rate)]
        runs.append((trace, args))
    return common.ingest_each(tracedb, runs, {n: sql for n, (_k, _c, sql) in TABLES.items()})


def check(tracedb, items):
    """Compare each (trace, .dic, tick rate, QSPY MATLAB file or None, description): print
    a summary line per trace and its differences (the oracle's decoding against QSPY's
    MATLAB output of the trace too, when given); return the number of differences."""
    all_theirs = tracedb_rows(tracedb, [(t, d, r) for t, d, r, _m, _s in items])
    total = 0
    for trace, dic, rate, matlab, desc in items:
        if desc:
            print(desc)
        ours = oracle_rows(trace, dic, rate, matlab)
        theirs, err = all_theirs[trace]
        if theirs is None:
            total += common.refused(trace, err)
            continue
        report = []
        # rows sharing a key (two posts of one pair at one instant) are told apart by their
        # compared columns' order; `value` is a DOUBLE column: 2^63 - 1 is stored as 2^63
        found, counts = common.compare_tables(
            ours, theirs, [(n, k, c) for n, (k, c, _s) in TABLES.items()], report,
            doubles=("value",))
        if matlab:
            report += ours["matlab"]
            found["matlab"] = {"line": len(ours["matlab"])} if ours["matlab"] else {}
            with open(matlab) as f:
                counts.append("%d QSPY MATLAB lines" % sum(1 for line in f if line.strip()))
        total += common.summary(trace, counts, found, report)
    return total


# --------------------------------------------------------------------------------------
# Random QS streams


def frame(seq, rec, payload, bad=False):
    body = bytes([seq & 255, rec]) + payload
    chk = (~sum(body)) & 0xFF
    if bad:
        chk ^= 0x5A
    out = bytearray()
    for i, b in enumerate(body + bytes([chk])):
        if i != 1 and b in (FLAG, ESC):  # the record ID is never escaped
            out += bytes([ESC, b ^ 0x20])
        else:
            out.append(b)
    out.append(FLAG)
    return bytes(out)


VERSIONS = [450, 540, 560, 610, 640, 670, 694, 700, 720, 734, 800, 812]


def generate(seed):
    """(stream bytes, .dic text or None, description, tick rate or None) of a random
    capture."""
    rng = random.Random(seed)
    v = rng.choice(VERSIONS)
    sizes = {"obj": rng.choice([1, 2, 4, 8]), "fun": rng.choice([1, 2, 4, 8]),
             "tstamp": rng.choice([1, 2, 4]), "sig": rng.choice([1, 2, 4]),
             "evt": rng.choice([1, 2, 4]), "queue": rng.choice([1, 2, 4]),
             "pool": rng.choice([1, 2, 4]), "poolblk": rng.choice([1, 2, 4]),
             "tevt": rng.choice([1, 2, 4])}
    use_ti = v >= 550 and rng.random() < 0.7  # QS_TARGET_INFO exists from QP 5.5
    names, quser = record_names(v)
    ids = {canon(n): i for i, n in names.items()}
    build = [rng.randrange(60), rng.randrange(60), rng.randrange(24), rng.randrange(1, 29),
             rng.randrange(1, 13), rng.randrange(100)]

    def ptrs(n, size):
        out = set()
        while len(out) < n:
            x = rng.randrange(1, 1 << (8 * size))
            if rng.random() < 0.3:  # bytes that need escaping
                x = (x & ~0xFF) | rng.choice([FLAG, ESC])
                x &= (1 << (8 * size)) - 1
                x = x or 1
            out.add(x)
        return sorted(out)

    def uint(x, n):
        return (x & ((1 << (8 * n)) - 1)).to_bytes(n, "little") if n else b""

    def name(prefix, i):
        s = "%s%d" % (prefix, i)
        if rng.random() < 0.2:
            s = "&" + s
        if rng.random() < 0.2:
            s += "[%d]" % i
        return s

    nobj = min(13, (1 << (8 * sizes["obj"])) - 1)
    objs = ptrs(nobj, sizes["obj"])
    funs = [p for p in ptrs(min(8, (1 << (8 * sizes["fun"])) - 1) + len(objs), sizes["fun"])
            if p not in objs][:8]
    # objects keep one role, as on a target: active objects, plain state machines, time
    # events, pools, queues, senders that are no active object (ISRs), others
    aos, sms, timers, pools = objs[:4], objs[4:6], objs[6:8], objs[8:9]
    queues, senders, others = objs[9:10], objs[10:11], objs[11:]
    for group in (sms, timers, pools, queues, senders, others):
        if not group:
            group.append(aos[0])

    def pick_obj(n, label):
        if n.startswith("QEP") or n == "QF_ACTIVE_RECALL_ATTEMPT" and label == "Obj":
            return rng.choice(aos + sms)
        if label in ("Sdr",):
            return rng.choice(aos + senders)
        if n.startswith("QF_TIMEEVT") or n == "QF_QUERY":
            return rng.choice(timers if label == "Obj" else aos)
        if n.startswith("QF_MPOOL"):
            return rng.choice(pools)
        if n.startswith("QF_EQUEUE") or label == "Que":
            return rng.choice(queues)
        if n.startswith("QF_ACTIVE"):
            return rng.choice(aos)
        if n.startswith("SEM"):
            return others[0]
        return others[-1]
    nsig = min(10, (1 << (8 * sizes["sig"])) - 1)
    sigs = list(range(1, nsig + 1))
    usr_ids = [quser + i for i in range(3)]
    recs = []  # (rec id, payload)
    clock = [rng.randrange(1 << (8 * sizes["tstamp"]))]
    step = max(1, (1 << (8 * sizes["tstamp"])) // 8)

    def t():
        clock[0] += rng.randrange(step)
        return uint(clock[0], sizes["tstamp"])

    def ti_record(reset):
        rest = bytes([sizes["sig"] | sizes["evt"] << 4, sizes["queue"] | sizes["tevt"] << 4,
                      sizes["poolblk"] | sizes["pool"] << 4, sizes["obj"] | sizes["fun"] << 4,
                      sizes["tstamp"], 8, 0x12] + build)
        if v >= 800 and v != 800 or (v == 800 and rng.random() < 0.5):
            date = 240101 + rng.randrange(9000)
            return bytes([2 | (0x40 if reset else 0) | (1 << 2)]) + uint(
                ~(date * 10000 + v), 4) + rest
        return bytes([0xFF if reset else 0]) + uint(v, 2) + rest

    dict_inband = rng.random() < 0.6
    if use_ti:
        recs.append((ids["TARGET_INFO"], ti_record(True)))
    def emit_dicts():
        for i, p in enumerate(objs):
            if rng.random() < 0.9:
                recs.append((ids["OBJ_DICT"], uint(p, sizes["obj"]) + name("obj", i).encode()
                             + b"\0"))
        for i, p in enumerate(funs):
            if rng.random() < 0.9:
                recs.append((ids["FUN_DICT"], uint(p, sizes["fun"]) + name("st", i).encode()
                             + b"\0"))
        for s in sigs:
            if rng.random() < 0.8:
                o = 0 if rng.random() < 0.5 else rng.choice(aos)
                recs.append((ids["SIG_DICT"], uint(s, sizes["sig"]) + uint(o, sizes["obj"])
                             + b"SIG%d_SIG\0" % s))
        for u in usr_ids[:2] if "USR_DICT" in ids else []:
            recs.append((ids["USR_DICT"], bytes([u]) + b"USR%d\0" % u))
        if "ENUM_DICT" in ids:
            for val in range(3):
                recs.append((ids["ENUM_DICT"], bytes([val, rng.randrange(8)]) + b"E%d\0" % val))
    if dict_inband:
        emit_dicts()
    usable = [canon(n) for n in names.values() if layout(n, v) is not None
              and n not in ("TARGET_INFO", "OBJ_DICT", "FUN_DICT", "SIG_DICT", "USR_DICT")
              and (n != "RX_STATUS" or v >= 660)]
    pending = []
    count = rng.randrange(120, 300)
    reset_at = rng.randrange(count) if use_ti and rng.random() < 0.4 else None
    for step_no in range(count):
        if step_no == reset_at:  # a target reset: its counter starts over, or runs on
            recs.append((ids["TARGET_INFO"], ti_record(True)))
            if rng.random() < 0.6:
                clock[0] = rng.randrange(step)
            if dict_inband and rng.random() < 0.6:
                emit_dicts()
            pending = []
        r = rng.random()
        if r < 0.02:  # a record ID the version does not define, or a user record not named
            free = [i for i in range(quser) if i not in names] or [quser + 7]
            recs.append((rng.choice(free + [rng.randrange(quser, 256)]),
                         t() + bytes(rng.randrange(256) for _ in range(rng.randrange(4)))))
            continue
        if r < 0.15 and pending:  # a get of a posted event
            ao, s = pending.pop(rng.randrange(len(pending)))
            n = rng.choice(["QF_ACTIVE_GET", "QF_ACTIVE_GET_LAST"])
            payload = t() + uint(s, sizes["sig"]) + uint(ao, sizes["obj"]) + bytes(
                [rng.randrange(4), rng.randrange(4)])
            if n == "QF_ACTIVE_GET":
                payload += uint(rng.randrange(50), sizes["queue"])
            recs.append((ids[n], payload))
            continue
        if r < 0.3:  # a post
            ao, s = rng.choice(aos), rng.choice(sigs)
            if rng.random() < 0.8:
                n = "QF_ACTIVE_POST"
                payload = t() + uint(rng.choice(aos + senders), sizes["obj"]) + uint(
                    s, sizes["sig"]) \
                    + uint(ao, sizes["obj"])
            else:
                n = "QF_ACTIVE_POST_LIFO"
                payload = t() + uint(s, sizes["sig"]) + uint(ao, sizes["obj"])
            payload += bytes([rng.randrange(4), rng.randrange(4)]) + uint(
                rng.randrange(60), sizes["queue"]) + uint(rng.randrange(60), sizes["queue"])
            recs.append((ids[n], payload))
            pending.append((ao, s))
            continue
        if r < 0.4:  # a user record
            recs.append((rng.choice(usr_ids), t() + user_payload(rng, v, sizes, objs, funs,
                                                                  sigs)))
            continue
        n = rng.choice(usable)
        payload = b""
        for label, k in layout(n, v):
            if k == "t":
                payload += t()
            elif k == "o":
                payload += uint(pick_obj(n, label) if label != "Sdr" or rng.random() < 0.9
                                else 0, sizes["obj"])  # posted from an ISR: no sender
            elif k == "f":
                payload += uint(rng.choice(funs), sizes["fun"])
            elif k == "s":
                payload += uint(rng.choice(sigs), sizes["sig"])
            elif k == "z":
                payload += name("n", rng.randrange(100)).encode() + b"\0"
            elif k == "r":
                payload += bytes(rng.randrange(256) for _ in range(rng.randrange(5)))
            elif k == "?":  # the tick rate, which a QP 5 target may leave out
                payload += bytes([rng.randrange(256)]) if rng.random() < 0.9 else b""
            else:
                size = {"e": sizes["evt"], "q": sizes["queue"], "p": sizes["pool"],
                        "c": sizes["tevt"]}.get(k) or int(k)
                payload += uint(rng.randrange(1 << (8 * size)), size)
        recs.append((ids[n], payload))
    out = bytearray()
    if rng.random() < 0.3:  # the capture starts in the middle of a record
        out += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) + bytes([FLAG])
    seq = 1
    for i, (rec, payload) in enumerate(recs):
        if rng.random() < 0.02:
            seq += rng.randrange(1, 5)  # records lost
        bad = i > 0 and rng.random() < 0.02
        if i > 0 and rng.random() < 0.02:  # cut short, or with bytes left over
            payload = payload[:rng.randrange(len(payload) + 1)] if rng.random() < 0.5 \
                else payload + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        out += frame(seq, rec, payload, bad)
        seq += 1
        if rng.random() < 0.004:  # a frame whose flag was lost: over 512 bytes
            out += bytes(rng.randrange(0, 0x7D) for _ in range(600))
    if rng.random() < 0.3:
        out += frame(seq, 0, b"")[:3]  # cut by the end of the capture
    dic = None
    if use_ti and rng.random() < 0.2:  # a .dic beside it: of this build, or of another
        other = rng.random() < 0.5
        dic = "-v%d\n-T%d -O%d -F%d -S%d -E%d -Q%d -P%d -B%d -C%d\n-t%02d%02d%02d_%02d%02d%02d\n" % (
            v, sizes["tstamp"], sizes["obj"], sizes["fun"], sizes["sig"], sizes["evt"],
            sizes["queue"], sizes["pool"], sizes["poolblk"], sizes["tevt"], build[5],
            build[4], build[3] + (1 if other else 0), build[2], build[1], build[0])
        dic += "Obj-Dic:\n%d\n0x%08X dic_name\n***\n" % (sizes["obj"], objs[-1])
    if not use_ti:
        dic = "-v%d\n-T%d\n-O%d\n-F%d\n-S%d\n-E%d\n-Q%d\n-P%d\n-B%d\n-C%d\n" % (
            v, sizes["tstamp"], sizes["obj"], sizes["fun"], sizes["sig"], sizes["evt"],
            sizes["queue"], sizes["pool"], sizes["poolblk"], sizes["tevt"])
        if not dict_inband:
            dic += "\nObj-Dic:\n%d\n" % sizes["obj"]
            for i, p in enumerate(objs):
                dic += "0x%08X obj%d\n" % (p, i)
            dic += "***\nFun-Dic:\n%d\n" % sizes["fun"]
            for i, p in enumerate(funs):
                dic += "0x%08X st%d\n" % (p, i)
            dic += "***\nUsr-Dic:\n1\n0x%08X USR%d\n***\nSig-Dic:\n%d\n" % (
                usr_ids[0], usr_ids[0], sizes["obj"])
            for s in sigs[:5]:
                dic += "%08d 0x%08X SIG%d_SIG\n" % (s, 0, s)
            dic += "***\n"
    rate = rng.choice([None, None, None, 1, 1000, 32768, 1000000, 3000000000])
    desc = "v%d sizes %s %s%s%s" % (
        v, "".join("%s%d" % (k[0], x) for k, x in sizes.items()),
        "target-info" if use_ti else "dic", " in-band dictionaries" if dict_inband else "",
        " --tick-rate %d" % rate if rate else "")
    return bytes(out), dic, desc, rate


def user_payload(rng, v, sizes, objs, funs, sigs):
    out = b""
    for _ in range(rng.randrange(0, 5)):
        typ, width = rng.randrange(16), rng.randrange(16)
        out += bytes([typ | width << 4])
        if typ in (0, 1):
            out += bytes([rng.randrange(256)])
        elif typ in (2, 3):
            out += rng.randrange(1 << 16).to_bytes(2, "little")
        elif typ in (4, 5, 15):
            out += rng.randrange(1 << 32).to_bytes(4, "little")
        elif typ == 6:
            out += struct.pack("<f", rng.uniform(-1e6, 1e6))
        elif typ == 7:
            out += struct.pack("<d", rng.uniform(-1e9, 1e9))
        elif typ == 8:
            out += ("s%d" % rng.randrange(1000) if rng.random() < 0.8 else "").encode() + b"\0"
        elif typ == 9:
            n = rng.randrange(6)
            out += bytes([n]) + bytes(rng.randrange(256) for _ in range(n))
        elif typ == 10:
            out += rng.choice(sigs).to_bytes(sizes["sig"], "little") + (
                rng.choice(objs) if rng.random() < 0.5 else 0).to_bytes(sizes["obj"], "little")
        elif typ == 11:
            out += rng.choice(objs).to_bytes(sizes["obj"], "little")
        elif typ == 12:
            out += rng.choice(funs).to_bytes(sizes["fun"], "little")
        else:
            out += rng.randrange(1 << 64).to_bytes(8, "little")
    return out


# --------------------------------------------------------------------------------------
# QSPY's own MATLAB output (qspy -m): a second truth for the oracle's decoding

# record name -> the fields QSPY writes (FPRINF_MATFILE in QSpyRecord_process), in its order
MAT_FIELDS = {
    "QEP_STATE_ENTRY": "Obj State", "QEP_STATE_EXIT": "Obj State",
    "QEP_STATE_INIT": "Obj Src Dst", "QEP_TRAN_HIST": "Obj Src Dst",
    "QEP_INIT_TRAN": "t Obj State", "QEP_INTERN_TRAN": "t Sig Obj State",
    "QEP_IGNORED": "t Sig Obj State", "QEP_DISPATCH": "t Sig Obj State",
    "QEP_TRAN": "t Sig Obj Src Dst", "QEP_UNHANDLED": "Sig Obj State",
    "QF_ACTIVE_SUBSCRIBE": "t Sig Obj", "QF_ACTIVE_UNSUBSCRIBE": "t Sig Obj",
    "QF_ACTIVE_POST": "t Sdr Sig Obj Pool Ref Free Min",
    "QF_ACTIVE_GET": "t Sig Obj Pool Ref Free", "QF_ACTIVE_GET_LAST": "t Sig Obj Pool Ref",
    "QF_MPOOL_GET": "t Obj Free Min", "QF_MPOOL_PUT": "t Obj Free",
    "QF_PUBLISH": "t Sdr Sig Pool", "QF_NEW": "t Size Sig",
    "QF_GC_ATTEMPT": "t Sig Pool Ref", "QF_GC": "t Sig Pool Ref",
    "QF_TIMEEVT_ARM": "t Obj AO Tim Int", "QF_TIMEEVT_AUTO_DISARM": "Obj AO",
    "QF_TIMEEVT_DISARM_ATTEMPT": "t Obj AO", "QF_TIMEEVT_POST": "t Obj Sig AO",
}


def mat_name(s):
    """QSPY's getMatDict: a name as a MATLAB variable."""
    for c in "[].:":
        s = s.replace(c, "_")
    return s[1:] if s.startswith("&") else s


def matlab_check(cap, path):
    """Compare the decoded records with QSPY's MATLAB lines; return the differences."""
    with open(path) as f:
        theirs = [line.split() for line in f if line.strip()]
    ours = []
    for r in cap.events:
        a, f = canon(r["action"]), r["fields"]
        if a == "SIG_DICT":
            ours.append([str(r["rec"]), "%s=[%d" % (mat_name(f["Name"]), f["Sig"]),
                         "%d];" % f["Obj"]])
        elif a in ("OBJ_DICT", "FUN_DICT"):
            ours.append([str(r["rec"]), "%s=%d;" % (mat_name(f["Name"]), f["Ptr"])])
        elif a in MAT_FIELDS:
            ours.append([str(r["rec"])] + [str(f[k]) for k in MAT_FIELDS[a].split()])
        elif r["rec"] >= cap.quser:
            ours.append([str(r["rec"]), str(r["raw_t"])] + (r["note"] or "").split())
    diffs = []
    for n in range(max(len(ours), len(theirs))):
        x = ours[n] if n < len(ours) else None
        y = theirs[n] if n < len(theirs) else None
        if x != y:
            diffs.append("matlab line %d: oracle=%s qspy=%s" % (
                n + 1, " ".join(x) if x else "NONE", " ".join(y) if y else "NONE"))
    return diffs


def write_generated(directory, seed):
    data, dic, desc, rate = generate(seed)
    path = os.path.join(directory, "gen-%d.bin" % seed)
    with open(path, "wb") as f:
        f.write(data)
    dic_path = None
    if dic is not None:
        dic_path = os.path.join(directory, "gen-%d.dic" % seed)
        with open(dic_path, "w") as f:
            f.write(dic)
    return path, dic_path, desc, rate


def main(argv):
    opts, files = common.options(argv, ["--tracedb", "--qs-dic", "--tick-rate", "--generate",
                                        "--seeds", "--matlab"])
    rate = int(opts["--tick-rate"]) if opts["--tick-rate"] else None
    if opts["--generate"]:
        os.makedirs(opts["--generate"], exist_ok=True)
        items = []
        for seed in common.seeds(opts["--seeds"]):
            path, dic, desc, seed_rate = write_generated(opts["--generate"], seed)
            items.append((path, dic, rate or seed_rate, None, "seed %d: %s" % (seed, desc)))
            if not opts["--tracedb"]:
                print("%s: %s" % (path, desc))
        if not opts["--tracedb"]:
            return 0
        return 1 if check(opts["--tracedb"], items) else 0
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    if opts["--tracedb"]:
        items = [(os.path.abspath(f), opts["--qs-dic"], rate, opts["--matlab"], None)
                 for f in files]
        return 1 if check(opts["--tracedb"], items) else 0
    ours = oracle_rows(files[0], opts["--qs-dic"], rate)
    common.write_tables((n, k + c, ours[n]) for n, (k, c, _s) in TABLES.items())
    return 0


if __name__ == "__main__":
    common.run(main)
