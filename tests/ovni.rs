//! ovni binary runtime streams: the shared samples against `ovnidump`'s decode of the same
//! streams and against the emulator's Paraver output of the same runs (skipped with a
//! message when ../shared is absent), and streams generated here.
use crate::util::{self, csv, ok, run, scalar};
use std::path::Path;

#[path = "../src/ingest/ovni/tests/writer.rs"]
mod writer;
use writer::W;

const SAMPLES: [&str; 4] = [
    "emu-ovni-mp-simple",
    "emu-ovni-libovni-mark",
    "emu-nosv-nested-tasks",
    "emu-nanos6-nested-tasks",
];

/// The `events` rows of the stream events (not the task rows derived from them) of capture
/// `id`, as `clock  MCV  thread  note` with the clock rebuilt from `captures.ts_origin`.
fn stream_events(d: &Path, id: u32) -> Vec<String> {
    let out = csv(
        d,
        "db",
        &format!(
            "SELECT e.ts + c.ts_origin, e.action, e.source, coalesce(e.note, '') FROM events e \
             JOIN captures c USING (capture_id) WHERE capture_id = {id} AND e.target_type = \
             'THREAD' ORDER BY e.seq"
        ),
    );
    out.lines().skip(1).map(str::to_string).collect()
}

#[test]
fn shared_streams_decode_as_ovnidump_does() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (i, s) in SAMPLES.iter().enumerate() {
        let dir = root.join("ovni").join(s);
        ok(d, &["ingest", "--archive", "db", "--format", "ovni", dir.to_str().unwrap()]);
        let id = i as u32 + 1;
        assert_eq!(
            scalar(d, "db", &format!("SELECT format FROM captures WHERE capture_id = {id}")),
            "ovni"
        );
        let dump = std::fs::read_to_string(dir.join("ovnidump.txt")).unwrap();
        let ours = stream_events(d, id);
        let want: Vec<String> = dump
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.splitn(4, "  ").collect();
                // The thread of `loom.x/proc.p/thread.t` is `TH <app_id>.<t>` (app id 1 here).
                let tid = f[2].rsplit_once("thread.").unwrap().1;
                let note = f[3].replace('"', "\"\"");
                let note = if note.contains(',') || note.contains('"') {
                    format!("\"{note}\"")
                } else {
                    note
                };
                format!("{},{},TH 1.{tid},{note}", f[0], f[1])
            })
            .collect();
        assert_eq!(ours.len(), want.len(), "{s}: event count");
        for (k, (a, b)) in ours.iter().zip(&want).enumerate() {
            assert_eq!(a, b, "{s}: event {k} (clock, MCV, stream, description)");
        }
        // No diagnostic on ovni's own test traces but the info that the four looms of the
        // multi-process ones (one per rank, on one machine) have no clock offset table.
        let looms = std::fs::read_dir(dir.join("ovni"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("loom."))
            .count();
        let want = if looms > 1 { "no_clock_offsets\n" } else { "" };
        assert_eq!(
            csv(d, "db", &format!("SELECT kind FROM diagnostics WHERE capture_id = {id}")),
            format!("kind\n{want}"),
            "{s}"
        );
    }
}

#[test]
fn shared_streams_give_the_emulators_intervals() {
    let Some(root) = util::shared_datasets() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (i, s) in SAMPLES.iter().enumerate() {
        let dir = root.join("ovni").join(s);
        // auto: the emulator's Paraver output is there, so it is what is read.
        ok(d, &["ingest", "--archive", "db", dir.to_str().unwrap()]);
        ok(
            d,
            &[
                "ingest",
                "--archive",
                "db",
                "--format",
                "ovni",
                "--name",
                "streams",
                dir.to_str().unwrap(),
            ],
        );
        let (prv, ovni) = (2 * i + 1, 2 * i + 2);
        assert_eq!(
            csv(d, "db", &format!("SELECT format FROM captures WHERE capture_id IN ({prv}, {ovni}) ORDER BY capture_id")),
            "format\nprv\novni\n"
        );
        let cols = "entity, entity_type, channel, state, value, ts, dur, open";
        let side = |a: usize, b: usize| {
            csv(
                d,
                "db",
                &format!(
                    "SELECT channel, count(*) FROM (SELECT {cols} FROM intervals WHERE capture_id \
                     = {a} AND entity_type IN ('THREAD', 'CPU') EXCEPT ALL SELECT {cols} FROM \
                     intervals WHERE capture_id = {b} AND entity_type IN ('THREAD', 'CPU')) \
                     GROUP BY channel ORDER BY channel"
                ),
            )
        };
        // Both ingests give the same intervals, the nOS-V and Nanos6 models' included: same
        // channel, entity, state, value, ts, dur and open.
        assert_eq!(side(ovni, prv), "channel,count_star()\n", "{s}");
        assert_eq!(side(prv, ovni), "channel,count_star()\n", "{s}");
        let ovni_channels = scalar(
            d,
            "db",
            &format!("SELECT count(DISTINCT channel) FROM intervals WHERE capture_id = {ovni} AND entity_type IN ('THREAD', 'CPU')"),
        );
        assert!(ovni_channels.parse::<u32>().unwrap() >= 6, "{s}: {ovni_channels}");
    }
    // The runtime models' channels are there (so the equality above is not vacuous), only
    // in the traces whose metadata requires the model: 7 nOS-V channels and 5 Nanos6 ones
    // (no thread type event in the sample), each on the thread and its CPU.
    assert_eq!(
        csv(d, "db", "SELECT capture_id, split_part(channel, ' ', 1) m, count(DISTINCT channel), count(DISTINCT entity_type) FROM intervals WHERE channel LIKE 'nOS-V %' OR channel LIKE 'Nanos6 %' GROUP BY ALL ORDER BY 1"),
        "capture_id,m,count(DISTINCT channel),count(DISTINCT entity_type)\n5,nOS-V,8,2\n6,nOS-V,8,2\n7,Nanos6,6,2\n8,Nanos6,6,2\n"
    );
    // nOS-V and Nanos6 tasks: 100 task instances each, all complete, named by type label,
    // each on the CPU it ran on.
    assert_eq!(
        csv(d, "db", "SELECT capture_id, entity, count(*), bool_and(complete), min(response_time) > 0, count(core) FROM instances GROUP BY ALL ORDER BY 1"),
        "capture_id,entity,count_star(),bool_and(complete),(min(response_time) > 0),count(core)\n6,testtype1,100,true,true,100\n8,testtype1,100,true,true,100\n"
    );
    assert!(
        scalar(
            d,
            "db",
            "SELECT count(*) FROM cpu_load(window_ns := 1000000, capture := 6) WHERE busy > 0"
        )
        .parse::<u32>()
        .unwrap()
            > 0
    );
}

const META: &str = r#"{ "version": 3, "ovni": { "app_id": 2, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}],
  // comments are allowed
  "mark": { "3": { "title": "Phase", "chan_type": "stack", "labels": { "7": "solve" } } }, "finished": 1 } }"#;

/// A v3 trace of two threads on loom `host`; thread 11 big-endian when `be`.
fn write_trace(dir: &Path, be: bool) {
    let a = W::new(false).ohx(1000, 0).mark("OM[", 1100, 7, 3).mark("OM]", 1500, 7, 3).ev(
        "OHe",
        2000,
        &[],
    );
    let b = W::new(be).ohx(1200, 1).ev("OHp", 1300, &[]).ev("OHr", 1400, &[]).ev("OHe", 1900, &[]);
    for (tid, w) in [(10, a), (11, b)] {
        let t = dir.join(format!("ovni/loom.host/proc.9/thread.{tid}"));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("stream.obs"), &w.bytes).unwrap();
        std::fs::write(t.join("stream.json"), META).unwrap();
    }
}

const STATE: &str = "SELECT entity, state, ts, dur FROM intervals WHERE channel = 'Thread: thread state' ORDER BY entity, ts";
const STATES: &str = "entity,state,ts,dur\nTH 2.10,Running,0,1000\nTH 2.10,Dead,1000,0\nTH 2.11,Running,200,100\nTH 2.11,Paused,300,100\nTH 2.11,Running,400,500\nTH 2.11,Dead,900,100\n";

#[test]
fn a_generated_trace_with_a_big_endian_stream_reads_and_reingests_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trace(d, true);
    // No emulator output beside the streams: auto reads the streams.
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT format, event_count FROM captures"),
        "format,event_count\novni,8\n"
    );
    assert_eq!(csv(d, "db", STATE), STATES);
    assert_eq!(scalar(d, "db", "SELECT ts_origin FROM captures"), "1000");
    // The mark's label comes from the metadata, its channel is the mark type's title.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT entity, state, ts, dur FROM intervals WHERE channel = 'Phase' ORDER BY entity"
        ),
        "entity,state,ts,dur\nCPU 0.0,solve,100,400\nTH 2.10,solve,100,400\n"
    );
    // The sources: the two streams, then their metadata.
    let sources = scalar(d, "db", "SELECT source_files FROM captures");
    let (t10, j11) = ("thread.10/stream.obs", "thread.11/stream.json");
    assert_eq!(sources.matches("stream.").count(), 4, "{sources}");
    assert!(sources.find(t10).unwrap() < sources.find(j11).unwrap(), "{sources}");
    // The streams are kept with the capture, under their path in the trace: a rebuild
    // gives the same tables.
    let before = csv(d, "db", "SELECT * EXCLUDE (capture_id) FROM intervals ORDER BY ALL");
    let events = csv(d, "db", "SELECT * FROM events ORDER BY seq");
    std::fs::remove_dir_all(d.join("ovni")).unwrap();
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(csv(d, "db", "SELECT * EXCLUDE (capture_id) FROM intervals ORDER BY ALL"), before);
    assert_eq!(csv(d, "db", "SELECT * FROM events ORDER BY seq"), events);
    assert_eq!(scalar(d, "db", "SELECT format FROM captures"), "ovni");
}

#[test]
fn the_v2_layout_reads_like_v3() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trace(d, false);
    // Move to the v2 layout: thread.<tid>.obs + thread.<tid>.json beside metadata.json.
    let proc = d.join("ovni/loom.host/proc.9");
    for tid in [10, 11] {
        let t = proc.join(format!("thread.{tid}"));
        std::fs::rename(t.join("stream.obs"), proc.join(format!("thread.{tid}.obs"))).unwrap();
        std::fs::remove_dir_all(&t).unwrap();
    }
    std::fs::write(
        proc.join("metadata.json"),
        r#"{"version": 2, "app_id": 2, "rank": 0, "cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}]}"#,
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", "--format", "ovni", d.join("ovni").to_str().unwrap()]);
    assert_eq!(csv(d, "db", STATE), STATES);
    // Without ovni.mark in v2 metadata the mark type is unknown: said once, still a channel.
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, count FROM diagnostics"),
        "kind,severity,count\nunknown_mark_type,warning,1\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM intervals WHERE channel = 'Mark 3'"), "2");
}

#[test]
fn damaged_streams_keep_what_was_read_and_strict_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trace(d, false);
    let t10 = d.join("ovni/loom.host/proc.9/thread.10/stream.obs");
    let mut bytes = std::fs::read(&t10).unwrap();
    bytes.truncate(bytes.len() - 5); // cut the last event, OHe
                                     // An unknown code, then a clock going backwards, in thread 11.
    let t11 = d.join("ovni/loom.host/proc.9/thread.11/stream.obs");
    let w = W { be: false, bytes: std::fs::read(&t11).unwrap() };
    let w = w.ev("Xyz", 1950, &[1, 2, 3, 4]).ev("Xyz", 1960, &[]).ev("OHp", 1800, &[]);
    std::fs::write(&t10, &bytes).unwrap();
    std::fs::write(&t11, &w.bytes).unwrap();
    let dir = d.to_str().unwrap();
    let strict = run(d, &["ingest", "--archive", "db", "--strict", dir]);
    assert!(!strict.status.success());
    let err = String::from_utf8_lossy(&strict.stderr);
    assert!(err.contains("--strict stops the ingest here"), "{err}");
    assert!(
        !d.join("db/manifest.json").exists()
            || scalar(d, "db", "SELECT count(*) FROM captures") == "0"
    );
    ok(d, &["ingest", "--archive", "db", dir]);
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, count FROM diagnostics ORDER BY kind"),
        "kind,severity,count\nbad_thread_transition,warning,1\nclock_backwards,warning,1\ntruncated_event,data_loss,1\nunknown_event,warning,1\n"
    );
    // Every event read is a row: 3 of thread 10 (its cut OHe lost), 4 + 3 of thread 11.
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM events"), "10");
    assert_eq!(
        csv(d, "db", "SELECT action, note, ts FROM events WHERE action IN ('Xyz', 'OHp') ORDER BY seq"),
        "action,note,ts\nOHp,pauses the execution,300\nXyz,01 02 03 04,950\nXyz,,960\nOHp,pauses the execution,800\n"
    );
}

#[test]
fn a_directory_with_neither_output_nor_streams_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("x/ovni")).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("binary streams"));
    let out = run(d, &["ingest", "--archive", "db", "--format", "ovni", "x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format ovni: no ovni streams here"));
    assert!(!d.join("db").exists());
}

#[test]
fn every_ovni_diagnostic_kind_is_in_the_readme_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut kinds = Vec::new();
    // Every source file of the ovni importer, its folders' too, but the tests (`tests.rs`
    // files and `tests/` folders).
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src/ingest/ovni")];
    while let Some(dir) = dirs.pop() {
        for f in std::fs::read_dir(dir).unwrap().flatten() {
            if f.path().is_dir() {
                if f.file_name() != "tests" {
                    dirs.push(f.path());
                }
            } else if f.file_name() != "tests.rs" {
                files.push(f.path());
            }
        }
    }
    assert!(files.iter().any(|f| f.ends_with("runtime/task.rs")), "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for part in text.split("kind: \"").skip(1) {
            kinds.push(part.split('"').next().unwrap().to_string());
        }
        // `self.warn(sink, "kind", ...)`
        for part in text.split("warn(sink, \"").skip(1) {
            kinds.push(part.split('"').next().unwrap().to_string());
        }
    }
    kinds.sort();
    kinds.dedup();
    assert!(kinds.len() >= 12, "{kinds:?}");
    for k in kinds {
        assert!(readme.contains(&format!("| `{k}` |")), "README's diagnostics table lacks {k}");
    }
}

#[test]
fn clock_offsets_align_looms_and_repeated_tids_stay_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Two looms, one thread each with the same tid; loom b's clock is 1000 ns behind.
    for (loom, clock) in [("a", 2000), ("b", 1500)] {
        let t = d.join(format!("ovni/loom.{loom}/proc.9/thread.10"));
        std::fs::create_dir_all(&t).unwrap();
        let w = W::new(false).ohx(clock, 0).ev("OHe", clock + 100, &[]);
        std::fs::write(t.join("stream.obs"), &w.bytes).unwrap();
        std::fs::write(t.join("stream.json"), META).unwrap();
    }
    std::fs::write(
        d.join("ovni/clock-offsets.txt"),
        "rank hostname median mean stdev\n0 a 0 0 0\n1 b 1000.4 1000 3\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT ts, source, action, core FROM events ORDER BY seq"),
        "ts,source,action,core\n0,TH 2.10 (1.1.1),OHx,CPU 0.0\n100,TH 2.10 (1.1.1),OHe,CPU 0.0\n500,TH 2.10 (1.1.2),OHx,CPU 1.0\n600,TH 2.10 (1.1.2),OHe,CPU 1.0\n"
    );
    assert_eq!(scalar(d, "db", "SELECT ts_origin FROM captures"), "2000");
    assert_eq!(
        csv(d, "db", "SELECT kind, count FROM diagnostics ORDER BY kind"),
        "kind,count\nduplicate_row_label,1\nduplicate_row_label,1\n"
    );
    // The offset file is part of what was ingested (its hash, the kept sources).
    assert!(scalar(d, "db", "SELECT source_files FROM captures").contains("clock-offsets.txt"));
}

/// Writes stream `w` (with metadata META) as thread `tid` of process `pid` on loom `loom`.
fn put(dir: &Path, loom: &str, pid: u32, tid: u32, w: &W) {
    let t = dir.join(format!("ovni/loom.{loom}/proc.{pid}/thread.{tid}"));
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("stream.obs"), &w.bytes).unwrap();
    std::fs::write(t.join("stream.json"), META).unwrap();
}

const INSTANCES: &str =
    "SELECT entity, instance, core, net_exec, waiting_time, migrations, complete \
                         FROM instances ORDER BY entity, instance";

#[test]
fn task_instances_run_on_the_threads_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Task 1 runs on CPU 0; task 2 pauses there, its thread moves to CPU 1, it resumes.
    let w = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "A")
        .task("VTc", 1010, 1, 1)
        .task("VTx", 1100, 1, 0)
        .task("VTe", 1200, 1, 0)
        .task("VTc", 1300, 2, 1)
        .task("VTx", 1400, 2, 0)
        .task("VTp", 1450, 2, 0)
        .ev("OAs", 1500, &1i32.to_le_bytes())
        .task("VTr", 1600, 2, 0)
        .task("VTe", 1700, 2, 0)
        .ev("OHe", 2000, &[]);
    put(d, "host", 9, 10, &w);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", INSTANCES),
        "entity,instance,core,net_exec,waiting_time,migrations,complete\n\
         A,1,CPU 0.0,100,0,0,true\nA,2,CPU 0.0,150,150,1,true\n"
    );
    // The CPUs the tasks ran on have a load.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT core, sum(busy) FROM cpu_load(window_ns := 1000) GROUP BY core ORDER BY core"
        ),
        "core,sum(busy)\nCPU 0.0,150\nCPU 0.1,100\n"
    );
}

#[test]
fn task_and_type_ids_are_per_process() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Two processes each declare type 1 and run their task 1 (ovni numbers them per process).
    let a = W::new(false)
        .ohx(1000, 0)
        .task_type(1005, 1, "alpha")
        .task("VTc", 1010, 1, 1)
        .task("VTx", 1020, 1, 0)
        .task("VTe", 1120, 1, 0)
        .ev("OHe", 2000, &[]);
    let b = W::new(false)
        .ohx(1001, 1)
        .task_type(1006, 1, "beta")
        .task("VTc", 1050, 1, 1)
        .task("VTx", 1060, 1, 0)
        .task("VTe", 1500, 1, 0)
        .ev("OHe", 2000, &[]);
    put(d, "node", 100, 100, &a);
    put(d, "node", 200, 200, &b);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", INSTANCES),
        "entity,instance,core,net_exec,waiting_time,migrations,complete\n\
         alpha (loom.node/proc.100),1,CPU 0.0,100,0,0,true\n\
         beta (loom.node/proc.200),1,CPU 0.1,440,0,0,true\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics"), "0");
}

#[test]
fn diagnostics_name_the_files_first_ingested_also_after_a_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trace(d, false);
    let proc = d.join("ovni/loom.host/proc.9");
    // Broken metadata, a bad clock offset line, a cut stream.
    std::fs::write(proc.join("thread.11/stream.json"), "{ \"version\": 3, \"ovni\": { broken")
        .unwrap();
    std::fs::write(d.join("ovni/clock-offsets.txt"), "rank hostname median mean stdev\nbad line\n")
        .unwrap();
    let t10 = proc.join("thread.10/stream.obs");
    let mut bytes = std::fs::read(&t10).unwrap();
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&t10, &bytes).unwrap();
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    let q = "SELECT kind, position, message FROM diagnostics ORDER BY ALL";
    let before = csv(d, "db", q);
    let root = d.display().to_string();
    for want in [
        format!("bad_metadata,{root}/ovni/clock-offsets.txt:2,{root}/ovni/clock-offsets.txt: 'bad line'"),
        format!("bad_metadata,{root}/ovni/loom.host/proc.9/thread.11/stream.obs,{root}/ovni/loom.host/proc.9/thread.11/stream.json: not JSON"),
        format!("truncated_event,{t10}@byte 84,loom.host/proc.9/thread.10: the stream ends", t10 = t10.display()),
    ] {
        assert!(before.contains(&want), "{want}\n{before}");
    }
    // A rebuild reads extracted copies, and still names the files first ingested.
    std::fs::remove_dir_all(d.join("ovni")).unwrap();
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(csv(d, "db", q), before);
    assert!(!before.contains(".reingest"), "{before}");
}

#[test]
fn a_nested_task_preempts_the_task_it_runs_in() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Task 1 (A) runs from 1100 to 1400; task 2 (B) runs inside it, on its thread, 1200-1300
    // (Nanos6 runs such inline tasks; ovni's nOS-V model refuses them).
    let w = W::new(false)
        .ohx(1000, 0)
        .type_of("6Yc", 1001, 1, "A")
        .type_of("6Yc", 1002, 2, "B")
        .task("6Tc", 1010, 1, 1)
        .task1("6Tx", 1100, 1)
        .task("6Tc", 1150, 2, 2)
        .task1("6Tx", 1200, 2)
        .task1("6Te", 1300, 2)
        .task1("6Te", 1400, 1)
        .ev("OHe", 2000, &[]);
    put(d, "host", 9, 10, &w);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT entity, net_exec, ready_time, preemptions, gross_exec, complete FROM instances ORDER BY entity"),
        "entity,net_exec,ready_time,preemptions,gross_exec,complete\nA,200,100,1,300,true\nB,100,0,0,100,true\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics"), "0");
}

/// Metadata of a process that requires the nOS-V model, MPI rank 2.
const META_NOSV: &str = r#"{ "version": 3, "ovni": { "app_id": 3, "rank": 2, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}],
  "require": { "ovni": "1.1.0", "nosv": "2.7.0" }, "finished": 1 } }"#;

fn put_meta(dir: &Path, pid: u32, tid: u32, w: &W, meta: &str) {
    let t = dir.join(format!("ovni/loom.host/proc.{pid}/thread.{tid}"));
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("stream.obs"), &w.bytes).unwrap();
    std::fs::write(t.join("stream.json"), meta).unwrap();
}

/// `entity,state,ts,dur,open` of channel `ch` (thread and CPU rows).
fn chan(d: &Path, ch: &str) -> String {
    csv(
        d,
        "db",
        &format!(
            "SELECT entity, state, ts, dur, open FROM intervals WHERE channel = '{ch}' ORDER BY \
             entity, ts"
        ),
    )
}

#[test]
fn nosv_subsystems_push_and_pop_and_a_wrong_pop_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let w = W::new(false)
        .ohx(1000, 0)
        .ev("VHw", 1100, &[])
        .ev("VAs", 1200, &[])
        .ev("VAS", 1300, &[])
        .ev("OHc", 1350, &[])
        .ev("OHp", 1400, &[])
        .ev("OHr", 1500, &[])
        // Pops Submit while Worker is on top: the top goes all the same.
        .ev("VAS", 1600, &[])
        // Pops Worker from an empty stack.
        .ev("VHW", 1700, &[])
        // Ends a task never created.
        .task("VTe", 1800, 7, 0)
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &w, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    // The thread row shows the subsystem while the thread is active (Cooling included), the
    // CPU row while it runs.
    assert_eq!(
        chan(d, "nOS-V subsystem of the ACTIVE thread"),
        "entity,state,ts,dur,open\nTH 3.10,Thread: Worker,100,100,false\n\
         TH 3.10,API: Submit,200,100,false\nTH 3.10,Thread: Worker,300,100,false\n\
         TH 3.10,Thread: Worker,500,100,false\n"
    );
    assert_eq!(
        chan(d, "nOS-V subsystem of the RUNNING thread"),
        "entity,state,ts,dur,open\nCPU 0.0,Thread: Worker,100,100,false\n\
         CPU 0.0,API: Submit,200,100,false\nCPU 0.0,Thread: Worker,300,50,false\n\
         CPU 0.0,Thread: Worker,500,100,false\n"
    );
    // Idle: every thread Progressing while it runs; its CPU Resting when none runs.
    assert_eq!(
        chan(d, "nOS-V idle state of the RUNNING thread"),
        "entity,state,ts,dur,open\nCPU 0.0,Progressing,0,350,false\nCPU 0.0,Resting,350,150,false\n\
         CPU 0.0,Progressing,500,500,false\nCPU 0.0,Resting,1000,0,true\n\
         TH 3.10,Progressing,0,350,false\nTH 3.10,Progressing,500,500,false\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, count(*) FROM diagnostics GROUP BY ALL ORDER BY 1"),
        "kind,severity,count_star()\nbad_subsystem_pop,warning,2\nbad_task_event,warning,1\n"
    );
    let msgs = csv(d, "db", "SELECT message FROM diagnostics ORDER BY ts");
    assert!(msgs.contains("pops 'API: Submit' but 'Thread: Worker' is on top"), "{msgs}");
    assert!(msgs.contains("pops 'Thread: Worker' but nothing is on top"), "{msgs}");
    assert!(msgs.contains("VTe of task 7: no such task was created"), "{msgs}");
    // --strict stops at the first of them.
    let out = run(d, &["ingest", "--archive", "strict", "--strict", d.to_str().unwrap()]);
    assert!(!out.status.success());
}

#[test]
fn a_cpu_shows_the_task_of_its_one_running_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Thread 10 runs task 1 on CPU 0; thread 11 comes to CPU 0 (two running: the CPU shows no
    // task), thread 10 pauses (the CPU shows thread 11: task 2 once it runs it), thread 11
    // ends, thread 10 resumes its task 1.
    let a = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "A")
        .task("VTc", 1010, 1, 1)
        .task("VTx", 1100, 1, 0)
        .ev("OHp", 1300, &[])
        .ev("OHr", 1700, &[])
        .task("VTe", 1800, 1, 0)
        .ev("OHe", 2000, &[]);
    let b = W::new(false)
        .ohx(1200, 0)
        .task("VTc", 1210, 2, 1)
        .task("VTx", 1400, 2, 0)
        .task("VTe", 1500, 2, 0)
        .ev("OHe", 1600, &[]);
    put_meta(d, 9, 10, &a, META_NOSV);
    put_meta(d, 9, 11, &b, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        chan(d, "nOS-V task ID of the RUNNING thread"),
        "entity,state,ts,dur,open\nCPU 0.0,1,100,100,false\nCPU 0.0,2,400,100,false\n\
         CPU 0.0,1,700,100,false\nTH 3.10,1,100,200,false\nTH 3.10,1,700,100,false\n\
         TH 3.11,2,400,100,false\n"
    );
    // The type is ovni's hash of the label, labelled with it; app id and rank + 1 from the
    // metadata; body 1 for an ordinary task.
    assert_eq!(
        csv(d, "db", "SELECT channel, state, value, count(*) FROM intervals WHERE entity = 'CPU 0.0' AND channel SIMILAR TO 'nOS-V task (type|AppID|MPI rank|body ID).*' GROUP BY ALL ORDER BY 1"),
        "channel,state,value,count_star()\n\
         nOS-V task AppID of the RUNNING thread,3,3,3\n\
         nOS-V task MPI rank of the RUNNING thread,3,3,3\n\
         nOS-V task body ID of the RUNNING thread,1,1,3\n\
         nOS-V task type of the RUNNING thread,A,{},3\n"
            .replace("{}", &tracedb::ingest::ovni::runtime::type_gid("A").to_string())
    );
    // The model accepts it all (the task instances' view, two tasks on one CPU, is the derive
    // stage's: a core conflict).
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics WHERE kind LIKE 'bad_%'"), "0");
}

#[test]
fn each_body_of_a_parallel_task_is_its_own_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Parallel task 5 (VTC), created at 1010 on thread 10: body 1 runs on thread 10 (CPU 0)
    // 1100-1300, body 2 on thread 11 (CPU 1) 1150-1400, at the same time.
    let a = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "P")
        .task("VTC", 1010, 5, 1)
        .task("VTx", 1100, 5, 1)
        .task("VTe", 1300, 5, 1)
        .ev("OHe", 2000, &[]);
    let b = W::new(false).ohx(1005, 1).task("VTx", 1150, 5, 2).task("VTe", 1400, 5, 2).ev(
        "OHe",
        2000,
        &[],
    );
    put_meta(d, 9, 10, &a, META_NOSV);
    put_meta(d, 9, 11, &b, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    // instance = task * 2^32 + body; body 1 activated at the task's creation, body 2 when it
    // first executes.
    let b1 = (5i64 << 32) + 1;
    assert_eq!(
        csv(d, "db", "SELECT instance >> 32 task, instance & 4294967295 body, instance, core, activate_ts, start_ts, response_time, net_exec, complete FROM instances ORDER BY instance"),
        format!(
            "task,body,instance,core,activate_ts,start_ts,response_time,net_exec,complete\n\
             5,1,{b1},CPU 0.0,10,100,290,200,true\n5,2,{},CPU 0.1,150,150,250,250,true\n",
            b1 + 1
        )
    );
    // The bodies overlap in time on their CPUs: no transition is refused.
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics WHERE severity <> 'info'"), "0");
    // The emulator's channels: each CPU shows its body id and the task id.
    assert_eq!(
        chan(d, "nOS-V task body ID of the RUNNING thread"),
        "entity,state,ts,dur,open\nCPU 0.0,1,100,200,false\nCPU 0.1,2,150,250,false\n\
         TH 3.10,1,100,200,false\nTH 3.11,2,150,250,false\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT entity, state FROM intervals WHERE channel = 'nOS-V task ID of the RUNNING thread' ORDER BY entity"),
        "entity,state\nCPU 0.0,5\nCPU 0.1,5\nTH 3.10,5\nTH 3.11,5\n"
    );
}

/// Metadata of a process that requires the Nanos6 model only.
const META_NANOS6: &str = r#"{ "version": 3, "ovni": { "app_id": 3, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}],
  "require": { "ovni": "1.1.0", "nanos6": "1.1.0" }, "finished": 1 } }"#;

const RUNS: &str =
    "SELECT instance, activate_ts, start_ts, terminate_ts, core, net_exec, ready_time, \
                    preemptions, migrations, complete FROM instances ORDER BY instance";

#[test]
fn a_task_follows_its_thread_and_an_ordinary_task_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Task 1 runs 1100-1600, its thread paused 1200-1500; then it runs again (taskiter),
    // 1700-1800; its thread then moves to CPU 1 while it runs a third time, 1850-1950.
    let w = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "A")
        .task("VTc", 1003, 1, 1)
        .task("VTx", 1100, 1, 0)
        .ev("OHp", 1200, &[])
        .ev("OHr", 1500, &[])
        .task("VTe", 1600, 1, 0)
        .task("VTx", 1700, 1, 0)
        .task("VTe", 1800, 1, 0)
        .task("VTx", 1850, 1, 0)
        .ev("OAs", 1900, &1i32.to_le_bytes())
        .task("VTe", 1950, 1, 0)
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &w, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    // The first run: 200 ns running (the channels' view), 300 ready while its thread was
    // paused. The later runs are new instances, task * 2^32 + run, activated at their VTx;
    // the third migrates to CPU 1 with its thread (`core` is the CPU an instance started on).
    let (r2, r3) = ((1i64 << 32) + 2, (1i64 << 32) + 3);
    assert_eq!(
        csv(d, "db", RUNS),
        format!(
            "instance,activate_ts,start_ts,terminate_ts,core,net_exec,ready_time,preemptions,migrations,complete\n\
             1,3,100,600,CPU 0.0,200,300,1,0,true\n\
             {r2},700,700,800,CPU 0.0,100,0,0,0,true\n\
             {r3},850,850,950,CPU 0.0,100,0,1,1,true\n"
        )
    );
    // As the model's channel shows it on the CPUs.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT core, sum(busy) FROM cpu_load(window_ns := 10000) GROUP BY core ORDER BY core"
        ),
        "core,sum(busy)\nCPU 0.0,350\nCPU 0.1,50\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics"), "0");
}

/// A task event of a thread that does not run (Cooling, which ovni allows) takes its CPU for
/// that instant; the task of the thread running there gives it up for that instant (a
/// preempt and a resume at that time) instead of being taken as displaced until its next
/// event, with a `core_conflict` and an `invalid_transition` on a trace ovni accepts. Found by
/// tests/oracle/ovni_oracle.py.
#[test]
fn a_task_event_of_a_cooling_thread_lends_the_cpu_for_an_instant() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Thread 11 cools on CPU 0 and runs task 2 there meanwhile; thread 10 runs task 1 on CPU
    // 0 all along.
    let a = W::new(false).ohx(1100, 0).task("VTx", 1200, 1, 0).task("VTe", 1600, 1, 0).ev(
        "OHe",
        1700,
        &[],
    );
    let b = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "A")
        .task("VTc", 1002, 1, 1)
        .task("VTc", 1003, 2, 1)
        .ev("OHc", 1050, &[])
        .task("VTx", 1300, 2, 0)
        .task("VTe", 1400, 2, 0)
        .ev("OHe", 1500, &[]);
    put_meta(d, 9, 10, &a, META_NOSV);
    put_meta(d, 9, 11, &b, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", RUNS),
        "instance,activate_ts,start_ts,terminate_ts,core,net_exec,ready_time,preemptions,migrations,complete\n\
         1,2,200,600,CPU 0.0,400,0,2,0,true\n2,3,300,400,CPU 0.0,0,100,1,0,true\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, ts FROM diagnostics ORDER BY ALL"),
        "kind,severity,ts\n"
    );
}

#[test]
fn tasks_of_two_threads_share_a_cpu_while_one_is_paused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Thread 10 pauses mid-task 1; thread 11 runs task 2 on the same CPU meanwhile; then a
    // third thread comes to CPU 0 while 10 runs (two running threads on a physical CPU).
    let a = W::new(false)
        .ohx(1000, 0)
        .task_type(1001, 1, "A")
        .task("VTc", 1002, 1, 1)
        .task("VTc", 1003, 2, 1)
        .task("VTx", 1100, 1, 0)
        .ev("OHp", 1200, &[])
        .ev("OHr", 1500, &[])
        .task("VTe", 1600, 1, 0)
        .ev("OHe", 2000, &[]);
    let b = W::new(false)
        .ohx(1300, 0)
        .task("VTx", 1350, 2, 0)
        .task("VTe", 1400, 2, 0)
        .ev("OHp", 1450, &[])
        .ev("OHr", 1700, &[])
        .ev("OHe", 1800, &[]);
    put_meta(d, 9, 10, &a, META_NOSV);
    put_meta(d, 9, 11, &b, META_NOSV);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", RUNS),
        "instance,activate_ts,start_ts,terminate_ts,core,net_exec,ready_time,preemptions,migrations,complete\n\
         1,2,100,600,CPU 0.0,200,300,1,0,true\n2,3,350,400,CPU 0.0,50,0,0,0,true\n"
    );
    // No core conflict, no refused transition: only ovni's refusal of two running threads
    // on a physical CPU (1700-1800), said once.
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, ts FROM diagnostics ORDER BY ALL"),
        "kind,severity,ts\ncpu_oversubscribed,warning,700\n"
    );
}

#[test]
fn what_ovni_refuses_in_the_runtime_models_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Nanos6 only: a task id created again after its end, an idle state set twice, a thread
    // type pushed over itself, a nOS-V event (no stream requires nOS-V), a label too long.
    let long = "L".repeat(600);
    let w = W::new(false)
        .ohx(1000, 0)
        .type_of("6Yc", 1001, 1, "A")
        .type_of("6Yc", 1002, 2, &long)
        .ev("6Hw", 1003, &[])
        .ev("6Hw", 1004, &[])
        .task("6Tc", 1010, 1, 1)
        .task1("6Tx", 1100, 1)
        .task1("6Te", 1500, 1)
        .task("6Tc", 1600, 1, 2)
        .task("6Tc", 1610, 2, 2)
        .ev("6Pr", 1700, &[])
        .ev("6Pr", 1750, &[])
        .ev("VHw", 1800, &[])
        .ev("VHW", 1850, &[])
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &w, META_NANOS6);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT ts, kind FROM diagnostics ORDER BY ts, kind"),
        "ts,kind\n2,bad_task_event\n4,same_channel_value\n600,bad_task_event\n\
         750,same_channel_value\n800,model_not_enabled\n"
    );
    let msgs = csv(d, "db", "SELECT message FROM diagnostics ORDER BY ts");
    assert!(msgs.contains("6Tc of task 1: the task already exists (it ended"), "{msgs}");
    assert!(msgs.contains("label of 600 bytes"), "{msgs}");
    assert!(msgs.contains("model nosv not enabled"), "{msgs}");
    // The refused creation invents no instance; the long label is cut to 511 bytes.
    assert_eq!(
        csv(d, "db", "SELECT length(entity), instance, complete FROM instances ORDER BY ALL"),
        "length(entity),instance,complete\n1,1,true\n511,2,false\n"
    );
    // The nOS-V events are kept.
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM events WHERE action LIKE 'VH%'"), "2");
}

/// Metadata of a thread declaring mark type 1 `Phase` (`chan`: stack or single) with the
/// value labels `labels` (JSON object text).
fn mark_meta(chan: &str, labels: &str) -> String {
    format!(
        r#"{{ "version": 3, "ovni": {{ "app_id": 1, "loom_cpus": [{{"index": 0, "phyid": 0}}, {{"index": 1, "phyid": 1}}],
  "mark": {{ "1": {{ "title": "Phase", "chan_type": "{chan}", "labels": {labels} }} }}, "finished": 1 }} }}"#
    )
}

/// Mark channels are named as the Paraver ingest of the emulator's output names them: ovni
/// writes each mark type as Paraver type 100 + type with its title as label, and a label two
/// types share, or one of tracedb's own channel names (`state`, `running`, `value`), gets the
/// type appended. Found by tests/oracle/ovni_oracle.py: two types titled alike were one
/// channel, whose intervals overlapped.
#[test]
fn mark_types_titled_alike_or_like_tracedbs_channels_are_told_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 0}],
  "mark": { "1": { "title": "Phase", "chan_type": "single" }, "2": { "title": "Phase", "chan_type": "single" },
            "3": { "title": "state", "chan_type": "single" }, "4": { "title": "Other", "chan_type": "single" } },
  "finished": 1 } }"#;
    let a = W::new(false)
        .ohx(1000, 0)
        .mark("OM=", 1100, 5, 1)
        .mark("OM=", 1200, 6, 2)
        .mark("OM=", 1300, 7, 3)
        .mark("OM=", 1400, 8, 4)
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &a, meta);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT entity, channel, state, ts, dur FROM intervals WHERE channel NOT LIKE 'Thread%' \
             AND channel NOT IN ('1', '2', '3') ORDER BY entity, ts"
        ),
        "entity,channel,state,ts,dur\nCPU 0.0,Phase (101),5,100,900\nCPU 0.0,Phase (102),6,200,800\n\
         CPU 0.0,state (103),7,300,700\nCPU 0.0,Other,8,400,600\nTH 1.10,Phase (101),5,100,900\n\
         TH 1.10,Phase (102),6,200,800\nTH 1.10,state (103),7,300,700\nTH 1.10,Other,8,400,600\n"
    );
}

/// A mark type no metadata declares is named `Mark <type>`; when a declared mark already has
/// that title, the undeclared one gets its Paraver type appended instead of sharing the
/// declared one's channel (their intervals overlapped there).
#[test]
fn an_undeclared_mark_type_never_shares_a_declared_marks_channel() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 0}],
  "mark": { "1": { "title": "Mark 2", "chan_type": "single" } }, "finished": 1 } }"#;
    let a = W::new(false)
        .ohx(1000, 0)
        .mark("OM=", 1100, 5, 1)
        .mark("OM=", 1200, 6, 2)
        .mark("OM=", 1300, 7, 3)
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &a, meta);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT channel, state, ts, dur FROM intervals WHERE entity = 'TH 1.10' AND channel \
             LIKE 'Mark%' ORDER BY ts"
        ),
        "channel,state,ts,dur\nMark 2,5,100,900\nMark 2 (102),6,200,800\nMark 3,7,300,700\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT kind, split_part(message, ' named ', 2) AS name FROM diagnostics"),
        "kind,name\nunknown_mark_type,'Mark 2 (102)'\nunknown_mark_type,'Mark 3'\n"
    );
}

/// A mark titled like one of the emulator's own channels of the same row kind (thread.pcf or
/// cpu.pcf) is a second Paraver type with that label, so the Paraver ingest appends the type
/// to both: the mark's `100 + type` and the built-in one's (thread state 4, flush 7, nOS-V
/// subsystem 13). The other row kind has no such clash and keeps the plain titles. A title
/// that is another type's number (`2`: the CPU's tid, unnamed in cpu.pcf) gets its type too.
/// Before, the mark shared the built-in channel (two overlapping intervals in one channel).
#[test]
fn mark_types_titled_like_the_emulators_channels_are_told_apart_as_paraver_does() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 0}],
  "require": { "ovni": "1.1.0", "nosv": "2.7.0" },
  "mark": { "1": { "title": "Thread: thread state", "chan_type": "single",
                   "labels": { "5": "\tfive\t" } },
            "2": { "title": "Flushing ovni buffer of the RUNNING thread", "chan_type": "single" },
            "3": { "title": " Flushing\tovni buffer ", "chan_type": "stack" },
            "4": { "title": "nOS-V subsystem of the ACTIVE thread", "chan_type": "single" },
            "5": { "title": "2", "chan_type": "single" } },
  "finished": 1 } }"#;
    let a = W::new(false)
        .ohx(1000, 0)
        .mark("OM=", 1100, 5, 1)
        .mark("OM=", 1200, 6, 2)
        .mark("OM[", 1300, 7, 3)
        .mark("OM=", 1400, 8, 4)
        .mark("OM=", 1450, 9, 5)
        .ev("OF[", 1500, &[])
        .ev("VS[", 1550, &[])
        .ev("OF]", 1600, &[])
        .ev("VS]", 1650, &[])
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &a, meta);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT entity, channel, state, ts, dur, open FROM intervals WHERE channel NOT IN \
             ('1', '2', '3', 'Thread: CPU affinity', 'Thread: TID of the ACTIVE thread') \
             AND channel NOT LIKE 'nOS-V task%' AND channel NOT LIKE 'nOS-V idle%' \
             ORDER BY entity, channel, ts"
        ),
        "entity,channel,state,ts,dur,open\n\
         CPU 0.0,2 (105),9,450,550,false\n\
         CPU 0.0,Flushing ovni buffer,7,300,700,false\n\
         CPU 0.0,Flushing ovni buffer of the RUNNING thread (102),6,200,800,false\n\
         CPU 0.0,Flushing ovni buffer of the RUNNING thread (7),Flushing,500,100,false\n\
         CPU 0.0,Thread: thread state,five,100,900,false\n\
         CPU 0.0,nOS-V subsystem of the ACTIVE thread,8,400,600,false\n\
         CPU 0.0,nOS-V subsystem of the RUNNING thread,Scheduler: Serving,550,100,false\n\
         TH 1.10,2 (105),9,450,550,false\n\
         TH 1.10,Flushing ovni buffer (103),7,300,700,false\n\
         TH 1.10,Flushing ovni buffer (7),Flushing,500,100,false\n\
         TH 1.10,Flushing ovni buffer of the RUNNING thread,6,200,800,false\n\
         TH 1.10,Thread: thread state (101),five,100,900,false\n\
         TH 1.10,Thread: thread state (4),Running,0,1000,false\n\
         TH 1.10,Thread: thread state (4),Dead,1000,0,true\n\
         TH 1.10,nOS-V subsystem of the ACTIVE thread (104),8,400,600,false\n\
         TH 1.10,nOS-V subsystem of the ACTIVE thread (13),Scheduler: Serving,550,100,false\n"
    );
    // A title that is a number other than its type: cpu.pcf does not name the CPU's types 1-3,
    // so the Paraver ingest names them by number, and type 105 labelled `2` gets its type.
    assert_eq!(chan(d, "2"), "entity,state,ts,dur,open\nCPU 0.0,10,0,1000,false\n");
    // Tabs in a title or a value label read as spaces, as the Paraver ingest reads them in
    // the emulator's .pcf (mark 3 clashes with `Flushing ovni buffer`; label 5 is `five`).
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics WHERE severity <> 'info'"), "0");
}

#[test]
fn mark_labels_declared_by_different_threads_are_all_used() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Each thread labels the value it uses (libovni writes a thread's ovni_mark_label calls
    // into that thread's stream.json; ovni's emulator merges the labels of all threads).
    let a = W::new(false).ohx(1000, 0).mark("OM[", 1100, 1, 1).mark("OM]", 1200, 1, 1).ev(
        "OHe",
        2000,
        &[],
    );
    let b = W::new(false).ohx(1000, 1).mark("OM[", 1100, 2, 1).mark("OM]", 1200, 2, 1).ev(
        "OHe",
        2000,
        &[],
    );
    put_meta(d, 9, 10, &a, &mark_meta("stack", r#"{"1": "one"}"#));
    put_meta(d, 9, 11, &b, &mark_meta("stack", r#"{"2": "two"}"#));
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        chan(d, "Phase"),
        "entity,state,ts,dur,open\nCPU 0.0,one,100,100,false\nCPU 0.1,two,100,100,false\n\
         TH 1.10,one,100,100,false\nTH 1.11,two,100,100,false\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics"), "0");
}

#[test]
fn declarations_of_one_mark_type_that_disagree_are_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let a = W::new(false).ohx(1000, 0).ev("OHe", 2000, &[]);
    // Thread 11 declares type 1 a single channel, and value 1 with another label: ovni's
    // emulator refuses both; the first declaration (thread 10's) is kept.
    put_meta(d, 9, 10, &a, &mark_meta("stack", r#"{"1": "one"}"#));
    put_meta(d, 9, 11, &a, &mark_meta("single", r#"{"1": "uno", "2": "two"}"#));
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    let msgs = csv(d, "db", "SELECT kind, message FROM diagnostics ORDER BY message");
    assert_eq!(msgs.lines().filter(|l| l.starts_with("bad_metadata,")).count(), 2, "{msgs}");
    assert!(msgs.contains("channel type single") && msgs.contains("'uno'"), "{msgs}");
}

#[test]
fn a_mark_operation_its_channel_type_refuses_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Type 1 is a stack: OM= is refused by ovni's emulator (chan_set on a stack channel);
    // as a single channel, OM[ and OM] would be.
    let w = W::new(false)
        .ohx(1000, 0)
        .mark("OM[", 1100, 5, 1)
        .mark("OM=", 1200, 7, 1)
        .mark("OM]", 1300, 7, 1)
        .ev("OHe", 2000, &[]);
    put_meta(d, 9, 10, &w, &mark_meta("stack", "{}"));
    let w2 = W::new(false).ohx(1000, 0).mark("OM[", 1100, 5, 1).mark("OM]", 1300, 5, 1).ev(
        "OHe",
        2000,
        &[],
    );
    put_meta(&d.join("s"), 9, 10, &w2, &mark_meta("single", "{}"));
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    ok(d, &["ingest", "--archive", "db", d.join("s").to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT capture_id, ts, kind FROM diagnostics ORDER BY ALL"),
        "capture_id,ts,kind\n1,200,bad_mark\n2,100,bad_mark\n2,300,bad_mark\n"
    );
    // Applied all the same: the set replaces the stack, the push and pop work as on a stack.
    assert_eq!(
        csv(d, "db", "SELECT capture_id, state, ts, dur FROM intervals WHERE channel = 'Phase' AND entity_type = 'THREAD' ORDER BY ALL"),
        "capture_id,state,ts,dur\n1,5,100,100\n1,7,200,100\n2,5,100,200\n"
    );
}

/// A CPU's number of running threads (ovni's PRV_ZERO channel `3`, where 0 is a value) is 0
/// from the first time a thread is placed on it, also when that thread does not run there: a
/// paused thread moved by `OAr` makes ovniemu's `cpu_update` write 0 for its new CPU
/// (ovni/event.c `pre_affinity_remote`, cpu.c). Found by tests/oracle/ovni_oracle.py.
#[test]
fn a_cpu_given_a_paused_thread_first_runs_zero_threads_from_then() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let w = W::new(false);
    // Thread 10 moves the paused thread 11 to the virtual CPU, where 11 then runs.
    let mut oar = w.u32(u32::MAX).to_vec();
    oar.extend(w.u32(11));
    let a = w.ohx(1000, 0).ev("OAr", 1300, &oar).ev("OHe", 1600, &[]);
    let b =
        W::new(false).ohx(1100, 1).ev("OHp", 1200, &[]).ev("OHr", 1400, &[]).ev("OHe", 1500, &[]);
    put(d, "host", 9, 10, &a);
    put(d, "host", 9, 11, &b);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        chan(d, "3"),
        "entity,state,ts,dur,open\nCPU 0.0,1,0,600,false\nCPU 0.0,0,600,0,true\n\
         CPU 0.1,1,100,100,false\nCPU 0.1,0,200,400,true\nvCPU 0.*,0,300,100,false\n\
         vCPU 0.*,1,400,100,false\nvCPU 0.*,0,500,100,true\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM diagnostics"), "0");
}

#[test]
fn an_affinity_change_ovni_refuses_changes_no_cpu_and_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Thread 10 moves thread 11 after 11 ended, and thread 12 before 12 ran; thread 12 sets
    // its own affinity before it runs. ovni's emulator refuses all three (pre_affinity_*).
    let oar = |w: &W, cpu: u32, tid: u32| {
        let mut p = w.u32(cpu).to_vec();
        p.extend(w.u32(tid));
        p
    };
    let w = W::new(false);
    let (p11, p12) = (oar(&w, 1, 11), oar(&w, 1, 12));
    let a = w.ohx(1000, 0).ev("OAr", 1500, &p11).ev("OAr", 1600, &p12).ev("OHe", 2000, &[]);
    let b = W::new(false).ohx(1000, 1).ev("OHe", 1100, &[]);
    let c = W::new(false).ev("OAs", 1550, &1u32.to_le_bytes()).ohx(1700, 1).ev("OHe", 1800, &[]);
    put(d, "host", 9, 10, &a);
    put(d, "host", 9, 11, &b);
    put(d, "host", 9, 12, &c);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT ts, kind FROM diagnostics ORDER BY ALL"),
        "ts,kind\n500,bad_affinity\n550,bad_affinity\n600,bad_affinity\n"
    );
    // No thread gets a CPU from them: 11 has none after its end, 12 none before it runs.
    assert_eq!(
        chan(d, "Thread: CPU affinity"),
        "entity,state,ts,dur,open\nTH 2.10,CPU 0.0,0,1000,false\nTH 2.11,CPU 0.1,0,100,false\n\
         TH 2.12,CPU 0.1,700,100,false\n"
    );
}

#[test]
fn loom_cpus_that_clash_are_said_and_the_first_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Thread 10 lists two indices with phyid 3; thread 11 lists index 0 as phyid 7. Each
    // CPU is one row in ovni's emulator, which refuses both; here the first one is kept.
    let m10 = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 3}, {"index": 1, "phyid": 3}], "finished": 1 } }"#;
    let m11 = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 7}, {"index": 2, "phyid": 2}], "finished": 1 } }"#;
    let a = W::new(false).ohx(1000, 0).ev("OHe", 2000, &[]);
    let b = W::new(false).ohx(1000, 2).ev("OHe", 1500, &[]);
    put_meta(d, 9, 10, &a, m10);
    put_meta(d, 9, 11, &b, m11);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    let msgs = csv(d, "db", "SELECT kind, message FROM diagnostics ORDER BY message");
    assert_eq!(msgs.lines().filter(|l| l.starts_with("bad_metadata,")).count(), 2, "{msgs}");
    assert_eq!(msgs.lines().count(), 3, "{msgs}");
    // Each CPU its own row: the loom's CPUs by phyid, then its virtual CPU.
    assert_eq!(
        csv(d, "db", "SELECT name FROM entities WHERE type = 'CPU' ORDER BY entity_id"),
        "name\nCPU 0.2\nCPU 0.3\nvCPU 0.*\n"
    );
    assert_eq!(
        chan(d, "3"),
        "entity,state,ts,dur,open\nCPU 0.2,1,0,500,false\nCPU 0.2,0,500,500,true\n\
         CPU 0.3,1,0,1000,false\nCPU 0.3,0,1000,0,true\n"
    );
}

#[test]
fn looms_without_clock_offsets_and_offsets_of_no_loom_are_said() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let w = W::new(false).ohx(1000, 0).ev("OHe", 1100, &[]);
    put(d, "a", 9, 10, &w);
    put(d, "b.7", 9, 11, &w);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    // Host b names loom b.7 (ovni's host is the loom name up to its first dot); c none.
    std::fs::write(
        d.join("ovni/clock-offsets.txt"),
        "rank hostname median mean stdev\n0 a 0 0 0\n1 b 5 5 0\n2 c 7 7 0\n",
    )
    .unwrap();
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT capture_id, kind, severity, position FROM diagnostics ORDER BY ALL"),
        format!(
            "capture_id,kind,severity,position\n1,no_clock_offsets,info,{p}\n\
             2,bad_metadata,warning,{p}\n",
            p = d.join("ovni/clock-offsets.txt").display()
        )
    );
    assert!(scalar(d, "db", "SELECT message FROM diagnostics WHERE capture_id = 2")
        .contains("host 'c' is no loom's"));
}

#[test]
fn two_threads_on_a_physical_cpu_are_said_once_and_a_mark_titled_3_keeps_apart() {
    // A mark type titled `3`, the number cpu.pcf's unnamed count of running threads (type 3)
    // is shown by: the mark is `3 (105)`, the count stays `3`. Threads 10 and 11 both run on
    // CPU 0 from 1700 to 1800, and 10 sets its mark at 1750 meanwhile: ovni's refusal is said
    // once, at 1700 (at 1750 the count last shown, 2, is found).
    let meta = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 0}],
      "mark": { "5": { "title": "3", "chan_type": "single" } }, "finished": 1 } }"#;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let a = W::new(false)
        .ohx(1000, 0)
        .ev("OHp", 1200, &[])
        .ev("OHr", 1500, &[])
        .mark("OM=", 1750, 7, 5)
        .ev("OHe", 2000, &[]);
    let b =
        W::new(false).ohx(1300, 0).ev("OHp", 1450, &[]).ev("OHr", 1700, &[]).ev("OHe", 1800, &[]);
    put_meta(d, 9, 10, &a, meta);
    put_meta(d, 9, 11, &b, meta);
    ok(d, &["ingest", "--archive", "db", d.to_str().unwrap()]);
    assert_eq!(
        csv(d, "db", "SELECT kind, ts FROM diagnostics WHERE severity <> 'info' ORDER BY ALL"),
        "kind,ts\ncpu_oversubscribed,700\n"
    );
    // The count and the mark are two channels of the CPU row.
    let channels = "SELECT channel, state, ts, dur FROM intervals WHERE entity = 'CPU 0.0' \
                    AND channel LIKE '3%' AND ts >= 700 ORDER BY ts, channel";
    assert_eq!(
        csv(d, "db", channels),
        "channel,state,ts,dur\n3,2,700,100\n3,1,800,200\n3 (105),7,800,200\n3,0,1000,0\n"
    );
}
