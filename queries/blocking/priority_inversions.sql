-- @name priority_inversions
-- @summary Lock requests that waited for a holder while it was preempted: who ran on the holder's core instead, and for how long (ns)
-- @column capture_id  capture
-- @column semaphore  semaphore or mutex
-- @column waiter  task or ISR whose request waited
-- @column waiter_instance  its instance
-- @column request_ts  its request, ns
-- @column wait  its wait, assigned - request, ns (NULL when not assigned within the capture)
-- @column holder  the process instance it waited for: lock_requests.blocked_by, or in a queue each holder in turn
-- @column holder_instance  its instance
-- @column core  the core the holder was preempted from
-- @column ran  a task or ISR that ran on that core while the holder was off it and the request waited
-- @column ran_instance  its instance
-- @column first_ts  when it first did so, ns
-- @column delay  how long it did so, ns
-- A task that waits for a semaphore waits for its holder to run. When the holder is
-- preempted while it holds the semaphore, whatever runs on its core meanwhile makes the
-- waiter wait too: the pattern of a priority inversion (unbounded when that process has a
-- lower priority than the waiter). Traces do not carry priorities, so every such case is
-- listed; filter by the processes whose priorities you know. The waiter itself is among
-- them when it preempted the holder and spins (polls) on its core; a waiter that waits
-- passively (`queued`) is not on a core while it waits.
-- The requests analysed are the contended ones whose holders held the semaphore one after
-- another: one holder (`lock_requests.blockers = 1`: a mutex or binary semaphore held by one
-- process instance from the request to the assignment, `blocked_by`), or a queue (a mutex
-- held by `blocked_by` when the request came, then by the requests served before it, each
-- released before the next was assigned, the last before this one was). A request for a
-- counting semaphore whose slots several instances held at once may have got its slot from
-- any of them, so it is left out, as is a queue whose grants do not follow one another as
-- `blockers` says (`SELECT * FROM lock_requests WHERE contended AND blockers > 1` lists the
-- candidates).
-- One row per such request, holder and process instance that ran instead of the holder:
-- a holder's hold is its last request of the same semaphore assigned before this one was
-- served (ever, when it was not), which must overlap the wait; the holder is off its core
-- from each preemption within the hold (the end of a running or polling stretch by
-- `preempt`) to its next stretch on a core, on any core (its resume), or the end of the
-- capture; `delay` is the time the process ran (running or polling) on the core the holder
-- was preempted from within those stretches and within the wait (from the request to the
-- assignment, or the end of the capture). Time nobody ran there is not counted, nor what
-- ran on other cores, nor why the holder's preemptor was itself delayed, nor a holder that
-- was handed the semaphore while off its core and waits for its core (ready by `release`,
-- not by `preempt`).
-- How: a queue's holders are the `blockers` grants of the semaphore (in the order they were
-- assigned) before the request's own (the last ones when it was not served), checked as
-- above, the first being `blocked_by`'s; the occupancies come from one scan of the
-- process states, which gives the holders' preemptions and resumes and what ran instead;
-- what ran is matched to the windows through 2^20 ns buckets of its start.
--   SELECT waiter, ran, count(*), sum(delay) FROM priority_inversions GROUP BY ALL ORDER BY 4 DESC;
CREATE OR REPLACE TEMP VIEW priority_inversions AS
WITH req AS MATERIALIZED (
    -- Contended requests that waited for one holder, or for several in turn.
    SELECT * FROM lock_requests WHERE contended AND blockers >= 1 AND request_ts IS NOT NULL
), h1 AS (
    -- One holder: its hold, its last of the semaphore assigned before the request was
    -- served, which must overlap the wait. (An ASOF join, over the holders' requests only:
    -- the planner knows it gives at most one row per request, where a plain join would make
    -- it expect billions and build its hash tables on the wrong sides later.)
    SELECT r.capture_id, r.semaphore, r.process AS waiter, r.process_instance AS waiter_instance,
           r.request_ts, r.assigned_ts, r.wait, r.blocked_by AS holder,
           r.blocked_by_instance AS holder_instance, l.assigned_ts AS hold_from,
           l.released_ts AS hold_to
    FROM (SELECT * FROM req WHERE blockers = 1) r ASOF JOIN (
        SELECT * FROM lock_requests x SEMI JOIN req
          ON req.capture_id = x.capture_id AND req.semaphore = x.semaphore
         AND req.blocked_by = x.process AND req.blocked_by_instance = x.process_instance
         AND req.blockers = 1
    ) l
      ON l.capture_id = r.capture_id AND l.semaphore = r.semaphore
     AND l.process = r.blocked_by AND l.process_instance = r.blocked_by_instance
     AND coalesce(r.assigned_ts, 9223372036854775807) > l.assigned_ts
    WHERE coalesce(l.released_ts, 9223372036854775807) > r.request_ts
), g AS MATERIALIZED (
    -- Several holders: the grants of the semaphores such requests waited for, numbered in
    -- the order they were assigned (`k`), each with when the next was; and those requests
    -- not served within the capture, after them (numbered as the last grant).
    SELECT x.capture_id, x.semaphore, x.process, x.process_instance, x.request_ts,
           x.assigned_ts, x.released_ts,
           count(x.assigned_ts) OVER (o ROWS UNBOUNDED PRECEDING) AS k,
           lead(x.assigned_ts) OVER o AS next_ts
    FROM lock_requests x
    WHERE (x.assigned_ts IS NOT NULL OR (x.contended AND x.blockers > 1))
      AND (x.capture_id, x.semaphore) IN (SELECT capture_id, semaphore FROM req WHERE blockers > 1)
    WINDOW o AS (PARTITION BY x.capture_id, x.semaphore
                 ORDER BY x.assigned_ts NULLS LAST, x.released_ts NULLS LAST, x.process,
                          x.process_instance, x.request_ts)
), hb AS (
    -- Each such request with its own grant's number (past the last grant when it was not
    -- served): the `blockers` grants before it are the candidates.
    SELECT r.capture_id, r.semaphore, r.process AS waiter, r.process_instance AS waiter_instance,
           r.request_ts, r.assigned_ts, r.wait, r.blockers, r.blocked_by,
           r.blocked_by_instance, own.k + (r.assigned_ts IS NULL)::BIGINT AS kr
    FROM req r JOIN g own
      ON own.capture_id = r.capture_id AND own.semaphore = r.semaphore
     AND own.process = r.process AND own.process_instance = r.process_instance
     AND own.request_ts = r.request_ts AND own.assigned_ts IS NOT DISTINCT FROM r.assigned_ts
    WHERE r.blockers > 1
), hn AS (
    -- Kept only when the candidates are exactly the holders, one after another: all there,
    -- the first `blocked_by`, each assigned before the request was served, released after it
    -- came and by the time the next got the semaphore (the last: by the time the request
    -- did). A counting semaphore's overlapping holds, or holders the trace's same-instant
    -- order leaves out, fail this, and the request is left out.
    SELECT b.capture_id, b.semaphore, b.waiter, b.waiter_instance, b.request_ts, b.assigned_ts,
           b.wait, g.process AS holder, g.process_instance AS holder_instance,
           g.assigned_ts AS hold_from, g.released_ts AS hold_to
    FROM (SELECT *, unnest(range(kr - blockers, kr)) AS k FROM hb) b
    JOIN g ON g.capture_id = b.capture_id AND g.semaphore = b.semaphore AND g.k = b.k
          AND g.assigned_ts IS NOT NULL
    WINDOW w AS (PARTITION BY b.capture_id, b.semaphore, b.waiter, b.waiter_instance, b.request_ts)
    QUALIFY count(*) OVER w = max(b.blockers) OVER w
        AND bool_and(g.assigned_ts < coalesce(b.assigned_ts, 9223372036854775807)
                     AND coalesce(g.released_ts, 9223372036854775807) > b.request_ts
                     AND coalesce(g.released_ts, 9223372036854775807)
                         <= coalesce(g.next_ts, 9223372036854775807)
                     AND (g.k > b.kr - b.blockers OR (g.process = b.blocked_by
                          AND g.process_instance = b.blocked_by_instance) IS TRUE)) OVER w
), h AS MATERIALIZED (
    SELECT * FROM h1 UNION ALL SELECT * FROM hn
), occ AS MATERIALIZED (
    -- Every stretch a task or ISR occupied a core (running or polling), from one scan: the
    -- holders' preemptions, their returns, and what ran instead. `(... IN ...) IS TRUE`
    -- filters inside the Parquet scan.
    SELECT capture_id, entity, instance, core, ts, ts + dur AS te,
           end_action IS NOT DISTINCT FROM 'preempt' AS preempted
    FROM intervals
    WHERE channel = 'state' AND (state IN ('running', 'polling')) IS TRUE AND core IS NOT NULL
      AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), off AS (
    -- Each stretch a holder spent off its core after a preemption, until its next stretch on
    -- a core (its resume, on any core) or the end of the capture, and the core it lost.
    SELECT o.capture_id, o.entity, o.instance, o.core, o.te AS off_ts,
           coalesce(o.next_ts, c.ts_max) AS until
    FROM (
        SELECT x.*, lead(x.ts) OVER (
            PARTITION BY x.capture_id, x.entity, x.instance ORDER BY x.ts, x.te) AS next_ts
        FROM occ x SEMI JOIN h
          ON h.capture_id = x.capture_id AND h.holder = x.entity AND h.holder_instance = x.instance
    ) o JOIN captures c ON c.capture_id = o.capture_id
    WHERE o.preempted
), win AS MATERIALIZED (
    -- The parts of those stretches within a hold and within the wait.
    SELECT h.capture_id, h.semaphore, h.waiter, h.waiter_instance, h.request_ts, h.wait,
           h.holder, h.holder_instance, o.core, o.off_ts,
           greatest(o.off_ts, h.request_ts) AS w0,
           least(o.until, coalesce(h.assigned_ts, o.until)) AS w1
    FROM h JOIN off o
      ON o.capture_id = h.capture_id AND o.entity = h.holder AND o.instance = h.holder_instance
     AND o.off_ts >= h.hold_from AND o.off_ts < coalesce(h.hold_to, 9223372036854775807)
    WHERE greatest(o.off_ts, h.request_ts) < least(o.until, coalesce(h.assigned_ts, o.until))
), buckets AS (
    -- Each window in 2^20 ns buckets, from the preemption on: what ran on the core in the
    -- window began there at or after the preemption (the holder ran there until then).
    SELECT w.*, unnest(range(w.off_ts >> 20, ((w.w1 - 1) >> 20) + 1)) AS bucket FROM win w
), ran AS (
    SELECT capture_id, core, entity, instance, ts, te, ts >> 20 AS bucket
    FROM occ
    WHERE te > ts AND (capture_id, core) IN (SELECT capture_id, core FROM win)
)
SELECT b.capture_id, b.semaphore, b.waiter, b.waiter_instance, b.request_ts, b.wait, b.holder,
       b.holder_instance, b.core, o.entity AS ran, o.instance AS ran_instance,
       min(greatest(o.ts, b.w0)) AS first_ts,
       sum(least(o.te, b.w1) - greatest(o.ts, b.w0)) AS delay
FROM buckets b JOIN ran o
  ON o.capture_id = b.capture_id AND o.core = b.core AND o.bucket = b.bucket
 AND o.ts >= b.off_ts AND o.ts < b.w1 AND o.te > b.w0
GROUP BY ALL
ORDER BY b.capture_id, b.request_ts, b.semaphore, b.waiter, b.waiter_instance, first_ts, b.holder,
         b.holder_instance, ran, ran_instance;
