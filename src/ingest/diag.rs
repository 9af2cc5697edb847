//! Diagnostics: record-level problems found while reading or deriving a capture.
//!
//! Every problem becomes a row of the `diagnostics` table; nothing is dropped silently.
//! Repeats of one kind beyond [`ROWS_PER_KIND`] are folded into one last row with a count,
//! so memory stays bounded on a badly broken file. Under `--strict` the first problem of
//! severity warning or worse stops the ingest with the same message.
use crate::model::Pos;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// Rows kept per kind before further ones are only counted.
pub const ROWS_PER_KIND: usize = 1000;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing, nothing wrong with the data (e.g. a trace that starts mid-life).
    Info,
    /// The data is odd but was kept (e.g. time going backwards, an invalid transition).
    Warning,
    /// A record could not be read and is missing from the tables (its text is in the message).
    Error,
    /// Data is known to be missing: the trace says so (overruns, gaps), or the input could
    /// not be read to its end.
    DataLoss,
}

impl Severity {
    /// Name used in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::DataLoss => "data_loss",
        }
    }
}

/// One problem.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// How bad.
    pub severity: Severity,
    /// Stable identifier, e.g. `malformed_line`.
    pub kind: &'static str,
    /// Where.
    pub pos: Pos,
    /// Event time in ns, when known.
    pub ts: Option<i64>,
    /// What was expected and what was found.
    pub message: String,
}

/// A diagnostics row as stored.
#[derive(Debug, Clone)]
pub struct DiagRow {
    /// Severity name.
    pub severity: Severity,
    /// Kind.
    pub kind: &'static str,
    /// `file:line` text.
    pub position: String,
    /// Event time in ns.
    pub ts: Option<i64>,
    /// Message.
    pub message: String,
    /// Occurrences this row stands for.
    pub count: u64,
}

/// Collects diagnostics of one capture, folding repeats and applying `--strict`.
pub struct Diagnostics {
    path: String,
    strict: bool,
    rows: Vec<DiagRow>,
    folded: BTreeMap<&'static str, (Severity, u64, Option<String>)>,
    counts: BTreeMap<&'static str, (Severity, u64)>,
}

impl Diagnostics {
    /// A collector for the file `path`.
    pub fn new(path: &str, strict: bool) -> Self {
        Diagnostics {
            path: path.to_string(),
            strict,
            rows: Vec::new(),
            folded: BTreeMap::new(),
            counts: BTreeMap::new(),
        }
    }

    /// Names `path` in the positions of later diagnostics (captures made of several files).
    pub fn set_path(&mut self, path: &str) {
        self.path = path.to_string();
    }

    /// Records `d`; under `--strict` a warning or worse is returned as an error instead.
    pub fn push(&mut self, d: Diagnostic) -> Result<()> {
        if self.strict && d.severity >= Severity::Warning {
            // The message says what an ingest without --strict does about the problem.
            let message = format!(
                "{} ({} `{}`: --strict stops the ingest here)",
                d.message,
                d.severity.as_str(),
                d.kind
            );
            return Err(Error::input(&self.path, d.pos.to_string(), message));
        }
        if self.count(&d, 1) <= ROWS_PER_KIND as u64 {
            self.rows.push(DiagRow {
                severity: d.severity,
                kind: d.kind,
                position: d.pos.with_path(&self.path),
                ts: d.ts,
                message: d.message,
                count: 1,
            });
        } else {
            self.fold(&d, 1);
        }
        Ok(())
    }

    /// Counts `n` more of `d`'s kind; returns the kind's count. A kind with rows of two
    /// severities (missing_type) is counted at the worse one.
    fn count(&mut self, d: &Diagnostic, n: u64) -> u64 {
        let count = self.counts.entry(d.kind).or_insert((d.severity, 0));
        count.0 = count.0.max(d.severity);
        count.1 += n;
        count.1
    }

    /// Folds `n` of `d`'s kind beyond its rows into its last row, which names the first.
    fn fold(&mut self, d: &Diagnostic, n: u64) {
        let f = self.folded.entry(d.kind).or_insert((d.severity, 0, None));
        f.1 += n;
        if f.2.is_none() {
            f.2 = Some(d.pos.with_path(&self.path));
        }
    }

    /// Records `n` occurrences of `d` (the same problem on `n` lines): as `n` calls of
    /// [`Diagnostics::push`] would, in time independent of `n` once the kind's rows are full.
    pub fn push_n(&mut self, d: Diagnostic, n: u64) -> Result<()> {
        let mut left = n;
        while left > 0 && self.counts.get(d.kind).is_none_or(|c| c.1 < ROWS_PER_KIND as u64) {
            self.push(d.clone())?;
            left -= 1;
        }
        if left > 0 {
            // The kind's rows are full and `--strict` did not stop at the first: the rest is
            // only counted.
            self.count(&d, left);
            self.fold(&d, left);
        }
        Ok(())
    }

    /// Occurrences per kind (with severity), for the ingest summary.
    pub fn counts(&self) -> &BTreeMap<&'static str, (Severity, u64)> {
        &self.counts
    }

    /// Total occurrences.
    pub fn total(&self) -> u64 {
        self.counts.values().map(|c| c.1).sum()
    }

    /// All rows, folded repeats last.
    pub fn into_rows(mut self) -> Vec<DiagRow> {
        for (kind, (severity, n, first)) in self.folded {
            self.rows.push(DiagRow {
                severity,
                kind,
                position: first.unwrap_or_default(),
                ts: None,
                message: format!(
                    "{n} more {kind} diagnostics not listed one by one (from this position on)"
                ),
                count: n,
            });
        }
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(kind: &'static str, severity: Severity, line: u64) -> Diagnostic {
        Diagnostic { severity, kind, pos: Pos::Line(line), ts: None, message: format!("m{line}") }
    }

    #[test]
    fn folds_repeats_past_the_limit() {
        let mut d = Diagnostics::new("f.btf", false);
        for i in 0..(ROWS_PER_KIND as u64 + 5) {
            d.push(diag("malformed_line", Severity::Error, i + 1)).unwrap();
        }
        assert_eq!(d.total(), ROWS_PER_KIND as u64 + 5);
        let rows = d.into_rows();
        assert_eq!(rows.len(), ROWS_PER_KIND + 1);
        let last = rows.last().unwrap();
        assert_eq!(last.count, 5);
        assert_eq!(last.position, format!("f.btf:{}", ROWS_PER_KIND + 1));
        assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), ROWS_PER_KIND as u64 + 5);
    }

    #[test]
    fn many_at_once_are_as_many_pushed_one_by_one() {
        let rows_of = |d: Diagnostics| {
            let c = d.counts().clone();
            let rows: Vec<_> =
                d.into_rows().into_iter().map(|r| (r.kind, r.position, r.count)).collect();
            (c, rows)
        };
        for (before, n) in [(0, 3), (ROWS_PER_KIND as u64 - 2, 5), (4, 1_000_000), (0, 0)] {
            let (mut one, mut many) =
                (Diagnostics::new("f.pcf", false), Diagnostics::new("f.pcf", false));
            for i in 0..before {
                one.push(diag("malformed_companion", Severity::Warning, i + 1)).unwrap();
                many.push(diag("malformed_companion", Severity::Warning, i + 1)).unwrap();
            }
            let d = diag("malformed_companion", Severity::Warning, 0);
            for _ in 0..n {
                one.push(d.clone()).unwrap();
            }
            many.push_n(d, n).unwrap();
            assert_eq!(rows_of(one), rows_of(many), "{before} then {n}");
        }
        // --strict stops at the first, as it does one by one.
        let mut strict = Diagnostics::new("f.pcf", true);
        assert!(strict.push_n(diag("malformed_companion", Severity::Warning, 0), 5).is_err());
        assert!(strict.push_n(diag("relabelled_companion", Severity::Info, 0), 5).is_ok());
        assert_eq!(strict.total(), 5);
    }

    #[test]
    fn a_kind_of_two_severities_is_counted_at_the_worse() {
        let mut d = Diagnostics::new("f.btf", false);
        d.push(diag("missing_type", Severity::Info, 4)).unwrap();
        d.push(diag("missing_type", Severity::Warning, 2)).unwrap();
        d.push(diag("missing_type", Severity::Info, 6)).unwrap();
        assert_eq!(d.counts().get("missing_type"), Some(&(Severity::Warning, 3)));
    }

    #[test]
    fn strict_fails_on_warnings_not_info() {
        let mut d = Diagnostics::new("f.btf", true);
        d.push(diag("unknown_prior_state", Severity::Info, 3)).unwrap();
        let e = d.push(diag("time_backwards", Severity::Warning, 7)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.btf: line 7: m7 (warning `time_backwards`: --strict stops the ingest here)"
        );
    }
}
