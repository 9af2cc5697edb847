//! Tests of the truth the generator reports (`truth/`): it changes nothing in the trace,
//! agrees with itself and the text, and of a cut run keeps what it should.
use super::*;

fn gen_truth(cfg: &SynthConfig) -> (Vec<u8>, SynthStats, Vec<TruthInstance>) {
    let mut buf = Vec::new();
    let (stats, truth) = write_btf_with_truth(&mut buf, cfg).unwrap();
    (buf, stats, truth.instances)
}

#[test]
fn truth_changes_nothing_in_the_trace() {
    let (a, sa) = gen(&short());
    let (b, sb, truth) = gen_truth(&short());
    assert_eq!((a, sa), (b, sb));
    assert!(!truth.is_empty());
}

/// The truth is kept from budgets and decisions, not from the text: its identities check
/// the simulator's time keeping, and its timestamps and counts must be the text's.
#[test]
fn truth_agrees_with_itself_and_the_text() {
    let mut polled = false;
    for (cores, tasks, isrs, seed) in [(4, 24, 2, 1), (2, 10, 3, 7), (1, 6, 1, 3), (8, 40, 6, 9)] {
        let cfg = SynthConfig { cores, tasks, isrs, seed, ..short() };
        let (buf, st, truth) = gen_truth(&cfg);
        let text = String::from_utf8(buf).unwrap();
        let lines = parse(&text);
        let mut at: HashMap<(&str, u64, &str), i64> = HashMap::new();
        for l in &lines {
            // First occurrence: a process's first start, a runnable's start.
            at.entry((l.tgt, l.ti, l.act)).or_insert(l.ts);
        }
        let procs: Vec<&TruthInstance> = truth.iter().filter(|i| i.entity_type != "R").collect();
        assert_eq!(procs.len() as u64, st.terminations);
        assert_eq!(procs.iter().map(|i| i.preemptions).sum::<u64>(), st.preemptions);
        let runs = lines.iter().filter(|l| l.ty == "R" && l.act == "terminate").count();
        assert_eq!(truth.len() - procs.len(), runs);
        for i in &truth {
            let gross = i.terminate_ts - i.start_ts;
            assert!(i.start_ts >= i.activate_ts && gross > 0 && i.net_exec > 0, "{i:?}");
            assert_eq!(gross, i.net_exec + i.ready_time + i.polling_time, "{i:?}");
            assert_eq!(i.migrations, 0, "{i:?}");
            let key = |act| at.get(&(i.entity.as_str(), i.instance, act)).copied();
            let first = if i.entity_type == "R" { "start" } else { "activate" };
            assert_eq!(key(first), Some(i.activate_ts), "{i:?}");
            assert_eq!(key("start"), Some(i.start_ts), "{i:?}");
            assert_eq!(key("terminate"), Some(i.terminate_ts), "{i:?}");
            let core = lines.iter().find(|l| {
                l.tgt == i.entity && l.ti == i.instance && l.act == "start" && is_proc(l)
            });
            if let Some(l) = core {
                assert_eq!(l.src, i.core, "{i:?}");
            }
            polled |= i.polling_time > 0;
        }
    }
    assert!(polled, "no active wait at all");
}

#[test]
fn truth_of_a_cut_run_keeps_only_what_terminated_in_it() {
    let cfg = SynthConfig { target_bytes: Some(200_000), ..SynthConfig::default() };
    let (buf, st, truth) = gen_truth(&cfg);
    let text = String::from_utf8(buf).unwrap();
    let ended: HashSet<(&str, u64)> =
        parse(&text).into_iter().filter(|l| l.act == "terminate").map(|l| (l.tgt, l.ti)).collect();
    let procs = truth.iter().filter(|i| i.entity_type != "R").count() as u64;
    assert_eq!(procs, st.terminations);
    assert_eq!(truth.len(), ended.len());
    assert!(truth.iter().all(|i| ended.contains(&(i.entity.as_str(), i.instance))));
}

/// A cut run's instances under way: their times add up to the time since their start.
#[test]
fn truth_of_a_cut_run_says_what_is_under_way() {
    let cfg = SynthConfig {
        isrs: 8,
        migrating_tasks: true,
        nested_isrs: true,
        passive_waits: true,
        parking: true,
        counting_slots: 3,
        clear_events: true,
        target_bytes: Some(400_000),
        ..SynthConfig::default()
    };
    let mut buf = Vec::new();
    let (st, truth) = write_btf_with_truth(&mut buf, &cfg).unwrap();
    assert!(!truth.cut.is_empty());
    for c in &truth.cut {
        let busy = c.net_exec + c.ready_time + c.waiting_time + c.polling_time + c.parking_time;
        assert_eq!(busy, c.start_ts.map_or(0, |s| st.last_ts - s), "{c:?}");
        assert!(c.activate_ts <= st.last_ts);
    }
}
