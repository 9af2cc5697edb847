//! `tracedb report`: a capture's timing report as HTML, Markdown or JSON, optionally against a
//! baseline capture. Exit status 3 when the comparison finds a regression or a new deadline
//! miss (for CI gates); the report is written first either way.
use super::ArchiveArg;
use crate::report::{self, Options};
use crate::store::Archive;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Regressions and new misses named in the error message; the report lists them all.
const REGRESSIONS_SHOWN: usize = 10;

/// Write a timing report of a capture (HTML, Markdown or JSON, by the extension of -o).
///
/// With --baseline, every figure is shown against the baseline capture, and the exit status
/// is 3 when a figure regressed beyond --threshold or a task has new deadline misses.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    archive: ArchiveArg,
    /// Capture to report on (id, name, or tag KEY=VALUE that only it has); default: the
    /// most recent capture.
    #[arg(long, value_name = "ID|NAME|KEY=VALUE")]
    capture: Option<String>,
    /// Capture to compare with (id, name, or tag KEY=VALUE that only it has).
    #[arg(long, value_name = "ID|NAME|KEY=VALUE")]
    baseline: Option<String>,
    /// Deadline file (`entity,deadline` lines, as `ingest --deadlines` reads them), applied to
    /// both captures; where it names a task it wins over the deadlines stored at ingest.
    #[arg(long, value_name = "FILE")]
    deadlines: Option<PathBuf>,
    /// Growth of a figure over the baseline that counts as a regression, in percent (`5%`,
    /// `2.5`).
    #[arg(long, default_value = "5%", value_name = "PERCENT")]
    threshold: String,
    /// Output file: .html, .md or .json.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

/// The output forms, picked by extension.
enum Form {
    Html,
    Markdown,
    Json,
}

/// Runs `report`.
pub fn run(args: Args) -> Result<()> {
    let form = match args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("html" | "htm") => Form::Html,
        Some("md" | "markdown") => Form::Markdown,
        Some("json") => Form::Json,
        _ => {
            return Err(Error::Usage(format!(
                "-o {}: the extension picks the form: .html, .md or .json",
                args.output.display()
            )))
        }
    };
    let threshold_pct = parse_threshold(&args.threshold)?;
    let archive = Archive::open(&args.archive.archive)?;
    let find = |key: &str| archive.manifest.resolve(key, &archive.dir).cloned();
    let capture = match &args.capture {
        Some(c) => find(c)?,
        None => {
            let last =
                archive.manifest.captures.iter().max_by_key(|c| c.capture_id).cloned().ok_or_else(
                    || Error::Usage(format!("no capture in {}", archive.dir.display())),
                )?;
            // A report is of one capture: one who asked for a report on a whole archive
            // learns which one it is, and how to pick another.
            let n = archive.manifest.captures.len();
            if n > 1 {
                crate::say!(
                    "tracedb: note: a report is of one capture: capture {} '{}', the most \
                         recent of {n} (--capture picks another)",
                    last.capture_id,
                    last.name
                );
            }
            last
        }
    };
    let baseline = args.baseline.as_deref().map(find).transpose()?;
    let conn = archive.connect()?;
    if let Some(d) = &args.deadlines {
        super::query::load_deadlines(&conn, d)?;
    }
    let r = report::collect(
        &conn,
        &capture,
        baseline.as_ref(),
        &Options {
            threshold_pct,
            deadlines: args.deadlines.as_ref().map(|d| d.display().to_string()),
        },
    )?;
    if let Some(note) = r.comparison.as_ref().and_then(|c| c.deadlines_note.as_ref()) {
        crate::say!("tracedb: note: {note}");
    }
    let body = match form {
        Form::Html => report::html::render(&r),
        Form::Markdown => report::markdown::render(&r),
        Form::Json => report::json::render(&r),
    };
    write_atomic(&args.output, body.as_bytes())?;
    match &r.comparison {
        Some(c) if c.failed() => {
            // Two captures of one name (the same system captured again) are told apart by id.
            let base = baseline.unwrap_or_else(|| capture.clone());
            let (this, that) = if base.name == capture.name {
                (
                    format!("{} (capture {})", capture.name, capture.capture_id),
                    format!("{} (capture {})", base.name, base.capture_id),
                )
            } else {
                (capture.name.clone(), base.name.clone())
            };
            Err(Error::Regression(format!(
                "{this} against baseline {that}: {} (all of them in {})",
                c.describe(REGRESSIONS_SHOWN),
                args.output.display()
            )))
        }
        _ => Ok(()),
    }
}

/// `5%`, `5` or `2.5%` as a percentage.
fn parse_threshold(s: &str) -> Result<f64> {
    s.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| Error::Usage(format!("--threshold {s}: expected a percentage such as 5%")))
}

/// Writes through a temporary file beside `path`, so a reader never sees half a report.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    // As an export writes: a regular file is replaced only by a complete one, a symlink is
    // followed, a FIFO or /dev/stdout is written into.
    let out = crate::store::out_file::OutFile::create(path)?;
    let written = out
        .open()
        .and_then(|mut f| std::io::Write::write_all(&mut f, bytes).map_err(|e| Error::io(path, e)));
    out.commit(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse() {
        assert_eq!(parse_threshold("5%").unwrap(), 5.0);
        assert_eq!(parse_threshold("2.5").unwrap(), 2.5);
        assert!(parse_threshold("-1%").is_err());
        assert!(parse_threshold("fast").is_err());
    }
}
