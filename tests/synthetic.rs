//! A generated multi-core system (src/synth.rs) whose counts are known, through the whole
//! pipeline: ingest, derive, Parquet, DuckDB views.
use crate::util::{csv, ok, scalar};
use tracedb::synth::{write_btf, SynthConfig};

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
