//! Tests of the bounds on untrusted streams: jumbo events and the data the merge holds,
//! mark stacks and types, small memory bounds, and mutated streams that must never panic.
use super::*;

#[test]
fn a_jumbo_event_beyond_the_bound_is_skipped_over_not_held() {
    let w = W::new(false);
    let big = vec![b'a'; (stream::MAX_JUMBO + 5) as usize];
    let b = w.jumbo("VYc", 1, &big).ev("OHx", 2, &[0; 16]).bytes;
    let mut r = StreamReader::new(&b[8..], Endian::Little);
    let ev = r.next_event().unwrap().unwrap();
    assert_eq!((ev.jumbo_len, ev.jumbo.as_ref().map(Vec::len)), (stream::MAX_JUMBO + 5, Some(0)));
    assert_eq!(&r.next_event().unwrap().unwrap().mcv, b"OHx");
    assert!(r.next_event().unwrap().is_none());
}

#[test]
fn an_oversized_jumbo_event_is_said_and_kept_without_its_data() {
    let big = vec![b'a'; (stream::MAX_JUMBO + 1) as usize];
    // (after an OHx: ovni's models refuse an event of a thread that has not begun)
    let rec = run(vec![(1, W::new(false).ohx(0, -1).jumbo("VYc", 1, &big).bytes)]);
    assert_eq!(rec.events.len(), 2);
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["jumbo_too_large", "unknown_event"], "{:?}", rec.diags);
    assert!(rec.diags[0].1.contains("VYc jumbo event of 1048577 bytes"), "{}", rec.diags[0].1);
}

#[test]
fn jumbo_data_held_by_the_merge_is_bounded() {
    // 34 streams whose first event is a 1 MiB jumbo event: all wait in the merge at once;
    // 32 MiB are held, the last two are kept without their data.
    let data = vec![b'a'; stream::MAX_JUMBO as usize];
    let streams: Vec<_> =
        (1..=34).map(|t| (t, W::new(false).jumbo("Zjj", t as u64, &data).bytes)).collect();
    let rec = run(streams);
    assert_eq!(rec.events.len(), 34);
    let over: Vec<_> = rec.diags.iter().filter(|d| d.0 == "jumbo_over_budget").collect();
    assert_eq!(over.len(), 2, "{:?}", rec.diags.iter().map(|d| &d.0).collect::<Vec<_>>());
    assert!(
        over[0].1.starts_with("byte 8: loom.a/proc.1/thread.33: Zjj jumbo event"),
        "{}",
        over[0].1
    );
    // The unknown code is said once, with the first stream's payload (kept).
    assert!(rec.events[0].contains("|61 61 61"), "{}", &rec.events[0][..60]);
    assert_eq!(rec.events[33], "33|TH 1.34|-1|Zjj|-|None|-");
}

#[test]
fn a_mark_stack_is_at_most_ovnis_depth() {
    let w = W::new(false);
    let mark = |w: &W, v: u64| {
        let mut p = w.u64(v).to_vec();
        p.extend(w.u32(5));
        p
    };
    let mut w = w.ohx(0, -1);
    let n = emu::MAX_MARK_STACK as u64 + 3;
    for v in 1..=n {
        let m = mark(&w, v);
        w = w.ev("OM[", v, &m);
    }
    for v in (1..=n).rev() {
        let m = mark(&w, v);
        w = w.ev("OM]", 2 * n - v + 1, &m);
    }
    let rec = run(vec![(1, w.bytes)]);
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    // 3 pushes refused, their pops matched without complaint; the rest pops cleanly.
    assert_eq!(
        kinds,
        ["unknown_mark_type", "mark_stack_full", "mark_stack_full", "mark_stack_full"]
    );
    assert!(
        rec.diags[1].1.contains("pushes mark 513 of type 5 on a stack of 512"),
        "{}",
        rec.diags[1].1
    );
    let last = rec.sets.iter().rfind(|s| s.contains("TH 1.1 Mark 5")).unwrap();
    assert_eq!(last, &format!("{} TH 1.1 Mark 5=0 -", 2 * n));
}

#[test]
fn undeclared_mark_types_are_bounded() {
    let w = W::new(false);
    let mark = |w: &W, t: u32| {
        let mut p = w.u64(1).to_vec();
        p.extend(w.u32(t));
        p
    };
    let mut w = w.ohx(0, -1);
    let n = emu::MAX_UNKNOWN_MARK_TYPES as u32 + 2;
    for t in 1..=n {
        let m = mark(&w, t);
        w = w.ev("OM=", u64::from(t), &m);
    }
    let rec = run(vec![(1, w.bytes)]);
    let count = |k: &str| rec.diags.iter().filter(|d| d.0 == k).count();
    // Each type up to the bound is said unknown and gets its channel; beyond, one warning.
    assert_eq!(count("unknown_mark_type"), emu::MAX_UNKNOWN_MARK_TYPES);
    assert_eq!(count("too_many_mark_types"), 1);
    let channel = |t: u32| rec.sets.iter().any(|s| s.contains(&format!("TH 1.1 Mark {t}=1")));
    assert!(channel(emu::MAX_UNKNOWN_MARK_TYPES as u32));
    assert!(!channel(n - 1) && !channel(n));
    // Their events are all kept.
    assert_eq!(rec.events.iter().filter(|e| e.contains("|OM=|")).count(), n as usize);
}

#[test]
fn small_memory_bounds_keep_every_task_instance_and_channel() {
    // 12 ordinary nOS-V tasks one after another, task 12 running again, then 6 parallel
    // tasks whose 3 bodies run in the order 3, 1, 2; read with the default bounds and with
    // 3 tasks (and bodies) followed and 3 ended tasks remembered: the same task rows and
    // channels, the small bounds only saying that ended tasks were forgotten.
    let mut ty = W::new(false).u32(1).to_vec();
    ty.extend(b"A\0");
    let mut w = W::new(false).ohx(100, -1).jumbo("VYc", 101, &ty);
    let mut t = 200;
    let mut next = || {
        t += 10;
        t
    };
    for id in 1..=12 {
        w = w.task("VTc", next(), id, 1).task("VTx", next(), id, 0).task("VTe", next(), id, 0);
    }
    w = w.task("VTx", next(), 12, 0).task("VTe", next(), 12, 0);
    for id in 21..=26 {
        w = w.task("VTC", next(), id, 1);
        for b in [3, 1, 2] {
            w = w.task("VTx", next(), id, b).task("VTe", next(), id, b);
        }
    }
    let b = w.ev("OHe", next(), &[]).bytes;
    let small = runtime::Caps { followed: 3, ended: 3, types: 4 };
    let (all, few) = (run(vec![(1, b.clone())]), run_with(vec![(1, b)], small));
    assert_eq!(all.kinds(), Vec::<&str>::new());
    assert_eq!(few.kinds(), ["ended_tasks_forgotten"]);
    assert_eq!(few.events, all.events);
    assert_eq!(few.sets, all.sets);
    // 13 runs of ordinary tasks (activate, start, terminate); per parallel task body 1
    // activated at its creation, then start and terminate, bodies 2 and 3 activated at their
    // execute.
    let rows = |r: &Rec, what: &str| r.events.iter().filter(|e| e.contains(what)).count();
    assert_eq!(rows(&few, "|A|"), 13 * 3 + 6 * 9);
    assert_eq!(rows(&few, "|activate|"), 13 + 6 * 3);
    assert_eq!(rows(&few, "|terminate|"), 13 + 6 * 3);
    assert!(few
        .events
        .iter()
        .any(|e| e.contains("|A|51539607554|activate|VTx of task 12 (runs again: run 2)|")));
    // Each body shows on the thread's body ID channel.
    assert_eq!(
        few.sets
            .iter()
            .filter(|s| s.contains("TH 1.1 nOS-V task body ID of the RUNNING thread=3"))
            .count(),
        6
    );
}

/// Untrusted streams never panic: two threads' streams with thread, nOS-V and Nanos6 task,
/// subsystem, mark and jumbo events, cut at every byte and with every byte changed, end in
/// Ok or Err.
#[test]
fn mutated_streams_never_panic() {
    let label = br#"{"type": 1, "label": "work"}"#;
    let a = W::new(false)
        .ohx(100, -1)
        .jumbo("VYc", 110, b"\x01\x00\x00\x00work\x00")
        .task("VTc", 120, 7, 1)
        .task("VTx", 130, 7, 0)
        .ev("VAs", 140, &[])
        .ev("VAS", 150, &[])
        .task("VTp", 160, 7, 0)
        .task("VTr", 170, 7, 0)
        .task("VTe", 175, 7, 0)
        .task("VTC", 176, 9, 1)
        .task("VTx", 177, 9, 1)
        .task("VTe", 180, 9, 1)
        .ev("OM[", 190, &[1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        .ev("OM]", 200, &[1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        .jumbo("Zjj", 205, label)
        .ev("OHp", 210, &[])
        .ev("OHr", 220, &[])
        .ev("OHe", 300, &[])
        .bytes;
    let b = W::new(false)
        .ohx(105, -1)
        .jumbo("6Yc", 115, b"\x02\x00\x00\x00nested\x00")
        .task("6Tc", 125, 3, 2)
        .ev("6Tx", 135, &[3, 0, 0, 0])
        .ev("6Tp", 145, &[3, 0, 0, 0])
        .ev("6Tr", 155, &[3, 0, 0, 0])
        .ev("6Te", 165, &[3, 0, 0, 0])
        .ev("OHc", 250, &[])
        .ev("OHe", 310, &[])
        .bytes;
    let go = |a: &[u8], b: &[u8]| {
        let mut rec = Rec::default();
        let inputs = vec![(file(1), a), (file(2), b)];
        read_with(inputs, &mut rec, runtime::Caps::default()).map(|_| rec)
    };
    // Unchanged, every event is read and the models complain of nothing but what the
    // streams lack (metadata, the mark type's declaration) or hold on purpose (Zjj).
    let whole = go(&a, &b).unwrap();
    assert_eq!(whole.events.len(), 42, "{:#?}", whole.events);
    let kinds: Vec<&str> = whole.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(
        kinds,
        ["missing_metadata", "missing_metadata", "unknown_mark_type", "unknown_event"],
        "{:?}",
        whole.diags
    );
    let mut runs = 0;
    for (which, s) in [(0, &a), (1, &b)] {
        let other = if which == 0 { &b } else { &a };
        for cut in 0..s.len() {
            let _ = go(&s[..cut], other);
            runs += 1;
        }
        for i in 0..s.len() {
            for x in [0x5A, 0xFF, 0x80] {
                let mut m = s.clone();
                m[i] ^= x;
                let _ = go(&m, other);
                runs += 1;
            }
        }
    }
    assert!(runs > 1000, "{runs} runs");
}
