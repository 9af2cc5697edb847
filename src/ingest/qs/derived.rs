//! A decoded record's `events` row and the rows derived from it: the `state` channel of
//! state machines, the `running` channel of ISRs and `critical` of QF, and messages paired
//! from posts and gets.
use super::decode::Val;
use super::frame::Frame;
use super::posts::{Bound, Pending, MAX_ALL, MAX_PAIR};
use super::reader::{hex_bytes, Reader};
use super::records::{Role, K};
use crate::ingest::{Diagnostic, Severity};
use crate::ingest::{Message, Span};
use crate::model::{Event, Pos};
use crate::Result;
use std::sync::Arc;

/// State machines with a state at once: QP targets have tens to hundreds. Each costs about
/// 250 bytes here and as an open interval at the end (2^20 of them peaked over 1 GB).
pub(super) const MAX_MACHINES: usize = 1 << 18;

/// An ISR entered and not yet left.
#[derive(Clone, Copy)]
pub(super) struct OpenIsr {
    pri: u64,
    nest: u64,
    /// When it last started running (entry, or the exit of the ISR nested in it).
    since: i64,
}

/// The state of one state machine.
pub(super) struct SmState {
    entity_type: &'static str,
    state: String,
    pub(super) since: i64,
    pos: Pos,
}

#[cfg(test)]
impl SmState {
    /// A state machine of type SM in `state` since `since`.
    pub(super) fn test(since: i64, state: &str) -> Self {
        SmState { entity_type: "SM", state: state.into(), since, pos: Pos::None }
    }
}

impl Reader<'_> {
    /// A decoded record's `events` row and derived rows.
    pub(super) fn emit(&mut self, f: &Frame, name: &str, role: Role, vals: &[Val]) -> Result<()> {
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
                    let lifo = role == Role::PostLifo;
                    let receiver = named("Obj").unwrap_or_default();
                    let sender = if lifo { receiver.clone() } else { source };
                    let evicted = self.posts.post((p, s), (sender, &receiver), ts, lifo);
                    if let Some((bound, (_, rs), old)) = evicted {
                        let receiver = Arc::clone(&old.receiver);
                        self.message(&old, rs, None, f.pos())?;
                        let m = match bound {
                            Bound::Pair => format!(
                                "more than {MAX_PAIR} posts of signal {rs} to {receiver} wait for \
                                 their get"
                            ),
                            Bound::All => format!("more than {MAX_ALL} posts wait for their get"),
                        };
                        let m = format!(
                            "{m}: the oldest (signal {rs} from {} to {receiver}, sent at {}) is \
                             written never received",
                            old.sender, old.ts
                        );
                        self.diag(f, Severity::Warning, "too_many_pending_posts", m)?;
                    }
                }
            }
            Role::Get => {
                if let (Some(p), Some(s)) = (ptr("Obj"), sig) {
                    if let Some(post) = self.posts.take((p, s)) {
                        self.message(&post, s, Some(ts), f.pos())?;
                    }
                }
            }
            Role::IsrEntry | Role::IsrExit => {
                let nest = get("Nest").map_or(1, |v| v.num);
                let pri = get("Pri").map_or(0, |v| v.num);
                self.isr(role == Role::IsrEntry, nest, pri, f)?;
            }
            Role::CritEntry | Role::CritExit => {
                let nest = get("Nest").map_or(1, |v| v.num);
                self.critical(role == Role::CritEntry, nest, f)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn message(&mut self, p: &Pending, sig: u64, recv: Option<i64>, pos: Pos) -> Result<()> {
        self.sink.message(&Message {
            sender: &p.sender,
            receiver: &p.receiver,
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
        } else if self.sm.len() >= MAX_MACHINES {
            return self.sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "too_many_state_machines",
                pos,
                ts: Some(ts),
                message: format!(
                    "{entity} enters {state}, but {MAX_MACHINES} state machines have a state \
                     already: its states are not derived (its events are kept)"
                ),
            });
        }
        self.sm.insert(entity.to_string(), SmState { entity_type: ty, state, since: ts, pos });
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
    ///
    /// The stack holds the ISRs entered and not yet left, by strictly increasing nesting;
    /// only the top one runs. An entry at nesting n interrupts the top one (its stretch ends;
    /// it resumes at the nested exit); open ISRs at nesting n or deeper are ones whose exit
    /// was lost, and end there. An exit at nesting n ends the open ISR at n (and deeper ones,
    /// whose exits were lost) and the one below resumes. QP logs the nesting of the ISR
    /// entering or leaving (before it is decremented), so both name the same level.
    fn isr(&mut self, entry: bool, nest: u64, pri: u64, f: &Frame) -> Result<()> {
        let ts = self.ts;
        let deeper = |top: &OpenIsr| if entry { top.nest >= nest } else { top.nest > nest };
        // Whether the running ISR (the top) has ended here.
        let mut ended = false;
        while let Some(top) = self.isr.last().copied().filter(deeper) {
            self.isr.pop();
            if !ended {
                self.isr_span(top.pri, top.since, Some(ts), f.pos())?;
                ended = true;
            }
            let m = format!(
                "ISR of priority {} entered at nesting {} has no exit: it ends at this {} at \
                 nesting {nest}",
                top.pri,
                top.nest,
                if entry { "entry" } else { "exit" }
            );
            self.diag(f, Severity::Warning, "lost_isr_exit", m)?;
        }
        if entry {
            if let Some(top) = self.isr.last().copied().filter(|_| !ended) {
                // The ISR it interrupts: its stretch ends, to resume at the nested exit.
                self.isr_span(top.pri, top.since, Some(ts), f.pos())?;
            }
            self.isr.push(OpenIsr { pri, nest, since: ts });
            return Ok(());
        }
        match self.isr.last().copied() {
            Some(top) if top.nest == nest => {
                self.isr.pop();
                if !ended {
                    self.isr_span(top.pri, top.since, Some(ts), f.pos())?;
                }
                ended = true;
            }
            _ => {
                let m = format!(
                    "ISR exit at nesting {nest} (priority {pri}) has no entry open at that \
                     nesting: the entry was lost"
                );
                self.diag(f, Severity::Info, "lost_isr_entry", m)?;
            }
        }
        if ended {
            // The ISR below resumes.
            if let Some(below) = self.isr.last_mut() {
                below.since = ts;
            }
        }
        Ok(())
    }

    fn isr_span(&mut self, pri: u64, since: i64, end: Option<i64>, pos: Pos) -> Result<()> {
        #[allow(clippy::cast_precision_loss)]
        let v = Some(pri as f64);
        self.span("ISR", "I", "running", &pri.to_string(), v, since, end, pos)
    }

    fn critical(&mut self, entry: bool, nest: u64, f: &Frame) -> Result<()> {
        let (ts, pos) = (self.ts, f.pos());
        self.declare("QF", Some("SCHED"));
        match (entry, self.crit) {
            (true, None) => self.crit = Some((ts, nest)),
            // An outermost entry while one is open: the open one's exit was lost. It ends
            // here rather than running on into this one.
            (true, Some((since, open))) if nest <= 1 => {
                self.span("QF", "SCHED", "critical", "critical", None, since, Some(ts), pos)?;
                self.crit = Some((ts, nest));
                let m = format!(
                    "critical section entered at nesting {open} has no exit: it ends at this \
                     outermost entry"
                );
                self.diag(f, Severity::Warning, "lost_critical_exit", m)?;
            }
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
    pub(super) fn reset(&mut self, f: &Frame) -> Result<()> {
        self.resets += 1;
        self.after_reset = true;
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
    pub(super) fn close(&mut self, end: Option<i64>, pos: Pos) -> Result<()> {
        // In order, without a copy of them all (a million state machines take 150 MB).
        let sm = std::mem::take(&mut self.sm);
        let mut open: Vec<(&String, &SmState)> = sm.iter().collect();
        open.sort_by(|a, b| (a.1.since, a.0).cmp(&(b.1.since, b.0)));
        for (e, s) in open {
            self.span(e, s.entity_type, "state", &s.state, None, s.since, end, s.pos)?;
        }
        // Only the top ISR runs; the ones below it wait for it.
        if let Some(top) = self.isr.pop() {
            self.isr_span(top.pri, top.since, end, pos)?;
        }
        self.isr.clear();
        if let Some((since, _)) = self.crit.take() {
            self.span("QF", "SCHED", "critical", "critical", None, since, end, pos)?;
        }
        for ((_, s), q) in self.posts.drain() {
            for post in q {
                self.message(&post, s, None, pos)?;
            }
        }
        Ok(())
    }
}
