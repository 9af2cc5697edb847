//! Reports: one capture (optionally against a baseline) summarised for people and machines.
//!
//! [`collect`] runs the predefined analyses (`queries/`) on an open connection and gathers
//! their rows into a [`Report`]; every figure in it is a value an analysis returned (the
//! tests compare them with `tracedb query`). Only the charts read the base tables, and only
//! to aggregate them (histogram bins, the Gantt window); their rules are in
//! [`Report::definitions`]. The renderers ([`html`], [`markdown`], [`json`]) only format.
//!
//! With a baseline, [`compare`] puts every task figure beside the baseline's and lists the
//! regressions beyond the threshold and the new deadline misses; the command exits with
//! status 3 when there is any (see [`crate::Error::Regression`]).
pub mod compare;
pub mod gantt;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod svg;

pub use compare::{compare, GATED};
pub use model::*;

mod charts;
mod misses;
mod prose;
pub use charts::*;
use misses::*;
pub use prose::*;

use crate::store::{queries, CaptureEntry};
use crate::{Error, Result};
use serde_json::{Map, Value};

/// One row of an analysis, columns in order.
pub type Row = Map<String, Value>;

/// Most rows of a list (deadline misses, non-BTF tables) kept in a report.
pub const LIST_CAP: usize = 1000;
/// Bins of each response-time histogram.
pub const HISTOGRAM_BINS: i64 = 20;
/// Most points per core of the CPU load chart.
pub const LOAD_POINTS: i64 = 150;

/// Most windows computed for a baseline's load (of which the chart draws the part beside the
/// capture).
const BASELINE_WINDOWS: i64 = 10_000;
/// Most rows (tasks) and rectangles of the Gantt chart.
pub const GANTT_LANES: usize = 40;
/// See [`GANTT_LANES`].
pub const GANTT_RECTS: usize = 4000;
/// Width in px of the Gantt chart's time axis: slices shorter than one px are merged.
pub const GANTT_PX: f64 = 900.0;

/// Options of [`collect`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Regression threshold, percent.
    pub threshold_pct: f64,
    /// The deadline file given for the report (`--deadlines`), as named there.
    pub deadlines: Option<String>,
}

/// Runs the analyses for `capture` (and `baseline`) on `conn` and gathers the report.
pub fn collect(
    conn: &duckdb::Connection,
    capture: &CaptureEntry,
    baseline: Option<&CaptureEntry>,
    opts: &Options,
) -> Result<Report> {
    let id = capture.capture_id;
    let tasks = task_rows(conn, id)?;
    // The worst LIST_CAP misses, and how many there are: a capture can have millions (a
    // deadline file far below the response times), which the report must not hold.
    let (mut misses, deadline_misses_total) = first_rows(
        conn,
        "deadline_misses",
        id,
        "lateness DESC NULLS LAST, capture_id, activate_ts, entity, deadline_source",
    )?;
    explain_misses(conn, id, &mut misses)?;
    let mut load = cpu_load(conn, capture, None)?;
    let comparison = match baseline {
        Some(b) => {
            // The capture's windows, unless the baseline is so much longer that they would
            // be too many to compute: only the part beside this capture is drawn anyway.
            let base_span = b.ts_max.unwrap_or(0).saturating_sub(b.ts_min.unwrap_or(0));
            let base_window = if base_span / load.window_ns > BASELINE_WINDOWS {
                nice_window(base_span / BASELINE_WINDOWS)
            } else {
                load.window_ns
            };
            let base_load = cpu_load(conn, b, Some(base_window))?;
            // The baseline's first window drawn where this capture's first window is, and
            // no further than its last: a longer baseline does not stretch the chart.
            let first =
                |l: &CpuLoad| l.cores.iter().filter_map(|c| c.points.first()).map(|p| p.0).min();
            let last =
                load.cores.iter().filter_map(|c| c.points.last()).map(|p| p.0).max().unwrap_or(0);
            let shift = first(&load).zip(first(&base_load)).map_or(0, |(c, b)| c - b);
            for c in &mut load.cores {
                if let Some(bc) = base_load.cores.iter().find(|bc| bc.core == c.core) {
                    c.baseline_mean = Some(bc.mean);
                    c.baseline_points = bc
                        .points
                        .iter()
                        .map(|&(t, l)| (t + shift, l))
                        .filter(|&(t, _)| t <= last)
                        .collect();
                }
            }
            let mut c = compare(
                &tasks,
                task_rows(conn, b.capture_id)?,
                analysis(conn, "semaphore_contention", &[], b.capture_id)?,
                opts.threshold_pct,
            );
            // Only tasks of both captures are compared: with none, there is nothing to say.
            if tasks.iter().any(|t| c.base(&t.entity).is_some()) {
                c.deadlines_note =
                    deadlines_note(conn, id, b.capture_id, opts.deadlines.as_deref())?;
            }
            Some(c)
        }
        None => None,
    };
    let gantt = gantt::gantt(conn, id)?;
    Ok(Report {
        tool_version: crate::TOOL_VERSION.to_string(),
        capture: summary(conn, capture)?,
        baseline: baseline.map(|b| summary(conn, b)).transpose()?,
        threshold_pct: opts.threshold_pct,
        diagnostics: analysis(conn, "data_loss", &[], id)?,
        tasks,
        deadline_misses: misses,
        deadline_misses_total,
        semaphores: analysis(conn, "semaphore_contention", &[], id)?,
        cpu_load: load,
        histograms: histograms(conn, id, baseline.map(|b| b.capture_id))?,
        gantt,
        other_format: other_format(conn, capture)?,
        comparison,
        definitions: definitions(),
    })
}

/// Rows of `sql`, each as a JSON object (DuckDB's `to_json`, columns in order).
pub fn rows(conn: &duckdb::Connection, sql: &str) -> Result<Vec<Row>> {
    // Through the same JSON writer as `--format json` (NaN and infinities as null, which
    // DuckDB's to_json writes bare and no JSON reader takes).
    let mut stmt = conn.prepare(sql)?;
    let arrow = stmt.query_arrow([])?;
    let schema = arrow.get_schema();
    let batches: Vec<_> = arrow.collect();
    let mut text = Vec::new();
    crate::output::write(&mut text, &schema, &batches, crate::output::OutputFormat::Json)
        .map_err(Error::Output)?;
    let v: Value = serde_json::from_slice(&text)
        .map_err(|e| Error::Sql(format!("internal: report rows: {e}")))?;
    let Value::Array(rows) = v else { return Ok(Vec::new()) };
    Ok(rows
        .into_iter()
        .filter_map(|r| match r {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect())
}

/// Rows of the predefined analysis `name` for capture `id`.
pub fn analysis(
    conn: &duckdb::Connection,
    name: &str,
    params: &[(String, String)],
    id: i64,
) -> Result<Vec<Row>> {
    let q =
        queries::find(name).ok_or_else(|| Error::Sql(format!("internal: no analysis {name}")))?;
    rows(conn, &q.invocation(params, &[id])?)
}

fn summary(conn: &duckdb::Connection, c: &CaptureEntry) -> Result<Summary> {
    let entities: i64 = conn.query_row(
        "SELECT count(*) FROM entities WHERE capture_id = ?",
        duckdb::params![c.capture_id],
        |r| r.get(0),
    )?;
    Ok(Summary {
        capture_id: c.capture_id,
        name: c.name.clone(),
        format: c.format.clone(),
        source_files: c.source_files.clone(),
        ts_min: c.ts_min,
        ts_max: c.ts_max,
        span_ns: c.ts_max.unwrap_or(0) - c.ts_min.unwrap_or(0),
        events: c.event_count,
        entities,
    })
}

fn task_rows(conn: &duckdb::Connection, id: i64) -> Result<Vec<TaskRow>> {
    let deadlines = analysis(conn, "deadline_summary", &[], id)?;
    let blocking = analysis(conn, "blocking", &[], id)?;
    let preemptions = analysis(conn, "preemptions", &[], id)?;
    // Time running over the whole capture, every instance: the figure a trace whose tasks
    // never terminate (an RTOS logger's endless task loops) still has.
    let cpu_time = rows(
        conn,
        &format!(
            "SELECT entity, sum(net_exec) AS cpu_time FROM instances \
             WHERE capture_id = {id} AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE GROUP BY entity"
        ),
    )?;
    let find = |rows: &[Row], e: &str| {
        rows.iter().find(|r| text(r, "entity") == e).cloned().unwrap_or_default()
    };
    let mut out = Vec::new();
    for r in analysis(conn, "response_times", &[], id)? {
        let e = text(&r, "entity");
        let (d, b, p) = (find(&deadlines, &e), find(&blocking, &e), find(&preemptions, &e));
        let c = find(&cpu_time, &e);
        out.push(TaskRow {
            entity_type: text(&r, "entity_type"),
            instances: num(&r, "instances"),
            instances_left_out: num(&r, "instances_left_out"),
            response_time_min: num(&r, "response_time_min"),
            response_time_avg: num(&r, "response_time_avg"),
            response_time_p99: num(&r, "response_time_p99"),
            response_time_max: num(&r, "response_time_max"),
            deadline_misses: num(&d, "misses"),
            deadline_instances: num(&d, "instances"),
            net_exec_avg: num(&r, "net_exec_avg"),
            net_exec_max: num(&r, "net_exec_max"),
            blocking_total: num(&b, "blocking_total"),
            blocking_max: num(&b, "blocking_max"),
            preemptions: num(&p, "preemptions"),
            cpu_time: num(&c, "cpu_time"),
            entity: e,
        });
    }
    Ok(out)
}

fn other_format(conn: &duckdb::Connection, c: &CaptureEntry) -> Result<Option<OtherFormat>> {
    if c.format == "btf" {
        return Ok(None);
    }
    // The first LIST_CAP rows in each analysis's own order, and how many there are.
    let (state_time, n_states) = first_rows(
        conn,
        "state_time",
        c.capture_id,
        "capture_id, kind DESC, entity, time DESC, state",
    )?;
    let (channel_time, n_channels) = first_rows(
        conn,
        "channel_time",
        c.capture_id,
        "capture_id, kind DESC, channel, time DESC, value",
    )?;
    Ok(Some(OtherFormat { state_time, channel_time, totals: (n_states, n_channels) }))
}

/// The first [`LIST_CAP`] rows of analysis `name` for capture `id` in `order` (its own
/// ORDER BY), and how many rows it has: a large capture's rows are not all held.
fn first_rows(
    conn: &duckdb::Connection,
    name: &str,
    id: i64,
    order: &str,
) -> Result<(Vec<Row>, usize)> {
    let q =
        queries::find(name).ok_or_else(|| Error::Sql(format!("internal: no analysis {name}")))?;
    let all = q.invocation(&[], &[id])?;
    let count = rows(conn, &format!("SELECT count(*) AS n FROM ({all})"))?;
    let total = count.first().and_then(|r| num(r, "n")).map_or(0, |n| n as usize);
    let first = rows(conn, &format!("SELECT * FROM ({all}) ORDER BY {order} LIMIT {LIST_CAP}"))?;
    Ok((first, total))
}

fn definitions() -> Vec<Definition> {
    let mut out: Vec<Definition> = [
        "response_times",
        "deadline_summary",
        "deadline_misses",
        "execution_times",
        "blocking",
        "preemptions",
        "semaphore_contention",
        "cpu_load",
        "data_loss",
        "state_time",
        "channel_time",
    ]
    .iter()
    .filter_map(|n| queries::find(n))
    .map(|q| Definition { name: q.name, text: q.summary })
    .collect();
    let rules = [
        ("left out", "instances of the task not in its statistics (response_times.instances_left_out): activate or terminate outside the capture, or resynchronised after a diagnostic"),
        ("cpu time", "time the task ran over the whole capture, every instance counted, complete or not (the sum of instances.net_exec)"),
        ("highlight", "the largest value of each task column (RT min, instances and left out aside) is highlighted (bold in Markdown); tasks with deadline misses are marked (their name in bold in Markdown)"),
        ("cpu load chart", "cpu_load with the smallest 1-2-5 window giving at most 150 windows per core"),
        ("histogram", "response times of the complete instances response_times counts, 20 equal bins from min to max (of both captures when comparing)"),
        (
            "gantt window",
            "around the worst response time (the longest response of a complete task or ISR instance); \
             padded by a quarter of that response, at least 1 ms wide; slices under one pixel merged",
        ),
        (
            "regression",
            "RT avg/p99/max, net exec avg/max or blocking max grown by more than the threshold over a \
             non-zero baseline, or more deadline misses than the baseline; exit status 3",
        ),
    ];
    out.extend(rules.iter().map(|(n, t)| Definition { name: n.to_string(), text: t.to_string() }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_nice_and_big_enough() {
        assert_eq!(nice_window(1), 1000);
        assert_eq!(nice_window(665_000), 1_000_000);
        assert_eq!(nice_window(1_500_000), 2_000_000);
        assert_eq!(nice_window(3_000_000), 5_000_000);
        // The grid includes both ends' windows, but not one that starts at the capture's
        // last instant: 0..150 ms fits 150 windows of 1 ms, one more ns needs 2 ms ones.
        assert_eq!(load_window(0, 150_000_000), 1_000_000);
        assert_eq!(load_window(0, 150_000_001), 2_000_000);
        assert_eq!(load_window(-1, 150_000_000), 2_000_000);
        let edge = (1i64 << 62) - 1;
        for (from, to) in
            [(0, 149_000_000), (999_999, 150_999_999), (-7, 3), (5, 5), (0, 1 << 40), (-edge, edge)]
        {
            let w = load_window(from, to);
            let windows = (to - 1).max(from).div_euclid(w) - from.div_euclid(w) + 1;
            assert!(windows <= LOAD_POINTS, "{from}..{to}: {w} ns gives {windows}");
        }
    }
}
