//! Reader tests on hand-built streams: every expected value is worked out from the bytes
//! written. This file holds the shared helpers (the event shape, the stream writer [`W`] (in `writer.rs`, which the
//! integration tests include too),
//! the runners); each other file tests one subject.
use super::stream::{Endian, StreamReader};
use super::*;
use crate::model::Event;

mod bounds;
mod inputs;
mod models;
mod reading;
mod writer;

use writer::W;

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
