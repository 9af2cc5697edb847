//! Tests of records with their own times (`channels.rs`) as the Paraver and ovni readers
//! give them: states, channel changes and their bounds, labels and names, numbers.
use super::*;

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
fn channels_of_one_thread_are_bounded() {
    // One thread sets 70,000 event types (Paraver times in ns) and ends none; then type 7
    // (the first one) goes on changing, and type 9 is ended by a 0 and set again.
    let n = crate::derive::channels::MAX_OPEN_CHANNELS + 4464;
    let mut text = String::from("#Paraver (d):1000000_ns:0:1:1(1:1)\n");
    for t in 0..n {
        text.push_str(&format!("2:0:1:1:1:{}:{}:1\n", t + 1, t + 7));
    }
    let (s, rows) = derive_prv(&text);
    assert_eq!(
        diag_count(&s, "too_many_open_channels"),
        (n - crate::derive::channels::MAX_OPEN_CHANNELS) as u64
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
