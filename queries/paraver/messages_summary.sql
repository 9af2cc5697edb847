-- @name messages_summary
-- @summary Messages and bytes per sender/receiver pair, with latency = receive - send
-- @column capture_id        capture
-- @column sender            sending entity
-- @column receiver          receiving entity
-- @column messages          number of messages
-- @column bytes             total size, bytes
-- @column avg_latency       mean of recv_ts - send_ts (logical times), ns
-- @column min_latency       smallest logical latency, ns
-- @column max_latency       largest logical latency, ns
-- @column avg_phys_latency  mean of phys_recv_ts - phys_send_ts, ns
-- Definitions: one row per (sender, receiver) of the messages table (Paraver type-3
-- records). latency = logical receive - logical send; it can be negative when the receive
-- was posted before the send (MPI_Irecv), which Paraver's logical times record as such.
-- The physical latency uses the times the data actually left and arrived.
CREATE OR REPLACE TEMP VIEW messages_summary AS
SELECT capture_id, sender, receiver,
       count(*) AS messages,
       sum(size) AS bytes,
       round(avg(recv_ts - send_ts), 1) AS avg_latency,
       min(recv_ts - send_ts) AS min_latency,
       max(recv_ts - send_ts) AS max_latency,
       round(avg(phys_recv_ts - phys_send_ts), 1) AS avg_phys_latency
FROM messages
GROUP BY capture_id, sender, receiver
ORDER BY capture_id, bytes DESC, sender, receiver;
