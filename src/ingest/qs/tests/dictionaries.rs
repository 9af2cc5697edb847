//! Tests of the sizes and dictionaries a capture is read with: sizes from a dic file, a
//! dic of another build, unusable target info.
use super::*;

#[test]
fn without_sizes_the_file_is_refused_and_a_dic_gives_them() {
    // A QP 8 capture without target info.
    let mut g = Gen::new();
    g.rec(1, &cat(&[&SM, &S_A]));
    let mut sink = Rec::default();
    let e = read(&g.out[..], "x.bin", &QsOptions::default(), &Companion::default(), &mut sink)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("QS needs the target's sizes: no target-info record and no .dic beside it"),
        "{e}"
    );
    assert!(e.contains("x.dic"), "{e}");
    let comp = Companion {
        dic: Some(Dic::parse("-v800 -T2\nObj-Dic:\n4\n0x7E7D0010 Philo\n***\n")),
        ..Companion::default()
    };
    let mut sink = Rec::default();
    read(&g.out[..], "x.bin", &QsOptions::default(), &comp, &mut sink).unwrap();
    assert_eq!(
        sink.events,
        ["0|Philo|FUNC:0x2000007E|QEP_STATE_ENTRY|Obj=Philo,State=0x2000007E|None"]
    );
}

#[test]
fn a_target_info_with_unusable_sizes_is_reported_and_ignored() {
    let mut g = Gen::new();
    g.target_info();
    g.rec(100, &[7, 0]);
    g.rec(64, &[0x00, 0xB6, 0x02, 0, 0, 0, 0, 0, 8, 0x21, 0, 0, 0, 1, 1, 24]); // all sizes 0
    g.rec(100, &[9, 0]); // still read with 2-byte timestamps
    let r = run(&g.out, &QsOptions::default());
    assert_eq!(r.events[3], "9|USER_100|:|USER_100|-|None");
    assert_eq!(
        diags_of(&r, "bad_target_info"),
        ["byte 26: target info with unusable object pointer size 0 (expected 1, 2 or 4 or 8): \
          the configuration in use (QP 6.9.4 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2) is kept at \
          byte 26 (frame 3)"]
    );
}

#[test]
fn a_dic_of_another_build_or_other_sizes_is_not_used() {
    let mut g = Gen::new();
    g.target_info(); // built 240101_000000, sizes -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2
    g.rec(1, &cat(&[&SM, &S_A]));
    let entry = |opts: &str| {
        let comp = Companion {
            dic: Some(Dic::parse(&format!("{opts}\nObj-Dic:\n4\n0x7E7D0010 Philo\n***\n"))),
            ..Companion::default()
        };
        let mut sink = Rec::default();
        read(&g.out[..], "x.bin", &QsOptions::default(), &comp, &mut sink).unwrap();
        let entry = sink.events.iter().find(|e| e.contains("STATE_ENTRY")).cloned().unwrap();
        (entry, diags_of(&sink, "dic_mismatch").into_iter().map(String::from).collect::<Vec<_>>())
    };
    let same = "-v694 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2 -t240101_000000";
    let (e, d) = entry(same);
    assert!(e.starts_with("0|Philo|"), "{e}");
    assert!(d.is_empty(), "{d:?}");
    let (e, d) = entry("-v694 -T2 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2 -t240202_101010");
    assert!(e.starts_with("0|0x7E7D0010|"), "{e}");
    assert_eq!(
        d,
        [": the .dic is for another target (build 240202_101010, the target's is 240101_000000): \
          its dictionaries are not used; the target's own dictionary records name what they name"]
    );
    let (e, d) = entry("-v694 -T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2");
    assert!(e.starts_with("0|0x7E7D0010|"), "{e}");
    assert!(d[0].contains("(sizes -T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2, the target's are -T2"));
}
