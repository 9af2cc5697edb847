-- events: one row per source event, as read: in file order (BTF, where file order is time order), or sorted by time within a window (Paraver, whose writers emit records only roughly in order).
CREATE TABLE events (
    capture_id      BIGINT,   -- capture the event belongs to
    seq             BIGINT,   -- 0-based position among the capture's events (ties on ts keep this order)
    ts              BIGINT,   -- event time, ns from the capture's time origin
    source          VARCHAR,  -- entity that caused the event (BTF field 2)
    source_type     VARCHAR,  -- type of the source when known (e.g. C for a core), else NULL
    source_instance BIGINT,   -- instance of the source (-1: none)
    target          VARCHAR,  -- entity the event happened to (BTF field 5)
    target_type     VARCHAR,  -- type code as written (T, I, ISR, R, SEM, SIG, ...), unknown codes kept
    target_instance BIGINT,   -- instance of the target (-1: none)
    action          VARCHAR,  -- what happened (activate, start, preempt, write, ...), unknown actions kept
    note            VARCHAR,  -- rest of the line after the action (may contain commas), NULL when absent
    value           DOUBLE,   -- numeric payload when there is one (signal value, semaphore counter): a note that is a decimal number, or a hexadecimal one with `0x` (`0x1F` → 31); else NULL
    core            VARCHAR   -- core the event happened on, when it can be told (process and runnable events); an `activate` is on its source's core, NULL when the source (a stimulus) is on none
);
