//! Tests of the models' events: task types and jumbo text, marks and their types, invalid
//! transitions, runtime events of inactive threads, executes, models with no channels.
use super::*;

#[test]
fn jumbo_events_carry_text_and_task_types_name_tasks() {
    let w = W::new(false);
    let mut ty = w.u32(7).to_vec();
    ty.extend(b"solver\0");
    let task = |w: &W, id: u32, other: u32| {
        let mut p = w.u32(id).to_vec();
        p.extend(w.u32(other));
        p
    };
    let w = w.ohx(0, -1);
    let (c, x, e) = (task(&w, 3, 7), task(&w, 3, 0), task(&w, 3, 0));
    let b = w.jumbo("VYc", 1, &ty).ev("VTc", 2, &c).ev("VTx", 5, &x).ev("VTe", 9, &e).bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(
        rec.events[1],
        "1|TH 1.1|-1|VYc|creates task type 7 with label \"solver\"|Some(7.0)|vCPU 0.*"
    );
    let tasks: Vec<_> = rec.events.iter().filter(|e| e.contains("|solver|")).collect();
    assert_eq!(
        tasks,
        [
            "2|solver|3|activate|VTc of task 3|None|-",
            "5|solver|3|start|VTx of task 3|None|vCPU 0.*",
            "9|solver|3|terminate|VTe of task 3|None|vCPU 0.*"
        ]
    );
}

#[test]
fn marks_follow_the_active_thread_with_labels_from_the_metadata() {
    let w = W::new(false);
    let mark = |w: &W, v: u64, t: u32| {
        let mut p = w.u64(v).to_vec();
        p.extend(w.u32(t));
        p
    };
    let w = w.ohx(0, -1);
    let (m1, m2) = (mark(&w, 2, 5), mark(&w, 2, 5));
    let b = w.ev("OM[", 10, &m1).ev("OHp", 20, &[]).ev("OHr", 30, &[]).ev("OM]", 40, &m2).bytes;
    let rec = run(vec![(1, b)]);
    // No metadata: the type is unknown (said once), its channel named after it.
    assert_eq!(rec.diags.iter().filter(|d| d.0 == "unknown_mark_type").count(), 1);
    let marks: Vec<_> = rec.sets.iter().filter(|s| s.contains("Mark 5")).cloned().collect();
    assert_eq!(
        marks,
        [
            "10 TH 1.1 Mark 5=2 -",
            "10 vCPU 0.* Mark 5=2 -",
            "20 TH 1.1 Mark 5=0 -",
            "20 vCPU 0.* Mark 5=0 -",
            "30 TH 1.1 Mark 5=2 -",
            "30 vCPU 0.* Mark 5=2 -",
            "40 TH 1.1 Mark 5=0 -",
            "40 vCPU 0.* Mark 5=0 -",
        ]
    );
}

#[test]
fn an_invalid_transition_is_said_and_followed() {
    let b = W::new(false).ev("OHr", 1, &[]).bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.diags.len(), 1);
    assert_eq!(rec.diags[0].0, "bad_thread_transition");
    assert!(rec.diags[0].1.contains("TH 1.1 OHr in state Unknown"), "{}", rec.diags[0].1);
}

#[test]
fn runtime_events_of_a_thread_that_is_not_active_change_nothing() {
    // ovni's models refuse a nOS-V/Nanos6 event of a thread that is not Running, Cooling or
    // Warming (its emulator stops): said, and nothing changes.
    let b = W::new(false)
        .ev("VHw", 50, &[])
        .ohx(100, -1)
        .ev("VHw", 110, &[])
        .ev("OHc", 115, &[])
        .ev("VAs", 116, &[])
        .ev("VAS", 117, &[])
        .ev("OHp", 120, &[])
        .ev("VAs", 130, &[])
        .task("VTc", 140, 1, 1)
        .ev("OHr", 150, &[])
        .task("VTx", 160, 1, 0)
        .ev("VHW", 170, &[])
        .ev("OHe", 200, &[])
        .ev("VHW", 210, &[])
        .bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(
        rec.kinds(),
        [
            "thread_not_active",
            "thread_not_active",
            "thread_not_active",
            "bad_task_event",
            "thread_not_active"
        ],
        "{:?}",
        rec.diags
    );
    let msgs: Vec<&str> = rec.diags.iter().map(|d| d.1.as_str()).collect();
    assert!(msgs[0].contains("TH 1.1 VHw while the thread is Unknown"), "{msgs:?}");
    assert!(msgs[1].contains("VAs while the thread is Paused"), "{msgs:?}");
    assert!(msgs[2].contains("VTc while the thread is Paused"), "{msgs:?}");
    assert!(msgs[3].contains("VTx of task 1: no such task was created"), "{msgs:?}");
    assert!(msgs[4].contains("VHW while the thread is Dead"), "{msgs:?}");
    // The subsystem (times from the first event, clock 50): Worker from 60, Submit while
    // Cooling (active), nothing pushed while paused; the pop at 120 finds Worker on top (no
    // bad_subsystem_pop).
    let ss: Vec<_> =
        rec.sets.iter().filter(|s| s.contains("TH 1.1 nOS-V subsystem")).cloned().collect();
    assert_eq!(
        ss,
        [
            "60 TH 1.1 nOS-V subsystem of the ACTIVE thread=32 Thread: Worker",
            "66 TH 1.1 nOS-V subsystem of the ACTIVE thread=14 API: Submit",
            "67 TH 1.1 nOS-V subsystem of the ACTIVE thread=32 Thread: Worker",
            "70 TH 1.1 nOS-V subsystem of the ACTIVE thread=0 -",
            "100 TH 1.1 nOS-V subsystem of the ACTIVE thread=32 Thread: Worker",
            "120 TH 1.1 nOS-V subsystem of the ACTIVE thread=0 -",
        ]
    );
    // No task instance.
    assert!(!rec.events.iter().any(|e| e.contains("|activate|")));
}

#[test]
fn an_execute_with_a_short_payload_still_runs_the_thread_on_its_cpu() {
    // ovni's emulator needs only the i32 cpu of OHx (payload of at least 4 bytes); an 8-byte
    // one (cpu, tid) is not what its table says (said once) but the thread runs all the same.
    let w = W::new(false);
    let mut p = w.u32(u32::MAX).to_vec();
    p.extend(w.u32(7));
    let b = w.ev("OHx", 10, &p).ev("OHe", 20, &[]).bytes;
    let rec = run(vec![(1, b)]);
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["unknown_event"]);
    assert!(
        rec.sets.iter().any(|s| s == "0 TH 1.1 Thread: thread state=1 Running"),
        "{:?}",
        rec.sets
    );
    assert_eq!(rec.events[0], "0|TH 1.1|-1|OHx|ff ff ff ff 07 00 00 00|None|vCPU 0.*");
    // A payload too short for the cpu changes nothing (and the end is then out of place).
    let b = W::new(false).ev("OHx", 10, &[1, 0]).ev("OHe", 20, &[]).bytes;
    let rec = run(vec![(1, b)]);
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["unknown_event", "bad_thread_transition"]);
}

#[test]
fn an_execute_of_a_thread_that_has_a_cpu_is_said() {
    // ovni's emulator executes a thread only when it has no CPU (before its first OHx, or
    // after its OHe: thread_set_cpu refuses a second one); a Paused thread has its CPU.
    let b = W::new(false)
        .ohx(0, -1)
        .ev("OHp", 10, &[])
        .ohx(20, -1)
        .ev("OHe", 30, &[])
        .ohx(40, -1)
        .ev("OHe", 50, &[])
        .bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.diags.len(), 1, "{:?}", rec.diags);
    assert_eq!(rec.diags[0].0, "bad_thread_transition");
    assert!(rec.diags[0].1.contains("TH 1.1 OHx in state Paused"), "{}", rec.diags[0].1);
    // Taken as running from there, as the other transitions are.
    assert!(
        rec.sets.iter().any(|s| s == "20 TH 1.1 Thread: thread state=1 Running"),
        "{:?}",
        rec.sets
    );
}

#[test]
fn events_of_a_model_with_no_channels_here_are_kept_and_said_once_per_model() {
    // MPI (`MUf`/`MUF`) and kernel (`KCO`) events: rows in events, one info per model.
    let b = W::new(false)
        .ohx(0, -1)
        .ev("MUf", 10, &[])
        .ev("MUF", 20, &[])
        .ev("KCO", 30, &[])
        .ev("OHe", 40, &[])
        .bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.events.len(), 5);
    let d: Vec<_> = rec.diags.iter().map(|d| (d.0.as_str(), d.1.contains("MPI"))).collect();
    assert_eq!(d, [("unmodelled_event", true), ("unmodelled_event", false)]);
    assert!(rec.diags[1].1.contains("KCO is an event of ovni's kernel model"), "{:?}", rec.diags);
}

#[test]
fn a_mark_type_without_a_title_is_said_and_named_by_its_number() {
    let mut m = meta::Meta::default();
    m.merge_json(r#"{"ovni": {"mark": {"4": {"chan_type": "stack"}}}}"#, "s.json");
    assert_eq!(m.problems.len(), 1, "{:?}", m.problems);
    assert!(m.problems[0].contains("mark type 4 has no title"), "{:?}", m.problems);
    assert_eq!(m.marks[&4].title, "Mark 4");
}
