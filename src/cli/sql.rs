//! `tracedb sql`: SQL over the archive. Statements come from `-c` (repeatable) and `-f FILE`
//! in the order given, or standard input when it is piped; each statement's result is printed in turn. The
//! first failing statement stops the run with exit status 1, with an error naming the
//! script (`-c`, `-c #2`, the file or `<stdin>`) and the line the error is on. With none of these and a
//! terminal on standard input, the interactive shell starts ([`crate::repl::shell`]).
use super::ArchiveArg;
use crate::output::{self, OutputFormat};
use crate::repl::split::script_statements;
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
    /// File of SQL statements to run, in its place among the `-c` (`-` reads standard input).
    #[arg(short = 'f', long = "file", value_name = "FILE.sql")]
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs `sql`.
pub fn run(args: Args) -> Result<()> {
    // Each script with the name its errors give it.
    let mut scripts: Vec<(String, String)> = args
        .commands
        .iter()
        .enumerate()
        .map(|(i, sql)| {
            let name =
                if args.commands.len() == 1 { "-c".into() } else { format!("-c #{}", i + 1) };
            (name, sql.clone())
        })
        .collect();
    if let Some(f) = &args.file {
        let text = if f.as_os_str() == "-" {
            read_stdin()?
        } else {
            std::fs::read_to_string(f).map_err(|e| Error::io(f, e))?
        };
        let at = file_position(scripts.len());
        scripts.insert(at, (f.display().to_string(), text));
    }
    if scripts.is_empty() {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            let archive = Archive::open(&args.archive.archive)?;
            return crate::repl::shell::run(archive, args.format);
        }
        scripts.push(("-".into(), read_stdin()?));
    }
    let archive = Archive::open(&args.archive.archive)?;
    let conn = archive.connect()?;
    let mut out = super::stdout();
    for (name, script) in &scripts {
        for stmt in script_statements(script) {
            run_statement(&conn, &stmt.text, args.format, &mut out).map_err(|e| match e {
                Error::Sql(message) => located(name, stmt.line, &message),
                e => e,
            })?;
        }
    }
    out.flush().map_err(Error::Output)
}

/// Where `-f` stands among the `-c`s on the command line (how many come before it), so
/// scripts run in the order given; after them all when that cannot be told.
fn file_position(commands: usize) -> usize {
    use clap::CommandFactory;
    let Ok(matches) = super::Cli::command().try_get_matches_from(std::env::args_os()) else {
        return commands;
    };
    let Some(sql) = matches.subcommand_matches("sql") else { return commands };
    match (sql.index_of("file"), sql.indices_of("commands")) {
        (Some(file), Some(c)) => c.filter(|&i| i < file).count().min(commands),
        _ => commands,
    }
}

/// All of standard input, as text.
fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text).map_err(|e| Error::io("<stdin>", e))?;
    Ok(text)
}

/// DuckDB's `message` for a statement that starts on line `first_line` of script `name`,
/// as an error naming the script and the line. DuckDB counts lines within the statement
/// (`LINE 2: ...` with a caret under it); that line becomes the script's own, with the
/// caret kept under the same character.
fn located(name: &str, first_line: usize, message: &str) -> Error {
    let mut line = first_line;
    let mut out: Vec<String> = Vec::new();
    let mut shift = 0;
    for text in message.lines() {
        if shift > 0 {
            out.push(format!("{}{text}", " ".repeat(shift)));
            shift = 0;
            continue;
        }
        let within = text
            .strip_prefix("LINE ")
            .and_then(|rest| rest.split_once(": "))
            .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, n.len(), rest)));
        match within {
            Some((n, digits, rest)) if n >= 1 => {
                line = first_line + n - 1;
                let label = line.to_string();
                shift = label.len() - digits;
                out.push(format!("LINE {label}: {rest}"));
            }
            _ => out.push(text.to_string()),
        }
    }
    let name = if name == "-" { "<stdin>" } else { name };
    Error::input(name, format!("line {line}"), out.join("\n"))
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
    if output::is_status_only(&schema) {
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

#[cfg(test)]
mod tests {
    use super::located;

    #[test]
    fn duckdb_lines_become_script_lines_with_the_caret_kept_in_place() {
        let message =
            "Parser Error: syntax error at or near \"x\"\n\nLINE 2: SELECT x\n               ^";
        let e = located("q.sql", 9, message).to_string();
        assert_eq!(
            e,
            "q.sql: line 10: Parser Error: syntax error at or near \"x\"\n\n\
             LINE 10: SELECT x\n                ^"
        );
        let caret = |s: &str| s.lines().last().unwrap().len();
        assert_eq!(caret(&e) - "LINE 10: ".len(), caret(message) - "LINE 2: ".len());
        // No LINE in the message: the statement's first line.
        assert_eq!(
            located("-", 3, "Out of Range Error: x").to_string(),
            "<stdin>: line 3: Out of Range Error: x"
        );
    }
}
