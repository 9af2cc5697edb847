//! Tests of detection and of chunk files: the evidence detection wants, how chunk files
//! are named and which run a chunk file belongs to.
use super::*;

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
