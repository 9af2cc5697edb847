//! Hardware-trace exports: a generated S32DS-style export of a 2-core system (two tasks per
//! core, an ISR, two runnables, a signal) with its ELF and mapping file, whose tables are
//! worked out by hand; bad rows, time going backwards, --strict, reingest.
use crate::util::{csv, ok, run};
use std::path::Path;

#[path = "../src/ingest/hw/testelf.rs"]
#[allow(dead_code)]
mod testelf;

/// Code and data of the generated system (ARM: function values carry the Thumb bit).
fn elf() -> Vec<u8> {
    testelf::elf32(
        40,
        false,
        &[
            ("os_dispatch", 0x1001, 0x100, true),
            ("Run_Ctrl", 0x2001, 0x80, true),
            ("Run_Log", 0x2101, 0x80, true),
            ("ISR_CAN", 0x3001, 0x80, true),
            ("OS_TerminateTask", 0x4001, 0x40, true),
            ("cur_task_c0", 0x2000_0000, 4, false),
            ("cur_task_c1", 0x2000_0004, 4, false),
            ("speed", 0x2000_0010, 4, false),
        ],
    )
}

const MAP: &str = r#"{
  "time": {"unit": "cycles", "frequency_hz": 100000000},
  "cores": {"Core0": "Core_0", "Core1": "Core_1"},
  "current_task": {"cur_task_c0": "Core_0", "0x20000004": "Core_1"},
  "tasks": {"1": "T_A0", "2": "T_B0", "3": "T_A1", "4": "T_B1"},
  "idle": ["0"],
  "runnables": ["Run_*"],
  "isrs": ["ISR_*"],
  "terminate_functions": ["OS_TerminateTask"],
  "signals": ["speed"]
}"#;

/// (cycle, core, type, address, destination, data); 1 cycle = 10 ns.
const ROWS: &[(u64, &str, &str, &str, &str, &str)] = &[
    (0, "Core0", "Data", "0x20000000", "", "1"), // T_A0 starts on Core_0
    (50, "Core1", "Data", "0x20000004", "", "3"), // T_A1 starts on Core_1
    (100, "Core0", "Branch", "0x1010", "0x2000", ""), // Run_Ctrl by T_A0
    (150, "Core1", "Branch", "0x1020", "0x2100", ""), // Run_Log by T_A1
    (200, "Core0", "Data", "0x20000010", "", "5"), // speed := 5 by T_A0
    (250, "Core1", "Data", "0x20000004", "", "4"), // T_A1 preempted by T_B1
    (300, "Core0", "Return", "0x2040", "0x1014", ""), // Run_Ctrl returns
    (350, "Core1", "Data", "0x20000004", "", "3"), // T_B1 preempted, T_A1 resumes
    (400, "Core0", "Branch", "0x1018", "0x4000", ""), // T_A0 calls OS_TerminateTask
    (450, "Core1", "Return", "0x2140", "", ""),  // Run_Log returns
    (500, "Core0", "Data", "0x20000000", "", "2"), // T_A0 terminated, T_B0 starts
    (550, "Core1", "Data", "0x20000010", "", "7"), // speed := 7 by T_A1
    (600, "Core0", "Interrupt", "0x1030", "0x3000", ""), // ISR_CAN
    (650, "Core1", "Data", "0x20000004", "", "0"), // Core_1 idle
    (700, "Core0", "Return", "0x3040", "", ""),  // ISR_CAN returns
    (800, "Core0", "Data", "0x20000000", "", "0"), // Core_0 idle
    (900, "Core0", "Data", "0x20000000", "", "2"), // T_B0 resumes
    (1000, "Core0", "Linear", "0x1040", "", ""), // the last record
];

fn export(rows: &[(u64, &str, &str, &str, &str, &str)]) -> String {
    let mut s = String::from("Index,Source,Type,Address,Destination,Timestamp,Data\n");
    for (i, (t, core, ty, a, d, data)) in rows.iter().enumerate() {
        s.push_str(&format!("{i},{core},{ty},{a},{d},{t},{data}\n"));
    }
    s
}

/// A directory with the export, ELF and mapping, ingested into `db` (detected, not forced).
fn ingested(rows: &[(u64, &str, &str, &str, &str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("trace.csv"), export(rows)).unwrap();
    std::fs::write(d.join("app.elf"), elf()).unwrap();
    std::fs::write(d.join("map.json"), MAP).unwrap();
    ok(
        d,
        &["ingest", "--archive", "db", "--hw-elf", "app.elf", "--hw-map", "map.json", "trace.csv"],
    );
    tmp
}

fn tables(d: &Path) -> [String; 5] {
    [
        csv(
            d,
            "db",
            "SELECT entity, entity_type, instance, activate_ts, start_ts, terminate_ts, core, \
             net_exec, preemptions, complete FROM instances ORDER BY entity, instance",
        ),
        csv(
            d,
            "db",
            "SELECT entity, state, ts, dur, open FROM intervals WHERE channel = 'running' \
             ORDER BY entity, ts",
        ),
        csv(d, "db", "SELECT core, busy FROM cpu_load(window_ns := 100000) ORDER BY core"),
        csv(d, "db", "SELECT signal, ts, dur, value, writer FROM signal_values ORDER BY ts"),
        csv(
            d,
            "db",
            "SELECT kind, severity, sum(count) AS n FROM diagnostics GROUP BY ALL ORDER BY kind",
        ),
    ]
}

#[test]
fn generated_export_gives_hand_computed_tables() {
    let tmp = ingested(ROWS);
    let d = tmp.path();
    let [instances, running, load, signals, diags] = tables(d);
    assert_eq!(
        instances,
        "entity,entity_type,instance,activate_ts,start_ts,terminate_ts,core,net_exec,preemptions,complete\n\
         ISR_CAN,I,0,6000,6000,7000,Core_0,1000,0,true\n\
         Run_Ctrl,R,0,1000,1000,3000,Core_0,2000,0,true\n\
         Run_Log,R,0,1500,1500,4500,Core_1,2000,1,true\n\
         T_A0,T,0,0,0,5000,Core_0,5000,0,true\n\
         T_A1,T,0,500,500,,Core_1,5000,2,false\n\
         T_B0,T,0,5000,5000,,Core_0,3000,2,false\n\
         T_B1,T,0,2500,2500,,Core_1,1000,1,false\n"
    );
    assert_eq!(
        running,
        "entity,state,ts,dur,open\n\
         Core_0,T_A0,0,5000,false\n\
         Core_0,T_B0,5000,1000,false\n\
         Core_0,ISR_CAN,6000,1000,false\n\
         Core_0,T_B0,7000,1000,false\n\
         Core_0,T_B0,9000,1000,true\n\
         Core_1,T_A1,500,2000,false\n\
         Core_1,T_B1,2500,1000,false\n\
         Core_1,T_A1,3500,3000,false\n"
    );
    assert_eq!(load, "core,busy\nCore_0,9000\nCore_1,6000\n");
    assert_eq!(
        signals,
        "signal,ts,dur,value,writer\nspeed,2000,3500,5,T_A0\nspeed,5500,4500,7,T_A1\n"
    );
    assert_eq!(diags, "kind,severity,n\nimplicit_preemption,info,1\n");
    // Every record is one events row; the system events come on top.
    let counts = csv(
        d,
        "db",
        "SELECT count(*) FILTER (WHERE target IS NULL) AS rows, count(*) FILTER (WHERE target \
         IS NOT NULL) AS system, min(ts), max(ts) FROM events",
    );
    assert_eq!(counts, "rows,system,min(ts),max(ts)\n18,24,0,10000\n");
    let capture = csv(d, "db", "SELECT format, time_unit, ts_origin, meta->>'hw.elf' AS elf, meta->>'hw.map' AS map, meta->>'hw.symbols' AS symbols FROM captures");
    assert_eq!(capture, "format,time_unit,ts_origin,elf,map,symbols\nhw,ns,0,app.elf,map.json,8\n");
    let note = csv(d, "db", "SELECT note FROM events WHERE action = 'interrupt'");
    assert_eq!(note, "note\n\"addr=0x00001030 <os_dispatch+0x30>, dest=0x00003000 <ISR_CAN>\"\n");
}

#[test]
fn reingest_rebuilds_the_capture_from_its_kept_elf_and_mapping() {
    let tmp = ingested(ROWS);
    let d = tmp.path();
    let before = tables(d);
    // The originals are gone: the rebuild reads the kept copies.
    for f in ["trace.csv", "app.elf", "map.json"] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    let files = csv(d, "db", "SELECT source_files FROM captures");
    assert!(
        files.contains("trace.csv") && files.contains("map.json") && files.contains("app.elf"),
        "{files}"
    );
    ok(d, &["reingest", "1", "--archive", "db"]);
    assert_eq!(tables(d), before);
}

#[test]
fn bad_rows_and_time_going_backwards_are_diagnostics_and_strict_fails() {
    let mut rows = ROWS.to_vec();
    // Backwards within its own core (Core1 was at 50): a row earlier than one of another
    // core is not out of order, rows are merged per core.
    rows.insert(3, (40, "Core1", "Data", "0xZZ", "", "1"));
    rows.insert(5, (80, "Core0", "Info", "", "", ""));
    let tmp = ingested(&rows);
    let d = tmp.path();
    let mut text = export(&rows);
    text.push_str("19,Core0,Linear,0x1040\n20,Core0,Linear,0x1044,,soon,\n");
    std::fs::write(d.join("bad.csv"), &text).unwrap();
    let args = ["ingest", "--archive", "db", "--hw-elf", "app.elf", "--hw-map", "map.json"];
    let mut with = args.to_vec();
    with.push("bad.csv");
    ok(d, &with);
    let diags = csv(
        d,
        "db",
        "SELECT kind, severity, position FROM diagnostics WHERE capture_id = 2 AND severity <> \
         'info' ORDER BY length(position), position, kind",
    );
    // Line 5: 40 cycles after Core1's 50, and a bad address; line 7: 80 after Core0's 100.
    assert_eq!(
        diags,
        "kind,severity,position\n\
         bad_field,warning,bad.csv:5\n\
         time_backwards,warning,bad.csv:5\n\
         time_backwards,warning,bad.csv:7\n\
         bad_row,warning,bad.csv:22\n\
         bad_time,warning,bad.csv:22\n\
         bad_time,warning,bad.csv:23\n"
    );
    // The rows are all there: 20 + 2.
    let n = csv(d, "db", "SELECT count(*) FROM events WHERE capture_id = 2 AND target IS NULL");
    assert_eq!(n, "count_star()\n22\n");
    // --strict stops at the first warning, naming the file and line.
    with.insert(1, "--strict");
    with.push("--force");
    let out = run(d, &with);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "bad.csv: line 5: time 400 ns is before the previous row's 500 ns; row kept, states \
             use 500 ns (warning `time_backwards`: --strict stops the ingest here)"
        ),
        "{err}"
    );
    assert_eq!(
        csv(d, "db", "SELECT count(*) FROM captures"),
        "count_star()\n2\n",
        "nothing stored"
    );
}

#[test]
fn a_csv_that_is_not_an_export_needs_format_hw_and_a_bad_mapping_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("t.csv"), "Time [us];Type;Addr\n1.5;Data;0x10\n2;Data;0x14\n").unwrap();
    let out = run(d, &["ingest", "--archive", "db", "t.csv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("t.csv: line 1: unrecognised format"), "{err}");
    // An S32DS export whose header row is damaged has seven fields after a number on every
    // row, as BTF lines have: it is still no known format (it was read as BTF, every line
    // a malformed_line).
    std::fs::write(
        d.join("damaged.csv"),
        "Indx,Sorce,Type,Address,Destination,Timestamp,Data\n0,Core0,Data,0x20000000,,0,1\n\
         1,Core0,Branch,0x1010,0x2000,50,\n2,Core0,Data,0x20000004,,100,3\n",
    )
    .unwrap();
    let out = run(d, &["ingest", "--archive", "db", "damaged.csv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged.csv: line 1: unrecognised format"), "{err}");
    ok(d, &["ingest", "--archive", "db", "--format", "hw", "t.csv"]);
    assert_eq!(
        csv(d, "db", "SELECT ts, action, note FROM events ORDER BY seq"),
        "ts,action,note\n1500,data,addr=0x00000010\n2000,data,addr=0x00000014\n"
    );
    assert_eq!(csv(d, "db", "SELECT time_unit FROM captures"), "time_unit\nus\n");
    std::fs::write(d.join("m.json"), r#"{"columns": {"time": "Zeit"}}"#).unwrap();
    let out = run(
        d,
        &["ingest", "--archive", "db", "--format", "hw", "--hw-map", "m.json", "--force", "t.csv"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("t.csv: line 1: mapping: columns.time: no column named 'Zeit'"), "{err}");
    std::fs::write(d.join("m.json"), r#"{"tasks": {"1": "A"},}"#).unwrap();
    let out = run(
        d,
        &["ingest", "--archive", "db", "--format", "hw", "--hw-map", "m.json", "--force", "t.csv"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("m.json: mapping file: trailing comma at line 1"), "{err}");
}

#[test]
fn an_elf_and_a_mapping_with_one_file_name_are_kept_apart_and_reingested() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("d1")).unwrap();
    std::fs::create_dir_all(d.join("d2")).unwrap();
    std::fs::write(d.join("app"), export(ROWS)).unwrap();
    std::fs::write(d.join("d1/app"), elf()).unwrap();
    std::fs::write(d.join("d2/app"), MAP).unwrap();
    ok(d, &["ingest", "--archive", "db", "--hw-elf", "d1/app", "--hw-map", "d2/app", "app"]);
    let before = tables(d);
    assert!(before[0].contains("ISR_CAN,I,0,6000,6000,7000"), "{}", before[0]);
    for f in ["app", "d1/app", "d2/app"] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    ok(d, &["reingest", "1", "--archive", "db"]);
    assert_eq!(tables(d), before);
}

#[test]
fn hw_options_imply_format_hw_and_refuse_another_format() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A numeric first column and 7 fields: without --format hw this passed for BTF.
    std::fs::write(d.join("t.csv"), "Nr,Kern,Art,Adr,Ziel,Zeit,Wert\n1,0,Data,0x10,,100,5\n")
        .unwrap();
    let map = r#"{"columns": {"time": "Zeit", "core": "Kern", "type": "Art", "address": "Adr",
                  "destination": "Ziel", "data": "Wert"}, "time": {"unit": "ns"}}"#;
    std::fs::write(d.join("m.json"), map).unwrap();
    ok(d, &["ingest", "--archive", "db", "--hw-map", "m.json", "t.csv"]);
    assert_eq!(
        csv(d, "db", "SELECT format, (SELECT count(*) FROM diagnostics) AS d FROM captures"),
        "format,d\nhw,0\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT ts, source, action, value FROM events"),
        "ts,source,action,value\n100,0,data,5\n"
    );
    let out =
        run(d, &["ingest", "--archive", "db", "--format", "btf", "--hw-map", "m.json", "t.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--hw-elf and --hw-map are for hardware-trace exports"), "{err}");
}

#[test]
fn a_stripped_elf_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut bytes = testelf::elf32(40, false, &[("f", 0x1001, 4, true)]);
    let sh_off = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    bytes[sh_off + 2 * 40 + 4] = 1; // .symtab made PROGBITS, as if stripped
    std::fs::write(d.join("app.elf"), bytes).unwrap();
    std::fs::write(d.join("t.csv"), export(&ROWS[..2])).unwrap();
    ok(d, &["ingest", "--archive", "db", "--hw-elf", "app.elf", "t.csv"]);
    assert_eq!(
        csv(d, "db", "SELECT kind, severity FROM diagnostics WHERE kind = 'no_symbols'"),
        "kind,severity\nno_symbols,warning\n"
    );
}

/// `reingest` gives the capture row for row what the ingest gave: `captures.meta` names the
/// ELF and the mapping as they were given (`app.elf`, not the name they are kept under in
/// the archive, `hw-elf.app.elf`), and so do the diagnostics' messages; twice over too.
#[test]
fn reingest_keeps_the_companions_names_in_meta_and_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut bytes = testelf::elf32(40, false, &[("f", 0x1001, 4, true)]);
    let sh_off = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    bytes[sh_off + 2 * 40 + 4] = 1; // .symtab made PROGBITS, as if stripped
    std::fs::write(d.join("app.elf"), bytes).unwrap();
    std::fs::write(d.join("map.json"), MAP).unwrap();
    std::fs::write(d.join("t.csv"), export(ROWS)).unwrap();
    ok(d, &["ingest", "--archive", "db", "--hw-elf", "app.elf", "--hw-map", "map.json", "t.csv"]);
    let named = || {
        csv(
            d,
            "db",
            "SELECT meta->>'hw.elf' AS elf, meta->>'hw.map' AS map, \
             (SELECT string_agg(message, ' | ' ORDER BY message) FROM diagnostics) AS messages \
             FROM captures",
        )
    };
    let before = named();
    assert!(before.starts_with("elf,map,messages\napp.elf,map.json,"), "{before}");
    assert!(before.contains("app.elf: the ELF has no .symtab"), "{before}");
    for _ in 0..2 {
        ok(d, &["reingest", "1", "--archive", "db"]);
        assert_eq!(named(), before);
    }
}

#[test]
fn the_duplicate_check_counts_the_elf_and_mapping_given() {
    let tmp = ingested(ROWS);
    let d = tmp.path();
    let ingest = |extra: &[&str]| {
        let mut args = vec!["ingest", "--archive", "db"];
        args.extend(extra);
        args.push("trace.csv");
        let out = run(d, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // The same export, ELF and mapping: the same capture (it was ingested again).
    let again = ingest(&["--hw-elf", "app.elf", "--hw-map", "map.json"]);
    assert!(again.contains("identical to capture 1 'trace'"), "{again}");
    // A changed mapping: another capture; given again, that one.
    std::fs::write(d.join("map2.json"), format!("{MAP}\n")).unwrap();
    assert!(ingest(&["--hw-elf", "app.elf", "--hw-map", "map2.json"]).contains("capture 2 'trace'"));
    let again = ingest(&["--hw-map", "map2.json", "--hw-elf", "app.elf"]);
    assert!(again.contains("identical to capture 2"), "{again}");
    // Without the ELF, or without either: other captures, each found again.
    assert!(ingest(&["--hw-map", "map.json"]).contains("capture 3 'trace'"));
    assert!(ingest(&["--hw-map", "map.json"]).contains("identical to capture 3"));
    assert!(ingest(&[]).contains("capture 4 'trace'"));
    assert!(ingest(&[]).contains("identical to capture 4"));
    assert_eq!(crate::util::scalar(d, "db", "SELECT count(*) FROM captures"), "4");
}

/// The 2-core export of [`ROWS`] listed core by core (all of Core0's records, then
/// Core1's), plain and gzip-compressed, gives the tables of the interleaved one.
#[test]
fn an_export_listed_core_by_core_gives_the_tables_of_the_interleaved_one() {
    let interleaved = ingested(ROWS);
    let want = tables(interleaved.path());
    let mut by_core = ROWS.to_vec();
    by_core.sort_by_key(|r| r.1);
    let tmp = ingested(&by_core);
    let d = tmp.path();
    assert_eq!(tables(d), want);
    let order = csv(d, "db", "SELECT meta->>'hw.order' AS o FROM captures");
    assert_eq!(order, "o\nmerged per core (2 streams)\n");
    // The events are in time order, the records of one time in file order.
    let ts = csv(
        d,
        "db",
        "SELECT count(*) FROM (SELECT ts < lag(ts) OVER (ORDER BY seq) AS b FROM events) WHERE b",
    );
    assert_eq!(ts, "count_star()\n0\n");
    // Compressed: read again from the start by each core's reader.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, export(&by_core).as_bytes()).unwrap();
    std::fs::write(d.join("trace.csv.gz"), gz.finish().unwrap()).unwrap();
    std::fs::remove_dir_all(d.join("db")).unwrap();
    ok(
        d,
        &[
            "ingest",
            "--archive",
            "db",
            "--hw-elf",
            "app.elf",
            "--hw-map",
            "map.json",
            "trace.csv.gz",
        ],
    );
    assert_eq!(tables(d), want);
}

/// Core0's rows at 100, 300, 500 ns, then Core1's at 150 and 250: worked out by hand.
#[test]
fn core_blocks_run_each_task_when_its_rows_say() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let map = r#"{"current_task": {"0x20000000": "Core_0", "0x20000004": "Core_1"},
                  "cores": {"Core0": "Core_0", "Core1": "Core_1"},
                  "tasks": {"1": "T_A0", "2": "T_B0", "3": "T_A1"}, "idle": ["0"]}"#;
    std::fs::write(d.join("map.json"), map).unwrap();
    let text = "Index,Source,Type,Address,Destination,Timestamp [ns],Data\n\
                0,Core0,Data,0x20000000,,100,1\n\
                1,Core0,Data,0x20000000,,300,2\n\
                2,Core0,Data,0x20000000,,500,0\n\
                3,Core1,Data,0x20000004,,150,3\n\
                4,Core1,Data,0x20000004,,250,0\n";
    std::fs::write(d.join("blocks.csv"), text).unwrap();
    ok(d, &["ingest", "--archive", "db", "--hw-map", "map.json", "blocks.csv"]);
    let instances = csv(
        d,
        "db",
        "SELECT entity, instance, activate_ts, start_ts, core, net_exec, preemptions, complete \
         FROM instances ORDER BY entity",
    );
    assert_eq!(
        instances,
        "entity,instance,activate_ts,start_ts,core,net_exec,preemptions,complete\n\
         T_A0,0,100,100,Core_0,200,1,false\n\
         T_A1,0,150,150,Core_1,100,1,false\n\
         T_B0,0,300,300,Core_0,200,1,false\n"
    );
    let running = csv(
        d,
        "db",
        "SELECT entity, state, ts, dur, open FROM intervals WHERE channel = 'running' \
         ORDER BY entity, ts",
    );
    assert_eq!(
        running,
        "entity,state,ts,dur,open\n\
         Core_0,T_A0,100,200,false\n\
         Core_0,T_B0,300,200,false\n\
         Core_1,T_A1,150,100,false\n"
    );
    let diags = csv(d, "db", "SELECT kind FROM diagnostics ORDER BY kind");
    assert_eq!(diags, "kind\n", "no time_backwards");
}
