//! Which column holds what: the names S32DS and TRACE32 exports write, recognised out of
//! the box (case, spaces, `_` and `-` ignored; a unit in brackets, `Time [us]`, is the
//! column's unit), or the mapping file's choice.
use super::fields::{normalise, split};
use super::map::{ColumnRef, Encoding, Mapping};

/// Recognised header names per role (normalised).
const KNOWN: &[(&str, &[&str])] = &[
    ("time", &["timestamp", "globaltimestamp", "time", "ti.back", "ti.zero", "ti.abs", "ti"]),
    ("index", &["index", "record", "rec", "no", "#"]),
    ("core", &["source", "core", "cpu", "coreid", "master"]),
    ("type", &["type", "cycle", "kind", "eventtype", "event"]),
    ("access", &["access", "dir", "direction", "rw"]),
    ("address", &["address", "addr", "pc"]),
    ("destination", &["destination", "dest", "target", "branchtarget"]),
    ("data", &["data", "value"]),
    ("symbol", &["symbol", "sym", "function", "variable", "label"]),
];

/// The S32DS trace viewer's columns (FORMATS.md §5): a header holding all of them is a
/// hardware-trace export.
const S32DS: &[&str] = &["index", "source", "type", "address", "destination", "timestamp"];
/// A TRACE32 list's columns: all of these and a `ti.back` or `ti.zero` time.
const TRACE32: &[&str] = &["record", "cycle", "address", "data", "symbol"];

/// Column indexes (0-based) of each role.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    /// Time.
    pub time: Option<usize>,
    /// Record number (kept in no table: rows have their own order).
    pub index: Option<usize>,
    /// Trace source or core.
    pub core: Option<usize>,
    /// Record type or bus cycle.
    pub kind: Option<usize>,
    /// Read or write, when apart from the type.
    pub access: Option<usize>,
    /// Address.
    pub address: Option<usize>,
    /// Branch destination.
    pub destination: Option<usize>,
    /// Data value.
    pub data: Option<usize>,
    /// Symbol.
    pub symbol: Option<usize>,
    /// Names of the header, as written.
    pub names: Vec<String>,
    /// Unit written in the time column's header (`Time [us]`), ps per unit.
    pub header_unit: Option<i128>,
    /// Encoding the time column's name implies (`ti.back`: delta).
    pub header_encoding: Option<Encoding>,
}

/// A header cell's name without a bracketed unit, and that unit's ps.
fn name_and_unit(cell: &str) -> (String, Option<i128>) {
    let t = cell.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let (Some(a), true) = (t.find(open), t.ends_with(close)) {
            let unit = t.get(a + 1..t.len() - 1).and_then(super::fields::ps_per_unit);
            if unit.is_some() {
                return (normalise(t.get(..a).unwrap_or(t)), unit);
            }
        }
    }
    (normalise(t), None)
}

/// Whether the mapping places some role at column `i`.
fn map_taken(map: &Mapping, reduced: &[(String, Option<i128>)], i: usize) -> bool {
    map.columns.values().any(|r| match r {
        ColumnRef::Number(n) => *n == i + 1,
        ColumnRef::Name(w) => reduced.get(i).is_some_and(|(n, _)| *n == normalise(w)),
    })
}

impl Columns {
    /// Columns of the header row `header` split at `delim`, the mapping's choices first.
    /// The error names what the mapping asks for and the header lacks.
    pub fn new(header: &str, delim: u8, map: &Mapping) -> std::result::Result<Columns, String> {
        let names = split(header, delim).0;
        let reduced: Vec<(String, Option<i128>)> = names.iter().map(|n| name_and_unit(n)).collect();
        let mut c = Columns { names: names.clone(), ..Columns::default() };
        // Columns the mapping places: a recognised name does not take one of them.
        let mut taken: Vec<(usize, &str)> = Vec::new();
        for (role, known) in KNOWN {
            let at = match map.columns.get(*role) {
                Some(ColumnRef::Number(n)) => {
                    if *n == 0 || *n > names.len() {
                        return Err(format!(
                            "columns.{role}: column {n} does not exist (the header has {})",
                            names.len()
                        ));
                    }
                    Some(n - 1)
                }
                Some(ColumnRef::Name(want)) => {
                    let w = normalise(want);
                    let found = reduced.iter().position(|(n, _)| *n == w);
                    if found.is_none() {
                        return Err(format!(
                            "columns.{role}: no column named '{want}' in the header ({})",
                            names.join(", ")
                        ));
                    }
                    found
                }
                None => None,
            };
            if let Some(i) = at {
                if let Some((_, other)) = taken.iter().find(|(t, _)| *t == i) {
                    return Err(format!(
                        "columns.{role} and columns.{other} are both column {}: one role each",
                        i + 1
                    ));
                }
                taken.push((i, role));
            }
            let at = at.or_else(|| {
                if map.columns.contains_key(*role) {
                    return None;
                }
                known.iter().find_map(|k| {
                    reduced
                        .iter()
                        .enumerate()
                        .position(|(i, (n, _))| n == k && !map_taken(map, &reduced, i))
                })
            });
            let slot = match *role {
                "time" => &mut c.time,
                "index" => &mut c.index,
                "core" => &mut c.core,
                "type" => &mut c.kind,
                "access" => &mut c.access,
                "address" => &mut c.address,
                "destination" => &mut c.destination,
                "data" => &mut c.data,
                _ => &mut c.symbol,
            };
            *slot = at;
        }
        if let Some((name, unit)) = c.time.and_then(|i| reduced.get(i)) {
            c.header_unit = *unit;
            c.header_encoding = match name.as_str() {
                "ti.back" => Some(Encoding::Delta),
                "ti.zero" | "ti.abs" => Some(Encoding::Absolute),
                _ => None,
            };
            if c.header_unit.is_none() && name.starts_with("ti.") {
                // TRACE32 shows times in seconds.
                c.header_unit = Some(1_000_000_000_000);
            }
        }
        Ok(c)
    }

    /// `role=Header` pairs, for `captures.meta`.
    pub fn describe(&self) -> String {
        let roles = [
            ("time", self.time),
            ("core", self.core),
            ("type", self.kind),
            ("access", self.access),
            ("address", self.address),
            ("destination", self.destination),
            ("data", self.data),
            ("symbol", self.symbol),
        ];
        roles
            .iter()
            .filter_map(|(r, i)| Some(format!("{r}={}", self.names.get((*i)?)?)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Whether `header` (a first row) is unmistakably a hardware-trace export: all of the
/// S32DS trace viewer's columns, or all of a TRACE32 list's with its time column.
pub fn is_export_header(header: &str) -> bool {
    let delim = super::fields::detect_delimiter(header);
    let names: Vec<String> = split(header, delim).0.iter().map(|n| name_and_unit(n).0).collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    S32DS.iter().all(|n| has(n))
        || (TRACE32.iter().all(|n| has(n)) && (has("ti.back") || has("ti.zero")))
}
