//! Charts drawn as inline SVG: CPU load lines, response-time histograms, the Gantt window.
//! Element counts are bounded by the data they get (at most [`super::LOAD_POINTS`] points
//! per core, [`super::HISTOGRAM_BINS`] bars, [`super::GANTT_RECTS`] rectangles), never by
//! the number of events.
use super::{human_ns, CpuLoad, Gantt, Histogram};
use std::fmt::Write;

/// Colours of the series (cores) and of the task states.
pub const PALETTE: &[&str] =
    &["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

/// The colour of a task state in the Gantt chart.
pub fn state_colour(state: &str) -> &'static str {
    match state {
        "running" => "#2ca02c",
        "ready" => "#ffbf00",
        "active" => "#aec7e8",
        "waiting" => "#9467bd",
        "polling" => "#d62728",
        "parking" => "#ff7f0e",
        _ => "#bbbbbb",
    }
}

/// Text escaped for XML and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// CPU load per core: one polyline per core, y 0..100%, x over the capture.
pub fn load_chart(load: &CpuLoad) -> String {
    let (w, h, left, bottom, top) = (900.0, 240.0, 50.0, 30.0, 10.0);
    let (from, to) = load
        .cores
        .iter()
        .flat_map(|c| c.points.iter().chain(&c.baseline_points).map(|p| p.0))
        .fold((i64::MAX, i64::MIN), |(a, b), t| (a.min(t), b.max(t + load.window_ns)));
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>CPU load per core</title>"#
    );
    if from >= to {
        s.push_str(r#"<text x="10" y="20">no running intervals</text></svg>"#);
        return s;
    }
    let x = |t: i64| left + (t - from) as f64 / (to - from) as f64 * (w - left - 10.0);
    let y = |l: f64| top + (1.0 - l.clamp(0.0, 1.0)) * (h - top - bottom);
    for pct in [0, 25, 50, 75, 100] {
        let yy = y(pct as f64 / 100.0);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" font-size="10" text-anchor="end">{pct}%</text>"##,
            w - 10.0,
            left - 4.0,
            yy + 3.0
        );
    }
    for i in 0..=4 {
        let t = tick(from, to, i);
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" font-size="10" text-anchor="{}">{}</text>"#,
            x(t),
            h - 12.0,
            anchor(i),
            human_ns(t as f64)
        );
    }
    let line = |points: &[(i64, f64)]| -> String {
        let pts: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.0 + load.window_ns / 2), y(p.1)))
            .collect();
        pts.join(" ")
    };
    // The baseline first, dashed and lighter, so that the capture's lines stay on top.
    for (i, c) in load.cores.iter().enumerate().filter(|(_, c)| !c.baseline_points.is_empty()) {
        let colour = PALETTE[i % PALETTE.len()];
        let _ = write!(
            s,
            r#"<polyline class="baseline" fill="none" stroke="{colour}" stroke-width="1" stroke-dasharray="4 3" stroke-opacity="0.6" points="{}"><title>{} (baseline)</title></polyline>"#,
            line(&c.baseline_points),
            esc(&c.core)
        );
    }
    for (i, c) in load.cores.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.3" points="{}"><title>{}</title></polyline>"#,
            line(&c.points),
            esc(&c.core)
        );
    }
    s.push_str("</svg>");
    s
}

/// One task's response-time histogram, small enough to be laid out in a grid.
pub fn histogram(hist: &Histogram) -> String {
    let (w, h, bottom) = (240.0, 110.0, 22.0);
    let base = hist.baseline_counts.as_deref().unwrap_or_default();
    let max = hist.counts.iter().chain(base).copied().max().unwrap_or(0).max(1) as f64;
    let n = hist.counts.len().max(1) as f64;
    let bw = (w - 10.0) / n;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="hist" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>{}</title>"#,
        esc(&hist.entity)
    );
    for (i, c) in hist.counts.iter().enumerate() {
        if *c == 0 {
            continue;
        }
        let bh = (*c as f64 / max) * (h - bottom - 14.0);
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}" fill="#1f77b4"><title>{c}</title></rect>"##,
            5.0 + i as f64 * bw,
            h - bottom - bh,
            (bw - 1.0).max(0.5)
        );
    }
    if !base.is_empty() {
        // The baseline as the outline of its bars: a step line over the same bins.
        let top = |c: i64| h - bottom - (c as f64 / max) * (h - bottom - 14.0);
        let mut pts = vec![format!("5.0,{:.1}", h - bottom)];
        for (i, c) in base.iter().enumerate() {
            let (x0, x1) = (5.0 + i as f64 * bw, 5.0 + (i + 1) as f64 * bw);
            pts.push(format!("{x0:.1},{:.1} {x1:.1},{:.1}", top(*c), top(*c)));
        }
        pts.push(format!("{:.1},{:.1}", 5.0 + n * bw, h - bottom));
        let _ = write!(
            s,
            r##"<polyline class="baseline" fill="none" stroke="#ff7f0e" stroke-width="1.5" points="{}"><title>baseline: {} instances</title></polyline>"##,
            pts.join(" "),
            base.iter().sum::<i64>()
        );
    }
    let _ = write!(
        s,
        r#"<text x="5" y="{}" font-size="10">{}</text><text x="{}" y="{}" font-size="10" text-anchor="end">{}</text><text x="5" y="10" font-size="10">max bin {}</text></svg>"#,
        h - 6.0,
        human_ns(hist.lo as f64),
        w - 5.0,
        h - 6.0,
        human_ns(hist.hi as f64),
        max
    );
    s
}

/// The Gantt window: one row per task (grouped by core), rectangles coloured by state.
pub fn gantt(g: &Gantt) -> String {
    let (label, row, plot) = (170.0, 16.0, super::GANTT_PX);
    let w = label + plot + 40.0;
    let h = 30.0 + row * g.lanes.len() as f64 + 24.0;
    let span = (g.to - g.from).max(1) as f64;
    let x = |t: i64| label + (t - g.from) as f64 / span * plot;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>Gantt chart</title>"#
    );
    for i in 0..=4 {
        let t = tick(g.from, g.to, i);
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="20" y2="{1}" stroke="#eee"/><text x="{0:.1}" y="14" font-size="10" text-anchor="{3}">{2}</text>"##,
            x(t),
            h - 24.0,
            human_ns(t as f64),
            anchor(i)
        );
    }
    for (i, lane) in g.lanes.iter().enumerate() {
        let y = 20.0 + row * i as f64;
        let name = if lane.core.is_empty() {
            lane.entity.clone()
        } else {
            format!("{} · {}", lane.core, lane.entity)
        };
        let _ =
            write!(s, r#"<text x="2" y="{:.1}" font-size="10">{}</text>"#, y + 11.0, esc(&name));
        for (a, b, state) in &lane.slices {
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.2}" height="{}" fill="{}"><title>{}</title></rect>"#,
                x(*a),
                y + 2.0,
                (x(*b) - x(*a)).max(0.5),
                row - 4.0,
                state_colour(state),
                esc(state)
            );
        }
    }
    for t in [g.focus_from, g.focus_to] {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="18" y2="{1}" stroke="#c00" stroke-dasharray="3,2"><title>focus instance</title></line>"##,
            x(t),
            h - 24.0
        );
    }
    let mut lx = label;
    for st in ["running", "ready", "active", "waiting", "polling", "parking"] {
        let _ = write!(
            s,
            r#"<rect x="{lx}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}" font-size="10">{st}</text>"#,
            h - 14.0,
            state_colour(st),
            lx + 13.0,
            h - 5.0
        );
        lx += 75.0;
    }
    s.push_str("</svg>");
    s
}

/// The time of the i-th of five axis labels (0 to 4) from `from` to `to`, in i128: a span
/// of 2^61 ns times 4 overflows i64 (the last label of a capture that long was negative).
fn tick(from: i64, to: i64, i: i64) -> i64 {
    let t = i128::from(from) + (i128::from(to) - i128::from(from)) * i128::from(i) / 4;
    i64::try_from(t).unwrap_or(to)
}

/// Text anchor of the i-th of five axis labels: the last one ends at the right edge instead
/// of being cut by it.
fn anchor(i: i64) -> &'static str {
    if i == 4 {
        "end"
    } else {
        "middle"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::CoreLoad;

    /// The five labels of the time axis, in order.
    fn axis_labels(svg: &str, anchor_first: &str) -> Vec<String> {
        let mut out = Vec::new();
        for part in svg.split("font-size=\"10\" text-anchor=\"").skip(1) {
            let (anchor, rest) = part.split_once("\">").unwrap();
            let label = rest.split_once('<').unwrap().0;
            if (anchor == "middle" || anchor == "end") && !label.ends_with('%') {
                out.push(label.to_string());
            }
        }
        assert!(out.first().is_some_and(|l| l == anchor_first), "{out:?}");
        out
    }

    #[test]
    fn axes_of_a_capture_spanning_2_pow_61_ns_do_not_overflow() {
        let to = 1i64 << 61;
        let load = CpuLoad {
            window_ns: 1 << 50,
            cores: vec![CoreLoad {
                core: "Core_0".into(),
                mean: 0.5,
                baseline_mean: None,
                points: vec![(0, 0.5), (to, 0.5)],
                baseline_points: vec![],
            }],
        };
        let labels = axis_labels(&load_chart(&load), "0 ns");
        assert_eq!(labels.len(), 5, "{labels:?}");
        assert!(labels.iter().all(|l| !l.starts_with('-')), "{labels:?}");
        let g =
            Gantt { from: 0, to, focus: "T".into(), focus_from: 0, focus_to: to, lanes: vec![] };
        let labels = axis_labels(&gantt(&g), "0 ns");
        assert_eq!(labels.last().map(String::as_str), Some("2305843009.21 s"), "{labels:?}");
    }
}
