//! Importers: one per format, each turning bytes into [`crate::model::Event`]s pushed to a
//! [`Sink`]. Importers know nothing of storage (no DuckDB here; a test checks it).
//!
//! Fatal problems (not this format, unreadable header, truncated compression) are errors
//! naming the file and position. Record-level problems are [`diag::Diagnostic`]s sent to the
//! sink; the sink decides (under `--strict`) whether they stop the ingest.
// Bad input must never panic an importer. Tests may (they assert by panicking).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::cast_possible_truncation
    )
)]

pub mod btf;
pub mod deadlines;
pub mod diag;
pub mod hw;
pub mod input;
pub mod lines;
pub mod ovni;
pub mod prv;
pub mod qs;
pub mod shark;
#[cfg(test)]
pub mod test_sink;
pub mod zip;

use crate::model::{Event, Pos, TimeUnit};
use crate::Result;
pub use diag::{Diagnostic, Severity};

/// What importers call (perfetto's trackers, ripgrep's `Sink`).
pub trait Sink {
    /// A header or metadata entry (`#creator ...`); keys are lower-cased by the importer.
    fn meta(&mut self, key: &str, value: &str);
    /// The unit of the source's raw timestamps.
    fn time_unit(&mut self, unit: TimeUnit);
    /// An entity declared before use (BTF entity tables): its type, and an optional id.
    fn declare_entity(&mut self, name: &str, entity_type: Option<&str>, id: Option<i64>);
    /// One event, in file order (BTF) or time order (Paraver, sorted within a window).
    fn event(&mut self, ev: &Event<'_>) -> Result<()>;
    /// A record-level problem. Returns an error when the policy (`--strict`) says stop.
    fn diagnostic(&mut self, d: Diagnostic) -> Result<()>;
    /// `n` occurrences of one record-level problem (lines beyond those a reader keeps the
    /// text of): as `n` calls of [`Sink::diagnostic`].
    fn diagnostics(&mut self, d: Diagnostic, n: u64) -> Result<()> {
        for _ in 0..n {
            self.diagnostic(d.clone())?;
        }
        Ok(())
    }

    // Records that carry their own times (Paraver). They may arrive out of time order: the
    // derive stage keeps their times (no clamping to the latest time seen) and writes the
    // rows sorted. Sinks that only take BTF-shaped events may ignore them.

    /// A state with its own begin and end (`None`: still in it when the trace ended).
    fn span(&mut self, _span: &Span<'_>) -> Result<()> {
        Ok(())
    }
    /// A channel of `entity` set to `value` at `ts` (0 ends the channel's current state).
    fn channel_set(&mut self, _set: &ChannelSet<'_>) -> Result<()> {
        Ok(())
    }
    /// A communication between two entities.
    fn message(&mut self, _msg: &Message<'_>) -> Result<()> {
        Ok(())
    }
    /// The end of the trace as its header declares it: open states last until at least here.
    fn trace_end(&mut self, _ts: i64) {}
    /// The file that later positions are in (a capture read from several files at once:
    /// S.Ha.R.K. chunk files).
    fn source_file(&mut self, _path: &str) {}
}

/// A stretch of time in one state of one channel, with explicit times (ns).
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    /// Entity in the state.
    pub entity: &'a str,
    /// Its type (THREAD, CPU).
    pub entity_type: &'a str,
    /// Channel (`state` for Paraver state records).
    pub channel: &'a str,
    /// State name.
    pub state: &'a str,
    /// Numeric value of the state.
    pub value: Option<f64>,
    /// Begin.
    pub begin: i64,
    /// End, or `None` when the state had not ended when the trace did.
    pub end: Option<i64>,
    /// CPU the record names, if any.
    pub core: Option<&'a str>,
    /// Where it was read.
    pub pos: Pos,
}

/// A channel update: `value` 0 ends the current state (unless `zero_ends` is false), any
/// other value sets it.
#[derive(Debug, Clone, Copy)]
pub struct ChannelSet<'a> {
    /// Entity owning the channel.
    pub entity: &'a str,
    /// Its type.
    pub entity_type: &'a str,
    /// Channel name (a Paraver event type name).
    pub channel: &'a str,
    /// Time, ns.
    pub ts: i64,
    /// New value: a 64-bit integer, signed or not (exact).
    pub value: i128,
    /// Whether 0 ends the state (Paraver's convention) or is a value like any other (ovni's
    /// `PRV_ZERO` channels, e.g. a CPU's number of running threads).
    pub zero_ends: bool,
    /// Label of the value, when known.
    pub label: Option<&'a str>,
    /// CPU the record names, if any.
    pub core: Option<&'a str>,
    /// Where it was read.
    pub pos: Pos,
}

/// A message from one entity to another (Paraver communication record), times in ns.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    /// Sending entity.
    pub sender: &'a str,
    /// Receiving entity.
    pub receiver: &'a str,
    /// Logical send time.
    pub send_ts: i64,
    /// Logical receive time (`None`: not received within the trace, a QS post never got).
    pub recv_ts: Option<i64>,
    /// Physical send time.
    pub phys_send_ts: i64,
    /// Physical receive time.
    pub phys_recv_ts: Option<i64>,
    /// Bytes.
    pub size: i64,
    /// Tag.
    pub tag: i64,
    /// Where it was read.
    pub pos: Pos,
}

/// Input formats tracedb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// BTF text (Best Trace Format).
    Btf,
    /// Paraver `.prv` (with `.pcf`/`.row` companions), as written by Extrae and ovni.
    Prv,
    /// Quantum Leaps QS binary frames (QSPY input), with an optional `.dic` companion.
    Qs,
    /// ovni binary runtime streams (`stream.obs` + `stream.json`: the input of ovniemu).
    Ovni,
    /// Hardware-trace exports (S32DS, TRACE32 or mapped CSV), with an optional ELF and
    /// mapping file.
    Hw,
    /// S.Ha.R.K. tracer logs (chunk dumps `0trace.dat`... or UDP captures).
    Shark,
}

impl Format {
    /// All formats in detection priority order.
    pub const ALL: &'static [Format] =
        &[Format::Btf, Format::Prv, Format::Qs, Format::Ovni, Format::Hw, Format::Shark];

    /// Name used on the command line and in `captures.format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Btf => "btf",
            Format::Prv => "prv",
            Format::Qs => "qs",
            Format::Shark => "shark",
            Format::Hw => "hw",
            Format::Ovni => "ovni",
        }
    }

    /// Parses a `--format` value (`auto` is handled by the caller), in any case, also as the
    /// format's longer name: `paraver` (and `extrae`) for `prv`, `qspy` for `qs`.
    pub fn parse(s: &str) -> Option<Format> {
        let s = s.trim().to_ascii_lowercase();
        let s = match s.as_str() {
            "paraver" | "extrae" => "prv",
            "qspy" => "qs",
            other => other,
        };
        Format::ALL.iter().copied().find(|f| f.name() == s)
    }

    /// True when `prefix` (the first KiBs of plain text) looks like this format.
    pub fn sniff(self, prefix: &[u8]) -> bool {
        match self {
            Format::Btf => btf::sniff(prefix),
            Format::Prv => prv::sniff(prefix),
            Format::Qs => qs::sniff(prefix),
            Format::Shark => shark::sniff(prefix),
            Format::Hw => hw::sniff(prefix),
            Format::Ovni => ovni::sniff(prefix),
        }
    }
}

/// The input stopped being readable after `whole_lines` lines (a truncated or corrupt
/// `.gz`/`.zst`, a read error): what was read stays, and the loss is a `data_loss`
/// diagnostic (fatal under `--strict`, as every warning or worse is).
pub fn input_lost(sink: &mut dyn Sink, whole_lines: u64, e: &std::io::Error) -> Result<()> {
    sink.diagnostic(Diagnostic {
        severity: Severity::DataLoss,
        kind: "input_truncated",
        pos: Pos::Line(whole_lines + 1),
        ts: None,
        message: format!(
            "{e}: the text from line {} on is lost ({whole_lines} whole lines read)",
            whole_lines + 1
        ),
    })
}

/// The format of a file from its first bytes, or `None` when no importer recognises it.
pub fn detect(prefix: &[u8]) -> Option<Format> {
    Format::ALL.iter().copied().find(|f| f.sniff(prefix))
}

/// Names of all formats, for error messages.
pub fn format_names() -> String {
    Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn format_names_parse_in_any_case_and_by_their_longer_names() {
        for &f in Format::ALL.iter() {
            assert_eq!(Format::parse(f.name()), Some(f));
            assert_eq!(Format::parse(&f.name().to_uppercase()), Some(f));
        }
        assert_eq!(Format::parse("Paraver"), Some(Format::Prv));
        assert_eq!(Format::parse("extrae"), Some(Format::Prv));
        assert_eq!(Format::parse("qspy"), Some(Format::Qs));
        assert_eq!(Format::parse("auto"), None, "auto is the caller's");
        assert_eq!(Format::parse("csv"), None);
    }
}
