//! Paraver `.row` (labels of the rows of each level).
//!
//! Spec digest (paraver-kernel `rowfileparser.cpp`; Extrae and ovni samples):
//!
//! ```text
//! LEVEL NODE SIZE 1          `LEVEL <NAME> SIZE <n>`, then exactly n label lines
//! hostname
//!                            blank lines between blocks, `#` comments
//! LEVEL THREAD SIZE 2        levels WORKLOAD, APPL, TASK, THREAD, SYSTEM, NODE, CPU
//! THREAD 1.1.1               (ovni's cpu.row lists CPUs at level THREAD: ` CPU 0.0`)
//! THREAD 1.2.1
//! ```
//!
//! A trailing `\r` is stripped. Headers of unknown shape (`TASK LEVEL SIZE 4`) are skipped
//! with their block, as paraver-kernel does. A line starting with `LEVEL ` always starts a
//! new block: a block with fewer labels than its SIZE ends there and is reported in
//! [`Row::problems`]. Blank lines at the end of a block are not labels. Labels are kept as written
//! here; the importer trims them when it makes entity names.
use std::collections::HashMap;

/// The labels of one level.
#[derive(Debug, Default, Clone)]
pub struct Level {
    /// Labels in row order.
    pub labels: Vec<String>,
    /// 1-based line of the first label (the labels are on consecutive lines).
    pub first_line: u64,
}

/// Labels per level name (upper case), in row order.
#[derive(Debug, Default, Clone)]
pub struct Row {
    /// Level -> labels.
    pub levels: HashMap<String, Level>,
    /// Problems found: 1-based line and what is wrong there.
    pub problems: Vec<(u64, String)>,
}

/// `LEVEL <NAME> SIZE <n>` (name upper-cased) or `<x> LEVEL SIZE <n>` (no name): the level
/// and the label count. `None` when `line` is not a header.
fn header(line: &str) -> Option<(Option<String>, Option<usize>)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["LEVEL", name, "SIZE", n] => Some((Some(name.to_ascii_uppercase()), n.parse().ok())),
        [_, "LEVEL", "SIZE", n] => Some((None, n.parse().ok())),
        _ => None,
    }
}

impl Row {
    /// Parses the text of a `.row`.
    pub fn parse(text: &str) -> Row {
        let mut row = Row::default();
        let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).zip(1u64..);
        let mut next = lines.next();
        while let Some((line, number)) = next.take() {
            next = lines.next();
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let Some((level, n)) = header(t) else { continue };
            let n = n.unwrap_or(0);
            let mut labels: Vec<String> = Vec::new();
            while labels.len() < n {
                let Some((l, _)) = next else { break };
                if l.trim_start().starts_with("LEVEL ") {
                    break;
                }
                labels.push(l.to_string());
                next = lines.next();
            }
            // Blank lines at the end of a block separate it from the next one: they are not
            // labels (so a short block followed by a blank line is still short).
            let full = labels.len() == n;
            while labels.last().is_some_and(|l| l.trim().is_empty()) {
                labels.pop();
            }
            if labels.len() < n {
                let name = level.as_deref().unwrap_or("(unnamed)");
                let first_blank = number + 1 + labels.len() as u64;
                let at = match next {
                    _ if full => format!("line {first_blank} is blank"),
                    Some((_, k)) => format!("the next LEVEL header is on line {k}"),
                    None => "the file ends".to_string(),
                };
                row.problems.push((
                    number,
                    format!("LEVEL {name} declares {n} labels, found {} ({at})", labels.len()),
                ));
            }
            if let Some(level) = level {
                row.levels.insert(level, Level { labels, first_line: number + 1 });
            }
        }
        row
    }

    /// The label of row `index` (0-based) of `level`.
    pub fn label(&self, level: &str, index: usize) -> Option<&str> {
        self.levels.get(level)?.labels.get(index).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_labels() {
        let r = Row::parse("LEVEL NODE SIZE 1\r\nhost\r\n\r\nTASK LEVEL SIZE 1\nx\nLEVEL THREAD SIZE 2\n CPU 0.0\nvCPU 0.*\n");
        assert_eq!(r.label("NODE", 0), Some("host"));
        assert_eq!(r.label("THREAD", 0), Some(" CPU 0.0"));
        assert_eq!(r.label("THREAD", 1), Some("vCPU 0.*"));
        assert_eq!(r.label("THREAD", 2), None);
        assert_eq!(r.levels["THREAD"].first_line, 7);
        assert!(!r.levels.contains_key("TASK"));
        assert!(r.problems.is_empty());
    }

    #[test]
    fn a_short_block_ends_at_the_next_level_header() {
        let r = Row::parse("LEVEL CPU SIZE 3\ncpuA\ncpuB\nLEVEL THREAD SIZE 2\nthA\nthB\n");
        assert_eq!(r.levels["CPU"].labels, ["cpuA", "cpuB"]);
        assert_eq!(r.label("THREAD", 0), Some("thA"));
        assert_eq!(r.label("THREAD", 1), Some("thB"));
        assert_eq!(r.levels["THREAD"].first_line, 5);
        assert_eq!(
            r.problems,
            [(
                1,
                "LEVEL CPU declares 3 labels, found 2 (the next LEVEL header is on line 4)".into()
            )]
        );
        // Blank lines before the header are not labels.
        let r = Row::parse("LEVEL CPU SIZE 3\ncpuA\ncpuB\n\n  \nLEVEL THREAD SIZE 1\nthA\n");
        assert_eq!(r.levels["CPU"].labels, ["cpuA", "cpuB"]);
        assert_eq!(r.label("THREAD", 0), Some("thA"));
        assert_eq!(
            r.problems,
            [(1, "LEVEL CPU declares 3 labels, found 2 (line 4 is blank)".into())]
        );
        let r = Row::parse("LEVEL THREAD SIZE 3\nthA\n");
        assert_eq!(r.levels["THREAD"].labels, ["thA"]);
        assert_eq!(
            r.problems,
            [(1, "LEVEL THREAD declares 3 labels, found 1 (the file ends)".into())]
        );
    }
}
