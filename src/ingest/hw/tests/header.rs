//! Tests of headers and rows: which exports are recognised (S32DS, TRACE32), delimiters,
//! bad rows, missing columns, branch types.
use super::*;

#[test]
fn s32ds_header_is_recognised_and_rows_become_events() {
    let text = "Index,Source,Type,Address,Destination,Timestamp,Data\n\
                1,Core0,Branch,0x1010,0x2000,1000,\n\
                2,Core1,Data,0x40000000,,1500,0x2A\n";
    assert!(sniff(text.as_bytes()));
    let r = run(text);
    assert_eq!(r.unit, Some(TimeUnit::Ns));
    assert_eq!(r.cores(), ["Core0", "Core1"]);
    assert_eq!(
        r.events,
        [
            "1000 Core0/-1 :/-1 branch [addr=0x00001010, dest=0x00002000]",
            "1500 Core1/-1 :/-1 data [addr=0x40000000, data=0x2A]"
        ]
    );
    assert!(r.meta.contains(&(
        "hw.columns".into(),
        "time=Timestamp,core=Source,type=Type,address=Address,destination=Destination,data=Data"
            .into()
    )));
}

#[test]
fn detection_needs_the_whole_column_set() {
    assert!(sniff(b"# exported\nindex;source;TYPE;address;destination;timestamp\n"));
    assert!(sniff(b"record\tcycle\taddress\tdata\tsymbol\tti.back\n"));
    assert!(!sniff(b"record,cycle,address,data,symbol,time\n"), "no ti.back/ti.zero");
    assert!(sniff(b"sep=,\nrecord,run,address,cycle,data,symbol,ti.back\n"), "Excel's sep= line");
    assert!(!sniff(b"Index,Source,Type,Address,Timestamp\n"), "no Destination");
    assert!(!sniff(b"#version 2.1.0\n0,Core_0,0,T,A,0,start\n"));
    // With 7 columns and a numeric index its rows look like BTF: the header decides.
    let s32 = b"Index,Source,Type,Address,Destination,Timestamp,Data\n1,C,Branch,1,2,3,4\n";
    assert!(!crate::ingest::btf::sniff(s32));
    assert_eq!(crate::ingest::detect(s32), Some(crate::ingest::Format::Hw));
}

#[test]
fn trace32_list_reads_deltas_in_seconds_and_symbols() {
    let text = "record;cycle;address;data;symbol;ti.back\n\
                -3;wr-long;D:40000000;00000002;\\\\app\\os\\cur_task;0.000001000\n\
                -2;ptrace;P:00002000;;\\\\app\\main\\Run_A;0.000000500\n\
                -1;rd-long;D:40000004;00000007;\\\\app\\main\\speed;0.000000500\n";
    let map = r#"{"data_radix": 16, "current_task": {"cur_task": "Core_0"},
                  "tasks": {"2": "TASK_B"}, "runnables": ["Run_*"]}"#;
    let r = run_with(text, map, None);
    assert_eq!(r.unit, Some(TimeUnit::S));
    assert_eq!(
        r.system(),
        [
            "1000 Core_0/-1 T:TASK_B/0 activate",
            "1000 Core_0/-1 T:TASK_B/0 start",
            "1500 TASK_B/0 R:Run_A/0 start"
        ]
    );
    assert!(r.events[0]
        .ends_with("wr-long [addr=0x40000000, sym=\\\\app\\os\\cur_task, data=00000002]"));
    assert!(r.meta.contains(&("hw.time_encoding".into(), "delta".into())));
    assert!(r.diags.is_empty(), "{:?}", r.diags);
}

#[test]
fn a_trailing_delimiter_on_the_rows_or_the_header_is_no_bad_row() {
    // Exporters often end every row (or only the header, or only the data rows) with the
    // delimiter: the empty field it makes holds nothing, so nothing is lost or said.
    for text in [
        "Time [ns],Address,Symbol\n10,0x1000,main,\n20,0x1004,main,\n",
        "Time [ns],Address,Symbol,\n10,0x1000,main\n20,0x1004,main\n",
        "Time [ns],Address,Symbol,\n10,0x1000,main,\n20,0x1004,main,\n",
    ] {
        let r = run(text);
        assert_eq!(r.events.len(), 2, "{text}");
        assert!(r.events[1].ends_with("[addr=0x00001004, sym=main]"), "{:?}", r.events);
        assert!(r.diags.is_empty(), "{text}: {:?}", r.diags);
    }
    // An extra field that holds something is still said: it is dropped.
    let r = run("Time [ns],Address\n10,0x1000,main\n");
    assert_eq!(r.kinds(), ["bad_row"]);
}

#[test]
fn an_excel_sep_line_names_the_delimiter() {
    // Tools that mean their CSV for Excel begin it with `sep=;`: not a header, but the
    // delimiter (here a `,` inside the symbol would otherwise win the count).
    let text = "sep=;\nTime [ns];Address;Symbol\n10;0x1000;f(a,b)\n20;0x1004;main\n";
    let r = run(text);
    assert_eq!(r.events.len(), 2);
    assert!(r.events[0].ends_with("[addr=0x00001000, sym=f(a,b)]"), "{:?}", r.events);
    assert!(r.meta.contains(&("hw.delimiter".into(), ";".into())), "{:?}", r.meta);
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    let r = run("SEP=|\nTime [ns]|Address\n10|0x1000\n");
    assert!(r.events[0].ends_with("[addr=0x00001000]"), "{:?}", r.events);
}

#[test]
fn bad_rows_are_kept_and_said() {
    let text = "Type,Address,Data,Timestamp\n\
                Data,0x10,1,100\n\
                Data,0x10,1\n\
                Data,zz,1,200\n\
                Data,0x10,1,soon\n\
                Data,0x10,1,150\n\
                Data,\"0x10,1,300\n";
    let r = run(text);
    assert_eq!(r.events.len(), 6, "every row is an events row: {:?}", r.events);
    assert_eq!(
        r.kinds(),
        [
            "time_unit_assumed",
            "bad_row",
            "bad_time",
            "bad_field",
            "bad_time",
            "time_backwards",
            "bad_row",
            "bad_time",
            "bad_field"
        ]
    );
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts, ["100", "100", "200", "200", "150", "200"]);
    assert!(r.diags[3].1.starts_with("line 4: address 'zz' is not a number"));
}

#[test]
fn a_header_without_a_time_column_or_a_mapped_column_missing_is_fatal() {
    let comp = Companions::default();
    let mut sink = Rec::default();
    let e = read(&mut LineReader::new(&b"a,b\n1,2\n"[..]), "x.csv", None, &comp, &mut sink)
        .unwrap_err();
    assert!(e.to_string().starts_with("x.csv: line 1: no time column in the header (a, b)"), "{e}");
    let comp = Companions {
        map: Mapping::parse(r#"{"columns": {"time": "when"}}"#).unwrap(),
        ..Companions::default()
    };
    let e = read(&mut LineReader::new(&b"# c\nTime,b\n"[..]), "x.csv", None, &comp, &mut sink)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.csv: line 2: mapping: columns.time: no column named 'when' in the header (Time, b)"
    );
}

#[test]
fn any_type_naming_a_branch_call_or_jump_is_a_branch() {
    for t in ["Branch", "Indirect Call", "Direct Jump", "call", "jump", "Indirect Branch"] {
        assert_eq!(classify(t, ""), Kind::Branch, "{t}");
    }
    assert_eq!(classify("Return", ""), Kind::Return);
}

#[test]
fn tab_rows_keep_their_empty_first_and_last_fields() {
    // Marker encoding: the data write has no time (an empty first field), the messages an
    // empty address and data (empty last fields).
    let text = "Time\tType\tAddress\tData\n\
                100\tInfo\t\t\n\
                \tData\t0x20000010\t5\n\
                300\tInfo\t\t\n";
    let r = run_with(text, r#"{"time": {"encoding": "marker", "unit": "ns"}}"#, None);
    assert_eq!(r.kinds(), Vec::<&str>::new(), "{:?}", r.diags);
    assert_eq!(
        r.events,
        [
            "100 Core_0/-1 :/-1 info",
            "200 Core_0/-1 :/-1 data [addr=0x20000010, data=5]",
            "300 Core_0/-1 :/-1 info"
        ]
    );
}

#[test]
fn a_header_row_beyond_the_line_bound_is_refused() {
    let mut text = String::from("Timestamp,Type,");
    text.push_str(&"x".repeat(crate::ingest::lines::MAX_LINE));
    text.push_str("\n1,Info,\n");
    let mut sink = Rec::default();
    let e = read(
        &mut LineReader::new(text.as_bytes()),
        "t.csv",
        None,
        &Companions::default(),
        &mut sink,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("t.csv: line 1: header row longer than 16777216 bytes"), "{e}");
}
