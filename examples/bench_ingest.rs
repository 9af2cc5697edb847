//! Ingest benchmark: tracedb's whole ingest (parse, derive, zstd Parquet) against DuckDB's own
//! `read_csv` loading the same BTF file into a table, in the same run on the same machine.
//!
//! ```text
//! cargo build --release && cargo run --release --example bench_ingest -- [--mb 256] [--file F.btf]
//! cargo run --release --example bench_ingest -- --paraver 600
//! ```
//! Without `--file`, a synthetic 4-core trace of `--mb` MiB is generated once (cached next to
//! the binary). Prints MB/s, events/s, peak memory and archive size for both.
//!
//! `--paraver N` times a Paraver ingest instead (tracedb alone: DuckDB's `read_csv` has no
//! schema for Paraver's records): the Extrae sample of `../shared/datasets/paraver` (lulesh,
//! 8 ranks) repeated N times one after the other, with its `.pcf` and `.row`, built once next
//! to the binary.
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
    let mut paraver: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mb" => mb = args.next().and_then(|v| v.parse().ok()).ok_or("--mb needs a number")?,
            "--file" => file = args.next().map(PathBuf::from),
            "--paraver" => {
                paraver = Some(
                    args.next().and_then(|v| v.parse().ok()).ok_or("--paraver needs a number")?,
                )
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let release = exe.parent().and_then(Path::parent).ok_or("cannot find the target directory")?;
    let tracedb = release.join("tracedb");
    if !tracedb.is_file() {
        return Err(format!("{} is missing: run `cargo build --release` first", tracedb.display()));
    }
    let input = match (file, paraver) {
        (_, Some(n)) => repeated_paraver(&release.join("bench-data"), n)?,
        (Some(f), None) => f,
        (None, None) => {
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
    let run = Run { input: &input, archive: &archive, summary: &summary, mbytes, secs, peak };
    if paraver.is_some() {
        run.print("tracedb ingest of a Paraver trace")?;
        return Ok(());
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

    let archive_bytes = run.print("tracedb ingest (parse, derive, zstd Parquet, keep source)")?;
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

/// One tracedb ingest, timed.
struct Run<'a> {
    input: &'a Path,
    archive: &'a Path,
    summary: &'a str,
    mbytes: f64,
    secs: f64,
    /// Peak RSS, KiB.
    peak: u64,
}

impl Run<'_> {
    /// Prints the input, tracedb's summary and the table's header and row for this ingest
    /// (labelled `what`); returns the bytes of its tables.
    fn print(&self, what: &str) -> Result<u64, String> {
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(self.archive.join("manifest.json"))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        let events = manifest["captures"][0]["event_count"].as_u64().unwrap_or(0);
        let source_bytes = dir_bytes(&self.archive.join("sources"));
        let archive_bytes = dir_bytes(self.archive) - source_bytes;
        let (mbytes, secs) = (self.mbytes, self.secs);
        println!("input: {} ({:.1} MB, {} events)", self.input.display(), mbytes, events);
        println!("{}", self.summary.trim());
        println!();
        println!("| | time | MB/s | events/s | peak memory | output size |");
        println!("|---|---|---|---|---|---|");
        println!(
            "| {what} | {secs:.2} s | {:.0} | {:.2} M | {} MB | {:.1} MB of tables (+ {:.1} MB kept source) |",
            mbytes / secs,
            events as f64 / secs / 1e6,
            self.peak / 1024,
            archive_bytes as f64 / 1e6,
            source_bytes as f64 / 1e6
        );
        Ok(archive_bytes)
    }
}

/// The shared Extrae sample repeated `n` times in `dir` (made once): each copy's records
/// shifted by the trace's end time times its index, the header's end time `n` times the
/// sample's, the communicator lines once; the `.pcf` and `.row` copied beside it.
fn repeated_paraver(dir: &Path, n: u64) -> Result<PathBuf, String> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/paraver");
    let stem = "extrae-lulesh-7+1-chop8";
    let sample = shared.join(format!("{stem}.prv"));
    let text = std::fs::read_to_string(&sample)
        .map_err(|e| format!("{}: {e} (--paraver needs ../shared)", sample.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let out = dir.join(format!("lulesh-x{n}.prv"));
    for ext in ["pcf", "row"] {
        std::fs::copy(shared.join(format!("{stem}.{ext}")), out.with_extension(ext))
            .map_err(|e| e.to_string())?;
    }
    if out.is_file() {
        return Ok(out);
    }
    eprintln!("generating {} ...", out.display());
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty sample")?;
    // `#Paraver (date):<end>_ns:<rest>`: the date holds a `:` of its own.
    let (date, rest) = header.split_once("):").ok_or("unexpected header")?;
    let (end, rest) = rest.split_once(':').ok_or("unexpected header")?;
    let end_ns: u64 = end.trim_end_matches("_ns").parse().map_err(|_| "unexpected end time")?;
    let body: Vec<&str> = lines.filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let mut w = std::io::BufWriter::new(std::fs::File::create(&out).map_err(|e| e.to_string())?);
    use std::io::Write;
    let io = |e: std::io::Error| e.to_string();
    writeln!(w, "{date}):{}_ns:{rest}", end_ns * n).map_err(io)?;
    for l in body.iter().filter(|l| l.starts_with("c:")) {
        writeln!(w, "{l}").map_err(io)?;
    }
    for k in 0..n {
        let off = end_ns * k;
        for l in body.iter().filter(|l| !l.starts_with("c:")) {
            let mut f: Vec<String> = l.split(':').map(str::to_string).collect();
            let times: &[usize] = match f.first().map(String::as_str) {
                Some("1") => &[5, 6],
                Some("2") => &[5],
                Some("3") => &[5, 6, 11, 12],
                _ => &[],
            };
            for &i in times {
                if let Some(t) = f.get_mut(i).filter(|t| !t.starts_with('-')) {
                    let v: u64 = t.parse().map_err(|_| format!("unexpected record {l}"))?;
                    *t = (v + off).to_string();
                }
            }
            writeln!(w, "{}", f.join(":")).map_err(io)?;
        }
    }
    w.flush().map_err(io)?;
    Ok(out)
}
