//! Tests of core occupancy and event cores (`cores.rs`): which core an event is on, cores
//! told by name or role, migrations, ISRs interrupting a task with no preempt logged,
//! tail-chaining, and the order of events at one instant.
use super::*;

#[test]
fn two_instances_of_one_task_keep_their_own_cores() {
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n0,S,0,T,A,1,activate\n10,Core_0,0,T,A,0,start\n\
         12,Core_1,0,T,A,1,start\n15,A,0,R,R1,0,start\n16,A,1,R,R1,1,start\n\
         20,Core_0,0,T,A,0,preempt\n25,Core_0,0,T,A,0,resume\n30,A,0,R,R1,0,terminate\n\
         31,A,1,R,R1,1,terminate\n40,Core_0,0,T,A,0,terminate\n50,Core_1,0,T,A,1,terminate\n",
    );
    let r1: Vec<&str> =
        rows.events.iter().filter(|e| e.starts_with("R1#")).map(String::as_str).collect();
    assert_eq!(
        r1,
        [
            "R1#0 start @Core_0",
            "R1#1 start @Core_1",
            "R1#0 terminate @Core_0",
            "R1#1 terminate @Core_1"
        ]
    );
}

#[test]
fn a_core_declared_with_its_type_code_in_another_case_is_a_core() {
    // PE_0 is declared, so it is not inferred; `CORE` is `Core` in upper case.
    let (s, rows) = derive(
        "#entityTypeTable\n#-CORE PE_0\n#-cpu PE_1\n6,STI_Y,0,T,T1,0,activate\n\
         7,PE_0,0,T,T1,0,start\n9,PE_0,0,T,T1,0,terminate\n10,PE_1,0,T,T1,1,start\n\
         12,PE_1,0,T,T1,1,terminate\n",
    );
    assert!(rows.intervals.contains(&"running PE_0 T1 [7,9) ".to_string()), "{:?}", rows.intervals);
    assert!(
        rows.intervals.contains(&"running PE_1 T1 [10,12) ".to_string()),
        "{:?}",
        rows.intervals
    );
    assert_eq!(diag_count(&s, "core_inferred"), 0);
}

#[test]
fn an_undeclared_source_that_starts_a_task_is_a_core() {
    // Not named like a core (`CPU_0` would be one by name): taken for one by its role.
    let (s, rows) =
        derive("6,STI_Y,0,T,T1,0,activate\n7,PE_0,0,T,T1,0,start\n9,PE_0,0,T,T1,0,terminate\n");
    assert!(rows.intervals.contains(&"running PE_0 T1 [7,9) ".to_string()), "{:?}", rows.intervals);
    assert_eq!(diag_count(&s, "core_inferred"), 1);
    // A task resumed by the task it follows (FreeRTOS) is not taken for a core: its core is
    // known from its earlier events.
    let (s, rows) = derive("0,Core_0,0,T,B,0,preempt\n1,B,0,T,A,0,resume\n");
    assert_eq!(diag_count(&s, "core_inferred"), 0);
    assert!(!rows.intervals.iter().any(|i| i.starts_with("running B ")), "{:?}", rows.intervals);
}

#[test]
fn a_resume_on_another_core_while_running_moves_the_process() {
    // The preempt on Core_0 was lost: TA leaves Core_0 when it resumes on Core_1.
    let (s, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n30,Core_1,0,T,TA,0,resume\n\
         40,Core_1,0,T,TA,0,terminate\n",
    );
    assert_eq!(occupancy(&rows), ["running Core_0 TA [10,30) ", "running Core_1 TA [30,40) "]);
    assert_eq!(rows.metrics, ["TA#0 net=30 ready=0 preempt=1 migr=1"]);
    assert_eq!(diag_count(&s, "invalid_transition"), 1);
    assert!(rows.instances.iter().all(|i| i.contains("complete=false")), "{:?}", rows.instances);

    // Same time, "wrong" order: the resume on Core_1 comes first, then the preempt from
    // Core_0. The same as the other order: a preemption, a migration, a clean instance.
    for (first, second) in [
        ("50,Core_1,0,T,TA,0,resume", "50,Core_0,0,T,TA,0,preempt"),
        ("50,Core_0,0,T,TA,0,preempt", "50,Core_1,0,T,TA,0,resume"),
    ] {
        let (s, rows) = derive(&format!(
            "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n{first}\n{second}\n\
             50,Core_0,0,T,TB,0,start\n70,Core_1,0,T,TA,0,terminate\n"
        ));
        assert_eq!(metric(&rows, "TA#0"), "TA#0 net=60 ready=0 preempt=1 migr=1", "{first}");
        assert_eq!(
            occupancy(&rows),
            [
                "running Core_0 TA [10,50) ",
                "running Core_1 TA [50,70) ",
                "running Core_0 TB [50,70) open"
            ],
            "{first}"
        );
        assert!(
            rows.instances.iter().any(|i| i.starts_with("TA#0") && i.contains("complete=true")),
            "{:?}",
            rows.instances
        );
        for kind in ["wrong_core", "core_conflict", "invalid_transition"] {
            assert_eq!(diag_count(&s, kind), 0, "{kind} {first}");
        }
    }
}

#[test]
fn a_return_from_parking_on_another_core_is_a_migration() {
    let (_, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n20,Core_0,0,T,TA,0,poll\n\
         30,Core_0,0,T,TA,0,park\n40,Core_1,0,T,TA,0,poll_parking\n50,Core_1,0,T,TA,0,run\n\
         60,Core_1,0,T,TA,0,terminate\n",
    );
    assert_eq!(rows.metrics, ["TA#0 net=20 ready=0 preempt=0 migr=1"]);
}

#[test]
fn an_isr_without_a_preempt_of_the_task_interrupts_it() {
    // ISR1 nests ISR2; neither the task's preempt nor its resume is in the trace.
    let (s, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n20,STI,0,I,ISR1,0,activate\n\
         20,Core_0,0,I,ISR1,0,start\n22,Core_0,0,I,ISR2,0,start\n25,Core_0,0,I,ISR2,0,terminate\n\
         30,Core_0,0,I,ISR1,0,terminate\n50,Core_0,0,T,TA,0,terminate\n",
    );
    assert_eq!(
        occupancy(&rows),
        [
            "running Core_0 TA [10,20) ",
            "running Core_0 ISR1 [20,22) ",
            "running Core_0 ISR2 [22,25) ",
            "running Core_0 ISR1 [25,30) ",
            "running Core_0 TA [30,50) "
        ]
    );
    assert_eq!(
        metric(&rows, "TA#0"),
        "TA#0 net=30 ready=10 preempt=1 migr=0",
        "{:?}",
        rows.metrics
    );
    assert_eq!(diag_count(&s, "implicit_preemption"), 2);
    assert_eq!(diag_count(&s, "invalid_transition"), 0);

    // A trace that logs the task's preempt and resume after all: folded in, no warning.
    let (s, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n20,STI,0,I,ISR1,0,activate\n\
         20,Core_0,0,I,ISR1,0,start\n20,Core_0,0,T,TA,0,preempt\n30,Core_0,0,I,ISR1,0,terminate\n\
         30,Core_0,0,T,TA,0,resume\n50,Core_0,0,T,TA,0,terminate\n",
    );
    assert_eq!(
        metric(&rows, "TA#0"),
        "TA#0 net=30 ready=10 preempt=1 migr=0",
        "{:?}",
        rows.metrics
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
    assert_eq!(occupancy(&rows).len(), 3);

    // A task that takes the core with no preempt of the one there: a conflict, and the
    // displaced task is ready (not running beside it) until its next event.
    let (s, rows) = derive(
        "0,STI,0,T,TA,0,activate\n0,STI,0,T,TB,0,activate\n10,Core_0,0,T,TA,0,start\n\
         20,Core_0,0,T,TB,0,start\n30,Core_0,0,T,TB,0,terminate\n35,Core_0,0,T,TA,0,resume\n\
         50,Core_0,0,T,TA,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "core_conflict"), 1);
    assert_eq!(
        metric(&rows, "TA#0"),
        "TA#0 net=25 ready=15 preempt=1 migr=0",
        "{:?}",
        rows.metrics
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
}

/// A task's start written before the end (terminate, wait, preempt) of the task it replaces
/// on that core at the same instant: the two happened together, so no conflict, no invented
/// preemption, and the instance that ended is complete. An end at a later time is still a
/// conflict.
#[test]
fn a_start_written_before_the_end_it_follows_at_one_instant_is_no_conflict() {
    let trace = |end: &str, at: u32| {
        format!(
            "0,STI,0,T,TA,0,activate\n0,Core_0,0,T,TA,0,start\n5,STI,0,T,TB,0,activate\n\
             10,Core_0,0,T,TB,0,start\n{at},Core_0,0,T,TA,0,{end}\n20,Core_0,0,T,TB,0,terminate\n"
        )
    };
    for (end, ta) in [
        ("terminate", "TA#0 rt=Some(10) net=10 complete=true"),
        ("wait", "TA#0 rt=None net=10 complete=false"),
        ("preempt", "TA#0 rt=None net=10 complete=false"),
    ] {
        let (s, rows) = derive(&trace(end, 10));
        for kind in ["core_conflict", "invalid_transition"] {
            assert_eq!(diag_count(&s, kind), 0, "{end}: {kind}");
        }
        assert!(rows.instances.iter().any(|i| i == ta), "{end}: {:?}", rows.instances);
        let preempts = u32::from(end == "preempt");
        let want = format!(
            "TA#0 net=10 ready={} preempt={preempts} migr=0",
            if end == "preempt" { 10 } else { 0 }
        );
        assert_eq!(metric(&rows, "TA#0"), want, "{end}");
        let ta: Vec<_> = rows.interval_cores.iter().filter(|i| i.starts_with("TA#0")).collect();
        assert!(ta.iter().any(|i| i.as_str() == "TA#0 running [0,10) @Core_0"), "{end}: {ta:?}");
        let ready = ta.iter().any(|i| i.starts_with("TA#0 ready"));
        assert_eq!(ready, end == "preempt", "{end}: {ta:?}");
    }
    // TA ends at 12, two units after TB took its core: a conflict, as before.
    let (s, _) = derive(&trace("terminate", 12));
    assert_eq!(diag_count(&s, "core_conflict"), 1);
}

#[test]
fn tail_chained_isrs_interrupt_the_task_once() {
    // ISR2 takes the core the instant ISR1 leaves it: the task does not run in between,
    // so it is preempted once, and its runnable suspended once.
    let (s, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n10,TA,0,R,R1,0,start\n\
         20,STI,0,I,ISR1,0,activate\n20,Core_0,0,I,ISR1,0,start\n30,Core_0,0,I,ISR1,0,terminate\n\
         30,STI,0,I,ISR2,0,activate\n30,Core_0,0,I,ISR2,0,start\n40,Core_0,0,I,ISR2,0,terminate\n\
         45,TA,0,R,R1,0,terminate\n50,Core_0,0,T,TA,0,terminate\n",
    );
    assert_eq!(
        occupancy(&rows),
        [
            "running Core_0 TA [10,20) ",
            "running Core_0 ISR1 [20,30) ",
            "running Core_0 ISR2 [30,40) ",
            "running Core_0 TA [40,50) "
        ]
    );
    assert_eq!(metric(&rows, "TA#0"), "TA#0 net=20 ready=20 preempt=1 migr=0");
    assert_eq!(metric(&rows, "R1#0"), "R1#0 net=15 ready=20 preempt=1 migr=0");
    assert_eq!(diag_count(&s, "invalid_transition"), 0);

    // An ISR leaving as the capture ends: the task it interrupted runs again at that time.
    let (_, rows) = derive(
        "0,STI,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n20,Core_0,0,I,ISR1,0,start\n\
         30,Core_0,0,I,ISR1,0,terminate\n",
    );
    assert_eq!(
        occupancy(&rows),
        [
            "running Core_0 TA [10,20) ",
            "running Core_0 ISR1 [20,30) ",
            "running Core_0 TA [30,30) open"
        ]
    );
}

#[test]
fn an_isr_only_logger_is_read_as_a_logger_of_everything_would_be() {
    // Tail-chaining with other events of that instant in between.
    let (s, rows) = derive(
        "0,STI_T,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n0,T1,0,R,R1,0,start\n\
         100,STI_A,0,I,ISR_A,0,activate\n100,Core_0,0,I,ISR_A,0,start\n\
         200,Core_0,0,I,ISR_A,0,terminate\n200,STI_B,0,STI,STI_B,0,trigger\n\
         200,STI_U,0,T,U,0,activate\n200,STI_B,0,I,ISR_B,0,activate\n\
         200,Core_0,0,I,ISR_B,0,start\n300,Core_0,0,I,ISR_B,0,terminate\n\
         400,T1,0,R,R1,0,terminate\n400,Core_0,0,T,T1,0,terminate\n",
    );
    assert_eq!(metric(&rows, "T1#0"), "T1#0 net=200 ready=200 preempt=1 migr=0");
    assert_eq!(metric(&rows, "R1#0"), "R1#0 net=200 ready=200 preempt=1 migr=0");
    assert_eq!(diag_count(&s, "invalid_transition"), 0);

    // The ISR leaves and another task gets the core (its preempt of T1 logged or not): T1
    // was preempted once, by the ISR.
    for preempt in ["200,Core_0,0,T,T1,0,preempt\n", ""] {
        let (s, rows) = derive(&format!(
            "0,STI_T1,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n100,STI_I,0,I,ISR,0,activate\n\
             100,Core_0,0,I,ISR,0,start\n200,Core_0,0,I,ISR,0,terminate\n\
             200,STI_T2,0,T,T2,0,activate\n{preempt}200,Core_0,0,T,T2,0,start\n\
             300,Core_0,0,T,T2,0,terminate\n300,Core_0,0,T,T1,0,resume\n\
             400,Core_0,0,T,T1,0,terminate\n"
        ));
        assert_eq!(metric(&rows, "T1#0"), "T1#0 net=200 ready=200 preempt=1 migr=0", "{preempt}");
        assert_eq!(diag_count(&s, "core_conflict") + diag_count(&s, "invalid_transition"), 0);
    }

    // A spinning task parked by the ISR gets its lock meanwhile: it runs when the ISR ends.
    let (s, rows) = derive(
        "0,STI_A,0,T,A,0,activate\n0,Core_1,0,T,A,0,start\n0,A,0,SEM,S,0,requestsemaphore\n\
         0,A,0,SEM,S,0,assigned\n0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n\
         0,T,0,SEM,S,0,requestsemaphore\n0,T,0,SEM,S,0,waiting\n0,Core_0,0,T,T,0,poll\n\
         100,STI_I,0,I,ISR,0,activate\n100,Core_0,0,I,ISR,0,start\n150,A,0,SEM,S,0,released\n\
         150,Core_1,0,T,A,0,terminate\n150,T,0,SEM,S,0,assigned\n\
         150,Core_0,0,T,T,0,release_parking\n200,Core_0,0,I,ISR,0,terminate\n\
         300,T,0,SEM,S,0,released\n300,Core_0,0,T,T,0,terminate\n",
    );
    assert_eq!(metric(&rows, "T#0"), "T#0 net=100 ready=50 preempt=0 migr=0");
    assert_eq!(diag_count(&s, "invalid_transition"), 0);

    // A resume on Core_1 written before the ISR that takes Core_0 from the task: the ISR's
    // arrival is the preempt awaited.
    let (s, rows) = derive(
        "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n100,STI_I,0,I,ISR,0,activate\n\
         100,Core_1,0,T,T,0,resume\n100,Core_0,0,I,ISR,0,start\n\
         200,Core_0,0,I,ISR,0,terminate\n300,Core_1,0,T,T,0,terminate\n",
    );
    assert_eq!(metric(&rows, "T#0"), "T#0 net=300 ready=0 preempt=1 migr=1");
    assert!(rows.instances.iter().any(|i| i.starts_with("T#0") && i.contains("complete=true")));
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
}

#[test]
fn a_migration_written_in_any_order_moves_the_task_and_its_runnable_alike() {
    // The task's and the runnable's lines of one instant, in the orders of two cores' logs.
    let orders = [
        [
            "100,Core_0,0,T,T,0,preempt",
            "100,T,0,R,R,0,suspend",
            "100,Core_1,0,T,T,0,resume",
            "100,T,0,R,R,0,resume",
        ],
        [
            "100,Core_0,0,T,T,0,preempt",
            "100,Core_1,0,T,T,0,resume",
            "100,T,0,R,R,0,resume",
            "100,T,0,R,R,0,suspend",
        ],
        [
            "100,Core_1,0,T,T,0,resume",
            "100,T,0,R,R,0,resume",
            "100,Core_0,0,T,T,0,preempt",
            "100,T,0,R,R,0,suspend",
        ],
        [
            "100,Core_1,0,T,T,0,resume",
            "100,Core_0,0,T,T,0,preempt",
            "100,T,0,R,R,0,suspend",
            "100,T,0,R,R,0,resume",
        ],
    ];
    // The first order is the one of a single log; every other gives what it gives.
    let mut first = None;
    for lines in orders {
        let (s, rows) = derive(&format!(
            "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n0,T,0,R,R,0,start\n{}\n\
             200,T,0,R,R,0,terminate\n200,Core_1,0,T,T,0,terminate\n",
            lines.join("\n")
        ));
        assert_eq!(metric(&rows, "T#0"), "T#0 net=200 ready=0 preempt=1 migr=1", "{lines:?}");
        let r = metric(&rows, "R#0").to_string();
        assert!(r.starts_with("R#0 net=200 ready=0 preempt=1"), "{lines:?} {r}");
        assert_eq!(&r, first.get_or_insert_with(|| r.clone()), "{lines:?}");
        assert!(s.diag_counts.is_empty(), "{lines:?} {:?}", s.diag_counts);
    }
    // A spinning task parked on Core_0 and back to polling on Core_1, either order.
    for (a, b) in [
        ("100,Core_0,0,T,T,0,park", "100,Core_1,0,T,T,0,poll_parking"),
        ("100,Core_1,0,T,T,0,poll_parking", "100,Core_0,0,T,T,0,park"),
    ] {
        let (s, rows) = derive(&format!(
            "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n0,Core_0,0,T,T,0,poll\n{a}\n{b}\n\
             200,Core_1,0,T,T,0,run\n300,Core_1,0,T,T,0,terminate\n"
        ));
        assert_eq!(metric(&rows, "T#0"), "T#0 net=100 ready=0 preempt=0 migr=1", "{a}");
        assert!(rows.instances.iter().any(|i| i.starts_with("T#0") && i.contains("complete=true")));
        assert!(s.diag_counts.is_empty(), "{a} {:?}", s.diag_counts);
    }
}

#[test]
fn an_activate_by_a_stimulus_happens_on_no_core() {
    // The new instance runs nowhere yet: its activate takes no core from the one before.
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n1,Core_1,0,T,A,0,start\n2,Core_1,0,T,A,0,terminate\n\
         5,S,0,T,A,1,activate\n6,Core_0,0,T,A,1,start\n7,Core_1,0,T,B,0,activate\n",
    );
    assert_eq!(
        rows.events,
        [
            "A#0 activate @-",
            "A#0 start @Core_1",
            "A#0 terminate @Core_1",
            "A#1 activate @-",
            "A#1 start @Core_0",
            "B#0 activate @Core_1"
        ]
    );
}

#[test]
fn cores_are_told_by_name_wherever_the_word_is() {
    for (name, core) in [
        ("Core_0", true),
        ("core1", true),
        ("CPU0", true),
        ("ECU1_Core0", true),
        ("P0/cpu1", true),
        ("CoreMonitor", false),
        ("Scoreboard", false),
        ("[0/0000]", false),
        ("TASK_A", false),
    ] {
        assert_eq!(crate::derive::cores::looks_like_core(name), core, "{name}");
    }
    // A core named ECU1_Core1, first seen resuming a task that migrates to it: the event is
    // on ECU1_Core1, not on the core the task came from.
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n0,ECU1_Core0,0,T,A,0,start\n5,ECU1_Core0,0,T,A,0,preempt\n\
         6,ECU1_Core1,0,T,A,0,resume\n9,ECU1_Core1,0,T,A,0,terminate\n",
    );
    assert_eq!(
        rows.events,
        [
            "A#0 activate @-",
            "A#0 start @ECU1_Core0",
            "A#0 preempt @ECU1_Core0",
            "A#0 resume @ECU1_Core1",
            "A#0 terminate @ECU1_Core1"
        ]
    );
}

/// The metrics row of `who` (entity#instance) in `rows`.
fn metrics_of<'a>(rows: &'a Rows, who: &str) -> &'a str {
    let prefix = format!("{who} ");
    rows.metrics.iter().find(|m| m.starts_with(&prefix)).map_or("", String::as_str)
}

#[test]
fn an_isr_ending_as_the_next_one_arrives_hands_the_interrupted_task_on() {
    // ISR2 starts on the core before ISR1's terminate, both at 20 (tail-chaining written
    // the other way round): ISR1 was not preempted, and TaskA, interrupted by ISR1, stays
    // so until ISR2 leaves, then runs to its end.
    let (s, rows) = derive(
        "0,STI,0,T,TaskA,0,activate\n0,Core_0,0,T,TaskA,0,start\n\
         10,STI_I,0,I,ISR1,0,activate\n10,Core_0,0,I,ISR1,0,start\n\
         20,STI_J,0,I,ISR2,0,activate\n20,Core_0,0,I,ISR2,0,start\n\
         20,Core_0,0,I,ISR1,0,terminate\n30,Core_0,0,I,ISR2,0,terminate\n\
         50,Core_0,0,T,TaskA,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
    assert_eq!(metrics_of(&rows, "TaskA#0"), "TaskA#0 net=30 ready=20 preempt=1 migr=0");
    assert_eq!(metrics_of(&rows, "ISR1#0"), "ISR1#0 net=10 ready=0 preempt=0 migr=0");
    assert!(rows.instances.iter().all(|r| r.ends_with("complete=true")), "{:?}", rows.instances);
    assert!(!rows.intervals.iter().any(|i| i.starts_with("state ISR1 ready")));
}

#[test]
fn an_interrupted_instance_resumes_whatever_another_instance_does_meanwhile() {
    // TaskA 1 is preempted on Core_1 as ISR1 leaves Core_0: that is not TaskA 0 staying
    // off its core.
    let (s, rows) = derive(
        "0,STI,0,T,TaskA,0,activate\n0,Core_0,0,T,TaskA,0,start\n\
         5,STI,0,T,TaskA,1,activate\n5,Core_1,0,T,TaskA,1,start\n\
         10,STI_I,0,I,ISR1,0,activate\n10,Core_0,0,I,ISR1,0,start\n\
         20,Core_0,0,I,ISR1,0,terminate\n20,Core_1,0,T,TaskA,1,preempt\n\
         30,Core_1,0,T,TaskA,1,resume\n40,Core_0,0,T,TaskA,0,terminate\n\
         50,Core_1,0,T,TaskA,1,terminate\n",
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
    assert_eq!(metrics_of(&rows, "TaskA#0"), "TaskA#0 net=30 ready=10 preempt=1 migr=0");
    assert!(rows.instances.iter().all(|r| r.ends_with("complete=true")), "{:?}", rows.instances);
}

#[test]
fn tail_chaining_holds_whatever_comes_between_at_that_instant() {
    // Between ISR1 leaving and ISR2 arriving at 20: an activate of another instance of
    // the task, or the interrupted task's own resume. Either way one preemption.
    for between in ["20,STI,0,T,TaskA,1,activate\n", "20,Core_0,0,T,TaskA,0,resume\n"] {
        let text = format!(
            "0,STI,0,T,TaskA,0,activate\n0,Core_0,0,T,TaskA,0,start\n\
             10,STI_I,0,I,ISR1,0,activate\n10,Core_0,0,I,ISR1,0,start\n\
             20,Core_0,0,I,ISR1,0,terminate\n{between}20,STI_J,0,I,ISR2,0,activate\n\
             20,Core_0,0,I,ISR2,0,start\n30,Core_0,0,I,ISR2,0,terminate\n\
             50,Core_0,0,T,TaskA,0,terminate\n"
        );
        let (s, rows) = derive(&text);
        assert_eq!(diag_count(&s, "invalid_transition"), 0, "{between}");
        assert_eq!(
            metrics_of(&rows, "TaskA#0"),
            "TaskA#0 net=30 ready=20 preempt=1 migr=0",
            "{between}"
        );
    }
}
