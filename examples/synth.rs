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
use tracedb::synth::{config_from_args, write_btf, USAGE};

fn main() {
    if let Err(e) = run() {
        eprintln!("synth: error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "-h" || a == "--help") {
        println!("{USAGE}\n\nWrites a synthetic BTF trace of a multi-core RTOS to OUT.btf (gzip when it ends in .gz): --mb N stops at N MiB of text, --ms N at N ms of simulated time (default 1000 ms). See the Development section of the README for what each switch adds.");
        return Ok(());
    }
    let (out, cfg) = config_from_args(&args)?;
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
