//! Tests of the bounds on untrusted dumps: entities, interrupt nesting, tasks named by pid,
//! and mutated dumps that must never panic.
use super::*;

#[test]
fn entities_and_interrupt_nesting_are_bounded() {
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000), rec(0x12, 1, 1, 0), rec(0x22, 1, 2, 0)];
    let n = u32::try_from(mapper::MAX_ENTITIES).unwrap() + 2;
    recs.extend((0..n).map(|m| rec(0x16, 1, 10 + u64::from(m), m)));
    let nest = mapper::MAX_NESTING + 1;
    recs.extend((0..nest).map(|k| rec(0x03, 3, 1_000_000 + k as u64, 0)));
    let o = ingest(&recs.concat(), &SharkOptions::default());
    let too_many = kinds(&o).iter().filter(|k| **k == "too_many_entities").count();
    assert_eq!(too_many, 2, "the last two mutexes");
    let sems = o.decl.iter().filter(|(_, t, _)| t.as_deref() == Some("SEM")).count();
    assert_eq!(sems, mapper::MAX_ENTITIES);
    let last = format!("mutex_lock | par1=1 par2={}", n - 1);
    assert!(
        o.events.iter().any(|e| e.contains("ctx_1#0 - ") && e.ends_with(&last)),
        "{:?}",
        o.events.iter().filter(|e| e.ends_with(&last)).collect::<Vec<_>>()
    );
    assert_eq!(kinds(&o).iter().filter(|k| **k == "interrupt_nesting_too_deep").count(), 1);
    let starts =
        o.events.iter().filter(|e| e.contains("I:IRQ3#") && e.contains(" start |")).count();
    assert_eq!(starts, mapper::MAX_NESTING);
}

#[test]
fn tasks_named_by_pid_are_bounded() {
    // One context re-identified with ever new pids: beyond the cap it stays ctx_1.
    let n = u32::try_from(mapper::MAX_ENTITIES).unwrap() + 1;
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000)];
    for k in 0..n {
        let t = 10 + 2 * u64::from(k);
        recs.push(rec(0x60, 1, t, 100 + k));
        recs.push(rec(0x12, 1, t + 1, 0));
    }
    let o = ingest(&recs.concat(), &SharkOptions::default());
    assert_eq!(kinds(&o).iter().filter(|k| **k == "too_many_entities").count(), 1);
    let tasks = o.decl.iter().filter(|(d, _, _)| d.starts_with("task_")).count();
    assert_eq!(tasks, mapper::MAX_ENTITIES);
    assert!(
        o.events.last().is_some_and(|e| e.contains("T:ctx_1#0 activate")),
        "{:?}",
        o.events.last()
    );
}

/// Untrusted dumps never panic: a run with tasks, mutexes, interrupts, servers, user events
/// and a wrapped (out of order) stretch, cut at every byte and with every byte changed, ends
/// in Ok or Err.
#[test]
fn mutated_dumps_never_panic() {
    let recs: &[(u16, u16, u64, u32)] = &[
        (0x10, 0, 10, 1_000),
        (0x20, 0, 20, 0),
        (0x02, 1, 30, 101),
        (0x02, 2, 40, 102),
        (0x60, 3, 45, 103),
        (0x12, 1, 50, 0),
        (0x22, 1, 60, 0),
        (0x82, 1, 65, 1),
        (0x16, 1, 70, 5),
        (0x12, 2, 80, 0),
        (0x15, 2, 90, 0),
        (0x46, 2, 95, 5),
        (0x82, 1, 96, 2),
        (0x56, 1, 97, 5),
        (0x16, 2, 98, 5),
        (0x92, 2, 99, 0),
        (0x03, 14, 100, 0),
        (0x13, 14, 110, 0),
        (0x36, 1, 120, 5),
        (0x62, 1, 130, 0),
        (0x22, 2, 140, 0),
        (0x08, 7, 150, 2),
        (0x28, 7, 160, 2),
        (0xB2, 2, 170, 0),
        (0x09, 2, 180, 42),
        (0x42, 2, 190, 102),
        (0x30, 0, 200, 0),
        // A cyclic chunk's older records after the newer ones.
        (0x12, 3, 25, 0),
        (0x8022, 3, 26, 0),
    ];
    let mut bytes = Vec::new();
    for &(ty, p1, tsc, p2) in recs {
        bytes.extend(rec(ty, p1, tsc, p2));
    }
    let opts = SharkOptions { tick_rate: Some(1_000_000), ..Default::default() };
    let go = |b: &[u8]| {
        let mut out = Out::default();
        read(b, Path::new("trace.dat"), "trace.dat", &opts, &mut out).map(|_| out)
    };
    let whole = go(&bytes).unwrap();
    assert!(whole.events.len() >= recs.len(), "{:#?}", whole.events);
    let mut runs = 0;
    for cut in 0..bytes.len() {
        let _ = go(&bytes[..cut]);
        runs += 1;
    }
    for i in 0..bytes.len() {
        for x in [0x5A, 0xFF, 0x80, 0x01] {
            let mut m = bytes.clone();
            m[i] ^= x;
            let _ = go(&m);
            runs += 1;
        }
    }
    assert!(runs > 1500, "{runs} runs");
}
