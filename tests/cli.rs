//! The command line: exit statuses, --strict, bad input, output formats, pipes.
use crate::util::{self, csv, ok, run, scalar};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

const GOOD: &str = "#version 2.1.0\n0,STI_A,0,T,TASK_A,0,activate\n10,Core_0,0,T,TASK_A,0,start\n\
                    30,Core_0,0,T,TASK_A,0,terminate\n";
const MALFORMED: &str = "#version 2.1.0\n0,STI_A,0,T,TASK_A,0,activate\n\
                         12,Core_0,0,T,TASK_A\n30,Core_0,0,T,TASK_A,0,start\n";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn ingest_prints_a_summary_and_captures_lists_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    let out = run(tmp.path(), &["ingest", "good.btf"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stderr(&out);
    assert!(summary.contains("capture 1 'good' (btf): 3 events"), "{summary}");
    assert!(summary.contains("instances") && summary.contains("no diagnostics"), "{summary}");
    assert!(tmp.path().join("traces.tdb/manifest.json").is_file(), "default archive ./traces.tdb");
    let listed = ok(tmp.path(), &["captures", "--format", "csv"]).replace("\r\n", "\n");
    let mut lines = listed.lines();
    assert_eq!(
        lines.next(),
        Some("capture_id,name,format,events,span_ns,time_unit,bytes_in,bytes_text,bytes_archive,ratio,tags,source_files,ingested_at")
    );
    let row = lines.next().unwrap();
    // A plain file: as many bytes of text as on disk.
    assert!(row.starts_with(&format!("1,good,btf,3,30,ns,{0},{0},", GOOD.len())), "{row}");
    assert!(row.contains(",{},\"[\"\"good.btf\"\"]\","), "{row}");
}

#[test]
fn archive_comes_from_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    let out = Command::new(util::bin())
        .args(["ingest", "good.btf"])
        .current_dir(tmp.path())
        .env("TRACEDB_ARCHIVE", "elsewhere.tdb")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(tmp.path().join("elsewhere.tdb/manifest.json").is_file());
    // Empty, it counts as unset: it was "a value is required for '--archive <DIR>'", with no
    // --archive on the command line.
    let with_empty = |args: &[&str]| {
        Command::new(util::bin())
            .args(args)
            .current_dir(tmp.path())
            .env("TRACEDB_ARCHIVE", "")
            .output()
            .unwrap()
    };
    let out = with_empty(&["ingest", "good.btf"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tmp.path().join("traces.tdb/manifest.json").is_file(), "the default archive");
    let listed = with_empty(&["captures", "--format", "csv"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("\n1,good,btf,"));
    // --archive still wins.
    let out = with_empty(&["captures", "--archive", "elsewhere.tdb"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn malformed_line_is_a_diagnostic_and_strict_makes_it_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.btf"), MALFORMED).unwrap();
    let lax = run(tmp.path(), &["ingest", "--archive", "db", "bad.btf"]);
    assert!(lax.status.success(), "{}", stderr(&lax));
    assert!(stderr(&lax).contains("1 malformed_line (error)"), "{}", stderr(&lax));
    assert_eq!(
        scalar(tmp.path(), "db", "SELECT position FROM diagnostics WHERE kind = 'malformed_line'"),
        "bad.btf:3"
    );

    let strict = run(tmp.path(), &["ingest", "--archive", "db2", "--strict", "bad.btf"]);
    assert_eq!(strict.status.code(), Some(1));
    let msg = stderr(&strict);
    assert!(
        msg.contains("bad.btf: line 3: expected at least 7 comma-separated fields, found 5"),
        "strict message names file and line: {msg}"
    );
    // Nothing was published, and the archive this first ingest created is taken back.
    assert!(!tmp.path().join("db2").exists(), "no empty archive left behind");

    // A directory the user made is kept, emptied of what the failed ingest put there.
    std::fs::create_dir(tmp.path().join("mine")).unwrap();
    let strict = run(tmp.path(), &["ingest", "--archive", "mine", "--strict", "bad.btf"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(std::fs::read_dir(tmp.path().join("mine")).unwrap().count(), 0);

    // An archive that existed stays, with its captures, and takes new ones afterwards.
    let strict = run(tmp.path(), &["ingest", "--archive", "db", "--strict", "--force", "bad.btf"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM captures"), "1");
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "mine", "good.btf"]);
    assert_eq!(scalar(tmp.path(), "mine", "SELECT count(*) FROM captures"), "1");
}

#[test]
fn corrupt_gzip_keeps_the_lines_before_the_damage() {
    // gzip -dc recovers 4,488 lines (the header and 4,487 events) before the damage; the
    // decoder, asked for a megabyte at once, used to return none of them.
    let tmp = tempfile::tempdir().unwrap();
    let damaged = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/damaged/gz-corrupt-early.btf.gz");
    let out = run(tmp.path(), &["ingest", "--archive", "db", damaged.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events"), "4487");
    assert_eq!(
        scalar(tmp.path(), "db", "SELECT count(*) FROM diagnostics WHERE kind = 'input_truncated'"),
        "1"
    );
}

#[test]
fn truncated_gzip_keeps_what_was_read_and_strict_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("#version 2.1.0\n");
    for i in 0..20_000 {
        text.push_str(&format!("{},STI_{},0,STI,S_{},0,trigger\n", i * 10, i % 7, i % 7));
    }
    let gz = util::gzip(text.as_bytes());
    std::fs::write(tmp.path().join("whole.btf.gz"), &gz).unwrap();
    std::fs::write(tmp.path().join("cut.btf.gz"), &gz[..gz.len() / 2]).unwrap();
    // Cut within the first 64 KiB of text, which is read ahead to detect the format.
    std::fs::write(tmp.path().join("short.btf.gz"), &gz[..300]).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "whole.btf.gz"]);
    let manifest_before = std::fs::read(tmp.path().join("db/manifest.json")).unwrap();

    // --strict: fatal, named, and the archive is as it was.
    let out = run(tmp.path(), &["ingest", "--archive", "db", "--strict", "cut.btf.gz"]);
    assert_eq!(out.status.code(), Some(1));
    let msg = stderr(&out);
    assert!(msg.contains("cut.btf.gz") && msg.contains("gzip stream ends early"), "{msg}");
    assert!(msg.contains("lines read"), "the position is after the last whole line: {msg}");
    assert_eq!(std::fs::read(tmp.path().join("db/manifest.json")).unwrap(), manifest_before);
    assert!(!tmp.path().join("db/.staging").exists(), "staging removed");
    assert!(!tmp.path().join("db/events/capture_id=2").exists(), "no partial capture files");

    // Otherwise the whole lines before the damage are kept, and the loss is a diagnostic.
    for file in ["cut.btf.gz", "short.btf.gz"] {
        let out = run(tmp.path(), &["ingest", "--archive", "db", file]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("1 input_truncated (data_loss)"), "{}", stderr(&out));
    }
    let kept: Vec<String> = util::csv(
        tmp.path(),
        "db",
        "SELECT c.name, (SELECT count(*) FROM events e WHERE e.capture_id = c.capture_id), \
         d.position FROM captures c JOIN diagnostics d USING (capture_id) \
         WHERE d.severity = 'data_loss' ORDER BY c.capture_id",
    )
    .lines()
    .skip(1)
    .map(String::from)
    .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    // Each kept line is one event; the diagnostic names the first line lost.
    for row in &kept {
        let f: Vec<&str> = row.split(',').collect();
        let events: u64 = f[1].parse().unwrap();
        assert!(events > 0 && events < 20_000, "{row}");
        assert!(f[2].ends_with(&format!(".btf.gz:{}", events + 2)), "{row}");
    }
    // The hash is that of the whole file: the same cut file is recognised.
    let again = run(tmp.path(), &["ingest", "--archive", "db", "cut.btf.gz"]);
    assert!(stderr(&again).contains("identical to capture 2"), "{}", stderr(&again));
}

#[test]
fn zstd_input_is_detected_by_content() {
    let tmp = tempfile::tempdir().unwrap();
    let z = zstd::encode_all(GOOD.as_bytes(), 3).unwrap();
    std::fs::write(tmp.path().join("trace.data"), z).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "trace.data"]);
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events"), "3");

    // Damage in the only block: no text to tell the format by, and the error says why.
    let mut z = zstd::encode_all(GOOD.as_bytes(), 3).unwrap();
    let single_segment = z[4] & 0x20 != 0;
    let size_bytes = [usize::from(single_segment), 2, 4, 8][usize::from(z[4] >> 6)];
    let header = 5 + usize::from(!single_segment) + size_bytes; // no dictionary id
    z[header] |= 0b110; // reserved block type
    std::fs::write(tmp.path().join("bad.btf.zst"), z).unwrap();
    let out = run(tmp.path(), &["ingest", "--archive", "db", "bad.btf.zst"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("bad.btf.zst: unrecognised format")
            && err.contains("only 0 bytes of text decode (zstd stream is corrupt"),
        "{err}"
    );
}

#[test]
fn unknown_format_and_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "hello, world\nnothing to see\n").unwrap();
    let out = run(tmp.path(), &["ingest", "--archive", "db", "notes.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "notes.txt: line 1: unrecognised format (supported: btf, prv, qs, ovni, hw, shark)"
        ),
        "{}",
        stderr(&out)
    );

    std::fs::write(tmp.path().join("empty.btf"), "").unwrap();
    let empty = run(tmp.path(), &["ingest", "--archive", "db", "empty.btf"]);
    assert_eq!(empty.status.code(), Some(1));
    assert!(stderr(&empty).contains("empty.btf: empty file"), "{}", stderr(&empty));
    // Whatever format is named: an empty file alone is no capture (it was one of 0 events).
    for format in ["btf", "shark", "qs", "prv"] {
        let empty =
            run(tmp.path(), &["ingest", "--archive", "db", "--format", format, "empty.btf"]);
        assert_eq!(empty.status.code(), Some(1), "{format}");
        assert!(stderr(&empty).contains("empty.btf: empty file"), "{format}: {}", stderr(&empty));
    }

    let missing = run(tmp.path(), &["ingest", "--archive", "db", "nope.btf"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("nope.btf"), "{}", stderr(&missing));

    assert_eq!(run(tmp.path(), &["ingest"]).status.code(), Some(2), "no file");
    assert_eq!(run(tmp.path(), &["frobnicate"]).status.code(), Some(2));
    assert_eq!(run(tmp.path(), &["ingest", "--format", "xyz", "notes.txt"]).status.code(), Some(2));
    let help = ok(tmp.path(), &["ingest", "--help"]);
    assert!(help.contains("--strict") && help.contains("--archive"), "{help}");
    // Bad tags and names, and a directory that is no ovni output directory, are refused
    // before the archive is created; so is an archive path that is a file.
    std::fs::write(tmp.path().join("t.btf"), "#version 2.1\n0,S,0,T,A,0,activate\n").unwrap();
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    for (args, code, says) in [
        (&["--tag", "=x", "t.btf"][..], 2, "--tag =x: the key is empty"),
        (&["--tag", "a=1", "--tag", "a=2", "t.btf"][..], 2, "--tag a is given twice"),
        (&["--name", " ", "t.btf"][..], 2, "--name is empty"),
        (&["t.btf", "empty"][..], 1, "empty: a directory is ingested only when it is an ovni"),
        (
            &["--format", "btf", "--tick-rate", "1MHz", "t.btf"][..],
            2,
            "--tick-rate (QS and S.Ha.R.K. only) is not read by --format btf",
        ),
        (
            &["--format", "shark", "--qs-dic", "x.dic", "t.btf"][..],
            2,
            "--qs-dic (QS only) is not read",
        ),
    ] {
        let out = run(tmp.path(), &[&["ingest", "--archive", "fresh.tdb"][..], args].concat());
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(!tmp.path().join("fresh.tdb").exists(), "{args:?} left an archive behind");
    }
    // A detected format that does not read an option given: said after its summary line,
    // also when the file is found stored already.
    for _ in 0..2 {
        let out =
            run(tmp.path(), &["ingest", "--archive", "n.tdb", "--tick-rate", "1kHz", "t.btf"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "t.btf: note: --tick-rate (QS and S.Ha.R.K. only) was not used: the file is btf"
            ),
            "{}",
            stderr(&out)
        );
    }
    // Format names in any case, `auto` too (`--format AUTO` was an unknown format).
    for format in ["AUTO", "Btf"] {
        let args = ["ingest", "--archive", "n.tdb", "--force", "--format", format, "t.btf"];
        let out = run(tmp.path(), &args);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
    }
    let out = run(tmp.path(), &["ingest", "--archive", "notes.txt", "t.btf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("notes.txt: not a directory"), "{}", stderr(&out));
    let no_archive = run(tmp.path(), &["sql", "--archive", "missing.tdb", "-c", "SELECT 1"]);
    assert_eq!(no_archive.status.code(), Some(1));
    assert!(stderr(&no_archive).contains("missing.tdb"), "{}", stderr(&no_archive));
}

#[test]
fn a_duration_parameter_out_of_range_is_a_usage_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    // It was DuckDB's "Out of Range Error: Overflow in addition of INT64", exit 1.
    let args = |window: &str| {
        run(
            tmp.path(),
            &["query", "cpu_load", "--archive", "db", "--capture", "1", "--param", window],
        )
    };
    let out = args("window=9223372036854775807ns");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("--param window=9223372036854775807ns: too long: at most 1000000000s"),
        "{}",
        stderr(&out)
    );
    // The longest allowed window gives one window per core.
    let out = args("window=1000000000s");
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| 1000000000000000000 |") && table.contains("(1 row)"), "{table}");
    // In SQL the macro says so too.
    let sql = run(
        tmp.path(),
        &[
            "sql",
            "--archive",
            "db",
            "-c",
            "SELECT * FROM cpu_load(window_ns := 9223372036854775807)",
        ],
    );
    assert_eq!(sql.status.code(), Some(1));
    assert!(stderr(&sql).contains("window_ns must be at most 10^18 ns"), "{}", stderr(&sql));
}

#[test]
fn a_param_given_twice_or_wrong_is_a_usage_error_whatever_the_archive() {
    // `--param window=1ms --param window=2ms` ran with the last window, and two deadline
    // files were merged; a wrong key or value was found only after the archive was opened,
    // so a missing archive made it exit status 1.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    std::fs::write(tmp.path().join("d.csv"), "TASK_A,10ns\n").unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let query = |archive: &str, params: &[&str]| {
        let mut args = vec!["query", params[0], "--archive", archive];
        for p in &params[1..] {
            args.extend(["--param", p]);
        }
        run(tmp.path(), &args)
    };
    for (params, says) in [
        (&["cpu_load", "window=1ms", "window=2ms"][..], "--param window is given twice"),
        (&["deadline_misses", "deadlines=d.csv", "deadlines=d.csv"][..], "given twice"),
        (&["cpu_load", "window=soon"][..], "--param window=soon: expected a positive"),
        (&["response_times", "speed=1"][..], "response_times has no parameter 'speed'"),
    ] {
        for archive in ["db", "nowhere"] {
            let out = query(archive, params);
            assert_eq!(out.status.code(), Some(2), "{params:?} {archive}: {}", stderr(&out));
            assert!(stderr(&out).contains(says), "{params:?}: {}", stderr(&out));
            assert!(out.stdout.is_empty());
        }
    }
    // Once each, they run.
    let out = query("db", &["deadline_misses", "deadlines=d.csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(1 row)"));
}

#[test]
fn a_script_that_is_not_utf8_is_refused_naming_the_line() {
    // It said "nonutf.sql: stream did not contain valid UTF-8", naming no position.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("q.sql"), b"SELECT 1;\nSELECT '\xff' AS x;\n").unwrap();
    let out = run(tmp.path(), &["sql", "-f", "q.sql"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("q.sql: line 2: byte 9 of the line is not UTF-8 text"),
        "{}",
        stderr(&out)
    );
    let piped = util::run_with_stdin(tmp.path(), &["sql"], b"SELECT 1;\n\xfe");
    assert_eq!(piped.status.code(), Some(1));
    assert!(stderr(&piped).contains("<stdin>: line 2: byte 1 of the line"), "{}", stderr(&piped));
    assert!(piped.stdout.is_empty(), "nothing runs");
}

#[test]
fn a_shell_command_in_a_script_is_refused_before_anything_runs() {
    // `.mode csv` piped in (as sqlite3 and duckdb scripts have it) gave DuckDB's `syntax
    // error at or near "."` after the statements before it had run and printed.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let says = "is a command of the interactive shell: scripts run by `sql -c`, `-f` or from a \
                pipe hold SQL only";
    let piped = util::run_with_stdin(
        tmp.path(),
        &["sql", "--archive", "db"],
        b"SELECT 1 AS x;\n-- as csv\n.mode csv\nSELECT 2 AS y;\n",
    );
    assert_eq!(piped.status.code(), Some(1));
    assert!(
        stderr(&piped).contains(&format!("<stdin>: line 3: `.mode` {says}")),
        "{}",
        stderr(&piped)
    );
    assert!(piped.stdout.is_empty(), "nothing runs: {}", String::from_utf8_lossy(&piped.stdout));
    std::fs::write(tmp.path().join("q.sql"), "SELECT 1;\n  .tables\n").unwrap();
    let file = run(tmp.path(), &["sql", "--archive", "db", "-c", "SELECT 0", "-f", "q.sql"]);
    assert_eq!(file.status.code(), Some(1));
    assert!(
        stderr(&file).contains(&format!("q.sql: line 2: `.tables` {says}")),
        "{}",
        stderr(&file)
    );
    assert!(file.stdout.is_empty());
    // An alias names the command it stands for; a dot that is no command is DuckDB's error.
    let quit = run(tmp.path(), &["sql", "--archive", "db", "-c", ".exit"]);
    assert!(stderr(&quit).contains("-c: line 1: `.quit` is a command"), "{}", stderr(&quit));
    let other = run(tmp.path(), &["sql", "--archive", "db", "-c", ".nothing"]);
    assert_eq!(other.status.code(), Some(1));
    assert!(stderr(&other).contains("Parser Error"), "{}", stderr(&other));
}

#[test]
fn show_tables_lists_the_tables_and_analyses_not_tracedbs_helpers() {
    // It listed eleven `_empty_<table>`, `_deadline_eval` and `_recorded_misses` among them.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let listed = csv(tmp.path(), "db", "SHOW TABLES");
    let names: Vec<&str> = listed.lines().skip(1).collect();
    assert!(names.iter().all(|n| !n.starts_with('_')), "{names:?}");
    for n in ["events", "instances", "captures", "param_deadlines", "deadline_misses"] {
        assert!(names.contains(&n), "{n} missing: {names:?}");
    }
    // The deadline analyses, which read the helpers, still answer.
    let late = ok(
        tmp.path(),
        &[
            "sql",
            "--archive",
            "db",
            "--format",
            "csv",
            "-c",
            "INSERT INTO param_deadlines VALUES ('TASK_A', 10)",
            "-c",
            "SELECT entity, lateness FROM deadline_misses",
            "-c",
            "SELECT entity, misses FROM deadline_summary",
        ],
    );
    assert_eq!(
        late.replace("\r\n", "\n"),
        "Count\n1\nentity,lateness\nTASK_A,20\nentity,misses\nTASK_A,1\n"
    );
}

#[test]
fn captures_as_json_has_tags_as_an_object_and_sources_as_an_array() {
    // They were strings holding JSON text: `jq '.[0].source_files[0]'` failed.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "--tag", "rig=a,b", "good.btf"]);
    let json = ok(tmp.path(), &["captures", "--archive", "db", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["tags"], serde_json::json!({"rig": "a,b"}), "{json}");
    assert_eq!(v[0]["source_files"], serde_json::json!(["good.btf"]), "{json}");
    // CSV keeps the JSON text, one field each.
    let csv = ok(tmp.path(), &["captures", "--archive", "db", "--format", "csv"]);
    assert!(csv.contains(",\"{\"\"rig\"\":\"\"a,b\"\"}\",\"[\"\"good.btf\"\"]\","), "{csv}");
}

#[test]
fn a_full_standard_output_is_an_error_that_says_so() {
    // Unlike a closed pipe, a write that fails (a full disk) loses results: exit status 1,
    // and the message says where (it was "No space left on device", naming nothing).
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let out = Command::new(util::bin())
        .args(["sql", "--archive", "db", "--format", "csv", "-c", "SELECT 1"])
        .current_dir(tmp.path())
        .env_remove("TRACEDB_ARCHIVE")
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("standard output: No space left on device"), "{}", stderr(&out));
}

#[test]
fn ingest_dash_reads_standard_input() {
    // It was "-: No such file or directory" (exit 1), where `sql -f -` reads standard input.
    let tmp = tempfile::tempdir().unwrap();
    let out =
        util::run_with_stdin(tmp.path(), &["ingest", "--archive", "db", "-"], GOOD.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("capture 1 'stdin' (btf): 3 events"), "{}", stderr(&out));
    assert_eq!(csv(tmp.path(), "db", "SELECT count(*) AS n FROM instances"), "n\n1\n");
    let gz = util::gzip(GOOD.as_bytes());
    let args = ["ingest", "--archive", "db", "--name", "piped", "--force", "-"];
    let out = util::run_with_stdin(tmp.path(), &args, &gz);
    assert!(stderr(&out).contains("capture 2 'piped' (btf): 3 events"), "{}", stderr(&out));
    // Standard input can be read once.
    let out = util::run_with_stdin(tmp.path(), &["ingest", "--archive", "db", "-", "-"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("- (standard input) is given twice"), "{}", stderr(&out));
}

#[test]
fn the_help_names_every_input_format() {
    let tmp = tempfile::tempdir().unwrap();
    // It said "Ingest BTF traces", though Paraver and ovni output are read too.
    let help = ok(tmp.path(), &["--help"]);
    let about = help.split("Usage:").next().unwrap();
    for format in
        ["BTF", "Paraver .prv", "ovni", "QS", "S.Ha.R.K.", "UDP", "hardware-trace", ".gz", ".zst"]
    {
        assert!(about.contains(format), "{format} is not named:\n{about}");
    }
    assert!(!about.contains("Ingest BTF traces"), "{about}");
}

#[test]
fn sql_reads_c_f_and_stdin_and_formats_agree() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let q = "SELECT entity, response_time, net_exec, complete FROM instances";
    let as_csv = csv(tmp.path(), "db", q);
    assert_eq!(as_csv, "entity,response_time,net_exec,complete\nTASK_A,30,20,true\n");
    let as_json = ok(tmp.path(), &["sql", "--archive", "db", "--format", "json", "-c", q]);
    let v: serde_json::Value = serde_json::from_str(&as_json).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{"entity": "TASK_A", "response_time": 30, "net_exec": 20, "complete": true}])
    );
    let table = ok(tmp.path(), &["sql", "--archive", "db", "-c", q]);
    assert!(table.contains("TASK_A |            30 |       20 | true"), "{table}");

    // Two statements in one -c, a -f file, and piped stdin; a ';' inside a string is kept.
    let two = csv(tmp.path(), "db", "SELECT 1 AS a; SELECT 'x;y' AS b");
    assert_eq!(two, "a\n1\nb\nx;y\n");
    std::fs::write(tmp.path().join("q.sql"), "-- a comment\nSELECT count(*) AS n FROM events\n")
        .unwrap();
    let f = ok(tmp.path(), &["sql", "--archive", "db", "--format", "csv", "-f", "q.sql"]);
    assert_eq!(f.replace("\r\n", "\n"), "n\n3\n");
    let out = util::run_with_stdin(
        tmp.path(),
        &["sql", "--archive", "db", "--format", "csv"],
        b"SELECT 2 AS two;\nSELECT 3 AS three;\n",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"), "two\n2\nthree\n3\n");

    let bad = run(tmp.path(), &["sql", "--archive", "db", "-c", "SELEC 1"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).to_lowercase().contains("syntax error"), "{}", stderr(&bad));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let sql = "SELECT range AS n FROM range(2000000)";
    let (first, out) = util::first_line_then_close(
        tmp.path(),
        &["sql", "--archive", "db", "--format", "csv", "-c", sql],
    );
    assert_eq!(first.trim_end(), "n");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

#[test]
fn a_closed_stderr_loses_the_messages_not_the_work() {
    let tmp = tempfile::tempdir().unwrap();
    // Three different files (identical ones would be skipped as already stored).
    for (f, end) in [("a.btf", "30,"), ("b.btf", "31,"), ("c.btf", "32,")] {
        std::fs::write(tmp.path().join(f), GOOD.replace("30,", end)).unwrap();
    }
    // Standard error is a pipe nobody reads (`2>&1 | head -1` once head is gone): each
    // summary line fails to be written. That used to panic (exit 101) after the first
    // file, leaving the other two out.
    let closed_stderr = |args: &[&str]| {
        let mut child = Command::new(util::bin())
            .args(args)
            .current_dir(tmp.path())
            .env_remove("TRACEDB_ARCHIVE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        child.wait_with_output().unwrap()
    };
    let out = closed_stderr(&["ingest", "--archive", "db", "a.btf", "b.btf", "c.btf"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM captures"), "3");
    // An error still gives its exit status, with no one to read its message.
    let out = closed_stderr(&["sql", "--archive", "db", "-c", "selec"]);
    assert_eq!(out.status.code(), Some(1));
    let out = closed_stderr(&["rm", "--archive", "db", "a"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        scalar(tmp.path(), "db", "SELECT string_agg(name, ' ' ORDER BY name) FROM captures"),
        "b c"
    );
}

#[test]
fn a_table_piped_into_head_stops_when_head_does() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    // The table's 10,000 rows are printed as soon as they are known; counting the rest
    // stops once the reader has gone, long before the row that would fail the query.
    let sql = "SELECT CASE WHEN range < 200000000 THEN range ELSE error('counted on') END AS n \
               FROM range(1000000000)";
    let (first, out) =
        util::first_line_then_close(tmp.path(), &["sql", "--archive", "db", "-c", sql]);
    assert_eq!(first.trim(), "n");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

#[test]
fn each_file_is_its_own_capture() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.btf"), GOOD).unwrap();
    std::fs::write(tmp.path().join("b.btf"), GOOD.replace("30,", "35,")).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "a.btf", "b.btf"]);
    assert_eq!(
        csv(tmp.path(), "db", "SELECT capture_id, name, count(*) AS events FROM captures JOIN events USING (capture_id) GROUP BY ALL ORDER BY 1"),
        "capture_id,name,events\n1,a,3\n2,b,3\n"
    );
    let named = run(tmp.path(), &["ingest", "--archive", "db", "--name", "x", "a.btf", "b.btf"]);
    assert_eq!(named.status.code(), Some(2));
    // A name that is a number would read as a capture id.
    let numeric = run(tmp.path(), &["ingest", "--archive", "db", "--name", "7", "a.btf"]);
    assert_eq!(numeric.status.code(), Some(2));
    assert!(stderr(&numeric).contains("cannot be a number"), "{}", stderr(&numeric));
}

#[test]
fn a_default_name_is_never_a_number() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("5.btf"), GOOD).unwrap();
    std::fs::write(tmp.path().join("7"), GOOD.replace("30,", "31,")).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "5.btf", "7"]);
    // `/dev/fd/0` is what `ingest <(zcat t.btf.gz)` gives (`/dev/fd/63`).
    let piped = util::run_with_stdin(
        tmp.path(),
        &["ingest", "--archive", "db", "/dev/fd/0"],
        GOOD.replace("30,", "32,").as_bytes(),
    );
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(
        csv(tmp.path(), "db", "SELECT capture_id, name FROM captures ORDER BY 1"),
        "capture_id,name\n1,5.btf\n2,capture-7\n3,capture-0\n"
    );
    // Named '5', capture 1 could not be removed by name: `rm 5` read 5 as an id.
    let out = run(tmp.path(), &["rm", "--archive", "db", "5.btf"]);
    assert!(stderr(&out).contains("removed capture 1 '5.btf'"), "{}", stderr(&out));
}

#[test]
fn the_table_form_prints_ten_thousand_rows_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("t.btf"), "#version 2.1\n0,S,0,T,A,0,activate\n").unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let sql = "SELECT range AS n FROM range(25000)";
    let table = ok(tmp.path(), &["sql", "--archive", "db", "-c", sql]);
    assert!(
        table.trim_end().ends_with("(25000 rows, 15000 not shown)"),
        "{}",
        &table[table.len() - 200..]
    );
    assert_eq!(
        table.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(),
        10_000
    );
    // csv (and json) print every row.
    let csv = ok(tmp.path(), &["sql", "--archive", "db", "--format", "csv", "-c", sql]);
    assert_eq!(csv.split("\r\n").filter(|l| !l.is_empty()).count(), 25_001);
}

#[test]
fn sql_errors_name_the_script_and_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    // The failing statement starts on line 3, after a comment, and its error is on its
    // second line.
    std::fs::write(
        tmp.path().join("q.sql"),
        "SELECT 1;\n-- no such table\nSELECT entity\n  FROM nowhere;\n",
    )
    .unwrap();
    let bad = run(tmp.path(), &["sql", "--archive", "db", "-f", "q.sql"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert!(err.contains("q.sql: line 4: Catalog Error"), "{err}");
    assert!(err.contains("LINE 4:   FROM nowhere"), "{err}");
    let second =
        run(tmp.path(), &["sql", "--archive", "db", "-c", "SELECT 1", "-c", "SELECT\n'a'::INT"]);
    assert!(stderr(&second).contains("-c #2: line 2: Conversion Error"), "{}", stderr(&second));

    // -c and -f run in the order given.
    std::fs::write(tmp.path().join("t.sql"), "CREATE TABLE t AS SELECT 7 AS x").unwrap();
    let ordered = ok(
        tmp.path(),
        &[
            "sql",
            "--archive",
            "db",
            "--format",
            "csv",
            "-c",
            "SELECT 1 AS one",
            "-f",
            "t.sql",
            "-c",
            "FROM t",
        ],
    );
    assert_eq!(ordered.replace("\r\n", "\n"), "one\n1\nCount\n1\nx\n7\n");

    // `-f -` reads standard input, which errors call <stdin>.
    let out = util::run_with_stdin(
        tmp.path(),
        &["sql", "--archive", "db", "-f", "-"],
        b"SELECT 2;\nSELEC 3;\n",
    );
    assert!(stderr(&out).contains("<stdin>: line 2: Parser Error"), "{}", stderr(&out));

    // A statement that fails in its first rows prints nothing: no lone CSV header, no
    // unclosed JSON `[`; the statements before it print in full.
    for format in ["csv", "json", "table"] {
        let failed = run(
            tmp.path(),
            &[
                "sql",
                "--archive",
                "db",
                "--format",
                format,
                "-c",
                "SELECT 5 AS five",
                "-c",
                "SELECT CAST(x AS INT) AS zzz FROM (VALUES ('z'), ('1')) t(x)",
            ],
        );
        assert_eq!(failed.status.code(), Some(1), "{format}");
        assert!(stderr(&failed).contains("Conversion Error"), "{format}: {}", stderr(&failed));
        let alone = ok(
            tmp.path(),
            &["sql", "--archive", "db", "--format", format, "-c", "SELECT 5 AS five"],
        );
        assert_eq!(String::from_utf8_lossy(&failed.stdout), alone, "{format}");
    }

    // Statements that answer only with a status print nothing, in any form.
    let quiet = "CREATE TABLE t AS SELECT 1 AS a; DROP TABLE t; SET threads = 1; \
                 ATTACH ':memory:' AS m; DETACH m; BEGIN; COMMIT";
    for format in ["table", "csv", "json"] {
        let out = ok(tmp.path(), &["sql", "--archive", "db", "--format", format, "-c", quiet]);
        assert!(!out.contains("Success"), "{format}: {out}");
    }
}

#[test]
fn lists_structs_and_maps_are_json_values_and_keep_their_nulls() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let q = "SELECT [1, NULL, 3] AS l, {'a': 1, 'b': [NULL, 'x']} AS s, MAP {'k': 2} AS m, \
             NULL::INT[] AS n, ['nan'::DOUBLE] AS f";
    let json = ok(tmp.path(), &["sql", "--archive", "db", "--format", "json", "-c", q]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{"l": [1, null, 3], "s": {"a": 1, "b": [null, "x"]}, "m": {"k": 2},
                            "n": null, "f": [null]}])
    );
    // In text (csv, table) DuckDB spells them whole, as its own CLI and CAST do.
    assert_eq!(
        csv(tmp.path(), "db", q),
        "l,s,m,n,f\n\"[1, NULL, 3]\",\"{'a': 1, 'b': [NULL, x]}\",{k=2},,[nan]\n"
    );
}

#[test]
fn json_columns_are_json_values_in_json_output() {
    // A column of type JSON was a string holding its text: `jq '.[0].j.a'` failed.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let q = "SELECT '{\"a\": [1, 2]}'::JSON AS j, to_json('nan'::DOUBLE) AS n, \
             NULL::JSON AS z, '{\"a\": 1}' AS text, now()::JSON IS NOT NULL AS cast_too";
    let json = ok(tmp.path(), &["sql", "--archive", "db", "--format", "json", "-c", q]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    // NaN is not JSON: it stays a string. A VARCHAR holding JSON text stays a string.
    assert_eq!(
        v,
        serde_json::json!([{"j": {"a": [1, 2]}, "n": "NaN", "z": null, "text": "{\"a\": 1}",
                            "cast_too": true}])
    );
    // In text the JSON is its text, one CSV field.
    assert_eq!(csv(tmp.path(), "db", "SELECT '{\"a\": 1}'::JSON AS j"), "j\n\"{\"\"a\"\": 1}\"\n");
}

#[test]
fn lists_and_blobs_in_text_tell_their_values_apart() {
    // Arrow's text made a list of one string with a comma look like two strings, the string
    // 'NULL' like a NULL and an empty string vanish; a BLOB was hex. DuckDB quotes what needs
    // it, and spells a BLOB with `\x` escapes for the bytes that are not printable text.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    let q = "SELECT ['a,b'] AS one, ['a', 'b'] AS two, ['NULL', NULL, ''] AS n, \
             {'k': ' x '} AS s, '\\xAB'::BLOB AS b, ['abc'::BLOB] AS lb";
    assert_eq!(
        csv(tmp.path(), "db", q),
        "one,two,n,s,b,lb\n\"['a,b']\",\"[a, b]\",\"['NULL', NULL, '']\",{'k': ' x '},\\xAB,[abc]\n"
    );
    let table = ok(tmp.path(), &["sql", "--archive", "db", "-c", q]);
    assert!(table.contains(" ['a,b'] | [a, b] | ['NULL', NULL, ''] |"), "{table}");
    // JSON keeps lists as arrays; a BLOB is DuckDB's text there too.
    let json = ok(tmp.path(), &["sql", "--archive", "db", "--format", "json", "-c", q]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{"one": ["a,b"], "two": ["a", "b"], "n": ["NULL", null, ""],
                            "s": {"k": " x "}, "b": "\\xAB", "lb": ["abc"]}])
    );
}

#[test]
fn values_print_as_duckdb_spells_them_or_the_statement_fails() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    // Arrow printed BIT as its storage bytes (05fd), infinity as `ERROR: Cast error` in the
    // data with exit status 0, and dropped TIMETZ's offset.
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT '101'::BIT b, 'infinity'::DATE d, 'infinity'::TIMESTAMP t, \
             '10:00:00+02'::TIMETZ tz, '24:00:00'::TIME t24, \
             INTERVAL '1 month 2 days 3 seconds' i, '-infinity'::TIMESTAMP_NS tn"
        ),
        "b,d,t,tz,t24,i,tn\n101,infinity,infinity,10:00:00+02,24:00:00,1 month 2 days 00:00:03,\
         -infinity\n"
    );
    // TIMESTAMPTZ failed whole ("Invalid timezone \"UTC\""); without a time zone database it
    // is in UTC.
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT to_timestamp(1) AS t, '2024-01-02 03:04:05.5'::TIMESTAMP AS u"
        ),
        "t,u\n1970-01-01 00:00:01+00,2024-01-02 03:04:05.5\n"
    );
    for sql in ["SELECT now()", "SELECT current_timestamp"] {
        let now = csv(tmp.path(), "db", sql);
        assert!(now.trim_end().ends_with("+00") && now.contains(" "), "{sql}: {now}");
    }
    // Other columns are untouched, names may repeat, and the order stays.
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT '2024-01-01'::DATE + r::INT AS d, r AS d FROM range(3) t(r) ORDER BY r DESC"
        ),
        "d,d\n2024-01-03,2\n2024-01-02,1\n2024-01-01,0\n"
    );
    // Inside lists and structs too, which stay arrays and objects in JSON.
    let json = ok(
        tmp.path(),
        &[
            "sql",
            "--archive",
            "db",
            "--format",
            "json",
            "-c",
            "SELECT [to_timestamp(1), NULL] AS l, {'a': 'infinity'::DATE, 'b': 1} AS s, 2 AS n",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{"l": ["1970-01-01 00:00:01+00", null], "s": {"a": "infinity", "b": 1},
                            "n": 2}])
    );
    // An error as the rows are made names the script's own line, not the query around it.
    std::fs::write(
        tmp.path().join("q.sql"),
        "SELECT 1 AS x;\nSELECT r,\n  r::DATE AS d FROM range(2) t(r);\n",
    )
    .unwrap();
    let bad = run(tmp.path(), &["sql", "--archive", "db", "-f", "q.sql"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("q.sql: line 3: Conversion Error"), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("LINE 3:   r::DATE AS d"), "{}", stderr(&bad));
    assert!(!stderr(&bad).contains("tracedb_result"), "{}", stderr(&bad));
    // What is not a query cannot be cast: a value it cannot show fails the statement, named.
    let returning = run(
        tmp.path(),
        &[
            "sql",
            "--archive",
            "db",
            "--format",
            "csv",
            "-c",
            "CREATE TABLE z (d DATE)",
            "-c",
            "INSERT INTO z VALUES ('infinity') RETURNING d",
        ],
    );
    assert_eq!(returning.status.code(), Some(1));
    let out = String::from_utf8_lossy(&returning.stdout);
    assert!(!out.contains("ERROR"), "no error printed as a value: {out}");
    assert!(
        stderr(&returning)
            .contains("-c #2: line 1: column d: a value of type date cannot be shown"),
        "{}",
        stderr(&returning)
    );
}

#[test]
fn btf_quirks_older_isr_code_stray_nul_forced_format_empty_type_first_preempt() {
    let tmp = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &[u8]| std::fs::write(tmp.path().join(name), text).unwrap();
    // `ISR` is the older files' code for `I`: it interrupts A as an `I` would.
    w(
        "isr.btf",
        b"#version 2.1.0\n0,STI_A,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n\
          20,STI_I,0,ISR,I1,0,activate\n20,Core_0,0,ISR,I1,0,start\n\
          30,Core_0,0,ISR,I1,0,terminate\n40,Core_0,0,T,A,0,terminate\n",
    );
    // One NUL in a line near the top is that line's problem, not the file's.
    w(
        "nul.btf",
        b"#version 2.1.0\n0,STI_A,0,T,A,0,activate\n5,Core_0,0,T,A,0,st\0art\n\
          10,Core_0,0,T,A,0,start\n20,Core_0,0,T,A,0,terminate\n",
    );
    // The type A has elsewhere fills an empty type field; unknown yet, the event stays.
    w(
        "notype.btf",
        b"#version 2.1.0\n0,STI_A,0,,A,0,activate\n5,Core_0,0,T,A,0,start\n\
          6,Core_0,0,,A,0,preempt\n7,Core_0,0,T,A,0,resume\n8,Core_0,0,T,A,0,terminate\n",
    );
    // A running before the capture: its first event, a preempt, is a preemption too.
    w(
        "pre.btf",
        b"#version 2.1.0\n10,Core_0,0,T,A,0,preempt\n20,Core_0,0,T,A,0,resume\n\
          30,Core_0,0,T,A,0,preempt\n40,Core_0,0,T,A,0,resume\n50,Core_0,0,T,A,0,terminate\n",
    );
    // CR-only line ends (old Mac, some embedded loggers) end lines too.
    w(
        "cr.btf",
        b"#version 2.1.0\r#timeScale ns\r0,STI_A,0,T,A,0,activate\r10,Core_0,0,T,A,0,start\r\
          20,Core_0,0,T,A,0,terminate\r",
    );
    ok(
        tmp.path(),
        &["ingest", "--archive", "db", "isr.btf", "nul.btf", "notype.btf", "pre.btf", "cr.btf"],
    );
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT capture_id, entity, net_exec, ready_time, preemptions, complete FROM instances \
             ORDER BY ALL"
        ),
        "capture_id,entity,net_exec,ready_time,preemptions,complete\n1,A,20,10,1,true\n\
         1,I1,10,0,0,true\n2,A,10,0,0,true\n3,A,2,1,1,false\n4,A,20,20,2,false\n\
         5,A,10,0,0,true\n"
    );
    assert_eq!(
        csv(
            tmp.path(),
            "db",
            "SELECT capture_id, severity, position FROM diagnostics \
             WHERE kind = 'missing_type' ORDER BY ALL"
        ),
        "capture_id,severity,position\n3,info,notype.btf:4\n3,warning,notype.btf:2\n"
    );
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events WHERE capture_id = 3"), "5");
    // --format btf forces it: a file whose first lines are malformed still gives its events.
    w("forced.btf", b"1,a\n2,b\n3,Core_0,0,T,A,0,start\n4,Core_0,0,T,A,0,terminate\n");
    assert_eq!(
        run(tmp.path(), &["ingest", "--archive", "db", "forced.btf"]).status.code(),
        Some(1)
    );
    ok(tmp.path(), &["ingest", "--archive", "db", "--format", "btf", "forced.btf"]);
    assert_eq!(
        scalar(tmp.path(), "db", "SELECT count(*) FROM diagnostics WHERE kind = 'malformed_line'"),
        "2"
    );
}

#[path = "../src/ingest/zip/testzip.rs"]
#[allow(dead_code, clippy::cast_possible_truncation)]
mod testzip;

#[test]
fn bzip2_xz_and_zip_inputs_read_as_the_plain_file_and_rebuild_from_their_kept_copy() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/btf/ecu-4cores.btf.gz");
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&sample).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    bz.write_all(&plain).unwrap();
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
    xz.write_all(&plain).unwrap();
    let zip = testzip::archive(
        &[testzip::entry("ecu/", b"", 0), testzip::entry("ecu/ecu-4cores.btf", &plain, 8)],
        false,
    );
    std::fs::write(d.join("ecu.btf"), &plain).unwrap();
    std::fs::write(d.join("ecu.btf.bz2"), bz.finish().unwrap()).unwrap();
    std::fs::write(d.join("ecu.btf.xz"), xz.finish().unwrap()).unwrap();
    std::fs::write(d.join("ecu.zip"), &zip).unwrap();
    for f in ["ecu.btf", "ecu.btf.bz2", "ecu.btf.xz", "ecu.zip"] {
        ok(d, &["ingest", "--archive", "db", "--force", f]);
    }
    // One name (the compression's ending goes as `.gz`'s does), and the same tables.
    let names = csv(d, "db", "SELECT DISTINCT name FROM captures");
    assert_eq!(names, "name\necu\n");
    let per_capture = "SELECT capture_id, (SELECT count(*) FROM events e WHERE e.capture_id = \
                       c.capture_id), (SELECT sum(hash(ts, source, target, action, note)) FROM \
                       events e WHERE e.capture_id = c.capture_id), (SELECT count(*) FROM \
                       instances i WHERE i.capture_id = c.capture_id) FROM captures c ORDER BY 1";
    let rows = csv(d, "db", per_capture);
    let rows: Vec<&str> = rows.lines().skip(1).map(|l| l.split_once(',').unwrap().1).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| *r == rows[0]), "{rows:?}");
    assert!(rows[0].starts_with("34357,"), "{}", rows[0]);
    // The compressed files are kept as they came, verified, and rebuilt from.
    assert!(d.join("db/sources/capture_id=4/ecu.zip").is_file());
    ok(d, &["verify", "--archive", "db"]);
    ok(d, &["reingest", "--archive", "db", "--all"]);
    assert_eq!(csv(d, "db", per_capture).lines().count(), 5);
    let again = csv(d, "db", per_capture);
    assert!(again.lines().skip(1).all(|l| l.split_once(',').unwrap().1 == rows[0]), "{again}");

    // A zip of several files names them; a cut one keeps the lines before the cut.
    let two = testzip::archive(
        &[testzip::entry("t.prv", b"x", 8), testzip::entry("t.pcf", b"y", 8)],
        false,
    );
    std::fs::write(d.join("two.zip"), two).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "two.zip"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("two.zip: zip archive holds 2 files (t.prv, t.pcf)"),
        "{}",
        stderr(&out)
    );
    // A tar (here of one BTF file, gzip-compressed) is refused rather than read with its
    // headers as lines; --format reads it anyway.
    let mut tar = vec![0u8; 512];
    tar[..7].copy_from_slice(b"ecu.btf");
    tar[257..263].copy_from_slice(b"ustar\0");
    tar.extend_from_slice(&plain);
    tar.resize(tar.len().div_ceil(512) * 512 + 1024, 0);
    std::fs::write(d.join("ecu.tar.gz"), util::gzip(&tar)).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "ecu.tar.gz"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("ecu.tar.gz: a tar archive: extract it"), "{}", stderr(&out));
    ok(d, &["ingest", "--archive", "db", "--format", "BTF", "ecu.tar.gz"]);
    std::fs::write(d.join("cut.zip"), &zip[..zip.len() / 2]).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "cut.zip"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 input_truncated (data_loss)"), "{}", stderr(&out));
    let kept = scalar(
        d,
        "db",
        "SELECT count(*) FROM events JOIN captures USING (capture_id) WHERE name = 'cut'",
    );
    assert!(kept.parse::<u64>().unwrap() > 1000, "{kept} events kept before the cut");
}

/// A deadline file none of whose patterns names a task or ISR of a capture is said at
/// ingest (one command may ingest captures of several systems with one file); a file that
/// names one of its tasks, by name or glob, is not.
#[test]
fn ingest_says_when_no_deadline_pattern_names_a_task_of_the_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let btf = |task: &str| {
        format!(
            "#version 2.1.0\n0,STI_A,0,T,{task},0,activate\n10,Core_0,0,T,{task},0,start\n\
             30,Core_0,0,T,{task},0,terminate\n"
        )
    };
    std::fs::write(d.join("a.btf"), btf("TASK_A")).unwrap();
    std::fs::write(d.join("b.btf"), btf("OTHER")).unwrap();
    std::fs::write(d.join("d.csv"), "TASK_*,5ns\nSTI_A,1ns\n").unwrap();
    let out = run(d, &["ingest", "--archive", "db", "--deadlines", "d.csv", "a.btf", "b.btf"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let note = "note: no pattern of --deadlines d.csv names a task or ISR of this capture: its \
                deadlines stay implicit (the activation period)";
    assert!(!err.contains(&format!("a.btf: {note}")), "{err}");
    assert!(err.contains(&format!("b.btf: {note}")), "{err}");
    // The rules are stored all the same: a query-time file may still be of use.
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM deadlines WHERE capture_id = 2"), "2");
}
