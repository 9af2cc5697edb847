//! Where an export writes: a regular file (or none yet) is replaced only by a complete one,
//! written beside it under a temporary name and renamed over it; a symlink is followed, so
//! the link stays and its target gets the new content; anything else (a FIFO, a device,
//! `/dev/stdout`) is written straight into, since renaming over it would replace the
//! special file with a regular one (and a reader of the FIFO would wait forever). `-` is
//! standard output.
//!
//! Temporary files in the making are listed, so that [`discard_all`] can remove them when
//! the process is interrupted (SIGINT, SIGTERM): files are created, renamed into place and
//! removed under the list's lock, so none appears or is published once it has run.
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary files of exports in the making.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Directories an export in the making created for its output.
static MADE_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn made_dirs() -> MutexGuard<'static, Vec<PathBuf>> {
    MADE_DIRS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The directory DuckDB spills an export's sorts to ([`super::export::bound_memory`]): DuckDB
/// removes it when the connection closes; an export ended by a signal does not get there.
static SPILL_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Lists `dir` as the directory an export's sorts spill to, for [`discard_all`].
pub fn spill_dir(dir: &Path) {
    *SPILL_DIR.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(dir.to_path_buf());
}

/// Creates the directory `dir` (and its parents) for an export's files; when it is new, it
/// is listed, so that an export interrupted or failed takes it back ([`discard_dir`]).
pub fn create_dir(dir: &Path) -> Result<()> {
    let made = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    if made {
        made_dirs().push(dir.to_path_buf());
    }
    Ok(())
}

/// Forgets `dir` as made by an export in the making: its export is complete (`keep`) or
/// failed, when it is removed if it was made and is empty.
pub fn discard_dir(dir: &Path, keep: bool) {
    let mut list = made_dirs();
    if let Some(i) = list.iter().position(|d| d == dir) {
        let d = list.remove(i);
        if !keep {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Removes every temporary file of an export in the making (and the directories it made
/// for them, when empty), and keeps any other from being created or renamed into place: for
/// a process about to end on a signal.
pub fn discard_all() {
    let mut list = pending();
    for tmp in list.drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
    for d in made_dirs().drain(..) {
        let _ = std::fs::remove_dir(d);
    }
    if let Some(d) = SPILL_DIR.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
        let _ = std::fs::remove_dir_all(d);
    }
    // Held until the process ends.
    std::mem::forget(list);
}

/// How many symlinks are followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// An export's output, open for writing.
#[derive(Debug)]
pub struct OutFile {
    /// The path as given, for messages.
    path: PathBuf,
    /// Where the bytes go.
    dest: Dest,
}

#[derive(Debug)]
enum Dest {
    /// Written to `tmp`, renamed to `path` (the symlink-resolved output) when complete.
    Replace { path: PathBuf, tmp: PathBuf },
    /// Written straight into the output.
    Direct,
    /// Written to standard output (the path `-`).
    Stdout,
}

impl OutFile {
    /// Decides how `path` is written (see the module doc) and creates the temporary file
    /// when there is one.
    pub fn create(path: &Path) -> Result<OutFile> {
        let out = OutFile::plan(path)?;
        if let Dest::Replace { tmp, .. } = &out.dest {
            let mut list = pending();
            std::fs::File::create(tmp).map_err(|e| Error::io(path, e))?;
            list.push(tmp.clone());
        }
        Ok(out)
    }

    fn plan(path: &Path) -> Result<OutFile> {
        if path.as_os_str() == "-" {
            return Ok(OutFile { path: path.to_path_buf(), dest: Dest::Stdout });
        }
        let mut p = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            let meta = match std::fs::symlink_metadata(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(replace(path, p)),
                Err(e) => return Err(Error::io(path, e)),
                Ok(m) => m,
            };
            if meta.is_file() {
                return Ok(replace(path, p));
            }
            // /dev/stdout, /dev/fd/N and /proc/self/fd/N name an open descriptor (maybe a
            // pipe): its link text is no path to rename over.
            if !meta.file_type().is_symlink() || p.starts_with("/proc") || p.starts_with("/dev/fd")
            {
                break;
            }
            let target = std::fs::read_link(&p).map_err(|e| Error::io(path, e))?;
            // A relative link is relative to the link's directory (`join` keeps an absolute one).
            p = p.parent().map_or_else(|| target.clone(), |dir| dir.join(&target));
        }
        Ok(OutFile { path: path.to_path_buf(), dest: Dest::Direct })
    }

    /// Where the bytes are to be written: the temporary file, or the output itself.
    pub fn write_path(&self) -> &Path {
        match &self.dest {
            Dest::Replace { tmp, .. } => tmp,
            Dest::Direct | Dest::Stdout => &self.path,
        }
    }

    /// Opens [`Self::write_path`] for writing (a FIFO's open waits for its reader).
    pub fn open(&self) -> Result<std::fs::File> {
        let file = match &self.dest {
            Dest::Replace { tmp, .. } => std::fs::OpenOptions::new().write(true).open(tmp),
            // Appending: through /proc/self/fd/1, a shell's `>>` redirection is not written over.
            Dest::Direct => std::fs::OpenOptions::new().append(true).open(&self.path),
            Dest::Stdout => {
                use std::os::fd::AsFd;
                std::io::stdout().as_fd().try_clone_to_owned().map(std::fs::File::from)
            }
        };
        file.map_err(|e| Error::io(&self.path, e))
    }

    /// Gives the output the complete file when `result` is Ok; removes the temporary file
    /// otherwise, leaving any file it would have replaced as it was.
    pub fn commit<T>(self, result: Result<T>) -> Result<T> {
        let Dest::Replace { path, tmp } = &self.dest else { return result };
        match result {
            Ok(v) => {
                let mut list = pending();
                list.retain(|p| p != tmp);
                if let Err(e) = std::fs::rename(tmp, path) {
                    let _ = std::fs::remove_file(tmp);
                    return Err(Error::io(&self.path, e));
                }
                Ok(v)
            }
            Err(e) => {
                self.discard();
                Err(e)
            }
        }
    }

    /// Removes the temporary file, if there is one.
    pub fn discard(self) {
        if let Dest::Replace { tmp, .. } = &self.dest {
            let mut list = pending();
            list.retain(|p| p != tmp);
            let _ = std::fs::remove_file(tmp);
        }
    }
}

fn replace(given: &Path, path: PathBuf) -> OutFile {
    let name =
        path.file_name().map_or_else(|| "export".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tracedb-{}.tmp", std::process::id()));
    OutFile { path: given.to_path_buf(), dest: Dest::Replace { path, tmp } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_or_missing_files_are_replaced_and_symlinks_followed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let new = OutFile::plan(&d.join("new.btf")).unwrap();
        assert_eq!(new.write_path().parent(), Some(d));
        assert!(new.write_path().to_string_lossy().ends_with(".tmp"));
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/target.btf", d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("link"), d.join("link2")).unwrap();
        let out = OutFile::plan(&d.join("link2")).unwrap();
        // A dangling link is followed too: its target is created.
        assert_eq!(out.write_path().parent(), Some(d.join("sub").as_path()));
        assert!(
            matches!(&out.dest, Dest::Replace { path, .. } if path == &d.join("sub/target.btf"))
        );
        assert!(matches!(OutFile::plan(Path::new("/dev/null")).unwrap().dest, Dest::Direct));
        assert!(matches!(OutFile::plan(Path::new("/dev/stdout")).unwrap().dest, Dest::Direct));
    }

    #[test]
    fn a_temporary_file_is_listed_until_it_is_renamed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let listed = |out: &OutFile| pending().iter().any(|p| p == out.write_path());
        let out = OutFile::create(&dir.path().join("a.json")).unwrap();
        assert!(out.write_path().exists() && listed(&out));
        let tmp = out.write_path().to_path_buf();
        let err: Result<()> = Err(Error::Usage("failed".into()));
        assert!(out.commit(err).is_err());
        assert!(!tmp.exists() && !pending().contains(&tmp));
        let out = OutFile::create(&dir.path().join("a.json")).unwrap();
        std::io::Write::write_all(&mut out.open().unwrap(), b"done").unwrap();
        out.commit(Ok(())).unwrap();
        assert!(!pending().contains(&tmp));
        assert_eq!(std::fs::read_to_string(dir.path().join("a.json")).unwrap(), "done");
    }

    #[test]
    fn a_symlink_loop_is_written_directly_and_fails_to_open() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        let out = OutFile::plan(&d.join("a")).unwrap();
        assert!(out.open().is_err());
    }
}
