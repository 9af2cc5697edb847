//! Reader tests on hand-built streams: every expected value is worked out from the bytes
//! written. This file holds the shared helpers (the event shape, the stream writer [`W`],
//! the runners); each other file tests one subject.
use super::stream::{Endian, StreamReader};
use super::*;
use crate::model::Event;

mod bounds;
mod inputs;
mod models;
mod reading;

/// Events as `ts|target|instance|action|note|value|core`.
struct Ovni;

impl crate::ingest::test_sink::Shape for Ovni {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{}|{}|{}|{}|{}|{:?}|{}",
            e.ts,
            e.target,
            e.target_instance,
            e.action,
            e.note.unwrap_or("-"),
            e.value,
            e.core.unwrap_or("-")
        )
    }
}

type Rec = crate::ingest::test_sink::Recorder<Ovni>;

/// Builds a stream's bytes.
struct W {
    be: bool,
    bytes: Vec<u8>,
}

impl W {
    fn new(be: bool) -> Self {
        let mut bytes = b"ovni".to_vec();
        bytes.extend(if be { [0, 0, 0, 1] } else { [1, 0, 0, 0] });
        W { be, bytes }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u64(&self, v: u64) -> [u8; 8] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn ev(mut self, mcv: &str, clock: u64, payload: &[u8]) -> Self {
        let flags = if payload.is_empty() { 0 } else { (payload.len() - 1) as u8 };
        self.bytes.push(flags);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        self.bytes.extend(payload);
        self
    }
    fn jumbo(mut self, mcv: &str, clock: u64, data: &[u8]) -> Self {
        self.bytes.push(0x10 | 3);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        let n = self.u32(data.len() as u32);
        self.bytes.extend(n);
        self.bytes.extend(data);
        self
    }
    fn ohx(self, clock: u64, cpu: i32) -> Self {
        let mut p = self.u32(cpu as u32).to_vec();
        p.extend(self.u32(u32::MAX));
        p.extend(self.u64(0));
        self.ev("OHx", clock, &p)
    }
    /// A nOS-V task event: task id, then type id or body id.
    fn task(self, mcv: &str, clock: u64, a: u32, b: u32) -> Self {
        let mut p = self.u32(a).to_vec();
        p.extend(self.u32(b));
        self.ev(mcv, clock, &p)
    }
}

fn file(tid: i64) -> StreamFile {
    StreamFile {
        obs: PathBuf::from(format!("/x/ovni/loom.a/proc.1/thread.{tid}/stream.obs")),
        json: Vec::new(),
        relpath: format!("loom.a/proc.1/thread.{tid}"),
        loom: "loom.a".into(),
        pid: 1,
        tid,
        v2: false,
        shown: None,
    }
}

fn run(streams: Vec<(i64, Vec<u8>)>) -> Rec {
    run_with(streams, runtime::Caps::default())
}

/// [`run`] with the runtime models' memory bounds `caps`.
fn run_with(streams: Vec<(i64, Vec<u8>)>, caps: runtime::Caps) -> Rec {
    let mut rec = Rec::default();
    let inputs: Vec<(StreamFile, &[u8])> =
        streams.iter().map(|(t, b)| (file(*t), b.as_slice())).collect();
    read_with(inputs, &mut rec, caps).unwrap();
    // The streams made here have no stream.json: said once each, left out of the checks.
    let missing = rec.diags.iter().filter(|d| d.0 == "missing_metadata").count();
    assert_eq!(missing, streams.len());
    rec.diags.retain(|d| d.0 != "missing_metadata");
    rec
}
