//! Tests of the output as a whole: one sample result in every layout, collected and
//! streamed.
use super::*;
use arrow::array::{Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field};
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
