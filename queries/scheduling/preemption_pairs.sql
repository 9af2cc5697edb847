-- @name preemption_pairs
-- @summary Who preempted whom: counts per (preempted, preempting) pair and core
-- @column capture_id  capture
-- @column preempted  task or ISR that lost its core
-- @column preempted_by  process that next occupied that core (NULL when the trace does not show one)
-- @column core  core
-- @column preemptions  times this happened
-- @column first_ts  first time, ns
-- @column last_ts  last time, ns
-- The preempting process is the next one to occupy the core at or after the preemption
-- (BTF loggers write the preempt and the other process's start or resume at the same time;
-- FreeRTOS logs the resume a tick later). A zero-length occupancy (resumed and preempted at
-- one instant) occupies nothing: it is never the preempting process. preempted_by is NULL
-- when the trace does not say who it was: nothing occupied the core after the preemption,
-- or the next occupant was the preempted instance itself, resumed there (another instance
-- of the same task is a real answer).
-- A preempt that is an instance's first event in the capture (the capture began while it
-- ran) has no running interval before it: it is found among the instances whose activate
-- and start the capture lacks, as the action that entered their first state, on the core
-- of the preempt event itself (the instance may resume on another core, or never).
-- Preemptions and occupants come from one scan of the process states (an occupant's
-- instance is needed to tell a resume of the preempted instance itself).
CREATE OR REPLACE TEMP VIEW preemption_pairs AS
WITH r AS MATERIALIZED (
    SELECT capture_id, entity, instance, core, ts, dur, open, state, end_action
    FROM intervals
    WHERE channel = 'state' AND state IN ('running', 'polling') AND core IS NOT NULL
      AND entity_type IN ('T', 'I', 'ISR')
), unknown_start AS MATERIALIZED (
    SELECT capture_id, entity, instance FROM instances
    WHERE activate_ts IS NULL AND start_ts IS NULL AND preemptions > 0
      AND entity_type IN ('T', 'I', 'ISR')
), first_state AS (
    SELECT capture_id, entity AS preempted, instance, min(i.ts) AS at
    FROM intervals i JOIN unknown_start u USING (capture_id, entity, instance)
    WHERE i.channel = 'state'
    GROUP BY ALL
    HAVING arg_min(i.start_action, i.ts) = 'preempt'
), first_preempt AS (
    -- Few rows, early in the capture: the join's bounds on ts skip most of events.
    SELECT f.capture_id, f.preempted, f.instance, any_value(e.core) AS core, f.at
    FROM first_state f
    LEFT JOIN events e ON e.capture_id = f.capture_id AND e.target = f.preempted
        AND e.target_instance = f.instance AND e.ts = f.at AND e.action = 'preempt'
    GROUP BY f.capture_id, f.preempted, f.instance, f.at
), p AS (
    SELECT capture_id, entity AS preempted, instance, core, ts + dur AS at
    FROM r WHERE state = 'running' AND end_action = 'preempt'
    UNION ALL
    SELECT * FROM first_preempt
), occ AS (
    SELECT capture_id, core, ts, entity AS process, instance FROM r WHERE dur > 0 OR open
)
SELECT p.capture_id, p.preempted,
       CASE WHEN occ.process = p.preempted AND occ.instance = p.instance THEN NULL
            ELSE occ.process END AS preempted_by,
       p.core, count(*) AS preemptions, min(p.at) AS first_ts, max(p.at) AS last_ts
FROM p
ASOF LEFT JOIN occ ON occ.capture_id = p.capture_id AND occ.core = p.core AND occ.ts >= p.at
GROUP BY ALL
ORDER BY p.capture_id, preemptions DESC, p.preempted, preempted_by NULLS LAST, p.core;
