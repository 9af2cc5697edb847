//! `tracedb rm`: remove a capture from the archive.
use super::ArchiveArg;
use crate::store::Archive;
use crate::{Error, Result};

/// Remove a capture (by id or name) and its files; other captures are untouched. The
/// capture disappears atomically (the manifest is the commit point).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture id or name.
    #[arg(value_name = "CAPTURE")]
    capture: String,
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `rm`.
pub fn run(args: Args) -> Result<()> {
    let dir = &args.archive.archive;
    Archive::open(dir)?; // a missing archive is an error, not created here
    let (mut archive, _lock) = Archive::open_for_write(dir)?;
    let by_name: Vec<i64> = archive
        .manifest
        .captures
        .iter()
        .filter(|c| c.name == args.capture)
        .map(|c| c.capture_id)
        .collect();
    let id = match (args.capture.parse::<i64>(), by_name.as_slice()) {
        (Ok(id), _) if archive.manifest.captures.iter().any(|c| c.capture_id == id) => id,
        (_, [id]) => *id,
        (_, []) => {
            return Err(Error::Archive {
                path: dir.clone(),
                message: format!("no capture '{}'", args.capture),
            })
        }
        (_, ids) => {
            let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
            return Err(Error::Usage(format!(
                "{} captures are named '{}' (ids {}); give the id",
                ids.len(),
                args.capture,
                ids.join(", ")
            )));
        }
    };
    let gone = archive.remove(id)?;
    eprintln!("removed capture {} '{}' ({} events)", gone.capture_id, gone.name, gone.event_count);
    Ok(())
}
