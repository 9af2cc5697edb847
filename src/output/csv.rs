//! `csv` output: RFC 4180, one header row, CRLF line ends, NULL as an empty field and an
//! empty string as `""`.
use super::cell::for_each_row;
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use std::io::{self, Write};

/// Quotes a CSV field when RFC 4180 requires it, and an empty string, so that it reads apart
/// from NULL (an empty field), as DuckDB's and PostgreSQL's CSV do.
pub fn csv_field(s: &str) -> String {
    if s.is_empty() {
        "\"\"".to_string()
    } else if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(super) fn write_csv(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
) -> io::Result<()> {
    csv_header(w, schema)?;
    csv_rows(w, batches)
}

pub(super) fn csv_header(w: &mut dyn Write, schema: &Schema) -> io::Result<()> {
    let header: Vec<String> = schema.fields().iter().map(|f| csv_field(f.name())).collect();
    w.write_all(header.join(",").as_bytes())?;
    w.write_all(b"\r\n")
}

pub(super) fn csv_rows(w: &mut dyn Write, batches: &[RecordBatch]) -> io::Result<()> {
    for_each_row(batches, |cells| {
        let line: Vec<String> =
            cells.iter().map(|c| c.as_deref().map(csv_field).unwrap_or_default()).collect();
        w.write_all(line.join(",").as_bytes())?;
        w.write_all(b"\r\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_tells_an_empty_string_from_null() {
        assert_eq!(csv_field(""), "\"\"");
        assert_eq!(csv_field("x"), "x");
    }
}
