-- @name preemption_instances
-- @summary One row per preemption of a task or ISR instance: when, on which core, and which process instance took the core
-- @column capture_id  capture
-- @column preempted  task or ISR that lost its core
-- @column instance  its instance
-- @column core  core
-- @column ts  the preemption, ns
-- @column preempted_by  process that next occupied that core (NULL when the trace does not show one)
-- @column preempted_by_instance  its instance
-- The preempting process is the next one to occupy the core at or after the preemption
-- (BTF loggers write the preempt and the other process's start or resume at the same time;
-- FreeRTOS logs the resume a tick later). A zero-length occupancy (resumed and preempted at
-- one instant) occupies nothing: it is never the preempting process. preempted_by is NULL
-- when the trace does not say who it was: nothing occupied the core after the preemption,
-- or the next occupant was the preempted instance itself, resumed there (another instance
-- of the same task is a real answer). A preemption of an instance that ran on no known core
-- (the trace never says where) is a row too, its core and preempted_by NULL.
-- A preempt that is an instance's first event in the capture (the capture began while it
-- ran) has no running interval before it: it is found among the instances whose activate
-- and start the capture lacks, as the action that entered their first state, on the core
-- of the preempt event itself (the instance may resume on another core, or never); not the
-- FreeRTOS trace logger's creation of a task, a first preempt noted `create pri:N` (or
-- `task_create`).
-- Preemptions and occupants come from one scan of the process states (an occupant's
-- instance is needed to tell a resume of the preempted instance itself). When two
-- occupancies of the core begin at the same instant after a preemption (a core_conflict),
-- the one first by name, then instance, is the preempting process.
-- How: an occupant that begins at the preemption's own instant (BTF writes both at one
-- time) is found by an equality join, with no sort; only the preemptions left (FreeRTOS's
-- tick later, nothing after it) take a sorted (ASOF) join over the occupancies of their
-- cores, which most BTF traces never need.
-- Who preempted the instances that missed their deadlines (per deadline_source: an
-- instance whose miss the trace records has a judged row too):
--   SELECT m.entity, m.instance, m.deadline_source, p.preempted_by, count(*) FROM deadline_misses m
--   JOIN preemption_instances p ON p.capture_id = m.capture_id AND p.preempted = m.entity
--    AND p.instance = m.instance GROUP BY ALL;
CREATE OR REPLACE TEMP VIEW preemption_instances AS
WITH r AS MATERIALIZED (
    -- `(... IN ...) IS TRUE` selects what `... IN ...` does, inside the Parquet scan (a bare
    -- IN list there only prunes by statistics, then filters row by row).
    SELECT capture_id, entity, instance, core, ts,
           CASE WHEN state = 'running' AND end_action = 'preempt' THEN ts + dur END AS preempt_ts,
           dur > 0 OR open AS occupies
    FROM intervals
    WHERE channel = 'state' AND (state IN ('running', 'polling')) IS TRUE
      AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), unknown_start AS MATERIALIZED (
    SELECT capture_id, entity, instance FROM instances
    WHERE activate_ts IS NULL AND start_ts IS NULL AND preemptions > 0
      AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), first_state AS (
    SELECT capture_id, entity AS preempted, instance, min(i.ts) AS at
    FROM intervals i JOIN unknown_start u USING (capture_id, entity, instance)
    WHERE i.channel = 'state'
    GROUP BY ALL
    HAVING arg_min(i.start_action, i.ts) = 'preempt'
), first_preempt AS (
    -- Few rows, early in the capture: the join's bounds on ts skip most of events.
    SELECT f.capture_id, f.preempted, f.instance, any_value(e.core) AS core, f.at AS preempt_ts
    FROM first_state f
    LEFT JOIN events e ON e.capture_id = f.capture_id AND e.target = f.preempted
        AND e.target_instance = f.instance AND e.ts = f.at AND e.action = 'preempt'
    GROUP BY f.capture_id, f.preempted, f.instance, f.at
    -- The FreeRTOS trace logger's creation of a task (a first preempt noted `create pri:N`,
    -- or `task_create`) makes it ready: it had not run, and it is no preemption (nor in
    -- `instances`).
    HAVING NOT coalesce(bool_or(starts_with(e.note, 'create pri:') OR e.note = 'task_create'), false)
), p AS (
    SELECT capture_id, entity AS preempted, instance, core, preempt_ts
    FROM r WHERE preempt_ts IS NOT NULL
    UNION ALL
    SELECT * FROM first_preempt
), occ AS (
    SELECT capture_id, core, ts, entity AS process, instance FROM r WHERE occupies AND core IS NOT NULL
), at_once AS (
    -- The occupant beginning at a preemption's instant, one per core and instant.
    SELECT o.capture_id, o.core, o.ts, min({'process': o.process, 'instance': o.instance}) AS occupant
    FROM occ o SEMI JOIN p ON p.capture_id = o.capture_id AND p.core = o.core AND p.preempt_ts = o.ts
    GROUP BY ALL
), matched AS (
    SELECT p.*, a.occupant FROM p
    LEFT JOIN at_once a ON a.capture_id = p.capture_id AND a.core = p.core AND a.ts = p.preempt_ts
), later AS (
    -- The others: the first occupant after the preemption, among the occupancies of the
    -- cores that have such a preemption only (no sort at all when there is none).
    SELECT m.capture_id, m.preempted, m.instance, m.core, m.preempt_ts,
           CASE WHEN o.process IS NOT NULL THEN {'process': o.process, 'instance': o.instance} END AS occupant
    FROM (SELECT * FROM matched WHERE occupant IS NULL) m
    ASOF LEFT JOIN (
        SELECT * FROM occ WHERE (capture_id, core) IN (SELECT capture_id, core FROM matched WHERE occupant IS NULL)
    ) o ON o.capture_id = m.capture_id AND o.core = m.core AND o.ts >= m.preempt_ts
), answered AS (
    SELECT * FROM matched WHERE occupant IS NOT NULL
    UNION ALL
    SELECT * FROM later
)
SELECT capture_id, preempted, instance, core, preempt_ts AS ts,
       CASE WHEN NOT (occupant.process = preempted AND occupant.instance = instance) THEN occupant.process END AS preempted_by,
       CASE WHEN NOT (occupant.process = preempted AND occupant.instance = instance) THEN occupant.instance END AS preempted_by_instance
FROM answered
ORDER BY capture_id, ts, core, preempted, instance;
