//! `tracedb rm`: remove a capture from the archive.
use super::ArchiveArg;
use crate::store::Archive;
use crate::Result;

/// Remove a capture (by id or name) and its files; other captures are untouched. The
/// capture disappears atomically (the manifest is the commit point).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture id, name, or tag KEY=VALUE that only it has.
    #[arg(value_name = "CAPTURE")]
    capture: String,
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `rm`.
pub fn run(args: Args) -> Result<()> {
    let dir = &args.archive.archive;
    Archive::must_exist(dir)?; // a missing archive is an error, not created here
    let (mut archive, _lock) = Archive::open_for_write(dir)?;
    let id = archive.manifest.resolve(&args.capture, dir)?.capture_id;
    let (gone, deleted) = archive.remove(id)?;
    crate::say!(
        "removed capture {} '{}' ({} events)",
        gone.capture_id,
        gone.name,
        gone.event_count
    );
    if !deleted {
        crate::say!(
            "note: a query may be reading the archive, so the capture's files stay until the \
             next ingest, rm or reingest (no capture lists them)"
        );
    }
    Ok(())
}
