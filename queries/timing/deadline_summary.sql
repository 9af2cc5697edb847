-- @name deadline_summary
-- @summary Per task and ISR: instances judged against a deadline, misses, miss ratio, worst lateness (ns)
-- @include deadline_misses
-- @param deadlines file -  deadline file applied at query time (see deadline_misses)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column instances  complete instances that have a deadline
-- @column misses  instances with lateness > 0
-- @column miss_ratio  misses / instances (4 decimals)
-- @column worst_lateness  largest lateness, ns (negative: the closest call still met its deadline)
-- @column deadline_source  where the deadlines came from: file, implicit-period, or mixed
-- Deadlines and lateness as in deadline_misses. Misses the trace records itself (S.Ha.R.K.
-- `task_deadline_miss`, deadline_source = recorded in deadline_misses) are not counted
-- here: this judges instances against deadlines; count recorded ones with
-- `SELECT entity, count(*) FROM deadline_misses WHERE deadline_source = 'recorded' GROUP BY ALL`.
CREATE OR REPLACE TEMP VIEW deadline_summary AS
SELECT capture_id, entity,
       count(*) AS instances,
       count(*) FILTER (WHERE lateness > 0) AS misses,
       round(count(*) FILTER (WHERE lateness > 0) / count(*), 4) AS miss_ratio,
       max(lateness) AS worst_lateness,
       -- deadline_source is never NULL here: min <> max is count(DISTINCT ...) > 1 without
       -- a second aggregation.
       CASE WHEN min(deadline_source) <> max(deadline_source) THEN 'mixed' ELSE any_value(deadline_source) END AS deadline_source
FROM _deadline_eval
WHERE deadline IS NOT NULL
GROUP BY capture_id, entity
ORDER BY capture_id, entity;
