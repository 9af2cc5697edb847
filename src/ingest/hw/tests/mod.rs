//! Unit tests of the hardware-trace importer on hand-written exports. This file holds the
//! shared helpers (the event shape, the runners, a small system's ELF and mapping); each
//! other file tests one subject.
use super::fields::{detect_delimiter, glob, parse_decimal, parse_uint, split};
use super::testelf::elf32;
use super::*;
use crate::model::{Event, TimeUnit};

mod bounds;
mod calls;
mod cores;
mod header;
mod mapping;
mod numbers;
mod timing;

/// Events as `ts source/instance type:target/instance action [note]`; an export declares
/// only its cores.
struct Hw;

impl crate::ingest::test_sink::Shape for Hw {
    fn event(e: &Event<'_>) -> String {
        format!(
            "{} {}/{} {}:{}/{} {}{}",
            e.ts,
            e.source,
            e.source_instance,
            e.target_type,
            e.target,
            e.target_instance,
            e.action,
            e.note.map(|n| format!(" [{n}]")).unwrap_or_default()
        )
    }
    fn declared(_name: &str, t: Option<&str>) {
        assert_eq!(t, Some("C"));
    }
}

type Rec = crate::ingest::test_sink::Recorder<Hw>;

impl Rec {
    /// System events only (those with a target).
    fn system(&self) -> Vec<&str> {
        self.events.iter().filter(|e| !e.contains(" :/-1 ")).map(String::as_str).collect()
    }
    /// The declared cores.
    fn cores(&self) -> Vec<&str> {
        self.decl.iter().map(|d| d.0.as_str()).collect()
    }
}

fn run_with(text: &str, map: &str, syms: Option<Symbols>) -> Rec {
    let comp =
        Companions { map: Mapping::parse(map).unwrap(), symbols: syms, ..Companions::default() };
    // Read as the ingest reads it: from a file that can be read again (rows merged per core
    // when they need it).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, text).unwrap();
    let mut sink = Rec::default();
    let mut lines = LineReader::new(std::fs::File::open(&path).unwrap());
    read(&mut lines, "t.csv", Some(&path), &comp, &mut sink).unwrap();
    sink
}

fn run(text: &str) -> Rec {
    run_with(text, "{}", None)
}

/// The symbols of [`system_elf`], Thumb bit cleared.
fn system_syms() -> Vec<Symbol> {
    [
        ("os_dispatch", 0x1000, 0x100, true),
        ("Run_A", 0x2000, 0x40, true),
        ("helper", 0x2100, 0x40, true),
        ("ISR_Timer", 0x3000, 0x40, true),
        ("OS_TerminateTask", 0x4000, 0x40, true),
        ("cur_task", 0x2000_0000, 4, false),
        ("speed", 0x2000_0010, 4, false),
    ]
    .iter()
    .map(|&(n, addr, size, func)| Symbol { addr, size, name: n.into(), func })
    .collect()
}

/// Code and data of a small system (ARM, so function values carry the Thumb bit).
fn system_elf() -> Symbols {
    Symbols::from_elf(&elf32(
        40,
        false,
        &[
            ("os_dispatch", 0x1001, 0x100, true),
            ("Run_A", 0x2001, 0x40, true),
            ("helper", 0x2101, 0x40, true),
            ("ISR_Timer", 0x3001, 0x40, true),
            ("OS_TerminateTask", 0x4001, 0x40, true),
            ("cur_task", 0x2000_0000, 4, false),
            ("speed", 0x2000_0010, 4, false),
        ],
    ))
    .unwrap()
}

const SYSTEM_MAP: &str = r#"{
    "current_task": {"cur_task": "Core_0"},
    "tasks": {"1": "TASK_A", "2": "TASK_B"},
    "idle": ["0"],
    "runnables": ["Run_*"],
    "isrs": ["ISR_*"],
    "terminate_functions": ["OS_TerminateTask"],
    "signals": ["speed"]
}"#;

/// TASK_A runs Run_A, which writes `speed`, is interrupted by ISR_Timer (which writes it too
/// and calls helper, whose return is lost), and returns.
const CALLS: &str = "Type,Address,Destination,Data,Timestamp\n\
                     Data,0x20000000,,1,10\n\
                     Branch,0x1010,0x2000,,20\n\
                     Linear,0x2000,,,21\n\
                     Data,0x20000010,,77,25\n\
                     Interrupt,0x2010,0x3000,,30\n\
                     Data,0x20000010,,78,32\n\
                     Branch,0x3010,0x2100,,33\n\
                     Return,0x3020,0x2014,,40\n\
                     Return,0x2020,0x1014,,50\n\
                     Return,0x1020,,,60\n";
