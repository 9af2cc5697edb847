//! Helpers: run the tracedb binary, temporary archives.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `bytes` gzip-compressed, as a `.gz` input file holds them.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).expect("gzip in memory");
    gz.finish().expect("gzip in memory")
}

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracedb"))
}

/// Runs tracedb with `args` in `cwd`.
pub fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("TRACEDB_ARCHIVE")
        .stdin(Stdio::null())
        .output()
        .expect("tracedb runs")
}

/// Runs tracedb with `input` piped to its standard input.
pub fn run_with_stdin(cwd: &Path, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("TRACEDB_ARCHIVE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tracedb runs");
    child.stdin.take().expect("piped stdin").write_all(input).expect("stdin written");
    child.wait_with_output().expect("tracedb ends")
}

/// Runs tracedb and asserts success; returns stdout.
pub fn ok(cwd: &Path, args: &[&str]) -> String {
    let out = run(cwd, args);
    assert!(
        out.status.success(),
        "tracedb {args:?} failed ({:?}):\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// CSV output of one query over the archive `db` in `cwd`, with LF line ends.
pub fn csv(cwd: &Path, db: &str, sql: &str) -> String {
    ok(cwd, &["sql", "--archive", db, "--format", "csv", "-c", sql]).replace("\r\n", "\n")
}

/// The single value of a one-row, one-column query.
pub fn scalar(cwd: &Path, db: &str, sql: &str) -> String {
    let out = csv(cwd, db, sql);
    let mut lines = out.lines();
    lines.next();
    lines.next().unwrap_or_default().to_string()
}

/// ../shared/datasets, or None (tests using it then skip with a message).
pub fn shared_datasets() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: ../shared/datasets is absent (a plain clone has no shared/ beside it)");
        None
    }
}

/// Runs tracedb, reads the first line of its output and closes the pipe, as `| head -1`
/// does; returns that line and how tracedb ended.
pub fn first_line_then_close(dir: &Path, args: &[&str]) -> (String, Output) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    (first, child.wait_with_output().unwrap())
}

/// Writes `dir/m.btf`, a synthetic system whose one-slot semaphores are mutexes with
/// preemptible holders and queued waiters (`SynthConfig::preemptible_locks`), `ms` long.
pub fn write_mutex_trace(dir: &Path, ms: i64) {
    let cfg = tracedb::synth::SynthConfig {
        isrs: 4,
        duration_ns: ms * 1_000_000,
        counting_slots: 1,
        preemptible_locks: true,
        ..tracedb::synth::SynthConfig::default()
    };
    tracedb::synth::write_btf(std::fs::File::create(dir.join("m.btf")).unwrap(), &cfg).unwrap();
}
