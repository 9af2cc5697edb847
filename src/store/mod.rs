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

    /// Opens an in-memory DuckDB with a view per table over the archive's Parquet files, the
    /// helper macros of [`HELPERS_SQL`] and the predefined analyses. A capture with a
    /// damaged file is left out of every view, with a warning on stderr (see [`Damaged`]).
    pub fn connect(&self) -> Result<duckdb::Connection> {
        let (conn, damaged) = self.connect_with_damage()?;
        for d in damaged {
            crate::say!("tracedb: warning: {d}");
        }
        Ok(conn)
    }

    /// [`Archive::connect`], handing back the captures left out instead of warning of them.
    pub fn connect_with_damage(&self) -> Result<(duckdb::Connection, Vec<Damaged>)> {
        let conn = duckdb::Connection::open_in_memory()?;
        let damaged = self.create_views(&conn)?;
        conn.execute_batch(HELPERS_SQL)
            .map_err(|e| Error::Sql(format!("internal: installing sql/helpers.sql: {e}")))?;
        queries::install(&conn)?;
        Ok((conn, damaged))
    }

    /// (Re)creates the table views on `conn`, over the files of every capture but those
    /// returned: captures with a file DuckDB could not open. A view over a list of files
    /// reads every file's footer when it is made, so one truncated or missing file would
    /// otherwise fail every query, `captures` included, and hide the captures that are
    /// whole.
    pub fn create_views(&self, conn: &duckdb::Connection) -> Result<Vec<Damaged>> {
        let mut damaged = self.damaged(false, &[]);
        if let Err(e) = self.try_create_views(conn, &damaged) {
            // A footer DuckDB cannot read behind the right size and closing magic (bytes
            // altered in place): parse every footer to find whose it is, then once more.
            let found = self.damaged(true, &damaged);
            if found.is_empty() {
                return Err(e);
            }
            damaged.extend(found);
            self.try_create_views(conn, &damaged)?;
        }
        Ok(damaged)
    }

    /// Captures (not among `known`) with a listed table file that is missing or does not end
    /// in Parquet's magic; with `footers`, one whose footer does not parse. The first
    /// problem found per capture.
    fn damaged(&self, footers: bool, known: &[Damaged]) -> Vec<Damaged> {
        let mut out = Vec::new();
        for c in &self.manifest.captures {
            if known.iter().any(|d| d.capture_id == c.capture_id) {
                continue;
            }
            let problem = c.files.values().find_map(|f| {
                let path = self.dir.join(&f.path);
                let problem =
                    if footers { footer_problem(&path) } else { file_problem(&path, f.bytes) };
                problem.map(|p| (f.path.clone(), p))
            });
            if let Some((path, problem)) = problem {
                out.push(Damaged {
                    capture_id: c.capture_id,
                    name: c.name.clone(),
                    path,
                    problem,
                    has_source: !c.sources.is_empty(),
                });
            }
        }
        out
    }

    /// Makes the views over every capture's files but those of the `damaged` ones.
    fn try_create_views(&self, conn: &duckdb::Connection, damaged: &[Damaged]) -> Result<()> {
        let dir = std::fs::canonicalize(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let whole = || {
            self.manifest
                .captures
                .iter()
                .filter(|c| !damaged.iter().any(|d| d.capture_id == c.capture_id))
        };
        // tracedb's own helper relations live in a schema of their own, so that `SHOW TABLES`
        // lists what users query and not them.
        let mut sql = format!("CREATE SCHEMA IF NOT EXISTS {INTERNAL};\n");
        for t in schema::tables() {
            let files: Vec<String> = whole()
                .filter_map(|c| c.files.get(&t.name))
                .map(|f| format!("'{}'", dir.join(&f.path).to_string_lossy().replace('\'', "''")))
                .collect();
            // Files written before a column existed lack it: a union BY NAME with an empty
            // table of the current schema gives NULL there, so old captures stay readable
            // (union_by_name alone cannot add a column no file has). The table is always a
            // view, files or not, so that remaking the views when captures come or go never
            // has to replace a table with a view or the other way round.
            let empty = format!("{INTERNAL}._empty_{}", t.name);
            sql.push_str(&t.ddl.replacen(
                &format!("CREATE TABLE {}", t.name),
                &format!("CREATE OR REPLACE TABLE {empty}"),
                1,
            ));
            if files.is_empty() {
                sql.push_str(&format!(
                    "\nCREATE OR REPLACE TEMP VIEW {name} AS SELECT {cols} FROM {empty};\n",
                    name = t.name,
                    cols = t.column_list()
                ));
            } else {
                sql.push_str(&format!(
                    "\nCREATE OR REPLACE TEMP VIEW {name} AS SELECT {cols} FROM (SELECT * FROM {empty} UNION ALL BY NAME \
                     SELECT * FROM read_parquet([{files}], hive_partitioning = true, \
                     hive_types = {{'capture_id': BIGINT}}, union_by_name = true));\n",
                    name = t.name,
                    cols = t.column_list(),
                    files = files.join(", ")
                ));
            }
            sql.push('\n');
        }
        // Where each capture's tables are stored (from the manifest).
        sql.push_str(
            "CREATE OR REPLACE TEMP TABLE capture_storage (capture_id BIGINT, table_name VARCHAR, \
             path VARCHAR, rows BIGINT, bytes BIGINT, sha256 VARCHAR);\n",
        );
        let mut values = Vec::new();
        for c in whole() {
            for (t, f) in &c.files {
                let q = |s: &str| s.replace('\'', "''");
                values.push(format!(
                    "({}, '{}', '{}', {}, {}, '{}')",
                    c.capture_id,
                    q(t),
                    q(&f.path),
                    f.rows,
                    f.bytes,
                    q(&f.sha256)
                ));
            }
        }
        if !values.is_empty() {
            sql.push_str(&format!("INSERT INTO capture_storage VALUES {};\n", values.join(", ")));
        }
        conn.execute_batch(&sql)?;
        Ok(())
    }
}

/// The archive's writer lock: an exclusive `flock` on `.lock`, which also holds the owner's
/// pid for the message another writer gets. The kernel releases it when the owner exits,
/// however it exits (SIGKILL included), so there is no stale lock to detect. The file is
/// removed only with the archive it belongs to ([`Archive::discard_if_unused`]), while
/// locked; a writer that had opened it then holds a lock on an unlinked file, which
/// [`WriteLock::take`] detects (the path no longer names the locked file) so the writer
/// starts over instead of writing beside a third one that locked a new file.
pub struct WriteLock {
    _file: std::fs::File,
}

impl WriteLock {
    /// Takes the lock; `None` when the lock file was removed while it was being taken.
    fn take(dir: &Path) -> Result<Option<WriteLock>> {
        use std::io::{Read, Seek, Write};
        let path = dir.join(LOCK);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path);
        let mut file = match file {
            Ok(f) => f,
            // The directory went with a discarded archive since it was created.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        match file.try_lock() {
            Ok(()) => {
                if !still_named(&file, &path) {
                    return Ok(None);
                }
                // Ours now: say who holds it.
                let pid = std::process::id();
                file.set_len(0)
                    .and_then(|()| file.rewind())
                    .and_then(|()| writeln!(file, "{pid}"))
                    .map_err(|e| Error::io(&path, e))?;
                Ok(Some(WriteLock { _file: file }))
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut owner = String::new();
                let _ = file.read_to_string(&mut owner);
                let who = match owner.trim() {
                    "" => String::new(),
                    pid => format!(" (pid {pid})"),
                };
                Err(Error::Archive {
                    path: dir.to_path_buf(),
                    message: format!(
                        "another tracedb{who} is writing to this archive; try again when it ends"
                    ),
                })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }
}

/// A lock on `.readers`. Every reader ([`Archive::open`]; the shell, per statement) holds it
/// shared from before it reads the manifest until it has done reading the files listed
/// there. A writer deletes files no capture lists any more (after `rm`, after `reingest`)
/// only while it holds it exclusively, which it tries once, without waiting: when a reader
/// is there the files stay, unlisted, and the next writer removes them. So a query never
/// loses a file under it, and a writer never waits for one. A reader waits only while a
/// writer is deleting. Where the file cannot be opened or created (a read-only archive)
/// there is no lock: nobody can write there either.
pub struct ReadLock {
    _file: std::fs::File,
}

impl ReadLock {
    /// The shared lock, waiting for a writer that is deleting files; `None` without the
    /// lock file.
    pub fn take(dir: &Path) -> Option<ReadLock> {
        let file = Self::file(dir)?;
        loop {
            match file.lock_shared() {
                Ok(()) => return Some(ReadLock { _file: file }),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            }
        }
    }

    /// The exclusive lock if no reader holds the shared one, without waiting. (A writer that
    /// found no lock file deletes nothing all the same: see [`Archive::unread`].)
    pub(crate) fn exclusive(dir: &Path) -> Result<Option<ReadLock>> {
        let path = dir.join(READERS);
        let file = Self::file(dir).ok_or_else(|| Error::Archive {
            path: path.clone(),
            message: "cannot open the readers' lock file".into(),
        })?;
        // Every reader must be able to open it, whatever the umask of its creator.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(m) = file.metadata() {
                if m.permissions().mode() & 0o444 != 0o444 {
                    let _ = file.set_permissions(std::fs::Permissions::from_mode(0o644));
                }
            }
        }
        match file.try_lock() {
            Ok(()) => Ok(Some(ReadLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    fn file(dir: &Path) -> Option<std::fs::File> {
        let path = dir.join(READERS);
        let mut rw = std::fs::OpenOptions::new();
        rw.read(true).write(true).create(true).truncate(false);
        // A lock needs no write access: another user's archive is locked read-only.
        rw.open(&path).or_else(|_| std::fs::File::open(&path)).ok()
    }
}

/// Whether a writer holds the archive's writer lock now.
pub(crate) fn writer_running(dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(dir.join(LOCK)) else { return false };
    matches!(file.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
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

/// Whether `path` still names the open `file` (it was not removed or replaced).
#[cfg(unix)]
fn still_named(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `path` still names the open `file` (always taken as yes where inodes are not
/// available).
#[cfg(not(unix))]
fn still_named(_file: &std::fs::File, path: &Path) -> bool {
    path.exists()
}

/// A capture left out of the table views because one of its files cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged {
    /// Its id.
    pub capture_id: i64,
    /// Its name.
    pub name: String,
    /// The first damaged file found, relative to the archive.
    pub path: String,
    /// What is wrong with that file.
    pub problem: String,
    /// Whether its source is kept, so `tracedb reingest` can rebuild it.
    pub has_source: bool,
}

impl Damaged {
    /// What to do about it.
    pub fn repair(&self) -> String {
        let id = self.capture_id;
        if self.has_source {
            format!("`tracedb reingest {id}` rebuilds it from its kept source")
        } else {
            format!("its source is not kept: `tracedb rm {id}` removes it")
        }
    }
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "capture {} '{}' is left out of every table: {} {}; {} (`tracedb verify` checks \
             every file)",
            self.capture_id,
            self.name,
            self.path,
            self.problem,
            self.repair()
        )
    }
}

/// What keeps DuckDB from opening the Parquet file at `path`, which the manifest says has
/// `bytes` bytes, found without reading more than its last four: it is missing, or does not
/// end in Parquet's magic (a truncated file, mostly). A file of another size that still
/// ends as Parquet does is read: `verify` reports it, and a query should not lose what can
/// be read.
fn file_problem(path: &Path, bytes: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("is missing".into()),
        Err(e) => return Some(format!("cannot be opened ({e})")),
    };
    let size = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    let mut magic = [0u8; 4];
    let read = if size < 4 {
        Ok(())
    } else {
        file.seek(SeekFrom::End(-4)).and_then(|_| file.read_exact(&mut magic))
    };
    match read {
        Ok(()) if &magic == b"PAR1" => None,
        Ok(()) if size < bytes => {
            Some(format!("is truncated: {size} bytes, the manifest says {bytes}"))
        }
        Ok(()) => Some("is altered: it does not end as a Parquet file does".into()),
        Err(e) => Some(format!("cannot be read ({e})")),
    }
}

/// Why the footer of the Parquet file at `path` does not parse, if it does not.
fn footer_problem(path: &Path) -> Option<String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(format!("cannot be opened ({e})")),
    };
    parquet::file::reader::SerializedFileReader::new(file)
        .err()
        .map(|e| format!("is altered: its Parquet footer does not read ({e})"))
}
