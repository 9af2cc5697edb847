//! Quantum Leaps QS: the real captures of ../shared/datasets/qs (skipped with a message when
//! absent), QSPY's own decode of one of them, and a capture generated here whose tables are
//! worked out by hand.
use crate::util::{self, csv, ok, run, scalar};
use std::collections::BTreeMap;
use std::path::Path;

/// A record as a target sends it: escaped, checksummed, flagged (FORMATS.md §3).
fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut sum = 0u8;
    for (i, &b) in bytes.iter().chain(std::iter::once(&0)).enumerate() {
        let b = if i == bytes.len() { !sum } else { b };
        sum = sum.wrapping_add(b);
        if i != 1 && (b == 0x7E || b == 0x7D) {
            out.extend([0x7D, b ^ 0x20]);
        } else {
            out.push(b);
        }
    }
    out.push(0x7E);
    out
}

/// Error-level (or worse) diagnostics of capture `id`, as `kind count` lines.
fn errors(dir: &Path, id: u32) -> String {
    csv(
        dir,
        "db",
        &format!(
            "SELECT kind, sum(count) FROM diagnostics WHERE capture_id = {id} AND severity IN \
             ('error', 'data_loss', 'warning') GROUP BY kind ORDER BY kind"
        ),
    )
}

#[test]
fn shared_qs_captures_ingest_cleanly() {
    let Some(root) = util::shared_datasets() else { return };
    let qs = root.join("qs");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // QP 6.9.4 with its target-info record and in-band dictionaries.
    ok(d, &["ingest", "--archive", "db", qs.join("qp694-dpp-qpc.bin").to_str().unwrap()]);
    // QP 8.x without target info, its sizes and names in the .dic beside it; it starts in
    // the middle of a record (info `resync`). Detected, not forced.
    ok(d, &["ingest", "--archive", "db", qs.join("qp8-dpp-qpc-nodict.bin").to_str().unwrap()]);
    // The QP 5 and 4.2 samples carry neither: their QSPY options are given. dpp64.qs is
    // QSPY 4.2's own example (qtools v5.9.3 qspy/matlab/dpp64.txt is its decode, with
    // these options); dpp.qs decodes with its timestamps, pointers and 32-bit tick counter.
    std::fs::write(d.join("qp5.dic"), "-v540 -T4 -O4 -F4 -S2 -C4\n").unwrap();
    std::fs::write(d.join("qp42.dic"), "-v420\n-T4 -O8 -F8 -S2 -E4 -Q4 -P4 -B4 -C4\n").unwrap();
    for (f, dic) in [("qp5-dpp.qs", "qp5.dic"), ("qp5-dpp64.qs", "qp42.dic")] {
        let path = qs.join(f);
        ok(
            d,
            &[
                "ingest",
                "--archive",
                "db",
                "--format",
                "qs",
                "--qs-dic",
                dic,
                path.to_str().unwrap(),
            ],
        );
    }
    for id in 1..=4 {
        assert_eq!(errors(d, id), "kind,sum(count)\n", "capture {id}");
    }
    let frames =
        csv(d, "db", "SELECT capture_id, event_count, format, time_unit FROM captures ORDER BY 1");
    assert_eq!(
        frames,
        "capture_id,event_count,format,time_unit\n1,1044,qs,tick\n2,398,qs,tick\n3,678,qs,tick\n4,6188,qs,tick\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT kind, severity FROM diagnostics WHERE capture_id = 2 ORDER BY kind"),
        "kind,severity\nresync,info\nunknown_tick_rate,info\n"
    );
    // The .dic is kept with the capture and named in its metadata.
    let meta = scalar(
        d,
        "db",
        "SELECT json_extract_string(meta, '$.\"qs.dic\"') || ' ' || \
         json_extract_string(meta, '$.qp_version') FROM captures WHERE capture_id = 2",
    );
    assert_eq!(meta, "qp8-dpp-qpc-nodict.dic 8.0.0");
    let sources = scalar(d, "db", "SELECT source_files FROM captures WHERE capture_id = 2");
    assert!(sources.contains("qp8-dpp-qpc-nodict.dic"), "{sources}");
    // Names from the .dic: the philosophers are active objects with states.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT entity_type, state, ts, dur, open FROM intervals WHERE capture_id = 2 AND \
             entity = 'Philo_inst[1]' AND channel = 'state' ORDER BY ts"
        ),
        "entity_type,state,ts,dur,open\nAO,Philo_hungry,1774236293,1464230,false\n\
         AO,Philo_eating,1775700523,4666823,false\nAO,Philo_thinking,1780367346,1309770,true\n"
    );
    // state_time sums them per active object (kind AO), open states up to the end.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT kind, state, intervals, time FROM state_time WHERE capture_id = 2 AND \
             entity = 'Philo_inst[1]' ORDER BY state"
        ),
        "kind,state,intervals,time\nAO,Philo_eating,1,4666823\nAO,Philo_hungry,1,1464230\n\
         AO,Philo_thinking,1,1309770\n"
    );
    // The records before the first timestamp (target info, dictionaries) take it: the
    // capture starts at its first time (QSPY's first, 2942309049), not at tick 0.
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT action, ts FROM events WHERE capture_id = 1 AND seq IN (1, 22) ORDER BY seq"
        ),
        "action,ts\nTARGET_INFO,2942309049\nQF_ACTIVE_SUBSCRIBE,2942309049\n"
    );
}

/// QSPY's MATLAB export of qp694-dpp-qpc.bin: one line per record, `recID field ...`.
fn mat_lines(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .filter(|v: &Vec<String>| !v.is_empty())
        .collect()
}

#[test]
fn shared_qp694_matches_qspys_own_decode() {
    let Some(root) = util::shared_datasets() else { return };
    let qs = root.join("qs");
    let mat = mat_lines(&qs.join("qp694-dpp-qpc.qspy-matlab.mat"));
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["ingest", "--archive", "db", qs.join("qp694-dpp-qpc.bin").to_str().unwrap()]);
    // Records per ID. QSPY writes no MATLAB line for QS_EMPTY, USR_DICT, TARGET_INFO and
    // QF_RUN; every other record is one line.
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for l in &mat {
        *want.entry(l[0].clone()).or_default() += 1;
    }
    let names = [
        ("1", "QEP_STATE_ENTRY"),
        ("2", "QEP_STATE_EXIT"),
        ("3", "QEP_STATE_INIT"),
        ("4", "QEP_INIT_TRAN"),
        ("5", "QEP_INTERN_TRAN"),
        ("6", "QEP_TRAN"),
        ("7", "QEP_IGNORED"),
        ("8", "QEP_DISPATCH"),
        ("9", "QEP_UNHANDLED"),
        ("12", "QF_ACTIVE_SUBSCRIBE"),
        ("14", "QF_ACTIVE_POST"),
        ("16", "QF_ACTIVE_GET"),
        ("17", "QF_ACTIVE_GET_LAST"),
        ("24", "QF_MPOOL_GET"),
        ("25", "QF_MPOOL_PUT"),
        ("26", "QF_PUBLISH"),
        ("28", "QF_NEW"),
        ("29", "QF_GC_ATTEMPT"),
        ("30", "QF_GC"),
        ("32", "QF_TIMEEVT_ARM"),
        ("33", "QF_TIMEEVT_AUTO_DISARM"),
        ("34", "QF_TIMEEVT_DISARM_ATTEMPT"),
        ("37", "QF_TIMEEVT_POST"),
        ("60", "SIG_DICT"),
        ("61", "OBJ_DICT"),
        ("62", "FUN_DICT"),
        ("100", "PHILO_STAT"),
    ];
    let got = csv(d, "db", "SELECT action, count(*) FROM events GROUP BY 1 ORDER BY 1");
    let got: BTreeMap<&str, u64> = got
        .lines()
        .skip(1)
        .map(|l| {
            let (a, n) = l.rsplit_once(',').unwrap();
            (a, n.parse().unwrap())
        })
        .collect();
    assert_eq!(want.len(), names.len(), "{want:?}");
    for (id, name) in names {
        assert_eq!(got.get(name), want.get(id), "record {id} = {name}");
    }
    for extra in ["EMPTY", "USR_DICT", "TARGET_INFO", "QF_RUN"] {
        assert_eq!(got.get(extra), Some(&1), "{extra}");
    }
    // Transitions field by field, in order: time, signal number, object and states by
    // address (the .mat gives addresses; the dictionary lines give their names, with
    // `[`/`]` written `_` as MATLAB needs).
    let mut dict: BTreeMap<String, String> = BTreeMap::new();
    for l in mat.iter().filter(|l| l[0] == "61" || l[0] == "62") {
        let (name, addr) = l[1].trim_end_matches(';').split_once('=').unwrap();
        dict.insert(addr.to_string(), name.to_string());
    }
    let mut sigs: BTreeMap<String, String> = BTreeMap::new();
    for l in mat.iter().filter(|l| l[0] == "60") {
        let (name, sig) = l[1].split_once("=[").unwrap();
        sigs.insert(sig.to_string(), name.to_string());
    }
    let matlab = |s: &str| s.replace(['[', ']', '.'], "_");
    let want_tran: Vec<String> = mat
        .iter()
        .filter(|l| l[0] == "6")
        .map(|l| {
            format!(
                "{},{},{},{},{}",
                l[1],
                sigs.get(&l[2]).cloned().unwrap_or_else(|| l[2].clone()),
                dict[&l[3]],
                dict[&l[4]],
                dict[&l[5]]
            )
        })
        .collect();
    let got_tran = csv(
        d,
        "db",
        "SELECT ts, target, source, note FROM events WHERE action = 'QEP_TRAN' ORDER BY seq",
    );
    let got_tran: Vec<String> = got_tran
        .lines()
        .skip(1)
        .map(|l| {
            // ts,dst,obj,"Sig=..,Obj=..,State=src->dst"
            let f: Vec<&str> = l.splitn(4, ',').collect();
            let note = f[3].trim_matches('"');
            let sig = note.split(',').next().unwrap().trim_start_matches("Sig=");
            let src = note.rsplit_once("State=").unwrap().1.split("->").next().unwrap();
            format!("{},{},{},{},{}", f[0], sig, matlab(f[2]), matlab(src), matlab(f[1]))
        })
        .collect();
    // The .mat names a signal by the first dictionary entry of its number: HUNGRY_SIG and
    // TIMEOUT_SIG are per-object there; compare numbers through the names they map to.
    assert_eq!(got_tran.len(), want_tran.len());
    for (g, w) in got_tran.iter().zip(&want_tran) {
        let (g_ts, g_rest) = g.split_once(',').unwrap();
        let (w_ts, w_rest) = w.split_once(',').unwrap();
        assert_eq!(g_ts, w_ts);
        assert_eq!(g_rest.split_once(',').unwrap().1, w_rest.split_once(',').unwrap().1);
    }
    // Posts: time, sender, receiver, free slots, in order.
    let want_post: Vec<String> = mat
        .iter()
        .filter(|l| l[0] == "14")
        .map(|l| format!("{},{},{},{}", l[1], dict[&l[2]], dict[&l[4]], l[7]))
        .collect();
    let got_post = csv(
        d,
        "db",
        "SELECT ts, source, target, CAST(value AS BIGINT) FROM events WHERE action = \
         'QF_ACTIVE_POST' ORDER BY seq",
    );
    let got_post: Vec<String> = got_post
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{},{},{}", f[0], matlab(f[1]), matlab(f[2]), f[3])
        })
        .collect();
    assert_eq!(got_post, want_post);
    // User records: time and arguments as QSPY prints them.
    let want_user: Vec<String> =
        mat.iter().filter(|l| l[0] == "100").map(|l| l[1..].join(" ")).collect();
    let got_user =
        csv(d, "db", "SELECT ts, note FROM events WHERE action = 'PHILO_STAT' ORDER BY seq");
    let got_user: Vec<String> = got_user
        .lines()
        .skip(1)
        .map(|l| {
            l.replace('"', " ")
                .replacen(',', " ", 1)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(got_user, want_user);
    // Every post to an active object was got, except those still queued at the end.
    let unmatched = scalar(d, "db", "SELECT count(*) FROM messages WHERE recv_ts IS NULL");
    let gets = want.get("16").unwrap_or(&0) + want.get("17").unwrap_or(&0);
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FROM messages WHERE recv_ts IS NOT NULL"),
        gets.to_string()
    );
    assert_eq!(unmatched, (want["14"] - gets).to_string());
}

/// A QP 7.3 target (`-T2 -O4 -F4 -S2`, built 2024-05-06), hand-written.
fn generated() -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = 0u8;
    let mut rec = |out: &mut Vec<u8>, id: u8, p: &[u8]| {
        seq = seq.wrapping_add(1);
        let mut b = vec![seq, id];
        b.extend(p);
        out.extend(frame(&b));
    };
    let info = [0x00, 0xDE, 0x02, 0x22, 0x21, 0x22, 0x44, 0x02, 8, 0x21, 0, 0, 0, 6, 5, 24];
    rec(&mut out, 64, &info); // QP 734
    rec(&mut out, 61, b"\x10\x00\x00\x20ao\0");
    rec(&mut out, 61, b"\x20\x00\x00\x20sm\0");
    rec(&mut out, 62, b"\x00\x01\x00\x08idle\0");
    rec(&mut out, 62, b"\x00\x02\x00\x08busy\0");
    rec(&mut out, 60, b"\x05\x00\x00\x00\x00\x00GO_SIG\0");
    let ao = [0x10, 0, 0, 0x20];
    let sm = [0x20, 0, 0, 0x20];
    let (idle, busy) = ([0, 1, 0, 8], [0, 2, 0, 8]);
    rec(&mut out, 4, &[&[10, 0][..], &ao, &idle].concat()); // t=10 ao -> idle
    rec(&mut out, 4, &[&[12, 0][..], &sm, &idle].concat()); // t=12 sm -> idle
    rec(&mut out, 14, &[&[20, 0][..], &sm, &[5, 0], &ao, &[0, 0, 3, 3]].concat()); // sm posts GO to ao
    rec(&mut out, 15, &[&[25, 0][..], &[5, 0], &ao, &[0, 0, 2, 2]].concat()); // LIFO GO to ao
    rec(&mut out, 41, &[30, 0, 1, 9]); // ISR prio 9 in at 30
    rec(&mut out, 41, &[35, 0, 2, 11]); // prio 11 nested at 35
    rec(&mut out, 42, &[38, 0, 2, 11]); // out at 38
    rec(&mut out, 42, &[40, 0, 1, 9]); // out at 40
    rec(&mut out, 17, &[&[50, 0][..], &[5, 0], &ao, &[0, 0]].concat()); // ao gets the LIFO one
    rec(&mut out, 6, &[&[55, 0][..], &[5, 0], &ao, &idle, &busy].concat()); // ao idle -> busy
    rec(&mut out, 16, &[&[60, 0][..], &[5, 0], &ao, &[0, 0, 3]].concat()); // ao gets sm's post
    rec(&mut out, 14, &[&[70, 0][..], &sm, &[5, 0], &ao, &[0, 0, 3, 3]].concat()); // never got
    rec(&mut out, 39, &[72, 0, 1]); // critical section 72..74
    rec(&mut out, 40, &[74, 0, 1]);
    rec(&mut out, 6, &[&[80, 0][..], &[5, 0], &sm, &idle, &busy].concat()); // sm idle -> busy
    out
}

#[test]
fn generated_qs_capture_gives_hand_computed_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("gen.bin"), generated()).unwrap();
    // Detected as QS (frames check), 1 tick = 1 ms.
    ok(d, &["ingest", "--archive", "db", "--tick-rate", "1kHz", "gen.bin"]);
    assert_eq!(scalar(d, "db", "SELECT format || ' ' || time_unit FROM captures"), "qs ns");
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT entity, entity_type, channel, state, ts, dur, open FROM intervals ORDER BY \
             channel, entity, ts"
        ),
        "entity,entity_type,channel,state,ts,dur,open\n\
         QF,SCHED,critical,critical,72000000,2000000,false\n\
         ISR,I,running,9,30000000,5000000,false\n\
         ISR,I,running,11,35000000,3000000,false\n\
         ISR,I,running,9,38000000,2000000,false\n\
         ao,AO,state,idle,10000000,45000000,false\n\
         ao,AO,state,busy,55000000,25000000,true\n\
         sm,SM,state,idle,12000000,68000000,false\n\
         sm,SM,state,busy,80000000,0,true\n"
    );
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT sender, receiver, send_ts, recv_ts, tag, size FROM messages ORDER BY send_ts"
        ),
        "sender,receiver,send_ts,recv_ts,tag,size\n\
         sm,ao,20000000,60000000,5,0\n\
         ao,ao,25000000,50000000,5,0\n\
         sm,ao,70000000,,5,0\n"
    );
    assert_eq!(
        csv(d, "db", "SELECT name, type FROM entities ORDER BY name"),
        "name,type\nGO_SIG,QSIG\nISR,I\nQF,SCHED\nQS,\nao,AO\nbusy,FUNC\nidle,FUNC\nsm,SM\n"
    );
    // No instances or lock requests from QS, and no diagnostics from the deriver.
    assert_eq!(scalar(d, "db", "SELECT count(*) FROM instances"), "0");
    assert_eq!(csv(d, "db", "SELECT kind FROM diagnostics ORDER BY kind"), "kind\n");
    assert_eq!(
        scalar(d, "db", "SELECT note FROM events WHERE action = 'QEP_TRAN' ORDER BY seq LIMIT 1"),
        "\"Sig=GO_SIG,Obj=ao,State=idle->busy\""
    );
    // Not QS by chance: text is never taken for it, and forcing a text file fails on sizes.
    std::fs::write(d.join("t.btf"), "#timeScale ns\n0,Core_0,0,T,A,0,activate\n").unwrap();
    let out = run(d, &["ingest", "--archive", "db", "--format", "qs", "t.btf"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("QS needs the target's sizes"), "{err}");
    // --strict stops at a warning: a bad checksum after the first frame.
    let mut bad = generated();
    let at = bad.len() - 3;
    bad[at] ^= 0x01;
    std::fs::write(d.join("bad.bin"), bad).unwrap();
    let out = run(d, &["ingest", "--archive", "db", "--strict", "--format", "qs", "bad.bin"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad checksum"));
}

#[test]
fn a_qs_capture_exports_to_btf_that_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("gen.bin"), generated()).unwrap();
    ok(d, &["ingest", "--archive", "db", "gen.bin"]);
    // Records about their source alone (ticks, dictionaries, ISR records) have no target: the
    // BTF line names the source there (a BTF line must have one). Ticks are written as ns,
    // with a warning.
    let out = run(d, &["export", "1", "--archive", "db", "--to", "btf", "back.btf"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: capture 1 holds target ticks"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(d, &["ingest", "--archive", "db", "back.btf"]);
    assert_eq!(
        scalar(
            d,
            "db",
            "SELECT count(*) FROM diagnostics WHERE capture_id = 2 AND severity IN ('error', \
             'data_loss', 'warning')"
        ),
        "0"
    );
    assert_eq!(
        scalar(
            d,
            "db",
            "SELECT (SELECT event_count FROM captures WHERE capture_id = 1) = \
             (SELECT event_count FROM captures WHERE capture_id = 2)"
        ),
        "true"
    );
    let back = std::fs::read_to_string(d.join("back.btf")).unwrap();
    assert!(back.contains(",ISR,-1,I,ISR,-1,QF_ISR_ENTRY,"), "{back}");
}

/// Records `(id, payload)` after the target info of [`generated`] (QP 7.3, `-T2 -O4`).
fn capture(recs: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let info = [0x00, 0xDE, 0x02, 0x22, 0x21, 0x22, 0x44, 0x02, 8, 0x21, 0, 0, 0, 6, 5, 24];
    let mut out = frame(&[&[1, 64][..], &info].concat());
    for (i, (id, p)) in recs.iter().enumerate() {
        let seq = u8::try_from((i + 2) % 256).unwrap();
        out.extend(frame(&[&[seq, *id][..], p].concat()));
    }
    out
}

#[test]
fn qs_isr_and_critical_section_open_at_the_end_are_open() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // ISR prio 3 in at 10 (never out), critical section from 20, a user record at 30.
    let recs = [(41, vec![10, 0, 1, 3]), (39, vec![20, 0, 1]), (100, vec![30, 0])];
    std::fs::write(d.join("open.bin"), capture(&recs)).unwrap();
    ok(d, &["ingest", "--archive", "db", "open.bin"]);
    assert_eq!(
        csv(d, "db", "SELECT entity, channel, state, ts, dur, open FROM intervals ORDER BY ts"),
        "entity,channel,state,ts,dur,open\nISR,running,3,10,20,true\nQF,critical,critical,20,10,true\n"
    );
}

#[test]
fn a_critical_section_whose_exit_was_lost_ends_at_the_next_outermost_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Entries (39) and exits (40) with their nesting: in at 10, in again at 20 with the
    // first one's exit lost, out at 30; then 40 in, nested 45-50, out at 60.
    let recs = [
        (39, vec![10, 0, 1]),
        (39, vec![20, 0, 1]),
        (40, vec![30, 0, 1]),
        (39, vec![40, 0, 1]),
        (39, vec![45, 0, 2]),
        (40, vec![50, 0, 2]),
        (40, vec![60, 0, 1]),
    ];
    std::fs::write(d.join("crit.bin"), capture(&recs)).unwrap();
    ok(d, &["ingest", "--archive", "db", "crit.bin"]);
    assert_eq!(
        csv(d, "db", "SELECT ts, dur, open FROM intervals WHERE channel = 'critical' ORDER BY ts"),
        "ts,dur,open\n10,10,false\n20,10,false\n40,20,false\n"
    );
    assert_eq!(
        scalar(d, "db", "SELECT count(*) FROM diagnostics WHERE kind = 'lost_critical_exit'"),
        "1"
    );
}

#[test]
fn the_duplicate_check_counts_the_dictionary_given_and_the_tick_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("gen.bin"), generated()).unwrap();
    std::fs::write(d.join("a.dic"), "-v734\nObj-Dic:\n4\n0x20000010 worker\n***\n").unwrap();
    std::fs::write(d.join("b.dic"), "-v734\nObj-Dic:\n4\n0x20000010 robot\n***\n").unwrap();
    std::fs::copy(d.join("a.dic"), d.join("same-as-a.dic")).unwrap();
    let ingest = |extra: &[&str]| {
        let mut args = vec!["ingest", "--archive", "db", "--tick-rate", "1kHz"];
        args.extend(extra);
        args.push("gen.bin");
        let out = run(d, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let captures = || scalar(d, "db", "SELECT count(*) FROM captures");
    assert!(ingest(&[]).contains("capture 1 'gen'"));
    assert!(ingest(&[]).contains("identical to capture 1"));
    // A dictionary given: other bytes read, another capture (it was refused as capture 1).
    let with_a = ingest(&["--qs-dic", "a.dic"]);
    assert!(with_a.contains("capture 2 'gen'"), "{with_a}");
    // The same dictionary bytes, under whatever name: the same capture.
    assert!(ingest(&["--qs-dic", "a.dic"]).contains("identical to capture 2"));
    assert!(ingest(&["--qs-dic", "same-as-a.dic"]).contains("identical to capture 2"));
    // Another dictionary: another capture.
    assert!(ingest(&["--qs-dic", "b.dic"]).contains("capture 3 'gen'"));
    assert_eq!(captures(), "3");
    // A dictionary beside the trace is read as one given would be.
    std::fs::copy(d.join("a.dic"), d.join("gen.dic")).unwrap();
    assert!(ingest(&[]).contains("identical to capture 2"));
    // ... unless another is given, which is read instead.
    assert!(ingest(&["--qs-dic", "b.dic"]).contains("identical to capture 3"));
    std::fs::remove_file(d.join("gen.dic")).unwrap();
    // Another tick rate reads the same bytes into other times: another capture.
    let fast = run(d, &["ingest", "--archive", "db", "--tick-rate", "1MHz", "gen.bin"]);
    assert!(String::from_utf8_lossy(&fast.stderr).contains("capture 4 'gen'"));
    let none = run(d, &["ingest", "--archive", "db", "gen.bin"]);
    assert!(String::from_utf8_lossy(&none.stderr).contains("capture 5 'gen'"));
    let none = run(d, &["ingest", "--archive", "db", "gen.bin"]);
    assert!(String::from_utf8_lossy(&none.stderr).contains("identical to capture 5"));
    assert_eq!(
        csv(
            d,
            "db",
            "SELECT capture_id, time_unit, meta->>'qs.dic' AS dic FROM captures ORDER BY 1"
        ),
        "capture_id,time_unit,dic\n1,ns,\n2,ns,a.dic\n3,ns,b.dic\n4,ns,\n5,tick,\n"
    );
}

#[test]
fn a_payload_kept_as_hex_is_no_number() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Record 90 (reserved in QP 7.3) with the one byte 0x10, another with 0x89; an
    // OBJ_DICT cut after one byte of its pointer. Their payloads are notes in hex: `10` is
    // the byte 16, not the number 10, and `89` is 137.
    let recs = [(90, vec![0x10]), (90, vec![0x89]), (61, vec![0x42])];
    std::fs::write(d.join("hex.bin"), capture(&recs)).unwrap();
    ok(d, &["ingest", "--archive", "db", "hex.bin"]);
    assert_eq!(
        csv(d, "db", "SELECT action, note, value FROM events WHERE seq > 0 ORDER BY seq"),
        "action,note,value\nREC_90,Data=10,\nREC_90,Data=89,\nOBJ_DICT,Data=42,\n"
    );
}
