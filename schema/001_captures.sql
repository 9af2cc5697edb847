-- captures: one row per ingested capture (a source file or a set of files read together).
-- Written from the manifest; a capture is listed only once all its files are complete.
CREATE TABLE captures (
    capture_id     BIGINT,    -- archive-wide id, assigned at ingest, never reused while listed
    name           VARCHAR,   -- --name, or the source file name without its extensions (with them when that is a number: `5.btf`; `capture-63` when the whole name is one, as `ingest <(...)` gives)
    format         VARCHAR,   -- importer that read it: btf, prv (Paraver, an ovni output directory too), qs, ovni (ovni's binary streams), hw, shark
    source_files   VARCHAR,   -- JSON array of the source paths as given on the command line (then the Paraver companions read)
    source_sha256  VARCHAR,   -- SHA-256 of the source bytes as stored on disk (compressed if the file was); for a capture of several files (trace files, then their companions: a Paraver trace's `.pcf` and `.row`, the QS `.dic`, a S.Ha.R.K. run's later chunk files, a hardware-trace export's `--hw-map` then `--hw-elf`, ovni's JSON metadata), the SHA-256 of their SHA-256s (hex, one per line)
    source_bytes   BIGINT,    -- size of the source files on disk, bytes (a Paraver trace's `.pcf` and `.row` included)
    ingested_at    VARCHAR,   -- UTC time the capture came into the archive, RFC 3339 (`reingest` keeps it)
    time_unit      VARCHAR,   -- unit of the source timestamps (ps, ns, us, ms, s); tables are in ns, except tick (QS without --tick-rate: raw target ticks; S.Ha.R.K. without a cycles_per_msec record or --tick-rate: raw TSC cycles; a hardware-trace export counted in cycles of no given frequency: raw cycles)
    ts_origin      BIGINT,    -- ns added to scaled source times (0: the trace's own zero)
    ts_min         BIGINT,    -- first event time, ns (NULL for a capture without events)
    ts_max         BIGINT,    -- last event time, ns, or a Paraver header's end time when that is later (open intervals run to it); NULL for a capture without events
    event_count    BIGINT,    -- rows in events for this capture
    meta           VARCHAR,   -- JSON object of header metadata (BTF #keys, lower-cased; the other formats' keys are prefixed `paraver.`, `qs.` (and `qp_version`), `ovni.`, `shark.`, `hw.`)
    tool_version   VARCHAR,   -- tracedb version that wrote the capture
    schema_version INTEGER,   -- archive schema version the capture was written with
    tags           VARCHAR,   -- JSON object of the --tag key=value labels given at ingest
    source_text_bytes BIGINT  -- size of the sources' text once decompressed, a Paraver trace's `.pcf` and `.row` included, bytes (NULL if ingested before 2026-11-21; companions counted since the eighth session, or after a `reingest`)
);
