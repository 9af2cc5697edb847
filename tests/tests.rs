//! The integration test binary (one binary: one link of the DuckDB engine).
//!
//! * `analyses`    — the predefined analyses: docs match output, csv = json, deadlines
//! * `golden`      — tests/golden/<format>/<case>/: ingest input, run query.sql, compare CSV
//! * `archive`     — verify (altered, truncated, missing files) and rm
//! * `cli`         — subcommands, exit statuses, --strict, truncated input, broken pipes
//! * `conformance` — the real captures in ../shared/datasets (skipped when absent)
//! * `synthetic`   — a generated system with known counts, through the whole pipeline
//! * `layout`      — house rules checked on the source tree
//! * `report`      — tracedb report: forms vs the analyses, headless Chromium, --baseline gate
mod analyses;
mod archive;
mod cli;
mod conformance;
mod golden;
mod layout;
mod report;
mod synthetic;
mod util;
