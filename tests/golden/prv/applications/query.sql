-- Two applications (the second with one task), communicator lines (2, 3), CPUs from the
-- .row, names from the .pcf/.row. Lines 8 and 11: two type:value pairs on one line. Line 6:
-- end = -1 (open to the header's end, 1000 ns). Line 10: a '#' line in the body. Lines 11
-- and 14 go back in time and line 12's logical receive precedes its send: all kept with
-- their own times.
SELECT name, type FROM entities ORDER BY entity_id;
SELECT entity, entity_type, channel, state, value, ts, dur, core, open FROM intervals ORDER BY channel, entity, ts;
SELECT seq, ts, target, target_type, action, note, value FROM events ORDER BY seq;
SELECT sender, receiver, send_ts, recv_ts, phys_send_ts, phys_recv_ts, size, tag FROM messages ORDER BY send_ts;
SELECT severity, kind, position, message FROM diagnostics ORDER BY position, kind;
SELECT format, time_unit, ts_min, ts_max, event_count, meta FROM captures;
SELECT kind, entity, state, intervals, time, pct FROM state_time ORDER BY kind, entity, state;
SELECT channel, state, value, entities, intervals, time, pct FROM channel_time ORDER BY channel, value;
SELECT sender, receiver, messages, bytes, avg_latency, min_latency, max_latency, avg_phys_latency FROM messages_summary;
