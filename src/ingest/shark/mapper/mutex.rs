//! The mutex records of a S.Ha.R.K. run as semaphore events: `mutex_wait`, `mutex_lock`,
//! `mutex_unlock` and `mutex_post` on SEM `mutex_<m>`, a task blocked on a held mutex and
//! the holder's release that frees it (see the table in [`super`]).
use super::*;

impl Mapper<'_> {
    /// The context other than `ctx` that mutex `m` is assigned to, if any.
    pub(super) fn held_by_other(&self, m: u32, ctx: u16) -> Option<u16> {
        let o = *self.owner.get(&m)?;
        (o != ctx && self.tasks.get(&o).is_some_and(|t| t.holds.contains(&m))).then_some(o)
    }

    pub(super) fn mutex(
        &mut self,
        recs: &[Rec],
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let ctx = r.par1;
        let mut t = self.task(points, ctx, i)?;
        let Some(m) = r.par2() else {
            // The fast variant did not write which mutex.
            self.fast_unmapped += 1;
            return self.plain(r, ts, &t.name, t.inst);
        };
        let sem = format!("mutex_{m}");
        if !self.sems.contains(&m) {
            if self.sems.len() >= MAX_ENTITIES {
                let msg = format!(
                    "more than {MAX_ENTITIES} mutexes: {sem} is not a semaphore, its record is \
                     kept as an event of the task (memory stays bounded)"
                );
                self.diag(Severity::Warning, "too_many_entities", r.pos(), Some(ts), msg)?;
                self.set_task(ctx, t.clone());
                return self.plain(r, ts, &t.name, t.inst);
            }
            self.sems.insert(m);
            self.sink.declare_entity(&sem, Some("SEM"), None);
        }
        let (task, inst) = (t.name.clone(), t.inst);
        let sem_event = |me: &mut Self, action: &str, implied: bool| {
            let note = me.note(r, implied);
            me.emit(r, ts, &task, inst, ("SEM", &sem, -1), action, &note, None)
        };
        // A contended request: the task waits (off its core when it was running).
        let block = |me: &mut Self, t: &mut Task| -> Result<()> {
            sem_event(me, "requestsemaphore", false)?;
            sem_event(me, "waiting", true)?;
            if t.state == St::Running {
                me.proc(r, ts, "T", (&t.name, t.inst), "wait", true)?;
                t.state = St::Waiting;
                me.running = None;
            }
            Ok(())
        };
        match r.code() {
            0x46 if !blocks(recs, i, ctx) => {
                // A semaphore wait that did not block (the kernel logs both): taken at once.
                sem_event(self, "requestsemaphore", false)?;
                sem_event(self, "assigned", true)?;
                hold(&mut t, m);
            }
            0x46 => {
                block(self, &mut t)?;
                t.waiting_on = Some(m);
                let q = self.blocked.entry(m).or_default();
                q.retain(|c| *c != ctx);
                if q.len() >= MAX_BLOCKED {
                    q.pop_front();
                }
                q.push_back(ctx);
            }
            0x16 if t.waiting_on != Some(m) && self.held_by_other(m, ctx).is_some() => {
                // mutex_lock() logs before it tries: the mutex is held, the task blocks
                // (under priority inheritance the holder runs in its place) and takes it
                // when it runs again once the mutex is free.
                block(self, &mut t)?;
                t.lock_wait = Some(m);
            }
            0x16 => {
                self.owner.insert(m, ctx);
                if t.waiting_on == Some(m) {
                    if t.state == St::Waiting {
                        self.proc(r, ts, "T", (&t.name, t.inst), "release", true)?;
                        t.state = St::Ready;
                    }
                    t.waiting_on = None;
                } else {
                    sem_event(self, "requestsemaphore", true)?;
                }
                sem_event(self, "assigned", false)?;
                hold(&mut t, m);
            }
            0x56 => {
                // sem_post: the release of a semaphore the task holds, else a signal (kept
                // as is); it frees the first task blocked on it, which is assigned it.
                if let Some(k) = t.holds.iter().rposition(|h| *h == m) {
                    t.holds.remove(k);
                    sem_event(self, "released", false)?;
                } else {
                    self.plain(r, ts, &t.name, t.inst)?;
                }
                self.set_task(ctx, t.clone());
                self.wake(r, ts, m, &sem)?;
                return Ok(());
            }
            _ => {
                if let Some(k) = t.holds.iter().rposition(|h| *h == m) {
                    t.holds.remove(k);
                }
                if self.owner.get(&m) == Some(&ctx) {
                    self.owner.remove(&m);
                }
                sem_event(self, "released", false)?;
            }
        }
        self.set_task(ctx, t);
        Ok(())
    }

    /// A `mutex_post` of semaphore `m`: the first task still blocked on it is released
    /// (ready) and assigned it.
    fn wake(&mut self, r: &Rec, ts: i64, m: u32, sem: &str) -> Result<()> {
        while let Some(c) = self.blocked.get_mut(&m).and_then(VecDeque::pop_front) {
            let Some(mut w) = self.tasks.get(&c).cloned() else { continue };
            if w.waiting_on != Some(m) {
                continue;
            }
            if w.state == St::Waiting {
                self.proc(r, ts, "T", (&w.name, w.inst), "release", true)?;
                w.state = St::Ready;
            }
            w.waiting_on = None;
            let note = self.note(r, true);
            self.emit(r, ts, &w.name, w.inst, ("SEM", sem, -1), "assigned", &note, None)?;
            hold(&mut w, m);
            self.set_task(c, w);
            break;
        }
        Ok(())
    }
}

/// Notes that task `t` holds semaphore `m` (the oldest hold is forgotten beyond
/// [`MAX_HELD`]).
pub(super) fn hold(t: &mut Task, m: u32) {
    if t.holds.len() >= MAX_HELD {
        t.holds.remove(0);
    }
    t.holds.push(m);
}
