//! Tests of reading streams: byte orders, decoding and the merge by clock, truncation,
//! clocks going backwards, unknown events, the framing of jumbo events.
use super::*;

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
