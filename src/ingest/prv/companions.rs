//! The `.pcf` and `.row` companions of a `.prv`: looked for beside it (plain or compressed,
//! any of [`COMPRESSED_SUFFIXES`]), read whole (at most 128 MiB of text each), hashed from
//! the bytes read, and parsed ([`Pcf`], [`Row`]).
//!
//! Output: [`Companions`]: the names and labels, the files found and those missing, and the
//! problems met (`unreadable_companion`, `invalid_utf8`, `malformed_companion`,
//! `relabelled_companion`), reported
//! when the trace is read. A companion that is there but cannot be read is found (and
//! hashed as it is on disk), not missing.
use super::pcf::{Notes, Pcf};
use super::row::Row;
use crate::ingest::diag::{Diagnostic, Severity};
use crate::ingest::input::{strip_compressed, Digest256, Input, COMPRESSED_SUFFIXES};
use crate::model::Pos;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The `.pcf` and `.row` read beside a `.prv`.
#[derive(Debug, Default)]
pub struct Companions {
    /// Names, when the `.pcf` was found.
    pub pcf: Option<Pcf>,
    /// Labels, when the `.row` was found.
    pub row: Option<Row>,
    /// Path of the `.row` read, for diagnostics about its lines.
    pub row_path: Option<PathBuf>,
    /// Paths of the companions found (also those that could not be read: they are part
    /// of what was ingested, and of its hash).
    pub found: Vec<PathBuf>,
    /// Paths looked for and not found.
    pub missing: Vec<PathBuf>,
    /// Problems in the companions, reported when the trace is read.
    pub problems: Vec<Diagnostic>,
    /// Problems met more often than the diagnostics table lists (a `.pcf` of many bad
    /// lines): each is reported as many more times, without its own text.
    pub repeats: Vec<(Diagnostic, u64)>,
    /// Hash and size on disk of each file of `found`, taken from the bytes read, so that a
    /// companion changed before it is hashed again or kept is told.
    pub digests: Vec<Digest256>,
    /// Bytes of text of the companions read (decompressed).
    pub text_bytes: u64,
}

/// `x.prv`, `x.prv.gz`, `x.prv.zst` (any of [`COMPRESSED_SUFFIXES`]) -> `x.<ext>` in the
/// same directory.
pub fn companion_path(prv: &Path, ext: &str) -> PathBuf {
    let name = prv.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = strip_compressed(&name);
    if stem.len() > 4 && stem.get(stem.len() - 4..).is_some_and(|e| e.eq_ignore_ascii_case(".prv"))
    {
        stem = stem.get(..stem.len() - 4).unwrap_or(stem);
    }
    prv.with_file_name(format!("{stem}.{ext}"))
}

/// Most text read of a companion (decompressed).
const MAX_COMPANION: u64 = 128 << 20;

/// A companion's text (a byte-order mark dropped), the hash of its bytes on disk, and
/// whether bytes that are not UTF-8 were replaced.
fn read_text(path: &Path) -> std::io::Result<(String, Digest256, u64, bool)> {
    let mut input = Input::open(path)?;
    let mut bytes = Vec::new();
    (&mut input).take(MAX_COMPANION + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_COMPANION {
        // A .pcf or .row is kilobytes to megabytes: this is not one (or a decompression
        // bomb), and holding it would break the memory bound.
        return Err(std::io::Error::other(format!(
            "more than {} MiB of text: not read",
            MAX_COMPANION >> 20
        )));
    }
    let digest = input.finish()?;
    let len = bytes.len() as u64;
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let lossy = std::str::from_utf8(text).is_err();
    Ok((String::from_utf8_lossy(text).into_owned(), digest, len, lossy))
}

/// What is lost without the companion at `path` (a `.pcf` or a `.row`).
pub(super) fn without(path: &Path) -> &'static str {
    let name = path.to_string_lossy();
    if strip_compressed(&name).ends_with(".pcf") {
        "state and event names and value labels are shown as numbers"
    } else {
        "threads and CPUs are named by their numbers"
    }
}

/// The `.pcf` or `.row` file (`ext`) beside `prv`, plain or compressed (`.gz`, `.zst`, any of
/// [`COMPRESSED_SUFFIXES`]), when there is one.
fn companion_file(prv: &Path, ext: &str) -> Option<PathBuf> {
    let plain = companion_path(prv, ext);
    let packed: Vec<PathBuf> = COMPRESSED_SUFFIXES
        .iter()
        .map(|c| PathBuf::from(format!("{}{c}", plain.display())))
        .collect();
    std::iter::once(plain).chain(packed).find(|p| p.is_file())
}

impl Companions {
    /// The companion files beside `prv` that [`Companions::find`] would read, in its order,
    /// without reading them.
    pub fn paths(prv: &Path) -> Vec<PathBuf> {
        ["pcf", "row"].iter().filter_map(|ext| companion_file(prv, ext)).collect()
    }

    /// Looks for the `.pcf` and `.row` beside `prv` (also compressed: `.pcf.gz`, `.pcf.zst`).
    pub fn find(prv: &Path) -> Companions {
        let mut c = Companions::default();
        for ext in ["pcf", "row"] {
            let plain = companion_path(prv, ext);
            let hit = companion_file(prv, ext).map(|p| {
                let text = read_text(&p);
                (p, text)
            });
            match hit {
                Some((p, Err(e))) => {
                    // A companion that is there but cannot be read (a truncated .gz) is not
                    // missing: say what went wrong with which file.
                    c.problems.push(Diagnostic {
                        severity: Severity::Warning,
                        kind: "unreadable_companion",
                        pos: Pos::None,
                        ts: None,
                        message: format!("{}: {e}: {}", p.display(), without(&p)),
                    });
                    // Hashed as it is on disk (it is part of what was ingested), if it can be.
                    if let Ok(d) = crate::ingest::input::file_digest(&p) {
                        c.digests.push(d);
                        c.found.push(p);
                    }
                }
                Some((p, Ok((text, digest, len, lossy)))) => {
                    c.digests.push(digest);
                    c.text_bytes += len;
                    if lossy {
                        c.problems.push(Diagnostic {
                            severity: Severity::Warning,
                            kind: "invalid_utf8",
                            pos: Pos::None,
                            ts: None,
                            message: format!(
                                "{}: bytes that are not UTF-8, replaced by U+FFFD in the names \
                                 it gives",
                                p.display()
                            ),
                        });
                    }
                    if ext == "pcf" {
                        let pcf = Pcf::parse(&text);
                        c.note_pcf(&p, Severity::Warning, "malformed_companion", &pcf.malformed);
                        c.note_pcf(&p, Severity::Info, "relabelled_companion", &pcf.relabelled);
                        c.pcf = Some(pcf);
                    } else {
                        let row = Row::parse(&text);
                        for (line, problem) in &row.problems {
                            c.problems.push(Diagnostic {
                                severity: Severity::Warning,
                                kind: "malformed_companion",
                                pos: Pos::None,
                                ts: None,
                                message: format!(
                                    "{}:{line}: {problem}: the labels found are used",
                                    p.display()
                                ),
                            });
                        }
                        c.row = Some(row);
                        c.row_path = Some(p.clone());
                    }
                    c.found.push(p);
                }
                None => c.missing.push(plain),
            }
        }
        c
    }

    /// The `notes` of the `.pcf` at `path` as diagnostics of `kind`: one per note kept, with
    /// its line, and the rest as repeats.
    fn note_pcf(&mut self, path: &Path, severity: Severity, kind: &'static str, notes: &Notes) {
        let diagnostic = |message| Diagnostic { severity, kind, pos: Pos::None, ts: None, message };
        for (line, note) in &notes.kept {
            self.problems.push(diagnostic(format!("{}:{line}: {note}", path.display())));
        }
        let more = notes.total.saturating_sub(notes.kept.len() as u64);
        if more > 0 {
            let message = format!("{}: a further line like these", path.display());
            self.repeats.push((diagnostic(message), more));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companions_beside_compressed_files() {
        assert_eq!(companion_path(Path::new("/a/b/t.prv.gz"), "pcf"), PathBuf::from("/a/b/t.pcf"));
        assert_eq!(companion_path(Path::new("cpu.prv"), "row"), PathBuf::from("cpu.row"));
    }

    #[test]
    fn a_corrupt_companion_is_reported_as_unreadable_not_missing() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let prv = dir.path().join("z1.prv");
        std::fs::write(&prv, "#Paraver (d):10_ns:0:1:1(1:1)\n").unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all("STATES\n1 Running\n".repeat(200).as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let pcf = dir.path().join("z1.pcf.gz");
        std::fs::write(&pcf, &gz[..gz.len() / 2]).unwrap();
        let c = Companions::find(&prv);
        assert!(c.pcf.is_none());
        assert_eq!(c.missing, [dir.path().join("z1.row")]);
        assert_eq!(c.found, std::slice::from_ref(&pcf));
        let msgs: Vec<_> =
            c.problems.iter().map(|d| (d.severity, d.kind, d.message.as_str())).collect();
        let expected = format!(
            "{}: gzip stream ends early (truncated file?): state and event names and value \
             labels are shown as numbers",
            pcf.display()
        );
        assert_eq!(msgs, [(Severity::Warning, "unreadable_companion", expected.as_str())]);
    }

    #[test]
    fn a_short_row_block_is_reported_with_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let prv = dir.path().join("t.prv");
        std::fs::write(&prv, "#Paraver (d):10_ns:1(3):1:1(2:1)\n").unwrap();
        std::fs::write(
            dir.path().join("t.row"),
            "LEVEL CPU SIZE 3\ncpuA\ncpuB\nLEVEL THREAD SIZE 2\nthA\nthB\n",
        )
        .unwrap();
        let c = Companions::find(&prv);
        assert_eq!(c.row.as_ref().and_then(|r| r.label("THREAD", 1)), Some("thB"));
        let msgs: Vec<_> = c.problems.iter().map(|d| (d.kind, d.message.as_str())).collect();
        let expected = format!(
            "{}:1: LEVEL CPU declares 3 labels, found 2 (the next LEVEL header is on line 4): \
             the labels found are used",
            dir.path().join("t.row").display()
        );
        assert_eq!(msgs, [("malformed_companion", expected.as_str())]);
    }

    #[test]
    fn pcf_lines_skipped_or_relabelled_are_reported_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let prv = dir.path().join("t.prv");
        std::fs::write(&prv, "#Paraver (d):10_ns:1(1):1:1(1:1)\n").unwrap();
        let mut pcf = String::from("STATES\n1 Running\n1 Busy\n");
        pcf.push_str(&"Running\n".repeat(crate::ingest::diag::ROWS_PER_KIND + 2));
        std::fs::write(dir.path().join("t.pcf"), pcf).unwrap();
        let c = Companions::find(&prv);
        let path = dir.path().join("t.pcf");
        let msgs: Vec<_> =
            c.problems.iter().map(|d| (d.severity, d.kind, d.message.clone())).collect();
        assert_eq!(msgs.len(), crate::ingest::diag::ROWS_PER_KIND + 1);
        assert_eq!(
            msgs[0],
            (
                Severity::Warning,
                "malformed_companion",
                format!(
                    "{}:4: `Running` is not a line of STATES (`<state> <label>`): skipped",
                    path.display()
                )
            )
        );
        assert_eq!(
            msgs.last().cloned().unwrap(),
            (
                Severity::Info,
                "relabelled_companion",
                format!(
                    "{}:3: state 1 labelled `Busy`, after `Running` on an earlier line: `Busy` \
                     is used",
                    path.display()
                )
            )
        );
        let repeats: Vec<_> = c.repeats.iter().map(|(d, n)| (d.kind, *n)).collect();
        assert_eq!(repeats, [("malformed_companion", 2)]);
    }
}
