//! The integration test binary (one binary: one link of the DuckDB engine).
//!
//! * `golden`      — tests/golden/<format>/<case>/: ingest input, run query.sql, compare CSV
//! * `cli`         — subcommands, exit statuses, --strict, truncated input, broken pipes
//! * `conformance` — the real captures in ../shared/datasets (skipped when absent)
//! * `synthetic`   — a generated system with known counts, through the whole pipeline
//! * `layout`      — house rules checked on the source tree
//! * `repl`        — the interactive shell in a real terminal (tmux)
mod cli;
mod conformance;
mod golden;
mod layout;
mod repl;
mod synthetic;
mod util;
