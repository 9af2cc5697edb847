//! Records that carry their own times (Paraver and ovni states, channel updates: see
//! [`Sink::span`](crate::ingest::Sink::span) and
//! [`Sink::channel_set`](crate::ingest::Sink::channel_set)): they keep those times, are not
//! clamped to the latest time seen, only buffered and written sorted as `intervals` rows.
//!
//! A span is one state with its begin and end (open when it has no end); one that shares
//! time with the one before it on the same channel is an `overlapping_state` warning. A
//! channel update ends the channel's current state ([`Chan`]) and starts the next; a 0 ends
//! it when the importer says so (`zero_ends`). An update earlier than the channel's current
//! state start (or its end by a 0) is clamped to that start for that channel only (a
//! `time_backwards` info diagnostic). At most [`MAX_OPEN_CHANNELS`] channels of one entity
//! have a state at once (the oldest is closed, `too_many_open_channels`). States still open
//! at the end close at the capture end with `open = true` ([`Deriver::close_channels`]).
use super::{Deriver, IntervalRow, Output, StateText};
use crate::ingest::{ChannelSet, Severity, Span};
use crate::model::strings::FastMap;
use crate::model::{Pos, Sym};
use crate::Result;

/// Channels of one entity with a state at once beyond which the oldest is closed: real
/// threads have a few to a few hundred event types; one with millions would hold them all.
pub(crate) const MAX_OPEN_CHANNELS: usize = 1 << 16;

/// The current state of one channel of one entity (Paraver event types).
pub(super) struct Chan {
    entity_type: Sym,
    ts: i64,
    value: i128,
    /// The value's label; without one the state is the value, written out when emitted.
    label: Option<Sym>,
    core: Option<Sym>,
}

impl Chan {
    /// Its interval on `channel` of `entity`, up to `end`: ended by the channel's next
    /// change, or still `open` (at the capture's end, or closed by the bound).
    fn row(&self, entity: Sym, channel: Sym, end: i64, open: bool) -> IntervalRow {
        IntervalRow {
            entity,
            entity_type: self.entity_type,
            instance: -1,
            channel,
            state: self
                .label
                .map_or_else(|| StateText::Owned(self.value.to_string().into()), StateText::Sym),
            #[allow(clippy::cast_precision_loss)]
            value: Some(self.value as f64),
            ts: self.ts,
            dur: (end - self.ts).max(0),
            core: self.core,
            start_action: Some(channel),
            end_action: (!open).then_some(channel),
            open,
        }
    }
}

impl<O: Output> Deriver<O> {
    /// Counts a channel of `entity` that got a state; past [`MAX_OPEN_CHANNELS`] of them,
    /// the one that got its state first is closed, so that a trace of millions of event
    /// types on one thread keeps memory bounded.
    fn channel_opened(&mut self, entity: Sym, channel: Sym, pos: Pos, ts: i64) -> Result<()> {
        let (order, open) = self.channel_order.entry(entity).or_default();
        order.push_back(channel);
        *open += 1;
        let mut evict = None;
        if *open > MAX_OPEN_CHANNELS {
            while let Some(c) = order.pop_front() {
                if c != channel && self.channels.contains_key(&(entity, c)) {
                    *open -= 1;
                    evict = Some(c);
                    break;
                }
            }
        }
        if order.len() > 2 * *open + 1024 {
            // Keep each open channel's latest entry, in order.
            let mut seen = FastMap::default();
            let channels = &self.channels;
            let mut kept: Vec<Sym> = order
                .iter()
                .rev()
                .filter(|c| channels.contains_key(&(entity, **c)) && seen.insert(**c, ()).is_none())
                .copied()
                .collect();
            kept.reverse();
            *order = kept.into();
        }
        let Some(old) = evict else { return Ok(()) };
        let Some(c) = self.channels.remove(&(entity, old)) else { return Ok(()) };
        let msg = format!(
            "{} has more than {MAX_OPEN_CHANNELS} channels (event types) with a state at once; \
             the state of the oldest, {}, is closed here, shown open",
            self.names.resolve(entity),
            self.names.resolve(old)
        );
        self.diag(Severity::Warning, "too_many_open_channels", pos, ts, msg)?;
        self.emit_interval(c.row(entity, old, ts, true))
    }

    /// Closes the open Paraver spans and channel states at `end`.
    pub(super) fn close_channels(&mut self, end: i64) -> Result<()> {
        for mut row in std::mem::take(&mut self.open_spans) {
            row.dur = (end - row.ts).max(0);
            self.emit_interval(row)?;
        }
        // Sorted by keys alone: a copy of every open state would double the memory of
        // traces with millions of them.
        let mut open: Vec<(i64, Sym, Sym)> =
            self.channels.iter().map(|(k, c)| (c.ts, k.0, k.1)).collect();
        open.sort_unstable();
        for (_, entity, channel) in open {
            let Some(c) = self.channels.remove(&(entity, channel)) else { continue };
            self.emit_interval(c.row(entity, channel, end, true))?;
        }
        Ok(())
    }

    /// A state with its own begin and end ([`Sink::span`](crate::ingest::Sink::span)).
    pub(super) fn record_span(&mut self, sp: &Span<'_>) -> Result<()> {
        let entity = self.names.intern(sp.entity);
        let entity_type = self.names.intern(sp.entity_type);
        self.set_type(entity, entity_type, false, sp.pos);
        let channel = self.names.intern(sp.channel);
        let state = StateText::Sym(self.names.intern(sp.state));
        let core = sp.core.map(|c| self.names.intern(c));
        self.see(sp.begin);
        if let Some(e) = sp.end {
            self.see(e);
        }
        let end = sp.end.unwrap_or(i64::MAX);
        if let Some((b, e)) = self.last_span.insert((entity, channel), (sp.begin, end)) {
            // One entity is in one state at a time: a span that shares time with the one
            // before it (not merely touching it) makes both count that time.
            if sp.begin < e && b < end {
                let shown =
                    |t: i64| if t == i64::MAX { "open".to_string() } else { format!("{t} ns") };
                let msg = format!(
                    "{} of {} from {} ns to {} overlaps the one before it ({} ns to {}): both are \
                     kept, and the time they share counts twice",
                    sp.channel,
                    sp.entity,
                    sp.begin,
                    shown(end),
                    b,
                    shown(e)
                );
                self.diag(Severity::Warning, "overlapping_state", sp.pos, sp.begin, msg)?;
            }
        }
        let row = IntervalRow {
            entity,
            entity_type,
            instance: -1,
            channel,
            state,
            value: sp.value,
            ts: sp.begin,
            dur: sp.end.map_or(0, |e| (e - sp.begin).max(0)),
            core,
            start_action: None,
            end_action: None,
            open: sp.end.is_none(),
        };
        if row.open {
            self.open_spans.push(row);
            Ok(())
        } else {
            self.emit_interval(row)
        }
    }

    /// A change of a channel's value ([`Sink::channel_set`](crate::ingest::Sink::channel_set)).
    pub(super) fn set_channel(&mut self, set: &ChannelSet<'_>) -> Result<()> {
        let entity = self.names.intern(set.entity);
        let entity_type = self.names.intern(set.entity_type);
        self.set_type(entity, entity_type, false, set.pos);
        let channel = self.names.intern(set.channel);
        self.see(set.ts);
        let key = (entity, channel);
        let mut ts = set.ts;
        let current = match self.channels.get(&key) {
            Some(c) => Some((c.ts, Some(c.value))),
            None => self.channels_ended.get(&key).map(|&ended| (ended, None)),
        };
        if let Some((cur_ts, cur_value)) = current {
            if cur_value == Some(set.value)
                || (cur_value.is_none() && set.value == 0 && set.zero_ends)
            {
                return Ok(());
            }
            if ts < cur_ts {
                let since =
                    if cur_value.is_some() { "its current state began" } else { "it was ended" };
                let msg = format!(
                    "{} of {} set at {} ns, before {since} ({} ns): taken at {} ns",
                    set.channel, set.entity, ts, cur_ts, cur_ts
                );
                self.diag(Severity::Info, "time_backwards", set.pos, ts, msg)?;
                ts = cur_ts;
            }
        }
        let current = self.channels.remove(&key);
        let was_open = current.is_some();
        if let Some(cur) = current {
            self.emit_interval(cur.row(entity, channel, ts, false))?;
            if set.value == 0 && set.zero_ends {
                self.channels_ended.insert(key, ts);
                if let Some((_, open)) = self.channel_order.get_mut(&entity) {
                    *open = open.saturating_sub(1);
                }
            }
        }
        if set.value != 0 || !set.zero_ends {
            self.channels_ended.remove(&key);
            let label = set.label.map(|l| self.names.intern(l));
            let core = set.core.map(|c| self.names.intern(c));
            self.channels.insert(key, Chan { entity_type, ts, value: set.value, label, core });
            if !was_open {
                self.channel_opened(entity, channel, set.pos, ts)?;
            }
        }
        Ok(())
    }
}
