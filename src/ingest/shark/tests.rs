//! Unit tests: the record reader, detection and the mapping to BTF-shaped events, on
//! hand-built records whose expected values are worked out by hand.
use super::record::{name, Form, Item, Reader, Rec, MAGIC};
use super::*;
use crate::model::{Event, TimeUnit};

/// Events as `ts source#instance type:target#instance action | note`.
struct Shark;

impl crate::ingest::test_sink::Shape for Shark {
    fn event(e: &Event<'_>) -> String {
        let target = if e.target.is_empty() {
            "-".to_string()
        } else {
            format!("{}:{}#{}", e.target_type, e.target, e.target_instance)
        };
        format!(
            "{} {}#{} {} {} | {}",
            e.ts,
            e.source,
            e.source_instance,
            target,
            e.action,
            e.note.unwrap_or("-")
        )
    }
}

type Out = crate::ingest::test_sink::Recorder<Shark>;

/// One 16-byte record as FTrace_safe_ipoint writes it.
fn rec(ty: u16, par1: u16, tsc: u64, par2: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend(ty.to_le_bytes());
    b.extend(par1.to_le_bytes());
    b.extend(u32::try_from(tsc >> 32).unwrap().to_le_bytes());
    b.extend(u32::try_from(tsc & 0xFFFF_FFFF).unwrap().to_le_bytes());
    b.extend(par2.to_le_bytes());
    b
}

fn ingest(bytes: &[u8], opts: &SharkOptions) -> Out {
    let mut out = Out::default();
    read(bytes, Path::new("trace.dat"), "trace.dat", opts, &mut out).unwrap();
    out
}

/// `bytes` read at 1 GHz (one cycle = 1 ns), so that times are the TSC values written.
fn ingest_ns(bytes: &[u8]) -> Out {
    ingest(bytes, &SharkOptions { tick_rate: Some(1_000_000_000), ..Default::default() })
}

/// The head of each event (`ts source target action`), without its note.
fn heads(o: &Out) -> Vec<String> {
    o.events.iter().map(|e| e.split(" | ").next().unwrap().to_string()).collect()
}

fn kinds(o: &Out) -> Vec<&str> {
    o.diags.iter().map(|(k, _)| k.as_str()).collect()
}

#[test]
fn a_record_decodes_as_the_digest_says() {
    let b = rec(0x12, 3, 1_000_000, 0);
    assert_eq!(
        b,
        [0x12, 0, 3, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0],
        "the example of the module digest"
    );
    let r =
        Rec::parse(&<[u8; 16]>::try_from(&rec(0x8016, 7, (5 << 32) | 9, 42)[..]).unwrap(), 1, 32);
    assert_eq!((r.code(), r.fast(), r.par1, r.tsc, r.par2()), (0x16, true, 7, (5 << 32) | 9, None));
    assert_eq!((r.file, r.at), (1, 32));
    let r = Rec::parse(&<[u8; 16]>::try_from(&rec(0x60, 2, 1, 77)[..]).unwrap(), 0, 0);
    assert_eq!((r.fast(), r.par2()), (false, Some(77)));
    assert_eq!(name(0x12), Some("task_activate"));
    assert_eq!(name(0x09), Some("user_event_0"));
    assert_eq!(name(0xE9), Some("user_event_14"));
    assert_eq!(name(0xF9), Some("filter_9"), "0xF9 is past the user events: a filter");
    assert_eq!(name(0xFC), None);
    assert_eq!(name(0xFB), Some("filter_11"));
    assert_eq!(name(0x0C), None);
}

#[test]
fn the_reader_skips_empty_slots_and_reports_a_cut_record() {
    let mut bytes = rec(0x20, 0, 10, 0);
    bytes.extend([0u8; 16]);
    bytes.extend(rec(0x30, 0, 20, 0));
    bytes.extend([0x12, 0, 1]);
    let mut r = Reader::new(&bytes[..], 0);
    let mut got = Vec::new();
    while let Some(i) = r.next_item().unwrap() {
        got.push(match i {
            Item::Rec(r) => format!("{:02X}@{}", r.code(), r.at),
            Item::Problem(d) => format!("{} {}", d.kind, d.pos),
        });
    }
    assert_eq!(got, ["20@0", "30@32", "partial_record byte 48"]);
    assert_eq!((r.empty, r.records, r.read, r.form), (1, 2, 51, Some(Form::Raw)));
}

/// A datagram as the UDP sender writes it.
fn packet(number: u32, events: &[Vec<u8>]) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend(number.to_le_bytes());
    b.extend(u32::try_from(events.len()).unwrap().to_le_bytes());
    b.extend(u32::try_from(24 + 16 * events.len()).unwrap().to_le_bytes());
    for e in events {
        b.extend(e);
    }
    b
}

#[test]
fn udp_datagrams_are_read_and_gaps_and_damage_reported() {
    let mut bytes = packet(1, &[rec(0x20, 0, 10, 0), rec(0x01, 4, 11, 0)]);
    bytes.extend(packet(2, &[rec(0x01, 5, 12, 0)]));
    // Datagram 3 is lost; then 20 bytes of garbage before datagram 4.
    bytes.extend([0xAA; 20]);
    bytes.extend(packet(5, &[rec(0x30, 0, 20, 0)]));
    let mut r = Reader::new(&bytes[..], 0);
    let mut got = Vec::new();
    while let Some(i) = r.next_item().unwrap() {
        got.push(match i {
            Item::Rec(r) => format!("{:02X}", r.code()),
            Item::Problem(d) => format!("{}: {}", d.kind, d.message),
        });
    }
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(&got[..3], ["20", "01", "01"]);
    assert!(got[3].starts_with("bad_packet: no TRACER-V1.0 datagram header at byte 96: 20 bytes"));
    // The damaged spot is taken for datagram 3: only 4 is lost besides it.
    assert_eq!(
        got[4],
        "packet_gap: datagram 5 follows the damaged one after 2: 1 datagrams (and their events) lost"
    );
    assert_eq!(got[5], "30");
    assert_eq!((r.form, r.packets, r.records), (Some(Form::Udp), 3, 4));
}

/// The sender numbers its datagrams from 1 (`packet_number++` before the first is sent) and
/// goes on across the chunks it sends: a capture that starts at 3 missed two.
#[test]
fn a_capture_that_misses_the_first_datagrams_says_so() {
    let items = |bytes: &[u8]| {
        let mut r = Reader::new(bytes, 0);
        let mut got = Vec::new();
        while let Some(i) = r.next_item().unwrap() {
            got.push(match i {
                Item::Rec(r) => format!("{:02X}", r.code()),
                Item::Problem(d) => format!("{} {}: {}", d.kind, d.severity.as_str(), d.message),
            });
        }
        got
    };
    let mut bytes = packet(3, &[rec(0x01, 4, 11, 0)]);
    bytes.extend(packet(4, &[rec(0x01, 5, 12, 0)]));
    assert_eq!(
        items(&bytes),
        [
            "packet_gap data_loss: datagram 3 is the first of the capture, but the sender \
             numbers them from 1: 2 datagrams (and their events) before it lost",
            "01",
            "01"
        ]
    );
    // From 1: nothing lost.
    let mut bytes = packet(1, &[rec(0x01, 4, 11, 0)]);
    bytes.extend(packet(2, &[rec(0x01, 5, 12, 0)]));
    assert_eq!(items(&bytes), ["01", "01"]);
}

/// The UDP sender sends a chunk in slot order, as the disk writer writes it: a wrapped
/// cyclic chunk drops in time there too.
#[test]
fn a_wrapped_chunk_sent_by_udp_is_said() {
    let mut bytes = packet(1, &[rec(0x01, 3, 50, 0), rec(0x01, 1, 10, 0)]);
    bytes.extend(packet(2, &[rec(0x01, 2, 20, 0)]));
    let o = ingest_ns(&bytes);
    assert_eq!(
        heads(&o),
        ["10 Core_0#-1 - ipoint", "20 Core_0#-1 - ipoint", "50 Core_0#-1 - ipoint"]
    );
    assert_eq!(kinds(&o), ["chunk_wrapped"]);
    assert!(
        o.diags[0]
            .1
            .contains("drops from 50 to 10 at byte 40 of trace.dat (1 drop in the order sent)"),
        "{:?}",
        o.diags
    );
}

#[test]
fn detection_wants_strong_evidence() {
    let mut dump = Vec::new();
    for k in 0..10u64 {
        dump.extend(rec(0x22, 1, 1000 + k, 0));
    }
    assert!(sniff(&dump));
    // One unknown code, a size that is not whole records, too few records: not S.Ha.R.K.
    let mut odd = dump.clone();
    odd.extend(rec(0x0C, 0, 2000, 0));
    assert!(!sniff(&odd));
    assert!(!sniff(&dump[..dump.len() - 1]));
    assert!(!sniff(&dump[..16 * 7]));
    // Time that goes back more than twice: not one wrapped chunk.
    let mut jumbled = Vec::new();
    for t in [5u64, 1, 6, 2, 7, 3, 8, 4, 9] {
        jumbled.extend(rec(0x22, 1, t, 0));
    }
    assert!(!sniff(&jumbled));
    // All TSCs zero, text, random bytes.
    let zero: Vec<u8> = (0..10).flat_map(|_| rec(0x22, 1, 0, 0)).collect();
    assert!(!sniff(&zero));
    assert!(!sniff(b"#version 2.1.4\n0,Core_0,0,T,t,0,activate\n0,Core_0,0,T,t,0,start\n\n"));
    let mut x = 0x1234_5678u32;
    let random: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect();
    assert!(!sniff(&random));
    assert!(sniff(&packet(0, &[rec(0x20, 0, 1, 0)])));
}

#[test]
fn chunk_files_are_named_index_then_name() {
    assert_eq!(chunk_index(Path::new("d/0trace.dat")), Some((0, "trace.dat".into())));
    assert_eq!(chunk_index(Path::new("12trace.dat.gz")), Some((12, "trace.dat.gz".into())));
    assert_eq!(chunk_index(Path::new("trace.dat")), None);
    assert_eq!(chunk_index(Path::new("007")), None);
    assert_eq!(chunk_index(Path::new("01x")), None);
}

#[test]
fn a_later_chunk_file_belongs_to_the_run_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    for k in [0, 1, 2, 4] {
        std::fs::write(dir.path().join(format!("{k}trace.dat")), [0u8; 16]).unwrap();
    }
    let at = |k: u32| dir.path().join(format!("{k}trace.dat"));
    assert_eq!(first_chunk_of(&at(2)), Some((2, at(0))));
    assert_eq!(first_chunk_of(&at(1)), Some((1, at(0))));
    // Chunk 0 is its own run; chunk 4 is past the gap at 3, not read with chunk 0.
    assert_eq!(first_chunk_of(&at(0)), None);
    assert_eq!(first_chunk_of(&at(4)), None);
    std::fs::remove_file(at(0)).unwrap();
    assert_eq!(first_chunk_of(&at(1)), None);
}

#[test]
fn a_chunk_file_read_alone_warns_as_the_first_ingest_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Vec::new();
    b.extend(rec(0x10, 0, 1, 1000));
    b.extend(rec(0x12, 3, 10, 0));
    let one = dir.path().join("1trace.dat");
    let warn = |opts: &SharkOptions| {
        let mut out = Out::default();
        read(&b[..], &one, "run/1trace.dat", opts, &mut out).unwrap();
        let kinds: Vec<&str> = out.diags.iter().map(|d| d.0.as_str()).collect();
        let meta = out.meta.iter().find(|m| m.0 == META_CHUNK_OF_RUN).map(|m| m.1.clone());
        (kinds.contains(&"chunk_of_run"), meta)
    };
    // Looked for beside the file: no 0trace.dat there.
    assert_eq!(warn(&SharkOptions::default()), (false, None));
    std::fs::write(dir.path().join("0trace.dat"), [0u8; 16]).unwrap();
    let first = Some("run/0trace.dat".to_string());
    assert_eq!(warn(&SharkOptions::default()), (true, first.clone()));
    // As recorded: the reingest's copy has no run beside it, or has one it did not have.
    let recorded = |b| SharkOptions { chunk_of_run: Some(b), ..Default::default() };
    assert_eq!(warn(&recorded(false)), (false, None));
    std::fs::remove_file(dir.path().join("0trace.dat")).unwrap();
    assert_eq!(warn(&recorded(true)), (true, first));
}

#[test]
fn two_tasks_map_to_btf_transitions_in_time_order() {
    let mut b = Vec::new();
    // 1000 cycles per ms: one cycle is 1000 ns.
    b.extend(rec(0x10, 0, 1, 1000));
    b.extend(rec(0x60, 3, 2, 101));
    // Slot order is not time order (a wrapped cyclic chunk): sorted by TSC.
    b.extend(rec(0x62, 3, 50, 0));
    b.extend(rec(0x12, 3, 10, 0));
    b.extend(rec(0x22, 3, 11, 0));
    b.extend(rec(0x12, 4, 20, 0));
    b.extend(rec(0x32, 3, 20, 0));
    b.extend(rec(0x22, 4, 21, 0));
    b.extend(rec(0x62, 4, 30, 0));
    b.extend(rec(0x22, 3, 31, 0));
    // An epilogue followed by the task's own dispatch is no preemption.
    b.extend(rec(0x32, 3, 40, 0));
    b.extend(rec(0x22, 3, 41, 0));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert_eq!(
        o.events,
        [
            "1000 Core_0#-1 - cycles_per_msec | par1=0 par2=1000",
            "2000 task_101#-1 - id | par1=3 par2=101",
            "10000 Core_0#-1 T:task_101#0 activate | task_activate par1=3 par2=0",
            "11000 Core_0#-1 T:task_101#0 start | task_dispatch par1=3 par2=0",
            "20000 Core_0#-1 T:ctx_4#0 activate | task_activate par1=4 par2=0",
            "20000 Core_0#-1 T:task_101#0 preempt | task_epilogue par1=3 par2=0",
            "21000 Core_0#-1 T:ctx_4#0 start | task_dispatch par1=4 par2=0",
            "30000 Core_0#-1 T:ctx_4#0 terminate | task_end_cycle par1=4 par2=0",
            "31000 Core_0#-1 T:task_101#0 resume | task_dispatch par1=3 par2=0",
            "40000 task_101#0 - task_epilogue | par1=3 par2=0",
            "41000 task_101#0 - task_dispatch | par1=3 par2=0",
            "50000 Core_0#-1 T:task_101#0 terminate | task_end_cycle par1=3 par2=0",
        ]
    );
    assert!(o.decl.contains(&("task_101".into(), Some("T".into()), None)));
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "1000".into())));
    assert!(o.meta.contains(&("shark.records".into(), "12".into())));
    // The wrap is said: what the chunk logged before its oldest record kept was overwritten.
    assert_eq!(kinds(&o), ["chunk_wrapped"]);
    assert!(
        o.diags[0]
            .1
            .contains("the TSC drops from 50 to 10 at byte 48 of trace.dat (1 drop in slot order)")
            && o.diags[0].1.contains("before TSC 1 (its oldest record kept) is lost"),
        "{:?}",
        o.diags
    );
}

/// The kernel's EDF, CBS and HCBS modules log a periodic task's every release as
/// `task_timer` (ctx, level), not as `task_activate` (logged only by the application's
/// `task_activate()` call, which EDF follows at once with the first release's `task_timer`):
/// each release is the activation of a job, the first one's `task_timer` is part of its
/// `task_activate`, and one logged while a job runs is queued (EDF's `nact`).
#[test]
fn task_timer_releases_the_jobs_of_a_periodic_task() {
    let mut b = Vec::new();
    for (code, ctx, tsc) in [
        (0x12, 1, 10), // task_activate()
        (0x92, 1, 11), // EDF_intern_release of the first job
        (0x82, 1, 12),
        (0x62, 1, 20),
        (0x82, 9, 21),  // the dummy task
        (0x92, 1, 100), // the end of the period: the next job
        (0x82, 1, 101),
        (0x62, 1, 110),
        (0x82, 9, 111),
        (0x92, 1, 200),
        (0x82, 1, 201),
        (0x92, 1, 300), // released while job 2 still runs: queued
        (0x62, 1, 310),
        (0x82, 1, 311),
        (0x62, 1, 320),
        (0x82, 9, 321),
    ] {
        b.extend(rec(code, ctx, tsc, 0));
    }
    let o = ingest_ns(&b);
    let lines: Vec<String> = o
        .events
        .iter()
        .map(|e| e.split(" | ").next().unwrap().to_string())
        .filter(|e| e.contains("T:ctx_1#"))
        .collect();
    assert_eq!(
        lines,
        [
            "10 Core_0#-1 T:ctx_1#0 activate",
            "12 Core_0#-1 T:ctx_1#0 start",
            "20 Core_0#-1 T:ctx_1#0 terminate",
            "100 Core_0#-1 T:ctx_1#1 activate",
            "101 Core_0#-1 T:ctx_1#1 start",
            "110 Core_0#-1 T:ctx_1#1 terminate",
            "200 Core_0#-1 T:ctx_1#2 activate",
            "201 Core_0#-1 T:ctx_1#2 start",
            "300 Core_0#-1 T:ctx_1#3 activate",
            "310 Core_0#-1 T:ctx_1#2 terminate",
            "311 Core_0#-1 T:ctx_1#3 start",
            "320 Core_0#-1 T:ctx_1#3 terminate",
        ]
    );
    assert!(
        o.events.iter().any(|e| e == "11 ctx_1#0 - task_timer | par1=1 par2=0"),
        "{:?}",
        o.events
    );
    assert!(o
        .events
        .iter()
        .any(|e| e == "100 Core_0#-1 T:ctx_1#1 activate | task_timer par1=1 par2=0"));
    assert_eq!(kinds(&o), ["activate_while_active"], "the queued job is said");
    // A release while the task_activate'd job runs, and another before the queued job starts:
    // both are jobs (the first release is only swallowed before its job starts).
    let mut b = Vec::new();
    for (code, tsc) in
        [(0x12, 400), (0x82, 401), (0x92, 410), (0x62, 420), (0x92, 430), (0x82, 431)]
    {
        b.extend(rec(code, 2, tsc, 0));
    }
    let o = ingest_ns(&b);
    let lines: Vec<&str> = o.events.iter().map(|e| e.split(" | ").next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "400 Core_0#-1 T:ctx_2#0 activate",
            "401 Core_0#-1 T:ctx_2#0 start",
            "410 Core_0#-1 T:ctx_2#1 activate",
            "420 Core_0#-1 T:ctx_2#0 terminate",
            "430 Core_0#-1 T:ctx_2#2 activate",
            "431 Core_0#-1 T:ctx_2#1 start",
        ]
    );
}

#[test]
fn equal_times_keep_file_order() {
    let mut b = Vec::new();
    for p in [5u16, 1, 3] {
        b.extend(rec(0x01, p, 7, 0));
    }
    let o = ingest_ns(&b);
    let ipoints: Vec<&str> = o.events.iter().map(|e| e.split(" | ").nth(1).unwrap()).collect();
    assert_eq!(ipoints, ["par1=5 par2=0", "par1=1 par2=0", "par1=3 par2=0"]);
    assert!(o.meta.contains(&("shark.tick_rate_hz".into(), "1000000000".into())));
}

#[test]
fn without_a_rate_times_are_cycles_and_that_is_said() {
    let o = ingest(&rec(0x20, 0, (1 << 32) + 5, 0), &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Tick));
    assert!(o.events[0].starts_with("4294967301 "), "{:?}", o.events);
    assert_eq!(kinds(&o), ["unknown_cycle_rate"]);
}

#[test]
fn the_cycle_rate_scales_exactly_with_no_overflow() {
    // 2^64 - 1 cycles at 3,000,000 cycles/ms: (2^64 - 1) / 3 ns, past 2^62: clamped.
    let mut b = rec(0x10, 0, 0, 3_000_000);
    b.extend(rec(0x20, 0, 3_000_000_001, 0));
    b.extend(rec(0x30, 0, u64::MAX, 0));
    let o = ingest(&b, &SharkOptions { tick_rate: Some(5), ..Default::default() });
    // 3,000,000,001 * 10^6 / 3 * 10^6 = 1,000,000,000.33 ns, floored.
    assert!(o.events[1].starts_with("1000000000 "), "{:?}", o.events);
    assert!(o.events[2].starts_with(&format!("{} ", (1i64 << 62) - 1)), "{:?}", o.events);
    assert_eq!(kinds(&o), ["tick_rate_ignored", "time_out_of_range"]);
}

/// The kernel's demos start the tracer with `TRACER_LOGEVENT(FTrace_EVT_trace_start,
/// ctx, clk_per_msec)` and log `cycles_per_msec` only when the CPU frequency changes (DVS):
/// a log with no `cycles_per_msec` still has its rate, in its `trace_start`.
#[test]
fn the_rate_of_trace_start_scales_a_log_with_no_cycles_per_msec() {
    let mut b = rec(0x20, 5, 1_000, 2_000); // 2,000 cycles per ms: a cycle is 500 ns
    b.extend(rec(0x01, 1, 3_000, 0));
    b.extend(rec(0x10, 0, 5_000, 4_000)); // the frequency doubles later: said, not used
    let o = ingest(&b, &SharkOptions { tick_rate: Some(7), ..Default::default() });
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert!(o.events[0].starts_with("500000 "), "{:?}", o.events);
    assert!(o.events[1].starts_with("1500000 "), "{:?}", o.events);
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "2000".into())), "{:?}", o.meta);
    assert_eq!(kinds(&o), ["tick_rate_ignored", "cycle_rate_changed"]);
    // A trace_start whose par2 is 0 (FTrace.h's comment: empty) or stale gives no rate.
    let mut b = rec(0x20, 5, 1_000, 0);
    b.extend(rec(0x8020, 5, 2_000, 2_000));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(o.unit, Some(TimeUnit::Tick));
    assert_eq!(kinds(&o), ["unknown_cycle_rate"]);
}

#[test]
fn interrupts_nest_and_a_lost_end_is_closed_with_the_outer_one() {
    let mut b = rec(0x03, 1, 10, 0);
    b.extend(rec(0x03, 2, 12, 0));
    b.extend(rec(0x13, 1, 15, 0));
    b.extend(rec(0x13, 7, 16, 0));
    let o = ingest_ns(&b);
    let acts: Vec<String> = o
        .events
        .iter()
        .map(|e| e.split(" | ").next().unwrap().split(' ').skip(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        acts,
        [
            "I:IRQ1#0 activate",
            "I:IRQ1#0 start",
            "I:IRQ2#0 activate",
            "I:IRQ2#0 start",
            "I:IRQ2#0 terminate",
            "I:IRQ1#0 terminate",
            "- interrupt_end",
        ]
    );
    assert_eq!(kinds(&o), ["lost_interrupt_end", "lost_interrupt_start"]);
}

/// The kernel's `sem_wait` logs `mutex_wait` (ctx, semaphore) whether it blocks or not, and
/// `sem_post` logs `mutex_post`: a wait that does not block is followed by the task's own
/// records, one that blocks by the scheduler's choice of another task (interrupts are off
/// in between); the post that frees a blocked task hands it the semaphore.
#[test]
fn a_semaphore_wait_blocks_only_when_another_task_is_scheduled_next() {
    let mut b = rec(0x12, 1, 1, 0);
    b.extend(rec(0x82, 1, 2, 1));
    b.extend(rec(0x46, 1, 3, 3)); // sem_wait of ctx 1: the count was 1, it goes on
    b.extend(rec(0x12, 2, 4, 0));
    b.extend(rec(0x82, 2, 5, 2)); // ctx 2 takes the CPU
    b.extend(rec(0x46, 2, 6, 3)); // and blocks on semaphore 3:
    b.extend(rec(0x82, 1, 7, 1)); // the scheduler picks ctx 1 at once
    b.extend(rec(0x56, 1, 8, 3)); // sem_post of ctx 1 frees ctx 2
    b.extend(rec(0x62, 1, 9, 0));
    b.extend(rec(0x82, 2, 10, 2));
    b.extend(rec(0x56, 2, 11, 3));
    b.extend(rec(0x62, 2, 12, 0));
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_3#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_3#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_3#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_3#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 SEM:mutex_3#-1 released",
            "8 Core_0#-1 T:ctx_2#0 release",
            "8 ctx_2#0 SEM:mutex_3#-1 assigned",
            "9 Core_0#-1 T:ctx_1#0 terminate",
            "10 Core_0#-1 T:ctx_2#0 resume",
            "11 ctx_2#0 SEM:mutex_3#-1 released",
            "12 Core_0#-1 T:ctx_2#0 terminate",
        ]
    );
    assert!(o.events[3].ends_with("implied by mutex_wait par1=1 par2=3"), "{}", o.events[3]);
    assert!(o.events[12].ends_with("implied by mutex_post par1=1 par2=3"), "{}", o.events[12]);
    assert!(kinds(&o).is_empty(), "{:?}", o.diags);
}

/// The kernel's `mutex_lock()` logs `mutex_lock` before it tries the lock: under priority
/// inheritance a task that finds the mutex held blocks (the holder runs in its place:
/// `task_schedule` par1 the holder, par2 the blocked task) and takes the mutex when it runs
/// again after the holder's `mutex_unlock`. Two tasks never hold one mutex at once.
#[test]
fn a_lock_of_a_held_mutex_waits_until_the_task_runs_after_the_unlock() {
    let m = 0x1000;
    let mut b = Vec::new();
    for (code, p1, tsc, p2) in [
        (0x12, 1, 1, 0),
        (0x82, 1, 2, 1),
        (0x16, 1, 3, m), // ctx 1 locks the free mutex
        (0x12, 2, 4, 0),
        (0x82, 2, 5, 2),
        (0x16, 2, 6, m), // ctx 2 finds it held: blocks
        (0x82, 1, 7, 2), // exec_shadow ctx 1 runs for exec ctx 2
        (0x25, 1, 8, 2), // inheritance
        (0x36, 1, 9, m),
        (0x82, 2, 10, 2), // ctx 2 runs again: it takes the mutex
        (0x36, 2, 11, m),
        (0x62, 2, 12, 0),
        (0x82, 1, 13, 1),
        (0x62, 1, 14, 0),
    ] {
        b.extend(rec(code, p1, tsc, p2));
    }
    let o = ingest_ns(&b);
    let lines: Vec<&str> = o.events.iter().map(|e| e.split(" | ").next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_4096#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_4096#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_4096#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_4096#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 - inheritance",
            "9 ctx_1#0 SEM:mutex_4096#-1 released",
            "10 Core_0#-1 T:ctx_1#0 preempt",
            "10 Core_0#-1 T:ctx_2#0 release",
            "10 Core_0#-1 T:ctx_2#0 resume",
            "10 ctx_2#0 SEM:mutex_4096#-1 assigned",
            "11 ctx_2#0 SEM:mutex_4096#-1 released",
            "12 Core_0#-1 T:ctx_2#0 terminate",
            "13 Core_0#-1 T:ctx_1#0 resume",
            "14 Core_0#-1 T:ctx_1#0 terminate",
        ]
    );
    assert!(o.events[16].ends_with("implied by task_schedule par1=2 par2=2"), "{}", o.events[16]);
    assert!(kinds(&o).is_empty(), "{:?}", o.diags);
}

#[test]
fn a_contended_mutex_makes_request_wait_assign_release() {
    let mut b = rec(0x12, 1, 1, 0);
    b.extend(rec(0x22, 1, 2, 0));
    b.extend(rec(0x16, 1, 3, 9)); // ctx 1 locks mutex 9 at once
    b.extend(rec(0x12, 2, 4, 0));
    b.extend(rec(0x22, 2, 5, 0)); // ctx 2 takes the CPU: ctx 1 preempted (implied)
    b.extend(rec(0x46, 2, 6, 9)); // and blocks on mutex 9
    b.extend(rec(0x22, 1, 7, 0));
    b.extend(rec(0x36, 1, 8, 9));
    b.extend(rec(0x16, 2, 8, 9)); // granted to ctx 2
    b.extend(rec(0x8036, 2, 9, 0)); // fast unlock: the mutex is not known
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:ctx_1#0 activate",
            "2 Core_0#-1 T:ctx_1#0 start",
            "3 ctx_1#0 SEM:mutex_9#-1 requestsemaphore",
            "3 ctx_1#0 SEM:mutex_9#-1 assigned",
            "4 Core_0#-1 T:ctx_2#0 activate",
            "5 Core_0#-1 T:ctx_1#0 preempt",
            "5 Core_0#-1 T:ctx_2#0 start",
            "6 ctx_2#0 SEM:mutex_9#-1 requestsemaphore",
            "6 ctx_2#0 SEM:mutex_9#-1 waiting",
            "6 Core_0#-1 T:ctx_2#0 wait",
            "7 Core_0#-1 T:ctx_1#0 resume",
            "8 ctx_1#0 SEM:mutex_9#-1 released",
            "8 Core_0#-1 T:ctx_2#0 release",
            "8 ctx_2#0 SEM:mutex_9#-1 assigned",
            "9 ctx_2#0 - mutex_unlock",
        ]
    );
    assert!(o.events[5].ends_with("implied by task_dispatch par1=2 par2=0"));
    assert!(o.events[14].ends_with("par1=2 par2=stale"));
    assert_eq!(kinds(&o), ["fast_record"]);
}

#[test]
fn blackouts_cli_sti_numevents_and_unknown_codes_are_reported() {
    let mut b = rec(0x24, 0, 10, 0);
    b.extend(rec(0x34, 0, 14, 0));
    b.extend(rec(0x40, 0, 20, 0));
    b.extend(rec(0x50, 0, 25, 0));
    b.extend(rec(0x0C, 0, 26, 0));
    b.extend(rec(0x70, 0, 27, 99));
    b.extend(rec(0x24, 0, 30, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        o.spans,
        ["interrupts Core_0 disabled [10,14)", "interrupts Core_0 disabled [30,open)"]
    );
    assert_eq!(o.events.len(), 7, "every record is a row, the unknown one too");
    assert!(o.events[4].starts_with("26 Core_0#-1 - code_0x0C"));
    assert_eq!(kinds(&o), ["blackout", "unknown_code", "numevents_mismatch"]);
    assert!(o.diags[0].1.contains("blackout from 20 to 25 (5 ns)"), "{:?}", o.diags);
    assert!(o.diags[2].1.contains("numevents says 99 events, but 7 were read"), "{:?}", o.diags);
}

/// FTrace_set_filter(filter, status) logs the filter code with par1 = status; while a
/// family's bit is set, FTrace_safe_ipoint returns before writing any of its records (the
/// filter family itself is never filtered). The span with no records of the family is
/// named, as the kernel's demo does it (timer family on, then off) and left open.
#[test]
fn a_filtered_family_is_reported_for_the_span_it_was_not_logged() {
    let mut b = rec(0xFB, 1, 10, 0);
    b.extend(rec(0x20, 0, 12, 0));
    // Enabled twice: the span starts at the first.
    b.extend(rec(0xFB, 1, 14, 0));
    b.extend(rec(0xFB, 0, 50, 0));
    // Disabling a filter that was not on changes nothing in the kernel's mask.
    b.extend(rec(0xF3, 0, 55, 0));
    b.extend(rec(0xF2, 1, 60, 0));
    b.extend(rec(0x01, 7, 70, 0));
    let o = ingest_ns(&b);
    assert_eq!(o.events.len(), 7, "every record is a row");
    assert!(o.events[0].starts_with("10 Core_0#-1 - filter_11"), "{:?}", o.events);
    assert_eq!(kinds(&o), ["filtered_family", "filtered_family"], "{:?}", o.diags);
    assert!(
        o.diags[0].1.contains("timer events (family 0xB) were not logged from 10 to 50 (40 ns)"),
        "{:?}",
        o.diags
    );
    assert!(
        o.diags[1].1.contains("task events (family 0x2) were not logged from 60 to the end"),
        "{:?}",
        o.diags
    );
}

/// The kernel's demos log trace_start with the running task's context in par1 (and the
/// rate in par2); GRUBSTAR logs server_active with the context of the task that woke the
/// server (CBSSTAR with 0, which is no context): those records are the task's.
#[test]
fn trace_start_and_server_active_with_a_context_are_the_tasks() {
    let mut b = rec(0x20, 5, 10, 1_000_000);
    b.extend(rec(0x60, 5, 11, 3));
    b.extend(rec(0x58, 5, 12, 0xABC0));
    b.extend(rec(0x58, 0, 13, 0xABC0));
    b.extend(rec(0x20, 0, 14, 0));
    let o = ingest(&b, &SharkOptions::default());
    assert_eq!(
        heads(&o),
        [
            "10 task_3#-1 - trace_start",
            "11 task_3#-1 - id",
            "12 task_3#-1 - server_active",
            "13 Core_0#-1 - server_active",
            "14 Core_0#-1 - trace_start",
        ]
    );
}

#[test]
fn ids_name_tasks_also_for_records_before_them() {
    let mut b = rec(0x12, 5, 1, 0);
    b.extend(rec(0x60, 5, 2, 42));
    // The context gets another pid: a new task from then on.
    b.extend(rec(0x02, 5, 3, 43));
    b.extend(rec(0x12, 5, 4, 0));
    let o = ingest_ns(&b);
    let lines = heads(&o);
    assert_eq!(
        lines,
        [
            "1 Core_0#-1 T:task_42#0 activate",
            "2 task_42#0 - id",
            "3 task_43#-1 - task_create",
            "4 Core_0#-1 T:task_43#0 activate",
        ]
    );
}

/// S.Ha.R.K.'s pids are `proc_table` slots, reused once a task is destroyed: a context
/// that gets its old pid back (pid 42, then 43, then 42 again) is task_42 again, whose
/// instances go on from the last one (found by tests/oracle/shark_oracle.py: they started
/// over at 0, two `instances` rows then shared task_42 and an instance number).
#[test]
fn a_pid_that_comes_back_continues_its_tasks_instances() {
    let mut b = rec(0x02, 5, 1, 42);
    b.extend(rec(0x12, 5, 2, 0));
    b.extend(rec(0x22, 5, 3, 0));
    b.extend(rec(0x42, 5, 4, 42)); // task_end: destroyed
    b.extend(rec(0x02, 5, 5, 43));
    b.extend(rec(0x12, 5, 6, 0));
    b.extend(rec(0x42, 5, 7, 43));
    b.extend(rec(0x02, 5, 8, 42)); // the slot comes back to pid 42
    b.extend(rec(0x12, 5, 9, 0));
    b.extend(rec(0x22, 5, 10, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        heads(&o),
        [
            "1 task_42#-1 - task_create",
            "2 Core_0#-1 T:task_42#0 activate",
            "3 Core_0#-1 T:task_42#0 start",
            "4 Core_0#-1 T:task_42#0 terminate",
            "5 task_43#-1 - task_create",
            "6 Core_0#-1 T:task_43#0 activate",
            "7 Core_0#-1 T:task_43#0 terminate",
            "8 task_42#0 - task_create",
            "9 Core_0#-1 T:task_42#1 activate",
            "10 Core_0#-1 T:task_42#1 start",
        ]
    );
    // A pid one context freed, created again in another.
    let mut b = rec(0x02, 5, 1, 42);
    b.extend(rec(0x12, 5, 2, 0));
    b.extend(rec(0x42, 5, 3, 42));
    b.extend(rec(0x02, 6, 4, 42));
    b.extend(rec(0x12, 6, 5, 0));
    let o = ingest_ns(&b);
    assert_eq!(
        heads(&o),
        [
            "1 task_42#-1 - task_create",
            "2 Core_0#-1 T:task_42#0 activate",
            "3 Core_0#-1 T:task_42#0 terminate",
            "4 task_42#0 - task_create",
            "5 Core_0#-1 T:task_42#1 activate",
        ]
    );
}

/// Ingests `recs` written to a file (so the pre-pass can read it again), sorting `cap`
/// records together.
fn ingest_windows(recs: &[Vec<u8>], cap: usize) -> Out {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("trace.dat");
    std::fs::write(&p, recs.concat()).unwrap();
    let mut out = Out::default();
    let f = std::fs::File::open(&p).unwrap();
    read_capped(f, &p, "trace.dat", &SharkOptions::default(), &mut out, cap).unwrap();
    out
}

#[test]
fn an_epilogue_at_a_window_border_sees_the_dispatch_after_it() {
    // cap 16: the epilogue is the 16th record, the last of the first window (which maps 8
    // and carries 8 to the next), its own dispatch the first of the next.
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000), rec(0x12, 1, 10, 0), rec(0x22, 1, 20, 0)];
    recs.extend((0..12).map(|k| rec(0x01, 9, 30 + k, 0)));
    recs.push(rec(0x32, 1, 70, 0));
    recs.push(rec(0x22, 1, 80, 0)); // its own dispatch: the kernel ran and gave it back
    recs.extend((0..20).map(|k| rec(0x01, 9, 100 + k, 0)));
    recs.push(rec(0x62, 1, 200, 0));
    let o = ingest_windows(&recs, 16);
    assert!(kinds(&o).contains(&"too_many_records"));
    let moves: Vec<&String> = o.events.iter().filter(|e| e.contains(" T:ctx_1#")).collect();
    assert_eq!(moves.len(), 3, "{moves:#?}");
    assert!(moves[0].contains("activate") && moves[1].contains("start"), "{moves:#?}");
    assert!(moves[2].starts_with("200 ") && moves[2].contains("terminate"), "{moves:#?}");
}

#[test]
fn a_later_window_gives_its_pid_and_cycle_rate_to_the_first() {
    // The pid and the rate are logged once the first window (8 records) was mapped.
    let mut recs = vec![rec(0x12, 1, 10, 0), rec(0x22, 1, 20, 0)];
    recs.extend((0..20).map(|k| rec(0x01, 9, 30 + k, 0)));
    recs.push(rec(0x60, 1, 300, 11));
    recs.push(rec(0x10, 0, 310, 2_000_000));
    recs.push(rec(0x62, 1, 400, 0));
    let o = ingest_windows(&recs, 16);
    assert_eq!(o.unit, Some(TimeUnit::Ns));
    assert!(!kinds(&o).contains(&"unknown_cycle_rate"), "{:?}", o.diags);
    assert!(o.meta.contains(&("shark.cycles_per_msec".into(), "2000000".into())));
    assert!(o.events.iter().all(|e| !e.contains("ctx_1")), "{:#?}", o.events);
    // 2,000,000 cycles per ms: ns = cycles / 2.
    assert!(
        o.events.contains(&"5 Core_0#-1 T:task_11#0 activate | task_activate par1=1 par2=0".into()),
        "{:#?}",
        o.events
    );
    assert!(o.events.iter().any(|e| e.starts_with("200 Core_0#-1 T:task_11#0 terminate")));
}

#[test]
fn entities_and_interrupt_nesting_are_bounded() {
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000), rec(0x12, 1, 1, 0), rec(0x22, 1, 2, 0)];
    let n = u32::try_from(mapper::MAX_ENTITIES).unwrap() + 2;
    recs.extend((0..n).map(|m| rec(0x16, 1, 10 + u64::from(m), m)));
    let nest = mapper::MAX_NESTING + 1;
    recs.extend((0..nest).map(|k| rec(0x03, 3, 1_000_000 + k as u64, 0)));
    let o = ingest(&recs.concat(), &SharkOptions::default());
    let too_many = kinds(&o).iter().filter(|k| **k == "too_many_entities").count();
    assert_eq!(too_many, 2, "the last two mutexes");
    let sems = o.decl.iter().filter(|(_, t, _)| t.as_deref() == Some("SEM")).count();
    assert_eq!(sems, mapper::MAX_ENTITIES);
    let last = format!("mutex_lock | par1=1 par2={}", n - 1);
    assert!(
        o.events.iter().any(|e| e.contains("ctx_1#0 - ") && e.ends_with(&last)),
        "{:?}",
        o.events.iter().filter(|e| e.ends_with(&last)).collect::<Vec<_>>()
    );
    assert_eq!(kinds(&o).iter().filter(|k| **k == "interrupt_nesting_too_deep").count(), 1);
    let starts =
        o.events.iter().filter(|e| e.contains("I:IRQ3#") && e.contains(" start |")).count();
    assert_eq!(starts, mapper::MAX_NESTING);
}

#[test]
fn tasks_named_by_pid_are_bounded() {
    // One context re-identified with ever new pids: beyond the cap it stays ctx_1.
    let n = u32::try_from(mapper::MAX_ENTITIES).unwrap() + 1;
    let mut recs = vec![rec(0x10, 0, 0, 1_000_000)];
    for k in 0..n {
        let t = 10 + 2 * u64::from(k);
        recs.push(rec(0x60, 1, t, 100 + k));
        recs.push(rec(0x12, 1, t + 1, 0));
    }
    let o = ingest(&recs.concat(), &SharkOptions::default());
    assert_eq!(kinds(&o).iter().filter(|k| **k == "too_many_entities").count(), 1);
    let tasks = o.decl.iter().filter(|(d, _, _)| d.starts_with("task_")).count();
    assert_eq!(tasks, mapper::MAX_ENTITIES);
    assert!(
        o.events.last().is_some_and(|e| e.contains("T:ctx_1#0 activate")),
        "{:?}",
        o.events.last()
    );
}

/// A datagram with a given count and total size.
fn packet_as(number: u32, events: &[Vec<u8>], count: u32, total: u32) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend(number.to_le_bytes());
    b.extend(count.to_le_bytes());
    b.extend(total.to_le_bytes());
    b.extend(events.concat());
    b
}

fn ten(from: u64) -> Vec<Vec<u8>> {
    (0..10).map(|k| rec(0x01, 1, from + k, 0)).collect()
}

#[test]
fn a_datagram_count_that_disagrees_with_its_size_trusts_the_next_header() {
    let size = 24 + 16 * 10;
    for (count, total) in [(12, size), (5, size), (12, 24 + 16 * 12)] {
        let mut bytes = packet(0, &ten(100));
        bytes.extend(packet_as(1, &ten(200), count, total));
        bytes.extend(packet(2, &ten(300)));
        let o =
            ingest(&bytes, &SharkOptions { tick_rate: Some(1_000_000_000), ..Default::default() });
        let ipoints: Vec<&String> = o.events.iter().filter(|e| e.contains("ipoint")).collect();
        assert_eq!(ipoints.len(), 30, "count {count} total {total}: {:?}", o.diags);
        assert!(o.events.iter().all(|e| !e.contains("code_0x")), "{:?}", o.events);
        let k = kinds(&o);
        assert_eq!(k, ["bad_packet"], "count {count} total {total}: {:?}", o.diags);
    }
}

#[test]
fn a_damaged_header_is_reported_once() {
    let mut bytes = packet(0, &ten(100));
    let mut bad = packet(1, &ten(200));
    bad[0] = b'X';
    bytes.extend(bad);
    bytes.extend(packet(2, &ten(300)));
    let o = ingest(&bytes, &SharkOptions { tick_rate: Some(1_000_000_000), ..Default::default() });
    assert_eq!(kinds(&o), ["bad_packet"], "{:?}", o.diags);
    // A count beyond what fits, then the next datagram: no gap said for it either.
    let mut bytes = packet(0, &ten(100));
    bytes.extend(packet_as(1, &ten(200), 100_000, 24));
    bytes.extend(packet(2, &ten(300)));
    let o = ingest(&bytes, &SharkOptions { tick_rate: Some(1_000_000_000), ..Default::default() });
    assert_eq!(kinds(&o), ["bad_packet"], "{:?}", o.diags);
}

/// Untrusted dumps never panic: a run with tasks, mutexes, interrupts, servers, user events
/// and a wrapped (out of order) stretch, cut at every byte and with every byte changed, ends
/// in Ok or Err.
#[test]
fn mutated_dumps_never_panic() {
    let recs: &[(u16, u16, u64, u32)] = &[
        (0x10, 0, 10, 1_000),
        (0x20, 0, 20, 0),
        (0x02, 1, 30, 101),
        (0x02, 2, 40, 102),
        (0x60, 3, 45, 103),
        (0x12, 1, 50, 0),
        (0x22, 1, 60, 0),
        (0x82, 1, 65, 1),
        (0x16, 1, 70, 5),
        (0x12, 2, 80, 0),
        (0x15, 2, 90, 0),
        (0x46, 2, 95, 5),
        (0x82, 1, 96, 2),
        (0x56, 1, 97, 5),
        (0x16, 2, 98, 5),
        (0x92, 2, 99, 0),
        (0x03, 14, 100, 0),
        (0x13, 14, 110, 0),
        (0x36, 1, 120, 5),
        (0x62, 1, 130, 0),
        (0x22, 2, 140, 0),
        (0x08, 7, 150, 2),
        (0x28, 7, 160, 2),
        (0xB2, 2, 170, 0),
        (0x09, 2, 180, 42),
        (0x42, 2, 190, 102),
        (0x30, 0, 200, 0),
        // A cyclic chunk's older records after the newer ones.
        (0x12, 3, 25, 0),
        (0x8022, 3, 26, 0),
    ];
    let mut bytes = Vec::new();
    for &(ty, p1, tsc, p2) in recs {
        bytes.extend(rec(ty, p1, tsc, p2));
    }
    let opts = SharkOptions { tick_rate: Some(1_000_000), ..Default::default() };
    let go = |b: &[u8]| {
        let mut out = Out::default();
        read(b, Path::new("trace.dat"), "trace.dat", &opts, &mut out).map(|_| out)
    };
    let whole = go(&bytes).unwrap();
    assert!(whole.events.len() >= recs.len(), "{:#?}", whole.events);
    let mut runs = 0;
    for cut in 0..bytes.len() {
        let _ = go(&bytes[..cut]);
        runs += 1;
    }
    for i in 0..bytes.len() {
        for x in [0x5A, 0xFF, 0x80, 0x01] {
            let mut m = bytes.clone();
            m[i] ^= x;
            let _ = go(&m);
            runs += 1;
        }
    }
    assert!(runs > 1500, "{runs} runs");
}
