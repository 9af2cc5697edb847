use super::fields::{detect_delimiter, glob, parse_decimal, parse_uint, split};
use super::testelf::elf32;
use super::*;
use crate::model::{Event, TimeUnit};

/// Events as `ts source/instance type:target/instance action [note]`; an export declares
/// only its cores.
struct Hw;

impl crate::ingest::test_sink::Shape for Hw {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{} {}/{} {}:{}/{} {}{}",
            e.ts,
            e.source,
            e.source_instance,
            e.target_type,
            e.target,
            e.target_instance,
            e.action,
            e.note.map(|n| format!(" [{n}]")).unwrap_or_default()
        )
    }
    fn declared(_name: &str, t: Option<&str>) {
        assert_eq!(t, Some("C"));
    }
}

type Rec = crate::ingest::test_sink::Recorder<Hw>;

impl Rec {
    /// System events only (those with a target).
    fn system(&self) -> Vec<&str> {
        self.events.iter().filter(|e| !e.contains(" :/-1 ")).map(String::as_str).collect()
    }
    /// The declared cores.
    fn cores(&self) -> Vec<&str> {
        self.decl.iter().map(|d| d.0.as_str()).collect()
    }
}

fn run_with(text: &str, map: &str, syms: Option<Symbols>) -> Rec {
    let comp =
        Companions { map: Mapping::parse(map).unwrap(), symbols: syms, ..Companions::default() };
    // Read as the ingest reads it: from a file that can be read again (rows merged per core
    // when they need it).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, text).unwrap();
    let mut sink = Rec::default();
    let mut lines = LineReader::new(std::fs::File::open(&path).unwrap());
    read(&mut lines, "t.csv", Some(&path), &comp, &mut sink).unwrap();
    sink
}

fn run(text: &str) -> Rec {
    run_with(text, "{}", None)
}

#[test]
fn splits_quoted_fields_with_any_delimiter() {
    assert_eq!(detect_delimiter("a;b;c"), b';');
    assert_eq!(detect_delimiter("a\tb\tc,d"), b'\t');
    assert_eq!(detect_delimiter("\"a;b\",c"), b',');
    let (f, open) = split(r#" 1 ,"x, ""y""", z ,"#, b',');
    assert_eq!(f, ["1", "x, \"y\"", "z", ""]);
    assert!(!open);
    let (f, open) = split("1;\"unclosed;2", b';');
    assert_eq!(f, ["1", "unclosed;2"]);
    assert!(open);
}

#[test]
fn reads_numbers_as_trace_tools_write_them() {
    assert_eq!(parse_uint("0x4000_1000", 16), Some(0x4000_1000));
    assert_eq!(parse_uint("D:40001000", 16), Some(0x4000_1000));
    assert_eq!(parse_uint("P:0x100", 10), Some(0x100));
    assert_eq!(parse_uint("1Fh", 10), Some(0x1f));
    assert_eq!(parse_uint("100", 10), Some(100));
    assert_eq!(parse_uint("100", 16), Some(0x100));
    assert_eq!(parse_uint("0xZZ", 16), None);
    assert_eq!(parse_uint("", 16), None);
    assert_eq!(parse_uint("0x1_0000_0000_0000_0000", 16), None, "beyond 64 bits");
    assert_eq!(parse_decimal("-0.000012340"), Some((-12340, 9, None)));
    assert_eq!(parse_decimal("12.5 us"), Some((125, 1, Some(1_000_000))));
    assert_eq!(parse_decimal("3µs"), Some((3, 0, Some(1_000_000))));
    assert_eq!(parse_decimal("1,5"), None);
    assert_eq!(parse_decimal("5 min"), None);
    assert!(glob("Run_*", "Run_Ctrl") && glob("?SR*", "ISR_Timer") && glob("*", ""));
    assert!(!glob("Run_*", "run_ctrl") && !glob("a*b", "acbd"));
}

#[test]
fn absolute_times_with_units_and_suffixes_are_exact_ns() {
    let mut c = Clock::new(Encoding::Absolute, Base::Time(1_000_000));
    assert_eq!(c.read("1.5").unwrap().ns, 1500);
    assert_eq!(c.read("2000ns").unwrap().ns, 2000);
    let r = c.read("1999.9999 ns").unwrap();
    assert_eq!((r.ns, r.floored, r.backwards), (1999, true, Some(2000)));
    assert!(matches!(c.read("1e3"), Err(clock::TimeError::Bad(_))));
    assert!(matches!(c.read("99999999999999999"), Err(clock::TimeError::Range(_))));
}

#[test]
fn deltas_sum_exactly_before_flooring() {
    let mut c = Clock::new(Encoding::Delta, Base::Time(1_000));
    let got: Vec<i64> = ["0.5", "0.5", "0.5", "10"].iter().map(|t| c.read(t).unwrap().ns).collect();
    assert_eq!(got, [0, 1, 1, 11]);
    // A negative delta goes back, and says so.
    let r = c.read("-5").unwrap();
    assert_eq!((r.ns, r.backwards), (6, Some(11)));
    // TRACE32 ti.back: seconds.
    let mut t = Clock::new(Encoding::Delta, Base::Time(1_000_000_000_000));
    assert_eq!(t.read("0.000001").unwrap().ns, 1000);
    assert_eq!(t.read("0.0000000015").unwrap().ns, 1001);
    assert_eq!(t.read("0.0000000005").unwrap().ns, 1002);
}

#[test]
fn cycles_scale_by_the_frequency_or_stay_ticks() {
    let mut c = Clock::new(Encoding::Absolute, Base::Cycles(Some(3)));
    let r = c.read("1").unwrap();
    assert_eq!((r.ns, r.floored), (333_333_333, true));
    assert_eq!(c.read("3").unwrap().ns, 1_000_000_000);
    assert!(c.read("1.5").is_err() && c.read("4us").is_err());
    let mut d = Clock::new(Encoding::Delta, Base::Cycles(None));
    d.read("7").unwrap();
    assert_eq!(d.read("8").unwrap().ns, 15);
    // 2^64 cycles of a 1 Hz clock are beyond the range, not a wrapped number.
    let mut big = Clock::new(Encoding::Absolute, Base::Cycles(Some(1)));
    assert!(big.read("18446744073709551616").is_err());
}

#[test]
fn rows_between_timestamp_messages_take_the_midpoint() {
    assert_eq!(midpoint(100, 201), 150);
    assert_eq!(midpoint(-3, 0), -2);
    assert_eq!(midpoint(i64::MAX - 1, i64::MAX), i64::MAX - 1);
    let text = "Type,Timestamp\nBranch,\nTimestamp,100\nBranch,\nData,\nTimestamp,200\n\
                Branch,\n";
    let r = run_with(text, r#"{"time": {"encoding": "marker"}}"#, None);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts, ["100", "100", "150", "150", "200", "200"]);
    assert_eq!(r.kinds(), ["time_unit_assumed", "unbracketed_rows", "unbracketed_rows"]);
    assert!(r.diags[1].1.starts_with("line 2: 1 rows before the first"), "{:?}", r.diags);
    assert!(r.diags[2]
        .1
        .starts_with("line 7: 1 rows after the last timestamp message take its time (200 ns)"));
}

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
fn trace32_blank_ti_back_is_no_time_passed() {
    // TRACE32 leaves ti.back blank on the first record (nothing before it) and on records
    // that carry no timestamp of their own (program flow decoded between two timestamps):
    // such a row is at the time of the row before, and nothing is wrong with it.
    let text = "record,run,address,cycle,data,symbol,ti.back\r\n\
                -0000004,,SP:00001000,ptrace,,\\\\app\\main\\main,\r\n\
                -0000003,,D:20000004,wr-long,00000002,\\\\app\\os\\cur,0.020us\r\n\
                -0000002,,SP:00001010,ptrace,,\\\\app\\main\\main+0x10,\r\n\
                -0000001,,D:20000004,rd-long,00000001,\\\\app\\os\\cur,1.250us\r\n";
    let r = run(text);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts, ["0", "20", "20", "1270"]);
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    // A blank absolute time is still said: the row has no time, and no delta says so.
    let r = run("record,cycle,ti.zero\n1,ptrace,-1.000us\n2,ptrace,\n");
    assert!(r.meta.contains(&("hw.time_encoding".into(), "absolute".into())), "{:?}", r.meta);
    assert_eq!(r.kinds(), ["bad_time"]);
}

#[test]
fn micro_is_read_as_either_character_windows_tools_write() {
    // U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU look alike; exports and the
    // spreadsheets they pass through write either, in a header's bracket and after a value.
    for mu in ["\u{b5}", "\u{3bc}"] {
        let text = format!("Time [{mu}s];Address;Symbol\n-12.5;0x1000;main\n0.75;0x1004;main\n2{mu}s;0x1008;main\n");
        let r = run(&text);
        let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
        assert_eq!(ts, ["-12500", "750", "2000"], "{mu}");
        assert!(r.diags.is_empty(), "{mu}: {:?}", r.diags);
    }
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
fn without_a_mapping_file_addresses_are_hex_and_data_decimal() {
    let comp = Companions::default();
    let mut sink = Rec::default();
    let text = b"Type,Address,Data,Timestamp\nData,1000,0x10,5\nData,D:20,16,6\n";
    read(&mut LineReader::new(&text[..]), "t.csv", None, &comp, &mut sink).unwrap();
    assert_eq!(
        sink.events,
        [
            "5 Core_0/-1 :/-1 data [addr=0x00001000, data=0x10]",
            "6 Core_0/-1 :/-1 data [addr=0x00000020, data=16]"
        ]
    );
    assert_eq!(parse_uint("10", 0), None, "a radix out of range is no number, not a panic");
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
fn a_mapped_column_is_not_also_taken_by_its_recognised_name() {
    let map = Mapping::parse(r#"{"columns": {"core": "Type", "type": 3}}"#).unwrap();
    let c = Columns::new("Type,Time,Kind2", b',', &map).unwrap();
    assert_eq!((c.core, c.kind, c.time), (Some(0), Some(2), Some(1)));
    let map = Mapping::parse(r#"{"columns": {"core": "Type"}}"#).unwrap();
    let c = Columns::new("Type,Time", b',', &map).unwrap();
    assert_eq!((c.core, c.kind), (Some(0), None));
    let map = Mapping::parse(r#"{"columns": {"data": 2, "address": "time"}}"#).unwrap();
    let e = Columns::new("Type,Time", b',', &map).unwrap_err();
    assert_eq!(e, "columns.data and columns.address are both column 2: one role each");
}

#[test]
fn mapping_files_are_checked() {
    assert!(Mapping::parse(r#"{"colums": {}}"#).unwrap_err().contains("unknown field `colums`"));
    assert!(Mapping::parse(r#"{"columns": {"when": 1}}"#)
        .unwrap_err()
        .contains("unknown role 'when'"));
    assert!(Mapping::parse(r#"{"time": {"unit": "min"}}"#).is_err());
    assert!(Mapping::parse(r#"{"time": {"unit": "ns", "frequency_hz": 5}}"#).is_err());
    assert!(Mapping::parse(r#"{"tasks": {"x": "A"}}"#).is_err());
    // An address too long for 64 bits, or not in the radix, would match nothing.
    for bad in [
        r#"{"current_task": {"0xFFFFFFFFFFFFFFFFFF": "Core_0"}}"#,
        r#"{"current_task": {"0x2000000G": "Core_0"}}"#,
        r#"{"address_radix": 10, "signals": ["2000000A"]}"#,
    ] {
        let e = Mapping::parse(bad).unwrap_err();
        assert!(e.contains("starts with a digit but is not an address"), "{bad}: {e}");
    }
    let m = Mapping::parse(
        r#"{"delimiter": "tab", "current_task": {"0x40000000": "Core_1", "cur0": "Core_0"},
            "tasks": {"0x10": "A"}, "idle": ["0"], "signals": ["sp*", "0x50"]}"#,
    )
    .unwrap();
    assert_eq!(m.delimiter, Some(b'\t'));
    assert_eq!(m.task_var_core(Some(0x4000_0000), None), Some("Core_1"));
    assert_eq!(m.task_var_core(Some(1), Some("cur0")), Some("Core_0"));
    assert_eq!(m.tasks.get(&16).map(String::as_str), Some("A"));
    assert!(m.is_signal(None, Some("speed")) && m.is_signal(Some(0x50), None));
    assert!(!m.is_signal(Some(0x51), Some("mode")));
}

#[test]
fn elf_symbols_resolve_addresses_inside_their_extent() {
    let syms = [
        ("main", 0x1001, 0x40, true),
        ("Run_A", 0x2001, 0x20, true),
        ("speed", 0x4000_0010, 4, false),
        ("marker", 0x3000, 0, false),
    ];
    // ARM: the Thumb bit of function values is cleared.
    let s = Symbols::from_elf(&elf32(40, false, &syms)).unwrap();
    assert_eq!(s.len(), 4);
    let hit = |a| s.lookup(a).map(|h| (h.name.to_string(), h.offset, h.func));
    assert_eq!(hit(0x1000), Some(("main".into(), 0, true)));
    assert_eq!(hit(0x103f), Some(("main".into(), 0x3f, true)));
    assert_eq!(hit(0x1040), None);
    assert_eq!(hit(0x4000_0013), Some(("speed".into(), 3, false)));
    assert_eq!(hit(0x3000), Some(("marker".into(), 0, false)));
    assert_eq!(hit(0x3001), None);
    assert_eq!(hit(0xfff), None);
    // PowerPC (big-endian, as NXP's MPC57xx): values as they are.
    let p = Symbols::from_elf(&elf32(20, true, &syms)).unwrap();
    assert_eq!(p.lookup(0x1001).map(|h| h.offset), Some(0));
    assert_eq!(p.address_of("Run_A"), Some(0x2001));
    assert!(Symbols::from_elf(b"\x7fELF garbage").is_err());
    assert!(Symbols::from_elf(b"").is_err());
}

/// The symbols of [`system_elf`], Thumb bit cleared.
fn system_syms() -> Vec<Symbol> {
    [
        ("os_dispatch", 0x1000, 0x100, true),
        ("Run_A", 0x2000, 0x40, true),
        ("helper", 0x2100, 0x40, true),
        ("ISR_Timer", 0x3000, 0x40, true),
        ("OS_TerminateTask", 0x4000, 0x40, true),
        ("cur_task", 0x2000_0000, 4, false),
        ("speed", 0x2000_0010, 4, false),
    ]
    .iter()
    .map(|&(n, addr, size, func)| Symbol { addr, size, name: n.into(), func })
    .collect()
}

/// Code and data of a small system (ARM, so function values carry the Thumb bit).
fn system_elf() -> Symbols {
    Symbols::from_elf(&elf32(
        40,
        false,
        &[
            ("os_dispatch", 0x1001, 0x100, true),
            ("Run_A", 0x2001, 0x40, true),
            ("helper", 0x2101, 0x40, true),
            ("ISR_Timer", 0x3001, 0x40, true),
            ("OS_TerminateTask", 0x4001, 0x40, true),
            ("cur_task", 0x2000_0000, 4, false),
            ("speed", 0x2000_0010, 4, false),
        ],
    ))
    .unwrap()
}

const SYSTEM_MAP: &str = r#"{
    "current_task": {"cur_task": "Core_0"},
    "tasks": {"1": "TASK_A", "2": "TASK_B"},
    "idle": ["0"],
    "runnables": ["Run_*"],
    "isrs": ["ISR_*"],
    "terminate_functions": ["OS_TerminateTask"],
    "signals": ["speed"]
}"#;

#[test]
fn writes_of_the_current_task_switch_tasks() {
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Data,0x20000000,,2,20\n\
                Data,0x20000000,,2,25\n\
                Branch,0x1010,0x4000,,30\n\
                Data,0x20000000,,1,40\n\
                Data,0x20000000,,0,50\n\
                Data,0x20000000,,2,60\n\
                Data,0x20000000,,9,70\n";
    let r = run_with(text, SYSTEM_MAP, Some(system_elf()));
    assert_eq!(
        r.system(),
        [
            "10 Core_0/-1 T:TASK_A/0 activate",
            "10 Core_0/-1 T:TASK_A/0 start",
            "20 Core_0/-1 T:TASK_A/0 preempt",
            "20 Core_0/-1 T:TASK_B/0 activate",
            "20 Core_0/-1 T:TASK_B/0 start",
            // TASK_B entered OS_TerminateTask: at the next switch it terminated.
            "40 Core_0/-1 T:TASK_B/0 terminate",
            "40 Core_0/-1 T:TASK_A/0 resume",
            "50 Core_0/-1 T:TASK_A/0 preempt",
            "60 Core_0/-1 T:TASK_B/1 activate",
            "60 Core_0/-1 T:TASK_B/1 start",
            "70 Core_0/-1 T:TASK_B/1 preempt",
            "70 Core_0/-1 T:TASK_9/0 activate",
            "70 Core_0/-1 T:TASK_9/0 start",
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed", "unknown_task_value"]);
}

#[test]
fn software_context_rows_switch_tasks_on_their_own_core() {
    let text = "Source,Type,Address,Data,Timestamp\n\
                Core1,Software Context,,0x2,10\n\
                Core0,Software Context,,1,20\n\
                Core1,Software Context,,0,30\n\
                Core0,Data,0x20000000,,40\n";
    let map = r#"{"tasks": {"1": "TASK_A", "2": "TASK_B"}, "idle": ["0"],
                  "current_task": {"0x20000000": "Core0"}}"#;
    let r = run_with(text, map, None);
    assert_eq!(
        r.system(),
        [
            "10 Core1/-1 T:TASK_B/0 activate",
            "10 Core1/-1 T:TASK_B/0 start",
            "20 Core0/-1 T:TASK_A/0 activate",
            "20 Core0/-1 T:TASK_A/0 start",
            "30 Core1/-1 T:TASK_B/0 preempt",
        ]
    );
    // A write of the current task with no value switches nothing, and says so.
    assert_eq!(r.kinds(), ["time_unit_assumed", "missing_value"]);
    assert!(r.diags[1].1.starts_with("line 5: write of 0x20000000 with no data value"));
}

#[test]
fn a_task_that_terminates_and_runs_again_is_a_new_instance() {
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Branch,0x1010,0x4000,,20\n\
                Data,0x20000000,,1,30\n";
    let r = run_with(text, SYSTEM_MAP, Some(system_elf()));
    assert_eq!(
        r.system()[2..],
        [
            "30 Core_0/-1 T:TASK_A/0 terminate",
            "30 Core_0/-1 T:TASK_A/1 activate",
            "30 Core_0/-1 T:TASK_A/1 start"
        ]
    );
}

/// TASK_A runs Run_A, which writes `speed`, is interrupted by ISR_Timer (which writes it too
/// and calls helper, whose return is lost), and returns.
const CALLS: &str = "Type,Address,Destination,Data,Timestamp\n\
                     Data,0x20000000,,1,10\n\
                     Branch,0x1010,0x2000,,20\n\
                     Linear,0x2000,,,21\n\
                     Data,0x20000010,,77,25\n\
                     Interrupt,0x2010,0x3000,,30\n\
                     Data,0x20000010,,78,32\n\
                     Branch,0x3010,0x2100,,33\n\
                     Return,0x3020,0x2014,,40\n\
                     Return,0x2020,0x1014,,50\n\
                     Return,0x1020,,,60\n";

#[test]
fn runnables_isrs_and_signals_follow_calls_and_returns() {
    let r = run_with(CALLS, SYSTEM_MAP, Some(system_elf()));
    assert_eq!(
        r.system(),
        [
            "10 Core_0/-1 T:TASK_A/0 activate",
            "10 Core_0/-1 T:TASK_A/0 start",
            "20 TASK_A/0 R:Run_A/0 start",
            "25 TASK_A/0 SIG:speed/-1 write [77]",
            "30 Core_0/-1 I:ISR_Timer/0 activate",
            "30 Core_0/-1 I:ISR_Timer/0 start",
            "32 ISR_Timer/0 SIG:speed/-1 write [78]",
            // The return to Run_A (helper's return was lost) ends helper and the ISR.
            "40 Core_0/-1 I:ISR_Timer/0 terminate",
            "50 TASK_A/0 R:Run_A/0 terminate",
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed", "missing_return", "unmatched_return"]);
    assert!(r.diags[1].1.contains("return to Run_A on Core_0: the returns of helper were not"));
}

#[test]
fn with_isrs_mapped_an_interrupt_into_a_vector_table_opens_no_call() {
    let mut syms = vec![Symbol { addr: 0x100, size: 0x100, name: "_vectors".into(), func: true }];
    syms.push(Symbol { addr: 0x3000, size: 0x40, name: "ISR_Timer".into(), func: true });
    let text = "Type,Destination,Timestamp\n\
                Interrupt,0x140,10\n\
                Branch,0x3000,11\n\
                Return,,20\n\
                Interrupt,0x140,30\n\
                Branch,0x3000,31\n\
                Return,,40\n";
    let r = run_with(text, r#"{"isrs": ["ISR_*"]}"#, Some(Symbols::new(syms, 0)));
    assert_eq!(
        r.system(),
        [
            "11 Core_0/-1 I:ISR_Timer/0 activate",
            "11 Core_0/-1 I:ISR_Timer/0 start",
            "20 Core_0/-1 I:ISR_Timer/0 terminate",
            "31 Core_0/-1 I:ISR_Timer/1 activate",
            "31 Core_0/-1 I:ISR_Timer/1 start",
            "40 Core_0/-1 I:ISR_Timer/1 terminate"
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"]);
}

#[test]
fn deep_recursion_without_returns_stays_bounded() {
    let mut text = String::from("Type,Destination,Timestamp\n");
    for i in 0..(system::MAX_DEPTH + 10) {
        let f = if i % 2 == 0 { "0x2000" } else { "0x2100" };
        text.push_str(&format!("Branch,{f},{i}\n"));
    }
    let r = run_with(&text, SYSTEM_MAP, Some(system_elf()));
    let overflow = r.kinds().iter().filter(|k| **k == "call_stack_overflow").count();
    assert_eq!(overflow, 10);
}

#[test]
fn a_switch_written_inside_an_isr_waits_for_its_end() {
    // The dispatcher writes the current task in the ISR's epilogue: TASK_B gets the core
    // when ISR_Timer returns (50), not while it runs (45).
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Interrupt,0x1010,0x3000,,30\n\
                Data,0x20000000,,2,45\n\
                Return,0x3030,0x1014,,50\n\
                Interrupt,0x1020,0x3000,,60\n\
                Data,0x20000000,,0,65\n";
    let r = run_with(text, SYSTEM_MAP, Some(system_elf()));
    assert_eq!(
        r.system(),
        [
            "10 Core_0/-1 T:TASK_A/0 activate",
            "10 Core_0/-1 T:TASK_A/0 start",
            "30 Core_0/-1 I:ISR_Timer/0 activate",
            "30 Core_0/-1 I:ISR_Timer/0 start",
            "50 Core_0/-1 I:ISR_Timer/0 terminate",
            "50 Core_0/-1 T:TASK_A/0 preempt",
            "50 Core_0/-1 T:TASK_B/0 activate",
            "50 Core_0/-1 T:TASK_B/0 start",
            "60 Core_0/-1 I:ISR_Timer/1 activate",
            "60 Core_0/-1 I:ISR_Timer/1 start",
        ]
    );
    // The trace ends inside the second ISR: its switch to idle is said, not applied.
    assert_eq!(r.kinds(), ["time_unit_assumed", "held_switch"]);
    assert!(r.diags[1].1.starts_with("line 7: switch of Core_0 to idle written inside ISR_Timer"));
}

#[test]
fn a_return_into_the_innermost_open_function_ends_nothing() {
    // A vector stub (not an ISR) calls ISR_Timer; the stub's own return goes back into
    // Run_A, which is still running: only Run_A's real return ends it.
    let mut syms = system_syms();
    syms.push(Symbol { addr: 0x5000, size: 0x100, name: "IVOR4_Handler".into(), func: true });
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Branch,0x1010,0x2000,,20\n\
                Interrupt,0x2010,0x5000,,30\n\
                Branch,0x5010,0x3000,,31\n\
                Return,0x3030,0x5014,,40\n\
                Return,0x5020,0x2010,,41\n\
                Return,0x2030,0x1014,,50\n";
    let r = run_with(text, SYSTEM_MAP, Some(Symbols::new(syms, 0)));
    assert_eq!(
        r.system()[2..],
        [
            "20 TASK_A/0 R:Run_A/0 start",
            "31 Core_0/-1 I:ISR_Timer/0 activate",
            "31 Core_0/-1 I:ISR_Timer/0 start",
            "40 Core_0/-1 I:ISR_Timer/0 terminate",
            "50 TASK_A/0 R:Run_A/0 terminate",
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"]);
}

/// Found by tests/oracle/hw_oracle.py: ISR_Timer interrupts os_dispatch (no call open there:
/// the task's own code, or an idle core's loop) and calls Run_A, whose return goes straight
/// back to the interrupted code. That is the end of Run_A and of the ISR, as when the code
/// interrupted is an open call; the ISR used to stay open, holding the core and its task.
#[test]
fn a_return_to_the_code_an_interrupt_interrupted_ends_the_isr_whatever_that_code_is() {
    for first in ["Data,0x20000000,,1,10\n", ""] {
        let text = format!(
            "Type,Address,Destination,Data,Timestamp\n{first}\
             Interrupt,0x1030,0x3000,,20\n\
             Branch,0x3010,0x2000,,30\n\
             Return,0x2010,0x1030,,40\n\
             Data,0x20000010,,5,50\n"
        );
        let r = run_with(&text, SYSTEM_MAP, Some(system_elf()));
        let who = if first.is_empty() { "Core_0/-1" } else { "TASK_A/0" };
        let sys: Vec<String> = r.system().iter().map(|e| e.to_string()).collect();
        assert_eq!(
            sys[sys.len() - 6..],
            [
                "20 Core_0/-1 I:ISR_Timer/0 activate".to_string(),
                "20 Core_0/-1 I:ISR_Timer/0 start".into(),
                "30 ISR_Timer/0 R:Run_A/0 start".into(),
                "40 ISR_Timer/0 R:Run_A/0 terminate".into(),
                "40 Core_0/-1 I:ISR_Timer/0 terminate".into(),
                format!("50 {who} SIG:speed/-1 write [5]"),
            ],
            "{first}"
        );
        assert_eq!(r.kinds()[1..], ["missing_return"], "{first}");
    }
}

/// Found by tests/oracle/hw_oracle.py: helper is open under ISR_Timer when ISR_Can
/// interrupts it and calls helper too; a stub's return into helper is inside the innermost
/// open call and ends nothing. It used to be taken as a return to the deeper helper, across
/// ISR_Can, ending ISR_Can there (`missing_return`) while it still ran.
#[test]
fn a_return_does_not_reach_below_the_innermost_isr_for_a_function_open_there_too() {
    let mut syms = system_syms();
    syms.push(Symbol { addr: 0x3100, size: 0x40, name: "ISR_Can".into(), func: true });
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Interrupt,0x1030,0x3000,,20\n\
                Branch,0x3010,0x2100,,30\n\
                Interrupt,0x2110,0x3100,,40\n\
                Branch,0x3110,0x2100,,50\n\
                Return,0x4010,0x2110,,60\n\
                Return,0x2120,0x3114,,70\n\
                Return,0x3120,0x2114,,80\n\
                Return,0x2130,0x3014,,90\n\
                Return,0x3020,0x1034,,100\n";
    let r = run_with(text, SYSTEM_MAP, Some(Symbols::new(syms, 0)));
    assert_eq!(
        r.system()[2..],
        [
            "20 Core_0/-1 I:ISR_Timer/0 activate",
            "20 Core_0/-1 I:ISR_Timer/0 start",
            "40 Core_0/-1 I:ISR_Can/0 activate",
            "40 Core_0/-1 I:ISR_Can/0 start",
            "80 Core_0/-1 I:ISR_Can/0 terminate",
            "100 Core_0/-1 I:ISR_Timer/0 terminate",
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"]);
}

#[test]
fn missing_return_names_the_functions_that_did_not_return() {
    // helper, tail-called by Run_A, returns straight to os_dispatch: the return is helper's
    // (its address is in helper), Run_A's is the one lost.
    let text = "Type,Address,Destination,Data,Timestamp\n\
                Data,0x20000000,,1,10\n\
                Branch,0x1010,0x1000,,15\n\
                Branch,0x1010,0x2000,,20\n\
                Branch,0x2010,0x2100,,30\n\
                Return,0x2120,0x1014,,40\n";
    let r = run_with(text, SYSTEM_MAP, Some(system_elf()));
    assert_eq!(r.kinds(), ["time_unit_assumed", "missing_return"]);
    assert!(
        r.diags[1].1.contains("return to os_dispatch on Core_0: the returns of Run_A were not"),
        "{:?}",
        r.diags
    );
    // Without the return's address, the innermost call (running) is taken as returning.
    let r = run_with(&text.replace("0x2120", ""), SYSTEM_MAP, Some(system_elf()));
    assert!(r.diags[1].1.contains("the returns of Run_A were not"), "{:?}", r.diags);
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
fn mapping_addresses_without_a_prefix_are_in_address_radix() {
    let text = "Type,Address,Data,Timestamp\n\
                Data,0x20000004,1,10\n\
                Data,0x20000010,7,20\n";
    let map = r#"{"current_task": {"20000004": "Core_1"}, "tasks": {"1": "A"},
                  "signals": ["20000010"], "time": {"unit": "ns"}}"#;
    let r = run_with(text, map, None);
    assert_eq!(
        r.system(),
        [
            "10 Core_1/-1 T:A/0 activate",
            "10 Core_1/-1 T:A/0 start",
            "20 Core_0/-1 SIG:0x20000010/-1 write [7]"
        ]
    );
    // In radix 10 the same keys are other addresses.
    let map10 = map.replace("\"time\"", "\"address_radix\": 10, \"time\"");
    assert_eq!(run_with(text, &map10, None).system(), Vec::<&str>::new());
}

#[test]
fn a_negative_address_is_a_bad_field() {
    let r = run("Type,Address,Destination,Data,Timestamp\nData,-0x10,-5,-3,100\n");
    assert_eq!(r.kinds(), ["time_unit_assumed", "bad_field", "bad_field"]);
    assert!(r.diags[1].1.starts_with("line 2: address '-0x10' is not an address"));
    assert!(r.diags[2].1.starts_with("line 2: destination '-5' is not an address"));
    assert_eq!(r.events, ["100 Core_0/-1 :/-1 data [data=-3]"]);
}

#[test]
fn marker_rows_with_a_bad_time_are_held_within_the_bound() {
    let n = reader::MAX_PENDING + 3;
    let mut text = String::from("Type,Timestamp\nInfo,100\n");
    for _ in 0..n {
        text.push_str("Data,soon\n");
    }
    text.push_str("Info,300\n");
    let r = run_with(&text, r#"{"time": {"encoding": "marker", "unit": "ns"}}"#, None);
    assert_eq!(r.events.len(), n + 2);
    let gap: Vec<_> = r.diags.iter().filter(|d| d.0 == "marker_gap_too_long").collect();
    assert_eq!(gap.len(), 1, "the held rows stay bounded");
    assert!(gap[0].1.contains("lines 3 to 65538 take its time (100 ns)"), "{gap:?}");
    // Its bad_time row says where it is kept: between the messages, not at the time before.
    let bad = r.diags.iter().find(|d| d.0 == "bad_time").unwrap();
    assert!(bad.1.ends_with("row kept between the timestamp messages around it"), "{bad:?}");
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts[1], "100");
    assert_eq!(ts[n], "200", "the last 3 take the midpoint");
}

#[test]
fn more_rows_than_the_bound_before_the_first_message_are_at_0_and_all_counted() {
    let n = reader::MAX_PENDING + 5;
    let mut text = String::from("Type,Timestamp\n");
    for _ in 0..n {
        text.push_str("Data,\n");
    }
    text.push_str("Info,1000\n");
    let r = run_with(&text, r#"{"time": {"encoding": "marker", "unit": "ns"}}"#, None);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts[0], "0");
    assert_eq!(ts[reader::MAX_PENDING - 1], "0");
    assert_eq!(ts[reader::MAX_PENDING], "1000");
    assert_eq!(r.kinds(), ["marker_gap_too_long", "unbracketed_rows"]);
    assert!(r.diags[0].1.contains("lines 2 to 65537 are placed at 0 ns"), "{:?}", r.diags[0]);
    assert_eq!(
        r.diags[1].1,
        "line 2: 65541 rows before the first timestamp message: the first 65536 are at 0 ns \
         (more than 65536 waited: marker_gap_too_long), the rest take its time"
    );
}

#[test]
fn cycles_of_unknown_rate_are_not_called_ns_in_messages() {
    let r = run_with(
        "Type,Timestamp\nInfo,10\nInfo,5\nInfo,x\n",
        r#"{"time": {"unit": "cycles"}}"#,
        None,
    );
    assert_eq!(r.kinds(), ["unknown_cycle_rate", "time_backwards", "bad_time"]);
    assert!(r.diags[1].1.contains("time 5 cycles is before the previous row's 10 cycles"));
    assert!(r.diags[2].1.ends_with("row kept at the previous row's time (10 cycles)"));
}

#[test]
fn signals_and_cores_beyond_the_bound_are_said_and_kept_as_rows() {
    let n = system::MAX_ENTITIES + 2;
    let mut text = String::from("Type,Address,Symbol,Data,Timestamp\n");
    for i in 0..n {
        text.push_str(&format!("Data,0x10,s{i},1,{i}\n"));
    }
    let r = run_with(&text, r#"{"signals": ["*"], "time": {"unit": "ns"}}"#, None);
    assert_eq!(r.system().len(), system::MAX_ENTITIES);
    assert_eq!(r.events.len(), n + system::MAX_ENTITIES, "every row is kept");
    assert_eq!(r.kinds(), ["too_many_entities", "too_many_entities"]);
    assert!(r.diags[0].1.starts_with("line 65538: s65536: more than 65536 tasks"), "{:?}", r.diags);

    let n = reader::MAX_CORES + 2;
    let mut text = String::from("Source,Type,Timestamp\n");
    for i in 0..n {
        text.push_str(&format!("C{i},Info,{i}\n"));
    }
    let r = run_with(&text, r#"{"time": {"unit": "ns"}}"#, None);
    assert_eq!(r.cores().len(), reader::MAX_CORES + 1);
    assert_eq!(r.cores().last().copied(), Some(reader::OTHER_CORE));
    assert_eq!(r.kinds(), ["too_many_entities"]);
    assert_eq!(r.events.last().unwrap(), "4097 Core_other/-1 :/-1 info [core=C4097]");
}

#[test]
fn a_task_seen_on_another_core_leaves_the_first() {
    let text = "Source,Type,Data,Timestamp\n\
                Core0,Software Context,1,10\n\
                Core1,Software Context,1,20\n\
                Core0,Software Context,2,30\n\
                Core1,Software Context,0,40\n";
    let r = run_with(text, r#"{"tasks": {"1": "A", "2": "B"}, "idle": ["0"]}"#, None);
    assert_eq!(
        r.system(),
        [
            "10 Core0/-1 T:A/0 activate",
            "10 Core0/-1 T:A/0 start",
            "20 Core1/-1 T:A/0 resume",
            // A left Core0 unseen: B's start there preempts nothing.
            "30 Core0/-1 T:B/0 activate",
            "30 Core0/-1 T:B/0 start",
            "40 Core1/-1 T:A/0 preempt",
        ]
    );
}

#[test]
fn an_address_inside_a_big_object_holding_many_small_ones_is_the_big_one() {
    let mut syms = vec![Symbol { addr: 0x1000, size: 0x1000, name: "big".into(), func: false }];
    for i in 0..20u64 {
        let name = format!("small{i}");
        syms.push(Symbol { addr: 0x1000 + i * 0x10, size: 4, name, func: false });
    }
    syms.push(Symbol { addr: 0x1800, size: 0, name: "mark".into(), func: false });
    syms.push(Symbol { addr: 0x3000, size: 0x10, name: "after".into(), func: true });
    let t = Symbols::new(syms, 0);
    let at = |a: u64| t.lookup(a).map(|h| (h.name.to_string(), h.offset));
    assert_eq!(at(0x1012), Some(("small1".into(), 2)));
    assert_eq!(at(0x1014), Some(("big".into(), 0x14)), "between two small ones");
    assert_eq!(at(0x1f00), Some(("big".into(), 0xf00)), "after all 20");
    assert_eq!(at(0x1800), Some(("mark".into(), 0)));
    assert_eq!(at(0x1801), Some(("big".into(), 0x801)));
    assert_eq!(at(0x2000), None);
    assert_eq!(at(0x300f), Some(("after".into(), 0xf)));
    assert_eq!(at(0x3010), None);
    assert_eq!(at(0xfff), None);
}

#[test]
fn a_stripped_elf_is_said() {
    let mut bytes = elf32(40, false, &[("f", 0x1001, 4, true)]);
    assert!(!Symbols::from_elf(&bytes).unwrap().no_symtab);
    // The .symtab (section 2) made PROGBITS: what `strip` leaves is an ELF with none.
    let sh_off = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    bytes[sh_off + 2 * 40 + 4] = 1;
    let s = Symbols::from_elf(&bytes).unwrap();
    assert!(s.no_symtab);
    assert!(s.is_empty());
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

/// Untrusted exports never panic: a system's rows (task switches, calls, returns, an ISR,
/// signal writes, the terminate function) cut at every byte and with bytes changed to the
/// characters that matter (delimiters, signs, digits, quotes, line ends), through the ELF
/// and the mapping, end in Ok or Err.
#[test]
fn mutated_exports_never_panic() {
    // Then TASK_B, which calls the terminate function, and the core idle.
    let text =
        format!("{CALLS}Data,0x20000000,,2,65\nBranch,0x1010,0x4000,,70\nData,0x20000000,,0,80\n");
    let comp = Companions {
        map: Mapping::parse(SYSTEM_MAP).unwrap(),
        symbols: Some(system_elf()),
        ..Companions::default()
    };
    let go = |b: &[u8]| {
        let mut sink = Rec::default();
        read(&mut LineReader::new(b), "t.csv", None, &comp, &mut sink).map(|_| sink)
    };
    let whole = go(text.as_bytes()).unwrap();
    assert!(whole.system().len() >= 10, "{:#?}", whole.system());
    let bytes = text.as_bytes();
    let mut runs = 0;
    for cut in 0..bytes.len() {
        let _ = go(&bytes[..cut]);
        runs += 1;
    }
    let subst: &[u8] = &[b',', b'\n', b'\r', b'"', b'-', b'9', b'x', b'0', b' ', 0xFF, 0x00];
    for i in 0..bytes.len() {
        for &c in subst {
            let mut m = bytes.to_vec();
            m[i] = c;
            let _ = go(&m);
            runs += 1;
        }
    }
    assert!(runs > 3000, "{runs} runs");
}

/// `ts source line` of each `events` row (the line from the note: `sym=l<line>`).
fn order(r: &Rec) -> Vec<String> {
    r.events
        .iter()
        .map(|e| {
            let f: Vec<&str> = e.split(' ').collect();
            let data = e.rsplit("sym=").next().unwrap_or("").trim_end_matches(']');
            format!("{} {} {}", f[0], f[1].trim_end_matches("/-1"), data)
        })
        .collect()
}

#[test]
fn an_export_listed_core_by_core_is_merged_in_time_order() {
    // Core0's rows, then Core1's: each core in order, the file not.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore0,Info,300,l3\nCore0,Info,500,l4\n\
                Core1,Info,150,l5\nCore1,Info,250,l6\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        ["100 Core0 l2", "150 Core1 l5", "250 Core1 l6", "300 Core0 l3", "500 Core0 l4"]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"], "no time_backwards: {:?}", r.diags);
    assert!(r.meta.contains(&("hw.order".into(), "merged per core (2 streams)".into())));
    // Read in one pass (no file to read again: a pipe), the same rows are in file order and
    // Core1's rows are said to go back (before Core0's 500).
    let comp = Companions::default();
    let mut sink = Rec::default();
    let dev = std::path::Path::new("/dev/null");
    read(&mut LineReader::new(text.as_bytes()), "t.csv", Some(dev), &comp, &mut sink).unwrap();
    assert_eq!(
        sink.kinds(),
        ["time_unit_assumed", "no_prepass", "time_backwards", "time_backwards"]
    );
    assert_eq!(order(&sink)[3], "150 Core1 l5");
}

#[test]
fn interleaved_cores_each_in_its_own_order_are_merged() {
    // Core1's 250 comes after Core0's 300 in the file; Core0's 280 is before its own 300.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore1,Info,150,l3\nCore0,Info,300,l4\nCore1,Info,250,l5\n\
                Core0,Info,280,l6\nCore1,Info,400,l7\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        [
            "100 Core0 l2",
            "150 Core1 l3",
            "250 Core1 l5",
            "300 Core0 l4",
            // Out of order within its own core: kept after the row before it, and said.
            "280 Core0 l6",
            "400 Core1 l7"
        ]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed", "time_backwards"]);
    assert!(r.diags[1].1.starts_with("line 6: time 280 ns is before the previous row's 300 ns"));
}

#[test]
fn equal_times_of_different_cores_keep_file_order() {
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore0,Info,200,l3\nCore1,Info,100,l4\nCore1,Info,200,l5\n\
                Core2,Info,50,l6\nCore2,Info,200,l7\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        [
            "50 Core2 l6",
            "100 Core0 l2",
            "100 Core1 l4",
            "200 Core0 l3",
            "200 Core1 l5",
            "200 Core2 l7"
        ]
    );
    // Ties go by line, not by core: Core1's 200 is written before Core0's.
    let text = "Source,Type,Timestamp,Symbol\n\
                Core0,Info,100,l2\nCore1,Info,150,l3\nCore1,Info,200,l4\nCore0,Info,200,l5\n\
                Core2,Info,50,l6\n";
    let r = run(text);
    assert_eq!(
        order(&r),
        ["50 Core2 l6", "100 Core0 l2", "150 Core1 l3", "200 Core1 l4", "200 Core0 l5"]
    );
    // A file in time order stays in file order, cores interleaved or not.
    let sorted = "Source,Type,Timestamp,Symbol\n\
                  Core1,Info,100,l2\nCore0,Info,100,l3\nCore1,Info,100,l4\nCore0,Info,200,l5\n";
    let r = run(sorted);
    assert_eq!(order(&r), ["100 Core1 l2", "100 Core0 l3", "100 Core1 l4", "200 Core0 l5"]);
    assert!(r.meta.contains(&("hw.order".into(), "file".into())));
}

#[test]
fn deltas_are_per_core_in_an_export_listed_core_by_core() {
    // TRACE32 ti.back (seconds), Core0's records then Core1's: each core's deltas sum from 0.
    let text = "record,core,cycle,symbol,ti.back\n\
                1,0,info,l2,0.000000100\n2,0,info,l3,0.000000200\n\
                3,1,info,l4,0.000000150\n4,1,info,l5,0.000000100\n";
    let r = run(text);
    assert_eq!(order(&r), ["100 0 l2", "150 1 l4", "250 1 l5", "300 0 l3"]);
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    // Cores interleaved: one listing, each delta from the row before in the file.
    let text = "record,core,cycle,symbol,ti.back\n\
                1,0,info,l2,0.000000100\n2,1,info,l3,0.000000050\n\
                3,0,info,l4,0.000000100\n4,1,info,l5,0.000000100\n";
    let r = run(text);
    assert_eq!(order(&r), ["100 0 l2", "150 1 l3", "250 0 l4", "350 1 l5"]);
    assert!(r.meta.contains(&("hw.order".into(), "file".into())));
}

#[test]
fn timestamp_messages_are_per_core_in_an_export_listed_core_by_core() {
    let text = "Source,Type,Timestamp,Symbol\n\
                C0,Timestamp,100,l2\nC0,Branch,,l3\nC0,Timestamp,200,l4\n\
                C1,Timestamp,120,l5\nC1,Branch,,l6\nC1,Timestamp,160,l7\n";
    let r = run_with(text, r#"{"time": {"encoding": "marker"}}"#, None);
    assert_eq!(
        order(&r),
        ["100 C0 l2", "120 C1 l5", "140 C1 l6", "150 C0 l3", "160 C1 l7", "200 C0 l4"]
    );
    assert_eq!(r.kinds(), ["time_unit_assumed"]);
}

#[test]
fn cores_beyond_the_stream_bound_share_one_stream_in_file_order() {
    // 18 cores in descending time, one row each: the first 15 have a stream each, the last
    // three share one, read in file order (so two of them go back).
    let mut text = String::from("Source,Type,Timestamp,Symbol\n");
    for i in 0..18 {
        text.push_str(&format!("C{i},Info,{},l{}\n", 1000 - i, i + 2));
    }
    let r = run(&text);
    let got = order(&r);
    assert_eq!(got.len(), 18);
    // The shared stream's rows keep file order, at the latest time it reached (985).
    assert_eq!(&got[..4], ["985 C15 l17", "984 C16 l18", "983 C17 l19", "986 C14 l16"]);
    assert_eq!(got[17], "1000 C0 l2");
    assert_eq!(r.kinds(), ["time_unit_assumed", "time_backwards", "time_backwards"]);
}
