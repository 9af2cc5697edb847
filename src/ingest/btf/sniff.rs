//! Recognising BTF from the first bytes of a file ([`sniff`]).
use super::*;

/// Header keys that identify a BTF file when sniffing.
pub(super) const KNOWN_KEYS: &[&str] = &[
    "version",
    "creator",
    "creationdate",
    "timescale",
    "inputfile",
    "entitytype",
    "typetable",
    "entitytable",
    "entitytypetable",
];

/// True when `prefix` looks like BTF: a known `#key` header line, or data lines most of
/// which have at least 7 comma-separated fields, an integer time, a target and an action. Up to
/// [`SNIFF_DATA_LINES`] data lines are looked at, so that one malformed line at the top
/// (a diagnostic like any other) does not make the whole file unrecognised. A NUL byte
/// (binary data) leaves only the header to go by: one stray NUL in a BTF file is a
/// malformed line, not a reason to refuse the file.
pub fn sniff(prefix: &[u8]) -> bool {
    // A hardware-trace export with 7 columns or more and a numeric first one has BTF-like
    // data lines: its header row tells it apart.
    if crate::ingest::hw::sniff(prefix) {
        return false;
    }
    let binary = prefix.contains(&0);
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let text = String::from_utf8_lossy(prefix);
    let (mut good, mut seen) = (0, 0);
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let key = rest.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
            if key.starts_with("paraver") {
                return false;
            }
            if KNOWN_KEYS.contains(&key.as_str()) {
                return true;
            }
            continue;
        }
        // Good: what the reader keeps (an integer time, a target and an action), not only
        // seven fields after a number (a hardware-trace export whose header row is damaged
        // has those, with its Destination or Data column empty on most rows).
        let fields: Vec<&str> = line.splitn(8, ',').map(str::trim).collect();
        if let [time, _, _, _, target, _, action, ..] = fields.as_slice() {
            if parse_int(time).is_some() && !target.is_empty() && !action.is_empty() {
                good += 1;
            }
        }
        seen += 1;
        if seen == SNIFF_DATA_LINES {
            break;
        }
    }
    !binary && good * 2 > seen
}

/// Data lines [`sniff`] looks at.
pub(super) const SNIFF_DATA_LINES: usize = 8;
