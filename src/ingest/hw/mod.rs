//! Hardware-trace exports: the delimited text (CSV with `,` `;` or tab) that trace tools
//! write from on-chip trace (NXP S32DS trace viewer, Lauterbach TRACE32 lists, any tool's
//! CSV given a column mapping), turned into system events with an ELF symbol table and a
//! mapping file (SEMANTICS.md, "Hardware traces").
//!
//! Input contract (FORMATS.md §5; no public sample exists, so this is ours):
//!
//! ```text
//! Index,Source,Type,Address,Destination,Timestamp,Data     <- header row (S32DS columns)
//! 1,Core0,Branch,0x00001010,0x00002000,1000,               <- a call of the function at 0x2000
//! 2,Core0,Data,0x40000000,,1500,2                          <- a write of 2 to a variable
//! 3,Core0,Return,0x00002040,0x00001014,2500,               <- back to the caller
//! ```
//!
//! Each row is one `events` row (source = its core, no target, action = its type, note =
//! its address, destination, symbol and data). With a mapping file (`--hw-map`), writes to
//! "current task" variables are task switches, entries and returns of mapped functions are
//! runnable and ISR instances, and writes to mapped variables are signal writes
//! (`system.rs`). Times are absolute, deltas, or timestamp messages with the rows between
//! them at the midpoint (`clock.rs`).
//!
//! Rows need not be in one time order: each core's rows are a stream, and when the file is
//! not in time order (or lists its cores one after another with delta or marker times) the
//! streams are read again from the file, one reader each, and merged by time, ties in file
//! order (`reader/`, `Reader::rows`).
mod clock;
mod columns;
mod elf;
mod fields;
pub(crate) use fields::glob;
mod map;
mod reader;
mod system;

pub use clock::{midpoint, Base, Clock};
pub use columns::{is_export_header, Columns};
pub use elf::{Symbol, Symbols};
pub use map::{Encoding, Mapping};
pub use reader::{classify, Kind};

use super::input::{Digest256, Input};
use super::lines::LineReader;
use super::Sink;
use crate::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Hardware-trace options from the command line.
#[derive(Debug, Clone, Default)]
pub struct HwOptions {
    /// The ELF file whose `.symtab` names addresses (`--hw-elf`).
    pub elf: Option<PathBuf>,
    /// The mapping file (`--hw-map`).
    pub map: Option<PathBuf>,
}

/// A companion file read: where, its hash, and bytes read.
#[derive(Debug, Clone)]
pub struct Kept {
    /// Path as given.
    pub path: PathBuf,
    /// Hash and size of its bytes on disk.
    pub digest: Digest256,
    /// Bytes read (after decompression).
    pub text_bytes: u64,
}

/// The ELF and mapping an export is read with.
#[derive(Debug, Default)]
pub struct Companions {
    /// The ELF file.
    pub elf: Option<Kept>,
    /// Its symbols.
    pub symbols: Option<Symbols>,
    /// The mapping file.
    pub map_file: Option<Kept>,
    /// The mapping (default: recognised columns, no system view).
    pub map: Mapping,
}

/// Most bytes of an ELF file read.
const MAX_ELF: u64 = 512 << 20;
/// Most bytes of a mapping file read.
const MAX_MAP: u64 = 16 << 20;

/// The bytes of `path` (plain, .gz or .zst), at most `max`, with their digest.
fn read_all(path: &Path, max: u64, what: &str) -> Result<(Vec<u8>, Digest256)> {
    let shown = path.display().to_string();
    let mut input = Input::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    (&mut input)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::input(&shown, "", e.to_string()))?;
    if bytes.len() as u64 > max {
        return Err(Error::input(&shown, "", format!("more than {} MiB: not {what}", max >> 20)));
    }
    let digest = input.finish().map_err(|e| Error::input(&shown, "", e.to_string()))?;
    Ok((bytes, digest))
}

impl Companions {
    /// Reads the files `opts` names; a file that is not what it should be is an error
    /// naming it (they are given on purpose: an export read without them would be another
    /// capture).
    pub fn load(opts: &HwOptions) -> Result<Companions> {
        let mut c = Companions::default();
        if let Some(p) = &opts.map {
            let (bytes, digest) = read_all(p, MAX_MAP, "a mapping file")?;
            let text = String::from_utf8_lossy(&bytes);
            c.map = Mapping::parse(&text).map_err(|m| {
                Error::input(&p.display().to_string(), "", format!("mapping file: {m}"))
            })?;
            c.map_file = Some(Kept { path: p.clone(), digest, text_bytes: bytes.len() as u64 });
        }
        if let Some(p) = &opts.elf {
            let (bytes, digest) = read_all(p, MAX_ELF, "an ELF file of symbols")?;
            let syms = Symbols::from_elf(&bytes)
                .map_err(|m| Error::input(&p.display().to_string(), "", m))?;
            c.symbols = Some(syms);
            c.elf = Some(Kept { path: p.clone(), digest, text_bytes: bytes.len() as u64 });
        }
        Ok(c)
    }

    /// The files read, in a fixed order (mapping, then ELF), with the name each is kept
    /// under in the archive ([`kept_name`]).
    pub fn files(&self) -> impl Iterator<Item = (&Kept, String)> {
        let map = self.map_file.iter().map(|k| (k, kept_name("map", &k.path)));
        map.chain(self.elf.iter().map(|k| (k, kept_name("elf", &k.path))))
    }
}

/// The name a companion file is kept under in the archive: its own prefixed by its role
/// (`hw-elf.app.elf`, `hw-map.map.json`), so that an ELF, a mapping and an export with one
/// file name do not collide (the manifest keeps one-component names: no folder); `tracedb
/// reingest` finds them by it.
pub fn kept_name(role: &str, path: &Path) -> String {
    let name = path.file_name().map_or_else(|| role.to_string(), |n| n.to_string_lossy().into());
    format!("hw-{role}.{name}")
}

/// True when the first row of `prefix` (after `#` comment lines) is unmistakably a
/// hardware-trace export's header: every column of the S32DS trace viewer (Index, Source,
/// Type, Address, Destination, Timestamp), or of a TRACE32 list (record, cycle, address,
/// data, symbol and ti.back or ti.zero). Any other CSV needs `--format hw`.
pub fn sniff(prefix: &[u8]) -> bool {
    if prefix.contains(&0) {
        return false;
    }
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let text = String::from_utf8_lossy(prefix);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && fields::excel_sep(l).is_none())
        .is_some_and(is_export_header)
}

/// Reads an export from `lines` into `sink`; `path` names it in messages. `reopen` is the
/// file `lines` reads, when it may be read again: rows are then merged in time order per
/// core when the file is not in one time order (see [`reader::Reader::rows`]).
pub fn read<R: Read>(
    lines: &mut LineReader<R>,
    path: &str,
    reopen: Option<&Path>,
    comp: &Companions,
    sink: &mut dyn Sink,
) -> Result<()> {
    let name =
        |k: &Kept| k.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(k) = &comp.map_file {
        sink.meta("hw.map", &name(k));
    }
    if let Some(k) = &comp.elf {
        sink.meta("hw.elf", &name(k));
        if comp.symbols.as_ref().is_some_and(|s| s.no_symtab) {
            sink.diagnostic(super::Diagnostic {
                severity: super::Severity::Warning,
                kind: "no_symbols",
                pos: crate::model::Pos::None,
                ts: None,
                message: format!(
                    "{}: the ELF has no .symtab (stripped?): addresses stay unnamed, and \
                     mapped functions and variables are found only by the export's symbol \
                     column",
                    name(k)
                ),
            })?;
        }
        if let Some(s) = comp.symbols.as_ref().filter(|s| s.dropped > 0) {
            sink.diagnostic(super::Diagnostic {
                severity: super::Severity::Warning,
                kind: "too_many_symbols",
                pos: crate::model::Pos::None,
                ts: None,
                message: format!(
                    "{}: {} symbols beyond the first {} are not used (their addresses stay \
                     unnamed)",
                    name(k),
                    s.dropped,
                    elf::MAX_SYMBOLS
                ),
            })?;
        }
    }
    let mut r = reader::Reader::start(lines, path, &comp.map, comp.symbols.as_ref(), sink)?;
    r.rows(lines, reopen, sink)
}

#[cfg(test)]
mod testelf;
#[cfg(test)]
mod tests;
