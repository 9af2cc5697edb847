//! Tests of the writer as a whole: rows through [`TableSink`] into Parquet files, read back
//! with parquet-rs (values, page encodings, row groups, statistics).
use super::table_file::ROW_GROUP_ROWS;
use super::*;
use crate::derive::{InstanceRow, IntervalRow, Output, StateText};
use crate::model::Interner;
use arrow::array::Array;
use parquet::basic::Encoding;
use std::fs::File;

/// The pages of column `name` in row group `rg` of the file `path`, as they are in the
/// file: (dictionary page?, encoding), runs of one kind told once.
fn page_kinds(path: &Path, rg: usize, name: &str) -> Vec<(bool, Encoding)> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let file = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let g = file.get_row_group(rg).unwrap();
    let c = (0..g.num_columns())
        .find(|&c| g.metadata().column(c).column_path().string() == name)
        .unwrap();
    let mut kinds: Vec<(bool, Encoding)> = Vec::new();
    for page in g.get_column_page_reader(c).unwrap() {
        let page = page.unwrap();
        let kind = (page.is_dictionary_page(), page.encoding());
        if kinds.last() != Some(&kind) {
            kinds.push(kind);
        }
    }
    kinds
}

/// Row `r` of the intervals written by `name_columns_read_back_as_written`: entity,
/// state, core, start_action.
fn interval_names(r: usize) -> [Option<String>; 4] {
    let entity = match r {
        // Long names, more than the 1 MiB a dictionary holds: the chunk goes on in PLAIN.
        200_000..=203_999 => format!("{}{}", "L".repeat(500), r % 3000),
        // Names interned after the first 65,536 (looked up in a map, not a table).
        300_000..=399_999 => format!("E_{}", 60_000 + r % 9_000),
        // Runs of 20, then runs shorter than 8.
        _ if r % 100_000 < 50_000 => format!("E_{}", (r / 20) % 50),
        _ => format!("E_{}", (r / 3) % 7),
    };
    let state = if r.is_multiple_of(5) { format!("value {}", r % 1000) } else { "RUNNING".into() };
    let core = (!r.is_multiple_of(3)).then(|| format!("Core_{}", (r / 7) % 4));
    let start = (r % 1000 >= 10).then(|| "start".to_string());
    [Some(entity), Some(state), core, start]
}

#[test]
fn name_columns_read_back_as_written() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = tempfile::tempdir().unwrap();
    let mut sink = TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
    let mut n = Interner::default();
    for i in 0..70_000 {
        n.intern(&format!("E_{i}"));
    }
    let (t, channel) = (n.intern("T"), n.intern("state"));
    let rows = ROW_GROUP_ROWS + 100_000;
    for r in 0..rows {
        let [entity, state, core, start] = interval_names(r);
        let entity = n.intern(&entity.unwrap());
        let state = state.unwrap();
        let state = if state == "RUNNING" {
            StateText::Sym(n.intern(&state))
        } else {
            StateText::Owned(state.into())
        };
        let iv = IntervalRow {
            entity,
            entity_type: t,
            instance: 0,
            channel,
            state,
            value: None,
            ts: 0,
            dur: 1,
            core: core.map(|c| n.intern(&c)),
            start_action: start.map(|a| n.intern(&a)),
            end_action: None,
            open: false,
        };
        sink.intervals(&[iv], &n).unwrap();
    }
    sink.writer.finish().unwrap();
    let path = dir.path().join("intervals/part-0.parquet");
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
    let meta = reader.metadata().clone();
    assert_eq!(meta.num_row_groups(), 2, "a row group holds 2^20 rows");
    let pages = |rg: usize, name: &str| page_kinds(&path, rg, name);
    let (dict, rle, plain) =
        ((true, Encoding::PLAIN), (false, Encoding::RLE_DICTIONARY), (false, Encoding::PLAIN));
    assert_eq!(pages(0, "entity"), [dict, rle, plain], "the dictionary filled up");
    assert_eq!(pages(1, "entity"), [dict, rle], "a new dictionary");
    assert_eq!(pages(0, "core"), [dict, rle]);
    let mut r = 0;
    for batch in reader.build().unwrap() {
        let batch = batch.unwrap();
        let col = |name: &str| {
            let a = batch.column_by_name(name).unwrap();
            a.as_any().downcast_ref::<arrow::array::StringArray>().unwrap().clone()
        };
        let cols = [col("entity"), col("state"), col("core"), col("start_action")];
        for i in 0..batch.num_rows() {
            let got: Vec<Option<String>> =
                cols.iter().map(|c| c.is_valid(i).then(|| c.value(i).to_string())).collect();
            assert_eq!(got, interval_names(r), "row {r}");
            r += 1;
        }
    }
    assert_eq!(r, rows);
}

/// An instance number of row `r`: -1, small, beyond the dense table, extremes, and
/// enough distinct ones for the dictionary to fill up.
fn instance_of(r: i64) -> i64 {
    match r {
        _ if r % 7 == 0 => -1,
        _ if r % 11 == 0 => (1 << 40) + r,
        _ if r % 13 == 0 => i64::MIN,
        _ if r % 17 == 0 => i64::MAX,
        _ => r,
    }
}

#[test]
fn integer_dictionary_columns_keep_every_value_and_their_statistics() {
    use arrow::array::Int64Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::statistics::Statistics;
    let dir = tempfile::tempdir().unwrap();
    let mut sink = TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
    let mut n = Interner::default();
    let (e, t) = (n.intern("E"), n.intern("T"));
    let rows = 300_000i64;
    let migrations = |r: i64| (r % 3 != 0).then_some(r % 5);
    for r in 0..rows {
        let row = InstanceRow {
            entity: e,
            entity_type: t,
            instance: instance_of(r),
            preemptions: r % 100_000,
            migrations: migrations(r),
            ..InstanceRow::default()
        };
        sink.instances(&[row], &n).unwrap();
    }
    sink.writer.finish().unwrap();
    let path = dir.path().join("instances/part-0.parquet");
    let file = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    let g = file.get_row_group(0).unwrap();
    let column = |name: &str| {
        (0..g.num_columns()).find(|&c| g.metadata().column(c).column_path().string() == name)
    };
    let kinds = |name: &str| page_kinds(&path, 0, name);
    let (dict, rle, plain) =
        ((true, Encoding::PLAIN), (false, Encoding::RLE_DICTIONARY), (false, Encoding::PLAIN));
    assert_eq!(kinds("instance"), [dict, rle, plain], "the dictionary filled up");
    assert_eq!(kinds("migrations"), [dict, rle]);
    // Statistics as parquet-rs wrote them: min, max and the NULL count.
    let stats = |name: &str| match g.metadata().column(column(name).unwrap()).statistics() {
        Some(Statistics::Int64(s)) => {
            (*s.min_opt().unwrap(), *s.max_opt().unwrap(), s.null_count_opt())
        }
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(stats("instance"), (i64::MIN, i64::MAX, Some(0)));
    assert_eq!(stats("migrations"), (0, 4, Some(((rows + 2) / 3) as u64)));
    assert_eq!(stats("preemptions"), (0, 99_999, Some(0)));
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
    let mut r = 0;
    for batch in reader.build().unwrap() {
        let batch = batch.unwrap();
        let col = |name: &str| {
            let a = batch.column_by_name(name).unwrap();
            a.as_any().downcast_ref::<Int64Array>().unwrap().clone()
        };
        let (inst, pre, mig) = (col("instance"), col("preemptions"), col("migrations"));
        for i in 0..batch.num_rows() {
            assert_eq!(inst.value(i), instance_of(r), "row {r}");
            assert_eq!(pre.value(i), r % 100_000, "row {r}");
            assert_eq!(mig.is_valid(i).then(|| mig.value(i)), migrations(r), "row {r}");
            r += 1;
        }
    }
    assert_eq!(r, rows);
}
