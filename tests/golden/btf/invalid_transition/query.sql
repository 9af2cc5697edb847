-- resume while running (line 4): warning, the machine goes on as running (a new interval at
-- 20); the instance is no longer complete. start after terminate (line 6): warning, a new
-- incomplete life cycle. activate of an active instance (line 8): the first life cycle of
-- instance 1 is closed incomplete at 60, a new one starts. Instance 1 then starts on Core_0
-- while the restarted instance 0 still runs there: core_conflict, and instance 0 is taken as
-- preempted (ready from 70: net_exec 30).
SELECT kind, position, message FROM diagnostics ORDER BY position;
SELECT instance, activate_ts, start_ts, terminate_ts, response_time, net_exec, complete
FROM instances ORDER BY instance, coalesce(activate_ts, start_ts);
