-- T1 holds SEM_X from 20 to 50 (wait 0, hold 30). T2 asks at 30, the semaphore goes
-- overfull, T2 polls until T1 releases at 50: wait 50-30 = 20, hold 70-50 = 20, contended.
-- SEM_X: free [0,20) full [20,30) overfull [30,50) full [50,70) free [70,80] (open at the end).
-- T2: net = (30-15) + (80-50) = 45, polling 20, response 80-5 = 75.
SELECT semaphore, process, process_instance, request_ts, assigned_ts, released_ts, wait, hold, contended
FROM lock_requests ORDER BY request_ts;
SELECT state, value, ts, dur, start_action, end_action, open
FROM intervals WHERE entity = 'SEM_X' ORDER BY ts;
SELECT entity, core, response_time, net_exec, polling_time, complete FROM instances ORDER BY entity;
