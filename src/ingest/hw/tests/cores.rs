//! Tests of exports listed core by core or interleaved: the merge into time order, and
//! deltas and timestamp messages per core.
use super::*;

/// `ts source line` of each `events` row (the line from the note: `sym=l<line>`).
fn order(r: &Rec) -> Vec<String> {
    r.events
        .iter()
        .map(|e| {
            let f: Vec<&str> = e.split(' ').collect();
            let data = e.rsplit("sym=").next().unwrap_or("").trim_end_matches(']');
            format!("{} {} {}", f[0], f[1].trim_end_matches("/-1"), data)
        })
        .collect()
}

#[test]
fn an_export_listed_core_by_core_is_merged_in_time_order() {
    // Core0's rows, then Core1's: each core in order, the file not.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore0,Info,300,l3\nCore0,Info,500,l4\n\
                Core1,Info,150,l5\nCore1,Info,250,l6\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        ["100 Core0 l2", "150 Core1 l5", "250 Core1 l6", "300 Core0 l3", "500 Core0 l4"]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"], "no time_backwards: {:?}", r.diags);
    assert!(r.meta.contains(&("hw.order".into(), "merged per core (2 streams)".into())));
    // Read in one pass (no file to read again: a pipe), the same rows are in file order and
    // Core1's rows are said to go back (before Core0's 500).
    let comp = Companions::default();
    let mut sink = Rec::default();
    let dev = std::path::Path::new("/dev/null");
    read(&mut LineReader::new(text.as_bytes()), "t.csv", Some(dev), &comp, &mut sink).unwrap();
    assert_eq!(
        sink.kinds(),
        ["time_unit_assumed", "no_prepass", "time_backwards", "time_backwards"]
    );
    assert_eq!(order(&sink)[3], "150 Core1 l5");
}

#[test]
fn interleaved_cores_each_in_its_own_order_are_merged() {
    // Core1's 250 comes after Core0's 300 in the file; Core0's 280 is before its own 300.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore1,Info,150,l3\nCore0,Info,300,l4\nCore1,Info,250,l5\n\
                Core0,Info,280,l6\nCore1,Info,400,l7\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        [
            "100 Core0 l2",
            "150 Core1 l3",
            "250 Core1 l5",
            "300 Core0 l4",
            // Out of order within its own core: kept after the row before it, and said.
            "280 Core0 l6",
            "400 Core1 l7"
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed", "time_backwards"]);
    assert!(r.diags[1].1.starts_with("line 6: time 280 ns is before the previous row's 300 ns"));
}

#[test]
fn equal_times_of_different_cores_keep_file_order() {
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore0,Info,200,l3\nCore1,Info,100,l4\nCore1,Info,200,l5\n\
                Core2,Info,50,l6\nCore2,Info,200,l7\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        [
            "50 Core2 l6",
            "100 Core0 l2",
            "100 Core1 l4",
            "200 Core0 l3",
            "200 Core1 l5",
            "200 Core2 l7"
        ]
    );
    // Ties go by line, not by core: Core1's 200 is written before Core0's.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore1,Info,150,l3\nCore1,Info,200,l4\nCore0,Info,200,l5\n\
                Core2,Info,50,l6\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        ["50 Core2 l6", "100 Core0 l2", "150 Core1 l3", "200 Core1 l4", "200 Core0 l5"]
    );
    // A file in time order stays in file order, cores interleaved or not.
    let sorted = "Source,Type,Timestamp,Symbol\n\
                  Core1,Info,100,l2\nCore0,Info,100,l3\nCore1,Info,100,l4\nCore0,Info,200,l5\n";
    let r = run(sorted);
    assert_eq!(order(&r), ["100 Core1 l2", "100 Core0 l3", "100 Core1 l4", "200 Core0 l5"]);
    assert!(r.meta.contains(&("hw.order".into(), "file".into())));
}

#[test]
fn deltas_are_per_core_in_an_export_listed_core_by_core() {
    // TRACE32 ti.back (seconds), Core0's records then Core1's: each core's deltas sum from 0.
    let text = "record,core,cycle,symbol,ti.back\n\
                1,0,info,l2,0.000000100\n2,0,info,l3,0.000000200\n\
                3,1,info,l4,0.000000150\n4,1,info,l5,0.000000100\n";
    let r = run(text);
    assert_eq!(order(&r), ["100 0 l2", "150 1 l4", "250 1 l5", "300 0 l3"]);
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    // Cores interleaved: one listing, each delta from the row before in the file.
    let text = "record,core,cycle,symbol,ti.back\n\
                1,0,info,l2,0.000000100\n2,1,info,l3,0.000000050\n\
                3,0,info,l4,0.000000100\n4,1,info,l5,0.000000100\n";
    let r = run(text);
    assert_eq!(order(&r), ["100 0 l2", "150 1 l3", "250 0 l4", "350 1 l5"]);
    assert!(r.meta.contains(&("hw.order".into(), "file".into())));
}

#[test]
fn timestamp_messages_are_per_core_in_an_export_listed_core_by_core() {
    let text = "Source,Type,Timestamp,Symbol\n\
                C0,Timestamp,100,l2\nC0,Branch,,l3\nC0,Timestamp,200,l4\n\
                C1,Timestamp,120,l5\nC1,Branch,,l6\nC1,Timestamp,160,l7\n";
    let r = run_with(text, r#"{"time": {"encoding": "marker"}}"#, None);
    assert_eq!(
        order(&r),
        ["100 C0 l2", "120 C1 l5", "140 C1 l6", "150 C0 l3", "160 C1 l7", "200 C0 l4"]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"]);
}

#[test]
fn cores_beyond_the_stream_bound_share_one_stream_in_file_order() {
    // 18 cores in descending time, one row each: the first 15 have a stream each, the last
    // three share one, read in file order (so two of them go back).
    let mut text = String::from("Source,Type,Timestamp,Symbol\n");
    for i in 0..18 {
        text.push_str(&format!("C{i},Info,{},l{}\n", 1000 - i, i + 2));
    }
    let r = run(&text);
    let got = order(&r);
    assert_eq!(got.len(), 18);
    // The shared stream's rows keep file order, at the latest time it reached (985).
    assert_eq!(&got[..4], ["985 C15 l17", "984 C16 l18", "983 C17 l19", "986 C14 l16"]);
    assert_eq!(got[17], "1000 C0 l2");
    assert_eq!(r.kinds(), ["time_unit_assumed", "time_backwards", "time_backwards"]);
}
