//! Tests of semaphores and mutexes: waits that block or not, held mutexes, contention.
use super::*;

/// The kernel's `sem_wait` logs `mutex_wait` (ctx, semaphore) whether it blocks or not, and
/// `sem_post` logs `mutex_post`: a wait that does not block is followed by the task's own
/// records, one that blocks by the scheduler's choice of another task (interrupts are off
/// in between); the post that frees a blocked task hands it the semaphore.
#[test]
fn a_semaphore_wait_blocks_only_when_another_task_is_scheduled_next() {
    let mut b = rec(0x12, 1, 1, 0);
    b.extend(rec(0x82, 1, 2, 1));
    b.extend(rec(0x46, 1, 3, 3)); // sem_wait of ctx 1: the count was 1, it goes on
    b.extend(rec(0x12, 2, 4, 0));
    b.extend(rec(0x82, 2, 5, 2)); // ctx 2 takes the CPU
    b.extend(rec(0x46, 2, 6, 3)); // and blocks on semaphore 3:
    b.extend(rec(0x82, 1, 7, 1)); // the scheduler picks ctx 1 at once
    b.extend(rec(0x56, 1, 8, 3)); // sem_post of ctx 1 frees ctx 2
    b.extend(rec(0x62, 1, 9, 0));
    b.extend(rec(0x82, 2, 10, 2));
    b.extend(rec(0x56, 2, 11, 3));
    b.extend(rec(0x62, 2, 12, 0));
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_3#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_3#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_3#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_3#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 SEM:mutex_3#-1 released",
            "8 Core_0#-1 T:ctx_2#0 release",
            "8 ctx_2#0 SEM:mutex_3#-1 assigned",
            "9 Core_0#-1 T:ctx_1#0 terminate",
            "10 Core_0#-1 T:ctx_2#0 resume",
            "11 ctx_2#0 SEM:mutex_3#-1 released",
            "12 Core_0#-1 T:ctx_2#0 terminate",
        ]
    );
    assert!(o.events[3].ends_with("implied by mutex_wait par1=1 par2=3"), "{}", o.events[3]);
    assert!(o.events[12].ends_with("implied by mutex_post par1=1 par2=3"), "{}", o.events[12]);
    assert!(kinds(&o).is_empty(), "{:?}", o.diags);
}

/// The kernel's `mutex_lock()` logs `mutex_lock` before it tries the lock: under priority
/// inheritance a task that finds the mutex held blocks (the holder runs in its place:
/// `task_schedule` par1 the holder, par2 the blocked task) and takes the mutex when it runs
/// again after the holder's `mutex_unlock`. Two tasks never hold one mutex at once.
#[test]
fn a_lock_of_a_held_mutex_waits_until_the_task_runs_after_the_unlock() {
    let m = 0x1000;
    let mut b = Vec::new();
    for (code, p1, tsc, p2) in [
        (0x12, 1, 1, 0),
        (0x82, 1, 2, 1),
        (0x16, 1, 3, m), // ctx 1 locks the free mutex
        (0x12, 2, 4, 0),
        (0x82, 2, 5, 2),
        (0x16, 2, 6, m), // ctx 2 finds it held: blocks
        (0x82, 1, 7, 2), // exec_shadow ctx 1 runs for exec ctx 2
        (0x25, 1, 8, 2), // inheritance
        (0x36, 1, 9, m),
        (0x82, 2, 10, 2), // ctx 2 runs again: it takes the mutex
        (0x36, 2, 11, m),
        (0x62, 2, 12, 0),
        (0x82, 1, 13, 1),
        (0x62, 1, 14, 0),
    ] {
        b.extend(rec(code, p1, tsc, p2));
    }
    let o = ingest_ns(&b);
    let lines: Vec<&str> = o.events.iter().map(|e| e.split(" | ").next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_4096#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_4096#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_4096#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_4096#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 - inheritance",
            "9 ctx_1#0 SEM:mutex_4096#-1 released",
            "10 Core_0#-1 T:ctx_1#0 preempt",
            "10 Core_0#-1 T:ctx_2#0 release",
            "10 Core_0#-1 T:ctx_2#0 resume",
            "10 ctx_2#0 SEM:mutex_4096#-1 assigned",
            "11 ctx_2#0 SEM:mutex_4096#-1 released",
            "12 Core_0#-1 T:ctx_2#0 terminate",
            "13 Core_0#-1 T:ctx_1#0 resume",
            "14 Core_0#-1 T:ctx_1#0 terminate",
        ]
    );
    assert!(o.events[16].ends_with("implied by task_schedule par1=2 par2=2"), "{}", o.events[16]);
    assert!(kinds(&o).is_empty(), "{:?}", o.diags);
}

#[test]
fn a_contended_mutex_makes_request_wait_assign_release() {
    let mut b = rec(0x12, 1, 1, 0);
    b.extend(rec(0x22, 1, 2, 0));
    b.extend(rec(0x16, 1, 3, 9)); // ctx 1 locks mutex 9 at once
    b.extend(rec(0x12, 2, 4, 0));
    b.extend(rec(0x22, 2, 5, 0)); // ctx 2 takes the CPU: ctx 1 preempted (implied)
    b.extend(rec(0x46, 2, 6, 9)); // and blocks on mutex 9
    b.extend(rec(0x22, 1, 7, 0));
    b.extend(rec(0x36, 1, 8, 9));
    b.extend(rec(0x16, 2, 8, 9)); // granted to ctx 2
    b.extend(rec(0x8036, 2, 9, 0)); // fast unlock: the mutex is not known
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_9#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_9#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_9#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_9#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 SEM:mutex_9#-1 released",
            "8 Core_0#-1 T:ctx_2#0 release",
            "8 ctx_2#0 SEM:mutex_9#-1 assigned",
            "9 ctx_2#0 - mutex_unlock",
        ]
    );
    assert!(o.events[5].ends_with("implied by task_dispatch par1=2 par2=0"));
    assert!(o.events[14].ends_with("par1=2 par2=stale"));
    assert_eq!(kinds(&o), ["fast_record"]);
}
