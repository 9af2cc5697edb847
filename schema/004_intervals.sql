-- intervals: one row per stretch of time an entity instance spent in one state of one channel.
-- Channels: 'state' (life-cycle state of a task/ISR/runnable, state of a semaphore; OS events (`EVENT`) have no states of their own: their wait_event, set_event and clear_event stay in `events`),
-- 'running' (entity = a core, state = the process occupying it), 'value' (signal value).
CREATE TABLE intervals (
    capture_id   BIGINT,   -- capture the interval belongs to
    entity       VARCHAR,  -- entity in that state
    entity_type  VARCHAR,  -- its type code
    instance     BIGINT,   -- entity instance (-1 where the entity has no instances)
    channel      VARCHAR,  -- 'state', 'running', 'value', or a format's channel name
    state        VARCHAR,  -- state name (running, ready, waiting, ..., free, full, ...) or the value's text
    value        DOUBLE,   -- numeric value of the state when there is one (signal value, process instance on a core)
    ts           BIGINT,   -- start, ns
    dur          BIGINT,   -- length, ns (>= 0)
    core         VARCHAR,  -- core for running intervals and core occupancy, else NULL
    start_action VARCHAR,  -- action that entered the state
    end_action   VARCHAR,  -- action that left it (NULL when open)
    open         BOOLEAN   -- true when the trace ended in this state (dur runs to the capture's last event)
);
