-- R1 (explicit suspend/resume): running [10,30) suspended [30,50) running [50,70).
--   The task's preempt at 30 comes first in the file and suspends R1; the explicit suspend
--   that follows at the same time is folded in (so the actions named are the task's).
--   net 20+20 = 40, suspended (ready_time) 20, one preemption, response = 70-10 = 60.
-- R2 (no runnable events while preempted): running [5,15) suspended [15,25) running [25,40).
--   net 10+15 = 25, ready_time 10, response 35.
-- Runnable instances: activate_ts = start_ts (a runnable is activated by its start).
SELECT entity, state, ts, dur, core, start_action, end_action
FROM intervals WHERE entity_type = 'R' ORDER BY entity, ts;
SELECT entity, entity_type, activate_ts, start_ts, terminate_ts, core, response_time, start_delay,
       net_exec, ready_time, waiting_time, preemptions, migrations, complete
FROM instances WHERE entity_type = 'R' ORDER BY entity;
SELECT name, type, parent FROM entities WHERE type = 'R' ORDER BY name;
SELECT count(*) AS diagnostics FROM diagnostics;
