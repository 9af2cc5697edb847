-- @name preemptions
-- @summary Preemptions per task and ISR, and how often each instance was preempted
-- @column capture_id  capture
-- @column entity  task or ISR
-- @column entity_type  T, I or ISR
-- @column instances  complete instances (the statistics use these)
-- @column instances_left_out  instances left out: not complete in the capture
-- @column preemptions  preempt transitions of those instances
-- @column preempted_instances  instances preempted at least once
-- @column max_per_instance  most preemptions of one instance
-- @column migrations  resumes on another core than the one last run on
-- A preemption is a running -> ready transition (BTF `preempt`). Like every statistic over
-- instances, only complete ones count; preemption_pairs counts every preemption in the
-- trace, who preempted whom.
CREATE OR REPLACE TEMP VIEW preemptions AS
SELECT capture_id, entity, any_value(entity_type) AS entity_type,
       count(*) FILTER (WHERE complete) AS instances,
       count(*) FILTER (WHERE NOT complete) AS instances_left_out,
       coalesce(sum(preemptions) FILTER (WHERE complete), 0) AS preemptions,
       count(*) FILTER (WHERE complete AND preemptions > 0) AS preempted_instances,
       max(preemptions) FILTER (WHERE complete) AS max_per_instance,
       coalesce(sum(migrations) FILTER (WHERE complete), 0) AS migrations
FROM instances
-- `(... IN ...) IS TRUE`: the rows of the bare IN list, filtered inside the Parquet scan
-- (which then skips the pages of other entity types) rather than after it.
WHERE (entity_type IN ('T', 'I', 'ISR')) IS TRUE
GROUP BY capture_id, entity
ORDER BY capture_id, entity;
