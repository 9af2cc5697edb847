//! Ingest benchmark: tracedb's whole ingest (parse, derive, zstd Parquet) against DuckDB's own
//! `read_csv` loading the same BTF file into a table, in the same run on the same machine.
//!
//! ```text
//! cargo build --release && cargo run --release --example bench_ingest -- [--mb 256] [--file F.btf]
//! ```
//! Without `--file`, a synthetic 4-core trace of `--mb` MiB is generated once (cached next to
//! the binary). Prints MB/s, events/s, peak memory and archive size for both.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_ingest: error: {e}");
        std::process::exit(1);
    }
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(p) {
        for e in entries.flatten() {
            let path = e.path();
            total += if path.is_dir() {
                dir_bytes(&path)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            };
        }
    }
    total
}

fn peak_rss_self_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Waits for `child` and returns its exit status and its own peak RSS in KiB.
fn wait_with_peak(child: &std::process::Child) -> (i32, u64) {
    let pid = libc::pid_t::try_from(child.id()).unwrap_or(0);
    let mut status = 0;
    // SAFETY: wait4 writes into the status and rusage values we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc != pid {
        return (-1, 0);
    }
    (status, u64::try_from(usage.ru_maxrss).unwrap_or(0))
}

fn run() -> Result<(), String> {
    let mut mb = 256u64;
    let mut file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mb" => mb = args.next().and_then(|v| v.parse().ok()).ok_or("--mb needs a number")?,
            "--file" => file = args.next().map(PathBuf::from),
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let release = exe.parent().and_then(Path::parent).ok_or("cannot find the target directory")?;
    let tracedb = release.join("tracedb");
    if !tracedb.is_file() {
        return Err(format!("{} is missing: run `cargo build --release` first", tracedb.display()));
    }
    let input = match file {
        Some(f) => f,
        None => {
            let dir = release.join("bench-data");
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let f = dir.join(format!("synth-{mb}mb.btf"));
            if !f.is_file() {
                eprintln!("generating {} ...", f.display());
                let cfg = tracedb::synth::SynthConfig {
                    target_bytes: Some(mb << 20),
                    ..Default::default()
                };
                let out = std::fs::File::create(&f).map_err(|e| e.to_string())?;
                tracedb::synth::write_btf(out, &cfg).map_err(|e| e.to_string())?;
            }
            f
        }
    };
    let size = std::fs::metadata(&input).map_err(|e| e.to_string())?.len();
    let mbytes = size as f64 / 1e6;

    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let archive = tmp.path().join("bench.tdb");
    let log = tmp.path().join("ingest.log");
    let t = Instant::now();
    let child = Command::new(&tracedb)
        .arg("ingest")
        .arg("--archive")
        .arg(&archive)
        .arg(&input)
        .stderr(std::fs::File::create(&log).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| e.to_string())?;
    let (status, peak) = wait_with_peak(&child);
    let secs = t.elapsed().as_secs_f64();
    let summary = std::fs::read_to_string(&log).unwrap_or_default();
    if status != 0 {
        return Err(format!("tracedb ingest failed: {summary}"));
    }
    // DuckDB second, in this process: its peak is this process's high-water mark (tracedb
    // ran first, from a small parent, as a fork inherits the parent's peak RSS).
    let conn = duckdb::Connection::open_in_memory().map_err(|e| e.to_string())?;
    let path = input.to_string_lossy().replace('\'', "''");
    let t = Instant::now();
    conn.execute_batch(&format!(
        "CREATE TABLE raw AS SELECT * FROM read_csv('{path}', header = false, comment = '#', delim = ',', \
         auto_detect = false, null_padding = true, columns = {{'time': 'BIGINT', 'source': 'VARCHAR', \
         'source_instance': 'BIGINT', 'target_type': 'VARCHAR', 'target': 'VARCHAR', \
         'target_instance': 'BIGINT', 'action': 'VARCHAR', 'note': 'VARCHAR'}})"
    ))
    .map_err(|e| e.to_string())?;
    let duck_secs = t.elapsed().as_secs_f64();
    let rows: i64 =
        conn.query_row("SELECT count(*) FROM raw", [], |r| r.get(0)).map_err(|e| e.to_string())?;
    let raw_parquet = tmp.path().join("raw.parquet");
    conn.execute_batch(&format!(
        "COPY raw TO '{}' (FORMAT parquet, COMPRESSION zstd)",
        raw_parquet.to_string_lossy().replace('\'', "''")
    ))
    .map_err(|e| e.to_string())?;
    let raw_parquet_bytes = std::fs::metadata(&raw_parquet).map(|m| m.len()).unwrap_or(0);
    let duck_peak = peak_rss_self_kb();
    drop(conn);

    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(archive.join("manifest.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let events = manifest["captures"][0]["event_count"].as_u64().unwrap_or(0);
    let source_bytes = dir_bytes(&archive.join("sources"));
    let archive_bytes = dir_bytes(&archive) - source_bytes;

    println!("input: {} ({:.1} MB, {} events)", input.display(), mbytes, events);
    println!("{}", summary.trim());
    println!();
    println!("| | time | MB/s | events/s | peak memory | output size |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| tracedb ingest (parse, derive, zstd Parquet, keep source) | {secs:.2} s | {:.0} | {:.2} M | {} MB | {:.1} MB of tables (+ {:.1} MB kept source) |",
        mbytes / secs,
        events as f64 / secs / 1e6,
        peak / 1024,
        archive_bytes as f64 / 1e6,
        source_bytes as f64 / 1e6
    );
    println!(
        "| DuckDB read_csv into a table | {duck_secs:.2} s | {:.0} | {:.2} M | {} MB | {:.1} MB as zstd Parquet (raw rows) |",
        mbytes / duck_secs,
        rows as f64 / duck_secs / 1e6,
        duck_peak / 1024,
        raw_parquet_bytes as f64 / 1e6
    );
    println!();
    println!("speed ratio tracedb / DuckDB read_csv: {:.2}", duck_secs / secs);
    println!(
        "size ratio archive / DuckDB raw zstd Parquet: {:.2}",
        archive_bytes as f64 / raw_parquet_bytes.max(1) as f64
    );
    Ok(())
}
