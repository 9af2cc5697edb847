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
//! with their block, as paraver-kernel does. Labels are kept as written here; the importer
//! trims them when it makes entity names.
use std::collections::HashMap;

/// Labels per level name (upper case), in row order.
#[derive(Debug, Default, Clone)]
pub struct Row {
    /// Level -> labels.
    pub levels: HashMap<String, Vec<String>>,
}

impl Row {
    /// Parses the text of a `.row`.
    pub fn parse(text: &str) -> Row {
        let mut row = Row::default();
        let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
        while let Some(line) = lines.next() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = t.split_whitespace().collect();
            let (level, n) = match words.as_slice() {
                ["LEVEL", name, "SIZE", n] => {
                    (Some(name.to_ascii_uppercase()), n.parse::<usize>().ok())
                }
                [_, "LEVEL", "SIZE", n] => (None, n.parse::<usize>().ok()),
                _ => continue,
            };
            let n = n.unwrap_or(0);
            let labels: Vec<String> = lines.by_ref().take(n).map(str::to_string).collect();
            if let Some(level) = level {
                row.levels.insert(level, labels);
            }
        }
        row
    }

    /// The label of row `index` (0-based) of `level`.
    pub fn label(&self, level: &str, index: usize) -> Option<&str> {
        self.levels.get(level)?.get(index).map(String::as_str)
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
        assert!(!r.levels.contains_key("TASK"));
    }
}
