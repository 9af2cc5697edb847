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
pub const CAPTURES_SQL: &str = "SELECT c.capture_id, c.name, c.format, c.event_count AS events, \
    c.ts_max - c.ts_min AS span_ns, c.time_unit, c.source_bytes AS bytes_in, \
    c.source_text_bytes AS bytes_text, s.bytes AS bytes_archive, \
    round(coalesce(c.source_text_bytes, c.source_bytes) / s.bytes, 2) AS ratio, c.tags, c.source_files, c.ingested_at \
    FROM captures c LEFT JOIN (SELECT capture_id, sum(bytes) AS bytes FROM capture_storage GROUP BY capture_id) s \
    USING (capture_id) ORDER BY c.capture_id";

/// [`CAPTURES_SQL`] for `--format json`: `tags` an object and `source_files` an array, not
/// strings holding their JSON text (`jq '.[].source_files[0]'` works). Text formats keep
/// the JSON text, which reads back more easily than DuckDB's spelling of a list or map.
/// The shell's `.captures` in json mode uses it too.
pub fn captures_json_sql() -> String {
    CAPTURES_SQL.replace(
        "c.tags, c.source_files,",
        "c.tags::JSON::MAP(VARCHAR, VARCHAR) AS tags, \
         c.source_files::JSON::VARCHAR[] AS source_files,",
    )
}

/// Runs `captures`.
pub fn run(args: Args) -> Result<()> {
    let archive = Archive::open(&args.archive.archive)?;
    let conn = archive.connect()?;
    let mut out = super::stdout();
    let sql = match args.format {
        OutputFormat::Json => captures_json_sql(),
        _ => CAPTURES_SQL.to_string(),
    };
    super::sql::run_statement(&conn, &sql, args.format, &mut out)?;
    out.flush().map_err(Error::Output)
}
