//! Unit tests of the derive stage without storage: rows are rendered as text.
use super::*;
use crate::ingest::lines::LineReader;

#[derive(Default)]
struct Rows {
    intervals: Vec<String>,
    instances: Vec<String>,
    locks: Vec<String>,
    events: usize,
}

impl Output for Rows {
    fn event(&mut self, _: &EventRow<'_>, _: &Interner) -> Result<()> {
        self.events += 1;
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
        }
        Ok(())
    }
    fn instances(&mut self, rows: &[InstanceRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.instances.push(format!(
                "{}#{} rt={:?} net={} complete={}",
                n.resolve(r.entity),
                r.instance,
                r.response_time(),
                r.net_exec,
                r.complete()
            ));
        }
        Ok(())
    }
    fn lock_requests(&mut self, rows: &[LockRow], n: &Interner) -> Result<()> {
        for r in rows {
            self.locks.push(format!("{} {} wait={:?} hold={:?}", n.resolve(r.semaphore), n.resolve(r.process), r.wait(), r.hold()));
        }
        Ok(())
    }
}

fn derive(text: &str) -> (Summary, Rows) {
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    d.finish().unwrap()
}

#[test]
fn simple_life_cycle() {
    let (s, rows) = derive("0,S,0,T,A,0,activate\n5,Core_0,0,T,A,0,start\n9,Core_0,0,T,A,0,terminate\n");
    assert_eq!(s.events, 3);
    assert_eq!(rows.instances, ["A#0 rt=Some(9) net=4 complete=true"]);
    assert_eq!(
        rows.intervals,
        ["state A active [0,5) ", "state A running [5,9) ", "running Core_0 A [5,9) "]
    );
}

#[test]
fn open_states_close_at_the_last_event() {
    let (_, rows) = derive("0,S,0,T,A,0,activate\n5,Core_0,0,T,A,0,start\n7,S,0,STI,S,0,trigger\n");
    assert_eq!(rows.instances, ["A#0 rt=None net=2 complete=false"]);
    assert!(rows.intervals.contains(&"state A running [5,7) open".to_string()));
}

#[test]
fn strict_stops_on_an_invalid_transition() {
    let mut d = Deriver::new(Rows::default(), "t.btf", true);
    let text = "0,S,0,T,A,0,activate\n1,Core_0,0,T,A,0,resume\n";
    let e = crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap_err();
    assert_eq!(e.to_string(), "t.btf: line 2: resume of A instance 0 in state active (expected ready)");
}

#[test]
fn release_without_assign_keeps_a_row() {
    let (s, rows) = derive("0,T1,0,SEM,S,0,released\n");
    assert_eq!(rows.locks, ["S T1 wait=None hold=None"]);
    assert_eq!(s.diag_counts.get("release_without_assign").map(|c| c.1), Some(1));
}

#[test]
fn many_instances_keep_memory_flat() {
    // Terminated instances leave no state behind.
    let mut text = String::new();
    for i in 0..5000 {
        let t = i * 10;
        text.push_str(&format!("{t},S,0,T,A,{i},activate\n{},Core_0,0,T,A,{i},start\n{},Core_0,0,T,A,{i},terminate\n", t + 1, t + 5));
    }
    let mut d = Deriver::new(Rows::default(), "t.btf", false);
    crate::ingest::btf::read(&mut LineReader::new(text.as_bytes()), "t.btf", &mut d).unwrap();
    assert!(d.procs.is_empty());
    let (_, rows) = d.finish().unwrap();
    assert_eq!(rows.instances.len(), 5000);
}
