//! Analysis benchmark: every predefined analysis over an archive of at least `--events`
//! events (default 50 million), timed one by one on this machine.
//!
//! ```text
//! cargo build --release --bins --examples && cargo run --release --example bench_queries -- [--events 50000000]
//! ```
//! The synthetic trace and its archive are generated once and cached beside the binary.
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_queries: error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut events: u64 = 50_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--events" => {
                events =
                    args.next().and_then(|v| v.parse().ok()).ok_or("--events needs a number")?
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let release = exe.parent().and_then(Path::parent).ok_or("cannot find the target directory")?;
    let tracedb = release.join("tracedb");
    let dir = release.join("bench-data");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let archive = dir.join(format!("queries-{events}.tdb"));
    if !archive.join("manifest.json").is_file() {
        let trace = dir.join(format!("synth-{events}-events.btf"));
        if !trace.is_file() {
            eprintln!("generating {} ...", trace.display());
            // ~57 bytes per event in the synthetic trace; aim over, the count is checked below.
            let cfg = tracedb::synth::SynthConfig {
                target_bytes: Some(events * 59),
                ..Default::default()
            };
            let out = std::fs::File::create(&trace).map_err(|e| e.to_string())?;
            let stats = tracedb::synth::write_btf(out, &cfg).map_err(|e| e.to_string())?;
            eprintln!("{} events", stats.lines);
        }
        eprintln!("ingesting ...");
        let st = Command::new(&tracedb)
            .arg("ingest")
            .arg("--archive")
            .arg(&archive)
            .arg(&trace)
            .status()
            .map_err(|e| e.to_string())?;
        if !st.success() {
            return Err("ingest failed".into());
        }
        let _ = std::fs::remove_file(&trace);
    }
    let a = tracedb::store::Archive::open(&archive).map_err(|e| e.to_string())?;
    let total: u64 = a.manifest.captures.iter().map(|c| c.event_count).sum();
    let conn = a.connect().map_err(|e| e.to_string())?;
    let count = |sql: &str| -> Result<i64, String> {
        conn.query_row(sql, [], |r| r.get(0)).map_err(|e| e.to_string())
    };
    if total < events {
        return Err(format!("the archive has {total} events, fewer than --events {events}; delete it and raise the byte estimate"));
    }
    println!(
        "archive: {} ({} events, {} intervals, {} instances)",
        archive.display(),
        total,
        count("SELECT count(*) FROM intervals")?,
        count("SELECT count(*) FROM instances")?
    );
    println!();
    println!("| analysis | seconds | rows |");
    println!("|---|---|---|");
    for q in tracedb::store::queries::catalog() {
        let sql = q.invocation(&[], &[]).map_err(|e| e.to_string())?;
        let t = Instant::now();
        conn.execute_batch(&format!("CREATE OR REPLACE TEMP TABLE bench_out AS {sql}"))
            .map_err(|e| format!("{}: {e}", q.name))?;
        let secs = t.elapsed().as_secs_f64();
        let rows = count("SELECT count(*) FROM bench_out")?;
        println!("| {} | {secs:.2} | {rows} |", q.name);
    }
    Ok(())
}
