//! The archive: a directory of zstd Parquet files, hive-partitioned by capture
//! (`<table>/capture_id=N/part-0.parquet`), plus `manifest.json` listing the complete
//! captures. [`Archive::connect`] opens an in-process DuckDB with one view per table over
//! exactly the files the manifest lists, so a half-written capture is never seen.
pub mod export;
pub mod ingest;
pub mod manifest;
pub mod name_chunk;
pub mod out_file;
pub mod queries;
pub mod schema;
pub mod verify;
pub mod writer;

mod lock;
mod views;
pub(crate) use lock::writer_running;
pub use lock::{ReadLock, WriteLock};

pub use views::Damaged;

use crate::{Error, Result};
pub use manifest::{CaptureEntry, Manifest};
use std::path::{Path, PathBuf};

/// The helper macros for traces (`fmt_ns`, `ns`, `overlap`, `intervals_in`), documented in
/// the file itself; installed on every connection after the table views.
pub const HELPERS_SQL: &str = include_str!("../../sql/helpers.sql");

/// Default archive directory.
pub const DEFAULT_ARCHIVE: &str = "traces.tdb";
/// The schema (of the connection's in-memory database) holding tracedb's own helper
/// relations (`_empty_<table>`, the deadline analyses' `_deadline_eval`): out of `SHOW TABLES`
/// and out of the way of users' names.
pub const INTERNAL: &str = "memory.tracedb_internal";
const STAGING: &str = ".staging";
/// Directory of the kept source files.
const SOURCES: &str = "sources";
const LOCK: &str = ".lock";
/// Readers hold a shared `flock` on it; writers delete files only with an exclusive one.
const READERS: &str = ".readers";

/// An archive directory and its manifest.
pub struct Archive {
    /// The directory.
    pub dir: PathBuf,
    /// The manifest as read when opened.
    pub manifest: Manifest,
    /// What opening it created, for [`Archive::discard_if_unused`].
    created: Created,
    /// A reader's lock, held while this is open for reading (see [`ReadLock`]).
    read_lock: Option<ReadLock>,
    /// Opened for writing with no `.readers` yet: a reader may be reading without a lock,
    /// so this writer deletes nothing readers could read (see [`Archive::unread`]).
    readers_new: bool,
}

/// What [`Archive::open_for_write`] had to create.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Created {
    /// The archive existed.
    Nothing,
    /// The directory existed (empty, or with a writer's hidden files only); the manifest
    /// is new.
    Manifest,
    /// The directory itself is new.
    Directory,
}

impl Archive {
    /// Opens an existing archive for reading.
    pub fn open(dir: &Path) -> Result<Archive> {
        Self::must_exist(dir)?;
        // Taken before the manifest is read: the files it lists stay while it is held.
        let read_lock = ReadLock::take(dir);
        Ok(Archive {
            dir: dir.to_path_buf(),
            manifest: Manifest::load(dir)?,
            created: Created::Nothing,
            read_lock,
            readers_new: false,
        })
    }

    /// An error unless `dir` holds an archive (for writers that must not create one).
    pub fn must_exist(dir: &Path) -> Result<()> {
        if dir.join(manifest::FILE).is_file() {
            return Ok(());
        }
        let message = if dir.exists() && !dir.is_dir() {
            "not a directory: an archive is a directory".to_string()
        } else if dir.exists() {
            format!("not a tracedb archive (no {})", manifest::FILE)
        } else {
            "no archive here; create one with `tracedb ingest FILE --archive DIR`".to_string()
        };
        Err(Error::Archive { path: dir.to_path_buf(), message })
    }

    /// Lets go of the reader's lock taken by [`Archive::open`], for a reader that takes one
    /// per statement instead (the shell).
    pub fn release_read_lock(&mut self) {
        self.read_lock = None;
    }

    /// Opens an archive for writing, creating it when absent, and takes the writer lock.
    pub fn open_for_write(dir: &Path) -> Result<(Archive, WriteLock)> {
        // A failed first ingest removes the archive it created, lock file included: a
        // writer that opened that lock file just before finds it unlinked and starts over.
        for _ in 0..8 {
            if let Some(opened) = Self::try_open_for_write(dir)? {
                return Ok(opened);
            }
        }
        Err(Error::Archive {
            path: dir.to_path_buf(),
            message: "the archive keeps being removed while it is opened; try again".into(),
        })
    }

    /// One attempt of [`Archive::open_for_write`]: `None` when the lock it took was on a
    /// lock file removed meanwhile.
    fn try_open_for_write(dir: &Path) -> Result<Option<(Archive, WriteLock)>> {
        // One look at the path: asking `is_dir` and then `exists` raced with another ingest
        // creating the directory in between, which was then called "not a directory".
        let dir_existed = match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => true,
            Ok(_) => {
                return Err(Error::Archive {
                    path: dir.to_path_buf(),
                    message: "not a directory: an archive is a directory (give another --archive)"
                        .into(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::io(dir, e)),
        };
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        if !dir.join(manifest::FILE).is_file() {
            // Only a writer's own hidden files (`.lock`, `.staging`, a manifest being
            // written) may precede the first manifest: another ingest is creating the
            // archive right now. Anything else is not ours, or an archive that lost its
            // manifest: writing one would orphan (and then delete) its captures.
            let entries = match dir.read_dir() {
                Ok(entries) => entries,
                // Gone with a discarded archive since it was created: start over.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(Error::io(dir, e)),
            };
            let foreign = entries.flatten().find(|e| {
                // The manifest itself may have appeared since it was looked for.
                let name = e.file_name().to_string_lossy().into_owned();
                !name.starts_with('.') && name != manifest::FILE
            });
            if let Some(entry) = foreign {
                return Err(Error::Archive {
                    path: dir.to_path_buf(),
                    message: format!(
                        "directory is not empty ({} and maybe more) and has no {}: not an \
                         archive, or one that lost its manifest; not touching it",
                        entry.file_name().to_string_lossy(),
                        manifest::FILE
                    ),
                });
            }
        }
        let Some(lock) = WriteLock::take(dir)? else { return Ok(None) };
        let readers_new = !dir.join(READERS).exists();
        let manifest = Manifest::load(dir)?;
        let created = if dir.join(manifest::FILE).is_file() {
            Created::Nothing
        } else {
            manifest.save(dir)?;
            if dir_existed {
                Created::Manifest
            } else {
                Created::Directory
            }
        };
        let archive =
            Archive { dir: dir.to_path_buf(), manifest, created, read_lock: None, readers_new };
        archive.remove_orphans()?;
        Ok(Some((archive, lock)))
    }

    /// Takes back an archive that [`Archive::open_for_write`] created when no capture was
    /// committed to it (the first ingest failed), so a failed first ingest leaves no empty
    /// archive behind. A directory that existed before is kept, emptied of what tracedb
    /// put there. Does nothing to an archive that existed or that holds a capture.
    pub fn discard_if_unused(self, lock: WriteLock) -> Result<()> {
        if self.created == Created::Nothing || !Manifest::load(&self.dir)?.captures.is_empty() {
            return Ok(());
        }
        for name in data_dirs().into_iter().chain([STAGING.to_string()]) {
            let p = self.dir.join(name);
            if p.exists() {
                std::fs::remove_dir_all(&p).map_err(|e| Error::io(&p, e))?;
            }
        }
        // The manifest last: until it goes, another writer takes this for an archive.
        let m = self.dir.join(manifest::FILE);
        std::fs::remove_file(&m).map_err(|e| Error::io(&m, e))?;
        let r = self.dir.join(READERS);
        if r.exists() {
            std::fs::remove_file(&r).map_err(|e| Error::io(&r, e))?;
        }
        // Still locked while unlinked: a writer waiting on this file sees it gone and
        // starts over (see `WriteLock::take`).
        let l = self.dir.join(LOCK);
        std::fs::remove_file(&l).map_err(|e| Error::io(&l, e))?;
        drop(lock);
        if self.created == Created::Directory {
            // Fails, harmlessly, when another writer has just started creating files.
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(())
    }

    /// Removes staging directories and partition directories of captures the manifest does
    /// not list: leftovers of an ingest that was killed. Called with the lock held.
    fn remove_orphans(&self) -> Result<()> {
        let staging = self.dir.join(STAGING);
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        }
        // Sources extracted by a reingest that did not finish.
        for entry in self.dir.read_dir().map_err(|e| Error::io(&self.dir, e))?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".reingest.") {
                let p = entry.path();
                std::fs::remove_dir_all(&p).map_err(|e| Error::io(&p, e))?;
            }
            // A manifest a killed writer was writing (never the one in use: that is renamed).
            if name.starts_with(manifest::TMP_PREFIX) && name.ends_with(".tmp") {
                let p = entry.path();
                std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
            }
        }
        // Files of removed captures and old generations: only while nobody reads them.
        let Some(_unread) = self.unread()? else { return Ok(()) };
        // What a capture's folder holds: a listed file, or the folder of one (ovni's kept
        // streams keep their tree: `sources/capture_id=1/loom.a/proc.1/...`).
        let listed: std::collections::HashSet<String> = self
            .listed_files()
            .iter()
            .map(|f| f.splitn(4, '/').take(3).collect::<Vec<_>>().join("/"))
            .collect();
        for dir_name in data_dirs() {
            let tdir = self.dir.join(&dir_name);
            let Ok(entries) = tdir.read_dir() else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(id) = name.strip_prefix("capture_id=").and_then(|s| s.parse::<i64>().ok())
                else {
                    continue;
                };
                let p = entry.path();
                if !self.manifest.captures.iter().any(|c| c.capture_id == id) {
                    remove_any(&p)?;
                    continue;
                }
                // A listed capture: drop files of a rebuild that did not commit.
                for f in p.read_dir().map_err(|e| Error::io(&p, e))?.flatten() {
                    let rel = format!("{dir_name}/{name}/{}", f.file_name().to_string_lossy());
                    if !listed.contains(&rel) {
                        remove_any(&f.path())?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The readers' lock held exclusively, when no reader holds it and this writer found
    /// the lock file there (see [`ReadLock::exclusive`]): files that no capture lists may be
    /// deleted while it is held.
    pub(crate) fn unread(&self) -> Result<Option<ReadLock>> {
        let lock = ReadLock::exclusive(&self.dir)?;
        Ok(lock.filter(|_| !self.readers_new))
    }

    /// Removes what an ingest of capture `id` that failed had put in place: everything in
    /// its partitions for a new capture, or the tables of `generation` for a rebuild. No
    /// manifest ever listed them, so no reader can be reading them.
    pub(crate) fn remove_never_listed(&self, id: i64, generation: Option<u64>) -> Result<()> {
        for dir_name in data_dirs() {
            let p = self.dir.join(&dir_name).join(format!("capture_id={id}"));
            match generation {
                None if p.symlink_metadata().is_ok() => remove_any(&p)?,
                None => {}
                Some(g) => {
                    let f = p.join(format!("part-{g}.parquet"));
                    if f.symlink_metadata().is_ok() {
                        remove_any(&f)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Every file the manifest lists, relative to the archive (`events/capture_id=1/...`).
    pub(crate) fn listed_files(&self) -> std::collections::HashSet<String> {
        self.manifest
            .captures
            .iter()
            .flat_map(|c| {
                c.files
                    .values()
                    .map(|f| f.path.clone())
                    .chain(c.sources.iter().map(|s| s.path.clone()))
            })
            .collect()
    }

    /// Removes capture `id`: first from the manifest (atomically: from then on it is gone),
    /// then its files, unless a reader may be reading them (the flag returned is false
    /// then). Files left, by a crash in between or for a reader, are unlisted: the next
    /// writer removes them. The caller holds the writer lock.
    pub fn remove(&mut self, id: i64) -> Result<(CaptureEntry, bool)> {
        let at =
            self.manifest.captures.iter().position(|c| c.capture_id == id).ok_or_else(|| {
                Error::Archive { path: self.dir.clone(), message: format!("no capture {id}") }
            })?;
        let mut next = self.manifest.clone();
        let entry = next.captures.remove(at);
        next.save(&self.dir)?;
        self.manifest = next;
        let Some(_unread) = self.unread()? else { return Ok((entry, false)) };
        for t in data_dirs() {
            let part = self.dir.join(&t).join(format!("capture_id={id}"));
            if part.exists() {
                std::fs::remove_dir_all(&part).map_err(|e| Error::io(&part, e))?;
            }
        }
        Ok((entry, true))
    }

    /// A fresh staging directory for capture `id`.
    pub(crate) fn staging_dir(&self, id: i64) -> PathBuf {
        self.dir.join(STAGING).join(format!("capture_id={id}.{}", std::process::id()))
    }
}

/// Removes the file, or the directory and all under it, at `path`.
fn remove_any(path: &Path) -> Result<()> {
    let removed = if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    removed.map_err(|e| Error::io(path, e))
}

/// The directories that hold captures' files, relative to the archive: one per table, and
/// the kept sources.
pub(crate) fn data_dirs() -> Vec<String> {
    schema::tables().into_iter().map(|t| t.name).chain([SOURCES.to_string()]).collect()
}
