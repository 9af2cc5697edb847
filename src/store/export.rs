//! Exporting one capture: back to BTF text (from the normalised events), to Chrome/Perfetto
//! trace-event JSON (a track per core and per task, slices from the running intervals, a
//! track per entity and channel for the other intervals, instants for the other events), or
//! to standalone Parquet files. Where the output goes is [`super::out_file`]'s business.
use super::out_file::OutFile;
use crate::{Error, Result};
use arrow::array::{Array, AsArray};
use arrow::datatypes::{Float64Type, Int64Type};
use std::io::Write;
use std::path::Path;

/// A write error on the output `path`. A broken pipe (`--to btf /dev/stdout | head -1`, a
/// FIFO whose reader left) is [`Error::Output`], which `main` ends quietly on with status 0
/// as it does for `sql ... | head`: the reader has all it wanted.
fn out_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::Output(e)
        } else {
            Error::io(path, e)
        }
    }
}

/// DuckDB's memory for an export: its sorts (BTF in file order, Chrome JSON's slices by time)
/// spill to disk past it. Without a limit DuckDB takes up to 80% of the machine's memory, and
/// a capture of 51.7 M events took 8 GB to export to BTF.
const MEMORY_LIMIT: &str = "512MB";

/// Keeps an export's memory bounded whatever the capture's size: DuckDB gets
/// [`MEMORY_LIMIT`], and spills past it to a directory of its own in the system's temporary
/// directory (which DuckDB removes when the connection closes, and an interrupted export
/// removes too), not to `.tmp` in the current directory.
pub fn bound_memory(conn: &duckdb::Connection) -> Result<()> {
    let spill = std::env::temp_dir().join(format!("tracedb-export-{}", std::process::id()));
    super::out_file::spill_dir(&spill);
    // One thread: each of DuckDB's sort threads holds buffers of its own, and two of them
    // sorting rows with long names (a 1 MiB thread label on 60 lines) ran out of the limit
    // instead of spilling. The export's time is in writing its lines, not in the sort.
    conn.execute_batch(&format!(
        "SET memory_limit = '{MEMORY_LIMIT}'; SET temp_directory = '{}'; SET threads = 1;",
        spill.to_string_lossy().replace('\'', "''")
    ))?;
    Ok(())
}

/// Runs `sql` and calls `f` for every batch, as DuckDB produces them (streamed: a capture's
/// events are never all in memory at once).
fn each_batch(
    conn: &duckdb::Connection,
    sql: &str,
    mut f: impl FnMut(&arrow::record_batch::RecordBatch) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn.prepare(sql)?;
    for batch in stmt.stream_arrow([])? {
        f(&batch?)?;
    }
    Ok(())
}

/// A batch's columns with one display formatter each, built once per batch (not per cell).
struct Cells<'a> {
    batch: &'a arrow::record_batch::RecordBatch,
    fmts: Vec<Option<arrow::util::display::ArrayFormatter<'a>>>,
}

impl<'a> Cells<'a> {
    fn new(batch: &'a arrow::record_batch::RecordBatch) -> Self {
        static OPTS: arrow::util::display::FormatOptions<'static> =
            arrow::util::display::FormatOptions::new();
        let fmts = batch
            .columns()
            .iter()
            .map(|c| arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &OPTS).ok())
            .collect();
        Cells { batch, fmts }
    }

    fn text(&self, col: usize, row: usize) -> Option<String> {
        if self.batch.column(col).is_null(row) {
            return None;
        }
        Some(self.fmts.get(col)?.as_ref()?.value(row).to_string())
    }

    fn int(&self, col: usize, row: usize) -> Option<i64> {
        let a = self.batch.column(col);
        if a.is_null(row) {
            return None;
        }
        a.as_primitive_opt::<Int64Type>()
            .map(|p| p.value(row))
            .or_else(|| self.text(col, row)?.parse().ok())
    }

    fn float(&self, col: usize, row: usize) -> Option<f64> {
        let a = self.batch.column(col).as_primitive_opt::<Float64Type>()?;
        (!a.is_null(row)).then(|| a.value(row)).filter(|v| v.is_finite())
    }
}

/// `v` as the shortest decimal text that parses back to it, without `.0` when integral (what
/// BTF ingest and JSON readers parse back to the same number).
fn number(v: f64) -> String {
    format!("{v}")
}

/// A name as a BTF field: commas (impossible in BTF input, possible from other formats)
/// would split the line, so they become semicolons.
fn field(s: &str) -> String {
    s.replace([',', '\n', '\r'], ";")
}

/// An export's text, compressed as its file name's ending asks (`.gz`, `.zst`, `.bz2`,
/// `.xz`: what ingest and the Perfetto UI read back), else plain.
enum Packed {
    Plain(std::fs::File),
    Gzip(flate2::write::GzEncoder<std::fs::File>),
    Zstd(zstd::stream::write::Encoder<'static, std::fs::File>),
    Bzip2(bzip2::write::BzEncoder<std::fs::File>),
    Xz(liblzma::write::XzEncoder<std::fs::File>),
}

impl Packed {
    /// `file`, to be compressed as `path` says.
    fn new(file: std::fs::File, path: &Path) -> std::io::Result<Packed> {
        let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase());
        let ends = |e: &str| name.as_deref().is_some_and(|n| n.ends_with(e));
        Ok(if ends(".gz") {
            Packed::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::default()))
        } else if ends(".zst") || ends(".zstd") {
            Packed::Zstd(zstd::stream::write::Encoder::new(file, 3)?)
        } else if ends(".bz2") {
            Packed::Bzip2(bzip2::write::BzEncoder::new(file, bzip2::Compression::default()))
        } else if ends(".xz") {
            Packed::Xz(liblzma::write::XzEncoder::new(file, 6))
        } else {
            Packed::Plain(file)
        })
    }

    /// Ends the compressed stream (its trailer) and flushes the file.
    fn finish(self) -> std::io::Result<()> {
        let mut file = match self {
            Packed::Plain(f) => f,
            Packed::Gzip(e) => e.finish()?,
            Packed::Zstd(e) => e.finish()?,
            Packed::Bzip2(e) => e.finish()?,
            Packed::Xz(e) => e.finish()?,
        };
        file.flush()
    }
}

impl Write for Packed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Packed::Plain(w) => w.write(buf),
            Packed::Gzip(w) => w.write(buf),
            Packed::Zstd(w) => w.write(buf),
            Packed::Bzip2(w) => w.write(buf),
            Packed::Xz(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Packed::Plain(w) => w.flush(),
            Packed::Gzip(w) => w.flush(),
            Packed::Zstd(w) => w.flush(),
            Packed::Bzip2(w) => w.flush(),
            Packed::Xz(w) => w.flush(),
        }
    }
}

/// Writes capture `id` as BTF text (times in ns) to `path`.
pub fn to_btf(conn: &duckdb::Connection, id: i64, name: &str, path: &Path) -> Result<u64> {
    let out = OutFile::create(path)?;
    let file = out.open()?;
    out.commit(write_btf(conn, id, name, file, path))
}

fn write_btf(
    conn: &duckdb::Connection,
    id: i64,
    name: &str,
    file: std::fs::File,
    path: &Path,
) -> Result<u64> {
    let mut w = std::io::BufWriter::new(Packed::new(file, path).map_err(out_err(path))?);
    let header = format!(
        "#version 2.2.0\n#creator tracedb {} (export of capture {id} '{}')\n#timeScale ns\n",
        crate::TOOL_VERSION,
        // A header line ends at the first line break: a name holding one must not.
        name.replace(['\n', '\r'], " ")
    );
    w.write_all(header.as_bytes()).map_err(out_err(path))?;
    let (format, meta): (String, String) = conn.query_row(
        &format!("SELECT format, meta FROM captures WHERE capture_id = {id}"),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if format == "btf" {
        w.write_all(carried_header(&meta).as_bytes()).map_err(out_err(path))?;
    }
    // The header's declarations: the type of an entity that a header declared (its source
    // lines before its first target line know it from there) or that never appears as a
    // target (archives from before `declared_type`); and, in an entity table, a name no
    // event mentions. An entity typed by its target lines, or inferred to be a core, is not
    // declared: its earlier source lines would gain a type they did not have.
    let mut decl = Vec::new();
    let mut untyped = Vec::new();
    each_batch(
        conn,
        &format!(
            "WITH v AS (SELECT * FROM events WHERE capture_id = {id}), \
             first_target AS (SELECT target AS name, min(seq) AS seq FROM v GROUP BY target) \
             SELECT e.name, e.type FROM entities e LEFT JOIN first_target f USING (name) \
             WHERE e.capture_id = {id} AND ( \
               (e.type IS NOT NULL \
                AND coalesce(json_extract(e.attrs, '$.inferred_type')::BOOLEAN, false) = false \
                AND (f.seq IS NULL \
                  OR coalesce(json_extract(e.attrs, '$.declared_type')::BOOLEAN, false))) \
               OR (e.type IS NULL AND f.seq IS NULL \
                   AND NOT EXISTS (SELECT 1 FROM v WHERE v.source = e.name))) \
             ORDER BY e.entity_id"
        ),
        |b| {
            let c = Cells::new(b);
            for r in 0..b.num_rows() {
                match (c.text(0, r), c.text(1, r)) {
                    (Some(n), Some(t)) => decl.push(format!("#-{} {}\n", field(&t), field(&n))),
                    (Some(n), None) => untyped.push(field(&n)),
                    _ => {}
                }
            }
            Ok(())
        },
    )?;
    if !decl.is_empty() {
        w.write_all(b"#entityTypeTable\n").map_err(out_err(path))?;
        for d in decl {
            w.write_all(d.as_bytes()).map_err(out_err(path))?;
        }
    }
    if !untyped.is_empty() {
        w.write_all(b"#entityTable\n").map_err(out_err(path))?;
        for (i, n) in untyped.iter().enumerate() {
            w.write_all(format!("#-{i} {n}\n").as_bytes()).map_err(out_err(path))?;
        }
    }
    // An event about its source alone (a QS tick, dictionary or ISR record: target NULL)
    // names its source as the target, which a BTF line must have; a source of no known
    // type is the system (`SIM`).
    // BTF is in ascending time. A BTF capture keeps its own order (seq): a source whose time
    // went backwards then exports as it was and ingests again to the same tables. Other
    // formats' seq is file order (an ovni directory's thread.prv, then cpu.prv), so their
    // events are sorted by time; equal times keep file order.
    let order = if format == "btf" { "seq" } else { "ts, seq" };
    let mut n = 0u64;
    each_batch(
        conn,
        &format!(
            "SELECT ts, source, source_instance, \
             CASE WHEN target IS NULL THEN coalesce(source_type, 'SIM') ELSE target_type END, \
             coalesce(target, source), \
             CASE WHEN target IS NULL THEN source_instance ELSE target_instance END, \
             action, note, value FROM events WHERE capture_id = {id} ORDER BY {order}"
        ),
        |b| {
            let c = Cells::new(b);
            for r in 0..b.num_rows() {
                let mut line = format!(
                    "{},{},{},{},{},{},{}",
                    c.int(0, r).unwrap_or(0),
                    field(&c.text(1, r).unwrap_or_default()),
                    c.int(2, r).unwrap_or(-1),
                    field(&c.text(3, r).unwrap_or_default()),
                    field(&c.text(4, r).unwrap_or_default()),
                    c.int(5, r).unwrap_or(-1),
                    field(&c.text(6, r).unwrap_or_default())
                );
                // A value without a label (a Paraver counter) is written as the note, which
                // BTF ingest reads back as the value.
                if let Some(note) = c.text(7, r).or_else(|| c.float(8, r).map(number)) {
                    line.push(',');
                    line.push_str(&note.replace(['\n', '\r'], " "));
                }
                line.push('\n');
                w.write_all(line.as_bytes()).map_err(out_err(path))?;
                n += 1;
            }
            Ok(())
        },
    )?;
    w.into_inner().map_err(|e| e.into_error()).and_then(Packed::finish).map_err(out_err(path))?;
    Ok(n)
}

/// The source header's own lines (`#creationDate`, `#inputFile`, `#createdBy`, free keys) from
/// a BTF capture's `meta`, so that they survive an export: all but those the export writes
/// itself (`#version`, `#creator`, `#timeScale`) and the entity tables, but for an
/// `#entityType` block, which comes back as one. The reader keeps keys lower-cased; BTF's
/// own come back in BTF's spelling.
fn carried_header(meta: &str) -> String {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str(meta) else {
        return String::new();
    };
    let mut out = String::new();
    // An `#entityType` block's rows (`#-0 T`), kept as `entitytype.<id>`: written back as
    // that block, after the free lines. A free key may hold a dot (`#my.key`) too.
    let mut entity_types = String::new();
    for (k, v) in &m {
        if let (Some(id), Some(v)) = (k.strip_prefix("entitytype."), v.as_str()) {
            if id.parse::<i64>().is_ok() {
                entity_types.push_str(&format!("#-{id} {}\n", v.replace(['\n', '\r'], " ")));
                continue;
            }
        }
        let skip = ["version", "creator", "timescale"].contains(&k.as_str());
        let Some(v) = v.as_str().filter(|_| !skip && !k.is_empty()) else { continue };
        let key = match k.as_str() {
            "creationdate" => "creationDate",
            "inputfile" => "inputFile",
            "createdby" => "createdBy",
            other => other,
        };
        // A header line ends at its line break, and its key at the first blank.
        let key = key.replace([' ', '\t', '\n', '\r'], "_");
        out.push_str(&format!("#{key} {}\n", v.replace(['\n', '\r'], " ")));
    }
    if !entity_types.is_empty() {
        out.push_str("#entityType\n");
        out.push_str(&entity_types);
    }
    out
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn micros(ns: i64) -> String {
    // Trace-event times are µs; keep ns precision with three decimals.
    let (sign, a) = (if ns < 0 { "-" } else { "" }, ns.unsigned_abs());
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Writes capture `id` as Chrome/Perfetto trace-event JSON to `path`: process 1 "Cores"
/// with a thread per core (what ran), process 2 "Tasks" with a thread per task, ISR or
/// runnable (its running slices) and per Paraver thread (its states), process 3 "Other"
/// with a thread per semaphore, signal, stimulus or other entity; a thread
/// `<entity>: <channel>` in the entity's process for the intervals of every other channel
/// (Paraver/ovni event types, BTF signal values); and instant events for everything else
/// on the target's track. Two instances of one task running at once get
/// a track each (`TASK (2)`): slices on one track must nest. Returns the number of trace
/// events written.
pub fn to_chrome_json(conn: &duckdb::Connection, id: i64, path: &Path) -> Result<u64> {
    let out = OutFile::create(path)?;
    let file = out.open()?;
    out.commit(write_chrome_json(conn, id, file, path))
}

/// Process of an entity's track by its type: cores, tasks (and Paraver threads), other.
fn chrome_pid(entity_type: &str) -> i64 {
    match entity_type {
        t if ["C", "Core", "CPU"].iter().any(|c| t.eq_ignore_ascii_case(c)) => 1,
        "T" | "I" | "ISR" | "R" | "THREAD" => 2,
        _ => 3,
    }
}

fn write_chrome_json(
    conn: &duckdb::Connection,
    id: i64,
    file: std::fs::File,
    path: &Path,
) -> Result<u64> {
    let mut w = std::io::BufWriter::new(Packed::new(file, path).map_err(out_err(path))?);
    let mut tracks: std::collections::HashMap<(i64, String), i64> =
        std::collections::HashMap::new();
    let mut events: u64 = 0;
    let mut first = true;
    let mut emit = |w: &mut std::io::BufWriter<Packed>, e: String| -> Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" }).map_err(out_err(path))?;
        first = false;
        events += 1;
        w.write_all(e.as_bytes()).map_err(out_err(path))
    };
    w.write_all(b"{\"displayTimeUnit\": \"ns\", \"traceEvents\": [").map_err(out_err(path))?;
    emit(
        &mut w,
        r#"{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "Cores"}}"#.into(),
    )?;
    emit(
        &mut w,
        r#"{"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "Tasks"}}"#.into(),
    )?;
    emit(
        &mut w,
        r#"{"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "Other"}}"#.into(),
    )?;
    let mut track = |w: &mut std::io::BufWriter<Packed>,
                     pid: i64,
                     name: &str,
                     emit: &mut dyn FnMut(
        &mut std::io::BufWriter<Packed>,
        String,
    ) -> Result<()>|
     -> Result<i64> {
        let next = tracks.len() as i64 + 1;
        if let Some(t) = tracks.get(&(pid, name.to_string())) {
            return Ok(*t);
        }
        tracks.insert((pid, name.to_string()), next);
        emit(
            w,
            format!(
                r#"{{"name": "thread_name", "ph": "M", "pid": {pid}, "tid": {next}, "args": {{"name": {}}}}}"#,
                json(name)
            ),
        )?;
        Ok(next)
    };
    // Slices: what occupied each core, each task's/runnable's running stretches, the states
    // of entities without a BTF life cycle (Paraver threads and CPUs), and every interval of
    // the other channels (Paraver/ovni event types, BTF signal values) on a track per entity
    // and channel, `<entity>: <channel>`, beside the entity's own.
    // Per track, the end of each lane's last slice: a slice goes on the first lane free by
    // its start (lane 0 is the entity's own track).
    let mut lanes: std::collections::HashMap<(i64, String), Vec<i64>> =
        std::collections::HashMap::new();
    each_batch(
        conn,
        &format!(
            "SELECT channel, entity, state, ts, dur, instance, value, entity_type FROM intervals \
             WHERE capture_id = {id} AND (channel NOT IN ('running', 'state') OR \
             channel = 'running' OR state = 'running' OR \
             entity_type NOT IN ('T', 'I', 'ISR', 'R', 'SEM', 'SIG')) \
             ORDER BY ts"
        ),
        |b| {
            let c = Cells::new(b);
            for r in 0..b.num_rows() {
                let channel = c.text(0, r).unwrap_or_default();
                let entity = c.text(1, r).unwrap_or_default();
                let state = c.text(2, r).unwrap_or_default();
                let etype = c.text(7, r).unwrap_or_default();
                let (ts, dur) = (c.int(3, r).unwrap_or(0), c.int(4, r).unwrap_or(0));
                // The value of a state or channel interval (a running interval's is the
                // instance that ran).
                let mut value = c.float(6, r);
                let (pid, thread, name, inst) = if channel == "running" {
                    let inst = value.take().map(|v| v as i64);
                    (1, entity, state, inst.unwrap_or(-1))
                } else if channel != "state" {
                    let thread = format!("{entity}: {channel}");
                    (chrome_pid(&etype), thread, state, c.int(5, r).unwrap_or(-1))
                } else if state == "running" && matches!(etype.as_str(), "T" | "I" | "ISR" | "R") {
                    (2, entity.clone(), entity, c.int(5, r).unwrap_or(-1))
                } else {
                    (chrome_pid(&etype), entity, state, -1)
                };
                let value =
                    value.map(|v| format!(", \"value\": {}", number(v))).unwrap_or_default();
                let ends = lanes.entry((pid, thread.clone())).or_default();
                let lane = match ends.iter().position(|end| *end <= ts) {
                    Some(k) => k,
                    None => {
                        ends.push(ts);
                        ends.len() - 1
                    }
                };
                if let Some(end) = ends.get_mut(lane) {
                    *end = ts + dur;
                }
                let thread = if lane == 0 { thread } else { format!("{thread} ({})", lane + 1) };
                let tid = track(&mut w, pid, &thread, &mut emit)?;
                emit(
                    &mut w,
                    format!(
                        r#"{{"name": {}, "ph": "X", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"instance": {inst}{value}}}}}"#,
                        json(&name),
                        micros(ts),
                        micros(dur)
                    ),
                )?;
            }
            Ok(())
        },
    )?;
    // Instants: the other events, on their target's track; one about its source alone (a
    // QS tick, dictionary or ISR record: target NULL) on its source's, as in the BTF export
    // (it was on a track named "").
    each_batch(
        conn,
        &format!(
            "SELECT coalesce(target, source), action, ts, note, source, \
             CASE WHEN target IS NULL THEN source_type ELSE target_type END, value FROM events \
             WHERE capture_id = {id} \
             AND NOT (target_type IN ('T', 'I', 'ISR', 'R') AND action IN \
                 ('start', 'resume', 'preempt', 'terminate', 'run', 'poll', 'wait', 'suspend')) \
             ORDER BY seq"
        ),
        |b| {
            let c = Cells::new(b);
            for r in 0..b.num_rows() {
                let target = c.text(0, r).unwrap_or_default();
                let pid = chrome_pid(&c.text(5, r).unwrap_or_default());
                let tid = track(&mut w, pid, &target, &mut emit)?;
                let note =
                    c.text(3, r).map(|n| format!(", \"note\": {}", json(&n))).unwrap_or_default();
                let value = c
                    .float(6, r)
                    .map(|v| format!(", \"value\": {}", number(v)))
                    .unwrap_or_default();
                emit(
                    &mut w,
                    format!(
                        r#"{{"name": {}, "ph": "i", "s": "t", "pid": {pid}, "tid": {tid}, "ts": {}, "args": {{"source": {}{note}{value}}}}}"#,
                        json(&c.text(1, r).unwrap_or_default()),
                        micros(c.int(2, r).unwrap_or(0)),
                        json(&c.text(4, r).unwrap_or_default())
                    ),
                )?;
            }
            Ok(())
        },
    )?;
    w.write_all(b"\n]}\n").map_err(out_err(path))?;
    w.into_inner().map_err(|e| e.into_error()).and_then(Packed::finish).map_err(out_err(path))?;
    Ok(events)
}

/// Writes every table of capture `id` to `dir/<table>.parquet` (zstd, with `capture_id`).
pub fn to_parquet(conn: &duckdb::Connection, id: i64, dir: &Path) -> Result<Vec<String>> {
    if dir.as_os_str() == "-" {
        return Err(Error::Usage(
            "--to parquet writes one file per table into a directory, not to standard output \
             (`-` is for btf and chrome-json)"
                .into(),
        ));
    }
    // A file, or a symlink to none, where the directory should be.
    if dir.symlink_metadata().is_ok() && !dir.is_dir() {
        return Err(Error::Usage(format!(
            "{}: not a directory; --to parquet writes one file per table into a directory",
            dir.display()
        )));
    }
    super::out_file::create_dir(dir)?;
    let written = write_tables(conn, id, dir);
    // A failed export takes back the directory it made (when empty).
    super::out_file::discard_dir(dir, written.is_ok());
    written
}

fn write_tables(conn: &duckdb::Connection, id: i64, dir: &Path) -> Result<Vec<String>> {
    // Every table to a temporary name first (see `OutFile`); renamed into place only when all
    // are written. DuckDB's own temporary file (`tmp_<name>`, made because ours exists
    // already) is not wanted: a signal would leave it behind.
    // One thread: a COPY keeps the rows in the archive's order (time), and with two threads
    // DuckDB buffers what one has read ahead of the other's writing, up to the whole table
    // (1.3 GB for the 3.9 M events of a 200 MB trace; 183 MB and a third faster with one).
    conn.execute_batch("SET threads = 1")?;
    let mut done: Vec<(OutFile, std::path::PathBuf)> = Vec::new();
    for t in super::schema::tables() {
        let path = dir.join(format!("{}.parquet", t.name));
        let out = match OutFile::create(&path) {
            Ok(out) => out,
            Err(e) => {
                done.into_iter().for_each(|(out, _)| out.discard());
                return Err(e);
            }
        };
        let sql = format!(
            "COPY (SELECT * FROM {} WHERE capture_id = {id}) TO '{}' (FORMAT parquet, COMPRESSION zstd, \
             USE_TMP_FILE false)",
            t.name,
            out.write_path().to_string_lossy().replace('\'', "''")
        );
        if let Err(e) = conn.execute_batch(&sql) {
            out.discard();
            done.into_iter().for_each(|(out, _)| out.discard());
            return Err(e.into());
        }
        done.push((out, path));
    }
    let mut written = Vec::new();
    for (out, path) in done {
        out.commit(Ok(()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}
