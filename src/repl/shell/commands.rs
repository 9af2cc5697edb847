//! What the shell's meta-commands do ([`super::meta`] parses them): `.run` with its
//! parameters and the session's deadlines set aside and put back, `.mode`, `.maxrows`, `.timer`,
//! `.output`, `.read`, and the listings `.tables`, `.schema` and `.queries`.
use super::*;

impl Shell {
    /// The rows of `param_deadlines` the session holds (its own `INSERT`s).
    pub(super) fn own_deadlines(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self.conn.prepare("SELECT entity, deadline FROM param_deadlines")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?)
    }

    /// Puts `param_deadlines` back to `rows`.
    pub(super) fn restore_deadlines(&self, rows: &[(String, i64)]) -> Result<()> {
        self.conn.execute_batch("DELETE FROM param_deadlines")?;
        let mut stmt = self.conn.prepare("INSERT INTO param_deadlines VALUES (?, ?)")?;
        for (entity, ns) in rows {
            stmt.execute(duckdb::params![entity, ns])?;
        }
        Ok(())
    }

    pub(super) fn meta(&mut self, m: Meta) -> Result<Flow> {
        // Commands that read the tables see the archive as it is now, like statements do.
        if matches!(m, Meta::Tables | Meta::Schema(_) | Meta::Captures | Meta::Run { .. }) {
            self.follow_archive();
        }
        match m {
            Meta::Help => self.say(&meta::help())?,
            Meta::Tables => self.tables()?,
            Meta::Schema(table) => self.schema(table.as_deref())?,
            Meta::Captures => {
                let sql = match self.mode {
                    Mode::Json => crate::cli::captures::captures_json_sql(),
                    _ => crate::cli::captures::CAPTURES_SQL.to_string(),
                };
                self.internal(&sql)?
            }
            Meta::Queries => self.queries()?,
            Meta::Run { name, params } => {
                let q = queries::find(&name).ok_or_else(|| {
                    Error::Usage(format!("no analysis named '{name}' (.queries lists them)"))
                })?;
                let values: Vec<(String, String)> =
                    params.iter().filter(|(k, _)| k != "capture").cloned().collect();
                q.check(&values)?;
                // capture= too is given once (a second one would silently win).
                let mut captures = params.iter().filter(|(k, _)| k == "capture").map(|(_, v)| v);
                if let (Some(first), Some(then)) = (captures.next(), captures.next()) {
                    return Err(Error::Usage(format!(
                        "capture is given twice (capture={first}, then capture={then}): give it \
                         once"
                    )));
                }
                let mut capture = Vec::new();
                let mut values = Vec::new();
                for (k, v) in params {
                    if k == "capture" {
                        let archive = Archive::open(&self.archive_dir)?;
                        let selected = archive.manifest.select(&v, &self.archive_dir)?;
                        capture = selected.iter().map(|c| c.capture_id).collect();
                    } else {
                        values.push((k, v));
                    }
                }
                // A file parameter (deadlines=FILE) fills its table for this run only: the
                // deadlines the session put there itself are set aside and put back after
                // it, whether it ran or not (a file that cannot be read included).
                let has_file = values
                    .iter()
                    .any(|(k, _)| q.params.iter().any(|p| &p.name == k && p.kind == "file"));
                let own = if has_file { Some(self.own_deadlines()?) } else { None };
                let run = crate::cli::query::load_file_params(&self.conn, &q, values).and_then(
                    |(values, _)| {
                        q.invocation(&values, &capture)
                            .map(|sql| self.statement(&sql, Origin::Meta))
                    },
                );
                if let Some(own) = own {
                    self.restore_deadlines(&own)?;
                }
                run?;
            }
            Meta::Mode(Some(mode)) => self.mode = mode,
            Meta::Mode(None) => self.say(&format!("{}\n", self.mode.name()))?,
            Meta::MaxRows(n) => self.max_rows = n,
            Meta::ShowMaxRows => {
                let n = self.max_rows.map_or("0 (all rows)".to_string(), |n| n.to_string());
                self.say(&format!("{n}\n"))?;
            }
            Meta::Timer(on) => self.timer = on,
            Meta::Output(to) => self.set_output(to)?,
            Meta::Read(path) => {
                if self.reading.len() >= MAX_READ_DEPTH {
                    return Err(Error::Usage(format!(
                        ".read {}: files read each other too deep",
                        path.display()
                    )));
                }
                let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                let text = crate::cli::sql::script_text(&path.display().to_string(), bytes)?;
                if self.reading.is_empty() {
                    self.interrupted = false;
                }
                let flow = self.feed(&path.to_string_lossy(), &text);
                if self.reading.is_empty() && std::mem::take(&mut self.interrupted) {
                    crate::say!("(.read {}: the rest of the script was not run)", path.display());
                }
                return Ok(flow);
            }
            Meta::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Go)
    }

    /// `.tables`: the archive's tables and the session's own, with row counts.
    pub(super) fn tables(&mut self) -> Result<()> {
        let mut names: Vec<String> = schema::tables().into_iter().map(|t| t.name).collect();
        // The session's own tables and views, TEMP ones included; not the archive's views
        // again, the analyses (`.queries` lists those) or tracedb's helpers (`_...`).
        let mut stmt = self.conn.prepare(
            "SELECT table_name FROM duckdb_tables() WHERE database_name IN ('memory', 'temp') \
             UNION ALL SELECT view_name FROM duckdb_views() \
             WHERE database_name IN ('memory', 'temp') AND NOT internal ORDER BY 1",
        )?;
        let own: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(0))?.flatten().collect();
        for n in own {
            if !n.starts_with('_') && !names.contains(&n) && queries::find(&n).is_none() {
                names.push(n);
            }
        }
        let parts: Vec<String> = names
            .iter()
            .map(|n| {
                format!(
                    "SELECT '{}' AS name, (SELECT count(*) FROM \"{}\") AS rows",
                    n.replace('\'', "''"),
                    n.replace('"', "\"\"")
                )
            })
            .collect();
        self.internal(&parts.join(" UNION ALL "))
    }

    /// `.schema [TABLE]`: the documented DDL of archive tables; columns of other relations;
    /// the SQL file of an analysis.
    pub(super) fn schema(&mut self, table: Option<&str>) -> Result<()> {
        let Some(name) = table else {
            let all: Vec<String> =
                schema::tables().into_iter().map(|t| t.ddl.trim().to_string()).collect();
            return self.say(&format!("{}\n", all.join("\n\n")));
        };
        if let Some(t) = schema::table(name) {
            return self.say(&format!("{}\n", t.ddl.trim()));
        }
        if let Some(q) = queries::find(name) {
            return self.say(&format!("{}\n", q.sql.trim()));
        }
        let lit = name.replace('\'', "''");
        let mut stmt = self.conn.prepare(&format!(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = '{lit}'"
        ))?;
        let n: i64 = stmt.query_row([], |r| r.get(0))?;
        if n == 0 {
            return Err(Error::Usage(format!("no table named '{name}' (.tables lists them)")));
        }
        self.internal(&format!(
            "SELECT column_name AS column, data_type AS type, comment FROM duckdb_columns() \
             WHERE table_name = '{lit}' ORDER BY column_index"
        ))
    }

    /// `.queries`: the predefined analyses with parameters and summary.
    pub(super) fn queries(&mut self) -> Result<()> {
        let cat = queries::catalog();
        if cat.is_empty() {
            return self.say("no predefined analyses in this build\n");
        }
        let lit = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let rows: Vec<String> = cat
            .iter()
            .map(|q| {
                // `name=default`, or `name=<kind>` for one without a default (`-`), as
                // `tracedb queries` shows it.
                let params: Vec<String> = q
                    .params
                    .iter()
                    .map(|p| match p.default.as_str() {
                        "-" => format!("{}=<{}>", p.name, p.kind),
                        d => format!("{}={d}", p.name),
                    })
                    .collect();
                format!("({}, {}, {})", lit(&q.name), lit(&params.join(" ")), lit(&q.summary))
            })
            .collect();
        self.internal(&format!(
            "SELECT * FROM (VALUES {}) AS q(name, parameters, summary)",
            rows.join(", ")
        ))
    }
}
