//! The HTML form: one self-contained page (inline CSS and SVG, no script, nothing fetched).
use super::svg::{self, esc};
use super::{change_text, human, human_ns, num, text, Report, Row, Section, TaskRow, TASK_COLUMNS};
use std::fmt::Write;

const CSS: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1300px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:28px}\
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}\
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\
.figs td{white-space:nowrap}.worst{background:#ffe0b3;font-weight:bold}.miss td:first-child{color:#c00;font-weight:bold}\
.was{display:block;color:#777;font-size:10px}.reg{color:#c00;font-weight:bold}.better{color:#080}\
.alert{background:#fdecea;border:1px solid #e57373;padding:8px 12px}.ok{background:#e8f5e9;border:1px solid #81c784;padding:8px 12px}\
.grid{display:flex;flex-wrap:wrap;gap:8px}.grid figure{margin:0;border:1px solid #eee;padding:4px}\
figcaption{font-size:11px;font-weight:bold}.legend span{margin-right:14px;font-size:12px}dt{font-weight:bold;float:left;width:190px}dd{margin-left:200px}";

/// The report as an HTML page.
pub fn render(r: &Report) -> String {
    let mut s = String::with_capacity(1 << 16);
    let title = format!("tracedb report: {}", r.capture.name);
    let _ = write!(s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n", esc(&title), esc(&title));
    if let (Some(c), Some(b)) = (&r.comparison, &r.baseline) {
        s.push_str("<h2 id=\"regressions\">Regressions</h2>\n");
        if c.failed() {
            let _ = write!(
                s,
                "<div class=\"alert\"><p>Against baseline <b>{}</b> (capture {}), threshold {}%:</p><ul>",
                esc(&b.name),
                b.capture_id,
                r.threshold_pct
            );
            for m in &c.new_deadline_misses {
                let _ = write!(
                    s,
                    "<li class=\"reg\">{}: new deadline misses ({} → {})</li>",
                    esc(&m.entity),
                    m.baseline,
                    m.current
                );
            }
            for g in &c.regressions {
                let _ = write!(
                    s,
                    "<li><b>{}</b> {}: {} → {} <span class=\"reg\">{}</span></li>",
                    esc(&g.entity),
                    g.metric,
                    human_ns(g.baseline),
                    human_ns(g.current),
                    g.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default()
                );
            }
            s.push_str("</ul></div>\n");
        } else {
            let _ = writeln!(
                s,
                "<p class=\"ok\">No regression beyond {}% and no new deadline miss against baseline <b>{}</b>.</p>",
                r.threshold_pct,
                esc(&b.name)
            );
        }
        if !c.new_tasks.is_empty() || !c.gone_tasks.is_empty() {
            let _ = writeln!(
                s,
                "<p>Only in this capture: {}. Only in the baseline: {}.</p>",
                esc(&list(&c.new_tasks)),
                esc(&list(&c.gone_tasks))
            );
        }
        if let Some(note) = &c.deadlines_note {
            let _ = writeln!(s, "<p>Note: {}.</p>", esc(note));
        }
    }
    if !r.diagnostics.is_empty() {
        s.push_str("<h2 id=\"diagnostics\">Diagnostics</h2>\n<div class=\"alert\">The importer skipped or repaired records; figures may be incomplete.</div>\n");
        table(
            &mut s,
            &r.diagnostics,
            &["severity", "kind", "occurrences", "first_position", "example"],
        );
    }
    summary(&mut s, r);
    for section in r.sections() {
        match section {
            Section::Tasks => tasks(&mut s, r),
            Section::MissesAndSemaphores => misses_and_semaphores(&mut s, r),
            Section::Load => load(&mut s, r),
            Section::Charts => charts(&mut s, r),
            Section::States => states(&mut s, r),
        }
    }
    s.push_str("<h2 id=\"definitions\">Definitions</h2>\n<dl>");
    for d in &r.definitions {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(&d.name), esc(&d.text));
    }
    let _ = write!(
        s,
        "</dl>\n<p style=\"color:#888;font-size:11px\">tracedb {}</p>\n</body></html>\n",
        esc(&r.tool_version)
    );
    s
}

/// The deadline misses and semaphore contention sections.
fn misses_and_semaphores(s: &mut String, r: &Report) {
    let _ = writeln!(s, "<h2 id=\"deadline-misses\">Deadline misses</h2>");
    if let Some(c) = &r.comparison {
        let _ = writeln!(s, "<p class=\"was\">Baseline: {} misses.</p>", c.baseline_misses());
    }
    if r.deadline_misses_total == 0 {
        s.push_str("<p>None.</p>\n");
    } else {
        let _ = writeln!(
            s,
            "<p>{} {}, worst lateness first{}.</p>",
            r.deadline_misses_total,
            if r.deadline_misses_total == 1 { "miss" } else { "misses" },
            if r.deadline_misses_total > 100 {
                " (the first 100 shown; `tracedb query deadline_misses` lists them all)".to_string()
            } else {
                String::new()
            }
        );
        let shown: Vec<Row> = r.deadline_misses.iter().take(100).cloned().collect();
        if let Some(note) = super::unfinished_misses_note(&shown) {
            let _ = writeln!(s, "<p>{}</p>", esc(&note));
        }
        table(
            s,
            &shown,
            &[
                "entity",
                "instance",
                "activate_ts",
                "response_time",
                "deadline",
                "deadline_source",
                "lateness",
                "start_delayed_by",
                "blocked_by",
                "preempted_by",
            ],
        );
    }
    s.push_str("<h2 id=\"semaphores\">Semaphore contention</h2>\n");
    if r.semaphores.is_empty() {
        s.push_str("<p>No semaphores in this capture.</p>\n");
    } else {
        let base = r.comparison.as_ref().map(|c| &c.baseline_semaphores);
        s.push_str("<table><tr><th>semaphore</th><th>requests</th><th>contended</th><th>contention</th><th>wait avg</th><th>wait p99</th><th>wait max</th><th>hold max</th><th>most waiting</th></tr>\n");
        for row in &r.semaphores {
            let name = text(row, "semaphore");
            let b = base.and_then(|b| b.iter().find(|x| text(x, "semaphore") == name));
            let _ = write!(s, "<tr><td>{}</td>", esc(&name));
            for (col, dur) in [
                ("requests", false),
                ("contended_requests", false),
                ("contention_ratio", false),
                ("wait_avg", true),
                ("wait_p99", true),
                ("wait_max", true),
                ("hold_max", true),
            ] {
                cell(s, num(row, col), b.map(|b| num(b, col)), dur, false);
            }
            let _ = writeln!(s, "<td>{}</td></tr>", esc(&text(row, "most_waiting_process")));
        }
        s.push_str("</table>\n");
        for line in super::semaphores_left_out(&r.semaphores) {
            let _ = writeln!(s, "<p>{}</p>", esc(&line));
        }
    }
}

/// The CPU load section.
fn load(s: &mut String, r: &Report) {
    if r.cpu_load.cores.is_empty() {
        s.push_str("<h2 id=\"cpu-load\">CPU load per core</h2>\n<p>No core was occupied in this capture.</p>\n");
        return;
    }
    let _ = write!(
        s,
        "<h2 id=\"cpu-load\">CPU load per core</h2>\n<p>Window {}.</p><p class=\"legend\">",
        human_ns(r.cpu_load.window_ns as f64)
    );
    for (i, c) in r.cpu_load.cores.iter().enumerate() {
        let was =
            c.baseline_mean.map(|b| format!(", baseline {:.1}%", b * 100.0)).unwrap_or_default();
        let _ = write!(
            s,
            "<span style=\"color:{}\">■ {} mean {:.1}%{was}</span>",
            svg::PALETTE[i % svg::PALETTE.len()],
            esc(&c.core),
            c.mean * 100.0
        );
    }
    if r.cpu_load.cores.iter().any(|c| !c.baseline_points.is_empty()) {
        s.push_str("<span class=\"was\">dashed: the baseline, from its first window</span>");
    }
    s.push_str("</p>\n");
    s.push_str(&svg::load_chart(&r.cpu_load));
}

/// The response-time histograms and the Gantt chart.
fn charts(s: &mut String, r: &Report) {
    s.push_str("\n<h2 id=\"histograms\">Response-time histograms</h2>\n");
    if r.histograms.iter().any(|h| h.baseline_counts.is_some()) {
        s.push_str(
            "<p class=\"legend\">Bars: this capture. <span style=\"color:#ff7f0e\">Orange \
             outline: the baseline</span>, over the same bins (both captures' range).</p>\n",
        );
    }
    s.push_str("<div class=\"grid\">\n");
    for h in &r.histograms {
        let n: i64 = h.counts.iter().sum();
        let base = r.comparison.as_ref().and_then(|c| c.base(&h.entity)).map(|b| {
            format!(
                "<br><span class=\"was\">baseline {} instances, {} .. {}</span>",
                human(b.instances, false),
                human(b.response_time_min, true),
                human(b.response_time_max, true)
            )
        });
        let _ = writeln!(
            s,
            "<figure><figcaption>{} ({n} instances){}</figcaption>{}</figure>",
            esc(&h.entity),
            base.unwrap_or_default(),
            svg::histogram(h)
        );
    }
    s.push_str("</div>\n<h2 id=\"gantt\">Gantt chart around the worst response time</h2>\n");
    match &r.gantt {
        Some(g) => {
            let _ = write!(
                s,
                "<p>{} to {}, around the worst response time: {} (dashed lines).</p>\n{}\n",
                human_ns(g.from as f64),
                human_ns(g.to as f64),
                esc(&g.focus),
                svg::gantt(g)
            );
        }
        None => s.push_str("<p>No complete task instance to centre a window on.</p>\n"),
    }
}

/// State and channel time (captures of formats with no task life cycle).
fn states(s: &mut String, r: &Report) {
    if let Some(o) = &r.other_format {
        s.push_str("<h2 id=\"states\">State and channel time</h2>\n");
        let parts = [
            ("Time per state (state_time)", &o.state_time, o.totals.0),
            ("Time per channel value (channel_time)", &o.channel_time, o.totals.1),
        ];
        for (title, rows, total) in parts {
            let _ = writeln!(s, "<h3>{}</h3>", esc(title));
            if rows.len() < total {
                let _ = writeln!(
                    s,
                    "<p>The first {} of {total} rows; `tracedb query` lists them all.</p>",
                    rows.len()
                );
            }
            let Some(first) = rows.first() else {
                s.push_str("<p>No rows: the capture has none to show here.</p>\n");
                continue;
            };
            let cols: Vec<String> = first.keys().filter(|k| *k != "capture_id").cloned().collect();
            let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
            table(s, rows, &cols);
        }
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// How one cell of the summary table is rendered.
type SummaryCell = Box<dyn Fn(&super::Summary) -> String>;

fn summary(s: &mut String, r: &Report) {
    s.push_str("<h2 id=\"summary\">Capture</h2>\n<table><tr><th></th><th>capture</th>");
    if r.baseline.is_some() {
        s.push_str("<th>baseline</th>");
    }
    s.push_str("</tr>\n");
    let caps: Vec<_> = std::iter::once(&r.capture).chain(r.baseline.as_ref()).collect();
    let rows: [(&str, SummaryCell); 6] = [
        ("name", Box::new(|c| format!("{} (id {})", c.name, c.capture_id))),
        ("format", Box::new(|c| c.format.clone())),
        ("source", Box::new(|c| c.source_files.join(", "))),
        (
            "span",
            Box::new(|c| {
                format!(
                    "{} ({} .. {} ns)",
                    human_ns(c.span_ns as f64),
                    c.ts_min.unwrap_or(0),
                    c.ts_max.unwrap_or(0)
                )
            }),
        ),
        ("events", Box::new(|c| c.events.to_string())),
        ("entities", Box::new(|c| c.entities.to_string())),
    ];
    for (name, f) in rows.iter() {
        let _ = write!(s, "<tr><td>{name}</td>");
        for c in &caps {
            let _ = write!(s, "<td>{}</td>", esc(&f(c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

fn tasks(s: &mut String, r: &Report) {
    s.push_str("<h2 id=\"tasks\">Tasks</h2>\n");
    if r.tasks.is_empty() {
        s.push_str("<p>No task or ISR instances in this capture.</p>\n");
        return;
    }
    s.push_str("<table class=\"figs\"><tr><th>task</th><th>type</th>");
    for (_, head, _) in TASK_COLUMNS {
        let _ = write!(s, "<th>{head}</th>");
    }
    s.push_str("</tr>\n");
    for t in &r.tasks {
        let base: Option<&TaskRow> = r.comparison.as_ref().and_then(|c| c.base(&t.entity));
        let class = if t.deadline_misses.unwrap_or(0.0) > 0.0 { " class=\"miss\"" } else { "" };
        let _ = write!(s, "<tr{class}><td>{}</td><td>{}</td>", esc(&t.entity), esc(&t.entity_type));
        for (c, _, dur) in TASK_COLUMNS {
            let v = t.get(c);
            let highlight = r.is_column_max(t, c);
            let b = r.comparison.as_ref().map(|_| base.and_then(|b| b.get(c)));
            cell(s, v, b, *dur, highlight);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if let Some(note) = super::tasks_left_out_note(&r.tasks) {
        let _ = writeln!(s, "<p>{}</p>", esc(&note));
    }
}

/// One figure, with the baseline value and the change below it when comparing.
fn cell(s: &mut String, v: Option<f64>, base: Option<Option<f64>>, dur: bool, highlight: bool) {
    let class = if highlight { " class=\"worst\"" } else { "" };
    let _ = write!(s, "<td{class}>{}", human(v, dur));
    if let Some(b) = base {
        let change = change_text(b, v);
        let cls = match (b, v) {
            (Some(b), Some(v)) if v > b => "reg",
            (Some(b), Some(v)) if v < b => "better",
            _ => "",
        };
        let _ = write!(
            s,
            "<span class=\"was\">was {} <span class=\"{cls}\">{change}</span></span>",
            human(b, dur)
        );
    }
    s.push_str("</td>");
}

fn table(s: &mut String, rows: &[Row], cols: &[&str]) {
    s.push_str("<table><tr>");
    for c in cols {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in cols {
            let _ = write!(s, "<td>{}</td>", esc(&text(r, c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}
