//! The BTF line writer of the simulation: each line formatted into one buffer (no
//! per-line allocation), written in time order, and the run cut at a size limit.
use super::*;

/// Line formatter and writer. A write error is kept and ends the run, so the
/// simulation code need not thread `Result` through every line it writes.
pub(in crate::synth) struct Out<W: Write> {
    pub(in crate::synth) w: BufWriter<W>,
    pub(in crate::synth) line: Vec<u8>,
    pub(in crate::synth) limit: Option<u64>,
    pub(in crate::synth) done: bool,
    /// A line was not written because the run had ended: nothing after it is in the trace.
    pub(in crate::synth) refused: bool,
    pub(in crate::synth) err: Option<io::Error>,
    pub(in crate::synth) stats: SynthStats,
}

impl<W: Write> Out<W> {
    pub(in crate::synth) fn new(w: BufWriter<W>, limit: Option<u64>) -> Self {
        Out {
            w,
            line: Vec::with_capacity(128),
            limit,
            done: false,
            refused: false,
            err: None,
            stats: SynthStats::default(),
        }
    }

    pub(in crate::synth) fn header(&mut self) {
        if let Err(e) = self.w.write_all(HEADER) {
            self.fail(e);
            return;
        }
        self.stats.bytes += HEADER.len() as u64;
        self.check_limit();
    }

    /// Writes one line; false when nothing was written because the run ended.
    pub(in crate::synth) fn emit(
        &mut self,
        t: i64,
        src: (&[u8], u64),
        ty: &[u8],
        tgt: (&[u8], u64),
        act: &[u8],
        note: Option<i64>,
    ) -> bool {
        if self.done {
            self.refused = true;
            return false;
        }
        self.fill(t, src, ty, tgt, act);
        if let Some(v) = note {
            self.line.push(b',');
            push_i64(&mut self.line, v);
        }
        self.line.push(b'\n');
        self.commit(t)
    }

    /// As [`Out::emit`], with a text note.
    pub(in crate::synth) fn emit_text(
        &mut self,
        t: i64,
        src: (&[u8], u64),
        ty: &[u8],
        tgt: (&[u8], u64),
        act: &[u8],
        note: &[u8],
    ) -> bool {
        if self.done {
            self.refused = true;
            return false;
        }
        self.fill(t, src, ty, tgt, act);
        self.line.push(b',');
        self.line.extend_from_slice(note);
        self.line.push(b'\n');
        self.commit(t)
    }

    /// The line up to its action.
    fn fill(&mut self, t: i64, src: (&[u8], u64), ty: &[u8], tgt: (&[u8], u64), act: &[u8]) {
        let l = &mut self.line;
        l.clear();
        push_i64(l, t);
        l.push(b',');
        l.extend_from_slice(src.0);
        l.push(b',');
        push_u64(l, src.1);
        l.push(b',');
        l.extend_from_slice(ty);
        l.push(b',');
        l.extend_from_slice(tgt.0);
        l.push(b',');
        push_u64(l, tgt.1);
        l.push(b',');
        l.extend_from_slice(act);
    }

    pub(in crate::synth) fn commit(&mut self, t: i64) -> bool {
        if let Err(e) = self.w.write_all(&self.line) {
            self.fail(e);
            return false;
        }
        self.stats.lines += 1;
        self.stats.bytes += self.line.len() as u64;
        self.stats.last_ts = t;
        self.check_limit();
        true
    }

    pub(in crate::synth) fn check_limit(&mut self) {
        if self.limit.is_some_and(|lim| self.stats.bytes >= lim) {
            self.done = true;
        }
    }

    pub(in crate::synth) fn fail(&mut self, e: io::Error) {
        self.err = Some(e);
        self.done = true;
    }

    pub(in crate::synth) fn finish(mut self) -> io::Result<SynthStats> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.w.flush()?;
        Ok(self.stats)
    }
}

pub(in crate::synth) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

pub(in crate::synth) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}
