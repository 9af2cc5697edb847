//! The header line: `#Paraver (date):end[_unit]:resources:n_appl:appl...[,n_comms]`.
//!
//! Input: the header line. Output: the [`Header`] (time unit, end time in ns, threads per
//! task of each application, communicator count, CPUs of the resource model, whether ovni's
//! emulator wrote it), the problems found (`unknown_time_unit`, `bad_header`: warnings, the
//! header is used) and the `paraver.*` metadata entries. Only a header whose date, end time
//! or application count cannot be found is an error, naming file and line.
use super::clip;
use crate::ingest::diag::Severity;
use crate::model::{Pos, TimeUnit, MAX_ABS_NS};
use crate::{Error, Result};
use std::borrow::Cow;

/// One application of the header's process model: threads per task.
#[derive(Debug, Clone, Default)]
pub(super) struct Appl {
    pub(super) tasks: Vec<u64>,
    /// The header's text for it could not be read: its rows, and so the flat row index of
    /// every later application's rows, are unknown.
    pub(super) unreadable: bool,
}

/// The parsed header.
#[derive(Debug, Clone)]
pub(super) struct Header {
    pub(super) unit: TimeUnit,
    pub(super) end: i64,
    pub(super) appls: Vec<Appl>,
    pub(super) comms: u64,
    /// CPUs of the resource model; `None` when there is none (`0`, ovni) or it is unreadable.
    pub(super) cpus: Option<u64>,
    /// Written by ovni's emulator (its fixed fake date, `19/01/38 at 03:14`).
    pub(super) ovni: bool,
}

/// CPUs of a resource model: `<nodes>(<cpus>,<cpus>,...)`, or `<nodes>` with one CPU each;
/// `None` for `0` (no resource model) or anything unreadable.
fn parse_cpus(resources: &str) -> Option<u64> {
    let r = resources.trim();
    let total = match r.split_once('(') {
        Some((_, inner)) => inner
            .trim()
            .strip_suffix(')')?
            .split(',')
            .map(|c| c.trim().parse::<u64>().ok())
            .try_fold(0u64, |acc, c| acc.checked_add(c?))?,
        None => r.parse::<u64>().ok()?,
    };
    (total > 0).then_some(total)
}

/// Splits `s` at `sep` outside parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(s.get(start..i).unwrap_or(""));
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(s.get(start..).unwrap_or(""));
    out
}

/// `1:(1:1)` -> `1(1:1)`: a `:` (and spaces) between a task count and the `(` of its thread
/// list is dropped. paraver-kernel reads the task count up to the `(`, so it reads the
/// `%d:(%d:%d)` an energy-measurement writer prints as `%d(%d:%d)`.
fn task_count_joined(s: &str) -> Cow<'_, str> {
    let mut depth = 0i32;
    let mut drop = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' if depth == 0
                && s.get(i + 1..).is_some_and(|r| r.trim_start().starts_with('('))
                && s.get(..i)
                    .is_some_and(|l| l.trim_end().ends_with(|d: char| d.is_ascii_digit())) =>
            {
                drop.push(i);
            }
            _ => {}
        }
    }
    if drop.is_empty() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.char_indices().filter(|(i, _)| !drop.contains(i)).map(|(_, c)| c).collect::<String>(),
    )
}

/// `8(1:1,1:1)` -> threads per task.
fn parse_appl(s: &str) -> Option<Appl> {
    let (n, rest) = s.split_once('(')?;
    let n: usize = n.trim().parse().ok()?;
    let inner = rest.trim().strip_suffix(')')?;
    let tasks: Option<Vec<u64>> = inner
        .split(',')
        .map(|t| t.split(':').next().and_then(|x| x.trim().parse::<u64>().ok()))
        .collect();
    let tasks = tasks?;
    (tasks.len() == n).then_some(Appl { tasks, unreadable: false })
}

/// A problem found in the header: severity, kind, message.
type Problem = (Severity, &'static str, String);
/// The header, its problems, its metadata entries.
type HeaderParts = (Header, Vec<Problem>, Vec<(String, String)>);

/// Parses the header line after `#Paraver`. Returns the header, problems to report and
/// metadata entries.
pub(super) fn parse_header(line: &str, path: &str, pos: Pos) -> Result<HeaderParts> {
    let bad = |m: &str| {
        Error::input(
            path,
            pos.to_string(),
            format!("unreadable Paraver header: {m}: '{}'", clip(line)),
        )
    };
    let rest = line.get(8..).ok_or_else(|| bad("too short"))?;
    let open = rest.find('(').ok_or_else(|| bad("no '(' before the date"))?;
    let close = rest.find(')').ok_or_else(|| bad("no ')' after the date"))?;
    let date = rest.get(open + 1..close).unwrap_or("").to_string();
    let after = rest.get(close + 1..).unwrap_or("");
    let after = after.strip_prefix(':').ok_or_else(|| bad("no ':' after the date"))?;
    let fields = split_top(after, ':');
    let mut problems = Vec::new();
    let end_field = fields.first().copied().unwrap_or("").trim();
    let (num, unit) = match end_field.split_once('_') {
        Some((n, u)) => (n, Some(u)),
        None => (end_field, None),
    };
    let unit = match unit {
        None => TimeUnit::Us,
        Some(u) => match u.to_ascii_lowercase().as_str() {
            "ns" => TimeUnit::Ns,
            "us" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            _ => {
                problems.push((
                    Severity::Warning,
                    "unknown_time_unit",
                    format!("unknown time unit '_{u}' in the header: times taken as microseconds (as paraver-kernel does)"),
                ));
                TimeUnit::Us
            }
        },
    };
    let end = match num.parse::<i64>() {
        Ok(v) => unit.to_ns(v).map(|t| t.0).filter(|&t| t >= 0),
        // Float end times (`%0Lf` writers): scaled to ns before rounding (`0.4_ms` is
        // 400000 ns, not 0).
        Err(_) => {
            let v = num.parse::<f64>().map_err(|_| bad("the end time is not a number"))?;
            let ns_per_unit = match unit {
                TimeUnit::Ps => 1e-3,
                TimeUnit::Ns => 1.0,
                TimeUnit::Us => 1e3,
                TimeUnit::Ms => 1e6,
                TimeUnit::S => 1e9,
                TimeUnit::Tick => 1.0,
            };
            let ns = (v * ns_per_unit).round();
            #[allow(clippy::cast_precision_loss)]
            let max = MAX_ABS_NS as f64;
            #[allow(clippy::cast_possible_truncation)]
            (ns.is_finite() && (0.0..max).contains(&ns)).then_some(ns as i64)
        }
    };
    // The end time only extends the capture: one that cannot be a time is left out.
    let end = end.unwrap_or_else(|| {
        problems.push((
            Severity::Warning,
            "bad_header",
            format!(
                "the end time '{end_field}' is negative or beyond 2^62 ns: ignored, states \
                 still open close at the last record"
            ),
        ));
        0
    });
    let resources = fields.get(1).copied().unwrap_or("").trim().to_string();
    let cpus = parse_cpus(&resources);
    // No resource model: `0`, or `0()` (Extrae's mpi2prv when it knows of no node);
    // paraver-kernel takes a node count of 0 as none.
    let no_model = resources.is_empty()
        || resources.split('(').next().is_some_and(|n| n.trim().parse::<u64>() == Ok(0));
    if cpus.is_none() && !no_model {
        problems.push((
            Severity::Warning,
            "bad_header",
            format!(
                "the resource model '{}' is unreadable: cpu fields are not checked against it",
                clip(&resources)
            ),
        ));
    }
    // `<nodes>(<cpus>,...)` lists the CPU count of each node: a node count that is not the
    // length of the list (paraver-kernel reads that many counts) is a damaged header.
    if let (Some(_), Some((nodes, list))) = (cpus, resources.split_once('(')) {
        let listed = list.split(',').count();
        if nodes.trim().parse::<u64>().ok() != u64::try_from(listed).ok() {
            problems.push((
                Severity::Warning,
                "bad_header",
                format!(
                    "the resource model '{}' gives {} nodes but lists the CPUs of {listed}: \
                     the {listed} listed are the model",
                    clip(&resources),
                    clip(nodes.trim())
                ),
            ));
        }
    }
    let n_appl: usize = fields
        .get(2)
        .and_then(|f| f.trim().parse().ok())
        .ok_or_else(|| bad("no application count"))?;
    // Applications are separated by `:` (the format manual) or `,` (Extrae's files); the
    // communicator count follows the last one after a `,`.
    let tail = fields.get(3..).unwrap_or_default().join(":");
    let tail = task_count_joined(&tail);
    let tokens: Vec<&str> =
        split_top(&tail, ':').into_iter().flat_map(|t| split_top(t, ',')).collect();
    let mut appls = Vec::new();
    // Communicator counts written after an application other than the last (Dimemas writes
    // `,<count>` after each application that has communicators): a bare number where an
    // application is due, followed by one, is such a count.
    let mut comms: u64 = 0;
    let mut next = 0usize;
    for i in 0..n_appl {
        while i > 0 && tokens.get(next + 1).is_some_and(|t| t.contains('(')) {
            let Some(c) = tokens.get(next).and_then(|c| c.trim().parse::<u64>().ok()) else {
                break;
            };
            comms = comms.saturating_add(c);
            next += 1;
        }
        let Some(f) = tokens.get(next).copied() else {
            problems.push((
                Severity::Warning,
                "bad_header",
                format!("the header announces {n_appl} applications but lists {i}"),
            ));
            break;
        };
        match parse_appl(f) {
            Some(a) => appls.push(a),
            None => {
                problems.push((
                    Severity::Warning,
                    "bad_header",
                    format!("application {} is unreadable: '{f}'", i + 1),
                ));
                appls.push(Appl { tasks: Vec::new(), unreadable: true });
            }
        }
        next += 1;
    }
    let last: u64 = tokens.get(next).and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    let comms = comms.saturating_add(last);
    let ovni = date.trim() == OVNI_DATE;
    let meta = vec![
        ("paraver.date".to_string(), date),
        ("paraver.end_time".to_string(), end_field.to_string()),
        ("paraver.resources".to_string(), resources),
        ("paraver.applications".to_string(), n_appl.to_string()),
        ("paraver.communicators".to_string(), comms.to_string()),
    ];
    Ok((Header { unit, end, appls, comms, cpus, ovni }, problems, meta))
}

/// The date in every header ovni's emulator writes (`#Paraver (19/01/38 at 03:14):...`).
const OVNI_DATE: &str = "19/01/38 at 03:14";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_with_units_applications_and_communicators() {
        let line = "#Paraver (21/01/2022 at 16:37):1616378951_ns:1(20):2:8(1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1):2(3:1,1:1),14";
        let (h, problems, meta) = parse_header(line, "t.prv", Pos::Line(1)).unwrap();
        assert!(problems.is_empty());
        assert_eq!(h.unit, TimeUnit::Ns);
        assert_eq!(h.end, 1_616_378_951);
        assert_eq!(h.appls.len(), 2);
        assert_eq!(h.appls[1].tasks, vec![3, 1]);
        assert_eq!(h.comms, 14);
        assert_eq!(meta[0].1, "21/01/2022 at 16:37");
        // Extrae separates applications with commas.
        let (h, problems, _) =
            parse_header("#Paraver (d):5_ms:1(2):2:1(1:1),2(1:1,2:1),3", "t", Pos::Line(1))
                .unwrap();
        assert!(problems.is_empty());
        assert_eq!((h.appls.len(), h.comms, h.end), (2, 3, 5_000_000));
        let (h, problems, _) =
            parse_header("#Paraver (d):10:0:1:1(2:1)", "t", Pos::Line(1)).unwrap();
        assert_eq!((h.unit, h.end, problems.len()), (TimeUnit::Us, 10_000, 0));
        let (h, problems, _) =
            parse_header("#Paraver (d):10_xs:0:1:1(2:1)", "t", Pos::Line(1)).unwrap();
        assert_eq!((h.unit, problems.len()), (TimeUnit::Us, 1));
        assert!(parse_header("#Paraver 10:0", "t", Pos::Line(1)).is_err());
    }

    #[test]
    fn a_colon_between_the_task_count_and_its_threads_is_read_as_paraver_kernel_does() {
        // An energy-measurement writer prints `%0Lf_%s:1(1):1:1:(1:1)`: paraver-kernel reads
        // the task count up to the `(`, so `1:(1:1)` is one task of one thread on node 1.
        let line = "#Paraver (22/11/2026 at 14:00):123456.000000_ns:1(1):1:1:(1:1)";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((h.appls.len(), h.end, h.comms), (1, 123_456, 0));
        assert_eq!(h.appls[0].tasks, vec![1]);
        // Also between applications, and before the communicator count as before.
        let line = "#Paraver (d):5_ns:0:2:2:(1:1,2:1):1 : (3:1),4";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((h.appls[0].tasks.clone(), h.appls[1].tasks.clone()), (vec![1, 2], vec![3]));
        assert_eq!(h.comms, 4);
    }

    #[test]
    fn communicator_counts_after_each_application_are_added_up() {
        // Dimemas' Paraver writer (prv_utils/paraver.cc) follows each application that has
        // communicators with `,<count>`, and writes their lines after the header.
        let line = "#Paraver (22/11/26 at 15:00):100_ns:0:3:2(1:0,1:0),3:1(2:0):2(1:0,1:0),2";
        let (h, problems, meta) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let tasks: Vec<_> = h.appls.iter().map(|a| a.tasks.clone()).collect();
        assert_eq!(tasks, [vec![1, 1], vec![2], vec![1, 1]]);
        assert_eq!(h.comms, 5);
        assert_eq!(meta[4], ("paraver.communicators".to_string(), "5".to_string()));
    }

    #[test]
    fn an_unusable_end_time_or_resource_model_is_a_warning_not_the_end() {
        for (line, end) in [
            ("#Paraver (d):-5_ns:0:1:1(1:1)", 0),
            ("#Paraver (d):99999999999999999999_ns:0:1:1(1:1)", 0),
            ("#Paraver (d):9223372036854775807_ms:0:1:1(1:1)", 0),
            ("#Paraver (d):-0.5_ms:0:1:1(1:1)", 0),
        ] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert_eq!(h.end, end, "{line}");
            assert_eq!(problems.len(), 1, "{line}");
            assert_eq!(problems[0].1, "bad_header", "{line}");
        }
        let line = "#Paraver (d):100_ns:2(18446744073709551615,5):1:1(1:1)";
        let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
        assert_eq!((h.cpus, h.end), (None, 100));
        assert!(problems[0].2.contains("resource model"), "{problems:?}");
        // A node count that is not the length of the node list: the list is the model.
        for (line, cpus) in [
            ("#Paraver (d):100_ns:18446744073709551615(4):1:1(1:1)", 4),
            ("#Paraver (d):100_ns:1(4,4):1:1(1:1)", 8),
            ("#Paraver (d):100_ns:3(4,4):1:1(1:1)", 8),
        ] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert_eq!(h.cpus, Some(cpus), "{line}");
            assert_eq!(problems.len(), 1, "{line}: {problems:?}");
            assert!(problems[0].2.contains("nodes but lists the CPUs of"), "{problems:?}");
        }
        let (_, problems, _) =
            parse_header("#Paraver (d):100_ns:2(4,4):1:1(1:1)", "t", Pos::Line(1)).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // No resource model at all is no problem: `0`, or Extrae's `0()` (mpi2prv writes
        // `<nodes>(` and then the CPUs of each node, none when it knows of no node), which
        // paraver-kernel also reads as no model (a node count of 0).
        for line in ["#Paraver (d):1:0:1:1(1:1)", "#Paraver (d):1_ns:0():1:1(1:1),0"] {
            let (h, problems, _) = parse_header(line, "t", Pos::Line(1)).unwrap();
            assert!(problems.is_empty(), "{line}: {problems:?}");
            assert_eq!((h.cpus, h.appls.len()), (None, 1), "{line}");
        }
    }
}
