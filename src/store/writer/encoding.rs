//! How each column is written: the [`WriterProperties`] of a table's file (zstd pages of up
//! to [`PAGE_BYTES`], chunk statistics, delta encoding for sorted times, no dictionary for
//! wide integers, no statistics for VARCHAR columns, the [`COMPUTED_KEY`] footer entry), which
//! columns are names written through per-batch dictionaries ([`dict_columns`]) and which
//! small integers are dictionary-encoded ([`SMALL_INT_COLUMNS`]).
use super::table_file::ROW_GROUP_ROWS;
use crate::store::schema::Table;
use arrow::datatypes::{DataType, Field, Schema};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::sync::Arc;

/// Largest data page, bytes before compression.
const PAGE_BYTES: usize = 1 << 20;

/// Parquet footer key listing the columns a table's views compute, as `name = expression`
/// separated by `; `.
pub const COMPUTED_KEY: &str = "tracedb.computed_columns";

/// Integer columns with few distinct values, where a dictionary pays: written by
/// [`NameChunk::new_ints`], which finds a value's index without hashing it.
///
/// [`NameChunk::new_ints`]: crate::store::name_chunk::NameChunk::new_ints
const SMALL_INT_COLUMNS: &[&str] = &[
    "instance",
    "source_instance",
    "target_instance",
    "process_instance",
    "sender_instance",
    "receiver_instance",
    "blocked_by_instance",
    "blockers",
    "preemptions",
    "migrations",
    "count",
    "tag",
    "size",
];

/// Whether `field` is written by a [`NameChunk`] of integers: a BIGINT column of
/// [`SMALL_INT_COLUMNS`], dictionary-encoded.
///
/// [`NameChunk`]: crate::store::name_chunk::NameChunk
pub(super) fn is_int_dict(field: &Field) -> bool {
    field.data_type() == &DataType::Int64 && SMALL_INT_COLUMNS.contains(&field.name().as_str())
}

/// Columns of interned names, appended with [`Batch::sym`] into per-batch dictionaries and
/// encoded by [`NameChunk`].
///
/// [`Batch::sym`]: super::Batch::sym
/// [`NameChunk`]: crate::store::name_chunk::NameChunk
pub(super) fn dict_columns(table: &str) -> &'static [&'static str] {
    match table {
        "events" => &["source", "source_type", "target", "target_type", "action", "core"],
        "intervals" => {
            &["entity", "entity_type", "channel", "state", "core", "start_action", "end_action"]
        }
        "instances" => &["entity", "entity_type", "core"],
        "lock_requests" => &["semaphore", "process", "blocked_by"],
        "messages" => &["sender", "receiver"],
        _ => &[],
    }
}

/// The schema [`Batch`] builds for `table`: its file schema with the name columns marked as
/// dictionaries (built as [`NameBatch`]es). In the files they are dictionary-encoded UTF-8
/// strings like any other (no Arrow schema is stored).
///
/// [`Batch`]: super::Batch
/// [`NameBatch`]: crate::store::name_chunk::NameBatch
pub(super) fn writer_schema(table: &Table) -> Arc<Schema> {
    let dicts = dict_columns(&table.name);
    let fields: Vec<Field> = table
        .file_schema()
        .fields()
        .iter()
        .map(|f| {
            if dicts.contains(&f.name().as_str()) {
                Field::new(
                    f.name(),
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    true,
                )
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// Sorted times and sequence numbers: delta encoding beats dictionaries.
fn delta_columns(table: &str) -> &'static [&'static str] {
    match table {
        "events" => &["seq", "ts"],
        "intervals" => &["ts"],
        "instances" => &["activate_ts", "start_ts", "terminate_ts"],
        "messages" => &["send_ts"],
        _ => &[],
    }
}

pub(super) fn properties(table: &Table, zstd_level: i32) -> WriterProperties {
    let zstd = Compression::ZSTD(ZstdLevel::try_new(zstd_level).unwrap_or_default());
    // Pages of up to 1 MiB whatever their row count: zstd compresses each page on its own,
    // and arrow-rs's default of 20k rows per page cost ~15% of the archive's size.
    let mut b = WriterProperties::builder()
        .set_compression(zstd)
        .set_data_page_row_count_limit(usize::MAX)
        .set_data_page_size_limit(PAGE_BYTES)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        // Min/max per row group (in the footer) is what engines prune with; page-level
        // statistics and the page index cost ~100 bytes per column per file for nothing.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_created_by(format!("tracedb {}", crate::TOOL_VERSION));
    // Columns the views compute are not in the file; the file says how to compute them, so
    // a reader without tracedb (or its schema/*.sql) still finds the formulas.
    let computed: Vec<String> = table
        .columns
        .iter()
        .filter_map(|c| c.computed.as_ref().map(|e| format!("{} = {e}", c.name)))
        .collect();
    if !computed.is_empty() {
        b = b.set_key_value_metadata(Some(vec![KeyValue::new(
            COMPUTED_KEY.to_string(),
            computed.join("; "),
        )]));
    }
    for c in table.stored_columns() {
        let path = ColumnPath::from(c.name.as_str());
        if delta_columns(&table.name).contains(&c.name.as_str()) {
            b = b
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
        } else if c.sql_type == "VARCHAR" {
            // Min/max of names prunes nothing (a row group spans every name) and comparing
            // every string for them was ~5% of an ingest's CPU time.
            b = b.set_column_statistics_enabled(path, EnabledStatistics::None);
        } else if c.sql_type == "BIGINT" && !SMALL_INT_COLUMNS.contains(&c.name.as_str()) {
            // Durations and other wide integers: nearly every value distinct, so dictionary
            // indices cost more than zstd over the plain values (intervals.dur: 54 KB -> 42 KB
            // on freertos-4cores).
            b = b.set_column_dictionary_enabled(path, false);
        }
    }
    b.build()
}
