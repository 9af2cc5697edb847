//! tracedb: a trace database and query engine for embedded and real-time systems.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! file ──ingest::input (plain/.gz/.zst, sha256)──▶ ingest::<format> importer
//!      ──model::Event──▶ derive (state machines: intervals, instances, lock requests)
//!      ──store::writer (Arrow batches, zstd Parquet, atomic publish)──▶ archive directory
//!      ──store::Archive (in-process DuckDB views)──▶ cli (sql, captures, ...)
//! ```
//!
//! Importers know nothing of storage: they call a [`ingest::Sink`]. The derive stage is shared
//! by every format. Only `store` and `cli` touch DuckDB.
#![warn(missing_docs)]

/// `eprintln!` that drops the line when standard error cannot be written (`2>&1 | head -1`
/// closes it). `eprintln!` panics then, which would stop an ingest between two files with
/// exit status 101; a message nobody can read is no reason to stop the work or change its
/// exit status.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

pub mod cli;
pub mod derive;
pub mod error;
pub mod ingest;
pub mod model;
pub mod output;
pub mod repl;
pub mod report;
pub mod signals;
pub mod store;
pub mod synth;

pub use error::{Error, Result};

/// Version of this build, recorded in every capture it writes.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
