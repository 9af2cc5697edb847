-- @name activation_jitter
-- @summary Time between consecutive activations and starts per task and ISR, and their jitter (ns)
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column entity_type  T, I or ISR
-- @column activations  instances with an activate in the capture
-- @column activate_to_activate_min  shortest time between two consecutive activations, ns
-- @column activate_to_activate_avg  mean time between consecutive activations (1 decimal), ns
-- @column activate_to_activate_max  longest time between consecutive activations, ns
-- @column activate_jitter  activate_to_activate_max - activate_to_activate_min, ns
-- @column starts  instances with a first start in the capture
-- @column start_to_start_min  shortest time between the first starts of two consecutive instances, ns
-- @column start_to_start_avg  mean of those (1 decimal), ns
-- @column start_to_start_max  longest of those, ns
-- @column start_jitter  start_to_start_max - start_to_start_min, ns
-- Consecutive = one instance and the next of the same entity in one capture, as AMALTHEA
-- defines both distances ("the first start of the succeeding instance"): instances in
-- activation order (the instance number breaks ties). An instance whose activate is not in
-- the capture and whose number is below that of the first instance activated in it (the
-- lowest number of those activated at the earliest instant)
-- (activated before the capture began: BTF numbers instances in activation order) sorts
-- before that one; any other instance without an activate sorts by its start. When a later instance starts first (on another core), its
-- start-to-start distance is negative, and the pair still counts. A pair where either
-- instance lacks the event has no distance: a lost activate does not make one distance span
-- two periods. Jitter is max - min of those distances, the peak-to-peak definition; some
-- tools quote the deviation from the nominal period instead. An aggregate per entity (where its
-- first activation is) and one window.
CREATE OR REPLACE TEMP VIEW activation_jitter AS
WITH i AS NOT MATERIALIZED (
    -- Read twice (a narrow scan) rather than held: `(... IN ...) IS TRUE` is filtered inside
    -- the Parquet scan, which then skips the runnables' pages.
    -- Every task and ISR has its row, one whose instances show neither event (a capture
    -- whose logger writes none) with 0 activations and NULL distances.
    SELECT capture_id, entity, entity_type, instance, activate_ts, start_ts
    FROM instances
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE
), first AS MATERIALIZED (
    -- One row per entity, numbered (eid): the window below partitions and sorts integers
    -- and carries no names, which are joined back to the aggregate's few rows. Held, and
    -- numbered in a fixed order, so that both readers see the same numbers.
    SELECT capture_id, entity, any_value(entity_type) AS entity_type,
           count(activate_ts) AS activations, count(start_ts) AS starts,
           -- Of the instances activated first, the lowest number (the key orders by time,
           -- then number; an instance fits the key's low 64 bits): a tie is never decided by
           -- which row the engine met first. Costs no measurable time (a struct key did).
           min(activate_ts) AS first_activate,
           arg_min(instance, activate_ts::HUGEINT * 18446744073709551616 + instance)
               AS first_activated,
           row_number() OVER (ORDER BY capture_id, entity) AS eid
    FROM i GROUP BY capture_id, entity
), w AS (
    SELECT eid,
           activate_ts - lag(activate_ts) OVER seq AS a2a,
           start_ts - lag(start_ts) OVER seq AS s2s
    FROM (SELECT f.eid, i.instance, i.activate_ts, i.start_ts,
                 CASE WHEN i.activate_ts IS NOT NULL THEN i.activate_ts
                      WHEN i.instance < f.first_activated THEN f.first_activate
                      ELSE i.start_ts END AS k
          FROM i JOIN first f ON f.capture_id = i.capture_id AND f.entity = i.entity
          WHERE i.activate_ts IS NOT NULL OR i.start_ts IS NOT NULL)
    WINDOW seq AS (PARTITION BY eid ORDER BY k, instance)
), d AS (
    SELECT eid, min(a2a) AS a_min, round(avg(a2a), 1) AS a_avg, max(a2a) AS a_max,
           min(s2s) AS s_min, round(avg(s2s), 1) AS s_avg, max(s2s) AS s_max
    FROM w GROUP BY eid
)
SELECT f.capture_id, f.entity, f.entity_type, f.activations,
       d.a_min AS activate_to_activate_min, d.a_avg AS activate_to_activate_avg,
       d.a_max AS activate_to_activate_max, d.a_max - d.a_min AS activate_jitter,
       f.starts, d.s_min AS start_to_start_min, d.s_avg AS start_to_start_avg,
       d.s_max AS start_to_start_max, d.s_max - d.s_min AS start_jitter
FROM first f LEFT JOIN d USING (eid)
ORDER BY f.capture_id, f.entity;
