//! The predefined analyses through the command line: documentation matches output, CSV and
//! JSON agree, deadline files at ingest and at query time, --capture, errors.
use crate::util::{self, ok, run};
use std::path::Path;

fn sample(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/btf/ecu-4cores.btf.gz");
    // --force: some tests want the same capture twice.
    ok(dir, &["ingest", "--archive", "db", "--force", src.to_str().unwrap()]);
}

/// Minimal RFC 4180 reader (quoted fields with commas and doubled quotes).
pub(crate) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.split("\r\n").filter(|l| !l.is_empty()) {
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => fields.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        fields.push(cur);
        rows.push(fields);
    }
    rows
}

fn names() -> Vec<String> {
    tracedb::store::queries::catalog().into_iter().map(|q| q.name).collect()
}

#[test]
fn every_analysis_runs_and_csv_equals_json() {
    let tmp = tempfile::tempdir().unwrap();
    sample(tmp.path());
    assert!(names().len() >= 14);
    for q in tracedb::store::queries::catalog() {
        let csv = ok(tmp.path(), &["query", &q.name, "--archive", "db", "--format", "csv"]);
        let rows = parse_csv(&csv);
        let header = &rows[0];
        let documented: Vec<&String> = q.columns.iter().map(|c| &c.0).collect();
        assert_eq!(
            header.iter().collect::<Vec<_>>(),
            documented,
            "{}: @column list = output columns, in order",
            q.name
        );
        let json = ok(tmp.path(), &["query", &q.name, "--archive", "db", "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let objs = v.as_array().unwrap();
        assert_eq!(objs.len(), rows.len() - 1, "{}: same row count", q.name);
        for (obj, row) in objs.iter().zip(&rows[1..]) {
            let obj = obj.as_object().unwrap();
            assert_eq!(
                obj.keys().collect::<Vec<_>>(),
                header.iter().collect::<Vec<_>>(),
                "{}: json keys in order",
                q.name
            );
            for (name, cell) in header.iter().zip(row) {
                let j = &obj[name];
                let as_text = match j {
                    serde_json::Value::Null => String::new(),
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                assert_eq!(&as_text, cell, "{}.{name}: csv and json differ", q.name);
            }
        }
        assert!(!csv.contains("e+") && !csv.contains("E+"), "{}: no scientific notation", q.name);
    }
}

#[test]
fn analyses_are_also_sql_objects_and_filter_by_capture() {
    let tmp = tempfile::tempdir().unwrap();
    sample(tmp.path());
    sample(tmp.path());
    let all = ok(tmp.path(), &["query", "preemptions", "--archive", "db", "--format", "csv"]);
    let one = ok(
        tmp.path(),
        &["query", "preemptions", "--archive", "db", "--format", "csv", "--capture", "2"],
    );
    let all_rows = parse_csv(&all);
    let one_rows = parse_csv(&one);
    assert_eq!(all_rows.len() - 1, 2 * (one_rows.len() - 1));
    assert!(one_rows[1..].iter().all(|r| r[0] == "2"));
    let joined = util::scalar(
        tmp.path(),
        "db",
        "SELECT count(*) FROM response_times r JOIN preemptions p USING (capture_id, entity) WHERE r.instances > 0",
    );
    assert_ne!(joined, "0");
    let load = util::scalar(
        tmp.path(),
        "db",
        "SELECT max(load) <= 1 AND min(load) >= 0 FROM cpu_load(window_ns := 5000000)",
    );
    assert_eq!(load, "true");
    // Two captures share the name: it names neither (as for rm, export, reingest, report).
    let by_name =
        run(tmp.path(), &["query", "preemptions", "--archive", "db", "--capture", "ecu-4cores"]);
    assert_eq!(by_name.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&by_name.stderr).contains("give the id"));
}

/// `--capture` takes an id, a name or a tag: in `query` a tag (or the option repeated)
/// selects several captures, cpu_load included (it computes one capture alone when given
/// one); the commands of one capture take a tag only one capture has and name the ids when
/// several have it.
#[test]
fn captures_are_chosen_by_id_name_or_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (n, (file, tag)) in [("a.btf", "day=sun"), ("b.btf", "day=mon"), ("c.btf", " day = mon ")]
        .into_iter()
        .enumerate()
    {
        let end = 10 * (n + 1);
        let trace = format!(
            "0,S,0,T,T{n},0,activate\n0,Core_0,0,T,T{n},0,start\n{end},Core_0,0,T,T{n},0,terminate\n"
        );
        std::fs::write(d.join(file), trace).unwrap();
        ok(d, &["ingest", "--archive", "db", "--tag", tag, file]);
    }
    let rows = |args: &[&str]| {
        let mut all = vec!["query", "response_times", "--archive", "db", "--format", "csv"];
        all.extend(args);
        let out = ok(d, &all);
        let ids: Vec<String> = parse_csv(&out)[1..].iter().map(|r| r[0].clone()).collect();
        ids.join(" ")
    };
    assert_eq!(rows(&[]), "1 2 3");
    assert_eq!(rows(&["--capture", "day=mon"]), "2 3", "a tag selects every capture so tagged");
    assert_eq!(rows(&["--capture", "3", "--capture", "a"]), "1 3", "repeated: any of them");
    assert_eq!(rows(&["--capture", "day=mon", "--capture", "b"]), "2 3", "each capture once");
    let load = |capture: &str| {
        ok(
            d,
            &[
                "query",
                "cpu_load",
                "--archive",
                "db",
                "--format",
                "csv",
                "--param",
                "window=10ns",
                "--capture",
                capture,
            ],
        )
        .replace("\r\n", "\n")
    };
    assert_eq!(
        load("day=mon"),
        "capture_id,core,window_start,window_end,busy,load\n2,Core_0,0,10,10,1\n\
         2,Core_0,10,20,10,1\n3,Core_0,0,10,10,1\n3,Core_0,10,20,10,1\n3,Core_0,20,30,10,1\n"
    );
    assert_eq!(
        load("day=sun"),
        "capture_id,core,window_start,window_end,busy,load\n1,Core_0,0,10,10,1\n"
    );
    // A tag nobody has, and a tag two captures have where one capture is wanted.
    let none = run(d, &["query", "response_times", "--archive", "db", "--capture", "day=tue"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no capture tagged 'day=tue' in db"));
    for args in [
        &["rm", "day=mon", "--archive", "db"][..],
        &["export", "day=mon", "--to", "btf", "x.btf", "--archive", "db"],
        &["report", "-o", "r.md", "--capture", "day=mon", "--archive", "db"],
    ] {
        let two = run(d, args);
        assert_eq!(two.status.code(), Some(2), "{args:?}");
        let msg = String::from_utf8_lossy(&two.stderr);
        assert!(msg.contains("2 captures are tagged 'day=mon' (ids 2, 3); give the id"), "{msg}");
    }
    ok(d, &["export", "day=sun", "--to", "btf", "sun.btf", "--archive", "db"]);
    assert!(std::fs::read_to_string(d.join("sun.btf")).unwrap().contains(",T0,0,terminate"));
    ok(d, &["report", "-o", "r.md", "--capture", "day=sun", "--baseline", "b", "--archive", "db"]);
    ok(d, &["rm", "day=sun", "--archive", "db"]);
    assert_eq!(rows(&[]), "2 3");
}

#[test]
fn deadlines_from_ingest_and_from_the_query() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = "0,S,0,T,TASK_10MS,0,activate\n0,Core_0,0,T,TASK_10MS,0,start\n12,Core_0,0,T,TASK_10MS,0,terminate\n\
                 100,S,0,T,TASK_10MS,1,activate\n100,Core_0,0,T,TASK_10MS,1,start\n105,Core_0,0,T,TASK_10MS,1,terminate\n";
    std::fs::write(tmp.path().join("t.btf"), trace).unwrap();
    std::fs::write(tmp.path().join("d.csv"), "# deadlines\nTASK_*,10ns\n").unwrap();
    std::fs::write(tmp.path().join("strict.csv"), "TASK_10MS,4\n").unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "--deadlines", "d.csv", "t.btf"]);
    let q = |extra: &[&str]| {
        let mut args = vec!["query", "deadline_misses", "--archive", "db", "--format", "csv"];
        args.extend_from_slice(extra);
        parse_csv(&ok(tmp.path(), &args))
    };
    // Stored at ingest: 10 ns; instance 0 took 12.
    let rows = q(&[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1][2..].to_vec(), ["0", "0", "12", "12", "10", "file", "2"]);
    // A query-time file wins: 4 ns, both instances late.
    let rows = q(&["--param", "deadlines=strict.csv"]);
    let lateness: Vec<&str> = rows[1..].iter().map(|r| r[8].as_str()).collect();
    assert_eq!(lateness, ["8", "1"]);
    // Bad deadline file: exit 1 naming the line.
    std::fs::write(tmp.path().join("bad.csv"), "TASK_A,fast\n").unwrap();
    let bad = run(
        tmp.path(),
        &["query", "deadline_misses", "--archive", "db", "--param", "deadlines=bad.csv"],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("bad.csv: line 1"));
}

#[test]
fn unknown_analysis_or_parameter_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    sample(tmp.path());
    assert_eq!(run(tmp.path(), &["query", "nope", "--archive", "db"]).status.code(), Some(2));
    assert_eq!(
        run(tmp.path(), &["query", "cpu_load", "--archive", "db", "--param", "speed=1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(tmp.path(), &["query", "cpu_load", "--archive", "db", "--param", "window=soon"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(tmp.path(), &["query", "cpu_load", "--archive", "db", "--capture", "99"]).status.code(),
        Some(2)
    );
    // Windows so short they would make billions of rows are refused, in SQL too.
    let tiny = run(tmp.path(), &["query", "cpu_load", "--archive", "db", "--param", "window=1ns"]);
    assert_eq!(tiny.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&tiny.stderr)
            .contains("rows (windows × cores); at most 10,000,000 (use a longer window"),
        "{}",
        String::from_utf8_lossy(&tiny.stderr)
    );
    let zero = run(tmp.path(), &["sql", "--archive", "db", "-c", "FROM cpu_load(window_ns := 0)"]);
    assert!(String::from_utf8_lossy(&zero.stderr).contains("window_ns must be a positive"));
    let list = ok(tmp.path(), &["queries"]);
    for n in names() {
        assert!(list.contains(&n), "queries lists {n}");
    }
    // The short list names every analysis's columns too.
    assert!(list.contains("columns: capture_id, core, window_start"), "{list}");
    assert_eq!(list.matches("columns: ").count(), names().len(), "{list}");
    let one = ok(tmp.path(), &["queries", "cpu_load"]);
    assert!(
        one.contains("--param window=<duration> (default 1ms)") && one.contains("window_start"),
        "{one}"
    );
}

#[test]
fn freertos_response_times_say_what_was_left_out() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for f in ["freertos-1core.btf", "freertos-2cores.btf.gz", "freertos-4cores.btf.gz"] {
        ok(tmp.path(), &["ingest", "--archive", "db", root.join("btf").join(f).to_str().unwrap()]);
    }
    let rows = parse_csv(&ok(
        tmp.path(),
        &["query", "response_times", "--archive", "db", "--format", "csv"],
    ));
    assert!(rows.len() > 10);
    for r in &rows[1..] {
        assert_eq!(r[3], "0", "no complete instances without activations: {r:?}");
        assert_ne!(r[4], "0", "left out instances counted: {r:?}");
        assert_eq!(r[5], "", "no statistics from nothing: {r:?}");
    }
    // Every analysis runs on the real captures, with plausible values.
    for q in names() {
        ok(tmp.path(), &["query", &q, "--archive", "db", "--format", "csv"]);
    }
    let load = util::scalar(
        tmp.path(),
        "db",
        "SELECT count(*) FROM cpu_load() WHERE load > 1 OR load < 0",
    );
    assert_eq!(load, "0");
    let busy = util::scalar(tmp.path(), "db", "SELECT count(*) FROM cpu_load() WHERE load > 0");
    assert_ne!(busy, "0", "the FreeRTOS tasks (not IDLE) do load the cores");
    let pairs = util::scalar(tmp.path(), "db", "SELECT count(*) FROM preemption_pairs");
    assert_ne!(pairs, "0");
}

#[test]
fn blocking_and_preemptions_use_complete_instances_only() {
    let tmp = tempfile::tempdir().unwrap();
    // Instance 0 is complete (10 ns waiting, one preemption); instance 1 starts waiting
    // before the capture knows it (950 ns waiting, one preemption): left out.
    let trace = "0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n15,Core_0,0,T,A,0,preempt\n\
                 16,Core_0,0,T,A,0,resume\n20,Core_0,0,T,A,0,wait\n30,Core_0,0,T,A,0,release\n\
                 30,Core_0,0,T,A,0,resume\n40,Core_0,0,T,A,0,terminate\n\
                 50,Core_0,0,T,A,1,wait\n1000,Core_0,0,T,A,1,release\n1000,Core_0,0,T,A,1,resume\n\
                 1005,Core_0,0,T,A,1,preempt\n1006,Core_0,0,T,A,1,resume\n1010,Core_0,0,T,A,1,terminate\n";
    std::fs::write(tmp.path().join("t.btf"), trace).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |name: &str| {
        parse_csv(&ok(tmp.path(), &["query", name, "--archive", "db", "--format", "csv"]))
    };
    let b = q("blocking");
    assert_eq!(
        b[0][3..7],
        ["instances", "instances_left_out", "blocked_instances", "waiting_total"]
    );
    assert_eq!(b[1][3..9], ["1", "1", "1", "10", "10", "0"], "{b:?}");
    let p = q("preemptions");
    assert_eq!(p[0][3..6], ["instances", "instances_left_out", "preemptions"]);
    assert_eq!(p[1][3..6], ["1", "1", "1"], "{p:?}");
    // preemption_pairs counts every preemption the trace shows.
    let pairs = q("preemption_pairs");
    assert_eq!(pairs[1][4], "2", "{pairs:?}");
}

#[test]
fn a_deadline_for_a_name_with_glob_characters_matches_that_name() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = "0,S,0,T,[idle],0,activate\n1,Core_0,0,T,[idle],0,start\n50,Core_0,0,T,[idle],0,terminate\n\
                 100,S,0,T,[idle],1,activate\n101,Core_0,0,T,[idle],1,start\n180,Core_0,0,T,[idle],1,terminate\n";
    std::fs::write(tmp.path().join("t.btf"), trace).unwrap();
    std::fs::write(tmp.path().join("d.csv"), "[idle],20ns\n").unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let rows = parse_csv(&ok(
        tmp.path(),
        &[
            "query",
            "deadline_misses",
            "--archive",
            "db",
            "--format",
            "csv",
            "--param",
            "deadlines=d.csv",
        ],
    ));
    let lateness: Vec<&str> = rows[1..].iter().map(|r| r[8].as_str()).collect();
    assert_eq!(lateness, ["30", "60"], "{rows:?}");
}

#[test]
fn cpu_load_windows_of_negative_times_and_zero_length_occupancies() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("neg.btf"),
        "-150,STI,0,T,TA,0,activate\n-150,Core_0,0,T,TA,0,start\n-20,Core_0,0,T,TA,0,terminate\n\
         50,STI,0,T,TB,0,activate\n",
    )
    .unwrap();
    // TA resumes and is preempted again at 20 (zero length): I2 preempts it, not TA itself.
    std::fs::write(
        tmp.path().join("isr.btf"),
        "0,STI,0,T,TA,0,activate\n0,Core_0,0,T,TA,0,start\n10,STI,0,I,I1,0,activate\n\
         10,Core_0,0,T,TA,0,preempt\n10,Core_0,0,I,I1,0,start\n20,Core_0,0,I,I1,0,terminate\n\
         20,Core_0,0,T,TA,0,resume\n20,STI,0,I,I2,0,activate\n20,Core_0,0,T,TA,0,preempt\n\
         20,Core_0,0,I,I2,0,start\n30,Core_0,0,I,I2,0,terminate\n30,Core_0,0,T,TA,0,resume\n\
         40,Core_0,0,T,TA,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "neg.btf", "isr.btf"]);
    let load = parse_csv(&ok(
        tmp.path(),
        &[
            "query",
            "cpu_load",
            "--archive",
            "db",
            "--capture",
            "1",
            "--format",
            "csv",
            "--param",
            "window=100ns",
        ],
    ));
    let got: Vec<String> = load[1..].iter().map(|r| r[2..6].join(",")).collect();
    assert_eq!(got, ["-200,-100,50,0.5", "-100,0,80,0.8", "0,100,0,0"]);
    // isr.btf spans 0..40: with 20 ns windows it ends with the window 20..40, not with an
    // empty one starting at its last instant.
    let load = |window: &str| {
        let args = ["query", "cpu_load", "--archive", "db", "--capture", "2", "--format", "csv"];
        let rows = parse_csv(&ok(tmp.path(), &[&args[..], &["--param", window]].concat()));
        rows[1..].iter().map(|r| r[2..6].join(",")).collect::<Vec<_>>()
    };
    assert_eq!(load("window=20ns"), ["0,20,20,1", "20,40,20,1"]);
    assert_eq!(load("window=30ns"), ["0,30,30,1", "30,60,10,0.3333"]);
    let pairs = parse_csv(&ok(
        tmp.path(),
        &["query", "preemption_pairs", "--archive", "db", "--capture", "2", "--format", "csv"],
    ));
    let got: Vec<String> = pairs[1..].iter().map(|r| r[1..3].join(">")).collect();
    assert_eq!(got, ["TA>I1", "TA>I2"]);
}

#[test]
fn signal_values_follow_intervals_and_release_only_rows_are_not_requests() {
    let tmp = tempfile::tempdir().unwrap();
    // V: 1 at 10, 2 at 100, then 3 logged at 90 (out of order): 3 takes effect at 100.
    // T2 releases S twice without requesting it; T1 requests once. T3 logs wait_event only.
    std::fs::write(
        tmp.path().join("t.btf"),
        "10,T1,0,SIG,V,-1,write,1\n20,T1,0,SEM,S,0,requestsemaphore\n20,T1,0,SEM,S,0,assigned\n\
         25,T2,0,SEM,S,0,released\n26,T2,0,SEM,S,0,released\n30,T1,0,SEM,S,0,released\n\
         40,S,0,T,T3,0,activate\n40,Core_0,0,T,T3,0,start\n45,T3,0,EVENT,EV,-1,wait_event\n\
         50,Core_0,0,T,T3,0,terminate\n100,T1,0,SIG,V,-1,write,2\n90,T1,0,SIG,V,-1,write,3\n\
         200,S,0,STI,S,0,trigger\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |name: &str| {
        parse_csv(&ok(tmp.path(), &["query", name, "--archive", "db", "--format", "csv"]))
    };
    let sv: Vec<String> = q("signal_values")[1..].iter().map(|r| r[2..5].join(",")).collect();
    assert_eq!(sv, ["10,90,1", "100,0,2", "100,100,3"]);
    let sem = q("semaphore_contention");
    assert_eq!(sem[1][2], "1", "requests: {sem:?}");
    // T3 was never blocked (no wait state): no blocking_instances row.
    assert_eq!(q("blocking_instances").len(), 1);
}

#[test]
fn overfull_episodes_and_causes_of_a_reused_instance_number() {
    let tmp = tempfile::tempdir().unwrap();
    // S goes overfull once, its counter rising within the episode (2, then 3), then again.
    // TA's instance 0 runs twice (the numbering restarts): only the second one waits for S2.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,S,0,SEM,S,0,ready,0\n10,S,0,SEM,S,0,lock,1\n20,S,0,SEM,S,0,overfull,2\n\
         30,S,0,SEM,S,0,overfull,3\n40,S,0,SEM,S,0,full,1\n50,S,0,SEM,S,0,overfull,2\n\
         60,S,0,SEM,S,0,full,1\n70,S,0,SEM,S,0,unlock,0\n\
         100,STI,0,T,TA,0,activate\n101,Core_0,0,T,TA,0,start\n102,Core_0,0,T,TA,0,terminate\n\
         110,STI,0,T,TA,0,activate\n111,Core_0,0,T,TA,0,start\n\
         112,TA,0,SEM,S2,0,requestsemaphore\n112,TA,0,SEM,S2,0,waiting\n\
         115,TA,0,SEM,S2,0,assigned\n116,TA,0,SEM,S2,0,released\n120,Core_0,0,T,TA,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |name: &str| {
        parse_csv(&ok(tmp.path(), &["query", name, "--archive", "db", "--format", "csv"]))
    };
    let sem = q("semaphore_contention");
    let col = |name: &str| sem[0].iter().position(|c| c == name).unwrap();
    let s = sem.iter().find(|r| r[1] == "S").unwrap();
    assert_eq!(s[col("overfull_episodes")], "2", "{sem:?}");
    assert_eq!(s[col("overfull_time")], "30");
    let bi = q("blocking_instances");
    let col = |name: &str| bi[0].iter().position(|c| c == name).unwrap();
    let got: Vec<String> =
        bi[1..].iter().map(|r| format!("{}@{}", r[col("cause")], r[col("activate_ts")])).collect();
    assert_eq!(got, ["S2@110"], "{bi:?}");
}

/// A core declared with its type code in upper case (`CORE`) is a core: it has its rows in
/// `cpu_load` though nothing ran on it.
#[test]
fn cpu_load_lists_a_core_declared_in_upper_case() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.btf"),
        "#entityTypeTable\n#-CORE PE_0\n#-CORE PE_1\n6,STI_Y,0,T,T1,0,activate\n\
         7,PE_0,0,T,T1,0,start\n9,PE_0,0,T,T1,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT core, window_start, busy FROM cpu_load(window_ns := 4)"
        ),
        "core,window_start,busy\nPE_0,4,1\nPE_0,8,1\nPE_1,4,0\nPE_1,8,0\n"
    );
}

/// The process named for a semaphore's longest hold and largest total wait does not
/// depend on the order DuckDB meets the rows in: ties go to the one that began first, then
/// to the name. Overfull episodes are unknown (NULL), not 0, without the semaphore's states.
#[test]
fn semaphore_contention_breaks_ties_and_leaves_unknown_episodes_null() {
    let tmp = tempfile::tempdir().unwrap();
    // S: TA and TB hold for 10 each, TB first. Q: TY and TX hold it together for 10. W: TB
    // waits 3 then 2, TA 5 in between. V logs its states and never goes overfull.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,V,0,SEM,V,0,ready,0\n5,V,0,SEM,V,0,lock,1\n8,V,0,SEM,V,0,unlock,0\n\
         10,TB,0,SEM,S,0,requestsemaphore\n10,TB,0,SEM,S,0,assigned\n20,TB,0,SEM,S,0,released\n\
         30,TA,0,SEM,S,0,requestsemaphore\n30,TA,0,SEM,S,0,assigned\n40,TA,0,SEM,S,0,released\n\
         50,TY,0,SEM,Q,0,requestsemaphore\n50,TY,0,SEM,Q,0,assigned\n\
         50,TX,0,SEM,Q,0,requestsemaphore\n50,TX,0,SEM,Q,0,assigned\n\
         60,TY,0,SEM,Q,0,released\n60,TX,0,SEM,Q,0,released\n\
         90,TB,0,SEM,W,0,requestsemaphore\n90,TB,0,SEM,W,0,waiting\n93,TB,0,SEM,W,0,assigned\n\
         94,TB,0,SEM,W,0,released\n100,TA,0,SEM,W,0,requestsemaphore\n100,TA,0,SEM,W,0,waiting\n\
         105,TA,0,SEM,W,0,assigned\n106,TA,0,SEM,W,0,released\n\
         110,TB,0,SEM,W,0,requestsemaphore\n110,TB,0,SEM,W,0,waiting\n\
         112,TB,0,SEM,W,0,assigned\n113,TB,0,SEM,W,0,released\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let sem = parse_csv(&ok(
        tmp.path(),
        &["query", "semaphore_contention", "--archive", "db", "--format", "csv"],
    ));
    let col = |name: &str| sem[0].iter().position(|c| c == name).unwrap();
    let got: Vec<String> = sem[1..]
        .iter()
        .map(|r| {
            [col("semaphore"), col("longest_holding_process"), col("most_waiting_process")]
                .map(|c| r[c].as_str())
                .join(" ")
                + &format!(" episodes={}", r[col("overfull_episodes")])
        })
        .collect();
    assert_eq!(
        got,
        ["Q TX  episodes=", "S TB  episodes=", "V   episodes=0", "W TB TB episodes="],
        "{sem:?}"
    );
}

/// A `wait_event` is a cause of blocking only when its instance waited after it: one for an event already set returns at once, as an OS does,
/// and blocked nothing; nor does one the trace shows no wait for at all.
#[test]
fn a_wait_event_that_returns_at_once_is_no_cause() {
    let tmp = tempfile::tempdir().unwrap();
    // T1 waits for EV from 10 to 20, then waits for EV2, which was set: no wait. T3 logs a
    // wait_event and never waits.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n\
         10,T1,0,EVENT,EV,0,wait_event\n10,Core_0,0,T,T1,0,wait\n20,Core_0,0,T,T1,0,release\n\
         25,Core_0,0,T,T1,0,resume\n30,T1,0,EVENT,EV2,0,wait_event\n40,Core_0,0,T,T1,0,terminate\n\
         50,STI,0,T,T3,0,activate\n50,Core_1,0,T,T3,0,start\n55,T3,0,EVENT,EV,0,wait_event\n\
         60,Core_1,0,T,T3,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT entity, waiting_total, causes FROM blocking ORDER BY entity"),
        "entity,waiting_total,causes\nT1,10,EV\nT3,0,\n"
    );
    assert_eq!(
        q("SELECT entity, instance, blocking_time, cause_type, cause, cause_ts FROM blocking_instances"),
        "entity,instance,blocking_time,cause_type,cause,cause_ts\nT1,0,10,event,EV,10\n"
    );
}

/// The `wait` a `wait_event` causes may be logged some time after it (an instrumented OS
/// call, not a simulator's single instant): it is still the cause. A contended request after
/// a `wait_event` that returned at once explains the wait instead.
#[test]
fn a_wait_logged_after_its_wait_event_still_has_that_cause() {
    let tmp = tempfile::tempdir().unwrap();
    // T1: wait_event at 10, wait at 12 (waits 12..20). T2: wait_event at 30 (the event was
    // set: returns at once), then a queued request of S at 32 and a wait at 33 (waits
    // 33..40, for S, not for EV2).
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n\
         0,STI,0,T,T2,0,activate\n0,Core_1,0,T,T2,0,start\n\
         10,T1,0,EVENT,EV,0,wait_event\n12,Core_0,0,T,T1,0,wait\n\
         20,T9,0,EVENT,EV,0,set_event,T1\n20,Core_0,0,T,T1,0,release\n\
         25,Core_0,0,T,T1,0,resume\n30,T2,0,EVENT,EV2,0,wait_event\n\
         32,T2,0,SEM,S,0,requestsemaphore\n32,T2,0,SEM,S,0,queued\n33,Core_1,0,T,T2,0,wait\n\
         40,Core_0,0,T,T1,0,terminate\n40,T2,0,SEM,S,0,assigned\n40,Core_1,0,T,T2,0,release\n\
         41,Core_1,0,T,T2,0,resume\n45,T2,0,SEM,S,0,released\n50,Core_1,0,T,T2,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT entity, instance, event, ts FROM event_waits()"),
        "entity,instance,event,ts\nT1,0,EV,10\n"
    );
    assert_eq!(
        q("SELECT entity, waiting_total, causes FROM blocking ORDER BY entity"),
        "entity,waiting_total,causes\nT1,8,EV\nT2,7,S\n"
    );
    assert_eq!(
        q("SELECT entity, cause_type, cause, cause_ts FROM blocking_instances ORDER BY entity"),
        "entity,cause_type,cause,cause_ts\nT1,event,EV,10\nT2,semaphore,S,32\n"
    );
}

/// The set that ended a wait comes before the wait ends: a wait released with no set_event
/// names nobody, not a set of the same event long after the instance ended. Also: two tasks
/// waiting on one event both name the set for nobody that came first (an empty note is no
/// name), a set before the wait_event or for another task is not theirs, and the sets of
/// one capture are not taken for another's.
#[test]
fn event_waits_name_only_a_set_that_came_before_the_wait_ended() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("a.btf"),
        "#timeScale ns\n0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n\
         0,STI,0,T,T2,0,activate\n0,Core_1,0,T,T2,0,start\n2,ISR_Z,0,EVENT,EV,0,set_event,T1\n\
         10,T1,0,EVENT,EV,0,wait_event\n10,Core_0,0,T,T1,0,wait\n\
         10,T2,0,EVENT,EV,0,wait_event\n10,Core_1,0,T,T2,0,wait\n\
         20,ISR_A,0,EVENT,EV,0,set_event,T3\n21,ISR_E,0,EVENT,EV,0,set_event,\n\
         22,Core_1,0,T,T2,0,release\n25,ISR_B,4,EVENT,EV,0,set_event,T1\n\
         25,Core_0,0,T,T1,0,release\n31,Core_0,0,T,T1,0,resume\n35,Core_0,0,T,T1,0,terminate\n\
         47,Core_1,0,T,T2,0,resume\n48,Core_1,0,T,T2,0,terminate\n",
    )
    .unwrap();
    // T1 is released at 30 with no set_event; ISR_LATE sets EV after T1 ended.
    std::fs::write(
        tmp.path().join("b.btf"),
        "#timeScale ns\n0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n\
         10,T1,0,EVENT,EV,0,wait_event\n10,Core_0,0,T,T1,0,wait\n30,Core_0,0,T,T1,0,release\n\
         31,Core_0,0,T,T1,0,resume\n35,Core_0,0,T,T1,0,terminate\n\
         500,ISR_LATE,0,EVENT,EV,0,set_event\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "a.btf"]);
    ok(tmp.path(), &["ingest", "--archive", "db", "b.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT capture_id, entity, event, ts, set_by, set_by_instance, set_ts FROM event_waits() \
           ORDER BY capture_id, entity"),
        "capture_id,entity,event,ts,set_by,set_by_instance,set_ts\n1,T1,EV,10,ISR_E,0,21\n\
         1,T2,EV,10,ISR_E,0,21\n2,T1,EV,10,,,\n"
    );
    assert_eq!(
        q("SELECT capture_id, entity, cause, blocked_by FROM blocking_instances WHERE capture_id = 2"),
        "capture_id,entity,cause,blocked_by\n2,T1,EV,\n"
    );
}

/// Active waiting on an OS event (BTF 2.1.5, "OS events": `wait_event`, then `poll`, the
/// `set_event` by another task, then `run`) has the cause a passive wait has: the event, set
/// by that task. So does a poll that parked meanwhile (poll, park, poll_parking, run, or
/// release_parking); a poll after a contended semaphore request is the semaphore's.
#[test]
fn polling_on_an_os_event_names_who_set_it() {
    let tmp = tempfile::tempdir().unwrap();
    // The spec's example (Task_A, Task_B); T3 polls from 30, parks at 40 (T4 takes Core_2),
    // polls again at 50 and is released (release_parking) at 60 by T5's set at 58; T6 spins
    // on S, held by T7, after a wait_event for an event already set.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n\
         0,Stimulus_Task_A,0,T,Task_A,0,activate\n100,Core_1,0,T,Task_A,0,start\n\
         1000,Stimulus_Task_B,0,T,Task_B,0,activate\n1100,Core_2,0,T,Task_B,0,start\n\
         10108,Task_A,0,EVENT,ExampleOsEvent,0,wait_event\n10108,Core_1,0,T,Task_A,0,poll\n\
         11100,Task_B,0,EVENT,ExampleOsEvent,0,set_event,Task_A\n11100,Core_1,0,T,Task_A,0,run\n\
         11100,Task_A,0,EVENT,ExampleOsEvent,0,clear_event\n21100,Core_1,0,T,Task_A,0,terminate\n\
         21100,Core_2,0,T,Task_B,0,terminate\n\
         21200,S3,0,T,T3,0,activate\n21200,Core_2,0,T,T3,0,start\n\
         21230,T3,0,EVENT,EV3,0,wait_event\n21230,Core_2,0,T,T3,0,poll\n\
         21240,Core_2,0,T,T3,0,park\n21240,S4,0,T,T4,0,activate\n21240,Core_2,0,T,T4,0,start\n\
         21250,Core_2,0,T,T4,0,terminate\n21250,Core_2,0,T,T3,0,poll_parking\n\
         21255,Core_2,0,T,T3,0,park\n21255,S5,0,T,T5,0,activate\n21255,Core_2,0,T,T5,0,start\n\
         21258,T5,0,EVENT,EV3,0,set_event,T3\n21260,Core_2,0,T,T3,0,release_parking\n\
         21270,Core_2,0,T,T5,0,terminate\n21270,Core_2,0,T,T3,0,resume\n\
         21280,Core_2,0,T,T3,0,terminate\n\
         21300,S6,0,T,T6,0,activate\n21300,S7,0,T,T7,0,activate\n21300,Core_1,0,T,T7,0,start\n\
         21301,T7,0,SEM,S,0,requestsemaphore\n21301,T7,0,SEM,S,0,assigned\n\
         21302,Core_3,0,T,T6,0,start\n21303,T6,0,EVENT,EV6,0,wait_event\n\
         21304,T6,0,SEM,S,0,requestsemaphore\n21304,T6,0,SEM,S,0,waiting\n\
         21304,Core_3,0,T,T6,0,poll\n21310,T7,0,SEM,S,0,released\n\
         21310,T6,0,SEM,S,0,assigned\n21310,Core_3,0,T,T6,0,run\n\
         21311,T6,0,SEM,S,0,released\n21312,Core_3,0,T,T6,0,terminate\n\
         21313,Core_1,0,T,T7,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT entity, event, ts, set_by, set_by_instance, set_ts FROM event_waits() ORDER BY ts"),
        "entity,event,ts,set_by,set_by_instance,set_ts\n\
         Task_A,ExampleOsEvent,10108,Task_B,0,11100\nT3,EV3,21230,T5,0,21258\n"
    );
    assert_eq!(
        q("SELECT entity, polling_time, parking_time, cause_type, cause, blocked_by FROM blocking_instances \
           ORDER BY activate_ts, entity"),
        "entity,polling_time,parking_time,cause_type,cause,blocked_by\n\
         Task_A,992,0,event,ExampleOsEvent,Task_B\nT3,15,15,event,EV3,T5\n\
         T6,6,0,semaphore,S,T7\n"
    );
    assert_eq!(
        q("SELECT entity, causes, blocked_by FROM blocking WHERE blocked_instances > 0 ORDER BY entity"),
        "entity,causes,blocked_by\nT3,EV3,T5\nT6,S,T7\nTask_A,ExampleOsEvent,Task_B\n"
    );
}

/// BTF 2.1.5's numeric mode (types, sources and targets as ids of the header's `#typeTable`
/// and `#entityTable`) gives every table what the same trace with names inline gives.
#[test]
fn a_numeric_mode_trace_gives_the_tables_of_its_named_twin() {
    let tmp = tempfile::tempdir().unwrap();
    let header = "#version 2.1.5\n#creator TA-Toolsuite 12.06.1\n#timeScale ns\n#typeTable\n\
                  #-0 T\n#-1 R\n#-2 STI\n#-3 C\n#-4 SEM\n#entityTable\n#-0 Task_1ms\n\
                  #-1 Task_2ms\n#-2 Runnable_1ms_Init\n#-3 Stim_1ms\n#-4 Core_1\n#-5 Sem_A\n\
                  #-6 Stim_2ms\n#entityTypeTable\n#-T Task_1ms\n#-T Task_2ms\n\
                  #-R Runnable_1ms_Init\n#-STI Stim_1ms\n#-C Core_1\n#-SEM Sem_A\n#-STI Stim_2ms\n";
    let named = "0,Stim_1ms,0,T,Task_1ms,0,activate\n10,Core_1,0,T,Task_1ms,0,start\n\
                 10,Task_1ms,0,R,Runnable_1ms_Init,0,start\n\
                 20,Task_1ms,0,SEM,Sem_A,0,requestsemaphore\n20,Task_1ms,0,SEM,Sem_A,0,assigned\n\
                 25,Stim_2ms,0,T,Task_2ms,0,activate\n\
                 30,Task_1ms,0,R,Runnable_1ms_Init,0,suspend\n30,Core_1,0,T,Task_1ms,0,preempt\n\
                 30,Core_1,0,T,Task_2ms,0,start\n40,Core_1,0,T,Task_2ms,0,terminate\n\
                 40,Core_1,0,T,Task_1ms,0,resume\n40,Task_1ms,0,R,Runnable_1ms_Init,0,resume\n\
                 45,Task_1ms,0,SEM,Sem_A,0,released\n\
                 50,Task_1ms,0,R,Runnable_1ms_Init,0,terminate\n50,Core_1,0,T,Task_1ms,0,terminate\n";
    let numeric = "0,3,0,0,0,0,activate\n10,4,0,0,0,0,start\n10,0,0,1,2,0,start\n\
                   20,0,0,4,5,0,requestsemaphore\n20,0,0,4,5,0,assigned\n25,6,0,0,1,0,activate\n\
                   30,0,0,1,2,0,suspend\n30,4,0,0,0,0,preempt\n30,4,0,0,1,0,start\n\
                   40,4,0,0,1,0,terminate\n40,4,0,0,0,0,resume\n40,0,0,1,2,0,resume\n\
                   45,0,0,4,5,0,released\n50,0,0,1,2,0,terminate\n50,4,0,0,0,0,terminate\n";
    std::fs::write(tmp.path().join("named.btf"), format!("{header}{named}")).unwrap();
    std::fs::write(tmp.path().join("numeric.btf"), format!("{header}{numeric}")).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "named.btf"]);
    ok(tmp.path(), &["ingest", "--archive", "db", "numeric.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    for (table, order) in [
        ("events", "seq"),
        ("entities", "entity_id"),
        ("intervals", "ALL"),
        ("instances", "ALL"),
        ("lock_requests", "ALL"),
        ("diagnostics", "ALL"),
    ] {
        let rows = |id: i64| {
            q(&format!(
                "SELECT * EXCLUDE (capture_id) FROM {table} WHERE capture_id = {id} ORDER BY {order}"
            ))
        };
        assert_eq!(rows(2), rows(1), "{table}");
    }
    assert!(q("SELECT count(*) AS n FROM instances WHERE capture_id = 2 AND entity = 'Task_1ms'")
        .ends_with("\n1\n"));
    assert_eq!(
        q("SELECT process, semaphore, assigned_ts, released_ts FROM lock_requests WHERE capture_id = 2"),
        "process,semaphore,assigned_ts,released_ts\nTask_1ms,Sem_A,20,45\n"
    );
}

/// Who set the event a task waited for: the first `set_event` of that event after its
/// `wait_event` whose note names the task, or names nobody; a set for another task is not
/// its. Who held the semaphore a request waited for comes from `lock_requests`.
#[test]
fn blocking_instances_name_who_set_the_event_or_held_the_semaphore() {
    let tmp = tempfile::tempdir().unwrap();
    // T1 and T2 wait for EV from 10; ISR_A sets it for T2 at 20, ISR_B (instance 4) sets it
    // for nobody in particular at 30. T3 asks at 15 for S, which T4 holds from 5 to 40.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n\
         0,STI,0,T,T2,0,activate\n0,Core_1,0,T,T2,0,start\n\
         0,STI,0,T,T4,0,activate\n0,Core_2,0,T,T4,0,start\n\
         5,T4,0,SEM,S,0,requestsemaphore\n5,T4,0,SEM,S,0,assigned\n\
         10,T1,0,EVENT,EV,0,wait_event\n10,Core_0,0,T,T1,0,wait\n\
         10,T2,0,EVENT,EV,0,wait_event\n10,Core_1,0,T,T2,0,wait\n\
         12,STI,0,T,T3,0,activate\n12,Core_1,0,T,T3,0,start\n\
         15,T3,0,SEM,S,0,requestsemaphore\n15,T3,0,SEM,S,0,waiting\n15,Core_1,0,T,T3,0,poll\n\
         20,ISR_A,0,EVENT,EV,0,set_event,T2\n20,Core_1,0,T,T2,0,release\n\
         30,ISR_B,4,EVENT,EV,0,set_event\n30,Core_0,0,T,T1,0,release\n\
         31,Core_0,0,T,T1,0,resume\n35,Core_0,0,T,T1,0,terminate\n\
         40,T4,0,SEM,S,0,released\n40,T3,0,SEM,S,0,assigned\n40,Core_1,0,T,T3,0,run\n\
         45,T3,0,SEM,S,0,released\n46,Core_1,0,T,T3,0,terminate\n\
         47,Core_1,0,T,T2,0,resume\n48,Core_1,0,T,T2,0,terminate\n50,Core_2,0,T,T4,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT entity, event, ts, set_by, set_by_instance, set_ts FROM event_waits() ORDER BY entity"),
        "entity,event,ts,set_by,set_by_instance,set_ts\nT1,EV,10,ISR_B,4,30\nT2,EV,10,ISR_A,0,20\n"
    );
    assert_eq!(
        q("SELECT entity, cause_type, cause, blocked_by, blocked_by_instance FROM blocking_instances \
           ORDER BY entity"),
        "entity,cause_type,cause,blocked_by,blocked_by_instance\nT1,event,EV,ISR_B,4\n\
         T2,event,EV,ISR_A,0\nT3,semaphore,S,T4,0\n"
    );
    assert_eq!(
        q("SELECT process, blocked_by, blocked_by_instance, blockers FROM lock_requests ORDER BY process"),
        "process,blocked_by,blocked_by_instance,blockers\nT3,T4,0,1\nT4,,,0\n"
    );
}

#[test]
fn an_isr_logged_without_the_tasks_preempt_still_preempts_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,STI_A,0,T,TA,0,activate\n10,Core_0,0,T,TA,0,start\n\
         20,STI_I,0,I,ISR1,0,activate\n20,Core_0,0,I,ISR1,0,start\n\
         30,Core_0,0,I,ISR1,0,terminate\n50,Core_0,0,T,TA,0,terminate\n60,STI_A,0,STI,STI_A,0,trigger\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    // The core is busy throughout: TA, ISR1, then TA again.
    assert_eq!(
        q("SELECT state, ts, dur FROM intervals WHERE channel = 'running' ORDER BY ts"),
        "state,ts,dur\nTA,10,10\nISR1,20,10\nTA,30,20\n"
    );
    // The implied transitions carry the actions they stand for.
    assert_eq!(
        q("SELECT state, ts, start_action, end_action FROM intervals \
           WHERE entity = 'TA' AND channel = 'state' ORDER BY ts"),
        "state,ts,start_action,end_action\nactive,0,activate,start\nrunning,10,start,preempt\n\
         ready,20,preempt,resume\nrunning,30,resume,terminate\n"
    );
    assert_eq!(
        q("SELECT preempted, preempted_by, preemptions FROM preemption_pairs"),
        "preempted,preempted_by,preemptions\nTA,ISR1,1\n"
    );
    assert_eq!(
        q("SELECT net_exec, ready_time, preemptions FROM instances WHERE entity = 'TA'"),
        "net_exec,ready_time,preemptions\n30,10,1\n"
    );
    assert_eq!(
        q("SELECT kind, severity FROM diagnostics"),
        "kind,severity\nimplicit_preemption,info\n"
    );
}

#[test]
fn preemption_pairs_keep_preemptions_whose_preemptor_the_trace_does_not_show() {
    let tmp = tempfile::tempdir().unwrap();
    // A is preempted on Core_0 and resumes there with nobody in between (unknown preemptor);
    // B is preempted by C; C's instance 1 is preempted by its instance 2 (a real answer);
    // M is preempted on Core_1 as the trace's last word there (no later occupant).
    // Core_2 and Core_3 (older files' type code) are declared and never used: cpu_load
    // shows them idle.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,Core_2,0,C,Core_2,0,set_frequency,100\n\
         0,SIM,-1,Core,Core_3,-1,set_frequency,100\n\
         0,S,0,T,A,0,activate\n0,Core_0,0,T,A,0,start\n10,Core_0,0,T,A,0,preempt\n\
         20,Core_0,0,T,A,0,resume\n30,Core_0,0,T,A,0,terminate\n\
         30,S,0,T,B,0,activate\n30,Core_0,0,T,B,0,start\n40,S,0,T,C,1,activate\n\
         40,Core_0,0,T,B,0,preempt\n40,Core_0,0,T,C,1,start\n45,S,0,T,C,2,activate\n\
         45,Core_0,0,T,C,1,preempt\n45,Core_0,0,T,C,2,start\n50,Core_0,0,T,C,2,terminate\n\
         50,Core_0,0,T,C,1,resume\n55,Core_0,0,T,C,1,terminate\n\
         55,Core_0,0,T,B,0,resume\n60,Core_0,0,T,B,0,terminate\n\
         0,S,0,T,M,0,activate\n0,Core_1,0,T,M,0,start\n70,Core_1,0,T,M,0,preempt\n",
    )
    .unwrap();
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let q = |name: &str, extra: &[&str]| {
        let args = [&["query", name, "--archive", "db", "--format", "csv"][..], extra].concat();
        parse_csv(&ok(tmp.path(), &args))
    };
    let pairs: Vec<String> = q("preemption_pairs", &[])[1..]
        .iter()
        .map(|r| format!("{}>{}@{} x{} {}", r[1], r[2], r[3], r[4], r[5]))
        .collect();
    assert_eq!(
        pairs,
        ["A>@Core_0 x1 10", "B>C@Core_0 x1 40", "C>C@Core_0 x1 45", "M>@Core_1 x1 70"],
        "every preemption counted; the preemptor empty where the trace does not show one"
    );
    let load = q("cpu_load", &["--param", "window=100ns"]);
    let idle: Vec<String> = load[1..]
        .iter()
        .filter(|r| r[1] == "Core_2" || r[1] == "Core_3")
        .map(|r| format!("{} {}", r[1], r[5]))
        .collect();
    assert_eq!(idle, ["Core_2 0", "Core_3 0"], "{load:?}");
}

#[test]
fn a_preemptor_that_starts_later_is_found_beside_ones_that_start_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    // Core_0: B starts 2 ns after A's preempt (a logger a tick late). Core_1: D starts at
    // C's preempt; nothing follows E's preempt. The first and the last take the sorted
    // search, the second the equality join.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,S,0,T,A,0,activate\n0,Core_0,0,T,A,0,start\n0,S,0,T,C,0,activate\n\
         0,Core_1,0,T,C,0,start\n5,S,0,T,B,0,activate\n5,S,0,T,D,0,activate\n\
         10,Core_0,0,T,A,0,preempt\n10,Core_1,0,T,C,0,preempt\n10,Core_1,0,T,D,0,start\n\
         12,Core_0,0,T,B,0,start\n20,Core_1,0,T,D,0,terminate\n20,Core_1,0,T,C,0,resume\n\
         22,Core_0,0,T,B,0,terminate\n22,Core_0,0,T,A,0,resume\n25,Core_0,0,T,A,0,terminate\n\
         25,S,0,T,E,0,activate\n25,Core_1,0,T,C,0,terminate\n25,Core_1,0,T,E,0,start\n\
         30,Core_1,0,T,E,0,preempt\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT preempted, preempted_by, core, first_ts FROM preemption_pairs ORDER BY preempted"
        ),
        "preempted,preempted_by,core,first_ts\nA,B,Core_0,10\nC,D,Core_1,10\nE,,Core_1,30\n"
    );
}

#[test]
fn a_preempt_before_which_the_capture_began_is_on_its_own_core() {
    let tmp = tempfile::tempdir().unwrap();
    // LOW's first event is a preempt on Core_0 by HIGH; it resumes on Core_1 (after Z ran
    // there). NEVER is preempted at once and never resumes.
    std::fs::write(
        tmp.path().join("m.btf"),
        "#version 2.1.0\n100,Core_0,0,T,LOW,0,preempt\n100,Core_0,0,T,HIGH,0,start\n\
         150,Core_1,0,T,Z,0,start\n180,Core_1,0,T,Z,0,terminate\n200,Core_1,0,T,LOW,0,resume\n\
         300,Core_0,0,T,HIGH,0,terminate\n400,Core_1,0,T,LOW,0,terminate\n\
         500,Core_2,0,T,NEVER,0,preempt\n500,Core_2,0,T,ISR_X,0,start\n\
         510,Core_2,0,T,ISR_X,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "m.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT preempted, preempted_by, core, preemptions FROM preemption_pairs"
        ),
        "preempted,preempted_by,core,preemptions\nLOW,HIGH,Core_0,1\nNEVER,ISR_X,Core_2,1\n"
    );
}

#[test]
fn jitter_pairs_each_instance_with_the_next_one() {
    let tmp = tempfile::tempdir().unwrap();
    // Instance 2 starts on Core_1 before instance 1 starts on Core_0; instance 4's activate
    // was lost, so no activate-to-activate distance spans 20..40.
    std::fs::write(
        tmp.path().join("j.btf"),
        "0,STI,0,T,TA,1,activate\n10,STI,0,T,TA,2,activate\n12,Core_1,0,T,TA,2,start\n\
         15,Core_0,0,T,TA,1,start\n20,STI,0,T,TA,3,activate\n25,Core_0,0,T,TA,1,terminate\n\
         30,Core_1,0,T,TA,2,terminate\n35,Core_0,0,T,TA,3,start\n38,Core_0,0,T,TA,3,terminate\n\
         45,Core_0,0,T,TA,4,start\n48,Core_0,0,T,TA,4,terminate\n50,STI,0,T,TA,5,activate\n\
         55,Core_0,0,T,TA,5,start\n58,Core_0,0,T,TA,5,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "j.btf"]);
    // Activations 0, 10, 20, (lost), 50: distances 10, 10; starts in instance order
    // 15, 12, 35, 45, 55: distances -3, 23, 10, 10.
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT activations, activate_to_activate_min, activate_to_activate_max, \
             activate_jitter, starts, start_to_start_min, start_to_start_avg, \
             start_to_start_max, start_jitter FROM activation_jitter"
        ),
        "activations,activate_to_activate_min,activate_to_activate_max,activate_jitter,starts,\
         start_to_start_min,start_to_start_avg,start_to_start_max,start_jitter\n\
         4,10,10,0,5,-3,10,23,26\n"
    );

    // Instance 0 was activated before the capture began: it comes before instance 1 (BTF
    // numbers instances in activation order), though it starts after instance 1's activate.
    std::fs::write(
        tmp.path().join("k.btf"),
        "3,STI,0,T,TB,1,activate\n5,Core_0,0,T,TB,0,start\n8,Core_0,0,T,TB,0,terminate\n\
         10,Core_0,0,T,TB,1,start\n12,Core_0,0,T,TB,1,terminate\n20,STI,0,T,TB,2,activate\n\
         20,Core_0,0,T,TB,2,start\n22,Core_0,0,T,TB,2,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "k", "k.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "k",
            "SELECT activations, activate_to_activate_min, activate_to_activate_max, starts, \
             start_to_start_min, start_to_start_avg, start_to_start_max FROM activation_jitter"
        ),
        "activations,activate_to_activate_min,activate_to_activate_max,starts,\
         start_to_start_min,start_to_start_avg,start_to_start_max\n2,17,17,3,5,7.5,10\n"
    );

    // Instances 1 and 3 share the first activation instant; instance 2 has no activate. The
    // first instance activated is 1, the lower number (not whichever row the engine met
    // first), so instance 2 is not numbered below it and goes by its start (5), first. In
    // both files, whichever of 1 and 3 ends first.
    for (name, tail) in [
        (
            "m1",
            "30,Core_0,0,T,TE,3,start\n35,Core_0,0,T,TE,3,terminate\n\
                40,Core_0,0,T,TE,1,start\n45,Core_0,0,T,TE,1,terminate\n",
        ),
        (
            "m3",
            "30,Core_0,0,T,TE,1,start\n35,Core_0,0,T,TE,1,terminate\n\
                40,Core_0,0,T,TE,3,start\n45,Core_0,0,T,TE,3,terminate\n",
        ),
    ] {
        let head = "5,Core_0,0,T,TE,2,start\n8,Core_0,0,T,TE,2,terminate\n\
                    10,STI,0,T,TE,3,activate\n10,STI,0,T,TE,1,activate\n";
        std::fs::write(tmp.path().join(format!("{name}.btf")), format!("{head}{tail}")).unwrap();
        ok(tmp.path(), &["ingest", "--archive", name, &format!("{name}.btf")]);
        // Order 2 (start 5), 1, 3 (activated at 10): one activate distance, 0; starts
        // 5, then 1's and 3's.
        let (s1, s3) = if name == "m1" { (40, 30) } else { (30, 40) };
        let (d1, d2) = (s1 - 5, s3 - s1);
        assert_eq!(
            util::csv(
                tmp.path(),
                name,
                "SELECT activations, activate_to_activate_min, activate_to_activate_max, \
                 starts, start_to_start_min, start_to_start_max FROM activation_jitter"
            ),
            format!(
                "activations,activate_to_activate_min,activate_to_activate_max,starts,\
                 start_to_start_min,start_to_start_max\n2,0,0,3,{},{}\n",
                d1.min(d2),
                d1.max(d2)
            ),
            "{name}"
        );
    }

    // TC shows neither an activate nor a start (it was running when the capture began, as
    // with the FreeRTOS trace logger): it has its row, with no distances.
    std::fs::write(
        tmp.path().join("l.btf"),
        "0,STI,0,T,TD,0,activate\n1,Core_0,0,T,TC,0,preempt\n1,Core_0,0,T,TD,0,start\n\
         4,Core_0,0,T,TD,0,terminate\n4,Core_0,0,T,TC,0,resume\n6,Core_0,0,T,TC,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "l", "l.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "l",
            "SELECT entity, activations, activate_jitter, starts, start_jitter \
             FROM activation_jitter"
        ),
        "entity,activations,activate_jitter,starts,start_jitter\nTC,0,,0,\nTD,1,,1,\n"
    );
}

#[test]
fn a_semaphore_never_overfull_has_zero_overfull_time_and_a_first_preempt_has_its_pair() {
    let tmp = tempfile::tempdir().unwrap();
    // S is locked 1..5 and never overfull; U never even locked. Both log their states.
    std::fs::write(
        tmp.path().join("sem.btf"),
        "0,S,0,SEM,S,0,ready,0\n0,U,0,SEM,U,0,ready,0\n0,STI_A,0,T,A,0,activate\n\
         0,Core_0,0,T,A,0,start\n1,A,0,SEM,S,0,requestsemaphore\n1,S,0,SEM,S,0,lock,1\n\
         1,A,0,SEM,S,0,assigned\n5,A,0,SEM,S,0,released\n5,S,0,SEM,S,0,unlock,0\n\
         9,Core_0,0,T,A,0,terminate\n",
    )
    .unwrap();
    // The capture begins as A is preempted by B: A's first event is that preempt.
    std::fs::write(
        tmp.path().join("pre.btf"),
        "0,Core_0,0,T,A,0,preempt\n0,STI_B,0,T,B,0,activate\n0,Core_0,0,T,B,0,start\n\
         5,Core_0,0,T,B,0,terminate\n5,Core_0,0,T,A,0,resume\n8,Core_0,0,T,A,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "sem.btf", "pre.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT semaphore, locked_time, overfull_time FROM semaphore_contention ORDER BY 1"
        ),
        "semaphore,locked_time,overfull_time\nS,4,0\nU,0,0\n"
    );
    assert_eq!(
        util::csv(tmp.path(), "db", "SELECT * FROM preemption_pairs WHERE capture_id = 2"),
        "capture_id,preempted,preempted_by,core,preemptions,first_ts,last_ts\n2,A,B,Core_0,1,0,0\n"
    );
}

#[test]
fn jitter_deadlines_and_signal_values_keep_two_captures_of_the_same_names_apart() {
    let tmp = tempfile::tempdir().unwrap();
    // Both captures have a task TA and a signal V: TA's period is 10 in the first, 30 in
    // the second; TB (period 7) is only in the second. The analyses number or group the
    // entities and signals internally: each capture must keep its own.
    std::fs::write(
        tmp.path().join("a.btf"),
        "0,STI,0,T,TA,0,activate\n1,Core_0,0,T,TA,0,start\n2,Core_0,0,T,TA,0,terminate\n\
         5,TA,0,SIG,V,-1,write,1\n10,STI,0,T,TA,1,activate\n11,Core_0,0,T,TA,1,start\n\
         12,Core_0,0,T,TA,1,terminate\n15,TA,1,SIG,V,-1,write,2\n20,STI,0,T,TA,2,activate\n\
         21,Core_0,0,T,TA,2,start\n22,Core_0,0,T,TA,2,terminate\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("b.btf"),
        "0,STI,0,T,TA,0,activate\n0,STI,0,T,TB,0,activate\n1,Core_0,0,T,TA,0,start\n\
         2,Core_0,0,T,TA,0,terminate\n2,TA,0,SIG,V,-1,write,7\n3,Core_0,0,T,TB,0,start\n\
         4,Core_0,0,T,TB,0,terminate\n7,STI,0,T,TB,1,activate\n8,Core_0,0,T,TB,1,start\n\
         9,Core_0,0,T,TB,1,terminate\n30,STI,0,T,TA,1,activate\n31,Core_0,0,T,TA,1,start\n\
         32,Core_0,0,T,TA,1,terminate\n60,STI,0,T,TA,2,activate\n61,Core_0,0,T,TA,2,start\n\
         62,Core_0,0,T,TA,2,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "a.btf", "b.btf"]);
    let names = util::csv(tmp.path(), "db", "SELECT capture_id, name FROM captures ORDER BY 1");
    assert_eq!(names, "capture_id,name\n1,a\n2,b\n");
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT capture_id, entity, activations, activate_to_activate_min, \
             activate_to_activate_max, starts, start_to_start_min, start_to_start_max \
             FROM activation_jitter"
        ),
        "capture_id,entity,activations,activate_to_activate_min,activate_to_activate_max,\
         starts,start_to_start_min,start_to_start_max\n\
         1,TA,3,10,10,3,10,10\n2,TA,3,30,30,3,30,30\n2,TB,2,7,7,2,5,5\n"
    );
    // Implicit deadlines: each instance's period in its own capture; the last one uses the
    // period before it.
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT capture_id, entity, instances, misses, worst_lateness, deadline_source \
             FROM deadline_summary"
        ),
        "capture_id,entity,instances,misses,worst_lateness,deadline_source\n\
         1,TA,3,0,-8,implicit-period\n2,TA,3,0,-28,implicit-period\n\
         2,TB,2,0,-3,implicit-period\n"
    );
    // A value holds until the next write of its signal in the same capture, or that
    // capture's last event (22 and 62).
    assert_eq!(
        util::csv(tmp.path(), "db", "SELECT capture_id, signal, ts, dur, text FROM signal_values"),
        "capture_id,signal,ts,dur,text\n1,V,5,10,1\n1,V,15,7,2\n2,V,2,60,7\n"
    );
}

/// `priority_inversions` follows a mutex's queue: W2 asked while H held S and W1 was queued
/// before it, so it waited for H, then for W1 (still waiting when the trace ends); each
/// holder's preemption counts for the time W2 waited then. W1 waited for H alone.
#[test]
fn priority_inversions_follow_a_queue_to_the_end_of_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("q.btf"),
        "#timeScale ns\n0,STI,0,T,H,0,activate\n0,Core_0,0,T,H,0,start\n\
         0,STI,0,T,W1,0,activate\n0,Core_1,0,T,W1,0,start\n\
         0,STI,0,T,W2,0,activate\n0,Core_2,0,T,W2,0,start\n\
         5,H,0,SEM,S,0,requestsemaphore\n5,H,0,SEM,S,0,assigned\n\
         10,Core_0,0,T,H,0,preempt\n10,STI,0,T,X,0,activate\n10,Core_0,0,T,X,0,start\n\
         12,W1,0,SEM,S,0,requestsemaphore\n12,W1,0,SEM,S,0,queued\n12,Core_1,0,T,W1,0,wait\n\
         15,W2,0,SEM,S,0,requestsemaphore\n15,W2,0,SEM,S,0,queued\n15,Core_2,0,T,W2,0,wait\n\
         30,Core_0,0,T,X,0,terminate\n30,Core_0,0,T,H,0,resume\n35,H,0,SEM,S,0,released\n\
         35,W1,0,SEM,S,0,assigned\n35,Core_1,0,T,W1,0,release\n36,Core_0,0,T,H,0,terminate\n\
         36,Core_1,0,T,W1,0,resume\n40,Core_1,0,T,W1,0,preempt\n40,STI,0,T,Y,0,activate\n\
         40,Core_1,0,T,Y,0,start\n60,Core_1,0,T,Y,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "q.btf"]);
    let q = |sql: &str| util::csv(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT process, assigned_ts, blocked_by, blockers FROM lock_requests \
           WHERE contended ORDER BY request_ts"),
        "process,assigned_ts,blocked_by,blockers\nW1,35,H,1\nW2,,H,2\n"
    );
    assert_eq!(
        q("SELECT waiter, request_ts, wait, holder, core, ran, first_ts, delay \
           FROM priority_inversions"),
        "waiter,request_ts,wait,holder,core,ran,first_ts,delay\n\
         W1,12,23,H,Core_0,X,12,18\nW2,15,,H,Core_0,X,15,15\nW2,15,,W1,Core_1,Y,40,20\n"
    );
}

/// deadline_summary, like every statistic over instances, says how many instances it left
/// out (DESIGN: "statistics use complete instances and say how many were left out"), and
/// lists a task none of whose instances could be judged rather than dropping it.
#[test]
fn deadline_summary_says_how_many_instances_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    // TA: three complete instances (period 10) and a fourth cut by the end of the capture.
    // TB: activated once (no period, no file rule): nothing to judge it by. TC: no activate
    // at all (the capture began while it ran). TD: twice, both complete, the last one late.
    std::fs::write(
        tmp.path().join("t.btf"),
        "0,STI,0,T,TA,0,activate\n0,Core_0,0,T,TA,0,start\n2,Core_0,0,T,TA,0,terminate\n\
         0,Core_1,0,T,TC,0,start\n3,Core_1,0,T,TC,0,terminate\n\
         4,STI,0,T,TB,0,activate\n4,Core_1,0,T,TB,0,start\n6,Core_1,0,T,TB,0,terminate\n\
         10,STI,0,T,TA,1,activate\n10,Core_0,0,T,TA,1,start\n12,STI,0,T,TD,0,activate\n\
         12,Core_1,0,T,TD,0,start\n13,Core_0,0,T,TA,1,terminate\n14,Core_1,0,T,TD,0,terminate\n\
         15,STI,0,T,TD,1,activate\n15,Core_1,0,T,TD,1,start\n19,Core_1,0,T,TD,1,terminate\n\
         20,STI,0,T,TA,2,activate\n20,Core_0,0,T,TA,2,start\n21,Core_0,0,T,TA,2,terminate\n\
         30,STI,0,T,TA,3,activate\n30,Core_0,0,T,TA,3,start\n31,Core_0,0,T,TA,3,preempt\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT entity, instances, instances_left_out, misses, miss_ratio, worst_lateness, \
             deadline_source FROM deadline_summary"
        ),
        "entity,instances,instances_left_out,misses,miss_ratio,worst_lateness,deadline_source\n\
         TA,3,1,0,0,-7,implicit-period\nTB,0,1,,,,\nTC,0,1,,,,\nTD,2,0,1,0.5,1,implicit-period\n"
    );
}

/// cpu_load's parameters in SQL: a window given as text with a unit, or as a fraction of a
/// ns, is refused by name (not a DuckDB binder error about range()), with nothing on
/// standard output; an integral one as text or decimal is that number; a NULL idle pattern
/// counts nothing as idle (ILIKE NULL excluded every process: every core at 0).
#[test]
fn cpu_load_parameters_in_sql_are_checked_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    // Core_0: T1 runs 0..6, the idle task 6..10, T1 again 10..20.
    std::fs::write(
        tmp.path().join("t.btf"),
        "0,STI,0,T,T1,0,activate\n0,Core_0,0,T,T1,0,start\n6,Core_0,0,T,T1,0,preempt\n\
         6,Core_0,0,T,IDLE,0,resume\n10,Core_0,0,T,IDLE,0,preempt\n10,Core_0,0,T,T1,0,resume\n\
         20,Core_0,0,T,T1,0,terminate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    let busy = |args: &str| {
        util::csv(tmp.path(), "db", &format!("SELECT window_start, busy FROM cpu_load({args})"))
    };
    assert_eq!(busy("window_ns := 10"), "window_start,busy\n0,6\n10,10\n");
    assert_eq!(busy("window_ns := 10, idle := NULL"), "window_start,busy\n0,10\n10,10\n");
    assert_eq!(busy("window_ns := '10'"), busy("window_ns := 10.0"));
    assert_eq!(busy("window_ns := '10'"), busy("window_ns := 10"));
    for (bad, says) in [
        ("'2ms'", "window_ns must be a positive integer number of ns"),
        ("2.5", "window_ns must be a positive integer number of ns"),
        ("-1", "window_ns must be a positive integer number of ns"),
        ("1e19", "window_ns must be at most 10^18 ns"),
    ] {
        for format in ["csv", "json", "table"] {
            let out = run(
                tmp.path(),
                &[
                    "sql",
                    "--archive",
                    "db",
                    "--format",
                    format,
                    "-c",
                    &format!("FROM cpu_load(window_ns := {bad})"),
                ],
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
            assert!(err.contains(says) && !err.contains("Binder Error"), "{bad}: {err}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{bad} {format}: nothing printed");
        }
    }
}

/// semaphore_contention's wait and hold statistics leave out the requests whose wait or
/// hold the capture does not show whole, and say how many: a request still waiting when the
/// capture ended (the longest wait of all, maybe) is not a wait of 0.
#[test]
fn semaphore_contention_says_which_waits_and_holds_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    // TA: M from 0 to 2 (no wait). TL: M from 5 to the end. TH: asks at 6 and waits until the
    // end (20), polling. Two captures with the same names: the second has TH served at 9
    // (TL releases M then) and nothing left out.
    let head =
        "0,STI,0,T,TA,0,activate\n0,Core_0,0,T,TA,0,start\n0,TA,0,SEM,M,0,requestsemaphore\n\
                0,TA,0,SEM,M,0,assigned\n2,TA,0,SEM,M,0,released\n3,Core_0,0,T,TA,0,terminate\n\
                4,STI,0,T,TL,0,activate\n4,Core_0,0,T,TL,0,start\n5,TL,0,SEM,M,0,requestsemaphore\n\
                5,TL,0,SEM,M,0,assigned\n6,STI,0,T,TH,0,activate\n6,Core_1,0,T,TH,0,start\n\
                6,TH,0,SEM,M,0,requestsemaphore\n6,TH,0,SEM,M,0,waiting\n6,Core_1,0,T,TH,0,poll\n";
    std::fs::write(tmp.path().join("cut.btf"), format!("{head}20,Core_0,0,T,TL,0,terminate\n"))
        .unwrap();
    std::fs::write(
        tmp.path().join("whole.btf"),
        format!(
            "{head}9,TL,0,SEM,M,0,released\n9,TH,0,SEM,M,0,assigned\n9,Core_1,0,T,TH,0,run\n\
             10,TH,0,SEM,M,0,released\n11,Core_1,0,T,TH,0,terminate\n20,Core_0,0,T,TL,0,terminate\n"
        ),
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "cut.btf", "whole.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT capture_id, requests, contended_requests, wait_max, waits_left_out, hold_max, \
             holds_left_out, most_waiting_process FROM semaphore_contention"
        ),
        "capture_id,requests,contended_requests,wait_max,waits_left_out,hold_max,holds_left_out,\
         most_waiting_process\n1,3,1,0,1,2,1,\n2,3,1,3,0,4,0,TH\n"
    );
}

/// Two captures of one trace in one archive (the same names, the same times):
/// `priority_inversions` gives each the rows the trace gives alone, queues included, and
/// mixes nothing (every join and window of it is per capture).
#[test]
fn priority_inversions_keep_captures_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    util::write_mutex_trace(dir, 100);
    ok(dir, &["ingest", "--archive", "db", "m.btf"]);
    ok(dir, &["ingest", "--archive", "db", "m.btf", "--force", "--name", "again"]);
    let q = |sql: &str| util::csv(dir, "db", sql);
    let rows = |id: i64| {
        q(&format!(
            "SELECT * EXCLUDE (capture_id) FROM priority_inversions WHERE capture_id = {id}"
        ))
    };
    let first = rows(1);
    assert_eq!(first, rows(2));
    ok(dir, &["ingest", "--archive", "alone", "m.btf"]);
    let alone = util::csv(dir, "alone", "SELECT * EXCLUDE (capture_id) FROM priority_inversions");
    assert_eq!(first, alone);
    let queued = q("SELECT count(*) FROM priority_inversions p JOIN lock_requests l \
                    ON l.capture_id = p.capture_id AND l.semaphore = p.semaphore \
                    AND l.process = p.waiter AND l.process_instance = p.waiter_instance \
                    AND l.request_ts = p.request_ts WHERE l.capture_id = 1 AND l.blockers > 1");
    let queued: usize = queued.lines().nth(1).unwrap().parse().unwrap();
    assert!(queued > 0 && first.lines().count() > queued, "{first}");
}

/// An instance still unfinished when the capture ends, its deadline already passed, missed
/// it whatever its terminate would have been: deadline_misses lists it (lateness NULL) and
/// deadline_summary counts it apart (`unfinished_misses`: its statistics are over complete
/// instances). Instances activated at one instant all take the time to the
/// next activation after that instant as their implicit deadline (it was 0 for all but the
/// last of them, a miss for any instance that ran at all).
#[test]
fn unfinished_instances_past_their_deadline_are_misses_and_bursts_share_a_period() {
    let tmp = tempfile::tempdir().unwrap();
    // A: two activations at 0, one at 12, two at 20 (the last of those late: 11 > 8).
    // H: its instance 2 (deadline 10, up to the next activation) and 3 (the period before
    // it, 10) are unfinished at the capture's end, 31. W: its second instance is unfinished
    // but within its deadline (20 + 20 > 31): left out. K: activated once, at the end.
    std::fs::write(
        tmp.path().join("t.btf"),
        "#timeScale ns\n0,S,0,T,A,1,activate\n0,S,0,T,A,2,activate\n0,C0,0,T,A,1,start\n\
         0,S,0,T,H,1,activate\n0,C1,0,T,H,1,start\n0,S,0,T,W,1,activate\n0,C2,0,T,W,1,start\n\
         5,C0,0,T,A,1,terminate\n5,C0,0,T,A,2,start\n5,C2,0,T,W,1,terminate\n\
         10,C1,0,T,H,1,terminate\n10,S,0,T,H,2,activate\n10,C1,0,T,H,2,start\n\
         12,C0,0,T,A,2,terminate\n12,S,0,T,A,3,activate\n12,C0,0,T,A,3,start\n\
         15,C0,0,T,A,3,terminate\n20,S,0,T,A,4,activate\n20,S,0,T,A,5,activate\n\
         20,C0,0,T,A,4,start\n20,S,0,T,H,3,activate\n20,S,0,T,W,2,activate\n\
         20,C2,0,T,W,2,start\n22,C0,0,T,A,4,terminate\n22,C0,0,T,A,5,start\n\
         31,C0,0,T,A,5,terminate\n31,S,0,T,K,1,activate\n",
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT entity, instance, activate_ts, terminate_ts, response_time, deadline, \
             deadline_source, lateness FROM deadline_misses"
        ),
        "entity,instance,activate_ts,terminate_ts,response_time,deadline,deadline_source,lateness\n\
         H,2,10,,,10,implicit-period,\nA,5,20,31,11,8,implicit-period,3\n\
         H,3,20,,,10,implicit-period,\n"
    );
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT entity, instances, instances_left_out, unfinished_misses, misses, \
             miss_ratio, worst_lateness FROM deadline_summary"
        ),
        "entity,instances,instances_left_out,unfinished_misses,misses,miss_ratio,worst_lateness\n\
         A,5,0,0,1,0.2,3\nH,1,2,2,0,0,0\nK,0,1,0,,,\nW,1,1,0,0,0,-15\n"
    );
}

/// Times span the whole accepted range, ±(2^62 - 1): an implicit period near 2^63 is a
/// deadline like any other (`activate_ts + deadline` overflowed BIGINT and the analysis
/// failed; found by fuzzing). A: activated at -H, again at H - 10, terminated at H: late by
/// 10. K: activated at -H and H - 5, never terminated: its first instance is past its
/// deadline when the capture ends, its second is not.
#[test]
fn deadlines_near_2_pow_63_do_not_overflow() {
    let tmp = tempfile::tempdir().unwrap();
    let h: i64 = (1 << 62) - 1;
    std::fs::write(
        tmp.path().join("t.btf"),
        format!(
            "#timeScale ns\n-{h},S,0,T,A,1,activate\n-{h},C0,0,T,A,1,start\n\
             -{h},S,0,T,K,1,activate\n{},S,0,T,A,2,activate\n{},S,0,T,K,2,activate\n\
             {h},C0,0,T,A,1,terminate\n",
            h - 10,
            h - 5
        ),
    )
    .unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT entity, instance, activate_ts, terminate_ts, response_time, deadline, \
             deadline_source, lateness FROM deadline_misses"
        ),
        format!(
            "entity,instance,activate_ts,terminate_ts,response_time,deadline,deadline_source,lateness\n\
             A,1,-{h},{h},{},{},implicit-period,10\nK,1,-{h},,,{},implicit-period,\n",
            2 * h,
            2 * h - 10,
            2 * h - 5
        )
    );
    assert_eq!(
        util::csv(
            tmp.path(),
            "db",
            "SELECT entity, instances, instances_left_out, unfinished_misses, misses, \
             worst_lateness FROM deadline_summary"
        ),
        "entity,instances,instances_left_out,unfinished_misses,misses,worst_lateness\n\
         A,1,1,0,1,10\nK,0,2,1,,\n"
    );
}

/// Deadline rules of equal rank: between globs of one length the one with fewer `*` wins
/// (`T?` is narrower than `T*`), whichever line comes first; one pattern inserted twice
/// into param_deadlines takes the shorter deadline; a file giving one pattern two
/// deadlines is refused naming both lines.
#[test]
fn tied_deadline_rules_have_one_winner() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = "0,S,0,T,TA,0,activate\n1,Core_0,0,T,TA,0,start\n50,Core_0,0,T,TA,0,terminate\n\
                 100,S,0,T,TA,1,activate\n101,Core_0,0,T,TA,1,start\n180,Core_0,0,T,TA,1,terminate\n";
    std::fs::write(tmp.path().join("t.btf"), trace).unwrap();
    std::fs::write(tmp.path().join("a.csv"), "T*,100ns\nT?,20ns\n").unwrap();
    std::fs::write(tmp.path().join("b.csv"), "T?,20ns\nT*,100ns\n").unwrap();
    std::fs::write(tmp.path().join("c.csv"), "T?,20ns\nX,1ms\nT?,30ns\n").unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "t.btf"]);
    for file in ["a.csv", "b.csv"] {
        let rows = parse_csv(&ok(
            tmp.path(),
            &["query", "deadline_misses", "--archive", "db", "--format", "csv", "--param"]
                .into_iter()
                .chain([format!("deadlines={file}").as_str()])
                .collect::<Vec<_>>(),
        ));
        let got: Vec<String> = rows[1..].iter().map(|r| format!("{} {}", r[6], r[8])).collect();
        assert_eq!(got, ["20 30", "20 60"], "{file}");
    }
    let sql = "INSERT INTO param_deadlines VALUES ('TA', 45), ('TA', 90); \
               SELECT instance, deadline, lateness FROM deadline_misses";
    assert_eq!(
        util::csv(tmp.path(), "db", sql),
        "Count\n2\ninstance,deadline,lateness\n0,45,5\n1,45,35\n"
    );
    let out = run(
        tmp.path(),
        &["query", "deadline_misses", "--archive", "db", "--param", "deadlines=c.csv"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("c.csv: line 3: 'T?' is given 30 ns here and 20 ns at line 1"), "{err}");
}

/// Every analysis computes per capture: in an archive of several captures whose tasks,
/// cores and semaphores share names (the same system captured twice, once with a deadline
/// file and once without, another system of the same generator, the sample), `--capture`
/// (by id and by name) and the whole archive's rows of a capture are exactly the rows of an
/// archive holding only that capture, row for row.
#[test]
fn one_captures_rows_are_those_of_an_archive_holding_only_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let write = |name: &str, cfg: tracedb::synth::SynthConfig| {
        tracedb::synth::write_btf(std::fs::File::create(d.join(name)).unwrap(), &cfg).unwrap();
    };
    let base = tracedb::synth::SynthConfig {
        isrs: 4,
        duration_ns: 60_000_000,
        overrun_every: 4,
        ..tracedb::synth::SynthConfig::default()
    };
    write("w.btf", tracedb::synth::SynthConfig { passive_waits: true, seed: 4, ..base.clone() });
    write(
        "m.btf",
        tracedb::synth::SynthConfig { counting_slots: 1, preemptible_locks: true, ..base },
    );
    std::fs::write(d.join("d.csv"), "TASK_1MS_*,300us\nTASK_5MS_*,2ms\n").unwrap();
    let judged = ["--deadlines", "d.csv", "--name", "judged", "m.btf"];
    let again = ["--name", "again", "m.btf"];
    ok(d, &["ingest", "--archive", "db", "w.btf"]);
    ok(d, &[&["ingest", "--archive", "db"][..], &judged].concat());
    ok(d, &[&["ingest", "--archive", "db", "--force"][..], &again].concat());
    sample(d);
    ok(d, &[&["ingest", "--archive", "alone-2"][..], &judged].concat());
    ok(d, &[&["ingest", "--archive", "alone-3"][..], &again].concat());
    let rows = |db: &str, name: &str, extra: &[&str]| {
        let args = [&["query", name, "--archive", db, "--format", "csv"][..], extra].concat();
        let mut rows = parse_csv(&ok(d, &args));
        assert_eq!(rows[0][0], "capture_id", "{name}");
        rows.remove(0);
        rows
    };
    let strip = |rows: Vec<Vec<String>>, id: &str| -> Vec<Vec<String>> {
        rows.into_iter().filter(|r| r[0] == id).map(|r| r[1..].to_vec()).collect()
    };
    let mut compared = 0;
    for name in names() {
        let params: &[&str] = match name.as_str() {
            "deadline_misses" | "deadline_summary" => &["--param", "deadlines=d.csv"],
            "cpu_load" => &["--param", "window=5ms"],
            _ => &[],
        };
        let variants: &[&[&str]] = if params.is_empty() { &[&[]] } else { &[&[], params] };
        for &extra in variants {
            let whole = rows("db", &name, extra);
            // Capture 2 picked by id, capture 3 by name.
            for (id, pick) in [("2", "2"), ("3", "again")] {
                let alone = strip(rows(&format!("alone-{id}"), &name, extra), "1");
                let picked = rows("db", &name, &[extra, &["--capture", pick]].concat());
                assert!(picked.iter().all(|r| r[0] == id), "{name}: {picked:?}");
                let what = format!("{name} {extra:?}, capture {id}");
                assert_eq!(strip(picked, id), alone, "{what}: --capture {pick}");
                assert_eq!(strip(whole.clone(), id), alone, "{what}: the whole archive's rows");
                compared += usize::from(!alone.is_empty());
            }
        }
    }
    // Not a comparison of empty results: most analyses have rows for a BTF system.
    assert!(compared >= 30, "{compared} comparisons with rows");
}
