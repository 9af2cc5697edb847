-- The FreeRTOS trace logger's older labels name a task after the core of each event:
-- [0/0005]CS on core 0 and [1/0005]CS on core 1 are the one task CS[5] (its current exporter
-- writes CS[5], as this file's own STI notes do), and a resume's source [c/id]name (the task
-- switched out, [c/0000] for none) is the event's core, Core_c. So CS[5] migrates:
-- CS[5]:    ready [1,3) running [3,6) Core_0, ready [6,8), running [8,12) Core_1, ready [12,12]
-- IDLE0[2]: ready [2,6) running [6,12] Core_0 (open)
-- IDLE1[3]: ready [2,3) running [3,8) Core_1, ready [8,12), running [12,12] (open)
-- CS[5]: net_exec 7 us, ready_time 2+2+0 us, one migration, preemptions 3 (the first, its
-- create, counted as a preempt like any first-seen one: unknown_prior_state).
SELECT DISTINCT target AS task FROM events WHERE target_type = 'T' ORDER BY task;
SELECT ts, source, target, action, core FROM events WHERE action = 'resume' ORDER BY ts, target;
SELECT entity, state, ts, dur, core, open
FROM intervals WHERE channel = 'state' ORDER BY entity, ts;
SELECT entity AS core, state AS task, ts, dur, open
FROM intervals WHERE channel = 'running' ORDER BY entity, ts;
SELECT entity, core, net_exec, ready_time, preemptions, migrations, complete
FROM instances ORDER BY entity;
SELECT severity, kind, count(*) AS n FROM diagnostics GROUP BY ALL ORDER BY kind;
