-- CRLF, spaces around fields, comments between data lines, entity tables, a repeated header
-- block (the last #version wins), #timeScale us (times x1000), a note with commas, instance
-- -1, an unknown action and an unknown target type kept, an empty trailing note (NULL).
SELECT seq, ts, source, source_type, source_instance, target, target_type, target_instance,
       action, note, value, core
FROM events ORDER BY seq;
SELECT name, format, time_unit, ts_min, ts_max, event_count,
       json_extract_string(meta, '$.version') AS version,
       json_extract_string(meta, '$.creator') AS creator,
       json_extract_string(meta, '$.inputfile') AS inputfile
FROM captures;
SELECT entity_id, name, type, attrs FROM entities ORDER BY entity_id;
SELECT state, value, ts, dur, open FROM intervals WHERE entity = 'speed' ORDER BY ts;
SELECT severity, kind, position, message FROM diagnostics ORDER BY position;
