//! One recorder of [`Sink`] calls for the importers' unit tests. Each test module says, in a
//! [`Shape`], the text an event is recorded as (the part its assertions compare) and may
//! check each declared entity; the rest is recorded alike for all.
use super::{ChannelSet, Diagnostic, Message, Sink, Span};
use crate::model::{Event, TimeUnit};
use crate::Result;
use std::marker::PhantomData;

/// What a test module records of its importer's output.
pub trait Shape {
    /// The text an event is recorded as in [`Recorder::events`].
    fn event(e: &Event<'_>) -> String;
    /// Checks an entity declaration (an importer that declares only some types asserts it).
    fn declared(_name: &str, _entity_type: Option<&str>) {}
}

/// Every call an importer made, in order, per kind.
pub struct Recorder<S> {
    /// `meta` calls: (key, value).
    pub meta: Vec<(String, String)>,
    /// The last time unit set.
    pub unit: Option<TimeUnit>,
    /// Declared entities: (name, type, id).
    pub decl: Vec<(String, Option<String>, Option<i64>)>,
    /// Events, as the module's [`Shape`] writes them.
    pub events: Vec<String>,
    /// Spans: `channel entity state [begin,end)` (`open` for no end).
    pub spans: Vec<String>,
    /// Messages: `sender->receiver tag T sent S got R`.
    pub messages: Vec<String>,
    /// Channel values: `ts entity channel=value label`.
    pub sets: Vec<String>,
    /// Diagnostics: (kind, `position: message`).
    pub diags: Vec<(String, String)>,
    shape: PhantomData<S>,
}

impl<S> Default for Recorder<S> {
    fn default() -> Self {
        Recorder {
            meta: Vec::new(),
            unit: None,
            decl: Vec::new(),
            events: Vec::new(),
            spans: Vec::new(),
            messages: Vec::new(),
            sets: Vec::new(),
            diags: Vec::new(),
            shape: PhantomData,
        }
    }
}

impl<S> Recorder<S> {
    /// The kinds of the diagnostics, in order.
    pub fn kinds(&self) -> Vec<&str> {
        self.diags.iter().map(|d| d.0.as_str()).collect()
    }
}

impl<S: Shape> Sink for Recorder<S> {
    fn meta(&mut self, key: &str, value: &str) {
        self.meta.push((key.into(), value.into()));
    }
    fn time_unit(&mut self, unit: TimeUnit) {
        self.unit = Some(unit);
    }
    fn declare_entity(&mut self, name: &str, t: Option<&str>, id: Option<i64>) {
        S::declared(name, t);
        self.decl.push((name.into(), t.map(Into::into), id));
    }
    fn event(&mut self, e: &Event<'_>) -> Result<()> {
        self.events.push(S::event(e));
        Ok(())
    }
    fn diagnostic(&mut self, d: Diagnostic) -> Result<()> {
        self.diags.push((d.kind.to_string(), format!("{}: {}", d.pos, d.message)));
        Ok(())
    }
    fn span(&mut self, s: &Span<'_>) -> Result<()> {
        let end = s.end.map_or("open".to_string(), |e| e.to_string());
        self.spans.push(format!("{} {} {} [{},{})", s.channel, s.entity, s.state, s.begin, end));
        Ok(())
    }
    fn channel_set(&mut self, s: &ChannelSet<'_>) -> Result<()> {
        self.sets.push(format!(
            "{} {} {}={} {}",
            s.ts,
            s.entity,
            s.channel,
            s.value,
            s.label.unwrap_or("-")
        ));
        Ok(())
    }
    fn message(&mut self, m: &Message<'_>) -> Result<()> {
        self.messages.push(format!(
            "{}->{} tag {} sent {} got {:?}",
            m.sender, m.receiver, m.tag, m.send_ts, m.recv_ts
        ));
        Ok(())
    }
}
