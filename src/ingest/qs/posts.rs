//! Posts to active objects waiting for their get, per (active object, signal): FIFO posts
//! are got in order, a LIFO post first. Both the posts of one pair and all of them together
//! are bounded, so a capture whose gets are never recorded cannot grow memory: beyond a
//! bound the oldest post leaves, to be written never received.
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

/// Most posts kept per (active object, signal).
pub(super) const MAX_PAIR: usize = 4096;
/// Most posts kept in all (about 300 bytes each with their pair's share).
pub(super) const MAX_ALL: usize = 1 << 18;
/// Most receivers whose names are kept for sharing (targets have tens of active objects);
/// beyond, the cache starts over (the posts keep their names).
const MAX_NAMES: usize = 4096;

/// A post waiting for its get.
#[derive(Debug)]
pub(super) struct Pending {
    /// Who sent it (the receiver itself for a LIFO post).
    pub(super) sender: String,
    /// Who it was sent to, named as its post names it (a dictionary record may name the
    /// object only later): shared by the posts of a pair while the name stays the same.
    pub(super) receiver: Arc<str>,
    /// When.
    pub(super) ts: i64,
    /// Its place in the order of all posts (for "the oldest").
    id: u64,
}

/// The posts of one pair: LIFO ones (pushed at the front, newest first), then FIFO ones
/// (oldest first). The oldest of all is on either side of the boundary between them.
#[derive(Default)]
struct Queue {
    posts: VecDeque<Pending>,
    lifo: usize,
}

/// Which bound a post was evicted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// [`MAX_PAIR`] posts of its pair.
    Pair,
    /// [`MAX_ALL`] posts in all.
    All,
}

/// The waiting posts.
pub(super) struct Posts {
    queues: HashMap<(u64, u64), Queue>,
    /// Every waiting post by id, with its pair: the first is the oldest.
    order: BTreeMap<u64, (u64, u64)>,
    /// The name each receiving object had at its last post, shared by its posts.
    names: HashMap<u64, Arc<str>>,
    next: u64,
    max_pair: usize,
    max_all: usize,
}

impl Default for Posts {
    fn default() -> Self {
        Posts::new(MAX_PAIR, MAX_ALL)
    }
}

impl Posts {
    pub(super) fn new(max_pair: usize, max_all: usize) -> Self {
        Posts {
            queues: HashMap::new(),
            order: BTreeMap::new(),
            names: HashMap::new(),
            next: 0,
            max_pair,
            max_all,
        }
    }

    /// Posts `sender`'s event to the pair `key` (`(object, signal)`), whose object the post
    /// names `receiver`, at `ts`. Returns the post a bound evicted, with its pair.
    pub(super) fn post(
        &mut self,
        key: (u64, u64),
        (sender, receiver): (String, &str),
        ts: i64,
        lifo: bool,
    ) -> Option<(Bound, (u64, u64), Pending)> {
        let id = self.next;
        self.next += 1;
        let receiver = match self.names.get(&key.0) {
            Some(r) if **r == *receiver => Arc::clone(r),
            _ => {
                if self.names.len() >= MAX_NAMES {
                    self.names.clear();
                }
                let r: Arc<str> = receiver.into();
                self.names.insert(key.0, Arc::clone(&r));
                r
            }
        };
        let q = self.queues.entry(key).or_default();
        let p = Pending { sender, receiver, ts, id };
        if lifo {
            q.posts.push_front(p);
            q.lifo += 1;
        } else {
            q.posts.push_back(p);
        }
        let full = q.posts.len() > self.max_pair;
        self.order.insert(id, key);
        if full {
            return self.evict(key).map(|p| (Bound::Pair, key, p));
        }
        if self.order.len() > self.max_all {
            let oldest = *self.order.first_key_value()?.1;
            return self.evict(oldest).map(|p| (Bound::All, oldest, p));
        }
        None
    }

    /// The oldest post of `key`.
    fn evict(&mut self, key: (u64, u64)) -> Option<Pending> {
        let q = self.queues.get_mut(&key)?;
        let last_lifo = q.lifo.checked_sub(1);
        let i = match (last_lifo.and_then(|i| q.posts.get(i)), q.posts.get(q.lifo)) {
            (Some(a), Some(b)) if b.id < a.id => q.lifo,
            (Some(_), _) => last_lifo?,
            (None, Some(_)) => q.lifo,
            (None, None) => return None,
        };
        let p = q.posts.remove(i)?;
        if i < q.lifo {
            q.lifo -= 1;
        }
        if q.posts.is_empty() {
            self.queues.remove(&key);
        }
        self.order.remove(&p.id);
        Some(p)
    }

    /// The post a get of `key` receives.
    pub(super) fn take(&mut self, key: (u64, u64)) -> Option<Pending> {
        let q = self.queues.get_mut(&key)?;
        let p = q.posts.pop_front()?;
        q.lifo = q.lifo.saturating_sub(1);
        if q.posts.is_empty() {
            self.queues.remove(&key);
        }
        self.order.remove(&p.id);
        Some(p)
    }

    /// Every waiting post, by pair, each pair's in the order they would be got.
    pub(super) fn drain(&mut self) -> Vec<((u64, u64), Vec<Pending>)> {
        self.order.clear();
        let mut all: Vec<((u64, u64), Vec<Pending>)> =
            self.queues.drain().map(|(k, q)| (k, q.posts.into())).collect();
        all.sort_by_key(|(k, _)| *k);
        all
    }

    /// Posts waiting.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(p: Option<(Bound, (u64, u64), Pending)>) -> Option<(Bound, (u64, u64), i64)> {
        p.map(|(b, k, p)| (b, k, p.ts))
    }

    #[test]
    fn lifo_posts_are_got_first_and_the_oldest_is_evicted() {
        let mut q = Posts::new(3, 100);
        let k = (1, 5);
        assert_eq!(sent(q.post(k, ("a".into(), "r"), 10, false)), None);
        assert_eq!(sent(q.post(k, ("a".into(), "r"), 11, false)), None);
        assert_eq!(sent(q.post(k, ("b".into(), "r"), 12, true)), None);
        // A fourth post: the oldest (10) leaves, not the LIFO one just pushed.
        assert_eq!(sent(q.post(k, ("b".into(), "r"), 13, true)), Some((Bound::Pair, k, 10)));
        // Now 13, 12 (LIFO), 11: the oldest is the FIFO one after the boundary... then 12.
        assert_eq!(sent(q.post(k, ("a".into(), "r"), 14, false)), Some((Bound::Pair, k, 11)));
        assert_eq!(sent(q.post(k, ("a".into(), "r"), 15, false)), Some((Bound::Pair, k, 12)));
        let order: Vec<i64> = std::iter::from_fn(|| q.take(k)).map(|p| p.ts).collect();
        assert_eq!(order, [13, 14, 15]);
        assert_eq!(q.len(), 0);
        assert!(q.queues.is_empty());
    }

    #[test]
    fn all_posts_together_are_bounded() {
        let mut q = Posts::new(10, 3);
        assert_eq!(sent(q.post((1, 1), ("a".into(), "r"), 10, false)), None);
        assert_eq!(sent(q.post((2, 1), ("a".into(), "r"), 11, false)), None);
        assert_eq!(sent(q.post((3, 1), ("a".into(), "r"), 12, true)), None);
        assert_eq!(q.take((2, 1)).map(|p| p.ts), Some(11));
        assert_eq!(sent(q.post((4, 1), ("a".into(), "r"), 13, false)), None);
        // Four waiting: the oldest of all (10, pair (1, 1)) leaves, and its pair with it.
        assert_eq!(
            sent(q.post((4, 1), ("a".into(), "r"), 14, false)),
            Some((Bound::All, (1, 1), 10))
        );
        assert_eq!(q.len(), 3);
        assert_eq!(q.queues.len(), 2);
        let left: Vec<((u64, u64), Vec<i64>)> =
            q.drain().into_iter().map(|(k, v)| (k, v.iter().map(|p| p.ts).collect())).collect();
        assert_eq!(left, [((3, 1), vec![12]), ((4, 1), vec![13, 14])]);
    }
}
