-- A file with header lines only is a valid capture with zero events.
SELECT name, event_count, ts_min, ts_max, json_extract_string(meta, '$.scenario') AS scenario FROM captures;
SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM intervals) AS intervals,
       (SELECT count(*) FROM instances) AS instances, (SELECT count(*) FROM diagnostics) AS diagnostics;
