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
pub mod html;
pub mod json;
pub mod markdown;
pub mod svg;

use crate::store::{queries, CaptureEntry};
use crate::{Error, Result};
use serde::Serialize;
use serde_json::{Map, Value};

/// One row of an analysis, columns in order.
pub type Row = Map<String, Value>;

/// Most rows of a list (deadline misses, non-BTF tables) kept in a report.
pub const LIST_CAP: usize = 1000;
/// Bins of each response-time histogram.
pub const HISTOGRAM_BINS: i64 = 20;
/// Most points per core of the CPU load chart.
pub const LOAD_POINTS: i64 = 150;
/// Most rows (tasks) and rectangles of the Gantt chart.
pub const GANTT_LANES: usize = 40;
/// See [`GANTT_LANES`].
pub const GANTT_RECTS: usize = 4000;
/// Width in px of the Gantt chart's time axis: slices shorter than one px are merged.
pub const GANTT_PX: f64 = 900.0;

/// Everything a report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// tracedb version that made it.
    pub tool_version: String,
    /// The capture reported on.
    pub capture: Summary,
    /// The baseline it is compared with.
    pub baseline: Option<Summary>,
    /// Regression threshold, percent.
    pub threshold_pct: f64,
    /// `data_loss` rows of the capture (diagnostics summarised).
    pub diagnostics: Vec<Row>,
    /// One row per task and ISR.
    pub tasks: Vec<TaskRow>,
    /// `deadline_misses` rows, worst lateness first (at most [`LIST_CAP`]).
    pub deadline_misses: Vec<Row>,
    /// All deadline misses, including those left out of the list.
    pub deadline_misses_total: usize,
    /// `semaphore_contention` rows.
    pub semaphores: Vec<Row>,
    /// `cpu_load` per core.
    pub cpu_load: CpuLoad,
    /// Response-time histogram per task.
    pub histograms: Vec<Histogram>,
    /// The busiest window around the worst response time.
    pub gantt: Option<Gantt>,
    /// Non-BTF captures: state and channel time (or a note).
    pub other_format: Option<OtherFormat>,
    /// Figures against the baseline.
    pub comparison: Option<Comparison>,
    /// One line per analysis and rule used.
    pub definitions: Vec<Definition>,
}

/// A capture's identity and size.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Capture id.
    pub capture_id: i64,
    /// Capture name.
    pub name: String,
    /// Source format (btf, prv, ...).
    pub format: String,
    /// Source files.
    pub source_files: Vec<String>,
    /// First event, ns.
    pub ts_min: Option<i64>,
    /// Last event, ns.
    pub ts_max: Option<i64>,
    /// ts_max - ts_min, ns.
    pub span_ns: i64,
    /// Events read.
    pub events: u64,
    /// Entities (tasks, ISRs, runnables, cores, semaphores, signals, ...).
    pub entities: i64,
}

/// One task or ISR: figures from response_times, deadline_summary, blocking, preemptions.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TaskRow {
    /// Task or ISR.
    pub entity: String,
    /// T, I or ISR.
    pub entity_type: String,
    /// response_times.instances.
    pub instances: Option<f64>,
    /// response_times.response_time_min, ns.
    pub response_time_min: Option<f64>,
    /// response_times.response_time_avg, ns.
    pub response_time_avg: Option<f64>,
    /// response_times.response_time_p99, ns.
    pub response_time_p99: Option<f64>,
    /// response_times.response_time_max, ns.
    pub response_time_max: Option<f64>,
    /// deadline_summary.misses.
    pub deadline_misses: Option<f64>,
    /// deadline_summary.instances (instances judged against a deadline).
    pub deadline_instances: Option<f64>,
    /// response_times.net_exec_avg, ns.
    pub net_exec_avg: Option<f64>,
    /// response_times.net_exec_max, ns.
    pub net_exec_max: Option<f64>,
    /// blocking.blocking_total, ns.
    pub blocking_total: Option<f64>,
    /// blocking.blocking_max, ns.
    pub blocking_max: Option<f64>,
    /// preemptions.preemptions.
    pub preemptions: Option<f64>,
}

/// The task columns shown, with their header and whether they are durations.
pub const TASK_COLUMNS: &[(&str, &str, bool)] = &[
    ("instances", "instances", false),
    ("response_time_min", "RT min", true),
    ("response_time_avg", "RT avg", true),
    ("response_time_p99", "RT p99", true),
    ("response_time_max", "RT max", true),
    ("deadline_misses", "misses", false),
    ("net_exec_avg", "net exec avg", true),
    ("net_exec_max", "net exec max", true),
    ("blocking_total", "blocking total", true),
    ("blocking_max", "blocking max", true),
    ("preemptions", "preemptions", false),
];

/// Task figures that count as a regression when they grow beyond the threshold.
pub const GATED: &[&str] =
    &["response_time_avg", "response_time_p99", "response_time_max", "net_exec_avg", "net_exec_max", "blocking_max"];

impl TaskRow {
    /// The figure called `name` (one of [`TASK_COLUMNS`]).
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "instances" => self.instances,
            "response_time_min" => self.response_time_min,
            "response_time_avg" => self.response_time_avg,
            "response_time_p99" => self.response_time_p99,
            "response_time_max" => self.response_time_max,
            "deadline_misses" => self.deadline_misses,
            "deadline_instances" => self.deadline_instances,
            "net_exec_avg" => self.net_exec_avg,
            "net_exec_max" => self.net_exec_max,
            "blocking_total" => self.blocking_total,
            "blocking_max" => self.blocking_max,
            "preemptions" => self.preemptions,
            _ => None,
        }
    }
}

/// CPU load per core over time.
#[derive(Debug, Clone, Serialize)]
pub struct CpuLoad {
    /// Window length, ns (chosen so a core has at most [`LOAD_POINTS`] windows).
    pub window_ns: i64,
    /// One series per core.
    pub cores: Vec<CoreLoad>,
}

/// The load of one core.
#[derive(Debug, Clone, Serialize)]
pub struct CoreLoad {
    /// Core name.
    pub core: String,
    /// Mean of the windows' load, 0..1.
    pub mean: f64,
    /// Mean in the baseline, when there is one and it has this core.
    pub baseline_mean: Option<f64>,
    /// (window_start ns, load 0..1) per window.
    pub points: Vec<(i64, f64)>,
}

/// Response times of one task's complete instances, binned.
#[derive(Debug, Clone, Serialize)]
pub struct Histogram {
    /// Task or ISR.
    pub entity: String,
    /// Smallest response time, ns (start of the first bin).
    pub lo: i64,
    /// Largest response time, ns (end of the last bin).
    pub hi: i64,
    /// Instances per bin; the bins split lo..hi evenly.
    pub counts: Vec<i64>,
}

/// A window of the capture drawn as tasks (rows, grouped by core) coloured by state.
#[derive(Debug, Clone, Serialize)]
pub struct Gantt {
    /// Window start, ns.
    pub from: i64,
    /// Window end, ns.
    pub to: i64,
    /// Why this window: the instance it is centred on.
    pub focus: String,
    /// That instance's activation, ns.
    pub focus_from: i64,
    /// That instance's termination, ns.
    pub focus_to: i64,
    /// One row per task.
    pub lanes: Vec<Lane>,
}

/// One task in the Gantt window.
#[derive(Debug, Clone, Serialize)]
pub struct Lane {
    /// Task or ISR.
    pub entity: String,
    /// Core it ran on most in the window.
    pub core: String,
    /// (start ns, end ns, state) after merging slices shorter than a pixel.
    pub slices: Vec<(i64, i64, String)>,
}

/// The section shown for non-BTF captures.
#[derive(Debug, Clone, Serialize)]
pub struct OtherFormat {
    /// `state_time` rows, when that analysis exists.
    pub state_time: Option<Vec<Row>>,
    /// `channel_time` rows, when that analysis exists.
    pub channel_time: Option<Vec<Row>>,
    /// What could not be shown and why.
    pub note: Option<String>,
}

/// Figures of the capture against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Task rows of the baseline (same entity names).
    pub baseline_tasks: Vec<TaskRow>,
    /// Semaphore rows of the baseline.
    pub baseline_semaphores: Vec<Row>,
    /// Figures that grew beyond the threshold, largest change first.
    pub regressions: Vec<Change>,
    /// Tasks with more deadline misses than in the baseline.
    pub new_deadline_misses: Vec<Change>,
    /// Tasks only in the capture.
    pub new_tasks: Vec<String>,
    /// Tasks only in the baseline.
    pub gone_tasks: Vec<String>,
}

/// A figure that changed.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Task or ISR.
    pub entity: String,
    /// Figure (a [`TASK_COLUMNS`] name).
    pub metric: String,
    /// Baseline value.
    pub baseline: f64,
    /// Capture value.
    pub current: f64,
    /// (current - baseline) / baseline * 100 (None when the baseline is 0).
    pub change_pct: Option<f64>,
}

/// One line of the definitions section.
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    /// Analysis or rule.
    pub name: String,
    /// What it means.
    pub text: String,
}

impl Comparison {
    /// True when the CI gate fails (exit status 3).
    pub fn failed(&self) -> bool {
        !self.regressions.is_empty() || !self.new_deadline_misses.is_empty()
    }

    /// The baseline row of `entity`.
    pub fn base(&self, entity: &str) -> Option<&TaskRow> {
        self.baseline_tasks.iter().find(|t| t.entity == entity)
    }

    /// One line naming every regression and new miss (the error message of exit status 3).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .new_deadline_misses
            .iter()
            .map(|c| format!("{}: deadline misses {} -> {}", c.entity, c.baseline, c.current))
            .collect();
        parts.extend(self.regressions.iter().map(|c| {
            format!(
                "{}: {} {} -> {} ({})",
                c.entity,
                c.metric,
                human_ns(c.baseline),
                human_ns(c.current),
                c.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default()
            )
        }));
        parts.join("; ")
    }
}

/// Options of [`collect`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Regression threshold, percent.
    pub threshold_pct: f64,
}

/// Runs the analyses for `capture` (and `baseline`) on `conn` and gathers the report.
pub fn collect(conn: &duckdb::Connection, capture: &CaptureEntry, baseline: Option<&CaptureEntry>, opts: &Options) -> Result<Report> {
    let id = capture.capture_id;
    let tasks = task_rows(conn, id)?;
    let mut misses = analysis(conn, "deadline_misses", &[], id)?;
    misses.sort_by(|a, b| num(b, "lateness").partial_cmp(&num(a, "lateness")).unwrap_or(std::cmp::Ordering::Equal));
    let deadline_misses_total = misses.len();
    misses.truncate(LIST_CAP);
    let mut cpu_load = cpu_load(conn, capture)?;
    let comparison = match baseline {
        Some(b) => {
            let base_load = cpu_load_means(conn, b, cpu_load.window_ns)?;
            for c in &mut cpu_load.cores {
                c.baseline_mean = base_load.iter().find(|(core, _)| core == &c.core).map(|(_, m)| *m);
            }
            Some(compare(&tasks, task_rows(conn, b.capture_id)?, analysis(conn, "semaphore_contention", &[], b.capture_id)?, opts.threshold_pct))
        }
        None => None,
    };
    let gantt = gantt(conn, id, misses.first())?;
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
        cpu_load,
        histograms: histograms(conn, id)?,
        gantt,
        other_format: other_format(conn, capture)?,
        comparison,
        definitions: definitions(),
    })
}

/// Rows of `sql`, each as a JSON object (DuckDB's `to_json`, columns in order).
pub fn rows(conn: &duckdb::Connection, sql: &str) -> Result<Vec<Row>> {
    let wrapped = format!("SELECT CAST(to_json(t) AS VARCHAR) FROM ({sql}) AS t");
    let mut stmt = conn.prepare(&wrapped)?;
    let mut rs = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rs.next()? {
        let text: String = r.get(0)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| Error::Sql(format!("internal: report row: {e}")))?;
        if let Value::Object(m) = v {
            out.push(m);
        }
    }
    Ok(out)
}

/// Rows of the predefined analysis `name` for capture `id`.
pub fn analysis(conn: &duckdb::Connection, name: &str, params: &[(String, String)], id: i64) -> Result<Vec<Row>> {
    let q = queries::find(name).ok_or_else(|| Error::Sql(format!("internal: no analysis {name}")))?;
    rows(conn, &q.invocation(params, Some(id))?)
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
    let entities: i64 =
        conn.query_row("SELECT count(*) FROM entities WHERE capture_id = ?", duckdb::params![c.capture_id], |r| r.get(0))?;
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
    let find = |rows: &[Row], e: &str| rows.iter().find(|r| text(r, "entity") == e).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for r in analysis(conn, "response_times", &[], id)? {
        let e = text(&r, "entity");
        let (d, b, p) = (find(&deadlines, &e), find(&blocking, &e), find(&preemptions, &e));
        out.push(TaskRow {
            entity_type: text(&r, "entity_type"),
            instances: num(&r, "instances"),
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

fn cpu_load(conn: &duckdb::Connection, c: &CaptureEntry) -> Result<CpuLoad> {
    let span = c.ts_max.unwrap_or(0) - c.ts_min.unwrap_or(0);
    let window_ns = nice_window((span + LOAD_POINTS - 1) / LOAD_POINTS);
    let rows = analysis(conn, "cpu_load", &[("window".into(), format!("{window_ns}ns"))], c.capture_id)?;
    let mut cores: Vec<CoreLoad> = Vec::new();
    for r in rows {
        let core = text(&r, "core");
        let point = (num(&r, "window_start").unwrap_or(0.0) as i64, num(&r, "load").unwrap_or(0.0));
        match cores.iter_mut().find(|c| c.core == core) {
            Some(c) => c.points.push(point),
            None => cores.push(CoreLoad { core, mean: 0.0, baseline_mean: None, points: vec![point] }),
        }
    }
    for c in &mut cores {
        c.points.sort_by_key(|p| p.0);
        c.mean = c.points.iter().map(|p| p.1).sum::<f64>() / c.points.len().max(1) as f64;
    }
    cores.sort_by(|a, b| a.core.cmp(&b.core));
    Ok(CpuLoad { window_ns, cores })
}

fn cpu_load_means(conn: &duckdb::Connection, c: &CaptureEntry, window_ns: i64) -> Result<Vec<(String, f64)>> {
    let rows = analysis(conn, "cpu_load", &[("window".into(), format!("{window_ns}ns"))], c.capture_id)?;
    let mut sums: Vec<(String, f64, f64)> = Vec::new();
    for r in rows {
        let core = text(&r, "core");
        let load = num(&r, "load").unwrap_or(0.0);
        match sums.iter_mut().find(|s| s.0 == core) {
            Some(s) => {
                s.1 += load;
                s.2 += 1.0;
            }
            None => sums.push((core, load, 1.0)),
        }
    }
    Ok(sums.into_iter().map(|(c, s, n)| (c, s / n)).collect())
}

fn histograms(conn: &duckdb::Connection, id: i64) -> Result<Vec<Histogram>> {
    // The instances response_times counts: complete tasks and ISRs.
    let sql = format!(
        "WITH r AS (SELECT entity, response_time FROM instances WHERE capture_id = {id} AND complete \
           AND entity_type IN ('T', 'I', 'ISR') AND response_time IS NOT NULL), \
         b AS (SELECT entity, min(response_time) AS lo, max(response_time) AS hi FROM r GROUP BY entity) \
         SELECT entity, lo, hi, least(CAST(floor((response_time - lo) * {n}.0 / greatest(hi - lo, 1)) AS BIGINT), {last}) AS bin, \
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
            });
        }
        if let (Some(h), Some(bin)) = (out.last_mut(), num(&r, "bin")) {
            if let Some(c) = h.counts.get_mut(bin as usize) {
                *c = num(&r, "n").unwrap_or(0.0) as i64;
            }
        }
    }
    Ok(out)
}

/// The instance the Gantt window is centred on: the worst deadline miss; else the largest
/// response time of the task that came closest to its deadline (deadline_summary's
/// worst_lateness); else the largest response time of all.
fn focus(conn: &duckdb::Connection, id: i64, worst_miss: Option<&Row>) -> Result<Option<(String, i64, i64, i64)>> {
    if let Some(m) = worst_miss {
        if let (Some(a), Some(t), Some(i)) = (num(m, "activate_ts"), num(m, "terminate_ts"), num(m, "instance")) {
            return Ok(Some((text(m, "entity"), i as i64, a as i64, t as i64)));
        }
    }
    let closest = analysis(conn, "deadline_summary", &[], id)?
        .into_iter()
        .filter(|r| num(r, "worst_lateness").is_some())
        .max_by(|a, b| num(a, "worst_lateness").partial_cmp(&num(b, "worst_lateness")).unwrap_or(std::cmp::Ordering::Equal))
        .map(|r| text(&r, "entity"));
    let filter = match closest {
        Some(e) => format!("AND entity = '{}'", e.replace('\'', "''")),
        None => String::new(),
    };
    let sql = format!(
        "SELECT entity, instance, activate_ts, terminate_ts FROM instances WHERE capture_id = {id} AND complete \
         AND entity_type IN ('T', 'I', 'ISR') {filter} ORDER BY response_time DESC, activate_ts LIMIT 1"
    );
    Ok(rows(conn, &sql)?.first().and_then(|r| {
        Some((text(r, "entity"), num(r, "instance")? as i64, num(r, "activate_ts")? as i64, num(r, "terminate_ts")? as i64))
    }))
}

fn gantt(conn: &duckdb::Connection, id: i64, worst_miss: Option<&Row>) -> Result<Option<Gantt>> {
    let Some((entity, instance, a, t)) = focus(conn, id, worst_miss)? else { return Ok(None) };
    // At least 1 ms wide, so a short response is shown with what ran around it.
    let pad = ((t - a) / 4).max((1_000_000 - (t - a)) / 2).max(20_000);
    let (from, to) = (a - pad, t + pad);
    let sql = format!(
        "WITH s AS (SELECT entity, state, greatest(ts, {from}) AS s, least(ts + dur, {to}) AS e FROM intervals \
           WHERE capture_id = {id} AND channel = 'state' AND entity_type IN ('T', 'I', 'ISR') \
           AND ts < {to} AND ts + dur > {from}), \
         c AS (SELECT entity, mode(core) AS core FROM intervals WHERE capture_id = {id} AND channel = 'state' \
           AND state = 'running' AND ts < {to} AND ts + dur > {from} GROUP BY entity) \
         SELECT s.entity, coalesce(c.core, '') AS core, s.state, s.s, s.e FROM s LEFT JOIN c USING (entity) \
         ORDER BY core, s.entity, s.s"
    );
    let min = ((to - from) as f64 / GANTT_PX).max(1.0) as i64;
    let mut lanes: Vec<Lane> = Vec::new();
    for r in rows(conn, &sql)? {
        let e = text(&r, "entity");
        let (s, end, state) = (num(&r, "s").unwrap_or(0.0) as i64, num(&r, "e").unwrap_or(0.0) as i64, text(&r, "state"));
        if lanes.last().map(|l| l.entity != e).unwrap_or(true) {
            lanes.push(Lane { entity: e, core: text(&r, "core"), slices: Vec::new() });
        }
        let Some(lane) = lanes.last_mut() else { continue };
        merge_slice(&mut lane.slices, (s, end, state), min);
    }
    // Most active lanes first when there are too many, then back in core order.
    if lanes.len() > GANTT_LANES {
        lanes.sort_by_key(|l| std::cmp::Reverse(l.slices.iter().map(|s| s.1 - s.0).sum::<i64>()));
        lanes.truncate(GANTT_LANES);
        lanes.sort_by(|a, b| (&a.core, &a.entity).cmp(&(&b.core, &b.entity)));
    }
    let mut budget = GANTT_RECTS;
    for l in &mut lanes {
        l.slices.truncate(budget);
        budget -= l.slices.len();
    }
    let focus = format!("{entity} instance {instance} (activate {a} ns, terminate {t} ns)");
    Ok(Some(Gantt { from, to, focus, focus_from: a, focus_to: t, lanes }))
}

/// Appends a slice, merging it into the previous one when either is shorter than `min` ns
/// and they touch (the longer one's state wins).
fn merge_slice(slices: &mut Vec<(i64, i64, String)>, next: (i64, i64, String), min: i64) {
    if let Some(last) = slices.last_mut() {
        let touching = next.0 - last.1 < min;
        if touching && (last.2 == next.2 || next.1 - next.0 < min || last.1 - last.0 < min) {
            if next.1 - next.0 > last.1 - last.0 {
                last.2 = next.2;
            }
            last.1 = last.1.max(next.1);
            return;
        }
    }
    slices.push(next);
}

fn other_format(conn: &duckdb::Connection, c: &CaptureEntry) -> Result<Option<OtherFormat>> {
    if c.format == "btf" {
        return Ok(None);
    }
    let get = |name: &str| -> Result<Option<Vec<Row>>> {
        if queries::find(name).is_none() {
            return Ok(None);
        }
        let mut r = analysis(conn, name, &[], c.capture_id)?;
        r.truncate(LIST_CAP);
        Ok(Some(r))
    };
    let (state_time, channel_time) = (get("state_time")?, get("channel_time")?);
    let note = (state_time.is_none() || channel_time.is_none()).then(|| {
        format!(
            "this {} capture has no task life cycle; the analyses state_time and channel_time, which \
             summarise such captures, are not all in this build of tracedb",
            c.format
        )
    });
    Ok(Some(OtherFormat { state_time, channel_time, note }))
}

/// Compares task figures; a regression is a [`GATED`] figure that grew by more than
/// `threshold_pct` percent from a non-zero baseline.
pub fn compare(tasks: &[TaskRow], base: Vec<TaskRow>, base_sems: Vec<Row>, threshold_pct: f64) -> Comparison {
    let mut regressions = Vec::new();
    let mut new_deadline_misses = Vec::new();
    for t in tasks {
        let Some(b) = base.iter().find(|b| b.entity == t.entity) else { continue };
        for m in GATED {
            if let (Some(bv), Some(cv)) = (b.get(m), t.get(m)) {
                let pct = (bv != 0.0).then(|| (cv - bv) / bv * 100.0);
                if pct.map(|p| p > threshold_pct).unwrap_or(false) {
                    regressions.push(Change { entity: t.entity.clone(), metric: m.to_string(), baseline: bv, current: cv, change_pct: pct });
                }
            }
        }
        let (bm, cm) = (b.deadline_misses.unwrap_or(0.0), t.deadline_misses.unwrap_or(0.0));
        if cm > bm {
            let pct = (bm != 0.0).then(|| (cm - bm) / bm * 100.0);
            new_deadline_misses.push(Change { entity: t.entity.clone(), metric: "deadline_misses".into(), baseline: bm, current: cm, change_pct: pct });
        }
    }
    for t in tasks.iter().filter(|t| !base.iter().any(|b| b.entity == t.entity)) {
        if t.deadline_misses.unwrap_or(0.0) > 0.0 {
            let cm = t.deadline_misses.unwrap_or(0.0);
            new_deadline_misses.push(Change { entity: t.entity.clone(), metric: "deadline_misses".into(), baseline: 0.0, current: cm, change_pct: None });
        }
    }
    regressions.sort_by(|a, b| b.change_pct.partial_cmp(&a.change_pct).unwrap_or(std::cmp::Ordering::Equal));
    Comparison {
        new_tasks: tasks.iter().filter(|t| !base.iter().any(|b| b.entity == t.entity)).map(|t| t.entity.clone()).collect(),
        gone_tasks: base.iter().filter(|b| !tasks.iter().any(|t| t.entity == b.entity)).map(|b| b.entity.clone()).collect(),
        baseline_tasks: base,
        baseline_semaphores: base_sems,
        regressions,
        new_deadline_misses,
    }
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
        ("highlight", "the largest value of each task column is highlighted; rows with deadline misses are marked"),
        ("cpu load chart", "cpu_load with the smallest 1-2-5 window giving at most 150 windows per core"),
        ("histogram", "response times of the complete instances response_times counts, 20 equal bins from min to max"),
        (
            "gantt window",
            "around the worst deadline miss, else the longest response of the task closest to its deadline; \
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
    }

    #[test]
    fn tiny_slices_merge() {
        let mut v = Vec::new();
        merge_slice(&mut v, (0, 100, "running".into()), 10);
        merge_slice(&mut v, (100, 103, "ready".into()), 10);
        merge_slice(&mut v, (103, 200, "running".into()), 10);
        merge_slice(&mut v, (200, 300, "ready".into()), 10);
        assert_eq!(v, vec![(0, 200, "running".to_string()), (200, 300, "ready".to_string())]);
    }

    #[test]
    fn regressions_need_a_threshold_and_a_baseline() {
        let t = |e: &str, rt: f64, m: f64| TaskRow {
            entity: e.into(),
            response_time_max: Some(rt),
            deadline_misses: Some(m),
            ..Default::default()
        };
        let c = compare(&[t("A", 110.0, 0.0), t("B", 104.0, 1.0)], vec![t("A", 100.0, 0.0), t("B", 100.0, 0.0)], vec![], 5.0);
        assert_eq!(c.regressions.len(), 1);
        assert_eq!(c.regressions[0].entity, "A");
        assert_eq!(c.new_deadline_misses[0].entity, "B");
        assert!(c.failed());
        assert!(c.describe().contains("A: response_time_max"));
    }
}
