//! Tests of the bounds and of records that do not fit: post queues, the dictionary, state
//! machines and unnamed pointers, times beyond the tables' range, short user records.
use super::*;

#[test]
fn a_full_post_queue_evicts_its_oldest_post_with_a_diagnostic() {
    let mut g = Gen::new();
    g.target_info();
    g.rec(61, &cat(&[&SM, b"sm\0"]));
    for t in 1..=4096u16 {
        g.rec(14, &cat(&[&t.to_le_bytes(), &[0; 4], &SIG, &SM, &[0, 0, 5, 4]]));
    }
    // A LIFO post at 5000 makes 4097: the oldest (sent at 1) goes, not the LIFO one.
    g.rec(15, &cat(&[&5000u16.to_le_bytes(), &SIG, &SM, &[0, 0, 5, 4]]));
    g.rec(16, &cat(&[&6000u16.to_le_bytes(), &SIG, &SM, &[0, 0, 5]])); // gets the LIFO one
    let r = run(&g.out, &QsOptions::default());
    assert_eq!(r.messages[0], "NULL->sm tag 126 sent 1 got None");
    assert_eq!(r.messages[1], "sm->sm tag 126 sent 5000 got Some(6000)");
    assert_eq!(r.messages[2], "NULL->sm tag 126 sent 2 got None");
    assert_eq!(r.messages.len(), 4097);
    let full: Vec<&String> =
        r.diags.iter().filter(|d| d.0 == "too_many_pending_posts").map(|d| &d.1).collect();
    assert_eq!(full.len(), 1);
    assert!(
        full[0].contains(
            "more than 4096 posts of signal 126 to sm wait for their get: the oldest (signal \
             126 from NULL to sm, sent at 1) is written never received"
        ),
        "{}",
        full[0]
    );
}

/// The frames of `bytes` through a [`Reader`] made ready by `prepare`; `settle` runs before
/// its finish.
fn run_reader(
    bytes: &[u8],
    comp: &Companion,
    prepare: impl FnOnce(&mut reader::Reader),
    settle: impl FnOnce(&mut reader::Reader),
) -> Rec {
    let mut sink = Rec::default();
    let mut d = frame::Deframer::new(bytes);
    let items: Vec<frame::Item> = std::iter::from_fn(|| d.next_item().unwrap()).collect();
    let mut r = reader::Reader::new("t.bin", &QsOptions::default(), comp, &mut sink).unwrap();
    r.start(&items).unwrap();
    prepare(&mut r);
    for i in items {
        r.item(i).unwrap();
    }
    settle(&mut r);
    r.finish().unwrap();
    sink
}

#[test]
fn a_full_dictionary_is_reported_and_unknown_object_says_so() {
    // A .dic of 2^20 + 1 objects: the last one is not kept.
    let mut dic = Dic::parse("-v694 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2\n");
    dic.obj = (0..=namemap::MAX_ENTRIES as u64).map(|p| (p + 1, String::new())).collect();
    let comp = Companion { dic: Some(dic), ..Companion::default() };
    let last = namemap::MAX_ENTRIES as u64 + 1;
    let mut g = Gen::new();
    g.rec(1, &cat(&[&u32::try_from(last).unwrap().to_le_bytes(), &S_A]));
    // 257 names of signal 126, one per object: the last is not kept.
    for o in 0..=256u32 {
        g.rec(60, &cat(&[&SIG, &(o + 1).to_le_bytes(), b"S\0"]));
    }
    let r = run_reader(&g.out, &comp, |_| {}, |_| {});
    assert_eq!(
        diags_of(&r, "dictionary_full"),
        [
            ": the .dic: the object dictionary holds 1048576 names, its bound: 1 names of \
             the .dic in all are not kept (their pointers and numbers are shown as numbers)",
            "byte 3347: SIG_DICT Sig=126,Obj=,Name=S: signal 126 has 256 names already, its \
             bound: this name is not kept (what it names is shown as a number) at byte 3347 \
             (frame 258)"
        ]
    );
    let unknown = diags_of(&r, "unknown_object");
    assert!(
        unknown[0].contains(
            "object 0x00100001 has no name kept: the object dictionary was full and refused 1 \
             names (dictionary_full), its own may be one of them: shown as 0x00100001"
        ),
        "{}",
        unknown[0]
    );
}

#[test]
fn state_machines_and_unnamed_pointers_beyond_their_bound_are_reported() {
    let mut g = Gen::new();
    // The target info of Gen::target_info without its reset flag (a reset ends the states).
    g.rec(64, &[0x00, 0xB6, 0x02, 0x22, 0x21, 0x22, 0x44, 0x02, 8, 0x21, 0, 0, 0, 1, 1, 24]);
    g.rec(4, &cat(&[&[1, 0], &SM, &S_A])); // a new state machine: beyond the bound
    g.rec(4, &cat(&[&[2, 0], &[1, 0, 0, 0], &S_A])); // one already with a state
    g.rec(6, &cat(&[&[3, 0], &SIG, &[1, 0, 0, 0], &S_A, &S_B])); // its change is derived
    let prepare = |r: &mut reader::Reader| {
        r.sm.reserve(derived::MAX_MACHINES);
        for i in 0..derived::MAX_MACHINES {
            let name = if i == 0 { "0x00000001".to_string() } else { i.to_string() };
            r.sm.insert(name, derived::SmState::test(0, ""));
        }
        r.unknown_obj.reserve(names::MAX_OBJECTS);
        for i in 0..names::MAX_OBJECTS {
            r.unknown_obj.insert((false, i as u64 + 100));
        }
    };
    // The state machines made up above end with no interval of their own.
    let settle = |r: &mut reader::Reader| r.sm.retain(|_, s| s.since > 0);
    let r = run_reader(&g.out, &Companion::default(), prepare, settle);
    let sms = diags_of(&r, "too_many_state_machines");
    assert_eq!(sms.len(), 1);
    assert!(
        sms[0].contains(
            "0x7E7D0010 enters 0x2000007E, but 262144 state machines have a state already: its \
             states are not derived (its events are kept)"
        ),
        "{}",
        sms[0]
    );
    assert!(r.spans.contains(&"state 0x00000001 0x2000007E [2,3)".to_string()), "{:?}", r.spans);
    let unknown = diags_of(&r, "unknown_object");
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0].contains(
        "more than 1048576 pointers have no name: the ones after are shown as numbers with no \
         row of their own (first: 0x7E7D0010)"
    ));
}

#[test]
fn a_time_beyond_the_tables_range_is_reported() {
    let mut g = Gen::new();
    // Gen's target info with 32-bit timestamps.
    g.rec(64, &[0xFF, 0xB6, 0x02, 0x22, 0x21, 0x22, 0x44, 0x04, 8, 0x21, 0, 0, 0, 1, 1, 24]);
    for t in [0xFFFF_FFF0u32, 5, 3] {
        g.rec(100, &t.to_le_bytes()); // the counter wraps twice
    }
    let r = run(&g.out, &QsOptions { tick_rate: Some(1), dic: None });
    let ts: Vec<&str> = r.events.iter().map(|e| e.split('|').next().unwrap()).collect();
    // (2^32 + 5) s, then (2^33 + 3) s: beyond 2^62 - 1 ns, kept at that.
    assert_eq!(
        ts,
        [
            "4294967280000000000",
            "4294967280000000000",
            "4294967301000000000",
            "4611686018427387903"
        ]
    );
    assert_eq!(
        diags_of(&r, "time_out_of_range"),
        ["byte 36: time 8589934595 ticks at 1 Hz = 8589934595000000000 ns (the timestamp wrapped \
          2 times so far) is beyond the tables' range (2^62 - 1, about 146 years in ns): the \
          record is kept at 4611686018427387903 at byte 36 (frame 4)"]
    );
}

#[test]
fn a_user_record_without_room_for_its_timestamp_reads_no_arguments() {
    let mut g = Gen::new();
    g.target_info();
    g.rec(100, &[0x05]); // 1 byte of a 2-byte timestamp (0x05 would be a U32 format byte)
    let r = run(&g.out, &QsOptions::default());
    assert_eq!(r.events[1], "0|USER_100|:|USER_100|-|None");
    assert_eq!(
        diags_of(&r, "truncated_record"),
        ["byte 20: user record 100 has no room for its 2-byte timestamp (payload: 05): no \
          arguments are read at byte 20 (frame 2)"]
    );
}
