//! An independent reading of SEMANTICS.md's process and runnable tables and DESIGN.md's
//! metric definitions, written apart from `src/synth` (whose simulator shares the derive
//! stage's authors): random well-formed multi-core traces, every transition explicit except
//! ISRs that start on a busy core with no preempt logged (the process they interrupt resumes
//! when they terminate, as the README's `implicit_preemption` says), many events at one
//! instant, runnables' own `suspend`/`resume` lines written before or after their task's,
//! and FreeRTOS-style resumes whose source is the task that just left the core. It keeps
//! its own books of what every instance did.
use super::derive;
use std::collections::BTreeMap;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())].clone()
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum St {
    Active,
    Running,
    Ready,
    Waiting,
    Polling,
    Parking,
}

impl St {
    fn name(self) -> &'static str {
        match self {
            St::Active => "active",
            St::Running => "running",
            St::Ready => "ready",
            St::Waiting => "waiting",
            St::Polling => "polling",
            St::Parking => "parking",
        }
    }
    fn on_core(self) -> bool {
        matches!(self, St::Running | St::Polling)
    }
}

type Key = (String, i64);

struct Proc {
    ty: &'static str,
    st: St,
    since: i64,
    core: Option<usize>,
    first_core: Option<usize>,
    occ_since: i64,
    net: i64,
    ready: i64,
    other: i64,
    pre: i64,
    mig: i64,
    /// An ISR that started on a busy core with no preempt: it only runs and terminates.
    implicit: bool,
}

struct Run {
    task: Key,
    running: bool,
    since: i64,
    core: usize,
    first_core: usize,
    net: i64,
    ready: i64,
    pre: i64,
}

/// What the derive stage should make of a trace.
pub(super) struct Expected {
    pub text: String,
    /// `entity#instance state [ts,end) @core` of every state and core interval that
    /// ended, longer than 0.
    pub intervals: Vec<String>,
    /// `entity#instance net= ready= preempt= migr=` of every instance that terminated.
    pub metrics: Vec<String>,
    /// `entity#instance @core` of those instances.
    pub cores: Vec<String>,
}

#[derive(Default)]
struct Books {
    t: i64,
    lines: Vec<String>,
    intervals: Vec<String>,
    metrics: Vec<String>,
    cores: Vec<String>,
    occ: Vec<Option<Key>>,
    procs: BTreeMap<Key, Proc>,
    runs: BTreeMap<Key, Run>,
    /// Per core, the processes an implicit ISR interrupted, with that ISR, innermost last.
    stack: Vec<Vec<(Key, Key)>>,
    /// Per core, the last process that left it, and when.
    left: Vec<Option<(Key, i64)>>,
    /// Per core, when an ISR's end last gave it back to the process it interrupted.
    handed_back: Vec<i64>,
    /// The process an ISR's end gave its core back to, and when: its own events of that
    /// instant would say it did not get it back (the README folds them in).
    back: Vec<(Key, i64)>,
}

fn core(c: usize) -> String {
    format!("Core_{c}")
}

impl Books {
    fn line(&mut self, src: &str, si: i64, ty: &str, k: &Key, action: &str) {
        self.lines.push(format!("{},{src},{si},{ty},{},{},{action}", self.t, k.0, k.1));
    }

    fn interval(&mut self, k: &Key, state: &str, since: i64, c: Option<usize>) {
        if self.t > since {
            let at = c.map_or("-".to_string(), core);
            self.intervals.push(format!("{}#{} {state} [{since},{}) @{at}", k.0, k.1, self.t));
        }
    }

    /// `k` leaves its state for `to` (on core `c` when `to` is on a core).
    fn switch(&mut self, k: &Key, to: St, start: bool, c: Option<usize>) {
        let t = self.t;
        let Some(p) = self.procs.get_mut(k) else { return };
        let (was, since, old_core) = (p.st, p.since, p.core);
        match was {
            St::Running => p.net += t - since,
            St::Ready => p.ready += t - since,
            St::Waiting | St::Polling | St::Parking => p.other += t - since,
            St::Active => {}
        }
        p.st = to;
        p.since = t;
        let mut vacated = None;
        let mut occupied = None;
        if to.on_core() {
            if old_core.is_some_and(|o| Some(o) != c) && !start {
                p.mig += 1;
            }
            p.first_core = p.first_core.or(c);
            p.core = c;
            if !was.on_core() {
                p.occ_since = t;
                occupied = c;
            }
        } else if was.on_core() {
            if to == St::Ready {
                p.pre += 1;
            }
            vacated = old_core.map(|o| (o, p.occ_since));
        }
        self.interval(k, was.name(), since, if was.on_core() { old_core } else { None });
        if let Some((o, occ_since)) = vacated {
            self.occ[o] = None;
            if t > occ_since {
                self.intervals.push(format!(
                    "{}#-1 {} [{occ_since},{t}) @{}",
                    core(o),
                    k.0,
                    core(o)
                ));
            }
        }
        if let Some(o) = occupied {
            self.occ[o] = Some(k.clone());
        }
    }

    fn runnables_of(&self, k: &Key) -> Vec<Key> {
        self.runs.iter().filter(|(_, r)| r.task == *k).map(|(rk, _)| rk.clone()).collect()
    }

    fn run_switch(&mut self, rk: &Key, c: Option<usize>) {
        let t = self.t;
        let Some(r) = self.runs.get_mut(rk) else { return };
        let (since, running, old) = (r.since, r.running, r.core);
        if running {
            r.net += t - since;
            r.pre += 1;
        } else {
            r.ready += t - since;
            if let Some(c) = c {
                r.core = c;
            }
        }
        r.running = !running;
        r.since = t;
        let state = if running { "running" } else { "suspended" };
        self.interval(rk, state, since, running.then_some(old));
    }

    fn run_end(&mut self, rk: &Key) {
        let t = self.t;
        let Some(r) = self.runs.remove(rk) else { return };
        let state = if r.running { "running" } else { "suspended" };
        self.interval(rk, state, r.since, r.running.then_some(r.core));
        let (net, ready) =
            if r.running { (r.net + t - r.since, r.ready) } else { (r.net, r.ready + t - r.since) };
        self.metrics
            .push(format!("{}#{} net={net} ready={ready} preempt={} migr=0", rk.0, rk.1, r.pre));
        self.cores.push(format!("{}#{} @{}", rk.0, rk.1, core(r.first_core)));
    }

    /// The task's runnables follow it off or onto its core, their own lines (half of the
    /// time) written before or after the task's.
    fn follow(&mut self, rng: &mut Rng, k: &Key, on: bool, c: Option<usize>, task_line: bool) {
        let mut own = Vec::new();
        for rk in self.runnables_of(k) {
            if self.runs.get(&rk).is_some_and(|r| r.running != on) {
                self.run_switch(&rk, c);
                if task_line && rng.chance(50) {
                    let action = if on { "resume" } else { "suspend" };
                    own.push(format!("{},{},{},R,{},{},{action}", self.t, k.0, k.1, rk.0, rk.1));
                }
            }
        }
        if !own.is_empty() && rng.chance(50) {
            if let Some(task) = self.lines.pop() {
                self.lines.extend(own);
                self.lines.push(task);
            }
        } else {
            self.lines.extend(own);
        }
    }

    fn terminated(&mut self, k: &Key) {
        if let Some(p) = self.procs.remove(k) {
            self.metrics.push(format!(
                "{}#{} net={} ready={} preempt={} migr={}",
                k.0, k.1, p.net, p.ready, p.pre, p.mig
            ));
            let at = p.first_core.map_or("-".to_string(), core);
            self.cores.push(format!("{}#{} @{at}", k.0, k.1));
        }
    }

    fn interrupted(&self, k: &Key) -> bool {
        self.stack.iter().any(|s| s.iter().any(|(p, _)| p == k))
    }
}

pub(super) fn trace(seed: u64, events: usize) -> Expected {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let ncores = 1 + rng.below(3);
    let mut kinds: Vec<(&'static str, String)> =
        (0..1 + rng.below(4)).map(|i| ("T", format!("T{i}"))).collect();
    for i in 0..rng.below(3) {
        kinds.push((if rng.chance(50) { "I" } else { "ISR" }, format!("I{i}")));
    }
    let mut next: BTreeMap<String, i64> = BTreeMap::new();
    let mut b = Books {
        occ: vec![None; ncores],
        stack: vec![Vec::new(); ncores],
        left: vec![None; ncores],
        handed_back: vec![-1; ncores],
        ..Books::default()
    };
    #[derive(Clone)]
    enum Do {
        Activate(&'static str, String),
        Enter(Key, &'static str, usize),
        Leave(Key, &'static str),
        Isr(Key, usize),
        RunStart(Key),
        RunEnd(Key),
    }
    for _ in 0..events {
        b.t += rng.pick(&[0, 0, 0, 1, 2, 5]);
        let t = b.t;
        let mut choices = Vec::new();
        for (ty, n) in &kinds {
            if b.procs.keys().filter(|k| k.0 == *n).count() < 2 {
                choices.push(Do::Activate(ty, n.clone()));
            }
        }
        let free: Vec<usize> = (0..ncores).filter(|c| b.occ[*c].is_none()).collect();
        let busy: Vec<usize> =
            (0..ncores).filter(|c| b.occ[*c].is_some() && b.handed_back[*c] != t).collect();
        for (k, p) in &b.procs {
            let runs = b.runnables_of(k).len();
            if p.ty != "T" && p.st == St::Active && !busy.is_empty() {
                choices.push(Do::Isr(k.clone(), rng.pick(&busy)));
            }
            if b.back.contains(&(k.clone(), t)) {
                continue;
            }
            if p.implicit || (b.interrupted(k) && p.st != St::Parking) {
                if p.implicit && p.st == St::Running {
                    choices.push(Do::Leave(k.clone(), "terminate"));
                    if runs < 2 {
                        choices.push(Do::RunStart(k.clone()));
                    }
                    if runs > 0 {
                        choices.push(Do::RunEnd(k.clone()));
                    }
                }
                continue;
            }
            if b.interrupted(k) {
                choices.push(Do::Leave(k.clone(), "release_parking"));
                continue;
            }
            let any_free = !free.is_empty();
            match p.st {
                St::Active if any_free => {
                    choices.push(Do::Enter(k.clone(), "start", rng.pick(&free)))
                }
                St::Ready if any_free => {
                    choices.push(Do::Enter(k.clone(), "resume", rng.pick(&free)))
                }
                St::Parking if any_free => {
                    choices.push(Do::Enter(k.clone(), "poll_parking", rng.pick(&free)));
                    choices.push(Do::Leave(k.clone(), "release_parking"));
                }
                St::Parking => choices.push(Do::Leave(k.clone(), "release_parking")),
                St::Running => {
                    for a in ["preempt", "terminate", "poll", "wait"] {
                        choices.push(Do::Leave(k.clone(), a));
                    }
                    if runs < 2 {
                        choices.push(Do::RunStart(k.clone()));
                    }
                    if runs > 0 {
                        choices.push(Do::RunEnd(k.clone()));
                    }
                }
                St::Polling => {
                    choices.push(Do::Leave(k.clone(), "run"));
                    choices.push(Do::Leave(k.clone(), "park"));
                }
                St::Waiting => choices.push(Do::Leave(k.clone(), "release")),
                _ => {}
            }
        }
        if choices.is_empty() {
            continue;
        }
        match rng.pick(&choices) {
            Do::Activate(ty, n) => {
                let i = next.entry(n.clone()).or_insert(0);
                let k = (n.clone(), *i);
                *i += 1;
                b.line(&format!("STI_{n}"), 0, ty, &k, "activate");
                let p = Proc {
                    ty,
                    st: St::Active,
                    since: t,
                    core: None,
                    first_core: None,
                    occ_since: t,
                    net: 0,
                    ready: 0,
                    other: 0,
                    pre: 0,
                    mig: 0,
                    implicit: false,
                };
                b.procs.insert(k, p);
            }
            Do::Enter(k, action, c) => {
                let ty = b.procs[&k].ty;
                // FreeRTOS names the task that just left the core as the source.
                let (mut src, mut si) = (core(c), 0);
                if let Some((prev, at)) = b.left[c].clone() {
                    let off =
                        b.procs.get(&prev).is_some_and(|p| !p.st.on_core() && p.core == Some(c));
                    if at == t && off && rng.chance(50) {
                        (src, si) = prev;
                    }
                }
                b.line(&src, si, ty, &k, action);
                let to = if action == "poll_parking" { St::Polling } else { St::Running };
                b.switch(&k, to, action == "start", Some(c));
                b.follow(&mut rng, &k, true, Some(c), true);
            }
            Do::Leave(k, action) => {
                let (ty, c) = (b.procs[&k].ty, b.procs[&k].core);
                if action == "terminate" {
                    for rk in b.runnables_of(&k) {
                        b.lines.push(format!("{t},{},{},R,{},{},terminate", k.0, k.1, rk.0, rk.1));
                        b.run_end(&rk);
                    }
                }
                let src = match (action, c) {
                    ("release" | "release_parking", _) | (_, None) => core(rng.below(ncores)),
                    (_, Some(c)) => core(c),
                };
                b.line(&src, 0, ty, &k, action);
                let to = match action {
                    "preempt" | "release" | "release_parking" => St::Ready,
                    "wait" => St::Waiting,
                    "poll" => St::Polling,
                    "run" => St::Running,
                    "park" => St::Parking,
                    _ => St::Active, // terminate: the instance goes below
                };
                let was_on = b.procs[&k].st.on_core();
                b.switch(&k, to, false, c);
                if was_on && !to.on_core() {
                    if let Some(c) = c {
                        b.left[c] = Some((k.clone(), t));
                    }
                    if action != "terminate" {
                        b.follow(&mut rng, &k, false, None, true);
                    }
                }
                if action == "terminate" {
                    let implicit = b.procs.get(&k).is_some_and(|p| p.implicit);
                    b.terminated(&k);
                    if let (true, Some(c)) = (implicit, c) {
                        isr_end(&mut b, &mut rng, &k, c);
                    }
                }
            }
            Do::Isr(k, c) => isr_start(&mut b, &mut rng, &k, c),
            Do::RunStart(k) => {
                let r = format!("R{}", rng.below(3));
                let i = next.entry(r.clone()).or_insert(0);
                let rk = (r, *i);
                *i += 1;
                // Now and then called by a runnable of the task rather than the task.
                let caller = b.runnables_of(&k).into_iter().find(|c| b.runs[c].running);
                let src = match caller {
                    Some(c) if rng.chance(30) => c,
                    _ => k.clone(),
                };
                b.lines.push(format!("{t},{},{},R,{},{},start", src.0, src.1, rk.0, rk.1));
                let c = b.procs[&k].core.unwrap_or(0);
                let run = Run {
                    task: k,
                    running: true,
                    since: t,
                    core: c,
                    first_core: c,
                    net: 0,
                    ready: 0,
                    pre: 0,
                };
                b.runs.insert(rk, run);
            }
            Do::RunEnd(k) => {
                let rk = rng.pick(&b.runnables_of(&k));
                b.lines.push(format!("{t},{},{},R,{},{},terminate", k.0, k.1, rk.0, rk.1));
                b.run_end(&rk);
            }
        }
    }
    Expected {
        text: format!("#timeScale ns\n{}\n", b.lines.join("\n")),
        intervals: b.intervals,
        metrics: b.metrics,
        cores: b.cores,
    }
}

/// ISR `k` starts on busy core `c` with no preempt of what runs there.
fn isr_start(b: &mut Books, rng: &mut Rng, k: &Key, c: usize) {
    let Some(p) = b.occ[c].clone() else { return };
    let ty = b.procs[k].ty;
    b.line(&core(c), 0, ty, k, "start");
    let to = if b.procs[&p].st == St::Polling { St::Parking } else { St::Ready };
    b.switch(&p, to, false, None);
    b.follow(rng, &p, false, None, false);
    b.stack[c].push((p, k.clone()));
    if let Some(i) = b.procs.get_mut(k) {
        i.implicit = true;
    }
    b.switch(k, St::Running, true, Some(c));
}

/// Implicit ISR `k` terminated on `c`: what it interrupted gets the core back, unless the
/// next ISR takes it at this instant (tail-chaining).
fn isr_end(b: &mut Books, rng: &mut Rng, k: &Key, c: usize) {
    if b.stack[c].last().is_none_or(|(_, isr)| isr != k) {
        return;
    }
    let Some((p, _)) = b.stack[c].pop() else { return };
    let next: Vec<Key> = b
        .procs
        .iter()
        .filter(|(_, q)| q.ty != "T" && q.st == St::Active)
        .map(|(n, _)| n.clone())
        .collect();
    if !next.is_empty() && rng.chance(40) {
        let n = rng.pick(&next);
        let ty = b.procs[&n].ty;
        b.line(&core(c), 0, ty, &n, "start");
        b.stack[c].push((p, n.clone()));
        if let Some(i) = b.procs.get_mut(&n) {
            i.implicit = true;
        }
        b.switch(&n, St::Running, true, Some(c));
        return;
    }
    b.handed_back[c] = b.t;
    b.back.push((p.clone(), b.t));
    let to = if b.procs[&p].st == St::Parking { St::Polling } else { St::Running };
    b.switch(&p, to, false, Some(c));
    b.follow(rng, &p, true, Some(c), false);
}

#[test]
fn random_well_formed_traces_match_an_independent_reading_of_the_tables() {
    for seed in 1..=150 {
        let e = trace(seed, 300);
        let (s, rows) = derive(&e.text);
        let warnings: Vec<_> =
            s.diag_counts.iter().filter(|(k, _)| **k != "implicit_preemption").collect();
        assert!(warnings.is_empty(), "seed {seed}: {warnings:?}\n{}", e.text);
        for m in &e.metrics {
            assert!(
                rows.metrics.contains(m),
                "seed {seed}: {m} not in {:?}\n{}",
                rows.metrics,
                e.text
            );
        }
        for c in &e.cores {
            assert!(rows.instance_cores.contains(c), "seed {seed}: {c}\n{}", e.text);
        }
        // Every interval that ended, longer than 0: the same ones, no more, no fewer.
        let mut got: Vec<&str> = rows
            .intervals
            .iter()
            .zip(&rows.interval_cores)
            .filter(|(iv, _)| !iv.ends_with("open"))
            .map(|(_, c)| c.as_str())
            .filter(|c| {
                let span = c.split(['[', ')']).nth(1).unwrap_or_default();
                let (a, b) = span.split_once(',').unwrap_or_default();
                a != b
            })
            .collect();
        let mut want: Vec<&str> = e.intervals.iter().map(String::as_str).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "seed {seed}\n{}", e.text);
    }
}
