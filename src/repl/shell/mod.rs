//! The interactive shell: a rustyline loop over one DuckDB connection to the archive.
//!
//! Lines are collected until [`split::is_complete`] (a continuation prompt meanwhile), then
//! every statement in them runs and its result is printed; a failing statement prints
//! DuckDB's message and the shell goes on. A line starting with `.` outside a statement is a
//! meta-command ([`super::meta`]). Ctrl-C while a query runs interrupts DuckDB (a `ctrlc`
//! handler thread holding the connection's interrupt handle); at the prompt rustyline reads
//! it as a key and the line (and any unfinished statement) is dropped. Ctrl-D quits.
//!
//! Results go to the terminal or the `.output` file; errors, notices and the `.timer`
//! footer go to standard error, so an `.output` file holds only results.
use super::helper::{Catalog, ShellHelper};
use super::meta::{self, Meta, Mode};
use super::{history, split};
use crate::output::{self, counted, Layout, OutputFormat, StreamError, TableStyle};
use crate::store::{queries, schema, Archive, ReadLock};
use crate::{Error, Result};
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{CompletionType, Config, Editor};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROMPT: &str = "tracedb> ";
const CONTINUE: &str = "    ...> ";
/// Rows a table prints before `.maxrows` is set.
pub const DEFAULT_MAX_ROWS: usize = 40;
/// `.read` files may read others, to this depth.
const MAX_READ_DEPTH: usize = 16;

mod commands;

/// Whether the loop goes on after a line.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Go,
    Quit,
}

/// A script being read by `.read`.
struct Reading {
    /// Its path, as given.
    name: String,
    /// The line being run (1-based).
    line: usize,
    /// The line the statement being gathered starts on.
    pending_from: usize,
}

/// Where a statement comes from, for its error message.
#[derive(Clone, Copy)]
enum Origin {
    /// Typed, or run by a meta-command typed at the prompt.
    Typed,
    /// Line `n` of the script being read, from where DuckDB's own line numbers count.
    Script(usize),
    /// Made by a meta-command (`.query`) on the script's current line: DuckDB's line
    /// numbers are those of the statement made, not of the script.
    Meta,
}

/// The shell's state.
pub struct Shell {
    conn: duckdb::Connection,
    mode: Mode,
    max_rows: Option<usize>,
    timer: bool,
    output: Option<(PathBuf, io::BufWriter<std::fs::File>)>,
    running: Arc<AtomicBool>,
    schema_changed: bool,
    /// The scripts being read (`.read`), innermost last: where errors are said to be.
    reading: Vec<Reading>,
    /// Ctrl-C cancelled a statement: a script being read (`.read`) stops too.
    interrupted: bool,
    /// The archive directory, and the identity of its manifest when the views were made.
    archive_dir: PathBuf,
    manifest_seen: Option<ManifestStamp>,
}

/// What tells one `manifest.json` from the next: a writer replaces it by renaming a new
/// file over it, so the inode changes (and the modification time with it).
type ManifestStamp = (u64, Option<std::time::SystemTime>, u64);

fn manifest_stamp(dir: &std::path::Path) -> Option<ManifestStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir.join(crate::store::manifest::FILE)).ok()?;
    Some((m.ino(), m.modified().ok(), m.len()))
}

/// Runs the shell over `archive` until `.quit` or Ctrl-D; results start in `format`.
pub fn run(mut archive: Archive, format: OutputFormat) -> Result<()> {
    let conn = archive.connect()?;
    let mode = match format {
        OutputFormat::Table => Mode::Table,
        OutputFormat::Csv => Mode::Csv,
        OutputFormat::Json => Mode::Json,
    };
    let mut shell = Shell {
        conn,
        mode,
        max_rows: Some(DEFAULT_MAX_ROWS),
        timer: false,
        output: None,
        running: Arc::new(AtomicBool::new(false)),
        schema_changed: false,
        reading: Vec::new(),
        interrupted: false,
        archive_dir: archive.dir.clone(),
        manifest_seen: manifest_stamp(&archive.dir),
    };
    let (running, handle) = (shell.running.clone(), shell.conn.interrupt_handle());
    if let Err(e) = ctrlc::set_handler(move || {
        if running.load(Ordering::SeqCst) {
            handle.interrupt();
        }
    }) {
        crate::say!("warning: Ctrl-C will not cancel queries: {e}");
    }
    let config = Config::builder()
        .max_history_size(10_000)
        .and_then(|b| b.history_ignore_dups(true))
        .map_err(|e| Error::Usage(format!("line editor: {e}")))?
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let mut rl: Editor<ShellHelper, FileHistory> =
        Editor::with_config(config).map_err(|e| Error::Usage(format!("line editor: {e}")))?;
    rl.set_helper(Some(ShellHelper { catalog: Catalog::load(&shell.conn), ..Default::default() }));
    let history = history::open(&mut rl);
    // From here on the readers' lock is held per line run, not while the user types.
    archive.release_read_lock();
    let n = archive.manifest.captures.len();
    // Not println!: it would panic on a closed pipe (`tracedb sql | head -1` on a terminal).
    let _ = writeln!(
        std::io::stdout(),
        "tracedb {}: archive {}, {}. Statements end with ';'. .help lists commands.",
        crate::TOOL_VERSION,
        archive.dir.display(),
        counted(n, "capture")
    );
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { PROMPT } else { CONTINUE };
        let line = match rl.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                if let Some(h) = rl.helper_mut() {
                    h.pending.borrow_mut().clear();
                }
                continue;
            }
            Err(ReadlineError::Eof) => break,
            // Bytes that are not UTF-8 (a paste from another encoding): say so, go on.
            Err(ReadlineError::Io(e)) if e.kind() == io::ErrorKind::InvalidData => {
                crate::say!("Error: the line is not UTF-8 text; it was not run");
                continue;
            }
            Err(e) => return Err(Error::Usage(format!("reading the terminal: {e}"))),
        };
        let was_statement = !pending.is_empty() || !line.trim_start().starts_with('.');
        let reading = ReadLock::take(&shell.archive_dir);
        let flow = shell.line(&mut pending, &line);
        drop(reading);
        if pending.is_empty() && !line.trim().is_empty() {
            // A finished entry: the whole statement (all its lines) or a meta-command.
            let entry = if was_statement { shell_entry(&rl, &line) } else { line.clone() };
            history::add(&mut rl, history.as_deref(), &entry);
        }
        if let Some(h) = rl.helper_mut() {
            *h.pending.borrow_mut() = pending.clone();
            if std::mem::take(&mut shell.schema_changed) {
                h.catalog = Catalog::load(&shell.conn);
            }
        }
        if flow == Flow::Quit {
            break;
        }
    }
    shell.set_output(None)
}

/// The history entry of a statement just finished: its earlier lines (kept by the helper)
/// and the last one.
fn shell_entry(rl: &Editor<ShellHelper, FileHistory>, last: &str) -> String {
    match rl.helper().map(|h| h.pending.borrow().clone()) {
        Some(p) if !p.is_empty() => format!("{p}\n{last}"),
        _ => last.to_string(),
    }
}

impl Shell {
    /// Handles one input line: a meta-command, or more of the statement in `pending`, whose
    /// complete statements then run.
    fn line(&mut self, pending: &mut String, line: &str) -> Flow {
        if pending.is_empty() && line.trim_start().starts_with('.') {
            return match meta::parse(line).and_then(|m| self.meta(m)) {
                Ok(flow) => flow,
                Err(e) => {
                    match self.reading.last() {
                        Some(r) => crate::say!("Error: {}: line {}: {e}", r.name, r.line),
                        None => crate::say!("Error: {e}"),
                    }
                    Flow::Go
                }
            };
        }
        if pending.is_empty() && line.trim().is_empty() {
            return Flow::Go;
        }
        if !pending.is_empty() {
            pending.push('\n');
        }
        pending.push_str(line);
        // Only comments so far: nothing to wait for (a meta-command may come next).
        let parts = split::split(pending);
        if parts.statements.is_empty() && parts.rest.is_none() && !split::is_complete(pending) {
            pending.clear();
            return Flow::Go;
        }
        if split::is_complete(pending) {
            // Ctrl-C cancels the statement and those after it on the line.
            if self.reading.is_empty() {
                self.interrupted = false;
            }
            for stmt in split::complete_statements(&std::mem::take(pending)) {
                if self.interrupted {
                    break;
                }
                let origin = self.origin(stmt.line);
                self.statement(&stmt.text, origin);
            }
        }
        Flow::Go
    }

    /// Where a statement starting on line `line` of the text gathered so far comes from.
    fn origin(&self, line: usize) -> Origin {
        match self.reading.last() {
            Some(r) => Origin::Script(r.pending_from + line - 1),
            None => Origin::Typed,
        }
    }

    /// Runs the lines of script `name` (`.read`) as if typed, errors naming the script and
    /// the line; a statement left without `;` at the end still runs.
    fn feed(&mut self, name: &str, text: &str) -> Flow {
        self.reading.push(Reading { name: name.to_string(), line: 0, pending_from: 1 });
        let flow = self.feed_lines(text);
        self.reading.pop();
        flow
    }

    fn feed_lines(&mut self, text: &str) -> Flow {
        let mut pending = String::new();
        for (i, line) in text.lines().enumerate() {
            // Ctrl-C cancels the script, not only its running statement.
            if self.interrupted {
                return Flow::Go;
            }
            if let Some(r) = self.reading.last_mut() {
                r.line = i + 1;
                if pending.is_empty() {
                    r.pending_from = i + 1;
                }
            }
            if self.line(&mut pending, line) == Flow::Quit {
                return Flow::Quit;
            }
        }
        for stmt in split::script_statements(&pending) {
            if self.interrupted {
                return Flow::Go;
            }
            let origin = self.origin(stmt.line);
            self.statement(&stmt.text, origin);
        }
        Flow::Go
    }

    /// Re-reads the manifest and remakes the table views when another process changed the
    /// archive (an ingest, `rm`, `reingest`) since they were made: new captures show up and
    /// the files of removed or rebuilt ones are no longer read.
    fn follow_archive(&mut self) {
        let now = manifest_stamp(&self.archive_dir);
        if now == self.manifest_seen {
            return;
        }
        let reloaded = Archive::open(&self.archive_dir).and_then(|a| {
            let damaged = a.create_views(&self.conn)?;
            Ok((a.manifest.captures.len(), damaged))
        });
        match reloaded {
            Ok((n, damaged)) => {
                self.manifest_seen = now;
                crate::say!("(the archive changed: {} now)", counted(n, "capture"));
                for d in damaged {
                    crate::say!("warning: {d}");
                }
            }
            // Tried again before the next statement.
            Err(e) => crate::say!("warning: the archive changed and cannot be re-read: {e}"),
        }
    }

    /// Runs one statement and prints its result, or DuckDB's message (with the script and
    /// line it comes from, in a `.read`).
    fn statement(&mut self, sql: &str, origin: Origin) {
        self.follow_archive();
        let code = sql.get(split::leading_comments(sql)..).unwrap_or(sql);
        let first = code.split_whitespace().next().unwrap_or("").to_lowercase();
        if ["create", "drop", "alter", "attach", "detach", "use"].contains(&first.as_str()) {
            self.schema_changed = true;
        }
        let start = Instant::now();
        self.running.store(true, Ordering::SeqCst);
        let result = self.stream(sql);
        self.running.store(false, Ordering::SeqCst);
        let elapsed = start.elapsed();
        match result {
            Ok(rows) => {
                if self.timer {
                    crate::say!("Time: {} ({})", fmt_duration(elapsed), counted(rows, "row"));
                }
            }
            // On its own line: the terminal has just echoed `^C`.
            Err(StreamError::Query(e)) if e.to_string().contains("INTERRUPT") => {
                self.interrupted = true;
                crate::say!("\nCancelled (Ctrl-C)")
            }
            Err(StreamError::Query(e)) => self.error(&e.to_string(), origin),
            Err(StreamError::Value(e)) => self.error(&e.to_string(), origin),
            Err(StreamError::Io(e)) => crate::say!("Error: writing the result: {e}"),
        }
    }

    /// Says a statement's error, where it comes from first.
    fn error(&self, message: &str, origin: Origin) {
        match (origin, self.reading.last()) {
            (Origin::Script(line), Some(r)) => {
                crate::say!("Error: {}", crate::cli::sql::located(&r.name, line, message))
            }
            (Origin::Meta, Some(r)) => {
                crate::say!("Error: {}: line {}: {message}", r.name, r.line)
            }
            _ => crate::say!("Error: {message}"),
        }
    }

    /// Width tables are fitted to: the terminal's, when results go to one (not to an
    /// `.output` file, which keeps whole values).
    fn table_width(&self) -> Option<usize> {
        if self.output.is_some() || !io::stdout().is_terminal() {
            return None;
        }
        terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
    }

    /// The current mode as an output layout.
    fn layout(&self) -> Layout {
        match self.mode {
            Mode::Table => Layout::Table(TableStyle {
                max_rows: self.max_rows,
                types: true,
                max_width: self.table_width(),
                watch_stdout: false,
            }),
            Mode::Csv => Layout::Csv,
            Mode::Json => Layout::Json,
            Mode::Markdown => Layout::Markdown(self.max_rows),
            Mode::Line => Layout::Line(self.max_rows),
        }
    }

    /// Runs `sql` and prints its rows as DuckDB produces them; returns the row count. Only
    /// the rows a layout shows are kept (`.maxrows`), so `SELECT * FROM events` on a large
    /// archive prints its first rows and counts the rest in bounded memory.
    fn stream(&mut self, sql: &str) -> std::result::Result<usize, StreamError<Error>> {
        let layout = self.layout();
        let query = |e: duckdb::Error| StreamError::Query(Error::from(e));
        let mut printable =
            crate::cli::sql::prepare(&self.conn, sql, self.mode == Mode::Json).map_err(query)?;
        // Errors of the statement as the user wrote it (see `unwrapped`).
        let wrapped = printable.wrapped;
        let sql_error =
            move |e: duckdb::Error| Error::Sql(crate::cli::sql::unwrapped(&e.to_string(), wrapped));
        let query = |e: duckdb::Error| StreamError::Query(sql_error(e));
        let stream = printable.stmt.stream_arrow([]).map_err(query)?;
        let schema = output::with_sql_types(&stream.get_schema(), &printable.as_text);
        if schema.fields().is_empty() {
            return Ok(0);
        }
        let mut stream: Box<dyn Iterator<Item = duckdb::Result<RecordBatch>>> = Box::new(stream);
        if output::is_status_only(&schema) {
            let batches = stream.collect::<duckdb::Result<Vec<_>>>().map_err(query)?;
            if batches.iter().all(|b| b.num_rows() == 0) {
                return Ok(0);
            }
            stream = Box::new(batches.into_iter().map(Ok));
        }
        let mut stdout = io::stdout().lock();
        let w: &mut dyn Write = match &mut self.output {
            Some((_, f)) => f,
            None => &mut stdout,
        };
        let rows = output::write_stream(w, &schema, stream.map(|b| b.map_err(sql_error)), layout)?;
        w.flush().map_err(StreamError::Io)?;
        Ok(rows)
    }

    /// Runs a statement the shell made up (`.tables`, `.run`, ...), returning its error.
    fn internal(&mut self, sql: &str) -> Result<()> {
        // Ctrl-C cancels these as it does a typed statement (`.tables` counts the rows of
        // the session's own views, which may be slow).
        self.running.store(true, Ordering::SeqCst);
        let result = query(&self.conn, sql);
        self.running.store(false, Ordering::SeqCst);
        let (schema, batches) = match result {
            Err(e) if e.to_string().contains("INTERRUPT") => {
                return Err(Error::Usage("cancelled (Ctrl-C)".into()));
            }
            r => r?,
        };
        self.print(&schema, &batches).map_err(Error::Output)
    }

    fn print(&mut self, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
        let (mode, max_rows, max_width) = (self.mode, self.max_rows, self.table_width());
        let mut stdout = io::stdout().lock();
        let w: &mut dyn Write = match &mut self.output {
            Some((_, f)) => f,
            None => &mut stdout,
        };
        match mode {
            Mode::Table => output::write_table_styled(
                w,
                schema,
                batches,
                TableStyle { max_rows, types: true, max_width, watch_stdout: false },
            )?,
            Mode::Csv => output::write(w, schema, batches, OutputFormat::Csv)?,
            Mode::Json => output::write(w, schema, batches, OutputFormat::Json)?,
            Mode::Markdown => output::write_markdown(w, schema, batches, max_rows)?,
            Mode::Line => output::write_line(w, schema, batches, max_rows)?,
        }
        w.flush()
    }

    /// Writes text (help, schema) where results go.
    fn say(&mut self, text: &str) -> Result<()> {
        let w: &mut dyn Write = match &mut self.output {
            Some((_, f)) => f,
            None => &mut io::stdout(),
        };
        w.write_all(text.as_bytes()).and_then(|()| w.flush()).map_err(Error::Output)
    }

    fn set_output(&mut self, to: Option<PathBuf>) -> Result<()> {
        if let Some((path, mut f)) = self.output.take() {
            f.flush().map_err(|e| Error::io(path, e))?;
        }
        if let Some(path) = to {
            let f = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
            self.output = Some((path, io::BufWriter::new(f)));
        }
        Ok(())
    }
}

/// Runs `sql`, collecting its whole result.
fn query(conn: &duckdb::Connection, sql: &str) -> Result<(Arc<Schema>, Vec<RecordBatch>)> {
    let mut stmt = conn.prepare(sql)?;
    let arrow = stmt.query_arrow([])?;
    let schema = arrow.get_schema();
    Ok((schema, arrow.collect()))
}

/// `850 ns`, `12.345 ms`, `1.500 s`: the same spelling as the `fmt_ns` macro.
pub fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0..=999 => format!("{ns} ns"),
        1_000..=999_999 => format!("{:.3} us", d.as_secs_f64() * 1e6),
        // A value that rounds up to 1000.000 of a unit is shown in the next one.
        1_000_000..=999_999_499 => format!("{:.3} ms", d.as_secs_f64() * 1e3),
        _ => format!("{:.3} s", d.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_fmt_ns() {
        assert_eq!(fmt_duration(Duration::from_nanos(850)), "850 ns");
        assert_eq!(fmt_duration(Duration::from_nanos(12_345_678)), "12.346 ms");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.500 s");
        assert_eq!(fmt_duration(Duration::from_nanos(999_999_600)), "1.000 s");
        assert_eq!(fmt_duration(Duration::from_nanos(999_999_499)), "999.999 ms");
    }
}
