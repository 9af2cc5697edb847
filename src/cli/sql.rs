//! `tracedb sql`: SQL over the archive. Statements come from `-c` (repeatable) and `-f FILE`
//! in the order given, or standard input when it is piped; each statement's result is printed in turn. The
//! first failing statement stops the run with exit status 1, with an error naming the
//! script (`-c`, `-c #2`, the file or `<stdin>`) and the line the error is on. With none of these and a
//! terminal on standard input, the interactive shell starts ([`crate::repl::shell`]).
use super::ArchiveArg;
use crate::output::{self, OutputFormat};
use crate::repl::split::{script_statements, Located};
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
            let name = f.display().to_string();
            script_text(&name, std::fs::read(f).map_err(|e| Error::io(f, e))?)?
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
    let scripts: Vec<(String, Vec<Located>)> =
        scripts.into_iter().map(|(name, text)| (name, script_statements(&text))).collect();
    for (name, statements) in &scripts {
        if let Some(e) = statements.iter().find_map(|s| shell_command(name, s)) {
            return Err(e);
        }
    }
    let archive = Archive::open(&args.archive.archive)?;
    let conn = archive.connect()?;
    let mut out = super::stdout();
    for (name, statements) in &scripts {
        for stmt in statements {
            run_statement(&conn, &stmt.text, args.format, &mut out).map_err(|e| match e {
                Error::Sql(message) => located(name, stmt.line, &message),
                e => e,
            })?;
        }
    }
    out.flush().map_err(Error::Output)
}

/// The error for a statement of script `name` that starts with one of the shell's
/// meta-commands (`.mode csv`): scripts run by `sql` are SQL only, and DuckDB would answer
/// `syntax error at or near "."` after running the statements before it. Found before any
/// statement runs, as a script that is not UTF-8 is.
fn shell_command(name: &str, stmt: &Located) -> Option<Error> {
    let word = stmt.text.split(|c: char| c.is_whitespace() || c == ';').next()?;
    let spec = crate::repl::meta::spec(word)?;
    let name = if name == "-" { "<stdin>" } else { name };
    Some(Error::input(
        name,
        format!("line {}", stmt.line),
        format!(
            "`{}` is a command of the interactive shell: scripts run by `sql -c`, `-f` or \
             from a pipe hold SQL only (choose the output with --format, or run the script \
             in the shell with `.read FILE`)",
            spec.name
        ),
    ))
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
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes).map_err(|e| Error::io("<stdin>", e))?;
    script_text("<stdin>", bytes)
}

/// The text of script `name`; bytes that are not UTF-8 are bad input naming the line and
/// the byte of the line where they are (Rust's own message named neither).
pub(crate) fn script_text(name: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = e.as_bytes().get(..at).unwrap_or_default();
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Error::input(
            name,
            format!("line {line}"),
            format!("byte {column} of the line is not UTF-8 text (SQL scripts are UTF-8)"),
        )
    })
}

/// DuckDB's `message` for a statement that starts on line `first_line` of script `name`,
/// as an error naming the script and the line. DuckDB counts lines within the statement
/// (`LINE 2: ...` with a caret under it); that line becomes the script's own, with the
/// caret kept under the same character.
pub(crate) fn located(name: &str, first_line: usize, message: &str) -> Error {
    let (message, line) = renumber(message, |n| first_line + n - 1);
    let name = if name == "-" { "<stdin>" } else { name };
    Error::input(name, format!("line {}", line.unwrap_or(first_line)), message)
}

/// `message` with every `LINE n: ` of DuckDB's excerpts made `LINE to(n): `, the caret
/// line under it moved so that it stays under the same character; and the last new line
/// number, if there was one.
fn renumber(message: &str, to: impl Fn(usize) -> usize) -> (String, Option<usize>) {
    let mut line = None;
    let mut out: Vec<String> = Vec::new();
    // Columns the caret line under the last `LINE` moves by (the label grew or shrank).
    let mut shift: Option<isize> = None;
    for text in message.lines() {
        if let Some(by) = shift.take() {
            let moved = match usize::try_from(by) {
                Ok(more) => format!("{}{text}", " ".repeat(more)),
                Err(_) => {
                    let fewer = by.unsigned_abs();
                    let spaces = text.len() - text.trim_start_matches(' ').len();
                    text.get(fewer.min(spaces)..).unwrap_or(text).to_string()
                }
            };
            out.push(moved);
            continue;
        }
        let within = text
            .strip_prefix("LINE ")
            .and_then(|rest| rest.split_once(": "))
            .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, n, rest)));
        match within {
            Some((n, digits, rest)) if n >= 1 => {
                let label = to(n).to_string();
                line = Some(to(n));
                #[allow(clippy::cast_possible_wrap)]
                let by = label.len() as isize - digits.len() as isize;
                shift = (by != 0).then_some(by);
                out.push(format!("LINE {label}: {rest}"));
            }
            _ => out.push(text.to_string()),
        }
    }
    (out.join("\n"), line)
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
    let mut printable = prepare(conn, sql, format == OutputFormat::Json)?;
    let wrapped = printable.wrapped;
    let sql_error = |e: duckdb::Error| Error::Sql(unwrapped(&e.to_string(), wrapped));
    let mut stream = printable.stmt.stream_arrow([]).map_err(sql_error)?;
    let schema = output::with_sql_types(&stream.get_schema(), &printable.as_text);
    if schema.fields().is_empty() {
        return Ok(());
    }
    if output::is_status_only(&schema) {
        let batches = stream.collect::<duckdb::Result<Vec<_>>>().map_err(sql_error)?;
        if batches.iter().all(|b| b.num_rows() == 0) {
            return Ok(());
        }
        return output::write(out, &schema, &batches, format).map_err(Error::Output);
    }
    match output::write_stream(out, &schema, &mut stream, format.into()) {
        Ok(_) => Ok(()),
        Err(output::StreamError::Query(e)) => Err(sql_error(e)),
        // The statement's failure: its message names the script and the line.
        Err(output::StreamError::Value(e)) => Err(Error::Sql(e)),
        Err(output::StreamError::Io(e)) => Err(Error::Output(e)),
    }
}

/// A statement ready to run and print.
pub struct Printable<'c> {
    /// The statement to run: the one given, or a query over it (see [`prepare`]).
    pub stmt: duckdb::Statement<'c>,
    /// The columns it gives as DuckDB's text, with the SQL type they have in the statement
    /// given (`TIMESTAMP WITH TIME ZONE`), for table headers ([`output::with_sql_types`]).
    pub as_text: Vec<(usize, String)>,
    /// The statement given is inside another, from its second line: see [`unwrapped`].
    pub wrapped: bool,
}

/// DuckDB's `message` for a statement as the user wrote it. The query [`prepare`] wraps
/// around it starts a line earlier: an error in it (a conversion that fails as rows are
/// produced) says `LINE 3` for the user's line 2. The excerpt itself is the user's line.
pub fn unwrapped(message: &str, wrapped: bool) -> String {
    if wrapped {
        renumber(message, |n| n.saturating_sub(1).max(1)).0
    } else {
        message.to_string()
    }
}

/// Prepares `sql` so that every value prints as DuckDB spells it. Results are read through
/// Arrow, whose text is not DuckDB's for some types, or is an error: a TIMESTAMPTZ in a
/// named zone fails (no time zone database in this build), BIT shows its storage bytes
/// (`05fd` for `101`), TIMETZ loses its offset, `infinity` and dates beyond year 262143
/// become errors, TIME `24:00:00` cannot be shown, a BLOB is hex (`616263` for `abc`), and
/// INTERVAL, BIGNUM, UNION and GEOMETRY are spelled otherwise. Lists, structs and maps are
/// ambiguous in Arrow's text (`['a,b']` and `['a', 'b']` both `[a,b]`, `['NULL']` and
/// `[NULL]` both `[NULL]`, an empty string nothing at all), so where they are printed as
/// text (`json` false: table, csv, markdown, line) DuckDB spells them whole, quoting the
/// strings that need it; in JSON they stay arrays and objects. A query with such columns
/// (at any depth of a list, struct or map) is run as `SELECT CAST(#n AS VARCHAR) ... FROM
/// (query)`: DuckDB casts those columns to its own text, the others are untouched, and the
/// query still runs once. A statement that is not a query (`INSERT ... RETURNING`) runs as
/// given, and a value it cannot show is an error, never text in place of the value.
pub fn prepare<'c>(
    conn: &'c duckdb::Connection,
    sql: &str,
    json: bool,
) -> duckdb::Result<Printable<'c>> {
    let stmt = conn.prepare(sql)?;
    // Columns of type JSON (`::JSON`, `to_json`, `json_object`...): `--format json` writes
    // their text as JSON, not as a string holding it (see [`output::JSON_TYPE`]).
    let json_columns: Vec<(usize, String)> = if json {
        (0..stmt.column_count())
            .filter(|&i| is_json(&stmt.column_logical_type(i)))
            .map(|i| (i, output::JSON_TYPE.to_string()))
            .collect()
    } else {
        Vec::new()
    };
    let as_given = |stmt| Ok(Printable { stmt, as_text: json_columns.clone(), wrapped: false });
    // The type each column is cast to, for those that need it.
    let casts: Vec<Option<String>> = (0..stmt.column_count())
        .map(|i| {
            let t = stmt.column_logical_type(i);
            if !json && is_nested(&t) {
                Some("VARCHAR".to_string())
            } else {
                text_type(&t)
            }
        })
        .collect();
    if casts.iter().all(Option::is_none) {
        return as_given(stmt);
    }
    // DESCRIBE binds a query without running it, and refuses anything else: the names and
    // types of the columns, and whether the statement can be wrapped at all.
    let columns = match describe(conn, sql) {
        Ok(c) if c.len() == casts.len() => c,
        _ => return as_given(stmt),
    };
    let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let mut select = Vec::with_capacity(columns.len());
    let mut as_text = json_columns.clone();
    for (i, ((name, ty), cast)) in columns.into_iter().zip(casts).enumerate() {
        // `#n` is the n-th column: names may repeat (`SELECT 1 AS a, 2 AS a`).
        match cast {
            Some(to) => {
                select.push(format!("CAST(#{} AS {to}) AS {}", i + 1, quote(&name)));
                as_text.push((i, ty));
            }
            None => select.push(format!("#{} AS {}", i + 1, quote(&name))),
        }
    }
    // The query on lines of its own: DuckDB's excerpt of an error in it is the user's line
    // ([`unwrapped`] renumbers it), and a `--` comment on its last line ends there.
    let wrapper = format!("SELECT {} FROM (\n{sql}\n) AS tracedb_result", select.join(", "));
    match conn.prepare(&wrapper) {
        Ok(stmt) => Ok(Printable { stmt, as_text, wrapped: true }),
        Err(_) => as_given(stmt),
    }
}

/// The type a column of type `t` is cast to so that it prints as DuckDB spells it, `None`
/// when Arrow shows it as it is (see [`prepare`]). A list, struct or map keeps its shape,
/// its values that need it becoming VARCHAR (the JSON form is still an array or object).
fn text_type(t: &duckdb::core::LogicalTypeHandle) -> Option<String> {
    if !needs_text(t) {
        return None;
    }
    Some(shaped(t).unwrap_or_else(|| "VARCHAR".to_string()))
}

/// [`text_type`] of a type that needs it, `None` when a value inside it has a type
/// [`sql_name`] cannot spell.
fn shaped(t: &duckdb::core::LogicalTypeHandle) -> Option<String> {
    use duckdb::core::LogicalTypeId as Id;
    let kept = |t: &duckdb::core::LogicalTypeHandle| text_type(t).or_else(|| sql_name(t));
    let cast = match t.id() {
        // ARRAY becomes a list: the same values, and the same JSON.
        Id::List | Id::Array => format!("{}[]", kept(&t.child(0))?),
        Id::Map => format!("MAP({}, {})", kept(&t.child(0))?, kept(&t.child(1))?),
        Id::Struct => {
            let fields = (0..t.num_children())
                .map(|i| {
                    let name = t.child_name(i).replace('"', "\"\"");
                    Some(format!("\"{name}\" {}", kept(&t.child(i))?))
                })
                .collect::<Option<Vec<_>>>()?;
            format!("STRUCT({})", fields.join(", "))
        }
        _ => "VARCHAR".to_string(),
    };
    Some(cast)
}

/// The SQL name of a type that keeps its values inside a list, struct or map cast by
/// [`text_type`]; `None` for one this cannot spell, which makes the whole column VARCHAR.
fn sql_name(t: &duckdb::core::LogicalTypeHandle) -> Option<String> {
    use duckdb::core::LogicalTypeId as Id;
    let name = match t.id() {
        Id::Boolean => "BOOLEAN",
        Id::Tinyint => "TINYINT",
        Id::Smallint => "SMALLINT",
        Id::Integer => "INTEGER",
        Id::Bigint => "BIGINT",
        Id::Hugeint => "HUGEINT",
        Id::UTinyint => "UTINYINT",
        Id::USmallint => "USMALLINT",
        Id::UInteger => "UINTEGER",
        Id::UBigint => "UBIGINT",
        Id::UHugeint => "UHUGEINT",
        Id::Float => "FLOAT",
        Id::Double => "DOUBLE",
        Id::Decimal => {
            return Some(format!("DECIMAL({},{})", t.decimal_width(), t.decimal_scale()))
        }
        // An ENUM's values are its labels.
        Id::Varchar | Id::Enum => "VARCHAR",
        Id::Uuid => "UUID",
        _ => return None,
    };
    Some(name.to_string())
}

/// True for DuckDB's JSON type (a VARCHAR with the alias JSON).
fn is_json(t: &duckdb::core::LogicalTypeHandle) -> bool {
    t.id() == duckdb::core::LogicalTypeId::Varchar
        && t.get_alias().is_some_and(|a| a.eq_ignore_ascii_case("json"))
}

/// True for a list, array, struct or map: text only as DuckDB spells it whole (see
/// [`prepare`]).
fn is_nested(t: &duckdb::core::LogicalTypeHandle) -> bool {
    use duckdb::core::LogicalTypeId as Id;
    matches!(t.id(), Id::List | Id::Array | Id::Struct | Id::Map)
}

/// True for a DuckDB type Arrow does not show as DuckDB does, or one holding such values.
fn needs_text(t: &duckdb::core::LogicalTypeHandle) -> bool {
    use duckdb::core::LogicalTypeId as Id;
    match t.id() {
        Id::Blob
        | Id::Date
        | Id::Time
        | Id::TimeNs
        | Id::TimeTZ
        | Id::Timestamp
        | Id::TimestampS
        | Id::TimestampMs
        | Id::TimestampNs
        | Id::TimestampTZ
        | Id::Interval
        | Id::Bit
        | Id::Bignum
        | Id::Union
        | Id::Geometry
        | Id::Variant
        | Id::Unsupported => true,
        Id::List | Id::Array | Id::Struct | Id::Map => {
            (0..t.num_children()).any(|i| needs_text(&t.child(i)))
        }
        _ => false,
    }
}

/// Name and SQL type of each column of the query `sql`, which DESCRIBE binds but does not
/// run; an error when `sql` is not a query.
fn describe(conn: &duckdb::Connection, sql: &str) -> duckdb::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(&format!("DESCRIBE {sql}\n"))?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::{located, unwrapped};

    #[test]
    fn a_wrapped_statement_s_lines_are_its_own_with_the_caret_in_place() {
        // Line 10 of the wrapper is line 9 of the statement: the label is a digit shorter.
        let message = "Conversion Error: x\n\nLINE 10:   r::DATE\n             ^";
        let e = unwrapped(message, true);
        assert_eq!(e, "Conversion Error: x\n\nLINE 9:   r::DATE\n            ^");
        let caret = |s: &str| s.lines().last().unwrap().len();
        assert_eq!(caret(&e) - "LINE 9: ".len(), caret(message) - "LINE 10: ".len());
        assert_eq!(unwrapped(message, false), message);
    }

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
