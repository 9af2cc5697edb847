//! Paraver: the real Extrae and ovni captures in ../shared/datasets (skipped when absent),
//! with expected counts computed here from the text, independently of the importer; and
//! refusal of files that are not Paraver.
use crate::util::{self, ok, scalar};
use std::collections::HashMap;
use std::path::Path;

/// Counts read naively from a .prv: state records, event pairs, communication records, and
/// the channel intervals the event pairs make (per row and type: a non-zero value different
/// from the current one starts an interval; in ovni's traces, so does a 0 of its `PRV_ZERO`
/// types, 3, 17 and 200-299).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Counts {
    states: u64,
    pairs: u64,
    comms: u64,
    channel_intervals: u64,
}

fn count(path: &Path) -> Counts {
    let text = std::fs::read_to_string(path).unwrap();
    let mut c = Counts::default();
    let mut current: HashMap<(String, String), String> = HashMap::new();
    let ovni = text.lines().next().is_some_and(|h| h.contains("(19/01/38 at 03:14)"));
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.trim().split(':').collect();
        match f[0] {
            "1" => c.states += 1,
            "3" => c.comms += 1,
            "2" => {
                let row = f[1..5].join(":")[2..].to_string(); // appl:task:thread (cpu dropped)
                for p in f[6..].chunks(2) {
                    c.pairs += 1;
                    let key = (row.clone(), p[0].to_string());
                    let value = p[1].to_string();
                    let zero_is_value = ovni
                        && p[0]
                            .parse::<u32>()
                            .is_ok_and(|t| t == 3 || t == 17 || (200..300).contains(&t));
                    if value == "0" && !zero_is_value {
                        current.remove(&key);
                    } else if current.get(&key) != Some(&value) {
                        c.channel_intervals += 1;
                        current.insert(key, value);
                    }
                }
            }
            _ => {}
        }
    }
    c
}

/// Row labels of level THREAD in a .row, trimmed.
fn thread_labels(row: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(row).unwrap();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some(n) = l.trim().strip_prefix("LEVEL THREAD SIZE ") {
            return lines.take(n.parse().unwrap()).map(|l| l.trim().to_string()).collect();
        }
    }
    Vec::new()
}

fn check(dir: &Path, id: usize, expected: Counts, what: &str) {
    let q = |sql: String| scalar(dir, "db", &sql);
    let states =
        q(format!("SELECT count(*) FROM intervals WHERE capture_id = {id} AND channel = 'state'"));
    assert_eq!(states, expected.states.to_string(), "{what}: state intervals = state records");
    let channels =
        q(format!("SELECT count(*) FROM intervals WHERE capture_id = {id} AND channel <> 'state'"));
    assert_eq!(channels, expected.channel_intervals.to_string(), "{what}: channel intervals");
    let events = q(format!("SELECT count(*) FROM events WHERE capture_id = {id}"));
    assert_eq!(events, expected.pairs.to_string(), "{what}: events = type:value pairs");
    let messages = q(format!("SELECT count(*) FROM messages WHERE capture_id = {id}"));
    assert_eq!(messages, expected.comms.to_string(), "{what}: messages = communication records");
    let lost = q(format!("SELECT count(*) FROM diagnostics WHERE capture_id = {id} AND severity IN ('error', 'data_loss')"));
    assert_eq!(lost, "0", "{what}: no record lost");
}

/// The `.prv` files of ../shared/datasets/paraver, sorted.
fn shared_prv_files(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root.join("paraver"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "prv"))
        .collect();
    files.sort();
    files
}

#[test]
fn shared_paraver_captures_ingest_with_every_record() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = shared_prv_files(&root);
    assert!(files.len() >= 2, "expected the Extrae samples");
    for (i, f) in files.iter().enumerate() {
        ok(tmp.path(), &["ingest", "--archive", "db", f.to_str().unwrap()]);
        check(tmp.path(), i + 1, count(f), &f.display().to_string());
    }
    // Names come from the .pcf: state 1 is "Running", type 50000001 "MPI Point-to-point".
    let lulesh = files.iter().position(|f| f.to_string_lossy().contains("lulesh")).unwrap() + 1;
    let text = std::fs::read_to_string(&files[lulesh - 1]).unwrap();
    let running = text.lines().filter(|l| l.starts_with("1:") && l.ends_with(":1")).count();
    let p2p: usize =
        text.lines().filter(|l| l.starts_with("2:")).map(|l| l.matches(":50000001:").count()).sum();
    let q = |sql: String| scalar(tmp.path(), "db", &sql);
    assert_eq!(q(format!("SELECT count(*) FROM intervals WHERE capture_id = {lulesh} AND channel = 'state' AND state = 'Running'")), running.to_string());
    assert_eq!(q(format!("SELECT count(*) FROM events WHERE capture_id = {lulesh} AND action = 'MPI Point-to-point'")), p2p.to_string());
    // Thread names come from the .row.
    let labels = thread_labels(&files[lulesh - 1].with_extension("row"));
    assert_eq!(labels.len(), 20);
    let named = q(format!(
        "SELECT count(*) FROM entities WHERE capture_id = {lulesh} AND type = 'THREAD' AND name IN ({})",
        labels.iter().map(|l| format!("'{l}'")).collect::<Vec<_>>().join(",")
    ));
    assert_eq!(named, "20");
    // The analyses answer on it: every thread's state percentages add up to 100.
    let bad = q(format!(
        "SELECT count(*) FROM (SELECT entity, sum(pct) AS p FROM state_time WHERE capture_id = {lulesh} AND kind = 'THREAD' GROUP BY entity) WHERE abs(p - 100) > 0.1"
    ));
    assert_eq!(bad, "0");
    assert_eq!(
        q(format!("SELECT sum(messages) FROM messages_summary WHERE capture_id = {lulesh}")),
        "160"
    );
}

#[test]
fn shared_ovni_output_directories_ingest_as_one_capture() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs: Vec<_> =
        std::fs::read_dir(root.join("ovni")).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "expected the ovni samples");
    for (i, d) in dirs.iter().enumerate() {
        let out = d.join("ovni");
        ok(tmp.path(), &["ingest", "--archive", "db", &format!("{}/", out.display())]);
        let (t, c) = (count(&out.join("thread.prv")), count(&out.join("cpu.prv")));
        let both = Counts {
            states: t.states + c.states,
            pairs: t.pairs + c.pairs,
            comms: t.comms + c.comms,
            channel_intervals: t.channel_intervals + c.channel_intervals,
        };
        check(tmp.path(), i + 1, both, &out.display().to_string());
        let q = |sql: String| scalar(tmp.path(), "db", &sql);
        let id = i + 1;
        assert_eq!(
            q(format!("SELECT count(*) FROM captures WHERE capture_id = {id} AND format = 'prv'")),
            "1"
        );
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(q(format!("SELECT name FROM captures WHERE capture_id = {id}")), name);
        // Rows are named from thread.row (TH ...) and cpu.row ( CPU ..., trimmed).
        let threads = thread_labels(&out.join("thread.row"));
        let cpus = thread_labels(&out.join("cpu.row"));
        let n_threads = q(format!("SELECT count(*) FROM entities WHERE capture_id = {id} AND type = 'THREAD' AND name LIKE 'TH %'"));
        assert_eq!(n_threads, threads.len().to_string(), "{name}: threads");
        let n_cpus =
            q(format!("SELECT count(*) FROM entities WHERE capture_id = {id} AND type = 'CPU'"));
        assert_eq!(n_cpus, cpus.len().to_string(), "{name}: CPUs");
        // A thread's channels and their mirror on the CPUs are summed apart.
        let by_kind = format!(
            "SELECT coalesce(string_agg(k, ' ' ORDER BY k), '') FROM (SELECT kind || '=' || sum(time) AS k \
             FROM channel_time WHERE capture_id = {id} GROUP BY kind)"
        );
        let from_intervals = format!(
            "SELECT coalesce(string_agg(k, ' ' ORDER BY k), '') FROM (SELECT entity_type || '=' || sum(dur) AS k \
             FROM intervals WHERE capture_id = {id} AND channel NOT IN ('state', 'running', 'value') \
             GROUP BY entity_type)"
        );
        assert_eq!(q(by_kind), q(from_intervals), "{name}: channel_time per kind");
    }
}

#[test]
fn an_ovni_directory_is_named_after_the_experiment_however_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu-run/ovni");
    std::fs::create_dir_all(&out).unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prv/applications");
    std::fs::copy(case.join("input.prv"), out.join("thread.prv")).unwrap();
    std::os::unix::fs::symlink("emu-run/ovni", tmp.path().join("link")).unwrap();
    let db = tmp.path().join("db");
    let db = db.to_str().unwrap();
    // `.` inside the ovni folder was named `ovni`; the same folder written out, `emu-run`.
    for (cwd, arg) in [
        (out.as_path(), "."),
        (out.as_path(), "./"),
        (tmp.path(), "emu-run/ovni"),
        (tmp.path(), "emu-run/ovni/"),
        (tmp.path(), "emu-run"),
        (tmp.path(), "emu-run/ovni/.."),
        (tmp.path(), "link"),
    ] {
        ok(cwd, &["ingest", "--archive", db, "--force", arg]);
    }
    assert_eq!(
        scalar(
            tmp.path(),
            db,
            "SELECT string_agg(DISTINCT name, ' ') || ' ' || count(*) FROM captures"
        ),
        "emu-run 7"
    );
}

#[test]
fn a_file_that_is_not_paraver_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("x.prv"), "hello, world\n1:2:3\n").unwrap();
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "--format", "prv", "x.prv"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("x.prv") && err.contains("not a prv file"), "{err}");
    std::fs::write(tmp.path().join("b.btf"), "#version 2.1\n0,a,0,T,b,0,start\n").unwrap();
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "--format", "prv", "b.btf"]);
    assert_eq!(out.status.code(), Some(1), "a BTF file is not Paraver");
    // A directory that is not an ovni output directory is refused too.
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "empty"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ovni output directory"));
    // Nothing was ingested.
    let _ = std::fs::metadata(tmp.path().join("db"));
}

#[test]
fn a_gzipped_prv_finds_its_companions_and_strict_accepts_missing_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prv/applications");
    let prv = std::fs::read(case.join("input.prv")).unwrap();
    std::fs::write(tmp.path().join("run.prv.gz"), util::gzip(&prv)).unwrap();
    std::fs::copy(case.join("input.pcf"), tmp.path().join("run.pcf")).unwrap();
    std::fs::copy(case.join("input.row"), tmp.path().join("run.row")).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "--strict", "run.prv.gz"]);
    assert_eq!(scalar(tmp.path(), "db", "SELECT name FROM captures"), "run");
    // bytes_in counts every file read: the trace and its companions.
    let size = |f: &str| std::fs::metadata(tmp.path().join(f)).unwrap().len();
    assert_eq!(
        scalar(tmp.path(), "db", "SELECT source_bytes FROM captures"),
        (size("run.prv.gz") + size("run.pcf") + size("run.row")).to_string()
    );
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM entities WHERE name = 'viz'"), "1");
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM diagnostics"), "0");
    // Events carry the CPU of their record as core.
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events WHERE core IS NULL"), "0");
    // Missing companions are info only: --strict still ingests.
    std::fs::write(tmp.path().join("bare.prv"), &prv).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "--strict", "bare.prv"]);
    assert_eq!(
        scalar(
            tmp.path(),
            "db",
            "SELECT count(*) FROM diagnostics WHERE kind = 'missing_companion'"
        ),
        "2"
    );
    // The same trace and companions again: not stored twice. A changed .pcf beside the same
    // .prv: a new capture (its names differ).
    let again = util::run(tmp.path(), &["ingest", "--archive", "db", "run.prv.gz"]);
    let msg = String::from_utf8_lossy(&again.stderr);
    assert!(msg.contains("identical to capture 1 'run'"), "{msg}");
    let mut pcf = std::fs::read_to_string(tmp.path().join("run.pcf")).unwrap();
    pcf.push('\n');
    std::fs::write(tmp.path().join("run.pcf"), pcf).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "run.prv.gz"]);
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM captures WHERE name = 'run'"), "2");
}

#[test]
fn a_corrupt_companion_is_named_with_its_error_and_the_trace_still_ingests() {
    let tmp = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prv/applications");
    std::fs::copy(case.join("input.prv"), tmp.path().join("z1.prv")).unwrap();
    std::fs::copy(case.join("input.row"), tmp.path().join("z1.row")).unwrap();
    let gz = util::gzip(&std::fs::read(case.join("input.pcf")).unwrap());
    std::fs::write(tmp.path().join("z1.pcf.gz"), &gz[..gz.len() - 12]).unwrap();
    // --strict stops on it (a warning), naming the file and the error.
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "--strict", "z1.prv"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("z1.pcf.gz: gzip stream ends early"), "{err}");
    ok(tmp.path(), &["ingest", "--archive", "db", "z1.prv"]);
    let q = |sql: &str| scalar(tmp.path(), "db", sql);
    assert_eq!(
        q("SELECT severity || ' ' || message FROM diagnostics WHERE kind = 'unreadable_companion'"),
        "warning z1.pcf.gz: gzip stream ends early (truncated file?): state and event names and \
         value labels are shown as numbers"
    );
    assert_eq!(q("SELECT count(*) FROM diagnostics WHERE kind = 'missing_companion'"), "0");
    // Numbers for state names; the .row still names the threads.
    assert_eq!(q("SELECT count(*) FROM intervals WHERE state = 'Running'"), "0");
    assert_eq!(q("SELECT count(*) FROM intervals WHERE channel = 'state' AND state = '1'"), "3");
    assert_eq!(q("SELECT count(*) FROM entities WHERE name = 'viz'"), "1");
    // The same files again are the same capture.
    let again = util::run(tmp.path(), &["ingest", "--archive", "db", "z1.prv"]);
    let msg = String::from_utf8_lossy(&again.stderr);
    assert!(msg.contains("identical to capture 1 'z1'"), "{msg}");
}

#[test]
fn totals_beyond_64_bits_are_summed_not_refused() {
    // Three states of 4e18 ns, and two messages of 2^62 bytes: each fits, their sums do not
    // fit in 64 bits.
    let tmp = tempfile::tempdir().unwrap();
    let prv = "#Paraver (01/01/2020 at 00:00):4000000000000000000_ns:1(3):1:1(3:1)\n\
               1:1:1:1:1:0:-1:1\n1:2:1:1:2:0:-1:1\n1:3:1:1:3:0:-1:1\n\
               2:1:1:1:1:0:100:1\n2:2:1:1:2:0:100:1\n2:3:1:1:3:0:100:1\n\
               3:1:1:1:1:10:10:2:1:1:2:20:20:4611686018427387904:1\n\
               3:1:1:1:1:10:10:2:1:1:2:20:20:4611686018427387904:1\n";
    std::fs::write(tmp.path().join("big.prv"), prv).unwrap();
    ok(tmp.path(), &["ingest", "--archive", "db", "big.prv"]);
    let d = tmp.path();
    assert_eq!(
        scalar(d, "db", "SELECT time FROM channel_time WHERE channel = '100'"),
        "12000000000000000000"
    );
    assert_eq!(scalar(d, "db", "SELECT bytes FROM messages_summary"), "9223372036854775808");
    ok(d, &["report", "--archive", "db", "-o", "r.json"]);
}

#[test]
fn a_compressed_trace_cut_inside_its_header_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let gz = util::gzip(b"#Paraver (01/01/2020 at 10:00):1000_ns:0:1:1(1:1)\n");
    std::fs::write(tmp.path().join("cut.prv"), &gz[..gz.len() - 10]).unwrap();
    let out = util::run(tmp.path(), &["ingest", "--archive", "db", "cut.prv"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.prv: line 1: the header cannot be read: gzip stream ends early"),
        "{err}"
    );
}

#[test]
fn companions_with_a_bom_not_utf8_or_zstd_compressed_are_read_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let prv = "#Paraver (01/01/2024 at 00:00):100_ns:1(2):1:1(1:1)\n1:2:1:1:1:0:40:1\n";
    let pcf = "STATES\n1\tRunning\n";
    // A BOM in front of both, and a Latin-1 byte in a CPU label.
    let row = b"LEVEL CPU SIZE 2\nnode.cpu1\nn\xfacleo2\n\nLEVEL THREAD SIZE 1\nrank0\n";
    std::fs::write(d.join("b.prv"), prv).unwrap();
    std::fs::write(d.join("b.pcf"), format!("\u{feff}{pcf}")).unwrap();
    std::fs::write(d.join("b.row"), [&b"\xef\xbb\xbf"[..], row].concat()).unwrap();
    ok(d, &["ingest", "--archive", "db", "b.prv"]);
    let q = |db: &str, sql: &str| scalar(d, db, sql);
    assert_eq!(
        q("db", "SELECT entity || ' ' || state || ' ' || core FROM intervals"),
        "rank0 Running n\u{fffd}cleo2"
    );
    assert_eq!(
        q("db", "SELECT kind || ': ' || message FROM diagnostics"),
        "\"invalid_utf8: b.row: bytes that are not UTF-8, replaced by U+FFFD in the names it gives\""
    );
    // The text of the companions counts in the text size, as their bytes do in the size.
    let total = (prv.len() + pcf.len() + row.len() + 6) as u64;
    assert_eq!(
        q("db", "SELECT source_bytes || ' ' || source_text_bytes FROM captures"),
        format!("{total} {total}")
    );

    // zstd-compressed companions are found like gzipped ones.
    let z = d.join("z");
    std::fs::create_dir(&z).unwrap();
    std::fs::write(z.join("b.prv"), prv).unwrap();
    std::fs::write(z.join("b.pcf.zst"), zstd::encode_all(pcf.as_bytes(), 3).unwrap()).unwrap();
    let row = "LEVEL CPU SIZE 2\nCPU 1.0\nCPU 1.1\n\nLEVEL THREAD SIZE 1\nTHREAD 7\n";
    std::fs::write(z.join("b.row.zst"), zstd::encode_all(row.as_bytes(), 3).unwrap()).unwrap();
    ok(&z, &["ingest", "--archive", "db", "b.prv"]);
    // Labels that look like made names but are no other row's name stay as they are.
    assert_eq!(
        scalar(&z, "db", "SELECT entity || ' ' || state || ' ' || core FROM intervals"),
        "THREAD 7 Running CPU 1.1"
    );
    assert_eq!(scalar(&z, "db", "SELECT count(*) FROM diagnostics"), "0");
}

#[test]
fn a_trace_cut_short_does_not_run_its_open_states_to_the_declared_end() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut prv = String::from("#Paraver (01/01/2024 at 00:00):1000000_ns:1(1):1:1(1:1)\n");
    for i in 0..20000u64 {
        // State records, and an event that sets a channel at each one.
        prv.push_str(&format!(
            "1:1:1:1:1:{}:{}:1\n2:1:1:1:1:{}:77:{}\n",
            i * 10,
            i * 10 + 10,
            i * 10,
            i % 5 + 1
        ));
    }
    let gz = util::gzip(prv.as_bytes());
    std::fs::write(d.join("cut.prv.gz"), &gz[..gz.len() * 6 / 10]).unwrap();
    ok(d, &["ingest", "--archive", "db", "cut.prv.gz"]);
    let q = |sql: &str| scalar(d, "db", sql);
    assert_eq!(q("SELECT count(*) FROM diagnostics WHERE kind = 'input_truncated'"), "1");
    let last: i64 = q("SELECT max(ts) FROM events").parse().unwrap();
    assert!(last < 200_000, "{last}");
    // The channel left open at the cut ends where the data ends, not at the header's 1 ms.
    assert_eq!(q("SELECT max(ts + dur) FROM intervals"), q("SELECT ts_max FROM captures"));
    let ts_max: i64 = q("SELECT ts_max FROM captures").parse().unwrap();
    assert!(ts_max <= last + 10, "{ts_max} {last}");
}

#[test]
fn a_companion_too_large_to_be_one_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("b.prv"),
        "#Paraver (01/01/2024 at 00:00):100_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:40:1\n",
    )
    .unwrap();
    // 129 MiB of text in a small .gz (a decompression bomb, or not a .pcf at all).
    let mut text = b"STATES\n".to_vec();
    text.resize(129 << 20, b'x');
    std::fs::write(d.join("b.pcf.gz"), util::gzip(&text)).unwrap();
    ok(d, &["ingest", "--archive", "db", "b.prv"]);
    assert_eq!(
        scalar(d, "db", "SELECT severity || ' ' || message FROM diagnostics WHERE kind = 'unreadable_companion'"),
        "warning b.pcf.gz: more than 128 MiB of text: not read: state and event names and value labels are shown as numbers"
    );
}

#[test]
fn row_labels_chained_to_clash_at_every_renaming_end_unique() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let n = 300;
    std::fs::write(
        d.join("c.prv"),
        format!("#Paraver (01/01/2024 at 10:00):1000_ns:0:1:1({n}:1)\n2:0:1:1:1:10:5:1\n"),
    )
    .unwrap();
    // "a", "a", "a (1.1.2)", "a (1.1.2) (1.1.3)", ...: each renaming makes the next clash.
    let mut row = format!("LEVEL THREAD SIZE {n}\na\n");
    let mut label = "a".to_string();
    for t in 2..=n {
        row.push_str(&label);
        row.push('\n');
        label = format!("{label} (1.1.{t})");
    }
    std::fs::write(d.join("c.row"), row).unwrap();
    ok(d, &["ingest", "--archive", "db", "c.prv"]);
    assert_eq!(
        scalar(
            d,
            "db",
            "SELECT count(*) || ' ' || count(DISTINCT name) FROM entities WHERE type = 'THREAD'"
        ),
        format!("{n} {n}")
    );
}

/// Time per (event type, value) of every channel of a .prv, computed naively from its text:
/// the `type:value` pairs taken in time order (a stable sort: equal times keep file order),
/// per row and type a value different from the current one ends its interval and starts one
/// (0 only ends it, except for ovni's `PRV_ZERO` types 3, 17 and 200-299), and what is still
/// open runs to the header's end time or the latest record time, whichever is later. Also
/// the number of intervals. Times are in the file's unit (ns for every shared sample).
fn channel_times(path: &Path) -> std::collections::BTreeMap<(String, String), (i128, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.contains("_ns:"), "{}: the samples are in ns", path.display());
    let ovni = header.contains("(19/01/38 at 03:14)");
    let end_field = header.split("):").nth(1).unwrap().split(':').next().unwrap();
    let mut end: i128 = end_field.trim_end_matches("_ns").parse().unwrap();
    let mut pairs = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.trim().split(':').collect();
        let times: &[usize] = match f[0] {
            "1" => &[5, 6],
            "2" => &[5],
            "3" => &[5, 6, 11, 12],
            _ => &[],
        };
        for &i in times {
            end = end.max(f[i].parse().unwrap());
        }
        if f[0] == "2" {
            let t: i128 = f[5].parse().unwrap();
            for (k, p) in f[6..].chunks(2).enumerate() {
                let row = f[2..5].join(".");
                pairs.push((t, n, k, row, p[0].to_string(), p[1].to_string()));
            }
        }
    }
    pairs.sort_by_key(|p| (p.0, p.1, p.2));
    let mut out: std::collections::BTreeMap<(String, String), (i128, u64)> = Default::default();
    let mut current: HashMap<(String, String), (i128, String)> = HashMap::new();
    let mut close = |ty: &str, value: &str, dur: i128| {
        let e = out.entry((ty.to_string(), value.to_string())).or_default();
        e.0 += dur;
        e.1 += 1;
    };
    for (t, _, _, row, ty, value) in pairs {
        let zero_is_value =
            ovni && ty.parse::<u32>().is_ok_and(|t| t == 3 || t == 17 || (200..300).contains(&t));
        let key = (row, ty.clone());
        if current.get(&key).is_some_and(|c| c.1 == value) {
            continue;
        }
        if let Some((since, v)) = current.remove(&key) {
            close(&ty, &v, t - since);
        }
        if value != "0" || zero_is_value {
            current.insert(key, (t, value));
        }
    }
    for ((_, ty), (since, v)) in current {
        close(&ty, &v, end - since);
    }
    out
}

#[test]
fn shared_captures_give_each_channel_value_the_time_a_naive_reading_gives() {
    // Each .prv alone (no .pcf: channels are named by their type, states by their value),
    // so the intervals can be compared with the naive reading of the text.
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut files = shared_prv_files(&root);
    for d in std::fs::read_dir(root.join("ovni")).unwrap().flatten() {
        files.push(d.path().join("ovni/thread.prv"));
        files.push(d.path().join("ovni/cpu.prv"));
    }
    files.sort();
    assert!(files.len() >= 10, "expected the Extrae and ovni samples");
    for (i, f) in files.iter().enumerate() {
        let name = format!("t{i}.prv");
        std::fs::copy(f, tmp.path().join(&name)).unwrap();
        ok(tmp.path(), &["ingest", "--archive", "db", &name]);
        let got = util::csv(
            tmp.path(),
            "db",
            &format!(
                "SELECT channel, state, sum(dur), count(*) FROM intervals JOIN captures \
                 USING (capture_id) WHERE name = 't{i}' AND channel <> 'state' \
                 GROUP BY ALL ORDER BY ALL"
            ),
        );
        let got: std::collections::BTreeMap<(String, String), (i128, u64)> = got
            .lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                (
                    (c[0].to_string(), c[1].to_string()),
                    (c[2].parse().unwrap(), c[3].parse().unwrap()),
                )
            })
            .collect();
        let expected = channel_times(f);
        assert!(!expected.is_empty(), "{}", f.display());
        assert_eq!(got, expected, "{}", f.display());
    }
}

#[test]
fn nanos6_ctf2prv_rows_are_all_cpus_its_virtual_ones_too() {
    // Nanos6's ctf2prv (scripts/ctf/plugins/paravertrace.py) writes one Paraver "thread" per
    // CPU: its .row labels them `CPU <id>` for the real CPUs, `LT VCPU <n>` for the leader
    // thread's virtual CPU and `ET VCPU <n>` for external threads'. All are CPUs, so one
    // channel is one kind in channel_time, not split between CPU and THREAD.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("trace.prv"),
        "#Paraver (22/11/26 at 18:00):00000000000000001000_ns:0:1:1(00000000000000000004:1)\n\
         2:0:1:1:1:100:6400010:1\n2:0:1:1:3:150:6400010:1\n2:0:1:1:4:200:6400010:1\n\
         2:0:1:1:1:300:6400010:0\n2:0:1:1:3:400:6400010:0\n2:0:1:1:4:600:6400010:0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("trace.pcf"),
        "STATES_COLOR\n0   {  0,   0,   0}\n\nEVENT_TYPE\n0    6400010    Runtime: Runtime Code\n\
         VALUES\n1     Runtime\n\n",
    )
    .unwrap();
    std::fs::write(
        d.join("trace.row"),
        "LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 4\nCPU 0\nCPU 1\nLT VCPU 2\nET VCPU 3\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "--strict", "trace.prv"]);
    assert_eq!(
        util::csv(d, "db", "SELECT name, type FROM entities ORDER BY entity_id"),
        "name,type\nCPU 0,CPU\nCPU 1,CPU\nLT VCPU 2,CPU\nET VCPU 3,CPU\n"
    );
    // 200 + 250 + 400 ns of Runtime, all on CPUs.
    assert_eq!(
        util::csv(d, "db", "SELECT kind, state, entities, time FROM channel_time"),
        "kind,state,entities,time\nCPU,Runtime,3,850\n"
    );
}

#[test]
fn an_event_of_a_cpu_row_keeps_the_cpu_its_record_names() {
    // A row labelled like a CPU is a CPU; its events are on it when the record's cpu field
    // is 0 (ovni's cpu.prv), but a cpu field that names a CPU is where the record says the
    // event happened, as for the intervals it makes (found by tests/oracle/prv_oracle.py:
    // the events said the row, dropping the field).
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("v.prv"),
        "#Paraver (22/11/26 at 19:00):1000_ns:1(3):1:1(2:1)\n\
         2:3:1:1:1:100:50000001:4\n2:0:1:1:2:200:50000001:5\n",
    )
    .unwrap();
    std::fs::write(
        d.join("v.row"),
        "LEVEL CPU SIZE 3\nc1\nc2\nc3\n\nLEVEL THREAD SIZE 2\nCPU 1\nCPU 2\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "v.prv"]);
    let q = |sql: &str| util::csv(d, "db", sql);
    assert_eq!(
        q("SELECT target, core FROM events ORDER BY ts"),
        "target,core\nCPU 1,c3\nCPU 2,CPU 2\n"
    );
    assert_eq!(
        q("SELECT entity, core FROM intervals ORDER BY ts"),
        "entity,core\nCPU 1,c3\nCPU 2,\n"
    );
}

#[test]
fn a_communication_naming_a_cpu_outside_the_model_is_reported_like_any_record() {
    // paraver-kernel checks a communication's two cpu fields as it checks a state's or an
    // event's; tracedb kept the record but said nothing about them (found by
    // tests/oracle/prv_oracle.py). Both layouts: the usual one and `new format`'s `d`.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("m.prv"),
        "#Paraver (22/11/26 at 19:00):1000_ns:1(2):1:1(2:1)\n\
         3:1:1:1:1:10:11:5:1:1:2:20:21:8:1\n3:7:1:1:2:30:31:2:1:1:1:40:41:8:2\n",
    )
    .unwrap();
    std::fs::write(
        d.join("n.prv"),
        "new format\n#Paraver (22/11/26 at 19:00):1000_ns:1(2):1:1(2:1)\n\
         d:1:1:10:11:9:2:20:21:8:1\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "m.prv", "n.prv"]);
    let q = |sql: &str| util::csv(d, "db", sql);
    assert_eq!(
        q("SELECT capture_id, position, message FROM diagnostics WHERE kind = 'unknown_object' \
           ORDER BY ALL"),
        "capture_id,position,message\n\
         1,m.prv:2,cpu 5 is not in the header's resource model (2 CPUs); kept as CPU 5\n\
         1,m.prv:3,cpu 7 is not in the header's resource model (2 CPUs); kept as CPU 7\n\
         2,n.prv:3,cpu 9 is not in the header's resource model (2 CPUs); kept as CPU 9\n"
    );
    // Every cpu a record names has its entities row, a communication's too.
    assert_eq!(
        q("SELECT capture_id, name FROM entities WHERE type = 'CPU' ORDER BY ALL"),
        "capture_id,name\n1,CPU 1\n1,CPU 2\n1,CPU 5\n1,CPU 7\n2,CPU 1\n2,CPU 9\n"
    );
    assert_eq!(q("SELECT count(*) AS n FROM messages"), "n\n3\n");
}

#[test]
fn a_new_format_body_is_read_as_paraver_kernel_reads_it() {
    // A first line `new format` makes paraver-kernel read the body with TraceBodyIO_v2:
    // objects are one global thread number, `1`/`2` are a state's begin/end, `3` events,
    // `d` communications, `4`..`7` the marks of a communication, `8` a global one.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("n.prv"),
        "new format\n#Paraver (22/11/26 at 19:00):3000_ns:1(2):1:2(2:1,1:1)\n\
         1:1:1:0:1000:1\n2:1:1:1000:0:1\n1:2:3:0:2000:3\n\
         3:1:2:500:50000001:3:50000002:7\n3:2:3:600:50000001:0\n\
         d:1:1:700:710:2:3:800:820:64:5\n4:0\n5:0\n6:0\n7:0\n8:1:1:900:1:1\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "n.prv"]);
    let q = |sql: &str| util::csv(d, "db", sql);
    assert_eq!(
        q("SELECT kind, position FROM diagnostics WHERE kind <> 'missing_companion'"),
        "kind,position\nglobal_comm_ignored,n.prv:13\n"
    );
    // Thread 1 is 1.1.1, thread 2 is 1.1.2, thread 3 is 1.2.1 (the second task).
    assert_eq!(
        q("SELECT entity, channel, state, ts, dur, core FROM intervals ORDER BY entity, ts, channel"),
        "entity,channel,state,ts,dur,core\n\
         THREAD 1.1.1,state,1,0,1000,CPU 1\n\
         THREAD 1.1.2,50000001,3,500,2500,CPU 1\n\
         THREAD 1.1.2,50000002,7,500,2500,CPU 1\n\
         THREAD 1.2.1,state,3,0,2000,CPU 2\n"
    );
    assert_eq!(
        q("SELECT sender, receiver, send_ts, phys_send_ts, recv_ts, phys_recv_ts, size, tag FROM messages"),
        "sender,receiver,send_ts,phys_send_ts,recv_ts,phys_recv_ts,size,tag\n\
         THREAD 1.1.1,THREAD 1.2.1,700,710,800,820,64,5\n"
    );
    assert_eq!(q("SELECT count(*) AS n FROM events"), "n\n3\n");
}

#[test]
fn a_record_ending_with_a_colon_is_read_as_paraver_kernel_reads_it() {
    // paraver-kernel's reader skips one separator after each number, so a writer that ends
    // every `:type:value` with a colon (`2:...:10:1:`) loses nothing in Paraver. One field
    // short is still short.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("c.prv"),
        "#Paraver (22/11/26 at 19:00):100:0:1:1(2:1)\n\
         1:0:1:1:1:0:50:1:\n2:0:1:1:2:5:10:1:11:2:\n2:0:1:1:2:7:10:\n\
         3:0:1:1:1:10:10:0:1:1:2:20:20:8:1:\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "c.prv"]);
    let q = |sql: &str| util::csv(d, "db", sql);
    assert_eq!(
        q("SELECT kind, position FROM diagnostics WHERE kind <> 'missing_companion'"),
        "kind,position\nmalformed_record,c.prv:4\n"
    );
    assert_eq!(
        q("SELECT ts, action, value FROM events"),
        "ts,action,value\n5000,10,1\n5000,11,2\n"
    );
    assert_eq!(q("SELECT count(*) AS n FROM intervals WHERE channel = 'state'"), "n\n1\n");
    assert_eq!(q("SELECT size, tag FROM messages"), "size,tag\n8,1\n");
}

#[test]
fn rows_of_a_cpu_view_are_cpus_whatever_the_label_of_its_virtual_cpus() {
    // A .row whose THREAD level starts with a CPU is a CPU view (one row per CPU), and its
    // virtual CPUs are CPUs too, whatever their label: ovni's older emulator ends cpu.row
    // with `UNSET`, an older Nanos6 CTF converter with `LEADER` and `EXT 0` (after
    // `CPU %2d` labels: `CPU  0`).
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let prv = "#Paraver (19/01/38 at 03:14):00000000000000000500_ns:0:1:1(4:1)\n\
               2:0:1:1:1:100:3:1\n2:0:1:1:2:100:3:1\n2:0:1:1:3:100:3:1\n2:0:1:1:4:100:3:1\n";
    for (name, labels) in [
        ("ovni", "CPU 0.0\nCPU 0.1\nCPU 0.2\nUNSET\n"),
        ("conv", "CPU  0\nCPU  1\nLEADER\nEXT 0\n"),
    ] {
        std::fs::write(d.join(format!("{name}.prv")), prv).unwrap();
        std::fs::write(
            d.join(format!("{name}.row")),
            format!("LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 4\n{labels}"),
        )
        .unwrap();
        ok(d, &["ingest", "--archive", "db", &format!("{name}.prv")]);
    }
    assert_eq!(
        util::csv(
            d,
            "db",
            "SELECT capture_id, type, count(*) AS n FROM entities GROUP BY ALL ORDER BY ALL"
        ),
        "capture_id,type,n\n1,CPU,4\n2,CPU,4\n"
    );
    // A thread view (ovni's thread.row) keeps its threads.
    std::fs::write(d.join("th.prv"), prv).unwrap();
    std::fs::write(d.join("th.row"), "LEVEL THREAD SIZE 4\nTH 1.1\nTH 1.2\nTH 1.3\nTH 1.4\n")
        .unwrap();
    ok(d, &["ingest", "--archive", "db", "th.prv"]);
    assert_eq!(
        util::csv(
            d,
            "db",
            "SELECT type, count(*) AS n FROM entities WHERE capture_id = 3 GROUP BY ALL"
        ),
        "type,n\nTHREAD,4\n"
    );
}

#[test]
fn a_trace_cut_by_paraver_says_so_in_its_meta() {
    // Paraver's cutter copies the `#` metadata lines of the trace it cuts and adds its own,
    // `#<date>:CUTTER:<ORIGINAL|RUNAPP>:"<original trace>":<offset>:<begin>:<end>` (times in
    // the trace's unit); paraver-kernel adds up the offsets of all the cuts.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("cut.prv"),
        "#Paraver (22/11/26 at 19:00):500_us:0:1:1(1:1),0\n\
         #20221121164408:CUTTER:ORIGINAL:\"/runs/a:b/full.prv\":3000:3000:9000\n\
         # cut.prv: Offset 3000 from full.prv\n\
         #20221122101010:CUTTER:RUNAPP:\"/runs/a:b/cut1.prv\":1000:1000:1500\n\
         1:0:1:1:1:0:500:1\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "cut.prv"]);
    let meta = |key: &str| {
        scalar(d, "db", &format!("SELECT json_extract_string(meta, '$.\"{key}\"') FROM captures"))
    };
    // 3000 + 1000 us.
    assert_eq!(meta("paraver.cut_offset_ns"), "4000000");
    assert_eq!(meta("paraver.cut_from"), "/runs/a:b/full.prv");
    assert_eq!(meta("paraver.cuts"), "2");
    // Times stay the cut trace's own: the state starts at 0.
    assert_eq!(scalar(d, "db", "SELECT ts FROM intervals"), "0");
}

#[test]
fn a_usual_body_after_a_new_format_line_is_still_read() {
    // Records of the usual layout after a `new format` line are told from the new layout's
    // by their number of fields (a state has 8, not 6; a communication 15, not an even
    // number), so a writer that puts the line before a usual body loses nothing, and the two
    // may even be mixed.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("m.prv"),
        "new format\n#Paraver (22/11/26 at 19:00):3000_ns:0:1:1(2:1)\n\
         1:0:1:1:1:0:1000:1\n1:0:2:0:1000:1\n2:0:1:1:2:5:10:1\n3:0:2:6:10:0\n\
         3:0:1:1:1:10:10:0:1:1:2:20:20:8:1\nd:0:2:30:30:0:1:40:40:4:2\n4:0:1:1:1:50\n4:7\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "m.prv"]);
    let q = |sql: &str| util::csv(d, "db", sql);
    assert_eq!(
        q("SELECT kind, position FROM diagnostics WHERE kind <> 'missing_companion'"),
        "kind,position\nglobal_comm_ignored,m.prv:9\n"
    );
    assert_eq!(
        q("SELECT entity, ts, dur FROM intervals WHERE channel = 'state' ORDER BY ALL"),
        "entity,ts,dur\nTHREAD 1.1.1,0,1000\nTHREAD 1.1.2,0,1000\n"
    );
    assert_eq!(
        q("SELECT ts, target, value FROM events ORDER BY ALL"),
        "ts,target,value\n5,THREAD 1.1.2,1\n6,THREAD 1.1.2,0\n"
    );
    assert_eq!(
        q("SELECT sender, receiver, send_ts FROM messages ORDER BY ALL"),
        "sender,receiver,send_ts\nTHREAD 1.1.1,THREAD 1.1.2,10\nTHREAD 1.1.2,THREAD 1.1.1,30\n"
    );
}
