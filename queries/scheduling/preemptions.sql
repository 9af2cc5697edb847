-- @name preemptions
-- @summary Preemptions per task and ISR, and how often each instance was preempted
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column entity_type  T, I or ISR
-- @column instances  instances seen (complete or not)
-- @column preemptions  preempt transitions in total
-- @column preempted_instances  instances preempted at least once
-- @column max_per_instance  most preemptions of one instance
-- @column migrations  resumes on another core than the one last run on
-- A preemption is a running -> ready transition (BTF `preempt`). Who preempted whom is in
-- preemption_pairs.
CREATE OR REPLACE TEMP VIEW preemptions AS
SELECT capture_id, entity, any_value(entity_type) AS entity_type, count(*) AS instances,
       sum(preemptions) AS preemptions,
       count(*) FILTER (WHERE preemptions > 0) AS preempted_instances,
       max(preemptions) AS max_per_instance,
       sum(migrations) AS migrations
FROM instances
WHERE entity_type IN ('T', 'I', 'ISR')
GROUP BY capture_id, entity
ORDER BY capture_id, entity;
