-- @name semaphore_contention
-- @summary Per semaphore: requests, contention, waits, holds, and time locked and overfull (ns)
-- @column capture_id  capture
-- @column semaphore  semaphore or mutex
-- @column requests  lock requests
-- @column contended_requests  requests that had to wait
-- @column contention_ratio  contended_requests / requests (4 decimals)
-- @column overfull_episodes  times the semaphore became overfull (full with at least one waiter); NULL when the trace logs only the processes' side
-- @column wait_total  sum of assigned - request, ns
-- @column wait_avg  mean wait (1 decimal), ns
-- @column wait_max  longest wait, ns
-- @column wait_p99  99th percentile of waits, ns
-- @column waits_left_out  requests whose wait the capture does not show (not in the wait statistics): never assigned within it (still waiting at its end, or given up), or asked before it began
-- @column hold_total  sum of released - assigned, ns
-- @column hold_avg  mean hold (1 decimal), ns
-- @column hold_max  longest hold, ns
-- @column holds_left_out  assigned requests whose hold the capture does not show (not in the hold statistics): still held at its end
-- @column longest_holding_process  process of the longest hold (a tie: the hold that began first)
-- @column most_waiting_process  process with the largest total wait (a tie: the one that waited first)
-- @column locked_time  time the semaphore was full or overfull, ns
-- @column overfull_time  time it was overfull, ns
-- lock wait = assigned - request, hold = released - assigned; a request is contended when
-- it had to wait (a waiting/queued step, the semaphore went overfull, or wait > 0). Time
-- locked and overfull come from the semaphore's own state events (ready, lock, unlock,
-- overfull, full, ...); they and overfull_episodes are NULL when the trace logs only the
-- processes' side.
-- Wait and hold statistics use the requests whose wait (hold) the capture shows from end to
-- end, and say how many were left out: a request still waiting when the capture ended (the
-- longest wait may be among them) is in waits_left_out, not in wait_max.
CREATE OR REPLACE TEMP VIEW semaphore_contention AS
WITH r AS (
    SELECT capture_id, semaphore,
           -- A release the trace shows without its request (release_without_assign) is
           -- not a request.
           count(*) FILTER (WHERE request_ts IS NOT NULL OR assigned_ts IS NOT NULL) AS requests,
           count(*) FILTER (WHERE contended) AS contended_requests,
           sum(wait) AS wait_total, round(avg(wait), 1) AS wait_avg, max(wait) AS wait_max,
           quantile_disc(wait, 0.99) AS wait_p99,
           count(*) FILTER (WHERE (request_ts IS NOT NULL OR assigned_ts IS NOT NULL) AND wait IS NULL) AS waits_left_out,
           sum(hold) AS hold_total, round(avg(hold), 1) AS hold_avg, max(hold) AS hold_max,
           count(*) FILTER (WHERE assigned_ts IS NOT NULL AND hold IS NULL) AS holds_left_out,
           -- Ties go to the hold that began first, then to the process name first in order.
           first(process ORDER BY hold DESC, assigned_ts, process) FILTER (WHERE hold IS NOT NULL)
               AS longest_holding_process
    FROM lock_requests GROUP BY capture_id, semaphore
), w AS (
    -- Ties go to the process that began waiting first, then to the name first in order.
    SELECT capture_id, semaphore,
           first(process ORDER BY total DESC, first_wait, process) AS most_waiting_process
    FROM (SELECT capture_id, semaphore, process, sum(wait) AS total, min(request_ts) AS first_wait
          FROM lock_requests WHERE wait > 0 GROUP BY ALL)
    GROUP BY capture_id, semaphore
), s AS (
    -- An episode begins where the state becomes overfull: a repeated `overfull` with a new
    -- counter splits the interval but continues the episode.
    SELECT capture_id, entity AS semaphore,
           count(*) FILTER (WHERE state = 'overfull' AND prev IS DISTINCT FROM 'overfull') AS overfull_episodes,
           -- 0, not NULL, when the trace logs the semaphore's states but never this one.
           coalesce(sum(dur) FILTER (WHERE state IN ('full', 'overfull')), 0) AS locked_time,
           coalesce(sum(dur) FILTER (WHERE state = 'overfull'), 0) AS overfull_time
    FROM (SELECT *, lag(state) OVER (PARTITION BY capture_id, entity, instance ORDER BY ts, dur) AS prev
          FROM intervals WHERE channel = 'state' AND entity_type = 'SEM')
    GROUP BY capture_id, entity
)
SELECT capture_id, semaphore,
       coalesce(requests, 0) AS requests, coalesce(contended_requests, 0) AS contended_requests,
       round(contended_requests / nullif(requests, 0), 4) AS contention_ratio,
       overfull_episodes,
       wait_total, wait_avg, wait_max, wait_p99, coalesce(waits_left_out, 0) AS waits_left_out,
       hold_total, hold_avg, hold_max, coalesce(holds_left_out, 0) AS holds_left_out,
       longest_holding_process, most_waiting_process, locked_time, overfull_time
FROM r
FULL OUTER JOIN s USING (capture_id, semaphore)
LEFT JOIN w USING (capture_id, semaphore)
ORDER BY capture_id, semaphore;
