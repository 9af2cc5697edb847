-- deadlines: one row per deadline given for an entity of a capture (ingest --deadlines FILE).
CREATE TABLE deadlines (
    capture_id BIGINT,   -- capture the deadline applies to
    entity     VARCHAR,  -- entity name or glob pattern (* and ?)
    deadline   BIGINT,   -- ns
    source     VARCHAR   -- file (a deadline file) or recorded (the trace itself)
);
