//! `tracedb verify`: check the archive's files against the manifest.
use super::ArchiveArg;
use crate::output::counted;
use crate::store::{verify, Archive};
use crate::{Error, Result};

/// Check every file of the archive: present, same size and SHA-256 as recorded at ingest,
/// and a readable Parquet footer with the recorded row count; and no file the manifest
/// does not list among them. Exit status 1 names every missing, truncated, altered or
/// unlisted file.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `verify`.
pub fn run(args: Args) -> Result<()> {
    let archive = Archive::open(&args.archive.archive)?;
    let (checked, problems) = verify::verify(&archive);
    for p in &problems {
        match p.capture_id {
            Some(id) => crate::say!("capture {id}: {}: {} ({})", p.path, p.kind, p.detail),
            None => crate::say!("{}: {} ({})", p.path, p.kind, p.detail),
        }
    }
    if problems.is_empty() {
        use std::io::Write as _;
        let mut out = super::stdout();
        let captures = archive.manifest.captures.len();
        writeln!(out, "ok: {}, {} checked", counted(captures, "capture"), counted(checked, "file"))
            .and_then(|()| out.flush())
            .map_err(Error::Output)
    } else {
        Err(Error::Archive {
            path: archive.dir.clone(),
            message: {
                let unlisted = problems.iter().filter(|p| p.capture_id.is_none()).count();
                let damaged = problems.len() - unlisted;
                let of = counted(checked, "file");
                let unlisted_files = counted(unlisted, "file");
                match (damaged, unlisted) {
                    (d, 0) => format!("{d} of {of} damaged (listed above)"),
                    (0, _) => format!("{unlisted_files} no capture lists (listed above)"),
                    (d, _) => format!(
                        "{d} of {of} damaged, and {unlisted_files} no capture lists (listed above)"
                    ),
                }
            },
        })
    }
}
