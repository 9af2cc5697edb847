//! Reader tests on hand-built streams: every expected value is worked out from the bytes
//! written.
use super::stream::{Endian, StreamReader};
use super::*;
use crate::model::Event;

/// Events as `ts|target|instance|action|note|value|core`.
struct Ovni;

impl crate::ingest::test_sink::Shape for Ovni {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{}|{}|{}|{}|{}|{:?}|{}",
            e.ts,
            e.target,
            e.target_instance,
            e.action,
            e.note.unwrap_or("-"),
            e.value,
            e.core.unwrap_or("-")
        )
    }
}

type Rec = crate::ingest::test_sink::Recorder<Ovni>;

/// Builds a stream's bytes.
struct W {
    be: bool,
    bytes: Vec<u8>,
}

impl W {
    fn new(be: bool) -> Self {
        let mut bytes = b"ovni".to_vec();
        bytes.extend(if be { [0, 0, 0, 1] } else { [1, 0, 0, 0] });
        W { be, bytes }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u64(&self, v: u64) -> [u8; 8] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn ev(mut self, mcv: &str, clock: u64, payload: &[u8]) -> Self {
        let flags = if payload.is_empty() { 0 } else { (payload.len() - 1) as u8 };
        self.bytes.push(flags);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        self.bytes.extend(payload);
        self
    }
    fn jumbo(mut self, mcv: &str, clock: u64, data: &[u8]) -> Self {
        self.bytes.push(0x10 | 3);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        let n = self.u32(data.len() as u32);
        self.bytes.extend(n);
        self.bytes.extend(data);
        self
    }
    fn ohx(self, clock: u64, cpu: i32) -> Self {
        let mut p = self.u32(cpu as u32).to_vec();
        p.extend(self.u32(u32::MAX));
        p.extend(self.u64(0));
        self.ev("OHx", clock, &p)
    }
    /// A nOS-V task event: task id, then type id or body id.
    fn task(self, mcv: &str, clock: u64, a: u32, b: u32) -> Self {
        let mut p = self.u32(a).to_vec();
        p.extend(self.u32(b));
        self.ev(mcv, clock, &p)
    }
}

fn file(tid: i64) -> StreamFile {
    StreamFile {
        obs: PathBuf::from(format!("/x/ovni/loom.a/proc.1/thread.{tid}/stream.obs")),
        json: Vec::new(),
        relpath: format!("loom.a/proc.1/thread.{tid}"),
        loom: "loom.a".into(),
        pid: 1,
        tid,
        v2: false,
        shown: None,
    }
}

fn run(streams: Vec<(i64, Vec<u8>)>) -> Rec {
    run_with(streams, runtime::Caps::default())
}

/// [`run`] with the runtime models' memory bounds `caps`.
fn run_with(streams: Vec<(i64, Vec<u8>)>, caps: runtime::Caps) -> Rec {
    let mut rec = Rec::default();
    let inputs: Vec<(StreamFile, &[u8])> =
        streams.iter().map(|(t, b)| (file(*t), b.as_slice())).collect();
    read_with(inputs, &mut rec, caps).unwrap();
    // The streams made here have no stream.json: said once each, left out of the checks.
    let missing = rec.diags.iter().filter(|d| d.0 == "missing_metadata").count();
    assert_eq!(missing, streams.len());
    rec.diags.retain(|d| d.0 != "missing_metadata");
    rec
}

#[test]
fn sniffs_both_byte_orders_only() {
    assert!(sniff(b"ovni\x01\0\0\0"));
    assert!(sniff(b"ovni\0\0\0\x01"));
    assert!(!sniff(b"ovni\x02\0\0\0"));
    assert!(!sniff(b"ovn"));
}

#[test]
fn events_decode_and_merge_by_clock() {
    let a = W::new(false).ohx(100, -1).ev("OHe", 400, &[]).bytes;
    let b = W::new(false).ohx(250, -1).ev("OHe", 250, &[]).bytes;
    let rec = run(vec![(1, a), (2, b)]);
    // Times from the first event (clock 100); equal clocks keep stream then file order.
    assert_eq!(
        rec.events,
        [
            "0|TH 1.1|-1|OHx|begins the execution on CPU -1 created from -1 with tag 0|Some(-1.0)|vCPU 0.*",
            "150|TH 1.2|-1|OHx|begins the execution on CPU -1 created from -1 with tag 0|Some(-1.0)|vCPU 0.*",
            "150|TH 1.2|-1|OHe|ends the execution|None|vCPU 0.*",
            "300|TH 1.1|-1|OHe|ends the execution|None|vCPU 0.*",
        ]
    );
    assert!(rec.meta.contains(&("ovni.origin_clock".into(), "100".into())));
    // The virtual CPU runs thread 1, then two threads (no single one: nothing shown), ...
    assert!(rec.sets.contains(&"0 vCPU 0.* 2=1 -".to_string()), "{:?}", rec.sets);
    assert!(rec.sets.contains(&"150 vCPU 0.* 3=2 -".to_string()), "{:?}", rec.sets);
    assert!(rec.sets.contains(&"150 vCPU 0.* 2=0 -".to_string()), "{:?}", rec.sets);
    assert!(rec.sets.contains(&"300 TH 1.1 Thread: thread state=3 Dead".to_string()));
    assert!(rec.diags.is_empty(), "{:?}", rec.diags);
}

#[test]
fn a_big_endian_stream_reads_the_same() {
    let le = run(vec![(1, W::new(false).ohx(7, -1).ev("OHp", 9, &[]).bytes)]);
    let be = run(vec![(1, W::new(true).ohx(7, -1).ev("OHp", 9, &[]).bytes)]);
    assert_eq!(le.events, be.events);
    assert_eq!(le.sets, be.sets);
    assert!(be.meta.contains(&("ovni.big_endian_streams".into(), "true".into())));
}

#[test]
fn a_truncated_last_event_keeps_what_came_before() {
    let mut b = W::new(false).ohx(10, -1).ev("OHp", 20, &[]).bytes;
    b.truncate(b.len() - 3);
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.events.len(), 1);
    let d = rec.diags.iter().find(|d| d.0 == "truncated_event").unwrap();
    // The header (8) + OHx (12 + 16) puts OHp at byte 36; 9 of its 12 header bytes exist.
    assert!(d.1.starts_with("byte 36: loom.a/proc.1/thread.1: the stream ends inside an event (event header): 9 of its 12"), "{}", d.1);
}

#[test]
fn a_clock_going_backwards_is_a_diagnostic_and_states_do_not_go_back() {
    let b = W::new(false).ohx(100, -1).ev("OHp", 50, &[]).ev("OHr", 120, &[]).bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.events.len(), 3);
    // The events row keeps its own time (-50), the state change is at the time before it.
    assert!(rec.events[1].starts_with("-50|TH 1.1|-1|OHp|"), "{:?}", rec.events);
    assert!(rec.sets.contains(&"0 TH 1.1 Thread: thread state=2 Paused".to_string()));
    let d: Vec<_> = rec.diags.iter().filter(|d| d.0 == "clock_backwards").collect();
    assert_eq!(d.len(), 1);
    assert!(d[0].1.contains("OHp clock 50 is 50 ns before"), "{}", d[0].1);
}

#[test]
fn an_unknown_event_is_kept_with_its_payload_in_hex_and_said_once() {
    let b = W::new(false)
        .ev("Zx1", 1, &[0xde, 0xad])
        .ev("Zx1", 2, &[0xbe, 0xef])
        .ev("OHx", 3, &[1, 2]) // a known code with a payload of the wrong size
        .bytes;
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.events[0], "0|TH 1.1|-1|Zx1|de ad|None|-");
    assert_eq!(rec.events[1], "1|TH 1.1|-1|Zx1|be ef|None|-");
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["unknown_event", "unknown_event"], "{:?}", rec.diags);
    assert!(rec.diags[1].1.contains("OHx has a 2-byte payload, too short"), "{:?}", rec.diags);
    // The malformed OHx changed no state.
    assert!(rec.sets.is_empty(), "{:?}", rec.sets);
}

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
fn headers_that_are_not_streams_are_errors_naming_the_file() {
    let mut rec = Rec::default();
    let bad = b"ovni\x02\0\0\0".to_vec();
    let e = read(vec![(file(1), bad.as_slice())], &mut rec).unwrap_err().to_string();
    assert!(e.contains("thread.1/stream.obs") && e.contains("only version 1"), "{e}");
}

#[test]
fn comments_are_allowed_in_metadata() {
    let mut m = meta::Meta::default();
    m.merge_json(
        "{ // c\n \"ovni\": { \"app_id\": 3, /* x */ \"loom_cpus\": [{\"index\": 0, \"phyid\": 4}],\n \"mark\": {\"1\": {\"title\": \"A//B\", \"chan_type\": \"stack\", \"labels\": {\"2\": \"two\"}}} } }",
        "s.json",
    );
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    assert_eq!(m.app_id, Some(3));
    assert_eq!(m.loom_cpus, [(0, 4)]);
    assert_eq!(m.marks[&1].title, "A//B");
    assert_eq!(m.marks[&1].labels[&2], "two");
}

#[test]
fn stream_paths_of_both_layouts() {
    let d = tempfile::tempdir().unwrap();
    let v3 = d.path().join("loom.h/proc.5/thread.6");
    std::fs::create_dir_all(&v3).unwrap();
    std::fs::write(v3.join("stream.obs"), b"ovni\x01\0\0\0").unwrap();
    std::fs::write(v3.join("stream.json"), b"{}").unwrap();
    let v2 = d.path().join("loom.h/proc.7");
    std::fs::create_dir_all(&v2).unwrap();
    std::fs::write(v2.join("thread.8.obs"), b"ovni\x01\0\0\0").unwrap();
    std::fs::write(v2.join("metadata.json"), b"{}").unwrap();
    let s = find_streams(d.path());
    let rel: Vec<_> = s.iter().map(|s| (s.relpath.as_str(), s.v2, s.json.len())).collect();
    assert_eq!(rel, [("loom.h/proc.5/thread.6", false, 1), ("loom.h/proc.7/thread.8", true, 1)]);
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

#[test]
fn a_jumbo_event_is_framed_by_its_size_whatever_its_low_flag_bits_say() {
    // ovni's reader (ovni_payload_size) takes a jumbo event's payload as the u32 size and
    // that many bytes, whatever the low nibble of its flags; libovni writes 3 there.
    let w = W::new(false).ohx(0, -1);
    let mut data = w.u32(1).to_vec();
    data.extend(b"lbl\0");
    let mut b = w.jumbo("VYc", 1, &data).ev("OHe", 2, &[]).bytes;
    let at = 8 + 28;
    b[at] = 0x10;
    let mut r = StreamReader::new(&b[8..], Endian::Little);
    assert_eq!(&r.next_event().unwrap().unwrap().mcv, b"OHx");
    let ev = r.next_event().unwrap().unwrap();
    assert_eq!((&ev.mcv, ev.jumbo.as_deref()), (b"VYc", Some(data.as_slice())));
    let warn = r.take_warning().unwrap();
    assert_eq!(
        (warn.kind, warn.severity, warn.pos),
        ("malformed_event", Severity::Warning, Pos::Byte(36))
    );
    assert!(warn.message.contains("0x10"), "{}", warn.message);
    assert_eq!(&r.next_event().unwrap().unwrap().mcv, b"OHe");
    assert!(r.take_warning().is_none());
    assert!(r.next_event().unwrap().is_none());
    // Through the reader: all three events, the task type known, one warning.
    let rec = run(vec![(1, b)]);
    assert_eq!(rec.events.len(), 3, "{:?}", rec.events);
    assert!(rec.events[1].contains("creates task type 1 with label \"lbl\""), "{:?}", rec.events);
    let kinds: Vec<_> = rec.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["malformed_event"]);
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
