//! Tests of whole captures: a generated capture decoded, the tick rate, sniffing frames,
//! and no panic on any truncation or flipped byte.
use super::*;

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
