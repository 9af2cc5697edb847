SELECT name, type FROM entities ORDER BY entity_id;
SELECT entity, channel, state, value, ts, dur, open FROM intervals ORDER BY channel, entity, ts;
SELECT seq, ts, target, action, note, value FROM events ORDER BY seq;
SELECT severity, kind, regexp_replace(position, '^.*/', '') AS position, regexp_replace(message, 'no .*/', 'no ') AS message FROM diagnostics ORDER BY kind, message;
