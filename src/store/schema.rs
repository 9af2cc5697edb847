//! The table contract, read from `schema/*.sql` (embedded): one documented `CREATE TABLE`
//! per file. The Parquet writer and the DuckDB views both take their columns from here, so
//! the SQL files are the single definition of every table.
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// The embedded schema files, in order.
pub const FILES: &[(&str, &str)] = &[
    ("001_captures.sql", include_str!("../../schema/001_captures.sql")),
    ("002_entities.sql", include_str!("../../schema/002_entities.sql")),
    ("003_events.sql", include_str!("../../schema/003_events.sql")),
    ("004_intervals.sql", include_str!("../../schema/004_intervals.sql")),
    ("005_instances.sql", include_str!("../../schema/005_instances.sql")),
    ("006_lock_requests.sql", include_str!("../../schema/006_lock_requests.sql")),
    ("007_messages.sql", include_str!("../../schema/007_messages.sql")),
    ("008_deadlines.sql", include_str!("../../schema/008_deadlines.sql")),
    ("009_diagnostics.sql", include_str!("../../schema/009_diagnostics.sql")),
];

/// Version of the archive layout and tables; recorded in the manifest and in `captures`.
pub const SCHEMA_VERSION: i64 = 1;

/// One column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Name.
    pub name: String,
    /// SQL type as written (BIGINT, VARCHAR, DOUBLE, BOOLEAN, INTEGER).
    pub sql_type: String,
    /// The `--` comment after it.
    pub doc: String,
    /// For a column written `GENERATED ALWAYS AS (expr) VIRTUAL`: `expr`. Such a column is
    /// not stored in the Parquet files; the views compute it from the stored columns.
    pub computed: Option<String>,
}

/// One table.
#[derive(Debug, Clone)]
pub struct Table {
    /// Name.
    pub name: String,
    /// The comment block above `CREATE TABLE`.
    pub doc: String,
    /// Columns, `capture_id` first.
    pub columns: Vec<Column>,
    /// The DDL as written.
    pub ddl: String,
}

impl Table {
    /// The columns in the table's Parquet files: all but `capture_id`, which is the hive
    /// partition (`<table>/capture_id=N/`), and the computed ones, which the views add.
    pub fn stored_columns(&self) -> impl Iterator<Item = &Column> {
        self.columns.iter().filter(|c| c.name != "capture_id" && c.computed.is_none())
    }

    /// [`Table::stored_columns`], quoted and comma-separated, for SELECT lists.
    pub fn stored_column_list(&self) -> String {
        self.stored_columns().map(|c| format!("\"{}\"", c.name)).collect::<Vec<_>>().join(", ")
    }

    /// Arrow schema of the table's Parquet files ([`Table::stored_columns`]).
    pub fn file_schema(&self) -> Arc<Schema> {
        let fields: Vec<Field> = self
            .stored_columns()
            .map(|c| Field::new(&c.name, arrow_type(&c.sql_type), true))
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// Column names, comma-separated, for SELECT lists; computed columns as `(expr) AS name`.
    pub fn column_list(&self) -> String {
        let col = |c: &Column| match &c.computed {
            Some(expr) => format!("({expr}) AS \"{}\"", c.name),
            None => format!("\"{}\"", c.name),
        };
        self.columns.iter().map(col).collect::<Vec<_>>().join(", ")
    }
}

fn arrow_type(sql: &str) -> DataType {
    match sql {
        "BIGINT" => DataType::Int64,
        "INTEGER" => DataType::Int32,
        "DOUBLE" => DataType::Float64,
        "BOOLEAN" => DataType::Boolean,
        _ => DataType::Utf8,
    }
}

/// Parses one schema file.
pub fn parse(sql: &str) -> Option<Table> {
    let mut doc = Vec::new();
    let mut name = None;
    let mut columns = Vec::new();
    for line in sql.lines().map(str::trim) {
        if name.is_none() {
            if let Some(c) = line.strip_prefix("--") {
                doc.push(c.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("CREATE TABLE ") {
                name = Some(rest.trim_end_matches('(').trim().to_string());
            }
            continue;
        }
        if line.starts_with(')') {
            break;
        }
        let (def, comment) = match line.split_once("--") {
            Some((d, c)) => (d.trim(), c.trim()),
            None => (line, ""),
        };
        let def = def.trim_end_matches(',');
        let computed = def
            .split_once("GENERATED ALWAYS AS (")
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map(|(expr, _)| expr.trim().to_string());
        let mut parts = def.split_whitespace();
        if let (Some(col), Some(ty)) = (parts.next(), parts.next()) {
            columns.push(Column {
                name: col.to_string(),
                sql_type: ty.to_string(),
                doc: comment.to_string(),
                computed,
            });
        }
    }
    Some(Table { name: name?, doc: doc.join("\n"), columns, ddl: sql.to_string() })
}

/// All tables, in file order.
pub fn tables() -> Vec<Table> {
    FILES.iter().filter_map(|(_, sql)| parse(sql)).collect()
}

/// The table called `name`.
pub fn table(name: &str) -> Option<Table> {
    tables().into_iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses_and_is_documented() {
        let tables = tables();
        assert_eq!(tables.len(), FILES.len());
        for t in &tables {
            assert!(!t.doc.is_empty(), "{} has no doc block", t.name);
            assert_eq!(
                t.columns.first().map(|c| c.name.as_str()),
                Some("capture_id"),
                "{}",
                t.name
            );
            for c in &t.columns {
                assert!(!c.doc.is_empty(), "{}.{} has no doc", t.name, c.name);
                assert!(
                    ["BIGINT", "INTEGER", "DOUBLE", "BOOLEAN", "VARCHAR"]
                        .contains(&c.sql_type.as_str()),
                    "{}.{}: type {}",
                    t.name,
                    c.name,
                    c.sql_type
                );
            }
        }
    }

    #[test]
    fn computed_columns_are_not_stored() {
        let t = table("instances").expect("instances");
        let rt = t.columns.iter().find(|c| c.name == "response_time").expect("response_time");
        assert_eq!(rt.computed.as_deref(), Some("terminate_ts - activate_ts"));
        assert_eq!(rt.sql_type, "BIGINT");
        assert!(t.file_schema().field_with_name("response_time").is_err());
        assert!(t.file_schema().field_with_name("terminate_ts").is_ok());
        assert!(t.column_list().contains("(terminate_ts - activate_ts) AS \"response_time\""));
    }

    #[test]
    fn design_tables_exist() {
        let names: Vec<String> = tables().into_iter().map(|t| t.name).collect();
        for t in [
            "captures",
            "entities",
            "events",
            "intervals",
            "instances",
            "lock_requests",
            "messages",
            "deadlines",
            "diagnostics",
        ] {
            assert!(names.iter().any(|n| n == t), "missing table {t}");
        }
    }
}
