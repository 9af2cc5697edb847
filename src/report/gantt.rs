//! The Gantt window: which instance to centre on, which slices to draw (tasks coloured by
//! state, slices shorter than a pixel merged, rows and rectangles capped).
use super::model::{Gantt, Lane};
use super::{num, rows, text, GANTT_LANES, GANTT_PX, GANTT_RECTS};
use crate::Result;

/// The instance the Gantt window is centred on: the largest response time of a complete
/// task or ISR instance (issue #7: "the window around the worst response time").
fn focus(conn: &duckdb::Connection, id: i64) -> Result<Option<(String, i64, i64, i64)>> {
    let sql = format!(
        "SELECT entity, instance, activate_ts, terminate_ts FROM instances WHERE capture_id = {id} AND complete \
         AND entity_type IN ('T', 'I', 'ISR') ORDER BY response_time DESC, activate_ts LIMIT 1"
    );
    Ok(rows(conn, &sql)?.first().and_then(|r| {
        Some((
            text(r, "entity"),
            num(r, "instance")? as i64,
            num(r, "activate_ts")? as i64,
            num(r, "terminate_ts")? as i64,
        ))
    }))
}

/// The Gantt window of capture `id`, around its worst response time.
pub fn gantt(conn: &duckdb::Connection, id: i64) -> Result<Option<Gantt>> {
    let Some((entity, instance, a, t)) = focus(conn, id)? else { return Ok(None) };
    // At least 1 ms wide, so a short response is shown with what ran around it, but not
    // beyond the capture (no axis running into negative times before it began).
    let pad = ((t - a) / 4).max((1_000_000 - (t - a)) / 2).max(20_000);
    let span = rows(conn, &format!("SELECT ts_min, ts_max FROM captures WHERE capture_id = {id}"))?;
    let bound = |col: &str| span.first().and_then(|r| num(r, col)).map(|v| v as i64);
    let from = (a - pad).max(bound("ts_min").unwrap_or(i64::MIN).min(a));
    let to = (t + pad).min(bound("ts_max").unwrap_or(i64::MAX).max(t));
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
        let (s, end, state) = (
            num(&r, "s").unwrap_or(0.0) as i64,
            num(&r, "e").unwrap_or(0.0) as i64,
            text(&r, "state"),
        );
        if lanes.last().map(|l| l.entity != e).unwrap_or(true) {
            lanes.push(Lane { entity: e, core: text(&r, "core"), slices: Vec::new() });
        }
        let Some(lane) = lanes.last_mut() else { continue };
        merge_slice(&mut lane.slices, (s, end, state), min);
    }
    // The focus lane, then the most active ones, when there are too many; then back in core
    // order.
    if lanes.len() > GANTT_LANES {
        lanes.sort_by_key(|l| {
            std::cmp::Reverse((l.entity == entity, l.slices.iter().map(|s| s.1 - s.0).sum::<i64>()))
        });
        lanes.truncate(GANTT_LANES);
        lanes.sort_by(|a, b| (&a.core, &a.entity).cmp(&(&b.core, &b.entity)));
    }
    share_rectangles(&mut lanes, GANTT_RECTS);
    let focus = format!("{entity} instance {instance} (activate {a} ns, terminate {t} ns)");
    Ok(Some(Gantt { from, to, focus, focus_from: a, focus_to: t, lanes }))
}

/// Cuts the lanes' slices to `budget` in all, shared out evenly: a lane needing less than
/// its share leaves the rest to the others, and no lane is left empty while another has
/// more than its share.
fn share_rectangles(lanes: &mut [Lane], budget: usize) {
    let mut order: Vec<usize> = (0..lanes.len()).collect();
    order.sort_by_key(|&i| lanes.get(i).map_or(0, |l| l.slices.len()));
    let (mut left, n) = (budget, lanes.len());
    for (k, i) in order.into_iter().enumerate() {
        let Some(lane) = lanes.get_mut(i) else { continue };
        let share = left / (n - k);
        lane.slices.truncate(share);
        left -= lane.slices.len();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_are_shared_so_no_lane_is_emptied() {
        let lane = |n: usize| Lane {
            entity: format!("T{n}"),
            core: String::new(),
            slices: (0..n as i64).map(|i| (i, i + 1, "running".to_string())).collect(),
        };
        let mut lanes = vec![lane(300), lane(10), lane(300), lane(300)];
        share_rectangles(&mut lanes, 100);
        let counts: Vec<usize> = lanes.iter().map(|l| l.slices.len()).collect();
        assert_eq!(counts, [30, 10, 30, 30]);
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
}
