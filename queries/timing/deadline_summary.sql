-- @name deadline_summary
-- @summary Per task and ISR: instances judged against a deadline, misses, miss ratio, worst lateness (ns)
-- @include deadline_misses
-- @param deadlines file -  deadline file applied at query time (see deadline_misses)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column instances  instances judged: complete ones that have a deadline, and unfinished ones whose deadline passed before the capture ended
-- @column instances_left_out  instances not judged: incomplete in the capture (and not past their deadline), or with no deadline (no file rule matches and the task was activated only once)
-- @column misses  instances with lateness > 0, and unfinished ones past their deadline (NULL when none was judged)
-- @column miss_ratio  misses / instances (4 decimals; NULL when none was judged)
-- @column worst_lateness  largest lateness of the instances that terminated, ns (negative: the closest call still met its deadline; an unfinished miss has no lateness)
-- @column deadline_source  where the deadlines came from: file, implicit-period, or mixed (NULL when none was judged)
-- Deadlines and lateness as in deadline_misses. Misses the trace records itself (S.Ha.R.K.
-- `task_deadline_miss`, deadline_source = recorded in deadline_misses) are not counted
-- here: this judges instances against deadlines; count recorded ones with
-- `SELECT entity, count(*) FROM deadline_misses WHERE deadline_source = 'recorded' GROUP BY ALL`.
-- Every task and ISR has a row, like in response_times: one none of whose instances could
-- be judged (a trace without activations, a single activation and no deadline file) has
-- instances = 0 and says how many were left out, its other columns NULL: no statistic is
-- invented (not even 0 misses).
CREATE OR REPLACE TEMP VIEW deadline_summary AS
WITH judged AS (
    SELECT capture_id, entity,
           count(*) AS instances,
           count(*) FILTER (WHERE lateness > 0 OR NOT complete) AS misses,
           max(lateness) AS worst_lateness,
           -- deadline_source is never NULL here: min <> max is count(DISTINCT ...) > 1 without
           -- a second aggregation.
           CASE WHEN min(deadline_source) <> max(deadline_source) THEN 'mixed' ELSE any_value(deadline_source) END AS deadline_source
    FROM _deadline_eval
    WHERE deadline IS NOT NULL
    GROUP BY capture_id, entity
), every AS (
    -- Every task and ISR and its instances, judged or not. `(... IN ...) IS TRUE`: filtered
    -- inside the Parquet scan, which then skips the runnables' pages.
    SELECT capture_id, entity, count(*) AS all_instances
    FROM instances WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE
    GROUP BY capture_id, entity
)
SELECT capture_id, entity,
       coalesce(j.instances, 0) AS instances,
       e.all_instances - coalesce(j.instances, 0) AS instances_left_out,
       j.misses,
       round(j.misses / j.instances, 4) AS miss_ratio,
       j.worst_lateness,
       j.deadline_source
FROM every e LEFT JOIN judged j USING (capture_id, entity)
ORDER BY capture_id, entity;
