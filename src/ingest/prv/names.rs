//! Entity names of the Paraver objects: the threads (rows) of the header's process model and
//! the CPUs of its resource model, from the `.row` labels or their numbers.
//!
//! Input: the [`Header`] and the `.row` of the [`Companions`]. Output: [`Names`], which names
//! a record's `appl.task.thread` and cpu when asked (nothing is allocated per declared row
//! or CPU), and a note per label renamed (`duplicate_row_label`) or not used (`bad_header`).
//! Invariant: one entity per row: a label on several rows of a level, a THREAD label equal
//! to a CPU label, or one equal to a name made so, gets the row's Paraver id appended
//! ([`unique_labels`]).
use super::header::{Appl, Header};
use super::row;
use super::Companions;
use crate::ingest::diag::ROWS_PER_KIND;
use crate::ingest::input::strip_compressed;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;

/// Entity names of the rows of the process model and of the CPUs, made when asked for:
/// nothing is allocated per declared row or CPU, whatever the header announces.
pub(super) struct Names {
    /// First flat row index and thread count of each task, per application.
    task_base: Vec<Vec<(u64, u64)>>,
    /// Rows in the process model.
    pub(super) rows: u64,
    /// CPUs in the resource model, when it has one.
    pub(super) cpus: Option<u64>,
    /// Entity names from the `.row` THREAD labels, per flat row (`None`: no label).
    thread_labels: Vec<Option<String>>,
    /// Entity names from the `.row` CPU labels, per CPU from 1.
    cpu_labels: Vec<Option<String>>,
    /// The rows are CPUs: ovni's `cpu.prv` without a `.row`, or a `.row` whose THREAD level
    /// starts with a CPU label (a CPU view).
    cpu_rows: bool,
}

/// The `duplicate_row_label` notes of a `.row`: every one counted, only the first
/// [`ROWS_PER_KIND`] by line with their text, as the diagnostics table lists no more (two
/// million repeated labels made two million message strings: 1.2 GB).
#[derive(Default)]
struct Notes {
    all: Vec<(u64, Option<String>)>,
    /// Lines and indices of the notes holding their text, greatest line on top.
    kept: BinaryHeap<(u64, usize)>,
}

impl Notes {
    fn push(&mut self, line: u64, message: impl FnOnce() -> String) {
        let i = self.all.len();
        if self.kept.len() >= ROWS_PER_KIND {
            match self.kept.peek() {
                Some(&(max, j)) if line < max => {
                    self.kept.pop();
                    if let Some(n) = self.all.get_mut(j) {
                        n.1 = None;
                    }
                }
                _ => {
                    self.all.push((line, None));
                    return;
                }
            }
        }
        self.kept.push((line, i));
        self.all.push((line, Some(message())));
    }
}

/// Entity names of the first `n` labels of `level` (trimmed; `None` for an empty one). A
/// label on several rows would merge them into one entity: each such row gets its Paraver
/// id appended (`id(i)` of row `i`), with a note (line, message) per repeat. So does a label
/// that is one of the `taken` names (another level's), and a name made so that equals
/// another row's label, until every name is unique.
#[allow(clippy::too_many_arguments)]
fn unique_labels(
    level: &row::Level,
    n: usize,
    what: &str,
    path: &str,
    id: impl Fn(usize) -> String,
    row_of: impl Fn(&str) -> Option<usize>,
    taken: &HashSet<String>,
    notes: &mut Notes,
) -> Vec<Option<String>> {
    let mut names: Vec<Option<String>> = level
        .labels
        .iter()
        .take(n)
        .map(|l| Some(l.trim()).filter(|l| !l.is_empty()).map(str::to_string))
        .collect();
    let line = |i: usize| level.first_line.saturating_add(i as u64);
    let mut made = vec![false; names.len()];
    // Each round appends ids to the names still shared; ids differ, so it ends.
    // Each round can make a name that clashes again (a `.row` written to chain them): after
    // a few, what is still shared is made unique in one pass below.
    let rounds = names.len().min(MAX_RENAME_ROUNDS);
    for round in 0..=rounds {
        let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, l) in names.iter().enumerate() {
            if let Some(l) = l {
                holders.entry(l.as_str()).or_default().push(i);
            }
        }
        let mut renamed: Vec<(usize, String)> = Vec::new();
        for (l, rows) in &holders {
            // `THREAD 1.1.2` on another row than 1.1.2 (or `CPU 3` on another CPU than 3)
            // is the name row 1.1.2 gets when it has no label: it would merge with that row.
            let posing =
                !made.get(rows.first().copied().unwrap_or_default()).copied().unwrap_or(true)
                    && l.strip_prefix(what)
                        .and_then(|r| r.strip_prefix(' '))
                        .and_then(&row_of)
                        .is_some_and(|j| {
                            names.get(j).is_none_or(Option::is_none) && rows.iter().any(|&i| i != j)
                        });
            let clash = taken.contains(*l) || posing;
            if rows.len() < 2 && !clash {
                continue;
            }
            // A made name clashing with a row's own label: the label gives way.
            let own: Vec<usize> =
                rows.iter().copied().filter(|&i| !made.get(i).copied().unwrap_or(true)).collect();
            let rows = if round > 0 && !clash && !own.is_empty() { &own } else { rows };
            let first = rows.first().copied().unwrap_or_default();
            for &i in rows {
                let name = format!("{l} ({})", id(i));
                let why = if posing {
                    "is the name another row gets without a label: this row is named".to_string()
                } else if clash {
                    "is also the name of a CPU: this row is named".to_string()
                } else if round > 0 {
                    "is also another row's name: this row is named".to_string()
                } else if i != first {
                    format!(
                        "is also on line {}: each of these rows is named with its Paraver id \
                         appended, as",
                        line(first)
                    )
                } else {
                    renamed.push((i, name));
                    continue;
                };
                notes.push(line(i), || {
                    format!("{path}:{}: {what} label '{l}' {why} '{name}'", line(i))
                });
                renamed.push((i, name));
            }
        }
        if renamed.is_empty() {
            break;
        }
        for (i, name) in renamed {
            if let (Some(n), Some(m)) = (names.get_mut(i), made.get_mut(i)) {
                *n = Some(name);
                *m = true;
            }
        }
    }
    // Still shared after the rounds: a counter appended, in row order, makes every name
    // unique in one pass.
    let all: HashSet<String> = names.iter().flatten().cloned().collect();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, n) in names.iter_mut().enumerate() {
        let Some(name) = n else { continue };
        if seen.insert(name.clone()) {
            continue;
        }
        let base = format!("{name} ({})", id(i));
        let unique = (1u64..)
            .map(|k| format!("{base} #{k}"))
            .find(|c| !all.contains(c) && !seen.contains(c))
            .unwrap_or(base);
        notes.push(line(i), || format!("{path}:{}: {what} label named '{unique}'", line(i)));
        seen.insert(unique.clone());
        *name = unique;
    }
    names
}

/// Renaming rounds of [`unique_labels`] before the one-pass fallback.
const MAX_RENAME_ROUNDS: usize = 16;

/// Rows (threads) of the process model's applications `appls`.
fn task_rows(appls: &[Appl]) -> u64 {
    appls.iter().flat_map(|a| &a.tasks).fold(0u64, |n, &t| n.saturating_add(t))
}

impl Names {
    /// The names, and a diagnostic (kind, message) per `.row` label that repeats on another
    /// row and for labels that cannot be placed.
    pub(super) fn new(
        header: &Header,
        comp: &Companions,
        cpu_rows: bool,
    ) -> (Names, Vec<(&'static str, String)>) {
        let mut task_base = Vec::new();
        let mut flat = 0u64;
        for appl in &header.appls {
            let mut bases = Vec::new();
            for &n in &appl.tasks {
                bases.push((flat, n));
                flat = flat.saturating_add(n);
            }
            task_base.push(bases);
        }
        let mut names = Names {
            task_base,
            rows: flat,
            cpus: header.cpus,
            thread_labels: Vec::new(),
            cpu_labels: Vec::new(),
            cpu_rows,
        };
        let path = comp
            .row_path
            .as_ref()
            .map_or_else(|| "the .row".to_string(), |p| p.display().to_string());
        let level = |name: &str| comp.row.as_ref().and_then(|r| r.levels.get(name));
        let limit =
            |n: Option<u64>| n.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let mut notes = Notes::default();
        let mut unused = None;
        if let Some(l) = level("CPU") {
            let n = limit(names.cpus);
            names.cpu_labels = unique_labels(
                l,
                n,
                "CPU",
                &path,
                |i| (i + 1).to_string(),
                |r| {
                    let j = r.parse::<usize>().ok()?.checked_sub(1)?;
                    (j < n && (j + 1).to_string() == r).then_some(j)
                },
                &HashSet::new(),
                &mut notes,
            );
        }
        if let Some(l) = level("THREAD") {
            // Rows after an unreadable application have unknown positions: their labels
            // would name the wrong threads.
            let known = header
                .appls
                .iter()
                .position(|a| a.unreadable)
                .map(|a| (a, task_rows(header.appls.get(..a).unwrap_or_default())));
            let mut n = limit(Some(names.rows));
            if let Some((a, rows)) = known {
                let rows = limit(Some(rows));
                if l.labels.len() > rows {
                    unused = Some(format!(
                        "{path}: THREAD labels from line {} on are not used: application {} of \
                         the header is unreadable, so which rows they name is unknown",
                        l.first_line.saturating_add(rows as u64),
                        a + 1
                    ));
                }
                n = n.min(rows);
            }
            // A thread must not take a CPU's name (a label like `CPU 1` on a THREAD row is
            // ovni's way of saying the row is that CPU, and stays).
            let taken: HashSet<String> =
                names.cpu_labels.iter().flatten().filter(|l| !is_cpu_label(l)).cloned().collect();
            names.thread_labels = unique_labels(
                l,
                n,
                "THREAD",
                &path,
                |i| names.flat_id(i),
                |r| names.flat_of(r).filter(|&j| j < n),
                &taken,
                &mut notes,
            );
        }
        // A THREAD level that starts with a CPU is a CPU view (ovni's cpu.row, Nanos6's
        // ctf2prv): every row is a CPU, its virtual CPUs too whatever their label (`vCPU 0.*`,
        // `UNSET` in older ovni, `LEADER` and `EXT 0` in an older Nanos6 converter).
        if names.thread_labels.first().and_then(Option::as_deref).is_some_and(is_cpu_label) {
            names.cpu_rows = true;
        }
        notes.all.sort_by_key(|n| n.0);
        let mut notes: Vec<(&'static str, String)> = notes
            .all
            .into_iter()
            .map(|n| ("duplicate_row_label", n.1.unwrap_or_default()))
            .collect();
        notes.extend(unused.map(|m| ("bad_header", m)));
        (names, notes)
    }

    /// The flat row (0-based) whose Paraver id is `id` (`appl.task.thread`, as
    /// [`Names::flat_id`] writes it).
    fn flat_of(&self, id: &str) -> Option<usize> {
        let mut parts = id.split('.').map(|p| p.parse::<usize>().ok());
        let (a, t, th) = (parts.next()??, parts.next()??, parts.next()??);
        if parts.next().is_some() {
            return None;
        }
        let &(base, n) = self.task_base.get(a.checked_sub(1)?)?.get(t.checked_sub(1)?)?;
        let th = u64::try_from(th.checked_sub(1)?).ok()?;
        let flat = usize::try_from(base.checked_add(th).filter(|_| th < n)?).ok()?;
        (self.flat_id(flat) == id).then_some(flat)
    }

    /// The Paraver id `appl.task.thread` of flat row `flat` (0-based).
    fn flat_id(&self, flat: usize) -> String {
        let flat = flat as u64;
        for (a, tasks) in self.task_base.iter().enumerate() {
            let t = tasks.partition_point(|&(base, _)| base <= flat);
            if let Some(&(base, n)) = t.checked_sub(1).and_then(|t| tasks.get(t)) {
                if flat - base < n {
                    return format!("{}.{t}.{}", a + 1, flat - base + 1);
                }
            }
        }
        format!("row {}", flat + 1)
    }

    /// The `appl:task:thread` (1-based, as a record writes it) of thread `global` (1-based
    /// over the whole process model, as a "new format" record writes it); `0:0:<global>`,
    /// which no model has, when the model has no such thread.
    pub(super) fn locate(&self, global: &str) -> String {
        let flat = global.trim().parse::<u64>().ok().and_then(|g| g.checked_sub(1));
        for (a, tasks) in self.task_base.iter().enumerate() {
            let Some(flat) = flat else { break };
            let t = tasks.partition_point(|&(base, _)| base <= flat);
            if let Some(&(base, n)) = t.checked_sub(1).and_then(|t| tasks.get(t)) {
                if flat - base < n {
                    return format!("{}:{t}:{}", a + 1, flat - base + 1);
                }
            }
        }
        format!("0:0:{}", global.trim())
    }

    /// Name and type of flat row `flat` of thread `a.t.th` (1-based).
    fn row_name(&self, flat: u64, a: i128, t: i128, th: i128) -> (String, &'static str) {
        let label = usize::try_from(flat)
            .ok()
            .and_then(|i| self.thread_labels.get(i))
            .and_then(Option::as_deref);
        match label {
            Some(l) => {
                (l.to_string(), if self.cpu_rows || is_cpu_label(l) { "CPU" } else { "THREAD" })
            }
            None if self.cpu_rows => (format!("CPU ROW {}", flat + 1), "CPU"),
            None => (format!("THREAD {a}.{t}.{th}"), "THREAD"),
        }
    }

    /// Every row of the process model, in order.
    pub(super) fn all_rows(&self) -> impl Iterator<Item = (String, &'static str)> + '_ {
        self.task_base.iter().enumerate().flat_map(move |(a, tasks)| {
            tasks.iter().enumerate().flat_map(move |(t, &(base, n))| {
                (0..n).map(move |th| {
                    let (a, t, th1) = (a as i128 + 1, t as i128 + 1, i128::from(th) + 1);
                    self.row_name(base + th, a, t, th1)
                })
            })
        })
    }

    /// The entity of `appl.task.thread` (1-based), or `None` when outside the model.
    pub(super) fn thread(
        &self,
        appl: i128,
        task: i128,
        thread: i128,
    ) -> Option<(String, &'static str)> {
        let a = usize::try_from(appl - 1).ok()?;
        let t = usize::try_from(task - 1).ok()?;
        let th = u64::try_from(thread - 1).ok()?;
        let (base, n) = *self.task_base.get(a)?.get(t)?;
        if th >= n {
            return None;
        }
        Some(self.row_name(base + th, appl, task, thread))
    }

    /// The CPU entity name of `cpu` (1-based; 0 = none), and whether the header's resource
    /// model has it (always true when there is no model).
    pub(super) fn cpu(&self, cpu: i128) -> Option<(String, bool)> {
        let i = usize::try_from(cpu - 1).ok()?;
        let in_model = self.cpus.is_none_or(|n| u64::try_from(cpu).is_ok_and(|c| c <= n));
        let label = self.cpu_labels.get(i).filter(|_| in_model).and_then(Option::as_deref);
        Some((label.map_or_else(|| format!("CPU {cpu}"), str::to_string), in_model))
    }
}

/// ovni's emulator writes the CPU view as `cpu.prv`, whose rows are CPUs.
pub(super) fn is_ovni_cpu_file(path: &str) -> bool {
    let name = Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or("");
    strip_compressed(name) == "cpu.prv"
}

/// A THREAD row label naming a CPU: ovni's `cpu.row` (` CPU 0.0`, `vCPU 0.*`) and Nanos6's
/// ctf2prv `.row` (`CPU 3`, and the virtual CPUs of its leader thread and external threads,
/// `LT VCPU 4`, `ET VCPU 5`) give each CPU a row of the process model.
fn is_cpu_label(l: &str) -> bool {
    ["CPU ", "vCPU ", "LT VCPU ", "ET VCPU "].iter().any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_label_notes_keep_the_text_of_the_first_lines_only() {
        // 3,000 notes in a scattered line order: all counted, the 1,000 of the smallest
        // lines with their text, the others without.
        let mut notes = Notes::default();
        for k in 0..3000u64 {
            let line = (k * 7919) % 3000 + 1;
            notes.push(line, || format!("line {line}"));
        }
        assert_eq!(notes.all.len(), 3000);
        notes.all.sort_by_key(|n| n.0);
        let (with, without) = notes.all.split_at(ROWS_PER_KIND);
        assert!(with.iter().all(|(l, m)| m.as_deref() == Some(format!("line {l}").as_str())));
        assert!(without.iter().all(|(_, m)| m.is_none()));
    }
}
