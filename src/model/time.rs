//! Time units of source traces and their conversion to nanoseconds.

/// Unit of a trace's raw timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Picoseconds (converted by flooring to ns).
    Ps,
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Target clock ticks of unknown rate (QS without `--tick-rate`): 1 tick = 1 unit of the
    /// tables' time columns.
    Tick,
}

impl TimeUnit {
    /// Parses `ps`, `ns`, `us` (also `µs`), `ms`, `s`, case-insensitively.
    pub fn parse(s: &str) -> Option<TimeUnit> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ps" => Some(TimeUnit::Ps),
            "ns" => Some(TimeUnit::Ns),
            "us" | "µs" => Some(TimeUnit::Us),
            "ms" => Some(TimeUnit::Ms),
            "s" => Some(TimeUnit::S),
            _ => None,
        }
    }

    /// Short name as written in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Ps => "ps",
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
            TimeUnit::Tick => "tick",
        }
    }

    /// Converts a raw time to ns. `None` unless the result is strictly inside ±[`MAX_ABS_NS`].
    /// Picoseconds are floored; the second value is true when that dropped a non-zero
    /// remainder.
    pub fn to_ns(self, raw: i64) -> Option<(i64, bool)> {
        let (ns, lost) = match self {
            TimeUnit::Ps => (raw.div_euclid(1000), raw.rem_euclid(1000) != 0),
            TimeUnit::Ns => (raw, false),
            TimeUnit::Us => (raw.checked_mul(1_000)?, false),
            TimeUnit::Ms => (raw.checked_mul(1_000_000)?, false),
            TimeUnit::S => (raw.checked_mul(1_000_000_000)?, false),
            TimeUnit::Tick => (raw, false),
        };
        (ns.unsigned_abs() < MAX_ABS_NS.unsigned_abs()).then_some((ns, lost))
    }
}

/// Bound on time magnitudes, in ns (2^62, about 146 years either side of the trace's zero):
/// accepted times are strictly inside it, so the difference of any two fits in 64 bits and
/// durations, response times and other differences never overflow.
pub const MAX_ABS_NS: i64 = 1 << 62;

/// Parses a duration with a unit suffix (`10ms`, `250us`, `2s`, `15ns`, `1.5ms`) to ns.
/// A bare number is taken as ns.
pub fn parse_duration_ns(s: &str) -> Option<i64> {
    let (num, factor) = split_duration(s)?;
    if let Ok(i) = num.parse::<i64>() {
        if factor >= 1.0 {
            #[allow(clippy::cast_possible_truncation)]
            return i.checked_mul(factor as i64);
        }
    }
    let v: f64 = num.parse().ok()?;
    let ns = (v * factor).round();
    if ns.is_finite() && ns.abs() < 9.2e18 {
        #[allow(clippy::cast_possible_truncation)]
        Some(ns as i64)
    } else {
        None
    }
}

/// True when `s` is a duration [`parse_duration_ns`] reads but whose magnitude does not fit
/// in 64 bits of ns (`10000000000s`): too long, not unreadable.
pub fn duration_overflows(s: &str) -> bool {
    parse_duration_ns(s).is_none()
        && split_duration(s)
            .and_then(|(num, factor)| num.parse::<f64>().ok().map(|v| v * factor))
            .is_some_and(|ns| ns.abs() >= 9.2e18)
}

/// The number and the factor to ns of its unit suffix (a bare number is ns).
fn split_duration(s: &str) -> Option<(&str, f64)> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'));
    let (num, unit) = match split {
        Some(i) => s.split_at(i),
        None => (s, "ns"),
    };
    let factor: f64 = match TimeUnit::parse(unit)? {
        TimeUnit::Ps => 1e-3,
        TimeUnit::Ns => 1.0,
        TimeUnit::Us => 1e3,
        TimeUnit::Ms => 1e6,
        TimeUnit::S => 1e9,
        TimeUnit::Tick => return None,
    };
    Some((num, factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_units() {
        assert_eq!(TimeUnit::parse("US"), Some(TimeUnit::Us));
        assert_eq!(TimeUnit::Us.to_ns(3), Some((3000, false)));
        assert_eq!(TimeUnit::Ps.to_ns(1500), Some((1, true)));
        assert_eq!(TimeUnit::Ps.to_ns(-1500), Some((-2, true)));
        assert_eq!(TimeUnit::S.to_ns(i64::MAX / 10), None);
        // Any two accepted times are at most 2^63 apart: their difference fits.
        assert_eq!(TimeUnit::Ns.to_ns(MAX_ABS_NS - 1), Some((MAX_ABS_NS - 1, false)));
        assert_eq!(TimeUnit::Ns.to_ns(1 - MAX_ABS_NS), Some((1 - MAX_ABS_NS, false)));
        assert!((MAX_ABS_NS - 1).checked_sub(1 - MAX_ABS_NS).is_some());
        assert_eq!(TimeUnit::Ns.to_ns(MAX_ABS_NS), None);
        assert_eq!(TimeUnit::Ns.to_ns(-MAX_ABS_NS), None);
        assert_eq!(TimeUnit::Ns.to_ns(i64::MIN), None);
        assert_eq!(TimeUnit::parse("min"), None);
    }

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration_ns("10ms"), Some(10_000_000));
        assert_eq!(parse_duration_ns("1.5ms"), Some(1_500_000));
        assert_eq!(parse_duration_ns("250 us"), Some(250_000));
        assert_eq!(parse_duration_ns("42"), Some(42));
        assert_eq!(parse_duration_ns("3parsecs"), None);
        assert_eq!(parse_duration_ns("10000000000s"), None);
        assert!(duration_overflows("10000000000s"));
        assert!(duration_overflows("-100000000000s") && duration_overflows("99999999999999999999"));
        assert!(!duration_overflows("9s") && !duration_overflows("soon"));
        assert!(!duration_overflows("3parsecs") && !duration_overflows("inf"));
    }
}
