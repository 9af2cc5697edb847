//! String interner: each distinct name is stored once and referred to by a [`Sym`].
//! Lookups by `&str` do not allocate; only a new name does.
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Interned string id, dense from 0 in order of first appearance.
pub type Sym = u32;

/// A word-at-a-time multiplicative hash (FxHash's scheme): names are short, come from the
/// user's own trace (no DoS concern), and SipHash costs more than the rest of a lookup.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Fnv {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl std::hash::Hasher for Fnv {
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves its low bits poorly mixed, and the table picks buckets by the
        // low bits: rotate the well-mixed high bits down (rustc-hash 2 does the same).
        // Without it, 1M names T_0..T_999999 fell into 32 buckets.
        self.0.rotate_left(26)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
}

/// Fast hash map used on the hot path.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// Slots of the interner's recent-name cache.
const RECENT: usize = 1024;

/// Bytes of one block of the interner's name store: names are appended to the current
/// block and never move (a growing `String` would copy them all, and hold two copies while
/// it does).
const BLOCK: usize = 1 << 20;

/// Where an interned name lies in the store.
#[derive(Clone, Copy)]
struct Span {
    block: u32,
    start: u32,
    len: u32,
}

/// Interns strings.
///
/// Each name is stored once, in large blocks, and the index holds only ids: about the name's
/// length plus 25 bytes per name (a map of boxed names and a vector of them held two copies
/// and cost about 100 bytes more), which is what bounds memory for traces of millions of
/// distinct names.
pub struct Interner {
    /// Ids, found by the hash of their name.
    index: hashbrown::HashTable<Sym>,
    /// Where each id's name is.
    spans: Vec<Span>,
    /// The names, back to back; a name longer than a block has a block of its own.
    blocks: Vec<String>,
    /// Direct-mapped cache of recent lookups, indexed by a few of the name's bytes: a trace
    /// names the same few hundred entities and actions over and over, and comparing one
    /// candidate costs less than hashing the name and probing the map. A name of up to 24
    /// bytes is compared by its [`short_key`], held in the entry: no look-up of where the
    /// name is stored and no `memcmp` call (the two were ~40% of interning).
    recent: Box<[Recent; RECENT]>,
}

/// An entry of the recent-name cache.
#[derive(Clone, Copy)]
struct Recent {
    /// The name's [`short_key`], or [`LONG`] for a longer name.
    key: [u64; 4],
    sym: Sym,
}

/// [`Recent::key`] of a name longer than a short key holds.
const LONG: [u64; 4] = [u64::MAX; 4];

/// A name of at most 24 bytes as its length and words of its bytes: two such names are
/// equal exactly when their keys are (the words overlap when the length is not a multiple
/// of 8, and cover every byte).
fn short_key(s: &[u8]) -> Option<[u64; 4]> {
    let n = s.len();
    let word = |at: usize| {
        s.get(at..at + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0, u64::from_le_bytes)
    };
    match n {
        0..=7 => {
            let w = s.iter().enumerate().fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i));
            Some([n as u64, w, 0, 0])
        }
        8..=16 => Some([n as u64, word(0), word(n - 8), 0]),
        17..=24 => Some([n as u64, word(0), word(8), word(n - 8)]),
        _ => None,
    }
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            index: hashbrown::HashTable::new(),
            spans: Vec::new(),
            blocks: Vec::new(),
            recent: Box::new([Recent { key: LONG, sym: Sym::MAX }; RECENT]),
        }
    }
}

/// The cache slot of a name: its length and four of its bytes, mixed.
fn slot(s: &[u8]) -> usize {
    let n = s.len();
    let at = |i: usize| usize::from(s.get(i).copied().unwrap_or(0));
    let mix = n.wrapping_mul(0x9E37)
        ^ at(0).wrapping_mul(0x3B)
        ^ at(n / 2).wrapping_mul(0x1F3)
        ^ at(n.wrapping_sub(1)).wrapping_mul(0x7A1)
        ^ at(n.wrapping_sub(2)).wrapping_mul(0x2D);
    mix % RECENT
}

/// Hash of a name in the index.
fn hash_of(s: &str) -> u64 {
    use std::hash::BuildHasher;
    BuildHasherDefault::<Fnv>::default().hash_one(s)
}

/// The name at `span` ("" if there is none).
fn name_at<'a>(blocks: &'a [String], span: Option<&Span>) -> &'a str {
    span.and_then(|sp| {
        let start = sp.start as usize;
        blocks.get(sp.block as usize)?.get(start..start + sp.len as usize)
    })
    .unwrap_or("")
}

impl Interner {
    /// Id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        let k = slot(s.as_bytes());
        let key = short_key(s.as_bytes());
        if let Some(&c) = self.recent.get(k) {
            let hit = match key {
                Some(key) => c.key == key,
                None => c.key == LONG && c.sym != Sym::MAX && self.resolve(c.sym) == s,
            };
            if hit {
                return c.sym;
            }
        }
        let hash = hash_of(s);
        let (spans, blocks) = (&self.spans, &self.blocks);
        let found = self.index.find(hash, |&id| name_at(blocks, spans.get(id as usize)) == s);
        let id = match found {
            Some(&id) => id,
            None => {
                let id = Sym::try_from(self.spans.len()).unwrap_or(Sym::MAX);
                let span = self.store(s);
                self.spans.push(span);
                let (spans, blocks) = (&self.spans, &self.blocks);
                self.index.insert_unique(hash, id, |&id| {
                    hash_of(name_at(blocks, spans.get(id as usize)))
                });
                id
            }
        };
        if let Some(c) = self.recent.get_mut(k) {
            *c = Recent { key: key.unwrap_or(LONG), sym: id };
        }
        id
    }

    /// Appends `s` to the store.
    fn store(&mut self, s: &str) -> Span {
        // Blocks hold at most max(1 MiB, one name) bytes, and a name is at most a line of
        // 16 MiB: the offsets fit in u32.
        let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let len = to_u32(s.len());
        let last = self.blocks.len().wrapping_sub(1);
        if let Some(b) = self.blocks.last_mut().filter(|b| b.capacity() - b.len() >= s.len()) {
            let start = to_u32(b.len());
            b.push_str(s);
            return Span { block: to_u32(last), start, len };
        }
        let mut b = String::with_capacity(s.len().max(BLOCK));
        b.push_str(s);
        self.blocks.push(b);
        Span { block: to_u32(self.blocks.len() - 1), start: 0, len }
    }

    /// Id of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        let (spans, blocks) = (&self.spans, &self.blocks);
        self.index.find(hash_of(s), |&id| name_at(blocks, spans.get(id as usize)) == s).copied()
    }

    /// The string of `id` ("" for an unknown id).
    pub fn resolve(&self, id: Sym) -> &str {
        name_at(&self.blocks, self.spans.get(id as usize))
    }

    /// Number of interned strings.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_that_differ_in_a_few_characters_spread_over_the_buckets() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        // hashbrown picks buckets by the low bits: 100k sequential names must use most of
        // the 2^17 positions (before the final rotation they used 32 of 2^21).
        let b = BuildHasherDefault::<Fnv>::default();
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            seen.insert(b.hash_one(format!("T_{i}").as_str()) & ((1 << 17) - 1));
        }
        assert!(seen.len() > 50_000, "{} distinct bucket positions", seen.len());
    }

    use super::*;

    #[test]
    fn the_recent_cache_never_confuses_names() {
        // Many names, several per cache slot, looked up in shuffled orders: every lookup
        // must give the id the name got first.
        let mut n = Interner::default();
        let names: Vec<String> = (0..5000).map(|i| format!("TASK_{}MS_{}", i % 7, i)).collect();
        let ids: Vec<Sym> = names.iter().map(|s| n.intern(s)).collect();
        for round in 0..3 {
            for (k, s) in names.iter().enumerate().rev().step_by(round + 1) {
                assert_eq!(n.intern(s), ids[k], "{s}");
                assert_eq!(n.resolve(ids[k]), s);
            }
        }
        assert_eq!(n.len(), 5000);
        assert_eq!(n.intern(""), 5000);
        assert_eq!(n.intern(""), 5000);
    }

    #[test]
    fn names_of_every_short_length_are_told_apart() {
        // Names that differ in one byte anywhere, or only in length (a trailing NUL), at
        // every length around the short keys' words.
        let mut n = Interner::default();
        let mut names = Vec::new();
        for len in 0..40 {
            let base: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            names.push(base.clone());
            names.push(format!("{base}\0"));
            for at in 0..len {
                let mut b = base.clone().into_bytes();
                b[at] = b'Z';
                names.push(String::from_utf8(b).unwrap());
            }
        }
        names.sort();
        names.dedup();
        let ids: Vec<Sym> = names.iter().map(|s| n.intern(s)).collect();
        for _ in 0..2 {
            for (k, s) in names.iter().enumerate() {
                assert_eq!(n.intern(s), ids[k], "{s:?}");
            }
        }
        assert_eq!(n.len(), names.len());
    }

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
