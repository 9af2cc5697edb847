-- @name blocking_instances
-- @summary One row per blocked task or ISR instance and cause (ns)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column instance  instance number
-- @column activate_ts  activation, ns (NULL when not in the capture)
-- @column blocking_time  waiting + polling + parking of the instance, ns
-- @column waiting_time  passive waiting, ns
-- @column polling_time  active waiting, ns
-- @column parking_time  preempted while polling, ns
-- @column cause_type  semaphore (a contended lock request), event (a wait_event that made it wait), or NULL when the trace does not say
-- @column cause  the semaphore or OS event
-- @column cause_wait  for a semaphore: assigned - request of that request, ns
-- @column cause_ts  when the wait began, ns
-- @column blocked_by  who it waited for: for a semaphore, the process that held it when the request came (of several, the first to have got it; when none did, the first to get it before this request did: `lock_requests.blocked_by`); for an event, the process that set it (the first `set_event` after the wait_event naming this task or nobody, if it came before the wait ended); NULL when the trace does not say
-- @column blocked_by_instance  that process's instance
-- Causes are matched by process and instance: lock requests of this instance that were
-- contended, and wait_event events of this instance that made it wait (`event_waits()` in
-- sql/helpers.sql: the last wait_event or contended request in the running stretch that
-- ended in `wait` or `poll`; a wait_event for an event already set returns at once and blocks
-- nothing), that began during the
-- instance (from its activation, or first start when the capture lacks it, to its
-- termination): an instance number that comes back later (a new run of the numbering, or
-- a resynchronised machine) does not borrow the causes of the other one.
CREATE OR REPLACE TEMP VIEW blocking_instances AS
WITH b AS (
    SELECT capture_id, entity, instance, activate_ts, start_ts, terminate_ts,
           waiting_time, polling_time, parking_time,
           coalesce(waiting_time, 0) + coalesce(polling_time, 0) + coalesce(parking_time, 0) AS blocking_time
    FROM instances
    -- `(... IN ...) IS TRUE`: the rows of the bare IN list, filtered inside the Parquet scan
    -- (which then skips the pages of other entity types) rather than after it.
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), causes AS (
    SELECT capture_id, process AS entity, process_instance AS instance, 'semaphore' AS cause_type,
           semaphore AS cause, wait AS cause_wait, request_ts AS cause_ts,
           blocked_by, blocked_by_instance
    FROM lock_requests WHERE contended
    UNION ALL
    SELECT capture_id, entity, instance, 'event', event, NULL, ts, set_by, set_by_instance
    FROM event_waits()
)
SELECT b.capture_id, b.entity, b.instance, b.activate_ts, b.blocking_time, b.waiting_time, b.polling_time,
       b.parking_time, c.cause_type, c.cause, c.cause_wait, c.cause_ts, c.blocked_by,
       c.blocked_by_instance
FROM b
LEFT JOIN causes c ON c.capture_id = b.capture_id AND c.entity = b.entity AND c.instance = b.instance
    AND c.cause_ts >= coalesce(b.activate_ts, b.start_ts, c.cause_ts)
    AND c.cause_ts <= coalesce(b.terminate_ts, c.cause_ts)
-- Blocked: it spent time waiting, polling or parking, or a lock request of it waited.
WHERE b.blocking_time > 0 OR c.cause_wait > 0
ORDER BY b.capture_id, b.activate_ts, b.entity, c.cause_ts;
