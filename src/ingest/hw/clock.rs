//! Times of an export to exact integer ns (SEMANTICS.md, "Hardware traces": a time per
//! event, a delta per event, or timestamp messages between events).
//!
//! Values are read exactly: a decimal with an optional unit suffix becomes attoseconds, a
//! cycle count stays cycles (i128 both), and only the total is converted to ns (floored), so
//! that a million deltas of 0.5 ns sum to 500 µs, not to 0.
use super::fields::parse_decimal;
use super::map::Encoding;
use crate::model::time::MAX_ABS_NS;

/// Attoseconds per ps.
const AS_PER_PS: i128 = 1_000_000;
/// Attoseconds per ns.
const AS_PER_NS: i128 = 1_000_000_000;

/// What the raw values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Time, default unit (for values without a suffix) in ps per unit.
    Time(i128),
    /// Clock cycles, of a known rate (Hz) or not (then 1 cycle is shown as 1 ns: `tick`).
    Cycles(Option<u64>),
}

/// A time value that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// Not a number (or a unit where cycles are counted).
    Bad(String),
    /// Beyond ±2^62 ns.
    Range(String),
}

/// The clock of one export.
#[derive(Debug, Clone)]
pub struct Clock {
    /// How times are written.
    pub encoding: Encoding,
    /// What they count.
    pub base: Base,
    /// Sum of the deltas so far, in base units (attoseconds or cycles).
    total: i128,
    /// Latest time returned, ns.
    pub last: Option<i64>,
}

/// A time read: ns, whether flooring lost a remainder, and whether it is before the
/// previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// Time, ns.
    pub ns: i64,
    /// A remainder below 1 ns was dropped.
    pub floored: bool,
    /// Earlier than the time before it (the previous one, ns).
    pub backwards: Option<i64>,
}

impl Clock {
    /// A clock reading `encoding` in `base`.
    pub fn new(encoding: Encoding, base: Base) -> Clock {
        Clock { encoding, base, total: 0, last: None }
    }

    /// A value in base units (attoseconds or cycles).
    fn units(&self, text: &str) -> Result<i128, TimeError> {
        let bad = || TimeError::Bad(format!("time '{text}' is not a number"));
        let (m, places, suffix) = parse_decimal(text).ok_or_else(bad)?;
        let scale = 10i128.checked_pow(places).ok_or_else(bad)?;
        match self.base {
            Base::Time(default) => {
                let ps = suffix.unwrap_or(default);
                let a = m.checked_mul(ps).and_then(|v| v.checked_mul(AS_PER_PS)).ok_or_else(bad)?;
                Ok(a.div_euclid(scale))
            }
            Base::Cycles(_) => {
                if suffix.is_some() || m % scale != 0 {
                    return Err(TimeError::Bad(format!(
                        "time '{text}' is not a whole number of cycles"
                    )));
                }
                Ok(m / scale)
            }
        }
    }

    /// Base units to ns (floored), with whether a remainder was dropped.
    fn to_ns(&self, units: i128, text: &str) -> Result<(i64, bool), TimeError> {
        let (ns, rem) = match self.base {
            Base::Time(_) => (units.div_euclid(AS_PER_NS), units.rem_euclid(AS_PER_NS) != 0),
            Base::Cycles(Some(hz)) => {
                let n = units.checked_mul(1_000_000_000).unwrap_or(i128::MAX);
                (n.div_euclid(i128::from(hz)), n.rem_euclid(i128::from(hz)) != 0)
            }
            Base::Cycles(None) => (units, false),
        };
        match i64::try_from(ns) {
            Ok(v) if v.unsigned_abs() < MAX_ABS_NS.unsigned_abs() => Ok((v, rem)),
            _ => Err(TimeError::Range(format!(
                "time '{text}' is beyond ±2^62 ns (about 146 years), the range tracedb keeps"
            ))),
        }
    }

    /// The time of a row whose time field is `text` (an absolute time, a delta, or a
    /// timestamp message's time, as the encoding says).
    ///
    /// A blank delta is 0: TRACE32 leaves `ti.back` blank on the first record and on
    /// records with no timestamp of their own, which are at the time of the row before.
    pub fn read(&mut self, text: &str) -> Result<Read, TimeError> {
        let blank_delta = self.encoding == Encoding::Delta && text.trim().is_empty();
        let units = if blank_delta { 0 } else { self.units(text)? };
        let total = match self.encoding {
            Encoding::Delta => self.total.checked_add(units).ok_or_else(|| {
                TimeError::Range(format!("time '{text}': the sum of the deltas overflows"))
            })?,
            Encoding::Absolute | Encoding::Marker => units,
        };
        let (ns, floored) = self.to_ns(total, text)?;
        self.total = total;
        let backwards =
            self.last.filter(|l| ns < *l || (self.encoding == Encoding::Delta && units < 0));
        self.last = Some(self.last.map_or(ns, |l| l.max(ns)));
        Ok(Read { ns, floored, backwards })
    }
}

/// The time of an event between timestamp messages at `prev` and `next` ns:
/// `prev + (next - prev) / 2`, floored (SEMANTICS.md).
pub fn midpoint(prev: i64, next: i64) -> i64 {
    let m = i128::from(prev) + (i128::from(next) - i128::from(prev)).div_euclid(2);
    i64::try_from(m).unwrap_or(prev)
}
