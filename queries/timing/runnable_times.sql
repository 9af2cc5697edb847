-- @name runnable_times
-- @summary Execution statistics per runnable, with the task that runs it (ns)
-- @column capture_id  capture
-- @column runnable  runnable name
-- @column task  task or ISR that runs it (its first caller)
-- @column instances  complete runs (start and terminate in the capture)
-- @column instances_left_out  runs cut by the capture's start or end
-- @column net_exec_min  shortest time running (not suspended), ns
-- @column net_exec_avg  mean time running (1 decimal), ns
-- @column net_exec_p99  99th percentile of time running, ns
-- @column net_exec_max  longest time running, ns
-- @column net_exec_total  time running over all runs, complete or not, ns
-- @column gross_exec_max  longest terminate - start (includes suspension), ns
-- @column suspensions  times a run was suspended because its task lost the core
-- A runnable runs while its task runs; when the task is preempted (or waits) the runnable
-- is suspended with it, whether or not the trace logs the runnable's own suspend.
CREATE OR REPLACE TEMP VIEW runnable_times AS
SELECT
    i.capture_id,
    i.entity AS runnable,
    any_value(e.parent) AS task,
    count(*) FILTER (WHERE complete) AS instances,
    count(*) FILTER (WHERE NOT complete) AS instances_left_out,
    min(net_exec) FILTER (WHERE complete) AS net_exec_min,
    round(avg(net_exec) FILTER (WHERE complete), 1) AS net_exec_avg,
    quantile_disc(net_exec, 0.99) FILTER (WHERE complete) AS net_exec_p99,
    max(net_exec) FILTER (WHERE complete) AS net_exec_max,
    sum(net_exec) AS net_exec_total,
    max(gross_exec) FILTER (WHERE complete) AS gross_exec_max,
    sum(preemptions) AS suspensions
FROM instances i
LEFT JOIN entities e ON e.capture_id = i.capture_id AND e.name = i.entity
WHERE i.entity_type = 'R'
GROUP BY i.capture_id, i.entity
ORDER BY i.capture_id, runnable;
