//! Tests of the runnable state machine (`runnable.rs`): runnables following their task,
//! nested calls, runnables started before their task is seen, and the bounds on open
//! runnables.
use super::*;

#[test]
fn runnables_terminate_with_their_task() {
    // The runnable's own terminate follows its task's at the same time: folded in, no
    // suspension, no diagnostic.
    let (s, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,T,A,0,terminate\n20,A,0,R,R1,0,terminate\n",
    );
    assert!(rows.instances.contains(&"R1#0 rt=Some(9) net=9 complete=true".to_string()));
    assert!(!rows.intervals.iter().any(|i| i.contains("suspended")), "{:?}", rows.intervals);
    assert_eq!(s.diag_counts.len(), 0, "{:?}", s.diag_counts);
    // It never terminates on its own: it still ends with the task, and that is reported.
    let (s, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,T,A,0,terminate\n100,S,0,T,A,1,activate\n",
    );
    assert!(rows.instances.contains(&"R1#0 rt=Some(9) net=9 complete=true".to_string()));
    assert!(!rows.intervals.iter().any(|i| i.contains("suspended")), "{:?}", rows.intervals);
    assert_eq!(diag_count(&s, "ended_with_task"), 1);
    // A terminate of its own after that is a warning, not a second instance.
    let (s, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,T,A,0,terminate\n25,A,0,R,R1,0,terminate\n",
    );
    assert_eq!(rows.instances.iter().filter(|i| i.starts_with("R1#")).count(), 1);
    assert_eq!(diag_count(&s, "ended_with_task"), 1);
    assert_eq!(diag_count(&s, "invalid_transition"), 1);
}

#[test]
fn a_runnable_whose_task_terminates_as_an_isr_arrives_is_not_preempted() {
    // The ISR's start is written before the task's terminate of the same instant: the task
    // left the core by its own terminate, not preempted, and so did its runnable, which
    // ends with it (found by tests/oracle/btf_oracle.py: the runnable counted a preemption
    // and a zero-length suspended interval its task did not have).
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,I,ISR,0,start\n20,Core_0,0,T,A,0,terminate\n20,A,0,R,R1,0,terminate\n\
         30,Core_0,0,I,ISR,0,terminate\n",
    );
    assert!(rows.metrics.contains(&"A#0 net=10 ready=0 preempt=0 migr=0".to_string()));
    assert!(
        rows.metrics.contains(&"R1#0 net=9 ready=0 preempt=0 migr=0".to_string()),
        "{:?}",
        rows.metrics
    );
    assert!(!rows.intervals.iter().any(|i| i.contains("suspended")), "{:?}", rows.intervals);
    assert!(rows.intervals.contains(&"state R1 running [11,20) ".to_string()));
    // Waiting at that instant instead, it suspends its runnable from then on, once.
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,I,ISR,0,start\n20,Core_0,0,T,A,0,wait\n30,Core_0,0,I,ISR,0,terminate\n\
         40,Core_0,0,T,A,0,release\n",
    );
    assert!(rows.metrics.contains(&"A#0 net=10 ready=0 preempt=0 migr=0".to_string()));
    assert!(rows.intervals.contains(&"state R1 running [11,20) ".to_string()));
    assert!(rows.intervals.contains(&"state R1 suspended [20,40) open".to_string()));
}

#[test]
fn a_runnable_follows_its_task_to_another_core() {
    let (_, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n11,A,0,R,R1,0,start\n\
         20,Core_0,0,T,A,0,preempt\n30,Core_1,0,T,A,0,resume\n35,R1,0,SIG,V,-1,write,5\n\
         40,A,0,R,R1,0,terminate\n50,Core_1,0,T,A,0,terminate\n",
    );
    assert!(rows.events.contains(&"V#-1 write @Core_1".to_string()), "{:?}", rows.events);
    assert!(rows.events.contains(&"R1#0 terminate @Core_1".to_string()), "{:?}", rows.events);
}

#[test]
fn a_runnable_called_by_a_runnable_follows_the_callers_task() {
    let (s, rows) = derive(
        "0,S,0,T,TA,0,activate\n0,Core_0,0,T,TA,0,start\n0,TA,0,R,R1,0,start\n\
         10,R1,0,R,R2,0,start\n20,Core_0,0,T,TA,0,preempt\n60,Core_0,0,T,TA,0,resume\n\
         70,R1,0,R,R2,0,terminate\n80,TA,0,R,R1,0,terminate\n90,Core_0,0,T,TA,0,terminate\n",
    );
    assert!(rows.instances.contains(&"R2#0 rt=Some(60) net=20 complete=true".to_string()));
    assert!(
        rows.intervals.contains(&"state R2 suspended [20,60) ".to_string()),
        "{:?}",
        rows.intervals
    );
    let r2 = s.entities.iter().find(|e| s.names.resolve(e.name) == "R2").unwrap();
    assert_eq!(r2.parent.map(|p| s.names.resolve(p)), Some("TA"));
}

#[test]
fn a_runnable_suspended_by_its_own_call_waits_for_its_own_resume() {
    // libBtf (Vector's btf-toolchain) writes a nested call as the caller's `suspend` while
    // its task runs; the caller's `resume` comes when the callee terminates, not when the
    // task gets its core back after a preemption.
    let (s, rows) = derive(
        "#version 2.2.1\n#creator libBtf\n#timescale ns\n100,Core1,0,C,Core1,0,execute\n\
         200,Core1,0,T,Task1,0,start\n300,Task1,0,R,Runnable1,0,start\n\
         400,Task1,0,R,Runnable1,0,suspend\n400,Task1,0,R,Runnable2,0,start\n\
         500,Task1,0,R,Runnable2,0,suspend\n500,Core1,0,T,Task1,0,preempt\n\
         600,Core1,0,T,Task1,0,resume\n600,Task1,0,R,Runnable2,0,resume\n\
         700,Task1,0,R,Runnable2,0,terminate\n700,Task1,0,R,Runnable1,0,resume\n\
         800,Task1,0,R,Runnable1,0,terminate\n900,Core1,0,T,Task1,0,terminate\n\
         1000,Core1,0,C,Core1,0,idle\n",
    );
    let r1: Vec<_> = rows.intervals.iter().filter(|i| i.contains(" Runnable1 ")).collect();
    assert_eq!(
        r1,
        [
            "state Runnable1 running [300,400) ",
            "state Runnable1 suspended [400,700) ",
            "state Runnable1 running [700,800) "
        ]
    );
    assert!(rows.metrics.contains(&"Runnable1#0 net=200 ready=300 preempt=1 migr=0".into()));
    assert!(rows.metrics.contains(&"Runnable2#0 net=200 ready=100 preempt=1 migr=0".into()));
    assert!(rows.metrics.contains(&"Task1#0 net=600 ready=100 preempt=1 migr=0".into()));
    assert_eq!(s.diag_counts.keys().copied().collect::<Vec<_>>(), ["unknown_prior_state"]);
    // A runnable's own suspend written before its task's preempt at that instant is the
    // task's: the task's resume resumes it, whether or not its own resume is logged.
    let (_, rows) = derive(
        "0,Core1,0,T,Task1,0,start\n10,Task1,0,R,R1,0,start\n20,Task1,0,R,R1,0,suspend\n\
         20,Core1,0,T,Task1,0,preempt\n30,Core1,0,T,Task1,0,resume\n\
         40,Task1,0,R,R1,0,terminate\n50,Core1,0,T,Task1,0,terminate\n",
    );
    assert!(rows.metrics.contains(&"R1#0 net=20 ready=10 preempt=1 migr=0".into()));
}

#[test]
fn runnables_that_end_before_their_task_is_seen_still_get_it_as_parent() {
    // libBtf's "start of trace during runnable execution": the task's first event is its
    // terminate, after its runnables have ended.
    let (s, _) = derive(
        "#version 2.2.1\n#creator libBtf\n#timescale ns\n300,Task1,0,R,Runnable2,0,start\n\
         400,Task1,0,R,Runnable2,0,terminate\n500,Task1,0,R,Runnable1,0,terminate\n\
         550,Probe,0,R,Runnable3,0,start\n600,Core1,0,T,Task1,0,terminate\n",
    );
    let parent = |name: &str| {
        let e = s.entities.iter().find(|e| s.names.resolve(e.name) == name).unwrap();
        e.parent.map(|p| s.names.resolve(p).to_string())
    };
    assert_eq!(parent("Runnable2").as_deref(), Some("Task1"));
    assert_eq!(parent("Runnable1").as_deref(), Some("Task1"));
    assert_eq!(parent("Runnable3"), None, "Probe never shows itself a process");
}

#[test]
fn a_runnable_started_before_its_task_is_seen_is_linked_when_it_appears() {
    // The capture starts while TA runs R1; TA's first event is its preempt.
    let (_, rows) = derive(
        "0,TA,0,R,R1,0,start\n10,Core_0,0,T,TA,0,preempt\n10,S,0,T,TB,0,activate\n\
         10,Core_0,0,T,TB,0,start\n30,Core_0,0,T,TB,0,terminate\n30,Core_0,0,T,TA,0,resume\n\
         40,TA,0,R,R1,0,terminate\n50,Core_0,0,T,TA,0,terminate\n",
    );
    assert!(rows.instances.contains(&"R1#0 rt=Some(40) net=20 complete=true".to_string()));
    assert!(
        rows.intervals.contains(&"state R1 suspended [10,30) ".to_string()),
        "{:?}",
        rows.intervals
    );
}

#[test]
fn a_runnables_own_terminate_after_its_tasks_is_folded_whatever_ended_between() {
    let (s, rows) = derive(
        "0,STI_A,0,T,A,0,activate\n0,Core_0,0,T,A,0,start\n0,A,0,R,R,0,start\n\
         0,STI_A,1,T,A,1,activate\n0,Core_1,0,T,A,1,start\n0,A,1,R,R,1,start\n\
         100,Core_0,0,T,A,0,terminate\n100,A,1,R,R,1,terminate\n100,A,0,R,R,0,terminate\n\
         200,Core_1,0,T,A,1,terminate\n",
    );
    let r: Vec<&String> = rows.instances.iter().filter(|i| i.starts_with("R#")).collect();
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r.iter().all(|i| i.contains("complete=true")), "{r:?}");
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
}

#[test]
fn a_runnable_naming_an_instance_that_is_not_open_runs_in_the_running_one() {
    let (s, rows) = derive(
        "0,STI,0,T,TA,5,activate\n1,Core_0,0,T,TA,5,start\n2,TA,0,R,R1,0,start\n\
         5,Core_0,0,T,TA,5,preempt\n9,Core_0,0,T,TA,5,resume\n10,TA,0,R,R1,0,terminate\n\
         11,Core_0,0,T,TA,5,terminate\n",
    );
    assert_eq!(metric(&rows, "R1#0"), "R1#0 net=4 ready=4 preempt=1 migr=0");
    assert_eq!(diag_count(&s, "runnable_task_guessed"), 1);
}

#[test]
fn runnables_that_never_end_are_not_all_kept_open() {
    // One task starts 5000 runnables and ends none, then one more that it ends.
    let mut text = String::from("0,S,0,T,A,0,activate\n0,C0,0,T,A,0,start\n");
    for i in 0..5000 {
        text.push_str(&format!("{},A,0,R,R,{i},start\n", i + 1));
    }
    text.push_str("6000,A,0,R,Last,0,start\n6001,A,0,R,Last,0,terminate\n");
    let (s, rows) = derive(&text);
    assert_eq!(diag_count(&s, "too_many_open_instances"), 5001 - 4096);
    // Every runnable instance has its row; the evicted ones end where the bound was passed,
    // incomplete, their running state shown open.
    let r: Vec<&String> = rows.instances.iter().filter(|r| r.starts_with("R#")).collect();
    assert_eq!(r.len(), 5000);
    assert!(r.iter().all(|r| r.ends_with("complete=false")), "{:?}", &r[..3]);
    assert!(rows.instances.contains(&"R#0 rt=None net=4096 complete=false".to_string()));
    assert!(rows.intervals.contains(&"state R running [1,4097) open".to_string()));
    // The runnables still open and the task go on: the last runnable runs and ends whole.
    assert!(rows.instances.contains(&"Last#0 rt=Some(1) net=1 complete=true".to_string()));
}

#[test]
fn open_runnables_are_bounded_across_all_tasks() {
    // 40 tasks × 4000 runnables, none ended: under the per-task bound, over the total.
    let (tasks, each) = (40, 4000);
    let mut text = String::with_capacity(tasks * each * 24);
    for t in 0..tasks {
        text.push_str(&format!("0,S,0,T,T{t},0,activate\n"));
    }
    for i in 0..each {
        for t in 0..tasks {
            text.push_str(&format!("{},T{t},0,R,R{t},{i},start\n", i * tasks + t + 1));
        }
    }
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    assert_eq!(d.runnables.len(), crate::derive::runnable::MAX_OPEN_RUNNABLES);
    assert!(d.runnable_order.len() <= 2 * d.runnables.len() + 1024);
    let (s, rows) = d.finish().unwrap();
    let closed = (tasks * each - crate::derive::runnable::MAX_OPEN_RUNNABLES) as u64;
    assert_eq!(diag_count(&s, "too_many_open_instances"), closed);
    assert_eq!(rows.instances.len(), tasks + tasks * each);
}

#[test]
fn a_runnable_resumed_before_its_task_at_one_instant_runs_where_the_task_runs() {
    // The runnable's resume (and a runnable it calls, started at that instant) written
    // before its task's resume on another core: both run on the task's new core.
    let (s, rows) = derive(
        "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n0,T,0,R,R,0,start\n\
         10,Core_0,0,T,T,0,preempt\n20,T,0,R,R,0,resume\n20,R,0,R,R2,0,start\n\
         20,Core_1,0,T,T,0,resume\n25,R,0,R,R3,0,start\n30,R,0,R,R3,0,terminate\n\
         30,R,0,R,R2,0,terminate\n30,T,0,R,R,0,terminate\n30,Core_1,0,T,T,0,terminate\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    for iv in ["R#0 running [20,30) @Core_1", "R2#0 running [20,30) @Core_1"] {
        assert!(rows.interval_cores.iter().any(|r| r == iv), "{iv}: {:?}", rows.interval_cores);
    }
    assert!(rows.interval_cores.iter().any(|r| r == "R3#0 running [25,30) @Core_1"));
    // Events after that instant are on the task's core too.
    assert!(rows.events.contains(&"R3#0 start @Core_1".to_string()), "{:?}", rows.events);
    // Started by its own line before its task's start: its first core is the task's.
    for who in ["R2#0 @Core_1", "R3#0 @Core_1", "R#0 @Core_0"] {
        assert!(rows.instance_cores.iter().any(|r| r == who), "{who}: {:?}", rows.instance_cores);
    }
    // Started while its task runs on Core_0, then moved with it at that same instant (its
    // resume written before the task's): it started on Core_0, and then runs on Core_1.
    let (s, rows) = derive(
        "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n10,T,0,R,R,0,start\n\
         10,Core_0,0,T,T,0,preempt\n10,T,0,R,R,0,resume\n10,Core_1,0,T,T,0,resume\n\
         30,T,0,R,R,0,terminate\n30,Core_1,0,T,T,0,terminate\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    assert!(rows.instance_cores.contains(&"R#0 @Core_0".to_string()), "{:?}", rows.instance_cores);
    assert!(rows.interval_cores.contains(&"R#0 running [10,30) @Core_1".to_string()));
}

#[test]
fn a_runnable_first_seen_at_its_terminate_has_no_state_interval() {
    // Nothing is known of what it did before: no interval (a process whose first event is
    // its terminate has none either), only its instance row.
    let (s, rows) = derive(
        "0,STI_T,0,T,T,0,activate\n0,Core_0,0,T,T,0,start\n5,T,0,R,R,0,terminate\n\
         6,Core_0,0,T,U,0,terminate\n10,Core_0,0,T,T,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "unknown_prior_state"), 2);
    assert!(
        !rows.interval_cores.iter().any(|r| r.starts_with("R#0") || r.starts_with("U#0")),
        "{:?}",
        rows.interval_cores
    );
    assert!(rows.instances.iter().any(|i| i.starts_with("R#0") && i.contains("complete=false")));
}

#[test]
fn a_runnable_first_seen_suspended_gets_the_core_of_its_first_resume() {
    // A capture that begins as its task is preempted on Core_1 and resumed on Core_0 (at
    // once, or later): like the task, the runnable's `core` is that of its first resume, the
    // only core the capture shows it run on, not the one its suspend was logged on (found
    // by tests/oracle/btf_oracle.py on a cut of a generated system with migrating tasks).
    for resume_at in [0, 20] {
        let (s, rows) = derive(&format!(
            "0,Core_1,0,T,T,5,preempt\n0,T,5,R,R,5,suspend\n\
             {resume_at},Core_0,0,T,T,5,resume\n{resume_at},T,5,R,R,5,resume\n\
             30,T,5,R,R,5,terminate\n30,Core_0,0,T,T,5,terminate\n"
        ));
        assert_eq!(diag_count(&s, "unknown_prior_state"), 2);
        for who in ["T#5 @Core_0", "R#5 @Core_0"] {
            assert!(
                rows.instance_cores.iter().any(|r| r == who),
                "{who}: {:?}",
                rows.instance_cores
            );
        }
    }
    // Suspended when the capture begins and never resumed, or first seen at its terminate:
    // it is never seen to run, so no core (a process first seen at its terminate has none).
    let (_, rows) = derive(
        "0,Core_1,0,T,T,0,preempt\n0,T,0,R,R,0,suspend\n\
         5,Core_0,0,T,U,0,start\n6,U,0,R,Q,0,terminate\n7,Core_0,0,T,U,0,terminate\n",
    );
    for who in ["T#0 @-", "R#0 @-", "Q#0 @-", "U#0 @Core_0"] {
        assert!(rows.instance_cores.iter().any(|r| r == who), "{who}: {:?}", rows.instance_cores);
    }
}

#[test]
fn a_runnable_started_before_its_task_is_seen_started_where_the_task_then_leaves() {
    // The capture begins while T#29 runs: its runnable starts, then T's first event is its
    // preempt on Core_0, so the runnable started (and ran) on Core_0; T then resumes on
    // Core_1 at once. The runnable's core is that of its start, Core_0, not Core_1 (found
    // by tests/oracle/btf_oracle.py on a cut of a generated 8-core system).
    let (_, rows) = derive(
        "0,T,29,R,R,29,start\n10,Core_0,0,T,T,29,preempt\n10,T,29,R,R,29,suspend\n\
         10,Core_1,0,T,T,29,resume\n10,T,29,R,R,29,resume\n\
         20,T,29,R,R,29,terminate\n20,Core_1,0,T,T,29,terminate\n",
    );
    for who in ["R#29 @Core_0", "T#29 @Core_1"] {
        assert!(rows.instance_cores.iter().any(|r| r == who), "{who}: {:?}", rows.instance_cores);
    }
    assert!(rows.interval_cores.contains(&"R#29 running [0,10) @Core_0".to_string()));
    // Its task first seen at a resume was not running before: nothing says where the
    // runnable started, so its core is that of the resume.
    let (_, rows) = derive(
        "0,T,29,R,R,29,start\n10,Core_1,0,T,T,29,resume\n\
         20,T,29,R,R,29,terminate\n20,Core_1,0,T,T,29,terminate\n",
    );
    assert!(rows.instance_cores.contains(&"R#29 @Core_1".to_string()), "{:?}", rows.instance_cores);
}
