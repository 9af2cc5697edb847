//! Paraver `.prv` importer (Extrae, ovni's emulator), with its `.pcf` and `.row` companions.
//!
//! Spec digest (paraver-kernel `traceheader.h`, `tracebodyio_v1.cpp`; ovni `src/emu/pv/prv.c`;
//! FORMATS.md section 2):
//!
//! ```text
//! new format                                     optional first line: the body is then
//!                                                paraver-kernel's v2 layout (objects are a
//!                                                global thread number), translated record by
//!                                                record (`new_format.rs`)
//! #Paraver (21/01/2022 at 16:37):1616378951_ns:1(20):2:8(1:1,...),12(1:1,...),14
//!          `date: read to ')'`  end[_ns|_us|_ms]  resources  n_appl  appl...  [,n_comms]
//!   end without unit = µs; an unknown suffix = µs plus a `unknown_time_unit` diagnostic
//!   resources: `0` (none: ovni), `0()` (none: Extrae) | `<nodes>(<cpus>,...)` | `<nodes>`
//!   appl: `<n_tasks>(<n_threads>:<node>,...)`, applications separated by `:`; Dimemas
//!   writes `,<n_comms>` after each application that has communicators (added up here)
//! c:1:1:12:1:2:...                               n_comms communicator lines (c:, C:, i:, I:)
//! 1:cpu:appl:task:thread:begin:end:state         state (end -1: not ended)
//! 2:cpu:appl:task:thread:time:type:value[:type:value]...   events, several per line
//! 3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag   message
//! 4:...                                          global communication: ignored (info)
//! #...                                           comment/metadata line in the body: skipped,
//!                                                the cutter's `#d:CUTTER:...` go to meta
//! ```
//!
//! Ids are 1-based; cpu 0 = no CPU. Times are integers >= 0 in the header's unit, scaled to
//! ns. Records are only roughly in time order (messages are written at their physical send
//! time): they keep their own times and the derive stage writes the tables sorted.
//!
//! Mapping: a thread `appl.task.thread` is an entity named by its `.row` THREAD label
//! (trimmed) or `THREAD a.t.th`, of type THREAD; a row whose label is a CPU's (` CPU 0.0`,
//! `vCPU 0.*`: ovni's cpu.prv puts CPUs in the THREAD rows; so do Nanos6's `CPU 3`,
//! `LT VCPU 4`, `ET VCPU 5`) is of type CPU. A record's cpu is an entity of type CPU named by
//! its `.row` CPU label or `CPU n`, given as `core`.
//! A label on several rows of a level gets each row's id appended (`worker (1.1.2)`,
//! `cpu (2)`), with an info diagnostic: one entity per row. So does a THREAD label equal to
//! a CPU label, and a label equal to a name made so. Labels after an unreadable application
//! of the header are not used (their rows are unknown).
//! State records are `state` intervals named from `.pcf` STATES; each event pair is one
//! `events` row (action = the type's name, value, note = the value's label) and a set of
//! the channel named after the type (0 ends its state); communications are `messages`.
//! Without a `.pcf`/`.row` names are numbers, with an info diagnostic saying so.
//! Numbers are 64-bit, signed or unsigned, and kept exact (`i128` here): a value beyond 2^53
//! is the nearest double in `value` and exact in the text beside it (the note, the state).
//! A record that cannot be read (wrong field count, not a number, negative time or one
//! beyond 2^62 ns, end before begin) is a `malformed_record` diagnostic naming its line and
//! is skipped.
//!
//! Layout: `companions.rs` finds and reads the `.pcf` (`pcf.rs`) and `.row` (`row.rs`);
//! `header.rs` parses the header line; `names.rs` names threads and CPUs; `reader.rs` reads
//! the records, with `new_format.rs` translating a "new format" body and `cuts.rs` the
//! cutter's metadata lines.
mod companions;
mod cuts;
mod header;
mod names;
mod new_format;
pub mod pcf;
mod reader;
pub mod row;

pub use companions::{companion_path, Companions};
pub use reader::read;

use std::borrow::Cow;

/// True when `prefix` starts (after an optional `new format` line) with `#Paraver`, in any
/// letter case.
pub fn sniff(prefix: &[u8]) -> bool {
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let text = String::from_utf8_lossy(prefix.get(..prefix.len().min(4096)).unwrap_or(prefix));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut first = lines.next().unwrap_or("");
    if first.eq_ignore_ascii_case("new format") {
        first = lines.next().unwrap_or("");
    }
    first.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("#paraver"))
}

/// `s` cut to its first 120 bytes (at a character boundary) and `...`, for messages that
/// quote a line.
fn clip(s: &str) -> Cow<'_, str> {
    if s.len() <= 120 {
        return Cow::Borrowed(s);
    }
    let mut end = 120;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", s.get(..end).unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_paraver_headers() {
        assert!(sniff(
            b"#Paraver (19/01/38 at 03:14):00000000000052265789_ns:0:1:1(4:1)\n2:0:1:1:1:0:6:1\n"
        ));
        assert!(sniff(b"new format\n#PARAVER (x):10:0:1:1(1:1)\n"));
        assert!(!sniff(b"#version 2.1\n0,a,0,T,b,0,start\n"));
        assert!(!sniff(b"hello"));
    }
}
