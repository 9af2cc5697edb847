//! `tracedb verify`: check the archive's files against the manifest.
use super::ArchiveArg;
use crate::store::{verify, Archive};
use crate::{Error, Result};

/// Check every file of the archive: present, same size and SHA-256 as recorded at ingest,
/// and a readable Parquet footer with the recorded row count. Exit status 1 names every
/// missing, truncated or altered file.
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
        eprintln!("capture {}: {}: {} ({})", p.capture_id, p.path, p.kind, p.detail);
    }
    if problems.is_empty() {
        println!("ok: {} captures, {checked} files checked", archive.manifest.captures.len());
        Ok(())
    } else {
        Err(Error::Archive {
            path: archive.dir.clone(),
            message: format!("{} of {checked} files damaged (listed above)", problems.len()),
        })
    }
}
