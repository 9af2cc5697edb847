//! Command line: the `Command` enum is the only list of subcommands; each subcommand lives
//! in its own file with its arguments first and `run()` below.
pub mod captures;
pub mod export;
pub mod ingest;
pub mod queries;
pub mod query;
pub mod reingest;
pub mod report;
pub mod rm;
pub mod sql;
pub mod verify;

use crate::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// tracedb: a trace database for embedded and real-time systems.
///
/// Ingest traces into a compressed archive of Parquet tables (events, state intervals,
/// task instances, lock requests, diagnostics) and ask questions about them in SQL.
/// Formats: BTF text; Paraver .prv with its .pcf and .row (as Extrae and ovni's emulator
/// write them; an ovni output directory is one capture); ovni binary streams; Quantum Leaps
/// QS binary with its .dic; S.Ha.R.K. tracer logs (chunk dumps, UDP captures);
/// hardware-trace CSV exports (S32DS, TRACE32), optionally with an ELF and a mapping file.
/// Plain, .gz, .zst, .bz2, .xz or a .zip of one file, detected by content.
#[derive(Debug, Parser)]
#[command(name = "tracedb", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read trace files into the archive, one capture per file.
    Ingest(ingest::Args),
    /// List the captures in the archive.
    Captures(captures::Args),
    /// Run SQL over the archive: -c, -f, piped stdin, or an interactive shell.
    ///
    /// The statements of every -c and of -f run in the order given (split on `;` outside
    /// strings, quoted names and comments), each result printed in turn. Without -c or -f,
    /// statements are read from standard input when it is not a terminal, and an interactive
    /// shell opens when it is (--format sets its starting mode). The first failing statement
    /// stops the run with exit status 1, naming the script and the line. Tables: captures,
    /// entities, events, intervals, instances, lock_requests, messages, deadlines,
    /// diagnostics, capture_storage (where each table's files are) and param_deadlines
    /// (deadlines the session's analyses use); every predefined analysis is a view or table
    /// macro of the same name.
    Sql(sql::Args),
    /// List the predefined analyses, their parameters and columns.
    Queries(queries::Args),
    /// Run a predefined analysis (response_times, deadline_misses, cpu_load, ...).
    ///
    /// An unknown analysis or capture, a --param key the analysis does not have, given twice
    /// or with a bad value is a usage error (exit status 2).
    Query(query::Args),
    /// Write a timing report of a capture (HTML, Markdown, JSON), optionally against a baseline.
    ///
    /// The extension of -o picks the form. With --baseline, every figure is shown against the
    /// baseline capture and the exit status is 3 when a task's figure regressed beyond
    /// --threshold or a task has new deadline misses (the report is written either way).
    /// --deadlines applies to both captures.
    Report(report::Args),
    /// Remove a capture from the archive.
    Rm(rm::Args),
    /// Check every archive file against the manifest (size, SHA-256, Parquet footer).
    ///
    /// Names every file that is missing, truncated or altered, every table a capture's
    /// manifest entry lacks, and every file in the table and sources/ directories that no
    /// capture lists (`unlisted`), and then exits with status 1; prints `ok: N captures, M
    /// files checked` on standard output when there is none.
    Verify(verify::Args),
    /// Write one capture out as BTF, Chrome/Perfetto JSON or Parquet files.
    Export(export::Args),
    /// Rebuild captures' tables from their kept sources with this build.
    Reingest(reingest::Args),
}

/// The environment variable that gives the archive when `--archive` does not (`main`
/// treats an empty one as unset).
pub const ARCHIVE_ENV: &str = "TRACEDB_ARCHIVE";

/// The `--archive` option shared by every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct ArchiveArg {
    /// Archive directory (created by `ingest` when absent); an empty TRACEDB_ARCHIVE counts as
    /// unset.
    #[arg(long, env = ARCHIVE_ENV, default_value = crate::store::DEFAULT_ARCHIVE, value_name = "DIR")]
    pub archive: PathBuf,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Ingest(a) => ingest::run(a),
        Command::Captures(a) => captures::run(a),
        Command::Sql(a) => sql::run(a),
        Command::Queries(a) => queries::run(a),
        Command::Query(a) => query::run(a),
        Command::Report(a) => report::run(a),
        Command::Rm(a) => rm::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Export(a) => export::run(a),
        Command::Reingest(a) => reingest::run(a),
    }
}

/// Buffered standard output; write errors become [`crate::Error::Output`] (a closed pipe is
/// recognised by `main` and is not a failure).
pub fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}
