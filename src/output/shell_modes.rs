//! The shell's `markdown` mode (a GitHub-flavoured Markdown table) and `line` mode (one
//! `name = value` line per column, as SQLite's), each with a row limit and the row count
//! line.
use super::cell::{format_rows, is_number};
use super::{write_all, Layout};
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use std::io::{self, Write};

/// Writes a GitHub-flavoured Markdown table (numbers right-aligned, `|` escaped), at most
/// `max_rows` rows, then the row count line.
pub fn write_markdown(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    max_rows: Option<usize>,
) -> io::Result<()> {
    write_all(w, schema, batches, Layout::Markdown(max_rows))
}

pub(super) fn markdown_of_head(
    w: &mut dyn Write,
    schema: &Schema,
    head: &[RecordBatch],
) -> io::Result<usize> {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let names: Vec<String> = schema.fields().iter().map(|f| esc(f.name())).collect();
    let align: Vec<&str> = schema
        .fields()
        .iter()
        .map(|f| if is_number(f.data_type()) { "--:" } else { "---" })
        .collect();
    let rows = format_rows(head)?;
    writeln!(w, "| {} |", names.join(" | "))?;
    writeln!(w, "|{}|", align.join("|"))?;
    for r in &rows {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        writeln!(w, "| {} |", cells.join(" | "))?;
    }
    writeln!(w)?;
    Ok(rows.len())
}

/// Writes one `name = value` line per column and a blank line between rows (SQLite's line
/// mode), at most `max_rows` rows, then the row count line.
pub fn write_line(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    max_rows: Option<usize>,
) -> io::Result<()> {
    write_all(w, schema, batches, Layout::Line(max_rows))
}

pub(super) fn line_of_head(
    w: &mut dyn Write,
    schema: &Schema,
    head: &[RecordBatch],
) -> io::Result<usize> {
    let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let rows = format_rows(head)?;
    for (k, r) in rows.iter().enumerate() {
        if k > 0 {
            writeln!(w)?;
        }
        for (n, c) in names.iter().zip(r) {
            writeln!(w, "{n:>width$} = {c}")?;
        }
    }
    if !rows.is_empty() {
        writeln!(w)?;
    }
    Ok(rows.len())
}
