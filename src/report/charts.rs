//! The data behind the report's charts: CPU load over windows of a readable length
//! ([`nice_window`]) and the response-time histograms, aggregated in SQL from the base tables.
use super::*;

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
pub(super) fn load_window(from: i64, to: i64) -> i64 {
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
pub(super) fn cpu_load(
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
pub(super) fn histograms(
    conn: &duckdb::Connection,
    id: i64,
    baseline: Option<i64>,
) -> Result<Vec<Histogram>> {
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
