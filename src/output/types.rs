//! Column types as table headers show them: the [`SQL_TYPE`] DuckDB gave a column (kept in
//! its field metadata), else the SQL name of its Arrow type ([`type_name`]).
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

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
pub(super) fn field_type_name(f: &Field) -> String {
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
