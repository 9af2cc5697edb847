//! The SQL shell's building blocks. For now: the statement splitter used by `sql -c/-f` and
//! piped scripts.
pub mod split;
