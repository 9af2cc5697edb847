-- @name signal_values
-- @summary Signal writes as a value timeline: each value, who wrote it, and how long it held
-- @column capture_id  capture
-- @column signal  signal (BTF SIG entity)
-- @column ts  time the value took effect, ns: the write's time (a write logged out of time order takes effect at the latest time its signal had seen)
-- @column dur  time until the next write of the signal (or the capture's end), ns
-- @column value  the written value as a number (NULL when the note is not numeric)
-- @column text  the written value as written
-- @column writer  process or runnable that wrote it
-- @column writer_instance  its instance
-- One row per write. Reads are in events (action = 'read').
-- In file order, a value takes effect at the latest time its signal has seen (as in
-- `intervals`: states never go back in time when a trace does).
-- How: one window (one sort) gives both the running maximum and the next write's time: the
-- next value takes effect at greatest(this one's time, the next write's own time).
CREATE OR REPLACE TEMP VIEW signal_values AS
WITH w AS (
    SELECT e.capture_id, e.target, e.seq,
           max(e.ts) OVER (seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ts,
           lead(e.ts) OVER seq AS next_write_ts,
           lead(true) OVER seq AS has_next,
           e.value, e.note, e.source, e.source_instance
    FROM events e
    WHERE e.target_type = 'SIG' AND e.action = 'write'
    WINDOW seq AS (PARTITION BY e.capture_id, e.target ORDER BY e.seq)
)
SELECT w.capture_id, w.target AS signal, w.ts,
       -- greatest() skips a NULL, as max() does.
       coalesce(CASE WHEN w.has_next THEN greatest(w.ts, w.next_write_ts) END, c.ts_max) - w.ts AS dur,
       w.value, w.note AS text, w.source AS writer, w.source_instance AS writer_instance
FROM w
JOIN captures c ON c.capture_id = w.capture_id
ORDER BY w.capture_id, signal, w.ts, w.seq;
