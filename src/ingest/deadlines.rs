//! Deadline files: one `entity,deadline` per line, the deadline with a unit suffix
//! (`TASK_10MS,10ms`, `ISR_*,250us`; a bare number is ns), `#` comments and blank lines
//! ignored, the entity may be a glob (`*`, `?`, `[...]`). A first line that is a CSV header
//! (`entity,deadline`, any case) is skipped. A line that cannot be read is a
//! fatal error naming the file and line: a deadline file is small and hand-written, and a
//! silently ignored deadline would hide misses. So is one pattern given two different
//! deadlines (which one applies would be a guess); given twice with the same deadline, it
//! is kept once.
use crate::model::time::{duration_overflows, parse_duration_ns};
use crate::{Error, Result};
use std::path::Path;

/// Reads a deadline file: (entity pattern, deadline in ns) pairs in file order.
pub fn read(path: &Path) -> Result<Vec<(String, i64)>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(&text, &path.display().to_string())
}

/// Parses the text of a deadline file named `path` (for messages).
pub fn parse(text: &str, path: &str) -> Result<Vec<(String, i64)>> {
    let mut out: Vec<(String, i64)> = Vec::new();
    // Pattern -> (line, deadline) of its first appearance.
    let mut seen: std::collections::HashMap<String, (usize, i64)> = Default::default();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if std::mem::take(&mut first) && is_header(line) {
            continue;
        }
        let pos = || format!("line {}", i + 1);
        let Some((entity, deadline)) = line.rsplit_once(',') else {
            return Err(Error::input(
                path,
                pos(),
                format!("expected 'entity,deadline' (e.g. TASK_10MS,10ms), found '{line}'"),
            ));
        };
        let entity = entity.trim();
        if entity.is_empty() {
            return Err(Error::input(path, pos(), "empty entity name"));
        }
        let ns = parse_duration_ns(deadline).filter(|v| *v > 0).ok_or_else(|| {
            let why = if duration_overflows(deadline) {
                "is too long: at most 9223372036854775807 ns (about 292 years)"
            } else {
                "is not a positive duration such as 10ms, 250us, 2s"
            };
            Error::input(path, pos(), format!("deadline '{}' {why}", deadline.trim()))
        })?;
        match seen.get(entity) {
            Some(&(_, earlier)) if earlier == ns => continue,
            Some(&(at, earlier)) => {
                return Err(Error::input(
                    path,
                    pos(),
                    format!(
                        "'{entity}' is given {ns} ns here and {earlier} ns at line {at}: which \
                         one applies would be a guess"
                    ),
                ));
            }
            None => {
                seen.insert(entity.to_string(), (i + 1, ns));
                out.push((entity.to_string(), ns));
            }
        }
    }
    Ok(out)
}

/// `entity,deadline` as a spreadsheet writes it: the column names, in any case, spaced.
fn is_header(line: &str) -> bool {
    line.split_once(',').is_some_and(|(a, b)| {
        a.trim().eq_ignore_ascii_case("entity") && b.trim().eq_ignore_ascii_case("deadline")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_units_globs_and_comments() {
        let d = parse("# deadlines\nTASK_10MS, 10ms\n\nISR_*,250us\nT3,1500\n", "d.csv").unwrap();
        assert_eq!(
            d,
            [("TASK_10MS".to_string(), 10_000_000), ("ISR_*".into(), 250_000), ("T3".into(), 1500)]
        );
    }

    #[test]
    fn bad_lines_name_the_position() {
        let e = parse("A,10ms\nB,soon\n", "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv: line 2: deadline 'soon' is not a positive duration such as 10ms, 250us, 2s"
        );
        assert!(parse("just a name\n", "d.csv").is_err());
        // A deadline past 64 bits of ns is too long, not unreadable.
        let e = parse("A,10000000000s\n", "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv: line 1: deadline '10000000000s' is too long: at most 9223372036854775807 ns \
             (about 292 years)"
        );
        // A header is a first line only: later, "entity" is a task's name like any other.
        let d = parse("# from a spreadsheet\nEntity, Deadline\nA,1ms\n", "d.csv").unwrap();
        assert_eq!(d, [("A".to_string(), 1_000_000)]);
        assert!(parse("A,1ms\nentity,deadline\n", "d.csv").is_err());
    }

    #[test]
    fn a_pattern_given_two_deadlines_is_refused_and_one_given_twice_kept_once() {
        let e = parse("A,10ms\nB*,1ms\n# again\nB*, 2ms\n", "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv: line 4: 'B*' is given 2000000 ns here and 1000000 ns at line 2: which one \
             applies would be a guess"
        );
        let d = parse("A,10ms\nB,1ms\nA,10000us\n", "d.csv").unwrap();
        assert_eq!(d, [("A".to_string(), 10_000_000), ("B".into(), 1_000_000)]);
    }
}
