//! Semaphore states and per-request lock tracking (signal values: [`super::signal`]).
//!
//! A semaphore's own events (source = target): `ready` (→ free), `lock` (free → full),
//! `used` (free/used → used), `free` (used → free; also → free first, as `ready`, and
//! free → free: TA writes `ready` then `free`, libBtf only `free`), `lock_used` (used →
//! full), `unlock` (full → free), `unlock_full` (full → used), `overfull` (full/overfull →
//! overfull), `full` (overfull → full), `queued` (a note, no change). Repeating a state
//! (used → used) does not split its interval unless the note's counter changes.
//!
//! A process's events on a semaphore (source = the process) make `lock_requests` rows:
//! `requestsemaphore`/`exclusivesemaphore` open a request, `waiting` marks it contended
//! (`queued` too if it is never assigned: libBtf writes it before every assignment),
//! `assigned` grants it, `released` closes it, and so does `decrement` (BTF 2.1.5: the task
//! releases the semaphore), once for the pair `released` + `decrement` of one instant that
//! the spec's example and libBtf write (libBtf also writes a `decrement` alone). Requests
//! are matched per (semaphore, process, instance), oldest first.
use super::process::Act;
use super::{Deriver, IntervalRow, LockRow, Output, StateText};
use crate::ingest::Severity;
use crate::model::{Interner, Sym};
use crate::Result;

/// Requests of one semaphore open at once beyond which the oldest is closed unreleased
/// (`too_many_open_requests`).
const MAX_OPEN_REQUESTS: usize = 4096;

/// State of a semaphore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SemState {
    Free,
    Used,
    Full,
    Overfull,
}

impl SemState {
    fn name(self) -> &'static str {
        match self {
            SemState::Free => "free",
            SemState::Used => "used",
            SemState::Full => "full",
            SemState::Overfull => "overfull",
        }
    }
}

fn sem_transition(action: &str) -> Option<(&'static [SemState], SemState)> {
    use SemState::*;
    Some(match action {
        "lock" => (&[Free], Full),
        "used" => (&[Free, Used], Used),
        "free" => (&[Used, Free], Free),
        "lock_used" => (&[Used], Full),
        "unlock" => (&[Full], Free),
        "unlock_full" => (&[Full], Used),
        "overfull" => (&[Full, Overfull], Overfull),
        "full" => (&[Overfull], Full),
        _ => return None,
    })
}

/// A semaphore's current state.
pub(super) struct Sem {
    state: SemState,
    since: i64,
    since_action: Sym,
    value: Option<f64>,
}

/// An `overfull` step no open request could take yet: its time, and the request marked
/// contended meanwhile (process, instance, request time) with its previous mark.
pub(super) type PendingOverfull = (i64, Option<(Sym, i64, Option<i64>, bool)>);

/// Process instances listed per waiting request (see [`Blockers`]); more are only counted.
const MAX_LISTED_BLOCKERS: usize = 64;

/// A release written as one step (`released`, or `decrement`) whose other step may follow at
/// the same instant: semaphore, process, instance, and whether it was the `decrement`.
/// BTF 2.1.5's example and libBtf write `released` then `decrement` for one release, and
/// libBtf also a `decrement` alone (libBtfTest.cpp): either step releases, the pair once.
pub(super) type ReleaseStep = (Sym, Sym, i64, bool);

/// Release steps of one instant kept for pairing; beyond, the oldest is forgotten (a step
/// then closes a request of its own, as it would with no pair).
const MAX_RELEASE_STEPS: usize = 1024;

/// An open request of a semaphore by a process instance.
#[derive(Clone)]
pub(super) struct Request {
    process: Sym,
    instance: i64,
    request_ts: Option<i64>,
    assigned_ts: Option<i64>,
    contended: bool,
    /// A process's `queued` step came: contended only if that request is never assigned
    /// (libBtf writes `queued` before every `assigned`, at the same instant when there was
    /// no wait; a later assignment shows the wait as such).
    queued: bool,
    /// Opened by a `waiting` (or `queued`) with no request before it.
    inferred: bool,
    /// Who held the semaphore while it waited (filled until it is assigned).
    blockers: Blockers,
}

/// A process instance holding a semaphore, and since when.
#[derive(Clone, Copy)]
struct Holder {
    process: Sym,
    instance: i64,
    assigned_ts: i64,
}

/// The process instances that held a semaphore while a request of it waited: those holding
/// it when the request came, then those assigned it before the request was (the definition
/// of `lock_requests.blocked_by` and `blockers`). The [`MAX_LISTED_BLOCKERS`] that got it
/// first are kept; more are counted, so that a request starved behind thousands of others
/// stays small.
#[derive(Clone, Default)]
struct Blockers {
    listed: Vec<Holder>,
    /// Holders past the listed ones, only counted.
    more: i64,
    /// Of those, how many were assigned at the latest time among them (and that time): the
    /// holders a grant at that instant takes back (see [`Blockers::granted_at`]).
    more_latest: (i64, i64),
}

impl Blockers {
    fn add(&mut self, h: Holder) {
        if self.listed.len() < MAX_LISTED_BLOCKERS {
            self.listed.push(h);
        } else {
            self.more += 1;
            if h.assigned_ts > self.more_latest.0 || self.more_latest.1 == 0 {
                self.more_latest = (h.assigned_ts, 1);
            } else if h.assigned_ts == self.more_latest.0 {
                self.more_latest.1 += 1;
            }
        }
    }

    /// The waiting request is granted at `ts`: those that got the semaphore at this same
    /// instant did not hold it before. Every holder was assigned at or before `ts`, so the
    /// unlisted ones assigned at `ts` are those counted in `more_latest`.
    fn granted_at(&mut self, ts: i64) {
        self.listed.retain(|h| h.assigned_ts != ts);
        if self.more_latest.0 == ts {
            self.more -= self.more_latest.1;
            self.more_latest.1 = 0;
        }
    }

    /// The hold of `process` instance `instance` assigned at `assigned_ts` ended at the
    /// instant of the waiting request, logged after it: it did not keep the request waiting.
    /// Only that hold goes (the same instance may hold a counting semaphore twice); every
    /// holder at the request's instant is a blocker, so one not listed is counted in `more`.
    fn released_at_request(&mut self, process: Sym, instance: i64, assigned_ts: i64) {
        let k = self.listed.iter().position(|h| {
            h.process == process && h.instance == instance && h.assigned_ts == assigned_ts
        });
        match k {
            Some(k) => {
                self.listed.remove(k);
            }
            None if self.more > 0 => {
                self.more -= 1;
                if self.more_latest.0 == assigned_ts && self.more_latest.1 > 0 {
                    self.more_latest.1 -= 1;
                }
            }
            None => {}
        }
    }
}

impl Request {
    /// A request of `process` instance `instance`, not assigned yet, made while the requests
    /// in `open` were open on the semaphore: those assigned hold it.
    fn new(process: Sym, instance: i64, ts: i64, open: &[Request], names: &Interner) -> Self {
        let mut holders: Vec<Holder> = open
            .iter()
            .filter_map(|r| {
                let assigned_ts = r.assigned_ts?;
                Some(Holder { process: r.process, instance: r.instance, assigned_ts })
            })
            .collect();
        // `open` is in the order the requests came, not the order they were granted: when
        // more holders than are listed, the listed ones are the first to have got it, so that
        // `blocked_by` is among them (later holders are granted after this request).
        // (The listed ones need not be in order: partitioning around the last listed one is
        // linear, where a sort of thousands of holders per request was not.)
        if holders.len() > MAX_LISTED_BLOCKERS {
            holders.select_nth_unstable_by(MAX_LISTED_BLOCKERS - 1, |x, y| {
                (x.assigned_ts, names.resolve(x.process), x.instance).cmp(&(
                    y.assigned_ts,
                    names.resolve(y.process),
                    y.instance,
                ))
            });
        }
        let mut blockers = Blockers::default();
        for h in holders {
            blockers.add(h);
        }
        Request {
            process,
            instance,
            request_ts: Some(ts),
            assigned_ts: None,
            contended: false,
            queued: false,
            inferred: false,
            blockers,
        }
    }
}

impl<O: Output> Deriver<O> {
    pub(super) fn semaphore_event(&mut self, sem: Sym, a: Act, value: Option<f64>) -> Result<()> {
        if a.source == sem {
            self.semaphore_state(sem, a, value)
        } else {
            self.semaphore_request(sem, a)
        }
    }

    fn semaphore_state(&mut self, sem: Sym, a: Act, value: Option<f64>) -> Result<()> {
        const ACTIONS: &[&str] = &[
            "ready",
            "lock",
            "used",
            "free",
            "lock_used",
            "unlock",
            "unlock_full",
            "overfull",
            "full",
            "queued",
        ];
        let action = super::known(self.names.resolve(a.action), ACTIONS);
        if action == "queued" {
            // The semaphore's note that a request is queued (BTF 2.1.5, TA Simulator): the
            // requests' own steps and `overfull` say whether it waits.
            return Ok(());
        }
        let (from, to): (&[SemState], SemState) = if action == "ready" {
            (&[], SemState::Free)
        } else if let Some(t) = sem_transition(action) {
            t
        } else {
            return self.unknown_action(self.known.sem_type, a);
        };
        if action == "overfull" {
            self.mark_latest_request_contended(sem, a.ts);
        }
        let current = self.sems.get(&sem).map(|s| s.state);
        match current {
            // `free` initialises a semaphore as `ready` does (libBtf writes no `ready`).
            None if action != "ready" && action != "free" => {
                let msg = format!(
                    "first event of semaphore {} is {action}: state before it unknown",
                    self.names.resolve(sem)
                );
                self.diag(Severity::Info, "unknown_prior_state", a.pos, a.ts, msg)?;
            }
            Some(state) if !from.contains(&state) => {
                let expected: Vec<&str> = from.iter().map(|s| s.name()).collect();
                let expected = if expected.is_empty() {
                    "not initialised".to_string()
                } else {
                    expected.join(" or ")
                };
                let msg = format!(
                    "{action} of semaphore {} in state {} (expected {expected})",
                    self.names.resolve(sem),
                    state.name()
                );
                self.diag(Severity::Warning, "invalid_transition", a.pos, a.ts, msg)?;
            }
            _ => {}
        }
        if current == Some(to) {
            // Same state: one interval, unless the counter changed (`used` 1 -> `used` 2):
            // an interval's value holds for all of it.
            let same_value =
                self.sems.get(&sem).is_some_and(|s| value.is_none() || s.value == value);
            if same_value {
                return Ok(());
            }
        }
        self.close_sem(sem, a.ts, Some(a.action), false)?;
        self.sems.insert(sem, Sem { state: to, since: a.ts, since_action: a.action, value });
        Ok(())
    }

    fn close_sem(&mut self, sem: Sym, end: i64, end_action: Option<Sym>, open: bool) -> Result<()> {
        let Some(s) = self.sems.remove(&sem) else { return Ok(()) };
        let row = IntervalRow {
            entity: sem,
            entity_type: self.type_of(sem).unwrap_or(self.known.sem_type),
            instance: -1,
            channel: self.known.state,
            state: StateText::Sym(self.names.intern(s.state.name())),
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

    /// An `overfull` step at `ts`: the request that made the semaphore overfull had to wait.
    /// That is the latest open request, unless the request is logged after the step at the
    /// same time: then the open request marked here gets its mark back when it comes (see
    /// [`Deriver::semaphore_request`]).
    fn mark_latest_request_contended(&mut self, sem: Sym, ts: i64) {
        let mut marked = None;
        if let Some(list) = self.requests.get_mut(&sem) {
            if let Some(r) = list.iter_mut().rev().find(|r| r.assigned_ts.is_none()) {
                if r.request_ts != Some(ts) {
                    marked = Some((r.process, r.instance, r.request_ts, r.contended));
                }
                r.contended = true;
                if r.request_ts == Some(ts) {
                    return;
                }
            }
        }
        self.overfull_pending.insert(sem, (ts, marked));
    }

    fn semaphore_request(&mut self, sem: Sym, a: Act) -> Result<()> {
        let action = self.names.resolve(a.action);
        let (p, i) = (a.source, a.source_instance);
        let list = self.requests.entry(sem).or_default();
        let mine = |r: &&mut Request| r.process == p && r.instance == i;
        match action {
            "requestsemaphore" | "exclusivesemaphore" => {
                // Its `waiting` was logged first, at this same time: that opened this request.
                if let Some(r) = list.iter_mut().rev().find(|r| {
                    r.process == p && r.instance == i && r.inferred && r.request_ts == Some(a.ts)
                }) {
                    r.inferred = false;
                    return Ok(());
                }
                // An open request of the same instance that was never assigned was given up
                // (a failed exclusivesemaphore, a retry): it ends here, never assigned.
                let stale = list
                    .iter()
                    .position(|r| r.process == p && r.instance == i && r.assigned_ts.is_none());
                let stale = stale.map(|k| list.remove(k));
                let mut contended = false;
                // An overfull step logged just before this request, at the same time, was its.
                if let Some((ts, marked)) = self.overfull_pending.remove(&sem) {
                    if ts == a.ts {
                        contended = true;
                        if let Some((mp, mi, mts, was)) = marked {
                            let list = self.requests.entry(sem).or_default();
                            if let Some(r) = list.iter_mut().find(|r| {
                                r.process == mp && r.instance == mi && r.request_ts == mts
                            }) {
                                r.contended = was;
                            }
                        }
                    }
                }
                let list = self.requests.entry(sem).or_default();
                let request = Request { contended, ..Request::new(p, i, a.ts, list, &self.names) };
                list.push(request);
                if let Some(r) = stale {
                    return self.emit_unreleased(sem, r);
                }
            }
            "waiting" | "queued" => {
                let waiting = action == "waiting";
                match list.iter_mut().rev().filter(|r| r.assigned_ts.is_none()).find(mine) {
                    Some(r) if waiting => r.contended = true,
                    Some(r) => r.queued = true,
                    None => {
                        let request = Request {
                            contended: waiting,
                            queued: !waiting,
                            inferred: true,
                            ..Request::new(p, i, a.ts, list, &self.names)
                        };
                        list.push(request);
                        let msg = format!(
                            "{action} of {} on semaphore {} with no request before it: the \
                             request is taken to start here",
                            self.names.resolve(p),
                            self.names.resolve(sem)
                        );
                        self.diag(Severity::Info, "request_inferred", a.pos, a.ts, msg)?;
                    }
                }
            }
            "assigned" => {
                match list.iter_mut().filter(|r| r.assigned_ts.is_none()).find(mine) {
                    Some(r) => {
                        r.assigned_ts = Some(a.ts);
                        r.blockers.granted_at(a.ts);
                    }
                    None => list.push(Request {
                        process: p,
                        instance: i,
                        request_ts: None,
                        assigned_ts: Some(a.ts),
                        contended: false,
                        queued: false,
                        inferred: false,
                        blockers: Blockers::default(),
                    }),
                }
                // The requests still waiting now wait behind this one too.
                let holder = Holder { process: p, instance: i, assigned_ts: a.ts };
                for r in list.iter_mut().filter(|r| r.assigned_ts.is_none()) {
                    if r.request_ts.is_some_and(|t| t <= a.ts) {
                        r.blockers.add(holder);
                    }
                }
            }
            "released" | "decrement" => {
                let by_decrement = action == "decrement";
                // The other step of a release already closed at this instant: nothing more.
                let (ts, steps) = &mut self.release_steps;
                if *ts != a.ts {
                    *ts = a.ts;
                    steps.clear();
                }
                if let Some(k) = steps
                    .iter()
                    .position(|&(s, sp, si, d)| s == sem && sp == p && si == i && d != by_decrement)
                {
                    steps.remove(k);
                    return Ok(());
                }
                if steps.len() == MAX_RELEASE_STEPS {
                    steps.remove(0);
                }
                steps.push((sem, p, i, by_decrement));
                let list = self.requests.entry(sem).or_default();
                let idx = list
                    .iter()
                    .position(|r| r.process == p && r.instance == i && r.assigned_ts.is_some());
                let r = match idx {
                    Some(idx) => {
                        let r = list.remove(idx);
                        // A request logged at this same instant, before this release, was not
                        // kept waiting by it, even when it was granted in between (a grant at
                        // the instant it was assigned already left it out).
                        if let Some(held_since) = r.assigned_ts {
                            for w in list.iter_mut() {
                                if w.request_ts == Some(a.ts) && w.assigned_ts != Some(held_since) {
                                    w.blockers.released_at_request(p, i, held_since);
                                }
                            }
                        }
                        r
                    }
                    None => {
                        let msg = format!(
                            "{} instance {i} releases semaphore {} it was not assigned{}",
                            self.names.resolve(p),
                            self.names.resolve(sem),
                            if by_decrement { " (decrement)" } else { "" }
                        );
                        self.diag(Severity::Warning, "release_without_assign", a.pos, a.ts, msg)?;
                        // Its open request, if any, ends here: a trace that logs no `assigned`
                        // does not pile up requests that never close.
                        let list = self.requests.entry(sem).or_default();
                        let open = list.iter().position(|r| r.process == p && r.instance == i);
                        match open.map(|k| list.remove(k)) {
                            Some(r) => Request { assigned_ts: None, ..r },
                            None => Request {
                                request_ts: None,
                                ..Request::new(p, i, a.ts, &[], &self.names)
                            },
                        }
                    }
                };
                return self.emit_request(sem, r, Some(a.ts));
            }
            "increment" => {}
            _ => return self.unknown_action(self.known.sem_type, a),
        }
        // Requests open at once on one semaphore are bounded: each event looks through them,
        // and a trace whose requests never end would otherwise hold them all.
        let over = self.requests.get(&sem).map_or(0, |l| l.len().saturating_sub(MAX_OPEN_REQUESTS));
        if over > 0 {
            let oldest: Vec<Request> =
                self.requests.get_mut(&sem).map(|l| l.drain(..over).collect()).unwrap_or_default();
            for r in oldest {
                let msg = format!(
                    "more than {MAX_OPEN_REQUESTS} requests of semaphore {} are open at once: \
                     the oldest, by {} instance {}, is closed unreleased",
                    self.names.resolve(sem),
                    self.names.resolve(r.process),
                    r.instance
                );
                self.diag(Severity::Warning, "too_many_open_requests", a.pos, a.ts, msg)?;
                self.emit_unreleased(sem, r)?;
            }
        }
        Ok(())
    }

    /// Process instance `key` ended: its requests never assigned (a failed
    /// `exclusivesemaphore`, a request the trace never grants) were given up and end here,
    /// never assigned. Without this, a periodic task whose try-lock fails left one open request
    /// per instance, and every later event on the semaphore scanned them all.
    pub(super) fn requests_end_with(&mut self, key: (Sym, i64)) -> Result<()> {
        if self.requests.is_empty() {
            return Ok(());
        }
        let mut ended = Vec::new();
        self.requests.retain(|sem, list| {
            list.retain(|r| {
                let given_up = r.process == key.0 && r.instance == key.1 && r.assigned_ts.is_none();
                if given_up {
                    ended.push((*sem, r.clone()));
                }
                !given_up
            });
            !list.is_empty()
        });
        for (sem, r) in ended {
            self.emit_unreleased(sem, r)?;
        }
        Ok(())
    }

    /// The row of request `r` on `sem` that ends without a release: given up, or still open
    /// (assigned or not) at the end of the trace.
    fn emit_unreleased(&mut self, sem: Sym, r: Request) -> Result<()> {
        self.emit_request(sem, r, None)
    }

    /// The `lock_requests` row of request `r` on `sem`, released at `released_ts`. A
    /// contended one names who it waited for: of the process instances that held the
    /// semaphore meanwhile, the first to have got it (ties: by name, then instance).
    fn emit_request(&mut self, sem: Sym, r: Request, released_ts: Option<i64>) -> Result<()> {
        let mut row = LockRow {
            semaphore: sem,
            process: r.process,
            process_instance: r.instance,
            request_ts: r.request_ts,
            assigned_ts: r.assigned_ts,
            released_ts,
            contended_step: r.contended || (r.queued && r.assigned_ts.is_none()),
            blocked_by: None,
            blockers: 0,
        };
        if row.contended() {
            let names = &self.names;
            let first = r.blockers.listed.iter().min_by(|x, y| {
                (x.assigned_ts, names.resolve(x.process), x.instance).cmp(&(
                    y.assigned_ts,
                    names.resolve(y.process),
                    y.instance,
                ))
            });
            row.blocked_by = first.map(|h| (h.process, h.instance));
            row.blockers =
                i64::try_from(r.blockers.listed.len()).unwrap_or(i64::MAX) + r.blockers.more;
        }
        self.emit_lock(row)
    }

    /// At the end of the trace: open semaphore and signal intervals, unfinished requests.
    pub(super) fn close_semaphores(&mut self, end: i64) -> Result<()> {
        let mut sems: Vec<Sym> = self.sems.keys().copied().collect();
        sems.sort_by(|a, b| self.names.resolve(*a).cmp(self.names.resolve(*b)));
        for s in sems {
            self.close_sem(s, end, None, true)?;
        }
        let mut sigs: Vec<Sym> = self.signals.keys().copied().collect();
        sigs.sort_by(|a, b| self.names.resolve(*a).cmp(self.names.resolve(*b)));
        for s in sigs {
            self.close_signal(s, end, None, true)?;
        }
        let mut reqs: Vec<(Sym, Vec<Request>)> = self.requests.drain().collect();
        reqs.sort_by(|a, b| self.names.resolve(a.0).cmp(self.names.resolve(b.0)));
        for (sem, list) in reqs {
            for r in list {
                self.emit_unreleased(sem, r)?;
            }
        }
        Ok(())
    }
}
