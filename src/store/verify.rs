//! `tracedb verify`: every file the manifest lists is present, has its recorded size and
//! SHA-256, and has a readable Parquet footer whose row count matches the manifest.
use super::Archive;
use std::path::Path;

/// Hex SHA-256 of a file's bytes.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    crate::ingest::input::file_digest(path).map(|d| d.sha256)
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Capture the file belongs to.
    pub capture_id: i64,
    /// File, relative to the archive.
    pub path: String,
    /// missing, truncated, altered, unreadable.
    pub kind: &'static str,
    /// Details.
    pub detail: String,
}

/// Checks every file of every capture; returns the files checked and the problems.
pub fn verify(archive: &Archive) -> (usize, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut checked = 0;
    let tables = super::schema::tables();
    for c in &archive.manifest.captures {
        // Every capture has a file of every table (empty ones too): a table missing from its
        // entry would drop its rows from every query without a word.
        for t in tables.iter().filter(|t| !c.files.contains_key(&t.name)) {
            problems.push(Problem {
                capture_id: c.capture_id,
                path: format!("{}/capture_id={}/", t.name, c.capture_id),
                kind: "missing",
                detail: format!("the manifest lists no {} file for this capture", t.name),
            });
        }
        for s in &c.sources {
            checked += 1;
            let path = archive.dir.join(&s.path);
            let found = std::fs::metadata(&path).map(|m| m.len());
            let (kind, detail) = match found {
                Err(e) => ("missing", e.to_string()),
                Ok(n) if n < s.bytes => {
                    ("truncated", format!("{n} bytes, the manifest says {}", s.bytes))
                }
                Ok(_) => match file_sha256(&path) {
                    Ok(h) if h == s.sha256 => continue,
                    Ok(h) => ("altered", format!("SHA-256 {h}, the manifest says {}", s.sha256)),
                    Err(e) => ("unreadable", e.to_string()),
                },
            };
            problems.push(Problem { capture_id: c.capture_id, path: s.path.clone(), kind, detail });
        }
        for f in c.files.values() {
            checked += 1;
            let path = archive.dir.join(&f.path);
            let mut problem = |kind, detail: String| {
                problems.push(Problem {
                    capture_id: c.capture_id,
                    path: f.path.clone(),
                    kind,
                    detail,
                });
            };
            let size = match std::fs::metadata(&path) {
                Ok(m) => m.len(),
                Err(e) => {
                    problem("missing", e.to_string());
                    continue;
                }
            };
            if size < f.bytes {
                problem("truncated", format!("{size} bytes, the manifest says {}", f.bytes));
                continue;
            }
            match file_sha256(&path) {
                Ok(h) if !f.sha256.is_empty() && h != f.sha256 => {
                    problem("altered", format!("SHA-256 {h}, the manifest says {}", f.sha256));
                    continue;
                }
                Ok(_) if size != f.bytes => {
                    problem("altered", format!("{size} bytes, the manifest says {}", f.bytes));
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    problem("unreadable", e.to_string());
                    continue;
                }
            }
            let footer = std::fs::File::open(&path).map_err(|e| e.to_string()).and_then(|file| {
                parquet::file::reader::SerializedFileReader::new(file).map_err(|e| e.to_string())
            });
            match footer {
                Ok(r) => {
                    use parquet::file::reader::FileReader;
                    let rows = r.metadata().file_metadata().num_rows();
                    if u64::try_from(rows).ok() != Some(f.rows) {
                        problem(
                            "altered",
                            format!("the Parquet footer says {rows} rows, the manifest {}", f.rows),
                        );
                    }
                }
                Err(e) => problem("unreadable", format!("Parquet footer: {e}")),
            }
        }
    }
    (checked, problems)
}
