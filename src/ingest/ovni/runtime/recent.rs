//! [`Recent`]: a bounded memory of what ended last (the runtime models' ended tasks), a ring
//! of keys whose oldest entry is forgotten when a new one takes its place.
use std::collections::HashMap;
use std::hash::Hash;

/// What ended most recently: the entries inserted by the last `cap` insertions (a bounded
/// memory of what ended). Each insertion takes the next place of a ring of `cap` keys, and
/// forgets the entry of the key it overwrites if that key is still there from that place (not
/// taken out or inserted again since).
#[derive(Debug)]
pub struct Recent<K, V> {
    /// Key -> its entry and its place in `ring`.
    map: HashMap<K, (V, u32)>,
    /// The key inserted at each place, oldest overwritten first.
    ring: Vec<K>,
    next: usize,
    cap: usize,
    /// Some entry was forgotten.
    pub forgot: bool,
}

impl<K: Hash + Eq + Clone, V> Recent<K, V> {
    /// Remembers the entries of the last `cap` insertions (at least 1, at most 2^32 - 1).
    pub fn new(cap: usize) -> Self {
        let cap = cap.clamp(1, usize::try_from(u32::MAX).unwrap_or(usize::MAX));
        Recent { map: HashMap::new(), ring: Vec::new(), next: 0, cap, forgot: false }
    }
    /// Adds `k`; returns true if an older entry was forgotten for it.
    pub fn insert(&mut self, k: K, v: V) -> bool {
        let place = self.next;
        self.next = (self.next + 1) % self.cap;
        // `cap` is below 2^32: a place fits.
        let tag = u32::try_from(place).unwrap_or(u32::MAX);
        let mut forgot = false;
        match self.ring.get_mut(place) {
            Some(old) => {
                let old = std::mem::replace(old, k.clone());
                if old != k && self.map.get(&old).is_some_and(|e| e.1 == tag) {
                    self.map.remove(&old);
                    forgot = true;
                }
            }
            None => self.ring.push(k.clone()),
        }
        self.map.insert(k, (v, tag));
        self.forgot |= forgot;
        forgot
    }
    /// The entry of `k`.
    pub fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k).map(|e| &e.0)
    }
    /// Takes the entry of `k` out.
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k).map(|e| e.0)
    }
    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// No entry held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Most entries held at once.
    pub fn cap(&self) -> usize {
        self.cap
    }
}
