//! What the records after one tell about it (the kernel logs a step before the scheduler
//! shows its outcome): whether a mutex wait blocks, whether a task loses the CPU at its
//! epilogue; and the cycle rate a record gives.
use super::*;

/// Whether the task `ctx`, whose `mutex_wait` is record `i`, blocks: the kernel's
/// `sem_wait` logs it whether it blocks or not, and, interrupts off, one that blocks calls
/// the scheduler at once, so the next record (past the task's own epilogue) is the
/// scheduling of another task. At the end of the log, with nothing to tell, it blocks.
pub(super) fn blocks(recs: &[Rec], i: usize, ctx: u16) -> bool {
    match recs.iter().skip(i + 1).find(|r| !(r.code() == 0x32 && r.par1 == ctx)) {
        Some(r) => matches!(r.code(), 0x22 | 0x82) && r.par1 != ctx,
        None => true,
    }
}

/// The cycles per ms a record gives: `cycles_per_msec`'s par2, and `trace_start`'s, where
/// the kernel's demos log `clk_per_msec` (`TRACER_LOGEVENT(FTrace_EVT_trace_start, ctx,
/// clk_per_msec)`; `cycles_per_msec` itself is logged only when the CPU frequency changes).
/// Not 0 (FTrace.h calls trace_start's par2 empty) nor stale (the fast variant).
pub(in crate::ingest::shark) fn rate_of(r: &Rec) -> Option<u32> {
    matches!(r.code(), 0x10 | 0x20).then(|| r.par2()).flatten().filter(|c| *c > 0)
}

/// Whether the task `ctx`, running when its epilogue `i` is logged, loses the CPU: the
/// next scheduling record is another task's dispatch (or none comes), not its own
/// dispatch, end of cycle, sleep, end or mutex wait.
pub(super) fn preempted(recs: &[Rec], i: usize, ctx: u16) -> bool {
    for r in recs.iter().skip(i + 1).take(LOOKAHEAD) {
        match r.code() {
            0x22 | 0x82 => return r.par1 != ctx,
            0x42 | 0x62 | 0x72 | 0x46 if r.par1 == ctx => return false,
            _ => {}
        }
    }
    true
}
