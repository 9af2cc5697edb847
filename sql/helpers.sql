-- Helper macros for traces, installed on every connection (`tracedb sql`, the shell, and
-- every other command that runs SQL). Times and durations are BIGINT nanoseconds throughout;
-- these helpers only convert and compare them. Raw integers stay the default output: call
-- fmt_ns() where a human-readable duration is wanted.

-- fmt_ns(ns): a duration in ns as text with a unit, three decimals above 1 us:
-- 850 -> '850 ns', 12345 -> '12.345 us', 12345678 -> '12.346 ms', 1500000000 -> '1.500 s'.
-- NULL stays NULL; negative values keep their sign.
CREATE OR REPLACE TEMP MACRO fmt_ns(ns) AS CASE
    WHEN ns IS NULL THEN NULL
    WHEN abs(ns) < 1000 THEN printf('%d ns', CAST(ns AS BIGINT))
    WHEN abs(ns) < 999999.5 THEN printf('%.3f us', ns / 1e3)
    -- A value that rounds up to 1000.000 of a unit is shown in the next one.
    WHEN abs(ns) < 999999500 THEN printf('%.3f ms', ns / 1e6)
    ELSE printf('%.3f s', ns / 1e9)
END;

-- ns(text): a duration written with a unit, in ns (BIGINT): '2ms' -> 2000000,
-- '1.5 us' -> 1500, '250' -> 250. Units: ns, us, ms, s (no unit = ns). Anything else is an
-- error naming the text. NULL stays NULL.
CREATE OR REPLACE TEMP MACRO ns(t) AS CASE
    WHEN t IS NULL THEN NULL
    WHEN NOT regexp_full_match(trim(t), '[0-9]+(\.[0-9]*)?\s*(ns|us|ms|s)?')
        THEN CAST(error('ns(): expected a number with unit ns, us, ms or s (e.g. ''2ms''), found ''' || t || '''') AS BIGINT)
    ELSE CAST(round(
        CAST(regexp_extract(trim(t), '^[0-9]+(\.[0-9]*)?') AS DECIMAL(38, 9))
        * CASE regexp_extract(trim(t), '(ns|us|ms|s)$')
            WHEN 'us' THEN 1000 WHEN 'ms' THEN 1000000 WHEN 's' THEN 1000000000 ELSE 1 END
    ) AS BIGINT)
END;

-- overlap(a_ts, a_dur, b_ts, b_dur): ns during which [a_ts, a_ts + a_dur) and
-- [b_ts, b_ts + b_dur) overlap; 0 when they do not.
CREATE OR REPLACE TEMP MACRO overlap(a_ts, a_dur, b_ts, b_dur) AS
    greatest(0, least(a_ts + a_dur, b_ts + b_dur) - greatest(a_ts, b_ts));

-- intervals_in(t0, t1 [, capture := N]): the intervals overlapping the window [t0, t1), with
-- every column of `intervals` plus the part inside the window. A zero-length interval counts
-- when its ts lies in the window. Example: which tasks ran on Core_1 between 2 ms and 3 ms:
--   SELECT state, sum(clip_dur) FROM intervals_in(ns('2ms'), ns('3ms'))
--   WHERE channel = 'running' AND entity = 'Core_1' GROUP BY state;
-- Columns added:
--   clip_ts   BIGINT  -- start of the overlap, ns (max(ts, t0))
--   clip_dur  BIGINT  -- length of the overlap, ns (0 for a zero-length interval)
CREATE OR REPLACE TEMP MACRO intervals_in(t0, t1, capture := NULL) AS TABLE
    SELECT *, greatest(ts, t0) AS clip_ts, overlap(ts, dur, t0, t1 - t0) AS clip_dur
    FROM intervals
    WHERE (capture IS NULL OR capture_id = capture)
      AND ts < t1 AND (ts + dur > t0 OR (dur = 0 AND ts >= t0));

-- event_waits(): the OS-event waits of task and ISR instances, one row per `wait` (passive)
-- or `poll` (active waiting, BTF 2.1.5's example) that a `wait_event` caused: capture_id,
-- entity, instance, event (the OS event), ts (the wait_event's time, ns), seq (its
-- `events.seq`), and who set the event: set_by, set_by_instance, set_ts (the first
-- `set_event` of that event after the wait_event, in file order, whose note names this task
-- or nobody; NULL when none came before the wait ended, the instance's `release` out of
-- `waiting`, or for a poll its `run` or `release_parking` after any parking and polling
-- again: a later set did not end this wait).
-- A `wait_event` caused the wait that ends the running stretch it
-- falls in (from the stretch's start to its `wait` or `poll`, both included) when it is the last of
-- the instance's wait_events and contended lock requests in that stretch: a wait_event for
-- an event already set returns at once and causes nothing, and a later contended request
-- (a queued semaphore) explains the wait instead. A wait_event logged some time before
-- its `wait` (an instrumented OS call) counts as well as one at the same instant.
--   SELECT event, count(*) FROM event_waits() GROUP BY event;
CREATE OR REPLACE TEMP MACRO event_waits() AS TABLE
    WITH we AS MATERIALIZED (
        -- The process instances that logged a wait_event: only their polls are looked at.
        SELECT DISTINCT capture_id, source AS entity, source_instance AS instance
        FROM events WHERE action = 'wait_event'
    ), st AS MATERIALIZED (
        -- The running stretches that ended in `wait` or `poll` (kind), and the waiting
        -- states: scans whose filters reach the Parquet reader (one with OR does not: it read
        -- every state row). Only the polls of instances that logged a wait_event can have
        -- one as their cause: spinlocks poll in many a trace with none, whose poll stretches
        -- are then not read (a join, whose empty build side leaves the scan nothing to keep).
        SELECT capture_id, entity, instance, ts, ts + dur AS end_ts, 'wait' AS kind
        FROM intervals
        WHERE channel = 'state' AND state = 'running' AND end_action = 'wait'
        UNION ALL
        SELECT i.capture_id, i.entity, i.instance, i.ts, i.ts + i.dur, 'poll'
        FROM intervals i JOIN we
          ON we.capture_id = i.capture_id AND we.entity = i.entity AND we.instance = i.instance
        WHERE i.channel = 'state' AND i.state = 'running' AND i.end_action = 'poll'
        UNION ALL
        SELECT capture_id, entity, instance, ts, ts + dur, 'waiting'
        FROM intervals
        WHERE channel = 'state' AND state = 'waiting'
    ), stretch AS (
        -- Each stretch, and for a `wait` when the wait ended: the end of the `waiting` state
        -- it began (the latest, should zero-length ones share its start). A poll's end comes
        -- below, for the polls that a wait_event caused only.
        SELECT r.capture_id, r.entity, r.instance, r.kind, r.ts, r.end_ts AS wait_ts,
               max(w.end_ts) AS wait_end
        FROM st r LEFT JOIN st w
          ON w.capture_id = r.capture_id AND w.entity = r.entity AND w.instance = r.instance
         AND w.kind = 'waiting' AND r.kind = 'wait' AND w.ts = r.end_ts
        WHERE r.kind IN ('wait', 'poll')
        GROUP BY ALL
    ), reasons AS (
        SELECT r.capture_id, r.entity, r.instance, r.kind, r.ts AS run_ts, r.wait_ts, r.wait_end,
               e.ts, e.seq, true AS is_event, e.target AS event
        FROM stretch r JOIN events e
          ON e.capture_id = r.capture_id AND e.source = r.entity
         AND e.source_instance = r.instance AND e.action = 'wait_event'
         AND e.ts BETWEEN r.ts AND r.wait_ts
        UNION ALL
        SELECT r.capture_id, r.entity, r.instance, r.kind, r.ts, r.wait_ts, r.wait_end,
               l.request_ts, NULL, false, NULL
        FROM stretch r JOIN lock_requests l
          ON l.capture_id = r.capture_id AND l.process = r.entity
         AND l.process_instance = r.instance AND l.contended
         AND l.request_ts BETWEEN r.ts AND r.wait_ts
    )
    , caused AS (
        SELECT capture_id, entity, instance, kind, event, ts, seq, wait_ts, wait_end
        FROM reasons
        QUALIFY is_event AND row_number() OVER (
            PARTITION BY capture_id, entity, instance, run_ts
            ORDER BY ts DESC, is_event DESC, seq DESC) = 1
    ), polled AS (
        -- The polling and parking states of the instances that logged a wait_event (a join,
        -- as above) that end an active wait: not by `park` or `poll_parking`, which go on
        -- with it.
        SELECT i.capture_id, i.entity, i.instance, i.ts, i.ts + i.dur AS end_ts
        FROM intervals i JOIN we
          ON we.capture_id = i.capture_id AND we.entity = i.entity AND we.instance = i.instance
        WHERE i.channel = 'state' AND (i.state IN ('polling', 'parking')) IS TRUE
          AND (i.end_action NOT IN ('park', 'poll_parking')) IS NOT FALSE
    ), waits AS (
        -- A poll's wait ends with the first such state from the poll on (its `run`, its
        -- `release_parking`, the end of the trace).
        SELECT c.capture_id, c.entity, c.instance, c.event, c.ts, c.seq,
               CASE WHEN c.kind = 'wait' THEN c.wait_end ELSE p.end_ts END AS wait_end
        FROM caused c ASOF LEFT JOIN polled p
          ON p.capture_id = c.capture_id AND p.entity = c.entity AND p.instance = c.instance
         AND c.wait_ts <= p.ts
    ), sets AS (
        -- A join (not an IN list) with the events waited for: without waits, its build side
        -- is empty and the scan of `events` stops at once.
        SELECT e.capture_id, e.target AS event, e.seq, e.ts, e.source, e.source_instance,
               nullif(e.note, '') AS note
        FROM events e JOIN (SELECT DISTINCT capture_id, event FROM waits) w
          ON w.capture_id = e.capture_id AND w.event = e.target
        WHERE e.action = 'set_event'
    ), named AS (
        -- The first set_event naming this task, and the first naming nobody.
        SELECT w.capture_id, w.entity, w.instance, w.event, w.ts, w.seq, w.wait_end,
               f.seq AS f_seq, f.source AS f_source, f.source_instance AS f_instance, f.ts AS f_ts
        FROM waits w ASOF LEFT JOIN (SELECT * FROM sets WHERE note IS NOT NULL) f
          ON f.capture_id = w.capture_id AND f.event = w.event AND f.note = w.entity AND f.seq > w.seq
    ), first_set AS (
        SELECT n.capture_id, n.entity, n.instance, n.event, n.ts, n.seq, n.wait_end,
               CASE WHEN a.seq < coalesce(n.f_seq, a.seq + 1) THEN a.source ELSE n.f_source END AS set_by,
               CASE WHEN a.seq < coalesce(n.f_seq, a.seq + 1) THEN a.source_instance ELSE n.f_instance END AS set_by_instance,
               CASE WHEN a.seq < coalesce(n.f_seq, a.seq + 1) THEN a.ts ELSE n.f_ts END AS set_ts
        FROM named n ASOF LEFT JOIN (SELECT * FROM sets WHERE note IS NULL) a
          ON a.capture_id = n.capture_id AND a.event = n.event AND a.seq > n.seq
    )
    -- The first set is the only candidate: when it came after the wait ended, none ended it.
    SELECT capture_id, entity, instance, event, ts, seq,
           CASE WHEN set_ts <= wait_end OR wait_end IS NULL THEN set_by END AS set_by,
           CASE WHEN set_ts <= wait_end OR wait_end IS NULL THEN set_by_instance END AS set_by_instance,
           CASE WHEN set_ts <= wait_end OR wait_end IS NULL THEN set_ts END AS set_ts
    FROM first_set;
