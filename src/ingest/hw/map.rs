//! The mapping file (`--hw-map FILE`, JSON): how the export's columns are read, and which
//! variables and functions are OS objects. Every key is optional; an unknown key is an error
//! (a misspelt key silently ignored would hide a whole system view).
use super::fields::{glob, parse_int, ps_per_unit};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Column roles a mapping can place.
pub const ROLES: &[&str] =
    &["time", "type", "address", "destination", "data", "symbol", "core", "access", "index"];

/// A column named by its header text or its 1-based number.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ColumnRef {
    /// 1-based column number.
    Number(usize),
    /// Header text (compared as the recognised names are: case, spaces, `_`, `-` ignored).
    Name(String),
}

/// `time` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSpec {
    /// `absolute`, `delta` or `marker`.
    pub encoding: Option<String>,
    /// `ps`, `ns`, `us`, `ms`, `s` or `cycles`.
    pub unit: Option<String>,
    /// Clock of `cycles`, Hz.
    pub frequency_hz: Option<u64>,
}

/// The file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    delimiter: Option<String>,
    #[serde(default)]
    columns: BTreeMap<String, ColumnRef>,
    #[serde(default)]
    time: TimeSpec,
    address_radix: Option<u32>,
    data_radix: Option<u32>,
    #[serde(default)]
    cores: BTreeMap<String, String>,
    #[serde(default)]
    current_task: BTreeMap<String, String>,
    #[serde(default)]
    tasks: BTreeMap<String, String>,
    #[serde(default)]
    idle: Vec<String>,
    #[serde(default)]
    terminate_functions: Vec<String>,
    #[serde(default)]
    runnables: Vec<String>,
    #[serde(default)]
    isrs: Vec<String>,
    #[serde(default)]
    signals: Vec<String>,
}

/// How encoded times are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Each row's time is its own.
    Absolute,
    /// Each row's time is the time since the row before (TRACE32 `ti.back`).
    Delta,
    /// Rows with a time are timestamp messages; rows without one lie between two of them.
    Marker,
}

/// A variable named by symbol or by address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// Symbol name.
    Name(String),
    /// Address.
    Addr(u64),
}

impl Var {
    /// A key: an address (in `radix` without a prefix) when it starts with a digit, else a
    /// symbol name.
    fn parse(key: &str, radix: u32) -> Var {
        match parse_int(key, radix).and_then(|v| u64::try_from(v).ok()) {
            Some(a) if key.trim_start().starts_with(|c: char| c.is_ascii_digit()) => Var::Addr(a),
            _ => Var::Name(key.trim().to_string()),
        }
    }

    /// Whether this is the variable at `addr` named `name`.
    pub fn is(&self, addr: Option<u64>, name: Option<&str>) -> bool {
        match self {
            Var::Name(n) => name == Some(n.as_str()),
            Var::Addr(a) => addr == Some(*a),
        }
    }
}

/// The mapping, checked.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// Field delimiter (`None`: from the header row).
    pub delimiter: Option<u8>,
    /// Column role → column.
    pub columns: BTreeMap<String, ColumnRef>,
    /// Time encoding (`None`: from the time column's name).
    pub encoding: Option<Encoding>,
    /// ps per unit (`None`: cycles or unspecified).
    pub unit_ps: Option<i128>,
    /// The unit as written.
    pub unit: Option<String>,
    /// Cycle clock.
    pub frequency_hz: Option<u64>,
    /// Radix of an address written without prefix.
    pub address_radix: u32,
    /// Radix of data written without prefix.
    pub data_radix: u32,
    /// Source/core column text → core name.
    pub cores: BTreeMap<String, String>,
    /// "Current task" variables → core name.
    pub current_task: Vec<(Var, String)>,
    /// Value → task name.
    pub tasks: BTreeMap<i128, String>,
    /// Values meaning no task runs.
    pub idle: Vec<i128>,
    /// Functions whose entry by a task means it terminates.
    pub terminate_functions: Vec<String>,
    /// Runnable function globs.
    pub runnables: Vec<String>,
    /// ISR function globs.
    pub isrs: Vec<String>,
    /// Signal variable globs, or addresses.
    pub signals: Vec<String>,
}

impl Default for Mapping {
    /// No mapping file: recognised columns, hex addresses, decimal data, no system view.
    fn default() -> Mapping {
        Mapping {
            delimiter: None,
            columns: BTreeMap::new(),
            encoding: None,
            unit_ps: None,
            unit: None,
            frequency_hz: None,
            address_radix: 16,
            data_radix: 10,
            cores: BTreeMap::new(),
            current_task: Vec::new(),
            tasks: BTreeMap::new(),
            idle: Vec::new(),
            terminate_functions: Vec::new(),
            runnables: Vec::new(),
            isrs: Vec::new(),
            signals: Vec::new(),
        }
    }
}

impl Mapping {
    /// Parses the JSON text of a mapping file; the error says what is wrong and where.
    pub fn parse(text: &str) -> std::result::Result<Mapping, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let delimiter = match raw.delimiter.as_deref() {
            None => None,
            Some("\\t" | "\t" | "tab") => Some(b'\t'),
            Some(d) if d.len() == 1 && [",", ";", "|", " "].contains(&d) => d.bytes().next(),
            Some(d) => {
                return Err(format!("delimiter '{d}': expected \",\", \";\", \"|\" or \"tab\""))
            }
        };
        for role in raw.columns.keys() {
            if !ROLES.contains(&role.as_str()) {
                return Err(format!(
                    "columns: unknown role '{role}' (expected one of {})",
                    ROLES.join(", ")
                ));
            }
        }
        let encoding = match raw.time.encoding.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None => None,
            Some("absolute") => Some(Encoding::Absolute),
            Some("delta") => Some(Encoding::Delta),
            Some("marker") => Some(Encoding::Marker),
            Some(e) => {
                return Err(format!("time.encoding '{e}': expected absolute, delta or marker"))
            }
        };
        let unit_ps =
            match raw.time.unit.as_deref() {
                None | Some("cycles") => None,
                Some(u) => Some(ps_per_unit(u).ok_or_else(|| {
                    format!("time.unit '{u}': expected ps, ns, us, ms, s or cycles")
                })?),
            };
        if raw.time.frequency_hz == Some(0) {
            return Err("time.frequency_hz must be above 0".into());
        }
        if raw.time.frequency_hz.is_some() && raw.time.unit.as_deref() != Some("cycles") {
            return Err("time.frequency_hz is for time.unit \"cycles\"".into());
        }
        let radix = |r: Option<u32>, what: &str| match r {
            None => Ok(None),
            Some(r @ (2 | 8 | 10 | 16)) => Ok(Some(r)),
            Some(r) => Err(format!("{what} {r}: expected 2, 8, 10 or 16")),
        };
        let value = |k: &str, what: &str| {
            parse_int(k, 10).ok_or_else(|| format!("{what}: '{k}' is not an integer"))
        };
        let mut tasks = BTreeMap::new();
        for (k, name) in &raw.tasks {
            tasks.insert(value(k, "tasks")?, name.clone());
        }
        let idle = raw.idle.iter().map(|k| value(k, "idle")).collect::<Result<Vec<_>, _>>()?;
        let address_radix = radix(raw.address_radix, "address_radix")?.unwrap_or(16);
        // A key starting with a digit is an address (no symbol name starts with one): one
        // that does not read as an address in 64 bits would match nothing, silently.
        let keys = raw.current_task.keys().map(|k| ("current_task", k));
        let sigs = raw.signals.iter().filter(|p| !p.contains(['*', '?'])).map(|p| ("signals", p));
        for (what, k) in keys.chain(sigs) {
            if let Var::Name(_) = Var::parse(k, address_radix) {
                if k.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(format!(
                        "{what}: '{k}' starts with a digit but is not an address of at most 64 \
                         bits in address_radix {address_radix} (no symbol name starts with a digit)"
                    ));
                }
            }
        }
        Ok(Mapping {
            delimiter,
            columns: raw.columns,
            encoding,
            unit_ps,
            unit: raw.time.unit,
            frequency_hz: raw.time.frequency_hz,
            address_radix,
            data_radix: radix(raw.data_radix, "data_radix")?.unwrap_or(10),
            cores: raw.cores,
            current_task: raw
                .current_task
                .iter()
                .map(|(k, c)| (Var::parse(k, address_radix), c.clone()))
                .collect(),
            tasks,
            idle,
            terminate_functions: raw.terminate_functions,
            runnables: raw.runnables,
            isrs: raw.isrs,
            signals: raw.signals,
        })
    }

    /// Whether the mapping names any OS object (else no system events are made).
    pub fn has_system(&self) -> bool {
        !self.current_task.is_empty()
            || !self.runnables.is_empty()
            || !self.isrs.is_empty()
            || !self.signals.is_empty()
    }

    /// The core whose current task `addr`/`name` holds.
    pub fn task_var_core(&self, addr: Option<u64>, name: Option<&str>) -> Option<&str> {
        self.current_task.iter().find(|(v, _)| v.is(addr, name)).map(|(_, c)| c.as_str())
    }

    /// Whether the variable at `addr` named `name` is a mapped signal.
    pub fn is_signal(&self, addr: Option<u64>, name: Option<&str>) -> bool {
        self.signals.iter().any(|p| match Var::parse(p, self.address_radix) {
            Var::Addr(a) => addr == Some(a),
            Var::Name(_) => name.is_some_and(|n| glob(p, n)),
        })
    }

    /// Whether function `name` is a runnable.
    pub fn is_runnable(&self, name: &str) -> bool {
        self.runnables.iter().any(|p| glob(p, name))
    }

    /// Whether function `name` is an ISR.
    pub fn is_isr(&self, name: &str) -> bool {
        self.isrs.iter().any(|p| glob(p, name))
    }

    /// Whether entering function `name` terminates the task that enters it.
    pub fn is_terminate(&self, name: &str) -> bool {
        self.terminate_functions.iter().any(|p| glob(p, name))
    }
}
