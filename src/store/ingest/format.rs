//! The format a file is read as: `--format`, or detected from its first bytes
//! ([`crate::ingest::detect`]); a tar, 7z or RAR archive is refused with its name rather
//! than as an unrecognised format.
use super::IngestOptions;
use crate::ingest::input::Input;
use crate::ingest::{self, Format};
use crate::{Error, Result};
use std::path::Path;

/// Format of the file `shown` from its first bytes and the options.
pub(super) fn format_of(prefix: &[u8], shown: &str, opts: &IngestOptions) -> Result<Format> {
    // Detection reads the first lines: a refusal points at the first.
    let at = if prefix.is_empty() { "" } else { "line 1" };
    match opts.format {
        Some(f) => {
            // Forcing BTF reads any text: every line is an event or a malformed_line
            // diagnostic. Paraver's reader needs its header line. QS has no magic: forced,
            // any bytes are read as frames (bad ones become diagnostics); S.Ha.R.K. forced
            // reads any bytes as 16-byte records (unknown codes become diagnostics).
            if f == Format::Prv && !f.sniff(prefix) {
                return Err(Error::input(
                    shown,
                    at,
                    format!("not a {} file (its first lines do not look like one)", f.name()),
                ));
            }
            Ok(f)
        }
        // Before detection: a tar of one BTF file reads as BTF with its headers as
        // malformed lines, and a tar of several as one capture of all of them.
        None => match container(prefix) {
            Some(kind) => Err(Error::input(
                shown,
                "",
                format!(
                    "{kind} archive: extract it and ingest the trace files in it (tracedb \
                     decompresses single files: .gz, .zst, .bz2, .xz, or a .zip of one file)"
                ),
            )),
            None => ingest::detect(prefix).ok_or_else(|| {
                Error::input(
                    shown,
                    at,
                    format!(
                        "unrecognised format (supported: {}); use --format to force one",
                        ingest::format_names()
                    ),
                )
            }),
        },
    }
}

/// The kind of multi-file archive whose first bytes (decompressed) are `prefix`: a trace
/// directory shipped as `.tar.gz` or `.7z` is not a trace, and saying so beats
/// "unrecognised format".
fn container(prefix: &[u8]) -> Option<&'static str> {
    // POSIX `ustar\0` or GNU `ustar  \0` at byte 257 of the first 512-byte header.
    if prefix.get(257..263).is_some_and(|m| m == b"ustar\0" || m == b"ustar ") {
        Some("a tar")
    } else if prefix.starts_with(b"7z\xBC\xAF\x27\x1C") {
        Some("a 7z")
    } else if prefix.starts_with(b"Rar!\x1A\x07") {
        Some("a RAR")
    } else {
        None
    }
}

/// The format `path` is read as with `opts`: forced, or detected from its first bytes.
/// `None` when that cannot be told here (not a regular file, unreadable, unrecognised):
/// the ingest then says why.
pub fn format_of_file(path: &Path, opts: &IngestOptions) -> Option<Format> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    if let Some(f) = opts.format.filter(|f| *f != Format::Prv) {
        return Some(f);
    }
    let mut input = Input::open(path).ok()?;
    let prefix = input.peek(64 << 10).ok()?;
    format_of(prefix, "", opts).ok()
}
