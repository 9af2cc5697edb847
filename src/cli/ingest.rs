//! `tracedb ingest`: read trace files into the archive, one capture per file, with a
//! progress bar on a terminal and a one-line summary per capture.
use super::ArchiveArg;
use crate::ingest::{diag::Severity, Format};
use crate::store::ingest::{ingest_path, IngestOptions, IngestReport};
use crate::store::Archive;
use crate::{Error, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Read trace files into the archive (one capture per file).
///
/// The format is detected from the content (compression too: plain, .gz, .zst, .bz2, .xz, or
/// a .zip holding one file).
/// Record-level problems become rows of the `diagnostics` table and are counted in the
/// summary; `--strict` makes them fatal. A failed ingest leaves the archive unchanged.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Trace files to read (a Paraver .prv finds its .pcf and .row beside it, a S.Ha.R.K.
    /// 0trace.dat its chunk files 1trace.dat, 2trace.dat...), or an ovni output directory
    /// (its thread.prv and cpu.prv become one capture; with --format ovni, or when the
    /// emulator's output is not there, its binary streams do); `-` is standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    archive: ArchiveArg,
    /// Input format, in any case: auto (detect), btf, prv (also `paraver`, `extrae`), qs (also
    /// `qspy`), ovni (ovni's binary runtime
    /// streams, the input of ovniemu: give the trace directory), hw, shark. QS has no magic number: it is
    /// detected only when its first frames check; hw (hardware-trace CSV exports) only when
    /// its header row is the S32DS trace viewer's or a TRACE32 list's; a S.Ha.R.K. chunk
    /// dump only when its first records are all valid.
    #[arg(long, default_value = "auto", value_name = "FORMAT")]
    format: String,
    /// QS target ticks or S.Ha.R.K. TSC cycles per second (1000000, 32768Hz, 10kHz,
    /// 1MHz); without it (and, for S.Ha.R.K., without a cycles_per_msec record) times stay
    /// in ticks (captures.time_unit = tick).
    #[arg(long, value_name = "HZ", value_parser = parse_tick_rate)]
    tick_rate: Option<u64>,
    /// QS: a QSPY dictionary file (.dic: -v version and size options, Obj/Fun/Usr/Sig
    /// dictionaries) instead of the x.dic found beside x.bin; kept with the capture.
    #[arg(long, value_name = "FILE")]
    qs_dic: Option<PathBuf>,
    /// hw: an ELF file whose .symtab (functions and variables, with sizes) names the
    /// export's addresses; kept with the capture. Implies --format hw.
    #[arg(long, value_name = "FILE")]
    hw_elf: Option<PathBuf>,
    /// hw: a JSON mapping file (columns, time encoding and unit, current-task variables,
    /// task ids, runnables, ISRs, signals; see the README); kept with the capture. Implies
    /// --format hw.
    #[arg(long, value_name = "FILE")]
    hw_map: Option<PathBuf>,
    /// Name of the capture (default: the file name without extensions, with them when it
    /// would be a number: `5.btf`); one file only.
    #[arg(long)]
    name: Option<String>,
    /// Fail (exit status 1) on the first diagnostic of severity warning or worse (error,
    /// data_loss: a truncated input) instead of recording it; info rows never stop it.
    #[arg(long)]
    strict: bool,
    /// Deadline file stored with the capture: `entity,deadline` lines (`TASK_10MS,10ms`; units
    /// ps, ns, us, ms, s, a bare number is ns; globs allowed), used by deadline_misses and
    /// deadline_summary (without one: the activation period).
    #[arg(long, value_name = "FILE")]
    deadlines: Option<PathBuf>,
    /// A label for the capture, KEY=VALUE (repeatable), shown in `captures`.
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    tags: Vec<String>,
    /// Ingest even when identical bytes are already in the archive (as a new capture).
    #[arg(long)]
    force: bool,
    /// Do not keep a (zstd-compressed) copy of the source files in the archive; such a
    /// capture cannot be rebuilt by `tracedb reingest`.
    #[arg(long)]
    no_keep_source: bool,
    /// zstd level of the archive's Parquet files, 1 (fastest) to 22 (smallest). The default,
    /// 3, keeps ingest fast; 19 makes the tables about 10% smaller and ingest several times
    /// slower (`tracedb reingest --all --zstd-level 19` recompresses an archive later).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..=22))]
    zstd_level: Option<i32>,
    /// A file that cannot be ingested (bad input, a diagnostic under --strict, a file that
    /// cannot be read) is reported and skipped, and the next file is read; the exit status
    /// is 1 at the end when any was skipped. Without it the first such file stops the
    /// command (the files before it stay in the archive).
    #[arg(long, short = 'k')]
    keep_going: bool,
}

/// `--tick-rate` as clap parses it.
fn parse_tick_rate(s: &str) -> std::result::Result<u64, String> {
    crate::ingest::qs::parse_tick_rate(s)
}

/// Runs `ingest`.
pub fn run(mut args: Args) -> Result<()> {
    // `-` is standard input, as `sql -f -` reads it: read through /dev/stdin (a pipe read
    // once, as `ingest <(zcat t.btf.gz)` is), so the capture is named `stdin` unless --name
    // says otherwise. It was "-: No such file or directory".
    let stdin = args.files.iter().filter(|f| f.as_os_str() == "-").count();
    if stdin > 1 {
        return Err(Error::Usage("- (standard input) is given twice: it can be read once".into()));
    }
    for f in &mut args.files {
        if f.as_os_str() == "-" {
            *f = PathBuf::from("/dev/stdin");
        }
    }
    // In any case, as the format names are (`--format AUTO` was an unknown format).
    let format = match args.format.trim().to_ascii_lowercase().as_str() {
        "auto" => None,
        _ => match Format::parse(&args.format) {
            Some(f) => Some(f),
            None => {
                return Err(Error::Usage(format!(
                    "unknown format '{}' (expected auto, btf, prv, qs, ovni, hw, shark)",
                    args.format
                )))
            }
        },
    };
    // The ELF and mapping are read by the hw importer only: they make the input an export
    // (a mapped CSV is not detected, and could pass for BTF), and with another format they
    // would be silently ignored.
    let format = match (format, args.hw_elf.is_some() || args.hw_map.is_some()) {
        (None, true) => Some(Format::Hw),
        (Some(f), true) if f != Format::Hw => {
            return Err(Error::Usage(format!(
                "--hw-elf and --hw-map are for hardware-trace exports (--format hw), not \
                 --format {}",
                f.name()
            )))
        }
        (f, _) => f,
    };
    // With a format given, an option its importer does not read is a mistake; detected
    // formats get a note per file instead (a command may name files of several formats).
    if let Some(f) = format {
        if let Some(o) = unused_options(&args, f.name()).first() {
            return Err(Error::Usage(format!("{o} is not read by --format {}", f.name())));
        }
    }
    if args.name.is_some() && args.files.len() > 1 {
        return Err(Error::Usage("--name names one capture; give one file with it".into()));
    }
    // Everything that can be checked without the archive is, before it is created or
    // locked: a mistyped option leaves no archive behind.
    let deadlines = match &args.deadlines {
        Some(f) => crate::ingest::deadlines::read(f)?,
        None => Vec::new(),
    };
    let mut tags = std::collections::BTreeMap::new();
    for t in &args.tags {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--tag {t}: expected KEY=VALUE")))?;
        let k = k.trim();
        if k.is_empty() {
            return Err(Error::Usage(format!("--tag {t}: the key is empty (expected KEY=VALUE)")));
        }
        if let Some(old) = tags.insert(k.to_string(), v.trim().to_string()) {
            return Err(Error::Usage(format!(
                "--tag {k} is given twice ({k}={old}, then {t}): give each key once"
            )));
        }
    }
    if args.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(Error::Usage("--name is empty: give the capture a name".into()));
    }
    // `--capture N` reads N as an id first: a name that is a number could not be chosen.
    if let Some(n) = args.name.as_deref().filter(|n| crate::store::ingest::is_number(n)) {
        return Err(Error::Usage(format!(
            "--name {n}: a capture name cannot be a number (commands read it as a capture id)"
        )));
    }
    for file in &args.files {
        let meta = std::fs::metadata(file).map_err(|e| Error::io(file, e))?;
        if meta.is_dir() {
            // Not an ovni output directory, or one with two copies of a trace.
            crate::store::ingest::capture_dir_as(file, format)?;
        }
    }
    // Ctrl-C stops the file being read and takes it back, as a failed ingest does.
    crate::signals::watch(crate::signals::Ending::Soon);
    let (mut archive, lock) = Archive::open_for_write(&args.archive.archive)?;
    let opts = IngestOptions {
        format,
        name: args.name.clone(),
        strict: args.strict,
        deadlines,
        tags,
        keep_source: !args.no_keep_source,
        replace: None,
        zstd_level: args.zstd_level,
        qs: crate::ingest::qs::QsOptions { tick_rate: args.tick_rate, dic: args.qs_dic.clone() },
        shark: crate::ingest::shark::SharkOptions {
            tick_rate: args.tick_rate,
            ..Default::default()
        },
        hw: crate::ingest::hw::HwOptions { elf: args.hw_elf.clone(), map: args.hw_map.clone() },
    };
    // Files an earlier capture of this command read as its companions (S.Ha.R.K. chunk
    // files given with their 0trace.dat): not stored twice.
    let mut read_with: Vec<(std::path::PathBuf, String)> = Vec::new();
    let canon = |f: &std::path::Path| f.canonicalize().unwrap_or_else(|_| f.to_path_buf());
    let named: Vec<PathBuf> = args.files.iter().map(|f| canon(f)).collect();
    // Files --keep-going skipped, with their errors said as they happened.
    let mut skipped: Vec<String> = Vec::new();
    for (i, file) in args.files.iter().enumerate() {
        if let Some((_, by)) = read_with.iter().find(|(p, _)| *p == canon(file)) {
            crate::say!("{}: read as a chunk file of {by}; not ingested again", file.display());
            continue;
        }
        // A later chunk file of a S.Ha.R.K. run is read with the run's chunk 0 beside it:
        // when that is named too (in whatever order) or its run is already a capture, it is
        // not read again alone.
        let run_first = crate::ingest::shark::first_chunk_of(file).filter(|(_, first)| {
            crate::store::ingest::format_of_file(first, &opts) == Some(Format::Shark)
        });
        if let Some((k, first)) = run_first.as_ref().filter(|(_, f)| named.contains(&canon(f))) {
            crate::say!(
                "{}: chunk file {k} of the run of {}, which is named too: taken with that run, not \
                 ingested alone",
                file.display(),
                first.display()
            );
            continue;
        }
        let identical = if args.force {
            Ok(None)
        } else {
            let whole = run_first.as_ref().map_or(file.as_path(), |(_, first)| first.as_path());
            crate::store::ingest::find_identical_as(&archive, whole, &opts)
        };
        let identical = match identical {
            Ok(c) => c,
            Err(e) => {
                if let Err(cleanup) = archive.discard_if_unused(lock) {
                    crate::say!("tracedb: warning: {cleanup}");
                }
                return Err(e);
            }
        };
        if let Some(c) = identical {
            let whole = run_first.as_ref().map_or(file.as_path(), |(_, first)| first.as_path());
            if c.format == Format::Shark.name() {
                let by = format!("capture {} '{}'", c.capture_id, c.name);
                for p in crate::ingest::shark::chunk_paths(whole) {
                    read_with.push((canon(&p), by.clone()));
                }
            }
            match &run_first {
                Some((k, first)) => crate::say!(
                    "{}: chunk file {k} of the run of {}, which is capture {} '{}' (same \
                     SHA-256); not stored again (--force ingests it alone)",
                    file.display(),
                    first.display(),
                    c.capture_id,
                    c.name
                ),
                None => crate::say!(
                    "{}: identical to capture {} '{}' (same SHA-256); not stored again (--force ingests it anyway)",
                    file.display(),
                    c.capture_id,
                    c.name
                ),
            }
            note_unused(&args, file, &c.format);
            continue;
        }
        let mut bar = Bar::new(file);
        let result =
            ingest_path(&mut archive, file, &opts, &mut |done, total| bar.update(done, total));
        bar.finish();
        let report = match result {
            Ok(r) => r,
            // A problem of this file's, not of the archive or the machine: said, and the
            // next file read.
            Err(e) if args.keep_going && skippable(&e, &args) => {
                crate::say!("tracedb: error: {e}");
                crate::say!("{}: not ingested (--keep-going: on to the next file)", file.display());
                skipped.push(file.display().to_string());
                continue;
            }
            Err(e) => {
                // Captures before this file are committed; say so, and what was not read.
                let rest: Vec<String> =
                    args.files.iter().skip(i + 1).map(|f| f.display().to_string()).collect();
                if i > 0 || !rest.is_empty() {
                    // Said before the error itself (which `main` prints): point down to it, and
                    // claim files before it only when there were some.
                    let before = if i > 0 {
                        "the files before it are in the archive (see above)"
                    } else {
                        "nothing was stored"
                    };
                    crate::say!(
                        "{} stopped the ingest (error below): {before}; not ingested: {}",
                        file.display(),
                        if rest.is_empty() { "none".to_string() } else { rest.join(", ") }
                    );
                }
                // A first ingest that stored nothing takes back the archive it created.
                if let Err(cleanup) = archive.discard_if_unused(lock) {
                    crate::say!("tracedb: warning: {cleanup}");
                }
                // Whatever error the signal caused on its way (a cut read under --strict).
                if let Some(sig) = crate::signals::interrupted() {
                    crate::say!("tracedb: {}: {}", file.display(), Error::Interrupted(sig));
                    crate::signals::end_by_signal(sig);
                }
                return Err(e);
            }
        };
        crate::say!("{}", summary_line(&report));
        note_unused(&args, file, &report.capture.format);
        if let (true, Some(d)) = (report.deadlines_match_nothing, &args.deadlines) {
            crate::say!(
                "{}: note: no pattern of --deadlines {} names a task or ISR of this capture: its \
                 deadlines stay implicit (the activation period)",
                file.display(),
                d.display()
            );
        }
        if report.capture.format == Format::Shark.name() {
            let by = format!("capture {} '{}'", report.capture.capture_id, report.capture.name);
            for p in crate::ingest::shark::chunk_paths(file) {
                read_with.push((canon(&p), by.clone()));
            }
        }
    }
    if !skipped.is_empty() {
        // Every file skipped: the archive this command created holds nothing.
        if let Err(cleanup) = archive.discard_if_unused(lock) {
            crate::say!("tracedb: warning: {cleanup}");
        }
        return Err(Error::input(
            "ingest",
            "",
            format!(
                "{} of {} files not ingested (--keep-going; their errors are above): {}",
                skipped.len(),
                args.files.len(),
                skipped.join(", ")
            ),
        ));
    }
    drop(lock);
    // A signal after the last file was committed: it is in the archive, and said above.
    if let Some(sig) = crate::signals::interrupted() {
        crate::signals::end_by_signal(sig);
    }
    Ok(())
}

/// True when `e` is the file's own problem, which `--keep-going` skips: bad input (a
/// `--strict` diagnostic included) or an I/O error on anything but the archive. Not an
/// interrupted ingest, nor a damaged archive or a failing engine, which the next file
/// would meet too.
fn skippable(e: &Error, args: &Args) -> bool {
    if crate::signals::interrupted().is_some() {
        return false;
    }
    match e {
        Error::Input { .. } => true,
        Error::Io { path, .. } => !path.starts_with(&args.archive.archive),
        _ => false,
    }
}

/// The format-specific options given that the importer of `format` does not read.
fn unused_options(args: &Args, format: &str) -> Vec<&'static str> {
    let mut unused = Vec::new();
    let (qs, shark) = (Format::Qs.name(), Format::Shark.name());
    if args.tick_rate.is_some() && format != qs && format != shark {
        unused.push("--tick-rate (QS and S.Ha.R.K. only)");
    }
    if args.qs_dic.is_some() && format != qs {
        unused.push("--qs-dic (QS only)");
    }
    unused
}

/// Says which options given were not used for `file`, read (or found stored) as `format`.
fn note_unused(args: &Args, file: &std::path::Path, format: &str) {
    for o in unused_options(args, format) {
        crate::say!("{}: note: {o} was not used: the file is {format}", file.display());
    }
}

/// Progress bar that appears only on a terminal and only when reading takes more than a
/// moment.
struct Bar {
    started: Instant,
    label: String,
    bar: Option<indicatif::ProgressBar>,
}

impl Bar {
    fn new(file: &std::path::Path) -> Self {
        Bar { started: Instant::now(), label: file.display().to_string(), bar: None }
    }

    fn update(&mut self, done: u64, total: u64) {
        if self.bar.is_none() && self.started.elapsed() > Duration::from_millis(500) {
            let target = indicatif::ProgressDrawTarget::stderr();
            if !target.is_hidden() {
                // The rate and eta are the average since the file was opened: indicatif's
                // own estimate, fed the reader's large steps (and the half second of reading
                // before the bar appears as one step), showed hundreds of GiB/s and eta 0s.
                let b = indicatif::ProgressBar::with_draw_target(Some(total), target)
                    .with_elapsed(self.started.elapsed());
                let style = indicatif::ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} {rate} eta {remaining}",
                )
                .map(|s| s.with_key("rate", average_rate).with_key("remaining", average_eta))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                b.set_style(style.progress_chars("=> "));
                b.set_message(self.label.clone());
                self.bar = Some(b);
            }
        }
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// Bytes per second of a bar, on average since it started.
fn bytes_per_sec(state: &indicatif::ProgressState) -> f64 {
    let secs = state.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let done = state.pos() as f64;
    if secs > 0.0 {
        done / secs
    } else {
        0.0
    }
}

/// `{rate}` of the ingest bar.
fn average_rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rate = bytes_per_sec(state) as u64;
    let _ = write!(w, "{}/s", indicatif::HumanBytes(rate));
}

/// `{remaining}` of the ingest bar: the bytes left at the average rate.
fn average_eta(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let rate = bytes_per_sec(state);
    #[allow(clippy::cast_precision_loss)]
    let left = state.len().unwrap_or(0).saturating_sub(state.pos()) as f64;
    if rate > 0.0 {
        let _ = write!(w, "{:#}", indicatif::HumanDuration(Duration::from_secs_f64(left / rate)));
    } else {
        let _ = write!(w, "?");
    }
}

/// Human-readable byte count.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    #[allow(clippy::cast_precision_loss)]
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The one-line summary printed after each capture.
pub fn summary_line(r: &IngestReport) -> String {
    let c = &r.capture;
    let diags = if r.diagnostics.is_empty() {
        "no diagnostics".to_string()
    } else {
        let parts: Vec<String> =
            r.diagnostics.iter().map(|(k, s, n)| format!("{n} {k} ({})", s.as_str())).collect();
        format!("diagnostics: {}", parts.join(", "))
    };
    let secs = r.elapsed.as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let rate = if secs > 0.0 { c.source_bytes as f64 / secs / 1e6 } else { 0.0 };
    let errors: u64 = r.diagnostics.iter().filter(|d| d.1 >= Severity::Warning).map(|d| d.2).sum();
    let flag = if errors > 0 { " (see the diagnostics table)" } else { "" };
    format!(
        "capture {} '{}' ({}): {} events, {} entities, {} intervals, {} instances, {} lock requests, {} messages; {}{}; \
         {} in, {} archive; {:.2} s ({:.1} MB/s)",
        c.capture_id,
        c.name,
        c.format,
        c.event_count,
        r.entities,
        r.intervals,
        r.instances,
        r.lock_requests,
        r.messages,
        diags,
        flag,
        human_bytes(c.source_bytes),
        human_bytes(c.archive_bytes()),
        secs,
        rate
    )
}
