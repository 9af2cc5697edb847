//! Tests of records read as QSPY reads them across QP releases: moved record numbers,
//! margins, rearms, target resets, the names of receivers.
use super::*;

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
