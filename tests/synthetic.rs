//! A generated multi-core system (src/synth/) whose counts are known, through the whole
//! pipeline: ingest, derive, Parquet, DuckDB views; and every derived instance compared field
//! by field with what the simulator says the instance did.
use crate::util::{csv, ok, scalar};
use std::collections::HashMap;
use tracedb::synth::{write_btf, write_btf_with_truth, SynthConfig, TruthInstance};

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
        "waiting_time" | "parking_time" => "0".to_string(),
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
        let mut cols_sql = String::from("entity, instance");
        for c in PROCESS_COLUMNS {
            cols_sql.push_str(", ");
            cols_sql.push_str(c);
        }
        let out = csv(
            tmp.path(),
            "db",
            &format!("SELECT {cols_sql} FROM instances WHERE entity_type IN ('T', 'I', 'R')"),
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
        assert_eq!(rows.len(), truth.len(), "instance rows vs simulated instances");
        let mut diffs = Vec::new();
        for i in &truth {
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
        assert!(
            diffs.is_empty(),
            "{} differences with the simulator ({cfg:?}), first ones:\n{}",
            diffs.len(),
            diffs.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
        );
        // The task that ran each runnable is its parent entity.
        let parents = csv(tmp.path(), "db", "SELECT name, parent FROM entities WHERE type = 'R'");
        let parent: HashMap<&str, &str> =
            parents.lines().skip(1).filter_map(|l| l.split_once(',')).collect();
        for i in truth.iter().filter(|i| i.entity_type == "R") {
            let task = i.task.as_ref().map(|t| t.0.as_str());
            assert_eq!(parent.get(i.entity.as_str()).copied(), task, "{i:?}");
        }
    }
}
