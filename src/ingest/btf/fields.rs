//! Field-level helpers of the line reader: the comma scan, integers, the FreeRTOS logger's
//! task labels, clipped text for messages.
use super::*;

/// Where the first 7 commas of `line` are; returns how many there are. The slots after the
/// last comma found hold `usize::MAX`. Eight bytes at a time: BTF fields are a few bytes
/// long, shorter than a `memchr` call per field pays for (7 calls per line were ~20% of
/// reading a line).
pub(super) fn find_commas(line: &[u8], commas: &mut [usize; 7]) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
    *commas = [usize::MAX; 7];
    let mut n = 0;
    let mut push = |at: usize| {
        if let Some(slot) = commas.get_mut(n) {
            *slot = at;
        }
        n += 1;
        n == 7
    };
    let mut words = line.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w) ^ COMMAS;
        // The high bit of each byte that is zero in `x` (a comma in the line), exactly: no
        // carry crosses a byte.
        let mut zero = !(((x & LOW7) + LOW7) | x | LOW7);
        while zero != 0 {
            if push(base + (zero.trailing_zeros() / 8) as usize) {
                return 7;
            }
            zero &= zero - 1;
        }
        base += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b',' && push(base + i) {
            return 7;
        }
    }
    n
}

/// A task label of the FreeRTOS trace logger's older exporter, `[<core>/<task id>]<name>`
/// (`[0/0007]CS`; core and id decimal or `0x` hexadecimal): core, id and name. The logger
/// documents it (its docs/ "Task identity and labels", legacy label forms): the core is the
/// one the event happened on, and tasks are one across cores by their id.
pub(super) fn freertos_label(label: &str) -> Option<(u64, u64, &str)> {
    let (inside, name) = label.strip_prefix('[')?.split_once(']')?;
    let (core, id) = inside.split_once('/')?;
    Some((freertos_number(core)?, freertos_number(id)?, name))
}

/// A decimal or `0x` hexadecimal number of a FreeRTOS label (digits only, no sign).
pub(super) fn freertos_number(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Parses an optionally signed decimal integer, without overflow.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (neg, digits) = match b {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    if digits.len() <= 18 {
        // Up to 18 digits fit in an i64 whatever they are: no overflow to check.
        let mut v: i64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(d - b'0');
        }
        return Some(if neg { -v } else { v });
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        // Counted towards its sign, so that i64::MIN, whose magnitude no i64 holds, parses.
        let d = i64::from(d - b'0');
        v = v.checked_mul(10)?;
        v = if neg { v.checked_sub(d)? } else { v.checked_add(d)? };
    }
    Some(v)
}

/// The first 120 characters of `s`, for messages.
pub(super) fn clip(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(120) {
        Some((i, _)) => Cow::Owned(format!("{}...", s.get(..i).unwrap_or(s))),
        None => Cow::Borrowed(s),
    }
}
