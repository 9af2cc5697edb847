-- deadlines: one row per deadline given for an entity of a capture (ingest --deadlines FILE).
CREATE TABLE deadlines (
    capture_id BIGINT,   -- capture the deadline applies to
    entity     VARCHAR,  -- entity name or glob pattern (`*`, `?`, `[...]`; an exact name matches itself even when it holds those characters)
    deadline   BIGINT,   -- ns
    source     VARCHAR   -- file (a deadline file; misses a trace records itself are no rows here: deadline_misses lists them with deadline_source = recorded)
);
