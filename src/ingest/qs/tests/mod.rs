//! Importer tests on hand-built byte streams: every expected value below is worked out by
//! hand from the bytes written. This file holds the shared helpers (the event shape, the
//! record generator, a small capture, the runners); each other file tests one subject.
use super::frame::encode;
use super::*;
use crate::model::{Event, TimeUnit};

mod bounds;
mod capture;
mod dictionaries;
mod nesting;
mod qspy;

/// Events as `ts|source|type:target|action|note|value`.
struct Qs;

impl crate::ingest::test_sink::Shape for Qs {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{}|{}|{}:{}|{}|{}|{:?}",
            e.ts,
            e.source,
            e.target_type,
            e.target,
            e.action,
            e.note.unwrap_or("-"),
            e.value
        )
    }
}

type Rec = crate::ingest::test_sink::Recorder<Qs>;

/// Writes records as a QP 6.9.4 target with 16-bit timestamps would.
struct Gen {
    seq: u8,
    out: Vec<u8>,
}

impl Gen {
    fn new() -> Self {
        Gen { seq: 0, out: Vec::new() }
    }
    fn rec(&mut self, id: u8, payload: &[u8]) -> &mut Self {
        self.seq = self.seq.wrapping_add(1);
        let mut b = vec![self.seq, id];
        b.extend(payload);
        self.out.extend(encode(&b));
        self
    }
    fn target_info(&mut self) -> &mut Self {
        self.target_info_of(694)
    }
    fn target_info_of(&mut self, version: u16) -> &mut Self {
        // reset, QP `version`; sig 2 / evt 2, queue 1 / tevt 2, blk 2 / pool ctr 2, obj 4 /
        // fun 4, tstamp 2; max active 8, ...; built 24-01-01 00:00:00.
        let [lo, hi] = version.to_le_bytes();
        self.rec(64, &[0xFF, lo, hi, 0x22, 0x21, 0x22, 0x44, 0x02, 8, 0x21, 0, 0, 0, 1, 1, 24])
    }
}

const SM: [u8; 4] = 0x7E7D_0010u32.to_le_bytes();
const S_A: [u8; 4] = 0x2000_007Eu32.to_le_bytes();
const S_B: [u8; 4] = 0x2000_007Du32.to_le_bytes();
const SIG: [u8; 2] = 126u16.to_le_bytes();

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn stream() -> Vec<u8> {
    let mut g = Gen::new();
    g.target_info();
    g.rec(61, &cat(&[&SM, b"&sm\0"]));
    g.rec(62, &cat(&[&S_A, b"S_a\0"]));
    g.rec(62, &cat(&[&S_B, b"S_b\0"]));
    g.rec(60, &cat(&[&SIG, &[0, 0, 0, 0], b"SIG_7E\0"]));
    g.rec(4, &cat(&[&[0x7D, 0x00], &SM, &S_A])); // t=125: init to S_a
    g.rec(6, &cat(&[&[0xF0, 0xFF], &SIG, &SM, &S_A, &S_B])); // t=65520: S_a -> S_b
    g.rec(8, &cat(&[&[0x10, 0x00], &SIG, &SM, &S_B])); // t=16: wrapped, 65552
                                                       // A record whose checksum is wrong (seq 9), then seq 11: one record lost.
    let mut bad = encode(&[9, 8, 1, 2, 3]);
    bad[2] ^= 0x01;
    g.out.extend(bad);
    g.seq = 10;
    g.rec(41, &[0x20, 0x00, 1, 5]); // ISR prio 5 enters at 65568
    g.rec(41, &[0x30, 0x00, 2, 7]); // prio 7 nests at 65584
    g.rec(42, &[0x40, 0x00, 2, 7]); // and leaves at 65600
    g.rec(42, &[0x50, 0x00, 1, 5]); // prio 5 leaves at 65616
    g.rec(14, &cat(&[&[0x60, 0], &[0; 4], &SIG, &SM, &[0, 0, 5, 4]])); // post at 65632
    g.rec(17, &cat(&[&[0x70, 0], &SIG, &SM, &[0, 0]])); // got at 65648
    g.rec(14, &cat(&[&[0x80, 0], &[0; 4], &SIG, &SM, &[0, 0, 5, 4]])); // post at 65664, never got
    g.rec(8, &[0x88, 0, 126, 0]); // dispatch cut after its signal: t 65672
    g.rec(90, &[1, 2]); // reserved in 6.9
    g.rec(63, b"\x64MY_REC\0");
    g.rec(100, &[0x90, 0, 0x01, 7, 0x08, b'x', 0]); // MY_REC(U8 7, STR "x") at 65680
    g.rec(101, &[0xA0, 0, 0x02, 0xFE, 0xFF]); // USER_101(I16 -2) at 65696
    g.seq = 0;
    g.target_info(); // reset: the dictionaries start over
    g.rec(1, &cat(&[&SM, &S_A])); // names unknown now
    g.out
}

fn run(bytes: &[u8], opts: &QsOptions) -> Rec {
    let mut sink = Rec::default();
    read(bytes, "t.bin", opts, &Companion::default(), &mut sink).unwrap();
    sink
}

fn diags_of<'a>(r: &'a Rec, kind: &str) -> Vec<&'a str> {
    r.diags.iter().filter(|d| d.0 == kind).map(|d| d.1.as_str()).collect()
}
