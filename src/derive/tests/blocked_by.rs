//! Tests of who a contended lock request waited for (`blocked_by`, `blockers` in
//! `semaphore.rs`): fixed cases, and random traces checked against the columns' definition.
use super::*;

/// Who a contended request waited for: the holder when it asked, then every request that got
/// the semaphore before it (a queue); an uncontended request names nobody.
#[test]
fn a_contended_request_names_who_held_the_semaphore_while_it_waited() {
    let (_, rows) = derive(
        "0,S,0,SEM,S,0,ready,0\n10,A,3,SEM,S,0,requestsemaphore\n10,A,3,SEM,S,0,assigned\n\
         10,S,0,SEM,S,0,lock,1\n20,B,1,SEM,S,0,requestsemaphore\n20,S,0,SEM,S,0,overfull,1\n\
         20,B,1,SEM,S,0,waiting\n25,C,7,SEM,S,0,requestsemaphore\n25,S,0,SEM,S,0,overfull,1\n\
         25,C,7,SEM,S,0,waiting\n30,A,3,SEM,S,0,released\n30,B,1,SEM,S,0,assigned\n\
         40,B,1,SEM,S,0,released\n40,C,7,SEM,S,0,assigned\n50,C,7,SEM,S,0,released\n\
         50,S,0,SEM,S,0,unlock,0\n60,D,0,SEM,S,0,requestsemaphore\n60,D,0,SEM,S,0,assigned\n\
         60,S,0,SEM,S,0,lock,1\n70,D,0,SEM,S,0,released\n70,S,0,SEM,S,0,unlock,0\n",
    );
    assert_eq!(
        rows.blockers,
        ["S A#3 by=- of 0", "S B#1 by=A#3 of 1", "S C#7 by=A#3 of 2", "S D#0 by=- of 0"]
    );
}

/// A holder that releases at the very instant of a request, logged after it, did not keep
/// it waiting; one assigned at the instant the waiter is, did not hold it before.
#[test]
fn holders_at_the_same_instant_as_the_request_or_its_grant_do_not_count() {
    let (_, rows) = derive(
        "10,A,0,SEM,S,0,requestsemaphore\n10,A,0,SEM,S,0,assigned\n20,B,0,SEM,S,0,requestsemaphore\n\
         20,B,0,SEM,S,0,waiting\n20,A,0,SEM,S,0,released\n25,C,0,SEM,S,0,requestsemaphore\n\
         25,C,0,SEM,S,0,assigned\n28,D,0,SEM,S,0,requestsemaphore\n28,D,0,SEM,S,0,waiting\n\
         30,B,0,SEM,S,0,assigned\n30,D,0,SEM,S,0,assigned\n40,B,0,SEM,S,0,released\n\
         40,C,0,SEM,S,0,released\n40,D,0,SEM,S,0,released\n",
    );
    // B waited behind nobody (A left as it asked) but C, which got it before it; D waited
    // behind C only: B was assigned at D's own instant.
    assert_eq!(
        rows.blockers,
        ["S A#0 by=- of 0", "S B#0 by=C#0 of 1", "S C#0 by=- of 0", "S D#0 by=C#0 of 1"]
    );
}

/// Past the listed holders, more are counted: a request behind 100 holders of a counting
/// semaphore says so, and names the first.
#[test]
fn a_request_behind_many_holders_counts_them_all() {
    let mut text = String::new();
    for k in 0..100 {
        let t = k + 1;
        text.push_str(&format!(
            "{t},H{k},0,SEM,S,0,requestsemaphore\n{t},H{k},0,SEM,S,0,assigned\n"
        ));
    }
    text.push_str("200,W,0,SEM,S,0,requestsemaphore\n200,W,0,SEM,S,0,queued\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H0#0 of 100"]);
}

/// A small deterministic generator (xorshift64*) for the randomised checks below.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// `blocked_by` and `blockers` recomputed from the rows alone, by their definition: the
/// holders of a contended request r are the other rows h of its semaphore assigned before r
/// was (any time, when r never was) and not released by r's request (still held when it came,
/// or got it while it waited); `blocked_by` is the first of them to be assigned (ties by
/// name, then instance). The rows do not say when a request never assigned ended (given up
/// by a retry, or still waiting at the end): such a request is bounded here by its release
/// when it has one, and is left out of the comparison otherwise (`None`).
fn blockers_by_definition(rows: &[SeenLock], r: usize) -> Option<(Option<(String, i64)>, i64)> {
    let w = &rows[r];
    if !w.contended {
        return Some((None, 0));
    }
    let request = w.request_ts?;
    // Assigned strictly before r was: one assigned at r's own instant did not hold it before.
    let until = match (w.assigned_ts, w.released_ts) {
        (Some(a), _) => a,
        (None, Some(rel)) => {
            // r released unassigned waited until its release: a grant at that instant counts
            // when logged before the release, and when that is r's request instant too, a
            // release at it when logged before r's, which the rows do not say.
            if rel == request
                || rows.iter().any(|h| h.semaphore == w.semaphore && h.assigned_ts == Some(rel))
            {
                return None;
            }
            rel
        }
        (None, None) => return None,
    };
    let mut holders: Vec<(i64, &str, i64)> = Vec::new();
    for (k, h) in rows.iter().enumerate() {
        if k == r || h.semaphore != w.semaphore {
            continue;
        }
        let Some(assigned) = h.assigned_ts else { continue };
        if assigned < until && h.released_ts.is_none_or(|rel| rel > request) {
            holders.push((assigned, &h.process, h.instance));
        }
    }
    let first = holders.iter().min().map(|(_, p, i)| (p.to_string(), *i));
    Some((first, i64::try_from(holders.len()).unwrap_or(i64::MAX)))
}

/// Random traces of two semaphores used by a few process instances, in every order the
/// trace may log them (a request, its waiting and grant, releases, retries, grants without a
/// request, releases without a grant, many at one instant): each contended request names
/// exactly the holders its rows' times define.
#[test]
fn blocked_by_matches_its_definition_on_random_traces() {
    let procs = ["A", "B", "C", "D"];
    let actions = ["requestsemaphore", "waiting", "assigned", "released", "exclusivesemaphore"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    for case in 0..20000 {
        let mut text = String::new();
        let mut ts = 0;
        let n = 4 + rng.below(24);
        for _ in 0..n {
            ts += rng.below(3);
            let p = procs[usize::try_from(rng.below(4)).unwrap()];
            let inst = rng.below(2);
            let sem = if rng.below(4) == 0 { "T" } else { "S" };
            // Mostly the usual order, request then grant then release, with every other
            // action mixed in.
            let action = actions[usize::try_from(rng.below(5)).unwrap()];
            text.push_str(&format!("{ts},{p},{inst},SEM,{sem},0,{action}\n"));
        }
        let (_, rows) = derive(&text);
        for (k, row) in rows.lock_rows.iter().enumerate() {
            let Some((by, count)) = blockers_by_definition(&rows.lock_rows, k) else { continue };
            compared += 1;
            assert_eq!(
                (row.blocked_by.clone(), row.blockers),
                (by, count),
                "case {case}, row {row:?} of\n{text}"
            );
        }
    }
    assert!(compared > 100_000, "{compared}");
}

/// A process instance holding a counting semaphore twice that releases one hold at the
/// instant of a request, logged after it, still blocks it with the other.
#[test]
fn a_second_hold_of_the_same_instance_still_blocks_after_the_first_is_released() {
    let (_, rows) = derive(
        "0,A,0,SEM,S,0,requestsemaphore\n0,A,0,SEM,S,0,assigned\n5,A,0,SEM,S,0,requestsemaphore\n\
         5,A,0,SEM,S,0,assigned\n10,W,0,SEM,S,0,requestsemaphore\n10,W,0,SEM,S,0,waiting\n\
         10,A,0,SEM,S,0,released\n20,A,0,SEM,S,0,released\n20,W,0,SEM,S,0,assigned\n\
         30,W,0,SEM,S,0,released\n",
    );
    assert_eq!(rows.blockers, ["S A#0 by=- of 0", "S A#0 by=- of 0", "S W#0 by=A#0 of 1"]);
}

/// A request granted at the instant it came, with a holder's release logged after the grant
/// at that instant: the holder did not keep it waiting (a release at the request's instant,
/// logged after it).
#[test]
fn a_release_at_the_request_instant_after_its_grant_does_not_block_it() {
    let (_, rows) = derive(
        "0,D,0,SEM,S,0,requestsemaphore\n0,D,0,SEM,S,0,assigned\n15,A,0,SEM,S,0,waiting\n\
         15,A,0,SEM,S,0,assigned\n15,D,0,SEM,S,0,released\n20,A,0,SEM,S,0,released\n",
    );
    assert_eq!(rows.blockers, ["S D#0 by=- of 0", "S A#0 by=- of 0"]);
}

/// Past the 64 listed holders the count stays exact: holders granted at the waiter's own
/// instant and a holder released at its request's instant (logged after it) leave the count
/// even when they are among the unlisted.
#[test]
fn holders_beyond_the_listed_ones_leave_the_count_as_listed_ones_do() {
    let mut text = String::new();
    // 70 holders before W asks at 100; the 70th (H69, unlisted) releases at 100 after it.
    for k in 0..70 {
        text.push_str(&format!(
            "{k},H{k},0,SEM,S,0,requestsemaphore\n{k},H{k},0,SEM,S,0,assigned\n"
        ));
    }
    text.push_str("100,W,0,SEM,S,0,requestsemaphore\n100,W,0,SEM,S,0,queued\n");
    text.push_str("100,H69,0,SEM,S,0,released\n");
    // Three more are granted at 150, the instant W is: they did not hold it before W.
    for k in 70..73 {
        text.push_str(&format!("140,H{k},0,SEM,S,0,requestsemaphore\n"));
    }
    for k in 70..73 {
        text.push_str(&format!("150,H{k},0,SEM,S,0,assigned\n"));
    }
    text.push_str("150,W,0,SEM,S,0,assigned\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H0#0 of 69"]);
}

/// More holders than are listed, granted in another order than they asked: `blocked_by` is
/// still the first to have got the semaphore, not the first to have asked.
#[test]
fn the_first_holder_is_named_when_more_hold_than_are_listed() {
    let mut text = String::new();
    for k in 0..70 {
        text.push_str(&format!("0,H{k:02},0,SEM,S,0,requestsemaphore\n"));
    }
    for k in 0..70 {
        text.push_str(&format!("{},H{:02},0,SEM,S,0,assigned\n", k + 1, 69 - k));
    }
    text.push_str("100,W,0,SEM,S,0,requestsemaphore\n100,W,0,SEM,S,0,queued\n");
    let (_, rows) = derive(&text);
    let w: Vec<&String> = rows.blockers.iter().filter(|b| b.starts_with("S W#0")).collect();
    assert_eq!(w, ["S W#0 by=H69#0 of 70"]);
}
