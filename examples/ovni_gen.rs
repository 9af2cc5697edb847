//! Writes an ovni trace (one nOS-V thread, v3 layout) of many tasks, to measure what the
//! runtime models hold when tasks end (`tracedb ingest --format ovni OUT`).
//!
//! `cargo run --release --example ovni_gen -- OUT [--tasks N] [--parallel N] [--bodies B]`
//!
//! One thread on CPU 0 creates, executes and ends `--tasks` ordinary tasks one after another
//! (default 2^20 + 5: more than tracedb remembers ended), then `--parallel` parallel tasks
//! (`VTC`, default 0) whose `--bodies` bodies (default 4) run one after another, all of one
//! task type, 10 ns apart; then the thread ends. Writes `OUT/ovni/loom.gen/proc.1/thread.1/
//! stream.obs` and its `stream.json` (requires the nOS-V model).
use std::io::Write;

fn main() {
    if let Err(e) = run() {
        eprintln!("ovni_gen: error: {e}");
        std::process::exit(2);
    }
}

const META: &str = r#"{ "version": 3, "ovni": { "app_id": 1, "loom_cpus": [{"index": 0, "phyid": 0}],
  "require": { "ovni": "1.1.0", "nosv": "2.3.0" }, "finished": 1 } }"#;

struct Out<W: Write> {
    w: W,
    clock: u64,
}

impl<W: Write> Out<W> {
    /// One event with `payload` (0 or 2-16 bytes), 10 ns after the previous one.
    fn ev(&mut self, mcv: &[u8; 3], payload: &[u8]) -> std::io::Result<()> {
        self.clock += 10;
        let flags = u8::try_from(payload.len().saturating_sub(1)).unwrap_or(0);
        self.w.write_all(&[flags])?;
        self.w.write_all(mcv)?;
        self.w.write_all(&self.clock.to_le_bytes())?;
        self.w.write_all(payload)
    }
    /// A task event: two u32 (task id, then type id or body id).
    fn task(&mut self, mcv: &[u8; 3], a: u32, b: u32) -> std::io::Result<()> {
        let mut p = [0u8; 8];
        p[..4].copy_from_slice(&a.to_le_bytes());
        p[4..].copy_from_slice(&b.to_le_bytes());
        self.ev(mcv, &p)
    }
}

fn run() -> Result<(), String> {
    let usage = "usage: ovni_gen OUT [--tasks N] [--parallel N] [--bodies B]";
    let mut args = std::env::args().skip(1);
    let out = std::path::PathBuf::from(args.next().ok_or(usage)?);
    let (mut tasks, mut parallel, mut bodies) = ((1u32 << 20) + 5, 0u32, 4u32);
    while let Some(flag) = args.next() {
        let v: u32 = args
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number; {usage}"))?;
        match flag.as_str() {
            "--tasks" => tasks = v,
            "--parallel" => parallel = v,
            "--bodies" => bodies = v,
            _ => return Err(format!("unknown option {flag}; {usage}")),
        }
    }
    let dir = out.join("ovni/loom.gen/proc.1/thread.1");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join("stream.json"), META).map_err(|e| e.to_string())?;
    let file = std::fs::File::create(dir.join("stream.obs")).map_err(|e| e.to_string())?;
    let mut o = Out { w: std::io::BufWriter::new(file), clock: 1_000 };
    let io = |e: std::io::Error| e.to_string();
    o.w.write_all(b"ovni").map_err(io)?;
    o.w.write_all(&1u32.to_le_bytes()).map_err(io)?;
    // OHx: cpu 0, tag -1, creator 0.
    let mut p = [0u8; 16];
    p[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    o.ev(b"OHx", &p).map_err(io)?;
    // VYc (jumbo): type 1 labelled "gen".
    let mut data = 1u32.to_le_bytes().to_vec();
    data.extend(b"gen\0");
    o.clock += 10;
    o.w.write_all(&[0x10 | 3]).map_err(io)?;
    o.w.write_all(b"VYc").map_err(io)?;
    o.w.write_all(&o.clock.to_le_bytes()).map_err(io)?;
    let n = u32::try_from(data.len()).unwrap_or(0);
    o.w.write_all(&n.to_le_bytes()).map_err(io)?;
    o.w.write_all(&data).map_err(io)?;
    for t in 1..=tasks {
        o.task(b"VTc", t, 1).map_err(io)?;
        o.task(b"VTx", t, 0).map_err(io)?;
        o.task(b"VTe", t, 0).map_err(io)?;
    }
    for i in 1..=parallel {
        let t = tasks.saturating_add(i);
        o.task(b"VTC", t, 1).map_err(io)?;
        for b in 1..=bodies {
            o.task(b"VTx", t, b).map_err(io)?;
            o.task(b"VTe", t, b).map_err(io)?;
        }
    }
    o.ev(b"OHe", &[]).map_err(io)?;
    o.w.flush().map_err(io)?;
    let events = 3 + 3 * u64::from(tasks) + u64::from(parallel) * (1 + 2 * u64::from(bodies));
    println!("{}: {events} events", dir.join("stream.obs").display());
    Ok(())
}
