//! Golden tests: each directory tests/golden/<format>/<case>/ holds `input.*`, `query.sql`
//! and `expected.csv`. The input is ingested into a fresh archive, the query is run with
//! `--format csv`, and the output must equal expected.csv exactly. `UPDATE_GOLDEN=1`
//! rewrites the expected files (review the diff!). Companion files (`input.pcf`,
//! `input.row` beside an `input.prv`) are copied but not named on the command line: the
//! importer finds them beside the trace.
use crate::util;
use std::path::Path;

#[test]
fn golden_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    for format_dir in dirs {
        let mut case_dirs: Vec<_> =
            std::fs::read_dir(&format_dir).unwrap().flatten().map(|e| e.path()).collect();
        case_dirs.sort();
        for case in case_dirs {
            cases += 1;
            let tmp = tempfile::tempdir().unwrap();
            let mut inputs = Vec::new();
            for entry in std::fs::read_dir(&case).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("input") {
                    std::fs::copy(entry.path(), tmp.path().join(&name)).unwrap();
                    if !(name.ends_with(".pcf") || name.ends_with(".row")) {
                        inputs.push(name);
                    }
                }
            }
            inputs.sort();
            let mut args = vec!["ingest", "--archive", "db"];
            args.extend(inputs.iter().map(String::as_str));
            let ingest = util::run(tmp.path(), &args);
            let got = if ingest.status.success() {
                std::fs::copy(case.join("query.sql"), tmp.path().join("query.sql")).unwrap();
                let out = util::run(
                    tmp.path(),
                    &["sql", "--archive", "db", "--format", "csv", "-f", "query.sql"],
                );
                let mut text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
                if !out.status.success() {
                    text.push_str(&format!("ERROR: {}", String::from_utf8_lossy(&out.stderr)));
                }
                text
            } else {
                format!("INGEST ERROR: {}", String::from_utf8_lossy(&ingest.stderr))
            };
            let expected_path = case.join("expected.csv");
            if update {
                std::fs::write(&expected_path, &got).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
            if got != expected {
                failures.push(format!("{}:\n{}", case.display(), diff(&expected, &got)));
            }
        }
    }
    assert!(cases >= 8, "expected the golden cases, found {cases}");
    assert!(
        failures.is_empty(),
        "{} golden case(s) differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Line diff good enough to read a failure.
fn diff(expected: &str, got: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let mut out = String::new();
    for i in 0..e.len().max(g.len()) {
        match (e.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => out.push_str(&format!("   {a}\n")),
            (a, b) => {
                if let Some(a) = a {
                    out.push_str(&format!(" - {a}\n"));
                }
                if let Some(b) = b {
                    out.push_str(&format!(" + {b}\n"));
                }
            }
        }
    }
    out
}
