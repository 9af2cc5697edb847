-- @name channel_time
-- @summary Time per value per channel (Paraver/ovni event types: MPI call, nOS-V subsystem, ...)
-- @column capture_id  capture
-- @column kind        THREAD (a thread's channel) or CPU (a CPU row's: ovni's cpu.prv)
-- @column channel     channel: the event type's name from the .pcf (else its number)
-- @column state       the value's label from the .pcf VALUES (else the value)
-- @column value       the value
-- @column entities    threads or CPUs that were in it
-- @column intervals   number of intervals with that value
-- @column time        total time with that value, ns (sum of dur over all entities)
-- @column avg_time    mean interval length, ns
-- @column pct         time / total time of the channel (all its values) for that kind, in percent
-- Definitions: each Paraver event type is a channel per thread (or CPU row); an event with
-- a non-zero value sets the channel to that value until the next event of the same type
-- on the same entity; value 0 ends it (time with value 0 is not counted), except in
-- ovni's PRV_ZERO channels (a CPU's running threads, the nOS-V breakdown and hardware
-- counters), where 0 is a value like any other and counts. A value still set when the
-- trace ended counts up to the capture's end. Sums are 128-bit: times up to 2^62 ns and
-- sizes up to 2^63 - 1 add up without overflow. Lifecycle channels of other
-- formats ('state', 'running', 'value') are left out: see state_time. Threads and CPUs are
-- kept apart: ovni mirrors a thread's channels on the CPU it runs on, under the same name,
-- so one sum over both would count that time twice.
CREATE OR REPLACE TEMP VIEW channel_time AS
SELECT capture_id, entity_type AS kind, channel, state, value,
       count(DISTINCT entity) AS entities,
       count(*) AS intervals,
       sum(dur) AS time,
       round(avg(dur), 1) AS avg_time,
       round(100.0 * sum(dur) / nullif(sum(sum(dur)) OVER (PARTITION BY capture_id, entity_type, channel), 0), 2) AS pct
FROM intervals
WHERE channel NOT IN ('state', 'running', 'value')
GROUP BY capture_id, entity_type, channel, state, value
ORDER BY capture_id, kind DESC, channel, time DESC, value;
