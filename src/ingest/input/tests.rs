use super::*;

/// Text of `lines` numbered lines, which compresses to many blocks at level 1.
fn text(lines: u64) -> Vec<u8> {
    let mut t = Vec::new();
    for i in 0..lines {
        // A little noise so blocks are not trivially small.
        t.extend_from_slice(format!("{i},{},line {}\n", i * 7919 % 10007, i ^ 0x5a5a).as_bytes());
    }
    t
}

/// Everything `Input` yields for the bytes `file`, and the error that ended it, if any.
fn decode(file: &[u8]) -> (Vec<u8>, Option<io::Error>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.bin");
    std::fs::write(&path, file).unwrap();
    let mut input = Input::open(&path).unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 100_000];
    let err = loop {
        match input.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => break Some(e),
        }
    };
    let digest = input.finish().unwrap();
    assert_eq!(digest.bytes, file.len() as u64, "the whole file is hashed");
    (out, err)
}

/// Offsets of the block headers of the single zstd frame `file`.
fn block_headers(file: &[u8]) -> Vec<usize> {
    let fhd = file[4];
    let single_segment = fhd & 0x20 != 0;
    let fcs = match fhd >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
    let mut at = 5 + usize::from(!single_segment) + dict + fcs;
    let mut headers = Vec::new();
    loop {
        headers.push(at);
        let h = u32::from_le_bytes([file[at], file[at + 1], file[at + 2], 0]);
        let size = if (h >> 1) & 3 == 1 { 1 } else { (h >> 3) as usize }; // RLE: one byte
        at += 3 + size;
        if h & 1 == 1 {
            return headers;
        }
    }
}

#[test]
fn zstd_frames_are_decoded_whole_and_in_order() {
    let a = text(200_000);
    let b = text(1_000);
    let mut file = zstd::encode_all(&a[..], 1).unwrap();
    file.extend(zstd::encode_all(&b[..], 1).unwrap());
    let (out, err) = decode(&file);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(out.len(), a.len() + b.len());
    assert!(out[..a.len()] == a[..] && out[a.len()..] == b[..]);
}

#[test]
fn damaged_zstd_keeps_every_block_before_the_damage() {
    for lines in [30_000, 400_000] {
        damaged_zstd_keeps_blocks(lines);
    }
}

fn damaged_zstd_keeps_blocks(lines: u64) {
    let plain = text(lines); // 128 KiB blocks: 6 of them, then 80
    let mut file = zstd::encode_all(&plain[..], 1).unwrap();
    // Damage at the end, so all blocks but one come before it: the last block header
    // gets the reserved block type.
    let headers = block_headers(&file);
    let damaged = headers.len() - 1;
    file[headers[damaged]] |= 0b110;
    let (out, err) = decode(&file);
    let err = err.expect("the damage is reported");
    assert!(err.to_string().contains("zstd stream is corrupt"), "{err}");
    assert!(plain.starts_with(&out), "what is decoded is the text as it was");
    // Every block before the damaged one is kept (each holds 128 KiB of text). The zstd
    // reader used before lost all the blocks decoded in the call that met the damage:
    // several here, and the whole file when it is small.
    assert_eq!(out.len(), damaged * (128 << 10), "{damaged} whole blocks before the damage");
}

#[test]
fn truncated_zstd_keeps_what_decodes_and_says_truncated() {
    let plain = text(100_000);
    let file = zstd::encode_all(&plain[..], 1).unwrap();
    let cut = &file[..file.len() / 2];
    let (out, err) = decode(cut);
    let err = err.expect("the truncation is reported");
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    assert!(err.to_string().contains("ends early"), "{err}");
    assert!(plain.starts_with(&out));
    assert!(out.len() > plain.len() / 3, "{} of {}", out.len(), plain.len());
}

#[test]
fn an_input_dropped_after_a_peek_stops_reading_the_file() {
    // A format check peeks at the first bytes and drops the input: its reading thread
    // read and hashed the whole file anyway, a second pass over the trace per ingest.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.btf");
    let size = 64u64 << 20;
    std::fs::write(&path, text(size / 32)).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let mut input = Input::open(&path).unwrap();
    assert!(!input.peek(8).unwrap().is_empty());
    let read = input.raw_read.clone();
    drop(input);
    // The thread holds the other reference to the counter until it ends.
    let waited = std::time::Instant::now();
    while Arc::strong_count(&read) > 1 && waited.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(Arc::strong_count(&read), 1, "the reading thread did not end");
    let n = read.load(Ordering::Relaxed);
    assert!(n < size / 4, "{n} of {size} bytes read after the input was dropped");
    // Read to its end, an input still hashes every byte.
    let mut input = Input::open(&path).unwrap();
    io::copy(&mut input, &mut io::sink()).unwrap();
    assert_eq!(input.finish().unwrap(), file_digest(&path).unwrap());
}

#[test]
fn a_small_input_reads_and_hashes_as_input_does() {
    let plain = text(50_000);
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &plain).unwrap();
        e.finish().unwrap()
    };
    let zst = zstd::encode_all(plain.as_slice(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("p", &plain), ("g", &gz), ("z", &zst)] {
        let path = dir.path().join(name);
        // Trailing bytes after a compressed stream are hashed too.
        let mut file = bytes.clone();
        file.extend_from_slice(b"\0\0");
        std::fs::write(&path, if name == "p" { bytes } else { &file }).unwrap();
        let mut small = SmallInput::open(&path).unwrap();
        let mut out = Vec::new();
        // A few bytes at a time, as the ovni stream reader asks.
        let mut buf = [0u8; 12];
        loop {
            match small.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => {
                    assert!(name != "p", "{e}");
                    break;
                }
            }
        }
        assert_eq!(out.len(), plain.len(), "{name}");
        assert!(out == plain, "{name}");
        let d = small.finish().unwrap();
        assert_eq!(d, file_digest(&path).unwrap(), "{name}");
    }
}

#[test]
fn bzip2_and_xz_streams_are_decoded_whole_and_their_damage_said() {
    use std::io::Write;
    let a = text(60_000);
    let b = text(500);
    let bz = |t: &[u8]| {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        e.write_all(t).unwrap();
        e.finish().unwrap()
    };
    let xz = |t: &[u8]| {
        let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
        e.write_all(t).unwrap();
        e.finish().unwrap()
    };
    for (name, enc) in [("bzip2", &bz as &dyn Fn(&[u8]) -> Vec<u8>), ("xz", &xz)] {
        // Two streams one after the other, as `cat a.bz2 b.bz2` makes.
        let mut file = enc(&a);
        file.extend(enc(&b));
        assert_eq!(Compression::sniff(&file).name(), name);
        let (out, err) = decode(&file);
        assert!(err.is_none(), "{name}: {err:?}");
        assert!(out.len() == a.len() + b.len() && out[..a.len()] == a[..], "{name}");
        // Read the small way too, with the same hash.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, &file).unwrap();
        let mut small = SmallInput::open(&path).unwrap();
        let mut got = Vec::new();
        small.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), out.len(), "{name}");
        assert_eq!(small.finish().unwrap(), file_digest(&path).unwrap(), "{name}");
        // Cut short: what decodes is kept and the error says the stream ends early.
        let (out, err) = decode(&file[..file.len() - 40]);
        let err = err.unwrap_or_else(|| panic!("{name}: a cut stream must be said"));
        assert!(err.to_string().starts_with(name), "{err}");
        assert!(a.starts_with(&out[..out.len().min(a.len())]), "{name}");
    }
}

#[test]
fn compressed_endings_are_stripped_once_in_any_case() {
    assert_eq!(strip_compressed("t.prv.XZ"), "t.prv");
    assert_eq!(strip_compressed("t.btf.bz2"), "t.btf");
    assert_eq!(strip_compressed("t.zip"), "t");
    assert_eq!(strip_compressed("t.gz.zst"), "t.gz");
    assert_eq!(strip_compressed("t.btf"), "t.btf");
    assert_eq!(Compression::sniff(b"BZh9"), Compression::Bzip2);
    assert_eq!(Compression::sniff(b"BZhx"), Compression::None, "plain text may start so");
    assert_eq!(Compression::sniff(b"PK\x03\x04"), Compression::Zip);
}
