//! One timed record made into rows: its kind ([`classify`]), its core (at most
//! [`MAX_CORES`]; the rows of further cores go on [`OTHER_CORE`], with no system event), its
//! numbers and addresses (`bad_field` when unreadable: the row is kept without them), its
//! `events` row (the note lists address, destination, symbol, data and access), then the
//! system events the mapping makes of it ([`System`]): task switches (context records and
//! writes of "current task" variables), signal writes, and entries and returns of
//! runnables, ISRs and functions.
//!
//! State kept: the cores declared, and the unknown task values already reported (at most
//! 4096).
use super::super::fields::parse_int;
use super::super::system::{At, Entry};
use super::{Reader, Record, MAX_CORES, OTHER_CORE};
use crate::ingest::{Diagnostic, Severity, Sink};
use crate::model::{Event, Pos};
use crate::Result;

/// What a record is, from its type (and access) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A data write.
    Write,
    /// A data read.
    Read,
    /// A branch or call (to its destination).
    Branch,
    /// A return.
    Return,
    /// An exception or interrupt (to its destination).
    Interrupt,
    /// An OS-aware context record (S32DS "Software Context", Nexus ownership trace): its data
    /// is the id of the task now running.
    Context,
    /// Code executed at its address (S32DS "Linear", TRACE32 `ptrace`/`exec`).
    Flow,
    /// Anything else (Info, Error, Custom).
    Other,
}

/// The kind of a record whose type field is `ty` and access field `access`.
pub fn classify(ty: &str, access: &str) -> Kind {
    let t = ty.trim().to_ascii_lowercase();
    let a = access.trim().to_ascii_lowercase();
    let access_kind = match a.as_str() {
        "r" | "rd" | "read" => Some(Kind::Read),
        "w" | "wr" | "write" => Some(Kind::Write),
        _ => None,
    };
    if t.starts_with("wr") || t.contains("write") {
        return Kind::Write;
    }
    if t.starts_with("rd") || t.contains("read") {
        return Kind::Read;
    }
    match t.as_str() {
        "data" | "data trace" | "dtm" | "" if access_kind.is_some() => {
            access_kind.unwrap_or(Kind::Write)
        }
        "data" | "data trace" | "dtm" => Kind::Write,
        "return" | "ret" | "rfi" | "exception return" => Kind::Return,
        "interrupt" | "exception" | "irq" | "trap" => Kind::Interrupt,
        "software context" | "context" | "ownership" | "otm" => Kind::Context,
        "linear" | "ptrace" | "exec" | "fetch" | "program" | "sequential" => Kind::Flow,
        _ if ["branch", "call", "jump"].iter().any(|w| t.contains(w)) => Kind::Branch,
        _ => access_kind.unwrap_or(Kind::Other),
    }
}

/// A symbol column's text without a TRACE32 path (`\\app\\main\\f` → `f`), and its
/// `+offset` split off: (name, whether it had an offset).
fn symbol_name(text: &str) -> Option<(&str, bool)> {
    let t = text.trim();
    let t = t.rsplit('\\').next().unwrap_or(t).trim();
    if t.is_empty() {
        return None;
    }
    match t.split_once('+') {
        Some((n, _)) => Some((n.trim(), true)),
        None => Some((t, false)),
    }
}

impl Reader<'_> {
    /// The core of a row, and whether it is one beyond [`MAX_CORES`] (then [`OTHER_CORE`]).
    fn core_of(&mut self, rec: &Record, sink: &mut dyn Sink) -> Result<(String, bool)> {
        let name = self.core_name(&rec.core);
        if !self.cores.contains(&name) && self.cores.len() >= MAX_CORES {
            if !self.cores.contains(OTHER_CORE) {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "too_many_entities",
                    pos: Pos::Line(rec.pos),
                    ts: None,
                    message: format!(
                        "{name}: more than {MAX_CORES} cores; the rows of this and further ones \
                         are on {OTHER_CORE} (their core in the note, as core=...), with no \
                         system event"
                    ),
                })?;
                self.declare_core(OTHER_CORE, sink);
            }
            return Ok((OTHER_CORE.to_string(), true));
        }
        self.declare_core(&name, sink);
        Ok((name, false))
    }

    fn declare_core(&mut self, name: &str, sink: &mut dyn Sink) {
        if !self.cores.contains(name) {
            self.cores.insert(name.to_string());
            sink.declare_entity(name, Some("C"), None);
        }
    }

    fn number(
        &self,
        text: &str,
        what: &str,
        radix: u32,
        at: (Pos, i64),
        sink: &mut dyn Sink,
    ) -> Result<Option<i128>> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        match parse_int(text, radix) {
            Some(v) => Ok(Some(v)),
            None => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_field",
                    pos: at.0,
                    ts: Some(at.1),
                    message: format!("{what} '{text}' is not a number; row kept without it"),
                })?;
                Ok(None)
            }
        }
    }

    /// A number read from an address field as an address: a negative one (or one beyond 64
    /// bits) is none, and said.
    fn address(
        &self,
        v: Option<i128>,
        text: &str,
        what: &str,
        at: (Pos, i64),
        sink: &mut dyn Sink,
    ) -> Result<Option<u64>> {
        let Some(v) = v else { return Ok(None) };
        match u64::try_from(v) {
            Ok(a) => Ok(Some(a)),
            Err(_) => {
                sink.diagnostic(Diagnostic {
                    severity: Severity::Warning,
                    kind: "bad_field",
                    pos: at.0,
                    ts: Some(at.1),
                    message: format!(
                        "{what} '{}' is not an address (negative or beyond 64 bits); row kept \
                         without it",
                        text.trim()
                    ),
                })?;
                Ok(None)
            }
        }
    }

    /// One record at `ts`: its `events` row, then its system events.
    pub(super) fn emit(&mut self, rec: Record, ts: i64, sink: &mut dyn Sink) -> Result<()> {
        let pos = Pos::Line(rec.pos);
        let (core, other) = self.core_of(&rec, sink)?;
        let ar = self.map.address_radix;
        let addr = self.number(&rec.address, "address", ar, (pos, ts), sink)?;
        let dest = self.number(&rec.destination, "destination", ar, (pos, ts), sink)?;
        let data = self.number(&rec.data, "data", self.map.data_radix, (pos, ts), sink)?;
        let addr = self.address(addr, &rec.address, "address", (pos, ts), sink)?;
        let dest = self.address(dest, &rec.destination, "destination", (pos, ts), sink)?;
        let kind = classify(&rec.ty, &rec.access);
        let syms = self.syms;
        let hit = |a: Option<u64>| a.and_then(|a| syms?.lookup(a));
        let (addr_hit, dest_hit) = (hit(addr), hit(dest));
        let shown = |h: Option<super::super::elf::Hit<'_>>| {
            h.map(|h| {
                if h.offset == 0 {
                    format!(" <{}>", h.name)
                } else {
                    format!(" <{}+0x{:x}>", h.name, h.offset)
                }
            })
            .unwrap_or_default()
        };
        let mut note = Vec::new();
        if other {
            note.push(format!("core={}", rec.core.trim()));
        }
        if let Some(a) = addr {
            note.push(format!("addr=0x{a:08x}{}", shown(addr_hit)));
        }
        if let Some(d) = dest {
            note.push(format!("dest=0x{d:08x}{}", shown(dest_hit)));
        }
        if !rec.symbol.trim().is_empty() {
            note.push(format!("sym={}", rec.symbol.trim()));
        }
        if !rec.data.trim().is_empty() {
            note.push(format!("data={}", rec.data.trim()));
        }
        if !rec.access.trim().is_empty() {
            note.push(format!("access={}", rec.access.trim()));
        }
        let note = note.join(", ");
        let action = {
            let t = rec.ty.trim().to_lowercase().replace(' ', "_");
            if t.is_empty() {
                "record".to_string()
            } else {
                t
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let value = data.map(|v| v as f64);
        sink.event(&Event {
            ts,
            source: &core,
            source_instance: -1,
            target_type: "",
            target: "",
            target_instance: -1,
            action: &action,
            note: (!note.is_empty()).then_some(note.as_str()),
            value,
            core: Some(&core),
            pos,
        })?;
        if other || (!self.map.has_system() && self.map.tasks.is_empty()) {
            return Ok(());
        }
        let at = At { ts, pos, core: &core };
        let sym_col = symbol_name(&rec.symbol);
        match kind {
            Kind::Write => {
                // The variable: the ELF object at the address, else the export's symbol.
                let name = match addr_hit {
                    Some(h) if !h.func => Some(h.name.to_string()),
                    _ => sym_col.map(|(n, _)| n.to_string()),
                };
                self.write(addr, name.as_deref(), data, at, sink)?;
            }
            Kind::Context => {
                if let Some(v) = data {
                    let task = self.task_of(v, at, sink)?;
                    self.system.switch(task.as_deref(), at, sink)?;
                }
            }
            Kind::Branch | Kind::Interrupt | Kind::Flow => {
                let target = if kind == Kind::Flow { addr } else { dest.or(addr) };
                let target_hit = if kind == Kind::Flow { addr_hit } else { dest_hit.or(addr_hit) };
                let entered = match (target_hit, syms) {
                    (Some(h), _) if h.func && (h.offset == 0 || kind == Kind::Interrupt) => {
                        Some(h.name.to_string())
                    }
                    (_, Some(_)) if target.is_some() => None,
                    _ => match sym_col {
                        Some((n, off)) if !off || kind == Kind::Interrupt => Some(n.to_string()),
                        _ => None,
                    },
                };
                let isr_row = kind == Kind::Interrupt && self.map.isrs.is_empty();
                let entered = match (entered, isr_row, target) {
                    (Some(n), _, _) => Some(n),
                    (None, true, Some(t)) => Some(format!("IRQ@0x{t:x}")),
                    _ => None,
                };
                // With `isrs` mapped, an interrupt row into anything else (a vector table)
                // opens no call: the handler's own entry does, and its return closes it.
                let vector = kind == Kind::Interrupt
                    && !isr_row
                    && entered.as_deref().is_some_and(|f| !self.map.is_isr(f));
                let from = addr_hit.filter(|h| h.func).map(|h| h.name.to_string());
                if vector {
                    self.system.interrupted_from(&core, from.as_deref(), true);
                }
                if let Some(f) = entered.filter(|_| !vector) {
                    if self.system.top(&core) != Some(f.as_str()) {
                        let e = if isr_row || self.map.is_isr(&f) {
                            Entry::Isr
                        } else if self.map.is_runnable(&f) {
                            Entry::Runnable
                        } else if self.map.is_terminate(&f) {
                            Entry::Terminate
                        } else {
                            Entry::Plain
                        };
                        if e == Entry::Isr {
                            self.system.interrupted_from(&core, from.as_deref(), false);
                        }
                        self.system.enter(&f, e, at, sink)?;
                    }
                }
            }
            Kind::Return => {
                let to = dest_hit.filter(|h| h.func).map(|h| h.name.to_string());
                let from = addr_hit.filter(|h| h.func).map(|h| h.name.to_string());
                self.system.leave(from.as_deref(), to.as_deref(), at, sink)?;
            }
            Kind::Read | Kind::Other => {}
        }
        Ok(())
    }

    /// A data write: a task switch when the variable is a "current task" one, a signal
    /// write when it is a mapped signal.
    fn write(
        &mut self,
        addr: Option<u64>,
        name: Option<&str>,
        data: Option<i128>,
        at: At<'_>,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let task_core = self.map.task_var_core(addr, name).map(str::to_string);
        let signal = task_core.is_none() && self.map.is_signal(addr, name);
        if task_core.is_none() && !signal {
            return Ok(());
        }
        let shown = name
            .map_or_else(|| addr.map(|a| format!("0x{a:x}")).unwrap_or_default(), str::to_string);
        let Some(v) = data else {
            return sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "missing_value",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!("write of {shown} with no data value: no system event"),
            });
        };
        match task_core {
            Some(core) => {
                self.declare_core(&core, sink);
                let task = self.task_of(v, at, sink)?;
                let at = At { core: &core, ..at };
                self.system.switch(task.as_deref(), at, sink)
            }
            None => self.system.signal(&shown, v, at, sink),
        }
    }

    /// The task a "current task" value names (`None`: idle).
    fn task_of(&mut self, v: i128, at: At<'_>, sink: &mut dyn Sink) -> Result<Option<String>> {
        if self.map.idle.contains(&v) {
            return Ok(None);
        }
        if let Some(t) = self.map.tasks.get(&v) {
            return Ok(Some(t.clone()));
        }
        let name = format!("TASK_{v}");
        if self.unknown_values.len() < 4096 && self.unknown_values.insert(v) {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unknown_task_value",
                pos: at.pos,
                ts: Some(at.ts),
                message: format!(
                    "current-task value {v} is not in the mapping's tasks (nor idle): the task \
                     is named {name}"
                ),
            })?;
        }
        Ok(Some(name))
    }
}
