//! `json` output: one array of objects, keys made unique, numbers as JSON numbers (NaN and
//! infinities as null), lists, structs and maps as JSON arrays and objects, and the values
//! of a JSON column ([`JSON_TYPE`]) as the JSON they hold.
use super::cell::{cell, format_options, formatters, in_column, is_number};
use super::types::{JSON_TYPE, SQL_TYPE};
use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Schema};
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io::{self, Write};

/// Lists, structs and maps: written as JSON arrays and objects, not as text.
fn is_nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(_, _)
            | DataType::Struct(_)
            | DataType::Map(_, _)
    )
}

/// The JSON of a value that is not nested, from its text ([`cell`]): a number or boolean
/// as itself (NaN and infinities, which JSON lacks, as null), anything else as a string.
fn json_scalar(t: &DataType, text: Option<String>) -> String {
    match (text, t) {
        (None, _) => "null".to_string(),
        (Some(v), DataType::Boolean) => v,
        (Some(v), t) if is_number(t) => {
            if v.parse::<f64>().is_ok_and(f64::is_finite) {
                v
            } else {
                "null".to_string()
            }
        }
        (Some(v), _) => json_string(&v),
    }
}

/// Appends the JSON of `col[row]` to `out`: a list as an array, a struct as an object, a
/// map as an object whose keys are the keys' text, their elements the same way, all the
/// way down; anything else as [`json_scalar`].
fn json_nested(
    col: &dyn Array,
    row: usize,
    opts: &FormatOptions,
    out: &mut String,
) -> io::Result<()> {
    if col.is_null(row) || col.data_type() == &DataType::Null {
        out.push_str("null");
        return Ok(());
    }
    let items = |items: &dyn Array, out: &mut String| -> io::Result<()> {
        // Elements that are not nested share one formatter, made once for the list.
        let flat = if is_nested(items.data_type()) {
            None
        } else {
            Some(
                ArrayFormatter::try_new(items, opts)
                    .map_err(|e| io::Error::other(e.to_string()))?,
            )
        };
        out.push('[');
        for i in 0..items.len() {
            if i > 0 {
                out.push_str(", ");
            }
            match &flat {
                Some(fmt) => out.push_str(&json_scalar(items.data_type(), cell(items, fmt, i)?)),
                None => json_nested(items, i, opts, out)?,
            }
        }
        out.push(']');
        Ok(())
    };
    match col.data_type() {
        DataType::List(_) => items(col.as_list::<i32>().value(row).as_ref(), out)?,
        DataType::LargeList(_) => items(col.as_list::<i64>().value(row).as_ref(), out)?,
        DataType::FixedSizeList(_, _) => items(col.as_fixed_size_list().value(row).as_ref(), out)?,
        DataType::Struct(fields) => {
            let col = col.as_struct();
            out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&json_string(field.name()));
                out.push_str(": ");
                json_nested(col.column(i).as_ref(), row, opts, out)?;
            }
            out.push('}');
        }
        DataType::Map(_, _) => {
            let entries = col.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let key_text = ArrayFormatter::try_new(keys.as_ref(), opts)
                .map_err(|e| io::Error::other(e.to_string()))?;
            out.push('{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&json_string(&key_text.value(i).to_string()));
                out.push_str(": ");
                json_nested(values.as_ref(), i, opts, out)?;
            }
            out.push('}');
        }
        t => {
            let fmt =
                ArrayFormatter::try_new(col, opts).map_err(|e| io::Error::other(e.to_string()))?;
            out.push_str(&json_scalar(t, cell(col, &fmt, row)?));
        }
    }
    Ok(())
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// True when `text` is one valid JSON value.
fn is_json_text(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

pub(super) fn write_json(
    w: &mut dyn Write,
    schema: &Schema,
    batches: &[RecordBatch],
) -> io::Result<()> {
    let mut json = JsonRows::new(schema);
    w.write_all(b"[")?;
    json.rows(w, batches)?;
    json.end(w)
}

/// JSON objects written batch after batch, inside one array the caller opens.
/// Column names as JSON object keys: a name already taken gets `_2`, `_3`, ... (the first
/// free one), since a JSON reader keeps only one value per key (`SELECT 1 AS a, 2 AS a`).
fn unique_keys<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = names.collect();
    let mut taken: std::collections::HashSet<String> =
        names.iter().map(|n| (*n).to_string()).collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        if seen.insert(n) {
            out.push(n.to_string());
            continue;
        }
        let key = (2..)
            .map(|i| format!("{n}_{i}"))
            .find(|k| !taken.contains(k))
            .unwrap_or_else(|| n.to_string());
        taken.insert(key.clone());
        out.push(key);
    }
    out
}

pub(super) struct JsonRows {
    names: Vec<String>,
    /// Per column: its values are JSON text to write as it is ([`JSON_TYPE`]).
    raw: Vec<bool>,
    first: bool,
}

impl JsonRows {
    pub(super) fn new(schema: &Schema) -> Self {
        let names = unique_keys(schema.fields().iter().map(|f| f.name().as_str()))
            .iter()
            .map(|n| json_string(n))
            .collect();
        let raw = schema
            .fields()
            .iter()
            .map(|f| f.metadata().get(SQL_TYPE).is_some_and(|t| t == JSON_TYPE))
            .collect();
        JsonRows { names, raw, first: true }
    }

    pub(super) fn rows(&mut self, w: &mut dyn Write, batches: &[RecordBatch]) -> io::Result<()> {
        let opts = format_options();
        for b in batches {
            let fmts = formatters(b, &opts)?;
            for row in 0..b.num_rows() {
                w.write_all(if self.first { b"\n  {" } else { b",\n  {" })?;
                self.first = false;
                for (i, (col, fmt)) in b.columns().iter().zip(&fmts).enumerate() {
                    if i > 0 {
                        w.write_all(b", ")?;
                    }
                    let named = in_column(b.schema_ref().field(i).name());
                    let mut value = String::new();
                    if is_nested(col.data_type()) {
                        json_nested(col.as_ref(), row, &opts, &mut value).map_err(named)?;
                    } else {
                        let text = cell(col.as_ref(), fmt, row).map_err(named)?;
                        value = match text {
                            Some(t) if self.raw.get(i) == Some(&true) && is_json_text(&t) => {
                                t.trim().to_string()
                            }
                            text => json_scalar(col.data_type(), text),
                        };
                    }
                    write!(w, "{}: {}", self.names.get(i).map_or("\"\"", String::as_str), value)?;
                }
                w.write_all(b"}")?;
            }
        }
        Ok(())
    }

    pub(super) fn end(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(if self.first { b"]\n" } else { b"\n]\n" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keys_are_unique() {
        let got = unique_keys(["a", "a", "a_2", "b", "a"].into_iter());
        assert_eq!(got, ["a", "a_3", "a_2", "b", "a_4"]);
    }
}
