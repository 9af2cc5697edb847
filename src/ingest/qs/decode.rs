//! Record payloads to values: fields read by [`records::K`] with the target's sizes, and user
//! records' self-describing format bytes.
use super::records::{self, Config, Field, K};

/// One decoded field.
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    /// Kind.
    pub k: K,
    /// Label in the note.
    pub label: &'static str,
    /// Number (pointer, signal, counter, time).
    pub num: u64,
    /// Bytes of a string or of the rest of the payload.
    pub bytes: Option<Vec<u8>>,
}

/// How the payload fitted its layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Bytes missing for the next field (0: all fields read).
    pub missing: usize,
    /// Bytes left after the last field.
    pub trailing: usize,
}

/// Little-endian reads over a payload; every read is bounds-checked.
pub struct Cursor<'a> {
    p: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `p`.
    pub fn new(p: &'a [u8]) -> Self {
        Cursor { p, at: 0 }
    }
    /// Bytes left.
    pub fn left(&self) -> usize {
        self.p.len().saturating_sub(self.at)
    }
    /// An unsigned little-endian integer of `n` bytes (1..=8).
    pub fn uint(&mut self, n: u8) -> Option<u64> {
        let n = usize::from(n);
        let b = self.p.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }
    /// `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.p.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }
    /// A NUL-terminated string (without its NUL).
    pub fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.p.get(self.at..)?;
        let end = memchr::memchr(0, rest)?;
        self.at += end + 1;
        rest.get(..end)
    }
    /// The rest.
    pub fn rest(&mut self) -> &'a [u8] {
        let r = self.p.get(self.at..).unwrap_or_default();
        self.at = self.p.len();
        r
    }
}

/// The bytes the fixed-size fields after field `i` take.
fn fixed_after(fields: &[Field], i: usize, cfg: &Config) -> usize {
    fields
        .get(i + 1..)
        .unwrap_or_default()
        .iter()
        .filter_map(|&(k, _)| records::size(k, cfg))
        .map(usize::from)
        .sum()
}

/// Reads `fields` from `payload`: the values read, and how the payload fitted.
pub fn fields(payload: &[u8], fields: &[Field], cfg: &Config) -> (Vec<Val>, Shape) {
    let mut c = Cursor::new(payload);
    let mut out = Vec::with_capacity(fields.len());
    let mut shape = Shape::default();
    for (i, &(k, label)) in fields.iter().enumerate() {
        let v = match records::size(k, cfg) {
            // An optional byte the payload has no room for (with the fixed-size fields
            // after it) was left out by the target.
            Some(n) if k == K::OptU8 && c.left() < usize::from(n) + fixed_after(fields, i, cfg) => {
                continue
            }
            Some(n) => match c.uint(n) {
                Some(num) => Val { k, label, num, bytes: None },
                None => {
                    shape.missing = usize::from(n) - c.left();
                    return (out, shape);
                }
            },
            None if k == K::Str => match c.cstr() {
                Some(s) => Val { k, label, num: 0, bytes: Some(s.to_vec()) },
                None => {
                    shape.missing = 1;
                    return (out, shape);
                }
            },
            None => Val { k, label, num: 0, bytes: Some(c.rest().to_vec()) },
        };
        out.push(v);
    }
    shape.trailing = c.left();
    (out, shape)
}

/// One argument of a user record.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A signed integer (I8, I16, I32, I64).
    Int(i64),
    /// An unsigned integer (U8..U64), shown in hex when `hex`.
    Uint(u64, bool, u8),
    /// ENUM: value and group (0..7).
    Enum(u8, u8),
    /// F32 or F64.
    Float(f64),
    /// STR.
    Str(String),
    /// MEM.
    Mem(Vec<u8>),
    /// SIG: signal and object.
    Sig(u64, u64),
    /// OBJ.
    Obj(u64),
    /// FUN.
    Fun(u64),
}

impl Arg {
    /// The number it carries, for the `value` column.
    pub fn number(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        match self {
            Arg::Int(i) => Some(*i as f64),
            Arg::Uint(u, _, _) => Some(*u as f64),
            Arg::Enum(v, _) => Some(f64::from(*v)),
            Arg::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// Decodes a user record's arguments (after its timestamp): repeated (format byte, value).
/// Returns the arguments read and, when the payload ends inside one or names an unknown
/// format, what went wrong.
pub fn user_args(c: &mut Cursor<'_>, cfg: &Config) -> (Vec<Arg>, Option<String>) {
    let mut out = Vec::new();
    while c.left() > 0 {
        let Some(fmt) = c.uint(1) else { break };
        let width = u8::try_from(fmt >> 4).unwrap_or(0);
        let kind = fmt & 0x0F;
        let hex = width == 0x0F;
        let sint = |c: &mut Cursor<'_>, n: u8| {
            c.uint(n).map(|u| {
                let shift = 64 - 8 * u32::from(n);
                #[allow(clippy::cast_possible_wrap)]
                let v = ((u << shift) as i64) >> shift;
                v
            })
        };
        let arg = match kind {
            // ENUM (QP 7.0 on): I8 with the top bit of the width; before, that is a width.
            0 if width & 0x8 != 0 && cfg.version >= 700 => {
                c.uint(1).map(|v| Arg::Enum(u8::try_from(v).unwrap_or(0), width & 0x7))
            }
            0 => sint(c, 1).map(Arg::Int),
            1 => c.uint(1).map(|v| Arg::Uint(v, hex, 1)),
            2 => sint(c, 2).map(Arg::Int),
            3 => c.uint(2).map(|v| Arg::Uint(v, hex, 2)),
            4 => sint(c, 4).map(Arg::Int),
            5 => c.uint(4).map(|v| Arg::Uint(v, hex, 4)),
            6 => c
                .uint(4)
                .map(|v| Arg::Float(f64::from(f32::from_bits(u32::try_from(v).unwrap_or(0))))),
            7 => c.uint(8).map(|v| Arg::Float(f64::from_bits(v))),
            8 => c.cstr().map(|s| Arg::Str(String::from_utf8_lossy(s).into_owned())),
            9 => c
                .uint(1)
                .and_then(|n| c.take(usize::try_from(n).ok()?))
                .map(|m| Arg::Mem(m.to_vec())),
            10 => c.uint(cfg.sig).zip(c.uint(cfg.obj)).map(|(s, o)| Arg::Sig(s, o)),
            11 => c.uint(cfg.obj).map(Arg::Obj),
            12 => c.uint(cfg.fun).map(Arg::Fun),
            13 => sint(c, 8).map(Arg::Int),
            14 => c.uint(8).map(|v| Arg::Uint(v, hex, 8)),
            // HEX32 in 8.x, U32_HEX before: always shown in hex.
            _ => c.uint(4).map(|v| Arg::Uint(v, true, 4)),
        };
        match arg {
            Some(a) => out.push(a),
            None => {
                let m = format!(
                    "the payload ends inside argument {} (format 0x{fmt:02X})",
                    out.len() + 1
                );
                return (out, Some(m));
            }
        }
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config { tstamp: 2, ..Config::typical(694) }
    }

    #[test]
    fn fields_report_missing_and_trailing_bytes() {
        let layout: &[Field] = &[(K::Time, ""), (K::Sig, "Sig"), (K::Obj, "Obj")];
        let (v, s) = fields(&[1, 0, 5, 0, 4, 3, 2, 1, 9], layout, &cfg());
        assert_eq!(v.iter().map(|v| v.num).collect::<Vec<_>>(), [1, 5, 0x0102_0304]);
        assert_eq!(s, Shape { missing: 0, trailing: 1 });
        let (v, s) = fields(&[1, 0, 5, 0, 4, 3], layout, &cfg());
        assert_eq!(v.len(), 2);
        assert_eq!(s, Shape { missing: 2, trailing: 0 });
        let (v, s) = fields(b"ab\0cd", &[(K::Str, "S"), (K::Rest, "R")], &cfg());
        assert_eq!(v[0].bytes.as_deref(), Some(&b"ab"[..]));
        assert_eq!(v[1].bytes.as_deref(), Some(&b"cd"[..]));
        assert_eq!(s, Shape::default());
    }

    #[test]
    fn user_formats_of_every_type() {
        let mut p = vec![];
        p.extend([0x00, 0xFF]); // I8 -1
        p.extend([0x81, 7]); // U8 of display width 8
        p.extend([0x02, 0xFE, 0xFF]); // I16 -2
        p.extend([0x03, 0x34, 0x12]); // U16
        p.extend([0x04, 0xFD, 0xFF, 0xFF, 0xFF]); // I32 -3
        p.extend([0xF5, 0xEF, 0xBE, 0xAD, 0xDE]); // U32 shown hex
        p.push(0x06);
        p.extend(1.5f32.to_bits().to_le_bytes()); // F32
        p.push(0x07);
        p.extend((-0.25f64).to_bits().to_le_bytes()); // F64
        p.extend([0x08, b'h', b'i', 0]); // STR
        p.extend([0x09, 2, 0xAB, 0xCD]); // MEM
        p.extend([0x0A, 10, 0, 4, 3, 2, 1]); // SIG + obj
        p.extend([0x0B, 4, 3, 2, 1]); // OBJ
        p.extend([0x0C, 8, 7, 6, 5]); // FUN
        p.push(0x0D);
        p.extend((-4i64).to_le_bytes()); // I64
        p.push(0x0E);
        p.extend(5u64.to_le_bytes()); // U64
        p.extend([0x0F, 1, 0, 0, 0]); // HEX32
        p.extend([0xA0, 0xFD]); // QP 7: ENUM group 2 (width 0b1010); before, I8 of width 10
        let (args, err) = user_args(&mut Cursor::new(&p), &cfg());
        assert_eq!(err, None);
        assert_eq!(
            args,
            vec![
                Arg::Int(-1),
                Arg::Uint(7, false, 1),
                Arg::Int(-2),
                Arg::Uint(0x1234, false, 2),
                Arg::Int(-3),
                Arg::Uint(0xDEAD_BEEF, true, 4),
                Arg::Float(1.5),
                Arg::Float(-0.25),
                Arg::Str("hi".into()),
                Arg::Mem(vec![0xAB, 0xCD]),
                Arg::Sig(10, 0x0102_0304),
                Arg::Obj(0x0102_0304),
                Arg::Fun(0x0506_0708),
                Arg::Int(-4),
                Arg::Uint(5, false, 8),
                Arg::Uint(1, true, 4),
                Arg::Int(-3),
            ]
        );
        let qp7 = Config { version: 700, ..cfg() };
        let (args, _) = user_args(&mut Cursor::new(&[0xA0, 0xFD, 0x80, 0xFD]), &qp7);
        assert_eq!(args, [Arg::Enum(0xFD, 2), Arg::Enum(0xFD, 0)]);
        let (args, _) = user_args(&mut Cursor::new(&[0x80, 0xFD, 0x70, 0xFD]), &cfg());
        assert_eq!(args, [Arg::Int(-3), Arg::Int(-3)]);
        let (args, err) = user_args(&mut Cursor::new(&[0x01, 5, 0x04, 1, 2]), &cfg());
        assert_eq!(args, vec![Arg::Uint(5, false, 1)]);
        assert_eq!(err.as_deref(), Some("the payload ends inside argument 2 (format 0x04)"));
    }
}
