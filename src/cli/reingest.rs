//! `tracedb reingest`: rebuild captures' tables from their kept sources with this build.
use super::ArchiveArg;
use crate::store::ingest::{extract_sources, ingest_files, IngestOptions};
use crate::store::Archive;
use crate::{Error, Result};

/// Rebuild the tables of a capture (or of all) from the source files kept in the archive,
/// with this tracedb: the upgrade path when a table or a derivation changes. The capture
/// keeps its id, name and tags; the new tables replace the old ones atomically.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture id, name, or tag KEY=VALUE that only it has (or --all).
    #[arg(value_name = "CAPTURE", required_unless_present = "all", conflicts_with = "all")]
    capture: Option<String>,
    /// Every capture that has kept sources.
    #[arg(long)]
    all: bool,
    /// zstd level of the rebuilt Parquet files, 1 to 22 (default 3; see `ingest --help`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..=22))]
    zstd_level: Option<i32>,
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `reingest`.
pub fn run(args: Args) -> Result<()> {
    let dir = &args.archive.archive;
    Archive::must_exist(dir)?;
    // Ctrl-C stops the capture being rebuilt, which stays as it was, and ends the command.
    crate::signals::watch(crate::signals::Ending::Soon);
    let (mut archive, _lock) = Archive::open_for_write(dir)?;
    let targets: Vec<_> = match &args.capture {
        Some(c) => vec![archive.manifest.resolve(c, dir)?.clone()],
        None => archive.manifest.captures.clone(),
    };
    let mut failed = Vec::new();
    for old in targets {
        if old.sources.is_empty() {
            let msg = format!(
                "capture {} '{}' has no kept source (ingested with --no-keep-source)",
                old.capture_id, old.name
            );
            if args.all {
                crate::say!("{msg}; skipped");
                continue;
            }
            return Err(Error::Archive { path: dir.clone(), message: msg });
        }
        let deadlines = stored_deadlines(&archive, old.capture_id)?;
        // A later S.Ha.R.K. chunk file ingested alone beside its run warns again, though its
        // extracted copy has no run beside it: as `captures.meta` says, or (tracedb before
        // 2026-12 recorded it in the diagnostics only) as the old diagnostics do.
        let chunk_of_run = old.format == "shark"
            && (old.meta.contains_key(crate::ingest::shark::META_CHUNK_OF_RUN)
                || had_diagnostic(&archive, &old, "chunk_of_run"));
        let tmp = archive.dir.join(format!(".reingest.{}", std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let result = extract_sources(&archive, &old, &tmp).and_then(|traces| {
            // QS has no magic number and needs what was given on the command line: the
            // format, the tick rate and the .dic are taken from the capture as recorded.
            // So does a S.Ha.R.K. chunk dump (its chunk files are extracted beside it).
            let shark = crate::ingest::shark::SharkOptions {
                tick_rate: old.meta.get("shark.tick_rate_hz").and_then(|s| s.parse().ok()),
                chunk_of_run: Some(chunk_of_run),
            };
            let forced = match old.format.as_str() {
                "qs" => Some(crate::ingest::Format::Qs),
                "shark" => Some(crate::ingest::Format::Shark),
                "hw" => Some(crate::ingest::Format::Hw),
                // ovni streams are read together, as the kept tree of streams.
                "ovni" => Some(crate::ingest::Format::Ovni),
                _ => None,
            };
            let qs = crate::ingest::qs::QsOptions {
                tick_rate: old.meta.get("qs.tick_rate_hz").and_then(|s| s.parse().ok()),
                dic: old.meta.get("qs.dic").map(|n| tmp.join(n)).filter(|p| p.is_file()),
            };
            // A hardware-trace export likewise: its ELF and mapping were given by option.
            // Kept under a name prefixed by their role (`hw-elf.app.elf`), or, by tracedb before 2026-11,
            // beside the export under their own name.
            // Each is read under its own name, in a folder of its role, as the ingest read it:
            // `captures.meta` and the diagnostics' messages name the file, and a rebuild
            // must give them as they were (`app.elf`, not `hw-elf.app.elf`).
            let kept = |key: &str, role: &str| {
                let name = old.meta.get(key)?;
                let own = std::path::Path::new(name);
                let in_role = tmp.join(crate::ingest::hw::kept_name(role, own));
                let found = [in_role, tmp.join(name)].into_iter().find(|p| p.is_file())?;
                // A name that is more than a file name (a hand-edited manifest) is read
                // where it was found, never moved out of the folder.
                if own.file_name() != Some(own.as_os_str()) {
                    return Some(found);
                }
                let dir = tmp.join(format!(".hw-{role}"));
                let dest = dir.join(own);
                match std::fs::create_dir_all(&dir).and_then(|()| std::fs::rename(&found, &dest)) {
                    Ok(()) => Some(dest),
                    Err(_) => Some(found),
                }
            };
            let hw = crate::ingest::hw::HwOptions {
                elf: kept("hw.elf", "elf"),
                map: kept("hw.map", "map"),
            };
            let opts = IngestOptions {
                format: forced,
                qs,
                shark,
                hw,
                deadlines,
                keep_source: true,
                replace: Some(old.clone()),
                zstd_level: args.zstd_level,
                ..Default::default()
            };
            ingest_files(&mut archive, &traces, &old.name, &opts, &mut |_, _| {})
        });
        let _ = std::fs::remove_dir_all(&tmp);
        if let Some(sig) = crate::signals::interrupted() {
            let done = if result.is_ok() { "rebuilt" } else { "left as it was" };
            crate::say!(
                "tracedb: interrupted by {} (capture {} '{}' {done}; those after it not rebuilt)",
                crate::signals::name(sig),
                old.capture_id,
                old.name
            );
            crate::signals::end_by_signal(sig);
        }
        match result {
            Ok(report) => crate::say!("reingested: {}", super::ingest::summary_line(&report)),
            // With --all, one damaged capture does not keep the others from their rebuild.
            Err(e) if args.all => {
                crate::say!("capture {} '{}' not rebuilt: {e}", old.capture_id, old.name);
                failed.push(old.capture_id.to_string());
            }
            Err(e) => return Err(e),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Archive {
            path: dir.clone(),
            message: format!(
                "{} capture(s) not rebuilt (ids {}); they are left as they were",
                failed.len(),
                failed.join(", ")
            ),
        })
    }
}

/// The deadlines stored with capture `id` at ingest, read from its own `deadlines` file
/// (not through the views: a rebuild must work when other files of the archive are damaged).
fn stored_deadlines(archive: &Archive, id: i64) -> Result<Vec<(String, i64)>> {
    let Some(f) = archive
        .manifest
        .captures
        .iter()
        .find(|c| c.capture_id == id)
        .and_then(|c| c.files.get("deadlines"))
    else {
        return Ok(Vec::new());
    };
    let path = archive.dir.join(&f.path);
    if !path.is_file() {
        crate::say!("capture {id}: {} is missing; rebuilt without its deadlines", f.path);
        return Ok(Vec::new());
    }
    let conn = duckdb::Connection::open_in_memory()?;
    let sql = format!(
        "SELECT entity, deadline FROM read_parquet('{}') WHERE source = 'file'",
        path.to_string_lossy().replace('\'', "''")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    rows.collect::<std::result::Result<Vec<_>, _>>().map_err(Error::from)
}

/// Whether the capture `c` has a diagnostics row of kind `kind`, read from its own file
/// (false when that file is missing or unreadable: the rebuild goes on without it).
fn had_diagnostic(archive: &Archive, c: &crate::store::manifest::CaptureEntry, kind: &str) -> bool {
    let Some(f) = c.files.get("diagnostics") else { return false };
    let path = archive.dir.join(&f.path);
    if !path.is_file() {
        return false;
    }
    let sql = format!(
        "SELECT count(*) FROM read_parquet('{}') WHERE kind = '{}'",
        path.to_string_lossy().replace('\'', "''"),
        kind.replace('\'', "''")
    );
    duckdb::Connection::open_in_memory()
        .and_then(|conn| conn.query_row(&sql, [], |r| r.get::<_, i64>(0)))
        .is_ok_and(|n| n > 0)
}
