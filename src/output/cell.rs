//! A value as text: [`cell`] (`None` for NULL, floats without exponent, NaN and infinities
//! spelled out), the formatters behind it, and the [`Unprintable`] error for a value Arrow
//! cannot show, which travels as an `io::Error` and names its column.
use super::types::type_name;
use arrow::array::{Array, Float32Array, Float64Array};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io;

/// A value Arrow could not turn into text. It travels as an `io::Error` through the writers
/// and [`write_stream`] reports it as [`StreamError::Value`]: the statement fails, rather
/// than print Arrow's `ERROR: ...` in place of the value with exit status 0.
///
/// [`write_stream`]: super::write_stream
/// [`StreamError::Value`]: super::StreamError::Value
#[derive(Debug)]
struct Unprintable(String);

impl std::fmt::Display for Unprintable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unprintable {}

pub(super) fn unprintable(what: String) -> io::Error {
    io::Error::other(Unprintable(what))
}

/// The message of an [`Unprintable`] error, `None` for any other.
pub(super) fn unprintable_message(e: &io::Error) -> Option<&str> {
    e.get_ref().and_then(|i| i.downcast_ref::<Unprintable>()).map(|u| u.0.as_str())
}

/// Puts the column's name in front of an [`Unprintable`] error.
pub(super) fn in_column(name: &str) -> impl Fn(io::Error) -> io::Error + '_ {
    move |e| match unprintable_message(&e) {
        Some(m) => unprintable(format!("column {name}: {m}")),
        None => e,
    }
}

/// A cell as text, or `None` for NULL.
pub(super) fn cell(
    col: &dyn Array,
    fmt: &ArrayFormatter<'_>,
    row: usize,
) -> io::Result<Option<String>> {
    // A column of type NULL (`SELECT NULL`) has no validity buffer: every value is NULL.
    if col.is_null(row) || col.data_type() == &DataType::Null {
        return Ok(None);
    }
    // Floats: Rust's Display never uses an exponent; NaN/inf are spelled out.
    match col.data_type() {
        DataType::Float64 => {
            Ok(col.as_any().downcast_ref::<Float64Array>().map(|a| a.value(row).to_string()))
        }
        DataType::Float32 => {
            Ok(col.as_any().downcast_ref::<Float32Array>().map(|a| a.value(row).to_string()))
        }
        t => fmt.value(row).try_to_string().map(Some).map_err(|e| {
            unprintable(format!(
                "a value of type {} cannot be shown ({e}); cast it to VARCHAR",
                type_name(t)
            ))
        }),
    }
}

pub(super) fn is_number(t: &DataType) -> bool {
    t.is_numeric()
}

/// How values are turned into text. A NULL inside a list, struct or map is spelled `NULL`
/// (a NULL column value never reaches the formatter: [`cell`] returns `None` for it).
pub(super) fn format_options() -> FormatOptions<'static> {
    FormatOptions::default().with_null("NULL")
}

/// One formatter per column of `b`.
pub(super) fn formatters<'a>(
    b: &'a RecordBatch,
    opts: &'a FormatOptions,
) -> io::Result<Vec<ArrayFormatter<'a>>> {
    b.columns()
        .iter()
        .zip(b.schema_ref().fields())
        .map(|(c, f)| {
            ArrayFormatter::try_new(c.as_ref(), opts).map_err(|e| {
                let t = type_name(c.data_type());
                unprintable(format!(
                    "column {}: values of type {t} cannot be shown ({e}); cast it to VARCHAR",
                    f.name()
                ))
            })
        })
        .collect()
}

pub(super) fn for_each_row(
    batches: &[RecordBatch],
    mut f: impl FnMut(Vec<Option<String>>) -> io::Result<()>,
) -> io::Result<()> {
    let opts = format_options();
    for b in batches {
        let fmts = formatters(b, &opts)?;
        for row in 0..b.num_rows() {
            let cells = b
                .columns()
                .iter()
                .zip(&fmts)
                .zip(b.schema_ref().fields())
                .map(|((c, f), field)| cell(c.as_ref(), f, row).map_err(in_column(field.name())))
                .collect::<io::Result<_>>()?;
            f(cells)?;
        }
    }
    Ok(())
}

/// Every row of `batches` as text, NULL spelled out.
pub(super) fn format_rows(batches: &[RecordBatch]) -> io::Result<Vec<Vec<String>>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for_each_row(batches, |cells| {
        rows.push(cells.into_iter().map(|c| c.unwrap_or_else(|| "NULL".into())).collect());
        Ok(())
    })?;
    Ok(rows)
}
