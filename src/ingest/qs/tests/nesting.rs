//! Tests of ISR nesting and critical sections: lost records, and what is open at the end.
use super::*;

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
