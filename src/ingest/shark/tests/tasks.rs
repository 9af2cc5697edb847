//! Tests of the mapping of tasks and interrupts to BTF transitions: scheduling, periodic
//! releases, nested interrupts, contexts, ids and reused pids.
use super::*;

#[test]
fn two_tasks_map_to_btf_transitions_in_time_order() {
    let mut b = Vec::new();
    // 1000 cycles per ms: one cycle is 1000 ns.
    b.extend(rec(0x10, 0, 1, 1000));
    b.extend(rec(0x60, 3, 2, 101));
    // Slot order is not time order (a wrapped cyclic chunk): sorted by TSC.
    b.extend(rec(0x62, 3, 50, 0));
    b.extend(rec(0x12, 3, 10, 0));
    b.extend(rec(0x22, 3, 11, 0));
    b.extend(rec(0x12, 4, 20, 0));
    b.extend(rec(0x32, 3, 20, 0));
    b.extend(rec(0x22, 4, 21, 0));
    b.extend(rec(0x62, 4, 30, 0));
    b.extend(rec(0x22, 3, 31, 0));
    // An epilogue followed by the task's own dispatch is no preemption.
    b.extend(rec(0x32, 3, 40, 0));
    b.extend(rec(0x22, 3, 41, 0));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert_eq!(
        o.events,
        [
            "1000 Core_0#-1 - cycles_per_msec | par1=0 par2=1000",
            "2000 task_101#-1 - id | par1=3 par2=101",
            "10000 Core_0#-1 T:task_101#0 activate | task_activate par1=3 par2=0",
            "11000 Core_0#-1 T:task_101#0 start | task_dispatch par1=3 par2=0",
            "20000 Core_0#-1 T:ctx_4#0 activate | task_activate par1=4 par2=0",
            "20000 Core_0#-1 T:task_101#0 preempt | task_epilogue par1=3 par2=0",
            "21000 Core_0#-1 T:ctx_4#0 start | task_dispatch par1=4 par2=0",
            "30000 Core_0#-1 T:ctx_4#0 terminate | task_end_cycle par1=4 par2=0",
            "31000 Core_0#-1 T:task_101#0 resume | task_dispatch par1=3 par2=0",
            "40000 task_101#0 - task_epilogue | par1=3 par2=0",
            "41000 task_101#0 - task_dispatch | par1=3 par2=0",
            "50000 Core_0#-1 T:task_101#0 terminate | task_end_cycle par1=3 par2=0",
        ]
    );
    assert!(o.decl.contains(&("task_101".into(), Some("T".into()), None)));
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "1000".into())));
    assert!(o.meta.contains(&("shark.records".into(), "12".into())));
    // The wrap is said: what the chunk logged before its oldest record kept was overwritten.
    assert_eq!(kinds(&o), ["chunk_wrapped"]);
    assert!(
        o.diags[0]
            .1
            .contains("the TSC drops from 50 to 10 at byte 48 of trace.dat (1 drop in slot order)")
            && o.diags[0].1.contains("before TSC 1 (its oldest record kept) is lost"),
        "{:?}",
        o.diags
    );
}

/// The kernel's EDF, CBS and HCBS modules log a periodic task's every release as
/// `task_timer` (ctx, level), not as `task_activate` (logged only by the application's
/// `task_activate()` call, which EDF follows at once with the first release's `task_timer`):
/// each release is the activation of a job, the first one's `task_timer` is part of its
/// `task_activate`, and one logged while a job runs is queued (EDF's `nact`).
#[test]
fn task_timer_releases_the_jobs_of_a_periodic_task() {
    let mut b = Vec::new();
    for (code, ctx, tsc) in [
        (0x12, 1, 10), // task_activate()
        (0x92, 1, 11), // EDF_intern_release of the first job
        (0x82, 1, 12),
        (0x62, 1, 20),
        (0x82, 9, 21),  // the dummy task
        (0x92, 1, 100), // the end of the period: the next job
        (0x82, 1, 101),
        (0x62, 1, 110),
        (0x82, 9, 111),
        (0x92, 1, 200),
        (0x82, 1, 201),
        (0x92, 1, 300), // released while job 2 still runs: queued
        (0x62, 1, 310),
        (0x82, 1, 311),
        (0x62, 1, 320),
        (0x82, 9, 321),
    ] {
        b.extend(rec(code, ctx, tsc, 0));
    }
    let o = ingest_ns(&b);
    let lines: Vec<String> = o
        .events
        .iter()
        .map(|e| e.split(" | ").next().unwrap().to_string())
        .filter(|e| e.contains("T:ctx_1#"))
        .collect();
    assert_eq!(
        lines,
        [
            "10 Core_0#-1 T:ctx_1#0 activate",
            "12 Core_0#-1 T:ctx_1#0 start",
            "20 Core_0#-1 T:ctx_1#0 terminate",
            "100 Core_0#-1 T:ctx_1#1 activate",
            "101 Core_0#-1 T:ctx_1#1 start",
            "110 Core_0#-1 T:ctx_1#1 terminate",
            "200 Core_0#-1 T:ctx_1#2 activate",
            "201 Core_0#-1 T:ctx_1#2 start",
            "300 Core_0#-1 T:ctx_1#3 activate",
            "310 Core_0#-1 T:ctx_1#2 terminate",
            "311 Core_0#-1 T:ctx_1#3 start",
            "320 Core_0#-1 T:ctx_1#3 terminate",
        ]
    );
    assert!(
        o.events.iter().any(|e| e == "11 ctx_1#0 - task_timer | par1=1 par2=0"),
        "{:?}",
        o.events
    );
    assert!(o
        .events
        .iter()
        .any(|e| e == "100 Core_0#-1 T:ctx_1#1 activate | task_timer par1=1 par2=0"));
    assert_eq!(kinds(&o), ["activate_while_active"], "the queued job is said");
    // A release while the task_activate'd job runs, and another before the queued job starts:
    // both are jobs (the first release is only swallowed before its job starts).
    let mut b = Vec::new();
    for (code, tsc) in
        [(0x12, 400), (0x82, 401), (0x92, 410), (0x62, 420), (0x92, 430), (0x82, 431)]
    {
        b.extend(rec(code, 2, tsc, 0));
    }
    let o = ingest_ns(&b);
    let lines: Vec<&str> = o.events.iter().map(|e| e.split(" | ").next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "400 Core_0#-1 T:ctx_2#0 activate",
            "401 Core_0#-1 T:ctx_2#0 start",
            "410 Core_0#-1 T:ctx_2#1 activate",
            "420 Core_0#-1 T:ctx_2#0 terminate",
            "430 Core_0#-1 T:ctx_2#2 activate",
            "431 Core_0#-1 T:ctx_2#1 start",
        ]
    );
}

#[test]
fn interrupts_nest_and_a_lost_end_is_closed_with_the_outer_one() {
    let mut b = rec(0x03, 1, 10, 0);
    b.extend(rec(0x03, 2, 12, 0));
    b.extend(rec(0x13, 1, 15, 0));
    b.extend(rec(0x13, 7, 16, 0));
    let o = ingest_ns(&b);
    let acts: Vec<String> = o
        .events
        .iter()
        .map(|e| e.split(" | ").next().unwrap().split(' ').skip(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        acts,
        [
            "I:IRQ1#0 activate",
            "I:IRQ1#0 start",
            "I:IRQ2#0 activate",
            "I:IRQ2#0 start",
            "I:IRQ2#0 terminate",
            "I:IRQ1#0 terminate",
            "- interrupt_end",
        ]
    );
    assert_eq!(kinds(&o), ["lost_interrupt_end", "lost_interrupt_start"]);
}

/// The kernel's demos log trace_start with the running task's context in par1 (and the
/// rate in par2); GRUBSTAR logs server_active with the context of the task that woke the
/// server (CBSSTAR with 0, which is no context): those records are the task's.
#[test]
fn trace_start_and_server_active_with_a_context_are_the_tasks() {
    let mut b = rec(0x20, 5, 10, 1_000_000);
    b.extend(rec(0x60, 5, 11, 3));
    b.extend(rec(0x58, 5, 12, 0xABC0));
    b.extend(rec(0x58, 0, 13, 0xABC0));
    b.extend(rec(0x20, 0, 14, 0));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(
        heads(&o),
        [
            "10 task_3#-1 - trace_start",
            "11 task_3#-1 - id",
            "12 task_3#-1 - server_active",
            "13 Core_0#-1 - server_active",
            "14 Core_0#-1 - trace_start",
        ]
    );
}

#[test]
fn ids_name_tasks_also_for_records_before_them() {
    let mut b = rec(0x12, 5, 1, 0);
    b.extend(rec(0x60, 5, 2, 42));
    // The context gets another pid: a new task from then on.
    b.extend(rec(0x02, 5, 3, 43));
    b.extend(rec(0x12, 5, 4, 0));
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:task_42#0 activate",
            "2 task_42#0 - id",
            "3 task_43#-1 - task_create",
            "4 Core_0#-1 T:task_43#0 activate",
        ]
    );
}

/// S.Ha.R.K.'s pids are `proc_table` slots, reused once a task is destroyed: a context
/// that gets its old pid back (pid 42, then 43, then 42 again) is task_42 again, whose
/// instances go on from the last one (found by tests/oracle/shark_oracle.py: they started
/// over at 0, two `instances` rows then shared task_42 and an instance number).
#[test]
fn a_pid_that_comes_back_continues_its_tasks_instances() {
    let mut b = rec(0x02, 5, 1, 42);
    b.extend(rec(0x12, 5, 2, 0));
    b.extend(rec(0x22, 5, 3, 0));
    b.extend(rec(0x42, 5, 4, 42)); // task_end: destroyed
    b.extend(rec(0x02, 5, 5, 43));
    b.extend(rec(0x12, 5, 6, 0));
    b.extend(rec(0x42, 5, 7, 43));
    b.extend(rec(0x02, 5, 8, 42)); // the slot comes back to pid 42
    b.extend(rec(0x12, 5, 9, 0));
    b.extend(rec(0x22, 5, 10, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        heads(&o),
        [
            "1 task_42#-1 - task_create",
            "2 Core_0#-1 T:task_42#0 activate",
            "3 Core_0#-1 T:task_42#0 start",
            "4 Core_0#-1 T:task_42#0 terminate",
            "5 task_43#-1 - task_create",
            "6 Core_0#-1 T:task_43#0 activate",
            "7 Core_0#-1 T:task_43#0 terminate",
            "8 task_42#0 - task_create",
            "9 Core_0#-1 T:task_42#1 activate",
            "10 Core_0#-1 T:task_42#1 start",
        ]
    );
    // A pid one context freed, created again in another.
    let mut b = rec(0x02, 5, 1, 42);
    b.extend(rec(0x12, 5, 2, 0));
    b.extend(rec(0x42, 5, 3, 42));
    b.extend(rec(0x02, 6, 4, 42));
    b.extend(rec(0x12, 6, 5, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        heads(&o),
        [
            "1 task_42#-1 - task_create",
            "2 Core_0#-1 T:task_42#0 activate",
            "3 Core_0#-1 T:task_42#0 terminate",
            "4 task_42#0 - task_create",
            "5 Core_0#-1 T:task_42#1 activate",
        ]
    );
}
