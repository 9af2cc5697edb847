use super::*;

fn name(rec: u8, v: u16) -> &'static str {
    spec_of(rec, v).map_or("-", |s| s.name)
}

#[test]
fn record_ids_move_with_the_version() {
    // 10/11, 18, 23, 27, 38, 48/49, 54, 56/57, 67, 70, 71, 81 per FORMATS.md's table,
    // with the releases QSPY (6.9.0, 7.2.1) and qpc's qs.h (6.3.6, 6.9.2) move them in:
    // 6.2 for the deferred-event records, 6.9 for QF_NEW_ATTEMPT, 7.1 for SCHED_PREEMPT.
    let versions = [610u16, 650, 680, 694, 700, 734, 812];
    let (add, defer, rcla) = ("QF_ACTIVE_ADD", "QF_ACTIVE_DEFER", "QF_ACTIVE_RECALL_ATTEMPT");
    let (del, mtx, pre) = ("QF_DELETE_REF", "MUTEX_LOCK", "SCHED_PREEMPT");
    let (new, res, en) = ("QF_NEW_ATTEMPT", "SCHED_RESUME", "ENUM_DICT");
    let rows: &[(u8, [&str; 7])] = &[
        (10, [add, defer, defer, defer, defer, defer, defer]),
        (18, ["QF_EQUEUE_INIT", rcla, rcla, rcla, rcla, rcla, rcla]),
        (23, ["QF_MPOOL_INIT", "-", "-", new, new, new, new]),
        (
            27,
            [
                "-",
                "QF_NEW_REF",
                "QF_NEW_REF",
                "QF_NEW_REF",
                "QF_NEW_REF",
                "QF_NEW_REF",
                "QF_NEW_REF",
            ],
        ),
        (38, ["QF_TIMEEVT_CTR", del, del, del, del, del, del]),
        (48, [mtx, mtx, mtx, mtx, mtx, pre, pre]),
        (54, [res, res, res, res, en, en, en]),
        (
            56,
            [
                "QEP_TRAN_EP",
                "QEP_TRAN_EP",
                "QEP_TRAN_EP",
                "QEP_TRAN_EP",
                "QEP_TRAN_EP",
                "QEP_TRAN_EP",
                "-",
            ],
        ),
        (
            67,
            [
                "-",
                "QUERY_DATA",
                "QUERY_DATA",
                "QUERY_DATA",
                "QUERY_DATA",
                "QUERY_DATA",
                "QUERY_DATA",
            ],
        ),
        (70, ["-", "-", "-", "QF_RUN", "QF_RUN", "QF_RUN", "QF_RUN"]),
        (71, ["-", "-", "-", "-", "SEM_TAKE", "SEM_TAKE", "SEM_TAKE"]),
        (
            80,
            ["-", "-", "-", "-", "MTX_UNLOCK_ATTEMPT", "MTX_UNLOCK_ATTEMPT", "MTX_UNLOCK_ATTEMPT"],
        ),
        (81, ["-", "-", "-", "-", "-", "-", "QF_ACTIVE_DEFER_ATTEMPT"]),
    ];
    for (rec, names) in rows {
        for (v, want) in versions.iter().zip(names) {
            assert_eq!(name(*rec, *v), *want, "record {rec} in QP {v}");
        }
    }
    // User records start at 70 before 6.6, at 100 since.
    let c = Config::typical;
    assert_eq!((c(650).user(), c(660).user(), c(812).user()), (70, 100, 100));
    // Early 5.x: QS_EMPTY is 64, 0 is the target reset, dictionaries 60-63, QK records.
    assert_eq!((name(64, 540), c(540).empty(), name(0, 540)), ("EMPTY", 64, "QP_RESET"));
    assert_eq!(
        (name(63, 540), name(52, 540), name(67, 540)),
        ("USR_DICT", "QK_SCHEDULE", "TEST_RUN")
    );
    assert_eq!((name(64, 694), c(694).empty(), name(0, 694)), ("TARGET_INFO", 0, "EMPTY"));
    // QP 4.x: 63 was QS_ASSERT, no user dictionary.
    assert_eq!(name(63, 420), "ASSERT");
    assert_eq!(name(14, 540), "QF_ACTIVE_POST_FIFO");
    assert_eq!(name(14, 694), "QF_ACTIVE_POST");
}

#[test]
fn target_info_old_format_matches_qspy() {
    // matlab/dpp-qpc.bin, frame 2: seq 2, rec 64, then the payload below.
    let p = [
        0xFF, 0xB6, 0x02, 0x42, 0x44, 0x44, 0x44, 0x04, 0x40, 0x23, 0x2B, 0x02, 0x0C, 0x14, 0x0A,
        0x15,
    ];
    let ti = target_info(&p).unwrap();
    assert!(ti.reset && !ti.big_endian);
    assert_eq!(ti.config.version, 694);
    let c = ti.config;
    assert_eq!((c.sig, c.evt, c.queue, c.tevt, c.pool_blk, c.pool_ctr), (2, 4, 4, 4, 4, 4));
    assert_eq!((c.obj, c.fun, c.tstamp), (4, 4, 4));
    assert_eq!(ti.build, "211020_120243");
    assert_eq!(c.version_text(), "6.9.4");
}

#[test]
fn target_info_new_format() {
    // QP 8.x: flags 0b0100_0110 (reset, qpc), ~(260101*10000 + 812), then 13 bytes.
    let w: u32 = !(260_101u32 * 10_000 + 812);
    let mut p = vec![0x46];
    p.extend(w.to_le_bytes());
    p.extend([0x22, 0x41, 0x22, 0x44, 0x04, 0x08, 0x21, 1, 2, 3, 4, 5, 26]);
    let ti = target_info(&p).unwrap();
    assert!(ti.reset && !ti.big_endian);
    assert_eq!((ti.config.version, ti.qp_type), (812, Some(1)));
    assert_eq!((ti.config.queue, ti.config.tevt, ti.config.pool_ctr), (1, 4, 2));
    assert_eq!(ti.build, "260504_030201");
    assert!(target_info(&p[..10]).is_none());
}
