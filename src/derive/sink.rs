//! The derive stage as the importers' [`Sink`]: each call lands here. An event is
//! counted and its time taken as `max(ts, previous ts)` for the state machines (the
//! `events` row keeps the time as read); the pending decisions of an earlier instant are
//! settled; its names are interned and its target typed; it goes to the state machine of
//! its target's type (process, runnable, semaphore, signal; cores and other types have
//! none) with the core it happened on, and its `events` row is written. Records with their own
//! times go to `channels.rs`; messages become `messages` rows, sorted by send time.
use super::{process, Class, Deriver, EventRow, MessageRow, Output};
use crate::ingest::{ChannelSet, Diagnostic, Message, Severity, Sink, Span};
use crate::model::{Event, Pos, Sym, TimeUnit};
use crate::Result;

impl<O: Output> Deriver<O> {
    /// BTF 2.1.5's signal initialisation, `0,SIG_X,-1,SIM,SIM,-1,tag,SIG_INIT_VALUE,5`
    /// (TA Simulator writes one per signal at the start): the signal named as the source
    /// holds that value from then on, as a `write` would set it. A source known as another
    /// type than a signal is left alone.
    fn signal_init_value(&mut self, source: Sym, ts: i64, action: Sym, ev: &Event) -> Result<()> {
        let Some(text) = ev.note.and_then(|n| n.strip_prefix("SIG_INIT_VALUE,")) else {
            return Ok(());
        };
        let id = self.entity(source, ev.pos);
        match self.type_of(source) {
            None => self.set_type_of(id, self.known.sig_type, true),
            Some(t) if t == self.known.sig_type => {}
            Some(_) => return Ok(()),
        }
        let text = text.trim();
        self.signal_write(source, ts, action, Some(text), numeric(Some(text)))
    }
}

/// Actions SEMANTICS.md lists for types without a state machine (signals write through
/// `signal_write`; the others only keep their events).
fn listed_actions(ty: &str) -> Option<&'static [&'static str]> {
    Some(match ty {
        "SIG" => &["read", "write"],
        "EVENT" => &["wait_event", "set_event", "clear_event"],
        "STI" => &["trigger"],
        "SIM" => &["tag", "description", "finalize", "error"],
        _ => return None,
    })
}

/// Parses a note that is a plain number (signal value, counter): decimal, or hexadecimal
/// with `0x` (`0x1F`, `-0x10`), as a register or address value often is written.
pub(super) fn numeric(note: Option<&str>) -> Option<f64> {
    let n = note?;
    let (neg, digits) = match n.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, n.strip_prefix('+').unwrap_or(n)),
    };
    if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let v = u64::from_str_radix(hex, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    let first = *n.as_bytes().first()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    n.parse::<f64>().ok().filter(|v| v.is_finite())
}

impl<O: Output> Sink for Deriver<O> {
    fn meta(&mut self, key: &str, value: &str) {
        self.meta.insert(key.to_string(), value.to_string());
    }

    fn time_unit(&mut self, unit: TimeUnit) {
        self.unit = unit;
    }

    fn declare_entity(&mut self, name: &str, entity_type: Option<&str>, id: Option<i64>) {
        let n = self.names.intern(name);
        let e = self.entity(n, Pos::None);
        if let Some(t) = entity_type {
            let t = self.names.intern(t);
            self.set_type(n, t, false, Pos::None);
            if let Some(info) = self.entities.get_mut(e) {
                info.declared |= info.entity_type == Some(t);
            }
        }
        if let (Some(id), Some(info)) = (id, self.entities.get_mut(e)) {
            info.btf_id = Some(id);
        }
    }

    fn event(&mut self, ev: &Event<'_>) -> Result<()> {
        let seq = self.seq;
        self.seq += 1;
        self.ts_range = Some(match self.ts_range {
            None => (ev.ts, ev.ts),
            Some((lo, hi)) => (lo.min(ev.ts), hi.max(ev.ts)),
        });
        // States never go back in time: a late event takes effect at the latest time seen.
        let ts = self.last_ts.map_or(ev.ts, |l| l.max(ev.ts));
        self.last_ts = Some(ts);
        if !self.pending_ends.is_empty() && ts > self.pending_ends_ts {
            self.report_pending_ends()?;
        }
        if !self.resumes.is_empty() {
            self.resume_pending(Some(ts))?;
        }
        if !self.moves.is_empty() {
            self.report_moves(Some(ts))?;
        }
        if !self.conflicts.is_empty() {
            self.report_conflicts(Some(ts))?;
        }

        let source = self.names.intern(ev.source);
        // Paraver and ovni rows are their thread's own events: one string as source and
        // target, interned once.
        let same = std::ptr::eq(ev.source, ev.target);
        let target = if same { source } else { self.names.intern(ev.target) };
        let mut target_type = self.names.intern(ev.target_type);
        let action = self.names.intern(ev.action);
        self.entity(source, ev.pos);
        let targetless = ev.target.is_empty() && ev.target_type.is_empty();
        if targetless {
            // An event about its source alone (a QS tick, an ISR entry): no target entity
            // to type, and no state machine runs (class Other below).
        } else if ev.target_type.is_empty() {
            // Names are unique across types: the type the target has elsewhere is its type.
            let known = self.type_of(target);
            let (severity, then) = match known {
                Some(t) => {
                    target_type = t;
                    (
                        Severity::Info,
                        format!("taken as {}, its type elsewhere", self.names.resolve(t)),
                    )
                }
                None => (
                    Severity::Warning,
                    "its type is not known yet: the event is kept in events, with no state change"
                        .to_string(),
                ),
            };
            let msg = format!("empty type field for {}: {then}", ev.target);
            self.diag(severity, "missing_type", ev.pos, ts, msg)?;
            self.entity(target, ev.pos);
        } else {
            // One look-up of the target for both.
            let id = self.entity(target, ev.pos);
            self.type_conflict(id, target_type, ev, ts)?;
            self.set_type_of(id, target_type, false);
        }
        let class = if targetless { Class::Other } else { self.class(target_type) };
        // The numeric payload, parsed once for the row and the state machines.
        let value = ev.value.or_else(|| numeric(ev.note));

        // The event as the state machines see it, once its core is known.
        let act = |core| process::Act {
            ts,
            pos: ev.pos,
            action,
            core,
            source,
            source_instance: ev.source_instance,
            created: ev.action == "preempt" && ev.note.is_some_and(process::is_creation_note),
        };
        // A process an ISR gave its core back to resumes before an event of its own (or of
        // its runnables) at that time; another ISR arriving may take the core on from it,
        // and another process taking the core leaves it ready (see `occupy`).
        let folded = !self.resumes.is_empty()
            && self.resume_involved(
                (source, ev.source_instance),
                (target, ev.target_instance),
                action,
                ts,
            )?;
        let core = match class {
            Class::Process => {
                let core = self.resolve_core(ev, source, target, true)?;
                if !folded {
                    self.process_event(target, target_type, ev.target_instance, act(core))?;
                }
                core
            }
            Class::Runnable => {
                let core = self.resolve_core(ev, source, target, false)?;
                self.runnable_event(target, target_type, ev.target_instance, act(core))?;
                core
            }
            Class::Semaphore => {
                let core = self.resolve_core(ev, source, target, false)?;
                self.semaphore_event(target, act(core), value)?;
                core
            }
            Class::Signal => {
                let core = self.resolve_core(ev, source, target, false)?;
                if self.names.resolve(action) == "write" {
                    self.signal_write(target, ts, action, ev.note, value)?;
                }
                core
            }
            // An event of a core is on it, unless the event names the core it was on (a
            // Paraver row that is a CPU, with a record's cpu field naming another).
            Class::Core => Some(ev.core.map_or(target, |c| self.names.intern(c))),
            Class::Other if ev.action == "tag" && ev.target_type == "SIM" => {
                self.signal_init_value(source, ts, action, ev)?;
                match ev.core {
                    Some(c) => Some(self.names.intern(c)),
                    None => self.resolve_core(ev, source, target, false)?,
                }
            }
            Class::Other => match ev.core {
                Some(c) => Some(self.names.intern(c)),
                None => self.resolve_core(ev, source, target, false)?,
            },
        };
        // Types whose actions SEMANTICS.md lists but that have no state machine here: an
        // action outside the list is kept, and said.
        if let Some(known) = listed_actions(ev.target_type) {
            if !known.contains(&ev.action) {
                let msg = format!(
                    "action '{}' on type {} is not in the BTF tables; kept in events, no state \
                     change",
                    ev.action, ev.target_type
                );
                self.diag(Severity::Info, "unknown_action", ev.pos, ts, msg)?;
            }
        }
        // After dispatch: core resolution may have just inferred the source's type.
        let source_type = self.type_of(source);
        let row = EventRow {
            seq,
            ts: ev.ts,
            source,
            source_type,
            source_instance: ev.source_instance,
            target: (!targetless).then_some(target),
            target_type: (!targetless).then_some(target_type),
            target_instance: ev.target_instance,
            action,
            note: ev.note,
            value,
            core,
        };
        self.out.event(&row, &self.names)
    }

    fn diagnostic(&mut self, d: Diagnostic) -> Result<()> {
        self.diags.push(d)
    }

    fn diagnostics(&mut self, d: Diagnostic, n: u64) -> Result<()> {
        self.diags.push_n(d, n)
    }

    fn span(&mut self, sp: &Span<'_>) -> Result<()> {
        self.record_span(sp)
    }

    fn channel_set(&mut self, set: &ChannelSet<'_>) -> Result<()> {
        self.set_channel(set)
    }

    fn message(&mut self, m: &Message<'_>) -> Result<()> {
        let sender = self.names.intern(m.sender);
        let receiver = self.names.intern(m.receiver);
        for t in
            [Some(m.send_ts), m.recv_ts, Some(m.phys_send_ts), m.phys_recv_ts].into_iter().flatten()
        {
            self.see(t);
        }
        self.emit_message(MessageRow {
            sender,
            sender_instance: -1,
            receiver,
            receiver_instance: -1,
            send_ts: m.send_ts,
            recv_ts: m.recv_ts,
            phys_send_ts: m.phys_send_ts,
            phys_recv_ts: m.phys_recv_ts,
            size: m.size,
            tag: m.tag,
        })
    }

    fn trace_end(&mut self, ts: i64) {
        self.declared_end = Some(self.declared_end.map_or(ts, |d| d.max(ts)));
    }

    fn source_file(&mut self, path: &str) {
        self.set_source(path);
    }
}
