-- @name preemption_pairs
-- @summary Who preempted whom: counts per (preempted, preempting) pair and core
-- @column capture_id  capture
-- @column preempted  task or ISR that lost its core
-- @column preempted_by  process that next occupied that core
-- @column core  core
-- @column preemptions  times this happened
-- @column first_ts  first time, ns
-- @column last_ts  last time, ns
-- The preempting process is the next one to occupy the core at or after the preemption
-- (BTF loggers write the preempt and the other process's start or resume at the same time;
-- FreeRTOS logs the resume a tick later). A zero-length occupancy (resumed and preempted at
-- one instant) occupies nothing: it is never the preempting process.
CREATE OR REPLACE TEMP VIEW preemption_pairs AS
WITH p AS (
    SELECT capture_id, entity AS preempted, core, ts + dur AS at
    FROM intervals
    WHERE channel = 'state' AND state = 'running' AND end_action = 'preempt' AND core IS NOT NULL
      AND entity_type IN ('T', 'I', 'ISR')
), occ AS (
    SELECT capture_id, core, ts, state AS process
    FROM intervals
    WHERE channel = 'running' AND (dur > 0 OR open)
)
SELECT p.capture_id, p.preempted, occ.process AS preempted_by, p.core, count(*) AS preemptions,
       min(p.at) AS first_ts, max(p.at) AS last_ts
FROM p
ASOF JOIN occ ON occ.capture_id = p.capture_id AND occ.core = p.core AND occ.ts >= p.at
GROUP BY ALL
ORDER BY p.capture_id, preemptions DESC, p.preempted, preempted_by;
