//! `tracedb export`: one capture out of the archive, as BTF, Chrome JSON or Parquet.
use super::ArchiveArg;
use crate::store::{export, Archive};
use crate::Result;
use std::path::PathBuf;

/// What to export to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// BTF text from the normalised events (times in ns).
    Btf,
    /// Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing).
    ChromeJson,
    /// One zstd Parquet file per table, in a directory.
    Parquet,
}

/// Write one capture out of the archive: `--to btf FILE`, `--to chrome-json FILE`,
/// `--to parquet DIR`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture id, name, or tag KEY=VALUE that only it has.
    #[arg(value_name = "CAPTURE")]
    capture: String,
    /// Output kind.
    #[arg(long, value_enum)]
    to: Target,
    /// Output file (a directory for parquet); `-` is standard output (btf, chrome-json).
    #[arg(value_name = "OUT")]
    out: PathBuf,
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `export`.
pub fn run(args: Args) -> Result<()> {
    // Before DuckDB starts its threads: they inherit the blocked signals. An interrupted
    // export removes its temporary file and leaves any file it would have replaced.
    crate::signals::watch(crate::signals::Ending::Now);
    let archive = Archive::open(&args.archive.archive)?;
    let entry = archive.manifest.resolve(&args.capture, &archive.dir)?.clone();
    // Only the exported capture's damage matters here: the others go unmentioned.
    let (conn, damaged) = archive.connect_with_damage()?;
    if let Some(d) = damaged.into_iter().find(|d| d.capture_id == entry.capture_id) {
        let message = format!(
            "capture {} '{}' cannot be read: {} {}; {}",
            d.capture_id,
            d.name,
            d.path,
            d.problem,
            d.repair()
        );
        return Err(crate::Error::Archive { path: archive.dir.clone(), message });
    }
    export::bound_memory(&conn)?;
    if args.to != Target::Parquet {
        warn_of_losses(&conn, entry.capture_id)?;
        if entry.time_unit == "tick" {
            crate::say!(
                "tracedb: warning: capture {} holds target ticks of unknown rate (a QS or S.Ha.R.K. \
                 capture ingested without a rate): they are written as if they were nanoseconds",
                entry.capture_id
            );
        }
    }
    let what = match args.to {
        Target::Btf => {
            format!("{} events", export::to_btf(&conn, entry.capture_id, &entry.name, &args.out)?)
        }
        Target::ChromeJson => {
            format!("{} trace events", export::to_chrome_json(&conn, entry.capture_id, &args.out)?)
        }
        Target::Parquet => {
            format!("{} tables", export::to_parquet(&conn, entry.capture_id, &args.out)?.len())
        }
    };
    let to = if args.out.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        args.out.display().to_string()
    };
    crate::say!("exported capture {} '{}' to {to}: {what}", entry.capture_id, entry.name);
    Ok(())
}

/// Says on stderr when the capture lost data at ingest (`data_loss` and `error` rows of
/// `diagnostics`): a BTF or Chrome JSON file holds the events that were read and nothing of
/// that, so it would pass for a complete trace.
fn warn_of_losses(conn: &duckdb::Connection, id: i64) -> Result<()> {
    let sql = format!(
        "SELECT severity, kind, sum(count) FROM diagnostics WHERE capture_id = {id} \
         AND severity IN ('data_loss', 'error') GROUP BY ALL ORDER BY severity DESC, kind"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok(format!(
            "{} {} ({})",
            r.get::<_, i64>(2)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(0)?
        ))
    })?;
    let found = rows.collect::<std::result::Result<Vec<_>, _>>()?;
    if !found.is_empty() {
        crate::say!(
            "tracedb: warning: capture {id} lost data when it was ingested ({}): the export holds the \
             events that were read, and says nothing of what was lost (the `diagnostics` \
             table does)",
            found.join(", ")
        );
    }
    Ok(())
}
