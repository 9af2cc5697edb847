-- FreeRTOS logger style: tasks are created with a preempt (no activate), then only ever
-- preempt/resume; the source of a resume is the task that ran before. Cores are resolved
-- from the source (Core_0), from the previous task (it ran on Core_0), or from the task's
-- own last core (the [0/0000] source at 3 us is unknown).
-- Runner: ready [1,6) running [6,10) ready [10,21) running [21,21] (open)
-- IDLE:   ready [2,3) running [3,5) ready [5,11) running [11,20) ready [20,21] (open)
-- Instances are incomplete (no activate, no terminate); net_exec counts what was seen.
SELECT entity, state, ts, dur, core, start_action, end_action, open
FROM intervals WHERE channel = 'state' ORDER BY entity, ts;
SELECT entity, state, ts, dur, open FROM intervals WHERE channel = 'running' ORDER BY ts;
SELECT entity, activate_ts, start_ts, terminate_ts, core, response_time, net_exec, ready_time,
       preemptions, complete
FROM instances ORDER BY entity;
SELECT severity, kind, count(*) AS n FROM diagnostics GROUP BY ALL ORDER BY kind;
