-- @name cpu_load
-- @summary CPU load per core per time window (busy time / window length)
-- @param window/window_ns duration 1ms  length of each window (at most 1000000000s)
-- @param idle text %idle%  ILIKE pattern of process names that count as idle (FreeRTOS IDLE tasks, [idle])
-- @capture
-- @column capture_id  capture
-- @column core  core
-- @column window_start  start of the window, ns (windows are aligned to multiples of the window length)
-- @column window_end  end of the window, ns
-- @column busy  time a non-idle process occupied the core in the window, ns
-- @column load  busy / window length, 0..1 (4 decimals)
-- CPU load of a core over a window = time a non-idle process runs on it (running or
-- polling: an active wait uses the core) / window length. Windows cover the capture from
-- its first to its last event; the first and last window may be partly outside it (a
-- capture ending exactly on a window boundary ends with the window before that boundary).
-- In SQL: `SELECT * FROM cpu_load(window_ns := 500000, idle := '%idle%')`; `capture := ID`
-- computes one capture only (what `--capture` passes), much faster in an archive of many.
-- At most 10,000,000 rows (windows × cores, over the captures computed): a window that
-- would make more is an error.
-- Window numbers are floor(ts / window) (times may be negative; `//` truncates toward 0).
-- In SQL, window_ns is a whole number of ns (ns('2ms') converts a duration): text such as
-- '2ms', a fraction, zero or a negative number is an error naming window_ns; idle := NULL
-- counts no process as idle. (cpu_load checks its parameters and hands them to _cpu_load,
-- which does the work: given as is, text or a fraction failed in DuckDB's binder with a
-- list of range() candidates, and ILIKE NULL excluded every process, every core at 0.)
CREATE OR REPLACE TEMP MACRO _cpu_load(window_ns := 1000000, idle := '%idle%', capture := NULL) AS TABLE
WITH picked AS (
    SELECT * FROM captures WHERE capture IS NULL OR capture_id = capture
), cores AS (
    -- Every core a process ran on, and every core the trace declares (BTF type C, older
    -- files Core, in any case) even if nothing ran on it: a core idle the whole capture is at 0, not
    -- missing. Numbered in output order, so that the steps below group, join and sort
    -- integers, not names.
    SELECT capture_id, core, row_number() OVER (ORDER BY capture_id, core) AS cid FROM (
        SELECT DISTINCT capture_id, core FROM intervals
        WHERE channel = 'running' AND (capture IS NULL OR capture_id = capture)
        UNION
        SELECT capture_id, name FROM entities WHERE upper(type) IN ('C', 'CORE') AND (capture IS NULL OR capture_id = capture))
), guard AS (
    -- Checked before the windows are made: 1 ns windows over a long capture would make
    -- billions of rows, run for minutes and fill memory.
    SELECT CASE
        WHEN window_ns IS NULL OR window_ns <= 0
            THEN error('cpu_load: window_ns must be a positive integer number of ns (a duration with a unit: ns(''2ms''))')
        -- Windows are added to times and to themselves: near 2^63 that overflows.
        WHEN window_ns > 1000000000000000000
            THEN error('cpu_load: window_ns must be at most 10^18 ns (about 31 years)')
        WHEN n_rows > 10000000
            THEN error(printf('cpu_load: a %d ns window makes %d rows (windows × cores); at most 10,000,000 (use a longer window%s)',
                              window_ns, n_rows,
                              CASE WHEN capture IS NULL AND n_captures > 1 THEN ', or capture := ID for one capture' ELSE '' END))
        ELSE true END AS ok
    -- The parameters only inside the aggregates here: cpu_load passes them as expressions.
    FROM (SELECT coalesce(sum(((p.ts_max - p.ts_min) // greatest(window_ns, 1) + 1) * c.n), 0) AS n_rows,
                 count(*) AS n_captures
          FROM picked p JOIN (SELECT capture_id, count(*) AS n FROM cores GROUP BY capture_id) c USING (capture_id))
), occ AS (
    SELECT i.capture_id, c.cid, ts, ts + dur AS te
    FROM intervals i JOIN cores c ON c.capture_id = i.capture_id AND c.core = i.core
    WHERE channel = 'running' AND dur > 0 AND NOT (state ILIKE idle) AND (SELECT ok FROM guard)
      AND (capture IS NULL OR i.capture_id = capture)
), spans AS (
    -- A capture that ends exactly on a window boundary ends with the window before it (its
    -- last instant is that window's end), not with an empty window after it.
    SELECT capture_id, ts_min, greatest(ts_max - 1, ts_min) AS last
    FROM picked WHERE ts_min IS NOT NULL AND (SELECT ok FROM guard)
), grid AS (
    SELECT c.capture_id, c.cid, c.core,
           unnest(range((s.ts_min - ((s.ts_min % window_ns) + window_ns) % window_ns) // window_ns,
                        (s.last - ((s.last % window_ns) + window_ns) % window_ns) // window_ns + 1)) AS k
    FROM cores c JOIN spans s ON s.capture_id = c.capture_id
), pieces AS (
    SELECT capture_id, cid, ts, te,
           unnest(range((ts - ((ts % window_ns) + window_ns) % window_ns) // window_ns,
                         ((te - 1) - (((te - 1) % window_ns) + window_ns) % window_ns) // window_ns + 1)) AS k
    FROM occ
), busy AS (
    SELECT cid, k, sum(least(te, (k + 1) * window_ns) - greatest(ts, k * window_ns)) AS busy
    FROM pieces GROUP BY cid, k
)
SELECT g.capture_id, g.core, g.k * window_ns AS window_start, (g.k + 1) * window_ns AS window_end,
       coalesce(b.busy, 0)::BIGINT AS busy, round(coalesce(b.busy, 0) / window_ns, 4) AS load
FROM grid g
LEFT JOIN busy b ON b.cid = g.cid AND b.k = g.k
ORDER BY g.cid, g.k;
CREATE OR REPLACE TEMP MACRO cpu_load(window_ns := 1000000, idle := '%idle%', capture := NULL) AS TABLE
SELECT * FROM _cpu_load(
    -- An integer (or integral text or decimal): that number; one past BIGINT: just over the
    -- limit; anything else NULL. The guard refuses both by name.
    window_ns := CASE WHEN TRY_CAST(window_ns AS DECIMAL(38, 9)) > 1000000000000000000
                      THEN 1000000000000000001
                      WHEN TRY_CAST(window_ns AS DECIMAL(38, 9)) = TRY_CAST(window_ns AS BIGINT)
                      THEN TRY_CAST(window_ns AS BIGINT) END,
    idle := coalesce(CAST(idle AS VARCHAR), ''),
    capture := CAST(capture AS BIGINT));
