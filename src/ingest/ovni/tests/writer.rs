//! [`W`], a writer of ovni stream bytes for tests. Self-contained: the unit tests use it as
//! a module, and the integration tests (`tests/ovni.rs`) include this same file by path.
#![allow(dead_code)]

/// A stream's bytes (little-endian unless `be`), event by event.
pub(crate) struct W {
    pub(crate) be: bool,
    pub(crate) bytes: Vec<u8>,
}

impl W {
    /// The header: `ovni` and version 1 in the stream's byte order.
    pub(crate) fn new(be: bool) -> Self {
        let mut bytes = b"ovni".to_vec();
        bytes.extend(if be { [0, 0, 0, 1] } else { [1, 0, 0, 0] });
        W { be, bytes }
    }
    pub(crate) fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    pub(crate) fn u64(&self, v: u64) -> [u8; 8] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// An event with `payload` (at most 16 bytes: flags hold its length - 1).
    pub(crate) fn ev(mut self, mcv: &str, clock: u64, payload: &[u8]) -> Self {
        let flags = if payload.is_empty() { 0 } else { (payload.len() - 1) as u8 };
        self.bytes.push(flags);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        self.bytes.extend(payload);
        self
    }
    /// A jumbo event: u32 size, then `data`.
    pub(crate) fn jumbo(mut self, mcv: &str, clock: u64, data: &[u8]) -> Self {
        self.bytes.push(0x10 | 3);
        self.bytes.extend(mcv.as_bytes());
        let c = self.u64(clock);
        self.bytes.extend(c);
        let n = self.u32(data.len() as u32);
        self.bytes.extend(n);
        self.bytes.extend(data);
        self
    }
    /// `OHx`: the thread runs on CPU `cpu` (-1: none), no tag, no affinity.
    pub(crate) fn ohx(self, clock: u64, cpu: i32) -> Self {
        let mut p = self.u32(cpu as u32).to_vec();
        p.extend(self.u32(u32::MAX));
        p.extend(self.u64(0));
        self.ev("OHx", clock, &p)
    }
    /// A task event (`VTc`, `VTx`, ...): two u32 (task id, then type id or body id).
    pub(crate) fn task(self, mcv: &str, clock: u64, a: u32, b: u32) -> Self {
        let mut p = self.u32(a).to_vec();
        p.extend(self.u32(b));
        self.ev(mcv, clock, &p)
    }
    /// A nOS-V task type (`VYc`, a jumbo event: u32 type id, NUL-terminated label).
    pub(crate) fn task_type(self, clock: u64, id: u32, label: &str) -> Self {
        self.type_of("VYc", clock, id, label)
    }
    /// A task type of model `mcv` (`VYc`, `6Yc`).
    pub(crate) fn type_of(self, mcv: &str, clock: u64, id: u32, label: &str) -> Self {
        let mut data = self.u32(id).to_vec();
        data.extend(label.as_bytes());
        data.push(0);
        self.jumbo(mcv, clock, &data)
    }
    /// A Nanos6 task event (`6Tx`, `6Te`, ...): the task id alone.
    pub(crate) fn task1(self, mcv: &str, clock: u64, task: u32) -> Self {
        let p = self.u32(task);
        self.ev(mcv, clock, &p)
    }
    /// A mark event (`OM[`, `OM]`, `OM=`): u64 value, u32 mark type.
    pub(crate) fn mark(self, op: &str, clock: u64, value: u64, ty: u32) -> Self {
        let mut p = self.u64(value).to_vec();
        p.extend(self.u32(ty));
        self.ev(op, clock, &p)
    }
}
