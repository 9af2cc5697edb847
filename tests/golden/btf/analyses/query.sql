-- Every predefined analysis on a trace small enough to check by hand (times in ns).
-- TASK_A (Core_0) is activated every 100 ns: instances
--   0: act 0,   start 10,  polls 20..40 for SEM_S (held by TASK_B), terminate 50:
--      response 50, start_delay 10, net 10+10 = 20, gross 40, polling 20
--   1: act 100, start 100, preempted by ISR_X 120..130, terminate 170:
--      response 70, start_delay 0, net 20+40 = 60, gross 70, ready 10, 1 preemption
--   2: act 200, start 220, terminate 330: response 130, start_delay 20, net = gross = 110
--   3: act 300, start 330, terminate 360: response 60, start_delay 30, net = gross = 30
-- response_time [50 70 130 60]: min 50, avg 77.5, p50 60, p90 = p99 = max 130 (nearest rank),
--   stddev_samp = sqrt(((-27.5)^2 + (-7.5)^2 + 52.5^2 + (-17.5)^2) / 3) = sqrt(1291.67) = 35.9
-- start_delay [10 0 20 30]: min 0, avg 15, p50 10, max 30, stddev sqrt(500/3) = 12.9
-- net_exec [20 60 110 30]: min 20, avg 55, p50 30, max 110, stddev sqrt(4900/3) = 40.4
-- gross_exec [40 70 110 30]: min 30, avg 62.5, p50 40, max 110, stddev sqrt(3875/3) = 35.9
SELECT entity, instances, instances_left_out, response_time_min, response_time_avg, response_time_p50,
       response_time_p90, response_time_p99, response_time_max, response_time_stddev,
       start_delay_min, start_delay_avg, start_delay_p50, start_delay_max, start_delay_stddev,
       net_exec_min, net_exec_avg, net_exec_p50, net_exec_max, net_exec_stddev,
       gross_exec_min, gross_exec_avg, gross_exec_p50, gross_exec_max, gross_exec_stddev
FROM response_times ORDER BY entity;
-- Implicit deadlines = activation period = 100: only instance 2 is late, 330 - (200 + 100) = 30.
-- TASK_B and ISR_X are activated once: no period, no deadline.
SELECT * FROM deadline_misses;
SELECT * FROM deadline_summary;
-- A query-time deadline file `TASK_*,60` (here: the table it fills): instance 1 is late by
-- 170 - 160 = 10, instance 2 by 330 - 260 = 70; instance 3 exactly meets it (lateness 0);
-- TASK_B (response 60) matches the glob and meets it too.
INSERT INTO param_deadlines VALUES ('TASK_*', 60);
SELECT entity, instance, deadline, deadline_source, lateness FROM deadline_misses;
SELECT * FROM deadline_summary;
-- net_exec total = 220; TASK_B: 60; ISR_X: 10; R1: 100..165 minus 120..130 = 55, gross 65.
SELECT * FROM execution_times ORDER BY entity;
-- Activations 0, 100, 200, 300: distances 100 each, jitter 0.
-- Starts 10, 100, 220, 330: distances 90, 120, 110: min 90, avg 106.7, max 120, jitter 30.
SELECT * FROM activation_jitter ORDER BY entity;
SELECT * FROM runnable_times;
SELECT * FROM preemptions ORDER BY entity;
-- ISR_X preempted TASK_A once (R1, its runnable, is suspended with it but is no process).
SELECT * FROM preemption_pairs;
-- TASK_A instance 0 polled 20 ns for SEM_S; TASK_B held it 10..40.
SELECT * FROM blocking ORDER BY entity;
SELECT * FROM blocking_instances;
-- SEM_S: TASK_B waits 0 and holds 30; TASK_A waits 20 (contended) and holds 5.
-- Locked (full or overfull): 10..45 = 35; overfull 20..40 = 20.
SELECT * FROM semaphore_contention;
-- Core_0 busy: [10,50) [100,170) (TASK_A, ISR_X, TASK_A) [220,330) [330,360);
-- Core_1: [0,60). Windows of 100 from 0 to 400 (the capture's span).
SELECT * FROM cpu_load(window_ns := 100);
-- SPEED: 10 from 100 to 150, 20 from 150 to the end (400).
SELECT * FROM signal_values;
-- The broken line is the only diagnostic.
SELECT * FROM data_loss;
