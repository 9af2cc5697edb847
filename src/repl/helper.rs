//! The rustyline helper: tab completion of meta-commands, SQL keywords, table and macro
//! names, analysis names, and the columns of the tables named in the statement being typed
//! (also after `alias.`).
//!
//! Names come from a [`Catalog`] read from DuckDB when the shell starts and again after a
//! statement that changes the schema. The statement typed so far on earlier lines (a
//! multi-line statement) is in [`ShellHelper::pending`], so `FROM events` on line one makes
//! `events`' columns complete on line two.
use super::meta::{self, Mode};
use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// SQL words offered by completion (upper case; offered in lower case after a lower-case
/// prefix).
const KEYWORDS: &[&str] = &[
    "ALL",
    "ALTER",
    "AND",
    "ANY",
    "AS",
    "ASC",
    "AVG",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COPY",
    "COUNT",
    "CREATE",
    "CROSS",
    "DELETE",
    "DESC",
    "DESCRIBE",
    "DISTINCT",
    "DROP",
    "ELSE",
    "END",
    "EXCEPT",
    "EXISTS",
    "EXPLAIN",
    "FALSE",
    "FILTER",
    "FIRST",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "ILIKE",
    "IN",
    "INNER",
    "INSERT",
    "INTERSECT",
    "INTO",
    "IS",
    "JOIN",
    "LAG",
    "LAST",
    "LEAD",
    "LEFT",
    "LIKE",
    "LIMIT",
    "MACRO",
    "MAX",
    "MEDIAN",
    "MIN",
    "NOT",
    "NULL",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "QUALIFY",
    "QUANTILE_CONT",
    "RECURSIVE",
    "REPLACE",
    "RIGHT",
    "ROW_NUMBER",
    "SELECT",
    "SET",
    "SUM",
    "SUMMARIZE",
    "TABLE",
    "TEMP",
    "THEN",
    "TRUE",
    "UNION",
    "UPDATE",
    "USING",
    "VALUES",
    "VIEW",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
];

/// Names known to the connection.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Tables and views (private `_` names left out), with their columns in order.
    pub columns: BTreeMap<String, Vec<String>>,
    /// Macros: the helpers, table macros of analyses, the user's own.
    pub functions: Vec<String>,
    /// Predefined analysis names.
    pub analyses: Vec<String>,
}

impl Catalog {
    /// Reads the names from `conn`; a failing catalog query leaves that part empty.
    pub fn load(conn: &duckdb::Connection) -> Catalog {
        let mut cat = Catalog {
            analyses: crate::store::queries::catalog().into_iter().map(|q| q.name).collect(),
            ..Default::default()
        };
        let strings = |sql: &str| -> Vec<(String, String)> {
            let Ok(mut stmt) = conn.prepare(sql) else { return Vec::new() };
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)));
            rows.map(|rs| rs.flatten().collect()).unwrap_or_default()
        };
        for (t, c) in strings(
            "SELECT table_name, column_name FROM duckdb_columns() \
             WHERE database_name <> 'system' AND NOT internal AND table_name NOT LIKE '\\_%' ESCAPE '\\' \
             ORDER BY table_name, column_index",
        ) {
            cat.columns.entry(t).or_default().push(c);
        }
        cat.functions = strings(
            "SELECT DISTINCT function_name, '' FROM duckdb_functions() \
             WHERE function_type IN ('macro', 'table_macro') AND NOT internal AND function_name NOT LIKE '\\_%' ESCAPE '\\' \
             ORDER BY 1",
        )
        .into_iter()
        .map(|(f, _)| f)
        .collect();
        cat
    }

    /// Candidates for `line[..pos]`, with `pending` the earlier lines of the statement:
    /// where the completed word starts, and the words.
    pub fn complete(&self, pending: &str, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = line.get(..pos).unwrap_or(line);
        if pending.trim().is_empty() && before.trim_start().starts_with('.') {
            return self.complete_meta(before);
        }
        // After the last character that is not part of a name (which may take several bytes).
        let word_start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = before.get(word_start..).unwrap_or_default();
        // The whole line: a table or alias may be named after the cursor (`SELECT i.| FROM t i`).
        let statement = format!("{pending}\n{line}");
        if let Some((qualifier, prefix)) = word.rsplit_once('.') {
            let table = resolve_alias(&statement, qualifier, self);
            let cols = table.and_then(|t| self.columns.get(&t)).cloned().unwrap_or_default();
            return (pos - prefix.len(), starting_with(cols.iter().map(String::as_str), prefix));
        }
        let lower = word.chars().next().is_some_and(char::is_lowercase);
        let mut words: Vec<String> = KEYWORDS
            .iter()
            .map(|k| if lower { k.to_lowercase() } else { (*k).to_string() })
            .collect();
        words.extend(self.columns.keys().cloned());
        words.extend(self.functions.iter().cloned());
        for t in mentioned_tables(&statement, self) {
            words.extend(self.columns.get(&t).into_iter().flatten().cloned());
        }
        (word_start, starting_with(words.iter().map(String::as_str), word))
    }

    fn complete_meta(&self, before: &str) -> (usize, Vec<String>) {
        let lead = before.len() - before.trim_start().len();
        let text = before.trim_start();
        let Some((command, args)) = text.split_once(char::is_whitespace) else {
            let names = meta::COMMANDS
                .iter()
                .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()));
            return (lead, starting_with(names, text));
        };
        let arg_start = before.len() - args.len()
            + args
                .char_indices()
                .rev()
                .find(|&(_, c)| c.is_whitespace())
                .map_or(0, |(i, c)| i + c.len_utf8());
        let arg = before.get(arg_start..).unwrap_or_default();
        let first_arg = !args.trim_start().contains(char::is_whitespace);
        let options: Vec<String> = match meta::spec(command).map(|s| s.name) {
            Some(".run") if first_arg => self.analyses.clone(),
            Some(".schema") if first_arg => self.columns.keys().cloned().collect(),
            Some(".mode") if first_arg => Mode::ALL.iter().map(|(n, _)| (*n).to_string()).collect(),
            Some(".timer") if first_arg => vec!["on".into(), "off".into()],
            _ => Vec::new(),
        };
        (arg_start, starting_with(options.iter().map(String::as_str), arg))
    }
}

/// The words starting with `prefix` (case-insensitive), sorted, without duplicates.
fn starting_with<'a>(words: impl Iterator<Item = &'a str>, prefix: &str) -> Vec<String> {
    let p = prefix.to_lowercase();
    let mut out: Vec<String> =
        words.filter(|w| w.to_lowercase().starts_with(&p)).map(str::to_string).collect();
    out.sort();
    out.dedup();
    out
}

fn identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Tables of the catalog named in `statement`.
fn mentioned_tables(statement: &str, cat: &Catalog) -> Vec<String> {
    let mut out: Vec<String> =
        identifiers(statement).into_iter().filter(|w| cat.columns.contains_key(w)).collect();
    out.sort();
    out.dedup();
    out
}

/// The table `qualifier` stands for: a table name, or an alias given after one
/// (`FROM intervals i`, `JOIN events AS e`).
fn resolve_alias(statement: &str, qualifier: &str, cat: &Catalog) -> Option<String> {
    let q = qualifier.to_lowercase();
    if cat.columns.contains_key(&q) {
        return Some(q);
    }
    let words = identifiers(statement);
    for (i, w) in words.iter().enumerate() {
        if !cat.columns.contains_key(w) {
            continue;
        }
        let mut next = words.get(i + 1);
        if next.is_some_and(|n| n == "as") {
            next = words.get(i + 2);
        }
        if next == Some(&q) {
            return Some(w.clone());
        }
    }
    None
}

/// The shell's rustyline helper.
#[derive(Default)]
pub struct ShellHelper {
    /// Names to complete.
    pub catalog: Catalog,
    /// Earlier lines of the statement being typed.
    pub pending: RefCell<String>,
}

impl Completer for ShellHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.catalog.complete(&self.pending.borrow(), line, pos))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

/// Every line is accepted as typed: the shell itself collects lines until
/// [`super::split::is_complete`], so that continuation lines get their own prompt.
impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let mut columns = BTreeMap::new();
        columns.insert(
            "events".to_string(),
            vec!["capture_id".to_string(), "ts".into(), "entity".into()],
        );
        columns.insert("entities".to_string(), vec!["capture_id".to_string(), "name".into()]);
        columns
            .insert("intervals".to_string(), vec!["ts".to_string(), "dur".into(), "state".into()]);
        Catalog {
            columns,
            functions: vec!["fmt_ns".into(), "intervals_in".into()],
            analyses: vec!["cpu_load".into()],
        }
    }

    fn words(pending: &str, line: &str) -> (usize, Vec<String>) {
        catalog().complete(pending, line, line.len())
    }

    #[test]
    fn tables_keywords_and_macros() {
        assert_eq!(words("", "SELECT * FROM ev"), (14, vec!["events".to_string()]));
        assert_eq!(words("", "SELECT * FROM ent").1, vec!["entities"]);
        assert_eq!(words("", "SEL").1, vec!["SELECT"]);
        assert_eq!(words("", "sel").1, vec!["select"]);
        assert_eq!(words("", "SELECT fmt").1, vec!["fmt_ns"]);
        assert_eq!(words("", "SELECT * FROM intervals_").1, vec!["intervals_in"]);
    }

    #[test]
    fn columns_of_tables_in_the_statement() {
        assert_eq!(words("", "SELECT sta").1, Vec::<String>::new(), "no table named yet");
        assert_eq!(words("", "SELECT * FROM intervals WHERE sta").1, vec!["state"]);
        assert_eq!(
            words("SELECT *\nFROM intervals", "WHERE du").1,
            vec!["dur"],
            "earlier lines count"
        );
        assert_eq!(words("", "SELECT i.d").1, Vec::<String>::new());
        assert_eq!(
            catalog().complete("", "SELECT i.st FROM intervals i", 11),
            (9, vec!["state".to_string()])
        );
        let line = "SELECT e.ent FROM events AS e";
        assert_eq!(catalog().complete("", line, 12), (9, vec!["entity".to_string()]));
        assert_eq!(words("", "SELECT events.t").1, vec!["ts"]);
    }

    #[test]
    fn meta_commands_and_their_arguments() {
        assert_eq!(words("", ".ta"), (0, vec![".tables".to_string()]));
        assert_eq!(words("", ".q").1, vec![".queries", ".quit"]);
        assert_eq!(words("", ".run cp"), (5, vec!["cpu_load".to_string()]));
        assert_eq!(words("", ".schema int"), (8, vec!["intervals".to_string()]));
        assert_eq!(words("", ".mode ma").1, vec!["markdown"]);
        assert_eq!(words("", ".timer o").1, vec!["off", "on"]);
        assert_eq!(
            words("SELECT 1", ".ta").1,
            Vec::<String>::new(),
            "inside a statement a dot is SQL"
        );
    }

    #[test]
    fn a_word_after_a_multibyte_character_completes_without_a_panic() {
        assert_eq!(words("", "SELECT \u{2019}ev").1, vec!["events"]);
        assert_eq!(words("", "SELECT * FROM\u{3000}ev"), (16, vec!["events".to_string()]));
        assert_eq!(words("", ".run\u{3000}cp"), (7, vec!["cpu_load".to_string()]));
    }
}
