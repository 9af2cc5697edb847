//! The aligned table (`--format table`, the shell's `table` mode): numbers right-aligned,
//! NULL shown as NULL, control characters escaped, widths in terminal columns; optionally a
//! line of column types, a row limit, and a terminal width to fit by cutting text (never
//! numbers) and hiding middle columns ([`TableStyle`]).
use super::cell::{format_rows, is_number};
use super::types::field_type_name;
use super::{write_all, Layout};
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

/// Options of the aligned table. `Default` is what `--format table` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStyle {
    /// Print at most this many rows, then a line saying how many were left out.
    pub max_rows: Option<usize>,
    /// A second header line with each column's SQL type (the shell's tables).
    pub types: bool,
    /// Fit the table in this many terminal columns: the widest columns are narrowed and
    /// their longer values cut with `…` (the shell on a terminal); `None`: full width.
    pub max_width: Option<usize>,
    /// The table goes to standard output: once its rows are printed, counting the rest
    /// stops when standard output is a pipe whose reader has gone.
    pub watch_stdout: bool,
}

/// Writes an aligned table; at most `max_rows` rows when given, with a line saying how many
/// were left out.
pub fn write_table(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    max_rows: Option<usize>,
) -> io::Result<()> {
    write_table_styled(w, schema, batches, TableStyle { max_rows, ..TableStyle::default() })
}

/// Writes an aligned table with `style`.
pub fn write_table_styled(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
    style: TableStyle,
) -> io::Result<()> {
    write_all(w, schema, batches, Layout::Table(style))
}

/// Narrowest a text column is made to fit a table in the terminal: first down to
/// [`EASY_FIT_WIDTH`] (before middle columns are hidden), then, if need be, to this.
const MIN_FIT_WIDTH: usize = 6;
/// Width a text column is narrowed to before columns are hidden instead.
const EASY_FIT_WIDTH: usize = 20;

/// Narrows the widest text columns (numbers are never cut), one terminal column at a time,
/// until a table of `widths` (` a | b | c `) fits in `max` columns or every text column is
/// down to `floor`.
fn fit(widths: &mut [usize], numeric: &[bool], max: usize, floor: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 3 * w.len().saturating_sub(1) + 2;
    while total(widths) > max {
        let widest = widths
            .iter_mut()
            .zip(numeric)
            .filter(|(w, num)| !**num && **w > floor)
            .map(|(w, _)| w)
            .max_by_key(|w| **w);
        let Some(widest) = widest else { break };
        *widest -= 1;
    }
}

/// `s` cut to `width` terminal columns, ending in `…` when it was longer.
fn cut(s: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if s.width() <= width {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    std::borrow::Cow::Owned(out)
}

/// `s` with control characters (line breaks, tabs, ...) written as escapes.
fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The aligned table of `head` (the rows to show) out of `total` rows.
pub(super) fn table_of_head(
    w: &mut dyn Write,
    schema: &Schema,
    head: &[RecordBatch],
    style: TableStyle,
) -> io::Result<usize> {
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut types: Vec<String> = schema.fields().iter().map(|f| field_type_name(f)).collect();
    let mut numeric: Vec<bool> = schema.fields().iter().map(|f| is_number(f.data_type())).collect();
    // A line break or tab inside a value would break the row: shown escaped.
    let mut rows: Vec<Vec<String>> = format_rows(head)?
        .into_iter()
        .map(|r| r.into_iter().map(|c| escape_controls(&c)).collect())
        .collect();
    let mut names: Vec<String> = names.iter().map(|n| escape_controls(n)).collect();
    // Widths in terminal columns: CJK characters and emoji take two.
    let mut widths: Vec<usize> = names.iter().map(|n| n.width()).collect();
    if style.types {
        for (wd, t) in widths.iter_mut().zip(&types) {
            *wd = (*wd).max(t.width());
        }
    }
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(wd) = widths.get_mut(i) {
                *wd = (*wd).max(c.width());
            }
        }
    }
    let mut hidden = 0;
    if let Some(max) = style.max_width {
        fit(&mut widths, &numeric, max, EASY_FIT_WIDTH);
        // Still too wide: the middle columns give way to one `…` column, as in DuckDB's shell.
        if let Some((left, right)) = shown_columns(&widths, max) {
            let keep = |i: usize| i < left || i >= widths.len() - right;
            hidden = widths.len() - left - right;
            let squeeze = |v: &mut Vec<String>, dots: &str| {
                let mut out: Vec<String> = Vec::with_capacity(left + right + 1);
                for (i, x) in v.drain(..).enumerate() {
                    if i == left {
                        out.push(dots.to_string());
                    }
                    if keep(i) {
                        out.push(x);
                    }
                }
                *v = out;
            };
            squeeze(&mut names, "…");
            squeeze(&mut types, "");
            for r in &mut rows {
                squeeze(r, "…");
            }
            let mut w2 = Vec::with_capacity(left + right + 1);
            let mut n2 = Vec::with_capacity(left + right + 1);
            for i in 0..widths.len() {
                if i == left {
                    w2.push(1);
                    n2.push(false);
                }
                if keep(i) {
                    w2.push(widths[i]);
                    n2.push(numeric[i]);
                }
            }
            widths = w2;
            numeric = n2;
        }
        fit(&mut widths, &numeric, max, MIN_FIT_WIDTH);
    }
    let pad = |s: &str, i: usize, right: bool| {
        let width = widths.get(i).copied().unwrap_or(0);
        let s = &cut(s, width);
        let fill = " ".repeat(width.saturating_sub(s.width()));
        if right {
            format!("{fill}{s}")
        } else {
            format!("{s}{fill}")
        }
    };
    let header: Vec<String> = names.iter().enumerate().map(|(i, n)| pad(n, i, false)).collect();
    writeln!(w, " {}", header.join(" | ").trim_end())?;
    if style.types {
        let line: Vec<String> = types.iter().enumerate().map(|(i, t)| pad(t, i, false)).collect();
        writeln!(w, " {}", line.join(" | ").trim_end())?;
    }
    let rule: Vec<String> = widths.iter().map(|wd| "-".repeat(*wd)).collect();
    writeln!(w, "-{}-", rule.join("-+-"))?;
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| pad(c, i, numeric.get(i).copied().unwrap_or(false)))
            .collect();
        writeln!(w, " {}", line.join(" | ").trim_end())?;
    }
    if hidden > 0 {
        writeln!(w, "({hidden} columns not shown at this width; `.mode line` shows them all)")?;
    }
    Ok(rows.len())
}

/// When a table of `widths` does not fit in `max` columns: how many columns to keep on the
/// left and on the right of a one-column `…` (at least one on each side).
fn shown_columns(widths: &[usize], max: usize) -> Option<(usize, usize)> {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 3 * w.len().saturating_sub(1) + 2;
    if total(widths) <= max || widths.len() < 3 {
        return None;
    }
    // The `…` column and its separator, then columns alternately from each end.
    let (mut left, mut right) = (1, 1);
    let mut used = 2 + widths[0] + 3 + 1 + 3 + widths[widths.len() - 1];
    loop {
        let next_left = widths.get(left).copied();
        let next_right = widths.len().checked_sub(right + 1).and_then(|i| widths.get(i)).copied();
        let grow_left = left <= right;
        let (next, is_left) = match (grow_left, next_left, next_right) {
            (true, Some(w), _) | (false, Some(w), None) => (w, true),
            (_, _, Some(w)) => (w, false),
            _ => break,
        };
        if left + right + 1 >= widths.len() || used + next + 3 > max {
            break;
        }
        used += next + 3;
        if is_left {
            left += 1;
        } else {
            right += 1;
        }
    }
    Some((left, right))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn tables_fit_the_terminal_by_cutting_text_not_numbers() {
        use duckdb::arrow::array::{ArrayRef, Int64Array, StringArray};
        let text: ArrayRef = Arc::new(StringArray::from(vec!["a very long value indeed", "b"]));
        let num: ArrayRef = Arc::new(Int64Array::from(vec![123456789012_i64, 7]));
        let batch = RecordBatch::try_from_iter(vec![("s", text), ("n", num)]).unwrap();
        let mut out = Vec::new();
        let style = TableStyle { max_width: Some(25), ..TableStyle::default() };
        write_table_styled(&mut out, &batch.schema(), &[batch], style).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out,
            " s        | n\n----------+--------------\n a very … | 123456789012\n b        |            7\n(2 rows)\n"
        );
        assert!(out.lines().all(|l| l.width() <= 25), "{out}");
    }

    #[test]
    fn tables_too_wide_for_the_terminal_hide_middle_columns() {
        use duckdb::arrow::array::{ArrayRef, Int64Array};
        let cols: Vec<(String, ArrayRef)> = (0..12)
            .map(|i| (format!("column_{i}"), Arc::new(Int64Array::from(vec![i])) as ArrayRef))
            .collect();
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let mut out = Vec::new();
        let style = TableStyle { max_width: Some(60), ..TableStyle::default() };
        write_table_styled(&mut out, &batch.schema(), &[batch], style).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.lines().filter(|l| !l.starts_with('(')).all(|l| l.width() <= 60), "{out}");
        assert!(out.starts_with(" column_0 | column_1 |"), "{out}");
        assert!(out.contains("| … |") && out.contains("column_11"), "{out}");
        assert!(out.contains("columns not shown at this width"), "{out}");
    }

    #[test]
    fn tables_align_wide_characters_and_escape_line_breaks() {
        use duckdb::arrow::array::{ArrayRef, StringArray};
        let col: ArrayRef = Arc::new(StringArray::from(vec!["日本", "a\nb", "x"]));
        let batch = RecordBatch::try_from_iter(vec![("s", col)]).unwrap();
        let mut out = Vec::new();
        write_table_styled(&mut out, &batch.schema(), &[batch], TableStyle::default()).unwrap();
        // 日本 takes four columns, like "a\nb" written with its escape.
        assert_eq!(String::from_utf8(out).unwrap(), " s\n------\n 日本\n a\\nb\n x\n(3 rows)\n");
    }
}
