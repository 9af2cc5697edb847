//! Ground truth of the semaphores and signals: each lock request, its contention, grant and
//! release, the semaphores' states and the signal writes, recorded where the simulator decides
//! them.
use super::*;

impl Truth {
    /// Semaphore `s` entered `state` with `count` slots taken at `t`, by its `action`.
    pub(in crate::synth) fn sem_state(
        &mut self,
        s: usize,
        state: SemState,
        count: i64,
        action: &'static str,
        t: i64,
    ) {
        let name = sem_state_name(state);
        let st = &mut self.sems[s];
        if st.state == name && st.count == count {
            return;
        }
        if !st.state.is_empty() {
            self.sem_states.push(TruthSemState {
                semaphore: st.name.clone(),
                state: st.state,
                count: st.count,
                start: st.since,
                end: t,
                start_action: st.since_action,
                end_action: Some(action),
                open: false,
            });
        }
        st.state = name;
        st.count = count;
        st.since = t;
        st.since_action = action;
    }

    /// Process `p` (instance `inst`) asked for semaphore `s` at `t`; `held`: no slot was
    /// free, so the holders block it.
    pub(in crate::synth) fn lock_request(
        &mut self,
        p: usize,
        inst: u64,
        s: usize,
        t: i64,
        held: bool,
    ) {
        let i = self.locks.len();
        let st = &mut self.sems[s];
        let blockers = if held {
            st.waiting.push(i);
            st.holders.clone()
        } else {
            Vec::new()
        };
        self.blockers.push(blockers);
        self.locks.push(TruthLock {
            semaphore: st.name.clone(),
            process: self.proc_names[p].clone(),
            process_instance: inst,
            request_ts: t,
            assigned_ts: None,
            released_ts: None,
            contended: false,
            queued: false,
            blocked_by: Vec::new(),
        });
        self.procs[p].lock = Some(i);
    }

    /// The trace said the open request of `p` had to wait (`overfull`, `waiting`); `queued`:
    /// it waits passively (`queued`).
    pub(in crate::synth) fn lock_contended(&mut self, p: usize, queued: bool) {
        if let Some(l) = self.procs[p].lock.and_then(|i| self.locks.get_mut(i)) {
            l.contended = true;
            l.queued |= queued;
        }
    }

    /// The open request of `p` got semaphore `s` at `t`: the waiting ones now wait for it too.
    pub(in crate::synth) fn lock_assigned(&mut self, p: usize, s: usize, t: i64) {
        let Some(i) = self.procs[p].lock else { return };
        self.locks[i].assigned_ts = Some(t);
        let st = &mut self.sems[s];
        st.holders.push(i);
        st.waiting.retain(|&w| w != i);
        for &w in &st.waiting {
            self.blockers[w].push(i);
        }
    }

    /// `p` released semaphore `s` at `t`.
    pub(in crate::synth) fn lock_released(&mut self, p: usize, s: usize, t: i64) {
        let Some(i) = self.procs[p].lock.take() else { return };
        self.locks[i].released_ts = Some(t);
        self.sems[s].holders.retain(|&h| h != i);
    }

    /// Runnable `r` (instance `rinst`) wrote `value` to signal `sig` at `t`.
    pub(in crate::synth) fn signal_write(
        &mut self,
        sig: usize,
        t: i64,
        value: i64,
        r: usize,
        rinst: u64,
    ) {
        self.writes.push(TruthSignalWrite {
            signal: self.sig_names[sig].clone(),
            ts: t,
            value,
            writer: self.run_names[r].clone(),
            writer_instance: rinst,
        });
    }
}

pub(super) fn sem_state_name(s: SemState) -> &'static str {
    match s {
        SemState::Free => "free",
        SemState::Used => "used",
        SemState::Full => "full",
        SemState::Overfull => "overfull",
    }
}
