//! `tracedb query NAME`: run a predefined analysis, for all captures or one.
use super::ArchiveArg;
use crate::output::OutputFormat;
use crate::store::{queries, Archive};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Run a predefined analysis (see `tracedb queries`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Analysis name.
    name: String,
    #[command(flatten)]
    archive: ArchiveArg,
    /// Only this capture: an id, a name, or a tag KEY=VALUE (every capture so tagged).
    /// Repeatable: the captures any of them names. Default: every capture. Rows have a
    /// capture_id column either way.
    #[arg(long = "capture", value_name = "ID|NAME|KEY=VALUE")]
    captures: Vec<String>,
    /// A parameter of the analysis, KEY=VALUE (repeatable), e.g. window=500us or
    /// deadlines=FILE; `tracedb queries NAME` lists an analysis's parameters and defaults.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs `query`.
pub fn run(args: Args) -> Result<()> {
    let Some(q) = queries::find(&args.name) else {
        let names: Vec<String> = queries::catalog().into_iter().map(|q| q.name).collect();
        return Err(Error::Usage(format!(
            "no analysis '{}' (see `tracedb queries`: {})",
            args.name,
            names.join(", ")
        )));
    };
    let mut values = Vec::new();
    for p in &args.params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--param {p}: expected KEY=VALUE")))?;
        values.push((k.trim().to_string(), v.trim().to_string()));
    }
    // Usage errors before the archive is opened: exit status 2 whatever the archive is.
    q.check(&values)?;
    let archive = Archive::open(&args.archive.archive)?;
    let mut captures = Vec::new();
    for key in &args.captures {
        captures.extend(archive.manifest.select(key, &archive.dir)?.iter().map(|c| c.capture_id));
    }
    captures.sort_unstable();
    captures.dedup();
    let conn = archive.connect()?;
    let (rest, _) = load_file_params(&conn, &q, values)?;
    let sql = q.invocation(&rest, &captures)?;
    let mut out = super::stdout();
    super::sql::run_statement(&conn, &sql, args.format, &mut out)?;
    out.flush().map_err(Error::Output)
}

/// Loads the file parameters of `q` found in `values` (`deadlines=FILE` fills
/// `param_deadlines`, replacing what it held) and returns the other parameters, and whether
/// a file was loaded (the shell puts the session's own rows back after its run).
pub fn load_file_params(
    conn: &duckdb::Connection,
    q: &crate::store::queries::Query,
    values: Vec<(String, String)>,
) -> Result<(Vec<(String, String)>, bool)> {
    let (files, rest): (Vec<_>, Vec<_>) = values
        .into_iter()
        .partition(|(k, _)| q.params.iter().any(|p| &p.name == k && p.kind == "file"));
    if !files.is_empty() {
        conn.execute_batch("DELETE FROM param_deadlines")?;
    }
    for (k, v) in &files {
        if k == "deadlines" {
            load_deadlines(conn, Path::new(v))?;
        }
    }
    Ok((rest, !files.is_empty()))
}

/// Fills `param_deadlines` from a deadline file (read by deadline_misses and
/// deadline_summary before the deadlines stored at ingest).
pub fn load_deadlines(conn: &duckdb::Connection, path: &Path) -> Result<()> {
    let rules = crate::ingest::deadlines::read(path)?;
    let mut stmt = conn.prepare("INSERT INTO param_deadlines VALUES (?, ?)")?;
    for (entity, ns) in rules {
        stmt.execute(duckdb::params![entity, ns])?;
    }
    Ok(())
}
