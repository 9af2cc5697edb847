//! Tests of the files read: headers that are not streams, metadata comments, the paths of
//! both layouts.
use super::*;

#[test]
fn headers_that_are_not_streams_are_errors_naming_the_file() {
    let mut rec = Rec::default();
    let bad = b"ovni\x02\0\0\0".to_vec();
    let e = read(vec![(file(1), bad.as_slice())], &mut rec).unwrap_err().to_string();
    assert!(e.contains("thread.1/stream.obs") && e.contains("only version 1"), "{e}");
}

#[test]
fn comments_are_allowed_in_metadata() {
    let mut m = meta::Meta::default();
    m.merge_json(
        "{ // c\n \"ovni\": { \"app_id\": 3, /* x */ \"loom_cpus\": [{\"index\": 0, \"phyid\": 4}],\n \"mark\": {\"1\": {\"title\": \"A//B\", \"chan_type\": \"stack\", \"labels\": {\"2\": \"two\"}}} } }",
        "s.json",
    );
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    assert_eq!(m.app_id, Some(3));
    assert_eq!(m.loom_cpus, [(0, 4)]);
    assert_eq!(m.marks[&1].title, "A//B");
    assert_eq!(m.marks[&1].labels[&2], "two");
}

#[test]
fn stream_paths_of_both_layouts() {
    let d = tempfile::tempdir().unwrap();
    let v3 = d.path().join("loom.h/proc.5/thread.6");
    std::fs::create_dir_all(&v3).unwrap();
    std::fs::write(v3.join("stream.obs"), b"ovni\x01\0\0\0").unwrap();
    std::fs::write(v3.join("stream.json"), b"{}").unwrap();
    let v2 = d.path().join("loom.h/proc.7");
    std::fs::create_dir_all(&v2).unwrap();
    std::fs::write(v2.join("thread.8.obs"), b"ovni\x01\0\0\0").unwrap();
    std::fs::write(v2.join("metadata.json"), b"{}").unwrap();
    let s = find_streams(d.path());
    let rel: Vec<_> = s.iter().map(|s| (s.relpath.as_str(), s.v2, s.json.len())).collect();
    assert_eq!(rel, [("loom.h/proc.5/thread.6", false, 1), ("loom.h/proc.7/thread.8", true, 1)]);
}
