//! The end of a run: the instances still under way when the trace was cut
//! ([`super::SynthTruth::cut`]) and the whole truth handed back.
use super::*;

impl Truth {
    /// The instances under way at `end`, the last line's time: what the trace cut.
    pub(super) fn cut_instances(&self, end: i64) -> Vec<TruthCutInstance> {
        let mut cut = Vec::new();
        for (p, pt) in self.procs.iter().enumerate() {
            let proc_cut = |activate, o: Option<&OpenProc>, inst| TruthCutInstance {
                entity: self.proc_names[p].clone(),
                entity_type: self.proc_codes[p],
                instance: inst,
                state: o.map_or("active", |o| o.state.name()),
                activate_ts: activate,
                start_ts: o.and_then(|o| o.start),
                core: o.and_then(|o| o.first_core).map(|c| self.core_names[c].clone()),
                net_exec: o.map_or(0, |o| o.time_in(Ps::Running, end)),
                ready_time: o.map_or(0, |o| o.time_in(Ps::Ready, end)),
                waiting_time: o.map_or(0, |o| o.time_in(Ps::Waiting, end)),
                polling_time: o.map_or(0, |o| o.time_in(Ps::Polling, end)),
                parking_time: o.map_or(0, |o| o.time_in(Ps::Parking, end)),
                preemptions: o.map_or(0, |o| o.preemptions),
                migrations: o.map_or(0, |o| o.migrations),
                task: None,
            };
            let Some(o) = pt.cur.as_ref() else { continue };
            let Some(act) = pt.acts.get(o.act) else { continue };
            cut.push(proc_cut(o.activate, Some(o), act.instance));
            for &(t, a) in &pt.pending {
                if let Some(act) = pt.acts.get(a) {
                    cut.push(proc_cut(t, None, act.instance));
                }
            }
            if let Some(r) = pt.run.as_ref() {
                let tail = end - r.since;
                cut.push(TruthCutInstance {
                    entity: self.run_names[r.runnable].clone(),
                    entity_type: "R",
                    instance: r.instance,
                    state: if r.running { "running" } else { "suspended" },
                    activate_ts: r.start,
                    start_ts: Some(r.start),
                    core: Some(self.core_names[r.core].clone()),
                    net_exec: r.ran + if r.running { tail } else { 0 },
                    ready_time: r.ready + if r.running { 0 } else { tail },
                    waiting_time: 0,
                    polling_time: 0,
                    parking_time: 0,
                    preemptions: r.suspends,
                    migrations: 0,
                    task: Some((self.proc_names[p].clone(), act.instance)),
                });
            }
        }
        cut.sort_by(|a, b| (&a.entity, a.instance).cmp(&(&b.entity, b.instance)));
        cut
    }

    /// Everything, with the implicit deadlines; `end` is the time of the last line (where
    /// the trace closes what is still open).
    pub(in crate::synth) fn finish(mut self, end: i64) -> SynthTruth {
        let cut = self.cut_instances(end);
        for c in 0..self.occupied.len() {
            self.vacate(c, end);
        }
        for st in &self.sems {
            if !st.state.is_empty() {
                self.sem_states.push(TruthSemState {
                    semaphore: st.name.clone(),
                    state: st.state,
                    count: st.count,
                    start: st.since,
                    end,
                    start_action: st.since_action,
                    end_action: None,
                    open: true,
                });
            }
        }
        // Who blocked whom, in the order they got the semaphore.
        for (i, b) in self.blockers.iter().enumerate() {
            let mut by: Vec<&TruthLock> = b.iter().map(|&h| &self.locks[h]).collect();
            by.sort_by(|x, y| {
                (x.assigned_ts, &x.process, x.process_instance).cmp(&(
                    y.assigned_ts,
                    &y.process,
                    y.process_instance,
                ))
            });
            let by: Vec<(String, u64)> =
                by.iter().map(|h| (h.process.clone(), h.process_instance)).collect();
            self.locks[i].blocked_by = by;
        }
        // Time to the next activation of the same process; the last one uses the period
        // before it.
        let mut deadlines = std::collections::HashMap::new();
        for (p, pt) in self.procs.iter().enumerate() {
            let a = &pt.acts;
            for (k, act) in a.iter().enumerate() {
                let next = a.get(k + 1).map(|n| n.activate_ts - act.activate_ts);
                let prev = k
                    .checked_sub(1)
                    .and_then(|j| a.get(j))
                    .map(|b| act.activate_ts - b.activate_ts);
                if let Some(d) = next.or(prev) {
                    deadlines.insert((p, act.instance), d);
                }
            }
        }
        let index: std::collections::HashMap<&str, usize> =
            self.proc_names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
        for i in &mut self.done {
            if i.entity_type != "R" {
                i.deadline = index
                    .get(i.entity.as_str())
                    .and_then(|&p| deadlines.get(&(p, i.instance)).copied());
            }
        }
        let processes = self
            .procs
            .iter()
            .enumerate()
            .map(|(p, pt)| TruthProcess {
                name: self.proc_names[p].clone(),
                entity_type: self.proc_codes[p],
                core: self.core_names[self.cores_of[p]].clone(),
                period: self.periods[p],
                dropped_activations: pt.dropped,
            })
            .collect();
        let mut occupancy = self.occupancy;
        occupancy.sort_by(|a, b| (&a.core, a.start).cmp(&(&b.core, b.start)));
        SynthTruth {
            instances: self.done,
            processes,
            activations: self.procs.into_iter().flat_map(|pt| pt.acts).collect(),
            lock_requests: self.locks,
            preemptions: self.preemptions,
            occupancy,
            semaphore_states: self.sem_states,
            signal_writes: self.writes,
            waits: self.waits,
            cut,
        }
    }
}
