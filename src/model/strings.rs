//! String interner: each distinct name is stored once and referred to by a [`Sym`].
//! Lookups by `&str` do not allocate; only a new name does.
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Interned string id, dense from 0 in order of first appearance.
pub type Sym = u32;

/// FNV-1a: short keys, no DoS concern (names come from the user's own trace), and much
/// faster than SipHash on the ingest hot path.
#[derive(Default)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Fast hash map used on the hot path.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// Interns strings.
#[derive(Default)]
pub struct Interner {
    map: FastMap<Box<str>, Sym>,
    names: Vec<Box<str>>,
}

impl Interner {
    /// Id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = Sym::try_from(self.names.len()).unwrap_or(Sym::MAX);
        self.names.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// Id of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        self.map.get(s).copied()
    }

    /// The string of `id` ("" for an unknown id).
    pub fn resolve(&self, id: Sym) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }

    /// Number of interned strings.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once() {
        let mut i = Interner::default();
        let a = i.intern("TASK_A");
        let b = i.intern("TASK_B");
        assert_eq!(i.intern("TASK_A"), a);
        assert_ne!(a, b);
        assert_eq!(i.resolve(b), "TASK_B");
        assert_eq!(i.get("nope"), None);
        assert_eq!(i.len(), 2);
    }
}
