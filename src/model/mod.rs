//! The normalised model every importer produces: BTF-shaped events with times in ns.
//!
//! Invariants: times are `i64` nanoseconds from the capture's origin; durations are never
//! negative; names are borrowed from the importer's line buffer and interned downstream.
pub mod event;
pub mod strings;
pub mod time;

pub use event::{Event, Pos};
pub use strings::{Interner, Sym};
pub use time::{TimeUnit, MAX_ABS_NS};
