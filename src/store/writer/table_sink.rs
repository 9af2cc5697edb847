//! [`TableSink`]: the derive stage's [`Output`] over a [`CaptureWriter`]. The three large
//! tables (events, intervals, instances) take each row's columns in one slice pattern over
//! the batch's builders; the others go value by value through [`Batch`]'s appenders. A
//! table's batch goes to the writer thread as soon as it is full.
//!
//! [`Batch`]: super::Batch
use super::batch::Col;
use super::CaptureWriter;
use crate::derive::{EventRow, InstanceRow, IntervalRow, LockRow, MessageRow, Output, StateText};
use crate::model::Interner;
use crate::{Error, Result};

/// Tables whose rows the derive stage streams, in [`Output`] order.
pub const EVENTS: usize = 0;
/// See [`EVENTS`].
pub const INTERVALS: usize = 1;
/// See [`EVENTS`].
pub const INSTANCES: usize = 2;
/// See [`EVENTS`].
pub const LOCK_REQUESTS: usize = 3;
/// See [`EVENTS`].
pub const MESSAGES: usize = 4;

/// A table's columns are not of the kinds its rows are written as.
fn mismatch(table: &str) -> Error {
    Error::Sql(format!("internal: the {table} row does not match schema/*.sql"))
}

/// Adapts [`CaptureWriter`] to the derive stage's [`Output`], table indexes resolved once.
pub struct TableSink {
    /// The writer.
    pub writer: CaptureWriter,
    idx: [usize; 5],
}

impl TableSink {
    /// Wraps `writer`.
    pub fn new(writer: CaptureWriter) -> Self {
        let find = |n| writer.table_index(n).unwrap_or(usize::MAX);
        let idx = [
            find("events"),
            find("intervals"),
            find("instances"),
            find("lock_requests"),
            find("messages"),
        ];
        TableSink { writer, idx }
    }
}

impl Output for TableSink {
    // The three large tables take each row's columns in one slice pattern, which checks
    // every column's kind at once; appending value by value through `Batch::i64` and
    // friends (a dispatch and a call per value) was ~15% of the parse/derive thread.
    fn event(&mut self, r: &EventRow<'_>, n: &Interner) -> Result<()> {
        let i = self.idx[EVENTS];
        if let Some(b) = self.writer.batch(i) {
            let text = match b.cols.as_mut_slice() {
                [Col::I64(seq), Col::I64(ts), Col::Dict(source), Col::Dict(source_type), Col::I64(source_instance), Col::Dict(target), Col::Dict(target_type), Col::I64(target_instance), Col::Dict(action), Col::Str(note), Col::F64(value), Col::Dict(core)] =>
                {
                    seq.append_value(r.seq);
                    ts.append_value(r.ts);
                    source_instance.append_value(r.source_instance);
                    target_instance.append_value(r.target_instance);
                    note.append_option(r.note);
                    value.append_option(r.value);
                    source.sym(Some(r.source), n)
                        + source_type.sym(r.source_type, n)
                        + target.sym(r.target, n)
                        + target_type.sym(r.target_type, n)
                        + action.sym(Some(r.action), n)
                        + core.sym(r.core, n)
                        + r.note.map_or(0, str::len)
                }
                _ => return Err(mismatch("events")),
            };
            b.end_row_of(text);
        }
        self.writer.flush(i, false)
    }

    fn intervals(&mut self, rows: &[IntervalRow], n: &Interner) -> Result<()> {
        let i = self.idx[INTERVALS];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                let text = match b.cols.as_mut_slice() {
                    [Col::Dict(entity), Col::Dict(entity_type), Col::I64(instance), Col::Dict(channel), Col::Dict(state), Col::F64(value), Col::I64(ts), Col::I64(dur), Col::Dict(core), Col::Dict(start_action), Col::Dict(end_action), Col::Bool(open)] =>
                    {
                        instance.append_value(r.instance);
                        value.append_option(r.value);
                        ts.append_value(r.ts);
                        dur.append_value(r.dur);
                        open.append_value(r.open);
                        let state = match &r.state {
                            StateText::Sym(s) => state.sym(Some(*s), n),
                            StateText::Owned(text) => state.str(Some(text)),
                        };
                        state
                            + entity.sym(Some(r.entity), n)
                            + entity_type.sym(Some(r.entity_type), n)
                            + channel.sym(Some(r.channel), n)
                            + core.sym(r.core, n)
                            + start_action.sym(r.start_action, n)
                            + end_action.sym(r.end_action, n)
                    }
                    _ => return Err(mismatch("intervals")),
                };
                b.end_row_of(text);
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn instances(&mut self, rows: &[InstanceRow], n: &Interner) -> Result<()> {
        let i = self.idx[INSTANCES];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                let text = match b.cols.as_mut_slice() {
                    [Col::Dict(entity), Col::Dict(entity_type), Col::I64(instance), Col::I64(activate_ts), Col::I64(start_ts), Col::I64(terminate_ts), Col::Dict(core), Col::I64(net_exec), Col::I64(ready_time), Col::I64(waiting_time), Col::I64(polling_time), Col::I64(parking_time), Col::I64(preemptions), Col::I64(migrations), Col::Bool(complete)] =>
                    {
                        instance.append_value(r.instance);
                        activate_ts.append_option(r.activate_ts);
                        start_ts.append_option(r.start_ts);
                        terminate_ts.append_option(r.terminate_ts);
                        net_exec.append_value(r.net_exec);
                        ready_time.append_value(r.ready_time);
                        waiting_time.append_option(r.waiting_time);
                        polling_time.append_option(r.polling_time);
                        parking_time.append_option(r.parking_time);
                        preemptions.append_value(r.preemptions);
                        migrations.append_option(r.migrations);
                        complete.append_value(r.complete());
                        entity.sym(Some(r.entity), n)
                            + entity_type.sym(Some(r.entity_type), n)
                            + core.sym(r.core, n)
                    }
                    _ => return Err(mismatch("instances")),
                };
                b.end_row_of(text);
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn lock_requests(&mut self, rows: &[LockRow], n: &Interner) -> Result<()> {
        let i = self.idx[LOCK_REQUESTS];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                b.sym(Some(r.semaphore), n)
                    .sym(Some(r.process), n)
                    .i64(Some(r.process_instance))
                    .i64(r.request_ts)
                    .i64(r.assigned_ts)
                    .i64(r.released_ts)
                    .bool(Some(r.contended()))
                    .sym(r.blocked_by.map(|b| b.0), n)
                    .i64(r.blocked_by.map(|b| b.1))
                    .i64(Some(r.blockers))
                    .end_row();
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }

    fn messages(&mut self, rows: &[MessageRow], n: &Interner) -> Result<()> {
        let i = self.idx[MESSAGES];
        for r in rows {
            if let Some(b) = self.writer.batch(i) {
                b.sym(Some(r.sender), n)
                    .i64(Some(r.sender_instance))
                    .sym(Some(r.receiver), n)
                    .i64(Some(r.receiver_instance))
                    .i64(Some(r.send_ts))
                    .i64(r.recv_ts)
                    .i64(Some(r.phys_send_ts))
                    .i64(r.phys_recv_ts)
                    .i64(Some(r.size))
                    .i64(Some(r.tag))
                    .end_row();
            }
            self.writer.flush(i, false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::schema;
    use crate::store::writer::DEFAULT_ZSTD_LEVEL;

    #[test]
    fn row_writers_match_the_schema_files() {
        // One row of each streamed table through the real Output; RecordBatch::try_new
        // rejects a wrong column count or type, so a drift between the code and the .sql
        // files fails here.
        let dir = tempfile::tempdir().unwrap();
        let mut sink =
            TableSink::new(CaptureWriter::create(dir.path(), DEFAULT_ZSTD_LEVEL).unwrap());
        let mut n = Interner::default();
        let a = n.intern("A");
        let t = n.intern("T");
        let ev = EventRow {
            seq: 0,
            ts: 1,
            source: a,
            source_type: None,
            source_instance: 0,
            target: Some(a),
            target_type: Some(t),
            target_instance: 0,
            action: t,
            note: Some("x"),
            value: None,
            core: None,
        };
        sink.event(&ev, &n).unwrap();
        let iv = IntervalRow {
            entity: a,
            entity_type: t,
            instance: 0,
            channel: t,
            state: crate::derive::StateText::Sym(t),
            value: None,
            ts: 0,
            dur: 1,
            core: None,
            start_action: None,
            end_action: None,
            open: false,
        };
        sink.intervals(&[iv], &n).unwrap();
        sink.instances(&[InstanceRow::default()], &n).unwrap();
        let lr = LockRow {
            semaphore: a,
            process: a,
            process_instance: 0,
            request_ts: None,
            assigned_ts: None,
            released_ts: None,
            contended_step: false,
            blocked_by: None,
            blockers: 0,
        };
        sink.lock_requests(&[lr], &n).unwrap();
        let m = MessageRow {
            sender: a,
            sender_instance: -1,
            receiver: a,
            receiver_instance: -1,
            send_ts: 0,
            recv_ts: Some(1),
            phys_send_ts: 0,
            phys_recv_ts: Some(1),
            size: 8,
            tag: 1,
        };
        sink.messages(&[m], &n).unwrap();
        for i in 0..5 {
            let b = sink.writer.batch(sink.idx[i]).unwrap();
            assert_eq!(b.len(), 1);
            b.finish().unwrap();
        }
        let files = sink.writer.finish().unwrap();
        assert_eq!(files.len(), schema::tables().len());
    }
}
