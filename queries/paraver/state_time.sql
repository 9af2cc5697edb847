-- @name state_time
-- @summary Time per state per thread and per CPU (Paraver state records) and per QS state machine, with percentages
-- @column capture_id  capture
-- @column kind        THREAD (time of a thread or row), CPU (time on a CPU: the cpu field of the records, or a CPU row), or AO / SM (a QS active object or state machine)
-- @column entity      thread or CPU name (from the .row, else THREAD a.t.th / CPU n), or the QS object's name
-- @column state       state name (from the .pcf STATES, else its number; QS: the state handler's name)
-- @column intervals   number of intervals in that state
-- @column time        total time in that state, ns (sum of dur)
-- @column pct         time / total state time of that entity, in percent (2 decimals)
-- Definitions: the intervals of channel 'state' of THREAD and CPU entities (Paraver type-1
-- records; QS: the state after each transition of an active object or state machine). A
-- state still open when the trace ended (end = -1) counts up to the capture's
-- end. The per-CPU rows add the time of each thread state record to the CPU it names
-- (records with cpu 0, "no CPU", have none). Like Paraver's "State profile" histogram
-- with the "% time" statistic.
CREATE OR REPLACE TEMP VIEW state_time AS
WITH s AS (
    SELECT capture_id, entity_type AS kind, entity, state, dur
    -- `(... IN ...) IS TRUE` (the same rows) is a filter DuckDB evaluates inside the Parquet
    -- scan, on each row group's dictionary: a BTF archive, with none of these types, is skipped
    -- without reading its other columns (a bare IN list is only used to prune by statistics,
    -- which cannot rule it out, and then filtered row by row: 1 s over 33.8 M intervals).
    FROM intervals WHERE channel = 'state' AND (entity_type IN ('THREAD', 'CPU', 'AO', 'SM')) IS TRUE
    UNION ALL
    SELECT capture_id, 'CPU' AS kind, core AS entity, state, dur
    FROM intervals WHERE channel = 'state' AND entity_type = 'THREAD' AND core IS NOT NULL
)
SELECT capture_id, kind, entity, state,
       count(*) AS intervals,
       sum(dur) AS time,
       round(100.0 * sum(dur) / nullif(sum(sum(dur)) OVER (PARTITION BY capture_id, kind, entity), 0), 2) AS pct
FROM s
GROUP BY capture_id, kind, entity, state
ORDER BY capture_id, kind DESC, entity, time DESC, state;
