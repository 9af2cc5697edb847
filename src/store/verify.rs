//! `tracedb verify`: every file the manifest lists is present, has its recorded size and
//! SHA-256, and has a readable Parquet footer whose row count matches the manifest; and no
//! file the manifest does not list lies among them, where engines that read the directories
//! whole would read it.
use super::Archive;
use std::path::Path;

/// Hex SHA-256 of a file's bytes.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    crate::ingest::input::file_digest(path).map(|d| d.sha256)
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Capture the file belongs to (`None`: a file no capture lists).
    pub capture_id: Option<i64>,
    /// File, relative to the archive.
    pub path: String,
    /// missing, truncated, altered, unreadable, unlisted.
    pub kind: &'static str,
    /// Details.
    pub detail: String,
}

/// Checks every file of every capture; returns the files checked and the problems.
pub fn verify(archive: &Archive) -> (usize, Vec<Problem>) {
    let writing = super::writer_running(&archive.dir);
    let mut problems = Vec::new();
    let mut checked = 0;
    let tables = super::schema::tables();
    for c in &archive.manifest.captures {
        // Every capture has a file of every table (empty ones too): a table missing from its
        // entry would drop its rows from every query without a word.
        for t in tables.iter().filter(|t| !c.files.contains_key(&t.name)) {
            problems.push(Problem {
                capture_id: Some(c.capture_id),
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
            problems.push(Problem {
                capture_id: Some(c.capture_id),
                path: s.path.clone(),
                kind,
                detail,
            });
        }
        for f in c.files.values() {
            checked += 1;
            let path = archive.dir.join(&f.path);
            let mut problem = |kind, detail: String| {
                problems.push(Problem {
                    capture_id: Some(c.capture_id),
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
    problems.extend(unlisted(archive, writing));
    (checked, problems)
}

/// Files in the table and source directories that the manifest does not list. tracedb never
/// reads them, but an engine globbing a table's directory would.
fn unlisted(archive: &Archive, writing_before: bool) -> Vec<Problem> {
    let mut found = Vec::new();
    for dir in super::data_dirs() {
        files_under(&archive.dir.join(&dir), &dir, &mut found);
    }
    // Listed when verify began, or now: a capture committed meanwhile is no leftover.
    let mut listed = archive.listed_files();
    if let Ok(now) = super::Archive::open(&archive.dir) {
        listed.extend(now.listed_files());
    }
    let writing = writing_before || super::writer_running(&archive.dir);
    found
        .into_iter()
        .filter(|rel| !listed.contains(rel))
        .map(|rel| {
            // Anything under `<dir>/capture_id=<N>` is what a writer stopped midway leaves
            // behind, and what the next one removes (`Archive::remove_orphans`).
            let in_partition = rel
                .split('/')
                .nth(1)
                .and_then(|p| p.strip_prefix("capture_id="))
                .is_some_and(|n| n.parse::<i64>().is_ok());
            let detail = if in_partition && writing {
                "no capture lists it: another tracedb is writing to the archive now, and this \
                 may be a file it is committing; verify again when it ends"
            } else if in_partition {
                "no capture lists it: left by an ingest, rm or reingest that was stopped, \
                 or kept for a query that was reading it; the next writer removes it"
            } else {
                "not written by tracedb, no capture lists it; engines reading the directory \
                 would read it: remove it"
            };
            Problem { capture_id: None, path: rel, kind: "unlisted", detail: detail.into() }
        })
        .collect()
}

/// Appends the path (relative, `/`-separated, starting with `rel`) of every file under
/// `dir`, directories followed down; an unreadable directory is skipped (its listed files
/// are reported missing).
fn files_under(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = dir.read_dir() else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let rel = format!("{rel}/{}", e.file_name().to_string_lossy());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            files_under(&e.path(), &rel, out);
        } else {
            out.push(rel);
        }
    }
}
