-- @name deadline_summary
-- @summary Per task and ISR: instances judged against a deadline, misses, miss ratio, worst lateness (ns)
-- @include deadline_misses
-- @param deadlines file -  deadline file applied at query time (see deadline_misses)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column instances  complete instances that have a deadline (the instances judged)
-- @column instances_left_out  instances not judged: not complete in the capture, or with no deadline (no file rule matches and the task was activated only once)
-- @column unfinished_misses  of those left out, the ones activated but unfinished when the capture ended, their deadline already passed: misses whatever their terminate (deadline_misses lists them, lateness NULL)
-- @column misses  complete instances with lateness > 0 (NULL when none was judged)
-- @column miss_ratio  misses / instances (4 decimals; NULL when none was judged)
-- @column worst_lateness  largest lateness, ns (negative: the closest call still met its deadline)
-- @column deadline_source  where the deadlines came from: file, implicit-period, or mixed (NULL when none was judged)
-- Deadlines and lateness as in deadline_misses. Misses the trace records itself (S.Ha.R.K.
-- `task_deadline_miss`, deadline_source = recorded in deadline_misses) are not counted
-- here: this judges instances against deadlines; count recorded ones with
-- `SELECT entity, count(*) FROM deadline_misses WHERE deadline_source = 'recorded' GROUP BY ALL`.
-- Every task and ISR has a row, like in response_times: one none of whose instances could
-- be judged (a trace without activations, a single activation and no deadline file) has
-- instances = 0 and says how many were left out, its other columns NULL: no statistic is
-- invented (not even 0 misses). Statistics use complete instances (DESIGN.md): an
-- instance still unfinished past its deadline when the capture ended is a miss, but has no
-- lateness; it is counted in unfinished_misses, not in misses or miss_ratio.
CREATE OR REPLACE TEMP VIEW deadline_summary AS
WITH judged AS (
    SELECT capture_id, entity,
           count(*) FILTER (WHERE complete) AS instances,
           count(*) FILTER (WHERE complete AND lateness > 0) AS misses,
           count(*) FILTER (WHERE NOT complete) AS unfinished_misses,
           max(lateness) AS worst_lateness,
           -- min <> max is count(DISTINCT ...) > 1 without a second aggregation.
           CASE WHEN min(deadline_source) FILTER (WHERE complete) <> max(deadline_source) FILTER (WHERE complete)
                THEN 'mixed' ELSE any_value(deadline_source) FILTER (WHERE complete) END AS deadline_source
    FROM memory.tracedb_internal._deadline_eval
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
       coalesce(j.unfinished_misses, 0) AS unfinished_misses,
       CASE WHEN j.instances > 0 THEN j.misses END AS misses,
       round(j.misses / nullif(j.instances, 0), 4) AS miss_ratio,
       j.worst_lateness,
       j.deadline_source
FROM every e LEFT JOIN judged j USING (capture_id, entity)
ORDER BY capture_id, entity;
