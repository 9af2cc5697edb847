//! The SQL shell (`tracedb sql` on a terminal) and its building blocks: the statement
//! splitter (also used by `sql -c/-f` and piped scripts), meta-commands, completion,
//! history, and the loop itself.
pub mod helper;
pub mod history;
pub mod meta;
pub mod shell;
pub mod split;
