//! The `tracedb` binary: parse the command line, run it, map errors to exit statuses
//! (0 ok, 1 bad input or data, 2 usage, 3 a regression found by `report --baseline`; a closed output pipe is not an error).
use clap::Parser;

fn main() {
    // An empty TRACEDB_ARCHIVE (`TRACEDB_ARCHIVE= tracedb captures`, or a script's unset
    // variable) counts as unset, as the shell's own `${VAR:-default}` does. Left set, clap
    // took it for an empty --archive and said "a value is required for '--archive <DIR>'"
    // to a command line that has no --archive. Before any thread starts.
    if std::env::var_os(tracedb::cli::ARCHIVE_ENV).is_some_and(|v| v.is_empty()) {
        std::env::remove_var(tracedb::cli::ARCHIVE_ENV);
    }
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
        // Commands write their results to standard output only (an export names its file):
        // say which, or `> /dev/full` gave "No space left on device" naming nothing.
        Err(tracedb::Error::Output(e)) => {
            tracedb::say!("tracedb: error: standard output: {e}");
            std::process::exit(1);
        }
        Err(e) => {
            tracedb::say!("tracedb: error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
