-- A capture in TA Simulator's shape (BTF 2.1.5; written by hand after the Trace Compass test
-- trace 20140219-123819.btf, entities renamed, CRLF line ends): two header blocks,
-- SCHED entities with instance -1 (processactivate, schedule, schedulepoint,
-- processterminate), tasks as the source of core events (execute, idle_execution,
-- execute_idle, idle), core lock/unlock, a semaphore made ready then free, the
-- semaphore's own queued, a comment between data lines.
-- TASK_W: activate 0, start 100, terminate 352675 on Core_2: response 352675, start delay
--   100, gross = net = 352575.
-- TASK_10MS: activate 0, start 100, preempt 250100, resume 629400, terminate 1034950:
--   gross 1034850, net 250000 + 405550 = 655550, ready 379300, one preemption.
-- TASK_1MS: activate 250000, start 250100, terminate 629300: net 379200.
-- FUNC_EXEC instance 0 (in TASK_10MS) is suspended with its task (its own suspend written
--   before the preempt): net 655550, suspended 379300.
-- SEM_A: free [0,125100) (ready, then free: one interval), full [125100,352625) then free
--   (open); TASK_W's request is assigned at once: wait 0, hold 227525, not contended.
-- No diagnostics: ready-then-free and the semaphore's queued are what BTF 2.1.5 shows.
SELECT entity, instance, activate_ts, start_ts, terminate_ts, core, response_time, start_delay,
       gross_exec, net_exec, ready_time, preemptions, migrations, complete
FROM instances ORDER BY entity, instance;
SELECT entity, state, value, ts, dur, start_action, end_action, open
FROM intervals WHERE entity_type = 'SEM' ORDER BY ts;
SELECT semaphore, process, process_instance, request_ts, assigned_ts, released_ts, wait, hold,
       contended
FROM lock_requests;
SELECT name, type, parent FROM entities ORDER BY name;
SELECT json_extract_string(meta, '$.version') AS version, json_extract_string(meta, '$.creator') AS creator,
       time_unit, ts_min, ts_max, event_count
FROM captures;
SELECT count(*) AS diagnostics FROM diagnostics;
