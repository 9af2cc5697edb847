//! The shell's history file: `$XDG_DATA_HOME/tracedb/history`, or
//! `~/.local/share/tracedb/history` when XDG_DATA_HOME is unset (or not absolute, as the XDG
//! spec says). Each finished entry (a whole statement, however many lines, or a
//! meta-command) is appended as soon as it is entered, so concurrent sessions share one
//! file and a killed shell loses nothing; every session loads the file when it starts.
//! Ctrl-R searches it (rustyline). History problems are warnings, never fatal.
use rustyline::history::FileHistory;
use rustyline::{Editor, Helper};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the history lives, or None when neither XDG_DATA_HOME nor HOME is usable.
pub fn path() -> Option<PathBuf> {
    path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// [`path`] given the values of XDG_DATA_HOME and HOME.
fn path_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let xdg = xdg.map(PathBuf::from).filter(|p| p.is_absolute());
    let home = || home.map(PathBuf::from).filter(|p| p.is_absolute());
    let base = xdg.or_else(|| home().map(|h| h.join(".local").join("share")))?;
    Some(base.join("tracedb").join("history"))
}

/// Loads the history file into `rl`; returns its path when it can be written.
pub fn open<H: Helper>(rl: &mut Editor<H, FileHistory>) -> Option<PathBuf> {
    let p = path()?;
    if let Some(dir) = p.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            crate::say!("warning: no history ({}: {e})", dir.display());
            return None;
        }
    }
    if p.is_dir() {
        crate::say!("warning: no history ({} is a directory)", p.display());
        return None;
    }
    if p.exists() {
        if let Err(e) = rl.load_history(&p) {
            // Said once: a file that cannot be read is not written after each entry either.
            crate::say!("warning: no history ({}: {e})", p.display());
            return None;
        }
    }
    Some(p)
}

/// Adds `entry` to the in-memory history and appends it to the file.
pub fn add<H: Helper>(rl: &mut Editor<H, FileHistory>, file: Option<&Path>, entry: &str) {
    if matches!(rl.add_history_entry(entry), Ok(true)) {
        if let Some(p) = file {
            if let Err(e) = rl.append_history(p) {
                crate::say!("warning: history {}: {e}", p.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::path_from;

    #[test]
    fn history_path_follows_xdg() {
        let home = Some("/home/u".into());
        assert_eq!(
            path_from(Some("/data".into()), home.clone()),
            Some("/data/tracedb/history".into())
        );
        let fallback = Some("/home/u/.local/share/tracedb/history".into());
        assert_eq!(
            path_from(Some("relative".into()), home.clone()),
            fallback,
            "XDG spec: ignore relative"
        );
        assert_eq!(path_from(None, home), fallback);
        assert_eq!(path_from(None, None), None);
    }
}
