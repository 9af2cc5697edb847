//! The normalised event: one BTF-shaped record, borrowed from the importer's buffer.

/// Where a record came from, for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pos {
    /// 1-based line of a text file.
    Line(u64),
    /// Byte offset in a binary file.
    Byte(u64),
    /// Frame or record index of a framed binary format.
    Frame(u64),
    /// No position (end of file, whole capture).
    None,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pos::Line(n) => write!(f, "line {n}"),
            Pos::Byte(n) => write!(f, "byte {n}"),
            Pos::Frame(n) => write!(f, "frame {n}"),
            Pos::None => Ok(()),
        }
    }
}

impl Pos {
    /// `file:line` style text used in the diagnostics table.
    pub fn with_path(&self, path: &str) -> String {
        match self {
            Pos::Line(n) => format!("{path}:{n}"),
            Pos::Byte(n) => format!("{path}@byte {n}"),
            Pos::Frame(n) => format!("{path}#frame {n}"),
            Pos::None => path.to_string(),
        }
    }
}

/// One source event: `source` (instance) did `action` to `target` (type, instance) at `ts`.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// Time, ns from the capture origin.
    pub ts: i64,
    /// Entity that caused the event.
    pub source: &'a str,
    /// Instance of the source (-1: none).
    pub source_instance: i64,
    /// Type code of the target as written (T, I, ISR, R, SEM, ...).
    pub target_type: &'a str,
    /// Entity the event happened to.
    pub target: &'a str,
    /// Instance of the target (-1: none).
    pub target_instance: i64,
    /// What happened.
    pub action: &'a str,
    /// Free text after the action, if any.
    pub note: Option<&'a str>,
    /// Numeric payload given by the format (Paraver event value); else the note when it is
    /// a plain number.
    pub value: Option<f64>,
    /// Core (CPU) the format names for the event (Paraver's cpu field); else derived.
    pub core: Option<&'a str>,
    /// Position in the source file.
    pub pos: Pos,
}
