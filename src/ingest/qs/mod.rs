//! Quantum Leaps QS: the binary trace of QP/C and QP/C++ targets, as QSPY reads it.
//!
//! Spec digest (FORMATS.md §3; reference: QuantumLeaps/qtools `qspy/source/qspy.c`):
//!
//! | on the wire | meaning |
//! |---|---|
//! | `seq` u8 | +1 per record, wraps at 255; `QS_EMPTY` is exempt from the check |
//! | `recID` u8 | record ID; the table depends on the QP version (`records.rs`) |
//! | payload | little-endian fields; sizes from the target info (`-T -O -F -S ...`) |
//! | `chksum` u8 | the unescaped bytes of the record sum to `0xFF` |
//! | `0x7E` | end of record; `0x7E`/`0x7D` inside are sent as `0x7D, b^0x20` |
//!
//! A QP 6.9 transition (`-T4 -S2 -O4 -F4`): `06 06 | t:u32 | sig:u16 | obj:u32 | src:u32 |
//! dst:u32 | chksum 7E` → `events` row `QEP_TRAN`, source `Philo_inst[0]` (SM/AO), target
//! `Philo_hungry`, note `Sig=TIMEOUT_SIG,Obj=Philo_inst[0],State=Philo_thinking->Philo_hungry`.
//!
//! The version and sizes come from the `QS_TARGET_INFO` record, else from a QSPY `.dic`
//! file beside the trace (or given with `--qs-dic`); without either the file cannot be
//! read. Times are raw target ticks, unwrapped (a tick counter that wraps is assumed to
//! never go back), scaled by `--tick-rate` when given.
//!
//! Output: one `events` row per record (file order), the `state` channel of every state
//! machine (spans from each transition to the next), the `running` channel of `ISR`
//! (nested entries split the outer one), the `critical` channel of `QF`, and a message per
//! post to an active object, received by its next get of that signal.
mod decode;
mod derived;
pub mod dic;
pub mod frame;
mod namemap;
mod names;
mod posts;
mod reader;
pub mod records;
mod user;

use super::input::{Digest256, Input};
use super::{Diagnostic, Severity, Sink};
use crate::model::Pos;
use crate::{Error, Result};
use dic::Dic;
use frame::{Deframer, Item};
use reader::Reader;
use std::io::Read;
use std::path::{Path, PathBuf};

/// QS options from the command line.
#[derive(Debug, Clone, Default)]
pub struct QsOptions {
    /// Target ticks per second (`--tick-rate`); without it times stay in ticks.
    pub tick_rate: Option<u64>,
    /// A `.dic` file to use instead of the one beside the trace (`--qs-dic`).
    pub dic: Option<PathBuf>,
}

/// Parses a tick rate: `1000000`, `32768Hz`, `10kHz`, `1MHz`, `1.5MHz` (a whole number of
/// ticks per second).
pub fn parse_tick_rate(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, factor) = if let Some(n) = lower.strip_suffix("ghz") {
        (n, 1_000_000_000u64)
    } else if let Some(n) = lower.strip_suffix("mhz") {
        (n, 1_000_000)
    } else if let Some(n) = lower.strip_suffix("khz") {
        (n, 1_000)
    } else if let Some(n) = lower.strip_suffix("hz") {
        (n, 1)
    } else {
        (lower.as_str(), 1)
    };
    let num = num.trim();
    let bad = || format!("'{s}': expected a tick rate in Hz, e.g. 1000000, 32768Hz, 10kHz, 1MHz");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    // Exact decimal: int.frac * factor must be a whole number.
    let digits = format!("{int}{frac}");
    let scale = 10u64.checked_pow(u32::try_from(frac.len()).map_err(|_| bad())?).ok_or_else(bad)?;
    let n: u128 = digits.parse().map_err(|_| bad())?;
    let total = n.checked_mul(u128::from(factor)).ok_or_else(bad)?;
    if total % u128::from(scale) != 0 {
        return Err(format!("'{s}': not a whole number of ticks per second"));
    }
    let hz = u64::try_from(total / u128::from(scale)).map_err(|_| bad())?;
    if hz == 0 {
        return Err(format!("'{s}': the tick rate must be above 0"));
    }
    Ok(hz)
}

/// `x.bin`, `x.qs.gz` -> `x.dic` beside it.
pub fn dic_path(trace: &Path) -> PathBuf {
    let name = trace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = crate::ingest::input::strip_compressed(&name);
    if let Some((s, _ext)) = stem.rsplit_once('.').filter(|(s, _)| !s.is_empty()) {
        stem = s;
    }
    trace.with_file_name(format!("{stem}.dic"))
}

/// The `.dic` a QS trace is read with.
#[derive(Debug, Default)]
pub struct Companion {
    /// Its path, when one was found beside the trace or given.
    pub path: Option<PathBuf>,
    /// Its content, when it could be read.
    pub dic: Option<Dic>,
    /// Hash and size of its bytes on disk.
    pub digest: Option<Digest256>,
    /// Bytes of text read.
    pub text_bytes: u64,
    /// Whether it was given with `--qs-dic` rather than found.
    pub given: bool,
}

/// Most bytes of a `.dic` read.
const MAX_DIC: u64 = 16 << 20;

impl Companion {
    /// The `.dic` beside `trace` when there is one (for hashing without reading).
    pub fn paths(trace: &Path) -> Vec<PathBuf> {
        let p = dic_path(trace);
        if p.is_file() && p != trace {
            vec![p]
        } else {
            Vec::new()
        }
    }

    /// Reads the `.dic` given, else the one beside `trace`.
    pub fn find(trace: &Path, given: Option<&Path>) -> Result<Companion> {
        let (path, is_given) = match given {
            Some(g) => (g.to_path_buf(), true),
            None => match Companion::paths(trace).pop() {
                Some(p) => (p, false),
                None => return Ok(Companion::default()),
            },
        };
        let mut input = Input::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut bytes = Vec::new();
        (&mut input)
            .take(MAX_DIC + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::input(&path.display().to_string(), "", e.to_string()))?;
        if bytes.len() as u64 > MAX_DIC {
            return Err(Error::input(
                &path.display().to_string(),
                "",
                format!("more than {} MiB: not a QSPY dictionary file", MAX_DIC >> 20),
            ));
        }
        let digest = input
            .finish()
            .map_err(|e| Error::input(&path.display().to_string(), "", e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(Companion {
            dic: Some(Dic::parse(&text)),
            digest: Some(digest),
            text_bytes: bytes.len() as u64,
            path: Some(path),
            given: is_given,
        })
    }
}

/// Frames looked at by [`sniff`].
const SNIFF_FRAMES: usize = 8;

/// True when `prefix` decodes as QS frames: at least [`SNIFF_FRAMES`] of them (or all of a
/// short file, at least 3), 90% with a good checksum, and the bytes are not mostly text.
pub fn sniff(prefix: &[u8]) -> bool {
    // Text (BTF, Paraver) is printable; QS frames carry binary timestamps and pointers.
    let printable = prefix
        .iter()
        .filter(|&&b| b.is_ascii_graphic() || b == b' ' || b == b'\n' || b == b'\r' || b == b'\t')
        .count();
    if prefix.is_empty() || printable * 10 >= prefix.len() * 9 {
        return false;
    }
    let mut d = Deframer::new(prefix);
    let (mut good, mut total) = (0usize, 0usize);
    while let Ok(Some(item)) = d.next_item() {
        match item {
            Item::Frame(_) => {
                good += 1;
                total += 1;
            }
            // The first frame cut (a capture starting mid-record: `resync`), or the prefix
            // ending inside a record: neither counts.
            Item::Problem(p) if p.severity == Severity::Info => {}
            Item::Problem(_) => total += 1,
        }
        if total >= 64 {
            break;
        }
    }
    let enough = total >= SNIFF_FRAMES || (total >= 3 && prefix.len() < 4096);
    enough && good * 10 >= total * 9
}

/// Frames held before the first is imported: enough to find the target info and the
/// active objects of a whole capture of usual size (see [`Reader::classify`]).
const WINDOW: usize = 1 << 18;

/// Reads a QS byte stream from `input` into `sink`. `path` names the file in messages.
pub fn read<R: Read>(
    input: R,
    path: &str,
    opts: &QsOptions,
    comp: &Companion,
    sink: &mut dyn Sink,
) -> Result<()> {
    let mut deframer = Deframer::new(input);
    let mut window = Vec::new();
    let mut lost = None;
    loop {
        match deframer.next_item() {
            Ok(Some(item)) => {
                window.push(item);
                if window.len() >= WINDOW {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                lost = Some(e);
                break;
            }
        }
    }
    let mut r = Reader::new(path, opts, comp, sink)?;
    r.start(&window)?;
    for item in window {
        r.item(item)?;
    }
    if lost.is_none() && deframer.read > 0 {
        loop {
            match deframer.next_item() {
                Ok(Some(item)) => r.item(item)?,
                Ok(None) => break,
                Err(e) => {
                    lost = Some(e);
                    break;
                }
            }
        }
    }
    if let Some(e) = lost {
        let at = deframer.read;
        r.sink.diagnostic(Diagnostic {
            severity: Severity::DataLoss,
            kind: "input_truncated",
            pos: Pos::Byte(at),
            ts: None,
            message: format!("{e}: the bytes from byte {at} on are lost"),
        })?;
    }
    r.finish()
}

#[cfg(test)]
mod tests;
