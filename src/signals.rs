//! Ending on SIGINT, SIGTERM or SIGHUP without leaving anything half-written.
//!
//! [`watch`] blocks the three signals in the calling thread, and so in every thread started
//! after it (call it before DuckDB starts its own), and waits for them on a thread of its
//! own: no code runs in a signal handler. What the first one does depends on the command:
//! an export ([`Ending::Now`]) removes its temporary files and ends the process by that
//! signal at once; an ingest ([`Ending::Soon`]) records it, stops reading at the next chunk,
//! takes back what it wrote (its staging files, the archive it created) and then calls
//! [`end_by_signal`]. A second signal ends the process at once in every case. A signal the
//! process was started ignoring (SIGINT of a background job, SIGHUP under nohup) stays
//! ignored. Elsewhere (Windows) nothing is watched.
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received, 0 while none was.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// What the first signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Removes the temporary files of outputs in the making and ends the process.
    Now,
    /// Is recorded for [`interrupted`]; the command cleans up and calls [`end_by_signal`].
    Soon,
}

/// The signal received since [`watch`], if any (its number).
pub fn interrupted() -> Option<i32> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Name of signal `sig`, for messages.
pub fn name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// Starts watching for SIGINT, SIGTERM and SIGHUP (see the module doc).
#[cfg(unix)]
pub fn watch(ending: Ending) {
    use nix::sys::signal::{SigSet, Signal};
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
        if ending == Ending::Soon {
            RECEIVED.store(sig as i32, Ordering::Relaxed);
            if set.wait().is_err() {
                return;
            }
        }
        crate::store::out_file::discard_all();
        end_by_signal(sig as i32);
    });
    if waiter.is_err() {
        let _ = set.thread_unblock();
    }
}

/// Starts watching for SIGINT, SIGTERM and SIGHUP (nothing to do here).
#[cfg(not(unix))]
pub fn watch(_ending: Ending) {}

/// Ends the process by signal `sig`, as if it had not been caught (a shell shows status
/// 130 for SIGINT, 143 for SIGTERM).
pub fn end_by_signal(sig: i32) -> ! {
    #[cfg(unix)]
    if let Ok(s) = nix::sys::signal::Signal::try_from(sig) {
        // Unblocked in this thread only: the default action ends the whole process.
        let _ = nix::sys::signal::SigSet::from(s).thread_unblock();
        let _ = nix::sys::signal::raise(s);
    }
    std::process::exit(128 + sig)
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
