//! Tests of the ingest as a whole: what an ingest that fails leaves in the archive.
use super::*;

#[test]
fn a_trace_that_grows_while_it_is_ingested_is_refused_and_nothing_stays() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.btf");
    std::fs::write(&trace, "#timeScale ns\n0,S,-1,T,A,0,activate\n").unwrap();
    let (mut archive, _lock) = Archive::open_for_write(&dir.path().join("db")).unwrap();
    let opts = IngestOptions { keep_source: true, ..Default::default() };
    // The writer of the trace appends a line while tracedb is still at it.
    let mut grown = false;
    let mut grow = |read: u64, size: u64| {
        if read == size && !std::mem::replace(&mut grown, true) {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(&trace).unwrap();
            f.write_all(b"5,Core_0,0,T,A,0,start\n").unwrap();
        }
    };
    let e = ingest_files(&mut archive, std::slice::from_ref(&trace), "t", &opts, &mut grow)
        .unwrap_err()
        .to_string();
    assert!(
            e.contains("the file changed while it was being ingested (36 bytes when it was opened, 36 read, 59 now)"),
            "{e}"
        );
    assert!(super::super::Manifest::load(&archive.dir).unwrap().captures.is_empty());
    assert!(!archive.dir.join("sources/capture_id=1").exists());
    assert!(!archive.dir.join("events/capture_id=1").exists());
}

#[test]
fn a_companion_changed_after_it_was_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (prv, pcf) = (dir.path().join("t.prv"), dir.path().join("t.pcf"));
    std::fs::write(&prv, "#Paraver (01/01/2024 at 00:00):100_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:40:1\n")
        .unwrap();
    std::fs::write(&pcf, "STATES\n1\tRunning\n").unwrap();
    let (mut archive, _lock) = Archive::open_for_write(&dir.path().join("db")).unwrap();
    // Its names are in the tables by the time the trace has been read; then it changes.
    let mut edited = false;
    let mut edit = |read: u64, size: u64| {
        if read == size && !std::mem::replace(&mut edited, true) {
            std::fs::write(&pcf, "STATES\n1\tRunnin!\n").unwrap();
        }
    };
    let opts = IngestOptions { keep_source: true, ..Default::default() };
    let e = ingest_files(&mut archive, std::slice::from_ref(&prv), "t", &opts, &mut edit)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.pcf: the file changed while it was being ingested"), "{e}");
    assert!(super::super::Manifest::load(&archive.dir).unwrap().captures.is_empty());
}

#[test]
fn what_a_stopped_write_put_in_place_is_taken_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (archive, lock) = Archive::open_for_write(&db).unwrap();
    for f in ["sources/capture_id=7/t.btf.zst", "events/capture_id=7/part-0.parquet"] {
        std::fs::create_dir_all(db.join(f).parent().unwrap()).unwrap();
        std::fs::write(db.join(f), "x").unwrap();
    }
    archive.remove_never_listed(7, None).unwrap();
    assert!(!db.join("sources/capture_id=7").exists() && !db.join("events/capture_id=7").exists());
    // A rebuild's own generation only.
    for f in ["events/capture_id=8/part-0.parquet", "events/capture_id=8/part-1.parquet"] {
        std::fs::create_dir_all(db.join(f).parent().unwrap()).unwrap();
        std::fs::write(db.join(f), "x").unwrap();
    }
    archive.remove_never_listed(8, Some(1)).unwrap();
    assert!(db.join("events/capture_id=8/part-0.parquet").exists());
    assert!(!db.join("events/capture_id=8/part-1.parquet").exists());
    // The next writer removes a manifest a killed writer was writing.
    std::fs::write(db.join(".manifest.json.99999.tmp"), "{").unwrap();
    drop((archive, lock));
    let _reopened = Archive::open_for_write(&db).unwrap();
    assert!(!db.join(".manifest.json.99999.tmp").exists());
}
