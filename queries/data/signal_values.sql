-- @name signal_values
-- @summary Signal writes as a value timeline: each value, who wrote it, and how long it held
-- @column capture_id  capture
-- @column signal  signal (BTF SIG entity)
-- @column ts  time of the write, ns
-- @column dur  time until the next write of the signal (or the capture's end), ns
-- @column value  the written value as a number (NULL when the note is not numeric)
-- @column text  the written value as written
-- @column writer  process or runnable that wrote it
-- @column writer_instance  its instance
-- One row per write. Reads are in events (action = 'read').
CREATE OR REPLACE TEMP VIEW signal_values AS
SELECT e.capture_id, e.target AS signal, e.ts,
       coalesce(lead(e.ts) OVER w, c.ts_max) - e.ts AS dur,
       e.value, e.note AS text, e.source AS writer, e.source_instance AS writer_instance
FROM events e
JOIN captures c ON c.capture_id = e.capture_id
WHERE e.target_type = 'SIG' AND e.action = 'write'
WINDOW w AS (PARTITION BY e.capture_id, e.target ORDER BY e.ts, e.seq)
ORDER BY e.capture_id, signal, e.ts;
