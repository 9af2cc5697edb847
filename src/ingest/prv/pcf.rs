//! Paraver `.pcf` (configuration: state names, event type names, value labels).
//!
//! Spec digest (paraver-kernel `pcffileparser.cpp`; Extrae and ovni samples):
//!
//! ```text
//! DEFAULT_OPTIONS / DEFAULT_SEMANTIC      sections we skip (`KEY value` lines)
//! STATES                                  `<int> <label...>`
//! 0    Idle
//! STATES_COLOR                            `<int> {r,g,b}` (skipped)
//! EVENT_TYPE                              a block: one or more `<color> <type> <label...>`
//! 0    50000001    MPI Point-to-point      lines, then optional
//! 0    50000002    MPI Collective Comm
//! VALUES                                  `<value> <label...>` lines; the values apply to
//! 0   Outside MPI                         EVERY type listed in the block
//! PRECISION 3                             optional, skipped
//! GRADIENT_COLOR / GRADIENT_NAMES         deprecated sections, skipped
//! ```
//!
//! Lines are trimmed and tabs count as spaces; blank and `#` lines are skipped; labels keep
//! their inner spaces (outer spaces are trimmed: ovni writes `Flushing ovni buffer `).
//! `VALUES` with no entries is accepted. Each type is a channel, so two types with the same
//! label are told apart by their number (`Counter (42)`); a type without a label is its
//! number, and a label that is another number gets its type (`1 (101)`). Unparsable lines are
//! skipped (the companion is only names: a bad line costs a name, never a record), and a
//! state, type or value labelled twice keeps its later label; both are noted by line
//! ([`Pcf::malformed`], [`Pcf::relabelled`]) for the `diagnostics` table.
use crate::ingest::diag::ROWS_PER_KIND;
use crate::model::strings::FastMap;
use std::collections::HashMap;

/// Notes of one kind about a `.pcf`'s lines: every one counted, the first
/// [`ROWS_PER_KIND`] with their line and text (the diagnostics table lists no more, and a
/// 128 MiB file of bad lines would otherwise hold millions of messages).
#[derive(Debug, Default, Clone)]
pub struct Notes {
    /// (line, what is wrong), in line order.
    pub kept: Vec<(u64, String)>,
    /// All the notes, `kept` included.
    pub total: u64,
}

impl Notes {
    fn push(&mut self, line: u64, message: impl FnOnce() -> String) {
        self.total += 1;
        if self.kept.len() < ROWS_PER_KIND {
            self.kept.push((line, message()));
        }
    }
}

/// Names read from a `.pcf` (looked up for every record: FNV-hashed maps).
#[derive(Debug, Default, Clone)]
pub struct Pcf {
    /// State value -> name.
    pub states: FastMap<i128, String>,
    /// Event type -> name.
    pub types: FastMap<i128, String>,
    /// Value labels, one table per EVENT_TYPE block: its VALUES apply to every type of the
    /// block, and are stored once (a block of 300 types sharing 30,000 labels copied them
    /// 300 times: 2.4 GB for a 370 KB file).
    value_tables: Vec<FastMap<i128, String>>,
    /// Event type -> the tables of the blocks it is in, latest last.
    values: FastMap<i128, Vec<usize>>,
    /// Lines of a STATES, EVENT_TYPE or VALUES section that are not `<number> <label>`
    /// (`<color> <type> <label>` in EVENT_TYPE): skipped.
    pub malformed: Notes,
    /// A state, event type or value (in one block) labelled again with another label: the
    /// later label is used.
    pub relabelled: Notes,
}

#[derive(PartialEq)]
enum Section {
    Other,
    States,
    EventType,
    Values,
}

/// Channel names the derive stage gives its own intervals (`intervals.channel`).
pub(crate) const RESERVED_CHANNELS: &[&str] = &["state", "running", "value"];

/// The channel of event type `ty` labelled `label` (trimmed; `shared`: another type of its
/// `.pcf` has this label): the label, or the type when it is empty. So that two types never
/// share a channel, the type is appended (`Counter (42)`) to a label another type has, to one
/// of tracedb's own channel names (`state (9)`), and to a number other than the type (`1 (101)`:
/// a type without a label is named by its number).
pub(crate) fn channel_name(label: &str, ty: i128, shared: bool) -> String {
    let other_number = parse_value(label).is_some_and(|v| v != ty && v.to_string() == label);
    if label.is_empty() {
        ty.to_string()
    } else if shared || other_number || RESERVED_CHANNELS.contains(&label) {
        format!("{label} ({ty})")
    } else {
        label.to_string()
    }
}

/// The note of a line that is not `<form>` in `section`, skipped.
fn not_a_line(section: &str, form: &str, line: &str) -> String {
    let shown: String = line.chars().take(80).collect();
    let more = if shown.len() < line.len() { "..." } else { "" };
    format!("`{shown}{more}` is not a line of {section} (`{form}`): skipped")
}

/// Notes `what` `id` labelled `label` on line `number` after `old` (nothing when the two
/// labels are the same, as when Extrae repeats a type in several blocks, or when `old` is
/// empty: a type first listed without a label).
fn note_relabel(notes: &mut Notes, number: u64, what: &str, id: i128, old: &str, label: &str) {
    if old != label && !old.is_empty() {
        notes.push(number, || {
            format!("{what} {id} labelled `{label}`, after `{old}` on an earlier line: `{label}` is used")
        });
    }
}

/// Splits `<int> <rest>`; the rest trimmed.
fn int_and_rest(line: &str) -> Option<(i128, &str)> {
    let (n, rest) = line.split_once(' ').unwrap_or((line, ""));
    Some((parse_value(n)?, rest.trim()))
}

/// An integer from `i64::MIN` to `u64::MAX` (Paraver numbers are 64-bit, signed or not),
/// with its exact value.
pub fn parse_value(s: &str) -> Option<i128> {
    s.parse::<i64>().map(i128::from).ok().or_else(|| s.parse::<u64>().ok().map(i128::from))
}

impl Pcf {
    /// Parses the text of a `.pcf`.
    pub fn parse(text: &str) -> Pcf {
        let mut pcf = Pcf::default();
        let mut section = Section::Other;
        let mut block: Vec<i128> = Vec::new();
        // The value table of the current block, made at its first label.
        let mut table: Option<usize> = None;
        for (number, raw) in (1u64..).zip(text.lines()) {
            let line = raw.replace('\t', " ");
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let first = line.split(' ').next().unwrap_or("");
            let is_header = first.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && first.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if is_header {
                section = match first {
                    "STATES" => Section::States,
                    "EVENT_TYPE" => {
                        block.clear();
                        table = None;
                        Section::EventType
                    }
                    "VALUES" if section == Section::EventType || section == Section::Values => {
                        Section::Values
                    }
                    // PRECISION belongs to the event block; keep its types.
                    "PRECISION" if section == Section::EventType => Section::EventType,
                    _ => Section::Other,
                };
                continue;
            }
            match section {
                Section::States => {
                    let Some((v, label)) = int_and_rest(line) else {
                        pcf.malformed
                            .push(number, || not_a_line("STATES", "<state> <label>", line));
                        continue;
                    };
                    // An empty label names nothing: the state keeps its number.
                    if !label.is_empty() {
                        if let Some(old) = pcf.states.insert(v, label.to_string()) {
                            note_relabel(&mut pcf.relabelled, number, "state", v, &old, label);
                        }
                    }
                }
                Section::EventType => {
                    let parsed = line.split_once(' ').and_then(|(_color, rest)| {
                        let rest = rest.trim_start();
                        let (ty, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                        Some((parse_value(ty)?, rest.trim()))
                    });
                    let Some((ty, label)) = parsed else {
                        pcf.malformed.push(number, || {
                            not_a_line("EVENT_TYPE", "<color> <type> <label>", line)
                        });
                        continue;
                    };
                    // A type listed again without a label (in a later block, for its
                    // values) keeps its label.
                    if !label.is_empty() || !pcf.types.contains_key(&ty) {
                        if let Some(old) = pcf.types.insert(ty, label.to_string()) {
                            note_relabel(
                                &mut pcf.relabelled,
                                number,
                                "event type",
                                ty,
                                &old,
                                label,
                            );
                        }
                    }
                    block.push(ty);
                }
                Section::Values => {
                    let Some((v, label)) = int_and_rest(line) else {
                        pcf.malformed
                            .push(number, || not_a_line("VALUES", "<value> <label>", line));
                        continue;
                    };
                    if !label.is_empty() {
                        let t = match table {
                            Some(t) => t,
                            None => {
                                let t = pcf.value_tables.len();
                                pcf.value_tables.push(FastMap::default());
                                for ty in &block {
                                    pcf.values.entry(*ty).or_default().push(t);
                                }
                                table = Some(t);
                                t
                            }
                        };
                        let old = pcf
                            .value_tables
                            .get_mut(t)
                            .and_then(|l| l.insert(v, label.to_string()));
                        if let Some(old) = old {
                            note_relabel(&mut pcf.relabelled, number, "value", v, &old, label);
                        }
                    }
                }
                Section::Other => {}
            }
        }
        // Two states with one label would be one state in `state_time` (Paraver shows them
        // apart): each gets its number appended (`Running (2)`).
        let mut states: HashMap<String, u32> = HashMap::new();
        for name in pcf.states.values() {
            *states.entry(name.clone()).or_default() += 1;
        }
        for (v, name) in pcf.states.iter_mut() {
            if states.get(name.as_str()).is_some_and(|n| *n > 1) {
                *name = format!("{name} ({v})");
            }
        }
        // A channel per event type (see `channel_name`).
        let mut seen: HashMap<String, u32> = HashMap::new();
        for name in pcf.types.values() {
            *seen.entry(name.clone()).or_default() += 1;
        }
        for (ty, name) in pcf.types.iter_mut() {
            let shared = seen.get(name.as_str()).is_some_and(|n| *n > 1);
            *name = channel_name(name, *ty, shared);
        }
        pcf
    }

    /// The label of `value` of event type `ty`.
    pub fn value_label(&self, ty: i128, value: i128) -> Option<&str> {
        let tables = self.values.get(&ty)?;
        tables.iter().rev().find_map(|&t| self.value_tables.get(t)?.get(&value)).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_share_their_values() {
        let text = "DEFAULT_OPTIONS\n\nLEVEL THREAD\nUNITS NANOSEC\n\nSTATES\n0\tIdle\n1    Running\n\n\
                    STATES_COLOR\n0 {117,195,255}\n\nEVENT_TYPE\n9   50000001    MPI Point-to-point\n\
                    0 50000002 MPI Collective\nVALUES\n0 Outside MPI\n3   MPI_Send \n\nEVENT_TYPE\n\
                    6 7 Flushing ovni buffer \nVALUES\n\nEVENT_TYPE\n0 9 Big\nVALUES\n18446744073709551615 max\n";
        let p = Pcf::parse(text);
        assert_eq!(p.states.get(&1).map(String::as_str), Some("Running"));
        assert_eq!(p.types.get(&50000002).map(String::as_str), Some("MPI Collective"));
        assert_eq!(p.value_label(50000001, 3), Some("MPI_Send"));
        assert_eq!(p.value_label(50000002, 0), Some("Outside MPI"));
        assert_eq!(p.types.get(&7).map(String::as_str), Some("Flushing ovni buffer"));
        assert_eq!(p.value_label(9, u64::MAX.into()), Some("max"));
        assert_eq!(p.value_label(9, -1), None, "u64::MAX is not -1");
        assert_eq!(p.value_label(7, 1), None);
        let dup = Pcf::parse("EVENT_TYPE\n0 1 Counter\n0 2 Counter\n0 3\n");
        assert_eq!(dup.types.get(&1).map(String::as_str), Some("Counter (1)"));
        assert_eq!(dup.types.get(&2).map(String::as_str), Some("Counter (2)"));
        assert_eq!(dup.types.get(&3).map(String::as_str), Some("3"));
        let own = Pcf::parse("STATES\n1 Running\n2\nEVENT_TYPE\n0 9 state\nVALUES\n1 one\n2\n");
        assert_eq!(own.types.get(&9).map(String::as_str), Some("state (9)"));
        assert_eq!(own.states.get(&2), None, "an empty label keeps the number");
        assert_eq!(own.value_label(9, 2), None);
        // A label that is another type's number (ovni's cpu.pcf does not name its types 1-3,
        // a mark type titled `1` is type 101 labelled `1`) would join that type's channel.
        let num = Pcf::parse("EVENT_TYPE\n0 101 1\n0 102 102\n0 103 01\n");
        assert_eq!(num.types.get(&101).map(String::as_str), Some("1 (101)"));
        assert_eq!(num.types.get(&102).map(String::as_str), Some("102"));
        assert_eq!(num.types.get(&103).map(String::as_str), Some("01"));
        // A type in two blocks has the labels of both, the later one's first.
        let two = Pcf::parse(
            "EVENT_TYPE\n0 5 A\n0 6 B\nVALUES\n1 one\n2 two\nEVENT_TYPE\n0 6 B\nVALUES\n2 deux\n",
        );
        assert_eq!(two.value_label(5, 2), Some("two"));
        assert_eq!(two.value_label(6, 2), Some("deux"));
        assert_eq!(two.value_label(6, 1), Some("one"));
        assert_eq!(two.value_tables.len(), 2, "one table per block, not per type");
        assert!(two.relabelled.kept.is_empty(), "type 6 is labelled B twice");
        let states = Pcf::parse("STATES\n1 Running\n2 Running\n3 Idle\n");
        assert_eq!(states.states.get(&1).map(String::as_str), Some("Running (1)"));
        assert_eq!(states.states.get(&2).map(String::as_str), Some("Running (2)"));
        assert_eq!(states.states.get(&3).map(String::as_str), Some("Idle"));
    }

    #[test]
    fn bad_lines_and_second_labels_are_noted_by_line() {
        let text = "STATES\n1 Running\nRunning 2\n1 Busy\n\nEVENT_TYPE\n0 5 A\n0 x B\n7\n\
                    VALUES\n1 one\n1 uno\n1 uno\nfoo\n\nEVENT_TYPE\n0 5 A\n0 5\n0 5 C\n";
        let p = Pcf::parse(text);
        let lines = |n: &Notes| n.kept.iter().map(|(l, _)| *l).collect::<Vec<_>>();
        assert_eq!(lines(&p.malformed), [3, 8, 9, 14]);
        assert_eq!(p.malformed.total, 4);
        assert_eq!(
            p.malformed.kept[1].1,
            "`0 x B` is not a line of EVENT_TYPE (`<color> <type> <label>`): skipped"
        );
        // Line 12 relabels value 1 (line 13 repeats the new label); line 17 lists type 5
        // again, with its label, and line 18 without one, which keeps `A`; line 19 relabels it.
        assert_eq!(lines(&p.relabelled), [4, 12, 19]);
        assert_eq!(
            p.relabelled.kept[0].1,
            "state 1 labelled `Busy`, after `Running` on an earlier line: `Busy` is used"
        );
        assert_eq!(p.states.get(&1).map(String::as_str), Some("Busy"));
        assert_eq!(p.value_label(5, 1), Some("uno"));
        assert_eq!(p.types.get(&5).map(String::as_str), Some("C"));
        let mut long = String::from("STATES\n");
        long.push_str(&"x\n".repeat(ROWS_PER_KIND + 5));
        let p = Pcf::parse(&long);
        assert_eq!(
            (p.malformed.kept.len(), p.malformed.total),
            (ROWS_PER_KIND, ROWS_PER_KIND as u64 + 5)
        );
        assert_eq!(p.malformed.kept.last().map(|n| n.0), Some(ROWS_PER_KIND as u64 + 1));
    }
}
