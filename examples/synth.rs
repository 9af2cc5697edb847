//! Writes a synthetic BTF trace of a multi-core RTOS (see `tracedb::synth`).
//!
//! `cargo run --release --example synth -- OUT.btf [--mb N | --ms N] [--cores N] [--tasks N]
//! [--isrs N] [--seed N] [--overrun-every N] [--migrating-tasks] [--nested-isrs]
//! [--passive-waits] [--parking] [--counting-slots N] [--clear-events] [--preemptible-locks]`
//! Output ending in `.gz` is gzip-compressed. The switches turn on what the default system
//! does not do (see [`SynthConfig`]): tasks that overrun, global scheduling, nested ISRs,
//! passive waits for OS events, parking on a semaphore, a counting semaphore `SEM_C` with N
//! slots, OS events set before their wait and cleared, mutexes whose holders may be preempted.
use std::io::Write;
use tracedb::synth::{write_btf, SynthConfig};

fn main() {
    if let Err(e) = run() {
        eprintln!("synth: error: {e}");
        std::process::exit(2);
    }
}

const USAGE: &str = "usage: synth OUT.btf [--mb N | --ms N] [--cores N] [--tasks N] [--isrs N] [--seed N] [--overrun-every N] [--migrating-tasks] [--nested-isrs] [--passive-waits] [--parking] [--counting-slots N] [--clear-events] [--preemptible-locks]";

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or(USAGE)?;
    if out == "-h" || out == "--help" {
        println!("{USAGE}\n\nWrites a synthetic BTF trace of a multi-core RTOS to OUT.btf (gzip when it ends in .gz): --mb N stops at N MiB of text, --ms N at N ms of simulated time (default 1000 ms). See the Development section of the README for what each switch adds.");
        return Ok(());
    }
    if out.starts_with('-') {
        return Err(format!(
            "the first argument is the output file, not an option ({out}); {USAGE}"
        ));
    }
    let mut cfg = SynthConfig::default();
    while let Some(flag) = args.next() {
        let switch = match flag.as_str() {
            "--migrating-tasks" => Some(&mut cfg.migrating_tasks),
            "--nested-isrs" => Some(&mut cfg.nested_isrs),
            "--passive-waits" => Some(&mut cfg.passive_waits),
            "--parking" => Some(&mut cfg.parking),
            "--clear-events" => Some(&mut cfg.clear_events),
            "--preemptible-locks" => Some(&mut cfg.preemptible_locks),
            _ => None,
        };
        if let Some(on) = switch {
            *on = true;
            continue;
        }
        const VALUED: [&str; 8] = [
            "--mb",
            "--ms",
            "--cores",
            "--tasks",
            "--isrs",
            "--seed",
            "--overrun-every",
            "--counting-slots",
        ];
        if !VALUED.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag}"));
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let n: u64 = value.parse().map_err(|_| format!("{flag}: '{value}' is not a number"))?;
        match flag.as_str() {
            "--mb" => cfg.target_bytes = Some(n << 20),
            "--ms" => cfg.duration_ns = i64::try_from(n * 1_000_000).map_err(|e| e.to_string())?,
            "--cores" => cfg.cores = u32::try_from(n).map_err(|e| e.to_string())?,
            "--tasks" => cfg.tasks = u32::try_from(n).map_err(|e| e.to_string())?,
            "--isrs" => cfg.isrs = u32::try_from(n).map_err(|e| e.to_string())?,
            "--seed" => cfg.seed = n,
            "--overrun-every" => cfg.overrun_every = n,
            "--counting-slots" => {
                cfg.counting_slots = u32::try_from(n).map_err(|e| e.to_string())?;
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    let file = std::fs::File::create(&out).map_err(|e| format!("{out}: {e}"))?;
    let stats = if out.ends_with(".gz") {
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::best());
        let s = write_btf(&mut gz, &cfg).map_err(|e| e.to_string())?;
        gz.finish().and_then(|mut f| f.flush()).map_err(|e| e.to_string())?;
        s
    } else {
        write_btf(file, &cfg).map_err(|e| e.to_string())?
    };
    eprintln!(
        "{out}: {} lines, {} bytes of text, {} activations, {} preemptions, last event at {} ns",
        stats.lines, stats.bytes, stats.activations, stats.preemptions, stats.last_ts
    );
    Ok(())
}
