//! Tests of the generator: determinism, the text it writes, and the facts it reports. This
//! file holds the shared helpers (generating, parsing the text, and [`Replay`], which
//! replays the state machines); each other file tests one subject.
use super::*;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

mod facts;
mod machines;
mod text;

fn gen(cfg: &SynthConfig) -> (Vec<u8>, SynthStats) {
    let mut buf = Vec::new();
    let stats = write_btf(&mut buf, cfg).unwrap();
    (buf, stats)
}

fn short() -> SynthConfig {
    SynthConfig { duration_ns: 200 * MS, ..SynthConfig::default() }
}

#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    ts: i64,
    src: &'a str,
    si: u64,
    ty: &'a str,
    tgt: &'a str,
    ti: u64,
    act: &'a str,
    note: Option<&'a str>,
}

fn parse(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.splitn(8, ',').collect();
            assert!(f.len() >= 7, "short line: {l}");
            Line {
                ts: f[0].parse().unwrap(),
                src: f[1],
                si: f[2].parse().unwrap(),
                ty: f[3],
                tgt: f[4],
                ti: f[5].parse().unwrap(),
                act: f[6],
                note: f.get(7).copied(),
            }
        })
        .collect()
}

fn is_proc(l: &Line) -> bool {
    l.ty == "T" || l.ty == "I"
}

/// Replays the process, runnable and semaphore state machines.
#[derive(Default)]
struct Replay<'a> {
    proc_state: HashMap<(&'a str, u64), &'a str>,
    core_of: HashMap<&'a str, &'a str>,
    on_core: HashMap<&'a str, (&'a str, u64)>,
    busy: HashSet<&'a str>,
    run_state: HashMap<(&'a str, u64), &'a str>,
    open_runs: HashMap<(&'a str, u64), u32>,
    expect: Option<(&'a str, u64, &'a str)>,
    sem_state: HashMap<&'a str, &'a str>,
    holders: HashMap<&'a str, Vec<(&'a str, u64)>>,
    /// Processes may start or resume on any core ([`SynthConfig::migrating_tasks`]).
    migrating: bool,
    /// Per OS event, the task instance waiting for it.
    waiter: HashMap<&'a str, (&'a str, u64)>,
    /// A `set_event` was written: the release of this waiter must follow.
    release: Option<(&'a str, u64)>,
    /// Slots of the semaphores that have more than one; slots taken of every semaphore.
    slots: HashMap<&'a str, u32>,
    count: HashMap<&'a str, u32>,
    /// Per semaphore, whether its last process line was a request (else a release).
    taking: HashMap<&'a str, bool>,
    /// Task instances queued (a passive wait) for a semaphore.
    queued: HashSet<(&'a str, u64)>,
    /// One-slot semaphores are mutexes whose waiters are queued
    /// ([`SynthConfig::preemptible_locks`]).
    mutexes: bool,
    /// A `wait_event` for an event not set: its task's `wait` must follow.
    must_wait: Option<(&'a str, u64)>,
    /// OS events set and not cleared since, and those a clear found set (a set discarded).
    set: HashSet<&'a str>,
    discarded: HashSet<&'a str>,
    /// Waits for an event that was set (they return at once), and waits that waited after a
    /// set of their event was discarded by a clear.
    at_once: usize,
    waited_after_discard: usize,
}

impl<'a> Replay<'a> {
    fn line(&mut self, l: &Line<'a>) {
        if let Some((src, si, act)) = self.expect.take() {
            assert!(
                l.ty == "R" && (l.src, l.si, l.act) == (src, si, act),
                "expected runnable {act}: {l:?}"
            );
        }
        if let Some(w) = self.release.take() {
            assert!(l.act == "release" && (l.tgt, l.ti) == w, "expected release of {w:?}: {l:?}");
        }
        if let Some(w) = self.must_wait.take() {
            assert!(l.act == "wait" && (l.tgt, l.ti) == w, "expected wait of {w:?}: {l:?}");
        }
        match l.ty {
            "EVENT" => self.event(l),
            "T" | "I" => self.process(l),
            "R" => self.runnable(l),
            "SEM" if l.src == l.tgt => self.semaphore(l),
            "SEM" => self.lock_request(l),
            _ => {}
        }
    }

    fn step(&mut self, key: (&'a str, u64), from: &str, to: &'a str, l: &Line) {
        let now = self.proc_state.get(&key).copied().unwrap_or("none");
        assert_eq!(now, from, "bad transition: {l:?}");
        self.proc_state.insert(key, to);
    }

    fn process(&mut self, l: &Line<'a>) {
        let key = (l.tgt, l.ti);
        if l.act == "activate" {
            assert!(l.src.starts_with("STI_"), "{l:?}");
            return self.step(key, "none", "active", l);
        }
        assert!(l.src.starts_with("Core_"), "{l:?}");
        let core = *self.core_of.entry(l.tgt).or_insert(l.src);
        if self.migrating && matches!(l.act, "start" | "resume" | "poll_parking") {
            self.core_of.insert(l.tgt, l.src);
        } else {
            // Every other action comes from the core it runs on, or last ran on.
            assert_eq!(core, l.src, "process changed core: {l:?}");
        }
        let occupant = self.on_core.get(l.src).copied();
        match l.act {
            "start" | "resume" => {
                assert_eq!(occupant, None, "core busy: {l:?}");
                self.on_core.insert(l.src, key);
                if l.act == "start" {
                    assert!(self.busy.insert(l.tgt), "started twice: {l:?}");
                    self.step(key, "active", "running", l);
                } else {
                    self.step(key, "ready", "running", l);
                    self.expect_runnable(key, "resume");
                }
            }
            "preempt" | "terminate" => {
                assert_eq!(occupant, Some(key), "not on core: {l:?}");
                self.on_core.remove(l.src);
                if l.act == "preempt" {
                    self.step(key, "running", "ready", l);
                    self.expect_runnable(key, "suspend");
                } else {
                    assert_eq!(self.open_runs.get(&key).copied().unwrap_or(0), 0, "{l:?}");
                    self.busy.remove(l.tgt);
                    self.step(key, "running", "terminated", l);
                }
            }
            "poll" | "run" => {
                assert_eq!(occupant, Some(key), "not on core: {l:?}");
                let (from, to) =
                    if l.act == "poll" { ("running", "polling") } else { ("polling", "running") };
                self.step(key, from, to, l);
            }
            "wait" => {
                assert_eq!(occupant, Some(key), "not on core: {l:?}");
                // Between two runnables for an event; in one, queued for a semaphore.
                let queued = self.queued.contains(&key);
                let open = self.open_runs.get(&key).copied().unwrap_or(0);
                assert_eq!(open, u32::from(queued), "{l:?}");
                self.on_core.remove(l.src);
                self.step(key, "running", "waiting", l);
                self.expect_runnable(key, "suspend");
            }
            "release" => self.step(key, "waiting", "ready", l),
            "park" => {
                assert_eq!(occupant, Some(key), "not on core: {l:?}");
                self.on_core.remove(l.src);
                self.step(key, "polling", "parking", l);
                self.expect_runnable(key, "suspend");
            }
            "poll_parking" => {
                assert_eq!(occupant, None, "core busy: {l:?}");
                self.on_core.insert(l.src, key);
                self.step(key, "parking", "polling", l);
                self.expect_runnable(key, "resume");
            }
            "release_parking" => self.step(key, "parking", "ready", l),
            other => panic!("unexpected process action {other}"),
        }
    }

    /// `wait_event` by the running task, which then waits unless the event is set;
    /// `set_event` by a running process, naming the waiter (`EV_<waiter>`), whose release
    /// follows when it waits; `clear_event` by the waiter.
    fn event(&mut self, l: &Line<'a>) {
        let who = (l.src, l.si);
        assert_eq!(self.proc_state.get(&who), Some(&"running"), "{l:?}");
        let owner = l.tgt.strip_prefix("EV_");
        match l.act {
            "wait_event" => {
                assert_eq!(owner, Some(l.src), "{l:?}");
                if self.set.contains(l.tgt) {
                    self.at_once += 1;
                } else {
                    assert!(self.waiter.insert(l.tgt, who).is_none(), "{l:?}");
                    self.must_wait = Some(who);
                    self.waited_after_discard += usize::from(self.discarded.contains(l.tgt));
                }
                self.discarded.remove(l.tgt);
            }
            "set_event" => {
                assert_eq!(l.note, owner, "{l:?}");
                if let Some(w) = self.waiter.remove(l.tgt) {
                    self.release = Some(w);
                }
                self.set.insert(l.tgt);
            }
            "clear_event" => {
                assert_eq!(owner, Some(l.src), "{l:?}");
                if self.set.remove(l.tgt) {
                    self.discarded.insert(l.tgt);
                }
            }
            other => panic!("unexpected event action {other}"),
        }
    }

    /// A preempted or resumed task's open runnable must follow at once.
    fn expect_runnable(&mut self, key: (&'a str, u64), act: &'a str) {
        if self.open_runs.get(&key).copied().unwrap_or(0) > 0 {
            self.expect = Some((key.0, key.1, act));
        }
    }

    fn runnable(&mut self, l: &Line<'a>) {
        let key = (l.tgt, l.ti);
        let parent = self.proc_state.get(&(l.src, l.si)).copied();
        let now = self.run_state.get(&key).copied().unwrap_or("none");
        let (from, to, parent_ok): (_, _, &[&str]) = match l.act {
            "start" => ("none", "running", &["running"]),
            "suspend" => ("running", "suspended", &["ready", "parking", "waiting"]),
            "resume" => ("suspended", "running", &["running", "polling"]),
            "terminate" => ("running", "terminated", &["running"]),
            other => panic!("unexpected runnable action {other}"),
        };
        assert_eq!(now, from, "bad runnable transition: {l:?}");
        assert!(parent.is_some_and(|p| parent_ok.contains(&p)), "bad runnable transition: {l:?}");
        self.run_state.insert(key, to);
        let open = self.open_runs.entry((l.src, l.si)).or_insert(0);
        match l.act {
            "start" => *open += 1,
            "terminate" => *open -= 1,
            _ => {}
        }
        assert!(*open <= 1, "two runnables of one task at once: {l:?}");
    }

    /// The semaphore's own lines follow SEMANTICS.md's state machine, the note counting the
    /// slots taken.
    fn semaphore(&mut self, l: &Line<'a>) {
        let now = self.sem_state.get(l.tgt).copied().unwrap_or("none");
        let slots = self.slots.get(l.tgt).copied().unwrap_or(1);
        let was = self.count.get(l.tgt).copied().unwrap_or(0);
        // A slot taken (after a request) or given back (after a release).
        let take = self.taking.get(l.tgt).copied().unwrap_or(false);
        let (from, to, count): (&[&str], _, _) = match l.act {
            "ready" => (&["none"], "free", 0),
            "lock" => (&["free"], "full", 1),
            "unlock" => (&["full"], "free", 0),
            "overfull" => (&["full", "overfull"], "overfull", slots),
            "full" => (&["overfull"], "full", slots),
            "used" if take => (&["free", "used"], "used", was + 1),
            "used" => (&["used"], "used", was.wrapping_sub(1)),
            "lock_used" => (&["used"], "full", slots),
            "unlock_full" => (&["full"], "used", slots - 1),
            "free" => (&["used"], "free", 0),
            other => panic!("unexpected semaphore action {other}"),
        };
        assert!(from.contains(&now), "bad semaphore transition: {l:?}");
        // `lock` and `unlock` for one slot, the `used` family for more.
        let mutex_only = matches!(l.act, "lock" | "unlock");
        let counting_only = matches!(l.act, "used" | "lock_used" | "unlock_full" | "free");
        assert!(!(if slots == 1 { counting_only } else { mutex_only }), "{l:?}");
        let note = count.to_string();
        assert_eq!(l.note, Some(note.as_str()), "bad counter: {l:?}");
        assert!(l.act != "used" || (1..slots).contains(&count), "{l:?}");
        // Logged before the taker's `assigned`, after the giver's `released`.
        let holders = self.holders.get(l.tgt).map_or(0, Vec::len) as u32;
        let before_assigned =
            matches!(l.act, "lock" | "lock_used" | "full") || l.act == "used" && take;
        assert_eq!(holders + u32::from(before_assigned), count, "{l:?}");
        self.sem_state.insert(l.tgt, to);
        self.count.insert(l.tgt, count);
    }

    fn lock_request(&mut self, l: &Line<'a>) {
        let who = (l.src, l.si);
        let state = self.sem_state.get(l.tgt).copied();
        let slots = self.slots.get(l.tgt).copied().unwrap_or(1);
        match l.act {
            "requestsemaphore" => {
                assert_eq!(self.proc_state.get(&who), Some(&"running"), "{l:?}");
                self.taking.insert(l.tgt, true);
            }
            // A spinlock's waiters poll, the counting semaphore's and a mutex's are queued.
            "waiting" => {
                assert!(state == Some("overfull") && slots == 1 && !self.mutexes, "{l:?}");
            }
            "queued" => {
                assert!(state == Some("overfull") && (slots > 1 || self.mutexes), "{l:?}");
                self.queued.insert(who);
            }
            "assigned" => {
                assert!(matches!(state, Some("full" | "overfull" | "used")), "{l:?}");
                let holders = self.holders.entry(l.tgt).or_default();
                assert!(!holders.contains(&who) && holders.len() < slots as usize, "{l:?}");
                holders.push(who);
                if self.queued.remove(&who) {
                    self.release = Some(who);
                }
            }
            "released" => {
                let holders = self.holders.entry(l.tgt).or_default();
                let k = holders.iter().position(|h| *h == who);
                assert!(k.is_some(), "released, not held: {l:?}");
                holders.retain(|h| *h != who);
                self.taking.insert(l.tgt, false);
            }
            other => panic!("unexpected lock action {other}"),
        }
    }
}

fn replay(cfg: &SynthConfig) -> String {
    replay_counts(cfg).0
}

/// The trace, and how many waits returned at once and waited after a discarded set.
fn replay_counts(cfg: &SynthConfig) -> (String, usize, usize) {
    let (buf, _) = gen(cfg);
    let text = String::from_utf8(buf).unwrap();
    let mut r = Replay {
        migrating: cfg.migrating_tasks,
        mutexes: cfg.preemptible_locks,
        ..Replay::default()
    };
    if cfg.counting_slots > 0 {
        r.slots.insert("SEM_C", cfg.counting_slots);
    }
    for l in parse(&text) {
        r.line(&l);
    }
    let (at_once, discarded) = (r.at_once, r.waited_after_discard);
    (text, at_once, discarded)
}
