//! The QS dictionaries as the Reader keeps them: pointer (or number) to name, bounded in
//! entries and in bytes of names, so a flood of dictionary records cannot grow memory. A
//! name that does not fit is refused, and the caller reports it (`dictionary_full`).
use std::collections::HashMap;
use std::hash::Hash;

/// Entries kept per dictionary: a real target names thousands of objects, states and
/// signals, not millions.
pub(super) const MAX_ENTRIES: usize = 1 << 20;
/// Bytes of names kept per dictionary: [`MAX_ENTRIES`] names of 32 bytes. A dictionary
/// record holds a name of up to about 500 bytes, and a million of them would take 0.5 GB.
pub(super) const MAX_BYTES: usize = 32 << 20;
/// Names kept per signal number (one per object it is local to, or 0 for all).
pub(super) const MAX_PER_SIGNAL: usize = 256;

/// Why a name was refused.
pub(super) fn full_text(what: &str, entries: usize, bytes: usize) -> String {
    if entries >= MAX_ENTRIES {
        format!("the {what} dictionary holds {MAX_ENTRIES} names, its bound")
    } else {
        format!(
            "the {what} dictionary holds {bytes} bytes of names ({} MiB is its bound)",
            MAX_BYTES >> 20
        )
    }
}

/// Key to name, bounded.
pub(super) struct NameMap<K> {
    map: HashMap<K, String>,
    bytes: usize,
    /// Names refused since the last clear.
    pub(super) refused: u64,
    /// What it names, for messages (`object`, `function`, ...).
    pub(super) what: &'static str,
}

impl<K: Hash + Eq> NameMap<K> {
    pub(super) fn new(what: &'static str) -> Self {
        NameMap { map: HashMap::new(), bytes: 0, refused: 0, what }
    }

    pub(super) fn get(&self, k: &K) -> Option<&String> {
        self.map.get(k)
    }

    /// Sets `k`'s name; `Err` with the reason when it does not fit (the old name, if any,
    /// stays).
    pub(super) fn put(&mut self, k: K, v: String) -> Result<(), String> {
        let old = self.map.get(&k).map(String::len);
        let bytes = self.bytes - old.unwrap_or(0) + v.len();
        let entries = self.map.len() + usize::from(old.is_none());
        if entries > MAX_ENTRIES || bytes > MAX_BYTES {
            self.refused += 1;
            return Err(full_text(self.what, self.map.len(), self.bytes));
        }
        self.bytes = bytes;
        self.map.insert(k, v);
        Ok(())
    }

    /// Rewrites every name with `f`.
    pub(super) fn rename(&mut self, f: impl Fn(&str) -> String) {
        self.bytes = 0;
        for v in self.map.values_mut() {
            *v = f(v);
            self.bytes += v.len();
        }
    }

    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
        self.refused = 0;
    }
}

/// Signal number to its names: one per object it is local to (0: global).
pub(super) struct SigNames {
    map: HashMap<u64, Vec<(u64, String)>>,
    entries: usize,
    bytes: usize,
    /// Names refused since the last clear.
    pub(super) refused: u64,
}

impl SigNames {
    pub(super) fn new() -> Self {
        SigNames { map: HashMap::new(), entries: 0, bytes: 0, refused: 0 }
    }

    pub(super) fn get(&self, sig: u64) -> Option<&[(u64, String)]> {
        self.map.get(&sig).map(Vec::as_slice)
    }

    /// Names `sig` for `obj` (replacing that object's name); `Err` with the reason when it
    /// does not fit.
    pub(super) fn put(&mut self, sig: u64, obj: u64, name: String) -> Result<(), String> {
        let list = self.map.get(&sig);
        let old = list.and_then(|l| l.iter().find(|(o, _)| *o == obj)).map(|(_, n)| n.len());
        let count = list.map_or(0, Vec::len);
        let entries = self.entries + usize::from(old.is_none());
        let bytes = self.bytes - old.unwrap_or(0) + name.len();
        let why = if old.is_none() && count >= MAX_PER_SIGNAL {
            Some(format!("signal {sig} has {MAX_PER_SIGNAL} names already, its bound"))
        } else if entries > MAX_ENTRIES || bytes > MAX_BYTES {
            Some(full_text("signal", self.entries, self.bytes))
        } else {
            None
        };
        if let Some(why) = why {
            self.refused += 1;
            return Err(why);
        }
        let e = self.map.entry(sig).or_default();
        e.retain(|(o, _)| *o != obj);
        e.push((obj, name));
        self.entries = entries;
        self.bytes = bytes;
        Ok(())
    }

    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.entries = 0;
        self.bytes = 0;
        self.refused = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bounded_in_entries_and_bytes() {
        let mut m = NameMap::new("object");
        for k in 0..MAX_ENTRIES as u64 {
            m.put(k, String::new()).unwrap();
        }
        // Full: a new key is refused, a known one renamed.
        let e = m.put(u64::MAX, "x".into()).unwrap_err();
        assert_eq!(e, "the object dictionary holds 1048576 names, its bound");
        m.put(7, "seven".into()).unwrap();
        assert_eq!(m.get(&7).map(String::as_str), Some("seven"));
        assert_eq!(m.refused, 1);
        let mut m = NameMap::new("function");
        let long = "f".repeat(500);
        let fit = MAX_BYTES / 500;
        for k in 0..fit as u64 {
            m.put(k, long.clone()).unwrap();
        }
        let e = m.put(1 << 40, long.clone()).unwrap_err();
        assert!(e.contains("holds 33554000 bytes of names (32 MiB is its bound)"), "{e}");
        // A longer name for a known key counts its extra bytes only.
        m.put(0, "g".repeat(500 + MAX_BYTES % 500)).unwrap();
        assert!(m.put(1, "g".repeat(501)).is_err());
        m.clear();
        assert!(m.put(1 << 40, long).is_ok());
    }

    #[test]
    fn signal_names_are_bounded_per_signal_and_in_all() {
        let mut s = SigNames::new();
        for o in 0..MAX_PER_SIGNAL as u64 {
            s.put(5, o, format!("S{o}")).unwrap();
        }
        assert_eq!(
            s.put(5, 1000, "X".into()).unwrap_err(),
            "signal 5 has 256 names already, its bound"
        );
        // Renaming one object's name of the signal still works, and moves it last.
        s.put(5, 0, "G".into()).unwrap();
        assert_eq!(s.get(5).and_then(|l| l.last()), Some(&(0, "G".to_string())));
        assert_eq!(s.get(5).map(<[_]>::len), Some(256));
        let mut s = SigNames::new();
        for sig in 0..MAX_ENTRIES as u64 {
            s.put(sig, 0, String::new()).unwrap();
        }
        let e = s.put(1 << 40, 0, "Z".into()).unwrap_err();
        assert_eq!(e, "the signal dictionary holds 1048576 names, its bound");
        assert_eq!(s.refused, 1);
    }
}
