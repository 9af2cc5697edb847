-- instances: one row per life cycle of a task, ISR or runnable instance (activate .. terminate).
-- All times and durations in ns. A metric is NULL when an event it needs is missing.
-- Columns defined AS (...) are computed by the views from the stored ones (not in the files).
CREATE TABLE instances (
    capture_id    BIGINT,   -- capture the instance belongs to
    entity        VARCHAR,  -- task, ISR or runnable
    entity_type   VARCHAR,  -- T, I (or ISR), R
    instance      BIGINT,   -- instance number from the trace
    activate_ts   BIGINT,   -- activate (runnables: their start)
    start_ts      BIGINT,   -- first start
    terminate_ts  BIGINT,   -- terminate
    core          VARCHAR,  -- core of the first start (or first resume when there is no start; NULL when the capture never shows it run, as for a runnable first seen suspended and never resumed)
    response_time BIGINT GENERATED ALWAYS AS (terminate_ts - activate_ts) VIRTUAL,  -- terminate - activate
    start_delay   BIGINT GENERATED ALWAYS AS (start_ts - activate_ts) VIRTUAL,      -- first start - activate
    gross_exec    BIGINT GENERATED ALWAYS AS (terminate_ts - start_ts) VIRTUAL,     -- terminate - first start
    net_exec      BIGINT,   -- total time running
    ready_time    BIGINT,   -- total time ready (preempted) between start and terminate
    waiting_time  BIGINT,   -- total time waiting (passive wait)
    polling_time  BIGINT,   -- total time polling (active wait)
    parking_time  BIGINT,   -- total time parking
    preemptions   BIGINT,   -- preempt (runnables: suspend) transitions
    migrations    BIGINT,   -- changes of core: resumes (or `poll_parking`) on another core than the one last run on
    complete      BOOLEAN   -- activate and terminate both in the capture, with no resynchronisation in between
);
