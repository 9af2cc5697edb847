//! House rules checked on the source tree.
use std::path::Path;

#[test]
fn importers_and_model_know_nothing_of_storage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for dir in ["ingest", "model"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains("duckdb"), "{} mentions duckdb", entry.path().display());
            assert!(!text.contains("parquet::"), "{} mentions parquet", entry.path().display());
        }
    }
}

#[test]
fn readme_documents_every_table() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for t in ["captures", "entities", "events", "intervals", "instances", "lock_requests", "messages", "deadlines", "diagnostics"] {
        assert!(readme.contains(&format!("### `{t}`")), "README has no section for table {t}");
    }
}
