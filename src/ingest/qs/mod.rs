//! Quantum Leaps QS: the binary trace of QP/C and QP/C++ targets, as QSPY reads it.
//!
//! Spec digest (FORMATS.md §3; reference: QuantumLeaps/qtools `qspy/source/qspy.c`):
//!
//! | on the wire | meaning |
//! |---|---|
//! | `seq` u8 | +1 per record, wraps at 255; `QS_EMPTY` is exempt from the check |
//! | `recID` u8 | record ID; the table depends on the QP version (`records.rs`) |
//! | payload | little-endian fields; sizes from the target info (`-T -O -F -S ...`) |
//! | `chksum` u8 | the unescaped bytes of the record sum to `0xFF` |
//! | `0x7E` | end of record; `0x7E`/`0x7D` inside are sent as `0x7D, b^0x20` |
//!
//! A QP 6.9 transition (`-T4 -S2 -O4 -F4`): `06 06 | t:u32 | sig:u16 | obj:u32 | src:u32 |
//! dst:u32 | chksum 7E` → `events` row `QEP_TRAN`, source `Philo_inst[0]` (SM/AO), target
//! `Philo_hungry`, note `Sig=TIMEOUT_SIG,Obj=Philo_inst[0],State=Philo_thinking->Philo_hungry`.
//!
//! The version and sizes come from the `QS_TARGET_INFO` record, else from a QSPY `.dic`
//! file beside the trace (or given with `--qs-dic`); without either the file cannot be
//! read. Times are raw target ticks, unwrapped (a tick counter that wraps is assumed to
//! never go back), scaled by `--tick-rate` when given.
//!
//! Output: one `events` row per record (file order), the `state` channel of every state
//! machine (spans from each transition to the next), the `running` channel of `ISR`
//! (nested entries split the outer one), the `critical` channel of `QF`, and a message per
//! post to an active object, received by its next get of that signal.
mod decode;
pub mod dic;
pub mod frame;
pub mod records;

use super::input::{Digest256, Input};
use super::{Diagnostic, Message, Severity, Sink, Span};
use crate::model::{Event, Pos, TimeUnit, MAX_ABS_NS};
use crate::{Error, Result};
use decode::{Arg, Cursor, Val};
use dic::Dic;
use frame::{Deframer, Frame, Item};
use records::{Config, Role, K};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};

/// QS options from the command line.
#[derive(Debug, Clone, Default)]
pub struct QsOptions {
    /// Target ticks per second (`--tick-rate`); without it times stay in ticks.
    pub tick_rate: Option<u64>,
    /// A `.dic` file to use instead of the one beside the trace (`--qs-dic`).
    pub dic: Option<PathBuf>,
}

/// Parses a tick rate: `1000000`, `32768Hz`, `10kHz`, `1MHz`, `1.5MHz` (a whole number of
/// ticks per second).
pub fn parse_tick_rate(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, factor) = if let Some(n) = lower.strip_suffix("ghz") {
        (n, 1_000_000_000u64)
    } else if let Some(n) = lower.strip_suffix("mhz") {
        (n, 1_000_000)
    } else if let Some(n) = lower.strip_suffix("khz") {
        (n, 1_000)
    } else if let Some(n) = lower.strip_suffix("hz") {
        (n, 1)
    } else {
        (lower.as_str(), 1)
    };
    let num = num.trim();
    let bad = || format!("'{s}': expected a tick rate in Hz, e.g. 1000000, 32768Hz, 10kHz, 1MHz");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    // Exact decimal: int.frac * factor must be a whole number.
    let digits = format!("{int}{frac}");
    let scale = 10u64.checked_pow(u32::try_from(frac.len()).map_err(|_| bad())?).ok_or_else(bad)?;
    let n: u128 = digits.parse().map_err(|_| bad())?;
    let total = n.checked_mul(u128::from(factor)).ok_or_else(bad)?;
    if total % u128::from(scale) != 0 {
        return Err(format!("'{s}': not a whole number of ticks per second"));
    }
    let hz = u64::try_from(total / u128::from(scale)).map_err(|_| bad())?;
    if hz == 0 {
        return Err(format!("'{s}': the tick rate must be above 0"));
    }
    Ok(hz)
}

/// `x.bin`, `x.qs.gz` -> `x.dic` beside it.
pub fn dic_path(trace: &Path) -> PathBuf {
    let name = trace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = name.as_str();
    for c in [".gz", ".zst", ".zstd"] {
        if let Some(s) = stem.strip_suffix(c) {
            stem = s;
        }
    }
    if let Some((s, _ext)) = stem.rsplit_once('.').filter(|(s, _)| !s.is_empty()) {
        stem = s;
    }
    trace.with_file_name(format!("{stem}.dic"))
}

/// The `.dic` a QS trace is read with.
#[derive(Debug, Default)]
pub struct Companion {
    /// Its path, when one was found beside the trace or given.
    pub path: Option<PathBuf>,
    /// Its content, when it could be read.
    pub dic: Option<Dic>,
    /// Hash and size of its bytes on disk.
    pub digest: Option<Digest256>,
    /// Bytes of text read.
    pub text_bytes: u64,
    /// Whether it was given with `--qs-dic` rather than found.
    pub given: bool,
}

/// Most bytes of a `.dic` read.
const MAX_DIC: u64 = 16 << 20;

impl Companion {
    /// The `.dic` beside `trace` when there is one (for hashing without reading).
    pub fn paths(trace: &Path) -> Vec<PathBuf> {
        let p = dic_path(trace);
        if p.is_file() && p != trace {
            vec![p]
        } else {
            Vec::new()
        }
    }

    /// Reads the `.dic` given, else the one beside `trace`.
    pub fn find(trace: &Path, given: Option<&Path>) -> Result<Companion> {
        let (path, is_given) = match given {
            Some(g) => (g.to_path_buf(), true),
            None => match Companion::paths(trace).pop() {
                Some(p) => (p, false),
                None => return Ok(Companion::default()),
            },
        };
        let mut input = Input::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut bytes = Vec::new();
        (&mut input)
            .take(MAX_DIC + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::input(&path.display().to_string(), "", e.to_string()))?;
        if bytes.len() as u64 > MAX_DIC {
            return Err(Error::input(
                &path.display().to_string(),
                "",
                format!("more than {} MiB: not a QSPY dictionary file", MAX_DIC >> 20),
            ));
        }
        let digest = input
            .finish()
            .map_err(|e| Error::input(&path.display().to_string(), "", e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(Companion {
            dic: Some(Dic::parse(&text)),
            digest: Some(digest),
            text_bytes: bytes.len() as u64,
            path: Some(path),
            given: is_given,
        })
    }
}

/// Frames looked at by [`sniff`].
const SNIFF_FRAMES: usize = 8;

/// True when `prefix` decodes as QS frames: at least [`SNIFF_FRAMES`] of them (or all of a
/// short file, at least 3), 90% with a good checksum, and the bytes are not mostly text.
pub fn sniff(prefix: &[u8]) -> bool {
    // Text (BTF, Paraver) is printable; QS frames carry binary timestamps and pointers.
    let printable = prefix
        .iter()
        .filter(|&&b| b.is_ascii_graphic() || b == b' ' || b == b'\n' || b == b'\r' || b == b'\t')
        .count();
    if prefix.is_empty() || printable * 10 >= prefix.len() * 9 {
        return false;
    }
    let mut d = Deframer::new(prefix);
    let (mut good, mut total) = (0usize, 0usize);
    while let Ok(Some(item)) = d.next_item() {
        match item {
            Item::Frame(_) => {
                good += 1;
                total += 1;
            }
            // The first frame cut (a capture starting mid-record: `resync`), or the prefix
            // ending inside a record: neither counts.
            Item::Problem(p) if p.severity == Severity::Info => {}
            Item::Problem(_) => total += 1,
        }
        if total >= 64 {
            break;
        }
    }
    let enough = total >= SNIFF_FRAMES || (total >= 3 && prefix.len() < 4096);
    enough && good * 10 >= total * 9
}

/// Frames held before the first is imported: enough to find the target info and the
/// active objects of a whole capture of usual size (see [`Reader::classify`]).
const WINDOW: usize = 1 << 18;

/// Most unmatched posts kept per (active object, signal): beyond, the oldest is written
/// without its receive.
const MAX_PENDING: usize = 4096;

/// Reads a QS byte stream from `input` into `sink`. `path` names the file in messages.
pub fn read<R: Read>(
    input: R,
    path: &str,
    opts: &QsOptions,
    comp: &Companion,
    sink: &mut dyn Sink,
) -> Result<()> {
    let mut deframer = Deframer::new(input);
    let mut window = Vec::new();
    let mut lost = None;
    loop {
        match deframer.next_item() {
            Ok(Some(item)) => {
                window.push(item);
                if window.len() >= WINDOW {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                lost = Some(e);
                break;
            }
        }
    }
    let mut r = Reader::new(path, opts, comp, sink)?;
    r.start(&window)?;
    for item in window {
        r.item(item)?;
    }
    if lost.is_none() && deframer.read > 0 {
        loop {
            match deframer.next_item() {
                Ok(Some(item)) => r.item(item)?,
                Ok(None) => break,
                Err(e) => {
                    lost = Some(e);
                    break;
                }
            }
        }
    }
    if let Some(e) = lost {
        let at = deframer.read;
        r.sink.diagnostic(Diagnostic {
            severity: Severity::DataLoss,
            kind: "input_truncated",
            pos: Pos::Byte(at),
            ts: None,
            message: format!("{e}: the bytes from byte {at} on are lost"),
        })?;
    }
    r.finish()
}

/// A post waiting for its get.
struct Pending {
    sender: String,
    ts: i64,
}

/// The state of one state machine.
struct SmState {
    entity_type: &'static str,
    state: String,
    since: i64,
    pos: Pos,
}

/// Importer state.
struct Reader<'a> {
    path: &'a str,
    sink: &'a mut dyn Sink,
    comp: &'a Companion,
    cfg: Config,
    tick_rate: Option<u64>,
    // In-band dictionaries (cleared by a target reset), then the .dic's.
    obj: HashMap<u64, String>,
    fun: HashMap<u64, String>,
    usr: HashMap<u8, String>,
    sig: HashMap<u64, Vec<(u64, String)>>,
    enums: HashMap<(u8, u64), String>,
    dic_obj: HashMap<u64, String>,
    dic_fun: HashMap<u64, String>,
    dic_usr: HashMap<u8, String>,
    dic_sig: HashMap<u64, Vec<(u64, String)>>,
    // Time.
    last_raw: Option<u64>,
    epoch: u64,
    wraps: u64,
    first_wrap: Option<(Pos, String)>,
    ts: i64,
    // Sequence.
    seq: Option<u8>,
    frames: u64,
    // Object kinds.
    ao: HashSet<u64>,
    kind: HashMap<u64, &'static str>,
    declared: HashSet<String>,
    unknown_obj: HashSet<(bool, u64)>,
    unknown_rec: HashMap<u8, (u64, Pos, String)>,
    // Derived channels.
    sm: HashMap<String, SmState>,
    isr: Vec<(u64, i64)>,
    crit: Option<(i64, u64)>,
    pending: HashMap<(u64, u64), VecDeque<Pending>>,
    resets: u64,
}

/// Dictionary entries kept per kind: a flood of dictionary records cannot grow memory.
const MAX_DICT: usize = 1 << 16;

fn put<K: std::hash::Hash + Eq, V>(m: &mut HashMap<K, V>, k: K, v: V) {
    if m.len() < MAX_DICT || m.contains_key(&k) {
        m.insert(k, v);
    }
}

/// A name from a dictionary string: as QSPY shows it (a leading `&` dropped; before QP 6.9
/// `[i]` shown `<i>`).
fn dict_name(bytes: &[u8], version: u16) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim().trim_start_matches('&');
    if version < 690 {
        s.replace('[', "<").replace(']', ">")
    } else {
        s.to_string()
    }
}

fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{x:02X}"));
    }
    s
}

impl<'a> Reader<'a> {
    fn new(
        path: &'a str,
        opts: &QsOptions,
        comp: &'a Companion,
        sink: &'a mut dyn Sink,
    ) -> Result<Self> {
        let placeholder = Config {
            version: 0,
            obj: 4,
            fun: 4,
            tstamp: 4,
            sig: 2,
            evt: 2,
            queue: 1,
            pool_ctr: 2,
            pool_blk: 2,
            tevt: 2,
        };
        let mut r = Reader {
            path,
            sink,
            comp,
            cfg: placeholder,
            tick_rate: opts.tick_rate,
            obj: HashMap::new(),
            fun: HashMap::new(),
            usr: HashMap::new(),
            sig: HashMap::new(),
            enums: HashMap::new(),
            dic_obj: HashMap::new(),
            dic_fun: HashMap::new(),
            dic_usr: HashMap::new(),
            dic_sig: HashMap::new(),
            last_raw: None,
            epoch: 0,
            wraps: 0,
            first_wrap: None,
            ts: 0,
            seq: None,
            frames: 0,
            ao: HashSet::new(),
            kind: HashMap::new(),
            declared: HashSet::new(),
            unknown_obj: HashSet::new(),
            unknown_rec: HashMap::new(),
            sm: HashMap::new(),
            isr: Vec::new(),
            crit: None,
            pending: HashMap::new(),
            resets: 0,
        };
        if let Some(d) = &comp.dic {
            // Pre-6.9 conversions are applied once the version is known (in `start`).
            for (k, v) in &d.obj {
                put(&mut r.dic_obj, *k, v.clone());
            }
            for (k, v) in &d.fun {
                put(&mut r.dic_fun, *k, v.clone());
            }
            for (k, v) in &d.usr {
                put(&mut r.dic_usr, *k, v.clone());
            }
            for (s, o, v) in &d.sig {
                let e = r.dic_sig.entry(*s).or_default();
                if e.len() < 256 {
                    e.push((*o, v.clone()));
                }
            }
        }
        Ok(r)
    }

    /// Settles the configuration from the first target info of `window`, else the `.dic`,
    /// and finds the active objects among the window's records.
    fn start(&mut self, window: &[Item]) -> Result<()> {
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
        if cfg.version < 690 {
            for m in [&mut self.dic_obj, &mut self.dic_fun] {
                for v in m.values_mut() {
                    *v = dict_name(v.as_bytes(), cfg.version);
                }
            }
        }
        self.sink.time_unit(match self.tick_rate {
            Some(_) => TimeUnit::Ns,
            None => TimeUnit::Tick,
        });
        let source = if in_band.is_some() { "target info" } else { "dic" };
        self.sink.meta("qp_version", &cfg.version_text());
        self.sink.meta("qs.config_from", source);
        self.sink.meta(
            "qs.sizes",
            &format!(
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
            ),
        );
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

    fn item(&mut self, item: Item) -> Result<()> {
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

    fn diag(&mut self, f: &Frame, severity: Severity, kind: &'static str, m: String) -> Result<()> {
        self.sink.diagnostic(Diagnostic {
            severity,
            kind,
            pos: f.pos(),
            ts: Some(self.ts),
            message: format!("{} at {}", m, f.at()),
        })
    }

    /// Ticks to the table's time.
    fn time(&mut self, raw: u64, f: &Frame) -> i64 {
        let bits = 8 * u32::from(self.cfg.tstamp);
        if let Some(last) = self.last_raw {
            if raw < last {
                self.epoch = self.epoch.saturating_add(1u64.checked_shl(bits).unwrap_or(0));
                self.wraps += 1;
                if self.first_wrap.is_none() {
                    self.first_wrap = Some((f.pos(), f.at()));
                }
            }
        }
        self.last_raw = Some(raw);
        let t = self.scale(self.epoch.saturating_add(raw));
        self.ts = t;
        t
    }

    /// Unwrapped ticks as the tables' time.
    fn scale(&self, ticks: u64) -> i64 {
        let t = match self.tick_rate {
            Some(hz) => i128::from(ticks) * 1_000_000_000 / i128::from(hz),
            None => i128::from(ticks),
        };
        i64::try_from(t).unwrap_or(i64::MAX).min(MAX_ABS_NS - 1)
    }

    /// The first timestamp among the window's records, for the records before it (target
    /// info, dictionaries) to take: with 0 instead, a capture whose clock reads 2.9 s
    /// when it starts would span from 0 and its first records stand apart.
    fn first_time(&self, window: &[Item]) -> Option<u64> {
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

    fn obj_name(&mut self, ptr: u64, f: &Frame) -> Result<String> {
        self.name(ptr, false, f)
    }

    /// The name of an object (or, `fun`, a function) pointer.
    fn name(&mut self, ptr: u64, fun: bool, f: &Frame) -> Result<String> {
        if ptr == 0 {
            return Ok("NULL".into());
        }
        let (m, d) = if fun { (&self.fun, &self.dic_fun) } else { (&self.obj, &self.dic_obj) };
        if let Some(n) = m.get(&ptr).or_else(|| d.get(&ptr)) {
            return Ok(n.clone());
        }
        let width = if fun { self.cfg.fun } else { self.cfg.obj };
        let shown = if width <= 4 { format!("0x{ptr:08X}") } else { format!("0x{ptr:016X}") };
        if self.unknown_obj.len() < MAX_DICT && self.unknown_obj.insert((fun, ptr)) {
            let what = if fun { "function (state)" } else { "object" };
            let m = format!(
                "{what} {shown} is in no dictionary (in-band or .dic): shown as {shown}; first \
                 seen"
            );
            self.diag(f, Severity::Info, "unknown_object", m)?;
        }
        Ok(shown)
    }

    fn sig_name(&self, sig: u64, obj: u64) -> String {
        if sig == 0 {
            return "NULL".into();
        }
        for d in [&self.sig, &self.dic_sig] {
            if let Some(list) = d.get(&sig) {
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
    fn type_of(&mut self, ptr: u64, hint: Option<&'static str>) -> Option<&'static str> {
        if self.ao.contains(&ptr) {
            return Some("AO");
        }
        if let Some(k) = self.kind.get(&ptr) {
            return Some(k);
        }
        let k = hint?;
        if self.kind.len() < MAX_DICT {
            self.kind.insert(ptr, k);
        }
        Some(k)
    }

    fn declare(&mut self, name: &str, ty: Option<&'static str>) {
        if ty.is_some() && !self.declared.contains(name) && self.declared.len() < MAX_DICT {
            self.declared.insert(name.to_string());
            self.sink.declare_entity(name, ty, None);
        }
    }

    fn frame(&mut self, f: &Frame) -> Result<()> {
        let rec = f.rec();
        let cfg = self.cfg;
        let reset_info = if rec == 64 && Era::of(cfg.version) >= Era::Qp55 {
            records::target_info(f.payload())
        } else {
            None
        };
        // Sequence: +1 per record; QS_EMPTY and a target reset start over.
        let exempt = rec == cfg.empty() || reset_info.as_ref().is_some_and(|t| t.reset);
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
        let Some(spec) = records::spec_of(rec, cfg.version) else {
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
            self.time(t.num, f);
        }
        if spec.role == Role::Reset {
            self.reset(f)?;
        }
        self.emit(f, spec.name, spec.role, &vals)
    }

    /// A decoded record's `events` row and derived rows.
    fn emit(&mut self, f: &Frame, name: &str, role: Role, vals: &[Val]) -> Result<()> {
        let get = |label: &str| vals.iter().find(|v| v.label == label);
        let ctx = get("AO").or_else(|| get("Obj")).filter(|v| v.k == K::Obj).map_or(0, |v| v.num);
        // The note, and names of the parts.
        let mut note = String::new();
        let mut names: Vec<(&'static str, String)> = Vec::with_capacity(vals.len());
        for v in vals {
            let text = match v.k {
                K::Time => continue,
                K::Obj => self.obj_name(v.num, f)?,
                K::Fun => self.name(v.num, true, f)?,
                K::Sig => self.sig_name(v.num, ctx),
                K::Str => {
                    String::from_utf8_lossy(v.bytes.as_deref().unwrap_or_default()).into_owned()
                }
                K::Rest => hex_bytes(v.bytes.as_deref().unwrap_or_default()),
                _ => v.num.to_string(),
            };
            if v.label == "->" {
                note.push_str("->");
            } else {
                if !note.is_empty() {
                    note.push(',');
                }
                note.push_str(v.label);
                note.push('=');
            }
            note.push_str(&text);
            names.push((v.label, text));
        }
        let named = |label: &str| names.iter().find(|(l, _)| *l == label).map(|(_, n)| n.clone());
        let ptr = |label: &str| get(label).filter(|v| v.k == K::Obj).map(|v| v.num);
        let hint = match role {
            Role::Sm | Role::SmState => Some("SM"),
            Role::Ao | Role::PostLifo | Role::Get => Some("AO"),
            Role::Queue => Some("QUEUE"),
            Role::Pool => Some("POOL"),
            Role::Timer => Some("TIMER"),
            Role::Sem => Some("SEM"),
            Role::Mutex => Some("MUTEX"),
            _ => None,
        };
        // Source: what the record is about.
        let sender_role = role == Role::PostFifo
            || name == "QF_PUBLISH"
            || name.ends_with("POST_ATTEMPT") && ptr("Sdr").is_some();
        let (source, source_type) = if matches!(role, Role::IsrEntry | Role::IsrExit) {
            ("ISR".to_string(), Some("I"))
        } else if sender_role {
            let p = ptr("Sdr").unwrap_or(0);
            let t = if p == 0 { None } else { self.type_of(p, None) };
            (named("Sdr").unwrap_or_else(|| "NULL".into()), t)
        } else if let Some(p) = ptr("Obj") {
            let t = if p == 0 { None } else { self.type_of(p, hint) };
            (named("Obj").unwrap_or_default(), t)
        } else if matches!(role, Role::Link | Role::Reset) {
            ("QS".to_string(), None)
        } else {
            ("QF".to_string(), Some("SCHED"))
        };
        self.declare(&source, source_type);
        // Target: the other party.
        let sig = get("Sig").map(|v| v.num);
        let last_fun =
            names.iter().rev().find(|(l, _)| *l == "->" || *l == "State").map(|(_, n)| n.clone());
        let (target, target_type): (Option<String>, &str) = match role {
            Role::SmState => (last_fun, "FUNC"),
            Role::Sm if sig.is_some() => (named("Sig"), "QSIG"),
            Role::Sm => (last_fun, "FUNC"),
            Role::PostFifo => (named("Obj"), "AO"),
            Role::Ao if sender_role => (named("Obj"), "AO"),
            Role::Ao if ptr("Que").is_some() => (named("Que"), "QUEUE"),
            Role::Timer => (named("AO"), "AO"),
            _ if sig.is_some() => (named("Sig"), "QSIG"),
            _ => (None, ""),
        };
        if let Some(t) = &target {
            if target_type == "AO" || target_type == "QUEUE" {
                let p = ptr(if role == Role::Timer {
                    "AO"
                } else if target_type == "QUEUE" {
                    "Que"
                } else {
                    "Obj"
                });
                let ty = p.filter(|&p| p != 0).and_then(|p| self.type_of(p, Some(target_type)));
                self.declare(t, ty);
            } else {
                self.declare(t, Some(target_type));
            }
        }
        let value = ["Free", "Len", "Blocks", "Size", "Ctr", "Tim", "Pri", "Nest", "Ref"]
            .iter()
            .find_map(|l| get(l).filter(|v| v.k != K::Obj && v.k != K::Sig))
            .map(|v| {
                #[allow(clippy::cast_precision_loss)]
                let x = v.num as f64;
                x
            });
        let ts = self.ts;
        let action = name.to_string();
        let target_text = target.clone().unwrap_or_default();
        let (target_ref, type_ref) =
            if target.is_some() { (target_text.as_str(), target_type) } else { ("", "") };
        // Never a type the derive stage runs a state machine for (T, I, ISR, R, SEM, SIG,
        // C): QS rows pass through it as they are.
        let target_type_final = type_ref;
        self.sink.event(&Event {
            ts,
            source: &source,
            source_instance: -1,
            target_type: target_type_final,
            target: target_ref,
            target_instance: -1,
            action: &action,
            note: if note.is_empty() { None } else { Some(&note) },
            value,
            core: None,
            pos: f.pos(),
        })?;
        // Derived rows.
        match role {
            Role::SmState => {
                if let (Some(p), Some(state)) = (ptr("Obj"), target) {
                    let ty = self.type_of(p, Some("SM")).unwrap_or("SM");
                    self.set_state(&source, ty, state, f.pos())?;
                }
            }
            Role::PostFifo | Role::PostLifo => {
                if let (Some(p), Some(s)) = (ptr("Obj"), sig) {
                    let sender = if role == Role::PostFifo {
                        source.clone()
                    } else {
                        named("Obj").unwrap_or_default()
                    };
                    let q = self.pending.entry((p, s)).or_default();
                    let pend = Pending { sender, ts };
                    if role == Role::PostFifo {
                        q.push_back(pend);
                    } else {
                        q.push_front(pend);
                    }
                    if q.len() > MAX_PENDING {
                        if let Some(old) = q.pop_front() {
                            let receiver = named("Obj").unwrap_or_default();
                            self.message(&old, &receiver, s, None, f.pos())?;
                        }
                    }
                }
            }
            Role::Get => {
                if let (Some(p), Some(s)) = (ptr("Obj"), sig) {
                    let taken = self.pending.get_mut(&(p, s)).and_then(VecDeque::pop_front);
                    if let Some(post) = taken {
                        self.message(&post, &source, s, Some(ts), f.pos())?;
                    }
                }
            }
            Role::IsrEntry | Role::IsrExit => {
                let nest = get("Nest").map_or(1, |v| v.num);
                let pri = get("Pri").map_or(0, |v| v.num);
                self.isr(role == Role::IsrEntry, nest, pri, f.pos())?;
            }
            Role::CritEntry | Role::CritExit => {
                let nest = get("Nest").map_or(1, |v| v.num);
                self.critical(role == Role::CritEntry, nest, f.pos())?;
            }
            _ => {}
        }
        Ok(())
    }

    fn message(
        &mut self,
        p: &Pending,
        receiver: &str,
        sig: u64,
        recv: Option<i64>,
        pos: Pos,
    ) -> Result<()> {
        self.sink.message(&Message {
            sender: &p.sender,
            receiver,
            send_ts: p.ts,
            recv_ts: recv,
            phys_send_ts: p.ts,
            phys_recv_ts: recv,
            size: 0,
            tag: i64::try_from(sig).unwrap_or(i64::MAX),
            pos,
        })
    }

    fn set_state(&mut self, entity: &str, ty: &'static str, state: String, pos: Pos) -> Result<()> {
        let ts = self.ts;
        if let Some(cur) = self.sm.get(entity) {
            if cur.state == state {
                return Ok(());
            }
        }
        if let Some(old) = self.sm.remove(entity) {
            self.span(
                entity,
                old.entity_type,
                "state",
                &old.state,
                None,
                old.since,
                Some(ts),
                old.pos,
            )?;
        }
        if self.sm.len() < MAX_DICT {
            self.sm.insert(entity.to_string(), SmState { entity_type: ty, state, since: ts, pos });
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn span(
        &mut self,
        entity: &str,
        entity_type: &str,
        channel: &str,
        state: &str,
        value: Option<f64>,
        begin: i64,
        end: Option<i64>,
        pos: Pos,
    ) -> Result<()> {
        self.sink.span(&Span {
            entity,
            entity_type,
            channel,
            state,
            value,
            begin,
            end,
            core: None,
            pos,
        })
    }

    /// ISR entry or exit at nesting `nest` (1 = outermost) and priority `pri`.
    fn isr(&mut self, entry: bool, nest: u64, pri: u64, pos: Pos) -> Result<()> {
        let ts = self.ts;
        // Entry: the new ISR's depth is `nest`; exit: the leaving one's (QP logs the nesting
        // before it is decremented), so either way `nest - 1` ISRs stay below it.
        let depth = nest.saturating_sub(1);
        // Entries whose exits were lost end here.
        while self.isr.len() as u64 > depth {
            let Some((p, since)) = self.isr.pop() else { break };
            self.isr_span(p, since, ts, pos)?;
        }
        if entry {
            if let Some((p, since)) = self.isr.last().copied() {
                // The ISR it interrupts: its stretch ends, to resume at the exit.
                self.isr_span(p, since, ts, pos)?;
            }
            if self.isr.len() < 256 {
                self.isr.push((pri, ts));
            }
        } else if let Some(top) = self.isr.last_mut() {
            top.1 = ts;
        }
        Ok(())
    }

    fn isr_span(&mut self, pri: u64, since: i64, end: i64, pos: Pos) -> Result<()> {
        #[allow(clippy::cast_precision_loss)]
        let v = Some(pri as f64);
        self.span("ISR", "I", "running", &pri.to_string(), v, since, Some(end), pos)
    }

    fn critical(&mut self, entry: bool, nest: u64, pos: Pos) -> Result<()> {
        let ts = self.ts;
        self.declare("QF", Some("SCHED"));
        match (entry, self.crit) {
            (true, None) => self.crit = Some((ts, nest)),
            (true, Some((since, _))) => self.crit = Some((since, nest)),
            (false, Some((since, _))) if nest <= 1 => {
                self.crit = None;
                self.span("QF", "SCHED", "critical", "critical", None, since, Some(ts), pos)?;
            }
            (false, Some((since, _))) => self.crit = Some((since, nest.saturating_sub(1))),
            (false, None) => {}
        }
        Ok(())
    }

    /// A target reset: dictionaries start over; open states, ISRs and posts end here.
    fn reset(&mut self, f: &Frame) -> Result<()> {
        self.resets += 1;
        // Pending posts end with the names they had.
        self.close(Some(self.ts), f.pos())?;
        self.obj.clear();
        self.fun.clear();
        self.usr.clear();
        self.sig.clear();
        self.enums.clear();
        Ok(())
    }

    /// Ends every open stretch at `end` (`None`: open at the end of the capture).
    fn close(&mut self, end: Option<i64>, pos: Pos) -> Result<()> {
        let mut open: Vec<(String, SmState)> = self.sm.drain().collect();
        open.sort_by(|a, b| (a.1.since, &a.0).cmp(&(b.1.since, &b.0)));
        for (e, s) in open {
            self.span(&e, s.entity_type, "state", &s.state, None, s.since, end, s.pos)?;
        }
        let at = end.unwrap_or(self.ts);
        if let Some((p, since)) = self.isr.pop() {
            self.isr_span(p, since, at, pos)?;
        }
        self.isr.clear();
        if let Some((since, _)) = self.crit.take() {
            self.span("QF", "SCHED", "critical", "critical", None, since, Some(at), pos)?;
        }
        let mut pend: Vec<((u64, u64), VecDeque<Pending>)> = self.pending.drain().collect();
        pend.sort_by_key(|(k, _)| *k);
        for ((p, s), q) in pend {
            let receiver = self.obj.get(&p).or_else(|| self.dic_obj.get(&p)).cloned();
            let receiver = receiver.unwrap_or_else(|| {
                if self.cfg.obj <= 4 {
                    format!("0x{p:08X}")
                } else {
                    format!("0x{p:016X}")
                }
            });
            for post in q {
                self.message(&post, &receiver, s, None, pos)?;
            }
        }
        Ok(())
    }

    /// Dictionary and target-info records.
    fn dict(&mut self, f: &Frame, name: &str, info: Option<records::TargetInfo>) -> Result<()> {
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
                    if t.config != self.cfg && t.config.check().is_ok() {
                        self.cfg = t.config;
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
                        let e = self.sig.entry(s).or_default();
                        e.retain(|(x, _)| *x != o);
                        if e.len() < 256 {
                            e.push((o, n.clone()));
                        }
                        let on = self.obj_name(o, f)?;
                        Some(format!("Sig={s},Obj={on},Name={n}"))
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
                        put(m, p, n.clone());
                        let shown =
                            if size <= 4 { format!("0x{p:08X}") } else { format!("0x{p:016X}") };
                        Some(format!("Ptr={shown},Name={n}"))
                    }
                    _ => None,
                }
            }
            "USR_DICT" => match (c.uint(1), c.cstr()) {
                (Some(r), Some(n)) => {
                    let n = dict_name(n, 690);
                    put(&mut self.usr, u8::try_from(r).unwrap_or(0), n.clone());
                    Some(format!("Rec={r},Name={n}"))
                }
                _ => None,
            },
            "ENUM_DICT" => match (c.uint(1), c.uint(1), c.cstr()) {
                (Some(val), Some(g), Some(n)) => {
                    let n = dict_name(n, 690);
                    put(&mut self.enums, (u8::try_from(g & 7).unwrap_or(0), val), n.clone());
                    Some(format!("Value={val},Grp={},Name={n}", g & 7))
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
                hex_bytes(f.payload())
            }
        };
        self.declare("QS", None);
        self.sink.event(&Event {
            ts: self.ts,
            source: "QS",
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action: name,
            note: Some(&note),
            value: None,
            core: None,
            pos: f.pos(),
        })
    }

    /// A record ID this QP version does not define.
    fn unknown(&mut self, f: &Frame) -> Result<()> {
        let rec = f.rec();
        let e = self.unknown_rec.entry(rec).or_insert((0, f.pos(), f.at()));
        e.0 += 1;
        let action = format!("REC_{rec}");
        let note = hex_bytes(f.payload());
        self.sink.event(&Event {
            ts: self.ts,
            source: "QS",
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action: &action,
            note: Some(&note),
            value: None,
            core: None,
            pos: f.pos(),
        })
    }

    /// An application record: timestamp, then self-described arguments.
    fn user(&mut self, f: &Frame) -> Result<()> {
        let cfg = self.cfg;
        let rec = f.rec();
        let mut c = Cursor::new(f.payload());
        match c.uint(cfg.tstamp) {
            Some(t) => {
                self.time(t, f);
            }
            None => {
                let m = format!("user record {rec} has no room for its timestamp");
                self.diag(f, Severity::Warning, "truncated_record", m)?;
            }
        }
        let (args, err) = decode::user_args(&mut c, &cfg);
        let action = match self.usr.get(&rec).or_else(|| self.dic_usr.get(&rec)) {
            Some(n) => n.clone(),
            None => format!("USER_{rec}"),
        };
        if let Some(e) = err {
            let m = format!("{action}: {e}; the arguments before it are kept");
            self.diag(f, Severity::Warning, "truncated_record", m)?;
        }
        let mut note = String::new();
        for a in &args {
            if !note.is_empty() {
                note.push(' ');
            }
            let s = match a {
                Arg::Int(i) => i.to_string(),
                Arg::Uint(u, true, n) => format!("0x{u:0w$X}", w = usize::from(*n) * 2),
                Arg::Uint(u, false, _) => u.to_string(),
                Arg::Enum(v, g) => self
                    .enums
                    .get(&(*g, u64::from(*v)))
                    .cloned()
                    .unwrap_or_else(|| format!("{v:03}")),
                Arg::Float(x) => x.to_string(),
                Arg::Str(s) => s.clone(),
                Arg::Mem(m) => hex_bytes(m),
                Arg::Sig(s, o) => {
                    let n = self.sig_name(*s, *o);
                    if *o != 0 {
                        format!("{n},Obj={}", self.obj_name(*o, f)?)
                    } else {
                        n
                    }
                }
                Arg::Obj(o) => self.obj_name(*o, f)?,
                Arg::Fun(p) => self.name(*p, true, f)?,
            };
            note.push_str(&s);
        }
        let value = args.iter().find_map(Arg::number);
        self.declare(&action, Some("USER"));
        self.sink.event(&Event {
            ts: self.ts,
            source: &action,
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action: &action,
            note: if note.is_empty() { None } else { Some(&note) },
            value,
            core: None,
            pos: f.pos(),
        })
    }

    fn finish(mut self) -> Result<()> {
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

use records::Era;

#[cfg(test)]
mod tests;
