//! `tracedb captures`: the captures of the archive, one row each.
use super::ArchiveArg;
use crate::output::OutputFormat;
use crate::store::Archive;
use crate::{Error, Result};
use std::io::Write;

/// List the captures in the archive.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    archive: ArchiveArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// The query behind `captures` (also what `.captures` shows in the shell).
pub const CAPTURES_SQL: &str = "SELECT capture_id, name, format, event_count AS events, \
    time_unit, ts_min, ts_max, source_bytes, ingested_at FROM captures ORDER BY capture_id";

/// Runs `captures`.
pub fn run(args: Args) -> Result<()> {
    let archive = Archive::open(&args.archive.archive)?;
    let conn = archive.connect()?;
    let mut out = super::stdout();
    super::sql::run_statement(&conn, CAPTURES_SQL, args.format, &mut out)?;
    out.flush().map_err(Error::Output)
}
