//! Tests of the record reader (`record.rs`): records as the digest says, empty slots, cut
//! records, UDP datagrams with their gaps, damage, counts and wrapped chunks.
use super::*;

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
