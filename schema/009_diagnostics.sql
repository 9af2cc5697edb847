-- diagnostics: one row per problem found while reading or deriving a capture.
-- Repeats of one kind past the first 1000 are folded into a last row whose count says how many.
CREATE TABLE diagnostics (
    capture_id BIGINT,   -- capture the problem was found in
    severity   VARCHAR,  -- info, warning, error, data_loss
    kind       VARCHAR,  -- stable identifier (malformed_line, time_backwards, invalid_transition, ...)
    position   VARCHAR,  -- file:line (or byte offset / frame number for binary formats)
    ts         BIGINT,   -- event time, ns, when known
    message    VARCHAR,  -- what was expected and what was found
    count      BIGINT    -- occurrences this row stands for (1, or the folded remainder)
);
