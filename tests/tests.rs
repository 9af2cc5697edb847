//! The integration test binary (one binary: one link of the DuckDB engine).
//!
//! * `analyses`    — the predefined analyses: docs match output, csv = json, deadlines
//! * `hw`          — hardware-trace exports: a generated 2-core export with ELF and mapping
//! * `golden`      — tests/golden/<format>/<case>/: ingest input, run query.sql, compare CSV
//! * `archive`     — verify, rm, dedupe, export round trips
//! * `cli`         — subcommands, exit statuses, --strict, truncated input, broken pipes
//! * `conformance` — the real captures in ../shared/datasets (skipped when absent)
//! * `paraver`     — Paraver/ovni samples (counts from the text), non-Paraver refused
//! * `ovni`        — ovni binary streams: samples vs ovnidump and the emulator, generated
//! * `qs`          — Quantum Leaps QS: shared samples vs QSPY's decode, a generated capture
//! * `repl`        — the interactive shell in a real terminal (tmux)
//! * `shark`       — S.Ha.R.K. tracer logs generated from the layout: hand-checked tables
//! * `synthetic`   — generated systems: every instance and analysis vs the simulator's truth
//! * `layout`      — house rules checked on the source tree
//! * `report`      — tracedb report: forms vs the analyses, headless Chromium, --baseline gate
mod analyses;
mod archive;
mod cli;
mod conformance;
mod golden;
mod hw;
mod layout;
mod ovni;
mod paraver;
mod qs;
mod repl;
mod report;
mod shark;
mod synthetic;
mod util;
