//! The archive's locks: one writer at a time ([`WriteLock`], an exclusive `flock` on
//! `.lock`), and readers that a writer waits for before it deletes files ([`ReadLock`], shared
//! locks on `.readers`). The kernel releases both when their owner exits, however it exits.
use super::*;

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
    pub(super) fn take(dir: &Path) -> Result<Option<WriteLock>> {
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

/// Whether `path` still names the open `file` (it was not removed or replaced).
#[cfg(unix)]
pub(super) fn still_named(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `path` still names the open `file` (always taken as yes where inodes are not
/// available).
#[cfg(not(unix))]
pub(super) fn still_named(_file: &std::fs::File, path: &Path) -> bool {
    path.exists()
}
