-- FreeRTOS logger style: tasks are created with a preempt noted `create pri:N` (no
-- activate; ready, having run nowhere: no preemption), then only ever preempt/resume. Its
-- older labels [core/id]name are the task name[id] ([0/0001]Runner is Runner[1]), and as the
-- source of a resume (the task switched out, [0/0000] for none) the core, Core_0.
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
