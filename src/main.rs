//! The `tracedb` binary: parse the command line, run it, map errors to exit statuses
//! (0 ok, 1 bad input or data, 2 usage, 3 a regression found by `report --baseline`; a closed output pipe is not an error).
use clap::Parser;

fn main() {
    let cli = match tracedb::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match tracedb::cli::run(cli) {
        Ok(()) => {}
        Err(e) if e.is_broken_pipe() => {}
        Err(e) => {
            tracedb::say!("tracedb: error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
