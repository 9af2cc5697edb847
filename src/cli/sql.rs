//! `tracedb sql`: SQL over the archive. Statements come from `-c` (repeatable), `-f FILE`,
//! or standard input when it is piped; each statement's result is printed in turn. The
//! first failing statement stops the run with exit status 1. With none of these and a
//! terminal on standard input, the interactive shell starts ([`crate::repl::shell`]).
use super::ArchiveArg;
use crate::output::{self, OutputFormat};
use crate::repl::split::split_script;
use crate::store::Archive;
use crate::{Error, Result};
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

/// Run SQL over the archive (an interactive shell on a terminal).
///
/// Tables: captures, entities, events, intervals, instances, lock_requests, messages,
/// deadlines, diagnostics (see the README's table reference). All times are ns.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    archive: ArchiveArg,
    /// SQL to run (repeatable; each may hold several statements separated by `;`).
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    commands: Vec<String>,
    /// File of SQL statements to run.
    #[arg(short = 'f', long = "file", value_name = "FILE.sql")]
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs `sql`.
pub fn run(args: Args) -> Result<()> {
    let mut scripts: Vec<String> = args.commands.clone();
    if let Some(f) = &args.file {
        scripts.push(std::fs::read_to_string(f).map_err(|e| Error::io(f, e))?);
    }
    if scripts.is_empty() {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            let archive = Archive::open(&args.archive.archive)?;
            return crate::repl::shell::run(&archive, args.format);
        }
        let mut text = String::new();
        stdin.lock().read_to_string(&mut text).map_err(|e| Error::io("<stdin>", e))?;
        scripts.push(text);
    }
    let archive = Archive::open(&args.archive.archive)?;
    let conn = archive.connect()?;
    let mut out = super::stdout();
    for script in &scripts {
        for stmt in split_script(script) {
            run_statement(&conn, &stmt, args.format, &mut out)?;
        }
    }
    out.flush().map_err(Error::Output)
}

/// Runs one statement and prints its result (nothing for a statement without columns). Rows
/// are fetched as they are produced and CSV or JSON written as they come, so a large result
/// is never held whole.
pub fn run_statement(
    conn: &duckdb::Connection,
    sql: &str,
    format: OutputFormat,
    out: &mut dyn Write,
) -> Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut stream = stmt.stream_arrow([])?;
    let schema = stream.get_schema();
    if schema.fields().is_empty() {
        return Ok(());
    }
    // DDL answers with an empty "Count" column: nothing to show.
    if schema.fields().len() == 1 && schema.field(0).name() == "Count" {
        let batches = stream.collect::<duckdb::Result<Vec<_>>>()?;
        if batches.iter().all(|b| b.num_rows() == 0) {
            return Ok(());
        }
        return output::write(out, &schema, &batches, format).map_err(Error::Output);
    }
    match output::write_stream(out, &schema, &mut stream, format.into()) {
        Ok(_) => Ok(()),
        Err(output::StreamError::Query(e)) => Err(e.into()),
        Err(output::StreamError::Io(e)) => Err(Error::Output(e)),
    }
}
