-- CRLF line ends everywhere, end time with an unknown unit suffix (_xs: taken as us, with a
-- warning), and malformed records on lines 3 to 8: each one an error row with its line.
SELECT name, type FROM entities ORDER BY entity_id;
SELECT entity, channel, state, value, ts, dur, open FROM intervals ORDER BY channel, entity, ts;
SELECT seq, ts, target, action, note, value FROM events ORDER BY seq;
SELECT severity, kind, regexp_replace(position, '^.*/', '') AS position, message FROM diagnostics ORDER BY position, kind;
SELECT time_unit, ts_min, ts_max FROM captures;
