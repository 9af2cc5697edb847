//! Tests of time: absolute times with units, deltas, cycles and their frequency, rows
//! between timestamp messages, the micro sign.
use super::*;

#[test]
fn absolute_times_with_units_and_suffixes_are_exact_ns() {
    let mut c = Clock::new(Encoding::Absolute, Base::Time(1_000_000));
    assert_eq!(c.read("1.5").unwrap().ns, 1500);
    assert_eq!(c.read("2000ns").unwrap().ns, 2000);
    let r = c.read("1999.9999 ns").unwrap();
    assert_eq!((r.ns, r.floored, r.backwards), (1999, true, Some(2000)));
    assert!(matches!(c.read("1e3"), Err(clock::TimeError::Bad(_))));
    assert!(matches!(c.read("99999999999999999"), Err(clock::TimeError::Range(_))));
}

#[test]
fn deltas_sum_exactly_before_flooring() {
    let mut c = Clock::new(Encoding::Delta, Base::Time(1_000));
    let got: Vec<i64> = ["0.5", "0.5", "0.5", "10"].iter().map(|t| c.read(t).unwrap().ns).collect();
    assert_eq!(got, [0, 1, 1, 11]);
    // A negative delta goes back, and says so.
    let r = c.read("-5").unwrap();
    assert_eq!((r.ns, r.backwards), (6, Some(11)));
    // TRACE32 ti.back: seconds.
    let mut t = Clock::new(Encoding::Delta, Base::Time(1_000_000_000_000));
    assert_eq!(t.read("0.000001").unwrap().ns, 1000);
    assert_eq!(t.read("0.0000000015").unwrap().ns, 1001);
    assert_eq!(t.read("0.0000000005").unwrap().ns, 1002);
}

#[test]
fn cycles_scale_by_the_frequency_or_stay_ticks() {
    let mut c = Clock::new(Encoding::Absolute, Base::Cycles(Some(3)));
    let r = c.read("1").unwrap();
    assert_eq!((r.ns, r.floored), (333_333_333, true));
    assert_eq!(c.read("3").unwrap().ns, 1_000_000_000);
    assert!(c.read("1.5").is_err() && c.read("4us").is_err());
    let mut d = Clock::new(Encoding::Delta, Base::Cycles(None));
    d.read("7").unwrap();
    assert_eq!(d.read("8").unwrap().ns, 15);
    // 2^64 cycles of a 1 Hz clock are beyond the range, not a wrapped number.
    let mut big = Clock::new(Encoding::Absolute, Base::Cycles(Some(1)));
    assert!(big.read("18446744073709551616").is_err());
}

#[test]
fn rows_between_timestamp_messages_take_the_midpoint() {
    assert_eq!(midpoint(100, 201), 150);
    assert_eq!(midpoint(-3, 0), -2);
    assert_eq!(midpoint(i64::MAX - 1, i64::MAX), i64::MAX - 1);
    let text = "Type,Timestamp\nBranch,\nTimestamp,100\nBranch,\nData,\nTimestamp,200\n\
                Branch,\n";
    let r = run_with(text, r#"{"time": {"encoding": "marker"}}"#, None);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts, ["100", "100", "150", "150", "200", "200"]);
    assert_eq!(r.kinds(), ["time_unit_assumed", "unbracketed_rows", "unbracketed_rows"]);
    assert!(r.diags[1].1.starts_with("line 2: 1 rows before the first"), "{:?}", r.diags);
    assert!(r.diags[2]
        .1
        .starts_with("line 7: 1 rows after the last timestamp message take its time (200 ns)"));
}

#[test]
fn trace32_blank_ti_back_is_no_time_passed() {
    // TRACE32 leaves ti.back blank on the first record (nothing before it) and on records
    // that carry no timestamp of their own (program flow decoded between two timestamps):
    // such a row is at the time of the row before, and nothing is wrong with it.
    let text = "record,run,address,cycle,data,symbol,ti.back\r\n\
                -0000004,,SP:00001000,ptrace,,\\\\app\\main\\main,\r\n\
                -0000003,,D:20000004,wr-long,00000002,\\\\app\\os\\cur,0.020us\r\n\
                -0000002,,SP:00001010,ptrace,,\\\\app\\main\\main+0x10,\r\n\
                -0000001,,D:20000004,rd-long,00000001,\\\\app\\os\\cur,1.250us\r\n";
    let r = run(text);
    let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
    assert_eq!(ts, ["0", "20", "20", "1270"]);
    assert!(r.diags.is_empty(), "{:?}", r.diags);
    // A blank absolute time is still said: the row has no time, and no delta says so.
    let r = run("record,cycle,ti.zero\n1,ptrace,-1.000us\n2,ptrace,\n");
    assert!(r.meta.contains(&("hw.time_encoding".into(), "absolute".into())), "{:?}", r.meta);
    assert_eq!(r.kinds(), ["bad_time"]);
}

#[test]
fn micro_is_read_as_either_character_windows_tools_write() {
    // U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU look alike; exports and the
    // spreadsheets they pass through write either, in a header's bracket and after a value.
    for mu in ["\u{b5}", "\u{3bc}"] {
        let text = format!("Time [{mu}s];Address;Symbol\n-12.5;0x1000;main\n0.75;0x1004;main\n2{mu}s;0x1008;main\n");
        let r = run(&text);
        let ts: Vec<&str> = r.events.iter().map(|e| e.split(' ').next().unwrap()).collect();
        assert_eq!(ts, ["-12500", "750", "2000"], "{mu}");
        assert!(r.diags.is_empty(), "{mu}: {:?}", r.diags);
    }
}

#[test]
fn cycles_of_unknown_rate_are_not_called_ns_in_messages() {
    let r = run_with(
        "Type,Timestamp\nInfo,10\nInfo,5\nInfo,x\n",
        r#"{"time": {"unit": "cycles"}}"#,
        None,
    );
    assert_eq!(r.kinds(), ["unknown_cycle_rate", "time_backwards", "bad_time"]);
    assert!(r.diags[1].1.contains("time 5 cycles is before the previous row's 10 cycles"));
    assert!(r.diags[2].1.ends_with("row kept at the previous row's time (10 cycles)"));
}
