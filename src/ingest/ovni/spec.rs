//! What the events say: payload signatures and descriptions, as ovni's emulator documents
//! them (`doc/user/emulation/events.md` of bsc-pm/ovni; `ovnidump` prints the same text).
//! Only the fields and wording are taken; the table is written here.
use super::stream::{Endian, RawEvent};

/// A payload field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    I32,
    U32,
    I64,
    U64,
    /// NUL-terminated text (jumbo events).
    Str,
}

impl Ty {
    fn size(self) -> Option<usize> {
        match self {
            Ty::I32 | Ty::U32 => Some(4),
            Ty::I64 | Ty::U64 => Some(8),
            Ty::Str => None,
        }
    }
}

/// One event of the table: MCV, signature (`i32 cpu, u64 tag`, `+` first for a jumbo
/// event), description with `%{field}` (decimal) and `%#llx{field}` (hex) holes.
type Entry = (&'static str, &'static str, &'static str);

/// The events of the ovni (`O`), nOS-V (`V`) and Nanos6 (`6`) models described here.
#[rustfmt::skip]
const TABLE: &[Entry] = &[
    // ovni
    ("OAr", "i32 cpu, i32 tid", "changes the affinity of thread %{tid} to CPU %{cpu}"),
    ("OAs", "i32 cpu", "switches it's own affinity to the CPU %{cpu}"),
    ("OB.", "", "emits a burst event to measure latency"),
    ("OHC", "i32 cpu, u64 tag", "creates a new thread on CPU %{cpu} with tag %#llx{tag}"),
    ("OHc", "", "enters the Cooling state (about to be paused)"),
    ("OHe", "", "ends the execution"),
    ("OHp", "", "pauses the execution"),
    ("OHr", "", "resumes the execution"),
    ("OHw", "", "enters the Warming state (about to be running)"),
    ("OHx", "i32 cpu, i32 tid, u64 tag", "begins the execution on CPU %{cpu} created from %{tid} with tag %#llx{tag}"),
    ("OCn", "i32 cpu", "informs there are %{cpu} CPUs"),
    ("OF[", "", "begins flushing events to disk"),
    ("OF]", "", "ceases flushing events to disk"),
    ("OU[", "", "enters unordered event region"),
    ("OU]", "", "leaves unordered event region"),
    ("OM[", "i64 value, i32 type", "push mark with value %{value} from type %{type}"),
    ("OM]", "i64 value, i32 type", "pop mark with value %{value} from type %{type}"),
    ("OM=", "i64 value, i32 type", "set mark with value %{value} from type %{type}"),
    // nOS-V
    ("VTc", "u32 taskid, u32 typeid", "creates task %{taskid} with type %{typeid}"),
    ("VTC", "u32 taskid, u32 typeid", "creates parallel task %{taskid} with type %{typeid}"),
    ("VTx", "u32 taskid, u32 bodyid", "executes the task %{taskid} with bodyid %{bodyid}"),
    ("VTe", "u32 taskid, u32 bodyid", "ends the task %{taskid} with bodyid %{bodyid}"),
    ("VTp", "u32 taskid, u32 bodyid", "pauses the task %{taskid} with bodyid %{bodyid}"),
    ("VTr", "u32 taskid, u32 bodyid", "resumes the task %{taskid} with bodyid %{bodyid}"),
    ("VYc", "+u32 typeid, str label", "creates task type %{typeid} with label \"%{label}\""),
    ("VSr", "", "receives a task from another thread"),
    ("VSs", "", "sends a task to another thread"),
    ("VS@", "", "self assigns itself a task"),
    ("VSh", "", "enters the hungry state, waiting for work"),
    ("VSf", "", "is no longer hungry"),
    ("VS[", "", "enters scheduler server mode"),
    ("VS]", "", "leaves scheduler server mode"),
    ("VU[", "", "starts submitting a task"),
    ("VU]", "", "stops  submitting a task"),
    ("VMa", "", "starts allocating memory"),
    ("VMA", "", "stops  allocating memory"),
    ("VMf", "", "starts freeing memory"),
    ("VMF", "", "stops  freeing memory"),
    ("VAr", "", "enters nosv_create()"),
    ("VAR", "", "leaves nosv_create()"),
    ("VAd", "", "enters nosv_destroy()"),
    ("VAD", "", "leaves nosv_destroy()"),
    ("VAs", "", "enters nosv_submit()"),
    ("VAS", "", "leaves nosv_submit()"),
    ("VAp", "", "enters nosv_pause()"),
    ("VAP", "", "leaves nosv_pause()"),
    ("VAy", "", "enters nosv_yield()"),
    ("VAY", "", "leaves nosv_yield()"),
    ("VAw", "", "enters nosv_waitfor()"),
    ("VAW", "", "leaves nosv_waitfor()"),
    ("VAc", "", "enters nosv_schedpoint()"),
    ("VAC", "", "leaves nosv_schedpoint()"),
    ("VAa", "", "enters nosv_attach()"),
    ("VAA", "", "leaves nosv_attach()"),
    ("VAe", "", "enters nosv_detach()"),
    ("VAE", "", "leaves nosv_detach()"),
    ("VAl", "", "enters nosv_mutex_lock()"),
    ("VAL", "", "leaves nosv_mutex_lock()"),
    ("VAt", "", "enters nosv_mutex_trylock()"),
    ("VAT", "", "leaves nosv_mutex_trylock()"),
    ("VAu", "", "enters nosv_mutex_unlock()"),
    ("VAU", "", "leaves nosv_mutex_unlock()"),
    ("VAb", "", "enters nosv_barrier_wait()"),
    ("VAB", "", "leaves nosv_barrier_wait()"),
    ("VHa", "", "enters nosv_attach()"),
    ("VHA", "", "leaves nosv_dettach()"),
    ("VHw", "", "begins execution as worker"),
    ("VHW", "", "ceases execution as worker"),
    ("VHd", "", "begins execution as delegate"),
    ("VHD", "", "ceases execution as delegate"),
    ("VPp", "", "sets progress state to Progressing"),
    ("VPr", "", "sets progress state to Resting"),
    ("VPa", "", "sets progress state to Absorbing"),
    // Nanos6
    ("6Yc", "+u32 typeid, str label", "creates task type %{typeid} with label \"%{label}\""),
    ("6Tc", "u32 taskid, u32 typeid", "creates task %{taskid} with type %{typeid}"),
    ("6Tx", "u32 taskid", "executes the task %{taskid}"),
    ("6Te", "u32 taskid", "ends the task %{taskid}"),
    ("6Tp", "u32 taskid", "pauses the task %{taskid}"),
    ("6Tr", "u32 taskid", "resumes the task %{taskid}"),
    ("6W[", "", "enters worker main loop, looking for tasks"),
    ("6W]", "", "leaves worker main loop, looking for tasks"),
    ("6Wt", "", "begins handling a task via handleTask()"),
    ("6WT", "", "ceases handling a task via handleTask()"),
    ("6Ww", "", "begins switching to another worker via switchTo()"),
    ("6WW", "", "ceases switching to another worker via switchTo()"),
    ("6Wm", "", "begins migrating the current worker to another CPU"),
    ("6WM", "", "ceases migrating the current worker to another CPU"),
    ("6Ws", "", "begins suspending the worker via suspend()"),
    ("6WS", "", "ceases suspending the worker via suspend()"),
    ("6Wr", "", "begins resuming another worker via resume()"),
    ("6WR", "", "ceases resuming another worker via resume()"),
    ("6Wg", "", "enters sponge mode (absorbing system noise)"),
    ("6WG", "", "leaves sponge mode (absorbing system noise)"),
    ("6W*", "", "signals another worker to wake up"),
    ("6Pp", "", "sets progress state to Progressing"),
    ("6Pr", "", "sets progress state to Resting"),
    ("6Pa", "", "sets progress state to Absorbing"),
    ("6C[", "", "begins creating a new task"),
    ("6C]", "", "ceases creating a new task"),
    ("6U[", "", "begins submitting a task via submitTask()"),
    ("6U]", "", "ceases submitting a task via submitTask()"),
    ("6F[", "", "begins spawning a function via spawnFunction()"),
    ("6F]", "", "ceases spawning a function via spawnFunction()"),
    ("6t[", "", "enters the task body"),
    ("6t]", "", "leaves the task body"),
    ("6O[", "", "begins running the task body as taskfor collaborator"),
    ("6O]", "", "ceases running the task body as taskfor collaborator"),
    ("6Ma", "", "starts allocating memory"),
    ("6MA", "", "stops  allocating memory"),
    ("6Mf", "", "starts freeing memory"),
    ("6MF", "", "stops  freeing memory"),
    ("6Dr", "", "begins registration of task dependencies"),
    ("6DR", "", "ceases registration of task dependencies"),
    ("6Du", "", "begins unregistration of task dependencies"),
    ("6DU", "", "ceases unregistration of task dependencies"),
    ("6S[", "", "begins scheduler serving mode"),
    ("6S]", "", "ceases scheduler serving mode"),
    ("6Sa", "", "begins submitting a ready task via addReadyTask()"),
    ("6SA", "", "ceases submitting a ready task via addReadyTask()"),
    ("6Sp", "", "begins processing ready tasks via processReadyTasks()"),
    ("6SP", "", "ceases processing ready tasks via processReadyTasks()"),
    ("6S@", "", "self assigns itself a task"),
    ("6Sr", "", "receives a task from another thread"),
    ("6Ss", "", "sends a task to another thread"),
    ("6Bb", "", "begins blocking the current task"),
    ("6BB", "", "ceases blocking the current task"),
    ("6Bu", "", "begins unblocking a task"),
    ("6BU", "", "ceases unblocking a task"),
    ("6Bw", "", "enters a task wait"),
    ("6BW", "", "leaves a task wait"),
    ("6Bf", "", "enters a wait for"),
    ("6BF", "", "leaves a wait for"),
    ("6He", "", "begins execution as external thread"),
    ("6HE", "", "ceases execution as external thread"),
    ("6Hw", "", "begins execution as worker"),
    ("6HW", "", "ceases execution as worker"),
    ("6Hl", "", "begins execution as leader"),
    ("6HL", "", "ceases execution as leader"),
    ("6Hm", "", "begins execution as main thread"),
    ("6HM", "", "ceases execution as main thread"),
];

/// Models whose events are known by name here or in ovni (MPI `M`, OpenMP `P`, TAMPI `T`,
/// nODES `D`, kernel `K`): a payload-less event of theirs that the table does not describe
/// is kept without a note and without a diagnostic.
const KNOWN_MODELS: &[u8] = b"OV6MPTDK";

/// A payload field value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// A number.
    Int(i128),
    /// Text.
    Text(String),
}

/// An event decoded against the table.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The description with the payload filled in, as `ovnidump` prints it.
    pub note: String,
    /// The payload fields, by name.
    pub fields: Vec<(&'static str, Field)>,
}

impl Decoded {
    /// The numeric field `name`.
    pub fn int(&self, name: &str) -> Option<i128> {
        self.fields.iter().find_map(|(n, v)| match v {
            Field::Int(i) if *n == name => Some(*i),
            _ => None,
        })
    }
    /// The text field `name`.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.fields.iter().find_map(|(n, v)| match v {
            Field::Text(t) if *n == name => Some(t.as_str()),
            _ => None,
        })
    }
    /// The first numeric field (the `events.value` of the row).
    pub fn first_int(&self) -> Option<i128> {
        self.fields.iter().find_map(|(_, v)| match v {
            Field::Int(i) => Some(*i),
            Field::Text(_) => None,
        })
    }
}

/// What the table says about an event.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// Described, payload as expected.
    Known(Decoded),
    /// An event of a known model the table does not describe, with no payload.
    Undescribed,
    /// Not in the table and not payload-less of a known model, or a payload of another
    /// size than the table's: the reason.
    Unknown(String),
}

fn take<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at + N).and_then(|s| <[u8; N]>::try_from(s).ok())
}

/// Decodes `ev` (a stream in byte order `endian`).
pub fn decode(ev: &RawEvent, endian: Endian) -> Lookup {
    let mcv = ev.mcv;
    let Some(&(_, sig, text)) = TABLE.iter().find(|(c, _, _)| c.as_bytes() == mcv) else {
        return if ev.data().is_empty() && ev.jumbo.is_none() && KNOWN_MODELS.contains(&mcv[0]) {
            Lookup::Undescribed
        } else {
            Lookup::Unknown(format!("{} is not a known event", ev.mcv_text()))
        };
    };
    let (jumbo, sig) = match sig.strip_prefix('+') {
        Some(s) => (true, s),
        None => (false, sig),
    };
    if jumbo != ev.jumbo.is_some() {
        return Lookup::Unknown(format!(
            "{} is {}a jumbo event here, but {}one in ovni's table",
            ev.mcv_text(),
            if ev.jumbo.is_some() { "" } else { "not " },
            if jumbo { "" } else { "not " }
        ));
    }
    let data = ev.data();
    let mut fields = Vec::new();
    let mut at = 0usize;
    for f in sig.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let (ty, name) = f.split_once(' ').unwrap_or((f, ""));
        let ty = match ty {
            "i32" => Ty::I32,
            "u32" => Ty::U32,
            "i64" => Ty::I64,
            "u64" => Ty::U64,
            _ => Ty::Str,
        };
        let v = match ty.size() {
            Some(4) => take::<4>(data, at).map(|b| {
                let u = endian.u32(b);
                if ty == Ty::I32 {
                    Field::Int(i128::from(u as i32))
                } else {
                    Field::Int(i128::from(u))
                }
            }),
            Some(_) => take::<8>(data, at).map(|b| {
                let u = endian.u64(b);
                if ty == Ty::I64 {
                    Field::Int(i128::from(u as i64))
                } else {
                    Field::Int(i128::from(u))
                }
            }),
            None => {
                let rest = data.get(at..).unwrap_or_default();
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                let s = String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned();
                at += (end + 1).min(rest.len());
                Some(Field::Text(s))
            }
        };
        let Some(v) = v else {
            return Lookup::Unknown(format!(
                "{} has a {}-byte payload, too short for ({sig})",
                ev.mcv_text(),
                data.len()
            ));
        };
        at += ty.size().unwrap_or(0);
        fields.push((name_of(name), v));
    }
    if !jumbo && at != data.len() {
        return Lookup::Unknown(format!(
            "{} has a {}-byte payload, ovni's table says {at} ({sig})",
            ev.mcv_text(),
            data.len()
        ));
    }
    let note = fill(text, &fields);
    Lookup::Known(Decoded { note, fields })
}

/// The field names of the table, as `'static` (they are its own text).
fn name_of(name: &str) -> &'static str {
    const NAMES: &[&str] =
        &["cpu", "tid", "tag", "value", "type", "taskid", "typeid", "bodyid", "label"];
    NAMES.iter().copied().find(|n| *n == name).unwrap_or("field")
}

/// `text` with its holes filled from `fields`.
fn fill(text: &str, fields: &[(&'static str, Field)]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(i) = rest.find('%') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i..).unwrap_or("");
        let (hex, hole) = if let Some(h) = after.strip_prefix("%#llx{") {
            (true, h)
        } else if let Some(h) = after.strip_prefix("%{") {
            (false, h)
        } else {
            out.push('%');
            rest = after.get(1..).unwrap_or("");
            continue;
        };
        let Some(close) = hole.find('}') else {
            out.push_str(after);
            rest = "";
            break;
        };
        let name = hole.get(..close).unwrap_or("");
        match fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v) {
            // `%#llx` of 0 is `0`, of anything else `0x...` (C's printf).
            Some(Field::Int(0)) if hex => out.push('0'),
            Some(Field::Int(v)) if hex => out.push_str(&format!("{v:#x}")),
            Some(Field::Int(v)) => out.push_str(&v.to_string()),
            Some(Field::Text(t)) => out.push_str(t),
            None => out.push('?'),
        }
        rest = hole.get(close + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// The payload as hex bytes (the note of an unknown event).
pub fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// What ovni's emulator reads of an `OHx` whose payload is not the table's 16 bytes: the
/// i32 cpu, when there are at least its 4 bytes (`pre_thread_execute` needs no more).
pub fn execute_cpu(ev: &RawEvent, endian: Endian) -> Option<Decoded> {
    if ev.mcv != *b"OHx" || ev.jumbo.is_some() {
        return None;
    }
    let b = take::<4>(ev.data(), 0)?;
    let cpu = i128::from(endian.u32(b) as i32);
    Some(Decoded { note: String::new(), fields: vec![("cpu", Field::Int(cpu))] })
}

/// The name of an ovni model whose events tracedb keeps but derives no channel from (MPI,
/// OpenMP, TAMPI, nODES, kernel), for a model letter.
pub fn underived_model(m: u8) -> Option<&'static str> {
    match m {
        b'M' => Some("MPI"),
        b'P' => Some("OpenMP"),
        b'T' => Some("TAMPI"),
        b'D' => Some("nODES"),
        b'K' => Some("kernel"),
        _ => None,
    }
}
