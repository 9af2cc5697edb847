-- entities: one row per named thing of a capture (task, ISR, runnable, core, semaphore, ...).
CREATE TABLE entities (
    capture_id BIGINT,    -- capture the entity belongs to
    entity_id  BIGINT,    -- id within the capture, in order of first appearance
    name       VARCHAR,   -- name as written in the trace
    type       VARCHAR,   -- BTF code (T, I, R, SIG, SEM, EVENT, STI, SIM, C, SCHED, ...), or the code found in the file
    parent     VARCHAR,   -- enclosing entity when the trace says so (the task of a runnable), else NULL
    attrs      VARCHAR    -- JSON object of extra facts (first_line, inferred_type, declared_type, ...)
);
