-- messages: one row per communication between two entities (Paraver type-3 records, QS posts).
-- No BTF record produces messages; the table is empty for BTF captures.
CREATE TABLE messages (
    capture_id        BIGINT,   -- capture the message belongs to
    sender            VARCHAR,  -- sending entity
    sender_instance   BIGINT,   -- its instance
    receiver          VARCHAR,  -- receiving entity
    receiver_instance BIGINT,   -- its instance
    send_ts           BIGINT,   -- logical send time, ns
    recv_ts           BIGINT,   -- logical receive time, ns (NULL: a QS post never received within the trace)
    phys_send_ts      BIGINT,   -- physical send time, ns
    phys_recv_ts      BIGINT,   -- physical receive time, ns (NULL as recv_ts)
    size              BIGINT,   -- bytes
    tag               BIGINT    -- message tag
);
