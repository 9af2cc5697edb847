//! paraver-kernel's "new format" body, read by translating each record into the usual
//! layout ([`new_format_record`]), so that one reader reads both.
//!
//! Input: a record's text and the [`Names`] (which place a global thread number in the
//! process model). Output: the record of the usual layout, or `None` for one that adds
//! nothing.
use super::names::Names;

/// A record of paraver-kernel's "new format" body (`TraceBodyIO_v2`, chosen by a first line
/// `new format`) as the record of the usual body it stands for, or `None` for one that adds
/// nothing: a state's end (its begin record has both times) and the send/receive marks of a
/// communication (`4`..`7`: a communication's index, whose `d` record has its times). Objects
/// are one global thread number (1-based) there, `appl:task:thread` here.
/// ```text
/// 1:cpu:thread:begin:end:state          -> 1:cpu:a:t:th:begin:end:state
/// 2:cpu:thread:begin:end:state          (state end)  -> None
/// 3:cpu:thread:time:type:value...       -> 2:cpu:a:t:th:time:type:value...
/// d:cpu:thread:lsend:psend:cpu:thread:lrecv:precv:size:tag -> 3:cpu:a:t:th:...:cpu:a:t:th:...
/// 4..7:comm                             -> None
/// 8:...                                 -> 4:... (global communication)
/// ```
/// Anything else is returned as it is (comments, communicator lines, records of the usual
/// layout, and lines of no known type, which are reported as such).
pub(super) fn new_format_record(text: &str, names: &Names) -> Option<String> {
    let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
    let object = |f: &mut std::str::Split<'_, char>| -> Option<String> {
        let cpu = f.next()?;
        let thread = f.next()?;
        Some(format!("{cpu}:{}", names.locate(thread)))
    };
    let mut f = rest.split(':');
    // A record of the usual layout after a `new format` line (a writer that puts the line
    // before a usual body) is told by its number of fields, which no record of the new
    // layout has: 8 for a state (6 there), at least 8 for events (a state's end: 6), 15 for a
    // communication (events: an even number), more than 2 for a global communication.
    let fields = text.strip_suffix(':').unwrap_or(text).split(':').count();
    match kind {
        "1" if fields != 6 => Some(text.to_string()),
        "2" if fields != 6 => Some(text.to_string()),
        "3" if fields % 2 == 1 => Some(text.to_string()),
        "4" if fields != 2 => Some(text.to_string()),
        "2" | "4" | "5" | "6" | "7" => None,
        "1" | "3" => {
            let Some(o) = object(&mut f) else { return Some(text.to_string()) };
            let v1 = if kind == "1" { "1" } else { "2" };
            Some(
                std::iter::once(format!("{v1}:{o}"))
                    .chain(f.map(str::to_string))
                    .collect::<Vec<_>>()
                    .join(":"),
            )
        }
        "d" => {
            let sender = object(&mut f);
            let times: Vec<&str> = f.by_ref().take(2).collect();
            let receiver = object(&mut f);
            match (sender, receiver) {
                (Some(s), Some(r)) if times.len() == 2 => Some(
                    std::iter::once(format!("3:{s}:{}:{r}", times.join(":")))
                        .chain(f.map(str::to_string))
                        .collect::<Vec<_>>()
                        .join(":"),
                ),
                _ => Some(text.to_string()),
            }
        }
        "8" => Some(format!("4:{rest}")),
        _ => Some(text.to_string()),
    }
}
