-- @name blocking
-- @summary Waiting, polling and parking time per task and ISR, and what it waited for (ns)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column entity_type  T, I or ISR
-- @column instances  complete instances (the statistics use these)
-- @column instances_left_out  instances left out: not complete in the capture
-- @column blocked_instances  instances with blocking_time > 0
-- @column waiting_total  time waiting (passive wait, e.g. an OS event), ns
-- @column waiting_max  longest waiting time of one instance, ns
-- @column polling_total  time polling (active wait, e.g. a spinlock), ns
-- @column polling_max  longest polling time of one instance, ns
-- @column parking_total  time parking (preempted while polling), ns
-- @column parking_max  longest parking time of one instance, ns
-- @column blocking_total  waiting + polling + parking, ns
-- @column blocking_max  longest blocking time of one instance, ns
-- @column causes  semaphores it had to wait for (contended lock requests) and OS events it waited on (a wait_event that made it wait), comma-separated
-- @column blocked_by  who it waited for, comma-separated: the processes that held those semaphores (`lock_requests.blocked_by`) or set those events (`event_waits()`)
-- blocking_time = waiting_time + polling_time + parking_time (AMALTHEA). Causes come from
-- the trace when it says so: a contended request in lock_requests, a wait_event that made
-- the instance wait (`event_waits()` in sql/helpers.sql: the last wait_event or contended
-- request in the running stretch that ended in `wait`, or in `poll`: active waiting on an
-- event, as BTF 2.1.5's example polls). A wait_event for an event that was
-- set already returns at once and is no cause, as an uncontended request is none.
-- One row per blocked instance and cause: blocking_instances. Like every statistic over
-- instances, only complete ones count (an instance cut by the capture's start or end has
-- an unknown share of its blocking).
CREATE OR REPLACE TEMP VIEW blocking AS
WITH b AS (
    SELECT capture_id, entity, entity_type, complete, waiting_time, polling_time, parking_time,
           coalesce(waiting_time, 0) + coalesce(polling_time, 0) + coalesce(parking_time, 0) AS blocking_time
    FROM instances
    -- `(... IN ...) IS TRUE`: the rows of the bare IN list, filtered inside the Parquet scan
    -- (which then skips the pages of other entity types) rather than after it.
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), causes AS (
    SELECT capture_id, process AS entity, semaphore AS cause, blocked_by
    FROM lock_requests WHERE contended
    UNION ALL
    SELECT capture_id, entity, event, set_by FROM event_waits()
), c AS (
    SELECT capture_id, entity, string_agg(DISTINCT cause, ', ' ORDER BY cause) AS causes,
           string_agg(DISTINCT blocked_by, ', ' ORDER BY blocked_by) AS blocked_by
    FROM causes GROUP BY capture_id, entity
), per AS (
    SELECT capture_id, entity, any_value(entity_type) AS entity_type,
           count(*) FILTER (WHERE complete) AS instances,
           count(*) FILTER (WHERE NOT complete) AS instances_left_out,
           count(*) FILTER (WHERE complete AND blocking_time > 0) AS blocked_instances,
           sum(waiting_time) FILTER (WHERE complete) AS waiting_total,
           max(waiting_time) FILTER (WHERE complete) AS waiting_max,
           sum(polling_time) FILTER (WHERE complete) AS polling_total,
           max(polling_time) FILTER (WHERE complete) AS polling_max,
           sum(parking_time) FILTER (WHERE complete) AS parking_total,
           max(parking_time) FILTER (WHERE complete) AS parking_max,
           sum(blocking_time) FILTER (WHERE complete) AS blocking_total,
           max(blocking_time) FILTER (WHERE complete) AS blocking_max
    FROM b
    GROUP BY capture_id, entity
)
-- The causes joined to one row per task, not to each of its instances.
SELECT per.*, c.causes, c.blocked_by
FROM per
LEFT JOIN c ON c.capture_id = per.capture_id AND c.entity = per.entity
ORDER BY per.capture_id, per.entity;
