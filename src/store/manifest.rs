//! The archive manifest, `manifest.json`: the list of complete captures and their files.
//! It is the commit point of an ingest: files are renamed into place first, then the
//! manifest is replaced atomically (write to a temporary name, fsync, rename). Files of a
//! capture that is not in the manifest are invisible and removed by the next writer.
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Name of the manifest file in the archive directory.
pub const FILE: &str = "manifest.json";
/// Value of the `format` key, to tell a tracedb archive from another directory.
pub const FORMAT: &str = "tracedb-archive";

/// One table file of a capture.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileEntry {
    /// Path relative to the archive directory.
    pub path: String,
    /// Rows.
    pub rows: u64,
    /// Bytes.
    pub bytes: u64,
    /// Hex SHA-256 of the file, checked by `tracedb verify`.
    #[serde(default)]
    pub sha256: String,
}

/// A source file kept in the archive, so a later tracedb can rebuild the capture.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SourceEntry {
    /// Path relative to the archive directory.
    pub path: String,
    /// The file's original name.
    pub name: String,
    /// `trace` (read by the importer) or `companion` (found beside a trace, e.g. `.pcf`).
    pub role: String,
    /// True when tracedb zstd-compressed it (the original was plain); false when the
    /// stored bytes are the original ones (already gzip or zstd).
    pub compressed: bool,
    /// Bytes stored.
    pub bytes: u64,
    /// Hex SHA-256 of the stored bytes.
    pub sha256: String,
}

/// One capture, as listed in `captures`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaptureEntry {
    /// Id.
    pub capture_id: i64,
    /// Name.
    pub name: String,
    /// Importer.
    pub format: String,
    /// Source paths.
    pub source_files: Vec<String>,
    /// SHA-256 of the source bytes on disk.
    pub source_sha256: String,
    /// Bytes of the sources on disk.
    pub source_bytes: u64,
    /// Bytes of the sources' text once decompressed (0: not recorded, before 2026-11-21).
    #[serde(default)]
    pub source_text_bytes: u64,
    /// UTC time of the ingest, RFC 3339.
    pub ingested_at: String,
    /// Unit of the source times.
    pub time_unit: String,
    /// ns added to scaled source times.
    pub ts_origin: i64,
    /// First event time, ns.
    pub ts_min: Option<i64>,
    /// Last event time, ns.
    pub ts_max: Option<i64>,
    /// Events.
    pub event_count: u64,
    /// Header metadata.
    pub meta: BTreeMap<String, String>,
    /// tracedb version.
    pub tool_version: String,
    /// Schema version.
    pub schema_version: i64,
    /// Table files, by table name.
    pub files: BTreeMap<String, FileEntry>,
    /// Free-form labels given at ingest (`--tag key=value`).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// The source files kept in the archive (empty with `--no-keep-source`).
    #[serde(default)]
    pub sources: Vec<SourceEntry>,
}

impl CaptureEntry {
    /// Bytes of all the capture's table files.
    pub fn archive_bytes(&self) -> u64 {
        self.files.values().map(|f| f.bytes).sum()
    }
}

/// How the names of manifests being written start (`.manifest.json.<pid>.tmp`); one left
/// by a writer that was killed is removed by the next writer.
pub const TMP_PREFIX: &str = ".manifest.json.";

/// The whole manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// Schema version of the archive.
    pub schema_version: i64,
    /// Next capture id to assign.
    pub next_capture_id: i64,
    /// Complete captures, by id.
    pub captures: Vec<CaptureEntry>,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Self {
        Manifest {
            format: FORMAT.to_string(),
            schema_version: super::schema::SCHEMA_VERSION,
            next_capture_id: 1,
            captures: Vec::new(),
        }
    }

    /// The id of the next new capture: `next_capture_id`, or past every capture's id when a
    /// hand-edited manifest says less (an id is never given twice).
    pub fn new_capture_id(&self) -> i64 {
        let past = self.captures.iter().map(|c| c.capture_id + 1).max().unwrap_or(1);
        self.next_capture_id.max(past)
    }

    /// Reads `dir/manifest.json`; an absent file is an empty manifest.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::new()),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| Error::Archive {
            path: dir.to_path_buf(),
            message: format!("{FILE} is not a valid manifest: {e}"),
        })?;
        if m.format != FORMAT {
            return Err(Error::Archive {
                path: dir.to_path_buf(),
                message: format!("{FILE} is not a tracedb manifest (format '{}')", m.format),
            });
        }
        let newest = m.captures.iter().map(|c| c.schema_version).fold(m.schema_version, i64::max);
        if newest > super::schema::SCHEMA_VERSION {
            return Err(Error::Archive {
                path: dir.to_path_buf(),
                message: format!(
                    "written by a newer tracedb (schema version {newest}, this build reads up to {}); upgrade tracedb",
                    super::schema::SCHEMA_VERSION
                ),
            });
        }
        m.check_paths().map_err(|message| Error::Archive { path: dir.to_path_buf(), message })?;
        Ok(m)
    }

    /// Every path the manifest gives stays inside the archive: file paths are relative with
    /// no `..`, and a kept source's name is a plain file name (a reingest extracts it under
    /// that name), or for ovni streams a relative path with no `..`. A hand-edited manifest must not make tracedb read, overwrite or delete
    /// files elsewhere.
    fn check_paths(&self) -> std::result::Result<(), String> {
        use std::path::Component;
        let inside = |p: &str| {
            !p.is_empty() && Path::new(p).components().all(|c| matches!(c, Component::Normal(_)))
        };
        for c in &self.captures {
            let bad = |what: &str, p: &str| {
                format!(
                    "{FILE}: capture {}: {what} '{p}' is not a path inside the archive \
                     (the manifest was edited by hand?)",
                    c.capture_id
                )
            };
            for f in c.files.values() {
                if !inside(&f.path) {
                    return Err(bad("file", &f.path));
                }
            }
            for src in &c.sources {
                if !inside(&src.path) {
                    return Err(bad("source", &src.path));
                }
                // ovni's streams keep their path below the trace folder (loom.L/proc.P/...).
                let one = Path::new(&src.name).components().count() == 1;
                if !inside(&src.name) || !(one || c.format == "ovni") {
                    return Err(bad("source name", &src.name));
                }
            }
        }
        Ok(())
    }

    /// Replaces `dir/manifest.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join(format!("{TMP_PREFIX}{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Archive {
            path: dir.to_path_buf(),
            message: format!("cannot encode the manifest: {e}"),
        })?;
        let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        if let Err(e) = f.write_all(text.as_bytes()).and_then(|()| f.sync_all()) {
            drop(f);
            // A full disk: the old manifest stands, and no part of the new one stays.
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&tmp, e));
        }
        drop(f);
        let path = dir.join(FILE);
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&path, e));
        }
        // Make the rename itself durable.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// The capture `key` names (an id, a name only one capture has, or a tag `KEY=VALUE`
    /// only one capture has), for a command's argument: a usage error naming the archive
    /// `dir` when it names none, or several.
    pub fn resolve(&self, key: &str, dir: &Path) -> Result<&CaptureEntry> {
        match self.select(key, dir)?.as_slice() {
            [one] => Ok(one),
            many => Err(Error::Usage(format!(
                "{} captures are tagged '{key}' (ids {}); give the id",
                many.len(),
                ids_of(many)
            ))),
        }
    }

    /// The captures `key` selects, in id order: the capture of that id; else the capture of
    /// that name (a name two captures have is a usage error: it names neither); else, for
    /// `KEY=VALUE`, every capture with that tag (`--tag KEY=VALUE` at ingest, both sides
    /// trimmed). None is a usage error naming the archive `dir`.
    pub fn select(&self, key: &str, dir: &Path) -> Result<Vec<&CaptureEntry>> {
        if let Ok(id) = key.parse::<i64>() {
            if let Some(c) = self.captures.iter().find(|c| c.capture_id == id) {
                return Ok(vec![c]);
            }
        }
        let named: Vec<&CaptureEntry> = self.captures.iter().filter(|c| c.name == key).collect();
        if named.len() > 1 {
            return Err(Error::Usage(format!(
                "{} captures are named '{key}' (ids {}); give the id",
                named.len(),
                ids_of(&named)
            )));
        }
        if !named.is_empty() {
            return Ok(named);
        }
        let mut tagged: Vec<&CaptureEntry> = match key.split_once('=') {
            Some((k, v)) => self
                .captures
                .iter()
                .filter(|c| c.tags.get(k.trim()).is_some_and(|t| t == v.trim()))
                .collect(),
            None => Vec::new(),
        };
        tagged.sort_by_key(|c| c.capture_id);
        if tagged.is_empty() {
            let what = if key.contains('=') { "capture tagged" } else { "capture" };
            return Err(Error::Usage(format!(
                "no {what} '{key}' in {} (`tracedb captures` lists them)",
                dir.display()
            )));
        }
        Ok(tagged)
    }
}

/// `2, 3`: the ids of `captures`, for a message.
fn ids_of(captures: &[&CaptureEntry]) -> String {
    captures.iter().map(|c| c.capture_id.to_string()).collect::<Vec<_>>().join(", ")
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest::new()
    }
}
