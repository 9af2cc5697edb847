//! The archive as SQL: an in-memory DuckDB with a view per table over the captures'
//! Parquet files, the helper macros and the predefined analyses; a capture with a file that
//! cannot be read is left out of every view ([`Damaged`]) rather than failing every query.
use super::*;

impl Archive {
    /// Opens an in-memory DuckDB with a view per table over the archive's Parquet files, the
    /// helper macros of [`HELPERS_SQL`] and the predefined analyses. A capture with a
    /// damaged file is left out of every view, with a warning on stderr (see [`Damaged`]).
    pub fn connect(&self) -> Result<duckdb::Connection> {
        let (conn, damaged) = self.connect_with_damage()?;
        for d in damaged {
            crate::say!("tracedb: warning: {d}");
        }
        Ok(conn)
    }

    /// [`Archive::connect`], handing back the captures left out instead of warning of them.
    pub fn connect_with_damage(&self) -> Result<(duckdb::Connection, Vec<Damaged>)> {
        let conn = duckdb::Connection::open_in_memory()?;
        let damaged = self.create_views(&conn)?;
        conn.execute_batch(HELPERS_SQL)
            .map_err(|e| Error::Sql(format!("internal: installing sql/helpers.sql: {e}")))?;
        queries::install(&conn)?;
        Ok((conn, damaged))
    }

    /// (Re)creates the table views on `conn`, over the files of every capture but those
    /// returned: captures with a file DuckDB could not open. A view over a list of files
    /// reads every file's footer when it is made, so one truncated or missing file would
    /// otherwise fail every query, `captures` included, and hide the captures that are
    /// whole.
    pub fn create_views(&self, conn: &duckdb::Connection) -> Result<Vec<Damaged>> {
        let mut damaged = self.damaged(false, &[]);
        if let Err(e) = self.try_create_views(conn, &damaged) {
            // A footer DuckDB cannot read behind the right size and closing magic (bytes
            // altered in place): parse every footer to find whose it is, then once more.
            let found = self.damaged(true, &damaged);
            if found.is_empty() {
                return Err(e);
            }
            damaged.extend(found);
            self.try_create_views(conn, &damaged)?;
        }
        Ok(damaged)
    }

    /// Captures (not among `known`) with a listed table file that is missing or does not end
    /// in Parquet's magic; with `footers`, one whose footer does not parse. The first
    /// problem found per capture.
    pub(super) fn damaged(&self, footers: bool, known: &[Damaged]) -> Vec<Damaged> {
        let mut out = Vec::new();
        for c in &self.manifest.captures {
            if known.iter().any(|d| d.capture_id == c.capture_id) {
                continue;
            }
            let problem = c.files.values().find_map(|f| {
                let path = self.dir.join(&f.path);
                let problem =
                    if footers { footer_problem(&path) } else { file_problem(&path, f.bytes) };
                problem.map(|p| (f.path.clone(), p))
            });
            if let Some((path, problem)) = problem {
                out.push(Damaged {
                    capture_id: c.capture_id,
                    name: c.name.clone(),
                    path,
                    problem,
                    has_source: !c.sources.is_empty(),
                });
            }
        }
        out
    }

    /// Makes the views over every capture's files but those of the `damaged` ones.
    pub(super) fn try_create_views(
        &self,
        conn: &duckdb::Connection,
        damaged: &[Damaged],
    ) -> Result<()> {
        let dir = std::fs::canonicalize(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let whole = || {
            self.manifest
                .captures
                .iter()
                .filter(|c| !damaged.iter().any(|d| d.capture_id == c.capture_id))
        };
        // tracedb's own helper relations live in a schema of their own, so that `SHOW TABLES`
        // lists what users query and not them.
        let mut sql = format!("CREATE SCHEMA IF NOT EXISTS {INTERNAL};\n");
        for t in schema::tables() {
            let files: Vec<String> = whole()
                .filter_map(|c| c.files.get(&t.name))
                .map(|f| format!("'{}'", dir.join(&f.path).to_string_lossy().replace('\'', "''")))
                .collect();
            // Files written before a column existed lack it: a union BY NAME with an empty
            // table of the current schema gives NULL there, so old captures stay readable
            // (union_by_name alone cannot add a column no file has). The table is always a
            // view, files or not, so that remaking the views when captures come or go never
            // has to replace a table with a view or the other way round.
            let empty = format!("{INTERNAL}._empty_{}", t.name);
            sql.push_str(&t.ddl.replacen(
                &format!("CREATE TABLE {}", t.name),
                &format!("CREATE OR REPLACE TABLE {empty}"),
                1,
            ));
            if files.is_empty() {
                sql.push_str(&format!(
                    "\nCREATE OR REPLACE TEMP VIEW {name} AS SELECT {cols} FROM {empty};\n",
                    name = t.name,
                    cols = t.column_list()
                ));
            } else {
                sql.push_str(&format!(
                    "\nCREATE OR REPLACE TEMP VIEW {name} AS SELECT {cols} FROM (SELECT * FROM {empty} UNION ALL BY NAME \
                     SELECT * FROM read_parquet([{files}], hive_partitioning = true, \
                     hive_types = {{'capture_id': BIGINT}}, union_by_name = true));\n",
                    name = t.name,
                    cols = t.column_list(),
                    files = files.join(", ")
                ));
            }
            sql.push('\n');
        }
        // Where each capture's tables are stored (from the manifest).
        sql.push_str(
            "CREATE OR REPLACE TEMP TABLE capture_storage (capture_id BIGINT, table_name VARCHAR, \
             path VARCHAR, rows BIGINT, bytes BIGINT, sha256 VARCHAR);\n",
        );
        let mut values = Vec::new();
        for c in whole() {
            for (t, f) in &c.files {
                let q = |s: &str| s.replace('\'', "''");
                values.push(format!(
                    "({}, '{}', '{}', {}, {}, '{}')",
                    c.capture_id,
                    q(t),
                    q(&f.path),
                    f.rows,
                    f.bytes,
                    q(&f.sha256)
                ));
            }
        }
        if !values.is_empty() {
            sql.push_str(&format!("INSERT INTO capture_storage VALUES {};\n", values.join(", ")));
        }
        conn.execute_batch(&sql)?;
        Ok(())
    }
}

/// A capture left out of the table views because one of its files cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged {
    /// Its id.
    pub capture_id: i64,
    /// Its name.
    pub name: String,
    /// The first damaged file found, relative to the archive.
    pub path: String,
    /// What is wrong with that file.
    pub problem: String,
    /// Whether its source is kept, so `tracedb reingest` can rebuild it.
    pub has_source: bool,
}

impl Damaged {
    /// What to do about it.
    pub fn repair(&self) -> String {
        let id = self.capture_id;
        if self.has_source {
            format!("`tracedb reingest {id}` rebuilds it from its kept source")
        } else {
            format!("its source is not kept: `tracedb rm {id}` removes it")
        }
    }
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "capture {} '{}' is left out of every table: {} {}; {} (`tracedb verify` checks \
             every file)",
            self.capture_id,
            self.name,
            self.path,
            self.problem,
            self.repair()
        )
    }
}

/// What keeps DuckDB from opening the Parquet file at `path`, which the manifest says has
/// `bytes` bytes, found without reading more than its last four: it is missing, or does not
/// end in Parquet's magic (a truncated file, mostly). A file of another size that still
/// ends as Parquet does is read: `verify` reports it, and a query should not lose what can
/// be read.
pub(super) fn file_problem(path: &Path, bytes: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("is missing".into()),
        Err(e) => return Some(format!("cannot be opened ({e})")),
    };
    let size = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    let mut magic = [0u8; 4];
    let read = if size < 4 {
        Ok(())
    } else {
        file.seek(SeekFrom::End(-4)).and_then(|_| file.read_exact(&mut magic))
    };
    match read {
        Ok(()) if &magic == b"PAR1" => None,
        Ok(()) if size < bytes => {
            Some(format!("is truncated: {size} bytes, the manifest says {bytes}"))
        }
        Ok(()) => Some("is altered: it does not end as a Parquet file does".into()),
        Err(e) => Some(format!("cannot be read ({e})")),
    }
}

/// Why the footer of the Parquet file at `path` does not parse, if it does not.
pub(super) fn footer_problem(path: &Path) -> Option<String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(format!("cannot be opened ({e})")),
    };
    parquet::file::reader::SerializedFileReader::new(file)
        .err()
        .map(|e| format!("is altered: its Parquet footer does not read ({e})"))
}
