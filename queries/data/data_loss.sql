-- @name data_loss
-- @summary Diagnostics summarised per capture and kind: what the importer had to skip or repair
-- @column capture_id  capture
-- @column severity  info, warning, error (a record skipped), data_loss (the trace says data was lost)
-- @column kind  diagnostic kind (see the README's table of kinds)
-- @column occurrences  how many times it happened (folded repeats included)
-- @column first_position  where it happened first (file:line)
-- @column first_ts  earliest event time involved, ns
-- @column example  message of the first occurrence
-- Rows of severity error and data_loss mean the tables miss data from the source; warning
-- means data was kept but looked wrong; info means nothing is wrong with the data.
CREATE OR REPLACE TEMP VIEW data_loss AS
SELECT capture_id, severity, kind, sum(count) AS occurrences,
       arg_min(position, coalesce(ts, 9223372036854775807)) AS first_position,
       min(ts) AS first_ts,
       arg_min(message, coalesce(ts, 9223372036854775807)) AS example
FROM diagnostics
GROUP BY capture_id, severity, kind
ORDER BY capture_id,
         CASE severity WHEN 'data_loss' THEN 0 WHEN 'error' THEN 1 WHEN 'warning' THEN 2 ELSE 3 END, kind;
