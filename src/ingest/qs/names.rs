//! The Reader's time (unwrapping and scaling ticks), names (objects, functions, signals,
//! entity types) and dictionary records.
use super::decode::{self, Cursor};
use super::frame::{Frame, Item};
use super::namemap::MAX_ENTRIES;
use super::reader::{hex_bytes, sizes, Reader};
use super::records::{self, Role, K};
use crate::ingest::Severity;
use crate::model::MAX_ABS_NS;
use crate::Result;

/// Objects kept track of (their entity type, whether they were reported unnamed): as many
/// as a dictionary holds names.
pub(super) const MAX_OBJECTS: usize = MAX_ENTRIES;
/// Entity names remembered as declared: beyond, a name is declared again at each use (the
/// sink keeps its first type), which costs time, not memory.
const MAX_DECLARED: usize = 1 << 16;

/// A name from a dictionary string: as QSPY shows it (a leading `&` dropped; before QP 6.9
/// `[i]` shown `<i>`).
pub(super) fn dict_name(bytes: &[u8], version: u16) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim().trim_start_matches('&');
    if version < 690 {
        s.replace('[', "<").replace(']', ">")
    } else {
        s.to_string()
    }
}

impl Reader<'_> {
    /// Ticks to the table's time; a time beyond the tables' range is reported and taken as
    /// their last instant (the record is kept).
    pub(super) fn time(&mut self, raw: u64, f: &Frame) -> Result<i64> {
        let bits = 8 * u32::from(self.cfg.tstamp);
        let after_reset = std::mem::take(&mut self.after_reset);
        if let Some(last) = self.last_raw {
            if raw < last && after_reset {
                // The target reset and its counter started over: the time goes on from the
                // last time seen (plus the ticks since the reset), not 2^bits later as if
                // the counter had wrapped.
                self.epoch = self.epoch.saturating_add(last);
                let m = format!(
                    "after the target reset the timestamp started over ({raw} ticks, the last \
                     before it {last}): times go on from the last time seen"
                );
                self.diag(f, Severity::Info, "time_restarted", m)?;
            } else if raw < last {
                self.epoch = self.epoch.saturating_add(1u64.checked_shl(bits).unwrap_or(0));
                self.wraps += 1;
                if self.first_wrap.is_none() {
                    self.first_wrap = Some((f.pos(), f.at()));
                }
            }
        }
        self.last_raw = Some(raw);
        let ticks = self.epoch.saturating_add(raw);
        let t = self.scale(ticks);
        self.ts = t;
        let ns = self.ns(ticks);
        if ns > i128::from(t) {
            let (unit, rate) = match self.tick_rate {
                Some(hz) => ("ns", format!("{ticks} ticks at {hz} Hz = ")),
                None => ("ticks", String::new()),
            };
            let wrapped = if self.wraps > 0 {
                format!(" (the timestamp wrapped {} times so far)", self.wraps)
            } else {
                String::new()
            };
            let m = format!(
                "time {rate}{ns} {unit}{wrapped} is beyond the tables' range (2^62 - 1, about \
                 146 years in ns): the record is kept at {t}"
            );
            self.diag(f, Severity::Warning, "time_out_of_range", m)?;
        }
        Ok(t)
    }

    /// Unwrapped ticks in the tables' unit, unbounded.
    fn ns(&self, ticks: u64) -> i128 {
        match self.tick_rate {
            Some(hz) => i128::from(ticks) * 1_000_000_000 / i128::from(hz),
            None => i128::from(ticks),
        }
    }

    /// Unwrapped ticks as the tables' time, at most 2^62 - 1.
    pub(super) fn scale(&self, ticks: u64) -> i64 {
        i64::try_from(self.ns(ticks)).unwrap_or(i64::MAX).min(MAX_ABS_NS - 1)
    }

    /// The first timestamp among the window's records, for the records before it (target
    /// info, dictionaries) to take: with 0 instead, a capture whose clock reads 2.9 s
    /// when it starts would span from 0 and its first records stand apart.
    pub(super) fn first_time(&self, window: &[Item]) -> Option<u64> {
        let cfg = self.cfg;
        window.iter().find_map(|i| {
            let Item::Frame(f) = i else { return None };
            if f.rec() >= cfg.user() {
                return Cursor::new(f.payload()).uint(cfg.tstamp);
            }
            let spec = records::spec_of(f.rec(), cfg.version)?;
            if spec.role == Role::Dict {
                return None;
            }
            let (vals, _) = decode::fields(f.payload(), spec.fields, &cfg);
            vals.iter().find(|v| v.k == K::Time).map(|v| v.num)
        })
    }

    pub(super) fn obj_name(&mut self, ptr: u64, f: &Frame) -> Result<String> {
        self.name(ptr, false, f)
    }

    /// The name of an object (or, `fun`, a function) pointer.
    pub(super) fn name(&mut self, ptr: u64, fun: bool, f: &Frame) -> Result<String> {
        if ptr == 0 {
            return Ok("NULL".into());
        }
        let (m, d) = if fun { (&self.fun, &self.dic_fun) } else { (&self.obj, &self.dic_obj) };
        if let Some(n) = m.get(&ptr).or_else(|| d.get(&ptr)) {
            return Ok(n.clone());
        }
        let refused = m.refused + d.refused;
        let width = if fun { self.cfg.fun } else { self.cfg.obj };
        let shown = if width <= 4 { format!("0x{ptr:08X}") } else { format!("0x{ptr:016X}") };
        if self.unknown_obj.len() >= MAX_OBJECTS {
            if !self.unknown_full {
                self.unknown_full = true;
                let m = format!(
                    "more than {MAX_OBJECTS} pointers have no name: the ones after are shown as \
                     numbers with no row of their own (first: {shown})"
                );
                self.diag(f, Severity::Info, "unknown_object", m)?;
            }
        } else if self.unknown_obj.insert((fun, ptr)) {
            let what = if fun { "function (state)" } else { "object" };
            let whence = if refused > 0 {
                format!(
                    "has no name kept: the {} dictionary was full and refused {refused} names \
                     (dictionary_full), its own may be one of them",
                    if fun { "function" } else { "object" }
                )
            } else {
                "is in no dictionary (in-band or .dic)".to_string()
            };
            let m = format!("{what} {shown} {whence}: shown as {shown}; first seen");
            self.diag(f, Severity::Info, "unknown_object", m)?;
        }
        Ok(shown)
    }

    pub(super) fn sig_name(&self, sig: u64, obj: u64) -> String {
        if sig == 0 {
            return "NULL".into();
        }
        for d in [&self.sig, &self.dic_sig] {
            if let Some(list) = d.get(sig) {
                if let Some((_, n)) = list
                    .iter()
                    .find(|(o, _)| *o == obj)
                    .or_else(|| list.iter().find(|(o, _)| *o == 0))
                {
                    return n.clone();
                }
                if obj == 0 {
                    if let Some((_, n)) = list.first() {
                        return n.clone();
                    }
                }
            }
        }
        format!("{sig:08}")
    }

    /// The entity type of the object `ptr` (`hint`: what the record says it is).
    pub(super) fn type_of(&mut self, ptr: u64, hint: Option<&'static str>) -> Option<&'static str> {
        if self.ao.contains(&ptr) {
            return Some("AO");
        }
        if let Some(k) = self.kind.get(&ptr) {
            return Some(k);
        }
        let k = hint?;
        if self.kind.len() < MAX_OBJECTS {
            self.kind.insert(ptr, k);
        }
        Some(k)
    }

    pub(super) fn declare(&mut self, name: &str, ty: Option<&'static str>) {
        if ty.is_none() || self.declared.contains(name) {
            return;
        }
        if self.declared.len() < MAX_DECLARED {
            self.declared.insert(name.to_string());
        }
        self.sink.declare_entity(name, ty, None);
    }

    /// Reports a dictionary record whose name was not kept.
    fn refused(
        &mut self,
        f: &Frame,
        record: &str,
        note: &str,
        kept: std::result::Result<(), String>,
    ) -> Result<()> {
        match kept {
            Ok(()) => Ok(()),
            Err(why) => {
                let m = format!(
                    "{record} {note}: {why}: this name is not kept (what it names is shown as a \
                     number)"
                );
                self.diag(f, Severity::Warning, "dictionary_full", m)
            }
        }
    }

    /// Dictionary and target-info records.
    pub(super) fn dict(
        &mut self,
        f: &Frame,
        name: &str,
        info: Option<records::TargetInfo>,
    ) -> Result<()> {
        let cfg = self.cfg;
        let mut c = Cursor::new(f.payload());
        let v = cfg.version;
        let note = match name {
            "TARGET_INFO" => match info {
                Some(t) => {
                    let note = format!(
                        "QP-Ver={},Build={},Reset={}",
                        t.config.version,
                        t.build,
                        u8::from(t.reset)
                    );
                    match t.config.check() {
                        Ok(()) => self.cfg = t.config,
                        Err(e) => {
                            let m = format!(
                                "target info with unusable {e}: the configuration in use (QP {} \
                                 {}) is kept",
                                self.cfg.version_text(),
                                sizes(&self.cfg)
                            );
                            self.diag(f, Severity::Warning, "bad_target_info", m)?;
                        }
                    }
                    if t.reset {
                        self.reset(f)?;
                    }
                    Some(note)
                }
                None => None,
            },
            "SIG_DICT" => {
                let (s, o, n) = (c.uint(cfg.sig), c.uint(cfg.obj), c.cstr());
                match (s, o, n) {
                    (Some(s), Some(o), Some(n)) => {
                        let n = dict_name(n, v);
                        let kept = self.sig.put(s, o, n.clone());
                        let on = self.obj_name(o, f)?;
                        let note = format!("Sig={s},Obj={on},Name={n}");
                        self.refused(f, name, &note, kept)?;
                        Some(note)
                    }
                    _ => None,
                }
            }
            "OBJ_DICT" | "FUN_DICT" => {
                let size = if name == "OBJ_DICT" { cfg.obj } else { cfg.fun };
                match (c.uint(size), c.cstr()) {
                    (Some(p), Some(n)) => {
                        let n = dict_name(n, v);
                        let m = if name == "OBJ_DICT" { &mut self.obj } else { &mut self.fun };
                        let kept = m.put(p, n.clone());
                        let shown =
                            if size <= 4 { format!("0x{p:08X}") } else { format!("0x{p:016X}") };
                        let note = format!("Ptr={shown},Name={n}");
                        self.refused(f, name, &note, kept)?;
                        Some(note)
                    }
                    _ => None,
                }
            }
            "USR_DICT" => match (c.uint(1), c.cstr()) {
                (Some(r), Some(n)) => {
                    let n = dict_name(n, 690);
                    let kept = self.usr.put(u8::try_from(r).unwrap_or(0), n.clone());
                    let note = format!("Rec={r},Name={n}");
                    self.refused(f, name, &note, kept)?;
                    Some(note)
                }
                _ => None,
            },
            "ENUM_DICT" => match (c.uint(1), c.uint(1), c.cstr()) {
                (Some(val), Some(g), Some(n)) => {
                    let n = dict_name(n, 690);
                    let kept = self.enums.put((u8::try_from(g & 7).unwrap_or(0), val), n.clone());
                    let note = format!("Value={val},Grp={},Name={n}", g & 7);
                    self.refused(f, name, &note, kept)?;
                    Some(note)
                }
                _ => None,
            },
            _ => None,
        };
        let note = match note {
            Some(n) => {
                if c.left() > 0 && name != "TARGET_INFO" {
                    let m = format!("{name} payload has {} bytes after its fields", c.left());
                    self.diag(f, Severity::Warning, "trailing_bytes", m)?;
                }
                n
            }
            None => {
                let m = format!(
                    "{name} payload of {} bytes is shorter than the record needs",
                    f.payload().len()
                );
                self.diag(f, Severity::Warning, "truncated_record", m)?;
                format!("Data={}", hex_bytes(f.payload()))
            }
        };
        self.declare("QS", None);
        self.own_event("QS", name, &note, None, f)
    }
}
