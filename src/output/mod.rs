//! Printing query results: `table` for people (psql-like, numbers right-aligned, NULL shown
//! as NULL), `csv` (RFC 4180, one header row, NULL as an empty field) and `json` (one array
//! of objects, numbers as JSON numbers, never in scientific notation for integers). The
//! shell adds `markdown` and `line` ([`write_markdown`], [`write_line`]) and column types in
//! the table header ([`TableStyle`]); `--format` output does not change with them.
//!
//! Each layout has its file: `csv`, `json`, `table` (the aligned table, fitted to the
//! terminal) and `shell_modes` (markdown and line); `cell` turns values into text, `types`
//! names their SQL types. Here: the formats, and [`write_stream`], which writes a result in
//! any layout as its batches arrive.
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use std::fmt;
use std::io::{self, Write};

mod cell;
mod csv;
mod json;
mod shell_modes;
mod table;
#[cfg(test)]
mod tests;
mod types;

use cell::{unprintable, unprintable_message};
pub use csv::csv_field;
use csv::{csv_header, csv_rows, write_csv};
use json::{write_json, JsonRows};
use shell_modes::{line_of_head, markdown_of_head};
pub use shell_modes::{write_line, write_markdown};
use table::table_of_head;
pub use table::{write_table, write_table_styled, TableStyle};
pub use types::{type_name, with_sql_types, JSON_TYPE, SQL_TYPE};

/// Output format of `sql`, `query` and `captures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum OutputFormat {
    /// Aligned columns for reading.
    #[default]
    Table,
    /// RFC 4180 CSV with a header row.
    Csv,
    /// A JSON array of objects.
    Json,
}

/// True when a result is DuckDB's status answer to a statement that returns no rows: a
/// lone `Count` column (CREATE, COPY, INSERT) or `Success` column (DROP, SET, ATTACH,
/// BEGIN...). When it has no rows, there is nothing to show.
pub fn is_status_only(schema: &Schema) -> bool {
    schema.fields().len() == 1 && matches!(schema.field(0).name().as_str(), "Count" | "Success")
}

/// Writes `batches` (all of `schema`) in `format`.
pub fn write(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    format: OutputFormat,
) -> io::Result<()> {
    match format {
        OutputFormat::Table => write_table(w, schema, batches, None),
        OutputFormat::Csv => write_csv(w, schema, batches),
        OutputFormat::Json => write_json(w, schema, batches),
    }
}

/// How [`write_stream`] lays a result out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Aligned table ([`write_table_styled`]).
    Table(TableStyle),
    /// RFC 4180 CSV.
    Csv,
    /// A JSON array of objects.
    Json,
    /// Markdown table, at most this many rows ([`write_markdown`]).
    Markdown(Option<usize>),
    /// `name = value` lines, at most this many rows ([`write_line`]).
    Line(Option<usize>),
}

/// Most rows the command line's `table` form prints (the rest are counted): a table is for
/// people, and sizing its columns needs every row it shows in memory. csv and json print all.
pub const TABLE_ROWS: usize = 10_000;

impl From<OutputFormat> for Layout {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Table => Layout::Table(TableStyle {
                max_rows: Some(TABLE_ROWS),
                watch_stdout: true,
                ..TableStyle::default()
            }),
            OutputFormat::Csv => Layout::Csv,
            OutputFormat::Json => Layout::Json,
        }
    }
}

/// Why [`write_stream`] stopped.
#[derive(Debug)]
pub enum StreamError<E> {
    /// The query failed (or was interrupted) while its rows were being fetched.
    Query(E),
    /// A value cannot be shown as text (the message names the column): a failure of the
    /// statement, like [`StreamError::Query`].
    Value(String),
    /// Writing failed.
    Io(io::Error),
}

impl<E> From<io::Error> for StreamError<E> {
    fn from(e: io::Error) -> Self {
        match unprintable_message(&e) {
            Some(m) => StreamError::Value(m.to_string()),
            None => StreamError::Io(e),
        }
    }
}

/// Writes a result as its batches arrive and returns its row count. CSV and JSON rows are
/// written batch by batch; the aligned layouts keep only the rows they show (a table needs
/// them all to size its columns) and count the rest, so memory stays bounded by what is
/// printed, whatever the size of the result.
pub fn write_stream<E>(
    w: &mut dyn Write,
    schema: &Schema,
    stream: impl Iterator<Item = Result<RecordBatch, E>>,
    layout: Layout,
) -> Result<usize, StreamError<E>> {
    let io = StreamError::from;
    let mut total = 0;
    // The first batch is read before anything is written: a statement that fails as it
    // starts to run (an analysis refusing its parameter, a conversion error in the first
    // rows) leaves standard output empty, not a lone CSV header or an unclosed JSON `[`.
    let mut stream = stream.peekable();
    if let Some(Err(_)) = stream.peek() {
        if let Some(Err(e)) = stream.next() {
            return Err(StreamError::Query(e));
        }
    }
    match layout {
        Layout::Csv => {
            csv_header(w, schema).map_err(io)?;
            for b in stream {
                let b = b.map_err(StreamError::Query)?;
                total += b.num_rows();
                csv_rows(w, std::slice::from_ref(&b)).map_err(io)?;
            }
        }
        Layout::Json => {
            let mut json = JsonRows::new(schema);
            w.write_all(b"[").map_err(io)?;
            for b in stream {
                let b = b.map_err(StreamError::Query)?;
                total += b.num_rows();
                json.rows(w, std::slice::from_ref(&b)).map_err(io)?;
            }
            json.end(w).map_err(io)?;
        }
        Layout::Table(TableStyle { max_rows: limit, .. })
        | Layout::Markdown(limit)
        | Layout::Line(limit) => {
            let limit = limit.unwrap_or(usize::MAX);
            let watch = matches!(layout, Layout::Table(TableStyle { watch_stdout: true, .. }));
            let mut head = Vec::new();
            // Rows printed, once the head is complete: it is printed then, and the rest of
            // the result only counted, so a reader sees the rows without waiting for the end.
            let mut shown = None;
            for b in stream {
                let b = b.map_err(StreamError::Query)?;
                total += b.num_rows();
                if shown.is_some() {
                    if watch && stdout_closed() {
                        return Err(StreamError::Io(io::ErrorKind::BrokenPipe.into()));
                    }
                    continue;
                }
                let room = limit.saturating_sub(total - b.num_rows());
                if room > 0 {
                    head.push(if b.num_rows() > room { b.slice(0, room) } else { b });
                }
                if total > limit {
                    shown = Some(body_of_head(w, schema, &head, layout).map_err(io)?);
                    w.flush().map_err(io)?;
                    head = Vec::new();
                }
            }
            let shown = match shown {
                Some(n) => n,
                None => body_of_head(w, schema, &head, layout).map_err(io)?,
            };
            write_footer(w, shown, total).map_err(io)?;
        }
    }
    Ok(total)
}

/// Writes the rows of `head` in an aligned `layout`, without the row count line; returns
/// how many rows it wrote.
fn body_of_head(
    w: &mut dyn Write,
    schema: &Schema,
    head: &[RecordBatch],
    layout: Layout,
) -> io::Result<usize> {
    match layout {
        Layout::Table(style) => table_of_head(w, schema, head, style),
        Layout::Markdown(_) => markdown_of_head(w, schema, head),
        _ => line_of_head(w, schema, head),
    }
}

/// True when standard output is a pipe whose reader has gone (`tracedb sql ... | head`):
/// nothing more can be shown, so counting the rest of a result is wasted.
#[cfg(unix)]
fn stdout_closed() -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let out = io::stdout();
    let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLOUT)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
        && fds[0].revents().is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// See the Unix version; elsewhere a closed pipe shows when the footer is written.
#[cfg(not(unix))]
fn stdout_closed() -> bool {
    false
}

/// [`write_stream`] over batches already in memory.
fn write_all(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    layout: Layout,
) -> io::Result<()> {
    let stream = batches.iter().cloned().map(Ok::<_, std::convert::Infallible>);
    match write_stream(w, schema, stream, layout) {
        Ok(_) => Ok(()),
        Err(StreamError::Io(e)) => Err(e),
        Err(StreamError::Value(m)) => Err(unprintable(m)),
        Err(StreamError::Query(never)) => match never {},
    }
}

/// `1 file`, `2 files`: a count and its noun, plural unless the count is 1.
pub(crate) fn counted<N: fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    let s = if n == N::from(1) { "" } else { "s" };
    format!("{n} {noun}{s}")
}

/// `(N rows)`, or `(N rows, M not shown)` when truncated.
fn write_footer(w: &mut dyn Write, shown: usize, total: usize) -> io::Result<()> {
    if total > shown {
        writeln!(w, "({total} rows, {} not shown)", total - shown)
    } else {
        writeln!(w, "({})", counted(total, "row"))
    }
}
