//! Tests of the process (task, ISR) state machine (`process.rs`): life cycles, invalid
//! transitions, notices, instances open at the end, and the bounds on open instances.
use super::*;

#[test]
fn simple_life_cycle() {
    let (s, rows) =
        derive("0,S,0,T,A,0,activate\n5,Core_0,0,T,A,0,start\n9,Core_0,0,T,A,0,terminate\n");
    assert_eq!(s.events, 3);
    assert_eq!(rows.instances, ["A#0 rt=Some(9) net=4 complete=true"]);
    assert_eq!(
        rows.intervals,
        ["state A active [0,5) ", "state A running [5,9) ", "running Core_0 A [5,9) "]
    );
}

#[test]
fn open_states_close_at_the_last_event() {
    let (_, rows) = derive("0,S,0,T,A,0,activate\n5,Core_0,0,T,A,0,start\n7,S,0,STI,S,0,trigger\n");
    assert_eq!(rows.instances, ["A#0 rt=None net=2 complete=false"]);
    assert!(rows.intervals.contains(&"state A running [5,7) open".to_string()));
}

#[test]
fn strict_stops_on_an_invalid_transition() {
    let mut d = Deriver::new(Rows::default(), "t.btf", true);
    let text = "0,S,0,T,A,0,activate\n1,Core_0,0,T,A,0,resume\n";
    let e = crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.btf: line 2: resume of A instance 0 in state active (expected ready) (warning \
         `invalid_transition`: --strict stops the ingest here)"
    );
}

#[test]
fn many_instances_keep_memory_flat() {
    // Terminated instances leave no state behind.
    let mut text = String::new();
    for i in 0..5000 {
        let t = i * 10;
        text.push_str(&format!(
            "{t},S,0,T,A,{i},activate\n{},Core_0,0,T,A,{i},start\n{},Core_0,0,T,A,{i},terminate\n",
            t + 1,
            t + 5
        ));
    }
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    assert!(d.procs.is_empty());
    let (_, rows) = d.finish().unwrap();
    assert_eq!(rows.instances.len(), 5000);
}

#[test]
fn a_repeated_terminate_makes_no_second_instance() {
    let (s, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n20,Core_0,0,T,A,0,terminate\n\
         20,Core_0,0,T,A,0,terminate\n",
    );
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
    assert_eq!(diag_count(&s, "invalid_transition"), 1);
}

#[test]
fn libbtf_migration_and_nowait_notices_change_nothing() {
    // libBtf's task migration: the task waits on Core1, `enforcedmigration` from the old
    // core and `fullmigration` from the new one, then released and resumed on Core2.
    let (s, rows) = derive(
        "#version 2.2.1\n#creator libBtf\n#timescale ns\n50,StimuliTask,0,STI,StimuliTask,0,trigger\n\
         50,StimuliTask,0,T,Task1,0,activate\n100,Core1,0,T,Task1,0,start\n\
         200,Core1,0,T,Task1,0,wait\n200,Core1,0,T,Task1,0,enforcedmigration\n\
         200,Core2,0,T,Task1,0,fullmigration\n300,Core2,0,T,Task1,0,release\n\
         300,Core2,0,T,Task1,0,resume\n350,Core2,0,T,Task1,0,nowait\n\
         360,Core2,0,T,Task1,0,boundedmigration\n370,Core2,0,T,Task1,0,phasemigration\n\
         400,Core2,0,T,Task1,0,terminate\n",
    );
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    assert_eq!(rows.metrics, ["Task1#0 net=200 ready=0 preempt=0 migr=1"]);
    assert_eq!(rows.instances, ["Task1#0 rt=Some(350) net=200 complete=true"]);
}

#[test]
fn a_preempt_after_a_wait_leaves_the_task_waiting() {
    // FreeRTOS's BTF logger (gentrace / btf_dump): a task that suspends itself is logged
    // `wait` (task_suspend), then `preempt` at its switch-out, then `release` (task_resume).
    let (s, rows) = derive(
        "#version 2.2.0\n#creator FreeRTOS trace logger\n#createDate Mar  5 2021 10:11:12\n\
         #timeScale ns\n0,Core_1,0,C,Core_1,0,set_frequence,100000000\n\
         200,Core_1,0,T,Task1,0,start,task_create\n200,Core_1,0,T,Task1,0,preempt,task_create\n\
         300,IDLE,0,T,Task1,0,resume,switched_in\n600,Task1,0,T,Task1,0,wait,task_suspend\n\
         610,Core_1,0,T,Task1,0,preempt,switched_out\n900,IDLE,0,T,Task1,0,release,task_resume\n\
         920,IDLE,0,T,Task1,0,resume,switched_in\n950,Core_1,0,T,Task1,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 1, "the preempt only, not the release");
    let t1: Vec<_> = rows.intervals.iter().filter(|i| i.starts_with("state Task1 ")).collect();
    assert_eq!(
        t1,
        [
            "state Task1 running [200,200) ",
            "state Task1 ready [200,300) ",
            "state Task1 running [300,600) ",
            "state Task1 waiting [600,900) ",
            "state Task1 ready [900,920) ",
            "state Task1 running [920,950) "
        ]
    );
    assert_eq!(rows.metrics, ["Task1#0 net=330 ready=120 preempt=1 migr=0"]);
}

#[test]
fn a_core_s_first_task_preempted_without_its_switch_in_is_an_unknown_prior_state() {
    // FreeRTOS SMP logger: every task is created from Core_0; Core_0's first switch-in is
    // written, Core_1's is not (its idle task is first seen being preempted there).
    let text = |third: &str| {
        format!(
            "#version 2.2.0\n#creator FreeRTOS trace logger\n#timeScale ns\n\
             0,Core_0,0,C,Core_0,0,set_frequency,20000000\n\
             0,Core_1,0,C,Core_1,0,set_frequency,20000000\n\
             10,Core_0,0,T,Run[1],0,preempt,create pri:4\n\
             20,Core_0,0,T,IDLE0[2],0,preempt,create pri:0\n\
             30,Core_0,0,T,IDLE1[3],0,preempt,create pri:0\n\
             40,Core_0,0,T,IDLE0[2],0,resume,\n{third}\
             60,Core_1,0,T,IDLE1[3],0,preempt,\n\
             70,Core_1,0,T,Run[1],0,resume,\n"
        )
    };
    let (s, rows) = derive(&text(""));
    assert_eq!(diag_count(&s, "invalid_transition"), 0, "{:?}", s.diag_counts);
    assert_eq!(diag_count(&s, "unknown_prior_state"), 1);
    // The machine goes on as before: ready from its creation and after the preempt (when it
    // started running in between is not in the trace), no preemption counted, not clean.
    let idle1: Vec<_> = rows.intervals.iter().filter(|i| i.starts_with("state IDLE1")).collect();
    assert_eq!(idle1, ["state IDLE1[3] ready [30,60) ", "state IDLE1[3] ready [60,70) open"]);
    assert!(rows.metrics.contains(&"IDLE1[3]#0 net=0 ready=40 preempt=0 migr=0".to_string()));
    assert!(rows.instances.iter().any(|r| r.starts_with("IDLE1[3]#0") && r.ends_with("false")));

    // Once Core_1 ran something, the same preempt is an invalid transition again.
    let (s, _) = derive(&text("50,Core_1,0,T,Run[1],0,resume,\n55,Core_1,0,T,Run[1],0,preempt,\n"));
    assert_eq!(diag_count(&s, "invalid_transition"), 1, "{:?}", s.diag_counts);
    assert_eq!(diag_count(&s, "unknown_prior_state"), 0);
    // And so it is for a task the trace does not create (its first event a release).
    let (s, _) =
        derive(&text("").replace(
            "30,Core_0,0,T,IDLE1[3],0,preempt,create pri:0",
            "30,X,0,T,IDLE1[3],0,release,",
        ));
    assert_eq!(diag_count(&s, "invalid_transition"), 1, "{:?}", s.diag_counts);
}

#[test]
fn a_first_preempt_noted_task_create_is_a_creation_not_a_preemption() {
    // BTFViewer's synthetic_trace_gen creates every task with a lone `preempt,task_create`.
    let text = |note: &str| {
        format!(
            "#creator synthetic_trace_gen\n#timeScale ns\n\
             10,Core_0,0,T,W,0,preempt,{note}\n20,Core_1,0,T,W,0,resume,\n\
             30,Core_1,0,T,W,0,preempt,\n"
        )
    };
    let (s, rows) = derive(&text("task_create"));
    assert!(s.diag_counts.is_empty(), "{:?}", s.diag_counts);
    assert_eq!(rows.metrics, ["W#0 net=10 ready=10 preempt=1 migr=0"]);
    // Any other note on a first preempt: the task ran until then (one more preemption).
    let (s, rows) = derive(&text("task_created"));
    assert_eq!(diag_count(&s, "unknown_prior_state"), 1);
    assert_eq!(rows.metrics, ["W#0 net=10 ready=10 preempt=2 migr=1"]);
}

#[test]
fn instances_that_never_end_are_not_all_kept_open() {
    let text: String = (0..5000).map(|i| format!("{i},S,0,T,A,{i},activate\n")).collect();
    let (s, rows) = derive(&text);
    // Every instance has its row; beyond 4096 open at once the oldest were closed early.
    assert_eq!(rows.instances.len(), 5000);
    assert_eq!(diag_count(&s, "too_many_open_instances"), 5000 - 4096);
    assert!(rows.instances.iter().all(|r| r.ends_with("complete=false")));
}

#[test]
fn open_instances_are_bounded_across_all_tasks() {
    // 70 tasks × 4000 activates, none terminated: under the per-task bound, over the total.
    let (tasks, each) = (70, 4000);
    let mut text = String::with_capacity(tasks * each * 24);
    for i in 0..each {
        for t in 0..tasks {
            text.push_str(&format!("{},S,0,T,T{t},{i},activate\n", i * tasks + t));
        }
    }
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    assert_eq!(d.procs.len(), crate::derive::process::MAX_OPEN_TOTAL);
    assert!(d.open_order.len() <= 2 * d.procs.len() + 1024);
    let (s, rows) = d.finish().unwrap();
    let closed = (tasks * each - crate::derive::process::MAX_OPEN_TOTAL) as u64;
    assert_eq!(diag_count(&s, "too_many_open_instances"), closed);
    // Nothing is lost: every instance has its row, the closed ones marked incomplete.
    assert_eq!(rows.instances.len(), tasks * each);
}

#[test]
fn an_activate_written_after_the_start_of_the_same_instant_is_that_instance_s() {
    let (s, rows) = derive(
        "20,Core_0,0,I,ISR2,0,start\n20,STI_J,0,I,ISR2,0,activate\n\
         30,Core_0,0,I,ISR2,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
    assert_eq!(rows.instances, ["ISR2#0 rt=Some(10) net=10 complete=true"]);
}
