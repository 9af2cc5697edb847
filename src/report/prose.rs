//! How the report's figures and notes read: durations for people ([`human_ns`]), changes
//! against a baseline ([`change_text`]), cells of an analysis row ([`num`], [`text`]), and the
//! notes on what a table left out.
use super::*;

/// What the semaphore table's statistics leave out, one sentence per column that left out
/// something, `SEM_A 2, SEM_B 1` per semaphore (`semaphore_contention.waits_left_out` and
/// `holds_left_out`); empty when nothing was.
pub fn semaphores_left_out(rows: &[Row]) -> Vec<String> {
    let list = |col: &str| {
        let items: Vec<String> = rows
            .iter()
            .filter(|r| num(r, col).is_some_and(|n| n > 0.0))
            .map(|r| format!("{} {}", text(r, "semaphore"), text(r, col)))
            .collect();
        items.join(", ")
    };
    let mut said = Vec::new();
    let waits = list("waits_left_out");
    if !waits.is_empty() {
        said.push(format!(
            "Not in the wait columns: requests the capture does not show served (still waiting at its end, given up, or asked before it began): {waits}."
        ));
    }
    let holds = list("holds_left_out");
    if !holds.is_empty() {
        said.push(format!("Not in hold max: holds still held at the end of the capture: {holds}."));
    }
    said
}

/// The sentence under a deadline-miss table with instances that had not terminated when
/// the capture ended (their response time and lateness are blank); None when there are none.
pub fn unfinished_misses_note(shown: &[Row]) -> Option<String> {
    let n = shown
        .iter()
        .filter(|r| num(r, "terminate_ts").is_none() && num(r, "activate_ts").is_some())
        .count();
    (n > 0).then(|| {
        format!(
            "{n} of them had not terminated when the capture ended, past their deadline: their \
             response time and lateness are blank."
        )
    })
}

/// The sentence under the task table when its statistics left instances out (DESIGN.md:
/// statistics use complete instances and say how many were left out); None when none were.
pub fn tasks_left_out_note(tasks: &[TaskRow]) -> Option<String> {
    let left: f64 = tasks.iter().filter_map(|t| t.instances_left_out).sum();
    if left <= 0.0 {
        return None;
    }
    let none = tasks
        .iter()
        .filter(|t| t.instances.unwrap_or(0.0) == 0.0 && t.instances_left_out.unwrap_or(0.0) > 0.0)
        .count();
    let whole = if none == tasks.len() {
        format!(
            " None of the {none} tasks and ISRs has a complete instance (a trace that logs no \
             activate or terminate, such as an RTOS logger's endless task loops): their response \
             and execution figures are blank."
        )
    } else if none > 0 {
        format!(
            " {none} of the {} tasks and ISRs {} no complete instance (a trace that logs no \
             activate or terminate for them, such as an RTOS logger's endless task loops): their \
             response and execution figures are blank.",
            tasks.len(),
            if none == 1 { "has" } else { "have" }
        )
    } else {
        String::new()
    };
    Some(format!(
        "Response times, execution times, blocking and preemptions are over complete instances \
         only; `left out` counts the others ({left} in all: activate or terminate outside the \
         capture, or resynchronised after a diagnostic).{whole} CPU time counts every instance."
    ))
}

/// The number in column `col` of `row` (None for NULL or missing).
pub fn num(row: &Row, col: &str) -> Option<f64> {
    row.get(col).and_then(Value::as_f64)
}

/// The text in column `col` of `row` (numbers written out, NULL as empty).
pub fn text(row: &Row, col: &str) -> String {
    match row.get(col) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// A duration in ns written for people: `812 ns`, `37.3 us`, `2.41 ms`, `1.20 s`.
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A task figure written for people (durations in units, counts as integers, NULL as `-`).
pub fn human(v: Option<f64>, duration: bool) -> String {
    match v {
        None => "-".into(),
        Some(x) if duration => human_ns(x),
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x}"),
    }
}

/// `+12.3%` (or `new` when the baseline is 0 and the value is not).
pub fn change_text(base: Option<f64>, cur: Option<f64>) -> String {
    match (base, cur) {
        (Some(b), Some(c)) if b == c => "=".into(),
        (Some(b), Some(c)) if b != 0.0 => format!("{:+.1}%", (c - b) / b * 100.0),
        (Some(_), Some(c)) if c != 0.0 => "new".into(),
        (Some(_), Some(_)) => "=".into(),
        _ => String::new(),
    }
}
