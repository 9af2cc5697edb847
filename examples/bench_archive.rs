//! Archive size benchmark: for every capture in `../shared/datasets` and `datasets/`, the
//! raw size, `zstd -19` of the raw bytes, DuckDB's zstd Parquet of the raw rows (BTF only:
//! `read_csv` knows nothing of BTF's meaning) and tracedb's archive, table by table.
//!
//! ```text
//! cargo build --release && cargo run --release --example bench_archive -- [FILE_OR_DIR]...
//! ```
//! Prints the Markdown tables the README's "Compression" section shows. Sources are not kept
//! (`--no-keep-source`): the comparison is about the tables.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Tables shown in their own column; the rest are summed as "other".
const MAIN_TABLES: [&str; 3] = ["events", "intervals", "instances"];

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_archive: error: {e}");
        std::process::exit(1);
    }
}

struct Row {
    name: String,
    raw: u64,
    zstd19: u64,
    duckdb: Option<u64>,
    /// DuckDB's zstd Parquet of tracedb's own tables (same rows, DuckDB's encodings).
    duckdb_tables: u64,
    tables: Vec<(String, u64)>,
}

fn run() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let release = exe.parent().and_then(Path::parent).ok_or("cannot find the target directory")?;
    let tracedb = release.join("tracedb");
    if !tracedb.is_file() {
        return Err(format!("{} is missing: run `cargo build --release` first", tracedb.display()));
    }
    let mut roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        roots = vec![here.join("../shared/datasets"), here.join("datasets")];
    }
    let mut inputs = Vec::new();
    for r in &roots {
        collect(r, &mut inputs);
    }
    inputs.sort();
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let archive = tmp.path().join(format!("a{i}.tdb"));
        let mut cmd = Command::new(&tracedb);
        cmd.args(["ingest", "--no-keep-source", "--archive"]).arg(&archive);
        if let Some(options) = qs_options(input) {
            let dic = tmp.path().join(format!("a{i}.dic"));
            std::fs::write(&dic, options).map_err(|e| e.to_string())?;
            cmd.args(["--format", "qs", "--qs-dic"]).arg(&dic);
        }
        let out = cmd.arg(input).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            // Not every file in the datasets is a trace (READMEs, header-only samples).
            eprintln!(
                "skipped {}: {}",
                input.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            continue;
        }
        let mut raw = if input.is_dir() { read_dir_raw(input)? } else { read_raw(input)? };
        // A QS capture's `.dic` beside it is part of it, as a Paraver trace's .pcf and .row.
        if let Ok(dic) = std::fs::read(input.with_extension("dic")) {
            raw.extend_from_slice(&dic);
        }
        let zstd19 = zstd::bulk::compress(&raw, 19).map_err(|e| e.to_string())?.len() as u64;
        let duckdb =
            if is_btf(input) { Some(duckdb_raw_parquet(input, tmp.path())?) } else { None };
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(archive.join("manifest.json")).map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        let mut tables = Vec::new();
        if let Some(files) = manifest["captures"][0]["files"].as_object() {
            for (t, f) in files {
                tables.push((t.clone(), f["bytes"].as_u64().unwrap_or(0)));
            }
        }
        let duckdb_tables = duckdb_copy_of_tables(&archive, tmp.path())?;
        let name = display_name(input, &roots);
        rows.push(Row { name, raw: raw.len() as u64, zstd19, duckdb, duckdb_tables, tables });
    }
    print_tables(&rows);
    Ok(())
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_file() {
        out.push(p.to_path_buf());
        return;
    }
    // An ovni output directory (thread.prv beside cpu.prv) is one capture.
    if p.join("thread.prv").is_file() {
        out.push(p.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(p) else { return };
    for e in entries.flatten() {
        let path = e.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // Damaged fixtures (datasets/damaged/) test the readers, not the archive's size.
        if path.is_dir() && name == "damaged" {
            continue;
        }
        if path.is_dir() {
            collect(&path, out);
        } else if [".btf", ".btf.gz", ".btf.zst", ".prv", ".prv.gz", ".qs", ".bin"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            out.push(path);
        }
    }
}

/// QSPY options of the QS samples that carry neither a target-info record nor a `.dic`
/// (QP 5.x and 4.2, from QSPY's own decodes of them: see tests/qs.rs).
fn qs_options(p: &Path) -> Option<&'static str> {
    match p.file_name()?.to_str()? {
        "qp5-dpp.qs" => Some("-v540 -T4 -O4 -F4 -S2 -C4\n"),
        "qp5-dpp64.qs" => Some("-v420\n-T4 -O8 -F8 -S2 -E4 -Q4 -P4 -B4 -C4\n"),
        _ => None,
    }
}

/// The path below the root it was found in, e.g. `btf/freertos-1core.btf`.
fn display_name(p: &Path, roots: &[PathBuf]) -> String {
    let rel =
        roots.iter().find_map(|r| p.strip_prefix(r).ok().filter(|r| !r.as_os_str().is_empty()));
    rel.unwrap_or(p).to_string_lossy().into_owned()
}

/// The Paraver files of an ovni output directory (`.prv`, `.pcf`, `.row`), concatenated.
fn read_dir_raw(p: &Path) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for f in ["cpu.prv", "cpu.pcf", "cpu.row", "thread.prv", "thread.pcf", "thread.row"] {
        if let Ok(b) = std::fs::read(p.join(f)) {
            out.extend_from_slice(&b);
        }
    }
    Ok(out)
}

fn is_btf(p: &Path) -> bool {
    let n = p.to_string_lossy();
    n.ends_with(".btf") || n.ends_with(".btf.gz") || n.ends_with(".btf.zst")
}

/// The file's bytes, decompressed when it is gzip or zstd.
fn read_raw(p: &Path) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut out = Vec::new();
    // A damaged stream (datasets/damaged/) counts the text that decodes, as ingest reads it.
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out);
    } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let _ =
            zstd::stream::read::Decoder::new(&bytes[..]).and_then(|mut d| d.read_to_end(&mut out));
    } else {
        out = bytes;
    }
    Ok(out)
}

/// Bytes of DuckDB's `COPY ... (FORMAT parquet, COMPRESSION zstd)` of the BTF rows, read
/// with typed columns (the most favourable reading for DuckDB: integers stay integers).
fn duckdb_raw_parquet(input: &Path, tmp: &Path) -> Result<u64, String> {
    let conn = duckdb::Connection::open_in_memory().map_err(|e| e.to_string())?;
    let out = tmp.join("raw.parquet");
    let q = |p: &Path| p.to_string_lossy().replace('\'', "''");
    conn.execute_batch(&format!(
        "COPY (SELECT * FROM read_csv('{}', header = false, comment = '#', delim = ',', \
         auto_detect = false, null_padding = true, columns = {{'time': 'BIGINT', 'source': 'VARCHAR', \
         'source_instance': 'BIGINT', 'target_type': 'VARCHAR', 'target': 'VARCHAR', \
         'target_instance': 'BIGINT', 'action': 'VARCHAR', 'note': 'VARCHAR'}})) \
         TO '{}' (FORMAT parquet, COMPRESSION zstd)",
        q(input),
        q(&out)
    ))
    .map_err(|e| format!("{}: {e}", input.display()))?;
    std::fs::metadata(&out).map(|m| m.len()).map_err(|e| e.to_string())
}

/// Bytes of DuckDB's `COPY (SELECT * FROM t) TO ... (FORMAT parquet, COMPRESSION zstd)` of
/// every table of the archive (the stored columns, as in tracedb's files): the same rows
/// written with DuckDB's encodings, one file per table.
fn duckdb_copy_of_tables(archive: &Path, tmp: &Path) -> Result<u64, String> {
    let a = tracedb::store::Archive::open(archive).map_err(|e| e.to_string())?;
    let conn = a.connect().map_err(|e| e.to_string())?;
    let mut total = 0;
    for t in tracedb::store::schema::tables() {
        let out = tmp.join(format!("copy-{}.parquet", t.name));
        conn.execute_batch(&format!(
            "COPY (SELECT {} FROM {}) TO '{}' (FORMAT parquet, COMPRESSION zstd)",
            t.stored_column_list(),
            t.name,
            out.to_string_lossy().replace('\'', "''")
        ))
        .map_err(|e| format!("{}: {e}", t.name))?;
        total += std::fs::metadata(&out).map(|m| m.len()).map_err(|e| e.to_string())?;
    }
    Ok(total)
}

fn print_tables(rows: &[Row]) {
    println!("| file | raw | zstd -19 of raw | DuckDB zstd Parquet of raw rows | tracedb archive (all tables) | archive / DuckDB | archive / raw | DuckDB zstd Parquet of the same tables |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in rows {
        let total: u64 = r.tables.iter().map(|t| t.1).sum();
        let duck = r.duckdb.map_or("n/a".to_string(), |d| d.to_string());
        let vs = r.duckdb.map_or("n/a".to_string(), |d| format!("{:.2}", total as f64 / d as f64));
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.3} | {} |",
            r.name,
            r.raw,
            r.zstd19,
            duck,
            total,
            vs,
            total as f64 / r.raw as f64,
            r.duckdb_tables
        );
    }
    println!();
    println!("| file | events (bytes) | intervals (bytes) | instances (bytes) | other tables (bytes) | files |");
    println!("|---|---|---|---|---|---|");
    for r in rows {
        let get = |t: &str| r.tables.iter().find(|x| x.0 == t).map_or(0, |x| x.1);
        let other: u64 =
            r.tables.iter().filter(|t| !MAIN_TABLES.contains(&t.0.as_str())).map(|t| t.1).sum();
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.name,
            get("events"),
            get("intervals"),
            get("instances"),
            other,
            r.tables.len()
        );
    }
}
