//! House rules checked on the source tree.
use std::path::Path;

#[test]
fn importers_and_model_know_nothing_of_storage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Importers may live in subdirectories (src/ingest/prv/): walk them all.
    let mut dirs = vec![root.join("ingest"), root.join("model")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains("duckdb"), "{} mentions duckdb", entry.path().display());
            assert!(!text.contains("parquet::"), "{} mentions parquet", entry.path().display());
        }
    }
}

#[test]
fn readme_documents_every_table() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    // Every table of schema/ (which a unit test checks against DESIGN.md's list).
    for t in tracedb::store::schema::tables().iter().map(|t| t.name.as_str()) {
        assert!(readme.contains(&format!("### `{t}`")), "README has no section for table {t}");
    }
}

#[test]
fn readme_documents_every_analysis() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("### ")).collect();
    for q in tracedb::store::queries::catalog() {
        let name = format!("`{}`", q.name);
        assert!(
            headings.iter().any(|h| h.contains(&name)),
            "README has no section heading naming {}",
            q.name
        );
    }
}

#[test]
fn every_query_file_is_embedded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let embedded: Vec<&str> = tracedb::store::queries::FILES.iter().map(|(f, _)| *f).collect();
    for area in std::fs::read_dir(&root).unwrap().flatten() {
        for f in std::fs::read_dir(area.path()).unwrap().flatten() {
            let rel = format!(
                "{}/{}",
                area.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            );
            assert!(
                embedded.contains(&rel.as_str()),
                "queries/{rel} is not listed in store::queries::FILES"
            );
        }
    }
}

#[test]
fn readme_documents_every_qs_diagnostic() {
    readme_documents_every_diagnostic_of("src/ingest/qs", 10);
}

#[test]
fn readme_documents_every_shark_diagnostic() {
    readme_documents_every_diagnostic_of("src/ingest/shark", 10);
}

#[test]
fn readme_documents_every_hw_diagnostic() {
    readme_documents_every_diagnostic_of("src/ingest/hw", 15);
}

/// Every diagnostic kind the importer in `dir` writes has a row in the README's table.
fn readme_documents_every_diagnostic_of(dir: &str, at_least: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut kinds = Vec::new();
    for f in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
        let text = std::fs::read_to_string(f.path()).unwrap();
        // `kind: "x"` and `Severity::Y, "x"`: the string right after either.
        let parts: Vec<&str> = text.split('"').collect();
        for w in parts.windows(2) {
            let (before, inside) = (w[0], w[1]);
            let tail = before.trim_end();
            let sev = tail.strip_suffix(',').and_then(|t| t.rsplit_once("Severity::"));
            let by_sev = sev.is_some_and(|(_, s)| s.chars().all(char::is_alphanumeric));
            let named = inside.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            if named && !inside.is_empty() && (tail.ends_with("kind:") || by_sev) {
                kinds.push(inside.to_string());
            }
        }
    }
    assert!(kinds.len() > at_least, "{kinds:?}");
    for k in kinds {
        assert!(readme.contains(&format!("| `{k}` |")), "README's diagnostics table lacks {k}");
    }
}
