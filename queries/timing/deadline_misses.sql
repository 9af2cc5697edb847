-- @name deadline_misses
-- @summary One row per task or ISR instance that finished after its deadline, or whose miss the trace records (ns)
-- @param deadlines file -  deadline file (`entity,deadline` lines, e.g. `TASK_10MS,10ms`; globs allowed) applied at query time, before the one given at ingest
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column instance  instance number
-- @column activate_ts  activation, ns
-- @column terminate_ts  termination, ns (NULL: still unfinished when the capture ended, past its deadline)
-- @column response_time  terminate - activate, ns
-- @column deadline  relative deadline applied, ns (recorded: miss time - activate)
-- @column deadline_source  file (a deadline file, at query or ingest time), implicit-period (time to the next activation), recorded (the trace says so)
-- @column lateness  terminate - (activate + deadline), ns; > 0 for every judged row, NULL for an unfinished instance (recorded: terminate - miss time, >= 0, NULL when the instance did not terminate in the capture)
-- Deadline of an instance: from a deadline file when one of its patterns matches the
-- entity (an exact name beats a glob, a longer glob beats a shorter one, then the one with
-- fewer `*`, then fewer `?`; a file given with `--param deadlines=FILE` beats one given at
-- ingest), else the implicit deadline: the
-- entity's activation period, i.e. the time to its next activation (the last instance of
-- a capture uses the period before it; instances activated at one instant all take the
-- time to the next activation at a later instant). lateness = terminate - (activate +
-- deadline); a miss is lateness > 0. Complete instances are judged, and so is an
-- unfinished one (activated, no terminate in the capture) whose deadline passed before
-- the capture's last event: it missed whenever it ends, and is listed with terminate_ts,
-- response_time and lateness NULL. Other incomplete instances are not judged. In SQL, the
-- query-time file is the table `param_deadlines(entity, deadline)`, which you may fill
-- yourself.
-- Misses recorded by the trace itself (S.Ha.R.K. `task_deadline_miss` events: the kernel
-- saw the deadline pass) are listed too, one row per recorded miss, with deadline_source =
-- recorded, attached to the instance the event names (the task's instance current at that
-- time, complete or not): deadline = miss time - activate_ts (the deadline the kernel
-- applied), lateness = terminate_ts - miss time (how long the instance ran on past it; NULL
-- when it did not terminate in the capture; a miss logged with no instance open is on
-- instance -1, with NULL deadline and lateness). Such an instance may also have a judged row
-- (file or implicit-period) of its own. deadline_summary judges deadlines only: it does
-- not count recorded misses. BTF has no such event.
CREATE TEMP TABLE IF NOT EXISTS param_deadlines (entity VARCHAR, deadline BIGINT);
CREATE OR REPLACE VIEW memory.tracedb_internal._deadline_eval AS
WITH runs AS (
    -- Instances activated at one instant (a burst) are a run; its first row carries the
    -- time for the rows after it, its last row for the rows before it.
    SELECT capture_id, entity, entity_type, instance, activate_ts, terminate_ts, response_time, complete,
           CASE WHEN lag(activate_ts) OVER w IS DISTINCT FROM activate_ts THEN activate_ts END AS run_first,
           CASE WHEN lead(activate_ts) OVER w IS DISTINCT FROM activate_ts THEN activate_ts END AS run_last
    FROM instances
    -- `(... IN ...) IS TRUE`: the rows of the bare IN list, filtered inside the Parquet scan
    -- (which then skips the pages of other entity types) rather than after it.
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE AND activate_ts IS NOT NULL
    WINDOW w AS (PARTITION BY capture_id, entity ORDER BY activate_ts, instance)
), inst AS (
    -- The period is the time to the next activation at a later instant, so every instance
    -- of a burst gets the time to the one after it (not 0 to each other). (A RANGE frame
    -- says the same in one window, but DuckDB took 12-16 s of CPU for it on the 4.1 M task
    -- and ISR instances of a 51.7 M-event capture, against 0.5 s for this second window.)
    SELECT capture_id, entity, entity_type, instance, activate_ts, terminate_ts, response_time, complete,
           lead(run_first IGNORE NULLS) OVER w - activate_ts AS next_period,
           activate_ts - lag(run_last IGNORE NULLS) OVER w AS prev_period
    FROM runs
    WINDOW w AS (PARTITION BY capture_id, entity ORDER BY activate_ts, instance)
), rules AS MATERIALIZED (
    SELECT NULL::BIGINT AS capture_id, entity AS pattern, deadline, 2 AS prio FROM param_deadlines
    UNION ALL
    SELECT capture_id, entity, deadline, 1 FROM deadlines WHERE source = 'file'
), names AS (
    -- From a narrow scan of its own, so that inst streams into the join below instead of
    -- being held for a second reader. Joined to one row that exists only when there is a
    -- rule: without deadline files the join's build side is empty and the scan stops at
    -- once (the names serve only to match rules).
    SELECT DISTINCT i.capture_id, i.entity FROM instances i
    JOIN (SELECT true AS any_rule FROM rules LIMIT 1) g ON g.any_rule = (i.activate_ts IS NOT NULL)
    WHERE (i.entity_type IN ('T', 'I', 'ISR')) IS TRUE AND i.activate_ts IS NOT NULL
), best AS (
    SELECT n.capture_id, n.entity,
           -- Ranked: the query-time file, an exact name, a longer pattern; between patterns
           -- of one length, fewer `*` then fewer `?` (T? is narrower than T*); then, so that
           -- the answer never depends on the order rows were read, the pattern's text and
           -- the shorter deadline (one pattern given twice in param_deadlines).
           arg_max(r.deadline, (r.prio, r.pattern = n.entity, length(r.pattern),
                                -(length(r.pattern) - length(replace(r.pattern, '*', ''))),
                                -(length(r.pattern) - length(replace(r.pattern, '?', ''))),
                                r.pattern, -r.deadline)) AS deadline
    FROM names n
    JOIN rules r ON (r.capture_id IS NULL OR r.capture_id = n.capture_id)
        AND (n.entity = r.pattern OR n.entity GLOB r.pattern)
    GROUP BY n.capture_id, n.entity
)
SELECT capture_id, entity, entity_type, instance, activate_ts, terminate_ts, response_time, deadline,
       -- (Differences first: times are within ±2^62, so each difference fits in 64 bits,
       -- where activate_ts + deadline overflowed for a period near 2^63.)
       deadline_source, (terminate_ts - activate_ts) - deadline AS lateness, complete
FROM (
    SELECT i.capture_id, i.entity, i.entity_type, i.instance, i.activate_ts, i.terminate_ts, i.response_time,
           coalesce(b.deadline, i.next_period, i.prev_period) AS deadline,
           CASE WHEN b.deadline IS NOT NULL THEN 'file'
                WHEN coalesce(i.next_period, i.prev_period) IS NOT NULL THEN 'implicit-period' END AS deadline_source,
           i.complete, c.ts_max
    FROM inst i
    JOIN captures c ON c.capture_id = i.capture_id
    LEFT JOIN best b ON b.capture_id = i.capture_id AND b.entity = i.entity
)
-- Complete instances, and unfinished ones (activated, no terminate in the capture) whose
-- deadline passed before the capture's last event: whenever they terminate, lateness > 0.
WHERE complete OR (terminate_ts IS NULL AND ts_max - activate_ts > deadline);
CREATE OR REPLACE VIEW memory.tracedb_internal._recorded_misses AS
SELECT e.capture_id, e.source AS entity, e.source_instance AS instance, i.activate_ts, i.terminate_ts,
       i.response_time, e.ts - i.activate_ts AS deadline, 'recorded' AS deadline_source,
       i.terminate_ts - e.ts AS lateness
FROM events e
LEFT JOIN instances i
    ON i.capture_id = e.capture_id AND i.entity = e.source AND i.instance = e.source_instance
WHERE e.action = 'task_deadline_miss';
CREATE OR REPLACE TEMP VIEW deadline_misses AS
SELECT capture_id, entity, instance, activate_ts, terminate_ts, response_time, deadline, deadline_source, lateness
FROM (
    SELECT capture_id, entity, instance, activate_ts, terminate_ts, response_time, deadline, deadline_source, lateness
    FROM memory.tracedb_internal._deadline_eval
    WHERE lateness > 0 OR NOT complete
    UNION ALL
    SELECT * FROM memory.tracedb_internal._recorded_misses
)
ORDER BY capture_id, activate_ts, entity, deadline_source;
