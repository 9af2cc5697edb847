//! Tests of the mapping file and the ELF symbols: addresses and data without them, checks
//! of the mapping, symbol extents, radixes, stripped ELFs.
use super::*;

#[test]
fn without_a_mapping_file_addresses_are_hex_and_data_decimal() {
    let comp = Companions::default();
    let mut sink = Rec::default();
    let text = b"Type,Address,Data,Timestamp\nData,1000,0x10,5\nData,D:20,16,6\n";
    read(&mut LineReader::new(&text[..]), "t.csv", None, &comp, &mut sink).unwrap();
    assert_eq!(
        sink.events,
        [
            "5 Core_0/-1 :/-1 data [addr=0x00001000, data=0x10]",
            "6 Core_0/-1 :/-1 data [addr=0x00000020, data=16]"
        ]
    );
    assert_eq!(parse_uint("10", 0), None, "a radix out of range is no number, not a panic");
}

#[test]
fn a_mapped_column_is_not_also_taken_by_its_recognised_name() {
    let map = Mapping::parse(r#"{"columns": {"core": "Type", "type": 3}}"#).unwrap();
    let c = Columns::new("Type,Time,Kind2", b',', &map).unwrap();
    assert_eq!((c.core, c.kind, c.time), (Some(0), Some(2), Some(1)));
    let map = Mapping::parse(r#"{"columns": {"core": "Type"}}"#).unwrap();
    let c = Columns::new("Type,Time", b',', &map).unwrap();
    assert_eq!((c.core, c.kind), (Some(0), None));
    let map = Mapping::parse(r#"{"columns": {"data": 2, "address": "time"}}"#).unwrap();
    let e = Columns::new("Type,Time", b',', &map).unwrap_err();
    assert_eq!(e, "columns.data and columns.address are both column 2: one role each");
}

#[test]
fn mapping_files_are_checked() {
    assert!(Mapping::parse(r#"{"colums": {}}"#).unwrap_err().contains("unknown field `colums`"));
    assert!(Mapping::parse(r#"{"columns": {"when": 1}}"#)
        .unwrap_err()
        .contains("unknown role 'when'"));
    assert!(Mapping::parse(r#"{"time": {"unit": "min"}}"#).is_err());
    assert!(Mapping::parse(r#"{"time": {"unit": "ns", "frequency_hz": 5}}"#).is_err());
    assert!(Mapping::parse(r#"{"tasks": {"x": "A"}}"#).is_err());
    // An address too long for 64 bits, or not in the radix, would match nothing.
    for bad in [
        r#"{"current_task": {"0xFFFFFFFFFFFFFFFFFF": "Core_0"}}"#,
        r#"{"current_task": {"0x2000000G": "Core_0"}}"#,
        r#"{"address_radix": 10, "signals": ["2000000A"]}"#,
    ] {
        let e = Mapping::parse(bad).unwrap_err();
        assert!(e.contains("starts with a digit but is not an address"), "{bad}: {e}");
    }
    let m = Mapping::parse(
        r#"{"delimiter": "tab", "current_task": {"0x40000000": "Core_1", "cur0": "Core_0"},
            "tasks": {"0x10": "A"}, "idle": ["0"], "signals": ["sp*", "0x50"]}"#,
    )
    .unwrap();
    assert_eq!(m.delimiter, Some(b'\t'));
    assert_eq!(m.task_var_core(Some(0x4000_0000), None), Some("Core_1"));
    assert_eq!(m.task_var_core(Some(1), Some("cur0")), Some("Core_0"));
    assert_eq!(m.tasks.get(&16).map(String::as_str), Some("A"));
    assert!(m.is_signal(None, Some("speed")) && m.is_signal(Some(0x50), None));
    assert!(!m.is_signal(Some(0x51), Some("mode")));
}

#[test]
fn elf_symbols_resolve_addresses_inside_their_extent() {
    let syms = [
        ("main", 0x1001, 0x40, true),
        ("Run_A", 0x2001, 0x20, true),
        ("speed", 0x4000_0010, 4, false),
        ("marker", 0x3000, 0, false),
    ];
    // ARM: the Thumb bit of function values is cleared.
    let s = Symbols::from_elf(&elf32(40, false, &syms)).unwrap();
    assert_eq!(s.len(), 4);
    let hit = |a| s.lookup(a).map(|h| (h.name.to_string(), h.offset, h.func));
    assert_eq!(hit(0x1000), Some(("main".into(), 0, true)));
    assert_eq!(hit(0x103f), Some(("main".into(), 0x3f, true)));
    assert_eq!(hit(0x1040), None);
    assert_eq!(hit(0x4000_0013), Some(("speed".into(), 3, false)));
    assert_eq!(hit(0x3000), Some(("marker".into(), 0, false)));
    assert_eq!(hit(0x3001), None);
    assert_eq!(hit(0xfff), None);
    // PowerPC (big-endian, as NXP's MPC57xx): values as they are.
    let p = Symbols::from_elf(&elf32(20, true, &syms)).unwrap();
    assert_eq!(p.lookup(0x1001).map(|h| h.offset), Some(0));
    assert_eq!(p.address_of("Run_A"), Some(0x2001));
    assert!(Symbols::from_elf(b"\x7fELF garbage").is_err());
    assert!(Symbols::from_elf(b"").is_err());
}

#[test]
fn mapping_addresses_without_a_prefix_are_in_address_radix() {
    let text = "Type,Address,Data,Timestamp\n\
                Data,0x20000004,1,10\n\
                Data,0x20000010,7,20\n";
    let map = r#"{"current_task": {"20000004": "Core_1"}, "tasks": {"1": "A"},
                  "signals": ["20000010"], "time": {"unit": "ns"}}"#;
    let r = run_with(text, map, None);
    assert_eq!(
        r.system(),
        [
            "10 Core_1/-1 T:A/0 activate",
            "10 Core_1/-1 T:A/0 start",
            "20 Core_0/-1 SIG:0x20000010/-1 write [7]"
        ]
    );
    // In radix 10 the same keys are other addresses.
    let map10 = map.replace("\"time\"", "\"address_radix\": 10, \"time\"");
    assert_eq!(run_with(text, &map10, None).system(), Vec::<&str>::new());
}

#[test]
fn a_negative_address_is_a_bad_field() {
    let r = run("Type,Address,Destination,Data,Timestamp\nData,-0x10,-5,-3,100\n");
    assert_eq!(r.kinds(), ["time_unit_assumed", "bad_field", "bad_field"]);
    assert!(r.diags[1].1.starts_with("line 2: address '-0x10' is not an address"));
    assert!(r.diags[2].1.starts_with("line 2: destination '-5' is not an address"));
    assert_eq!(r.events, ["100 Core_0/-1 :/-1 data [data=-3]"]);
}

#[test]
fn an_address_inside_a_big_object_holding_many_small_ones_is_the_big_one() {
    let mut syms = vec![Symbol { addr: 0x1000, size: 0x1000, name: "big".into(), func: false }];
    for i in 0..20u64 {
        let name = format!("small{i}");
        syms.push(Symbol { addr: 0x1000 + i * 0x10, size: 4, name, func: false });
    }
    syms.push(Symbol { addr: 0x1800, size: 0, name: "mark".into(), func: false });
    syms.push(Symbol { addr: 0x3000, size: 0x10, name: "after".into(), func: true });
    let t = Symbols::new(syms, 0);
    let at = |a: u64| t.lookup(a).map(|h| (h.name.to_string(), h.offset));
    assert_eq!(at(0x1012), Some(("small1".into(), 2)));
    assert_eq!(at(0x1014), Some(("big".into(), 0x14)), "between two small ones");
    assert_eq!(at(0x1f00), Some(("big".into(), 0xf00)), "after all 20");
    assert_eq!(at(0x1800), Some(("mark".into(), 0)));
    assert_eq!(at(0x1801), Some(("big".into(), 0x801)));
    assert_eq!(at(0x2000), None);
    assert_eq!(at(0x300f), Some(("after".into(), 0xf)));
    assert_eq!(at(0x3010), None);
    assert_eq!(at(0xfff), None);
}

#[test]
fn a_stripped_elf_is_said() {
    let mut bytes = elf32(40, false, &[("f", 0x1001, 4, true)]);
    assert!(!Symbols::from_elf(&bytes).unwrap().no_symtab);
    // The .symtab (section 2) made PROGBITS: what `strip` leaves is an ELF with none.
    let sh_off = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    bytes[sh_off + 2 * 40 + 4] = 1;
    let s = Symbols::from_elf(&bytes).unwrap();
    assert!(s.no_symtab);
    assert!(s.is_empty());
}
