-- @name execution_times
-- @summary Net and gross execution time per task, ISR and runnable (ns)
-- @column capture_id  capture
-- @column entity  task, ISR or runnable
-- @column entity_type  T, I, ISR or R
-- @column instances  complete instances
-- @column instances_left_out  incomplete instances (not in min/avg/max)
-- @column net_exec_min  smallest net execution time (time running), ns
-- @column net_exec_avg  mean net execution time (1 decimal), ns
-- @column net_exec_max  largest net execution time, ns
-- @column net_exec_total  time running over all instances, complete or not, ns
-- @column gross_exec_min  smallest gross execution time (terminate - first start), ns
-- @column gross_exec_avg  mean gross execution time (1 decimal), ns
-- @column gross_exec_max  largest gross execution time, ns
-- net_exec = time in state running (for runnables: running, not suspended); gross_exec =
-- terminate - first start, so it includes preemption and blocking. min/avg/max use
-- complete instances only; net_exec_total counts every instance's running time, which is
-- what a CPU budget needs.
CREATE OR REPLACE TEMP VIEW execution_times AS
SELECT
    capture_id,
    entity,
    any_value(entity_type) AS entity_type,
    count(*) FILTER (WHERE complete) AS instances,
    count(*) FILTER (WHERE NOT complete) AS instances_left_out,
    min(net_exec) FILTER (WHERE complete) AS net_exec_min,
    round(avg(net_exec) FILTER (WHERE complete), 1) AS net_exec_avg,
    max(net_exec) FILTER (WHERE complete) AS net_exec_max,
    sum(net_exec) AS net_exec_total,
    min(gross_exec) FILTER (WHERE complete) AS gross_exec_min,
    round(avg(gross_exec) FILTER (WHERE complete), 1) AS gross_exec_avg,
    max(gross_exec) FILTER (WHERE complete) AS gross_exec_max
FROM instances
GROUP BY capture_id, entity
ORDER BY capture_id, entity;
