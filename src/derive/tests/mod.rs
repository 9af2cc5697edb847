//! Unit tests of the derive stage without storage: rows are rendered as text. This file
//! holds the [`Output`] that renders them and the helpers the test files share, and the
//! tests of the stage as a whole (bad input, line ends, the clock, notes, types); each other
//! file tests one state machine.
use super::*;
use crate::ingest::lines::LineReader;
use crate::ingest::{ChannelSet, Sink};

mod blocked_by;
mod cores;
mod oracle;
mod paraver;
mod process;
mod runnable;
mod semaphore;

#[derive(Default)]
struct Rows {
    intervals: Vec<String>,
    instances: Vec<String>,
    locks: Vec<String>,
    /// `target#instance action @core` of each event.
    events: Vec<String>,
    /// `entity#instance net= ready= preempt= migr=` of each instance.
    metrics: Vec<String>,
    /// `action value note` of each event.
    event_values: Vec<String>,
    /// `channel state value` of each interval.
    interval_values: Vec<String>,
    /// `entity#instance state [ts,end) @core` of each interval.
    interval_cores: Vec<String>,
    /// `entity#instance @core` of each instance.
    instance_cores: Vec<String>,
    /// `semaphore process#instance by=blocked_by#instance of blockers` of each lock request.
    blockers: Vec<String>,
    /// Every lock request as written, in the order they came.
    lock_rows: Vec<SeenLock>,
}

/// A `lock_requests` row with its names resolved.
#[derive(Debug, Clone)]
struct SeenLock {
    semaphore: String,
    process: String,
    instance: i64,
    request_ts: Option<i64>,
    assigned_ts: Option<i64>,
    released_ts: Option<i64>,
    contended: bool,
    blocked_by: Option<(String, i64)>,
    blockers: i64,
}

impl Output for Rows {
    fn event(&mut self, r: &EventRow<'_>, n: &Interner) -> Result<()> {
        self.events.push(format!(
            "{}#{} {} @{}",
            r.target.map_or("-", |t| n.resolve(t)),
            r.target_instance,
            n.resolve(r.action),
            r.core.map_or("-", |c| n.resolve(c))
        ));
        self.event_values.push(format!("{} {:?} {:?}", n.resolve(r.action), r.value, r.note));
        Ok(())
    }
    fn intervals(&mut self, rows: &[IntervalRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.intervals.push(format!(
                "{} {} {} [{},{}) {}",
                n.resolve(r.channel),
                n.resolve(r.entity),
                r.state.as_str(n),
                r.ts,
                r.ts + r.dur,
                if r.open { "open" } else { "" }
            ));
            self.interval_values.push(format!(
                "{} {} {:?}",
                n.resolve(r.channel),
                r.state.as_str(n),
                r.value
            ));
            self.interval_cores.push(format!(
                "{}#{} {} [{},{}) @{}",
                n.resolve(r.entity),
                r.instance,
                r.state.as_str(n),
                r.ts,
                r.ts + r.dur,
                r.core.map_or("-", |c| n.resolve(c))
            ));
        }
        Ok(())
    }
    fn instances(&mut self, rows: &[InstanceRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.instance_cores.push(format!(
                "{}#{} @{}",
                n.resolve(r.entity),
                r.instance,
                r.core.map_or("-", |c| n.resolve(c))
            ));
            self.instances.push(format!(
                "{}#{} rt={:?} net={} complete={}",
                n.resolve(r.entity),
                r.instance,
                r.response_time(),
                r.net_exec,
                r.complete()
            ));
            self.metrics.push(format!(
                "{}#{} net={} ready={} preempt={} migr={}",
                n.resolve(r.entity),
                r.instance,
                r.net_exec,
                r.ready_time,
                r.preemptions,
                r.migrations.unwrap_or(0)
            ));
        }
        Ok(())
    }
    fn lock_requests(&mut self, rows: &[LockRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.locks.push(format!(
                "{} {} wait={:?} hold={:?}{}",
                n.resolve(r.semaphore),
                n.resolve(r.process),
                r.wait(),
                r.hold(),
                if r.contended() { " contended" } else { "" }
            ));
            let by = r.blocked_by.map(|(p, i)| format!("{}#{i}", n.resolve(p)));
            self.blockers.push(format!(
                "{} {}#{} by={} of {}",
                n.resolve(r.semaphore),
                n.resolve(r.process),
                r.process_instance,
                by.as_deref().unwrap_or("-"),
                r.blockers
            ));
            self.lock_rows.push(SeenLock {
                semaphore: n.resolve(r.semaphore).to_string(),
                process: n.resolve(r.process).to_string(),
                instance: r.process_instance,
                request_ts: r.request_ts,
                assigned_ts: r.assigned_ts,
                released_ts: r.released_ts,
                contended: r.contended(),
                blocked_by: r.blocked_by.map(|(p, i)| (n.resolve(p).to_string(), i)),
                blockers: r.blockers,
            });
        }
        Ok(())
    }
}

fn derive(text: &str) -> (Summary, Rows) {
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    d.finish().unwrap()
}

/// Untrusted input never panics: every golden fixture, truncated at many points and with
/// bytes flipped, goes through its importer and the derive stage and ends in Ok or Err.
#[test]
fn mutated_fixtures_never_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut inputs = Vec::new();
    for format in ["btf", "prv"] {
        let Ok(cases) = std::fs::read_dir(root.join(format)) else { continue };
        for case in cases.flatten() {
            let path = case.path().join(format!("input.{format}"));
            if let Ok(bytes) = std::fs::read(&path) {
                inputs.push((format, bytes));
            }
        }
    }
    assert!(inputs.len() >= 8, "fixtures found: {}", inputs.len());
    let mut runs = 0;
    for (format, bytes) in &inputs {
        let mut variants: Vec<Vec<u8>> = Vec::new();
        let step = (bytes.len() / 40).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            variants.push(bytes[..cut].to_vec());
        }
        let flips: &[u8] = &[b',', b':', b'\n', b'-', b'9', 0xff, 0x00, b'#'];
        for (i, at) in (0..bytes.len()).step_by(step).enumerate() {
            let mut v = bytes.clone();
            v[at] = flips[i % flips.len()];
            variants.push(v);
        }
        for v in variants {
            let mut d = Deriver::new(Rows::default(), "t", false);
            let mut lines = LineReader::new(&v[..]);
            let read = match *format {
                "btf" => crate::ingest::btf::read(&mut lines, "t", &mut d),
                _ => crate::ingest::prv::read(
                    &mut lines,
                    "t",
                    &crate::ingest::prv::Companions::default(),
                    &mut d,
                ),
            };
            if let (true, Ok((s, _))) = (read.is_ok(), d.finish()) {
                // Messages are one line of prose: no run of spaces from a broken string
                // continuation (unless the input itself had one to quote).
                for r in &s.diagnostics {
                    assert!(
                        !r.message.contains("   ") || v.windows(3).any(|w| w == b"   "),
                        "{}",
                        r.message
                    );
                }
            }
            runs += 1;
        }
    }
    assert!(runs > 500, "{runs} mutated inputs");
}

fn diag_count(s: &Summary, kind: &str) -> u64 {
    s.diag_counts.get(kind).map_or(0, |c| c.1)
}

#[test]
fn a_name_written_with_two_types_is_a_type_conflict() {
    // Names are unique across types: a second type is reported, the first kept.
    let (s, _) = derive(
        "#entityTypeTable\n#-R Y\n0,Core_0,0,T,Y,0,activate\n1,Core_0,0,T,X,0,activate\n\
         2,Core_0,0,I,X,0,start\n",
    );
    assert_eq!(diag_count(&s, "type_conflict"), 2);
    let ty = |n: &str| {
        let e = s.entities.iter().find(|e| s.names.resolve(e.name) == n).unwrap();
        (e.entity_type.map(|t| s.names.resolve(t).to_string()), e.declared)
    };
    assert_eq!(ty("Y"), (Some("R".into()), true));
    assert_eq!(ty("X"), (Some("T".into()), false));
    // Older files' codes for the same type, and a core first inferred, are no conflict.
    let (s, _) = derive(
        "0,Core_0,0,ISR,Q,0,start\n1,Core_0,0,I,Q,0,terminate\n2,Core,0,Core,Core_0,0,idle\n\
         3,Core_0,0,C,Core_0,0,idle\n4,PE_0,0,T,T1,0,start\n5,PE_0,0,C,PE_0,0,idle\n",
    );
    assert_eq!(diag_count(&s, "type_conflict"), 0);
}

#[test]
fn a_skipped_line_does_not_move_the_clock() {
    let (s, rows) =
        derive("0,S,0,T,A,0,activate\n1000,Core_0,0,T,,0,start\n20,Core_0,0,T,A,0,start\n");
    assert_eq!(diag_count(&s, "malformed_line"), 1);
    assert_eq!(diag_count(&s, "time_backwards"), 0);
    assert!(rows.intervals.contains(&"state A active [0,20) ".to_string()), "{:?}", rows.intervals);
}

#[test]
fn numeric_notes_read_decimal_and_hexadecimal() {
    for (note, want) in [
        ("42", Some(42.0)),
        ("-3.5", Some(-3.5)),
        ("0x1F", Some(31.0)),
        ("0XfF", Some(255.0)),
        ("-0x10", Some(-16.0)),
        ("+0x10", Some(16.0)),
        ("0x", None),
        ("0x+5", None),
        ("0xZZ", None),
        ("create 0x80016ca8", None),
        ("inf", None),
    ] {
        assert_eq!(sink::numeric(Some(note)), want, "{note}");
    }
}

/// The `running` intervals of the cores: who occupied which core when.
fn metric<'a>(rows: &'a Rows, key: &str) -> &'a str {
    rows.metrics.iter().find(|m| m.starts_with(key)).map_or("none", String::as_str)
}

fn occupancy(rows: &Rows) -> Vec<&str> {
    rows.intervals.iter().filter(|i| i.starts_with("running ")).map(String::as_str).collect()
}

#[test]
fn a_bare_cr_inside_an_lf_line_ends_a_record_too() {
    // A CR-ended trace appended to an LF-ended one: the terminate is not a note of the start.
    let (s, rows) =
        derive("0,S,0,T,A,0,activate\n10,C0,0,T,A,0,start\r20,C0,0,T,A,0,terminate\r\n");
    assert_eq!(diag_count(&s, "mixed_line_ends"), 1);
    assert_eq!(s.events, 3);
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
    // The other way round: CR-ended (so read), then LF-ended lines.
    let (s, rows) = derive("0,S,0,T,A,0,activate\r10,C0,0,T,A,0,start\r20,C0,0,T,A,0,terminate\n");
    assert_eq!(diag_count(&s, "mixed_line_ends"), 1);
    assert_eq!(rows.instances, ["A#0 rt=Some(20) net=10 complete=true"]);
}
