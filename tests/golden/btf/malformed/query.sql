-- Line 5 has 5 fields and line 6 a non-numeric time: both skipped, one error row each.
-- Line 8 goes back in time (25 < 30): kept in events with its own time, its state change
-- takes effect at 30 (ready [30,30) running [30,40)). Line 9's instance 'zero' is taken as -1,
-- so its terminate finds no running instance -1: unknown_prior_state, and instance 0 stays
-- running to the end (open).
SELECT seq, ts, action, target_instance FROM events ORDER BY seq;
SELECT severity, kind, position, ts, message, count FROM diagnostics ORDER BY position, kind;
SELECT instance, state, ts, dur, open FROM intervals WHERE channel = 'state' ORDER BY instance, ts;
