//! The predefined analyses: one documented SQL file per analysis in `queries/<area>/`,
//! embedded in the binary, installed on every connection as a view (no parameters) or a
//! table macro (parameters with defaults), under the analysis's name.
//!
//! A file starts with a header of `-- @tag` lines, then free `--` text, then the SQL:
//!
//! ```text
//! -- @name cpu_load
//! -- @summary CPU load per core per time window
//! -- @param window duration 1ms  length of a window
//! -- @column capture_id  capture
//! -- @column load        busy / window length, 0..1
//! -- Free text: definitions, where other tools differ.
//! CREATE OR REPLACE TEMP MACRO cpu_load(window := 1000000) AS TABLE ...;
//! ```
//!
//! `@param` types: `duration` (a number with a unit suffix, given to SQL as ns), `int`,
//! `text`. `@include NAME` runs another query's SQL first. `@capture` says the macro takes
//! `capture := ID` (default NULL: every capture) and computes that capture alone, which
//! `--capture` then passes: a filter outside a macro does not reach inside it.
use crate::model::time::parse_duration_ns;
use crate::{Error, Result};

/// The embedded query files, in install order.
pub const FILES: &[(&str, &str)] = &[
    ("timing/activation_jitter.sql", include_str!("../../queries/timing/activation_jitter.sql")),
    ("timing/deadline_misses.sql", include_str!("../../queries/timing/deadline_misses.sql")),
    ("timing/deadline_summary.sql", include_str!("../../queries/timing/deadline_summary.sql")),
    ("timing/execution_times.sql", include_str!("../../queries/timing/execution_times.sql")),
    ("timing/response_times.sql", include_str!("../../queries/timing/response_times.sql")),
    ("timing/runnable_times.sql", include_str!("../../queries/timing/runnable_times.sql")),
    ("scheduling/cpu_load.sql", include_str!("../../queries/scheduling/cpu_load.sql")),
    (
        "scheduling/preemption_instances.sql",
        include_str!("../../queries/scheduling/preemption_instances.sql"),
    ),
    (
        "scheduling/preemption_pairs.sql",
        include_str!("../../queries/scheduling/preemption_pairs.sql"),
    ),
    ("scheduling/preemptions.sql", include_str!("../../queries/scheduling/preemptions.sql")),
    ("blocking/blocking.sql", include_str!("../../queries/blocking/blocking.sql")),
    (
        "blocking/blocking_instances.sql",
        include_str!("../../queries/blocking/blocking_instances.sql"),
    ),
    (
        "blocking/semaphore_contention.sql",
        include_str!("../../queries/blocking/semaphore_contention.sql"),
    ),
    (
        "blocking/priority_inversions.sql",
        include_str!("../../queries/blocking/priority_inversions.sql"),
    ),
    ("data/data_loss.sql", include_str!("../../queries/data/data_loss.sql")),
    ("data/signal_values.sql", include_str!("../../queries/data/signal_values.sql")),
    // --- Paraver / ovni analyses (issue 6) ---
    ("paraver/state_time.sql", include_str!("../../queries/paraver/state_time.sql")),
    ("paraver/channel_time.sql", include_str!("../../queries/paraver/channel_time.sql")),
    ("paraver/messages_summary.sql", include_str!("../../queries/paraver/messages_summary.sql")),
    // --- end of Paraver / ovni analyses ---
];

/// A parameter of an analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Name, as in `--param NAME=VALUE`.
    pub name: String,
    /// Name of the macro argument in SQL (differs when the name is an SQL keyword: `window`).
    pub sql_name: String,
    /// `duration`, `int`, `text`, or `file` (read by the command, not a macro argument).
    pub kind: String,
    /// Default value as written (e.g. `1ms`).
    pub default: String,
    /// What it does.
    pub doc: String,
}

/// One predefined analysis.
#[derive(Debug, Clone)]
pub struct Query {
    /// Name: the view or macro, and `tracedb query NAME`.
    pub name: String,
    /// Path of the file under `queries/`.
    pub file: String,
    /// One line.
    pub summary: String,
    /// Free documentation text.
    pub doc: String,
    /// Parameters (a table macro when not empty).
    pub params: Vec<Param>,
    /// Output columns with their meaning (units included).
    pub columns: Vec<(String, String)>,
    /// Other queries whose SQL must be installed first.
    pub includes: Vec<String>,
    /// The macro takes `capture := ID` (`@capture`).
    pub takes_capture: bool,
    /// The SQL text (header included).
    pub sql: &'static str,
}

impl Query {
    /// True when the analysis is a table macro (it has parameters other than files).
    pub fn is_macro(&self) -> bool {
        self.params.iter().any(|p| p.kind != "file")
    }

    /// Checks `values` as given on the command line, before anything is read: each key is
    /// a parameter of this analysis, given once (as `ingest --tag`: a second value would
    /// otherwise silently win, or a second deadline file be merged with the first), with a
    /// value of its kind. Every failure is a usage error.
    pub fn check(&self, values: &[(String, String)]) -> Result<()> {
        for (i, (k, v)) in values.iter().enumerate() {
            let Some(p) = self.params.iter().find(|p| &p.name == k) else {
                let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "{} has no parameter '{k}' (parameters: {})",
                    self.name,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )));
            };
            if let Some((_, first)) = values.iter().take(i).find(|(k2, _)| k2 == k) {
                return Err(Error::Usage(format!(
                    "--param {k} is given twice ({k}={first}, then {k}={v}): give each key once"
                )));
            }
            if p.kind != "file" {
                p.literal(v)?;
            }
        }
        Ok(())
    }

    /// The SQL selecting this analysis with `values` for its parameters (others default),
    /// restricted to `captures` (ids) when there are any. A macro that takes `capture :=`
    /// is given the one capture asked for; for several it computes every capture (each
    /// alone, as always) and the rows of the others are left out.
    pub fn invocation(&self, values: &[(String, String)], captures: &[i64]) -> Result<String> {
        self.check(values)?;
        let mut from = self.name.clone();
        if self.is_macro() {
            let mut args = Vec::new();
            for p in self.params.iter().filter(|p| p.kind != "file") {
                if let Some((_, v)) = values.iter().find(|(k, _)| k == &p.name) {
                    args.push(format!("{} := {}", p.sql_name, p.literal(v)?));
                }
            }
            if let ([id], true) = (captures, self.takes_capture) {
                args.push(format!("capture := {id}"));
            }
            from = format!("{}({})", self.name, args.join(", "));
        }
        Ok(match captures {
            [] => format!("SELECT * FROM {from}"),
            [id] => format!("SELECT * FROM {from} WHERE capture_id = {id}"),
            ids => {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                format!("SELECT * FROM {from} WHERE capture_id IN ({})", ids.join(", "))
            }
        })
    }
}

/// Longest duration parameter, ns (10^18 ns, about 31 years). An analysis adds a duration
/// to times and to itself (`ts + window`, `(ts % window) + window`): one near i64::MAX
/// overflowed inside DuckDB ("Overflow in addition of INT64"), naming no parameter.
pub const MAX_DURATION_NS: i64 = 1_000_000_000_000_000_000;

impl Param {
    /// `value` as an SQL literal of this parameter's kind.
    pub fn literal(&self, value: &str) -> Result<String> {
        let bad = |what: &str| Error::Usage(format!("--param {}={value}: {what}", self.name));
        match self.kind.as_str() {
            "duration" => match parse_duration_ns(value) {
                Some(v) if v > MAX_DURATION_NS => {
                    Err(bad("too long: at most 1000000000s (10^18 ns, about 31 years)"))
                }
                Some(v) if v > 0 => Ok(v.to_string()),
                // Past i64 (9223372036854775807s) too.
                _ => Err(bad(
                    "expected a positive duration such as 1ms, 250us, 2s (at most 1000000000s)",
                )),
            },
            "int" => value
                .trim()
                .parse::<i64>()
                .map(|v| v.to_string())
                .map_err(|_| bad("expected an integer")),
            _ => Ok(format!("'{}'", value.replace('\'', "''"))),
        }
    }
}

/// Parses one query file.
pub fn parse(file: &str, sql: &'static str) -> Result<Query> {
    let bad = |m: String| Error::Sql(format!("internal: queries/{file}: {m}"));
    let (mut name, mut summary) = (None, None);
    let (mut params, mut columns, mut includes, mut doc) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut takes_capture = false;
    for line in sql.lines() {
        let Some(c) = line.strip_prefix("--") else {
            if line.trim().is_empty() {
                continue;
            }
            break;
        };
        let c = c.trim();
        if let Some(tag) = c.strip_prefix('@') {
            let (key, rest) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
            let rest = rest.trim();
            match key {
                "name" => name = Some(rest.to_string()),
                "summary" => summary = Some(rest.to_string()),
                "include" => includes.push(rest.to_string()),
                "capture" => takes_capture = true,
                "column" => {
                    let (n, d) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    columns.push((n.to_string(), d.trim().to_string()));
                }
                "param" => {
                    let mut parts = rest.splitn(4, char::is_whitespace).filter(|s| !s.is_empty());
                    let (Some(n), Some(kind), Some(default)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(bad(format!("@param needs NAME KIND DEFAULT DOC: '{rest}'")));
                    };
                    let doc = parts.next().unwrap_or("").trim().to_string();
                    let (n, sql_name) = n.split_once('/').unwrap_or((n, n));
                    params.push(Param {
                        name: n.into(),
                        sql_name: sql_name.into(),
                        kind: kind.into(),
                        default: default.into(),
                        doc,
                    });
                }
                other => return Err(bad(format!("unknown tag @{other}"))),
            }
        } else {
            doc.push(c.to_string());
        }
    }
    Ok(Query {
        name: name.ok_or_else(|| bad("no @name".into()))?,
        file: file.to_string(),
        summary: summary.ok_or_else(|| bad("no @summary".into()))?,
        doc: doc.join("\n").trim().to_string(),
        params,
        columns,
        includes,
        takes_capture,
        sql,
    })
}

/// All predefined analyses, in install order.
pub fn catalog() -> Vec<Query> {
    FILES.iter().filter_map(|(f, sql)| parse(f, sql).ok()).collect()
}

/// The analysis called `name`.
pub fn find(name: &str) -> Option<Query> {
    catalog().into_iter().find(|q| q.name == name)
}

/// Creates every analysis's view or macro on `conn` (after the table views exist), in
/// `FILES` order (a file's `@include`s come earlier in the list; a test checks it).
pub fn install(conn: &duckdb::Connection) -> Result<()> {
    for (file, sql) in FILES {
        conn.execute_batch(sql)
            .map_err(|e| Error::Sql(format!("internal: installing queries/{file}: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_with_documented_columns() {
        for (file, sql) in FILES {
            let q = parse(file, sql).unwrap();
            assert!(!q.summary.is_empty(), "{file}");
            assert!(!q.columns.is_empty(), "{file}: no @column lines");
            assert!(!q.doc.is_empty(), "{file}: no definitions text");
            assert!(
                file.ends_with(&format!("/{}.sql", q.name)),
                "{file}: file named after the query"
            );
        }
    }

    #[test]
    fn includes_come_first_and_names_are_unique() {
        let all = catalog();
        assert_eq!(all.len(), FILES.len(), "every file parses");
        for (i, q) in all.iter().enumerate() {
            for inc in &q.includes {
                let at = all.iter().position(|o| &o.name == inc).unwrap_or(usize::MAX);
                assert!(at < i, "{} includes {inc}, which must come earlier in FILES", q.name);
            }
            assert_eq!(all.iter().filter(|o| o.name == q.name).count(), 1, "{}", q.name);
        }
    }

    #[test]
    fn invocation_maps_parameters() {
        let q = find("cpu_load").unwrap();
        let v = vec![("window".to_string(), "250us".to_string())];
        assert_eq!(
            q.invocation(&v, &[3]).unwrap(),
            "SELECT * FROM cpu_load(window_ns := 250000, capture := 3) WHERE capture_id = 3"
        );
        assert!(q.invocation(&[("speed".into(), "1".into())], &[]).is_err());
        let r = find("response_times").unwrap();
        assert_eq!(r.invocation(&[], &[]).unwrap(), "SELECT * FROM response_times");
        assert_eq!(
            q.invocation(&[], &[2, 5]).unwrap(),
            "SELECT * FROM cpu_load() WHERE capture_id IN (2, 5)"
        );
        assert_eq!(
            r.invocation(&[], &[4]).unwrap(),
            "SELECT * FROM response_times WHERE capture_id = 4"
        );
    }

    #[test]
    fn literals_follow_the_parameter_kind() {
        let p = Param {
            name: "window".into(),
            sql_name: "window_ns".into(),
            kind: "duration".into(),
            default: "1ms".into(),
            doc: String::new(),
        };
        assert_eq!(p.literal("250us").unwrap(), "250000");
        assert!(p.literal("fast").is_err());
        assert_eq!(p.literal("1000000000s").unwrap(), MAX_DURATION_NS.to_string());
        for long in ["1000000001s", "9223372036854775807ns", "9223372036854775807s"] {
            let e = p.literal(long).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--param window={long}: ")), "{e}");
            assert!(e.contains("at most 1000000000s"), "{e}");
        }
        let t = Param {
            name: "idle".into(),
            sql_name: "idle".into(),
            kind: "text".into(),
            default: "%idle%".into(),
            doc: String::new(),
        };
        assert_eq!(t.literal("it's").unwrap(), "'it''s'");
    }
}
