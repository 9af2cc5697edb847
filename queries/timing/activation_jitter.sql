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
-- the capture and whose number is below that of the first instance activated in it
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
    SELECT capture_id, entity, entity_type, instance, activate_ts, start_ts
    FROM instances
    WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE AND (activate_ts IS NOT NULL OR start_ts IS NOT NULL)
), first AS (
    SELECT capture_id, entity, min(activate_ts) AS first_activate, arg_min(instance, activate_ts) AS first_activated
    FROM i GROUP BY capture_id, entity
), w AS (
    SELECT capture_id, entity, entity_type, activate_ts, start_ts,
           activate_ts - lag(activate_ts) OVER seq AS a2a,
           start_ts - lag(start_ts) OVER seq AS s2s
    FROM (SELECT i.*, CASE WHEN activate_ts IS NOT NULL THEN activate_ts
                           WHEN instance < first_activated THEN first_activate
                           ELSE start_ts END AS k
          FROM i JOIN first f ON f.capture_id = i.capture_id AND f.entity = i.entity)
    WINDOW seq AS (PARTITION BY capture_id, entity ORDER BY k, instance)
)
SELECT capture_id, entity, any_value(entity_type) AS entity_type, count(activate_ts) AS activations,
       min(a2a) AS activate_to_activate_min, round(avg(a2a), 1) AS activate_to_activate_avg,
       max(a2a) AS activate_to_activate_max, max(a2a) - min(a2a) AS activate_jitter,
       count(start_ts) AS starts, min(s2s) AS start_to_start_min, round(avg(s2s), 1) AS start_to_start_avg,
       max(s2s) AS start_to_start_max, max(s2s) - min(s2s) AS start_jitter
FROM w
GROUP BY capture_id, entity
ORDER BY capture_id, entity;
