//! Tests of the bounds on untrusted exports: call depth, held rows, signals and cores, and
//! mutated exports that must never panic.
use super::*;

#[test]
fn deep_recursion_without_returns_stays_bounded() {
    let mut text = String::from("Type,Destination,Timestamp\n");
    for i in 0..(system::MAX_DEPTH + 10) {
        let f = if i % 2 == 0 { "0x2000" } else { "0x2100" };
        text.push_str(&format!("Branch,{f},{i}\n"));
    }
    let r = run_with(&text, SYSTEM_MAP, Some(system_elf()));
    let overflow = r.kinds().iter().filter(|k| **k == "call_stack_overflow").count();
    assert_eq!(overflow, 10);
}

#[test]
fn marker_rows_with_a_bad_time_are_held_within_the_bound() {
    let n = reader::MAX_PENDING + 3;
    let mut text = String::from("Type,Timestamp\nInfo,100\n");
    for _ in 0..n {
        text.push_str("Data,soon\n");
    }
    text.push_str("Info,300\n");
    let r = run_with(&text, r#"{"time": {"encoding": "marker", "unit": "ns"}}"#, None);
    assert_eq!(r.events.len(), n + 2);
    let gap: Vec<_> = r.diags.iter().filter(|d| d.0 == "marker_gap_too_long").collect();
    assert_eq!(gap.len(), 1, "the held rows stay bounded");
    assert!(gap[0].1.contains("lines 3 to 65538 take its time (100 ns)"), "{gap:?}");
    // Its bad_time row says where it is kept: between the messages, not at the time before.
    let bad = r.diags.iter().find(|d| d.0 == "bad_time").unwrap();
    assert!(bad.1.ends_with("row kept between the timestamp messages around it"), "{bad:?}");
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts[1], "100");
    assert_eq!(ts[n], "200", "the last 3 take the midpoint");
}

#[test]
fn more_rows_than_the_bound_before_the_first_message_are_at_0_and_all_counted() {
    let n = reader::MAX_PENDING + 5;
    let mut text = String::from("Type,Timestamp\n");
    for _ in 0..n {
        text.push_str("Data,\n");
    }
    text.push_str("Info,1000\n");
    let r = run_with(&text, r#"{"time": {"encoding": "marker", "unit": "ns"}}"#, None);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts[0], "0");
    assert_eq!(ts[reader::MAX_PENDING - 1], "0");
    assert_eq!(ts[reader::MAX_PENDING], "1000");
    assert_eq!(r.kinds(), ["marker_gap_too_long", "unbracketed_rows"]);
    assert!(r.diags[0].1.contains("lines 2 to 65537 are placed at 0 ns"), "{:?}", r.diags[0]);
    assert_eq!(
        r.diags[1].1,
        "line 2: 65541 rows before the first timestamp message: the first 65536 are at 0 ns \
         (more than 65536 waited: marker_gap_too_long), the rest take its time"
    );
}

#[test]
fn signals_and_cores_beyond_the_bound_are_said_and_kept_as_rows() {
    let n = system::MAX_ENTITIES + 2;
    let mut text = String::from("Type,Address,Symbol,Data,Timestamp\n");
    for i in 0..n {
        text.push_str(&format!("Data,0x10,s{i},1,{i}\n"));
    }
    let r = run_with(&text, r#"{"signals": ["*"], "time": {"unit": "ns"}}"#, None);
    assert_eq!(r.system().len(), system::MAX_ENTITIES);
    assert_eq!(r.events.len(), n + system::MAX_ENTITIES, "every row is kept");
    assert_eq!(r.kinds(), ["too_many_entities", "too_many_entities"]);
    assert!(r.diags[0].1.starts_with("line 65538: s65536: more than 65536 tasks"), "{:?}", r.diags);

    let n = reader::MAX_CORES + 2;
    let mut text = String::from("Source,Type,Timestamp\n");
    for i in 0..n {
        text.push_str(&format!("C{i},Info,{i}\n"));
    }
    let r = run_with(&text, r#"{"time": {"unit": "ns"}}"#, None);
    assert_eq!(r.cores().len(), reader::MAX_CORES + 1);
    assert_eq!(r.cores().last().copied(), Some(reader::OTHER_CORE));
    assert_eq!(r.kinds(), ["too_many_entities"]);
    assert_eq!(r.events.last().unwrap(), "4097 Core_other/-1 :/-1 info [core=C4097]");
}

/// Untrusted exports never panic: a system's rows (task switches, calls, returns, an ISR,
/// signal writes, the terminate function) cut at every byte and with bytes changed to the
/// characters that matter (delimiters, signs, digits, quotes, line ends), through the ELF
/// and the mapping, end in Ok or Err.
#[test]
fn mutated_exports_never_panic() {
    // Then TASK_B, which calls the terminate function, and the core idle.
    let text =
        format!("{CALLS}Data,0x20000000,,2,65\nBranch,0x1010,0x4000,,70\nData,0x20000000,,0,80\n");
    let comp = Companions {
        map: Mapping::parse(SYSTEM_MAP).unwrap(),
        symbols: Some(system_elf()),
        ..Companions::default()
    };
    let go = |b: &[u8]| {
        let mut sink = Rec::default();
        read(&mut LineReader::new(b), "t.csv", None, &comp, &mut sink).map(|_| sink)
    };
    let whole = go(text.as_bytes()).unwrap();
    assert!(whole.system().len() >= 10, "{:#?}", whole.system());
    let bytes = text.as_bytes();
    let mut runs = 0;
    for cut in 0..bytes.len() {
        let _ = go(&bytes[..cut]);
        runs += 1;
    }
    let subst: &[u8] = &[b',', b'\n', b'\r', b'"', b'-', b'9', b'x', b'0', b' ', 0xFF, 0x00];
    for i in 0..bytes.len() {
        for &c in subst {
            let mut m = bytes.to_vec();
            m[i] = c;
            let _ = go(&m);
            runs += 1;
        }
    }
    assert!(runs > 3000, "{runs} runs");
}
