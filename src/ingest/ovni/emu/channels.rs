//! The channels ovni's model shows, set after each event: the thread row's (state, CPU,
//! TID, flush, marks, and the runtime models' as the thread's state allows) and the CPU row's
//! (its one running thread's, the number of running threads), each change one channel set.
use super::*;

/// Which channel of its row [`Model::set`] changes: the key of the value last emitted (the
/// caller knows it, so no lookup by name is needed on every event).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Chan {
    /// A built-in channel of the row: [`CH_TH_CPU`], [`CH_TH_TID`], [`CH_TH_STATE`],
    /// [`CH_TH_FLUSH`] (0 to 3 on a thread row), [`CH_CPU_PID`], [`CH_CPU_TID`],
    /// [`CH_CPU_NRUN`], [`CH_CPU_FLUSH`] (0 to 3 on a CPU row).
    Base(u8),
    /// Mark type `ty`.
    Mark(i64),
    /// Channel `ch` of runtime model `m`.
    Runtime(usize, usize),
}

/// What one row (a thread's or a CPU's) last showed on each channel: `None` until the
/// channel has shown a value. Kept per row in a vector rather than in one map keyed by row
/// and channel, because every event asks about every channel of one or two rows.
#[derive(Default)]
pub(super) struct Shown {
    base: [Option<i128>; 4],
    /// Per runtime model, per channel.
    runtime: [Vec<Option<i128>>; 2],
    marks: FastMap<i64, i128>,
}

impl Shown {
    fn get(&self, key: Chan) -> Option<i128> {
        match key {
            Chan::Base(b) => self.base.get(usize::from(b)).copied().flatten(),
            Chan::Mark(ty) => self.marks.get(&ty).copied(),
            Chan::Runtime(m, ch) => self.runtime.get(m)?.get(ch).copied().flatten(),
        }
    }

    fn put(&mut self, key: Chan, value: i128) {
        match key {
            Chan::Base(b) => {
                if let Some(v) = self.base.get_mut(usize::from(b)) {
                    *v = Some(value);
                }
            }
            Chan::Mark(ty) => {
                self.marks.insert(ty, value);
            }
            Chan::Runtime(m, ch) => {
                if let Some(r) = self.runtime.get_mut(m) {
                    if r.len() <= ch {
                        r.resize(ch + 1, None);
                    }
                    if let Some(v) = r.get_mut(ch) {
                        *v = Some(value);
                    }
                }
            }
        }
    }
}

/// Channel `key` of row `who` is a CPU's number of running threads ([`CH_CPU_NRUN`]), ovni's
/// PRV_ZERO channel, where 0 is a value rather than the end of one.
fn zero_is_a_value(who: (bool, usize), key: Chan) -> bool {
    who.0 && key == Chan::Base(2)
}

impl Model {
    /// Sets `channel` (`key` on its row) of a CPU (`who.0`) or thread `who.1` to `value`,
    /// when it changes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set(
        &mut self,
        who: (bool, usize),
        key: Chan,
        channel: &str,
        value: i128,
        label: Option<&str>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        if self.changed(who, key, value) {
            self.show(who, key, channel, value, label, at, sink)?;
        }
        Ok(())
    }

    /// Whether channel `key` of row `who` changes to `value` (it is then recorded as shown).
    /// Asked first, so that what only a change needs (a label) is made only then.
    fn changed(&mut self, who: (bool, usize), key: Chan, value: i128) -> bool {
        let (cpu_side, idx) = who;
        // A CPU's number of running threads is ovni's PRV_ZERO: 0 is a value, which ovni's
        // `cpu_update` writes as soon as a thread is placed on the CPU, also one that does
        // not run there (a paused thread moved by `OAr`).
        let placed =
            zero_is_a_value(who, key) && self.cpus.get(idx).is_some_and(|c| !c.threads.is_empty());
        let Some(rows) = self.last.get_mut(usize::from(cpu_side)) else { return false };
        if rows.len() <= idx {
            rows.resize_with(idx + 1, Shown::default);
        }
        let Some(row) = rows.get_mut(idx) else { return false };
        let news = match row.get(key) {
            Some(v) => v != value,
            None => value != 0 || placed,
        };
        if news {
            row.put(key, value);
        }
        news
    }

    /// What channel `key` of row `who` last showed, if it has shown a value.
    fn shown(&self, who: (bool, usize), key: Chan) -> Option<i128> {
        self.last.get(usize::from(who.0))?.get(who.1)?.get(key)
    }

    /// Emits the change of `channel` of row `who` to `value`.
    #[allow(clippy::too_many_arguments)]
    fn show(
        &self,
        who: (bool, usize),
        key: Chan,
        channel: &str,
        value: i128,
        label: Option<&str>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let (cpu_side, idx) = who;
        // A built-in channel a mark type shares its title with has the name the Paraver
        // ingest gives it (a mark's own name is never a built-in one's on its row).
        let renamed = self.renamed.get(usize::from(cpu_side)).and_then(|r| r.get(channel));
        let channel = renamed.map_or(channel, String::as_str);
        let (entity, ty) = if cpu_side {
            (self.cpus.get(idx).map_or("", |c| c.name.as_str()), "CPU")
        } else {
            (self.threads.get(idx).map_or("", |t| t.name.as_str()), "THREAD")
        };
        sink.channel_set(&ChannelSet {
            entity,
            entity_type: ty,
            channel,
            ts: at.ts,
            value,
            zero_ends: !zero_is_a_value(who, key),
            label,
            core: None,
            pos: at.pos,
        })
    }

    /// Sets every mark type's channel of row `who` to the mark's value on thread `from`
    /// (0 without one).
    fn set_marks(
        &mut self,
        who: (bool, usize),
        from: Option<usize>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        // Taken out while the channels are set (`set` does not use them).
        let marks = std::mem::take(&mut self.marks);
        let names = std::mem::take(&mut self.mark_names);
        let side = usize::from(who.0);
        let mut result = Ok(());
        for (ty, m) in &marks {
            let v = from.map_or(0, |t| self.mark_value(t, *ty));
            let label = i64::try_from(v).ok().and_then(|v| m.labels.get(&v));
            let name =
                names.get(ty).and_then(|n| n.get(side)).map_or(m.title.as_str(), String::as_str);
            result = self.set(who, Chan::Mark(*ty), name, v, label.map(String::as_str), at, sink);
            if result.is_err() {
                break;
            }
        }
        self.marks = marks;
        self.mark_names = names;
        result
    }

    pub(super) fn emit_thread(&mut self, th: usize, at: At, sink: &mut dyn Sink) -> Result<()> {
        let Some(t) = self.threads.get(th) else { return Ok(()) };
        let (state, tid, flushing, cpu) = (t.state, t.tid, t.flushing, t.cpu);
        let cpu_v = cpu.and_then(|c| self.cpus.get(c)).map_or(0, |c| i128::from(c.gindex) + 1);
        if self.changed((false, th), Chan::Base(0), cpu_v) {
            let label = cpu.and_then(|c| self.cpus.get(c)).map(|c| c.name.as_str());
            self.show((false, th), Chan::Base(0), CH_TH_CPU, cpu_v, label, at, sink)?;
        }
        let active = state.active();
        self.set(
            (false, th),
            Chan::Base(1),
            CH_TH_TID,
            if active { i128::from(tid) } else { 0 },
            None,
            at,
            sink,
        )?;
        if state != St::Unknown {
            self.set(
                (false, th),
                Chan::Base(2),
                CH_TH_STATE,
                state as i128,
                Some(state.label()),
                at,
                sink,
            )?;
        }
        self.set(
            (false, th),
            Chan::Base(3),
            CH_TH_FLUSH,
            i128::from(flushing),
            Some("Flushing"),
            at,
            sink,
        )?;
        // Marks follow the thread while it is active (ovni's TRACK_TH_ACT).
        self.set_marks((false, th), active.then_some(th), at, sink)?;
        self.emit_runtime_thread(th, at, sink)
    }

    /// The runtime models' channels of thread `th`, as its row shows them.
    pub(super) fn emit_runtime_thread(
        &mut self,
        th: usize,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let Some(state) = self.threads.get(th).map(|t| t.state) else { return Ok(()) };
        for (m, (_, specs)) in runtime::MODELS.iter().enumerate() {
            if !self.runtime.on.get(m).copied().unwrap_or(false) {
                continue;
            }
            for (ch, spec) in specs.iter().enumerate() {
                let shown = match spec.track {
                    Track::Run => state == St::Running,
                    Track::Act => state.active(),
                    Track::Any => true,
                };
                let raw =
                    self.rt.get(th).and_then(|t| t.chans.get(m)).map_or(0, |c| c.raw(ch, spec));
                let v = if shown { raw } else { 0 };
                let who = (false, th);
                if self.changed(who, Chan::Runtime(m, ch), i128::from(v)) {
                    let label = self.runtime.label(m, ch, v);
                    let key = Chan::Runtime(m, ch);
                    self.show(who, key, spec.thread, i128::from(v), label.as_deref(), at, sink)?;
                }
            }
        }
        Ok(())
    }

    /// The runtime models' channels of CPU `c`: those of its one running thread `one`; with
    /// none or several, nothing, or the channel's default once it has had one.
    pub(super) fn emit_runtime_cpu(
        &mut self,
        c: usize,
        one: Option<usize>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let had = self.cpus.get(c).is_some_and(|c| c.had_running);
        for (m, (_, specs)) in runtime::MODELS.iter().enumerate() {
            if !self.runtime.on.get(m).copied().unwrap_or(false) {
                continue;
            }
            for (ch, spec) in specs.iter().enumerate() {
                let v = match one {
                    Some(t) => {
                        self.rt.get(t).and_then(|t| t.chans.get(m)).map_or(0, |c| c.raw(ch, spec))
                    }
                    None if had => spec.cpu_default,
                    None => 0,
                };
                let who = (true, c);
                if self.changed(who, Chan::Runtime(m, ch), i128::from(v)) {
                    let label = self.runtime.label(m, ch, v);
                    let key = Chan::Runtime(m, ch);
                    self.show(who, key, spec.cpu, i128::from(v), label.as_deref(), at, sink)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn emit_cpu(&mut self, c: usize, at: At, sink: &mut dyn Sink) -> Result<()> {
        let Some(cpu) = self.cpus.get(c) else { return Ok(()) };
        let running = |t: &usize| self.threads.get(*t).is_some_and(|t| t.state == St::Running);
        let mut nrun: i128 = 0;
        let mut first = None;
        for t in cpu.threads.iter().filter(|t| running(t)) {
            nrun += 1;
            first = first.or(Some(*t));
        }
        // One running thread: its ids, flush and marks; none or several: nothing (ovni
        // shows no value then).
        let one = first.filter(|_| nrun == 1);
        // Only a virtual CPU may have several threads running (ovni's `cpu_update` stops on a
        // physical one): said when it starts.
        let virt = self.looms.iter().any(|l| l.vcpu == c);
        // The number of running threads (CH_CPU_NRUN) last shown.
        let before = self.shown((true, c), Chan::Base(2));
        if !virt && nrun > 1 && before.is_none_or(|b| b <= 1) {
            let names: Vec<&str> = (cpu.threads.iter().filter(|t| running(t)))
                .filter_map(|&t| self.threads.get(t).map(|t| t.name.as_str()))
                .collect();
            let msg = format!(
                "{}: {nrun} threads running at the same time ({}): ovni's emulator allows it \
                 only on a virtual CPU and stops here; the CPU shows no thread's channels \
                 meanwhile",
                self.cpus.get(c).map_or("", |c| c.name.as_str()),
                names.join(", ")
            );
            warn(sink, "cpu_oversubscribed", at, msg)?;
        }
        let t = one.and_then(|t| self.threads.get(t)).map(|t| (t.pid, t.tid, t.flushing));
        self.set(
            (true, c),
            Chan::Base(0),
            CH_CPU_PID,
            t.map_or(0, |t| i128::from(t.0)),
            None,
            at,
            sink,
        )?;
        self.set(
            (true, c),
            Chan::Base(1),
            CH_CPU_TID,
            t.map_or(0, |t| i128::from(t.1)),
            None,
            at,
            sink,
        )?;
        self.set((true, c), Chan::Base(2), CH_CPU_NRUN, nrun, None, at, sink)?;
        let flushing = t.is_some_and(|t| t.2);
        self.set(
            (true, c),
            Chan::Base(3),
            CH_CPU_FLUSH,
            i128::from(flushing),
            Some("Flushing"),
            at,
            sink,
        )?;
        self.set_marks((true, c), one, at, sink)?;
        if one.is_some() {
            if let Some(cpu) = self.cpus.get_mut(c) {
                cpu.had_running = true;
            }
        }
        self.emit_runtime_cpu(c, one, at, sink)
    }
}
