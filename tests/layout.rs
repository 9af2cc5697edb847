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

/// The README's "Bad input" table lists every diagnostic kind the code writes (every
/// importer under src/ingest and the derive stage), and every kind it lists is written
/// somewhere: no kind goes undocumented, and no row outlives the code that wrote it.
#[test]
fn readme_diagnostics_table_matches_the_kinds_the_code_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let written = diagnostic_kinds_written(&[root.join("src/ingest"), root.join("src/derive")]);
    // Every format's importer is covered (each writes kinds of its own).
    assert!(written.len() > 100, "{written:?}");
    for k in ["malformed_line", "malformed_record", "frame_too_long", "bad_row"] {
        assert!(
            written.contains(k),
            "{k} not found: the scan below misses a way kinds are written"
        );
    }
    for k in ["clock_backwards", "numevents_mismatch", "missing_type", "core_conflict"] {
        assert!(
            written.contains(k),
            "{k} not found: the scan below misses a way kinds are written"
        );
    }
    let section = readme.split("\n## Bad input\n").nth(1).expect("README has a Bad input section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let listed: std::collections::BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(k, _)| k))
        .collect();
    let undocumented: Vec<&String> =
        written.iter().filter(|k| !listed.contains(k.as_str())).collect();
    assert!(undocumented.is_empty(), "README's diagnostics table lacks {undocumented:?}");
    let stale: Vec<&&str> = listed.iter().filter(|k| !written.contains(**k)).collect();
    assert!(stale.is_empty(), "README's diagnostics table lists kinds no code writes: {stale:?}");
}

/// The diagnostic kinds written by the non-test sources under `dirs`: the string right after
/// `kind:`, `Severity::X,`, `(sink,` (`warn(sink, "x", ...)`) or `(severity,`
/// (`self.diag(severity, "x", ...)`).
fn diagnostic_kinds_written(dirs: &[std::path::PathBuf]) -> std::collections::BTreeSet<String> {
    let mut kinds = std::collections::BTreeSet::new();
    let mut dirs = dirs.to_vec();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if !name.ends_with(".rs")
                || ["tests.rs", "test_sink.rs", "testelf.rs"].contains(&&*name)
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("\n#[cfg(test)]\nmod tests {").next().unwrap_or(&text);
            let parts: Vec<&str> = code.split('"').collect();
            for w in parts.windows(2) {
                let (tail, inside) = (w[0].trim_end(), w[1]);
                let is_kind = !inside.is_empty()
                    && inside
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                let arg = tail.strip_suffix(',').map(str::trim_end).is_some_and(|t| {
                    t.ends_with("(sink")
                        || t.ends_with("(severity")
                        || t.rsplit_once("Severity::").is_some_and(|(_, s)| {
                            !s.is_empty() && s.chars().all(char::is_alphanumeric)
                        })
                });
                if is_kind && (tail.ends_with("kind:") || arg) {
                    kinds.insert(inside.to_string());
                }
            }
        }
    }
    kinds
}
