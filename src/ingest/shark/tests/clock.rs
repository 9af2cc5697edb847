//! Tests of time: file order at equal times, the cycle rate (given, from trace_start, or
//! none), and the windows records are sorted in.
use super::*;

#[test]
fn equal_times_keep_file_order() {
    let mut b = Vec::new();
    for p in [5u16, 1, 3] {
        b.extend(rec(0x01, p, 7, 0));
    }
    let o = ingest_ns(&b);
    let ipoints: Vec<&str> = o.events.iter().map(|e| e.split(" | ").nth(1).unwrap()).collect();
    assert_eq!(ipoints, ["par1=5 par2=0", "par1=1 par2=0", "par1=3 par2=0"]);
    assert!(o.meta.contains(&("shark.tick_rate_hz".into(), "1000000000".into())));
}

#[test]
fn without_a_rate_times_are_cycles_and_that_is_said() {
    let o = ingest(&rec(0x20, 0, (1 << 32) + 5, 0), &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Tick));
    assert!(o.events[0].starts_with("4294967301 "), "{:?}", o.events);
    assert_eq!(kinds(&o), ["unknown_cycle_rate"]);
}

#[test]
fn the_cycle_rate_scales_exactly_with_no_overflow() {
    // 2^64 - 1 cycles at 3,000,000 cycles/ms: (2^64 - 1) / 3 ns, past 2^62: clamped.
    let mut b = rec(0x10, 0, 0, 3_000_000);
    b.extend(rec(0x20, 0, 3_000_000_001, 0));
    b.extend(rec(0x30, 0, u64::MAX, 0));
    let o = ingest(&b, &SharkOptions { tick_rate: Some(5), ..Default::default() });
    // 3,000,000,001 * 10^6 / 3 * 10^6 = 1,000,000,000.33 ns, floored.
    assert!(o.events[1].starts_with("1000000000 "), "{:?}", o.events);
    assert!(o.events[2].starts_with(&format!("{} ", (1i64 << 62) - 1)), "{:?}", o.events);
    assert_eq!(kinds(&o), ["tick_rate_ignored", "time_out_of_range"]);
}

/// The kernel's demos start the tracer with `TRACER_LOGEVENT(FTrace_EVT_trace_start,
/// ctx, clk_per_msec)` and log `cycles_per_msec` only when the CPU frequency changes (DVS):
/// a log with no `cycles_per_msec` still has its rate, in its `trace_start`.
#[test]
fn the_rate_of_trace_start_scales_a_log_with_no_cycles_per_msec() {
    let mut b = rec(0x20, 5, 1_000, 2_000); // 2,000 cycles per ms: a cycle is 500 ns
    b.extend(rec(0x01, 1, 3_000, 0));
    b.extend(rec(0x10, 0, 5_000, 4_000)); // the frequency doubles later: said, not used
    let o = ingest(&b, &SharkOptions { tick_rate: Some(7), ..Default::default() });
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert!(o.events[0].starts_with("500000 "), "{:?}", o.events);
    assert!(o.events[1].starts_with("1500000 "), "{:?}", o.events);
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "2000".into())), "{:?}", o.meta);
    assert_eq!(kinds(&o), ["tick_rate_ignored", "cycle_rate_changed"]);
    // A trace_start whose par2 is 0 (FTrace.h's comment: empty) or stale gives no rate.
    let mut b = rec(0x20, 5, 1_000, 0);
    b.extend(rec(0x8020, 5, 2_000, 2_000));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Tick));
    assert_eq!(kinds(&o), ["unknown_cycle_rate"]);
}

/// Ingests `recs` written to a file (so the pre-pass can read it again), sorting `cap`
/// records together.
fn ingest_windows(recs: &[Vec<u8>], cap: usize) -> Out {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("trace.dat");
    std::fs::write(&p, recs.concat()).unwrap();
    let mut out = Out::default();
    let f = std::fs::File::open(&p).unwrap();
    read_capped(f, &p, "trace.dat", &SharkOptions::default(), &mut out, cap).unwrap();
    out
}

#[test]
fn an_epilogue_at_a_window_border_sees_the_dispatch_after_it() {
    // cap 16: the epilogue is the 16th record, the last of the first window (which maps 8
    // and carries 8 to the next), its own dispatch the first of the next.
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000), rec(0x12, 1, 10, 0), rec(0x22, 1, 20, 0)];
    recs.extend((0..12).map(|k| rec(0x01, 9, 30 + k, 0)));
    recs.push(rec(0x32, 1, 70, 0));
    recs.push(rec(0x22, 1, 80, 0)); // its own dispatch: the kernel ran and gave it back
    recs.extend((0..20).map(|k| rec(0x01, 9, 100 + k, 0)));
    recs.push(rec(0x62, 1, 200, 0));
    let o = ingest_windows(&recs, 16);
    assert!(kinds(&o).contains(&"too_many_records"));
    let moves: Vec<&String> = o.events.iter().filter(|e| e.contains(" T:ctx_1#")).collect();
    assert_eq!(moves.len(), 3, "{moves:#?}");
    assert!(moves[0].contains("activate") && moves[1].contains("start"), "{moves:#?}");
    assert!(moves[2].starts_with("200 ") && moves[2].contains("terminate"), "{moves:#?}");
}

#[test]
fn a_later_window_gives_its_pid_and_cycle_rate_to_the_first() {
    // The pid and the rate are logged once the first window (8 records) was mapped.
    let mut recs = vec![rec(0x12, 1, 10, 0), rec(0x22, 1, 20, 0)];
    recs.extend((0..20).map(|k| rec(0x01, 9, 30 + k, 0)));
    recs.push(rec(0x60, 1, 300, 11));
    recs.push(rec(0x10, 0, 310, 2_000_000));
    recs.push(rec(0x62, 1, 400, 0));
    let o = ingest_windows(&recs, 16);
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert!(!kinds(&o).contains(&"unknown_cycle_rate"), "{:?}", o.diags);
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "2000000".into())));
    assert!(o.events.iter().all(|e| !e.contains("ctx_1")), "{:#?}", o.events);
    // 2,000,000 cycles per ms: ns = cycles / 2.
    assert!(
        o.events.contains(&"5 Core_0#-1 T:task_11#0 activate | task_activate par1=1 par2=0".into()),
        "{:#?}",
        o.events
    );
    assert!(o.events.iter().any(|e| e.starts_with("200 Core_0#-1 T:task_11#0 terminate")));
}
