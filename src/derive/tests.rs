//! Unit tests of the derive stage without storage: rows are rendered as text.
use super::*;
use crate::ingest::lines::LineReader;
use crate::ingest::{ChannelSet, Sink};

#[derive(Default)]
struct Rows {
    intervals: Vec<String>,
    instances: Vec<String>,
    locks: Vec<String>,
    /// `target#instance action @core` of each event.
    events: Vec<String>,
    /// `entity#instance net= ready= preempt= migr=` of each instance.
    metrics: Vec<String>,
    /// `action value note` of each event.
    event_values: Vec<String>,
    /// `channel state value` of each interval.
    interval_values: Vec<String>,
    /// `entity#instance state [ts,end) @core` of each interval.
    interval_cores: Vec<String>,
    /// `entity#instance @core` of each instance.
    instance_cores: Vec<String>,
    /// `semaphore process#instance by=blocked_by#instance of blockers` of each lock request.
    blockers: Vec<String>,
    /// Every lock request as written, in the order they came.
    lock_rows: Vec<SeenLock>,
}

/// A `lock_requests` row with its names resolved.
#[derive(Debug, Clone)]
struct SeenLock {
    semaphore: String,
    process: String,
    instance: i64,
    request_ts: Option<i64>,
    assigned_ts: Option<i64>,
    released_ts: Option<i64>,
    contended: bool,
    blocked_by: Option<(String, i64)>,
    blockers: i64,
}

impl Output for Rows {
    fn event(&mut self, r: &EventRow<'_>, n: &Interner) -> Result<()> {
        self.events.push(format!(
            "{}#{} {} @{}",
            r.target.map_or("-", |t| n.resolve(t)),
            r.target_instance,
            n.resolve(r.action),
            r.core.map_or("-", |c| n.resolve(c))
        ));
        self.event_values.push(format!("{} {:?} {:?}", n.resolve(r.action), r.value, r.note));
        Ok(())
    }
    fn intervals(&mut self, rows: &[IntervalRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.intervals.push(format!(
                "{} {} {} [{},{}) {}",
                n.resolve(r.channel),
                n.resolve(r.entity),
                r.state.as_str(n),
                r.ts,
                r.ts + r.dur,
                if r.open { "open" } else { "" }
            ));
            self.interval_values.push(format!(
                "{} {} {:?}",
                n.resolve(r.channel),
                r.state.as_str(n),
                r.value
            ));
            self.interval_cores.push(format!(
                "{}#{} {} [{},{}) @{}",
                n.resolve(r.entity),
                r.instance,
                r.state.as_str(n),
                r.ts,
                r.ts + r.dur,
                r.core.map_or("-", |c| n.resolve(c))
            ));
        }
        Ok(())
    }
    fn instances(&mut self, rows: &[InstanceRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.instance_cores.push(format!(
                "{}#{} @{}",
                n.resolve(r.entity),
                r.instance,
                r.core.map_or("-", |c| n.resolve(c))
            ));
            self.instances.push(format!(
                "{}#{} rt={:?} net={} complete={}",
                n.resolve(r.entity),
                r.instance,
                r.response_time(),
                r.net_exec,
                r.complete()
            ));
            self.metrics.push(format!(
                "{}#{} net={} ready={} preempt={} migr={}",
                n.resolve(r.entity),
                r.instance,
                r.net_exec,
                r.ready_time,
                r.preemptions,
                r.migrations.unwrap_or(0)
            ));
        }
        Ok(())
    }
    fn lock_requests(&mut self, rows: &[LockRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.locks.push(format!(
                "{} {} wait={:?} hold={:?}{}",
                n.resolve(r.semaphore),
                n.resolve(r.process),
                r.wait(),
                r.hold(),
                if r.contended() { " contended" } else { "" }
            ));
            let by = r.blocked_by.map(|(p, i)| format!("{}#{i}", n.resolve(p)));
            self.blockers.push(format!(
                "{} {}#{} by={} of {}",
                n.resolve(r.semaphore),
                n.resolve(r.process),
                r.process_instance,
                by.as_deref().unwrap_or("-"),
                r.blockers
            ));
            self.lock_rows.push(SeenLock {
                semaphore: n.resolve(r.semaphore).to_string(),
                process: n.resolve(r.process).to_string(),
                instance: r.process_instance,
                request_ts: r.request_ts,
                assigned_ts: r.assigned_ts,
                released_ts: r.released_ts,
                contended: r.contended(),
                blocked_by: r.blocked_by.map(|(p, i)| (n.resolve(p).to_string(), i)),
                blockers: r.blockers,
            });
        }
        Ok(())
    }
}

fn derive(text: &str) -> (Summary, Rows) {
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    d.finish().unwrap()
}

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
fn release_without_assign_keeps_a_row() {
    let (s, rows) = derive("0,T1,0,SEM,S,0,released\n");
    assert_eq!(rows.locks, ["S T1 wait=None hold=None"]);
    assert_eq!(s.diag_counts.get("release_without_assign").map(|c| c.1), Some(1));
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

fn derive_prv(text: &str) -> (Summary, Rows) {
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let comp = crate::ingest::prv::Companions::default();
    crate::ingest::prv::read(&mut LineReader::new(text.as_bytes()), "t.prv", &comp, &mut d)
        .unwrap();
    d.finish().unwrap()
}

/// [`derive_prv`] with a `.row` (read from `row`, as if found at `t.row`).
fn derive_prv_with_row(text: &str, row: &str) -> (Summary, Rows) {
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let comp = crate::ingest::prv::Companions {
        row: Some(crate::ingest::prv::row::Row::parse(row)),
        row_path: Some("t.row".into()),
        ..Default::default()
    };
    crate::ingest::prv::read(&mut LineReader::new(text.as_bytes()), "t.prv", &comp, &mut d)
        .unwrap();
    d.finish().unwrap()
}

#[test]
fn rows_with_one_label_stay_apart() {
    // Two threads labelled `worker`, two CPUs labelled `cpu`: four entities, and each
    // thread's channel keeps its own intervals.
    let (s, rows) = derive_prv_with_row(
        "#Paraver (d):1000_ns:1(2):1:1(2:1)\n2:1:1:1:1:10:7:1\n2:2:1:1:2:20:7:2\n\
         2:1:1:1:1:30:7:0\n2:2:1:1:2:40:7:0\n",
        "LEVEL CPU SIZE 2\ncpu\ncpu\nLEVEL THREAD SIZE 2\nworker\n worker \n",
    );
    let names: Vec<_> = s.entities.iter().map(|e| s.names.resolve(e.name)).collect();
    assert_eq!(names, ["worker (1.1.1)", "worker (1.1.2)", "cpu (1)", "cpu (2)"]);
    assert_eq!(rows.intervals, ["7 worker (1.1.1) 1 [10,30) ", "7 worker (1.1.2) 2 [20,40) "]);
    let notes: Vec<_> = s
        .diagnostics
        .iter()
        .filter(|d| d.kind == "duplicate_row_label")
        .map(|d| (d.severity, d.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                Severity::Info,
                "t.row:3: CPU label 'cpu' is also on line 2: each of these rows is named with \
                 its Paraver id appended, as 'cpu (2)'"
            ),
            (
                Severity::Info,
                "t.row:6: THREAD label 'worker' is also on line 5: each of these rows is named \
                 with its Paraver id appended, as 'worker (1.1.2)'"
            ),
        ]
    );
}

#[test]
fn names_made_for_repeated_labels_and_cpu_names_stay_unique() {
    let entities = |s: &Summary| -> Vec<String> {
        let mut v: Vec<String> = s
            .entities
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    s.names.resolve(e.name),
                    e.entity_type.map_or("", |t| s.names.resolve(t))
                )
            })
            .collect();
        v.sort();
        v
    };
    // `worker (1.1.2)` is made for the second `worker` and is also row 3's own label.
    let (s, rows) = derive_prv_with_row(
        "#Paraver (d):100_ns:0:1:1(3:1)
2:0:1:1:1:10:6:1
2:0:1:1:2:10:6:2
2:0:1:1:3:10:6:3
",
        "LEVEL THREAD SIZE 3
worker
worker
worker (1.1.2)
",
    );
    assert_eq!(
        entities(&s),
        ["worker (1.1.1) THREAD", "worker (1.1.2) (1.1.3) THREAD", "worker (1.1.2) THREAD"]
    );
    assert_eq!(rows.intervals.len(), 3, "{:?}", rows.intervals);
    // A thread labelled like a CPU would merge with it.
    let (s, rows) = derive_prv_with_row(
        "#Paraver (d):100_ns:2(1,1):1:1(2:1)
1:1:1:1:1:0:10:1
1:2:1:1:2:0:10:1
",
        "LEVEL CPU SIZE 2
node1
node2
LEVEL THREAD SIZE 2
node1
x
",
    );
    assert_eq!(entities(&s), ["node1 (1.1.1) THREAD", "node1 CPU", "node2 CPU", "x THREAD"]);
    // A label that is the name another, unlabelled row gets would merge the two.
    let (s, _) = derive_prv_with_row(
        "#Paraver (d):100_ns:0:1:1(2:1)\n2:0:1:1:1:10:6:1\n2:0:1:1:2:10:6:2\n",
        "LEVEL THREAD SIZE 1\nTHREAD 1.1.2\n",
    );
    assert_eq!(entities(&s), ["THREAD 1.1.2 (1.1.1) THREAD", "THREAD 1.1.2 THREAD"]);
    assert_eq!(rows.intervals, ["state node1 (1.1.1) 1 [0,10) ", "state x 1 [0,10) "]);
}

#[test]
fn labels_after_an_unreadable_application_are_not_used() {
    let (s, _) = derive_prv_with_row(
        "#Paraver (d):100_ns:0:3:1(1:1):2(1:1):1(1:1)
2:0:1:1:1:10:6:1
2:0:3:1:1:10:6:1
",
        "LEVEL THREAD SIZE 3
app1-t1
app2-t1
app3-t1
",
    );
    let names: Vec<_> = s.entities.iter().map(|e| s.names.resolve(e.name)).collect();
    assert_eq!(names, ["app1-t1", "THREAD 3.1.1"]);
    assert!(
        s.diagnostics.iter().any(|d| d.kind == "bad_header"
            && d.message.contains("THREAD labels from line 3 on are not used")),
        "{:?}",
        s.diagnostics
    );
}

#[test]
fn paraver_numbers_beyond_i64_keep_their_value() {
    // u64 values, types, states and times were read as their two's-complement bits:
    // -2, channel `-1`, state -1, an open state, a "negative time".
    let (s, rows) = derive_prv(
        "#Paraver (d):1000_ns:0:1:1(1:1)\n\
         2:0:1:1:1:10:7:18446744073709551614\n\
         2:0:1:1:1:20:18446744073709551615:5\n\
         1:0:1:1:1:30:40:18446744073709551615\n\
         1:0:1:1:1:30:18446744073709551615:1\n\
         2:0:1:1:1:018446744073709551615:7:1\n\
         2:0:1:1:1:50:7:-9223372036854775808\n",
    );
    assert_eq!(
        rows.event_values,
        [
            "7 Some(1.8446744073709552e19) Some(\"18446744073709551614\")",
            "18446744073709551615 Some(5.0) None",
            "7 Some(-9.223372036854776e18) Some(\"-9223372036854775808\")",
        ]
    );
    assert_eq!(
        rows.intervals,
        [
            "7 THREAD 1.1.1 18446744073709551614 [10,50) ",
            "18446744073709551615 THREAD 1.1.1 5 [20,1000) open",
            "state THREAD 1.1.1 18446744073709551615 [30,40) ",
            "7 THREAD 1.1.1 -9223372036854775808 [50,1000) open",
        ]
    );
    assert_eq!(
        rows.interval_values,
        [
            "7 18446744073709551614 Some(1.8446744073709552e19)",
            "18446744073709551615 5 Some(5.0)",
            "state 18446744073709551615 Some(1.8446744073709552e19)",
            "7 -9223372036854775808 Some(-9.223372036854776e18)",
        ]
    );
    let malformed: Vec<_> = s
        .diagnostics
        .iter()
        .filter(|d| d.kind == "malformed_record")
        .map(|d| (d.position.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(
        malformed,
        [
            (
                "t.prv:5",
                "time 18446744073709551615 is beyond 2^62 ns (about 146 years): \
                 '1:0:1:1:1:30:18446744073709551615:1'"
            ),
            (
                "t.prv:6",
                "time 018446744073709551615 is beyond 2^62 ns (about 146 years): \
                 '2:0:1:1:1:018446744073709551615:7:1'"
            ),
        ]
    );
}

#[test]
fn paraver_records_keep_their_own_times() {
    // A state record earlier than the events before it is not clamped; an open state
    // (end -1) and a still-set channel close at the header's end (50 us).
    let (s, rows) = derive_prv(
        "#Paraver (d):50:0:1:1(1:1)\n2:0:1:1:1:20:7:1\n1:0:1:1:1:5:10:1\n2:0:1:1:1:30:7:1\n\
         2:0:1:1:1:40:7:2\n1:0:1:1:1:10:-1:2\n",
    );
    assert_eq!(s.events, 3);
    assert_eq!(s.ts_range, Some((5_000, 50_000)), "the span runs to the header's end");
    assert_eq!(
        rows.intervals,
        [
            "state THREAD 1.1.1 1 [5000,10000) ",
            "state THREAD 1.1.1 2 [10000,50000) open",
            "7 THREAD 1.1.1 1 [20000,40000) ",
            "7 THREAD 1.1.1 2 [40000,50000) open",
        ]
    );
}

#[test]
fn event_records_out_of_time_order_are_sorted_before_their_channels_change() {
    let (s, rows) = derive_prv(
        "#Paraver (d):100_ns:0:1:1(1:1)\n2:0:1:1:1:50:7:1\n2:0:1:1:1:40:7:0\n2:0:1:1:1:10:8:3\n",
    );
    assert_eq!(
        rows.intervals,
        ["8 THREAD 1.1.1 3 [10,100) open", "7 THREAD 1.1.1 1 [50,100) open"]
    );
    assert_eq!(s.diag_counts.get("time_backwards"), None);
    assert_eq!(
        rows.events,
        ["THREAD 1.1.1#-1 8 @-", "THREAD 1.1.1#-1 7 @-", "THREAD 1.1.1#-1 7 @-"]
    );
}

/// A change of `channel` of thread `T` to `value` at `ts`, 0 ending the state.
fn thread_set(ts: i64, channel: &'static str, value: i128) -> ChannelSet<'static> {
    ChannelSet {
        entity: "T",
        entity_type: "THREAD",
        channel,
        ts,
        value,
        zero_ends: true,
        label: None,
        core: None,
        pos: Pos::None,
    }
}

#[test]
fn a_channel_set_before_its_state_began_is_clamped_for_that_channel_only() {
    // What a record later than the reorder window gets: its channel's state cannot go back.
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let set = thread_set;
    d.channel_set(&set(50, "7", 1)).unwrap();
    d.channel_set(&set(40, "7", 0)).unwrap();
    d.channel_set(&set(10, "8", 3)).unwrap();
    d.trace_end(100);
    let (s, rows) = d.finish().unwrap();
    assert_eq!(rows.intervals, ["8 T 3 [10,100) open", "7 T 1 [50,50) "]);
    assert_eq!(s.diag_counts.get("time_backwards").map(|c| c.1), Some(1));
    // The capture spans to the header's end, where the open interval ends.
    assert_eq!(s.ts_range, Some((10, 100)));
}

#[test]
fn a_channel_set_before_a_zero_ended_it_is_clamped_too() {
    // The channel has no current state after its 0, but it still cannot go back past it.
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let set = |ts: i64, value: i128| thread_set(ts, "6", value);
    d.channel_set(&set(10, 5)).unwrap();
    d.channel_set(&set(20, 0)).unwrap();
    d.channel_set(&set(15, 0)).unwrap(); // a late 0 on an ended channel: nothing to do
    d.channel_set(&set(15, 7)).unwrap();
    d.trace_end(100);
    let (s, rows) = d.finish().unwrap();
    assert_eq!(rows.intervals, ["6 T 5 [10,20) ", "6 T 7 [20,100) open"]);
    assert_eq!(s.diag_counts.get("time_backwards").map(|c| c.1), Some(1));
}

/// Untrusted input never panics: every golden fixture, truncated at many points and with
/// bytes flipped, goes through its importer and the derive stage and ends in Ok or Err.
#[test]
fn mutated_fixtures_never_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut inputs = Vec::new();
    for format in ["btf", "prv"] {
        let Ok(cases) = std::fs::read_dir(root.join(format)) else { continue };
        for case in cases.flatten() {
            let path = case.path().join(format!("input.{format}"));
            if let Ok(bytes) = std::fs::read(&path) {
                inputs.push((format, bytes));
            }
        }
    }
    assert!(inputs.len() >= 8, "fixtures found: {}", inputs.len());
    let mut runs = 0;
    for (format, bytes) in &inputs {
        let mut variants: Vec<Vec<u8>> = Vec::new();
        let step = (bytes.len() / 40).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            variants.push(bytes[..cut].to_vec());
        }
        let flips: &[u8] = &[b',', b':', b'\n', b'-', b'9', 0xff, 0x00, b'#'];
        for (i, at) in (0..bytes.len()).step_by(step).enumerate() {
            let mut v = bytes.clone();
            v[at] = flips[i % flips.len()];
            variants.push(v);
        }
        for v in variants {
            let mut d = Deriver::new(Rows::default(), "t", false);
            let mut lines = LineReader::new(&v[..]);
            let read = match *format {
                "btf" => crate::ingest::btf::read(&mut lines, "t", &mut d),
                _ => crate::ingest::prv::read(
                    &mut lines,
                    "t",
                    &crate::ingest::prv::Companions::default(),
                    &mut d,
                ),
            };
            if let (true, Ok((s, _))) = (read.is_ok(), d.finish()) {
                // Messages are one line of prose: no run of spaces from a broken string
                // continuation (unless the input itself had one to quote).
                for r in &s.diagnostics {
                    assert!(
                        !r.message.contains("   ") || v.windows(3).any(|w| w == b"   "),
                        "{}",
                        r.message
                    );
                }
            }
            runs += 1;
        }
    }
    assert!(runs > 500, "{runs} mutated inputs");
}

fn diag_count(s: &Summary, kind: &str) -> u64 {
    s.diag_counts.get(kind).map_or(0, |c| c.1)
}

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
fn a_repeated_terminate_makes_no_second_instance() {
    let (s, rows) = derive(
        "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n20,Core_0,0,T,A,0,terminate\n\
         20,Core_0,0,T,A,0,terminate\n",
    );
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
    assert_eq!(diag_count(&s, "invalid_transition"), 1);
}

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
fn a_name_written_with_two_types_is_a_type_conflict() {
    // Names are unique across types: a second type is reported, the first kept.
    let (s, _) = derive(
        "#entityTypeTable\n#-R Y\n0,Core_0,0,T,Y,0,activate\n1,Core_0,0,T,X,0,activate\n\
         2,Core_0,0,I,X,0,start\n",
    );
    assert_eq!(diag_count(&s, "type_conflict"), 2);
    let ty = |n: &str| {
        let e = s.entities.iter().find(|e| s.names.resolve(e.name) == n).unwrap();
        (e.entity_type.map(|t| s.names.resolve(t).to_string()), e.declared)
    };
    assert_eq!(ty("Y"), (Some("R".into()), true));
    assert_eq!(ty("X"), (Some("T".into()), false));
    // Older files' codes for the same type, and a core first inferred, are no conflict.
    let (s, _) = derive(
        "0,Core_0,0,ISR,Q,0,start\n1,Core_0,0,I,Q,0,terminate\n2,Core,0,Core,Core_0,0,idle\n\
         3,Core_0,0,C,Core_0,0,idle\n4,PE_0,0,T,T1,0,start\n5,PE_0,0,C,PE_0,0,idle\n",
    );
    assert_eq!(diag_count(&s, "type_conflict"), 0);
}

#[test]
fn a_skipped_line_does_not_move_the_clock() {
    let (s, rows) =
        derive("0,S,0,T,A,0,activate\n1000,Core_0,0,T,,0,start\n20,Core_0,0,T,A,0,start\n");
    assert_eq!(diag_count(&s, "malformed_line"), 1);
    assert_eq!(diag_count(&s, "time_backwards"), 0);
    assert!(rows.intervals.contains(&"state A active [0,20) ".to_string()), "{:?}", rows.intervals);
}

#[test]
fn paraver_headers_bound_what_records_may_name() {
    // 2 CPUs in the resource model: cpu 2000000000 is kept, named, reported, and costs
    // nothing per CPU below it.
    let (s, rows) = derive_prv("#Paraver (d):100_ns:1(2):1:1(1:1)\n2:2000000000:1:1:1:10:4:1\n");
    assert_eq!(rows.events, ["THREAD 1.1.1#-1 4 @CPU 2000000000"]);
    assert_eq!(diag_count(&s, "unknown_object"), 1);
    // 20 million threads announced: only the named ones become entities.
    let (s, _) = derive_prv("#Paraver (d):100_ns:0:1:1(20000000:1)\n2:0:1:1:7:10:4:1\n");
    assert_eq!(s.entities.len(), 1);
    assert_eq!(diag_count(&s, "bad_header"), 1);
    // A message to a thread outside the model still names an entity.
    let (s, _) = derive_prv("#Paraver (d):100_ns:0:1:1(1:1)\n3:0:1:1:1:10:12:0:1:5:1:30:31:64:7\n");
    let names: Vec<&str> = s.entities.iter().map(|e| s.names.resolve(e.name)).collect();
    assert!(names.contains(&"THREAD 1.5.1"), "{names:?}");
}

#[test]
fn paraver_float_end_times_are_scaled_before_rounding() {
    let (_, rows) = derive_prv("\u{feff}#Paraver (d):0.4_ms:0:1:1(1:1)\n2:0:1:1:1:0:10:1\n");
    assert_eq!(rows.intervals, ["10 THREAD 1.1.1 1 [0,400000) open"]);
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
fn instances_that_never_end_are_not_all_kept_open() {
    let text: String = (0..5000).map(|i| format!("{i},S,0,T,A,{i},activate\n")).collect();
    let (s, rows) = derive(&text);
    // Every instance has its row; beyond 4096 open at once the oldest were closed early.
    assert_eq!(rows.instances.len(), 5000);
    assert_eq!(diag_count(&s, "too_many_open_instances"), 5000 - 4096);
    assert!(rows.instances.iter().all(|r| r.ends_with("complete=false")));
}

#[test]
fn numeric_notes_read_decimal_and_hexadecimal() {
    for (note, want) in [
        ("42", Some(42.0)),
        ("-3.5", Some(-3.5)),
        ("0x1F", Some(31.0)),
        ("0XfF", Some(255.0)),
        ("-0x10", Some(-16.0)),
        ("+0x10", Some(16.0)),
        ("0x", None),
        ("0x+5", None),
        ("0xZZ", None),
        ("create 0x80016ca8", None),
        ("inf", None),
    ] {
        assert_eq!(sink::numeric(Some(note)), want, "{note}");
    }
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

/// The `running` intervals of the cores: who occupied which core when.
fn metric<'a>(rows: &'a Rows, key: &str) -> &'a str {
    rows.metrics.iter().find(|m| m.starts_with(key)).map_or("none", String::as_str)
}

fn occupancy(rows: &Rows) -> Vec<&str> {
    rows.intervals.iter().filter(|i| i.starts_with("running ")).map(String::as_str).collect()
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
fn ovni_channels_registered_with_prv_zero_keep_their_zeros() {
    // ovni writes a CPU's number of running threads (type 3) with PRV_ZERO: 0 is a count, not
    // the end of the state. Anywhere else, and in other writers' traces, 0 ends it.
    let intervals = |date: &str| {
        let text = format!(
            "#Paraver ({date}):00000000000000000050_ns:0:1:1(1:1)\n\
             2:0:1:1:1:0:3:1:7:1\n2:0:1:1:1:10:3:0:7:0\n2:0:1:1:1:20:3:2\n2:0:1:1:1:30:201:0\n\
             2:0:1:1:1:40:17:0\n"
        );
        let mut d = Deriver::new(Rows::default(), "cpu.prv", false);
        let comp = crate::ingest::prv::Companions::default();
        crate::ingest::prv::read(&mut LineReader::new(text.as_bytes()), "cpu.prv", &comp, &mut d)
            .unwrap();
        let mut rows = d.finish().unwrap().1.intervals;
        rows.sort();
        rows
    };
    assert_eq!(
        intervals("19/01/38 at 03:14"),
        [
            "17 CPU ROW 1 0 [40,50) open",
            "201 CPU ROW 1 0 [30,50) open",
            "3 CPU ROW 1 0 [10,20) ",
            "3 CPU ROW 1 1 [0,10) ",
            "3 CPU ROW 1 2 [20,50) open",
            "7 CPU ROW 1 1 [0,10) "
        ]
    );
    assert_eq!(
        intervals("21/01/2022 at 16:37"),
        ["3 CPU ROW 1 1 [0,10) ", "3 CPU ROW 1 2 [20,50) open", "7 CPU ROW 1 1 [0,10) "]
    );
}

#[test]
fn paraver_garbage_lines_are_not_taken_for_communicator_lines() {
    // A communicator line is `c:...` (or `C:`, `i:`, `I:`); a line that merely starts with
    // one of those letters is not one, and is reported rather than dropped unseen.
    let text = "#Paraver (d):100_ns:0:1:1(1:1),1\nc:1:1:1:1\n2:0:1:1:1:10:5:1\n\
                corrupted line\nI am garbage\n2:0:1:1:1:20:5:0\n";
    let (s, rows) = derive_prv(text);
    assert_eq!(rows.events.len(), 2);
    assert_eq!(s.diag_counts.get("malformed_record").map(|c| c.1), Some(2));
    assert_eq!(s.diag_counts.get("communicator_count"), None, "one announced, one found");
    let msgs: Vec<_> =
        s.diagnostics.iter().map(|r| (r.position.as_str(), r.message.as_str())).collect();
    assert!(msgs.contains(&("t.prv:4", "unknown record type: 'corrupted line'")), "{msgs:?}");
}

#[test]
fn paraver_states_that_overlap_are_kept_with_a_warning() {
    let text = "#Paraver (d):100_ns:0:1:1(2:1)\n\
                1:0:1:1:1:0:10:1\n1:0:1:1:1:5:15:2\n1:0:1:1:1:15:20:1\n1:0:1:1:1:18:-1:3\n\
                1:0:1:1:2:0:10:1\n1:0:1:1:2:10:20:2\n";
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let comp = crate::ingest::prv::Companions::default();
    crate::ingest::prv::read(&mut LineReader::new(text.as_bytes()), "t.prv", &comp, &mut d)
        .unwrap();
    let (s, rows) = d.finish().unwrap();
    // Nothing is dropped; the second thread's touching states are not overlaps.
    assert_eq!(rows.intervals.len(), 6);
    assert_eq!(s.diag_counts.get("overlapping_state").map(|c| c.1), Some(2));
    let msgs: Vec<_> = s.diagnostics.iter().map(|r| r.message.as_str()).collect();
    assert!(
        msgs.contains(
            &"state of THREAD 1.1.1 from 18 ns to open overlaps the one before it (15 ns to \
              20 ns): both are kept, and the time they share counts twice"
        ),
        "{msgs:?}"
    );
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
        assert_eq!(super::cores::looks_like_core(name), core, "{name}");
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
    assert_eq!(d.procs.len(), process::MAX_OPEN_TOTAL);
    assert!(d.open_order.len() <= 2 * d.procs.len() + 1024);
    let (s, rows) = d.finish().unwrap();
    let closed = (tasks * each - process::MAX_OPEN_TOTAL) as u64;
    assert_eq!(diag_count(&s, "too_many_open_instances"), closed);
    // Nothing is lost: every instance has its row, the closed ones marked incomplete.
    assert_eq!(rows.instances.len(), tasks * each);
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
    assert_eq!(d.runnables.len(), runnable::MAX_OPEN_RUNNABLES);
    assert!(d.runnable_order.len() <= 2 * d.runnables.len() + 1024);
    let (s, rows) = d.finish().unwrap();
    let closed = (tasks * each - runnable::MAX_OPEN_RUNNABLES) as u64;
    assert_eq!(diag_count(&s, "too_many_open_instances"), closed);
    assert_eq!(rows.instances.len(), tasks + tasks * each);
}

#[test]
fn channels_of_one_thread_are_bounded() {
    // One thread sets 70,000 event types (Paraver times in ns) and ends none; then type 7
    // (the first one) goes on changing, and type 9 is ended by a 0 and set again.
    let n = super::channels::MAX_OPEN_CHANNELS + 4464;
    let mut text = String::from("#Paraver (d):1000000_ns:0:1:1(1:1)\n");
    for t in 0..n {
        text.push_str(&format!("2:0:1:1:1:{}:{}:1\n", t + 1, t + 7));
    }
    let (s, rows) = derive_prv(&text);
    assert_eq!(
        diag_count(&s, "too_many_open_channels"),
        (n - super::channels::MAX_OPEN_CHANNELS) as u64
    );
    // Every channel has its interval; the oldest were closed when the bound was passed,
    // open, where the next type arrived.
    assert_eq!(rows.intervals.len(), n);
    assert!(rows.intervals.contains(&"7 THREAD 1.1.1 1 [1,65537) open".to_string()));
    // The newest stay until the header's end.
    let last = format!("{} THREAD 1.1.1 1 [{n},1000000) open", n + 6);
    assert!(rows.intervals.contains(&last), "{:?}", rows.intervals.last());
}

#[test]
fn a_channel_ended_and_set_again_is_counted_once() {
    // Type 7 is set and ended by a 0 5000 times while type 8 stays set: the order kept for
    // the bound stays small and nothing is closed early.
    let mut text = String::from("#Paraver (d):1000000_ns:0:1:1(1:1)\n2:0:1:1:1:1:8:1\n");
    for i in 0..5000 {
        text.push_str(&format!("2:0:1:1:1:{}:7:1\n2:0:1:1:1:{}:7:0\n", 2 * i + 2, 2 * i + 3));
    }
    let mut d = Deriver::new(Rows::default(), "t.prv", false);
    let comp = crate::ingest::prv::Companions::default();
    crate::ingest::prv::read(&mut LineReader::new(text.as_bytes()), "t.prv", &comp, &mut d)
        .unwrap();
    let (order, open) = d.channel_order.values().next().unwrap();
    assert_eq!(*open, 1);
    assert!(order.len() <= 2 + 1024, "{}", order.len());
    let (s, rows) = d.finish().unwrap();
    assert_eq!(diag_count(&s, "too_many_open_channels"), 0);
    assert_eq!(rows.intervals.len(), 5001);
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

#[test]
fn an_activate_written_after_the_start_of_the_same_instant_is_that_instance_s() {
    let (s, rows) = derive(
        "20,Core_0,0,I,ISR2,0,start\n20,STI_J,0,I,ISR2,0,activate\n\
         30,Core_0,0,I,ISR2,0,terminate\n",
    );
    assert_eq!(diag_count(&s, "invalid_transition"), 0);
    assert_eq!(rows.instances, ["ISR2#0 rt=Some(10) net=10 complete=true"]);
}

#[test]
fn a_bare_cr_inside_an_lf_line_ends_a_record_too() {
    // A CR-ended trace appended to an LF-ended one: the terminate is not a note of the start.
    let (s, rows) =
        derive("0,S,0,T,A,0,activate\n10,C0,0,T,A,0,start\r20,C0,0,T,A,0,terminate\r\n");
    assert_eq!(diag_count(&s, "mixed_line_ends"), 1);
    assert_eq!(s.events, 3);
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
    // The other way round: CR-ended (so read), then LF-ended lines.
    let (s, rows) = derive("0,S,0,T,A,0,activate\r10,C0,0,T,A,0,start\r20,C0,0,T,A,0,terminate\n");
    assert_eq!(diag_count(&s, "mixed_line_ends"), 1);
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
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

/// Who a contended request waited for: the holder when it asked, then every request that got
/// the semaphore before it (a queue); an uncontended request names nobody.
#[test]
fn a_contended_request_names_who_held_the_semaphore_while_it_waited() {
    let (_, rows) = derive(
        "0,S,0,SEM,S,0,ready,0\n10,A,3,SEM,S,0,requestsemaphore\n10,A,3,SEM,S,0,assigned\n\
         10,S,0,SEM,S,0,lock,1\n20,B,1,SEM,S,0,requestsemaphore\n20,S,0,SEM,S,0,overfull,1\n\
         20,B,1,SEM,S,0,waiting\n25,C,7,SEM,S,0,requestsemaphore\n25,S,0,SEM,S,0,overfull,1\n\
         25,C,7,SEM,S,0,waiting\n30,A,3,SEM,S,0,released\n30,B,1,SEM,S,0,assigned\n\
         40,B,1,SEM,S,0,released\n40,C,7,SEM,S,0,assigned\n50,C,7,SEM,S,0,released\n\
         50,S,0,SEM,S,0,unlock,0\n60,D,0,SEM,S,0,requestsemaphore\n60,D,0,SEM,S,0,assigned\n\
         60,S,0,SEM,S,0,lock,1\n70,D,0,SEM,S,0,released\n70,S,0,SEM,S,0,unlock,0\n",
    );
    assert_eq!(
        rows.blockers,
        ["S A#3 by=- of 0", "S B#1 by=A#3 of 1", "S C#7 by=A#3 of 2", "S D#0 by=- of 0"]
    );
}

/// A holder that releases at the very instant of a request, logged after it, did not keep
/// it waiting; one assigned at the instant the waiter is, did not hold it before.
#[test]
fn holders_at_the_same_instant_as_the_request_or_its_grant_do_not_count() {
    let (_, rows) = derive(
        "10,A,0,SEM,S,0,requestsemaphore\n10,A,0,SEM,S,0,assigned\n20,B,0,SEM,S,0,requestsemaphore\n\
         20,B,0,SEM,S,0,waiting\n20,A,0,SEM,S,0,released\n25,C,0,SEM,S,0,requestsemaphore\n\
         25,C,0,SEM,S,0,assigned\n28,D,0,SEM,S,0,requestsemaphore\n28,D,0,SEM,S,0,waiting\n\
         30,B,0,SEM,S,0,assigned\n30,D,0,SEM,S,0,assigned\n40,B,0,SEM,S,0,released\n\
         40,C,0,SEM,S,0,released\n40,D,0,SEM,S,0,released\n",
    );
    // B waited behind nobody (A left as it asked) but C, which got it before it; D waited
    // behind C only: B was assigned at D's own instant.
    assert_eq!(
        rows.blockers,
        ["S A#0 by=- of 0", "S B#0 by=C#0 of 1", "S C#0 by=- of 0", "S D#0 by=C#0 of 1"]
    );
}

/// Past the listed holders, more are counted: a request behind 100 holders of a counting
/// semaphore says so, and names the first.
#[test]
fn a_request_behind_many_holders_counts_them_all() {
    let mut text = String::new();
    for k in 0..100 {
        let t = k + 1;
        text.push_str(&format!(
            "{t},H{k},0,SEM,S,0,requestsemaphore\n{t},H{k},0,SEM,S,0,assigned\n"
        ));
    }
    text.push_str("200,W,0,SEM,S,0,requestsemaphore\n200,W,0,SEM,S,0,queued\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H0#0 of 100"]);
}

/// A small deterministic generator (xorshift64*) for the randomised checks below.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// `blocked_by` and `blockers` recomputed from the rows alone, by their definition: the
/// holders of a contended request r are the other rows h of its semaphore assigned before r
/// was (any time, when r never was) and not released by r's request (still held when it came,
/// or got it while it waited); `blocked_by` is the first of them to be assigned (ties by
/// name, then instance). The rows do not say when a request never assigned ended (given up
/// by a retry, or still waiting at the end): such a request is bounded here by its release
/// when it has one, and is left out of the comparison otherwise (`None`).
fn blockers_by_definition(rows: &[SeenLock], r: usize) -> Option<(Option<(String, i64)>, i64)> {
    let w = &rows[r];
    if !w.contended {
        return Some((None, 0));
    }
    let request = w.request_ts?;
    // Assigned strictly before r was: one assigned at r's own instant did not hold it before.
    let until = match (w.assigned_ts, w.released_ts) {
        (Some(a), _) => a,
        (None, Some(rel)) => {
            // r released unassigned waited until its release: a grant at that instant counts
            // when logged before the release, and when that is r's request instant too, a
            // release at it when logged before r's, which the rows do not say.
            if rel == request
                || rows.iter().any(|h| h.semaphore == w.semaphore && h.assigned_ts == Some(rel))
            {
                return None;
            }
            rel
        }
        (None, None) => return None,
    };
    let mut holders: Vec<(i64, &str, i64)> = Vec::new();
    for (k, h) in rows.iter().enumerate() {
        if k == r || h.semaphore != w.semaphore {
            continue;
        }
        let Some(assigned) = h.assigned_ts else { continue };
        if assigned < until && h.released_ts.is_none_or(|rel| rel > request) {
            holders.push((assigned, &h.process, h.instance));
        }
    }
    let first = holders.iter().min().map(|(_, p, i)| (p.to_string(), *i));
    Some((first, i64::try_from(holders.len()).unwrap_or(i64::MAX)))
}

/// Random traces of two semaphores used by a few process instances, in every order the
/// trace may log them (a request, its waiting and grant, releases, retries, grants without a
/// request, releases without a grant, many at one instant): each contended request names
/// exactly the holders its rows' times define.
#[test]
fn blocked_by_matches_its_definition_on_random_traces() {
    let procs = ["A", "B", "C", "D"];
    let actions = ["requestsemaphore", "waiting", "assigned", "released", "exclusivesemaphore"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    for case in 0..20000 {
        let mut text = String::new();
        let mut ts = 0;
        let n = 4 + rng.below(24);
        for _ in 0..n {
            ts += rng.below(3);
            let p = procs[usize::try_from(rng.below(4)).unwrap()];
            let inst = rng.below(2);
            let sem = if rng.below(4) == 0 { "T" } else { "S" };
            // Mostly the usual order, request then grant then release, with every other
            // action mixed in.
            let action = actions[usize::try_from(rng.below(5)).unwrap()];
            text.push_str(&format!("{ts},{p},{inst},SEM,{sem},0,{action}\n"));
        }
        let (_, rows) = derive(&text);
        for (k, row) in rows.lock_rows.iter().enumerate() {
            let Some((by, count)) = blockers_by_definition(&rows.lock_rows, k) else { continue };
            compared += 1;
            assert_eq!(
                (row.blocked_by.clone(), row.blockers),
                (by, count),
                "case {case}, row {row:?} of\n{text}"
            );
        }
    }
    assert!(compared > 100_000, "{compared}");
}

/// A process instance holding a counting semaphore twice that releases one hold at the
/// instant of a request, logged after it, still blocks it with the other.
#[test]
fn a_second_hold_of_the_same_instance_still_blocks_after_the_first_is_released() {
    let (_, rows) = derive(
        "0,A,0,SEM,S,0,requestsemaphore\n0,A,0,SEM,S,0,assigned\n5,A,0,SEM,S,0,requestsemaphore\n\
         5,A,0,SEM,S,0,assigned\n10,W,0,SEM,S,0,requestsemaphore\n10,W,0,SEM,S,0,waiting\n\
         10,A,0,SEM,S,0,released\n20,A,0,SEM,S,0,released\n20,W,0,SEM,S,0,assigned\n\
         30,W,0,SEM,S,0,released\n",
    );
    assert_eq!(rows.blockers, ["S A#0 by=- of 0", "S A#0 by=- of 0", "S W#0 by=A#0 of 1"]);
}

/// A request granted at the instant it came, with a holder's release logged after the grant
/// at that instant: the holder did not keep it waiting (a release at the request's instant,
/// logged after it).
#[test]
fn a_release_at_the_request_instant_after_its_grant_does_not_block_it() {
    let (_, rows) = derive(
        "0,D,0,SEM,S,0,requestsemaphore\n0,D,0,SEM,S,0,assigned\n15,A,0,SEM,S,0,waiting\n\
         15,A,0,SEM,S,0,assigned\n15,D,0,SEM,S,0,released\n20,A,0,SEM,S,0,released\n",
    );
    assert_eq!(rows.blockers, ["S D#0 by=- of 0", "S A#0 by=- of 0"]);
}

/// Past the 64 listed holders the count stays exact: holders granted at the waiter's own
/// instant and a holder released at its request's instant (logged after it) leave the count
/// even when they are among the unlisted.
#[test]
fn holders_beyond_the_listed_ones_leave_the_count_as_listed_ones_do() {
    let mut text = String::new();
    // 70 holders before W asks at 100; the 70th (H69, unlisted) releases at 100 after it.
    for k in 0..70 {
        text.push_str(&format!(
            "{k},H{k},0,SEM,S,0,requestsemaphore\n{k},H{k},0,SEM,S,0,assigned\n"
        ));
    }
    text.push_str("100,W,0,SEM,S,0,requestsemaphore\n100,W,0,SEM,S,0,queued\n");
    text.push_str("100,H69,0,SEM,S,0,released\n");
    // Three more are granted at 150, the instant W is: they did not hold it before W.
    for k in 70..73 {
        text.push_str(&format!("140,H{k},0,SEM,S,0,requestsemaphore\n"));
    }
    for k in 70..73 {
        text.push_str(&format!("150,H{k},0,SEM,S,0,assigned\n"));
    }
    text.push_str("150,W,0,SEM,S,0,assigned\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H0#0 of 69"]);
}

/// More holders than are listed, granted in another order than they asked: `blocked_by` is
/// still the first to have got the semaphore, not the first to have asked.
#[test]
fn the_first_holder_is_named_when_more_hold_than_are_listed() {
    let mut text = String::new();
    for k in 0..70 {
        text.push_str(&format!("0,H{k:02},0,SEM,S,0,requestsemaphore\n"));
    }
    for k in 0..70 {
        text.push_str(&format!("{},H{:02},0,SEM,S,0,assigned\n", k + 1, 69 - k));
    }
    text.push_str("100,W,0,SEM,S,0,requestsemaphore\n100,W,0,SEM,S,0,queued\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H69#0 of 70"]);
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

/// An independent reading of SEMANTICS.md's process and runnable tables and DESIGN.md's
/// metric definitions, written apart from `src/synth` (whose simulator shares the derive
/// stage's authors): random well-formed multi-core traces, every transition explicit except
/// ISRs that start on a busy core with no preempt logged (the process they interrupt resumes
/// when they terminate, as the README's `implicit_preemption` says), many events at one
/// instant, runnables' own `suspend`/`resume` lines written before or after their task's,
/// and FreeRTOS-style resumes whose source is the task that just left the core. It keeps
/// its own books of what every instance did.
mod oracle {
    use std::collections::BTreeMap;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
        fn pick<T: Clone>(&mut self, v: &[T]) -> T {
            v[self.below(v.len())].clone()
        }
    }

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum St {
        Active,
        Running,
        Ready,
        Waiting,
        Polling,
        Parking,
    }

    impl St {
        fn name(self) -> &'static str {
            match self {
                St::Active => "active",
                St::Running => "running",
                St::Ready => "ready",
                St::Waiting => "waiting",
                St::Polling => "polling",
                St::Parking => "parking",
            }
        }
        fn on_core(self) -> bool {
            matches!(self, St::Running | St::Polling)
        }
    }

    type Key = (String, i64);

    struct Proc {
        ty: &'static str,
        st: St,
        since: i64,
        core: Option<usize>,
        first_core: Option<usize>,
        occ_since: i64,
        net: i64,
        ready: i64,
        other: i64,
        pre: i64,
        mig: i64,
        /// An ISR that started on a busy core with no preempt: it only runs and terminates.
        implicit: bool,
    }

    struct Run {
        task: Key,
        running: bool,
        since: i64,
        core: usize,
        first_core: usize,
        net: i64,
        ready: i64,
        pre: i64,
    }

    /// What the derive stage should make of a trace.
    pub(super) struct Expected {
        pub text: String,
        /// `entity#instance state [ts,end) @core` of every state and core interval that
        /// ended, longer than 0.
        pub intervals: Vec<String>,
        /// `entity#instance net= ready= preempt= migr=` of every instance that terminated.
        pub metrics: Vec<String>,
        /// `entity#instance @core` of those instances.
        pub cores: Vec<String>,
    }

    #[derive(Default)]
    struct Books {
        t: i64,
        lines: Vec<String>,
        intervals: Vec<String>,
        metrics: Vec<String>,
        cores: Vec<String>,
        occ: Vec<Option<Key>>,
        procs: BTreeMap<Key, Proc>,
        runs: BTreeMap<Key, Run>,
        /// Per core, the processes an implicit ISR interrupted, with that ISR, innermost last.
        stack: Vec<Vec<(Key, Key)>>,
        /// Per core, the last process that left it, and when.
        left: Vec<Option<(Key, i64)>>,
        /// Per core, when an ISR's end last gave it back to the process it interrupted.
        handed_back: Vec<i64>,
        /// The process an ISR's end gave its core back to, and when: its own events of that
        /// instant would say it did not get it back (the README folds them in).
        back: Vec<(Key, i64)>,
    }

    fn core(c: usize) -> String {
        format!("Core_{c}")
    }

    impl Books {
        fn line(&mut self, src: &str, si: i64, ty: &str, k: &Key, action: &str) {
            self.lines.push(format!("{},{src},{si},{ty},{},{},{action}", self.t, k.0, k.1));
        }

        fn interval(&mut self, k: &Key, state: &str, since: i64, c: Option<usize>) {
            if self.t > since {
                let at = c.map_or("-".to_string(), core);
                self.intervals.push(format!("{}#{} {state} [{since},{}) @{at}", k.0, k.1, self.t));
            }
        }

        /// `k` leaves its state for `to` (on core `c` when `to` is on a core).
        fn switch(&mut self, k: &Key, to: St, start: bool, c: Option<usize>) {
            let t = self.t;
            let Some(p) = self.procs.get_mut(k) else { return };
            let (was, since, old_core) = (p.st, p.since, p.core);
            match was {
                St::Running => p.net += t - since,
                St::Ready => p.ready += t - since,
                St::Waiting | St::Polling | St::Parking => p.other += t - since,
                St::Active => {}
            }
            p.st = to;
            p.since = t;
            let mut vacated = None;
            let mut occupied = None;
            if to.on_core() {
                if old_core.is_some_and(|o| Some(o) != c) && !start {
                    p.mig += 1;
                }
                p.first_core = p.first_core.or(c);
                p.core = c;
                if !was.on_core() {
                    p.occ_since = t;
                    occupied = c;
                }
            } else if was.on_core() {
                if to == St::Ready {
                    p.pre += 1;
                }
                vacated = old_core.map(|o| (o, p.occ_since));
            }
            self.interval(k, was.name(), since, if was.on_core() { old_core } else { None });
            if let Some((o, occ_since)) = vacated {
                self.occ[o] = None;
                if t > occ_since {
                    self.intervals.push(format!(
                        "{}#-1 {} [{occ_since},{t}) @{}",
                        core(o),
                        k.0,
                        core(o)
                    ));
                }
            }
            if let Some(o) = occupied {
                self.occ[o] = Some(k.clone());
            }
        }

        fn runnables_of(&self, k: &Key) -> Vec<Key> {
            self.runs.iter().filter(|(_, r)| r.task == *k).map(|(rk, _)| rk.clone()).collect()
        }

        fn run_switch(&mut self, rk: &Key, c: Option<usize>) {
            let t = self.t;
            let Some(r) = self.runs.get_mut(rk) else { return };
            let (since, running, old) = (r.since, r.running, r.core);
            if running {
                r.net += t - since;
                r.pre += 1;
            } else {
                r.ready += t - since;
                if let Some(c) = c {
                    r.core = c;
                }
            }
            r.running = !running;
            r.since = t;
            let state = if running { "running" } else { "suspended" };
            self.interval(rk, state, since, running.then_some(old));
        }

        fn run_end(&mut self, rk: &Key) {
            let t = self.t;
            let Some(r) = self.runs.remove(rk) else { return };
            let state = if r.running { "running" } else { "suspended" };
            self.interval(rk, state, r.since, r.running.then_some(r.core));
            let (net, ready) = if r.running {
                (r.net + t - r.since, r.ready)
            } else {
                (r.net, r.ready + t - r.since)
            };
            self.metrics.push(format!(
                "{}#{} net={net} ready={ready} preempt={} migr=0",
                rk.0, rk.1, r.pre
            ));
            self.cores.push(format!("{}#{} @{}", rk.0, rk.1, core(r.first_core)));
        }

        /// The task's runnables follow it off or onto its core, their own lines (half of the
        /// time) written before or after the task's.
        fn follow(&mut self, rng: &mut Rng, k: &Key, on: bool, c: Option<usize>, task_line: bool) {
            let mut own = Vec::new();
            for rk in self.runnables_of(k) {
                if self.runs.get(&rk).is_some_and(|r| r.running != on) {
                    self.run_switch(&rk, c);
                    if task_line && rng.chance(50) {
                        let action = if on { "resume" } else { "suspend" };
                        own.push(format!(
                            "{},{},{},R,{},{},{action}",
                            self.t, k.0, k.1, rk.0, rk.1
                        ));
                    }
                }
            }
            if !own.is_empty() && rng.chance(50) {
                if let Some(task) = self.lines.pop() {
                    self.lines.extend(own);
                    self.lines.push(task);
                }
            } else {
                self.lines.extend(own);
            }
        }

        fn terminated(&mut self, k: &Key) {
            if let Some(p) = self.procs.remove(k) {
                self.metrics.push(format!(
                    "{}#{} net={} ready={} preempt={} migr={}",
                    k.0, k.1, p.net, p.ready, p.pre, p.mig
                ));
                let at = p.first_core.map_or("-".to_string(), core);
                self.cores.push(format!("{}#{} @{at}", k.0, k.1));
            }
        }

        fn interrupted(&self, k: &Key) -> bool {
            self.stack.iter().any(|s| s.iter().any(|(p, _)| p == k))
        }
    }

    pub(super) fn trace(seed: u64, events: usize) -> Expected {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let ncores = 1 + rng.below(3);
        let mut kinds: Vec<(&'static str, String)> =
            (0..1 + rng.below(4)).map(|i| ("T", format!("T{i}"))).collect();
        for i in 0..rng.below(3) {
            kinds.push((if rng.chance(50) { "I" } else { "ISR" }, format!("I{i}")));
        }
        let mut next: BTreeMap<String, i64> = BTreeMap::new();
        let mut b = Books {
            occ: vec![None; ncores],
            stack: vec![Vec::new(); ncores],
            left: vec![None; ncores],
            handed_back: vec![-1; ncores],
            ..Books::default()
        };
        #[derive(Clone)]
        enum Do {
            Activate(&'static str, String),
            Enter(Key, &'static str, usize),
            Leave(Key, &'static str),
            Isr(Key, usize),
            RunStart(Key),
            RunEnd(Key),
        }
        for _ in 0..events {
            b.t += rng.pick(&[0, 0, 0, 1, 2, 5]);
            let t = b.t;
            let mut choices = Vec::new();
            for (ty, n) in &kinds {
                if b.procs.keys().filter(|k| k.0 == *n).count() < 2 {
                    choices.push(Do::Activate(ty, n.clone()));
                }
            }
            let free: Vec<usize> = (0..ncores).filter(|c| b.occ[*c].is_none()).collect();
            let busy: Vec<usize> =
                (0..ncores).filter(|c| b.occ[*c].is_some() && b.handed_back[*c] != t).collect();
            for (k, p) in &b.procs {
                let runs = b.runnables_of(k).len();
                if p.ty != "T" && p.st == St::Active && !busy.is_empty() {
                    choices.push(Do::Isr(k.clone(), rng.pick(&busy)));
                }
                if b.back.contains(&(k.clone(), t)) {
                    continue;
                }
                if p.implicit || (b.interrupted(k) && p.st != St::Parking) {
                    if p.implicit && p.st == St::Running {
                        choices.push(Do::Leave(k.clone(), "terminate"));
                        if runs < 2 {
                            choices.push(Do::RunStart(k.clone()));
                        }
                        if runs > 0 {
                            choices.push(Do::RunEnd(k.clone()));
                        }
                    }
                    continue;
                }
                if b.interrupted(k) {
                    choices.push(Do::Leave(k.clone(), "release_parking"));
                    continue;
                }
                let any_free = !free.is_empty();
                match p.st {
                    St::Active if any_free => {
                        choices.push(Do::Enter(k.clone(), "start", rng.pick(&free)))
                    }
                    St::Ready if any_free => {
                        choices.push(Do::Enter(k.clone(), "resume", rng.pick(&free)))
                    }
                    St::Parking if any_free => {
                        choices.push(Do::Enter(k.clone(), "poll_parking", rng.pick(&free)));
                        choices.push(Do::Leave(k.clone(), "release_parking"));
                    }
                    St::Parking => choices.push(Do::Leave(k.clone(), "release_parking")),
                    St::Running => {
                        for a in ["preempt", "terminate", "poll", "wait"] {
                            choices.push(Do::Leave(k.clone(), a));
                        }
                        if runs < 2 {
                            choices.push(Do::RunStart(k.clone()));
                        }
                        if runs > 0 {
                            choices.push(Do::RunEnd(k.clone()));
                        }
                    }
                    St::Polling => {
                        choices.push(Do::Leave(k.clone(), "run"));
                        choices.push(Do::Leave(k.clone(), "park"));
                    }
                    St::Waiting => choices.push(Do::Leave(k.clone(), "release")),
                    _ => {}
                }
            }
            if choices.is_empty() {
                continue;
            }
            match rng.pick(&choices) {
                Do::Activate(ty, n) => {
                    let i = next.entry(n.clone()).or_insert(0);
                    let k = (n.clone(), *i);
                    *i += 1;
                    b.line(&format!("STI_{n}"), 0, ty, &k, "activate");
                    let p = Proc {
                        ty,
                        st: St::Active,
                        since: t,
                        core: None,
                        first_core: None,
                        occ_since: t,
                        net: 0,
                        ready: 0,
                        other: 0,
                        pre: 0,
                        mig: 0,
                        implicit: false,
                    };
                    b.procs.insert(k, p);
                }
                Do::Enter(k, action, c) => {
                    let ty = b.procs[&k].ty;
                    // FreeRTOS names the task that just left the core as the source.
                    let (mut src, mut si) = (core(c), 0);
                    if let Some((prev, at)) = b.left[c].clone() {
                        let off = b
                            .procs
                            .get(&prev)
                            .is_some_and(|p| !p.st.on_core() && p.core == Some(c));
                        if at == t && off && rng.chance(50) {
                            (src, si) = prev;
                        }
                    }
                    b.line(&src, si, ty, &k, action);
                    let to = if action == "poll_parking" { St::Polling } else { St::Running };
                    b.switch(&k, to, action == "start", Some(c));
                    b.follow(&mut rng, &k, true, Some(c), true);
                }
                Do::Leave(k, action) => {
                    let (ty, c) = (b.procs[&k].ty, b.procs[&k].core);
                    if action == "terminate" {
                        for rk in b.runnables_of(&k) {
                            b.lines
                                .push(format!("{t},{},{},R,{},{},terminate", k.0, k.1, rk.0, rk.1));
                            b.run_end(&rk);
                        }
                    }
                    let src = match (action, c) {
                        ("release" | "release_parking", _) | (_, None) => core(rng.below(ncores)),
                        (_, Some(c)) => core(c),
                    };
                    b.line(&src, 0, ty, &k, action);
                    let to = match action {
                        "preempt" | "release" | "release_parking" => St::Ready,
                        "wait" => St::Waiting,
                        "poll" => St::Polling,
                        "run" => St::Running,
                        "park" => St::Parking,
                        _ => St::Active, // terminate: the instance goes below
                    };
                    let was_on = b.procs[&k].st.on_core();
                    b.switch(&k, to, false, c);
                    if was_on && !to.on_core() {
                        if let Some(c) = c {
                            b.left[c] = Some((k.clone(), t));
                        }
                        if action != "terminate" {
                            b.follow(&mut rng, &k, false, None, true);
                        }
                    }
                    if action == "terminate" {
                        let implicit = b.procs.get(&k).is_some_and(|p| p.implicit);
                        b.terminated(&k);
                        if let (true, Some(c)) = (implicit, c) {
                            isr_end(&mut b, &mut rng, &k, c);
                        }
                    }
                }
                Do::Isr(k, c) => isr_start(&mut b, &mut rng, &k, c),
                Do::RunStart(k) => {
                    let r = format!("R{}", rng.below(3));
                    let i = next.entry(r.clone()).or_insert(0);
                    let rk = (r, *i);
                    *i += 1;
                    // Now and then called by a runnable of the task rather than the task.
                    let caller = b.runnables_of(&k).into_iter().find(|c| b.runs[c].running);
                    let src = match caller {
                        Some(c) if rng.chance(30) => c,
                        _ => k.clone(),
                    };
                    b.lines.push(format!("{t},{},{},R,{},{},start", src.0, src.1, rk.0, rk.1));
                    let c = b.procs[&k].core.unwrap_or(0);
                    let run = Run {
                        task: k,
                        running: true,
                        since: t,
                        core: c,
                        first_core: c,
                        net: 0,
                        ready: 0,
                        pre: 0,
                    };
                    b.runs.insert(rk, run);
                }
                Do::RunEnd(k) => {
                    let rk = rng.pick(&b.runnables_of(&k));
                    b.lines.push(format!("{t},{},{},R,{},{},terminate", k.0, k.1, rk.0, rk.1));
                    b.run_end(&rk);
                }
            }
        }
        Expected {
            text: format!("#timeScale ns\n{}\n", b.lines.join("\n")),
            intervals: b.intervals,
            metrics: b.metrics,
            cores: b.cores,
        }
    }

    /// ISR `k` starts on busy core `c` with no preempt of what runs there.
    fn isr_start(b: &mut Books, rng: &mut Rng, k: &Key, c: usize) {
        let Some(p) = b.occ[c].clone() else { return };
        let ty = b.procs[k].ty;
        b.line(&core(c), 0, ty, k, "start");
        let to = if b.procs[&p].st == St::Polling { St::Parking } else { St::Ready };
        b.switch(&p, to, false, None);
        b.follow(rng, &p, false, None, false);
        b.stack[c].push((p, k.clone()));
        if let Some(i) = b.procs.get_mut(k) {
            i.implicit = true;
        }
        b.switch(k, St::Running, true, Some(c));
    }

    /// Implicit ISR `k` terminated on `c`: what it interrupted gets the core back, unless the
    /// next ISR takes it at this instant (tail-chaining).
    fn isr_end(b: &mut Books, rng: &mut Rng, k: &Key, c: usize) {
        if b.stack[c].last().is_none_or(|(_, isr)| isr != k) {
            return;
        }
        let Some((p, _)) = b.stack[c].pop() else { return };
        let next: Vec<Key> = b
            .procs
            .iter()
            .filter(|(_, q)| q.ty != "T" && q.st == St::Active)
            .map(|(n, _)| n.clone())
            .collect();
        if !next.is_empty() && rng.chance(40) {
            let n = rng.pick(&next);
            let ty = b.procs[&n].ty;
            b.line(&core(c), 0, ty, &n, "start");
            b.stack[c].push((p, n.clone()));
            if let Some(i) = b.procs.get_mut(&n) {
                i.implicit = true;
            }
            b.switch(&n, St::Running, true, Some(c));
            return;
        }
        b.handed_back[c] = b.t;
        b.back.push((p.clone(), b.t));
        let to = if b.procs[&p].st == St::Parking { St::Polling } else { St::Running };
        b.switch(&p, to, false, Some(c));
        b.follow(rng, &p, true, Some(c), false);
    }
}

#[test]
fn random_well_formed_traces_match_an_independent_reading_of_the_tables() {
    for seed in 1..=150 {
        let e = oracle::trace(seed, 300);
        let (s, rows) = derive(&e.text);
        let warnings: Vec<_> =
            s.diag_counts.iter().filter(|(k, _)| **k != "implicit_preemption").collect();
        assert!(warnings.is_empty(), "seed {seed}: {warnings:?}\n{}", e.text);
        for m in &e.metrics {
            assert!(
                rows.metrics.contains(m),
                "seed {seed}: {m} not in {:?}\n{}",
                rows.metrics,
                e.text
            );
        }
        for c in &e.cores {
            assert!(rows.instance_cores.contains(c), "seed {seed}: {c}\n{}", e.text);
        }
        // Every interval that ended, longer than 0: the same ones, no more, no fewer.
        let mut got: Vec<&str> = rows
            .intervals
            .iter()
            .zip(&rows.interval_cores)
            .filter(|(iv, _)| !iv.ends_with("open"))
            .map(|(_, c)| c.as_str())
            .filter(|c| {
                let span = c.split(['[', ')']).nth(1).unwrap_or_default();
                let (a, b) = span.split_once(',').unwrap_or_default();
                a != b
            })
            .collect();
        let mut want: Vec<&str> = e.intervals.iter().map(String::as_str).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "seed {seed}\n{}", e.text);
    }
}
