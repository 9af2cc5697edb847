//! The JSON form: every figure of the report, for machines (durations in ns, loads 0..1).
use super::Report;

/// The report as pretty-printed JSON.
pub fn render(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
