-- lock_requests: one row per request of a semaphore or mutex by a process instance.
-- Columns defined AS (...) are computed by the views from the stored ones (not in the files).
CREATE TABLE lock_requests (
    capture_id       BIGINT,   -- capture the request belongs to
    semaphore        VARCHAR,  -- semaphore or mutex
    process          VARCHAR,  -- task or ISR that asked
    process_instance BIGINT,   -- its instance
    request_ts       BIGINT,   -- requestsemaphore / exclusivesemaphore, ns (NULL when the trace starts at assigned)
    assigned_ts      BIGINT,   -- assigned, ns (NULL when never granted)
    released_ts      BIGINT,   -- released, ns (NULL when still held at the end)
    wait             BIGINT GENERATED ALWAYS AS (assigned_ts - request_ts) VIRTUAL,  -- assigned - request, ns
    hold             BIGINT GENERATED ALWAYS AS (released_ts - assigned_ts) VIRTUAL, -- released - assigned, ns
    contended        BOOLEAN,  -- the request had to wait (waiting/queued step, semaphore overfull, or wait > 0)
    blocked_by       VARCHAR,  -- who it waited for: of the process instances that held the semaphore while a contended request waited, the first to get it (the holder when it asked); NULL when not contended or nobody is known to have held it
    blocked_by_instance BIGINT, -- that process's instance
    blockers         BIGINT    -- how many process instances held the semaphore while it waited (holders when it asked, and those that got it first); 0 when not contended
);
