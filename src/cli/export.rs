//! `tracedb export`: one capture out of the archive, as BTF, Chrome JSON or Parquet.
use super::ArchiveArg;
use crate::store::{export, Archive};
use crate::Result;
use std::path::PathBuf;

/// What to export to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// BTF text from the normalised events (times in ns).
    Btf,
    /// Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing).
    ChromeJson,
    /// One zstd Parquet file per table, in a directory.
    Parquet,
}

/// Write one capture out of the archive: `--to btf FILE`, `--to chrome-json FILE`,
/// `--to parquet DIR`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture id or name.
    #[arg(value_name = "CAPTURE")]
    capture: String,
    /// Output kind.
    #[arg(long, value_enum)]
    to: Target,
    /// Output file (a directory for parquet).
    #[arg(value_name = "OUT")]
    out: PathBuf,
    #[command(flatten)]
    archive: ArchiveArg,
}

/// Runs `export`.
pub fn run(args: Args) -> Result<()> {
    // Before DuckDB starts its threads: they inherit the blocked signals.
    #[cfg(unix)]
    clean_up_on_signals();
    let archive = Archive::open(&args.archive.archive)?;
    let entry = archive.manifest.resolve(&args.capture, &archive.dir)?.clone();
    let conn = archive.connect()?;
    let what = match args.to {
        Target::Btf => {
            format!("{} events", export::to_btf(&conn, entry.capture_id, &entry.name, &args.out)?)
        }
        Target::ChromeJson => {
            format!("{} trace events", export::to_chrome_json(&conn, entry.capture_id, &args.out)?)
        }
        Target::Parquet => {
            format!("{} tables", export::to_parquet(&conn, entry.capture_id, &args.out)?.len())
        }
    };
    eprintln!(
        "exported capture {} '{}' to {}: {what}",
        entry.capture_id,
        entry.name,
        args.out.display()
    );
    Ok(())
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary file of the export in the making and
/// ends the process by that signal (a shell shows status 130 for SIGINT, 143 for SIGTERM), so
/// an interrupted export leaves no partial file. The signals are blocked in this thread and
/// so in every thread started after it, and one thread waits for them (no code runs in a
/// signal handler). A signal the process was started ignoring (SIGINT of a background job,
/// SIGHUP under nohup) stays ignored.
#[cfg(unix)]
fn clean_up_on_signals() {
    use nix::sys::signal::{raise, SigSet, Signal};
    let mut set = SigSet::empty();
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        if !ignored(sig) {
            set.add(sig);
        }
    }
    if set.thread_block().is_err() {
        return;
    }
    let waiter = std::thread::Builder::new().name("signals".into()).spawn(move || {
        let Ok(sig) = set.wait() else { return };
        crate::store::out_file::discard_all();
        // The signal's default action now ends the process, as if it had not been caught.
        let _ = SigSet::from(sig).thread_unblock();
        let _ = raise(sig);
        std::process::exit(128 + sig as i32);
    });
    if waiter.is_err() {
        let _ = set.thread_unblock();
    }
}

/// Whether `sig`'s action is to be ignored (SIG_IGN), as a shell sets it for SIGINT of a
/// background job and nohup for SIGHUP.
#[cfg(unix)]
fn ignored(sig: nix::sys::signal::Signal) -> bool {
    use nix::libc;
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction only reads the current one into `old`, which
    // is valid for writes; `old` is read only once that call succeeded (all-zero bytes are a
    // valid sigaction anyway).
    unsafe {
        libc::sigaction(sig as libc::c_int, std::ptr::null(), old.as_mut_ptr()) == 0
            && old.assume_init().sa_sigaction == libc::SIG_IGN
    }
}
