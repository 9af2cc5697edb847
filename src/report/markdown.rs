//! The Markdown form, for a merge-request comment or a wiki: tables, no charts (the CPU load
//! is given as its mean per core, the histograms are left to the HTML form).
use super::{change_text, human, human_ns, num, text, Report, Row, Section, TASK_COLUMNS};
use std::fmt::Write;

/// Text as a Markdown table cell or inline text: `|` and line breaks would break the table,
/// and `<`, `>`, `&` would be taken as HTML by GitHub and GitLab (a task named `<b>` must not
/// turn the rest of the line bold), so they become entities.
fn cell(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// The report as Markdown.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# tracedb report: {}\n", cell(&r.capture.name));
    if let (Some(c), Some(b)) = (&r.comparison, &r.baseline) {
        let _ = writeln!(s, "## Regressions\n");
        if c.failed() {
            let _ = writeln!(
                s,
                "Against baseline **{}** (capture {}), threshold {}%:\n",
                cell(&b.name),
                b.capture_id,
                r.threshold_pct
            );
            for m in &c.new_deadline_misses {
                let _ = writeln!(
                    s,
                    "* **{}**: new deadline misses ({} → {})",
                    cell(&m.entity),
                    m.baseline,
                    m.current
                );
            }
            for g in &c.regressions {
                let pct = g.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default();
                let _ = writeln!(
                    s,
                    "* **{}** {}: {} → {} ({pct})",
                    cell(&g.entity),
                    g.metric,
                    human_ns(g.baseline),
                    human_ns(g.current)
                );
            }
            s.push('\n');
        } else {
            let _ = writeln!(
                s,
                "No regression beyond {}% and no new deadline miss against baseline **{}**.\n",
                r.threshold_pct,
                cell(&b.name)
            );
        }
        if !c.new_tasks.is_empty() || !c.gone_tasks.is_empty() {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.iter().map(|t| cell(t)).collect::<Vec<_>>().join(", ")
                }
            };
            let _ = writeln!(
                s,
                "Only in this capture: {}. Only in the baseline: {}.\n",
                list(&c.new_tasks),
                list(&c.gone_tasks)
            );
        }
        if let Some(note) = &c.deadlines_note {
            let _ = writeln!(s, "Note: {}.\n", cell(note));
        }
    }
    if !r.diagnostics.is_empty() {
        let _ = writeln!(s, "## Diagnostics\n\nThe importer skipped or repaired records; figures may be incomplete.\n");
        table(
            &mut s,
            &r.diagnostics,
            &["severity", "kind", "occurrences", "first_position", "example"],
        );
    }
    let c = &r.capture;
    let _ = writeln!(
        s,
        "## Capture\n\n| | capture |{}\n|---|---|{}",
        if r.baseline.is_some() { " baseline |" } else { "" },
        if r.baseline.is_some() { "---|" } else { "" }
    );
    let caps: Vec<_> = std::iter::once(c).chain(r.baseline.as_ref()).collect();
    let line = |name: &str, f: &dyn Fn(&super::Summary) -> String| {
        let cells: Vec<String> = caps.iter().map(|c| cell(&f(c))).collect();
        format!("| {name} | {} |\n", cells.join(" | "))
    };
    s.push_str(&line("name", &|c| format!("{} (id {})", c.name, c.capture_id)));
    s.push_str(&line("format", &|c| c.format.clone()));
    s.push_str(&line("span", &|c| human_ns(c.span_ns as f64)));
    s.push_str(&line("events", &|c| c.events.to_string()));
    s.push_str(&line("entities", &|c| c.entities.to_string()));
    s.push('\n');
    for section in r.sections() {
        match section {
            Section::Tasks => tasks(&mut s, r),
            Section::MissesAndSemaphores => misses_and_semaphores(&mut s, r),
            Section::Load => load(&mut s, r),
            Section::Charts => gantt(&mut s, r),
            Section::States => states(&mut s, r),
        }
    }
    let _ = writeln!(s, "## Definitions\n");
    for d in &r.definitions {
        let _ = writeln!(s, "* **{}**: {}", d.name, cell(&d.text));
    }
    s
}

/// The task table.
fn tasks(s: &mut String, r: &Report) {
    let _ = writeln!(s, "## Tasks\n");
    if r.tasks.is_empty() {
        let _ = writeln!(s, "No task or ISR instances in this capture.\n");
    } else {
        let heads: Vec<&str> = TASK_COLUMNS.iter().map(|c| c.1).collect();
        let _ = writeln!(
            s,
            "| task | type | {} |\n|---|---|{}",
            heads.join(" | "),
            "---:|".repeat(heads.len())
        );
        for t in &r.tasks {
            let base = r.comparison.as_ref().map(|c| c.base(&t.entity).cloned());
            let cells: Vec<String> = TASK_COLUMNS
                .iter()
                .map(|(col, _, dur)| {
                    let v = human(t.get(col), *dur);
                    let v = if r.is_column_max(t, col) { format!("**{v}**") } else { v };
                    match &base {
                        Some(b) => {
                            let bv = b.as_ref().and_then(|b| b.get(col));
                            format!(
                                "{v} ({})",
                                if b.is_some() {
                                    change_text(bv, t.get(col))
                                } else {
                                    "new".into()
                                }
                            )
                        }
                        None => v,
                    }
                })
                .collect();
            let name = if t.deadline_misses.unwrap_or(0.0) > 0.0 {
                format!("**{}**", cell(&t.entity))
            } else {
                cell(&t.entity)
            };
            let _ = writeln!(s, "| {name} | {} | {} |", t.entity_type, cells.join(" | "));
        }
        s.push('\n');
        if let Some(note) = super::tasks_left_out_note(&r.tasks) {
            let _ = writeln!(s, "{note}\n");
        }
    }
}

/// The deadline misses and semaphore contention sections.
fn misses_and_semaphores(s: &mut String, r: &Report) {
    let _ = writeln!(s, "## Deadline misses\n");
    if let Some(c) = &r.comparison {
        let _ = writeln!(s, "Baseline: {} misses.\n", c.baseline_misses());
    }
    if r.deadline_misses_total == 0 {
        let _ = writeln!(s, "None.\n");
    } else {
        let _ = writeln!(
            s,
            "{} {}, worst lateness first (ns){}.\n",
            r.deadline_misses_total,
            if r.deadline_misses_total == 1 { "miss" } else { "misses" },
            if r.deadline_misses_total > 50 {
                "; the first 50 shown (`tracedb query deadline_misses` lists them all)"
            } else {
                ""
            }
        );
        let shown: Vec<Row> = r.deadline_misses.iter().take(50).cloned().collect();
        if let Some(note) = super::unfinished_misses_note(&shown) {
            let _ = writeln!(s, "{note}\n");
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
                "lateness",
                "start_delayed_by",
                "blocked_by",
                "preempted_by",
            ],
        );
    }
    let _ = writeln!(s, "## Semaphore contention\n");
    if r.semaphores.is_empty() {
        let _ = writeln!(s, "No semaphores in this capture.\n");
    } else {
        let cols = [
            "requests",
            "contended_requests",
            "contention_ratio",
            "wait_avg",
            "wait_p99",
            "wait_max",
            "hold_max",
        ];
        let base = r.comparison.as_ref().map(|c| &c.baseline_semaphores);
        let _ = writeln!(s, "Waits and holds in ns.\n");
        let _ = writeln!(
            s,
            "| semaphore | {} |\n|---|{}",
            cols.join(" | "),
            "---:|".repeat(cols.len())
        );
        for row in &r.semaphores {
            let name = text(row, "semaphore");
            let b = base.map(|b| b.iter().find(|x| text(x, "semaphore") == name));
            let cells: Vec<String> = cols
                .iter()
                .map(|c| match b {
                    Some(Some(b)) => {
                        format!("{} ({})", text(row, c), change_text(num(b, c), num(row, c)))
                    }
                    Some(None) => format!("{} (new)", text(row, c)),
                    None => text(row, c),
                })
                .collect();
            let _ = writeln!(s, "| {} | {} |", cell(&name), cells.join(" | "));
        }
        s.push('\n');
        for line in super::semaphores_left_out(&r.semaphores) {
            let _ = writeln!(s, "{line}\n");
        }
    }
}

/// The CPU load section.
fn load(s: &mut String, r: &Report) {
    if r.cpu_load.cores.is_empty() {
        let _ = writeln!(s, "## CPU load per core\n\nNo core was occupied in this capture.\n");
        return;
    }
    let _ = writeln!(
        s,
        "## CPU load per core\n\nWindow {}.\n\n| core | mean load |\n|---|---:|",
        human_ns(r.cpu_load.window_ns as f64)
    );
    for c in &r.cpu_load.cores {
        let was =
            c.baseline_mean.map(|b| format!(" (baseline {:.1}%)", b * 100.0)).unwrap_or_default();
        let _ = writeln!(s, "| {} | {:.1}%{was} |", cell(&c.core), c.mean * 100.0);
    }
    s.push('\n');
}

/// Where the Gantt window is (the chart itself is in the HTML form).
fn gantt(s: &mut String, r: &Report) {
    if let Some(g) = &r.gantt {
        let _ = writeln!(
            s,
            "Gantt window: {} to {}, around the worst response time: {} (see the HTML form for the charts).\n",
            human_ns(g.from as f64),
            human_ns(g.to as f64),
            cell(&g.focus)
        );
    }
}

/// State and channel time (captures of formats with no task life cycle).
fn states(s: &mut String, r: &Report) {
    if let Some(o) = &r.other_format {
        let _ = writeln!(s, "## State and channel time\n");
        let parts = [
            ("Time per state (state_time)", &o.state_time, o.totals.0),
            ("Time per channel value (channel_time)", &o.channel_time, o.totals.1),
        ];
        for (title, rows, total) in parts {
            let _ = writeln!(s, "### {title}\n");
            if rows.len() < total {
                let _ = writeln!(
                    s,
                    "The first {} of {total} rows; `tracedb query` lists them all.\n",
                    rows.len()
                );
            }
            let Some(first) = rows.first() else {
                let _ = writeln!(s, "No rows: the capture has none to show here.\n");
                continue;
            };
            let cols: Vec<String> = first.keys().filter(|k| *k != "capture_id").cloned().collect();
            let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
            table(s, rows, &cols);
        }
    }
}

fn table(s: &mut String, rows: &[Row], cols: &[&str]) {
    let _ = writeln!(s, "| {} |\n|{}", cols.join(" | "), "---|".repeat(cols.len()));
    for r in rows {
        let cells: Vec<String> = cols.iter().map(|c| cell(&text(r, c))).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push('\n');
}
