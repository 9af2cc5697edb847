//! Tests that the generated traces follow the state machines (replayed by [`Replay`]) with
//! every knob: migrations, ISRs, overruns, counting semaphores, cleared events, mutexes.
use super::*;

#[test]
fn state_machines_are_consistent() {
    for (cores, tasks, isrs, seed) in [(4, 24, 2, 1), (2, 10, 3, 7), (1, 6, 1, 3), (8, 40, 6, 9)] {
        let cfg = SynthConfig { cores, tasks, isrs, seed, ..short() };
        replay(&cfg);
    }
}

/// Migrations, nested ISRs, passive waits and parking follow the state machines too, and
/// happen (each action in one of the two systems at least).
#[test]
fn the_knobs_follow_the_state_machines() {
    let knobs = SynthConfig {
        isrs: 8,
        migrating_tasks: true,
        nested_isrs: true,
        passive_waits: true,
        parking: true,
        ..short()
    };
    let mut seen = HashSet::new();
    for cfg in [knobs.clone(), SynthConfig { cores: 2, tasks: 12, seed: 5, ..knobs }] {
        let text = replay(&cfg);
        let lines = parse(&text);
        seen.extend(lines.iter().map(|l| (l.ty.to_string(), l.act.to_string())));
        // A preempt on one core followed by a resume on another.
        let mut left: HashMap<(&str, u64), &str> = HashMap::new();
        let mut migrations = 0;
        for l in lines.iter().filter(|l| l.ty == "T") {
            match l.act {
                "preempt" => {
                    left.insert((l.tgt, l.ti), l.src);
                }
                "resume" => {
                    let from = left.remove(&(l.tgt, l.ti));
                    migrations += usize::from(from.is_some_and(|c| c != l.src));
                }
                _ => {}
            }
        }
        assert!(migrations > 0, "{cfg:?}: no migration");
        // Every activated instance terminated: nobody waits forever.
        let count = |act: &str| lines.iter().filter(|l| is_proc(l) && l.act == act).count();
        assert_eq!(count("activate"), count("terminate"), "{cfg:?}");
    }
    for (ty, act) in [
        ("T", "wait"),
        ("T", "release"),
        ("I", "preempt"),
        ("I", "resume"),
        ("EVENT", "wait_event"),
        ("EVENT", "set_event"),
        ("T", "park"),
        ("T", "poll_parking"),
        ("T", "release_parking"),
    ] {
        assert!(seen.contains(&(ty.to_string(), act.to_string())), "no {ty} {act} line");
    }
}

#[test]
fn every_activated_instance_terminates() {
    let text = replay(&short());
    let lines = parse(&text);
    let set = |ty: &[&str], act: &str| -> HashSet<(&str, u64)> {
        lines.iter().filter(|l| ty.contains(&l.ty) && l.act == act).map(|l| (l.tgt, l.ti)).collect()
    };
    let activated = set(&["T", "I"], "activate");
    assert!(!activated.is_empty());
    assert_eq!(activated, set(&["T", "I"], "terminate"));
    assert_eq!(set(&["R"], "start"), set(&["R"], "terminate"));
    // Nothing is triggered at or after the end of the simulated time.
    let last = lines.iter().filter(|l| l.act == "trigger").map(|l| l.ts).max();
    assert!(last.unwrap() < 200 * MS);
}

#[test]
fn instances_count_from_zero_per_entity() {
    let (buf, _) = gen(&short());
    let text = String::from_utf8(buf).unwrap();
    let mut next: HashMap<&str, u64> = HashMap::new();
    for l in parse(&text) {
        if (is_proc(&l) && l.act == "activate")
            || (l.ty == "R" && l.act == "start")
            || l.act == "trigger"
        {
            let n = next.entry(l.tgt).or_insert(0);
            assert_eq!(l.ti, *n, "{l:?}");
            *n += 1;
        }
    }
}

/// The overrun knob makes tasks miss their implicit deadlines (response time beyond the time
/// to the next activation), queue activations and drop some, which the default never does.
#[test]
fn overrun_knob_makes_deadline_misses() {
    let misses = |cfg: &SynthConfig| {
        let (_, truth) = write_btf_with_truth(Vec::new(), cfg).unwrap();
        let late = truth
            .instances
            .iter()
            .filter(|i| i.deadline.is_some_and(|d| i.terminate_ts - i.activate_ts > d))
            .count();
        let dropped: u64 = truth.processes.iter().map(|p| p.dropped_activations).sum();
        (late, dropped)
    };
    assert_eq!(misses(&short()), (0, 0));
    let (late, dropped) = misses(&SynthConfig { overrun_every: 2, ..short() });
    assert!(late > 0 && dropped > 0, "{late} misses, {dropped} dropped");
}

/// The counting semaphore and cleared events follow the state machines, with the other
/// knobs on too, and do all they can: every semaphore action, queued waits, waits that
/// return at once, and waits that wait although their event was set (and cleared) before.
#[test]
fn counting_semaphores_and_cleared_events_follow_the_state_machines() {
    let cfg = SynthConfig {
        cores: 8,
        tasks: 40,
        overrun_every: 3,
        isrs: 8,
        migrating_tasks: true,
        nested_isrs: true,
        passive_waits: true,
        parking: true,
        counting_slots: 3,
        clear_events: true,
        ..short()
    };
    let (text, at_once, discarded) = replay_counts(&cfg);
    let lines = parse(&text);
    let count = |ty: &str, act: &str| lines.iter().filter(|l| l.ty == ty && l.act == act).count();
    for (ty, act) in [
        ("SEM", "used"),
        ("SEM", "lock_used"),
        ("SEM", "unlock_full"),
        ("SEM", "free"),
        ("SEM", "overfull"),
        ("SEM", "full"),
        ("SEM", "queued"),
        ("EVENT", "clear_event"),
        ("T", "park"),
    ] {
        assert!(count(ty, act) > 0, "no {ty} {act} line");
    }
    // `used` both ways: 1 -> 2 and 2 -> 1.
    let sem_c: Vec<&Line> = lines.iter().filter(|l| l.tgt == "SEM_C" && l.src == "SEM_C").collect();
    let steps: HashSet<(Option<&str>, Option<&str>)> =
        sem_c.windows(2).filter(|w| w[1].act == "used").map(|w| (w[0].note, w[1].note)).collect();
    assert!(steps.contains(&(Some("1"), Some("2"))) && steps.contains(&(Some("2"), Some("1"))));
    println!(
        "{} lock requests, {} queued; {} waits, {at_once} at once, {discarded} waited after a \
         discarded set",
        count("SEM", "requestsemaphore"),
        count("SEM", "queued"),
        count("EVENT", "wait_event"),
    );
    assert!(at_once > 0 && discarded > 0);
    let acts = count("T", "activate") + count("I", "activate");
    assert_eq!(acts, count("T", "terminate") + count("I", "terminate"));
}

/// Mutexes ([`SynthConfig::preemptible_locks`]) follow the state machines, and do what they
/// are for: holders of a one-slot semaphore are preempted while holding it, its waiters are
/// queued (none poll), some on the holder's own core (the task that preempted it); and
/// with one slot `SEM_C` is a mutex too, with `lock` and `unlock`.
#[test]
fn mutexes_follow_the_state_machines() {
    let cfg = SynthConfig { isrs: 4, counting_slots: 1, preemptible_locks: true, ..short() };
    let text = replay(&cfg);
    let lines = parse(&text);
    let count = |ty: &str, act: &str| lines.iter().filter(|l| l.ty == ty && l.act == act).count();
    // Who holds what, and where each task last ran, from the text.
    let mut holder: HashMap<&str, (&str, u64)> = HashMap::new();
    let mut core_of: HashMap<&str, &str> = HashMap::new();
    let (mut preempted_holding, mut same_core, mut queued) = (0, 0, HashSet::new());
    for l in &lines {
        match (l.ty, l.act) {
            ("T", _) => {
                core_of.insert(l.tgt, l.src);
                let holds = holder.values().any(|&h| h == (l.tgt, l.ti));
                preempted_holding += usize::from(l.act == "preempt" && holds);
            }
            ("SEM", "assigned") => {
                holder.insert(l.tgt, (l.src, l.si));
            }
            ("SEM", "released") => {
                holder.remove(l.tgt);
            }
            ("SEM", "queued") => {
                queued.insert(l.tgt);
                let held_by = holder.get(l.tgt).map(|h| core_of.get(h.0));
                same_core += usize::from(held_by.flatten() == core_of.get(l.src));
            }
            _ => {}
        }
    }
    println!(
        "{} requests, {} queued ({same_core} on the holder's core), {preempted_holding} \
         preemptions of a holder",
        count("SEM", "requestsemaphore"),
        count("SEM", "queued")
    );
    assert_eq!(count("SEM", "waiting") + count("T", "poll"), 0);
    // The long-held SEM_C, and a spinlock of the default system turned mutex.
    assert!(queued.contains("SEM_C") && queued.len() > 1, "{queued:?}");
    assert!(preempted_holding > 0 && same_core > 0);
    assert!(count("SEM", "used") == 0 && count("SEM", "unlock") > 0);
    let acts = count("T", "activate") + count("I", "activate");
    assert_eq!(acts, count("T", "terminate") + count("I", "terminate"));
}
