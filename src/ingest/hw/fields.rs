//! Delimited text: the delimiter of a header row, one row's fields (quotes as RFC 4180 has
//! them, on one line), and the numbers a trace export writes (hex addresses and data, decimal
//! or suffixed times).

/// Delimiters tried on the header row, in order of preference on a tie.
const DELIMITERS: [u8; 3] = [b',', b';', b'\t'];

/// The delimiter of `header`: the one of `,` `;` tab found most often outside quotes (`,`
/// when none is: a one-column file).
pub fn detect_delimiter(header: &str) -> u8 {
    let mut best = (b',', 0usize);
    for d in DELIMITERS {
        let n = split(header, d).0.len();
        if n > best.1 {
            best = (d, n);
        }
    }
    best.0
}

/// The delimiter an Excel `sep=X` line names (`,` `;` `|` or tab, `sep` in any case).
pub fn excel_sep(text: &str) -> Option<u8> {
    let rest = text.get(..4).filter(|p| p.eq_ignore_ascii_case("sep=")).and(text.get(4..))?;
    match rest.as_bytes() {
        [d @ (b',' | b';' | b'|' | b'\t')] => Some(*d),
        _ => None,
    }
}

/// The fields of `line` split at `delim`, trimmed, with surrounding quotes removed and `""`
/// inside quotes read as one `"`; and whether a quote was left open (the field then runs to
/// the end of the line: records do not span lines).
pub fn split(line: &str, delim: u8) -> (Vec<String>, bool) {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_quotes = false;
    let mut chars = line.chars().peekable();
    let delim = char::from(delim);
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    in_quotes = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == delim {
            fields.push(finish(&mut cur, quoted));
            quoted = false;
        } else if c == '"' && cur.trim().is_empty() && !quoted {
            cur.clear();
            in_quotes = true;
            quoted = true;
        } else {
            cur.push(c);
        }
    }
    fields.push(finish(&mut cur, quoted));
    (fields, in_quotes)
}

fn finish(cur: &mut String, quoted: bool) -> String {
    let s = std::mem::take(cur);
    if quoted {
        // Text after the closing quote (`"a" b`) is kept, as spreadsheets do.
        s
    } else {
        s.trim().to_string()
    }
}

/// A header name reduced for comparison: lower case, spaces, `_` and `-` removed.
pub fn normalise(name: &str) -> String {
    name.trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// An unsigned number as trace tools write addresses and data: `0x1F`/`0X1F` (hex), a
/// TRACE32 access class before a colon (`D:40001000`, `P:0x100`), `_` or `'` digit group
/// separators (`4000_1000`), a trailing `h` (`1Fh`); without a prefix, in `radix`.
pub fn parse_uint(text: &str, radix: u32) -> Option<u64> {
    if !(2..=36).contains(&radix) {
        return None;
    }
    let mut t = text.trim();
    if let Some((class, rest)) = t.split_once(':') {
        // An access class is letters (D, P, SD, ZP, ...), never digits.
        if !class.is_empty() && class.chars().all(|c| c.is_ascii_alphabetic()) {
            t = rest.trim();
        }
    }
    let cleaned: String = t.chars().filter(|c| *c != '_' && *c != '\'').collect();
    let t = cleaned.as_str();
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(h) = t.strip_suffix('h').or_else(|| t.strip_suffix('H')) {
        (h, 16)
    } else {
        (t, radix)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// A signed integer as data or a mapping key: a [`parse_uint`] form, or `-` and decimal
/// digits.
pub fn parse_int(text: &str, radix: u32) -> Option<i128> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('-') {
        return parse_uint(rest, radix).map(|v| -i128::from(v));
    }
    parse_uint(t.strip_prefix('+').unwrap_or(t), radix).map(i128::from)
}

/// A time value as written: a decimal number (`12`, `-0.000012340`, `1,5` is not one) with
/// an optional unit suffix (`ps`, `ns`, `us`, `µs`, `ms`, `s`, with or without a space), as
/// (mantissa, decimal places, suffix in ps per unit when there is one).
pub fn parse_decimal(text: &str) -> Option<(i128, u32, Option<i128>)> {
    let t = text.trim();
    let split_at =
        t.char_indices().find(|(_, c)| c.is_alphabetic() || *c == 'µ').map_or(t.len(), |(i, _)| i);
    let (num, suffix) = (t.get(..split_at)?.trim(), t.get(split_at..)?.trim());
    let unit = if suffix.is_empty() { None } else { Some(ps_per_unit(suffix)?) };
    let (neg, num) = match num.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, num.strip_prefix('+').unwrap_or(num)),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || int.len() + frac.len() > 36
    {
        return None;
    }
    let mut m: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        m = m.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    let places = u32::try_from(frac.len()).ok()?;
    Some((if neg { -m } else { m }, places, unit))
}

/// Picoseconds in one `unit` (`ps` .. `s`, `us`, or `µs` with either micro character:
/// U+00B5 or the Greek U+03BC), case-insensitive.
pub fn ps_per_unit(unit: &str) -> Option<i128> {
    Some(match unit.trim().to_lowercase().as_str() {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one, the rest literal.
pub fn glob(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|c| *c == '*')
}
