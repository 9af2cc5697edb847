//! Tests of the field and number readers (`fields.rs`): quoted fields, delimiters, numbers
//! as trace tools write them, globs.
use super::*;

#[test]
fn splits_quoted_fields_with_any_delimiter() {
    assert_eq!(detect_delimiter("a;b;c"), b';');
    assert_eq!(detect_delimiter("a\tb\tc,d"), b'\t');
    assert_eq!(detect_delimiter("\"a;b\",c"), b',');
    let (f, open) = split(r#" 1 ,"x, ""y""", z ,"#, b',');
    assert_eq!(f, ["1", "x, \"y\"", "z", ""]);
    assert!(!open);
    let (f, open) = split("1;\"unclosed;2", b';');
    assert_eq!(f, ["1", "unclosed;2"]);
    assert!(open);
}

#[test]
fn reads_numbers_as_trace_tools_write_them() {
    assert_eq!(parse_uint("0x4000_1000", 16), Some(0x4000_1000));
    assert_eq!(parse_uint("D:40001000", 16), Some(0x4000_1000));
    assert_eq!(parse_uint("P:0x100", 10), Some(0x100));
    assert_eq!(parse_uint("1Fh", 10), Some(0x1f));
    assert_eq!(parse_uint("100", 10), Some(100));
    assert_eq!(parse_uint("100", 16), Some(0x100));
    assert_eq!(parse_uint("0xZZ", 16), None);
    assert_eq!(parse_uint("", 16), None);
    assert_eq!(parse_uint("0x1_0000_0000_0000_0000", 16), None, "beyond 64 bits");
    assert_eq!(parse_decimal("-0.000012340"), Some((-12340, 9, None)));
    assert_eq!(parse_decimal("12.5 us"), Some((125, 1, Some(1_000_000))));
    assert_eq!(parse_decimal("3µs"), Some((3, 0, Some(1_000_000))));
    assert_eq!(parse_decimal("1,5"), None);
    assert_eq!(parse_decimal("5 min"), None);
    assert!(glob("Run_*", "Run_Ctrl") && glob("?SR*", "ISR_Timer") && glob("*", ""));
    assert!(!glob("Run_*", "run_ctrl") && !glob("a*b", "acbd"));
}
