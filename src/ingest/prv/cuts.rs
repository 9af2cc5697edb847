//! The cuts Paraver's cutter recorded in a trace's `#...:CUTTER:...` body lines, and the
//! `captures.meta` entries made of them (`paraver.cuts`, `paraver.cut_offset_ns`,
//! `paraver.cut_from`). Other `#` lines are ignored.
use crate::ingest::Sink;
use crate::model::TimeUnit;

/// What the `#` metadata lines of a trace cut by Paraver say: each cut adds
/// `#<date>:CUTTER:<ORIGINAL|RUNAPP>:"<original trace>":<offset>:<begin>:<end>` (times in the
/// trace's unit) to those of the trace it cut; paraver-kernel (`ParaverMetadataManager`) adds
/// up their offsets.
#[derive(Default)]
pub(super) struct Cuts {
    count: u64,
    /// Sum of the offsets, in the trace's unit.
    offset: u128,
    /// The original trace named by the first cut.
    from: Option<String>,
}

impl Cuts {
    /// Takes note of body line `text` (starting with `#`) when it is a cutter record.
    pub(super) fn note(&mut self, text: &str) {
        let fields = metadata_fields(text.get(1..).unwrap_or(""));
        let [_, action, _, original, offset, _, _] = fields.as_slice() else { return };
        let Ok(offset) = offset.parse::<u64>() else { return };
        if action != "CUTTER" {
            return;
        }
        self.count += 1;
        self.offset = self.offset.saturating_add(u128::from(offset));
        if self.from.is_none() {
            self.from = Some(original.clone());
        }
    }

    /// The `captures.meta` entries: `paraver.cuts`, `paraver.cut_offset_ns`,
    /// `paraver.cut_from`.
    pub(super) fn meta(&self, unit: TimeUnit, sink: &mut dyn Sink) {
        if self.count == 0 {
            return;
        }
        sink.meta("paraver.cuts", &self.count.to_string());
        let ns = match unit {
            TimeUnit::Us => self.offset.saturating_mul(1_000),
            TimeUnit::Ms => self.offset.saturating_mul(1_000_000),
            _ => self.offset,
        };
        sink.meta("paraver.cut_offset_ns", &ns.to_string());
        if let Some(from) = &self.from {
            sink.meta("paraver.cut_from", from);
        }
    }
}

/// The `:`-separated fields of a metadata line, trimmed; a field that starts with `"` runs
/// to its closing `"` (`""` inside is one `"`), so a quoted path may hold `:`.
fn metadata_fields(text: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if !quoted && current.trim().is_empty() => {
                current.clear();
                quoted = true;
            }
            '"' if quoted => {
                if chars.peek() == Some(&'"') {
                    current.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            }
            ':' if !quoted => fields.push(std::mem::take(&mut current).trim().to_string()),
            c => current.push(c),
        }
    }
    fields.push(current.trim().to_string());
    fields
}
