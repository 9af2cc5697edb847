-- lock_requests: one row per request of a semaphore or mutex by a process instance.
CREATE TABLE lock_requests (
    capture_id       BIGINT,   -- capture the request belongs to
    semaphore        VARCHAR,  -- semaphore or mutex
    process          VARCHAR,  -- task or ISR that asked
    process_instance BIGINT,   -- its instance
    request_ts       BIGINT,   -- requestsemaphore / exclusivesemaphore, ns (NULL when the trace starts at assigned)
    assigned_ts      BIGINT,   -- assigned, ns (NULL when never granted)
    released_ts      BIGINT,   -- released, ns (NULL when still held at the end)
    wait             BIGINT,   -- assigned - request, ns
    hold             BIGINT,   -- released - assigned, ns
    contended        BOOLEAN   -- the request had to wait (waiting/queued step, semaphore overfull, or wait > 0)
);
