//! QS record IDs, their names per QP version, and their payload layouts.
//!
//! Record IDs moved between QP releases (FORMATS.md §3): the table is chosen by the QP
//! version (`694` = 6.9.4) from the target-info record, a `.dic` file or `--qs-dic`.
//! Layouts follow QSPY's decoder (`QSpyRecord_process`): field sizes come from the target's
//! configuration ([`Config`]), all fields little-endian.

/// Target configuration: QP version and the byte sizes of the variable-size fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// QP version as three digits (`694`), `800`+ for 8.x.
    pub version: u16,
    /// Object pointer size.
    pub obj: u8,
    /// Function pointer size.
    pub fun: u8,
    /// Timestamp size (1, 2 or 4).
    pub tstamp: u8,
    /// Signal size.
    pub sig: u8,
    /// Event size field.
    pub evt: u8,
    /// Event-queue counter size.
    pub queue: u8,
    /// Memory-pool counter size.
    pub pool_ctr: u8,
    /// Memory-pool block-size size.
    pub pool_blk: u8,
    /// Time-event counter size.
    pub tevt: u8,
}

impl Config {
    /// The sizes of a 32-bit target with 16-bit signals, for QP `version`: the importer's
    /// placeholder until the capture's own are known, and the tests' target.
    pub fn typical(version: u16) -> Config {
        Config {
            version,
            obj: 4,
            fun: 4,
            tstamp: 4,
            sig: 2,
            evt: 2,
            queue: 1,
            pool_ctr: 2,
            pool_blk: 2,
            tevt: 2,
        }
    }

    /// Whether every size is one QSPY can decode (1, 2, 4, or 8 for pointers).
    pub fn check(&self) -> Result<(), String> {
        let ok = |n: u8, ptr: bool| matches!(n, 1 | 2 | 4) || (ptr && n == 8);
        let sizes = [
            ("object pointer", self.obj, true),
            ("function pointer", self.fun, true),
            ("timestamp", self.tstamp, false),
            ("signal", self.sig, false),
            ("event size", self.evt, false),
            ("queue counter", self.queue, false),
            ("pool counter", self.pool_ctr, false),
            ("pool block size", self.pool_blk, false),
            ("time-event counter", self.tevt, false),
        ];
        for (what, n, ptr) in sizes {
            if !ok(n, ptr) {
                return Err(format!(
                    "{what} size {n} (expected 1, 2 or 4{})",
                    if ptr { " or 8" } else { "" }
                ));
            }
        }
        Ok(())
    }

    /// The first user record ID: 70 before QP 6.6, 100 since.
    pub fn user(&self) -> u8 {
        if self.version < 660 {
            70
        } else {
            100
        }
    }

    /// The `QS_EMPTY` record ID: 64 in QP before 5.5, 0 since.
    pub fn empty(&self) -> u8 {
        if (500..550).contains(&self.version) {
            64
        } else {
            0
        }
    }

    /// `v6.9.4` style text.
    pub fn version_text(&self) -> String {
        let v = self.version;
        format!("{}.{}.{}", v / 100, v / 10 % 10, v % 10)
    }
}

/// Target info decoded from a `QS_TARGET_INFO` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    /// The target was reset (dictionaries start over).
    pub reset: bool,
    /// The target is big-endian (QSPY decodes little-endian anyway).
    pub big_endian: bool,
    /// Configuration.
    pub config: Config,
    /// Build time `YYMMDD_hhmmss`.
    pub build: String,
    /// QP 8.x new format: the framework (1 qpc, 2 qpcpp), when given.
    pub qp_type: Option<u8>,
}

/// Decodes a target-info payload (after seq and record ID): the old format (QP ≤ 7.x:
/// u8 reset, u16 version | 0x8000 big-endian, 13 bytes) or the new one (QP 8.x, told by
/// `(b0 & 3) == 2`: u8 flags, u32 `~(date*10000 + version)`, 13 bytes).
pub fn target_info(p: &[u8]) -> Option<TargetInfo> {
    let b0 = *p.first()?;
    let (reset, big_endian, version, qp_type, rest) = if b0 & 3 == 2 {
        let w = u32::from_le_bytes(p.get(1..5)?.try_into().ok()?);
        let v = (!w) % 10_000;
        (b0 & 0x40 != 0, b0 & 0x80 != 0, u16::try_from(v).ok()?, Some((b0 >> 2) & 3), p.get(5..)?)
    } else {
        let w = u16::from_le_bytes(p.get(1..3)?.try_into().ok()?);
        (b0 != 0, w & 0x8000 != 0, w & 0x7FFF, None, p.get(3..)?)
    };
    let b = rest.get(..13)?;
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let lo = |i: usize| at(i) & 0x0F;
    let hi = |i: usize| at(i) >> 4;
    let config = Config {
        version,
        sig: lo(0),
        evt: hi(0),
        queue: lo(1),
        tevt: hi(1),
        pool_blk: lo(2),
        pool_ctr: hi(2),
        obj: lo(3),
        fun: hi(3),
        tstamp: lo(4),
    };
    let build =
        format!("{:02}{:02}{:02}_{:02}{:02}{:02}", at(12), at(11), at(10), at(9), at(8), at(7));
    Some(TargetInfo { reset, big_endian, config, build, qp_type })
}

/// A payload field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum K {
    /// Timestamp (tstamp size).
    Time,
    /// Signal (sig size).
    Sig,
    /// Object pointer.
    Obj,
    /// Function pointer (a state).
    Fun,
    /// u8.
    U8,
    /// A u8 some targets leave out (the tick rate of QP 5 tick and time-event records: the
    /// QP 5 `dpp.qs` sample has none): absent when the payload has no room for it and the
    /// fields after it.
    OptU8,
    /// u16.
    U16,
    /// u32.
    U32,
    /// Event-queue counter.
    QCtr,
    /// Memory-pool counter.
    PCtr,
    /// Time-event counter.
    TCtr,
    /// Event size.
    ESize,
    /// NUL-terminated string.
    Str,
    /// The rest of the payload, shown as hex.
    Rest,
}

/// A field and its label in the note (`->` appends `->value` to the field before).
pub type Field = (K, &'static str);

/// What the importer does with a record beyond its `events` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Nothing more.
    Plain,
    /// QEP state-machine record (source SM or AO).
    Sm,
    /// Sets the SM's current state (the last `Fun` field).
    SmState,
    /// Active-object record (source AO).
    Ao,
    /// A post FIFO (`Sdr` → `Obj`), opens a message.
    PostFifo,
    /// A post LIFO, opens a message taken first.
    PostLifo,
    /// A get by an AO, closes a message.
    Get,
    /// Event-queue record.
    Queue,
    /// Memory-pool record.
    Pool,
    /// Time-event record (`Obj` the time event, `AO` its active object).
    Timer,
    /// ISR entry (nesting, priority).
    IsrEntry,
    /// ISR exit.
    IsrExit,
    /// Critical section entry (nesting).
    CritEntry,
    /// Critical section exit.
    CritExit,
    /// Semaphore record (QXK).
    Sem,
    /// Mutex record (QXK).
    Mutex,
    /// Dictionary or target-info record, handled by the importer.
    Dict,
    /// `QS_EMPTY` and other records of the QS link itself.
    Link,
    /// A target reset (QP before 5.5: record 0).
    Reset,
}

/// A known record: name without `QS_`, fields, role.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Name, e.g. `QEP_TRAN`.
    pub name: &'static str,
    /// Payload layout.
    pub fields: &'static [Field],
    /// What it does.
    pub role: Role,
}

use K::*;

const fn spec(name: &'static str, fields: &'static [Field], role: Role) -> Spec {
    Spec { name, fields, role }
}

const OBJ_FUN: &[Field] = &[(Obj, "Obj"), (Fun, "State")];
const OBJ_SRC_DST: &[Field] = &[(Obj, "Obj"), (Fun, "State"), (Fun, "->")];
const T_SIG_OBJ_FUN: &[Field] = &[(Time, ""), (Sig, "Sig"), (Obj, "Obj"), (Fun, "State")];
const T_SIG_OBJ: &[Field] = &[(Time, ""), (Sig, "Sig"), (Obj, "Obj")];
const POST: &[Field] = &[
    (Time, ""),
    (Obj, "Sdr"),
    (Sig, "Sig"),
    (Obj, "Obj"),
    (U8, "Pool"),
    (U8, "Ref"),
    (QCtr, "Free"),
    (QCtr, "Min"),
];
const POST_NO_SENDER: &[Field] = &[
    (Time, ""),
    (Sig, "Sig"),
    (Obj, "Obj"),
    (U8, "Pool"),
    (U8, "Ref"),
    (QCtr, "Free"),
    (QCtr, "Min"),
];
/// A post that was refused: its last counter is the margin the poster asked for (`Mar`),
/// not the fewest free entries so far (`Min`), as QSPY prints it.
const POST_ATTEMPT: &[Field] = &[
    (Time, ""),
    (Obj, "Sdr"),
    (Sig, "Sig"),
    (Obj, "Obj"),
    (U8, "Pool"),
    (U8, "Ref"),
    (QCtr, "Free"),
    (QCtr, "Mar"),
];
const EQ_POST_ATTEMPT: &[Field] = &[
    (Time, ""),
    (Sig, "Sig"),
    (Obj, "Obj"),
    (U8, "Pool"),
    (U8, "Ref"),
    (QCtr, "Free"),
    (QCtr, "Mar"),
];
const GET: &[Field] =
    &[(Time, ""), (Sig, "Sig"), (Obj, "Obj"), (U8, "Pool"), (U8, "Ref"), (QCtr, "Free")];
const GET_LAST: &[Field] = &[(Time, ""), (Sig, "Sig"), (Obj, "Obj"), (U8, "Pool"), (U8, "Ref")];
const DEFER: &[Field] =
    &[(Time, ""), (Obj, "Obj"), (Obj, "Que"), (Sig, "Sig"), (U8, "Pool"), (U8, "Ref")];
const T_OBJ_OBJ: &[Field] = &[(Time, ""), (Obj, "Obj"), (Obj, "Que")];
const ADD: &[Field] = &[(Time, ""), (Obj, "Obj"), (U8, "Pri")];
const EQ_INIT: &[Field] = &[(Obj, "Obj"), (QCtr, "Len")];
const MP_INIT: &[Field] = &[(Obj, "Obj"), (PCtr, "Blocks")];
const MP_GET: &[Field] = &[(Time, ""), (Obj, "Obj"), (PCtr, "Free"), (PCtr, "Min")];
const MP_GET_ATTEMPT: &[Field] = &[(Time, ""), (Obj, "Obj"), (PCtr, "Free"), (PCtr, "Mar")];
const MP_PUT: &[Field] = &[(Time, ""), (Obj, "Obj"), (PCtr, "Free")];
const NEW: &[Field] = &[(Time, ""), (ESize, "Size"), (Sig, "Sig")];
const PUBLISH: &[Field] = &[(Time, ""), (Obj, "Sdr"), (Sig, "Sig"), (U8, "Pool"), (U8, "Ref")];
const EVT_REF: &[Field] = &[(Time, ""), (Sig, "Sig"), (U8, "Pool"), (U8, "Ref")];
const TE_ARM: &[Field] =
    &[(Time, ""), (Obj, "Obj"), (Obj, "AO"), (TCtr, "Tim"), (TCtr, "Int"), (OptU8, "Rate")];
const TE_ARM_4: &[Field] = &[(Time, ""), (Obj, "Obj"), (Obj, "AO"), (TCtr, "Tim"), (TCtr, "Int")];
const TE_ADIS: &[Field] = &[(Obj, "Obj"), (Obj, "AO"), (OptU8, "Rate")];
const TE_ADIS_4: &[Field] = &[(Obj, "Obj"), (Obj, "AO")];
const TE_DISA: &[Field] = &[(Time, ""), (Obj, "Obj"), (Obj, "AO"), (OptU8, "Rate")];
const TE_DISA_4: &[Field] = &[(Time, ""), (Obj, "Obj"), (Obj, "AO")];
/// qpc writes `QS_2U8_PRE_(tickRate, wasArmed)`: the rate first (QSPY 8 reads it so;
/// QSPY 7 swapped the two), left out by targets without it as in the other records.
const TE_REARM: &[Field] = &[
    (Time, ""),
    (Obj, "Obj"),
    (Obj, "AO"),
    (TCtr, "Tim"),
    (TCtr, "Int"),
    (OptU8, "Rate"),
    (U8, "Was"),
];
const TE_REARM_4: &[Field] =
    &[(Time, ""), (Obj, "Obj"), (Obj, "AO"), (TCtr, "Tim"), (TCtr, "Int"), (U8, "Was")];
const TE_POST: &[Field] = &[(Time, ""), (Obj, "Obj"), (Sig, "Sig"), (Obj, "AO"), (OptU8, "Rate")];
const TE_POST_4: &[Field] = &[(Time, ""), (Obj, "Obj"), (Sig, "Sig"), (Obj, "AO")];
const TICK: &[Field] = &[(TCtr, "Ctr"), (OptU8, "Rate")];
const TICK_4: &[Field] = &[(TCtr, "Ctr")];
const T_NEST: &[Field] = &[(Time, ""), (U8, "Nest")];
const T_NEST_PRI: &[Field] = &[(Time, ""), (U8, "Nest"), (U8, "Pri")];
const T_U8_U8: &[Field] = &[(Time, ""), (U8, "Pri"), (U8, "Prev")];
/// The ceiling before and after (QSPY: `Ceil=0->5`).
const T_CEIL: &[Field] = &[(Time, ""), (U8, "Ceil"), (U8, "->")];
/// QP 6.x mutex records: the priority and the ceiling (QSPY: `Pro=3,Ceil=4`).
const T_MUTEX: &[Field] = &[(Time, ""), (U8, "Pro"), (U8, "Ceil")];
const T_PRI: &[Field] = &[(Time, ""), (U8, "Prev")];
const SEM: &[Field] = &[(Time, ""), (Obj, "Obj"), (U8, "Thr"), (U8, "Cnt")];
const MTX: &[Field] = &[(Time, ""), (Obj, "Obj"), (U8, "Hldr"), (U8, "Nest")];
const MTX_BLK: &[Field] = &[(Time, ""), (Obj, "Obj"), (U8, "Hldr"), (U8, "Thr")];
const NONE: &[Field] = &[];
const REST: &[Field] = &[(Rest, "Data")];
const T_REST: &[Field] = &[(Time, ""), (Rest, "Data")];
const PROBE: &[Field] = &[(Time, ""), (Fun, "Fun"), (U32, "Data")];
const T_U8: &[Field] = &[(Time, ""), (U8, "Rec")];
const U8_ONLY: &[Field] = &[(U8, "Status")];
const ASSERT: &[Field] = &[(Time, ""), (U16, "Loc"), (Str, "Mod")];

/// QP version range whose record-ID table applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Era {
    /// QP 4.x (`< 500`).
    Qp4,
    /// QP 5.0–5.4 (`500..550`): `QS_EMPTY` is 64.
    Qp5Early,
    /// QP 5.5–6.5.
    Qp55,
    /// QP 6.6–6.8.
    Qp66,
    /// QP 6.9.
    Qp69,
    /// QP 7.x.
    Qp7,
    /// QP 8.x.
    Qp8,
}

impl Era {
    /// The table for QP `version`.
    pub fn of(version: u16) -> Era {
        match version {
            0..=499 => Era::Qp4,
            500..=549 => Era::Qp5Early,
            550..=659 => Era::Qp55,
            660..=689 => Era::Qp66,
            690..=699 => Era::Qp69,
            700..=799 => Era::Qp7,
            _ => Era::Qp8,
        }
    }
}

/// The record with ID `rec` for QP `version`, `None` when the ID is reserved or unknown
/// (user records, `rec >= QS_USER`, are decoded by the caller).
pub fn spec_of(rec: u8, version: u16) -> Option<Spec> {
    let era = Era::of(version);
    // Record names before QP 6.6 (`QF_ACTIVE_POST_FIFO`).
    let old = era <= Era::Qp55;
    // Layouts QSPY reads the old way before QP 6.2.0 (`version < 620U`): 10/11
    // ACTIVE_ADD/REMOVE, 18 EQUEUE_INIT, 23 MPOOL_INIT, 38 TIMEEVT_CTR; from 6.2 the deferred
    // event records and NEW_REF/DELETE_REF (qpc 6.3.6 qs.h has them, with QS_USER still 70).
    let pre62 = version < 620;
    let v5 = version >= 500;
    use Role::*;
    Some(match rec {
        0 if era < Era::Qp55 => spec("QP_RESET", REST, Reset),
        0 => spec("EMPTY", REST, Link),
        1 => spec("QEP_STATE_ENTRY", OBJ_FUN, Sm),
        2 => spec("QEP_STATE_EXIT", OBJ_FUN, Sm),
        3 => spec("QEP_STATE_INIT", OBJ_SRC_DST, Sm),
        4 => spec("QEP_INIT_TRAN", &[(Time, ""), (Obj, "Obj"), (Fun, "State")], SmState),
        5 => spec("QEP_INTERN_TRAN", T_SIG_OBJ_FUN, Sm),
        6 => spec(
            "QEP_TRAN",
            &[(Time, ""), (Sig, "Sig"), (Obj, "Obj"), (Fun, "State"), (Fun, "->")],
            SmState,
        ),
        7 => spec("QEP_IGNORED", T_SIG_OBJ_FUN, Sm),
        8 => spec("QEP_DISPATCH", T_SIG_OBJ_FUN, Sm),
        9 => spec("QEP_UNHANDLED", &[(Sig, "Sig"), (Obj, "Obj"), (Fun, "State")], Sm),
        10 if pre62 => spec("QF_ACTIVE_ADD", ADD, Ao),
        10 => spec("QF_ACTIVE_DEFER", DEFER, Ao),
        11 if pre62 => spec("QF_ACTIVE_REMOVE", ADD, Ao),
        11 => spec("QF_ACTIVE_RECALL", DEFER, Ao),
        12 => spec("QF_ACTIVE_SUBSCRIBE", T_SIG_OBJ, Ao),
        13 => spec("QF_ACTIVE_UNSUBSCRIBE", T_SIG_OBJ, Ao),
        14 if old => spec("QF_ACTIVE_POST_FIFO", POST, PostFifo),
        14 => spec("QF_ACTIVE_POST", POST, PostFifo),
        15 => spec("QF_ACTIVE_POST_LIFO", POST_NO_SENDER, PostLifo),
        16 => spec("QF_ACTIVE_GET", GET, Get),
        17 => spec("QF_ACTIVE_GET_LAST", GET_LAST, Get),
        18 if pre62 => spec("QF_EQUEUE_INIT", EQ_INIT, Queue),
        18 => spec("QF_ACTIVE_RECALL_ATTEMPT", T_OBJ_OBJ, Ao),
        19 if old => spec("QF_EQUEUE_POST_FIFO", POST_NO_SENDER, Queue),
        19 => spec("QF_EQUEUE_POST", POST_NO_SENDER, Queue),
        20 => spec("QF_EQUEUE_POST_LIFO", POST_NO_SENDER, Queue),
        21 => spec("QF_EQUEUE_GET", GET, Queue),
        22 => spec("QF_EQUEUE_GET_LAST", GET_LAST, Queue),
        23 if pre62 => spec("QF_MPOOL_INIT", MP_INIT, Pool),
        // Reserved in 6.2..6.8; QF_NEW_ATTEMPT in qpc 6.9.2's qs.h (and QSPY 7).
        23 if era >= Era::Qp69 => spec("QF_NEW_ATTEMPT", NEW, Plain),
        24 => spec("QF_MPOOL_GET", MP_GET, Pool),
        25 => spec("QF_MPOOL_PUT", MP_PUT, Pool),
        26 => spec("QF_PUBLISH", PUBLISH, Plain),
        27 if !pre62 => spec("QF_NEW_REF", EVT_REF, Plain),
        28 => spec("QF_NEW", NEW, Plain),
        29 => spec("QF_GC_ATTEMPT", EVT_REF, Plain),
        30 => spec("QF_GC", EVT_REF, Plain),
        31 => spec("QF_TICK", if v5 { TICK } else { TICK_4 }, Plain),
        32 => spec("QF_TIMEEVT_ARM", if v5 { TE_ARM } else { TE_ARM_4 }, Timer),
        33 => spec("QF_TIMEEVT_AUTO_DISARM", if v5 { TE_ADIS } else { TE_ADIS_4 }, Timer),
        34 => spec("QF_TIMEEVT_DISARM_ATTEMPT", if v5 { TE_DISA } else { TE_DISA_4 }, Timer),
        35 => spec("QF_TIMEEVT_DISARM", if v5 { TE_ARM } else { TE_ARM_4 }, Timer),
        36 => spec("QF_TIMEEVT_REARM", if v5 { TE_REARM } else { TE_REARM_4 }, Timer),
        37 => spec("QF_TIMEEVT_POST", if v5 { TE_POST } else { TE_POST_4 }, Timer),
        38 if pre62 => spec("QF_TIMEEVT_CTR", if v5 { TE_ARM } else { TE_ARM_4 }, Timer),
        38 => spec("QF_DELETE_REF", EVT_REF, Plain),
        39 => spec("QF_CRIT_ENTRY", T_NEST, CritEntry),
        40 => spec("QF_CRIT_EXIT", T_NEST, CritExit),
        41 => spec("QF_ISR_ENTRY", T_NEST_PRI, IsrEntry),
        42 => spec("QF_ISR_EXIT", T_NEST_PRI, IsrExit),
        43 => spec("QF_INT_DISABLE", T_NEST_PRI, Plain),
        44 => spec("QF_INT_ENABLE", T_NEST_PRI, Plain),
        45 => spec("QF_ACTIVE_POST_ATTEMPT", POST_ATTEMPT, Ao),
        46 => spec("QF_EQUEUE_POST_ATTEMPT", EQ_POST_ATTEMPT, Queue),
        47 => spec("QF_MPOOL_GET_ATTEMPT", MP_GET_ATTEMPT, Pool),
        // QSPY 7.2 reads 48/49 as the old mutex records before QP 7.1.0.
        48 if version >= 710 => spec("SCHED_PREEMPT", T_U8_U8, Plain),
        48 => spec("MUTEX_LOCK", T_MUTEX, Plain),
        49 if version >= 710 => spec("SCHED_RESTORE", T_U8_U8, Plain),
        49 => spec("MUTEX_UNLOCK", T_MUTEX, Plain),
        50 if era < Era::Qp55 => spec("QK_MUTEX_LOCK", T_CEIL, Plain),
        50 => spec("SCHED_LOCK", T_CEIL, Plain),
        51 if era < Era::Qp55 => spec("QK_MUTEX_UNLOCK", T_CEIL, Plain),
        51 => spec("SCHED_UNLOCK", T_CEIL, Plain),
        52 if era < Era::Qp55 => spec("QK_SCHEDULE", T_U8_U8, Plain),
        52 => spec("SCHED_NEXT", T_U8_U8, Plain),
        53 if era >= Era::Qp55 => spec("SCHED_IDLE", T_PRI, Plain),
        54 if era >= Era::Qp7 => spec("ENUM_DICT", NONE, Dict),
        // QSPY 6.9: t, the resumed priority, the one before (`Prio=1->2`).
        54 if era >= Era::Qp55 => spec("SCHED_RESUME", T_U8_U8, Plain),
        55 if era >= Era::Qp55 => spec("QEP_TRAN_HIST", OBJ_SRC_DST, SmState),
        56 if (Era::Qp55..Era::Qp8).contains(&era) => spec("QEP_TRAN_EP", OBJ_SRC_DST, Sm),
        57 if (Era::Qp55..Era::Qp8).contains(&era) => spec("QEP_TRAN_XP", OBJ_SRC_DST, Sm),
        58 if era >= Era::Qp55 => spec("TEST_PAUSED", NONE, Link),
        59 if era >= Era::Qp55 => spec("TEST_PROBE_GET", PROBE, Link),
        60 => spec("SIG_DICT", NONE, Dict),
        61 => spec("OBJ_DICT", NONE, Dict),
        62 => spec("FUN_DICT", NONE, Dict),
        63 if era == Era::Qp4 => spec("ASSERT", T_REST, Link),
        63 => spec("USR_DICT", NONE, Dict),
        64 if era == Era::Qp5Early => spec("EMPTY", REST, Link),
        64 if era >= Era::Qp55 => spec("TARGET_INFO", NONE, Dict),
        65 if era >= Era::Qp55 => spec("TARGET_DONE", T_U8, Link),
        66 if era >= Era::Qp55 => spec(
            "RX_STATUS",
            if version >= 580 { U8_ONLY } else { &[(Time, ""), (U8, "Status")] },
            Link,
        ),
        67 if era == Era::Qp5Early => spec("TEST_RUN", REST, Link),
        67 if !pre62 => spec("QUERY_DATA", T_REST, Link),
        68 if era == Era::Qp5Early => spec("TEST_FAIL", REST, Link),
        68 if era >= Era::Qp55 => spec("PEEK_DATA", T_REST, Link),
        69 if era >= Era::Qp5Early => spec("ASSERT_FAIL", ASSERT, Link),
        70 if era >= Era::Qp69 => spec("QF_RUN", NONE, Link),
        71 if era >= Era::Qp7 => spec("SEM_TAKE", SEM, Role::Sem),
        72 if era >= Era::Qp7 => spec("SEM_BLOCK", SEM, Role::Sem),
        73 if era >= Era::Qp7 => spec("SEM_SIGNAL", SEM, Role::Sem),
        74 if era >= Era::Qp7 => spec("SEM_BLOCK_ATTEMPT", SEM, Role::Sem),
        75 if era >= Era::Qp7 => spec("MTX_LOCK", MTX, Mutex),
        76 if era >= Era::Qp7 => spec("MTX_BLOCK", MTX_BLK, Mutex),
        77 if era >= Era::Qp7 => spec("MTX_UNLOCK", MTX, Mutex),
        78 if era >= Era::Qp7 => spec("MTX_LOCK_ATTEMPT", MTX, Mutex),
        79 if era >= Era::Qp7 => spec("MTX_BLOCK_ATTEMPT", MTX_BLK, Mutex),
        80 if era >= Era::Qp7 => spec("MTX_UNLOCK_ATTEMPT", MTX, Mutex),
        81 if era == Era::Qp8 => spec("QF_ACTIVE_DEFER_ATTEMPT", DEFER, Ao),
        _ => return None,
    })
}

/// Field sizes of a record: `None` for the variable ones (strings, the rest).
pub fn size(k: K, c: &Config) -> Option<u8> {
    Some(match k {
        Time => c.tstamp,
        Sig => c.sig,
        Obj => c.obj,
        Fun => c.fun,
        U8 | OptU8 => 1,
        U16 => 2,
        U32 => 4,
        QCtr => c.queue,
        PCtr => c.pool_ctr,
        TCtr => c.tevt,
        ESize => c.evt,
        Str | Rest => return None,
    })
}

#[cfg(test)]
mod tests;
