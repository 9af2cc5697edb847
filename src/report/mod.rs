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

/// Says when the two captures were ingested with different deadline rules (the `deadlines`
/// table): each capture's tasks are judged by its own, so the same timing can miss in one
/// and not in the other, and the miss counts compared are not judged alike. None when the
/// rules are the same (or both have none).
fn deadlines_note(
    conn: &duckdb::Connection,
    id: i64,
    base: i64,
    file: Option<&str>,
) -> Result<Option<String>> {
    let counts = rows(
        conn,
        &format!(
            "WITH a AS (SELECT entity, deadline FROM deadlines WHERE capture_id = {id}), \
                  b AS (SELECT entity, deadline FROM deadlines WHERE capture_id = {base}) \
             SELECT (SELECT count(*) FROM a) AS here, (SELECT count(*) FROM b) AS there, \
                    (SELECT count(*) FROM (SELECT * FROM a EXCEPT SELECT * FROM b)) \
                  + (SELECT count(*) FROM (SELECT * FROM b EXCEPT SELECT * FROM a)) AS apart"
        ),
    )?;
    let Some(r) = counts.first() else { return Ok(None) };
    let n = |col: &str| num(r, col).unwrap_or(0.0) as u64;
    if n("apart") == 0 {
        return Ok(None);
    }
    let rules = |k: u64| match k {
        0 => "none".to_string(),
        1 => "1 rule".to_string(),
        k => format!("{k} rules"),
    };
    let remedy = match file {
        Some(f) => format!(
            "--deadlines {f} judges both captures by one file where it names a task (it does for \
             the tasks it names; the others keep their own capture's)"
        ),
        None => "--deadlines FILE judges both captures by one file where it names a task".into(),
    };
    Ok(Some(format!(
        "the deadlines stored at ingest differ (this capture: {}, the baseline: {}): a task \
         is judged against its own capture's deadline, so its misses may differ with the same \
         timing; {remedy}",
        rules(n("here")),
        rules(n("there"))
    )))
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

/// Adds to each deadline miss who delayed it: `blocked_by`, what the instance waited for and
/// who held or set it (`blocking_instances`: `SEM_A held by TASK_2 #66`, and, when that
/// holder was preempted meanwhile, who ran on its core instead, from `priority_inversions`:
/// ` (kept off its core by TASK_5 #3 for 12.000 us)`, and for the holders after it in a
/// mutex's queue `; later held by TASK_7 #2, kept off its core by ISR_1 #9 for 2.000 us`), and
/// `preempted_by`, who took its core and how often (`preemption_instances`: `ISR_1 ×2`), and
/// `start_delayed_by`, who ran on the core it started on between its activation and its
/// start, and for how long (`TASK_3 #7 for 80.000 us`); NULL when nobody did.
fn explain_misses(conn: &duckdb::Connection, id: i64, misses: &mut [Row]) -> Result<()> {
    if misses.is_empty() {
        return Ok(());
    }
    // The misses' instances, as a VALUES list the analyses' rows are joined with; each once:
    // an instance can miss twice (its implicit-period deadline and the kernel's recorded
    // miss), and a repeated key would repeat its causes and double its preemptions.
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let keys: std::collections::BTreeSet<String> = misses
        .iter()
        .filter_map(|m| {
            let instance = num(m, "instance")?;
            Some(format!("({}, {instance})", quote(&text(m, "entity"))))
        })
        .collect();
    let keys: Vec<String> = keys.into_iter().collect();
    if keys.is_empty() {
        return Ok(());
    }
    let keys = format!("(VALUES {}) k(entity, instance)", keys.join(", "));
    let mut said: std::collections::HashMap<(String, String), (Vec<String>, Vec<String>)> =
        std::collections::HashMap::new();
    // A semaphore's holder kept off its core meanwhile (priority_inversions): who ran there
    // instead, and for how long.
    let blocked = format!(
        "SELECT b.entity, b.instance, b.cause_type, b.cause, b.blocked_by, b.blocked_by_instance, \
                (SELECT string_agg(CASE WHEN q.holder = b.blocked_by \
                                         AND q.holder_instance = b.blocked_by_instance \
                                        THEN '' \
                                        ELSE 'later held by ' || q.holder || ' #' || q.holder_instance || ', ' \
                                   END || 'kept off its core by ' || q.ran, '; ' ORDER BY q.first_ts) \
                 FROM (SELECT p.holder, p.holder_instance, min(p.first_ts) AS first_ts, \
                              string_agg(p.ran || ' #' || p.ran_instance || ' for ' || fmt_ns(p.delay), \
                                         ', ' ORDER BY p.delay DESC, p.ran, p.ran_instance) AS ran \
                       FROM priority_inversions p \
                       WHERE b.cause_type = 'semaphore' AND p.capture_id = b.capture_id \
                         AND p.semaphore = b.cause AND p.waiter = b.entity \
                         AND p.waiter_instance = b.instance AND p.request_ts = b.cause_ts \
                       GROUP BY ALL) q) AS ran_instead \
         FROM blocking_instances b JOIN {keys} USING (entity, instance) \
         WHERE b.capture_id = {id} AND b.cause IS NOT NULL ORDER BY b.cause_ts"
    );
    for c in rows(conn, &blocked)? {
        let (cause, by) = (text(&c, "cause"), text(&c, "blocked_by"));
        let verb = if text(&c, "cause_type") == "event" { "set by" } else { "held by" };
        let mut desc = if by.is_empty() {
            cause
        } else {
            format!("{cause} {verb} {by} #{}", text(&c, "blocked_by_instance"))
        };
        let ran_instead = text(&c, "ran_instead");
        if !ran_instead.is_empty() {
            desc.push_str(&format!(" ({ran_instead})"));
        }
        said.entry((text(&c, "entity"), text(&c, "instance"))).or_default().0.push(desc);
    }
    let preempted = format!(
        "SELECT p.preempted AS entity, p.instance, p.preempted_by, count(*) AS n \
         FROM preemption_instances p JOIN {keys} ON k.entity = p.preempted AND k.instance = p.instance \
         WHERE p.capture_id = {id} AND p.preempted_by IS NOT NULL \
         GROUP BY ALL ORDER BY n DESC, p.preempted_by"
    );
    for c in rows(conn, &preempted)? {
        let desc = format!("{} ×{}", text(&c, "preempted_by"), text(&c, "n"));
        said.entry((text(&c, "entity"), text(&c, "instance"))).or_default().1.push(desc);
    }
    // Who ran on its core between its activation and its first start (the core it started
    // on), in 2^20 ns buckets: each window and each occupancy listed in the buckets it
    // spans, a pair counted in the first bucket they share (a join on the core alone
    // compares every window with every occupancy of the core). Over a capture longer than
    // 2^36 ns (69 s) the buckets widen, so that nothing spans more than 2^16 of them: an
    // occupancy of 2^62 ns made a list of 2^42 buckets, which DuckDB refuses.
    let start = format!(
        "WITH sh AS ( \
             SELECT greatest(20, coalesce(CAST(ceil(log2(greatest(ts_max - ts_min, 2)::DOUBLE)) \
                                               AS INTEGER), 0) - 16) AS s \
             FROM captures WHERE capture_id = {id} \
         ), w AS ( \
             SELECT i.entity, i.instance, i.core, i.activate_ts AS w0, i.start_ts AS w1, sh.s \
             FROM instances i JOIN {keys} USING (entity, instance), sh \
             WHERE i.capture_id = {id} AND i.core IS NOT NULL AND i.start_ts > i.activate_ts \
         ), wb AS ( \
             SELECT w.*, unnest(range(w.w0 >> w.s, ((w.w1 - 1) >> w.s) + 1)) AS bucket FROM w \
         ), occ AS ( \
             SELECT entity AS ran, instance AS ran_instance, core, ts, ts + dur AS te, sh.s \
             FROM intervals, sh \
             WHERE capture_id = {id} AND channel = 'state' \
               AND (state IN ('running', 'polling')) IS TRUE AND core IS NOT NULL AND dur > 0 \
               AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE AND core IN (SELECT core FROM w) \
         ), ob AS ( \
             SELECT o.*, unnest(range(o.ts >> o.s, ((o.te - 1) >> o.s) + 1)) AS bucket FROM occ o \
         ), ran AS ( \
             SELECT wb.entity, wb.instance, ob.ran, ob.ran_instance, \
                    sum(overlap(ob.ts, ob.te - ob.ts, wb.w0, wb.w1 - wb.w0)) AS t \
             FROM wb JOIN ob ON ob.core = wb.core AND ob.bucket = wb.bucket \
             WHERE ob.ts < wb.w1 AND ob.te > wb.w0 \
               AND wb.bucket = greatest(ob.ts >> wb.s, wb.w0 >> wb.s) \
             GROUP BY ALL \
         ) \
         SELECT entity, instance, string_agg(ran || ' #' || ran_instance || ' for ' || fmt_ns(t), \
                ', ' ORDER BY t DESC, ran, ran_instance) AS ran \
         FROM ran GROUP BY ALL"
    );
    let mut before_start = std::collections::HashMap::new();
    for c in rows(conn, &start)? {
        before_start.insert((text(&c, "entity"), text(&c, "instance")), text(&c, "ran"));
    }
    for m in misses {
        let key = (text(m, "entity"), text(m, "instance"));
        let ran = before_start.get(&key).filter(|r| !r.is_empty());
        m.insert("start_delayed_by".into(), ran.map_or(Value::Null, |r| Value::String(r.clone())));
        let found = said.get(&(text(m, "entity"), text(m, "instance")));
        let list = |l: &Vec<String>| {
            if l.is_empty() {
                Value::Null
            } else {
                Value::String(l.join("; "))
            }
        };
        m.insert("blocked_by".into(), found.map_or(Value::Null, |f| list(&f.0)));
        m.insert("preempted_by".into(), found.map_or(Value::Null, |f| list(&f.1)));
    }
    Ok(())
}

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

/// The smallest 1-2-5 step of at least `raw` ns (and at least 1 µs).
pub fn nice_window(raw: i64) -> i64 {
    let mut step = 1000i64;
    loop {
        for m in [1, 2, 5] {
            if step * m >= raw {
                return step * m;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// The nicest window giving at most [`LOAD_POINTS`] windows per core over `from..=to`:
/// `cpu_load` numbers windows from ⌊from / w⌋ to ⌊(to − 1) / w⌋ (to ⌊from / w⌋ when
/// `to` = `from`), both included, which is up to two more than the span divided by the window.
fn load_window(from: i64, to: i64) -> i64 {
    let last = to.saturating_sub(1).max(from);
    let windows = |w: i64| last.div_euclid(w) - from.div_euclid(w) + 1;
    // Times lie within ±2^62 ns, so the span fits in an i64, but not with more added to it.
    let span = to.saturating_sub(from).max(0);
    let mut w = nice_window(span / LOAD_POINTS + i64::from(span % LOAD_POINTS != 0));
    while windows(w) > LOAD_POINTS {
        w = nice_window(w + 1);
    }
    w
}

/// CPU load per core of capture `c`, in windows of `window_ns` (default: the nicest window
/// giving at most [`LOAD_POINTS`] per core).
fn cpu_load(
    conn: &duckdb::Connection,
    c: &CaptureEntry,
    window_ns: Option<i64>,
) -> Result<CpuLoad> {
    let window_ns =
        window_ns.unwrap_or_else(|| load_window(c.ts_min.unwrap_or(0), c.ts_max.unwrap_or(0)));
    let rows =
        analysis(conn, "cpu_load", &[("window".into(), format!("{window_ns}ns"))], c.capture_id)?;
    let mut cores: Vec<CoreLoad> = Vec::new();
    for r in rows {
        let core = text(&r, "core");
        let point = (num(&r, "window_start").unwrap_or(0.0) as i64, num(&r, "load").unwrap_or(0.0));
        match cores.iter_mut().find(|c| c.core == core) {
            Some(c) => c.points.push(point),
            None => cores.push(CoreLoad {
                core,
                mean: 0.0,
                baseline_mean: None,
                points: vec![point],
                baseline_points: Vec::new(),
            }),
        }
    }
    for c in &mut cores {
        c.points.sort_by_key(|p| p.0);
        c.mean = c.points.iter().map(|p| p.1).sum::<f64>() / c.points.len().max(1) as f64;
    }
    cores.sort_by(|a, b| a.core.cmp(&b.core));
    Ok(CpuLoad { window_ns, cores })
}

/// Response-time histograms of the tasks of capture `id`; with a baseline, a task the
/// baseline has too gets its bins over both captures' range, and the baseline's counts.
fn histograms(conn: &duckdb::Connection, id: i64, baseline: Option<i64>) -> Result<Vec<Histogram>> {
    // The instances response_times counts: complete tasks and ISRs.
    let ids = baseline.map_or(id.to_string(), |b| format!("{id}, {b}"));
    let sql = format!(
        "WITH r AS (SELECT capture_id, entity, response_time FROM instances \
           WHERE capture_id IN ({ids}) AND complete AND entity_type IN ('T', 'I', 'ISR') \
           AND response_time IS NOT NULL), \
         b AS (SELECT entity, min(response_time) AS lo, max(response_time) AS hi FROM r GROUP BY entity \
           HAVING bool_or(capture_id = {id})) \
         SELECT entity, capture_id = {id} AS current, lo, hi, \
           least(CAST(floor((response_time - lo) * {n}.0 / greatest(hi - lo, 1)) AS BIGINT), {last}) AS bin, \
           count(*) AS n FROM r JOIN b USING (entity) GROUP BY ALL ORDER BY entity, bin",
        n = HISTOGRAM_BINS,
        last = HISTOGRAM_BINS - 1
    );
    let mut out: Vec<Histogram> = Vec::new();
    for r in rows(conn, &sql)? {
        let entity = text(&r, "entity");
        if out.last().map(|h| h.entity != entity).unwrap_or(true) {
            out.push(Histogram {
                entity: entity.clone(),
                lo: num(&r, "lo").unwrap_or(0.0) as i64,
                hi: num(&r, "hi").unwrap_or(0.0) as i64,
                counts: vec![0; HISTOGRAM_BINS as usize],
                baseline_counts: None,
            });
        }
        let current = r.get("current").and_then(Value::as_bool).unwrap_or(true);
        let (Some(h), Some(bin)) = (out.last_mut(), num(&r, "bin")) else { continue };
        let counts = if current {
            &mut h.counts
        } else {
            h.baseline_counts.get_or_insert_with(|| vec![0; HISTOGRAM_BINS as usize])
        };
        if let Some(c) = counts.get_mut(bin as usize) {
            *c = num(&r, "n").unwrap_or(0.0) as i64;
        }
    }
    if baseline == Some(id) {
        // A capture against itself: the rows above were all "current".
        for h in &mut out {
            h.baseline_counts = Some(h.counts.clone());
        }
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
