//! A directory given to `ingest`: the files of the one capture it holds (an ovni output
//! directory: its emulator's `thread.prv` and `cpu.prv`, in it or in its `ovni/` folder, or
//! its binary streams), and the capture's default name (the experiment directory's).
use super::names::not_a_number;
use crate::ingest::input::COMPRESSED_SUFFIXES;
use crate::ingest::{self, Format};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The trace files of a capture directory and the capture's default name.
pub fn capture_dir(dir: &Path) -> Result<(Vec<PathBuf>, String)> {
    capture_dir_as(dir, None)
}

/// [`capture_dir`] for the format `format`: an ovni directory gives its emulator output
/// (`thread.prv`, `cpu.prv`) unless `--format ovni` asks for its binary streams, or there
/// is no emulator output beside them.
pub fn capture_dir_as(dir: &Path, format: Option<Format>) -> Result<(Vec<PathBuf>, String)> {
    let streams = || {
        ingest::ovni::streams_dir(dir)
            .map(|(_, s)| s.into_iter().map(|s| s.obs).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    if format == Some(Format::Ovni) {
        let files = streams();
        if files.is_empty() {
            return Err(Error::input(
                &dir.display().to_string(),
                "",
                "--format ovni: no ovni streams here (loom.*/proc.*/thread.*/stream.obs, or v2 \
                 loom.*/proc.*/thread.*.obs, in it or in its ovni/ folder)",
            ));
        }
        return Ok((files, dir_capture_name(dir)));
    }
    // One file per view: `thread.prv` and `thread.prv.gz` side by side would be read twice.
    let pick = |d: &Path| -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for n in ["thread.prv", "cpu.prv"] {
            let found: Vec<PathBuf> = std::iter::once(d.join(n))
                .chain(COMPRESSED_SUFFIXES.iter().map(|c| d.join(format!("{n}{c}"))))
                .filter(|p| p.is_file())
                .collect();
            if found.len() > 1 {
                let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
                return Err(Error::input(
                    &d.display().to_string(),
                    "",
                    format!(
                        "{} copies of {n}: {}; keep one, or give the trace files instead",
                        found.len(),
                        names.join(", ")
                    ),
                ));
            }
            files.extend(found);
        }
        Ok(files)
    };
    let mut files = pick(dir)?;
    // The name comes from the resolved path, so that however the directory is written
    // (`.` inside `emu-x/ovni`, `ovni/`, `emu-x/ovni/..`, a symlink) it names the same capture.
    let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut named = resolved.clone();
    if files.is_empty() {
        files = pick(&dir.join("ovni"))?;
    } else if resolved.file_name().is_some_and(|n| n == "ovni") {
        // `emu-x/ovni/`: the experiment's directory names the capture.
        if let Some(parent) = resolved.parent() {
            named = parent.to_path_buf();
        }
    }
    if files.is_empty() {
        files = streams();
    }
    if files.is_empty() {
        return Err(Error::input(
            &dir.display().to_string(),
            "",
            "a directory is ingested only when it is an ovni output directory (thread.prv and/or cpu.prv, or ovni's binary streams loom.*/proc.*/thread.*/stream.obs, in it or in its ovni/ folder); give trace files instead",
        ));
    }
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    Ok((files, not_a_number(name)))
}

/// The capture name of an ovni directory: its own, or the experiment's for `x/ovni`.
fn dir_capture_name(dir: &Path) -> String {
    let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let named = match resolved.parent() {
        Some(p) if resolved.file_name().is_some_and(|n| n == "ovni") => p.to_path_buf(),
        _ => resolved,
    };
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    not_a_number(name)
}
