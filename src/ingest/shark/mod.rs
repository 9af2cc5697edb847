//! S.Ha.R.K. "new tracer" (FTrace) logs: the binary event records of the S.Ha.R.K. real-time
//! kernel (i386, little-endian), as its disk writer dumps them or its UDP sender sends them.
//!
//! Spec digest (FORMATS.md §4; reference: the kernel's `tracer/` sources, FTrace_types.h,
//! FTrace.h, FTrace_disk.c, and the manual "The S.Ha.R.K. New Tracer"):
//!
//! | off | size | field |
//! |---|---|---|
//! | 0 | u16 | type: event code in the low byte (`type & 0xFF`); 0x8000 = fast variant |
//! | 2 | u16 | par1: task context, interrupt number, ipoint number |
//! | 4 | u32 | TSC high dword |
//! | 8 | u32 | TSC low dword |
//! | 12 | u32 | par2: pid, level, mutex, clk-per-ms (stale in the fast variant) |
//!
//! `12 00 | 03 00 | 00 00 00 00 | 40 42 0F 00 | 00 00 00 00` is `task_activate` of context 3
//! at TSC 1,000,000.
//!
//! Forms: a chunk dump (`<index><fname>`, e.g. `0trace.dat`: records only, slots whose type
//! word is 0 are empty) and a capture of the UDP datagrams (each a 24-byte header starting
//! `TRACER-V1.0\0`, then its records). The chunk files of one run are one capture: the file
//! given is chunk 0 and its siblings `1trace.dat`, `2trace.dat`... are read with it (hashed
//! and kept as companions). Records are buffered (up to [`MAX_BUFFERED`]) and sorted by TSC,
//! stable, since cyclic chunks wrap; then mapped to BTF-shaped events (`mapper.rs`).
mod mapper;
pub mod record;

use super::input::{Digest256, Input};
use super::{Diagnostic, Severity, Sink};
use crate::model::Pos;
use crate::{Error, Result};
use mapper::Mapper;
use record::{Form, Item, Reader, Rec, RECORD};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// S.Ha.R.K. options from the command line.
#[derive(Debug, Clone, Default)]
pub struct SharkOptions {
    /// TSC cycles per second (`--tick-rate`), used when the log has no `cycles_per_msec`.
    pub tick_rate: Option<u64>,
    /// Whether a later chunk file read alone belongs to a run whose chunk 0 is beside it
    /// (`chunk_of_run`): `None` looks beside the file (ingest); `Some` is what the first
    /// ingest found (`reingest`, whose extracted copy has no run beside it).
    pub chunk_of_run: Option<bool>,
}

/// `captures.meta` key naming the run's chunk 0 (as the file was given) when a later chunk
/// file was read alone beside it, so that `reingest` warns alike.
pub const META_CHUNK_OF_RUN: &str = "shark.chunk_of_run";

/// Records sorted together: 8,388,608 (128 MiB of dump; 32 bytes each buffered, plus the
/// stable sort's half-size scratch: about 384 MiB at most). A chunk
/// is a buffer in the target's RAM, so a real run fits many times over; beyond it, records
/// are sorted and mapped in windows of this size (`too_many_records`).
pub const MAX_BUFFERED: usize = 1 << 23;

/// Chunk files of one run read at most.
const MAX_CHUNKS: u32 = 4096;

/// True when `prefix` is a S.Ha.R.K. log: a UDP capture (its magic), or a chunk dump with
/// strong evidence, since a dump has no magic: at least 8 records, every non-empty one with
/// a known event code (high byte 0 or 0x80) and a TSC below 2^62 (decades of cycles at GHz),
/// at most 2 drops of the TSC (a wrapped cyclic chunk has one), a TSC that is not always 0,
/// and, when the prefix is the whole file, a size that is a multiple of 16. Text never
/// passes: its type words have a printable high byte.
pub fn sniff(prefix: &[u8]) -> bool {
    if prefix.starts_with(record::MAGIC) {
        return true;
    }
    // 64 KiB is what detection reads: a shorter prefix is the whole file.
    let whole = prefix.len() < 64 << 10;
    if whole && !prefix.len().is_multiple_of(RECORD) {
        return false;
    }
    let (mut records, mut drops, mut nonzero, mut last) = (0usize, 0usize, false, None);
    for b in prefix.chunks_exact(RECORD) {
        let Ok(b) = <&[u8; RECORD]>::try_from(b) else { return false };
        let r = Rec::parse(b, 0, 0);
        if r.raw_type == 0 {
            continue;
        }
        if r.raw_type & 0x7F00 != 0 || record::name(r.code()).is_none() || r.tsc >= 1 << 62 {
            return false;
        }
        if last.is_some_and(|l| r.tsc < l) {
            drops += 1;
        }
        nonzero |= r.tsc != 0;
        last = Some(r.tsc);
        records += 1;
    }
    records >= 8 && drops <= 2 && nonzero
}

/// `0trace.dat` -> (0, "trace.dat"): the chunk index and the writer's file name.
fn chunk_index(path: &Path) -> Option<(u32, String)> {
    let name = path.file_name()?.to_str()?;
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    let (num, rest) = name.split_at(digits);
    if num.is_empty() || rest.is_empty() || (num.len() > 1 && num.starts_with('0')) {
        return None;
    }
    Some((num.parse().ok()?, rest.to_string()))
}

/// The chunk files read with `trace`: when it is chunk 0 (`0trace.dat`), its siblings
/// `1trace.dat`, `2trace.dat`... up to the first missing one.
pub fn chunk_paths(trace: &Path) -> Vec<PathBuf> {
    let Some((0, rest)) = chunk_index(trace) else { return Vec::new() };
    let mut out = Vec::new();
    for k in 1..MAX_CHUNKS {
        let p = trace.with_file_name(format!("{k}{rest}"));
        if !p.is_file() {
            break;
        }
        out.push(p);
    }
    out
}

/// For a later chunk file of a run (`1trace.dat`), its index and the run's chunk 0 beside it
/// (`0trace.dat`), when that is there: reading chunk 0 reads this file with it.
pub fn first_chunk_of(trace: &Path) -> Option<(u32, PathBuf)> {
    let (k, rest) = chunk_index(trace).filter(|(k, _)| *k > 0)?;
    let first = trace.with_file_name(format!("0{rest}"));
    // Not when a chunk file is missing between them (`chunk_gap`).
    (first.is_file() && chunk_paths(&first).iter().any(|p| p == trace)).then_some((k, first))
}

/// What was read besides the file given: its sibling chunk files.
#[derive(Debug, Default)]
pub struct Chunks {
    /// Each chunk file read, with the hash and size of its bytes on disk.
    pub files: Vec<(PathBuf, Digest256)>,
    /// Bytes read from them (after decompression).
    pub text_bytes: u64,
}

/// Records buffered for sorting, and what maps them.
struct Run<'a> {
    /// The run's files (the one given, then its chunk files), for the pre-pass.
    paths: Vec<PathBuf>,
    /// Records sorted together ([`MAX_BUFFERED`]; smaller in tests).
    cap: usize,
    buf: Vec<Rec>,
    mapper: Mapper<'a>,
    windows: u64,
    form: Option<Form>,
    empty: u64,
    records: u64,
    packets: u64,
}

impl Run<'_> {
    /// Reads one file's records into the buffer (mapping a full window when it fills).
    fn file<R: Read>(&mut self, reader: &mut Reader<R>, shown: &str) -> Result<()> {
        self.mapper.sink.source_file(shown);
        self.mapper.path_changed();
        // TSC drops in file (slot) order: (count, the first's byte, TSC before, TSC after).
        let mut last_tsc: Option<u64> = None;
        let mut drops: Option<(u64, u64, u64, u64)> = None;
        let mut oldest = u64::MAX;
        loop {
            match reader.next_item() {
                Ok(Some(Item::Rec(r))) => {
                    if let Some(prev) = last_tsc.filter(|p| r.tsc < *p) {
                        let d = drops.get_or_insert((0, r.at, prev, r.tsc));
                        d.0 += 1;
                    }
                    last_tsc = Some(r.tsc);
                    oldest = oldest.min(r.tsc);
                    if self.buf.len() >= self.cap {
                        self.flush(true)?;
                    }
                    self.buf.push(r);
                }
                Ok(Some(Item::Problem(d))) => self.mapper.sink.diagnostic(d)?,
                Ok(None) => break,
                Err(e) => {
                    let at = reader.read;
                    self.mapper.sink.diagnostic(Diagnostic {
                        severity: Severity::DataLoss,
                        kind: "input_truncated",
                        pos: Pos::Byte(at),
                        ts: None,
                        message: format!("{e}: the bytes from byte {at} on are lost"),
                    })?;
                    break;
                }
            }
        }
        if let Some((n, at, from, to)) = drops {
            // FTrace_safe_ipoint goes back to the chunk's start when a cyclic chunk is full,
            // and the writer (and the UDP sender) sends slots in order: the slot after the
            // newest holds the oldest record kept; what was logged before it was overwritten.
            let drops = crate::output::counted(n, "drop");
            let message = if reader.form == Some(Form::Udp) {
                format!(
                    "the TSC drops from {from} to {to} at byte {at} of {shown} ({drops} in \
                     the order sent): the sender sends each chunk in slot order, so a cyclic \
                     chunk that wrapped, whose newest records overwrote its oldest (what it \
                     logged before its oldest record kept is lost), or a chunk sent after a \
                     newer one; the records are sorted by time"
                )
            } else {
                format!(
                    "the TSC drops from {from} to {to} at byte {at} of {shown} ({drops} in \
                     slot order): a cyclic chunk that wrapped, whose newest records overwrote \
                     its oldest; its records are sorted by time, and what it logged before TSC \
                     {oldest} (its oldest record kept) is lost"
                )
            };
            self.mapper.sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "chunk_wrapped",
                pos: Pos::Byte(at),
                ts: None,
                message,
            })?;
        }
        if reader.empty > 0 {
            self.mapper.sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "empty_slots",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{} empty slots (type word 0) skipped in {shown}, as the reference decoder \
                     skips them",
                    reader.empty
                ),
            })?;
        }
        self.mapper.file_records(reader.records);
        match (self.form, reader.form) {
            (Some(Form::Raw), Some(Form::Udp)) | (Some(Form::Udp), Some(Form::Raw)) => {
                return Err(Error::input(
                    shown,
                    "",
                    "a S.Ha.R.K. run mixes a chunk dump and a UDP capture: ingest them apart",
                ))
            }
            (None, f) => self.form = f,
            _ => {}
        }
        self.empty += reader.empty;
        self.records += reader.records;
        self.packets += reader.packets;
        Ok(())
    }

    /// Sorts the buffered records by TSC (stable: file order for equal times) and maps them;
    /// when `more` come, the last [`mapper::LOOKAHEAD`] are kept for the next window (what
    /// follows an epilogue is looked at across the border).
    fn flush(&mut self, more: bool) -> Result<()> {
        if more && self.windows == 0 {
            let cap = self.cap;
            self.mapper.sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "too_many_records",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "more than {cap} records: they are sorted by time in windows of \
                     {cap} (memory stays bounded); a record older than the end of the \
                     window before it is kept in `events` with its time, and the states take it \
                     at the latest time seen"
                ),
            })?;
            self.prepass()?;
        }
        self.windows += 1;
        self.buf.sort_by_key(|r| r.tsc);
        let buf = std::mem::take(&mut self.buf);
        let carry = mapper::LOOKAHEAD.min(self.cap / 2);
        let upto = if more { buf.len().saturating_sub(carry) } else { buf.len() };
        self.mapper.window(&buf, upto)?;
        self.buf = buf;
        self.buf.drain(..upto);
        Ok(())
    }

    /// A first pass over the run's files, when it is sorted in windows: the first pid of each
    /// context and the first `cycles_per_msec` (by TSC), so that a window takes what a later
    /// one holds. It reads only those (memory: one entry per context). A problem in the
    /// bytes is reported by the main pass; a file that cannot be opened again (a pipe) is
    /// said.
    fn prepass(&mut self) -> Result<()> {
        let mut pids: HashMap<u16, (u64, u32)> = HashMap::new();
        let mut cpm: Option<(u64, u32)> = None;
        for p in &self.paths {
            let input = if p.is_file() { Input::open(p).ok() } else { None };
            let Some(mut input) = input else {
                self.mapper.sink.diagnostic(Diagnostic {
                    severity: Severity::Info,
                    kind: "no_prepass",
                    pos: Pos::None,
                    ts: None,
                    message: format!(
                        "{} cannot be read twice: a window takes no pid or cycles_per_msec \
                         from a later one",
                        p.display()
                    ),
                })?;
                continue;
            };
            let mut reader = Reader::new(&mut input, 0);
            while let Ok(Some(item)) = reader.next_item() {
                let Item::Rec(r) = item else { continue };
                match (r.code(), r.par2()) {
                    (0x60 | 0x02, Some(pid)) => {
                        let e = pids.entry(r.par1).or_insert((r.tsc, pid));
                        if r.tsc < e.0 {
                            *e = (r.tsc, pid);
                        }
                    }
                    _ if mapper::rate_of(&r).is_some() && cpm.is_none_or(|(t, _)| r.tsc < t) => {
                        cpm = mapper::rate_of(&r).map(|c| (r.tsc, c));
                    }
                    _ => {}
                }
            }
        }
        let pids = pids.into_iter().map(|(ctx, (_, pid))| (ctx, pid)).collect();
        self.mapper.prepass(pids, cpm.map(|(_, c)| u64::from(c)));
        Ok(())
    }
}

/// Reads the S.Ha.R.K. log `input` (the file `path`, shown as `shown`) and its sibling
/// chunk files into `sink`; returns the chunk files read besides it.
pub fn read<R: Read>(
    input: R,
    path: &Path,
    shown: &str,
    opts: &SharkOptions,
    sink: &mut dyn Sink,
) -> Result<Chunks> {
    read_capped(input, path, shown, opts, sink, MAX_BUFFERED)
}

/// [`read`], sorting `cap` records together.
fn read_capped<R: Read>(
    input: R,
    path: &Path,
    shown: &str,
    opts: &SharkOptions,
    sink: &mut dyn Sink,
    cap: usize,
) -> Result<Chunks> {
    let siblings = chunk_paths(path);
    // The chunk files are shown beside the file as it is shown (on reingest, by their
    // original names, not the extracted copies').
    let beside = |p: &PathBuf| match p.file_name() {
        Some(n) => Path::new(shown).with_file_name(n).display().to_string(),
        None => p.display().to_string(),
    };
    let mut files = vec![shown.to_string()];
    files.extend(siblings.iter().map(beside));
    let mut paths = vec![path.to_path_buf()];
    paths.extend(siblings.iter().cloned());
    let mut run = Run {
        paths,
        cap,
        buf: Vec::new(),
        mapper: Mapper::new(sink, opts, files),
        windows: 0,
        form: None,
        empty: 0,
        records: 0,
        packets: 0,
    };
    run.mapper.sink.source_file(shown);
    let mut chunk_of = None;
    if let Some((k, rest)) = chunk_index(path).filter(|(k, _)| *k > 0) {
        // Named as the file was given, also on reingest (the extracted copy is elsewhere).
        let first = Path::new(shown).with_file_name(format!("0{rest}"));
        let beside = || path.with_file_name(format!("0{rest}")).is_file();
        if opts.chunk_of_run.unwrap_or_else(beside) {
            run.mapper.sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "chunk_of_run",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "this is chunk file {k} of the run whose first chunk is {}: ingested alone, \
                     its events are also in the capture of that run if it was ingested (its \
                     chunk files are read with it); ingest {} to get the whole run",
                    first.display(),
                    first.display()
                ),
            })?;
            chunk_of = Some(first.display().to_string());
        }
    }
    run.file(&mut Reader::new(input, 0), shown)?;
    let mut chunks = Chunks::default();
    for (i, p) in siblings.iter().enumerate() {
        let k = u16::try_from(i + 1).unwrap_or(u16::MAX);
        let p_shown = beside(p);
        let mut input = Input::open(p).map_err(|e| Error::io(p, e))?;
        let mut reader = Reader::new(&mut input, k);
        run.file(&mut reader, &p_shown)?;
        chunks.text_bytes += reader.read;
        let digest = input.finish().map_err(|e| Error::input(&p_shown, "", e.to_string()))?;
        chunks.files.push((p.clone(), digest));
    }
    if chunk_index(path).is_some_and(|(k, _)| k == 0) {
        gap_after(siblings.last().map_or(path, PathBuf::as_path), run.mapper.sink)?;
    }
    run.flush(false)?;
    let sink = run.mapper.finish()?;
    sink.source_file(shown);
    let form = match run.form {
        Some(Form::Udp) => "udp",
        _ => "chunk dump",
    };
    sink.meta("shark.form", form);
    sink.meta("shark.chunk_files", &(siblings.len() + 1).to_string());
    sink.meta("shark.records", &run.records.to_string());
    if let Some(first) = chunk_of {
        sink.meta(META_CHUNK_OF_RUN, &first);
    }
    if run.empty > 0 {
        sink.meta("shark.empty_slots", &run.empty.to_string());
    }
    if run.packets > 0 {
        sink.meta("shark.packets", &run.packets.to_string());
    }
    Ok(chunks)
}

/// A chunk file missing in the middle of a run (`2trace.dat` absent, `3trace.dat` there):
/// the chunks after the gap are not read, and that is said.
fn gap_after(last: &Path, sink: &mut dyn Sink) -> Result<()> {
    let Some((k, rest)) = chunk_index(last) else { return Ok(()) };
    for later in k + 2..k + 10 {
        let p = last.with_file_name(format!("{later}{rest}"));
        if p.is_file() {
            return sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "chunk_gap",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "chunk file {}{rest} is missing: {} and any after it are not read with \
                     this run (ingest them alone if they belong to it)",
                    k + 1,
                    p.display()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
