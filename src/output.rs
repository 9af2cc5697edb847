//! Printing query results: `table` for people (psql-like, numbers right-aligned, NULL shown
//! as NULL), `csv` (RFC 4180, one header row, NULL as an empty field) and `json` (one array
//! of objects, numbers as JSON numbers, never in scientific notation for integers). The
//! shell adds `markdown` and `line` ([`write_markdown`], [`write_line`]) and column types in
//! the table header ([`TableStyle`]); `--format` output does not change with them.
use arrow::array::{Array, AsArray, Float32Array, Float64Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

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

/// A value Arrow could not turn into text. It travels as an `io::Error` through the writers
/// and [`write_stream`] reports it as [`StreamError::Value`]: the statement fails, rather
/// than print Arrow's `ERROR: ...` in place of the value with exit status 0.
#[derive(Debug)]
struct Unprintable(String);

impl std::fmt::Display for Unprintable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unprintable {}

fn unprintable(what: String) -> io::Error {
    io::Error::other(Unprintable(what))
}

/// The message of an [`Unprintable`] error, `None` for any other.
fn unprintable_message(e: &io::Error) -> Option<&str> {
    e.get_ref().and_then(|i| i.downcast_ref::<Unprintable>()).map(|u| u.0.as_str())
}

/// Puts the column's name in front of an [`Unprintable`] error.
fn in_column(name: &str) -> impl Fn(io::Error) -> io::Error + '_ {
    move |e| match unprintable_message(&e) {
        Some(m) => unprintable(format!("column {name}: {m}")),
        None => e,
    }
}

/// A cell as text, or `None` for NULL.
fn cell(col: &dyn Array, fmt: &ArrayFormatter<'_>, row: usize) -> io::Result<Option<String>> {
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

fn is_number(t: &DataType) -> bool {
    t.is_numeric()
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

/// How values are turned into text. A NULL inside a list, struct or map is spelled `NULL`
/// (a NULL column value never reaches the formatter: [`cell`] returns `None` for it).
fn format_options() -> FormatOptions<'static> {
    FormatOptions::default().with_null("NULL")
}

/// One formatter per column of `b`.
fn formatters<'a>(
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

fn for_each_row(
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

fn write_csv(w: &mut dyn Write, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
    csv_header(w, schema)?;
    csv_rows(w, batches)
}

fn csv_header(w: &mut dyn Write, schema: &Schema) -> io::Result<()> {
    let header: Vec<String> = schema.fields().iter().map(|f| csv_field(f.name())).collect();
    w.write_all(header.join(",").as_bytes())?;
    w.write_all(b"\r\n")
}

fn csv_rows(w: &mut dyn Write, batches: &[RecordBatch]) -> io::Result<()> {
    for_each_row(batches, |cells| {
        let line: Vec<String> =
            cells.iter().map(|c| c.as_deref().map(csv_field).unwrap_or_default()).collect();
        w.write_all(line.join(",").as_bytes())?;
        w.write_all(b"\r\n")
    })
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// True when `text` is one valid JSON value.
fn is_json_text(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn write_json(w: &mut dyn Write, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
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

struct JsonRows {
    names: Vec<String>,
    /// Per column: its values are JSON text to write as it is ([`JSON_TYPE`]).
    raw: Vec<bool>,
    first: bool,
}

impl JsonRows {
    fn new(schema: &Schema) -> Self {
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

    fn rows(&mut self, w: &mut dyn Write, batches: &[RecordBatch]) -> io::Result<()> {
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

    fn end(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(if self.first { b"]\n" } else { b"\n]\n" })
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

/// Field metadata: the SQL type of a column DuckDB was asked to give as text
/// ([`crate::cli::sql::prepare`]), so a table header says `timestamp with time zone`, not
/// `varchar`.
pub const SQL_TYPE: &str = "tracedb.sql_type";

/// The [`SQL_TYPE`] of a column of DuckDB's JSON type: `json` output writes its values as
/// the JSON they hold (an object, an array...), not as strings holding JSON text, when they
/// are valid JSON (DuckDB's `to_json` writes NaN bare, which no JSON reader takes: such a
/// value stays a string).
pub const JSON_TYPE: &str = "json";

/// `schema` with the SQL type of each column in `types` (index, DuckDB's name) in its
/// [`SQL_TYPE`] metadata.
pub fn with_sql_types(schema: &SchemaRef, types: &[(usize, String)]) -> SchemaRef {
    if types.is_empty() {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match types.iter().find(|(j, _)| *j == i) {
            Some((_, t)) => f.as_ref().clone().with_metadata(std::collections::HashMap::from([(
                SQL_TYPE.to_string(),
                t.to_lowercase(),
            )])),
            None => f.as_ref().clone(),
        })
        .collect();
    std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The SQL type of a column for table headers: its [`SQL_TYPE`] metadata, or [`type_name`].
fn field_type_name(f: &Field) -> String {
    f.metadata().get(SQL_TYPE).cloned().unwrap_or_else(|| type_name(f.data_type()))
}

/// The SQL name of an Arrow type as DuckDB spells it (lower case), for table headers.
pub fn type_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "bigint".into(),
        DataType::UInt8 => "utinyint".into(),
        DataType::UInt16 => "usmallint".into(),
        DataType::UInt32 => "uinteger".into(),
        DataType::UInt64 => "ubigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "varchar".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "blob".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Time32(_) | DataType::Time64(_) => "time".into(),
        DataType::Timestamp(_, None) => "timestamp".into(),
        DataType::Timestamp(_, Some(_)) => "timestamptz".into(),
        DataType::Interval(_) | DataType::Duration(_) => "interval".into(),
        DataType::List(f) | DataType::LargeList(f) => format!("{}[]", type_name(f.data_type())),
        DataType::Struct(_) => "struct".into(),
        DataType::Map(_, _) => "map".into(),
        DataType::Null => "null".into(),
        other => format!("{other}").to_lowercase(),
    }
}

/// Every row of `batches` as text, NULL spelled out.
fn format_rows(batches: &[RecordBatch]) -> io::Result<Vec<Vec<String>>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for_each_row(batches, |cells| {
        rows.push(cells.into_iter().map(|c| c.unwrap_or_else(|| "NULL".into())).collect());
        Ok(())
    })?;
    Ok(rows)
}

/// `(N rows)`, or `(N rows, M not shown)` when truncated.
fn write_footer(w: &mut dyn Write, shown: usize, total: usize) -> io::Result<()> {
    if total > shown {
        writeln!(w, "({total} rows, {} not shown)", total - shown)
    } else {
        writeln!(w, "({total} row{})", if total == 1 { "" } else { "s" })
    }
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
fn table_of_head(
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

fn markdown_of_head(w: &mut dyn Write, schema: &Schema, head: &[RecordBatch]) -> io::Result<usize> {
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

fn line_of_head(w: &mut dyn Write, schema: &Schema, head: &[RecordBatch]) -> io::Result<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int64Array, StringArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    fn sample() -> (Schema, Vec<RecordBatch>) {
        let schema = Schema::new(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("f", DataType::Float64, true),
        ]);
        let b = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![
                Arc::new(Int64Array::from(vec![Some(1_000_000_000_000), None])),
                Arc::new(StringArray::from(vec![Some("a,\"b\""), Some("x")])),
                Arc::new(Float64Array::from(vec![Some(1e20), Some(0.5)])),
            ],
        )
        .unwrap();
        (schema, vec![b])
    }

    fn render(f: OutputFormat) -> String {
        let (schema, batches) = sample();
        let mut out = Vec::new();
        write(&mut out, &schema, &batches, f).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv_is_rfc4180() {
        assert_eq!(
            render(OutputFormat::Csv),
            "n,s,f\r\n1000000000000,\"a,\"\"b\"\"\",100000000000000000000\r\n,x,0.5\r\n"
        );
    }

    #[test]
    fn json_keys_are_unique() {
        let got = unique_keys(["a", "a", "a_2", "b", "a"].into_iter());
        assert_eq!(got, ["a", "a_3", "a_2", "b", "a_4"]);
    }

    #[test]
    fn csv_tells_an_empty_string_from_null() {
        assert_eq!(csv_field(""), "\"\"");
        assert_eq!(csv_field("x"), "x");
    }

    #[test]
    fn json_has_same_values_and_no_exponent() {
        assert_eq!(
            render(OutputFormat::Json),
            "[\n  {\"n\": 1000000000000, \"s\": \"a,\\\"b\\\"\", \"f\": 100000000000000000000},\n  {\"n\": null, \"s\": \"x\", \"f\": 0.5}\n]\n"
        );
    }

    #[test]
    fn table_aligns_and_shows_null() {
        let t = render(OutputFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], " n             | s     | f");
        assert_eq!(lines[1], "---------------+-------+-----------------------");
        assert_eq!(lines[2], " 1000000000000 | a,\"b\" | 100000000000000000000");
        assert_eq!(lines[3], "          NULL | x     |                   0.5");
        assert_eq!(lines[4], "(2 rows)");
    }

    #[test]
    fn streamed_output_equals_collected_output() {
        let (schema, batches) = sample();
        // The same rows arriving as three batches of 2.
        let stream: Vec<RecordBatch> = (0..3).map(|_| batches[0].clone()).collect();
        let all = stream.clone();
        for layout in [
            Layout::Csv,
            Layout::Json,
            Layout::Table(TableStyle::default()),
            Layout::Markdown(None),
            Layout::Line(None),
        ] {
            let mut streamed = Vec::new();
            let n = write_stream(
                &mut streamed,
                &schema,
                stream.iter().cloned().map(Ok::<_, String>),
                layout,
            )
            .unwrap();
            assert_eq!(n, 6);
            let mut collected = Vec::new();
            match layout {
                Layout::Csv => write(&mut collected, &schema, &all, OutputFormat::Csv),
                Layout::Json => write(&mut collected, &schema, &all, OutputFormat::Json),
                Layout::Table(style) => write_table_styled(&mut collected, &schema, &all, style),
                Layout::Markdown(m) => write_markdown(&mut collected, &schema, &all, m),
                Layout::Line(m) => write_line(&mut collected, &schema, &all, m),
            }
            .unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(collected).unwrap(),
                "{layout:?}"
            );
        }
    }

    #[test]
    fn streamed_table_keeps_only_the_rows_it_shows_and_counts_the_rest() {
        let (schema, batches) = sample();
        let stream = (0..1000).map(|_| Ok::<_, String>(batches[0].clone()));
        let mut out = Vec::new();
        let layout = Layout::Table(TableStyle { max_rows: Some(3), ..TableStyle::default() });
        assert_eq!(write_stream(&mut out, &schema, stream, layout).unwrap(), 2000);
        let t = String::from_utf8(out).unwrap();
        assert!(t.ends_with("(2000 rows, 1997 not shown)\n"), "{t}");
        assert_eq!(t.lines().count(), 2 + 3 + 1);
    }

    #[test]
    fn a_failure_while_streaming_is_a_query_error() {
        let (schema, batches) = sample();
        let stream = vec![Ok(batches[0].clone()), Err("INTERRUPT")].into_iter();
        let mut out = Vec::new();
        match write_stream(&mut out, &schema, stream, Layout::Csv) {
            Err(StreamError::Query(e)) => assert_eq!(e, "INTERRUPT"),
            other => panic!("{other:?}"),
        }
        // The rows before the failure were written.
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3);
    }

    #[test]
    fn table_with_types_and_truncation() {
        let (schema, batches) = sample();
        let mut out = Vec::new();
        write_table_styled(
            &mut out,
            &schema,
            &batches,
            TableStyle { max_rows: Some(1), types: true, ..TableStyle::default() },
        )
        .unwrap();
        let t = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], " n             | s       | f");
        assert_eq!(lines[1], " bigint        | varchar | double");
        assert_eq!(lines[3], " 1000000000000 | a,\"b\"   | 100000000000000000000");
        assert_eq!(lines[4], "(2 rows, 1 not shown)");
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn markdown_and_line_modes() {
        let (schema, batches) = sample();
        let mut md = Vec::new();
        write_markdown(&mut md, &schema, &batches, None).unwrap();
        assert_eq!(
            String::from_utf8(md).unwrap(),
            "| n | s | f |\n|--:|---|--:|\n| 1000000000000 | a,\"b\" | 100000000000000000000 |\n| NULL | x | 0.5 |\n\n(2 rows)\n"
        );
        let mut line = Vec::new();
        write_line(&mut line, &schema, &batches, Some(1)).unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "n = 1000000000000\ns = a,\"b\"\nf = 100000000000000000000\n\n(2 rows, 1 not shown)\n"
        );
    }

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
