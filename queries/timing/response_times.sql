-- @name response_times
-- @summary Response time, start delay and execution time statistics per task and ISR (ns)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column entity_type  T, I or ISR
-- @column instances  complete instances the statistics are computed over
-- @column instances_left_out  instances without their activate or terminate in the capture, or resynchronised (not in the statistics)
-- @column response_time_min  smallest of terminate - activate, ns
-- @column response_time_avg  mean (1 decimal) of terminate - activate, ns
-- @column response_time_p50  median of terminate - activate, ns
-- @column response_time_p90  90th percentile of terminate - activate, ns
-- @column response_time_p99  99th percentile of terminate - activate, ns
-- @column response_time_max  largest of terminate - activate, ns
-- @column response_time_stddev  sample standard deviation (1 decimal) of terminate - activate, ns
-- @column start_delay_min  smallest of first start - activate, ns
-- @column start_delay_avg  mean (1 decimal) of first start - activate, ns
-- @column start_delay_p50  median of first start - activate, ns
-- @column start_delay_p90  90th percentile of first start - activate, ns
-- @column start_delay_p99  99th percentile of first start - activate, ns
-- @column start_delay_max  largest of first start - activate, ns
-- @column start_delay_stddev  sample standard deviation (1 decimal) of first start - activate, ns
-- @column net_exec_min  smallest of time running, ns
-- @column net_exec_avg  mean (1 decimal) of time running, ns
-- @column net_exec_p50  median of time running, ns
-- @column net_exec_p90  90th percentile of time running, ns
-- @column net_exec_p99  99th percentile of time running, ns
-- @column net_exec_max  largest of time running, ns
-- @column net_exec_stddev  sample standard deviation (1 decimal) of time running, ns
-- @column gross_exec_min  smallest of terminate - first start, ns
-- @column gross_exec_avg  mean (1 decimal) of terminate - first start, ns
-- @column gross_exec_p50  median of terminate - first start, ns
-- @column gross_exec_p90  90th percentile of terminate - first start, ns
-- @column gross_exec_p99  99th percentile of terminate - first start, ns
-- @column gross_exec_max  largest of terminate - first start, ns
-- @column gross_exec_stddev  sample standard deviation (1 decimal) of terminate - first start, ns
-- Definitions (AMALTHEA): response_time = terminate - activate; start_delay (initial
-- pending time) = first start - activate; net_exec = time in state running; gross_exec =
-- terminate - first start. Only complete instances count (activate and terminate both in
-- the capture, no resynchronisation); traces without activations (the FreeRTOS logger)
-- therefore give instances = 0 and say how many were left out instead of guessing.
-- Each metric's three percentiles come from one sort (a list quantile). Percentiles are
-- exact observed values (quantile_disc: p90 is the smallest value that at
-- least 90% of the instances do not exceed), not interpolated.
-- Tracealyzer's "response time" of a task is the same span (ready to finished); its
-- "execution time" is net_exec.
CREATE OR REPLACE TEMP VIEW response_times AS
WITH s AS (
    -- Statistics over complete instances only: filtering once before aggregating is about
    -- twice as fast as a FILTER clause on each of the 26 aggregates.
    SELECT
        capture_id,
        entity,
        any_value(entity_type) AS entity_type,
        count(*) AS instances,
        min(response_time) AS response_time_min,
        round(avg(response_time), 1) AS response_time_avg,
        quantile_disc(response_time, [0.5, 0.9, 0.99]) AS response_time_q,
        max(response_time) AS response_time_max,
        round(stddev_samp(response_time), 1) AS response_time_stddev,
        min(start_delay) AS start_delay_min,
        round(avg(start_delay), 1) AS start_delay_avg,
        quantile_disc(start_delay, [0.5, 0.9, 0.99]) AS start_delay_q,
        max(start_delay) AS start_delay_max,
        round(stddev_samp(start_delay), 1) AS start_delay_stddev,
        min(net_exec) AS net_exec_min,
        round(avg(net_exec), 1) AS net_exec_avg,
        quantile_disc(net_exec, [0.5, 0.9, 0.99]) AS net_exec_q,
        max(net_exec) AS net_exec_max,
        round(stddev_samp(net_exec), 1) AS net_exec_stddev,
        min(gross_exec) AS gross_exec_min,
        round(avg(gross_exec), 1) AS gross_exec_avg,
        quantile_disc(gross_exec, [0.5, 0.9, 0.99]) AS gross_exec_q,
        max(gross_exec) AS gross_exec_max,
        round(stddev_samp(gross_exec), 1) AS gross_exec_stddev
    FROM instances
    -- `(... IN ...) IS TRUE`: the rows of the bare IN list, filtered inside the Parquet scan
    -- (which then skips the pages of other entity types) rather than after it.
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE AND complete
    GROUP BY capture_id, entity
), every AS (
    -- Every task and ISR, even one without a complete instance (its statistics NULL).
    SELECT capture_id, entity, any_value(entity_type) AS entity_type,
           count(*) FILTER (WHERE NOT complete) AS instances_left_out
    FROM instances WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE GROUP BY capture_id, entity
)
SELECT
    capture_id, entity, every.entity_type, coalesce(instances, 0) AS instances, instances_left_out,
    response_time_min, response_time_avg, response_time_q[1] AS response_time_p50, response_time_q[2] AS response_time_p90, response_time_q[3] AS response_time_p99,
    response_time_max, response_time_stddev,
    start_delay_min, start_delay_avg, start_delay_q[1] AS start_delay_p50, start_delay_q[2] AS start_delay_p90, start_delay_q[3] AS start_delay_p99,
    start_delay_max, start_delay_stddev,
    net_exec_min, net_exec_avg, net_exec_q[1] AS net_exec_p50, net_exec_q[2] AS net_exec_p90, net_exec_q[3] AS net_exec_p99,
    net_exec_max, net_exec_stddev,
    gross_exec_min, gross_exec_avg, gross_exec_q[1] AS gross_exec_p50, gross_exec_q[2] AS gross_exec_p90, gross_exec_q[3] AS gross_exec_p99,
    gross_exec_max, gross_exec_stddev
FROM every LEFT JOIN s USING (capture_id, entity)
ORDER BY capture_id, entity;
