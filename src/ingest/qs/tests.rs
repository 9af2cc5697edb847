//! Importer tests on hand-built byte streams: every expected value below is worked out by
//! hand from the bytes written.
use super::frame::encode;
use super::*;
use crate::model::{Event, TimeUnit};

/// Events as `ts|source|type:target|action|note|value`.
struct Qs;

impl crate::ingest::test_sink::Shape for Qs {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{}|{}|{}:{}|{}|{}|{:?}",
            e.ts,
            e.source,
            e.target_type,
            e.target,
            e.action,
            e.note.unwrap_or("-"),
            e.value
        )
    }
}

type Rec = crate::ingest::test_sink::Recorder<Qs>;

/// Writes records as a QP 6.9.4 target with 16-bit timestamps would.
struct Gen {
    seq: u8,
    out: Vec<u8>,
}

impl Gen {
    fn new() -> Self {
        Gen { seq: 0, out: Vec::new() }
    }
    fn rec(&mut self, id: u8, payload: &[u8]) -> &mut Self {
        self.seq = self.seq.wrapping_add(1);
        let mut b = vec![self.seq, id];
        b.extend(payload);
        self.out.extend(encode(&b));
        self
    }
    fn target_info(&mut self) -> &mut Self {
        self.target_info_of(694)
    }
    fn target_info_of(&mut self, version: u16) -> &mut Self {
        // reset, QP `version`; sig 2 / evt 2, queue 1 / tevt 2, blk 2 / pool ctr 2, obj 4 /
        // fun 4, tstamp 2; max active 8, ...; built 24-01-01 00:00:00.
        let [lo, hi] = version.to_le_bytes();
        self.rec(64, &[0xFF, lo, hi, 0x22, 0x21, 0x22, 0x44, 0x02, 8, 0x21, 0, 0, 0, 1, 1, 24])
    }
}

const SM: [u8; 4] = 0x7E7D_0010u32.to_le_bytes();
const S_A: [u8; 4] = 0x2000_007Eu32.to_le_bytes();
const S_B: [u8; 4] = 0x2000_007Du32.to_le_bytes();
const SIG: [u8; 2] = 126u16.to_le_bytes();

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn stream() -> Vec<u8> {
    let mut g = Gen::new();
    g.target_info();
    g.rec(61, &cat(&[&SM, b"&sm\0"]));
    g.rec(62, &cat(&[&S_A, b"S_a\0"]));
    g.rec(62, &cat(&[&S_B, b"S_b\0"]));
    g.rec(60, &cat(&[&SIG, &[0, 0, 0, 0], b"SIG_7E\0"]));
    g.rec(4, &cat(&[&[0x7D, 0x00], &SM, &S_A])); // t=125: init to S_a
    g.rec(6, &cat(&[&[0xF0, 0xFF], &SIG, &SM, &S_A, &S_B])); // t=65520: S_a -> S_b
    g.rec(8, &cat(&[&[0x10, 0x00], &SIG, &SM, &S_B])); // t=16: wrapped, 65552
                                                       // A record whose checksum is wrong (seq 9), then seq 11: one record lost.
    let mut bad = encode(&[9, 8, 1, 2, 3]);
    bad[2] ^= 0x01;
    g.out.extend(bad);
    g.seq = 10;
    g.rec(41, &[0x20, 0x00, 1, 5]); // ISR prio 5 enters at 65568
    g.rec(41, &[0x30, 0x00, 2, 7]); // prio 7 nests at 65584
    g.rec(42, &[0x40, 0x00, 2, 7]); // and leaves at 65600
    g.rec(42, &[0x50, 0x00, 1, 5]); // prio 5 leaves at 65616
    g.rec(14, &cat(&[&[0x60, 0], &[0; 4], &SIG, &SM, &[0, 0, 5, 4]])); // post at 65632
    g.rec(17, &cat(&[&[0x70, 0], &SIG, &SM, &[0, 0]])); // got at 65648
    g.rec(14, &cat(&[&[0x80, 0], &[0; 4], &SIG, &SM, &[0, 0, 5, 4]])); // post at 65664, never got
    g.rec(8, &[0x88, 0, 126, 0]); // dispatch cut after its signal: t 65672
    g.rec(90, &[1, 2]); // reserved in 6.9
    g.rec(63, b"\x64MY_REC\0");
    g.rec(100, &[0x90, 0, 0x01, 7, 0x08, b'x', 0]); // MY_REC(U8 7, STR "x") at 65680
    g.rec(101, &[0xA0, 0, 0x02, 0xFE, 0xFF]); // USER_101(I16 -2) at 65696
    g.seq = 0;
    g.target_info(); // reset: the dictionaries start over
    g.rec(1, &cat(&[&SM, &S_A])); // names unknown now
    g.out
}

fn run(bytes: &[u8], opts: &QsOptions) -> Rec {
    let mut sink = Rec::default();
    read(bytes, "t.bin", opts, &Companion::default(), &mut sink).unwrap();
    sink
}

#[test]
fn decodes_a_generated_capture() {
    let r = run(&stream(), &QsOptions::default());
    assert_eq!(r.unit, Some(TimeUnit::Tick));
    let ev: Vec<&str> = r.events.iter().map(String::as_str).collect();
    // The records before the first timestamp take it (not 0: the capture would span back
    // to tick 0).
    let expected = [
        "125|QS|:|TARGET_INFO|QP-Ver=694,Build=240101_000000,Reset=1|None",
        "125|QS|:|OBJ_DICT|Ptr=0x7E7D0010,Name=sm|None",
        "125|QS|:|FUN_DICT|Ptr=0x2000007E,Name=S_a|None",
        "125|QS|:|FUN_DICT|Ptr=0x2000007D,Name=S_b|None",
        "125|QS|:|SIG_DICT|Sig=126,Obj=NULL,Name=SIG_7E|None",
        "125|sm|FUNC:S_a|QEP_INIT_TRAN|Obj=sm,State=S_a|None",
        "65520|sm|FUNC:S_b|QEP_TRAN|Sig=SIG_7E,Obj=sm,State=S_a->S_b|None",
        "65552|sm|QSIG:SIG_7E|QEP_DISPATCH|Sig=SIG_7E,Obj=sm,State=S_b|None",
        "65568|ISR|:|QF_ISR_ENTRY|Nest=1,Pri=5|Some(5.0)",
        "65584|ISR|:|QF_ISR_ENTRY|Nest=2,Pri=7|Some(7.0)",
        "65600|ISR|:|QF_ISR_EXIT|Nest=2,Pri=7|Some(7.0)",
        "65616|ISR|:|QF_ISR_EXIT|Nest=1,Pri=5|Some(5.0)",
        "65632|NULL|AO:sm|QF_ACTIVE_POST|Sdr=NULL,Sig=SIG_7E,Obj=sm,Pool=0,Ref=0,Free=5,Min=4|Some(5.0)",
        "65648|sm|QSIG:SIG_7E|QF_ACTIVE_GET_LAST|Sig=SIG_7E,Obj=sm,Pool=0,Ref=0|Some(0.0)",
        "65664|NULL|AO:sm|QF_ACTIVE_POST|Sdr=NULL,Sig=SIG_7E,Obj=sm,Pool=0,Ref=0,Free=5,Min=4|Some(5.0)",
        "65672|QF|QSIG:SIG_7E|QEP_DISPATCH|Sig=SIG_7E|None",
        "65672|QS|:|REC_90|Data=01 02|None",
        "65672|QS|:|USR_DICT|Rec=100,Name=MY_REC|None",
        "65680|MY_REC|:|MY_REC|7 x|Some(7.0)",
        "65696|USER_101|:|USER_101|-2|Some(-2.0)",
        "65696|QS|:|TARGET_INFO|QP-Ver=694,Build=240101_000000,Reset=1|None",
        "65696|0x7E7D0010|FUNC:0x2000007E|QEP_STATE_ENTRY|Obj=0x7E7D0010,State=0x2000007E|None",
    ];
    assert_eq!(ev, expected);
    // sm is an active object: a QF post names it (found before any row is written).
    assert!(r.decl.contains(&("sm".into(), Some("AO".into()), None)), "{:?}", r.decl);
    assert_eq!(
        r.spans,
        [
            "state sm S_a [125,65520)",
            "running ISR 5 [65568,65584)",
            "running ISR 7 [65584,65600)",
            "running ISR 5 [65600,65616)",
            "state sm S_b [65520,65696)",
        ]
    );
    assert_eq!(
        r.messages,
        [
            "NULL->sm tag 126 sent 65632 got Some(65648)",
            // The reset ends what was pending: never received.
            "NULL->sm tag 126 sent 65664 got None",
        ]
    );
    let kinds: Vec<&str> = r.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "unknown_tick_rate",
            "bad_checksum",
            "seq_gap",
            "truncated_record",
            "unknown_object",
            "unknown_object",
            "unknown_record",
            "time_wrapped",
        ]
    );
    let msg = |k: &str| r.diags.iter().find(|d| d.0 == k).map(|d| d.1.clone()).unwrap();
    assert!(
        msg("seq_gap").contains("sequence jumps from 8 to 11: 2 records lost"),
        "{}",
        msg("seq_gap")
    );
    assert!(msg("time_wrapped").contains("the 16-bit timestamp wrapped 1 times"));
    assert!(msg("unknown_record").contains("record ID 90"));
    assert!(msg("unknown_record").contains("1 records kept as REC_90"));
    let meta: std::collections::HashMap<_, _> = r.meta.iter().cloned().collect();
    assert_eq!(meta.get("qp_version").map(String::as_str), Some("6.9.4"));
    assert_eq!(
        meta.get("qs.sizes").map(String::as_str),
        Some("-T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2")
    );
    assert_eq!(meta.get("qs.target_resets").map(String::as_str), Some("2"));
}

#[test]
fn tick_rate_scales_exactly() {
    let r = run(&stream(), &QsOptions { tick_rate: Some(32_768), dic: None });
    assert_eq!(r.unit, Some(TimeUnit::Ns));
    // 125 ticks at 32768 Hz = 3814697.265625 ns, floored.
    assert!(r.events[5].starts_with("3814697|sm|"), "{}", r.events[5]);
    assert!(!r.diags.iter().any(|d| d.0 == "unknown_tick_rate"));
    assert_eq!(parse_tick_rate("1000000"), Ok(1_000_000));
    assert_eq!(parse_tick_rate("1MHz"), Ok(1_000_000));
    assert_eq!(parse_tick_rate("32768Hz"), Ok(32_768));
    assert_eq!(parse_tick_rate("10kHz"), Ok(10_000));
    assert_eq!(parse_tick_rate("1.5 MHz"), Ok(1_500_000));
    assert!(parse_tick_rate("0").is_err());
    assert!(parse_tick_rate("1.5Hz").is_err());
    assert!(parse_tick_rate("fast").is_err());
}

#[test]
fn without_sizes_the_file_is_refused_and_a_dic_gives_them() {
    // A QP 8 capture without target info.
    let mut g = Gen::new();
    g.rec(1, &cat(&[&SM, &S_A]));
    let mut sink = Rec::default();
    let e = read(&g.out[..], "x.bin", &QsOptions::default(), &Companion::default(), &mut sink)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("QS needs the target's sizes: no target-info record and no .dic beside it"),
        "{e}"
    );
    assert!(e.contains("x.dic"), "{e}");
    let comp = Companion {
        dic: Some(Dic::parse("-v800 -T2\nObj-Dic:\n4\n0x7E7D0010 Philo\n***\n")),
        ..Companion::default()
    };
    let mut sink = Rec::default();
    read(&g.out[..], "x.bin", &QsOptions::default(), &comp, &mut sink).unwrap();
    assert_eq!(
        sink.events,
        ["0|Philo|FUNC:0x2000007E|QEP_STATE_ENTRY|Obj=Philo,State=0x2000007E|None"]
    );
}

#[test]
fn sniffs_frames_not_text() {
    assert!(sniff(&stream()));
    assert!(!sniff(b"#version 2.1.0\n#timeScale ns\n0,Core_0,0,T,A,0,start\n"));
    assert!(!sniff(b"#Paraver (01/01/2024 at 00:00):100_ns:1(1):1:1(1:1)\n2:1:1:1:1:0:1:1\n"));
    // Random binary does not pass the checksums.
    let noise: Vec<u8> =
        (0u32..4096).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    assert!(!sniff(&noise));
}

#[test]
fn no_panic_on_any_truncation_or_flip() {
    let s = stream();
    for cut in 0..s.len() {
        let mut sink = Rec::default();
        let _ = read(&s[..cut], "t.bin", &QsOptions::default(), &Companion::default(), &mut sink);
    }
    for i in 0..s.len() {
        let mut b = s.clone();
        b[i] ^= 0x5A;
        let mut sink = Rec::default();
        let _ = read(&b[..], "t.bin", &QsOptions::default(), &Companion::default(), &mut sink);
    }
}

/// ISR records `(entry, t, nest, pri)` after a target info, and the `running` spans they give.
fn isr_run(recs: &[(bool, u8, u8, u8)]) -> Rec {
    let mut g = Gen::new();
    g.target_info();
    for &(entry, t, nest, pri) in recs {
        g.rec(if entry { 41 } else { 42 }, &[t, 0, nest, pri]);
    }
    run(&g.out, &QsOptions::default())
}

#[test]
fn isr_nesting_survives_lost_records() {
    // Priority 2's exit is lost: 3 enters at its nesting. Priority 1 resumes at 3's exit.
    let r = isr_run(&[
        (true, 10, 1, 1),
        (true, 20, 2, 2),
        (true, 30, 2, 3),
        (false, 40, 2, 3),
        (false, 50, 1, 1),
    ]);
    assert_eq!(
        r.spans,
        [
            "running ISR 1 [10,20)",
            "running ISR 2 [20,30)",
            "running ISR 3 [30,40)",
            "running ISR 1 [40,50)",
        ]
    );
    let kinds: Vec<&str> = r.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["unknown_tick_rate", "lost_isr_exit"]);
    assert!(r.diags[1].1.contains("ISR of priority 2 entered at nesting 2 has no exit"));
    // An entry at nesting 2 with nothing open below it, then its exit; an exit with no
    // entry; an entry at nesting 1 whose exit is lost, ended by the next one at nesting 1;
    // an exit at nesting 1 that ends the ISRs above it.
    let r = isr_run(&[
        (true, 140, 2, 9),
        (false, 150, 2, 9),
        (false, 155, 1, 1),
        (true, 160, 1, 4),
        (true, 170, 1, 5),
        (true, 180, 3, 6),
        (false, 190, 1, 5),
        (false, 200, 1, 5),
    ]);
    assert_eq!(
        r.spans,
        [
            "running ISR 9 [140,150)",
            "running ISR 4 [160,170)",
            "running ISR 5 [170,180)",
            "running ISR 6 [180,190)",
        ]
    );
    let kinds: Vec<&str> = r.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(
        kinds,
        ["unknown_tick_rate", "lost_isr_entry", "lost_isr_exit", "lost_isr_exit", "lost_isr_entry"]
    );
}

#[test]
fn isr_and_critical_section_open_at_the_end_stay_open() {
    let mut g = Gen::new();
    g.target_info();
    g.rec(41, &[10, 0, 1, 3]); // ISR prio 3 enters at 10
    g.rec(39, &[20, 0, 1]); // critical section from 20
    g.rec(100, &[30, 0]); // a user record: the capture ends at 30
    let r = run(&g.out, &QsOptions::default());
    assert_eq!(r.spans, ["running ISR 3 [10,open)", "critical QF critical [20,open)"]);
}

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

fn diags_of<'a>(r: &'a Rec, kind: &str) -> Vec<&'a str> {
    r.diags.iter().filter(|d| d.0 == kind).map(|d| d.1.as_str()).collect()
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

#[test]
fn a_target_info_with_unusable_sizes_is_reported_and_ignored() {
    let mut g = Gen::new();
    g.target_info();
    g.rec(100, &[7, 0]);
    g.rec(64, &[0x00, 0xB6, 0x02, 0, 0, 0, 0, 0, 8, 0x21, 0, 0, 0, 1, 1, 24]); // all sizes 0
    g.rec(100, &[9, 0]); // still read with 2-byte timestamps
    let r = run(&g.out, &QsOptions::default());
    assert_eq!(r.events[3], "9|USER_100|:|USER_100|-|None");
    assert_eq!(
        diags_of(&r, "bad_target_info"),
        ["byte 26: target info with unusable object pointer size 0 (expected 1, 2 or 4 or 8): \
          the configuration in use (QP 6.9.4 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2) is kept at \
          byte 26 (frame 3)"]
    );
}

/// The records whose layout changed between QP releases, written as a target of QP
/// `version` writes them (`-T2 -O4 -S2`), and the `action|note` of each.
fn moved_records(version: u16) -> Vec<String> {
    let (ao, q) = (0x2000_0100u32.to_le_bytes(), 0x2000_0200u32.to_le_bytes());
    let mut g = Gen::new();
    g.target_info_of(version);
    g.rec(61, &cat(&[&ao, b"ao\0"]));
    g.rec(61, &cat(&[&q, b"q\0"]));
    // ACTIVE_DEFER and ACTIVE_RECALL: t, AO, queue, signal 7, pool 1, ref.
    g.rec(10, &cat(&[&[10, 0], &ao, &q, &[7, 0, 1, 2]]));
    g.rec(11, &cat(&[&[11, 0], &ao, &q, &[7, 0, 1, 1]]));
    // ACTIVE_RECALL_ATTEMPT: t, AO, queue.
    g.rec(18, &cat(&[&[12, 0], &ao, &q]));
    // QF_NEW_ATTEMPT: t, event size 6, signal 7.
    g.rec(23, &[13, 0, 6, 0, 7, 0]);
    // QF_NEW_REF and QF_DELETE_REF: t, signal 7, pool 1, ref.
    g.rec(27, &[14, 0, 7, 0, 1, 2]);
    g.rec(38, &[15, 0, 7, 0, 1, 1]);
    // 48: MUTEX_LOCK (t, prio, ceiling) before QP 7.1, SCHED_PREEMPT (t, new, prev) since.
    g.rec(48, &[16, 0, 3, 4]);
    // SCHED_LOCK: t, the ceiling before, the ceiling after.
    g.rec(50, &[17, 0, 0, 5]);
    // 54: SCHED_RESUME (t, resumed prio, prio before) before QP 7.
    g.rec(54, &[18, 0, 2, 1]);
    let r = run(&g.out, &QsOptions::default());
    r.events
        .iter()
        .skip(3)
        .map(|e| e.split('|').skip(3).take(2).collect::<Vec<_>>().join("|"))
        .collect()
}

#[test]
fn records_moved_between_qp_releases_decode_as_qspy_decodes_them() {
    // QP 6.2 to 6.5 (qpc 6.3.6 qs.h; QSPY decodes 10, 11, 18 and 38 the new way from
    // 6.2.0): deferred events, not ACTIVE_ADD/REMOVE, EQUEUE_INIT and TIMEEVT_CTR; 23 is
    // still reserved and 54 is SCHED_RESUME.
    assert_eq!(
        moved_records(636),
        [
            "QF_ACTIVE_DEFER|Obj=ao,Que=q,Sig=00000007,Pool=1,Ref=2",
            "QF_ACTIVE_RECALL|Obj=ao,Que=q,Sig=00000007,Pool=1,Ref=1",
            "QF_ACTIVE_RECALL_ATTEMPT|Obj=ao,Que=q",
            "REC_23|Data=0D 00 06 00 07 00",
            "QF_NEW_REF|Sig=00000007,Pool=1,Ref=2",
            "QF_DELETE_REF|Sig=00000007,Pool=1,Ref=1",
            "MUTEX_LOCK|Pro=3,Ceil=4",
            "SCHED_LOCK|Ceil=0->5",
            "SCHED_RESUME|Pri=2,Prev=1",
        ]
    );
    // Before 6.2 the old meanings.
    let old = moved_records(610);
    assert_eq!(old.first().map(String::as_str), Some("QF_ACTIVE_ADD|Obj=ao,Pri=0"));
    // QP 6.9 (qpc 6.9.2 qs.h): 23 is QF_NEW_ATTEMPT.
    assert_eq!(
        moved_records(694).get(3).map(String::as_str),
        Some("QF_NEW_ATTEMPT|Size=6,Sig=00000007")
    );
    // QSPY 7.2 reads 48 as MUTEX_LOCK before QP 7.1.0, SCHED_PREEMPT from it.
    assert_eq!(moved_records(700).get(6).map(String::as_str), Some("MUTEX_LOCK|Pro=3,Ceil=4"));
    assert_eq!(moved_records(734).get(6).map(String::as_str), Some("SCHED_PREEMPT|Pri=3,Prev=4"));
}

#[test]
fn attempts_carry_the_margin_asked_for_not_the_minimum() {
    // QSPY prints the last counter of the _ATTEMPT records as `Mar=` (the margin the
    // poster asked for), of the plain records as `Min=` (the fewest free entries so far).
    let (ao, pool) = (0x2000_0100u32.to_le_bytes(), 0x2000_0300u32.to_le_bytes());
    let mut g = Gen::new();
    g.target_info();
    g.rec(61, &cat(&[&ao, b"ao\0"]));
    g.rec(61, &cat(&[&pool, b"pool\0"]));
    // ACTIVE_POST_ATTEMPT: t, sender 0, signal 7, AO, pool 1, ref 0, free 2, margin 3.
    g.rec(45, &cat(&[&[10, 0], &[0; 4], &[7, 0], &ao, &[1, 0, 2, 3]]));
    // EQUEUE_POST_ATTEMPT: t, signal 7, queue, pool 1, ref 0, free 2, margin 3.
    g.rec(46, &cat(&[&[11, 0], &[7, 0], &ao, &[1, 0, 2, 3]]));
    // MPOOL_GET_ATTEMPT: t, pool, free 1 (2 bytes), margin 4 (2 bytes).
    g.rec(47, &cat(&[&[12, 0], &pool, &[1, 0, 4, 0]]));
    // MPOOL_GET: t, pool, free 1, minimum 0.
    g.rec(24, &cat(&[&[13, 0], &pool, &[1, 0, 0, 0]]));
    let r = run(&g.out, &QsOptions::default());
    let notes: Vec<String> = r
        .events
        .iter()
        .skip(3)
        .map(|e| e.split('|').skip(3).take(2).collect::<Vec<_>>().join("|"))
        .collect();
    assert_eq!(
        notes,
        [
            "QF_ACTIVE_POST_ATTEMPT|Sdr=NULL,Sig=00000007,Obj=ao,Pool=1,Ref=0,Free=2,Mar=3",
            "QF_EQUEUE_POST_ATTEMPT|Sig=00000007,Obj=ao,Pool=1,Ref=0,Free=2,Mar=3",
            "QF_MPOOL_GET_ATTEMPT|Obj=pool,Free=1,Mar=4",
            "QF_MPOOL_GET|Obj=pool,Free=1,Min=0",
        ]
    );
}

#[test]
fn a_counter_that_starts_over_at_a_target_reset_is_not_a_wrap() {
    let user_times = |g: &Gen| {
        let r = run(&g.out, &QsOptions::default());
        let ts: Vec<String> = r
            .events
            .iter()
            .filter(|e| e.contains("|USER_100|"))
            .map(|e| e.split('|').next().unwrap().to_string())
            .collect();
        (ts, r)
    };
    let mut g = Gen::new();
    g.target_info();
    g.rec(100, &50_000u16.to_le_bytes());
    g.seq = 0;
    g.target_info(); // the target resets: its counter starts over
    g.rec(100, &20u16.to_le_bytes());
    g.rec(100, &30u16.to_le_bytes());
    g.rec(100, &10u16.to_le_bytes()); // a real wrap later on
    let (ts, r) = user_times(&g);
    assert_eq!(ts, ["50000", "50020", "50030", "115546"]);
    assert_eq!(
        diags_of(&r, "time_restarted"),
        ["byte 46: after the target reset the timestamp started over (20 ticks, the last before \
          it 50000): times go on from the last time seen at byte 46 (frame 4)"]
    );
    assert_eq!(diags_of(&r, "time_wrapped").len(), 1, "{:?}", r.diags);
    // A reset whose counter runs on (a free-running timer) changes nothing.
    let mut g = Gen::new();
    g.target_info();
    g.rec(100, &50_000u16.to_le_bytes());
    g.seq = 0;
    g.target_info();
    g.rec(100, &50_100u16.to_le_bytes());
    let (ts, r) = user_times(&g);
    assert_eq!(ts, ["50000", "50100"]);
    assert!(diags_of(&r, "time_restarted").is_empty() && diags_of(&r, "time_wrapped").is_empty());
}

#[test]
fn a_dic_of_another_build_or_other_sizes_is_not_used() {
    let mut g = Gen::new();
    g.target_info(); // built 240101_000000, sizes -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2
    g.rec(1, &cat(&[&SM, &S_A]));
    let entry = |opts: &str| {
        let comp = Companion {
            dic: Some(Dic::parse(&format!("{opts}\nObj-Dic:\n4\n0x7E7D0010 Philo\n***\n"))),
            ..Companion::default()
        };
        let mut sink = Rec::default();
        read(&g.out[..], "x.bin", &QsOptions::default(), &comp, &mut sink).unwrap();
        let entry = sink.events.iter().find(|e| e.contains("STATE_ENTRY")).cloned().unwrap();
        (entry, diags_of(&sink, "dic_mismatch").into_iter().map(String::from).collect::<Vec<_>>())
    };
    let same = "-v694 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2 -t240101_000000";
    let (e, d) = entry(same);
    assert!(e.starts_with("0|Philo|"), "{e}");
    assert!(d.is_empty(), "{d:?}");
    let (e, d) = entry("-v694 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2 -t240202_101010");
    assert!(e.starts_with("0|0x7E7D0010|"), "{e}");
    assert_eq!(
        d,
        [": the .dic is for another target (build 240202_101010, the target's is 240101_000000): \
          its dictionaries are not used; the target's own dictionary records name what they name"]
    );
    let (e, d) = entry("-v694 -T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2");
    assert!(e.starts_with("0|0x7E7D0010|"), "{e}");
    assert!(d[0].contains("(sizes -T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2, the target's are -T2"));
}

#[test]
fn a_rearm_carries_the_tick_rate_before_the_armed_flag() {
    // qpc's QTimeEvt_rearm writes `QS_2U8_PRE_(tickRate, wasArmed)` (QP 5 to 7: rate
    // first), as QSPY 8 reads it; QP 4 had no tick rate, only the flag.
    let (ao, te) = (0x2000_0100u32.to_le_bytes(), 0x2000_0200u32.to_le_bytes());
    let mut g = Gen::new();
    g.target_info();
    g.rec(61, &cat(&[&ao, b"ao\0"]));
    g.rec(61, &cat(&[&te, b"te\0"]));
    // QF_TIMEEVT_REARM: t, time event, AO, 5 ticks, interval 0, tick rate 2, was armed 1.
    g.rec(36, &cat(&[&[10, 0], &te, &ao, &[5, 0, 0, 0], &[2, 1]]));
    // A target that leaves the rate out (as the QP 5 sample does in its tick records):
    // the one byte left is the flag.
    g.rec(36, &cat(&[&[11, 0], &te, &ao, &[5, 0, 0, 0], &[1]]));
    let r = run(&g.out, &QsOptions::default());
    let notes: Vec<&str> = r.events.iter().skip(3).filter_map(|e| e.split('|').nth(4)).collect();
    assert_eq!(
        notes,
        ["Obj=te,AO=ao,Tim=5,Int=0,Rate=2,Was=1", "Obj=te,AO=ao,Tim=5,Int=0,Was=1"],
        "{:?}",
        r.events
    );
    assert!(!r.kinds().contains(&"truncated_record"), "{:?}", r.diags);
}

#[test]
fn a_qp5_reset_starts_the_sequence_over_without_a_gap() {
    // QP 5.0 to 5.4: record 0 is QS_QP_RESET, the target's reset (QSPY 7 shows it as
    // `Trg-RST`); the target numbers its records from 1 again, so the jump is no loss.
    let comp =
        Companion { dic: Some(Dic::parse("-v540 -T2 -O4 -F4 -S2\n")), ..Companion::default() };
    let mut g = Gen::new();
    g.seq = 40;
    g.rec(1, &cat(&[&SM, &S_A])); // seq 41
    g.rec(1, &cat(&[&SM, &S_A])); // seq 42
    g.seq = 0;
    g.rec(0, &[]); // the reset, seq 1
    g.rec(1, &cat(&[&SM, &S_A])); // seq 2
    g.seq = 5;
    g.rec(1, &cat(&[&SM, &S_A])); // seq 6: 3 records lost
    let mut sink = Rec::default();
    read(&g.out[..], "x.bin", &QsOptions::default(), &comp, &mut sink).unwrap();
    let gaps: Vec<&str> =
        sink.diags.iter().filter(|d| d.0 == "seq_gap").map(|d| d.1.as_str()).collect();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert!(gaps.iter().all(|g| g.contains("from 2 to 6")), "{gaps:?}");
}

#[test]
fn a_message_names_its_receiver_as_its_post_does() {
    // An active object named only after the posts to it: each message names its receiver
    // as the post's events row does (as it names the sender), not as the dictionary does
    // when the message is written (at the get, a reset or the end of the capture).
    let ao = 0x2000_0100u32.to_le_bytes();
    let mut g = Gen::new();
    g.target_info();
    g.rec(14, &cat(&[&[1, 0], &ao, &SIG, &ao, &[0, 0, 5, 4]])); // never got
    g.rec(14, &cat(&[&[2, 0], &ao, &SIG, &ao, &[0, 0, 5, 4]])); // got at 3
    g.rec(61, &cat(&[&ao, b"late\0"]));
    g.rec(16, &cat(&[&[3, 0], &SIG, &ao, &[0, 0, 5]]));
    g.rec(14, &cat(&[&[4, 0], &ao, &SIG, &ao, &[0, 0, 5, 4]])); // never got, named
    let r = run(&g.out, &QsOptions::default());
    let mut m = r.messages.clone();
    m.sort();
    assert_eq!(
        m,
        [
            "0x20000100->0x20000100 tag 126 sent 1 got Some(3)",
            "0x20000100->0x20000100 tag 126 sent 2 got None",
            "late->late tag 126 sent 4 got None",
        ],
        "{:?}",
        r.events
    );
}
