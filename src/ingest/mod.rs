//! Importers: one per format, each turning bytes into [`crate::model::Event`]s pushed to a
//! [`Sink`]. Importers know nothing of storage (no DuckDB here; a test checks it).
//!
//! Fatal problems (not this format, unreadable header, truncated compression) are errors
//! naming the file and position. Record-level problems are [`diag::Diagnostic`]s sent to the
//! sink; the sink decides (under `--strict`) whether they stop the ingest.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

pub mod btf;
pub mod deadlines;
pub mod diag;
pub mod input;
pub mod lines;

use crate::model::{Event, TimeUnit};
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
    /// One event, in file order.
    fn event(&mut self, ev: &Event<'_>) -> Result<()>;
    /// A record-level problem. Returns an error when the policy (`--strict`) says stop.
    fn diagnostic(&mut self, d: Diagnostic) -> Result<()>;
}

/// Input formats tracedb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// BTF text (Best Trace Format).
    Btf,
}

impl Format {
    /// All formats in detection priority order.
    pub const ALL: &'static [Format] = &[Format::Btf];

    /// Name used on the command line and in `captures.format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Btf => "btf",
        }
    }

    /// Parses a `--format` value (`auto` is handled by the caller).
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == s)
    }

    /// True when `prefix` (the first KiBs of plain text) looks like this format.
    pub fn sniff(self, prefix: &[u8]) -> bool {
        match self {
            Format::Btf => btf::sniff(prefix),
        }
    }
}

/// The format of a file from its first bytes, or `None` when no importer recognises it.
pub fn detect(prefix: &[u8]) -> Option<Format> {
    Format::ALL.iter().copied().find(|f| f.sniff(prefix))
}

/// Names of all formats, for error messages.
pub fn format_names() -> String {
    Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
}
