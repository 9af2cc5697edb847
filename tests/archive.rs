//! Archive integrity: verify (altered, truncated, missing files) and rm.
use crate::util::{csv, ok, run, scalar};
use std::path::Path;

const TRACE: &str = "#version 2.1.0\n0,S,0,T,A,0,activate\n10,Core_0,0,T,A,0,start\n30,Core_0,0,T,A,0,terminate\n";

fn archive_with_two(dir: &Path) {
    std::fs::write(dir.join("one.btf"), TRACE).unwrap();
    std::fs::write(dir.join("two.btf"), TRACE.replace("30,", "40,")).unwrap();
    ok(dir, &["ingest", "--archive", "db", "one.btf", "two.btf"]);
}

fn verify(dir: &Path) -> (Option<i32>, String) {
    let out = run(dir, &["verify", "--archive", "db"]);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn verify_names_altered_truncated_and_missing_files() {
    let tmp = tempfile::tempdir().unwrap();
    archive_with_two(tmp.path());
    assert!(ok(tmp.path(), &["verify", "--archive", "db"]).starts_with("ok: 2 captures, 18 files checked"));

    // One byte changed in the middle of a file: same size, different hash.
    let events = tmp.path().join("db/events/capture_id=1/part-0.parquet");
    let mut bytes = std::fs::read(&events).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&events, &bytes).unwrap();
    let (code, msg) = verify(tmp.path());
    assert_eq!(code, Some(1));
    assert!(msg.contains("capture 1: events/capture_id=1/part-0.parquet: altered"), "{msg}");

    // A truncated file and a missing one are named too.
    let intervals = tmp.path().join("db/intervals/capture_id=2/part-0.parquet");
    let len = std::fs::metadata(&intervals).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&intervals).unwrap().set_len(len / 2).unwrap();
    std::fs::remove_file(tmp.path().join("db/instances/capture_id=2/part-0.parquet")).unwrap();
    let (code, msg) = verify(tmp.path());
    assert_eq!(code, Some(1));
    assert!(msg.contains("intervals/capture_id=2/part-0.parquet: truncated"), "{msg}");
    assert!(msg.contains("instances/capture_id=2/part-0.parquet: missing"), "{msg}");
    assert!(msg.contains("3 of 18 files damaged"), "{msg}");
}

#[test]
fn rm_removes_one_capture_and_leaves_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    archive_with_two(tmp.path());
    let out = run(tmp.path(), &["rm", "--archive", "db", "one"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed capture 1 'one' (3 events)"));
    assert_eq!(csv(tmp.path(), "db", "SELECT capture_id, name FROM captures"), "capture_id,name\n2,two\n");
    assert_eq!(scalar(tmp.path(), "db", "SELECT count(*) FROM events"), "3");
    assert!(!tmp.path().join("db/events/capture_id=1").exists(), "files removed");
    assert!(ok(tmp.path(), &["verify", "--archive", "db"]).starts_with("ok: 1 captures, 9 files checked"));
    // Ids are not reused: the next capture is 3.
    ok(tmp.path(), &["ingest", "--archive", "db", "one.btf"]);
    assert_eq!(scalar(tmp.path(), "db", "SELECT max(capture_id) FROM captures"), "3");
    assert_eq!(run(tmp.path(), &["rm", "--archive", "db", "nothing"]).status.code(), Some(1));
    assert_eq!(run(tmp.path(), &["rm", "--archive", "nowhere.tdb", "1"]).status.code(), Some(1));
    assert!(!tmp.path().join("nowhere.tdb").exists(), "rm does not create archives");
}
