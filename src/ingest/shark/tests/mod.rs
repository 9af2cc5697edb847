//! Unit tests: the record reader, detection and the mapping to BTF-shaped events, on
//! hand-built records whose expected values are worked out by hand. This file holds the
//! shared helpers (the event shape, records, datagrams, the runners); each other file tests
//! one subject.
use super::record::{name, Form, Item, Reader, Rec, MAGIC};
use super::*;
use crate::model::{Event, TimeUnit};

mod bounds;
mod clock;
mod detection;
mod locks;
mod records;
mod reports;
mod tasks;

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
