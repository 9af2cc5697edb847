//! Conformance on real captures from ../shared/datasets (skipped with a message when that
//! directory is absent). Expected counts are computed here from the text, independently of
//! the importer.
use crate::util::{self, csv, ok, scalar};
use std::io::Read;
use std::path::Path;

/// Data lines and the first data line's time in ns, read naively from the text.
fn expected(path: &Path) -> (u64, Option<i64>) {
    let raw = std::fs::read(path).unwrap();
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_string(&mut s).unwrap();
        s
    } else {
        String::from_utf8(raw).unwrap()
    };
    let mut scale = 1i64;
    let mut n = 0;
    let mut first = None;
    for line in text.lines().map(str::trim) {
        if let Some(h) = line.strip_prefix("#timeScale ") {
            scale = match h.trim() {
                "us" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                _ => 1,
            };
        } else if !line.is_empty() && !line.starts_with('#') {
            n += 1;
            if first.is_none() {
                first =
                    Some(line.split(',').next().unwrap().trim().parse::<i64>().unwrap() * scale);
            }
        }
    }
    (n, first)
}

/// Whether python3 runs; says the test is skipped when it does not (`script` needs it).
fn python3(script: &str) -> bool {
    let ok = std::process::Command::new("python3").arg("--version").output().is_ok();
    if !ok {
        eprintln!("skipped: python3 is not installed (tests/oracle/{script} needs it)");
    }
    ok
}

/// An oracle's report (its standard output), which must say it agreed with tracedb.
fn agreed(out: &std::process::Output) -> String {
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tracedb and the oracle disagree:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    report
}

/// Runs `python3 tests/oracle/<script> --tracedb <this build> ARGS...` and returns its
/// report, which must say it agreed (see [`agreed`]); ORACLE_SHOW=40 lists more of the
/// differences when it does not.
fn oracle<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> String {
    let out = std::process::Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle").join(script))
        .arg("--tracedb")
        .arg(util::bin())
        .args(args)
        .env_remove("TRACEDB_ARCHIVE")
        .env("ORACLE_SHOW", "40")
        .output()
        .unwrap();
    agreed(&out)
}

#[test]
fn shared_btf_captures_ingest_with_all_events_in_ns() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut files: Vec<_> =
        std::fs::read_dir(root.join("btf")).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(files.len() >= 4, "expected the four BTF samples");
    for (i, f) in files.iter().enumerate() {
        let id = i + 1;
        ok(tmp.path(), &["ingest", "--archive", "db", f.to_str().unwrap()]);
        let (lines, first) = expected(f);
        let got = scalar(
            tmp.path(),
            "db",
            &format!("SELECT count(*) FROM events WHERE capture_id = {id}"),
        );
        assert_eq!(got, lines.to_string(), "{}: events = data lines", f.display());
        let ts_min = scalar(
            tmp.path(),
            "db",
            &format!("SELECT min(ts) FROM events WHERE capture_id = {id}"),
        );
        assert_eq!(
            ts_min,
            first.map(|t| t.to_string()).unwrap_or_default(),
            "{}: first time in ns",
            f.display()
        );
        let malformed = scalar(
            tmp.path(),
            "db",
            &format!("SELECT count(*) FROM diagnostics WHERE capture_id = {id} AND severity IN ('error', 'data_loss')"),
        );
        assert_eq!(malformed, "0", "{}: no line lost", f.display());
    }
}

#[test]
fn freertos_captures_have_running_intervals_but_no_complete_instances() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let f = root.join("btf/freertos-4cores.btf.gz");
    // `--strict`: the logger writes no switch-in of the idle task cores 1-3 start with, so
    // each is first seen preempted: its state before is unknown (info), no invalid transition.
    ok(tmp.path(), &["ingest", "--archive", "db", "--strict", f.to_str().unwrap()]);
    let diags = csv(
        tmp.path(),
        "db",
        "SELECT severity, kind, count(*) AS n, string_agg(regexp_extract(message, 'of (IDLE[0-9])', 1), ' ' \
         ORDER BY message) AS tasks FROM diagnostics GROUP BY ALL ORDER BY kind",
    );
    assert_eq!(
        diags,
        "severity,kind,n,tasks\ninfo,freertos_labels,1,\"\"\ninfo,unknown_prior_state,3,IDLE1 IDLE2 IDLE3\n",
        "{diags}"
    );
    let summary = csv(
        tmp.path(),
        "db",
        "SELECT count(*) FILTER (WHERE complete) AS complete, count(*) FILTER (WHERE net_exec > 0) AS ran, \
         count(*) FILTER (WHERE response_time IS NOT NULL) AS with_response FROM instances",
    );
    let row: Vec<i64> =
        summary.lines().nth(1).unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    assert_eq!(row[0], 0, "no activations in the FreeRTOS logger: nothing is complete");
    assert!(row[1] > 5, "tasks resumed without a start still have running time: {summary}");
    assert_eq!(row[2], 0);
    // Every core has occupancy intervals, and a core never runs two tasks at once.
    let cores = scalar(
        tmp.path(),
        "db",
        "SELECT count(DISTINCT core) FROM intervals WHERE channel = 'running'",
    );
    assert_eq!(cores, "4");
    let overlaps = scalar(
        tmp.path(),
        "db",
        "SELECT count(*) FROM (SELECT core, ts, dur, lead(ts) OVER (PARTITION BY core ORDER BY ts, dur) AS next \
         FROM intervals WHERE channel = 'running') WHERE next < ts + dur",
    );
    assert_eq!(overlaps, "0");
}

/// tests/oracle/btf_oracle.py reads BTF from the contract alone (DESIGN.md, SEMANTICS.md,
/// FORMATS.md) and the README's definitions, written without looking at src/derive: every
/// field of `instances`, `lock_requests` and the tasks', ISRs', runnables' and cores'
/// `intervals`, and every row of `response_times`, `preemption_pairs`, `cpu_load` (two
/// windows), `execution_times`, `activation_jitter`, `deadline_summary` (implicit deadlines,
/// and tests/oracle/cases/deadlines.csv as `--param deadlines=`) and `semaphore_contention`,
/// must agree with it on the shared FreeRTOS captures, the bundled ECU and the hand-made
/// traces of tests/oracle/cases (orders real producers write).
#[test]
fn shared_btf_captures_and_ecu_agree_with_the_independent_oracle() {
    let Some(root) = util::shared_datasets() else { return };
    if !python3("btf_oracle.py") {
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> =
        std::fs::read_dir(root.join("btf")).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files.push(manifest.join("datasets/btf/ecu-4cores.btf.gz"));
    let mut cases: Vec<_> = std::fs::read_dir(manifest.join("tests/oracle/cases"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "btf"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 7, "{cases:?}");
    files.extend(cases);
    // The BTF oracle reads `--deadlines F` first, then `--tracedb BIN`.
    let out = std::process::Command::new("python3")
        .arg(manifest.join("tests/oracle/btf_oracle.py"))
        .arg("--deadlines")
        .arg(manifest.join("tests/oracle/cases/deadlines.csv"))
        .arg("--tracedb")
        .arg(util::bin())
        .args(&files)
        .env_remove("TRACEDB_ARCHIVE")
        .output()
        .unwrap();
    let report = agreed(&out);
    assert_eq!(report.matches("; 0 differences").count(), files.len(), "{report}");
    assert!(
        report.contains(
            "8437 instances, 610 lock_requests, 16818 intervals, 26 response_times, \
             22 preemption_pairs, 800 cpu_load 1000000, 116 cpu_load 7000000, \
             88 execution_times, 26 activation_jitter, 26 deadline_summary, \
             2 semaphore_contention, 26 deadline_summary file;"
        ),
        "{report}"
    );
}

/// tests/oracle/ovni_oracle.py replays ovni's emulator from its source (bsc-pm/ovni src/emu)
/// and the README's readings, written without looking at tracedb's ovni importer: every
/// thread and CPU `intervals` row (state, value, times, open) and every task instance's
/// BTF-shaped events (action, time, source) must agree with it, and tracedb may give no
/// warning, on the four shared ovni samples and on traces tests/oracle/ovni_gen.py writes
/// (fixed seeds: several looms with clock offsets, processes and threads, nOS-V and Nanos6,
/// marks, some titled like the emulator's own channels, affinity changes, cooling, nested and
/// parallel tasks, ties, the v2 layout).
#[test]
fn shared_ovni_streams_and_generated_traces_agree_with_the_independent_oracle() {
    let Some(root) = util::shared_datasets() else { return };
    if !python3("ovni_oracle.py") {
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generator = manifest.join("tests/oracle/ovni_oracle.py");
    let tmp = tempfile::tempdir().unwrap();
    let mut traces: Vec<_> = std::fs::read_dir(root.join("ovni"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    traces.sort();
    assert_eq!(traces.len(), 4, "{traces:?}");
    let generated: &[(&str, &[&str])] = &[
        ("s1", &["--seed", "1"]),
        ("s2", &["--seed", "2"]),
        ("s8", &["--seed", "8"]),
        ("t3", &["--seed", "3", "--ties"]),
        ("v5", &["--seed", "5", "--v2"]),
        ("n6", &["--seed", "6", "--model", "nanos6", "--looms", "2"]),
        ("p9", &["--seed", "9", "--model", "nosv", "--looms", "2", "--steps", "120"]),
        // Marks titled like the emulator's own channels (s8: nOS-V's thread subsystem; b46:
        // `Thread: CPU affinity`; b22: Nanos6's CPU subsystem) and `2` (b21: the CPU's tid
        // channel, unnamed in cpu.pcf).
        ("b21", &["--seed", "1021", "--model", "nosv", "--looms", "2"]),
        ("b22", &["--seed", "1022", "--model", "nanos6"]),
        ("b46", &["--seed", "1046"]),
    ];
    for (name, args) in generated {
        let dir = tmp.path().join(name);
        let out = std::process::Command::new("python3")
            .arg(&generator)
            .arg("--generate")
            .arg(&dir)
            .args(*args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        traces.push(dir);
    }
    let report = oracle("ovni_oracle.py", &traces);
    assert_eq!(report.matches("; 0 differences").count(), traces.len(), "{report}");
    // Not vacuous: the samples' channels and tasks, and every generated trace's rows.
    for line in [
        "emu-nanos6-nested-tasks: 2409 intervals, 600 task events; 0 differences",
        "emu-nosv-nested-tasks: 2809 intervals, 600 task events; 0 differences",
        "emu-ovni-libovni-mark: 1439 intervals, 0 task events; 0 differences",
        "emu-ovni-mp-simple: 32 intervals, 0 task events; 0 differences",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    for (name, _) in generated {
        let line = report.lines().find(|l| l.contains(&format!("/{name}: "))).unwrap();
        let n: u32 = line.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(n > 100, "{line}");
    }
}

/// tests/oracle/qs_oracle.py decodes QS on its own, written from FORMATS.md §3, the README's
/// QS section and QSPY's parser (qspy.c of QSPY 5.3, 7.2 and 8; qpc's qs.h and the records
/// its sources write) before the QS importer was read: every `events` row (time, source and
/// target with their types, action, note, value), `entities` (name, type), `messages`
/// (sender, receiver, tag, times) and the count of each decoding `diagnostics` kind must
/// agree with it on the four shared QS captures (the QP 5 and 4.2 ones with the options
/// their decodes used) and on 20 random streams it generates (QP 4.5 to 8.1, both target-info
/// formats and `.dic` files, pointers of 1 to 8 bytes, 1- to 4-byte timestamps that wrap,
/// target resets, every record kind, user records with every format byte, escapes, lost,
/// corrupt, cut and over-long frames, tick rates); its own decoding of qp694 must also
/// give QSPY's MATLAB output of it, line for line.
#[test]
fn shared_qs_captures_and_generated_streams_agree_with_the_independent_oracle() {
    let Some(root) = util::shared_datasets() else { return };
    if !python3("qs_oracle.py") {
        return;
    }
    let qs = root.join("qs");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("qp5.dic"), "-v540 -T4 -O4 -F4 -S2 -C4\n").unwrap();
    std::fs::write(d.join("qp42.dic"), "-v420\n-T4 -O8 -F8 -S2 -E4 -Q4 -P4 -B4 -C4\n").unwrap();
    let run = |args: &[&std::ffi::OsStr]| oracle("qs_oracle.py", args);
    let os = |p: &Path| p.as_os_str().to_owned();
    let report = [
        run(&[
            "--matlab".as_ref(),
            &os(&qs.join("qp694-dpp-qpc.qspy-matlab.mat")),
            &os(&qs.join("qp694-dpp-qpc.bin")),
        ]),
        run(&[&os(&qs.join("qp8-dpp-qpc-nodict.bin"))]),
        run(&["--qs-dic".as_ref(), &os(&d.join("qp5.dic")), &os(&qs.join("qp5-dpp.qs"))]),
        run(&["--qs-dic".as_ref(), &os(&d.join("qp42.dic")), &os(&qs.join("qp5-dpp64.qs"))]),
        run(&["--generate".as_ref(), &os(&d.join("gen")), "--seeds".as_ref(), "1-20".as_ref()]),
    ]
    .concat();
    assert_eq!(report.matches("; 0 differences").count(), 4 + 20, "{report}");
    assert!(
        report.contains(
            "1044 events, 30 entities, 119 messages, 5 diagnostics, 1040 QSPY MATLAB lines; \
             0 differences"
        ),
        "{report}"
    );
    assert!(report.contains("6188 events, 35 entities, 798 messages"), "{report}");
}

/// tests/oracle/hw_oracle.py reads hardware-trace exports on its own, written from
/// FORMATS.md §5, SEMANTICS.md ("Hardware traces") and the README's export and mapping
/// sections before the hw importer was read: every system event (task, ISR and runnable
/// transitions, signal writes: time, source and instance, target and instance, action, core,
/// note) and every core's `running` interval must agree with it on 20 exports it generates
/// (2-4 cores, a scheduler writing the current-task variable, nested ISRs entered by
/// interrupt rows and by branches, switches held in ISRs, runnables and helpers, missing,
/// stub and unmatched returns, signal writes, terminate functions; ns, us, cycles, `ti.back`
/// deltas and timestamp messages; rows in time order and core by core; `,` `;` and tab).
#[test]
fn generated_hardware_exports_agree_with_the_independent_oracle() {
    if !python3("hw_oracle.py") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen = tmp.path().join("gen");
    let args = ["--generate".as_ref(), gen.as_os_str(), "--seeds".as_ref(), "1-20".as_ref()];
    let report = oracle("hw_oracle.py", &args);
    assert_eq!(report.matches("; 0 differences").count(), 20, "{report}");
    // Not vacuous: every export gives system events and running intervals.
    for line in report.lines().filter(|l| l.contains("/gen-")) {
        let counts = line.split(": ").nth(1).unwrap();
        let n: Vec<u32> =
            counts.split(", ").map(|c| c.split(' ').next().unwrap().parse().unwrap()).collect();
        assert!(n[0] > 20 && n[1] > 5, "{line}");
    }
}

/// tests/oracle/prv_oracle.py reads Paraver on its own, written from FORMATS.md §2, the
/// README's Paraver section and paraver-kernel's readers (ProcessModel, TraceBodyIO_v1/v2,
/// the .pcf and .row parsers) before the Paraver importer was read: every `entities` row
/// (name, type), `events` row (seq, time, source, target, action, note, value, core),
/// `intervals` row (entity, channel, start: state, value, length, open, core), `messages`
/// row (both threads, the four times, size, tag), the capture's unit, end and cutter meta,
/// and the count of each warning `diagnostics` kind must agree with it on the two Extrae
/// samples, the four ovni emulator outputs and 17 random traces it generates (nodes, CPUs,
/// applications, tasks and threads; states that overlap, leave gaps or stay open; events
/// of many types with labels shared by a .pcf block; communications; ns, us, ms, none and
/// an unknown unit; the `new format` layout, CRLF, a BOM; no .pcf or no .row; .pcf lines
/// that cannot be read, and second labels, counted as `relabelled_companion` notes).
#[test]
fn shared_paraver_traces_and_generated_ones_agree_with_the_independent_oracle() {
    let Some(root) = util::shared_datasets() else { return };
    if !python3("prv_oracle.py") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut samples = vec![
        root.join("paraver/extrae-test1.prv"),
        root.join("paraver/extrae-lulesh-7+1-chop8.prv"),
    ];
    let mut emu: Vec<_> = std::fs::read_dir(root.join("ovni"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("ovni"))
        .filter(|p| p.join("thread.prv").exists())
        .collect();
    emu.sort();
    assert_eq!(emu.len(), 4, "{emu:?}");
    samples.extend(emu);
    let run = |args: &[&std::ffi::OsStr]| oracle("prv_oracle.py", args);
    let mut args: Vec<&std::ffi::OsStr> = samples.iter().map(|p| p.as_os_str()).collect();
    let report = run(&args);
    let gen = tmp.path().join("gen");
    args = vec!["--generate".as_ref(), gen.as_os_str(), "--seeds".as_ref(), "1-17".as_ref()];
    let report = report + &run(&args);
    assert_eq!(report.matches("; 0 differences").count(), 6 + 17, "{report}");
    // Not vacuous: the samples' rows, and every generated trace's.
    for line in [
        "extrae-lulesh-7+1-chop8.prv: 40 entities, 16624 events, 11995 intervals, 160 messages",
        "emu-nosv-nested-tasks/ovni: 3 entities, 4829 events, 2809 intervals, 0 messages",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    let mut rows = 0;
    for line in report.lines().filter(|l| l.contains("/gen-")) {
        let n = |i: usize| -> u32 {
            line.split(", ").nth(i).unwrap().split(' ').next().unwrap().parse().unwrap()
        };
        assert!(n(1) + n(2) > 0, "events and intervals: {line}");
        rows += n(1) + n(2);
    }
    assert!(rows > 5000, "{rows} events and intervals in the generated traces\n{report}");
    assert!(report.contains("new format") && report.contains("CRLF"), "{report}");
}

/// tests/oracle/shark_oracle.py reads S.Ha.R.K. FTrace logs on its own, written from
/// FORMATS.md §4, SEMANTICS.md and the README's S.Ha.R.K. section before the importer was
/// read: every `events` row (time, source and target with their types and instances,
/// action, note, value), every task and ISR instance (activate, start, terminate,
/// preemptions, complete) and the count of the decoding diagnostics must agree with it on
/// the random logs it generates (one CPU under RM or EDF, periodic and aperiodic tasks,
/// queued activations, epilogues, contended mutexes and semaphores, nested and lost
/// interrupts, user events, fast-variant and unknown records, every way of giving the
/// rate, chunk runs with a wrapped or cut last chunk, UDP captures). Seeds 1, 4, 19... give
/// a destroyed task's pid back to its context or to another, as the kernel reuses
/// `proc_table` slots.
#[test]
fn generated_shark_logs_agree_with_the_independent_oracle() {
    if !python3("shark_oracle.py") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen = tmp.path().join("gen");
    let args = ["--generate".as_ref(), gen.as_os_str(), "--seeds".as_ref(), "1-24".as_ref()];
    let report = oracle("shark_oracle.py", &args);
    assert_eq!(report.matches("; 0 differences").count(), 24, "{report}");
    // The generated logs are what they say: a few hundred records each, some of every form.
    assert!(report.contains(", UDP") && report.contains("chunk files"), "{report}");
    assert!(report.contains("last wrapped") && report.contains(", cut"), "{report}");
}
