-- No .pcf/.row beside the trace: numbers for names and two info diagnostics. A 'new format'
-- first line and an upper-case #PARAVER header; resource model 0 (ovni style).
SELECT name, type FROM entities ORDER BY entity_id;
SELECT entity, channel, state, value, ts, dur, open FROM intervals ORDER BY channel, entity, ts;
SELECT seq, ts, target, action, note, value FROM events ORDER BY seq;
SELECT severity, kind, regexp_replace(position, '^.*/', '') AS position, regexp_replace(message, 'no .*/', 'no ') AS message FROM diagnostics ORDER BY kind, message;
