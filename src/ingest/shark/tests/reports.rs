//! Tests of what is reported rather than mapped: blackouts, cli/sti, numevents, unknown
//! codes, filtered families.
use super::*;

#[test]
fn blackouts_cli_sti_numevents_and_unknown_codes_are_reported() {
    let mut b = rec(0x24, 0, 10, 0);
    b.extend(rec(0x34, 0, 14, 0));
    b.extend(rec(0x40, 0, 20, 0));
    b.extend(rec(0x50, 0, 25, 0));
    b.extend(rec(0x0C, 0, 26, 0));
    b.extend(rec(0x70, 0, 27, 99));
    b.extend(rec(0x24, 0, 30, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        o.spans,
        ["interrupts Core_0 disabled [10,14)", "interrupts Core_0 disabled [30,open)"]
    );
    assert_eq!(o.events.len(), 7, "every record is a row, the unknown one too");
    assert!(o.events[4].starts_with("26 Core_0#-1 - code_0x0C"));
    assert_eq!(kinds(&o), ["blackout", "unknown_code", "numevents_mismatch"]);
    assert!(o.diags[0].1.contains("blackout from 20 to 25 (5 ns)"), "{:?}", o.diags);
    assert!(o.diags[2].1.contains("numevents says 99 events, but 7 were read"), "{:?}", o.diags);
}

/// FTrace_set_filter(filter, status) logs the filter code with par1 = status; while a
/// family's bit is set, FTrace_safe_ipoint returns before writing any of its records (the
/// filter family itself is never filtered). The span with no records of the family is
/// named, as the kernel's demo does it (timer family on, then off) and left open.
#[test]
fn a_filtered_family_is_reported_for_the_span_it_was_not_logged() {
    let mut b = rec(0xFB, 1, 10, 0);
    b.extend(rec(0x20, 0, 12, 0));
    // Enabled twice: the span starts at the first.
    b.extend(rec(0xFB, 1, 14, 0));
    b.extend(rec(0xFB, 0, 50, 0));
    // Disabling a filter that was not on changes nothing in the kernel's mask.
    b.extend(rec(0xF3, 0, 55, 0));
    b.extend(rec(0xF2, 1, 60, 0));
    b.extend(rec(0x01, 7, 70, 0));
    let o = ingest_ns(&b);
    assert_eq!(o.events.len(), 7, "every record is a row");
    assert!(o.events[0].starts_with("10 Core_0#-1 - filter_11"), "{:?}", o.events);
    assert_eq!(kinds(&o), ["filtered_family", "filtered_family"], "{:?}", o.diags);
    assert!(
        o.diags[0].1.contains("timer events (family 0xB) were not logged from 10 to 50 (40 ns)"),
        "{:?}",
        o.diags
    );
    assert!(
        o.diags[1].1.contains("task events (family 0x2) were not logged from 60 to the end"),
        "{:?}",
        o.diags
    );
}
