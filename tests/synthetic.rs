//! A generated multi-core system (src/synth/) whose counts are known, through the whole
//! pipeline: ingest, derive, Parquet, DuckDB views; and every derived instance compared field
//! by field with what the simulator says the instance did; and every derived table and
//! predefined analysis over BTF, row by row, with what the simulator did.
use crate::util::{csv, ok, scalar};
use std::collections::HashMap;
use tracedb::synth::{
    write_btf, write_btf_with_truth, SynthConfig, SynthTruth, TruthActivation, TruthCutInstance,
    TruthInstance, TruthLock, TruthSemState, TruthWait,
};

#[test]
fn synthetic_system_round_trips_with_exact_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("synth.btf");
    let cfg = SynthConfig { duration_ns: 100_000_000, ..SynthConfig::default() };
    let stats = write_btf(std::fs::File::create(&path).unwrap(), &cfg).unwrap();
    assert!(stats.lines > 10_000, "a real workload: {} lines", stats.lines);
    ok(tmp.path(), &["ingest", "--archive", "db", "synth.btf"]);

    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events"), stats.lines.to_string());
    // The generator writes valid state machines: nothing to complain about.
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT kind, count(*) AS n FROM diagnostics GROUP BY kind ORDER BY kind"
        ),
        "kind,n\n"
    );
    let processes = "entity_type IN ('T', 'I')";
    assert_eq!(
        scalar(
            tmp.path(),
            "db",
            &format!("SELECT count(*) FROM instances WHERE {processes} AND complete")
        ),
        stats.terminations.to_string()
    );
    assert_eq!(
        scalar(
            tmp.path(),
            "db",
            &format!(
                "SELECT count(*) FROM instances WHERE {processes} AND activate_ts IS NOT NULL"
            )
        ),
        stats.activations.to_string()
    );
    assert_eq!(
        scalar(
            tmp.path(),
            "db",
            &format!("SELECT sum(preemptions) FROM instances WHERE {processes}")
        ),
        stats.preemptions.to_string()
    );
    // Identities of the metric definitions on every complete instance.
    let broken = scalar(
        tmp.path(),
        "db",
        &format!(
            "SELECT count(*) FROM instances WHERE {processes} AND complete AND (
               response_time <> start_delay + gross_exec
               OR gross_exec <> net_exec + ready_time + waiting_time + polling_time + parking_time)"
        ),
    );
    assert_eq!(broken, "0");
    // Core occupancy never overlaps and sums to the tasks' running + polling time.
    let overlaps = scalar(
        tmp.path(),
        "db",
        "SELECT count(*) FROM (SELECT ts, dur, lead(ts) OVER (PARTITION BY core ORDER BY ts) AS next \
         FROM intervals WHERE channel = 'running') WHERE next < ts + dur",
    );
    assert_eq!(overlaps, "0");
    let busy = scalar(tmp.path(), "db", "SELECT sum(dur) FROM intervals WHERE channel = 'running'");
    let on_core = scalar(
        tmp.path(),
        "db",
        &format!("SELECT sum(dur) FROM intervals WHERE channel = 'state' AND state IN ('running', 'polling') AND {processes}"),
    );
    assert_eq!(busy, on_core);
    // Every contended lock request waited, and holds are positive.
    let bad_locks = scalar(
        tmp.path(),
        "db",
        "SELECT count(*) FROM lock_requests WHERE released_ts IS NOT NULL AND (hold < 0 OR wait < 0 OR (contended AND wait = 0))",
    );
    assert_eq!(bad_locks, "0");
    assert_ne!(scalar(tmp.path(), "db", "SELECT count(*) FROM lock_requests WHERE contended"), "0");
}

/// Columns of `instances` compared with the simulator's truth, for tasks and ISRs.
const PROCESS_COLUMNS: [&str; 16] = [
    "entity_type",
    "activate_ts",
    "start_ts",
    "terminate_ts",
    "core",
    "response_time",
    "start_delay",
    "gross_exec",
    "net_exec",
    "ready_time",
    "waiting_time",
    "polling_time",
    "parking_time",
    "preemptions",
    "migrations",
    "complete",
];

/// Columns compared for runnables (the others do not apply to them and are NULL).
const RUNNABLE_COLUMNS: [&str; 12] = [
    "entity_type",
    "activate_ts",
    "start_ts",
    "terminate_ts",
    "core",
    "response_time",
    "start_delay",
    "gross_exec",
    "net_exec",
    "ready_time",
    "preemptions",
    "complete",
];

/// The CSV text tracedb should print for `column` of the instance `i`.
fn truth_value(i: &TruthInstance, column: &str) -> String {
    match column {
        "entity_type" => i.entity_type.to_string(),
        "activate_ts" => i.activate_ts.to_string(),
        "start_ts" => i.start_ts.to_string(),
        "terminate_ts" => i.terminate_ts.to_string(),
        "core" => i.core.clone(),
        "response_time" => (i.terminate_ts - i.activate_ts).to_string(),
        "start_delay" => (i.start_ts - i.activate_ts).to_string(),
        "gross_exec" => (i.terminate_ts - i.start_ts).to_string(),
        "net_exec" => i.net_exec.to_string(),
        "ready_time" => i.ready_time.to_string(),
        "polling_time" => i.polling_time.to_string(),
        "waiting_time" => i.waiting_time.to_string(),
        "parking_time" => i.parking_time.to_string(),
        "preemptions" => i.preemptions.to_string(),
        "migrations" => i.migrations.to_string(),
        "complete" => "true".to_string(),
        other => panic!("no truth for column {other}"),
    }
}

/// Every field of every instance tracedb derives, against what the simulator did.
#[test]
fn synthetic_instances_match_the_simulator_exactly() {
    // The default system; one with more ISRs and lock contention; a crowded two-core one.
    // Each seed was picked for its many active waits (most seeds have few or none).
    let ms = 1_000_000;
    let systems = [
        SynthConfig { duration_ns: 250 * ms, ..SynthConfig::default() },
        SynthConfig { isrs: 4, seed: 4, duration_ns: 250 * ms, ..SynthConfig::default() },
        SynthConfig {
            cores: 2,
            tasks: 16,
            isrs: 4,
            seed: 10,
            duration_ns: 250 * ms,
            ..SynthConfig::default()
        },
    ];
    for cfg in systems {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("synth.btf");
        let (stats, truth) =
            write_btf_with_truth(std::fs::File::create(&path).unwrap(), &cfg).unwrap();
        let truth = truth.instances;
        ok(tmp.path(), &["ingest", "--archive", "db", "synth.btf"]);
        let procs: Vec<&TruthInstance> = truth.iter().filter(|i| i.entity_type != "R").collect();
        let with = |f: fn(&TruthInstance) -> bool| procs.iter().filter(|i| f(i)).count();
        println!(
            "{cfg:?}: {} lines, {} task/ISR instances ({} preempted, {} polled, {} started late), \
             {} runnable instances",
            stats.lines,
            procs.len(),
            with(|i| i.preemptions > 0),
            with(|i| i.polling_time > 0),
            with(|i| i.start_ts > i.activate_ts),
            truth.len() - procs.len()
        );
        // The comparison means something only if the system does all of it.
        assert!(with(|i| i.preemptions > 1) > 0 && with(|i| i.polling_time > 0) > 0);
        assert!(with(|i| i.entity_type == "I" && i.start_ts > i.activate_ts) > 0);
        let diffs = instance_diffs(tmp.path(), &truth);
        assert!(
            diffs.is_empty(),
            "{} differences with the simulator ({cfg:?}), first ones:\n{}",
            diffs.len(),
            diffs.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

/// Every complete instance row tracedb derived in the archive `db` of `dir` against the
/// truth, and the task that ran each runnable against its parent entity: the differences.
/// (The incomplete ones: [`cut_diffs`].)
fn instance_diffs(dir: &std::path::Path, truth: &[TruthInstance]) -> Vec<String> {
    let mut cols_sql = String::from("entity, instance");
    for c in PROCESS_COLUMNS {
        cols_sql.push_str(", ");
        cols_sql.push_str(c);
    }
    let out = csv(
        dir,
        "db",
        &format!(
            "SELECT {cols_sql} FROM instances WHERE entity_type IN ('T', 'I', 'R') AND complete"
        ),
    );
    let mut rows: HashMap<(String, u64), Vec<String>> = HashMap::new();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(cols_sql.replace(' ', "").as_str()));
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 2 + PROCESS_COLUMNS.len(), "{line}");
        let key = (f[0].to_string(), f[1].parse().unwrap());
        let dup = rows.insert(key, f[2..].iter().map(ToString::to_string).collect());
        assert!(dup.is_none(), "two rows for {line}");
    }
    let mut diffs = Vec::new();
    if rows.len() != truth.len() {
        diffs.push(format!("{} instance rows, {} simulated instances", rows.len(), truth.len()));
    }
    for i in truth {
        let Some(row) = rows.get(&(i.entity.clone(), i.instance)) else {
            diffs.push(format!("{} {} {}: no row", i.entity_type, i.entity, i.instance));
            continue;
        };
        let columns: &[&str] =
            if i.entity_type == "R" { &RUNNABLE_COLUMNS } else { &PROCESS_COLUMNS };
        for c in columns {
            let k = PROCESS_COLUMNS.iter().position(|p| p == c).unwrap();
            let want = truth_value(i, c);
            if row[k] != want {
                diffs.push(format!(
                    "{} {} instance {}: {c} expected {want}, tracedb {}",
                    i.entity_type, i.entity, i.instance, row[k]
                ));
            }
        }
    }
    // The task that ran each runnable is its parent entity.
    let parents = csv(dir, "db", "SELECT name, parent FROM entities WHERE type = 'R'");
    let parent: HashMap<&str, &str> =
        parents.lines().skip(1).filter_map(|l| l.split_once(',')).collect();
    for i in truth.iter().filter(|i| i.entity_type == "R") {
        let task = i.task.as_ref().map(|t| t.0.as_str());
        if parent.get(i.entity.as_str()).copied() != task {
            diffs.push(format!("parent of {} is not {task:?}", i.entity));
        }
    }
    diffs
}

// ---------------------------------------------------------------------------------------
// The derived tables and the predefined analyses against the simulator's truth.
// ---------------------------------------------------------------------------------------

/// One expected cell: exact text, a number tracedb rounds to `decimals` places, or one of
/// several equally right answers (an arg_max over a tie).
#[derive(Debug, Clone)]
enum Cell {
    Is(String),
    Rounded(f64, i32),
    OneOf(Vec<String>),
}

impl Cell {
    fn ok(&self, got: &str) -> bool {
        match self {
            Cell::Is(s) => s == got,
            Cell::OneOf(v) => v.iter().any(|s| s == got),
            Cell::Rounded(exact, d) => {
                let Ok(g) = got.parse::<f64>() else { return false };
                let scale = 10f64.powi(*d);
                // A correct rounding: a multiple of 10^-d within half a unit of the exact value.
                (g * scale - (g * scale).round()).abs() < 1e-6
                    && (g - exact).abs() <= 0.5 / scale + 1e-9 * exact.abs().max(1.0)
            }
        }
    }
}

fn is<T: ToString>(v: T) -> Cell {
    Cell::Is(v.to_string())
}

/// NULL prints as an empty CSV field.
fn opt<T: ToString>(v: Option<T>) -> Cell {
    Cell::Is(v.map(|v| v.to_string()).unwrap_or_default())
}

/// Expected rows of an analysis.
type Rows = Vec<Vec<Cell>>;

/// Statistics of a list of integers, by the README's definitions.
struct Stats(Vec<i64>);

impl Stats {
    fn new(mut v: Vec<i64>) -> Self {
        v.sort_unstable();
        Stats(v)
    }
    fn n(&self) -> usize {
        self.0.len()
    }
    fn min(&self) -> Cell {
        opt(self.0.first())
    }
    fn max(&self) -> Cell {
        opt(self.0.last())
    }
    fn sum(&self) -> i64 {
        self.0.iter().sum()
    }
    fn total(&self) -> Cell {
        opt((!self.0.is_empty()).then(|| self.sum()))
    }
    fn mean(&self) -> f64 {
        self.sum() as f64 / self.n() as f64
    }
    /// Mean rounded to 0.1 (NULL without values).
    fn avg(&self) -> Cell {
        if self.0.is_empty() {
            return is("");
        }
        Cell::Rounded(self.mean(), 1)
    }
    /// Nearest rank: the smallest value that at least `pct` % of the values do not exceed.
    fn pct(&self, pct: usize) -> Cell {
        if self.0.is_empty() {
            return is("");
        }
        let rank = (pct * self.n()).div_ceil(100).max(1);
        is(self.0[rank - 1])
    }
    /// Sample standard deviation rounded to 0.1 (NULL under two values).
    fn stddev(&self) -> Cell {
        if self.n() < 2 {
            return is("");
        }
        let m = self.mean();
        let ss: f64 = self.0.iter().map(|&x| (x as f64 - m).powi(2)).sum();
        Cell::Rounded((ss / (self.n() - 1) as f64).sqrt(), 1)
    }
}

/// Runs `args` (a `sql -c` or a `query`) with CSV output; rows as name → value maps.
fn rows_of(dir: &std::path::Path, args: &[&str]) -> Vec<HashMap<String, String>> {
    let mut all = args.to_vec();
    all.extend(["--archive", "db", "--format", "csv"]);
    let out = ok(dir, &all);
    let mut rows = crate::analyses::parse_csv(&out).into_iter();
    let header = rows.next().unwrap_or_default();
    rows.map(|r| header.iter().cloned().zip(r).collect()).collect()
}

/// Compares an analysis's rows with the expected ones, keyed by the first `key` columns;
/// returns the differences.
fn compare(
    what: &str,
    got: &[HashMap<String, String>],
    cols: &[&str],
    key: usize,
    want: Vec<Vec<Cell>>,
) -> Vec<String> {
    let key_of = |cells: &[String]| cells[..key].join("|");
    let mut diffs = Vec::new();
    let mut got_rows: HashMap<String, Vec<String>> = HashMap::new();
    for r in got {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| r.get(*c).cloned().unwrap_or_else(|| panic!("{what}: no column {c}")))
            .collect();
        if got_rows.insert(key_of(&cells), cells.clone()).is_some() {
            diffs.push(format!("{what}: two rows for {}", key_of(&cells)));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for w in &want {
        let k: Vec<String> = w[..key]
            .iter()
            .map(|c| match c {
                Cell::Is(s) => s.clone(),
                other => panic!("{what}: key cell {other:?}"),
            })
            .collect();
        let k = k.join("|");
        seen.insert(k.clone());
        let Some(g) = got_rows.get(&k) else {
            diffs.push(format!("{what}: no row for {k}"));
            continue;
        };
        for ((c, cell), v) in cols.iter().zip(w).zip(g) {
            if !cell.ok(v) {
                diffs.push(format!("{what} {k}: {c} expected {cell:?}, tracedb {v}"));
            }
        }
    }
    for k in got_rows.keys().filter(|k| !seen.contains(*k)) {
        diffs.push(format!("{what}: unexpected row {k}"));
    }
    println!("{what}: {} rows of {} columns compared", want.len(), cols.len());
    diffs
}

/// A deadline file's rules: `(pattern, ns)`; a pattern ending in `*` is a prefix glob.
type Rules<'a> = &'a [(&'a str, i64)];

/// The deadline a rule list gives `entity`: an exact name beats a glob, a longer glob a
/// shorter one.
fn rule_for(rules: Rules, entity: &str) -> Option<i64> {
    rules
        .iter()
        .filter(|(p, _)| match p.strip_suffix('*') {
            Some(prefix) => entity.starts_with(prefix),
            None => *p == entity,
        })
        .max_by_key(|(p, _)| (!p.ends_with('*'), p.len()))
        .map(|&(_, d)| d)
}

/// The deadline of a process instance and its source: a query-time file beats the ingest
/// one, which beats the implicit deadline.
fn deadline_of(
    i: &TruthInstance,
    at_query: Rules,
    at_ingest: Rules,
) -> Option<(i64, &'static str)> {
    rule_for(at_query, &i.entity)
        .or_else(|| rule_for(at_ingest, &i.entity))
        .map(|d| (d, "file"))
        .or_else(|| i.deadline.map(|d| (d, "implicit-period")))
}

/// Expected deadline_misses and deadline_summary rows, and the misses per source.
fn deadline_truth(
    procs: &[&TruthInstance],
    at_query: Rules,
    at_ingest: Rules,
) -> (Rows, Rows, HashMap<&'static str, usize>) {
    let mut misses = Vec::new();
    let mut per: std::collections::BTreeMap<&str, Vec<(i64, &str)>> = Default::default();
    let mut count = HashMap::new();
    for i in procs {
        let Some((d, source)) = deadline_of(i, at_query, at_ingest) else { continue };
        let lateness = i.terminate_ts - (i.activate_ts + d);
        per.entry(i.entity.as_str()).or_default().push((lateness, source));
        if lateness > 0 {
            *count.entry(source).or_insert(0) += 1;
            misses.push(vec![
                is(&i.entity),
                is(i.instance),
                is(i.activate_ts),
                is(i.terminate_ts),
                is(i.terminate_ts - i.activate_ts),
                is(d),
                is(source),
                is(lateness),
            ]);
        }
    }
    let summary = per
        .into_iter()
        .map(|(entity, v)| {
            let n = v.len();
            let missed = v.iter().filter(|(l, _)| *l > 0).count();
            let sources: std::collections::BTreeSet<&str> = v.iter().map(|x| x.1).collect();
            let source = if sources.len() > 1 { "mixed" } else { v[0].1 };
            vec![
                is(entity),
                is(n),
                is(missed),
                Cell::Rounded(missed as f64 / n as f64, 4),
                opt(v.iter().map(|x| x.0).max()),
                is(source),
            ]
        })
        .collect();
    (misses, summary, count)
}

/// Busy time per (core, window index) from the simulator's core occupancy.
fn busy_per_window(truth: &SynthTruth, window: i64) -> HashMap<(String, i64), i64> {
    let mut busy = HashMap::new();
    for o in truth.occupancy.iter().filter(|o| o.end > o.start) {
        let mut t = o.start;
        while t < o.end {
            let k = t.div_euclid(window);
            let end = o.end.min((k + 1) * window);
            *busy.entry((o.core.clone(), k)).or_insert(0) += end - t;
            t = end;
        }
    }
    busy
}

/// Every derived table and predefined analysis over BTF, row by row, against what the
/// simulator did: lock_requests, response_times, deadline_misses and deadline_summary
/// (deadline files at ingest and at query time, and implicit deadlines), execution_times,
/// runnable_times, activation_jitter, preemptions, preemption_pairs, blocking,
/// blocking_instances, semaphore_contention, cpu_load, signal_values, state_time.
/// A simulated system ingested once, and its truth grouped for the comparisons.
struct Run<'a> {
    dir: &'a std::path::Path,
    truth: &'a SynthTruth,
    /// Time of the last line: the capture's end.
    end: i64,
    /// Task and ISR instances.
    procs: Vec<&'a TruthInstance>,
    /// Instances per task, ISR and runnable.
    by_entity: std::collections::BTreeMap<&'a str, Vec<&'a TruthInstance>>,
}

impl<'a> Run<'a> {
    fn new(dir: &'a std::path::Path, truth: &'a SynthTruth, end: i64) -> Self {
        let mut by_entity: std::collections::BTreeMap<&str, Vec<&TruthInstance>> =
            Default::default();
        for i in &truth.instances {
            by_entity.entry(i.entity.as_str()).or_default().push(i);
        }
        let procs = truth.instances.iter().filter(|i| i.entity_type != "R").collect();
        Run { dir, truth, end, procs, by_entity }
    }

    /// Rows of one SQL statement over the archive.
    fn sql(&self, q: &str) -> Vec<HashMap<String, String>> {
        rows_of(self.dir, &["sql", "-c", q])
    }
}

/// `lock_requests`, and who blocked whom (the holders while a request waited: for a counting
/// semaphore, every request that held one of its slots), against the truth.
fn lock_requests_and_holders(r: &Run) -> Vec<String> {
    let truth = r.truth;
    let mut diffs = Vec::new();
    // lock_requests, every column.
    let cols = [
        "semaphore",
        "process",
        "process_instance",
        "request_ts",
        "assigned_ts",
        "released_ts",
        "wait",
        "hold",
        "contended",
        "blocked_by",
        "blocked_by_instance",
        "blockers",
    ];
    let want = truth
        .lock_requests
        .iter()
        .map(|l| {
            // Who it waited for: the first of its blockers (they are in the order they got
            // the semaphore), for a contended request only.
            let by = l.blocked_by.first().filter(|_| l.contended);
            vec![
                is(&l.semaphore),
                is(&l.process),
                is(l.process_instance),
                is(l.request_ts),
                opt(l.assigned_ts),
                opt(l.released_ts),
                opt(l.assigned_ts.map(|a| a - l.request_ts)),
                opt(l.released_ts.zip(l.assigned_ts).map(|(r, a)| r - a)),
                is(l.contended),
                opt(by.map(|b| b.0.clone())),
                opt(by.map(|b| b.1)),
                is(if l.contended { l.blocked_by.len() } else { 0 }),
            ]
        })
        .collect();
    diffs.extend(compare("lock_requests", &r.sql("SELECT * FROM lock_requests"), &cols, 4, want));

    // Who blocked whom: the requests that held the semaphore (a slot of it) while a
    // contended one waited (held it at its request, or got it before it did; in a cut run,
    // still held or still waited for at the end).
    let holders = r.sql(
        "SELECT r.semaphore, r.process, r.process_instance, r.request_ts,
                string_agg(h.process || ' ' || h.process_instance, ';'
                           ORDER BY h.assigned_ts, h.process, h.process_instance) AS blocked_by
         FROM lock_requests r JOIN lock_requests h ON h.semaphore = r.semaphore
            AND NOT (h.process = r.process AND h.process_instance = r.process_instance AND h.request_ts = r.request_ts)
            AND h.assigned_ts < coalesce(r.assigned_ts, 9223372036854775807)
            AND coalesce(h.released_ts, 9223372036854775807) > r.request_ts
         WHERE r.contended GROUP BY ALL",
    );
    let want = truth
        .lock_requests
        .iter()
        .filter(|l| l.contended)
        .map(|l| {
            let by: Vec<String> = l.blocked_by.iter().map(|(p, i)| format!("{p} {i}")).collect();
            vec![
                is(&l.semaphore),
                is(&l.process),
                is(l.process_instance),
                is(l.request_ts),
                is(by.join(";")),
            ]
        })
        .collect();
    let cols = ["semaphore", "process", "process_instance", "request_ts", "blocked_by"];
    diffs.extend(compare("who blocked whom", &holders, &cols, 4, want));

    diffs
}

/// `response_times`, `execution_times` and `runnable_times` against the truth.
fn timing(r: &Run) -> Vec<String> {
    let mut diffs = Vec::new();
    // response_times: four metrics, seven statistics each.
    type Metric = (&'static str, fn(&TruthInstance) -> i64);
    let metrics: [Metric; 4] = [
        ("response_time", |i| i.terminate_ts - i.activate_ts),
        ("start_delay", |i| i.start_ts - i.activate_ts),
        ("net_exec", |i| i.net_exec),
        ("gross_exec", |i| i.terminate_ts - i.start_ts),
    ];
    let mut cols: Vec<String> =
        ["entity", "entity_type", "instances", "instances_left_out"].map(String::from).to_vec();
    let mut want = Vec::new();
    for (m, _) in &metrics {
        for s in ["min", "avg", "p50", "p90", "p99", "max", "stddev"] {
            cols.push(format!("{m}_{s}"));
        }
    }
    for (entity, inst) in r.by_entity.iter().filter(|(_, v)| v[0].entity_type != "R") {
        let mut row = vec![is(entity), is(inst[0].entity_type), is(inst.len()), is(0)];
        for (_, f) in &metrics {
            let s = Stats::new(inst.iter().map(|i| f(i)).collect());
            row.extend([s.min(), s.avg(), s.pct(50), s.pct(90), s.pct(99), s.max(), s.stddev()]);
        }
        want.push(row);
    }
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    diffs.extend(compare("response_times", &r.sql("SELECT * FROM response_times"), &cols, 1, want));

    // execution_times: tasks, ISRs and runnables.
    let want = r
        .by_entity
        .iter()
        .map(|(entity, inst)| {
            let net = Stats::new(inst.iter().map(|i| i.net_exec).collect());
            let gross = Stats::new(inst.iter().map(|i| i.terminate_ts - i.start_ts).collect());
            vec![
                is(entity),
                is(inst[0].entity_type),
                is(inst.len()),
                is(0),
                net.min(),
                net.avg(),
                net.max(),
                net.total(),
                gross.min(),
                gross.avg(),
                gross.max(),
            ]
        })
        .collect();
    let cols = [
        "entity",
        "entity_type",
        "instances",
        "instances_left_out",
        "net_exec_min",
        "net_exec_avg",
        "net_exec_max",
        "net_exec_total",
        "gross_exec_min",
        "gross_exec_avg",
        "gross_exec_max",
    ];
    diffs.extend(compare(
        "execution_times",
        &r.sql("SELECT * FROM execution_times"),
        &cols,
        1,
        want,
    ));

    // runnable_times.
    let want = r
        .by_entity
        .iter()
        .filter(|(_, v)| v[0].entity_type == "R")
        .map(|(entity, inst)| {
            let net = Stats::new(inst.iter().map(|i| i.net_exec).collect());
            let gross = Stats::new(inst.iter().map(|i| i.terminate_ts - i.start_ts).collect());
            vec![
                is(entity),
                opt(inst[0].task.as_ref().map(|t| t.0.clone())),
                is(inst.len()),
                is(0),
                net.min(),
                net.avg(),
                net.pct(99),
                net.max(),
                net.total(),
                gross.max(),
                is(inst.iter().map(|i| i.preemptions).sum::<u64>()),
            ]
        })
        .collect();
    let cols = [
        "runnable",
        "task",
        "instances",
        "instances_left_out",
        "net_exec_min",
        "net_exec_avg",
        "net_exec_p99",
        "net_exec_max",
        "net_exec_total",
        "gross_exec_max",
        "suspensions",
    ];
    diffs.extend(compare("runnable_times", &r.sql("SELECT * FROM runnable_times"), &cols, 1, want));

    diffs
}

/// `deadline_misses` and `deadline_summary` against the truth; also the misses per deadline
/// source.
fn deadlines(
    r: &Run,
    at_query: Rules,
    at_ingest: Rules,
) -> (Vec<String>, HashMap<&'static str, usize>) {
    let mut diffs = Vec::new();
    // deadline_misses and deadline_summary: the ingest file and implicit deadlines,
    // then with a query-time file as well.
    let mut misses_by_source: HashMap<&str, usize> = HashMap::new();
    for (query_rules, extra) in
        [(&[][..], vec![]), (at_query, vec!["--param", "deadlines=query.csv"])]
    {
        let (misses, summary, count) = deadline_truth(&r.procs, query_rules, at_ingest);
        for (s, n) in count {
            *misses_by_source.entry(s).or_insert(0) += n;
        }
        let mut args = vec!["query", "deadline_misses"];
        args.extend(&extra);
        let cols = [
            "entity",
            "instance",
            "activate_ts",
            "terminate_ts",
            "response_time",
            "deadline",
            "deadline_source",
            "lateness",
        ];
        diffs.extend(compare("deadline_misses", &rows_of(r.dir, &args), &cols, 2, misses));
        let mut args = vec!["query", "deadline_summary"];
        args.extend(&extra);
        let cols =
            ["entity", "instances", "misses", "miss_ratio", "worst_lateness", "deadline_source"];
        diffs.extend(compare("deadline_summary", &rows_of(r.dir, &args), &cols, 1, summary));
    }

    (diffs, misses_by_source)
}

/// The semaphores' `state` intervals, every column, against the states the simulator put
/// them in: free, used, full, overfull, the count of slots taken as `value`, a new interval
/// only where the state or the count changes.
fn semaphore_intervals(r: &Run) -> Vec<String> {
    let want = r
        .truth
        .semaphore_states
        .iter()
        .map(|s| {
            vec![
                is(&s.semaphore),
                is(s.start),
                is(s.state),
                is(s.end - s.start),
                Cell::Rounded(s.count as f64, 0),
                is(s.start_action),
                is(s.end_action.unwrap_or("")),
                is(s.open),
                is(-1),
            ]
        })
        .collect();
    let cols =
        ["entity", "ts", "state", "dur", "value", "start_action", "end_action", "open", "instance"];
    let q = "SELECT * FROM intervals WHERE entity_type = 'SEM'";
    compare("semaphore intervals", &r.sql(q), &cols, 4, want)
}

/// The instances the end of the trace cut (`complete = false`) against the truth's, every
/// column, and the state each one's trace ends in (its open `state` interval).
fn cut_diffs(r: &Run) -> Vec<String> {
    let mut diffs = Vec::new();
    let cut = &r.truth.cut;
    let want = cut
        .iter()
        .map(|i: &TruthCutInstance| {
            let process = i.entity_type != "R";
            // Waiting, polling, parking and migrations are NULL for runnables.
            let p = |v: i64| if process { is(v) } else { is("") };
            vec![
                is(&i.entity),
                is(i.instance),
                is(i.entity_type),
                is(i.activate_ts),
                opt(i.start_ts),
                is(""),
                opt(i.core.as_ref()),
                is(""),
                opt(i.start_ts.map(|s| s - i.activate_ts)),
                is(""),
                is(i.net_exec),
                is(i.ready_time),
                p(i.waiting_time),
                p(i.polling_time),
                p(i.parking_time),
                is(i.preemptions),
                p(i.migrations as i64),
                is(false),
            ]
        })
        .collect();
    let mut cols = vec!["entity", "instance"];
    cols.extend(PROCESS_COLUMNS);
    let q = "SELECT * FROM instances WHERE NOT complete";
    diffs.extend(compare("cut instances", &r.sql(q), &cols, 2, want));
    let want = cut.iter().map(|i| vec![is(&i.entity), is(i.instance), is(i.state)]).collect();
    let q = "SELECT * FROM intervals WHERE channel = 'state' AND open AND entity_type IN ('T', 'I', 'R')";
    diffs.extend(compare("cut states", &r.sql(q), &["entity", "instance", "state"], 2, want));
    diffs
}

/// The `state` intervals of tasks and ISRs: each passive wait (for an OS event that was not
/// set, or queued for a slot of the counting semaphore) is one `waiting` interval from its
/// `wait` to its `release` (or to the end of a cut run, open), and per instance the time in
/// each state is what the simulator spent there (active until the start, then running,
/// ready, waiting, polling, parking), for the instances a cut left under way too.
fn state_intervals(r: &Run) -> Vec<String> {
    let mut diffs = Vec::new();
    let row = |p: &str, inst: u64, from: i64, to: Option<i64>| {
        let end = if to.is_some() { "release" } else { "" };
        let dur = to.unwrap_or(r.end) - from;
        vec![is(p), is(inst), is(from), is(dur), is("wait"), is(end), is(to.is_none())]
    };
    let events = r.truth.waits.iter().filter(|w| !w.at_once);
    let mut want: Rows =
        events.map(|w| row(&w.process, w.instance, w.wait_ts, w.release_ts)).collect();
    let queued = r.truth.lock_requests.iter().filter(|l| l.queued);
    want.extend(queued.map(|l| row(&l.process, l.process_instance, l.request_ts, l.assigned_ts)));
    let cols = ["entity", "instance", "ts", "dur", "start_action", "end_action", "open"];
    let q = "SELECT * FROM intervals WHERE channel = 'state' AND state = 'waiting'";
    diffs.extend(compare("waiting intervals", &r.sql(q), &cols, 3, want));
    let mut want = Vec::new();
    let mut add = |entity: &str, instance: u64, states: [(&str, i64); 6]| {
        for (state, d) in states.into_iter().filter(|s| s.1 > 0) {
            want.push(vec![is(entity), is(instance), is(state), is(d)]);
        }
    };
    for i in &r.procs {
        add(
            &i.entity,
            i.instance,
            [
                ("active", i.start_ts - i.activate_ts),
                ("running", i.net_exec),
                ("ready", i.ready_time),
                ("waiting", i.waiting_time),
                ("polling", i.polling_time),
                ("parking", i.parking_time),
            ],
        );
    }
    for i in r.truth.cut.iter().filter(|i| i.entity_type != "R") {
        add(
            &i.entity,
            i.instance,
            [
                ("active", i.start_ts.unwrap_or(r.end) - i.activate_ts),
                ("running", i.net_exec),
                ("ready", i.ready_time),
                ("waiting", i.waiting_time),
                ("polling", i.polling_time),
                ("parking", i.parking_time),
            ],
        );
    }
    let q = "SELECT entity, instance, state, sum(dur) AS dur FROM intervals \
             WHERE channel = 'state' AND entity_type IN ('T', 'I') \
             GROUP BY ALL HAVING sum(dur) > 0";
    diffs.extend(compare(
        "time per state",
        &r.sql(q),
        &["entity", "instance", "state", "dur"],
        3,
        want,
    ));
    diffs
}

/// `activation_jitter`, `preemptions` and `preemption_pairs` against the truth.
fn scheduling(r: &Run) -> Vec<String> {
    let truth = r.truth;
    let mut diffs = Vec::new();
    // activation_jitter, from the activations and first starts the simulator made.
    let mut acts: std::collections::BTreeMap<&str, Vec<&TruthActivation>> = Default::default();
    for a in &truth.activations {
        acts.entry(a.process.as_str()).or_default().push(a);
    }
    let want = acts
        .iter()
        .map(|(p, v)| {
            let mut v = v.clone();
            v.sort_by_key(|a| a.instance);
            let a2a =
                Stats::new(v.windows(2).map(|w| w[1].activate_ts - w[0].activate_ts).collect());
            let s2s: Vec<i64> =
                v.windows(2).filter_map(|w| Some(w[1].start_ts? - w[0].start_ts?)).collect();
            let s2s = Stats::new(s2s);
            let jitter = |s: &Stats| opt(s.0.last().map(|m| m - s.0[0]));
            let ty = truth.processes.iter().find(|x| x.name == *p).map_or("?", |x| x.entity_type);
            vec![
                is(p),
                is(ty),
                is(v.len()),
                a2a.min(),
                a2a.avg(),
                a2a.max(),
                jitter(&a2a),
                is(v.iter().filter(|a| a.start_ts.is_some()).count()),
                s2s.min(),
                s2s.avg(),
                s2s.max(),
                jitter(&s2s),
            ]
        })
        .collect();
    let cols = [
        "entity",
        "entity_type",
        "activations",
        "activate_to_activate_min",
        "activate_to_activate_avg",
        "activate_to_activate_max",
        "activate_jitter",
        "starts",
        "start_to_start_min",
        "start_to_start_avg",
        "start_to_start_max",
        "start_jitter",
    ];
    diffs.extend(compare(
        "activation_jitter",
        &r.sql("SELECT * FROM activation_jitter"),
        &cols,
        1,
        want,
    ));

    // preemptions per task, and who preempted whom.
    let want = r
        .by_entity
        .iter()
        .filter(|(_, v)| v[0].entity_type != "R")
        .map(|(entity, inst)| {
            vec![
                is(entity),
                is(inst[0].entity_type),
                is(inst.len()),
                is(0),
                is(inst.iter().map(|i| i.preemptions).sum::<u64>()),
                is(inst.iter().filter(|i| i.preemptions > 0).count()),
                opt(inst.iter().map(|i| i.preemptions).max()),
                is(inst.iter().map(|i| i.migrations).sum::<u64>()),
            ]
        })
        .collect();
    let cols = [
        "entity",
        "entity_type",
        "instances",
        "instances_left_out",
        "preemptions",
        "preempted_instances",
        "max_per_instance",
        "migrations",
    ];
    diffs.extend(compare("preemptions", &r.sql("SELECT * FROM preemptions"), &cols, 1, want));
    let mut pairs: std::collections::BTreeMap<(&str, &str, &str), (u64, i64, i64)> =
        Default::default();
    for p in &truth.preemptions {
        let e = pairs.entry((&p.process, &p.by, &p.core)).or_insert((0, p.ts, p.ts));
        e.0 += 1;
        e.1 = e.1.min(p.ts);
        e.2 = e.2.max(p.ts);
    }
    let want = pairs
        .iter()
        .map(|((p, by, c), (n, first, last))| {
            vec![is(p), is(by), is(c), is(n), is(first), is(last)]
        })
        .collect();
    let cols = ["preempted", "preempted_by", "core", "preemptions", "first_ts", "last_ts"];
    diffs.extend(compare(
        "preemption_pairs",
        &r.sql("SELECT * FROM preemption_pairs"),
        &cols,
        3,
        want,
    ));
    // preemption_instances: every preemption, keyed by the instance and its time.
    let want = truth
        .preemptions
        .iter()
        .map(|p| {
            vec![
                is(&p.process),
                is(p.instance),
                is(p.ts),
                is(&p.core),
                is(&p.by),
                is(p.by_instance),
            ]
        })
        .collect();
    let cols = ["preempted", "instance", "ts", "core", "preempted_by", "preempted_by_instance"];
    diffs.extend(compare(
        "preemption_instances",
        &r.sql("SELECT * FROM preemption_instances"),
        &cols,
        3,
        want,
    ));

    diffs
}

/// `priority_inversions` against the truth: for every contended request that waited for one
/// holder, or for several that held the semaphore one after another (a mutex queue), the
/// preemptions of each holder within its hold (the simulator's preemptions, each until the
/// holder's next stretch on a core, from its occupancy), and what occupied the core it lost
/// within those stretches and the wait. Requests whose holders' holds overlap (a counting
/// semaphore's slots) are left out. Returns the differences and the rows expected, and how
/// many of them come from requests that waited for several holders.
fn priority_inversions(r: &Run) -> (Vec<String>, usize, usize) {
    let truth = r.truth;
    let mut preempted: HashMap<(&str, u64), Vec<&tracedb::synth::TruthPreemption>> = HashMap::new();
    for p in &truth.preemptions {
        preempted.entry((p.process.as_str(), p.instance)).or_default().push(p);
    }
    let mut occupied: HashMap<(&str, u64), Vec<i64>> = HashMap::new();
    let mut on_core: HashMap<&str, Vec<&tracedb::synth::TruthOccupancy>> = HashMap::new();
    for o in &truth.occupancy {
        occupied.entry((o.process.as_str(), o.instance)).or_default().push(o.start);
        on_core.entry(o.core.as_str()).or_default().push(o);
    }
    occupied.values_mut().for_each(|v| v.sort_unstable());
    // Per request, holder and process that ran: (wait, first_ts, delay, several holders).
    type Key<'a> = (&'a str, &'a str, u64, i64, &'a str, u64, &'a str, &'a str, u64);
    let mut rows: std::collections::BTreeMap<Key, (Option<i64>, i64, i64, bool)> =
        Default::default();
    let never = i64::MAX;
    for l in truth.lock_requests.iter().filter(|l| l.contended && !l.blocked_by.is_empty()) {
        let served = l.assigned_ts.unwrap_or(never);
        // Each holder's hold: its last of the semaphore assigned before the request was
        // served, which overlaps the wait.
        let holds: Vec<_> = l
            .blocked_by
            .iter()
            .map(|holder| {
                let hold = truth
                    .lock_requests
                    .iter()
                    .filter(|h| {
                        h.semaphore == l.semaphore
                            && (&h.process, h.process_instance) == (&holder.0, holder.1)
                    })
                    .filter(|h| h.assigned_ts.is_some_and(|a| a < served))
                    .max_by_key(|h| h.assigned_ts)
                    .filter(|h| h.released_ts.unwrap_or(never) > l.request_ts);
                let Some(hold) = hold else { panic!("{l:?}: its holder {holder:?} holds nothing") };
                (holder, hold.assigned_ts.unwrap_or(never), hold.released_ts.unwrap_or(never))
            })
            .collect();
        // Several holders count only one after another: each released before the next got
        // the semaphore (the list is in the order they got it), the last before the request.
        let ends = holds.iter().skip(1).map(|h| h.1).chain([served]);
        if !holds.iter().zip(ends).all(|(h, next)| h.2 <= next) {
            continue;
        }
        for &(holder, from, to) in &holds {
            let key = (holder.0.as_str(), holder.1);
            for p in preempted.get(&key).into_iter().flatten().filter(|p| p.ts >= from && p.ts < to)
            {
                // Off its core until it is back on one (or the capture ends).
                let back = occupied.get(&key).and_then(|v| v.iter().find(|&&s| s >= p.ts).copied());
                let back = back.unwrap_or(r.end);
                let (w0, w1) = (p.ts.max(l.request_ts), back.min(served));
                if w0 >= w1 {
                    continue;
                }
                for o in on_core.get(p.core.as_str()).into_iter().flatten() {
                    if o.start < p.ts || o.start >= w1 || o.end <= w0 || o.end == o.start {
                        continue;
                    }
                    let k = (
                        l.semaphore.as_str(),
                        l.process.as_str(),
                        l.process_instance,
                        l.request_ts,
                        holder.0.as_str(),
                        holder.1,
                        p.core.as_str(),
                        o.process.as_str(),
                        o.instance,
                    );
                    let several = holds.len() > 1;
                    let e = rows.entry(k).or_insert((l.assigned_ts, never, 0, several));
                    e.1 = e.1.min(o.start.max(w0));
                    e.2 += o.end.min(w1) - o.start.max(w0);
                }
            }
        }
    }
    let n = rows.len();
    let from_several = rows.values().filter(|v| v.3).count();
    let want = rows
        .into_iter()
        .map(|((sem, w, wi, req, h, hi, core, ran, ri), (served, first, delay, _))| {
            vec![
                is(sem),
                is(w),
                is(wi),
                is(req),
                is(h),
                is(hi),
                is(core),
                is(ran),
                is(ri),
                opt(served.map(|a| a - req)),
                is(first),
                is(delay),
            ]
        })
        .collect();
    let cols = [
        "semaphore",
        "waiter",
        "waiter_instance",
        "request_ts",
        "holder",
        "holder_instance",
        "core",
        "ran",
        "ran_instance",
        "wait",
        "first_ts",
        "delay",
    ];
    let got = r.sql("SELECT * FROM priority_inversions");
    (compare("priority_inversions", &got, &cols, 9, want), n, from_several)
}

/// `blocking`, `blocking_instances` and `semaphore_contention` against the truth.
fn blocking(r: &Run) -> Vec<String> {
    let truth = r.truth;
    let mut diffs = Vec::new();
    // blocking and blocking_instances: polling and passive waits are the blocking here,
    // and their causes the contended lock requests and the OS events waited for.
    let contended = |p: &str| {
        let mut s: Vec<&str> = truth
            .lock_requests
            .iter()
            .filter(|l| l.contended && l.process == p)
            .map(|l| l.semaphore.as_str())
            .chain(
                truth
                    .waits
                    .iter()
                    .filter(|w| w.process == p && !w.at_once)
                    .map(|w| w.event.as_str()),
            )
            .collect();
        s.sort_unstable();
        s.dedup();
        s.join(", ")
    };
    // Who it waited for: the holders those requests waited for first, the setters of
    // those events.
    let blockers = |p: &str| {
        let mut s: Vec<&str> = truth
            .lock_requests
            .iter()
            .filter(|l| l.contended && l.process == p)
            .filter_map(|l| l.blocked_by.first().map(|b| b.0.as_str()))
            .chain(
                truth
                    .waits
                    .iter()
                    .filter(|w| w.process == p && !w.at_once)
                    .filter_map(|w| w.set_by.as_ref().map(|b| b.0.as_str())),
            )
            .collect();
        s.sort_unstable();
        s.dedup();
        s.join(", ")
    };
    let want = r
        .by_entity
        .iter()
        .filter(|(_, v)| v[0].entity_type != "R")
        .map(|(entity, inst)| {
            let polling = Stats::new(inst.iter().map(|i| i.polling_time).collect());
            let waiting = Stats::new(inst.iter().map(|i| i.waiting_time).collect());
            let parking = Stats::new(inst.iter().map(|i| i.parking_time).collect());
            let blocked = |i: &TruthInstance| i.polling_time + i.waiting_time + i.parking_time;
            let blocking = Stats::new(inst.iter().map(|i| blocked(i)).collect());
            vec![
                is(entity),
                is(inst[0].entity_type),
                is(inst.len()),
                is(0),
                is(inst.iter().filter(|i| blocked(i) > 0).count()),
                is(waiting.sum()),
                waiting.max(),
                is(polling.sum()),
                polling.max(),
                is(parking.sum()),
                parking.max(),
                is(blocking.sum()),
                blocking.max(),
                is(contended(entity)),
                is(blockers(entity)),
            ]
        })
        .collect();
    let cols = [
        "entity",
        "entity_type",
        "instances",
        "instances_left_out",
        "blocked_instances",
        "waiting_total",
        "waiting_max",
        "polling_total",
        "polling_max",
        "parking_total",
        "parking_max",
        "blocking_total",
        "blocking_max",
        "causes",
        "blocked_by",
    ];
    diffs.extend(compare("blocking", &r.sql("SELECT * FROM blocking"), &cols, 1, want));
    let mut want = Vec::new();
    for i in &r.procs {
        let causes: Vec<&TruthLock> = truth
            .lock_requests
            .iter()
            .filter(|l| l.contended && l.process == i.entity && l.process_instance == i.instance)
            .collect();
        let waits: Vec<&TruthWait> = truth
            .waits
            .iter()
            .filter(|w| w.process == i.entity && w.instance == i.instance && !w.at_once)
            .collect();
        let blocked = i.polling_time + i.waiting_time + i.parking_time;
        // cause_ts, cause_type, cause, cause_wait, blocked_by (process, instance).
        type Cause<'a> = (String, &'a str, &'a str, Option<i64>, Option<&'a (String, u64)>);
        let head = |c: Cause| {
            vec![
                is(&i.entity),
                is(i.instance),
                is(c.0),
                is(i.activate_ts),
                is(blocked),
                is(i.waiting_time),
                is(i.polling_time),
                is(i.parking_time),
                is(c.1),
                is(c.2),
                opt(c.3),
                opt(c.4.map(|b| b.0.clone())),
                opt(c.4.map(|b| b.1)),
            ]
        };
        if causes.is_empty() && waits.is_empty() && blocked > 0 {
            want.push(head((String::new(), "", "", None, None)));
        }
        for c in causes {
            if blocked > 0 || c.assigned_ts.is_some_and(|a| a > c.request_ts) {
                let wait = c.assigned_ts.map(|a| a - c.request_ts);
                let by = c.blocked_by.first();
                want.push(head((c.request_ts.to_string(), "semaphore", &c.semaphore, wait, by)));
            }
        }
        for w in waits.into_iter().filter(|_| blocked > 0) {
            let by = w.set_by.as_ref();
            want.push(head((w.wait_ts.to_string(), "event", &w.event, None, by)));
        }
    }
    let cols = [
        "entity",
        "instance",
        "cause_ts",
        "activate_ts",
        "blocking_time",
        "waiting_time",
        "polling_time",
        "parking_time",
        "cause_type",
        "cause",
        "cause_wait",
        "blocked_by",
        "blocked_by_instance",
    ];
    diffs.extend(compare(
        "blocking_instances",
        &r.sql("SELECT * FROM blocking_instances"),
        &cols,
        3,
        want,
    ));

    // semaphore_contention.
    let mut want = Vec::new();
    let mut sems: Vec<&str> = truth.semaphore_states.iter().map(|s| s.semaphore.as_str()).collect();
    sems.sort_unstable();
    sems.dedup();
    for sem in sems {
        let reqs: Vec<&TruthLock> =
            truth.lock_requests.iter().filter(|l| l.semaphore == sem).collect();
        let waits =
            Stats::new(reqs.iter().filter_map(|l| Some(l.assigned_ts? - l.request_ts)).collect());
        let holds =
            Stats::new(reqs.iter().filter_map(|l| Some(l.released_ts? - l.assigned_ts?)).collect());
        let contended = reqs.iter().filter(|l| l.contended).count();
        // arg_max: any process of a longest hold is right.
        let longest: Vec<String> = reqs
            .iter()
            .filter(|l| {
                l.released_ts.zip(l.assigned_ts).map(|(r, a)| r - a) == holds.0.last().copied()
            })
            .map(|l| l.process.clone())
            .collect();
        let mut waited: HashMap<&str, i64> = HashMap::new();
        for l in &reqs {
            let w = l.assigned_ts.map_or(0, |a| a - l.request_ts);
            if w > 0 {
                *waited.entry(l.process.as_str()).or_insert(0) += w;
            }
        }
        let most = waited.values().max().copied();
        let most: Vec<String> = waited
            .iter()
            .filter(|(_, &w)| Some(w) == most)
            .map(|(p, _)| (*p).to_string())
            .collect();
        let states: Vec<&TruthSemState> =
            truth.semaphore_states.iter().filter(|s| s.semaphore == sem).collect();
        let time_in = |names: &[&str]| -> i64 {
            states.iter().filter(|s| names.contains(&s.state)).map(|s| s.end - s.start).sum()
        };
        let episodes = states.iter().filter(|s| s.state == "overfull").count();
        want.push(vec![
            is(sem),
            is(reqs.len()),
            is(contended),
            Cell::Rounded(contended as f64 / reqs.len() as f64, 4),
            is(episodes),
            waits.total(),
            waits.avg(),
            waits.max(),
            waits.pct(99),
            holds.total(),
            holds.avg(),
            holds.max(),
            if longest.is_empty() { is("") } else { Cell::OneOf(longest) },
            if most.is_empty() { is("") } else { Cell::OneOf(most) },
            is(time_in(&["full", "overfull"])),
            is(time_in(&["overfull"])),
        ]);
    }
    let cols = [
        "semaphore",
        "requests",
        "contended_requests",
        "contention_ratio",
        "overfull_episodes",
        "wait_total",
        "wait_avg",
        "wait_max",
        "wait_p99",
        "hold_total",
        "hold_avg",
        "hold_max",
        "longest_holding_process",
        "most_waiting_process",
        "locked_time",
        "overfull_time",
    ];
    diffs.extend(compare(
        "semaphore_contention",
        &r.sql("SELECT * FROM semaphore_contention"),
        &cols,
        1,
        want,
    ));

    diffs
}

/// `cpu_load`, `signal_values` and `state_time` against the truth.
fn load_signals_states(r: &Run) -> Vec<String> {
    let truth = r.truth;
    let mut diffs = Vec::new();
    // cpu_load over aligned windows from the first event (time 0) to the last, with the
    // default window and one that does not divide the run.
    let mut cores: Vec<&str> = truth.processes.iter().map(|p| p.core.as_str()).collect();
    cores.sort_unstable();
    cores.dedup();
    for (window, param) in [(1_000_000, None), (700_000, Some("window=700us"))] {
        let busy = busy_per_window(truth, window);
        let mut want = Vec::new();
        for core in &cores {
            for k in 0..=r.end / window {
                let b = busy.get(&((*core).to_string(), k)).copied().unwrap_or(0);
                want.push(vec![
                    is(core),
                    is(k * window),
                    is((k + 1) * window),
                    is(b),
                    Cell::Rounded(b as f64 / window as f64, 4),
                ]);
            }
        }
        let mut args = vec!["query", "cpu_load"];
        if let Some(p) = param {
            args.extend(["--param", p]);
        }
        let cols = ["core", "window_start", "window_end", "busy", "load"];
        diffs.extend(compare(
            &format!("cpu_load {window}"),
            &rows_of(r.dir, &args),
            &cols,
            2,
            want,
        ));
    }

    // signal_values: every write, held until the next write of the signal or the end.
    let mut want = Vec::new();
    for (k, w) in truth.signal_writes.iter().enumerate() {
        let next = truth.signal_writes[k + 1..].iter().find(|n| n.signal == w.signal);
        want.push(vec![
            is(&w.signal),
            is(w.ts),
            is(&w.writer),
            is(w.writer_instance),
            is(next.map_or(r.end, |n| n.ts) - w.ts),
            Cell::Rounded(w.value as f64, 0),
            is(w.value),
        ]);
    }
    let cols = ["signal", "ts", "writer", "writer_instance", "dur", "value", "text"];
    diffs.extend(compare("signal_values", &r.sql("SELECT * FROM signal_values"), &cols, 4, want));

    // state_time covers Paraver threads and CPUs and QS state machines only: a BTF
    // capture has no rows there (its process states are in instances, checked above).
    diffs.extend(compare("state_time", &r.sql("SELECT * FROM state_time"), &["entity"], 1, vec![]));

    diffs
}

#[test]
fn synthetic_analyses_match_the_simulator_exactly() {
    let ms = 1_000_000;
    // The default system, and eight cores where three tasks at a time may want one
    // semaphore (a hand-over that leaves it overfull); in both, tasks overrun now and then
    // (every 3rd / 2nd instance runs 4 times as long), so that deadlines are missed and
    // activations queue up and some are dropped. Seeds picked for contention.
    let systems = [
        SynthConfig { duration_ns: 250 * ms, overrun_every: 3, ..SynthConfig::default() },
        SynthConfig {
            cores: 8,
            tasks: 40,
            isrs: 4,
            seed: 4,
            duration_ns: 250 * ms,
            overrun_every: 2,
            ..SynthConfig::default()
        },
        // Every knob: global scheduling (migrations), nested ISRs (two per core), passive
        // waits and parking.
        SynthConfig {
            isrs: 8,
            duration_ns: 250 * ms,
            overrun_every: 3,
            migrating_tasks: true,
            nested_isrs: true,
            passive_waits: true,
            parking: true,
            ..SynthConfig::default()
        },
        // Every knob on eight cores, and what the others never do: a counting semaphore with
        // three slots (tasks queued for it, holders preempted) and OS events set before their
        // wait and cleared (waits that return at once, sets a clear discards).
        SynthConfig {
            cores: 8,
            tasks: 40,
            isrs: 8,
            duration_ns: 150 * ms,
            overrun_every: 3,
            migrating_tasks: true,
            nested_isrs: true,
            passive_waits: true,
            parking: true,
            counting_slots: 3,
            clear_events: true,
            ..SynthConfig::default()
        },
    ];
    // Deadline files: a longer glob beats a shorter one, an exact name beats a glob, and
    // the file given at query time beats the one given at ingest.
    let at_ingest: Vec<(&str, i64)> = vec![("TASK_1*", 40 * ms), ("TASK_1MS_*", 300_000)];
    let at_query: Vec<(&str, i64)> = vec![("TASK_2MS_*", 1_500_000), ("TASK_1MS_*", 250_000)];
    for cfg in systems {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (stats, truth) =
            write_btf_with_truth(std::fs::File::create(dir.join("synth.btf")).unwrap(), &cfg)
                .unwrap();
        // One exact name, among the 1 ms tasks when there are any.
        let exact = truth
            .processes
            .iter()
            .find(|p| p.name.starts_with("TASK_1MS_"))
            .unwrap_or(&truth.processes[0])
            .name
            .clone();
        let mut at_ingest = at_ingest.clone();
        at_ingest.push((exact.as_str(), 450_000));
        let file = |rules: &[(&str, i64)]| {
            rules.iter().map(|(p, d)| format!("{p},{d}ns\n")).collect::<String>()
        };
        std::fs::write(dir.join("ingest.csv"), file(&at_ingest)).unwrap();
        std::fs::write(dir.join("query.csv"), file(&at_query)).unwrap();
        ok(dir, &["ingest", "--archive", "db", "--deadlines", "ingest.csv", "synth.btf"]);
        let run = Run::new(dir, &truth, stats.last_ts);
        let procs = &run.procs;
        // Duration runs log everything: every activation made an instance that completed.
        assert_eq!(truth.activations.len(), procs.len());
        assert!(truth.activations.iter().all(|a| a.start_ts.is_some()));

        // The simulator's own implicit deadline is its period unless an activation of the
        // task was dropped (not always then: drops after the last activation change none).
        let mut longer = 0;
        for p in truth.processes.iter().filter(|p| p.entity_type == "T") {
            let periods = procs.iter().filter(|i| i.entity == p.name).filter_map(|i| i.deadline);
            let off = periods.filter(|&d| d != p.period).count();
            assert!(off == 0 || p.dropped_activations > 0, "{p:?}");
            longer += off;
        }

        let mut diffs = lock_requests_and_holders(&run);
        diffs.extend(semaphore_intervals(&run));
        if cfg.migrating_tasks || cfg.nested_isrs || cfg.passive_waits || cfg.parking {
            // This system's instances field by field, as for the systems above.
            diffs.extend(instance_diffs(dir, &truth.instances));
            diffs.extend(cut_diffs(&run));
            let inst = &truth.instances;
            let migrated = inst.iter().filter(|i| i.migrations > 0).count();
            let waited = inst.iter().filter(|i| i.waiting_time > 0).count();
            let nested = truth.preemptions.iter().filter(|p| p.process.starts_with("ISR")).count();
            let parked = inst.iter().filter(|i| i.parking_time > 0).count();
            println!(
                "{migrated} instances migrated, {waited} waited, {nested} ISRs preempted, \
                 {parked} parked"
            );
            assert!(migrated > 0 && waited > 0 && nested > 0 && parked > 0);
            diffs.extend(state_intervals(&run));
        }
        if cfg.counting_slots > 0 {
            let reqs = truth.lock_requests.iter().filter(|l| l.semaphore == "SEM_C");
            let queued = reqs.filter(|l| l.queued).count();
            let states = truth.semaphore_states.iter().filter(|s| s.semaphore == "SEM_C");
            let mut used: Vec<i64> =
                states.filter(|s| s.state == "used").map(|s| s.count).collect();
            used.sort_unstable();
            used.dedup();
            let at_once = truth.waits.iter().filter(|w| w.at_once).count();
            let waited = truth.waits.len() - at_once;
            println!(
                "SEM_C: {queued} requests queued, used with counts {used:?}; {at_once} waits \
                 at once, {waited} waited"
            );
            assert!(queued > 0 && used == [1, 2] && at_once > 0 && waited > 0);
        }
        diffs.extend(timing(&run));
        let (d, misses_by_source) = deadlines(&run, &at_query, &at_ingest);
        diffs.extend(d);
        diffs.extend(scheduling(&run));
        diffs.extend(blocking(&run));
        // No holder of a one-slot semaphore is ever preempted here (spinlocks), and a request
        // for the counting semaphore waits for several holders: no priority inversion.
        let (d, inversions, _) = priority_inversions(&run);
        diffs.extend(d);
        assert_eq!(inversions, 0);
        diffs.extend(load_signals_states(&run));
        // The comparison means something only if the system does all of it.
        let polled = truth.lock_requests.iter().filter(|l| l.contended).count();
        let queued = truth.lock_requests.iter().filter(|l| l.blocked_by.len() > 1).count();
        let dropped: u64 = truth.processes.iter().map(|p| p.dropped_activations).sum();
        println!(
            "{cfg:?}: {} lock requests ({polled} contended, {queued} behind another waiter), \
             {} preemptions, misses by deadline source {misses_by_source:?}, {dropped} \
             activations dropped ({longer} deadlines longer than the period), {} signal writes",
            truth.lock_requests.len(),
            truth.preemptions.len(),
            truth.signal_writes.len()
        );
        assert!(polled > 0 && !truth.preemptions.is_empty() && !truth.signal_writes.is_empty());
        assert!(misses_by_source.get("file").is_some_and(|&n| n > 0));
        assert!(misses_by_source.get("implicit-period").is_some_and(|&n| n > 0));
        assert!(truth.semaphore_states.iter().any(|s| s.state == "overfull"));
        assert!(truth.instances.iter().any(|r| r.entity_type == "R" && r.preemptions > 0));
        assert!(
            diffs.is_empty(),
            "{} differences with the simulator ({cfg:?}), first ones:\n{}",
            diffs.len(),
            diffs.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

/// Mutexes whose holders may be preempted ([`SynthConfig::preemptible_locks`]):
/// `priority_inversions` row by row against the simulator, with the lock requests and who
/// blocked whom it rests on, and every instance and state interval. Two systems: the default
/// one with `SEM_C` a long-held mutex (one slot) whose waiters queue (a request waits for
/// the holder and then for those queued before it); and every knob on eight cores, where
/// holders migrate (preempted on one core, back on another) and `SEM_C` has three slots
/// (its requests wait for several holders at once and are left out).
#[test]
fn synthetic_priority_inversions_match_the_simulator_exactly() {
    let ms = 1_000_000;
    let systems = [
        SynthConfig {
            isrs: 4,
            duration_ns: 200 * ms,
            counting_slots: 1,
            preemptible_locks: true,
            ..SynthConfig::default()
        },
        SynthConfig {
            cores: 8,
            tasks: 40,
            isrs: 8,
            duration_ns: 100 * ms,
            overrun_every: 3,
            migrating_tasks: true,
            nested_isrs: true,
            passive_waits: true,
            parking: true,
            counting_slots: 3,
            preemptible_locks: true,
            ..SynthConfig::default()
        },
    ];
    for (i, cfg) in systems.into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (stats, truth) =
            write_btf_with_truth(std::fs::File::create(dir.join("synth.btf")).unwrap(), &cfg)
                .unwrap();
        ok(dir, &["ingest", "--archive", "db", "synth.btf"]);
        let run = Run::new(dir, &truth, stats.last_ts);
        let mut diffs = lock_requests_and_holders(&run);
        diffs.extend(instance_diffs(dir, &truth.instances));
        diffs.extend(state_intervals(&run));
        let (d, rows, from_queues) = priority_inversions(&run);
        diffs.extend(d);
        // The comparison means something only if holders were preempted while one request
        // waited for them, and some requests waited for several: in turn (a queue, analysed:
        // rows from them in the first system) or at once (SEM_C's three slots in the second,
        // left out).
        let locks = &truth.lock_requests;
        let single = locks.iter().filter(|l| l.contended && l.blocked_by.len() == 1).count();
        let several = locks.iter().filter(|l| l.blocked_by.len() > 1).count();
        let queued = locks.iter().filter(|l| l.queued && l.semaphore != "SEM_C").count();
        println!(
            "{cfg:?}: {} lock requests ({single} waited for one holder, {several} for several, \
             {queued} queued for SEM_A or SEM_B), {rows} priority_inversions rows \
             ({from_queues} for requests that waited for several holders in turn)",
            locks.len()
        );
        assert!(rows > 0 && several > 0 && queued > 0);
        if i == 0 {
            assert!(from_queues > 0);
        } else {
            let at_once = locks.iter().filter(|l| l.semaphore == "SEM_C" && l.blocked_by.len() > 1);
            assert!(at_once.count() > 0);
        }
        assert!(
            diffs.is_empty(),
            "{} differences with the simulator ({cfg:?}), first ones:\n{}",
            diffs.len(),
            diffs.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

/// Runs cut in the middle (by size): the statistics use the complete instances and count
/// the others, which are the activations the simulator logged without a logged termination;
/// and what a cut leaves under way is what the simulator says: every incomplete instance
/// (partial times, the state it ends in), lock requests still waiting or holding, semaphores
/// and waits still open. Three cuts: the default system, and the all-knobs one cut while
/// tasks wait (for an event, and queued for the counting semaphore) and hold its slots, and
/// while tasks are parked; migrated instances are under way in both.
#[test]
fn synthetic_cut_run_counts_what_it_leaves_out() {
    let knobs = SynthConfig {
        cores: 8,
        tasks: 40,
        isrs: 8,
        overrun_every: 3,
        migrating_tasks: true,
        nested_isrs: true,
        passive_waits: true,
        parking: true,
        counting_slots: 3,
        clear_events: true,
        ..SynthConfig::default()
    };
    let systems = [
        SynthConfig { target_bytes: Some(300_000), overrun_every: 2, ..SynthConfig::default() },
        SynthConfig { seed: 4, target_bytes: Some(225_000), ..knobs.clone() },
        SynthConfig { seed: 5, target_bytes: Some(1_800_000), ..knobs },
    ];
    for cfg in systems {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (stats, truth) =
            write_btf_with_truth(std::fs::File::create(dir.join("synth.btf")).unwrap(), &cfg)
                .unwrap();
        ok(dir, &["ingest", "--archive", "db", "synth.btf"]);
        let mut want = Vec::new();
        // deadline_summary judges the complete instances that have a deadline: with no
        // deadline file, those of a process activated at least twice (an implicit period);
        // and counts apart the cut ones whose deadline passed before the trace's last line
        // (a miss whenever they would end). The deadline: the time to the next activation
        // at a later instant, for the last one the time since the one before.
        let mut want_deadlines = Vec::new();
        let mut left_out = 0;
        let mut unfinished_misses = 0;
        for p in &truth.processes {
            let acts: Vec<_> = truth.activations.iter().filter(|a| a.process == p.name).collect();
            let activated = acts.len();
            let complete = truth.instances.iter().filter(|i| i.entity == p.name).count();
            left_out += activated - complete;
            if activated > 0 {
                want.push(vec![is(&p.name), is(complete), is(activated - complete)]);
                let deadline = |at: i64| {
                    let next = acts.iter().map(|a| a.activate_ts).filter(|&t| t > at).min();
                    let prev = acts.iter().map(|a| a.activate_ts).filter(|&t| t < at).max();
                    next.map(|n| n - at).or(prev.map(|p| at - p))
                };
                let missed = truth
                    .cut
                    .iter()
                    .filter(|c| c.entity == p.name)
                    .filter(|c| {
                        deadline(c.activate_ts).is_some_and(|d| stats.last_ts > c.activate_ts + d)
                    })
                    .count();
                unfinished_misses += missed;
                let judged = if activated > 1 { complete } else { 0 };
                want_deadlines.push(vec![
                    is(&p.name),
                    is(judged),
                    is(activated - judged),
                    is(missed),
                ]);
            }
        }
        assert!(left_out > 0, "the cut leaves instances under way");
        let cut_procs = truth.cut.iter().filter(|c| c.entity_type != "R").count();
        assert_eq!(left_out, cut_procs);
        let cols = ["entity", "instances", "instances_left_out"];
        let mut diffs = Vec::new();
        for q in ["response_times", "preemptions", "blocking"] {
            let got = rows_of(dir, &["sql", "-c", &format!("SELECT * FROM {q}")]);
            diffs.extend(compare(q, &got, &cols, 1, want.clone()));
        }
        let got = rows_of(dir, &["sql", "-c", "SELECT * FROM deadline_summary"]);
        let dcols = ["entity", "instances", "instances_left_out", "unfinished_misses"];
        diffs.extend(compare("deadline_summary", &got, &dcols, 1, want_deadlines));
        let run = Run::new(dir, &truth, stats.last_ts);
        diffs.extend(instance_diffs(dir, &truth.instances));
        diffs.extend(cut_diffs(&run));
        diffs.extend(lock_requests_and_holders(&run));
        diffs.extend(semaphore_intervals(&run));
        diffs.extend(state_intervals(&run));
        // What the cut leaves under way.
        let cut = &truth.cut;
        let in_state = |s: &str| cut.iter().filter(|c| c.state == s).count();
        let locks = &truth.lock_requests;
        let held = locks.iter().filter(|l| l.assigned_ts.is_some() && l.released_ts.is_none());
        let held_c = held.filter(|l| l.semaphore == "SEM_C").count();
        let queued = locks.iter().filter(|l| l.queued && l.assigned_ts.is_none()).count();
        let event_waits = truth.waits.iter().filter(|w| w.release_ts.is_none()).count();
        let migrated = cut.iter().filter(|c| c.migrations > 0).count();
        println!(
            "{cfg:?}: {} instances cut ({} never started, {} parking, {queued} queued and \
             {event_waits} waiting for an event, {migrated} migrated, {unfinished_misses} past \
             their deadline), {held_c} SEM_C slots held",
            cut.len(),
            in_state("active"),
            in_state("parking"),
        );
        if cfg.seed == 4 {
            assert!(queued > 0 && event_waits > 0 && held_c > 0 && migrated > 0);
        }
        if cfg.seed == 5 {
            assert!(in_state("parking") > 0 && held_c > 0 && migrated > 0);
        }
        assert!(
            diffs.is_empty(),
            "{} differences with the simulator ({cfg:?}), first ones:\n{}",
            diffs.len(),
            diffs.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}
