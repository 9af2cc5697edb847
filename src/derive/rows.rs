//! Rows the derive stage produces, and the bounded reorder buffer that writes them in time
//! order.
use crate::model::{Interner, Sym};

/// Text of an interval's state: an interned name, or a value's own text (signal values are
/// not interned: a counter signal would grow the interner without bound).
#[derive(Debug, Clone)]
pub enum StateText {
    /// An interned state name.
    Sym(Sym),
    /// Free text.
    Owned(Box<str>),
}

impl StateText {
    /// The text.
    pub fn as_str<'a>(&'a self, names: &'a Interner) -> &'a str {
        match self {
            StateText::Sym(s) => names.resolve(*s),
            StateText::Owned(s) => s,
        }
    }
}

/// One `events` row. Names are interned; the note is borrowed from the input line.
#[derive(Debug, Clone, Copy)]
pub struct EventRow<'a> {
    /// Position among the capture's events.
    pub seq: i64,
    /// Time, ns.
    pub ts: i64,
    /// Source entity.
    pub source: Sym,
    /// Its type, when known.
    pub source_type: Option<Sym>,
    /// Source instance.
    pub source_instance: i64,
    /// Target entity (`None`: the event has none, e.g. a QS tick).
    pub target: Option<Sym>,
    /// Target type as written.
    pub target_type: Option<Sym>,
    /// Target instance.
    pub target_instance: i64,
    /// Action.
    pub action: Sym,
    /// Note.
    pub note: Option<&'a str>,
    /// Numeric payload.
    pub value: Option<f64>,
    /// Core.
    pub core: Option<Sym>,
}

/// One `intervals` row.
#[derive(Debug, Clone)]
pub struct IntervalRow {
    /// Entity in the state.
    pub entity: Sym,
    /// Its type.
    pub entity_type: Sym,
    /// Instance (-1 when none).
    pub instance: i64,
    /// Channel name.
    pub channel: Sym,
    /// State.
    pub state: StateText,
    /// Numeric value of the state.
    pub value: Option<f64>,
    /// Start, ns.
    pub ts: i64,
    /// Length, ns.
    pub dur: i64,
    /// Core.
    pub core: Option<Sym>,
    /// Action that entered the state.
    pub start_action: Option<Sym>,
    /// Action that left it.
    pub end_action: Option<Sym>,
    /// Still in the state at the end of the trace.
    pub open: bool,
}

/// One `instances` row.
#[derive(Debug, Clone, Default)]
pub struct InstanceRow {
    /// Task, ISR or runnable.
    pub entity: Sym,
    /// Its type.
    pub entity_type: Sym,
    /// Instance number.
    pub instance: i64,
    /// Activation time.
    pub activate_ts: Option<i64>,
    /// First start.
    pub start_ts: Option<i64>,
    /// Termination.
    pub terminate_ts: Option<i64>,
    /// Core of the first start.
    pub core: Option<Sym>,
    /// Time running.
    pub net_exec: i64,
    /// Time ready (runnables: suspended).
    pub ready_time: i64,
    /// Time waiting (NULL for runnables).
    pub waiting_time: Option<i64>,
    /// Time polling.
    pub polling_time: Option<i64>,
    /// Time parking.
    pub parking_time: Option<i64>,
    /// Preemptions (runnables: suspensions).
    pub preemptions: i64,
    /// Migrations (NULL for runnables).
    pub migrations: Option<i64>,
    /// No resynchronisation happened during the life cycle.
    pub clean: bool,
}

impl InstanceRow {
    /// terminate - activate.
    pub fn response_time(&self) -> Option<i64> {
        Some(self.terminate_ts? - self.activate_ts?)
    }
    /// first start - activate.
    pub fn start_delay(&self) -> Option<i64> {
        Some(self.start_ts? - self.activate_ts?)
    }
    /// terminate - first start.
    pub fn gross_exec(&self) -> Option<i64> {
        Some(self.terminate_ts? - self.start_ts?)
    }
    /// Activate and terminate both seen, no resynchronisation.
    pub fn complete(&self) -> bool {
        self.activate_ts.is_some() && self.terminate_ts.is_some() && self.clean
    }
}

/// One `messages` row (times in ns).
#[derive(Debug, Clone)]
pub struct MessageRow {
    /// Sending entity.
    pub sender: Sym,
    /// Its instance (-1: none).
    pub sender_instance: i64,
    /// Receiving entity.
    pub receiver: Sym,
    /// Its instance (-1: none).
    pub receiver_instance: i64,
    /// Logical send time.
    pub send_ts: i64,
    /// Logical receive time.
    pub recv_ts: Option<i64>,
    /// Physical send time.
    pub phys_send_ts: i64,
    /// Physical receive time.
    pub phys_recv_ts: Option<i64>,
    /// Bytes.
    pub size: i64,
    /// Tag.
    pub tag: i64,
}

/// One `lock_requests` row.
#[derive(Debug, Clone)]
pub struct LockRow {
    /// Semaphore.
    pub semaphore: Sym,
    /// Requesting process.
    pub process: Sym,
    /// Its instance.
    pub process_instance: i64,
    /// Request time.
    pub request_ts: Option<i64>,
    /// Assignment time.
    pub assigned_ts: Option<i64>,
    /// Release time.
    pub released_ts: Option<i64>,
    /// A waiting/queued/overfull step was seen.
    pub contended_step: bool,
    /// Of a contended request: the process instance it waited for (of those that held the
    /// semaphore while it waited, the first to have got it).
    pub blocked_by: Option<(Sym, i64)>,
    /// Of a contended request: how many process instances held the semaphore while it
    /// waited; 0 otherwise.
    pub blockers: i64,
}

impl LockRow {
    /// assigned - request.
    pub fn wait(&self) -> Option<i64> {
        Some(self.assigned_ts? - self.request_ts?)
    }
    /// released - assigned.
    pub fn hold(&self) -> Option<i64> {
        Some(self.released_ts? - self.assigned_ts?)
    }
    /// Had to wait.
    pub fn contended(&self) -> bool {
        self.contended_step || self.wait().is_some_and(|w| w > 0)
    }
}

/// Rows are produced when they close (an interval at its end), but are written sorted by
/// their start. This buffer holds at most `cap` rows: when full, its keys are sorted (by time,
/// then arrival: the new keys sorted and merged into those kept sorted) and the earlier
/// half of the rows released. Rows that close more than `cap / 2` rows late come out of order; nothing
/// is lost, and readers do not rely on the order.
///
/// The rows stay in a vector in the order they came and only the small `(ts, position)`
/// keys are sorted: sorting the rows themselves (about 100 bytes each) was a third of the
/// derive stage. A release moves rows out in key order, nearly the order they are in, and
/// closes the gaps in one pass: keeping them in slots reused in release order (scattered
/// over 30-50 MB) cost a cache miss per row going in and another coming out, ~8% of an
/// ingest's CPU time.
pub struct Reorder<T> {
    /// Held rows in the order they came, with the heap bytes each holds (`None`: moved out
    /// by the release under way).
    rows: Vec<Option<(i64, usize, T)>>,
    /// Rows pushed since the last release (the last ones of `rows`).
    since_release: usize,
    /// `(ts, position in rows)` of the rows the last release kept, sorted as they were
    /// then; the pushed rows' keys are added at the next release, whose sort then finds
    /// this half already in order.
    keys: Vec<(i64, usize)>,
    /// Each row's position once a release closed the gaps (reused).
    moved_to: Vec<usize>,
    /// The fresh keys while [`Reorder::sort_keys`] merges them into the kept ones (reused).
    fresh: Vec<(i64, usize)>,
    cap: usize,
    /// Heap bytes the held rows hold (long state texts: a signal value of 100 KB).
    bytes: usize,
}

/// Heap bytes a reorder buffer holds at most: past it, rows are released as when it holds
/// its count, so rows of long texts cannot fill memory however few they are.
const REORDER_BYTES: usize = 64 << 20;

impl<T> Reorder<T> {
    /// A buffer holding at most `cap` rows.
    pub fn new(cap: usize) -> Self {
        Reorder {
            rows: Vec::new(),
            since_release: 0,
            keys: Vec::new(),
            moved_to: Vec::new(),
            fresh: Vec::new(),
            cap: cap.max(2),
            bytes: 0,
        }
    }

    /// Adds `row` keyed by `ts`; appends rows that must be written now to `out`, earliest
    /// first.
    pub fn push(&mut self, ts: i64, row: T, out: &mut Vec<T>) {
        self.push_sized(ts, row, 0, out);
    }

    /// [`Reorder::push`] of a row holding `size` bytes on the heap (see [`REORDER_BYTES`]).
    pub fn push_sized(&mut self, ts: i64, row: T, size: usize, out: &mut Vec<T>) {
        self.rows.push(Some((ts, size, row)));
        self.since_release += 1;
        self.bytes += size;
        if self.rows.len() >= self.cap || self.bytes > REORDER_BYTES {
            self.sort_keys();
            // Half the rows, or more until half the bytes are gone.
            let mut n = self.cap.min(self.keys.len()) / 2;
            if self.bytes > REORDER_BYTES {
                let mut left = self.bytes;
                n = 0;
                for &(_, at) in &self.keys {
                    if left <= REORDER_BYTES / 2 {
                        break;
                    }
                    left -= self.rows.get(at).and_then(Option::as_ref).map_or(0, |r| r.1);
                    n += 1;
                }
            }
            self.release(n.max(1), out);
        }
    }

    /// The latest row among the last `back` held that `pick` picks: among the rows pushed
    /// since the last release, latest first, then among those it kept, latest key first.
    pub fn recent_mut(&mut self, back: usize, pick: impl Fn(&T) -> bool) -> Option<&mut T> {
        let total = self.rows.len();
        let fresh = self.since_release.min(total);
        let picks = |r: &Option<(i64, usize, T)>| r.as_ref().is_some_and(|(_, _, row)| pick(row));
        let rows = &self.rows;
        let found = (total - fresh..total)
            .rev()
            .chain(self.keys.iter().rev().map(|k| k.1))
            .take(back)
            .find(|&i| rows.get(i).is_some_and(picks))?;
        self.rows.get_mut(found).and_then(Option::as_mut).map(|(_, _, row)| row)
    }

    /// Everything left, earliest first.
    pub fn drain(&mut self, out: &mut Vec<T>) {
        self.sort_keys();
        self.release(self.keys.len(), out);
    }

    /// Adds the keys of the rows pushed since the last release and sorts them all by time;
    /// equal times keep the order the rows came in: positions in `rows` are that order, so
    /// sorting by (time, position), which needs no stable sort, is the same.
    ///
    /// The kept keys are sorted already and every fresh key's position is after theirs: the
    /// fresh keys are sorted on their own and the two runs merged, the same order as sorting
    /// them all (sorting all of them again was ~3% of an ingest's CPU time).
    fn sort_keys(&mut self) {
        let kept = self.keys.len();
        let fresh = self.rows.iter().enumerate().skip(kept);
        self.keys.extend(fresh.map(|(at, r)| (r.as_ref().map_or(i64::MAX, |r| r.0), at)));
        let Some(new) = self.keys.get_mut(kept..) else { return };
        new.sort_unstable();
        // Nothing to merge when every fresh key comes after the kept ones.
        let last_kept = kept.checked_sub(1).and_then(|l| self.keys.get(l));
        let in_order = match (last_kept, self.keys.get(kept)) {
            (Some(last), Some(first)) => last <= first,
            _ => true,
        };
        if !in_order {
            self.fresh.clear();
            self.fresh.extend_from_slice(self.keys.get(kept..).unwrap_or_default());
            merge_back(&mut self.keys, kept, &self.fresh);
        }
    }

    /// Moves the rows of the first `n` (sorted) keys to `out`; the others stay, in the
    /// order they came, and so do their keys.
    fn release(&mut self, n: usize, out: &mut Vec<T>) {
        let n = n.min(self.keys.len());
        for &(_, at) in self.keys.iter().take(n) {
            if let Some((_, size, row)) = self.rows.get_mut(at).and_then(Option::take) {
                self.bytes -= size;
                out.push(row);
            }
        }
        // The gaps closed and each row's new place noted in one pass over the rows.
        self.moved_to.clear();
        let mut kept = 0;
        let moved_to = &mut self.moved_to;
        self.rows.retain(|r| {
            moved_to.push(kept);
            kept += usize::from(r.is_some());
            r.is_some()
        });
        self.keys.drain(..n);
        for k in &mut self.keys {
            k.1 = self.moved_to.get(k.1).copied().unwrap_or(k.1);
        }
        self.since_release = 0;
    }
}

/// Merges the sorted keys `fresh` into `keys`, whose first `kept` are sorted and whose
/// others are room for them: from the back, so that only the fresh keys need a copy.
fn merge_back(keys: &mut [(i64, usize)], kept: usize, fresh: &[(i64, usize)]) {
    let (mut i, mut j) = (kept, fresh.len());
    let mut k = keys.len();
    while let Some(&y) = j.checked_sub(1).and_then(|j| fresh.get(j)) {
        k -= 1;
        let x = i.checked_sub(1).and_then(|i| keys.get(i)).copied();
        let v = match x {
            Some(x) if x > y => {
                i -= 1;
                x
            }
            _ => {
                j -= 1;
                y
            }
        };
        if let Some(slot) = keys.get_mut(k) {
            *slot = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorder_sorts_within_capacity_and_loses_nothing() {
        let mut r = Reorder::new(4);
        let mut out = Vec::new();
        for ts in [5, 3, 9, 1, 7, 2, 8] {
            r.push(ts, ts, &mut out);
        }
        r.drain(&mut out);
        assert_eq!(out.len(), 7);
        // Full at 4 rows: sorted, the earlier half (1, 3) released; then 2 and 5 at the
        // next fill; the rest at the end. A row arriving after a later one was released
        // (2 after 3) comes out late, never lost.
        assert_eq!(out, [1, 3, 2, 5, 7, 8, 9]);
        let mut sorted = out.clone();
        sorted.sort();
        assert_eq!(sorted, [1, 2, 3, 5, 7, 8, 9]);
    }

    #[test]
    fn rows_of_long_texts_are_released_by_their_bytes() {
        let mut r = Reorder::new(1 << 20);
        let mut out = Vec::new();
        for ts in 0..100 {
            r.push_sized(ts, ts, 8 << 20, &mut out);
        }
        // 100 rows of 8 MiB: the buffer never holds more than 64 MiB of them.
        assert!(r.bytes <= REORDER_BYTES, "{} bytes held", r.bytes);
        assert!(out.len() >= 100 - REORDER_BYTES / (8 << 20));
        r.drain(&mut out);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    /// The reorder buffer as it was before rows were kept in arrival order (keys sorted in
    /// place, rows in reused slots): the reference for what comes out and what
    /// `recent_mut` finds.
    struct SlotReorder {
        keys: Vec<(i64, usize)>,
        slots: Vec<Option<u32>>,
        free: Vec<usize>,
        cap: usize,
    }

    impl SlotReorder {
        fn push(&mut self, ts: i64, row: u32, out: &mut Vec<u32>) {
            let slot = match self.free.pop() {
                Some(s) => {
                    self.slots[s] = Some(row);
                    s
                }
                None => {
                    self.slots.push(Some(row));
                    self.slots.len() - 1
                }
            };
            self.keys.push((ts, slot));
            if self.keys.len() >= self.cap {
                self.keys.sort_by_key(|k| k.0);
                let n = self.cap.min(self.keys.len()) / 2;
                for (_, s) in self.keys.drain(..n.max(1)) {
                    out.extend(self.slots[s].take());
                    self.free.push(s);
                }
            }
        }

        fn recent(&self, back: usize, pick: impl Fn(&u32) -> bool) -> Option<u32> {
            let slot = self
                .keys
                .iter()
                .rev()
                .take(back)
                .map(|k| k.1)
                .find(|&s| self.slots[s].as_ref().is_some_and(&pick))?;
            self.slots[slot]
        }
    }

    #[test]
    fn rows_and_picks_are_those_of_the_slot_buffer() {
        let mut seed = 1u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for cap in [2, 5, 16, 64] {
            let mut new = Reorder::new(cap);
            let mut old = SlotReorder { keys: vec![], slots: vec![], free: vec![], cap };
            let (mut out_new, mut out_old) = (Vec::new(), Vec::new());
            for row in 0..3000u32 {
                // Nearly sorted times with ties and late rows.
                let ts = i64::from(row / 3) - next(40) as i64;
                new.push(ts, row, &mut out_new);
                old.push(ts, row, &mut out_old);
                if next(4) == 0 {
                    let (back, m) = (1 + next(2 * cap as u64) as usize, 1 + next(5) as u32);
                    let pick = |r: &u32| r.is_multiple_of(m);
                    assert_eq!(new.recent_mut(back, pick).copied(), old.recent(back, pick));
                }
            }
            assert_eq!(out_new, out_old, "cap {cap}");
        }
    }

    #[test]
    fn merged_keys_are_those_of_a_sort_of_them_all() {
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for cap in [2, 3, 8, 100, 1000] {
            let mut r = Reorder::new(cap);
            let mut out = Vec::new();
            for row in 0..5000u32 {
                // Late rows, ties, and runs entirely after the kept keys.
                let ts = i64::from(row / 2) - if next(3) == 0 { next(300) as i64 } else { 0 };
                r.rows.push(Some((ts, 0, row)));
                if r.rows.len() >= cap {
                    r.sort_keys();
                    let mut all: Vec<(i64, usize)> = r
                        .rows
                        .iter()
                        .enumerate()
                        .map(|(at, row)| (row.as_ref().unwrap().0, at))
                        .collect();
                    all.sort();
                    assert_eq!(r.keys, all, "cap {cap}, row {row}");
                    r.release(cap / 2, &mut out);
                }
            }
        }
    }

    #[test]
    fn equal_times_keep_arrival_order() {
        let mut r = Reorder::new(100);
        let mut out = Vec::new();
        for (i, ts) in [4, 4, 4, 1].into_iter().enumerate() {
            r.push(ts, i, &mut out);
        }
        r.drain(&mut out);
        assert_eq!(out, [3, 0, 1, 2]);
    }
}
