//! The k-way merge of the streams by clock: one cursor per stream, each holding its next
//! event, so memory grows with the number of streams and not their length. Equal keys keep
//! stream order, then file order.
use super::*;

pub(super) struct Cursor<R> {
    pub(super) reader: StreamReader<R>,
    pub(super) thread: usize,
    /// Index of its process (loom, pid) in the trace.
    pub(super) proc: usize,
    pub(super) relpath: String,
    /// The file shown in positions.
    pub(super) shown: String,
    pub(super) offset: i64,
    pub(super) prev: Option<u64>,
    pub(super) unsorted: bool,
    pub(super) events: u64,
}

/// The streams being merged.
pub(super) struct Merge<R> {
    pub(super) cursors: Vec<Cursor<R>>,
    /// Each stream's next event, with its merge key.
    heads: Vec<Option<(RawEvent, u64)>>,
    /// Bytes of jumbo data `heads` holds.
    held: usize,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// The stream the sink's positions name.
    src: Option<usize>,
}

impl<R: Read> Merge<R> {
    pub(super) fn new() -> Self {
        Merge {
            cursors: Vec::new(),
            heads: Vec::new(),
            held: 0,
            heap: BinaryHeap::new(),
            src: None,
        }
    }

    /// Adds a stream, not read yet.
    pub(super) fn push(&mut self, cursor: Cursor<R>) {
        self.cursors.push(cursor);
        self.heads.push(None);
    }

    /// Reads every stream's first event.
    pub(super) fn start(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for i in 0..self.cursors.len() {
            self.advance(i, sink)?;
        }
        Ok(())
    }

    /// The next event in merge order, with its key and its stream, which the sink's
    /// positions then name. The stream's following event is read by [`Merge::advance`].
    pub(super) fn next(&mut self, sink: &mut dyn Sink) -> Option<(u64, usize, RawEvent)> {
        while let Some(Reverse((key, i))) = self.heap.pop() {
            let Some((ev, _)) = self.heads.get_mut(i).and_then(Option::take) else { continue };
            self.held = self.held.saturating_sub(ev.jumbo.as_ref().map_or(0, Vec::len));
            if let Some(c) = self.cursors.get(i) {
                name_stream(sink, &mut self.src, i, &c.shown);
            }
            return Some((key, i, ev));
        }
        None
    }

    /// Reads the next event of stream `i` into its head slot and the heap.
    pub(super) fn advance(&mut self, i: usize, sink: &mut dyn Sink) -> Result<()> {
        let Some(c) = self.cursors.get_mut(i) else { return Ok(()) };
        let mut ev = match c.reader.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => return Ok(()),
            Err(mut d) => {
                name_stream(sink, &mut self.src, i, &c.shown);
                d.message = format!("{}: {}", c.relpath, d.message);
                return sink.diagnostic(d);
            }
        };
        c.events += 1;
        if let Some(mut d) = c.reader.take_warning() {
            name_stream(sink, &mut self.src, i, &c.shown);
            d.message = format!("{}: {}", c.relpath, d.message);
            sink.diagnostic(d)?;
        }
        let jumbo = ev.jumbo.as_ref().map_or(0, Vec::len);
        if jumbo > 0 && self.held.saturating_add(jumbo) > MAX_JUMBO_HELD {
            name_stream(sink, &mut self.src, i, &c.shown);
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "jumbo_over_budget",
                pos: Pos::Byte(ev.offset),
                ts: None,
                message: format!(
                    "{}: {} jumbo event of {jumbo} bytes while the other streams' next events hold \
                     {} bytes of jumbo data (at most {MAX_JUMBO_HELD} are held): the event is \
                     kept without its data",
                    c.relpath,
                    ev.mcv_text(),
                    self.held
                ),
            })?;
            ev.jumbo = Some(Vec::new());
        } else {
            self.held = self.held.saturating_add(jumbo);
        }
        let mut key = clip_key(ev.clock, c.offset);
        if let Some(prev) = c.prev.filter(|&p| key < p) {
            let (severity, why) = if c.unsorted {
                (Severity::Info, "inside an OU[ unordered region, which ovni allows")
            } else {
                (Severity::Warning, "the reference reader stops here")
            };
            name_stream(sink, &mut self.src, i, &c.shown);
            sink.diagnostic(Diagnostic {
                severity,
                kind: "clock_backwards",
                pos: Pos::Byte(ev.offset),
                ts: None,
                message: format!(
                    "{}: {} clock {} is {} ns before the event before it ({why}): kept with its own \
                     time in events, applied to states at the earlier event's time",
                    c.relpath,
                    ev.mcv_text(),
                    ev.clock,
                    prev - key
                ),
            })?;
            key = prev;
        }
        c.prev = Some(key);
        if let Some(h) = self.heads.get_mut(i) {
            *h = Some((ev, key));
        }
        self.heap.push(Reverse((key, i)));
        Ok(())
    }
}

/// Has the sink's positions name stream `i` (shown as `shown`), unless they do.
fn name_stream(sink: &mut dyn Sink, src: &mut Option<usize>, i: usize, shown: &str) {
    if *src != Some(i) {
        sink.source_file(shown);
        *src = Some(i);
    }
}
