//! How each S.Ha.R.K. record maps to BTF events ([`Mapper::record`]): task activations
//! and dispatches, epilogues, ends, deadline misses, interrupts and CLI/STI (see the table in
//! [`super`]); mutex records go to [`super::mutex`].
use super::*;

impl Mapper<'_> {
    pub(super) fn record(
        &mut self,
        recs: &[Rec],
        i: usize,
        r: &Rec,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        self.in_file(r.file);
        self.cur_pos = r.pos();
        let ts = self.time(r);
        self.last_ts = ts;
        let code = r.code();
        let ctx = r.par1;
        match code {
            0x12 => self.activate(r, ts, i, points),
            // task_timer: the release of a periodic job (EDF, CBS, HCBS log each one so).
            0x92 => {
                let mut t = self.task(points, ctx, i)?;
                if t.unreleased && t.state == St::Active {
                    t.unreleased = false;
                    self.set_task(ctx, t.clone());
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.activate(r, ts, i, points)
            }
            // task_schedule: the scheduler chose exec (par2) and runs exec_shadow (par1, the
            // end of the shadow chain, which differs under priority inheritance): par1 is
            // the task on the CPU, as for task_dispatch.
            0x22 | 0x82 => self.dispatch(r, ts, i, points),
            0x32 => {
                let mut t = self.task(points, ctx, i)?;
                if t.state == St::Running && preempted(recs, i, ctx) {
                    self.proc(r, ts, "T", (&t.name, t.inst), "preempt", false)?;
                    t.state = St::Ready;
                    self.running = None;
                    self.set_task(ctx, t);
                    Ok(())
                } else {
                    self.plain(r, ts, &t.name, t.inst)
                }
            }
            0x42 | 0x62 | 0x72 => {
                let mut t = self.task(points, ctx, i)?;
                if t.state == St::Idle {
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.proc(r, ts, "T", (&t.name, t.inst), "terminate", false)?;
                t.waiting_on = None;
                t.unreleased = false;
                t.lock_wait = None;
                if t.queued > 0 {
                    // A queued activation: its instance is the task's open one now.
                    t.queued -= 1;
                    t.inst += 1;
                    t.state = St::Active;
                } else {
                    t.state = St::Idle;
                }
                if self.running == Some(ctx) {
                    self.running = None;
                }
                self.set_task(ctx, t);
                Ok(())
            }
            0x03 => {
                let inst = *self.irq_next.entry(ctx).or_insert(0);
                let name = self.irq(ctx);
                if self.irqs.len() >= MAX_NESTING {
                    let m = format!(
                        "interrupt_start of {name} while {MAX_NESTING} interrupts are open \
                         (nested, none ended): kept as an event, no ISR instance (memory stays \
                         bounded)"
                    );
                    self.diag(
                        Severity::Warning,
                        "interrupt_nesting_too_deep",
                        r.pos(),
                        Some(ts),
                        m,
                    )?;
                    return self.plain(r, ts, &name, -1);
                }
                self.irq_next.insert(ctx, inst + 1);
                self.irqs.push((ctx, inst));
                self.proc(r, ts, "I", (&name, inst), "activate", true)?;
                self.proc(r, ts, "I", (&name, inst), "start", false)
            }
            0x13 => self.interrupt_end(r, ts),
            0xB2 => {
                let t = self.task(points, ctx, i)?;
                if t.state != St::Idle {
                    return self.plain(r, ts, &t.name, t.inst);
                }
                // No open instance: the one before ended, so the miss cannot be its (its
                // lateness would be negative); it is attached to no instance.
                let m = format!(
                    "task_deadline_miss of {} while it has no open instance (instance {} ended \
                     before it): kept as an event of the task with no instance",
                    t.name, t.inst
                );
                self.diag(Severity::Warning, "miss_without_instance", r.pos(), Some(ts), m)?;
                self.plain(r, ts, &t.name, -1)
            }
            0x46 | 0x16 | 0x36 | 0x56 => self.mutex(recs, r, ts, i, points),
            0x24 => {
                self.cli_since.get_or_insert(ts);
                self.plain(r, ts, CORE, -1)
            }
            0x34 => {
                self.interrupts_enabled(Some(ts), r.pos())?;
                self.plain(r, ts, CORE, -1)
            }
            0x40 => {
                if self.blackout.is_none() {
                    self.blackout = Some((ts, r.pos(), r.file));
                }
                self.plain(r, ts, CORE, -1)
            }
            0x50 => {
                let msg = match self.blackout.take() {
                    Some((since, _, _)) => format!(
                        "blackout from {since} to {ts} ({} {}): the tracer lost the events of \
                         that span",
                        ts - since,
                        self.unit()
                    ),
                    None => format!(
                        "blackout ended at {ts} with no start logged: the tracer lost events \
                         before it, since an unknown time"
                    ),
                };
                self.diag(Severity::DataLoss, "blackout", r.pos(), Some(ts), msg)?;
                self.plain(r, ts, CORE, -1)
            }
            // FTrace_set_filter(filter, status) logs the filter with par1 = status: while
            // it is on, FTrace_safe_ipoint drops every record of that family.
            0xF0..=0xFB => {
                let fam = usize::from(code & 0x0F);
                if r.par1 != 0 {
                    if let Some(slot @ None) = self.filtered.get_mut(fam) {
                        *slot = Some((ts, r.pos(), r.file));
                    }
                } else if let Some((since, _, _)) =
                    self.filtered.get_mut(fam).and_then(Option::take)
                {
                    let m = format!(
                        "{} events (family 0x{fam:X}) were not logged from {since} to {ts} ({} \
                         {}): a filter kept them out of the log ({} par1=1, then par1=0)",
                        family_name(fam),
                        ts - since,
                        self.unit(),
                        action_of(r)
                    );
                    self.diag(Severity::Warning, "filtered_family", r.pos(), Some(ts), m)?;
                }
                self.plain(r, ts, CORE, -1)
            }
            0x10 | 0x20 => {
                match (r.par2(), self.scale) {
                    (Some(0), _) if code == 0x20 => {}
                    (Some(c), Some(Scale::PerMs(used))) if u64::from(c) != used => {
                        let m = format!(
                            "{} {c} cycles per ms differs from the first rate, {used}, which \
                             scales the whole log",
                            action_of(r)
                        );
                        self.diag(Severity::Info, "cycle_rate_changed", r.pos(), Some(ts), m)?;
                    }
                    (None, _) if code == 0x10 => self.fast_unmapped += 1,
                    _ => {}
                }
                // The kernel's demos log trace_start with the running task's context.
                if code == 0x20 && ctx != 0 {
                    let t = self.task(points, ctx, i)?;
                    return self.plain(r, ts, &t.name, t.inst);
                }
                self.plain(r, ts, CORE, -1)
            }
            0x70 => {
                match r.par2() {
                    Some(n) => self.numevents.push((n, r.pos(), r.file, ts)),
                    None => self.fast_unmapped += 1,
                }
                self.plain(r, ts, CORE, -1)
            }
            _ => {
                if record::name(code).is_none() {
                    let e = self.unknown.entry(code).or_insert((0, r.pos(), r.file));
                    e.0 += 1;
                }
                if matches!(code, 0x60 | 0x02) && r.fast() {
                    self.fast_unmapped += 1;
                }
                // GRUBSTAR logs server_active with the context of the task that woke the
                // server, CBSSTAR with 0 (no task has context 0).
                if record::par1_is_ctx(code) || (code == 0x58 && ctx != 0) {
                    let t = self.task(points, ctx, i)?;
                    self.plain(r, ts, &t.name, t.inst)
                } else if code & 0x0F == 0x03 {
                    let name = self.irq(ctx);
                    self.plain(r, ts, &name, -1)
                } else {
                    self.plain(r, ts, CORE, -1)
                }
            }
        }
    }

    fn activate(
        &mut self,
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let mut t = self.task(points, r.par1, i)?;
        if t.state != St::Idle {
            // The kernel queues the activation (a pending count): it is the activation of
            // the instance after the open one (and any queued before it), at its own time.
            let n = t.inst + t.queued + 1;
            let m = format!(
                "activate of {} while its instance {} is still active: the kernel queues it; \
                 instance {n} is activated now and starts once the instances before it ended",
                t.name, t.inst
            );
            self.diag(Severity::Info, "activate_while_active", r.pos(), Some(ts), m)?;
            self.proc(r, ts, "T", (&t.name, n), "activate", false)?;
            t.queued += 1;
            self.set_task(r.par1, t);
            return Ok(());
        }
        t.inst += 1;
        t.state = St::Active;
        t.unreleased = r.code() == 0x12;
        self.proc(r, ts, "T", (&t.name, t.inst), "activate", false)?;
        self.set_task(r.par1, t);
        Ok(())
    }

    fn dispatch(
        &mut self,
        r: &Rec,
        ts: i64,
        i: usize,
        points: &HashMap<u16, Vec<(usize, u32)>>,
    ) -> Result<()> {
        let ctx = r.par1;
        // One CPU: a task still running loses it now.
        if let Some(other) = self.running.filter(|o| *o != ctx) {
            if let Some(mut o) = self.tasks.get(&other).cloned() {
                if o.state == St::Running {
                    self.proc(r, ts, "T", (&o.name, o.inst), "preempt", true)?;
                    o.state = St::Ready;
                    self.set_task(other, o);
                }
            }
            self.running = None;
        }
        let mut t = self.task(points, ctx, i)?;
        let action = match t.state {
            St::Running => {
                self.running = Some(ctx);
                return self.plain(r, ts, &t.name, t.inst);
            }
            St::Active => "start",
            St::Ready => "resume",
            St::Waiting => {
                self.proc(r, ts, "T", (&t.name, t.inst), "release", true)?;
                "resume"
            }
            St::Idle => {
                // Running with no activation logged: a new instance, whose start the
                // derive stage reports (`unknown_prior_state`).
                t.inst += 1;
                "start"
            }
        };
        self.proc(r, ts, "T", (&t.name, t.inst), action, false)?;
        t.state = St::Running;
        t.unreleased = false;
        self.running = Some(ctx);
        if let Some(m) = t.lock_wait.filter(|m| self.held_by_other(*m, ctx).is_none()) {
            // Its mutex_lock found the mutex held; it is free now and the task runs: the
            // kernel's lock loop takes it.
            t.lock_wait = None;
            let note = self.note(r, true);
            let sem = format!("mutex_{m}");
            self.emit(r, ts, &t.name, t.inst, ("SEM", &sem, -1), "assigned", &note, None)?;
            hold(&mut t, m);
            self.owner.insert(m, ctx);
        }
        self.set_task(ctx, t);
        Ok(())
    }

    fn interrupt_end(&mut self, r: &Rec, ts: i64) -> Result<()> {
        let n = r.par1;
        let Some(at) = self.irqs.iter().rposition(|(k, _)| *k == n) else {
            let m = format!(
                "interrupt_end of IRQ{n} with no interrupt_start open for it (the log started \
                 inside it, or its start was lost): kept as an event"
            );
            self.diag(Severity::Info, "lost_interrupt_start", r.pos(), Some(ts), m)?;
            let name = self.irq(n);
            return self.plain(r, ts, &name, -1);
        };
        while self.irqs.len() > at + 1 {
            let Some((k, inst)) = self.irqs.pop() else { break };
            let name = format!("IRQ{k}");
            let m = format!(
                "IRQ{k} instance {inst}, nested in IRQ{n}, has no interrupt_end: it ends with \
                 IRQ{n}'s"
            );
            self.diag(Severity::Warning, "lost_interrupt_end", r.pos(), Some(ts), m)?;
            self.proc(r, ts, "I", (&name, inst), "terminate", true)?;
        }
        if let Some((_, inst)) = self.irqs.pop() {
            self.proc(r, ts, "I", (&format!("IRQ{n}"), inst), "terminate", false)?;
        }
        Ok(())
    }

    /// Ends the `interrupts` interval of the core opened by the first CLI, if one is open
    /// (`end`: the STI's time, `None` at the end of the log).
    pub(super) fn interrupts_enabled(&mut self, end: Option<i64>, pos: Pos) -> Result<()> {
        if let Some(since) = self.cli_since.take() {
            self.sink.span(&Span {
                entity: CORE,
                entity_type: "C",
                channel: "interrupts",
                state: "disabled",
                value: None,
                begin: since,
                end,
                core: Some(CORE),
                pos,
            })?;
        }
        Ok(())
    }
}
