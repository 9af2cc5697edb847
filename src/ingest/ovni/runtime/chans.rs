//! The channels of ovni's nOS-V and Nanos6 emulator models as tables: each channel's Paraver
//! type, names on the thread and CPU rows, tracking and value labels ([`NOSV`], [`NANOS6`]),
//! which event changes which channel, and how ovni names and numbers task types
//! ([`type_label`], [`type_gid`]). Constant data and pure functions: the state they act on
//! is in [`super::Runtime`].
use super::MAX_LABEL;

/// How a thread's channel is shown on its own row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// While the thread is Running.
    Run,
    /// While the thread is active (Running, Cooling, Warming).
    Act,
    /// Always.
    Any,
}

/// One channel of a runtime model.
#[derive(Debug)]
pub struct ChanSpec {
    /// ovni's Paraver event type (the same in thread.pcf and cpu.pcf).
    pub prv: i64,
    /// Name on the thread row (ovni's PCF type name, trimmed).
    pub thread: &'static str,
    /// Name on the CPU row.
    pub cpu: &'static str,
    /// How the thread row tracks it.
    pub track: Track,
    /// A stack (push/pop) rather than a single value.
    pub stack: bool,
    /// Value labels (ovni's PCF values).
    pub labels: &'static [(i64, &'static str)],
    /// What a CPU shows when no single thread runs on it, once it has had one (0: nothing).
    pub cpu_default: i64,
}

const IDLE_LABELS: &[(i64, &str)] =
    &[(ST_PROGRESSING, "Progressing"), (ST_RESTING, "Resting"), (102, "Absorbing noise")];

/// Idle channel: Progressing (ovni's value at connection, for every thread).
pub const ST_PROGRESSING: i64 = 100;
/// Idle channel: Resting (a CPU without a running thread).
pub const ST_RESTING: i64 = 101;

#[rustfmt::skip]
const NOSV_SS: &[(i64, &str)] = &[
    (2, "Unknown subsystem"), (6, "Scheduler: Hungry"), (7, "Scheduler: Serving"),
    (8, "Scheduler: Submitting"), (9, "Memory: Allocating"), (10, "Memory: Freeing"),
    (11, "Task: In body"), (12, "API: Create"), (13, "API: Destroy"), (14, "API: Submit"),
    (15, "API: Pause"), (16, "API: Yield"), (17, "API: Waitfor"), (18, "API: Scheduling point"),
    (19, "API: Attach"), (20, "API: Detach"), (21, "API: Mutex lock"),
    (22, "API: Mutex trylock"), (23, "API: Mutex unlock"), (24, "API: Barrier wait"),
    (25, "API: Cond wait"), (26, "API: Cond signal"), (27, "API: Cond broadcast"),
    (28, "API: Join"), (29, "API: Join all"), (30, "API: Wait"), (31, "API: Wait all"),
    (32, "Thread: Worker"), (33, "Thread: Delegate"), (34, "EV Scheduler: Recv task"),
    (35, "EV Scheduler: Send task"), (36, "EV Scheduler: Self-assign task"),
];

#[rustfmt::skip]
const NANOS6_SS: &[(i64, &str)] = &[
    (1, "Task: Running body"), (2, "Unknown subsystem"), (3, "Task: Creating"),
    (4, "Task: Submitting"), (5, "Task: Spawning function"), (6, "Task: Running task for"),
    (7, "Scheduler: Adding ready tasks"), (8, "Scheduler: Processing ready tasks"),
    (9, "Scheduler: Serving tasks"), (10, "Dependency: Registering"),
    (11, "Dependency: Unregistering"), (12, "Blocking: Taskwait"),
    (13, "Blocking: Wait for deadline"), (14, "Blocking: Blocking current task"),
    (15, "Blocking: Unblocking remote task"), (16, "Memory: Allocating"),
    (17, "Memory: Freeing"), (18, "Worker: Handling task"), (19, "Worker: Looking for work"),
    (20, "Worker: Switching to another thread"), (21, "Worker: Migrating CPU"),
    (22, "Worker: Suspending thread"), (23, "Worker: Resuming another thread"),
    (24, "Worker: Sponge mode"), (60, "EV Scheduler: Recv task"),
    (61, "EV Scheduler: Send task"), (62, "EV Scheduler: Self-assign task"),
    (63, "EV CPU: Becomes idle"), (64, "EV CPU: Becomes active"),
    (65, "EV Worker: Waking another thread"),
];

const NANOS6_THREAD: &[(i64, &str)] = &[(1, "Leader"), (2, "Main"), (3, "Worker"), (4, "External")];

const fn chan(
    prv: i64,
    thread: &'static str,
    cpu: &'static str,
    track: Track,
    stack: bool,
    labels: &'static [(i64, &'static str)],
    cpu_default: i64,
) -> ChanSpec {
    ChanSpec { prv, thread, cpu, track, stack, labels, cpu_default }
}

/// The nOS-V channels, in ovni's order (body id, task id, type, app id, subsystem, rank,
/// idle), with their Paraver types (ovni's `nosv/setup.c`, as its samples' .pcf list them).
#[rustfmt::skip]
pub const NOSV: &[ChanSpec] = &[
    chan(15, "nOS-V task body ID of the RUNNING thread", "nOS-V task body ID of the RUNNING thread", Track::Run, false, &[], 0),
    chan(10, "nOS-V task ID of the RUNNING thread", "nOS-V task ID of the RUNNING thread", Track::Run, false, &[], 0),
    chan(11, "nOS-V task type of the RUNNING thread", "nOS-V task type of the RUNNING thread", Track::Run, false, &[], 0),
    chan(12, "nOS-V task AppID of the RUNNING thread", "nOS-V task AppID of the RUNNING thread", Track::Run, false, &[], 0),
    chan(13, "nOS-V subsystem of the ACTIVE thread", "nOS-V subsystem of the RUNNING thread", Track::Act, true, NOSV_SS, 0),
    chan(14, "nOS-V task MPI rank of the RUNNING thread", "nOS-V task MPI rank of the RUNNING thread", Track::Run, false, &[], 0),
    chan(16, "nOS-V idle state of the RUNNING thread", "nOS-V idle state of the RUNNING thread", Track::Run, false, IDLE_LABELS, ST_RESTING),
];

/// The Nanos6 channels, in ovni's order (task id, type, subsystem, rank, thread type, idle),
/// with their Paraver types.
#[rustfmt::skip]
pub const NANOS6: &[ChanSpec] = &[
    chan(35, "Nanos6 task ID of the RUNNING thread", "Nanos6 task ID of the RUNNING thread", Track::Run, false, &[], 0),
    chan(36, "Nanos6 task type of the RUNNING thread", "Nanos6 task type of the RUNNING thread", Track::Run, false, &[], 0),
    chan(37, "Nanos6 subsystem of the ACTIVE thread", "Nanos6 subsystem of the RUNNING thread", Track::Act, true, NANOS6_SS, 0),
    chan(38, "Nanos6 task MPI rank of the RUNNING thread", "Nanos6 task MPI rank of the RUNNING thread", Track::Run, false, &[], 0),
    chan(39, "Nanos6 thread type", "Nanos6 thread type of the RUNNING thread", Track::Any, true, NANOS6_THREAD, 0),
    chan(40, "Nanos6 idle state of the RUNNING thread", "Nanos6 idle state of the RUNNING thread", Track::Run, false, IDLE_LABELS, ST_RESTING),
];

/// The two models: index 0 nOS-V, 1 Nanos6.
pub const MODELS: [(u8, &[ChanSpec]); 2] = [(b'V', NOSV), (b'6', NANOS6)];

/// Channel indexes of the task channels and the others, per model.
pub(super) struct Idx {
    pub(super) body: Option<usize>,
    pub(super) task: usize,
    pub(super) ty: usize,
    pub(super) appid: Option<usize>,
    pub(super) ss: usize,
    pub(super) rank: usize,
    pub(super) idle: usize,
    /// The subsystem value of a task body.
    pub(super) in_body: i64,
}

pub(super) const IDX: [Idx; 2] = [
    Idx { body: Some(0), task: 1, ty: 2, appid: Some(3), ss: 4, rank: 5, idle: 6, in_body: 11 },
    Idx { body: None, task: 0, ty: 1, appid: None, ss: 2, rank: 3, idle: 5, in_body: 1 },
];

/// A task type label as ovni takes it: an empty one named after its id, one longer than
/// ovni's limit cut to [`MAX_LABEL`] bytes (at a character boundary); the second value is the
/// length it had when it was cut.
pub fn type_label(raw: &str, id: u32) -> (String, Option<usize>) {
    if raw.is_empty() {
        return (format!("(unlabeled task type {id})"), None);
    }
    if raw.len() <= MAX_LABEL {
        return (raw.to_string(), None);
    }
    let mut end = MAX_LABEL;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    (raw.get(..end).unwrap_or_default().to_string(), Some(raw.len()))
}

/// What an event does to a channel.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op {
    Push(usize, i64),
    Pop(usize, i64),
    Set(usize, i64),
    Ignore,
}

/// The model index of `m`, if it is one of these.
pub fn model_index(m: u8) -> Option<usize> {
    MODELS.iter().position(|(c, _)| *c == m)
}

/// The subsystem (and other simple channel) events (ovni's `ss_table`).
pub(super) fn simple(model: usize, cat: u8, val: u8) -> Option<Op> {
    use Op::{Ignore, Pop, Push};
    let pair = |open: u8, close: u8, ch: usize, v: i64| {
        if val == open {
            Some(Push(ch, v))
        } else if val == close {
            Some(Pop(ch, v))
        } else {
            None
        }
    };
    if model == 0 {
        let ss = 4;
        match cat {
            b'S' => match val {
                b'h' => Some(Push(ss, 6)),
                b'f' => Some(Pop(ss, 6)),
                b'[' => Some(Push(ss, 7)),
                b']' => Some(Pop(ss, 7)),
                b'@' | b'r' | b's' => Some(Ignore),
                _ => None,
            },
            b'U' => pair(b'[', b']', ss, 8),
            b'M' => pair(b'a', b'A', ss, 9).or_else(|| pair(b'f', b'F', ss, 10)),
            b'A' => {
                const API: &[(u8, i64)] = &[
                    (b'r', 12),
                    (b'd', 13),
                    (b's', 14),
                    (b'p', 15),
                    (b'y', 16),
                    (b'w', 17),
                    (b'c', 18),
                    (b'a', 19),
                    (b'e', 20),
                    (b'l', 21),
                    (b't', 22),
                    (b'u', 23),
                    (b'b', 24),
                    (b'o', 25),
                    (b'g', 26),
                    (b'k', 27),
                ];
                API.iter().find_map(|&(c, v)| pair(c, c.to_ascii_uppercase(), ss, v))
            }
            b'H' => match val {
                b'a' | b'A' => Some(Ignore),
                _ => pair(b'w', b'W', ss, 32).or_else(|| pair(b'd', b'D', ss, 33)),
            },
            b'P' => idle(val, 6),
            _ => None,
        }
    } else {
        let ss = 2;
        match cat {
            b'W' => match val {
                b'*' => Some(Ignore),
                _ => [(b'[', b']', 19), (b't', b'T', 18), (b'w', b'W', 20), (b'm', b'M', 21)]
                    .into_iter()
                    .chain([(b's', b'S', 22), (b'r', b'R', 23), (b'g', b'G', 24)])
                    .find_map(|(o, c, v)| pair(o, c, ss, v)),
            },
            b'P' => idle(val, 5),
            b'C' => pair(b'[', b']', ss, 3),
            b'U' => pair(b'[', b']', ss, 4),
            b'F' => pair(b'[', b']', ss, 5),
            b'O' => pair(b'[', b']', ss, 6),
            b't' => matches!(val, b'[' | b']').then_some(Ignore),
            b'M' => pair(b'a', b'A', ss, 16).or_else(|| pair(b'f', b'F', ss, 17)),
            b'D' => pair(b'r', b'R', ss, 10).or_else(|| pair(b'u', b'U', ss, 11)),
            b'S' => match val {
                b'@' | b'r' | b's' => Some(Ignore),
                _ => pair(b'[', b']', ss, 9)
                    .or_else(|| pair(b'a', b'A', ss, 7))
                    .or_else(|| pair(b'p', b'P', ss, 8)),
            },
            b'B' => pair(b'b', b'B', ss, 14)
                .or_else(|| pair(b'u', b'U', ss, 15))
                .or_else(|| pair(b'w', b'W', ss, 12))
                .or_else(|| pair(b'f', b'F', ss, 13)),
            b'H' => pair(b'e', b'E', 4, 4)
                .or_else(|| pair(b'w', b'W', 4, 3))
                .or_else(|| pair(b'l', b'L', 4, 1))
                .or_else(|| pair(b'm', b'M', 4, 2)),
            _ => None,
        }
    }
}

pub(super) fn idle(val: u8, ch: usize) -> Option<Op> {
    match val {
        b'p' => Some(Op::Set(ch, ST_PROGRESSING)),
        b'r' => Some(Op::Set(ch, ST_RESTING)),
        b'a' => Some(Op::Set(ch, 102)),
        _ => None,
    }
}

/// ovni's task type value: uthash's Jenkins hash of the label, + 666, on 31 bits, moved
/// above Paraver's reserved values (`task_get_type_gid`).
pub fn type_gid(label: &str) -> i64 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 13);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 8);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 13);
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 12);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 16);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 5);
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 3);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 10);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 15);
    }
    let key = label.as_bytes();
    let word = |s: &[u8]| {
        let mut b = [0u8; 4];
        for (d, v) in b.iter_mut().zip(s) {
            *d = *v;
        }
        u32::from_le_bytes(b)
    };
    let (mut i, mut j, mut h) = (0x9e37_79b9u32, 0x9e37_79b9u32, 0xfeed_beefu32);
    let mut chunks = key.chunks_exact(12);
    for c in &mut chunks {
        i = i.wrapping_add(word(c.get(..4).unwrap_or_default()));
        j = j.wrapping_add(word(c.get(4..8).unwrap_or_default()));
        h = h.wrapping_add(word(c.get(8..).unwrap_or_default()));
        mix(&mut i, &mut j, &mut h);
    }
    // The length wraps as C's `unsigned` does.
    #[allow(clippy::cast_possible_truncation)]
    let len = key.len() as u32;
    h = h.wrapping_add(len);
    let rest = chunks.remainder();
    // The tail: bytes 0-3 into i, 4-7 into j, 8-10 into h shifted one byte up (the low byte
    // of h holds the length).
    i = i.wrapping_add(word(rest.get(..4.min(rest.len())).unwrap_or_default()));
    j = j.wrapping_add(word(rest.get(4.min(rest.len())..8.min(rest.len())).unwrap_or_default()));
    h = h.wrapping_add(word(rest.get(8.min(rest.len())..).unwrap_or_default()) << 8);
    mix(&mut i, &mut j, &mut h);
    let gid = h.wrapping_add(666) & 0x7FFF_FFFF;
    i64::from(if gid < 1000 { gid + 1000 } else { gid })
}
