//! S.Ha.R.K. tracer logs: a run generated here from the FORMATS.md §4 layout (no public
//! sample exists) whose tables are worked out by hand: two periodic tasks, an interrupt, a
//! mutex contended once, a recorded deadline miss, two chunk files (the second a wrapped
//! cyclic chunk with empty slots), a fast-variant record; then a truncated file, the UDP
//! form, --strict, reingest, export, and a random file that is not taken for S.Ha.R.K.;
//! and a log as the kernel's own logging sites write it.
use crate::util::{csv, ok, run, scalar};
use std::path::Path;

/// One 16-byte record: type, par1, TSC (hi, lo), par2.
fn rec(ty: u16, par1: u16, tsc: u64, par2: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend(ty.to_le_bytes());
    b.extend(par1.to_le_bytes());
    b.extend(((tsc >> 32) as u32).to_le_bytes());
    b.extend((tsc as u32).to_le_bytes());
    b.extend(par2.to_le_bytes());
    b
}

const T1: u16 = 1; // context of task_11 (period 1000)
const T2: u16 = 2; // context of task_12 (period 2000)
const M: u32 = 7; // the mutex

/// The run, in time order, with 1,000,000 cycles per ms: TSC cycles are ns.
fn run_records() -> Vec<Vec<u8>> {
    vec![
        rec(0x10, 0, 10, 1_000_000),
        rec(0x60, T1, 20, 11),
        rec(0x60, T2, 30, 12),
        rec(0x12, T1, 100, 0),
        rec(0x12, T2, 100, 0),
        rec(0x22, T1, 110, 0),
        rec(0x62, T1, 300, 0),
        rec(0x22, T2, 310, 0),
        rec(0x03, 5, 400, 0), // IRQ5 interrupts task_12
        rec(0x13, 5, 450, 0),
        rec(0x16, T2, 500, M),
        rec(0x12, T1, 1100, 0),
        rec(0x32, T2, 1100, 0), // epilogue: task_12 preempted by task_11
        rec(0x22, T1, 1110, 0),
        rec(0x46, T1, 1200, M), // task_11 blocks on the mutex task_12 holds
        rec(0x22, T2, 1210, 0),
        rec(0x36, T2, 1300, M),
        rec(0x16, T1, 1300, M),
        rec(0x32, T2, 1300, 0),
        rec(0x22, T1, 1310, 0),
        rec(0x36, T1, 1400, M),
        rec(0x62, T1, 1500, 0),
        rec(0x22, T2, 1510, 0),
        rec(0x62, T2, 1900, 0),
        // Chunk file 1 from here.
        rec(0x12, T1, 2100, 0),
        rec(0x12, T2, 2100, 0),
        rec(0x22, T1, 2110, 0),
        rec(0x62, T1, 2200, 0),
        rec(0x22, T2, 2210, 0),
        rec(0x12, T1, 3100, 0),
        rec(0x32, T2, 3100, 0),
        rec(0x22, T1, 3110, 0),
        rec(0x62, T1, 3200, 0),
        rec(0x8022, T2, 3210, 0xDEAD_BEEF), // fast variant: par2 stale
        rec(0xB2, T2, 4100, 0),             // the kernel records task_12's deadline miss
        rec(0x12, T1, 4100, 0),
        rec(0x32, T2, 4100, 0),
        rec(0x22, T1, 4110, 0),
        rec(0x62, T1, 4200, 0),
        rec(0x22, T2, 4210, 0),
        rec(0x62, T2, 4300, 0),
        rec(0x24, 0, 4400, 0),
        rec(0x34, 0, 4450, 0),
        rec(0x30, 0, 4500, 0),
    ]
}

/// Writes the run as `0trace.dat` (first 24 records, in order) and `1trace.dat` (the rest
/// as a wrapped cyclic chunk: newest slots first, then two empty slots, then the oldest).
fn write_run(dir: &Path) {
    let recs = run_records();
    let (first, second) = recs.split_at(24);
    std::fs::write(dir.join("0trace.dat"), first.concat()).unwrap();
    let (old, new) = second.split_at(12);
    let mut wrapped = new.concat();
    wrapped.extend([0u8; 32]);
    wrapped.extend(old.concat());
    std::fs::write(dir.join("1trace.dat"), wrapped).unwrap();
}

fn diags(dir: &Path, id: u32) -> String {
    csv(
        dir,
        "db",
        &format!(
            "SELECT kind, severity, sum(count) AS n FROM diagnostics WHERE capture_id = {id} \
             GROUP BY ALL ORDER BY kind"
        ),
    )
}

const INSTANCES: &str = "SELECT entity, instance, activate_ts, start_ts, terminate_ts, \
    response_time, start_delay, net_exec, ready_time, waiting_time, preemptions, complete \
    FROM instances ORDER BY entity, instance";

/// A log as the kernel's sources write it (not as this suite's other runs model it): the
/// rate in `trace_start` (the demos' `clk_per_msec`), ids, an EDF task whose jobs are
/// released by `task_timer` (late once: a recorded miss and a queued job), a low-priority
/// task holding a priority-inheritance mutex (`mutex_lock` logged before the lock is
/// tried), a semaphore wait that does not block, and the dummy task; tables by hand.
#[test]
fn a_log_as_the_kernel_writes_it_gives_hand_checked_tables() {
    const M: u32 = 0x001A_2B3C; // a mutex_t's address
    let recs: &[(u16, u16, u64, u32)] = &[
        (0x20, 3, 0, 1000), // trace_start: 1000 cycles per ms, a cycle is 1 us
        (0x60, 3, 1, 0),    // dummy task, pid 0
        (0x60, 5, 1, 1),    // low-priority task, pid 1
        (0x60, 6, 1, 2),    // EDF task, pid 2
        (0x12, 5, 100, 0),
        (0x82, 5, 101, 5),
        (0x16, 5, 200, M), // task_1 locks the free mutex
        (0x12, 6, 300, 0), // task_activate() of the EDF task...
        (0x92, 6, 301, 0), // ...and its first release
        (0x82, 6, 302, 6),
        (0x16, 6, 400, M), // held by task_1: task_2 blocks
        (0x82, 5, 401, 6), // task_1 runs for it
        (0x25, 5, 402, 6),
        (0x36, 5, 600, M),
        (0x82, 6, 601, 6), // task_2 runs again and takes the mutex
        (0x36, 6, 700, M),
        (0x46, 6, 750, 9), // sem_wait that does not block
        (0x56, 6, 760, 9), // sem_post
        (0x62, 6, 800, 0),
        (0x82, 5, 801, 5),
        (0x62, 5, 900, 0),
        (0x82, 3, 901, 3),
        (0x92, 6, 1301, 0), // the next period's job
        (0x82, 6, 1302, 6),
        (0xB2, 6, 2300, 0), // still running at its deadline
        (0x92, 6, 2301, 0), // the next job is queued
        (0x62, 6, 2400, 0),
        (0x82, 6, 2401, 6),
        (0x62, 6, 2500, 0),
        (0x82, 3, 2501, 3),
        (0x30, 0, 3000, 0),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bytes: Vec<u8> = recs.iter().flat_map(|&(t, p1, tsc, p2)| rec(t, p1, tsc, p2)).collect();
    std::fs::write(d.join("0trace.dat"), bytes).unwrap();
    ok(d, &["ingest", "--archive", "db", "0trace.dat"]);
    assert_eq!(
        csv(d, "db", "SELECT time_unit, ts_min, ts_max FROM captures"),
        "time_unit,ts_min,ts_max\nns,0,3000000\n"
    );
    // task_1: runs 101-302, 401-601, 801-900 (net 500 us), ready 302-401 and 601-801.
    // task_2 job 0: starts 302, blocked 400-601 (waiting 201), runs to 800 (net 98 + 199).
    // Job 1: 1301-2400 (response 1099, net 1098); job 2 queued at 2301, runs 2401-2500.
    // The dummy task (no activation): 901-1302 and 2501 to the end, 3000; ready between.
    assert_eq!(
        csv(d, "db", INSTANCES),
        "entity,instance,activate_ts,start_ts,terminate_ts,response_time,start_delay,net_exec,ready_time,waiting_time,preemptions,complete
task_0,0,,901000,,,,900000,1199000,0,1,false
task_1,0,100000,101000,900000,800000,1000,500000,299000,0,2,true
task_2,0,300000,302000,800000,500000,2000,297000,0,201000,0,true
task_2,1,1301000,1302000,2400000,1099000,1000,1098000,0,0,0,true
task_2,2,2301000,2401000,2500000,199000,100000,99000,0,0,0,true
"
    );
    assert_eq!(
        csv(d, "db", "SELECT semaphore, process, process_instance, request_ts, assigned_ts, released_ts, wait, hold, contended, blocked_by FROM lock_requests ORDER BY request_ts"),
        "semaphore,process,process_instance,request_ts,assigned_ts,released_ts,wait,hold,contended,blocked_by
mutex_1715004,task_1,0,200000,200000,600000,0,400000,false,
mutex_1715004,task_2,0,400000,601000,700000,201000,99000,true,task_1
mutex_9,task_2,0,750000,750000,760000,0,10000,false,
"
    );
    assert_eq!(
        csv(d, "db", "SELECT entity, instance, deadline_source FROM deadline_misses WHERE deadline_source = 'recorded'"),
        "entity,instance,deadline_source\ntask_2,1,recorded\n"
    );
    assert_eq!(
        diags(d, 1),
        "kind,severity,n\nactivate_while_active,info,1\nunknown_prior_state,info,1\n"
    );
}

#[test]
fn a_generated_run_of_two_chunk_files_gives_hand_checked_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_run(d);
    // Detected (no --format): the first chunk's records are all valid and in time order.
    ok(d, &["ingest", "--archive", "db", "0trace.dat"]);
    assert_eq!(
        csv(d, "db", "SELECT format, time_unit, ts_origin, ts_min, ts_max, event_count, source_files FROM captures"),
        "format,time_unit,ts_origin,ts_min,ts_max,event_count,source_files\nshark,ns,0,10,4500,49,\"[\"\"0trace.dat\"\",\"\"1trace.dat\"\"]\"\n"
    );
    // 44 records and 5 rows they imply: IRQ5's activate, the request of the uncontended
    // lock, the `waiting` step and the task's `wait` of the contended one, and its release.
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FILTER (WHERE note NOT LIKE 'implied by %') FROM events"),
        "44",
        "one row per record"
    );
    // task_12 instance 0: activate 100, start 310, IRQ5 400-450 (ready 50), preempted
    // 1100-1210 and 1300-1510 (ready 110 + 210), terminate 1900: net 90+650+90+390 = 1220.
    // task_11 instance 1: waits on the mutex 1200-1300, ready 1300-1310: net 90 + 190.
    // task_12 instance 1: runs 2210-3100, 3210-4100, 4210-4300 (net 1870), preempted twice
    // for 110 each (ready 220).
    assert_eq!(
        csv(d, "db", INSTANCES),
        "entity,instance,activate_ts,start_ts,terminate_ts,response_time,start_delay,net_exec,ready_time,waiting_time,preemptions,complete
IRQ5,0,400,400,450,50,0,50,0,0,0,true
task_11,0,100,110,300,200,10,190,0,0,0,true
task_11,1,1100,1110,1500,400,10,280,10,100,0,true
task_11,2,2100,2110,2200,100,10,90,0,0,0,true
task_11,3,3100,3110,3200,100,10,90,0,0,0,true
task_11,4,4100,4110,4200,100,10,90,0,0,0,true
task_12,0,100,310,1900,1800,210,1220,370,0,3,true
task_12,1,2100,2210,4300,2200,110,1870,220,0,2,true
"
    );
    assert_eq!(
        csv(d, "db", "SELECT semaphore, process, process_instance, request_ts, assigned_ts, released_ts, wait, hold, contended, blocked_by, blocked_by_instance, blockers FROM lock_requests ORDER BY request_ts"),
        "semaphore,process,process_instance,request_ts,assigned_ts,released_ts,wait,hold,contended,blocked_by,blocked_by_instance,blockers
mutex_7,task_12,0,500,500,1300,0,800,false,,,0
mutex_7,task_11,1,1200,1300,1400,100,100,true,task_12,0,1
"
    );
    // The core's interrupts channel and the ISR's running interval.
    assert_eq!(
        csv(d, "db", "SELECT entity, channel, state, ts, dur FROM intervals WHERE channel = 'interrupts' OR channel = 'running' AND state = 'IRQ5'"),
        "entity,channel,state,ts,dur\nCore_0,running,IRQ5,400,50\nCore_0,interrupts,disabled,4400,50\n"
    );
    // Core occupancy (what cpu_load sums): 110-4300 but for 1900-2110 and the ten gaps of
    // 10 ns between a task leaving the CPU (at 300, 1100, 1200, 1300, 1500, 2200, 3100,
    // 3200, 4100, 4200) and the next dispatch.
    assert_eq!(
        scalar(
            d,
            "db",
            "SELECT sum(dur) FROM intervals WHERE entity = 'Core_0' AND channel = 'running'"
        ),
        (4300 - 110 - 210 - 10 * 10).to_string()
    );
    // The recorded miss beside the implicit-period one for the same instance.
    assert_eq!(
        csv(d, "db", "SELECT * FROM deadline_misses"),
        "capture_id,entity,instance,activate_ts,terminate_ts,response_time,deadline,deadline_source,lateness
1,task_12,1,2100,4300,2200,2000,implicit-period,200
1,task_12,1,2100,4300,2200,2000,recorded,200
"
    );
    // The fast dispatch still drives the state machine; its par2 is not shown as a value.
    assert_eq!(
        csv(d, "db", "SELECT action, note, value FROM events WHERE ts = 3210"),
        "action,note,value\nresume,task_dispatch par1=2 par2=stale,\n"
    );
    assert_eq!(
        diags(d, 1),
        "kind,severity,n\nchunk_wrapped,warning,1\nempty_slots,info,1\nimplicit_preemption,info,1\n"
    );
    // The second chunk file wrapped: said once, in that file, where its TSC drops.
    let wrap = scalar(
        d,
        "db",
        "SELECT position || ' ' || message FROM diagnostics WHERE kind = 'chunk_wrapped'",
    );
    assert!(wrap.contains("1trace.dat@byte "), "{wrap}");
    assert!(wrap.contains("of 1trace.dat (1 drop in slot order)"), "{wrap}");
    assert_eq!(scalar(d, "db", "SELECT meta->>'shark.chunk_files' FROM captures"), "2");
    // Ingesting the run again, or its second chunk file with it, stores nothing twice.
    let again = run(d, &["ingest", "--archive", "db", "0trace.dat", "1trace.dat"]);
    assert!(again.status.success());
    let again = String::from_utf8_lossy(&again.stderr);
    assert!(again.contains("identical to capture 1"), "{again}");
    assert!(again.contains("1trace.dat: read as a chunk file of capture 1"), "{again}");
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM captures"), "1");
    // Alone, a later chunk file whose run is already a capture is not stored again...
    let alone = run(d, &["ingest", "--archive", "db", "--format", "shark", "1trace.dat"]);
    assert!(alone.status.success());
    let alone = String::from_utf8_lossy(&alone.stderr);
    assert!(
        alone.contains(
            "1trace.dat: chunk file 1 of the run of 0trace.dat, which is capture 1 '0trace.dat' \
             (same SHA-256); not stored again"
        ),
        "{alone}"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM captures"), "1");
    // ...unless forced: then it is its own capture, and says whose chunk it is.
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "--force", "1trace.dat"]);
    assert!(diags(d, 2).contains("chunk_of_run,warning,1"), "{}", diags(d, 2));

    // reingest rebuilds the same tables from the kept chunk files.
    let before =
        csv(d, "db", &INSTANCES.replace("FROM instances", "FROM instances WHERE capture_id = 1"));
    let locks = "SELECT * FROM lock_requests WHERE capture_id = 1 ORDER BY request_ts";
    let locks_before = csv(d, "db", locks);
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(
        csv(d, "db", &INSTANCES.replace("FROM instances", "FROM instances WHERE capture_id = 1")),
        before
    );
    assert_eq!(csv(d, "db", locks), locks_before);
    assert_eq!(scalar(d, "db", "SELECT event_count FROM captures WHERE capture_id = 1"), "49");

    // Exported to BTF and read back: the same instances and lock requests.
    ok(d, &["export", "1", "--archive", "db", "--to", "btf", "back.btf"]);
    ok(d, &["ingest", "--archive", "b.tdb", "back.btf"]);
    let inst = |db: &str| {
        csv(d, db, "SELECT entity, instance, activate_ts, terminate_ts, response_time, net_exec, preemptions FROM instances WHERE capture_id = 1 ORDER BY ALL")
    };
    assert_eq!(inst("b.tdb"), inst("db"));
    let locks = |db: &str| {
        csv(d, db, "SELECT semaphore, process, request_ts, assigned_ts, released_ts, contended FROM lock_requests WHERE capture_id = 1 ORDER BY ALL")
    };
    assert_eq!(locks("b.tdb"), locks("db"));
}

/// An instance with two misses (the implicit-period one and the one the kernel recorded)
/// is one instance in the report's "who delayed it": task_12 instance 1 was preempted twice
/// by task_11, not four times.
#[test]
fn the_report_counts_the_preemptions_of_an_instance_with_two_misses_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_run(d);
    ok(d, &["ingest", "--archive", "db", "0trace.dat"]);
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FROM preemption_instances WHERE preempted = 'task_12' AND instance = 1 AND preempted_by = 'task_11'"),
        "2"
    );
    ok(d, &["report", "--archive", "db", "-o", "r.json"]);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    let misses = r["deadline_misses"].as_array().unwrap();
    assert_eq!(misses.len(), 2);
    for m in misses {
        assert_eq!(m["preempted_by"], "task_11 ×2", "{m}");
    }
}

#[test]
fn a_truncated_dump_keeps_its_whole_records_and_strict_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut bytes = run_records()[..24].concat();
    bytes.extend([0x22, 0x00, 0x01, 0x00, 0x00]);
    std::fs::write(d.join("cut.dat"), &bytes).unwrap();
    // Its size is no multiple of 16: not detected, forced.
    let refused = run(d, &["ingest", "--archive", "db", "cut.dat"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unrecognised format"));
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "cut.dat"]);
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FILTER (WHERE note NOT LIKE 'implied by %') FROM events"),
        "24"
    );
    assert_eq!(
        csv(d, "db", "SELECT kind, severity, position FROM diagnostics WHERE severity <> 'info'"),
        "kind,severity,position\npartial_record,data_loss,cut.dat@byte 384\n"
    );
    let strict = run(
        d,
        &["ingest", "--archive", "db", "--force", "--strict", "--format", "shark", "cut.dat"],
    );
    assert_eq!(strict.status.code(), Some(1));
    let err = String::from_utf8_lossy(&strict.stderr);
    assert!(err.contains("partial_record") && err.contains("--strict"), "{err}");
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM captures"), "1");
}

#[test]
fn a_udp_capture_is_detected_by_its_magic_and_reports_lost_datagrams() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = run_records();
    let mut bytes = Vec::new();
    for (n, chunk) in recs.chunks(10).enumerate() {
        if n == 2 {
            continue; // datagram 2 never arrived
        }
        bytes.extend(b"TRACER-V1.0\0");
        bytes.extend((n as u32 + 1).to_le_bytes()); // the sender numbers from 1
        bytes.extend((chunk.len() as u32).to_le_bytes());
        bytes.extend((24 + 16 * chunk.len() as u32).to_le_bytes());
        bytes.extend(chunk.concat());
    }
    std::fs::write(d.join("udp.bin"), &bytes).unwrap();
    ok(d, &["ingest", "--archive", "db", "udp.bin"]);
    assert_eq!(scalar(d, "db", "SELECT format FROM captures"), "shark");
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FILTER (WHERE note NOT LIKE 'implied by %') FROM events"),
        "34"
    );
    let loss =
        csv(d, "db", "SELECT kind, severity, message FROM diagnostics WHERE kind = 'packet_gap'");
    assert!(loss.contains("datagram 4 follows 2: 1 datagrams"), "{loss}");
    assert_eq!(scalar(d, "db", "SELECT meta->>'shark.form' FROM captures"), "udp");
}

#[test]
fn random_bytes_are_not_taken_for_shark() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut x = 0x9E37_79B9u32;
    let bytes: Vec<u8> = (0..16 * 512)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as u8
        })
        .collect();
    std::fs::write(d.join("random.bin"), &bytes).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "random.bin"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognised format"));
    // Forced, every record is kept, the unknown codes said.
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "random.bin"]);
    let records = scalar(d, "db", "SELECT meta->>'shark.records' FROM captures");
    let rows = "SELECT count(*) FILTER (WHERE note NOT LIKE 'implied by %') FROM events";
    assert_eq!(records, scalar(d, "db", rows));
    assert!(records.parse::<u64>().unwrap() > 0);
    assert!(diags(d, 1).contains("unknown_code,warning"), "{}", diags(d, 1));
}

#[test]
fn without_a_cycle_rate_times_stay_in_cycles_or_take_the_tick_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = run_records();
    std::fs::write(d.join("norate.dat"), recs[1..24].concat()).unwrap();
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "norate.dat"]);
    ok(
        d,
        &[
            "ingest",
            "--archive",
            "db",
            "--format",
            "shark",
            "--force",
            "--tick-rate",
            "2GHz",
            "--name",
            "fast",
            "norate.dat",
        ],
    );
    assert_eq!(
        csv(d, "db", "SELECT name, time_unit, ts_max FROM captures ORDER BY capture_id"),
        "name,time_unit,ts_max\nnorate.dat,tick,1900\nfast,ns,950\n"
    );
    assert!(diags(d, 1).contains("unknown_cycle_rate,info,1"), "{}", diags(d, 1));
    // The rate given is kept, so that reingest scales the same.
    ok(d, &["reingest", "--archive", "db", "fast"]);
    assert_eq!(scalar(d, "db", "SELECT ts_max FROM captures WHERE name = 'fast'"), "950");
}

/// Ingests `recs` as the chunk dump `name` into the archive `db`.
fn ingest_recs(d: &Path, name: &str, recs: &[Vec<u8>]) {
    std::fs::write(d.join(name), recs.concat()).unwrap();
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "--force", name]);
}

const CPM: u16 = 0x10;

#[test]
fn task_schedule_switches_tasks_as_the_kernel_logs_it() {
    // S.Ha.R.K.'s scheduler() logs task_schedule (par1 exec_shadow, par2 exec), no dispatch.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = vec![
        rec(CPM, 0, 0, 1_000_000),
        rec(0x60, 1, 1, 11),
        rec(0x60, 2, 1, 12),
        rec(0x12, 1, 100, 0),
        rec(0x82, 1, 110, 1),
        rec(0x12, 2, 500, 0),
        rec(0x32, 1, 510, 0), // epilogue, then the scheduler picks task_12
        rec(0x82, 2, 510, 2),
        rec(0x62, 2, 700, 0),
        rec(0x8082, 1, 710, 0xDEAD), // fast variant: par2 stale, par1 is enough
        rec(0x62, 1, 900, 0),
    ];
    ingest_recs(d, "s.dat", &recs);
    assert_eq!(
        csv(d, "db", INSTANCES),
        "entity,instance,activate_ts,start_ts,terminate_ts,response_time,start_delay,net_exec,ready_time,waiting_time,preemptions,complete
task_11,0,100,110,900,800,10,590,200,0,1,true
task_12,0,500,510,700,200,10,190,0,0,0,true
"
    );
    let d1 = diags(d, 1);
    assert!(!d1.contains("invalid_transition"), "{d1}");
    assert_eq!(
        scalar(
            d,
            "db",
            "SELECT sum(dur) FROM intervals WHERE entity = 'Core_0' AND channel = 'running'"
        ),
        "780"
    );
}

#[test]
fn a_queued_activation_is_the_next_instance_at_its_own_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = vec![
        rec(CPM, 0, 0, 1_000_000),
        rec(0x12, 1, 100, 0),
        rec(0x22, 1, 100, 0),
        rec(0x12, 1, 200, 0), // queued by the kernel
        rec(0x62, 1, 250, 0),
        rec(0x22, 1, 250, 0),
        rec(0x62, 1, 320, 0),
        rec(0x22, 1, 330, 0), // running with no activation: a new instance, not complete
    ];
    ingest_recs(d, "q.dat", &recs);
    assert_eq!(
        csv(d, "db", "SELECT entity, instance, activate_ts, start_ts, terminate_ts, response_time, complete FROM instances ORDER BY instance"),
        "entity,instance,activate_ts,start_ts,terminate_ts,response_time,complete
ctx_1,0,100,100,250,150,true
ctx_1,1,200,250,320,120,true
ctx_1,2,,330,,,false
"
    );
    assert!(diags(d, 1).contains("activate_while_active,info,1"), "{}", diags(d, 1));
}

#[test]
fn a_recorded_miss_after_its_instance_ended_belongs_to_no_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = vec![
        rec(CPM, 0, 0, 1_000_000),
        rec(0x12, 1, 1000, 0),
        rec(0x22, 1, 1000, 0),
        rec(0x62, 1, 1500, 0),
        rec(0xB2, 1, 1600, 0),
        rec(0x12, 1, 2000, 0),
        rec(0x22, 1, 2000, 0),
        rec(0xB2, 1, 2400, 0),
        rec(0x62, 1, 2500, 0),
    ];
    ingest_recs(d, "m.dat", &recs);
    assert_eq!(
        csv(d, "db", "SELECT entity, instance, deadline, lateness FROM deadline_misses WHERE deadline_source = 'recorded' ORDER BY instance"),
        "entity,instance,deadline,lateness\nctx_1,-1,,\nctx_1,1,400,100\n"
    );
    assert!(diags(d, 1).contains("miss_without_instance,warning,1"), "{}", diags(d, 1));
}

#[test]
fn early_rows_type_the_core_so_a_btf_export_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let recs = vec![
        rec(CPM, 0, 0, 1_000_000),
        rec(0x13, 4, 5, 0), // interrupt_end with no start: IRQ4's first row
        rec(0x12, 1, 100, 0),
        rec(0x22, 1, 110, 0),
        rec(0x62, 1, 300, 0),
    ];
    ingest_recs(d, "c.dat", &recs);
    assert_eq!(
        csv(d, "db", "SELECT DISTINCT source, source_type FROM events WHERE source IN ('Core_0', 'IRQ4') ORDER BY source"),
        "source,source_type\nCore_0,C\nIRQ4,I\n"
    );
    ok(d, &["export", "--archive", "db", "--to", "btf", "1", "c.btf"]);
    ok(d, &["ingest", "--archive", "db2", "c.btf"]);
    assert_eq!(
        scalar(
            d,
            "db2",
            "SELECT sum(dur) FROM intervals WHERE entity = 'Core_0' AND channel = 'running'"
        ),
        "190"
    );
}

#[test]
fn reingest_names_chunk_files_as_they_were_given() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("life")).unwrap();
    let recs = run_records();
    std::fs::write(d.join("life/0trace.dat"), recs[..24].concat()).unwrap();
    let mut second = recs[24..].concat();
    second.extend(rec(0x0C, 0, 5000, 0)); // a code FTrace.h does not define
    std::fs::write(d.join("life/1trace.dat"), second).unwrap();
    ok(d, &["ingest", "--archive", "db", "life/0trace.dat"]);
    let q = "SELECT position FROM diagnostics WHERE kind = 'unknown_code'";
    let first = scalar(d, "db", q);
    assert!(first.starts_with("life/1trace.dat@"), "{first}");
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(scalar(d, "db", q), first);
}

/// Every diagnostics row of capture `id`, as text.
fn diag_rows(dir: &Path, id: u32) -> String {
    csv(
        dir,
        "db",
        &format!(
            "SELECT severity, kind, position, ts, message, count FROM diagnostics \
             WHERE capture_id = {id} ORDER BY ALL"
        ),
    )
}

#[test]
fn chunk_files_named_before_their_run_are_read_once_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_run(d);
    // Chunk 1 named first: it is taken with its run, which is one capture.
    let out = run(d, &["ingest", "--archive", "db", "1trace.dat", "0trace.dat"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains(
            "1trace.dat: chunk file 1 of the run of 0trace.dat, which is named too: taken with \
             that run, not ingested alone"
        ),
        "{msg}"
    );
    assert_eq!(
        csv(d, "db", "SELECT capture_id, name, event_count, source_files FROM captures"),
        "capture_id,name,event_count,source_files\n1,0trace.dat,49,\"[\"\"0trace.dat\"\",\"\"1trace.dat\"\"]\"\n"
    );
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM events WHERE ts = 4500"), "1");
    assert!(!diags(d, 1).contains("chunk_of_run"), "{}", diags(d, 1));
    // Named again, alone (or with its run): the run is that capture.
    let out = run(d, &["ingest", "--archive", "db", "--format", "shark", "1trace.dat"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("which is capture 1"));
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM captures"), "1");
}

#[test]
fn a_chunk_file_ingested_alone_warns_alike_on_reingest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("life")).unwrap();
    write_run(&d.join("life"));
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "life/1trace.dat"]);
    let first = diag_rows(d, 1);
    assert!(
        first.contains(
            "warning,chunk_of_run,life/1trace.dat,,\"this is chunk file 1 of the run whose first chunk is \
             life/0trace.dat:"
        ),
        "{first}"
    );
    assert_eq!(
        scalar(d, "db", "SELECT meta->>'shark.chunk_of_run' FROM captures"),
        "life/0trace.dat"
    );
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(diag_rows(d, 1), first);
    // An archive of a tracedb that kept no such meta: the old diagnostics say it.
    let manifest = d.join("db/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace("\"shark.chunk_of_run\": \"life/0trace.dat\",", "");
    assert!(!text.contains("shark.chunk_of_run"));
    std::fs::write(&manifest, text).unwrap();
    ok(d, &["reingest", "--archive", "db", "1"]);
    assert_eq!(diag_rows(d, 1), first);
    // A chunk file alone with no run beside it has nothing to warn about, then or later.
    std::fs::create_dir(d.join("lone")).unwrap();
    std::fs::copy(d.join("life/1trace.dat"), d.join("lone/1trace.dat")).unwrap();
    ok(d, &["ingest", "--archive", "db", "--format", "shark", "--force", "lone/1trace.dat"]);
    assert!(!diags(d, 2).contains("chunk_of_run"), "{}", diags(d, 2));
    ok(d, &["reingest", "--archive", "db", "2"]);
    assert!(!diags(d, 2).contains("chunk_of_run"), "{}", diags(d, 2));
}

/// The demo's run: chunk 0 cyclic and wrapped (the trace_start with the rate and the first
/// id overwritten), chunk 1 with the fast ipoints. A diagnostic of the derive stage about
/// a record of chunk 0 names chunk 0, though chunk 1 was read before the records were mapped.
#[test]
fn diagnostics_name_the_chunk_file_of_their_record() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let b = 1_000_000_000u64;
    // Slots 0-2: the newest records after the wrap; 3-7: the oldest kept.
    let first = [
        rec(0xFB, 0, b + 300, 0),
        rec(0x01, 7, b + 310, 0),
        rec(0x01, 8, b + 320, 0),
        rec(0x60, 0x50, b + 21, 3),
        rec(0x12, 0x50, b + 100, 0),
        rec(0x82, 0x50, b + 110, 0x50),
        rec(0x62, 0x50, b + 200, 0),
        rec(0x82, 0x48, b + 210, 0x48),
    ];
    std::fs::write(d.join("0trace.dat"), first.concat()).unwrap();
    let mut second: Vec<Vec<u8>> =
        (0..5u16).map(|k| rec(0x8001, 1000 * (k + 1), b + 400 + u64::from(k), 0)).collect();
    second.push(rec(0x01, 6000, b + 500, 0));
    second.push(rec(0x30, 0, b + 600, 0));
    std::fs::write(d.join("1trace.dat"), second.concat()).unwrap();
    ok(d, &["ingest", "--archive", "db", "0trace.dat"]);
    assert_eq!(
        csv(d, "db", "SELECT kind, position FROM diagnostics WHERE kind IN ('chunk_wrapped', 'unknown_prior_state') ORDER BY kind"),
        "kind,position\nchunk_wrapped,0trace.dat@byte 48\nunknown_prior_state,0trace.dat@byte 112\n"
    );
}
