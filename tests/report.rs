//! `tracedb report`: each form on the sample archive, its numbers checked against the
//! analyses' own output (`tracedb query --format csv`), the HTML rendered by headless
//! Chromium, and the `--baseline` gate (exit status 3 naming the slower task).
use crate::util::{self, ok, run, scalar};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

fn sample_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/btf/ecu-4cores.btf.gz")
}

fn sample(dir: &Path) {
    ok(dir, &["ingest", "--archive", "db", sample_path().to_str().unwrap()]);
}

/// `tracedb query NAME --format csv` as one map per row (fields of these analyses hold no
/// quoted commas except `causes`/`example`, which are not compared).
fn query(dir: &Path, name: &str, params: &[&str]) -> Vec<BTreeMap<String, String>> {
    query_of(dir, "1", name, params)
}

fn query_of(
    dir: &Path,
    capture: &str,
    name: &str,
    params: &[&str],
) -> Vec<BTreeMap<String, String>> {
    let mut args = vec!["query", name, "--archive", "db", "--format", "csv", "--capture", capture];
    args.extend_from_slice(params);
    let out = ok(dir, &args);
    let mut lines = out.split("\r\n").filter(|l| !l.is_empty());
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

/// The row of `rows` whose `entity` is `e`.
fn by(rows: &[BTreeMap<String, String>], e: &str) -> Option<BTreeMap<String, String>> {
    rows.iter().find(|x| x["entity"] == e).cloned()
}

fn json_num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The analysis's CSV cell as a number (empty = NULL).
fn csv_num(row: &BTreeMap<String, String>, col: &str) -> Option<f64> {
    let s = row.get(col).unwrap_or_else(|| panic!("no column {col}"));
    if s.is_empty() {
        None
    } else {
        Some(s.parse().unwrap_or_else(|_| panic!("{col}: {s}")))
    }
}

/// The rows of `sql` over the archive `db` in `dir`, as JSON objects.
fn sql_json(dir: &Path, sql: &str) -> Vec<Value> {
    let out = ok(dir, &["sql", "--archive", "db", "--format", "json", "-c", sql]);
    serde_json::from_str(&out).unwrap()
}

fn report_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["report", "--archive", "db", "-o", "r.json"];
    args.extend_from_slice(extra);
    ok(dir, &args);
    serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap()
}

#[test]
fn json_figures_equal_the_analyses_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    let r = report_json(dir, &[]);
    assert_eq!(r["capture"]["name"], "ecu-4cores");
    assert_eq!(r["capture"]["format"], "btf");
    assert_eq!(r["capture"]["events"], 34357);

    let rt = query(dir, "response_times", &[]);
    let tasks = r["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), rt.len(), "one task row per response_times row");
    let (dl, bl, pr) = (
        query(dir, "deadline_summary", &[]),
        query(dir, "blocking", &[]),
        query(dir, "preemptions", &[]),
    );
    for t in tasks {
        let e = t["entity"].as_str().unwrap();
        let row = by(&rt, e).unwrap_or_else(|| panic!("{e} not in response_times"));
        for col in [
            "instances",
            "instances_left_out",
            "response_time_min",
            "response_time_avg",
            "response_time_p99",
            "response_time_max",
            "net_exec_avg",
            "net_exec_max",
        ] {
            assert_eq!(json_num(&t[col]), csv_num(&row, col), "{e} {col}");
        }
        let d = by(&dl, e).unwrap();
        assert_eq!(json_num(&t["deadline_misses"]), csv_num(&d, "misses"), "{e} misses");
        assert_eq!(
            json_num(&t["deadline_instances"]),
            csv_num(&d, "instances"),
            "{e} deadline instances"
        );
        if let Some(b) = by(&bl, e) {
            assert_eq!(
                json_num(&t["blocking_total"]),
                csv_num(&b, "blocking_total"),
                "{e} blocking_total"
            );
            assert_eq!(
                json_num(&t["blocking_max"]),
                csv_num(&b, "blocking_max"),
                "{e} blocking_max"
            );
        }
        let p = by(&pr, e).unwrap();
        assert_eq!(json_num(&t["preemptions"]), csv_num(&p, "preemptions"), "{e} preemptions");
    }
    // CPU time: every instance's time running, complete or not.
    let cpu = sql_json(
        dir,
        "SELECT entity, sum(net_exec) AS t FROM instances WHERE entity_type IN ('T', 'I') GROUP BY entity",
    );
    assert_eq!(cpu.len(), tasks.len());
    for c in &cpu {
        let t = tasks.iter().find(|t| t["entity"] == c["entity"]).unwrap();
        assert_eq!(json_num(&t["cpu_time"]), json_num(&c["t"]), "{} cpu_time", c["entity"]);
    }
    // Someone blocks in this capture, so the blocking figures are not all zero by accident.
    assert!(tasks.iter().any(|t| t["blocking_total"].as_f64().unwrap_or(0.0) > 0.0));

    // Histograms: the complete instances response_times counts, from its min to its max.
    for h in r["histograms"].as_array().unwrap() {
        let e = h["entity"].as_str().unwrap();
        let row = by(&rt, e).unwrap();
        let n: f64 = h["counts"].as_array().unwrap().iter().map(|c| c.as_f64().unwrap()).sum();
        assert_eq!(Some(n), csv_num(&row, "instances"), "{e} histogram total");
        assert_eq!(h["lo"].as_f64(), csv_num(&row, "response_time_min"), "{e} histogram lo");
        assert_eq!(h["hi"].as_f64(), csv_num(&row, "response_time_max"), "{e} histogram hi");
        assert_eq!(h["counts"].as_array().unwrap().len(), 20);
    }

    // Semaphores.
    let sem = query(dir, "semaphore_contention", &[]);
    let rs = r["semaphores"].as_array().unwrap();
    assert_eq!(rs.len(), sem.len());
    assert!(!rs.is_empty());
    for s in rs {
        let row = by(
            &sem.iter()
                .map(|x| {
                    let mut x = x.clone();
                    x.insert("entity".into(), x["semaphore"].clone());
                    x
                })
                .collect::<Vec<_>>(),
            s["semaphore"].as_str().unwrap(),
        )
        .unwrap();
        for col in [
            "requests",
            "contended_requests",
            "contention_ratio",
            "wait_avg",
            "wait_p99",
            "wait_max",
            "hold_max",
            "locked_time",
        ] {
            assert_eq!(json_num(&s[col]), csv_num(&row, col), "{} {col}", s["semaphore"]);
        }
    }

    // CPU load: the analysis with the report's window, point for point; at most 300 per core.
    let w = r["cpu_load"]["window_ns"].as_i64().unwrap();
    let load = query(dir, "cpu_load", &["--param", &format!("window={w}ns")]);
    let cores = r["cpu_load"]["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 4);
    let mut points = 0;
    for c in cores {
        let name = c["core"].as_str().unwrap();
        let pts = c["points"].as_array().unwrap();
        assert!(pts.len() <= 300, "{name}: {} points", pts.len());
        for p in pts {
            let start = p[0].to_string();
            let row =
                load.iter().find(|x| x["core"] == name && x["window_start"] == start).unwrap();
            assert_eq!(p[1].as_f64(), csv_num(row, "load"), "{name} at {}", p[0]);
        }
        points += pts.len();
    }
    assert_eq!(points, load.len(), "every cpu_load row is a point");

    // Deadline misses with a file that makes TASK_1MS_1 (max 46.2 us) miss a 40 us deadline.
    std::fs::write(dir.join("d.csv"), "TASK_1MS_1,40us\n").unwrap();
    let r = report_json(dir, &["--deadlines", "d.csv"]);
    let misses = ok(
        dir,
        &[
            "query",
            "deadline_misses",
            "--archive",
            "db",
            "--format",
            "csv",
            "--param",
            "deadlines=d.csv",
        ],
    );
    let n = misses.split("\r\n").filter(|l| !l.is_empty()).count() - 1;
    assert!(n > 0);
    assert_eq!(r["deadline_misses_total"].as_u64(), Some(n as u64));
    let worst = r["deadline_misses"][0]["lateness"].as_f64().unwrap();
    assert!(r["deadline_misses"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["lateness"].as_f64().unwrap() <= worst));
    let t = tasks.iter().position(|t| t["entity"] == "TASK_1MS_1").unwrap();
    assert_eq!(
        r["tasks"][t]["deadline_misses"]
            .as_u64()
            .or(r["tasks"][t]["deadline_misses"].as_f64().map(|v| v as u64)),
        Some(n as u64)
    );
    // A miss that was blocked says by whom, as blocking_instances does; one that was not,
    // nothing. TASK_1MS_16 waits for SEM_A, held by TASK_2MS_19, in some instances.
    std::fs::write(dir.join("d2.csv"), "TASK_1MS_16,178us\n").unwrap();
    let r2 = report_json(dir, &["--deadlines", "d2.csv"]);
    let blocked = scalar(
        dir,
        "db",
        "SELECT string_agg(instance || '=' || cause || ' held by ' || blocked_by || ' #' || \
         blocked_by_instance, ';' ORDER BY instance) FROM blocking_instances \
         WHERE entity = 'TASK_1MS_16' AND instance IN (SELECT unnest([6, 120, 132, 156]))",
    );
    let mut said: Vec<String> = r2["deadline_misses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["blocked_by"].is_string())
        .map(|m| format!("{}={}", m["instance"], m["blocked_by"].as_str().unwrap()))
        .collect();
    said.sort_by_key(|s| s.split('=').next().unwrap().parse::<i64>().unwrap());
    assert_eq!(said.join(";"), blocked);
    assert!(blocked.contains("SEM_A held by TASK_2MS_19 #"), "{blocked}");
    let unblocked =
        r2["deadline_misses"].as_array().unwrap().iter().filter(|m| m["blocked_by"].is_null());
    assert!(unblocked.count() > 0);
    // Who ran on a miss's core between its activation and its start: against a plain overlap
    // join of the intervals (no buckets), per instance.
    let ran = sql_json(
        dir,
        "WITH r AS (SELECT i.instance, o.entity, o.instance AS oi, \
               sum(least(o.ts + o.dur, i.start_ts) - greatest(o.ts, i.activate_ts)) AS t \
             FROM instances i JOIN intervals o ON o.core = i.core AND o.channel = 'state' \
               AND o.state IN ('running', 'polling') AND o.dur > 0 \
               AND o.entity_type IN ('T', 'I', 'ISR') \
               AND o.ts < i.start_ts AND o.ts + o.dur > i.activate_ts \
             WHERE i.entity = 'TASK_1MS_16' GROUP BY ALL) \
             SELECT instance, string_agg(entity || ' #' || oi || ' for ' || fmt_ns(t), ', ' \
               ORDER BY t DESC, entity, oi) AS ran FROM r GROUP BY ALL",
    );
    let mut before_start = 0;
    for m in r2["deadline_misses"].as_array().unwrap() {
        if m["entity"] != "TASK_1MS_16" {
            continue;
        }
        let want = ran.iter().find(|w| w["instance"] == m["instance"]).map(|w| &w["ran"]);
        assert_eq!(want.unwrap_or(&Value::Null), &m["start_delayed_by"], "{m}");
        before_start += usize::from(want.is_some());
    }
    assert!(before_start > 0);
    // Who preempted each miss, and how often, as preemption_instances counts it.
    for m in r2["deadline_misses"].as_array().unwrap() {
        let want = scalar(
            dir,
            "db",
            &format!(
                "SELECT string_agg(preempted_by || ' ×' || n, '; ' ORDER BY n DESC, preempted_by) \
                 FROM (SELECT preempted_by, count(*) AS n FROM preemption_instances \
                 WHERE preempted = {} AND instance = {} AND preempted_by IS NOT NULL \
                 GROUP BY ALL)",
                m["entity"].to_string().replace('"', "'"),
                m["instance"]
            ),
        );
        assert_eq!(m["preempted_by"].as_str().unwrap_or(""), want, "{m}");
    }
    assert!(r2["deadline_misses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["preempted_by"].is_string()));
    // The Gantt window is centred on the worst response time (issue #7).
    let g = &r["gantt"];
    let worst_rt = scalar(
        dir,
        "db",
        "SELECT entity || ' instance ' || instance FROM instances WHERE complete \
         AND entity_type IN ('T', 'I', 'ISR') ORDER BY response_time DESC, activate_ts LIMIT 1",
    );
    assert!(g["focus"].as_str().unwrap().starts_with(&format!("{worst_rt} ")), "{g}");
    // The worst instance is activated at 0: the window does not run before the capture.
    let ts_min: i64 = scalar(dir, "db", "SELECT ts_min FROM captures").parse().unwrap();
    assert!(g["from"].as_i64().unwrap() >= ts_min, "{g}");
    let rects: usize =
        g["lanes"].as_array().unwrap().iter().map(|l| l["slices"].as_array().unwrap().len()).sum();
    assert!(rects > 0 && rects <= 4000);
}

/// A capture spanning nearly 2^62 ns: who ran before a miss's start is still found (its
/// time buckets widen; 2^20 ns buckets made a list of 2^42 of them, which DuckDB refused,
/// and the report failed; found by fuzzing), and agrees with a plain overlap join.
#[test]
fn who_delayed_a_start_is_found_over_a_capture_of_2_pow_62_ns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (h, m): (i64, i64) = ((1 << 62) - 1, 1 << 61);
    std::fs::write(
        dir.join("t.btf"),
        format!(
            "#timeScale ns\n0,S,0,T,A,1,activate\n0,S,0,T,B,1,activate\n0,C0,0,T,B,1,start\n\
             10,S,0,T,A,2,activate\n{m},S,0,T,C,1,activate\n{m},C0,0,T,B,1,preempt\n\
             {m},C0,0,T,C,1,start\n{},C0,0,T,C,1,terminate\n{},C0,0,T,B,1,resume\n\
             {},C0,0,T,B,1,terminate\n{},C0,0,T,A,1,start\n{},C0,0,T,A,1,terminate\n\
             {},C0,0,T,A,2,start\n{h},C0,0,T,A,2,terminate\n",
            m + 1000,
            m + 1000,
            h - 20,
            h - 20,
            h - 10,
            h - 10
        ),
    )
    .unwrap();
    ok(dir, &["ingest", "--archive", "db", "t.btf"]);
    let r = report_json(dir, &[]);
    let ran = sql_json(
        dir,
        "WITH r AS (SELECT i.instance, o.entity, o.instance AS oi, \
               sum(least(o.ts + o.dur, i.start_ts) - greatest(o.ts, i.activate_ts)) AS t \
             FROM instances i JOIN intervals o ON o.core = i.core AND o.channel = 'state' \
               AND o.state IN ('running', 'polling') AND o.dur > 0 \
               AND o.entity_type IN ('T', 'I', 'ISR') \
               AND o.ts < i.start_ts AND o.ts + o.dur > i.activate_ts \
             WHERE i.entity = 'A' GROUP BY ALL) \
             SELECT instance, string_agg(entity || ' #' || oi || ' for ' || fmt_ns(t), ', ' \
               ORDER BY t DESC, entity, oi) AS ran FROM r GROUP BY ALL",
    );
    let misses: Vec<&Value> =
        r["deadline_misses"].as_array().unwrap().iter().filter(|m| m["entity"] == "A").collect();
    assert_eq!(misses.len(), 2, "{r}");
    for miss in misses {
        let want = ran.iter().find(|w| w["instance"] == miss["instance"]).map(|w| &w["ran"]);
        assert!(want.is_some(), "{miss}");
        assert_eq!(want.unwrap(), &miss["start_delayed_by"], "{miss}");
    }
}

#[test]
fn markdown_and_html_forms_carry_the_same_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    ok(dir, &["report", "--archive", "db", "-o", "r.md"]);
    ok(dir, &["report", "--archive", "db", "--capture", "ecu-4cores", "-o", "r.html"]);
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for title in [
        "Capture",
        "Tasks",
        "Deadline misses",
        "Semaphore contention",
        "CPU load per core",
        "Definitions",
    ] {
        assert!(md.contains(&format!("## {title}")), "markdown: {title}");
        assert!(html.contains(title), "html: {title}");
    }
    // TASK_1MS_1's response_time_max from the analysis, in the unit both forms use.
    let rt = query(dir, "response_times", &[]);
    let row = rt.iter().find(|r| r["entity"] == "TASK_1MS_1").unwrap();
    let max = csv_num(row, "response_time_max").unwrap();
    let shown = tracedb::report::human_ns(max);
    assert!(
        md.lines().any(|l| l.starts_with("| TASK_1MS_1 |") && l.contains(&shown)),
        "markdown shows {shown}"
    );
    assert!(html.contains("<td>TASK_1MS_1</td>") && html.contains(&shown));
    // The largest response_time_max is highlighted in both forms: bold in Markdown.
    let worst = rt
        .iter()
        .max_by(|a, b| {
            let v = |r: &BTreeMap<String, String>| csv_num(r, "response_time_max").unwrap_or(0.0);
            v(a).total_cmp(&v(b))
        })
        .unwrap();
    let bold =
        format!("**{}**", tracedb::report::human_ns(csv_num(worst, "response_time_max").unwrap()));
    let line = md.lines().find(|l| l.starts_with(&format!("| {} |", worst["entity"]))).unwrap();
    assert!(line.contains(&bold), "{bold} in {line}");
    // A capture with no events: the load section says so instead of an empty table.
    std::fs::write(dir.join("empty.btf"), "#version 2.1.0\n#timeScale ns\n").unwrap();
    ok(dir, &["ingest", "--archive", "db", "empty.btf"]);
    ok(dir, &["report", "--archive", "db", "--capture", "empty", "-o", "e.md"]);
    ok(dir, &["report", "--archive", "db", "--capture", "empty", "-o", "e.html"]);
    let e_md = std::fs::read_to_string(dir.join("e.md")).unwrap();
    assert!(
        e_md.contains("No core was occupied in this capture.") && !e_md.contains("| core |"),
        "{e_md}"
    );
    let e_html = std::fs::read_to_string(dir.join("e.html")).unwrap();
    assert!(e_html.contains("No core was occupied in this capture."));
    // Self-contained: no script, nothing fetched.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=") && !html.contains("href=") && !html.contains("@import"));
    assert!(html.matches("<svg").count() >= 3, "load chart, histograms, gantt");
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    // Unknown extension: usage error.
    let out = run(dir, &["report", "--archive", "db", "-o", "r.pdf"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The sample with every activation of `task` (after the first ms) made `by` ns earlier:
/// the same run, but that task waits longer for its core.
fn slower(task: &str, by: i64) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(sample_path()).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let (mut head, mut rows): (Vec<&str>, Vec<(i64, String)>) = (Vec::new(), Vec::new());
    let needle = format!(",T,{task},");
    for line in text.lines() {
        if line.starts_with('#') {
            head.push(line);
            continue;
        }
        let (ts, rest) = line.split_once(',').unwrap();
        let mut ts: i64 = ts.parse().unwrap();
        if line.contains(&needle) && line.ends_with(",activate") && ts >= 1_000_000 {
            ts -= by;
        }
        rows.push((ts, rest.to_string()));
    }
    rows.sort_by_key(|r| r.0); // stable: same-time lines keep their order
    let mut out = head.join("\n");
    out.push('\n');
    for (ts, rest) in rows {
        out.push_str(&format!("{ts},{rest}\n"));
    }
    out
}

#[test]
fn baseline_gate_exits_3_and_names_the_slower_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    std::fs::write(dir.join("slow.btf"), slower("TASK_1MS_1", 10_000)).unwrap();
    ok(dir, &["ingest", "--archive", "db", "slow.btf"]);

    let out = run(
        dir,
        &[
            "report",
            "--archive",
            "db",
            "--capture",
            "slow",
            "--baseline",
            "ecu-4cores",
            "-o",
            "cmp.json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(stderr.contains("TASK_1MS_1"), "{stderr}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
    let regs = r["comparison"]["regressions"].as_array().unwrap();
    assert!(!regs.is_empty());
    assert!(
        regs.iter().all(|g| g["entity"] == "TASK_1MS_1"),
        "only the changed task regressed: {regs:?}"
    );
    assert!(regs.iter().any(|g| g["metric"] == "response_time_avg"));
    assert_eq!(r["baseline"]["name"], "ecu-4cores");

    // The charts carry the baseline: each histogram bins both captures over their common
    // range (each total is that capture's instance count), and each core's load has the
    // baseline's windows (as many as the baseline's cpu_load gives at the same window).
    let (cur_rt, base_rt) =
        (query_of(dir, "2", "response_times", &[]), query_of(dir, "1", "response_times", &[]));
    let total =
        |v: &Value| -> f64 { v.as_array().unwrap().iter().map(|c| c.as_f64().unwrap()).sum() };
    let hists = r["histograms"].as_array().unwrap();
    assert!(!hists.is_empty());
    for h in hists {
        let e = h["entity"].as_str().unwrap();
        let (c, b) = (by(&cur_rt, e).unwrap(), by(&base_rt, e).unwrap());
        assert_eq!(Some(total(&h["counts"])), csv_num(&c, "instances"), "{e} current total");
        assert_eq!(
            Some(total(&h["baseline_counts"])),
            csv_num(&b, "instances"),
            "{e} baseline total"
        );
        let lo = csv_num(&c, "response_time_min")
            .unwrap()
            .min(csv_num(&b, "response_time_min").unwrap());
        let hi = csv_num(&c, "response_time_max")
            .unwrap()
            .max(csv_num(&b, "response_time_max").unwrap());
        assert_eq!((h["lo"].as_f64(), h["hi"].as_f64()), (Some(lo), Some(hi)), "{e} range");
    }
    let window = format!("window={}ns", r["cpu_load"]["window_ns"].as_i64().unwrap());
    let base_load = query_of(dir, "1", "cpu_load", &["--param", &window]);
    for core in r["cpu_load"]["cores"].as_array().unwrap() {
        let name = core["core"].as_str().unwrap();
        let n = base_load.iter().filter(|row| row["core"] == name).count();
        assert!(n > 0, "{name}: the baseline ran on it");
        assert_eq!(core["baseline_points"].as_array().unwrap().len(), n, "{name}");
    }

    // The other forms say it first too, and still get written.
    let out = run(
        dir,
        &["report", "--archive", "db", "--capture", "slow", "--baseline", "1", "-o", "cmp.md"],
    );
    assert_eq!(out.status.code(), Some(3));
    let md = std::fs::read_to_string(dir.join("cmp.md")).unwrap();
    let first_section = md.split("\n## ").nth(1).unwrap();
    assert!(
        first_section.starts_with("Regressions") && first_section.contains("TASK_1MS_1"),
        "{md}"
    );

    // A higher threshold than the change, or the capture against itself: exit 0.
    ok(
        dir,
        &[
            "report",
            "--archive",
            "db",
            "--capture",
            "slow",
            "--baseline",
            "slow",
            "-o",
            "same.html",
        ],
    );
    let same = std::fs::read_to_string(dir.join("same.html")).unwrap();
    assert!(same.contains("No regression beyond 5%"));
    assert!(same.contains("dashed: the baseline") && same.contains("Orange outline: the baseline"));
    assert!(same.matches("class=\"baseline\"").count() > 4, "load lines and histogram outlines");
    ok(
        dir,
        &[
            "report",
            "--archive",
            "db",
            "--capture",
            "slow",
            "--baseline",
            "1",
            "--threshold",
            "1000%",
            "-o",
            "t.json",
        ],
    );
    // Faster than the baseline is not a regression either.
    ok(
        dir,
        &["report", "--archive", "db", "--capture", "1", "--baseline", "slow", "-o", "faster.json"],
    );
}

/// Path of a Chromium binary, installing Debian's package when it is missing. None (with a
/// message) where it cannot be installed.
fn chromium() -> Option<String> {
    let find = || {
        ["chromium", "chromium-browser"].into_iter().find(|c| {
            Command::new(c).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
        })
    };
    if let Some(c) = find() {
        return Some(c.to_string());
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !apt(&["install", "-y", "chromium"]) {
        apt(&["update"]);
        apt(&["install", "-y", "chromium"]);
    }
    match find() {
        Some(c) => Some(c.to_string()),
        None => {
            eprintln!("skipped: headless Chromium is not installed and `apt-get install -y chromium` failed (not root or offline?)");
            None
        }
    }
}

/// The raw pixel bytes of a PNG (IDAT chunks inflated; filter bytes included).
fn png_pixels(png: &[u8]) -> Vec<u8> {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let (mut at, mut idat) = (8, Vec::new());
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        if kind == b"IDAT" {
            idat.extend_from_slice(&png[at + 8..at + 8 + len]);
        }
        at += 12 + len;
    }
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..]).read_to_end(&mut out).unwrap();
    out
}

#[test]
fn html_renders_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    ok(dir, &["report", "--archive", "db", "-o", "r.html"]);
    let Some(chrome) = chromium() else { return };
    let page = format!("file://{}", dir.join("r.html").display());
    let common = |profile: &str| {
        // coreutils' timeout: a stuck browser fails the test instead of hanging it.
        let mut c = Command::new("timeout");
        c.args(["120", chrome.as_str()]);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]);
        c.arg(format!("--user-data-dir={}", dir.join(profile).display()));
        c
    };
    let png = dir.join("shot.png");
    let out = common("p1")
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,2000")
        .arg(&page)
        .output()
        .unwrap();
    assert!(png.is_file(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
    let pixels = png_pixels(&std::fs::read(&png).unwrap());
    let mut seen = [false; 256];
    for b in &pixels {
        seen[*b as usize] = true;
    }
    let distinct = seen.iter().filter(|s| **s).count();
    let non_white = pixels.iter().filter(|b| **b < 200).count();
    assert!(
        distinct > 20 && non_white > 10_000,
        "blank screenshot? {distinct} byte values, {non_white} dark bytes"
    );

    let out = common("p2").arg("--dump-dom").arg(&page).output().unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    for title in [
        "tracedb report: ecu-4cores",
        "Tasks",
        "Deadline misses",
        "Semaphore contention",
        "CPU load per core",
        "Response-time histograms",
        "Gantt chart around the worst response time",
        "Definitions",
    ] {
        assert!(dom.contains(title), "{title} not in the rendered DOM");
    }
    assert!(dom.contains("<svg") && dom.contains("<polyline"));
}

#[test]
fn non_btf_capture_gets_the_state_section() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    // Pretend the capture came from another format.
    let manifest = dir.join("db/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("\"format\": \"btf\""), "manifest layout changed: {text}");
    std::fs::write(&manifest, text.replace("\"format\": \"btf\"", "\"format\": \"prv\"")).unwrap();
    ok(dir, &["report", "--archive", "db", "-o", "r.md"]);
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    assert!(md.contains("## State and channel time"), "{md}");
    assert!(md.contains("Time per state (state_time)") && md.contains("(channel_time)"), "{md}");
}

#[test]
fn html_stays_small_and_bounded_at_tens_of_thousands_of_instances() {
    use tracedb::synth::{write_btf, SynthConfig};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = std::io::BufWriter::new(std::fs::File::create(dir.join("big.btf")).unwrap());
    let stats =
        write_btf(file, &SynthConfig { duration_ns: 1_000_000_000, ..SynthConfig::default() })
            .unwrap();
    assert!(stats.activations > 10_000);
    ok(dir, &["ingest", "--archive", "db", "big.btf"]);
    ok(dir, &["report", "--archive", "db", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    let tasks = html.matches("<figure>").count();
    let rects = html.matches("<rect").count();
    assert!(rects <= 4000 + 20 * tasks + 6, "{rects} rectangles");
    for line in html.split("<polyline").skip(1) {
        let points = line.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(points.split(' ').count() <= 150);
    }
}

#[test]
fn a_paraver_capture_gets_its_states_in_place_of_the_task_sections() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("t.prv"),
        "#Paraver (d):1000_ns:0:1:1(2:1)\n1:0:1:1:1:0:500:1\n1:0:1:1:2:0:700:2\n2:0:1:1:1:100:9:3\n",
    )
    .unwrap();
    ok(dir, &["ingest", "--archive", "db", "t.prv"]);
    ok(dir, &["report", "--archive", "db", "-o", "r.md"]);
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    let heads: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    // (Diagnostics first: no .pcf/.row beside the trace.)
    assert_eq!(
        heads,
        ["## Diagnostics", "## Capture", "## State and channel time", "## Definitions"],
        "{md}"
    );
}

#[test]
fn a_report_written_through_a_symlink_keeps_the_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    std::os::unix::fs::symlink("real.md", dir.join("link.md")).unwrap();
    ok(dir, &["report", "--archive", "db", "-o", "link.md"]);
    assert!(std::fs::symlink_metadata(dir.join("link.md")).unwrap().file_type().is_symlink());
    let md = std::fs::read_to_string(dir.join("real.md")).unwrap();
    assert!(md.contains("ecu-4cores"), "the report went to the link's target");
}

#[test]
fn a_short_capture_beside_a_long_one_reports_with_a_bounded_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // 200 s: at the short capture's 20 µs window, 10 million windows per core.
    let long = "#version 2.1.0\n0,STI,0,T,A,0,activate\n0,Core_0,0,T,A,0,start\n\
                200000000000,Core_0,0,T,A,0,terminate\n";
    std::fs::write(d.join("long.btf"), long).unwrap();
    // 1.5 ms, names that Markdown would take as HTML, and a task the long one lacks.
    let short = "#version 2.1.0\n0,STI,0,T,<b>A,0,activate\n0,Core_0,0,T,<b>A,0,start\n\
                 1500000,Core_0,0,T,<b>A,0,terminate\n";
    std::fs::write(d.join("short.btf"), short).unwrap();
    ok(d, &["ingest", "--archive", "db", "long.btf", "short.btf"]);
    let md = d.join("r.md");
    ok(
        d,
        &[
            "report",
            "--archive",
            "db",
            "--capture",
            "short",
            "--baseline",
            "long",
            "-o",
            md.to_str().unwrap(),
        ],
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("&lt;b&gt;A") && !md.contains("<b>A"), "{md}");
    assert!(md.contains("Only in the baseline: A."), "{md}");
    let json = report_json(d, &["--capture", "short", "--baseline", "long"]);
    let cores = json["cpu_load"]["cores"].as_array().unwrap();
    for c in cores {
        let points = c["points"].as_array().unwrap().len();
        let base = c["baseline_points"].as_array().unwrap().len();
        assert!(points <= 150 && base <= points, "{points} points, {base} baseline points");
    }
    // 0..1.5 ms: 150 windows of 10 µs (the last ends at the capture's last instant).
    assert_eq!(json["cpu_load"]["window_ns"], 10_000, "1.5 ms in at most 150 windows");
}

#[test]
fn a_paraver_capture_without_state_records_says_so_instead_of_an_empty_table() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("ev.prv"), "#Paraver (d):100_ns:0:1:1(1:1)\n2:0:1:1:1:10:6:1\n").unwrap();
    ok(d, &["ingest", "--archive", "db", "ev.prv"]);
    ok(d, &["report", "--archive", "db", "-o", "r.md"]);
    ok(d, &["report", "--archive", "db", "-o", "r.html"]);
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    let state_time = md.split("### Time per state").nth(1).unwrap_or_default();
    assert!(state_time.contains("No rows"), "{md}");
    assert!(!md.contains("|  |"), "{md}");
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(!html.contains("<tr></tr>"), "an empty table row in the HTML");
}

/// A deadline miss whose semaphore's holder was preempted meanwhile says who ran on the
/// holder's core instead, as `priority_inversions` has it, and so for each later holder when
/// it waited in a mutex's queue (a synthetic system with mutexes whose holders may be
/// preempted and whose waiters queue).
#[test]
fn a_miss_behind_a_preempted_holder_names_who_ran_instead() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    util::write_mutex_trace(dir, 200);
    ok(dir, &["ingest", "--archive", "db", "m.btf"]);
    std::fs::write(dir.join("d.csv"), "TASK_1MS_*,100us\n").unwrap();
    let r = report_json(dir, &["--deadlines", "d.csv"]);
    let misses = r["deadline_misses"].as_array().unwrap();
    // Who ran instead, per waiter instance and holder, in one query, with whether the holder
    // is the one the request waited for first.
    let rows = sql_json(
        dir,
        "SELECT p.waiter, p.waiter_instance, p.holder, p.holder_instance, \
             (p.holder = l.blocked_by AND p.holder_instance = l.blocked_by_instance) AS first, \
             string_agg(p.ran || ' #' || p.ran_instance || ' for ' || fmt_ns(p.delay), ', ' \
                        ORDER BY p.delay DESC, p.ran, p.ran_instance) AS ran \
             FROM priority_inversions p JOIN lock_requests l \
               ON l.semaphore = p.semaphore AND l.process = p.waiter \
              AND l.process_instance = p.waiter_instance AND l.request_ts = p.request_ts \
             GROUP BY ALL",
    );
    let (mut kept_off, mut later) = (0, 0);
    for m in misses {
        let said = m["blocked_by"].as_str().unwrap_or("");
        let want: Vec<_> = rows
            .iter()
            .filter(|w| w["waiter"] == m["entity"] && w["waiter_instance"] == m["instance"])
            .collect();
        if want.is_empty() {
            assert!(!said.contains("kept off its core"), "{m}");
        }
        for w in want {
            kept_off += 1;
            let ran = w["ran"].as_str().unwrap();
            let phrase = if w["first"] == true {
                format!(" (kept off its core by {ran}")
            } else {
                later += 1;
                let (h, i) = (w["holder"].as_str().unwrap(), &w["holder_instance"]);
                format!("later held by {h} #{i}, kept off its core by {ran}")
            };
            assert!(said.contains(&phrase), "{m}: {phrase}");
        }
    }
    assert!(later > 0, "no miss behind a later holder of a queue: {misses:?}");
    assert!(kept_off > 0, "no miss behind a preempted holder: {misses:?}");
}

/// The semaphore table says which requests its statistics leave out: a request still
/// waiting when the capture ends has no wait, and a hold not released has no length.
#[test]
fn the_semaphore_table_says_what_its_statistics_leave_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("s.btf"),
        "#timeScale ns\n0,STI,0,T,H,0,activate\n0,Core_0,0,T,H,0,start\n\
         0,STI,0,T,W,0,activate\n0,Core_1,0,T,W,0,start\n\
         5,H,0,SEM,S,0,requestsemaphore\n5,H,0,SEM,S,0,assigned\n\
         8,W,0,SEM,S,0,requestsemaphore\n8,W,0,SEM,S,0,waiting\n8,Core_1,0,T,W,0,poll\n\
         20,H,0,SEM,T2,0,requestsemaphore\n20,H,0,SEM,T2,0,assigned\n\
         22,H,0,SEM,T2,0,released\n30,Core_0,0,T,H,0,preempt\n",
    )
    .unwrap();
    ok(dir, &["ingest", "--archive", "db", "s.btf"]);
    ok(dir, &["report", "--archive", "db", "-o", "r.md"]);
    ok(dir, &["report", "--archive", "db", "-o", "r.html"]);
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for text in [&md, &html] {
        assert!(
            text.contains("still waiting at its end, given up, or asked before it began): S 1."),
            "{text}"
        );
        assert!(
            text.contains("Not in hold max: holds still held at the end of the capture: S 1."),
            "{text}"
        );
        let said: Vec<_> = text.lines().filter(|l| l.contains("Not in ")).collect();
        assert_eq!(said.len(), 2, "{text}");
        assert!(said.iter().all(|l| !l.contains("T2")), "T2 left nothing out: {said:?}");
    }
}

/// A task hung past its deadline when the capture ended is among the report's misses, its
/// blank response time and lateness explained in both forms.
#[test]
fn an_instance_unfinished_past_its_deadline_is_a_reported_miss() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // H is activated every 10 ns; its instance 1 starts at 10 and is still running at 40.
    let trace = "#timeScale ns\n0,S,0,T,H,0,activate\n0,Core_0,0,T,H,0,start\n\
                 5,Core_0,0,T,H,0,terminate\n10,S,0,T,H,1,activate\n10,Core_0,0,T,H,1,start\n\
                 20,S,0,T,H,2,activate\n40,S,0,T,X,0,activate\n";
    std::fs::write(d.join("t.btf"), trace).unwrap();
    ok(d, &["ingest", "--archive", "db", "t.btf"]);
    ok(d, &["report", "--archive", "db", "-o", "r.md"]);
    ok(d, &["report", "--archive", "db", "-o", "r.html"]);
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    let note = "2 of them had not terminated when the capture ended, past their deadline";
    assert!(md.contains("2 misses, worst lateness first") && md.contains(note), "{md}");
    assert!(md.contains("| H | 1 | 10 |  | 10 |  |"), "{md}");
    assert!(html.contains(note), "{html}");
    let json = report_json(d, &[]);
    assert_eq!(json["deadline_misses_total"].as_u64(), Some(2), "{json}");
}

#[test]
fn the_task_table_says_what_it_left_out_and_gives_every_instance_cpu_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A: instance 0 complete (runs 10..30), instance 1 activated at 40, runs 50..60 and
    // 90..100, not terminated. B: logged only from a resume (no activate), runs 60..90.
    let trace = "#timeScale ns\n0,Core_0,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n\
                 30,Core_0,0,T,A,0,terminate\n40,Core_0,0,T,A,1,activate\n\
                 50,Core_0,0,T,A,1,start\n60,Core_0,0,T,A,1,preempt\n60,Core_0,0,T,B,0,resume\n\
                 90,Core_0,0,T,B,0,preempt\n90,Core_0,0,T,A,1,resume\n\
                 100,Core_0,0,STI,tick,0,trigger\n";
    std::fs::write(d.join("t.btf"), trace).unwrap();
    ok(d, &["ingest", "--archive", "db", "t.btf"]);
    let json = report_json(d, &[]);
    let task = |e: &str| {
        json["tasks"].as_array().unwrap().iter().find(|t| t["entity"] == e).unwrap().clone()
    };
    let (a, b) = (task("A"), task("B"));
    assert_eq!(
        (json_num(&a["instances"]), json_num(&a["instances_left_out"])),
        (Some(1.0), Some(1.0))
    );
    assert_eq!(
        (json_num(&b["instances"]), json_num(&b["instances_left_out"])),
        (Some(0.0), Some(1.0))
    );
    // 20 ns in instance 0, 10 + 10 in instance 1 (running when the capture ends at 100).
    assert_eq!(json_num(&a["cpu_time"]), Some(40.0));
    assert_eq!(json_num(&b["cpu_time"]), Some(30.0));
    assert_eq!(json_num(&a["net_exec_max"]), Some(20.0), "statistics stay over complete instances");

    ok(d, &["report", "--archive", "db", "-o", "r.md"]);
    ok(d, &["report", "--archive", "db", "-o", "r.html"]);
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(md.contains("| task | type | instances | left out |"), "{md}");
    assert!(md.contains("| B | T | 0 | 1 | - |") && md.contains("| 30 ns |\n"), "{md}");
    let note = "`left out` counts the others (2 in all";
    assert!(
        md.contains(note) && md.contains("1 of the 2 tasks and ISRs has no complete instance"),
        "{md}"
    );
    assert!(html.contains("<th>left out</th>") && html.contains("<th>CPU time</th>"), "{html}");
    assert!(html.contains("counts the others (2 in all"), "{html}");
}

/// A baseline compared with a capture ingested with other deadlines: each is judged by its
/// own (`ingest --deadlines`), so the same trace "misses" in one and not in the other. The
/// report says that the deadlines differ (in every form and on standard error), and
/// `--deadlines` judges both by one file.
#[test]
fn a_baseline_with_other_stored_deadlines_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("d.csv"), "TASK_100MS_*,15ms\n").unwrap();
    let sample = sample_path();
    let sample = sample.to_str().unwrap();
    ok(dir, &["ingest", "--archive", "db", "--deadlines", "d.csv", "--name", "judged", sample]);
    ok(dir, &["ingest", "--archive", "db", "--force", "--name", "plain", sample]);
    let args = ["report", "--archive", "db", "--capture", "judged", "--baseline", "plain"];
    let out = run(dir, &[&args[..], &["-o", "cmp.json"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The same events: only the deadlines make the two misses of each 100 ms task.
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(stderr.contains("TASK_100MS_8: deadline misses 0 -> 2"), "{stderr}");
    let note = "the deadlines stored at ingest differ (this capture: 1 rule, the baseline: none)";
    assert!(stderr.contains(note), "{stderr}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
    let json_note = r["comparison"]["deadlines_note"].as_str().unwrap_or_default();
    assert!(json_note.contains(note), "{json_note}");
    for form in ["cmp.md", "cmp.html"] {
        let out = run(dir, &[&args[..], &["-o", form]].concat());
        assert_eq!(out.status.code(), Some(3));
        let text = std::fs::read_to_string(dir.join(form)).unwrap();
        assert!(text.contains(note), "{form}: {text}");
    }
    // One file for both: no new miss, and the note says the file wins where it names a task.
    let out = run(dir, &[&args[..], &["--deadlines", "d.csv", "-o", "one.md"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(dir.join("one.md")).unwrap();
    assert!(md.contains("No regression beyond 5% and no new deadline miss"), "{md}");
    assert!(md.contains("--deadlines d.csv judges both"), "{md}");
    // Nor do captures that share no task: no miss count is compared.
    std::fs::write(dir.join("other.btf"), "#version 2.1.0\n0,STI_A,0,T,TASK_A,0,activate\n")
        .unwrap();
    ok(dir, &["ingest", "--archive", "db", "other.btf"]);
    let out = run(
        dir,
        &[&args[..3], &["--capture", "other", "--baseline", "judged", "-o", "o.md"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("differ"));
    // Captures ingested with the same deadlines (or none) get no note.
    let out = run(
        dir,
        &[
            "report",
            "--archive",
            "db",
            "--capture",
            "plain",
            "--baseline",
            "plain",
            "-o",
            "same.md",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let md = std::fs::read_to_string(dir.join("same.md")).unwrap();
    assert!(!md.contains("deadlines stored at ingest differ"), "{md}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("differ"));
}

/// Without `--capture`, a report is of the most recent capture (the highest id); over an
/// archive of several, standard error says which, so nobody takes it for the whole archive.
#[test]
fn a_report_without_capture_names_the_one_it_is_of() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    let out = run(dir, &["report", "--archive", "db", "-o", "one.md"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "one capture: nothing to say");
    std::fs::write(dir.join("slow.btf"), slower("TASK_1MS_1", 10_000)).unwrap();
    ok(dir, &["ingest", "--archive", "db", "slow.btf"]);
    let out = run(dir, &["report", "--archive", "db", "-o", "two.md"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tracedb: note: a report is of one capture: capture 2 'slow', the most recent of 2 \
         (--capture picks another)\n"
    );
    assert!(std::fs::read_to_string(dir.join("two.md"))
        .unwrap()
        .starts_with("# tracedb report: slow\n"));
    let out = run(dir, &["report", "--archive", "db", "--capture", "1", "-o", "first.md"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// The regression message of two captures of one name (the same system captured again
/// under its name) tells them apart by id.
#[test]
fn a_regression_between_captures_of_one_name_names_their_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sample(dir);
    std::fs::write(dir.join("slow.btf"), slower("TASK_1MS_1", 10_000)).unwrap();
    ok(dir, &["ingest", "--archive", "db", "--name", "ecu-4cores", "slow.btf"]);
    let out =
        run(dir, &["report", "--archive", "db", "--capture", "2", "--baseline", "1", "-o", "c.md"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "tracedb: error: regression: ecu-4cores (capture 2) against baseline ecu-4cores \
             (capture 1): TASK_1MS_1: "
        ),
        "{err}"
    );
}
