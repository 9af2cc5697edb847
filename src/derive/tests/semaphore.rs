//! Tests of the semaphore and signal machines (`semaphore.rs`): semaphore states, lock
//! requests as TA and libBtf write them, releases, counting semaphores, signal values.
use super::*;

#[test]
fn release_without_assign_keeps_a_row() {
    let (s, rows) = derive("0,T1,0,SEM,S,0,released\n");
    assert_eq!(rows.locks, ["S T1 wait=None hold=None"]);
    assert_eq!(s.diag_counts.get("release_without_assign").map(|c| c.1), Some(1));
}

#[test]
fn a_request_given_up_ends_unassigned_and_an_overfull_step_marks_the_request_it_belongs_to() {
    // T1's failed exclusivesemaphore at 10 is superseded by its request at 50.
    let (_, rows) = derive(
        "0,S,0,SEM,S,0,ready,0\n5,T0,0,SEM,S,0,requestsemaphore\n5,T0,0,SEM,S,0,assigned\n\
         5,S,0,SEM,S,0,lock,1\n10,T1,0,SEM,S,0,exclusivesemaphore\n40,T0,0,SEM,S,0,released\n\
         40,S,0,SEM,S,0,unlock,0\n50,T1,0,SEM,S,0,requestsemaphore\n50,T1,0,SEM,S,0,assigned\n\
         60,T1,0,SEM,S,0,released\n",
    );
    assert_eq!(
        rows.locks,
        [
            "S T0 wait=Some(0) hold=Some(35)",
            "S T1 wait=None hold=None",
            "S T1 wait=Some(0) hold=Some(10)"
        ]
    );
    // The overfull step logged before the request it belongs to, at the same time.
    for order in [
        "30,T2,0,SEM,S,0,requestsemaphore\n30,S,0,SEM,S,0,overfull,1\n",
        "30,S,0,SEM,S,0,overfull,1\n30,T2,0,SEM,S,0,requestsemaphore\n",
    ] {
        let mut d = Deriver::new(Rows::default(), "t.btf", false);
        let text = format!(
            "0,S,0,SEM,S,0,ready,0\n10,T1,0,SEM,S,0,requestsemaphore\n10,T1,0,SEM,S,0,assigned\n\
             10,S,0,SEM,S,0,lock,1\n{order}30,T1,0,SEM,S,0,released\n30,S,0,SEM,S,0,full,1\n\
             30,T2,0,SEM,S,0,assigned\n50,T2,0,SEM,S,0,released\n"
        );
        crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
        let (_, out) = d.finish().unwrap();
        assert_eq!(
            out.locks,
            ["S T1 wait=Some(0) hold=Some(20)", "S T2 wait=Some(0) hold=Some(20) contended"],
            "{order}"
        );
    }
}

#[test]
fn a_release_without_assigned_closes_the_open_request() {
    let (s, rows) = derive(
        "0,T1,0,SEM,S,0,requestsemaphore\n5,T1,0,SEM,S,0,released\n\
         6,T1,0,SEM,S,0,requestsemaphore\n9,T1,0,SEM,S,0,released\n",
    );
    // Two requests, each closed by its release (no assigned logged): no request stays open.
    assert_eq!(rows.locks, ["S T1 wait=None hold=None", "S T1 wait=None hold=None"]);
    assert_eq!(diag_count(&s, "release_without_assign"), 2);
}

#[test]
fn a_counter_change_splits_a_semaphore_state_and_a_wait_without_request_is_reported() {
    let (s, rows) = derive(
        "0,S,0,SEM,S,0,ready,0\n10,S,0,SEM,S,0,used,1\n20,S,0,SEM,S,0,used,1\n\
         30,S,0,SEM,S,0,used,2\n35,S,0,SEM,S,0,used\n40,S,0,SEM,S,0,free,0\n\
         50,T1,0,SEM,S,0,waiting\n60,T1,0,SEM,S,0,assigned\n70,T1,0,SEM,S,0,released\n",
    );
    // used 1 -> used 1 (and a used with no counter) keep one interval; used 1 -> used 2 splits.
    let sem: Vec<&String> = rows.intervals.iter().filter(|r| r.contains(" S ")).collect();
    assert_eq!(
        sem,
        [
            "state S free [0,10) ",
            "state S used [10,30) ",
            "state S used [30,40) ",
            "state S free [40,70) open"
        ]
    );
    assert_eq!(rows.locks, ["S T1 wait=Some(10) hold=Some(10) contended"]);
    assert_eq!(diag_count(&s, "request_inferred"), 1);
}

/// Semaphores as BTF 2.1.5's own example (TA Simulator) and libBtf write them: `ready` then
/// `free` (libBtf: `free` alone) initialise one, `queued` is the semaphore's own note (TA)
/// or a step of every request, assigned at once when nothing held it (libBtf). None of it
/// is an invalid transition, an unknown action or a contention.
#[test]
fn semaphores_as_ta_and_libbtf_write_them() {
    // BTF 2.1.5, "Semaphore events": a mutex taken by C1, then requested by C2.
    let (s, rows) = derive(
        "0,      SEM_M, 0, SEM, SEM_M, 0, ready,            0\n\
         0,      SEM_M, 0, SEM, SEM_M, 0, free,             0\n\
         3225,   C1,    0, SEM, SEM_M, 0, increment\n\
         3225,   C1,    0, SEM, SEM_M, 0, requestsemaphore, 0\n\
         3225,   SEM_M, 0, SEM, SEM_M, 0, queued,           0\n\
         3225,   SEM_M, 0, SEM, SEM_M, 0, lock,             1\n\
         3225,   C1,    0, SEM, SEM_M, 0, assigned,         1\n\
         4225,   C2,    0, SEM, SEM_M, 0, increment\n\
         4225,   C2,    0, SEM, SEM_M, 0, requestsemaphore, 1\n\
         4225,   SEM_M, 0, SEM, SEM_M, 0, queued,           1\n\
         4225,   SEM_M, 0, SEM, SEM_M, 0, overfull,         2\n\
         4225,   C2,    0, SEM, SEM_M, 0, waiting,          2\n\
         460031, C1,    0, SEM, SEM_M, 0, released,         2\n\
         460031, C1,    0, SEM, SEM_M, 0, decrement\n\
         460031, C2,    0, SEM, SEM_M, 0, assigned,         1\n\
         460031, SEM_M, 0, SEM, SEM_M, 0, full,             1\n\
         687875, C2,    0, SEM, SEM_M, 0, released,         1\n\
         687875, C2,    0, SEM, SEM_M, 0, decrement\n\
         687875, SEM_M, 0, SEM, SEM_M, 0, unlock,           0\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    assert_eq!(
        rows.locks,
        [
            "SEM_M C1 wait=Some(0) hold=Some(456806)",
            "SEM_M C2 wait=Some(455806) hold=Some(227844) contended"
        ]
    );
    assert_eq!(
        rows.intervals,
        [
            "state SEM_M free [0,3225) ",
            "state SEM_M full [3225,4225) ",
            "state SEM_M overfull [4225,460031) ",
            "state SEM_M full [460031,687875) ",
            "state SEM_M free [687875,687875) open"
        ]
    );
    // libBtf: `free` first, `queued` from the process before each `assigned`; a request
    // still queued at the end of the trace waited.
    let (s, rows) = derive(
        "#timescale ns\n0,Sem1,0,SEM,Sem1,0,free,0\n200,Task1,0,SEM,Sem1,0,requestsemaphore,0\n\
         200,Task1,0,SEM,Sem1,0,increment,1\n200,Task1,0,SEM,Sem1,0,queued,1\n\
         200,Sem1,0,SEM,Sem1,0,lock,1\n200,Task1,0,SEM,Sem1,0,assigned,1\n\
         300,Isr1,0,SEM,Sem1,0,requestsemaphore,1\n300,Isr1,0,SEM,Sem1,0,increment,2\n\
         300,Isr1,0,SEM,Sem1,0,queued,2\n400,Task1,0,SEM,Sem1,0,released,1\n\
         400,Task1,0,SEM,Sem1,0,decrement,0\n400,Sem1,0,SEM,Sem1,0,unlock,0\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    assert_eq!(
        rows.locks,
        ["Sem1 Task1 wait=Some(0) hold=Some(200)", "Sem1 Isr1 wait=None hold=None contended"]
    );
    assert_eq!(rows.intervals[0], "state Sem1 free [0,200) ");
}

/// A process's `decrement` releases the semaphore (BTF 2.1.5: "A task releases the semaphore,
/// decrementing its counter"). libBtf's own test ("Semaphore (source is Process)" in
/// vectorgrp/btf-toolchain test/libBtfTest.cpp) writes `released` then `decrement` for one
/// release, and a `decrement` alone for another: each release closes one request, once.
#[test]
fn a_decrement_releases_the_semaphore_once_with_or_without_its_released() {
    let (s, rows) = derive(
        "#version 2.2.1\n#creator libBtf\n#timescale ns\n0,Sem1,0,SEM,Sem1,0,free,0\n\
         100,Core1,0,T,Task1,0,start\n150,Core2,0,I,Isr1,0,start\n\
         200,Task1,0,SEM,Sem1,0,requestsemaphore,0\n200,Task1,0,SEM,Sem1,0,increment,1\n\
         200,Task1,0,SEM,Sem1,0,queued,1\n200,Sem1,0,SEM,Sem1,0,lock,1\n\
         200,Task1,0,SEM,Sem1,0,assigned,1\n300,Isr1,0,SEM,Sem1,0,requestsemaphore,1\n\
         300,Isr1,0,SEM,Sem1,0,increment,2\n300,Isr1,0,SEM,Sem1,0,queued,2\n\
         300,Sem1,0,SEM,Sem1,0,overfull,2\n300,Isr1,0,SEM,Sem1,0,waiting,2\n\
         400,Task1,0,SEM,Sem1,0,released,2\n400,Task1,0,SEM,Sem1,0,decrement,1\n\
         400,Sem1,0,SEM,Sem1,0,full,1\n400,Isr1,0,SEM,Sem1,0,assigned,1\n\
         500,Isr1,0,SEM,Sem1,0,decrement,0\n500,Sem1,0,SEM,Sem1,0,unlock,0\n",
    );
    assert!(s.diag_counts.keys().all(|k| *k == "unknown_prior_state"), "{:?}", s.diag_counts);
    assert_eq!(
        rows.locks,
        [
            "Sem1 Task1 wait=Some(0) hold=Some(200)",
            "Sem1 Isr1 wait=Some(100) hold=Some(100) contended"
        ]
    );
    // A recursive hold released twice at one instant, each release written both ways round
    // (decrement first, then released, the other order): two requests close, not four.
    let (s, rows) = derive(
        "0,T1,0,SEM,M,0,requestsemaphore\n0,T1,0,SEM,M,0,assigned\n\
         5,T1,0,SEM,M,0,requestsemaphore\n5,T1,0,SEM,M,0,assigned\n\
         9,T1,0,SEM,M,0,decrement\n9,T1,0,SEM,M,0,released\n\
         9,T1,0,SEM,M,0,released\n9,T1,0,SEM,M,0,decrement\n\
         12,T1,0,SEM,M,0,decrement\n",
    );
    assert_eq!(
        rows.locks,
        [
            "M T1 wait=Some(0) hold=Some(9)",
            "M T1 wait=Some(0) hold=Some(4)",
            "M T1 wait=None hold=None"
        ]
    );
    // The decrement at 12 releases what T1 no longer holds.
    assert_eq!(diag_count(&s, "release_without_assign"), 1, "{:?}", s.diag_counts);
}

/// BTF 2.1.5's signal initialisation tag (`SIG_INIT_VALUE,<value>`, the signal as the
/// source of a `SIM` `tag`) gives the signal its value from then on; other tags do not, nor
/// does one whose source is known as something else.
#[test]
fn a_signal_init_value_tag_sets_the_signals_first_value() {
    let (s, rows) = derive(
        "0, Ecu_1, -1, SIM, SIM, -1, tag, ECU_INIT\n\
         0, SIG_Temperature, -1, SIM, SIM, -1, tag, SIG_INIT_VALUE,0\n\
         0, T1, 0, T, T1, 0, activate\n\
         5, T1, -1, SIM, SIM, -1, tag, SIG_INIT_VALUE,3\n\
         120, T1, 0, SIG, SIG_Temperature, 0, write, 5\n\
         200, T1, 0, SIG, SIG_Other, 0, write, 1\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    let values: Vec<_> = rows
        .interval_cores
        .iter()
        .zip(&rows.interval_values)
        .filter(|(_, v)| v.starts_with("value "))
        .map(|(c, v)| format!("{c} {v}"))
        .collect();
    assert_eq!(
        values,
        [
            "SIG_Temperature#-1 0 [0,120) @- value 0 Some(0.0)",
            "SIG_Temperature#-1 5 [120,200) @- value 5 Some(5.0)",
            "SIG_Other#-1 1 [200,200) @- value 1 Some(1.0)"
        ]
    );
    let sig = s.entities.iter().find(|e| s.names.resolve(e.name) == "SIG_Temperature").unwrap();
    assert_eq!(sig.entity_type.map(|t| s.names.resolve(t)), Some("SIG"));
}

/// A counting semaphore (two slots, as the simulator's `SEM_C` logs it): a request that gets
/// a free slot is not contended however many slots are taken; one that finds every slot
/// taken is (its `overfull` step, repeated per extra request, and its `queued` step), and its
/// wait runs until a release hands it a slot.
#[test]
fn a_counting_semaphore_contends_only_requests_that_find_every_slot_taken() {
    let (s, rows) = derive(
        "0,S,0,SEM,S,0,ready,0\n10,A,0,SEM,S,0,requestsemaphore\n10,S,0,SEM,S,0,used,1\n\
         10,A,0,SEM,S,0,assigned\n20,B,0,SEM,S,0,requestsemaphore\n20,S,0,SEM,S,0,lock_used,2\n\
         20,B,0,SEM,S,0,assigned\n30,C,0,SEM,S,0,requestsemaphore\n30,S,0,SEM,S,0,overfull,2\n\
         30,C,0,SEM,S,0,queued\n35,D,0,SEM,S,0,requestsemaphore\n35,S,0,SEM,S,0,overfull,2\n\
         35,D,0,SEM,S,0,queued\n40,A,0,SEM,S,0,released\n40,C,0,SEM,S,0,assigned\n\
         50,B,0,SEM,S,0,released\n50,S,0,SEM,S,0,full,2\n50,D,0,SEM,S,0,assigned\n\
         60,C,0,SEM,S,0,released\n60,S,0,SEM,S,0,unlock_full,1\n70,D,0,SEM,S,0,released\n\
         70,S,0,SEM,S,0,free,0\n",
    );
    assert_eq!(
        rows.locks,
        [
            "S A wait=Some(0) hold=Some(30)",
            "S B wait=Some(0) hold=Some(30)",
            "S C wait=Some(10) hold=Some(20) contended",
            "S D wait=Some(15) hold=Some(20) contended"
        ]
    );
    // C found A and B holding both slots; D found them too, and C got a slot before D did.
    assert_eq!(
        rows.blockers,
        ["S A#0 by=- of 0", "S B#0 by=- of 0", "S C#0 by=A#0 of 2", "S D#0 by=A#0 of 3"]
    );
    // The second overfull (same counter) continues the interval.
    assert_eq!(
        rows.intervals,
        [
            "state S free [0,10) ",
            "state S used [10,20) ",
            "state S full [20,30) ",
            "state S overfull [30,50) ",
            "state S full [50,60) ",
            "state S used [60,70) ",
            "state S free [70,70) open"
        ]
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
}

#[test]
fn requests_never_assigned_end_with_their_instance() {
    // Instance 0's try-lock fails (no assigned); instance 1 gets the semaphore.
    let (_, rows) = derive(
        "0,T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n5,T,0,SEM,S,0,exclusivesemaphore\n\
         10,Core_0,0,T,T,0,terminate\n20,T,1,T,T,1,activate\n20,Core_0,0,T,T,1,start\n\
         25,T,1,SEM,S,0,requestsemaphore\n25,T,1,SEM,S,0,assigned\n28,T,1,SEM,S,0,released\n\
         30,Core_0,0,T,T,1,terminate\n",
    );
    assert_eq!(rows.locks, ["S T wait=None hold=None", "S T wait=Some(0) hold=Some(3)"]);
}

#[test]
fn failed_try_locks_of_many_instances_do_not_pile_up() {
    // 50k instances, each failing a try-lock: each request closes with its instance, so the
    // semaphore holds no open request after it (before, all 50k stayed open, and every
    // event on the semaphore scanned them: quadratic time).
    let mut text = String::new();
    for i in 0..50_000 {
        let t = i * 10;
        text.push_str(&format!(
            "{t},T,{i},T,T,{i},activate\n{t},Core_0,0,T,T,{i},start\n\
             {},T,{i},SEM,S,0,exclusivesemaphore\n{},Core_0,0,T,T,{i},terminate\n",
            t + 1,
            t + 5
        ));
    }
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    assert_eq!(d.requests.values().map(Vec::len).sum::<usize>(), 0);
    let (s, rows) = d.finish().unwrap();
    assert_eq!(rows.locks.len(), 50_000);
    assert!(rows.locks.iter().all(|l| l == "S T wait=None hold=None"));
    assert_eq!(s.lock_requests, 50_000);
}

#[test]
fn requests_open_at_once_on_one_semaphore_are_bounded() {
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!(
            "{i},T{i},0,SEM,S,0,requestsemaphore\n{i},T{i},0,SEM,S,0,assigned\n"
        ));
    }
    let (s, rows) = derive(&text);
    assert_eq!(s.diag_counts.get("too_many_open_requests").map(|c| c.1), Some(5000 - 4096));
    assert_eq!(rows.locks.len(), 5000);
}

#[test]
fn a_request_logged_after_its_waiting_at_one_instant_is_one_request() {
    let (s, rows) = derive(
        "0,STI,0,T,T1,0,activate\n0,STI,0,T,T2,0,activate\n0,Core_0,0,T,T1,0,start\n\
         0,Core_1,0,T,T2,0,start\n1,T1,0,SEM,S,0,requestsemaphore\n1,T1,0,SEM,S,0,assigned\n\
         3,T2,0,SEM,S,0,waiting\n3,T2,0,SEM,S,0,requestsemaphore\n8,T1,0,SEM,S,0,released\n\
         8,T2,0,SEM,S,0,assigned\n9,T2,0,SEM,S,0,released\n",
    );
    assert_eq!(
        rows.locks,
        ["S T1 wait=Some(0) hold=Some(7)", "S T2 wait=Some(5) hold=Some(1) contended"]
    );
    assert_eq!(diag_count(&s, "request_inferred"), 1);
}
