-- @name preemption_pairs
-- @summary Who preempted whom: counts per (preempted, preempting) pair and core
-- @include preemption_instances
-- @column capture_id  capture
-- @column preempted  task or ISR that lost its core
-- @column preempted_by  process that next occupied that core (NULL when the trace does not show one)
-- @column core  core
-- @column preemptions  times this happened
-- @column first_ts  first time, ns
-- @column last_ts  last time, ns
-- The preemptions of preemption_instances (one row each: who took the core, and how it is
-- found), counted per pair and core.
CREATE OR REPLACE TEMP VIEW preemption_pairs AS
SELECT capture_id, preempted, preempted_by, core, count(*) AS preemptions,
       min(ts) AS first_ts, max(ts) AS last_ts
FROM preemption_instances
GROUP BY ALL
ORDER BY capture_id, preemptions DESC, preempted, preempted_by NULLS LAST, core;
