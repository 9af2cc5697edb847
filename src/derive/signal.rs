//! Signal values: each `write` of a signal starts a `value` interval holding the note as
//! text and as a number, which the next write (or the end of the trace) closes.
use super::{Deriver, IntervalRow, Output, StateText};
use crate::model::Sym;
use crate::Result;

/// A signal's current value.
pub(super) struct Signal {
    since: i64,
    since_action: Sym,
    text: Option<Box<str>>,
    value: Option<f64>,
}

impl<O: Output> Deriver<O> {
    pub(super) fn signal_write(
        &mut self,
        sig: Sym,
        ts: i64,
        action: Sym,
        note: Option<&str>,
        value: Option<f64>,
    ) -> Result<()> {
        self.close_signal(sig, ts, Some(action), false)?;
        let text = note.map(Box::from);
        self.signals.insert(sig, Signal { since: ts, since_action: action, text, value });
        Ok(())
    }

    pub(super) fn close_signal(
        &mut self,
        sig: Sym,
        end: i64,
        end_action: Option<Sym>,
        open: bool,
    ) -> Result<()> {
        let Some(s) = self.signals.remove(&sig) else { return Ok(()) };
        let state = match s.text {
            Some(t) => StateText::Owned(t),
            None => StateText::Owned("".into()),
        };
        let row = IntervalRow {
            entity: sig,
            entity_type: self.type_of(sig).unwrap_or(self.known.sig_type),
            instance: -1,
            channel: self.known.value,
            state,
            value: s.value,
            ts: s.since,
            dur: end - s.since,
            core: None,
            start_action: Some(s.since_action),
            end_action,
            open,
        };
        self.emit_interval(row)
    }
}
