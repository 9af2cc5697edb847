use super::*;

/// Events as `ts|source|instance|type|target|instance|action|note|position`.
struct Btf;

impl crate::ingest::test_sink::Shape for Btf {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}|{}|{:?}|{}",
            e.ts,
            e.source,
            e.source_instance,
            e.target_type,
            e.target,
            e.target_instance,
            e.action,
            e.note,
            e.pos
        )
    }
}

type Rec = crate::ingest::test_sink::Recorder<Btf>;

fn run(text: &str) -> Rec {
    let mut sink = Rec::default();
    read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut sink).unwrap();
    sink
}

#[test]
fn reads_header_and_scales_time() {
    let r = run("#Version 2.1.0\r\n#TIMESCALE us\r\n#creator  TA Simulator (14.01) \r\n\
                     5,Core_0,0,T,A,0,start\r\n");
    assert_eq!(r.unit, Some(TimeUnit::Us));
    assert!(r.meta.contains(&("version".into(), "2.1.0".into())));
    assert!(r.meta.contains(&("creator".into(), "TA Simulator (14.01)".into())));
    assert_eq!(r.events, ["5000|Core_0|0|T|A|0|start|None|line 4"]);
}

/// The FreeRTOS trace logger's older labels (`[<core>/<id>]<name>`: the event's core, then
/// the task's id) name one task per core; its current exporter writes `<name>[<id>]`
/// with the core as the source. Only its files (and its repository's generator's) are read
/// so; once said.
#[test]
fn freertos_logger_labels_are_one_task_on_every_core() {
    let body = "1,Core_0,0,T,[0/0005]CS,0,preempt,create pri:3\n\
                    3,[1/0000],0,T,[1/0005]CS,0,resume,\n\
                    4,[0x1/0x0b]Med,0,T,[0X1/0xb]Med,0,resume,\n\
                    5,Core_1,0,STI,task,0,trigger,suspend CS[5]\n\
                    6,[1/5],0,T,[1/]x,0,resume,\n";
    let r = run(&format!("#version 2.2.0\n#creator FreeRTOS trace logger\n{body}"));
    assert_eq!(
        r.events,
        [
            "1|Core_0|0|T|CS[5]|0|preempt|Some(\"create pri:3\")|line 3",
            "3|Core_1|0|T|CS[5]|0|resume|None|line 4",
            "4|Core_1|0|T|Med[11]|0|resume|None|line 5",
            "5|Core_1|0|STI|task|0|trigger|Some(\"suspend CS[5]\")|line 6",
            // An id that is no number is no label.
            "6|Core_1|0|T|[1/]x|0|resume|None|line 7",
        ]
    );
    assert_eq!(r.kinds(), ["freertos_labels"]);
    assert!(r.diags[0].1.starts_with("line 3: FreeRTOS trace logger labels"), "{:?}", r.diags);
    // So are those of the generator of the logger's repository (BTFViewer's test traces).
    let r = run(&format!("#version 2.2.0\n#creator synthetic_trace_gen\n{body}"));
    assert_eq!(r.events[1], "3|Core_1|0|T|CS[5]|0|resume|None|line 4");
    assert_eq!(r.kinds(), ["freertos_labels"]);
    // Another producer's names are its own.
    let r = run(&format!("#version 2.2.0\n#creator libBtf\n{body}"));
    assert_eq!(r.events[1], "3|[1/0000]|0|T|[1/0005]CS|0|resume|None|line 4");
    assert!(r.diags.is_empty(), "{:?}", r.diags);
}

#[test]
fn note_is_rest_of_line_with_commas_and_spaces_trimmed() {
    let r = run(" 1 , R1 , 0 , SIG , speed , 0 , write , 42, and more \n2,C,0,T,A,0,resume,\n");
    assert_eq!(r.events[0], "1|R1|0|SIG|speed|0|write|Some(\"42, and more\")|line 1");
    assert_eq!(r.events[1], "2|C|0|T|A|0|resume|None|line 2");
}

#[test]
fn instances_minus_one_and_empty() {
    let r = run("1,SIM,-1,STI,S,,trigger\n2,SIM,x,STI,S,0,trigger\n");
    assert_eq!(r.events[0], "1|SIM|-1|STI|S|-1|trigger|None|line 1");
    assert_eq!(r.events[1], "2|SIM|-1|STI|S|0|trigger|None|line 2");
    assert_eq!(r.diags[0].0, "bad_instance");
}

#[test]
fn malformed_lines_are_diagnostics_and_reading_goes_on() {
    let r = run("1,a,0,T,A,0\nxx,a,0,T,A,0,start\n5,a,0,T,A,0,start\n3,a,0,T,A,0,preempt\n");
    let kinds: Vec<_> = r.diags.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(kinds, ["malformed_line", "malformed_line", "time_backwards"]);
    assert!(r.diags[0]
        .1
        .starts_with("line 1: expected at least 7 comma-separated fields, found 6"));
    assert!(r.diags[1].1.starts_with("line 2: time 'xx' is not an integer"));
    assert_eq!(r.events.len(), 2, "the backwards event is kept");
}

#[test]
fn tables_comments_and_repeated_headers() {
    let r = run("#version 2.2.0\n#entityType\n#-0 T\n#entityTable\n#-0 TASK_A\n\
                     #entityTypeTable\n#-T TASK_A\n#-SEM S1\n# comment\n#version 2.1.0\n\
                     1,C,0,T,TASK_A,0,start\n# between data lines\n2,C,0,T,TASK_A,0,terminate\n");
    assert_eq!(r.events.len(), 2);
    assert_eq!(
        r.decl,
        [
            ("TASK_A".into(), None, Some(0)),
            ("TASK_A".into(), Some("T".into()), None),
            ("S1".into(), Some("SEM".into()), None)
        ]
    );
    let versions: Vec<_> = r.meta.iter().filter(|m| m.0 == "version").collect();
    assert_eq!(versions.last().unwrap().1, "2.1.0");
}

#[test]
fn type_table_is_the_entity_type_block() {
    // BTF 2.1.5's example header: `#typeTable` (earlier files: `#entityType`), then the
    // entity table and the entity-type table, a comment among the header lines.
    let r = run("#version 1.0\n#creator TA-Toolsuite 12.06.1\n# Simulation of dualcore\n\
                     #timeScale ns\n#typeTable\n#-0 T\n#-1 R\n#entityTable\n#-0 Task_1ms\n\
                     #-2 Runnable_1ms_Init\n#entityTypeTable\n#-T Task_1ms\n\
                     #-R Runnable_1ms_Init\n0,S,0,T,Task_1ms,0,activate\n");
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    assert!(r.meta.contains(&("entitytype.0".into(), "T".into())));
    assert!(r.meta.contains(&("entitytype.1".into(), "R".into())));
    assert_eq!(r.decl.len(), 4);
    assert_eq!(r.decl[3], ("Runnable_1ms_Init".into(), Some("R".into()), None));
    assert!(sniff(b"#typeTable\n#-0 T\n"));
}

#[test]
fn numeric_lines_resolve_through_the_tables() {
    // BTF 2.1.5's numeric mode: the type column is a #typeTable id, source and target
    // #entityTable ids. An id no table lists is kept as written, with a warning; a line
    // with a type code is read as written, numbers and all (a name may be a number).
    let r = run("#typeTable\n#-0 T\n#-3 C\n#entityTable\n#-0 Task_1ms\n#-7 Core_1\n\
                     10,7,0,0,0,0,start\n11,9,0,0,0,0,preempt\n12,7,0,5,0,0,resume\n\
                     13,Core_1,0,3,7,0,idle\n14,7,0,T,0,0,terminate\n");
    assert_eq!(
        r.events,
        [
            "10|Core_1|0|T|Task_1ms|0|start|None|line 7",
            "11|9|0|T|Task_1ms|0|preempt|None|line 8",
            "12|Core_1|0|5|Task_1ms|0|resume|None|line 9",
            "13|Core_1|0|C|Core_1|0|idle|None|line 10",
            "14|7|0|T|0|0|terminate|None|line 11"
        ]
    );
    let diags: Vec<_> = r.diags.iter().map(|d| format!("{} {}", d.0, d.1)).collect();
    assert_eq!(
        diags,
        [
            "unknown_id line 8: numeric line: source id 9 is not in the #entityTable; kept \
                 as '9'",
            "unknown_id line 9: numeric line: type id 5 is not in the #typeTable; kept as '5'"
        ]
    );
}

#[test]
fn picoseconds_and_unknown_timescale() {
    let r = run("#timeScale ps\n1500,C,0,T,A,0,start\n");
    assert_eq!(r.events[0].split('|').next(), Some("1"));
    assert_eq!(r.diags[0].0, "precision_lost");
    let mut sink = Rec::default();
    let e = read(&mut LineReader::new(&b"#timeScale min\n"[..]), "t.btf", &mut sink).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.btf: line 1: unknown #timeScale 'min' (expected ps, ns, us, ms or s)"
    );
}

#[test]
fn header_only_file_has_no_events() {
    let r = run("#version 2.2.0\n#scenario priority_inversion\n");
    assert!(r.events.is_empty());
    assert!(r.meta.contains(&("scenario".into(), "priority_inversion".into())));
}

#[test]
fn sniffs_btf_not_paraver() {
    assert!(sniff(b"#version 2.2.0\n"));
    assert!(sniff(b"# hello\n0,Core_0,0,T,A,0,start\n"));
    assert!(!sniff(b"#Paraver (01/01/2020 at 10:00):100_ns:0:1:1(1:1)\n"));
    assert!(!sniff(b"hello world\n"));
    assert!(!sniff(b"\x00\x01binary"));
    // A stray NUL: the header still says BTF; without one, data lines do not.
    assert!(sniff(b"#version 2.1.0\n5,Core_0,0,T,A,0,st\x00art\n"));
    assert!(!sniff(b"5,Core_0,0,T,A,0,st\x00art\n6,Core_0,0,T,A,0,start\n"));
    // One bad line at the top is a record-level problem, not another format.
    assert!(sniff(b"0,STI,0,T,A\n0,STI,0,T,A,0,activate\n1,Core_0,0,T,A,0,start\n"));
    assert!(!sniff(b"a,b\nc,d\n0,STI,0,T,A,0,activate\n"));
    assert!(!sniff(b"0,STI,0,T,A\n"));
    // A hardware-trace export whose header row is damaged: seven fields after a number,
    // but what a BTF line needs (target, action) empty on most rows.
    let export = b"Indx,Sorce,Type,Address,Destination,Timestamp,Data\n\
            0,Core0,Data,0x20000000,,0,1\n1,Core1,Data,0x20000004,,50,3\n\
            2,Core0,Branch,0x1010,0x2000,100,\n3,Core1,Branch,0x1020,0x2100,150,\n";
    assert!(!sniff(export));
    // The same rows with a target and an action are BTF-shaped, whatever they mean.
    assert!(sniff(b"0,Core0,Data,0x20000000,X,0,1\n1,Core1,Data,0x20000004,X,50,3\n"));
}

#[test]
fn commas_are_found_as_a_byte_scan_finds_them() {
    // Every byte next to a comma that word-at-a-time tricks can mistake for one ('-' is
    // ',' ^ 1, '+' is ',' - 1; UTF-8 bytes have the high bit set), at every offset.
    let pieces: [&[u8]; 9] = [b",", b"-", b"+", b"-1", b"\xc3\xa9", b"ab", b",,", b"\x80", b" "];
    let mut seed = 7u64;
    for _ in 0..20_000 {
        let mut line = Vec::new();
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        for k in 0..(seed >> 59) {
            line.extend_from_slice(pieces[((seed >> (k * 3 % 56)) % 9) as usize]);
        }
        let want: Vec<usize> =
            line.iter().enumerate().filter(|(_, &b)| b == b',').map(|(i, _)| i).take(7).collect();
        let mut got = [0; 7];
        let n = find_commas(&line, &mut got);
        assert_eq!(n, want.len(), "{line:?}");
        assert_eq!(&got[..n], &want[..], "{line:?}");
        assert!(got[n..].iter().all(|&g| g == usize::MAX));
    }
}

#[test]
fn parse_int_rejects_overflow_and_junk() {
    assert_eq!(parse_int("-12"), Some(-12));
    assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
    assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
    assert_eq!(parse_int("-9223372036854775809"), None);
    assert_eq!(parse_int("9223372036854775808"), None);
    assert_eq!(parse_int("1.5"), None);
    assert_eq!(parse_int("999999999999999999"), Some(999_999_999_999_999_999));
    assert_eq!(parse_int("-999999999999999999"), Some(-999_999_999_999_999_999));
    assert_eq!(parse_int("1234567890123456789"), Some(1_234_567_890_123_456_789));
    assert_eq!(parse_int("12345678901234567x"), None);
    assert_eq!(parse_int("-"), None);
    assert_eq!(parse_int(""), None);
}

#[test]
fn a_byte_order_mark_is_skipped_at_the_start_of_any_line() {
    // Two files joined with `cat`, each with its BOM: the second header is a header, and a
    // data line that starts with a BOM is an event.
    let r = run("\u{feff}#timeScale us\n1,Core_0,0,T,A,0,start\n\u{feff}#timeScale us\n\
                 \u{feff}2,Core_0,0,T,A,0,preempt\n");
    assert_eq!(r.unit, Some(TimeUnit::Us));
    assert_eq!(
        r.events,
        ["1000|Core_0|0|T|A|0|start|None|line 2", "2000|Core_0|0|T|A|0|preempt|None|line 4"]
    );
    assert!(r.diags.is_empty(), "{:?}", r.diags);
}
