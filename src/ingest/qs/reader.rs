//! The QS importer's state, [`Reader`]: it settles the target configuration, checks the
//! sequence, and sends each frame to the handling of its kind of record.
use super::decode;
use super::derived::{OpenIsr, SmState};
use super::dic::Dic;
use super::frame::{Frame, Item};
use super::namemap::{NameMap, SigNames};
use super::names::dict_name;
use super::posts::Posts;
use super::records::{self, Config, Era, Role, K};
use super::{dic_path, Companion, QsOptions};
use crate::ingest::{Diagnostic, Severity, Sink};
use crate::model::{Event, Pos, TimeUnit};
use crate::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Importer state.
pub(super) struct Reader<'a> {
    pub(super) path: &'a str,
    pub(super) sink: &'a mut dyn Sink,
    pub(super) comp: &'a Companion,
    pub(super) cfg: Config,
    pub(super) tick_rate: Option<u64>,
    // In-band dictionaries (cleared by a target reset), then the .dic's.
    pub(super) obj: NameMap<u64>,
    pub(super) fun: NameMap<u64>,
    pub(super) usr: NameMap<u8>,
    pub(super) sig: SigNames,
    pub(super) enums: NameMap<(u8, u64)>,
    pub(super) dic_obj: NameMap<u64>,
    pub(super) dic_fun: NameMap<u64>,
    pub(super) dic_usr: NameMap<u8>,
    pub(super) dic_sig: SigNames,
    // Time.
    pub(super) last_raw: Option<u64>,
    pub(super) epoch: u64,
    pub(super) wraps: u64,
    pub(super) first_wrap: Option<(Pos, String)>,
    /// A target reset came since the last timed record: its counter may start over.
    pub(super) after_reset: bool,
    pub(super) ts: i64,
    // Sequence.
    pub(super) seq: Option<u8>,
    pub(super) frames: u64,
    // Object kinds.
    pub(super) ao: HashSet<u64>,
    pub(super) kind: HashMap<u64, &'static str>,
    pub(super) declared: HashSet<String>,
    pub(super) unknown_obj: HashSet<(bool, u64)>,
    pub(super) unknown_full: bool,
    pub(super) unknown_rec: HashMap<u8, (u64, Pos, String)>,
    // Derived channels.
    pub(super) sm: HashMap<String, SmState>,
    pub(super) isr: Vec<OpenIsr>,
    pub(super) crit: Option<(i64, u64)>,
    pub(super) posts: Posts,
    pub(super) resets: u64,
}

pub(super) fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// The sizes of `cfg` as QSPY options: `-T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2`.
pub(super) fn sizes(cfg: &Config) -> String {
    format!(
        "-T{} -O{} -F{} -S{} -E{} -Q{} -P{} -B{} -C{}",
        cfg.tstamp,
        cfg.obj,
        cfg.fun,
        cfg.sig,
        cfg.evt,
        cfg.queue,
        cfg.pool_ctr,
        cfg.pool_blk,
        cfg.tevt
    )
}

impl<'a> Reader<'a> {
    pub(super) fn new(
        path: &'a str,
        opts: &QsOptions,
        comp: &'a Companion,
        sink: &'a mut dyn Sink,
    ) -> Result<Self> {
        let placeholder = Config::typical(0);
        let mut r = Reader {
            path,
            sink,
            comp,
            cfg: placeholder,
            tick_rate: opts.tick_rate,
            obj: NameMap::new("object"),
            fun: NameMap::new("function"),
            usr: NameMap::new("user record"),
            sig: SigNames::new(),
            enums: NameMap::new("enum"),
            dic_obj: NameMap::new("object"),
            dic_fun: NameMap::new("function"),
            dic_usr: NameMap::new("user record"),
            dic_sig: SigNames::new(),
            last_raw: None,
            epoch: 0,
            wraps: 0,
            first_wrap: None,
            after_reset: false,
            ts: 0,
            seq: None,
            frames: 0,
            ao: HashSet::new(),
            kind: HashMap::new(),
            declared: HashSet::new(),
            unknown_obj: HashSet::new(),
            unknown_full: false,
            unknown_rec: HashMap::new(),
            sm: HashMap::new(),
            isr: Vec::new(),
            crit: None,
            posts: Posts::default(),
            resets: 0,
        };
        if let Some(d) = &comp.dic {
            // Pre-6.9 conversions are applied once the version is known (in `start`).
            // The .dic is at most 16 MiB: what does not fit is said once per dictionary.
            let mut full: Vec<String> = Vec::new();
            let mut note = |r: std::result::Result<(), String>| {
                if let Err(e) = r {
                    if !full.contains(&e) {
                        full.push(e);
                    }
                }
            };
            for (k, v) in &d.obj {
                note(r.dic_obj.put(*k, v.clone()));
            }
            for (k, v) in &d.fun {
                note(r.dic_fun.put(*k, v.clone()));
            }
            for (k, v) in &d.usr {
                note(r.dic_usr.put(*k, v.clone()));
            }
            for (s, o, v) in &d.sig {
                note(r.dic_sig.put(*s, *o, v.clone()));
            }
            let refused =
                r.dic_obj.refused + r.dic_fun.refused + r.dic_usr.refused + r.dic_sig.refused;
            for why in full {
                r.sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "dictionary_full",
                    pos: Pos::None,
                    ts: None,
                    message: format!(
                        "the .dic: {why}: {refused} names of the .dic in all are not kept (their \
                         pointers and numbers are shown as numbers)"
                    ),
                })?;
            }
        }
        Ok(r)
    }

    /// Settles the configuration from the first target info of `window`, else the `.dic`,
    /// and finds the active objects among the window's records.
    pub(super) fn start(&mut self, window: &[Item]) -> Result<()> {
        let in_band = window.iter().find_map(|i| match i {
            Item::Frame(f) if f.rec() == 64 => {
                records::target_info(f.payload()).filter(|t| t.config.version >= 550)
            }
            _ => None,
        });
        let from_dic = self.comp.dic.as_ref().and_then(Dic::config);
        let cfg = match (&in_band, from_dic) {
            (Some(t), _) => t.config,
            (None, Some(c)) => c,
            (None, None) => {
                let dic = dic_path(Path::new(self.path));
                let why = match (&self.comp.path, &self.comp.dic) {
                    (Some(p), Some(_)) => format!(
                        "{} has no -v (QP version) option line; add one (e.g. -v694) with the \
                         sizes (-T4 -O4 -F4 -S2 ...)",
                        p.display()
                    ),
                    _ => format!(
                        "write the target's QSPY options in {} (e.g. `-v694 -T4 -O4 -F4 -S2 -E2 \
                         -Q1 -P2 -B2 -C2`, as `qspy -d` saves them) or give one with --qs-dic",
                        dic.display()
                    ),
                };
                return Err(Error::input(
                    self.path,
                    "",
                    format!(
                        "QS needs the target's sizes: no target-info record and no .dic beside \
                         it; {why}"
                    ),
                ));
            }
        };
        cfg.check().map_err(|e| {
            Error::input(self.path, "", format!("QS target configuration: unusable {e}"))
        })?;
        self.cfg = cfg;
        // A .dic saved for another build of the target (or other sizes) names other
        // addresses: as QSPY does, its dictionaries are not used (pointers are shown as
        // numbers rather than under another object's name).
        if let (Some(t), Some(d)) = (&in_band, self.comp.dic.as_ref()) {
            let other_build = d.build.as_deref().filter(|b| *b != t.build);
            let other_sizes = from_dic.filter(|c| sizes(c) != sizes(&t.config));
            if other_build.is_some() || other_sizes.is_some() {
                let shown = self.comp.path.as_ref().map(|p| p.display().to_string());
                let why = match (other_build, other_sizes) {
                    (Some(b), _) => format!("build {b}, the target's is {}", t.build),
                    (None, Some(c)) => {
                        format!("sizes {}, the target's are {}", sizes(&c), sizes(&t.config))
                    }
                    (None, None) => String::new(),
                };
                self.dic_obj.clear();
                self.dic_fun.clear();
                self.dic_usr.clear();
                self.dic_sig.clear();
                self.sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "dic_mismatch",
                    pos: Pos::None,
                    ts: None,
                    message: format!(
                        "{} is for another target ({why}): its dictionaries are not used; the \
                         target's own dictionary records name what they name",
                        shown.as_deref().unwrap_or("the .dic")
                    ),
                })?;
            }
        }
        if cfg.version < 690 {
            for m in [&mut self.dic_obj, &mut self.dic_fun] {
                m.rename(|v| dict_name(v.as_bytes(), cfg.version));
            }
        }
        self.sink.time_unit(match self.tick_rate {
            Some(_) => TimeUnit::Ns,
            None => TimeUnit::Tick,
        });
        let source = if in_band.is_some() { "target info" } else { "dic" };
        self.sink.meta("qp_version", &cfg.version_text());
        self.sink.meta("qs.config_from", source);
        self.sink.meta("qs.sizes", &sizes(&cfg));
        if let Some(t) = &in_band {
            self.sink.meta("qs.build", &t.build);
            self.sink.meta("qs.endianness", if t.big_endian { "big" } else { "little" });
        } else if let Some(b) = self.comp.dic.as_ref().and_then(|d| d.build.clone()) {
            self.sink.meta("qs.build", &b);
        }
        if let Some(p) = &self.comp.path {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            self.sink.meta("qs.dic", &name.unwrap_or_default());
        }
        if let Some(hz) = self.tick_rate {
            self.sink.meta("qs.tick_rate_hz", &hz.to_string());
        }
        if let Some(d) = self.comp.dic.as_ref() {
            let shown = self.comp.path.as_ref().map(|p| p.display().to_string());
            for (line, problem) in &d.problems {
                self.sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "malformed_companion",
                    pos: Pos::None,
                    ts: None,
                    message: format!("{}:{line}: {problem}", shown.as_deref().unwrap_or(".dic")),
                })?;
            }
        }
        if self.tick_rate.is_none() {
            self.sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unknown_tick_rate",
                pos: Pos::None,
                ts: None,
                message: "QS timestamps are target ticks of unknown rate: times are raw ticks \
                          (captures.time_unit = tick); give --tick-rate HZ to get nanoseconds"
                    .into(),
            })?;
        }
        self.classify(window);
        if let Some(raw) = self.first_time(window) {
            self.ts = self.scale(raw);
        }
        Ok(())
    }

    /// Active objects: every object a QF active-object record names (QEP records alone
    /// cannot tell an active object from a plain state machine).
    fn classify(&mut self, window: &[Item]) {
        let mut cfg = self.cfg;
        for item in window {
            let Item::Frame(f) = item else { continue };
            if f.rec() == 64 && Era::of(cfg.version) >= Era::Qp55 {
                if let Some(t) = records::target_info(f.payload()) {
                    if t.config.check().is_ok() {
                        cfg = t.config;
                    }
                }
                continue;
            }
            self.note_ao(f, &cfg);
        }
    }

    fn note_ao(&mut self, f: &Frame, cfg: &Config) {
        let Some(spec) = records::spec_of(f.rec(), cfg.version) else { return };
        let ao_record = matches!(
            spec.role,
            Role::Ao | Role::PostFifo | Role::PostLifo | Role::Get | Role::Timer
        );
        if !ao_record {
            return;
        }
        let (vals, _) = decode::fields(f.payload(), spec.fields, cfg);
        let label = if spec.role == Role::Timer { "AO" } else { "Obj" };
        if let Some(v) = vals.iter().find(|v| v.k == K::Obj && v.label == label) {
            if v.num != 0 {
                self.ao.insert(v.num);
            }
        }
    }

    pub(super) fn item(&mut self, item: Item) -> Result<()> {
        match item {
            Item::Problem(mut d) => {
                self.frames += 1;
                d.ts = Some(self.ts);
                self.sink.diagnostic(d)
            }
            Item::Frame(f) => {
                self.frames += 1;
                self.frame(&f)
            }
        }
    }

    pub(super) fn diag(
        &mut self,
        f: &Frame,
        severity: Severity,
        kind: &'static str,
        m: String,
    ) -> Result<()> {
        self.sink.diagnostic(Diagnostic {
            severity,
            kind,
            pos: f.pos(),
            ts: Some(self.ts),
            message: format!("{} at {}", m, f.at()),
        })
    }

    fn frame(&mut self, f: &Frame) -> Result<()> {
        let rec = f.rec();
        let cfg = self.cfg;
        let reset_info = if rec == 64 && Era::of(cfg.version) >= Era::Qp55 {
            records::target_info(f.payload())
        } else {
            None
        };
        // Sequence: +1 per record; QS_EMPTY and a target reset start over (the reset flag of
        // QS_TARGET_INFO, or QP 5.0-5.4's QS_QP_RESET record).
        let spec = records::spec_of(rec, cfg.version);
        let exempt = rec == cfg.empty()
            || reset_info.as_ref().is_some_and(|t| t.reset)
            || spec.is_some_and(|s| s.role == Role::Reset);
        if let Some(last) = self.seq {
            let expected = last.wrapping_add(1);
            if f.seq() != expected && !exempt {
                let lost = f.seq().wrapping_sub(expected);
                let m = format!(
                    "sequence jumps from {last} to {}: {lost} records lost (mod 256)",
                    f.seq()
                );
                self.diag(f, Severity::DataLoss, "seq_gap", m)?;
            }
        }
        self.seq = Some(f.seq());

        if rec >= cfg.user() {
            return self.user(f);
        }
        let Some(spec) = spec else {
            return self.unknown(f);
        };
        if spec.role == Role::Dict {
            return self.dict(f, spec.name, reset_info);
        }
        let (vals, shape) = decode::fields(f.payload(), spec.fields, &cfg);
        if shape.missing > 0 {
            let m = format!(
                "{} payload of {} bytes ends {} bytes short of its next field ({} of {} fields \
                 read): what was read is kept",
                spec.name,
                f.payload().len(),
                shape.missing,
                vals.len(),
                spec.fields.len()
            );
            self.diag(f, Severity::Warning, "truncated_record", m)?;
        } else if shape.trailing > 0 {
            let m = format!(
                "{} payload has {} bytes after its fields (the QP version {} or the sizes may \
                 not be the target's)",
                spec.name,
                shape.trailing,
                cfg.version_text()
            );
            self.diag(f, Severity::Warning, "trailing_bytes", m)?;
        }
        if let Some(t) = vals.iter().find(|v| v.k == K::Time) {
            self.time(t.num, f)?;
        }
        if spec.role == Role::Reset {
            self.reset(f)?;
        }
        self.emit(f, spec.name, spec.role, &vals)
    }

    /// A record ID this QP version does not define.
    fn unknown(&mut self, f: &Frame) -> Result<()> {
        let rec = f.rec();
        let e = self.unknown_rec.entry(rec).or_insert((0, f.pos(), f.at()));
        e.0 += 1;
        let action = format!("REC_{rec}");
        // Labelled as the records kept whole are (`Data=` of QS_EMPTY, QUERY_DATA...): a
        // bare `10` would be read as the number 10 for the `value` column.
        let note = format!("Data={}", hex_bytes(f.payload()));
        self.own_event("QS", &action, &note, None, f)
    }

    /// The `events` row of frame `f` about `source` alone (no target), at the current time;
    /// an empty `note` is none.
    pub(super) fn own_event(
        &mut self,
        source: &str,
        action: &str,
        note: &str,
        value: Option<f64>,
        f: &Frame,
    ) -> Result<()> {
        self.sink.event(&Event {
            ts: self.ts,
            source,
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action,
            note: (!note.is_empty()).then_some(note),
            value,
            core: None,
            pos: f.pos(),
        })
    }

    pub(super) fn finish(mut self) -> Result<()> {
        self.close(None, Pos::None)?;
        let mut unknown: Vec<(u8, (u64, Pos, String))> = self.unknown_rec.drain().collect();
        unknown.sort_by_key(|(r, _)| *r);
        for (rec, (n, pos, at)) in unknown {
            self.sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unknown_record",
                pos,
                ts: None,
                message: format!(
                    "record ID {rec} is not a QP {} record: {n} records kept as REC_{rec} with \
                     their payload in hex (first at {at})",
                    self.cfg.version_text()
                ),
            })?;
        }
        if let Some((pos, at)) = self.first_wrap.take() {
            self.sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "time_wrapped",
                pos,
                ts: None,
                message: format!(
                    "the {}-bit timestamp wrapped {} times (first at {at}): times are unwrapped \
                     assuming they never go back",
                    8 * u32::from(self.cfg.tstamp),
                    self.wraps
                ),
            })?;
        }
        self.sink.meta("qs.frames", &self.frames.to_string());
        if self.resets > 0 {
            self.sink.meta("qs.target_resets", &self.resets.to_string());
        }
        Ok(())
    }
}
