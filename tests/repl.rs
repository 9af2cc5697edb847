//! The interactive shell in a real pseudo-terminal: tmux runs `tracedb sql` in a detached
//! session, keys go in with `send-keys` and the screen comes back with `capture-pane`.
//! Every wait polls the screen (generous timeouts only against hangs); HOME and
//! XDG_DATA_HOME point into the test's temporary directory. Skipped, with a message, when
//! tmux is not installed.
use crate::util;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const GOOD: &str = "#version 2.1.0\n0,STI_A,0,T,TASK_A,0,activate\n10,Core_0,0,T,TASK_A,0,start\n\
                    30,Core_0,0,T,TASK_A,0,terminate\n";
const TIMEOUT: Duration = Duration::from_secs(60);

/// A tmux server of its own running one `tracedb sql` session.
struct Term {
    socket: PathBuf,
    syncs: usize,
    /// Screen length at the last sync: what came after is the last step's output.
    seen: usize,
    /// Prompts expected on the screen: one per line entered (and per Ctrl-C at the prompt).
    prompts: usize,
}

impl Term {
    /// Starts `tracedb sql` on archive `db` in `dir`, or None when tmux is missing.
    fn start(dir: &Path, db: &str) -> Option<Term> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("skipped: tmux is not installed; the shell's terminal tests need it");
            return None;
        }
        // A fresh socket per session: a killed server may still hold the previous one.
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let socket = dir.join(format!("tmux{}.sock", SESSIONS.fetch_add(1, Ordering::SeqCst)));
        let data = dir.join("data");
        let cmd = format!(
            "cd '{dir}' && env HOME='{dir}' XDG_DATA_HOME='{data}' '{bin}' sql --archive {db}; \
             echo \"shell exited with $?\"; sleep 600",
            dir = dir.display(),
            data = data.display(),
            bin = util::bin().display()
        );
        let mut term = Term { socket, syncs: 0, seen: 0, prompts: 1 };
        let out = term.tmux(&["new-session", "-d", "-x", "200", "-y", "50", "-s", "t", &cmd]);
        assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));
        term.ready();
        Some(term)
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("tmux runs")
    }

    /// Types `text` literally (as hex, so tmux never reads a `;` as its own separator).
    fn typ(&self, text: &str) {
        let hex: Vec<String> = text.bytes().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-t", "t", "-H"];
        args.extend(hex.iter().map(String::as_str));
        assert!(self.tmux(&args).status.success());
    }

    /// Presses a key by its tmux name (Enter, Tab, C-c, C-d, ...).
    fn key(&self, key: &str) {
        assert!(self.tmux(&["send-keys", "-t", "t", key]).status.success());
    }

    /// Prompts (first and continuation) on the screen.
    fn prompt_count(&self) -> usize {
        let s = self.screen();
        s.matches("tracedb> ").count() + s.matches("    ...> ").count()
    }

    /// Waits for the prompt of the next line: keys typed ahead while a statement runs are
    /// not reliably kept (rustyline asks the terminal for the cursor position when it draws
    /// a prompt and reads the answer from the same input).
    fn ready(&mut self) {
        let start = Instant::now();
        while self.prompt_count() < self.prompts {
            assert!(
                start.elapsed() < TIMEOUT,
                "timed out waiting for prompt {}; screen:\n{}",
                self.prompts,
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.prompts = self.prompt_count();
    }

    /// At the next prompt, types `text` and Enter.
    fn line(&mut self, text: &str) {
        self.ready();
        self.typ(text);
        self.key("Enter");
        self.prompts += 1;
    }

    /// At the next prompt, types `text` without Enter.
    fn type_at_prompt(&mut self, text: &str) {
        self.ready();
        self.typ(text);
    }

    /// Everything on the screen and in the scrollback, wrapped lines joined.
    fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls until the screen contains `what`; returns the screen.
    fn wait_for(&self, what: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what:?}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs a marker statement after what was typed and waits for its result: returns the
    /// output since the previous sync (the marker's result is computed, so typing it does not
    /// match).
    fn sync(&mut self) -> String {
        self.syncs += 1;
        let n = self.syncs;
        self.line(&format!("SELECT 'sync' || {n} AS marker;"));
        let screen = self.wait_for(&format!("sync{n}"));
        let cut = screen.rfind(&format!("'sync' || {n}")).unwrap_or(screen.len());
        let step = screen.get(self.seen..cut).unwrap_or_default().to_string();
        self.seen = cut;
        step
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn archive() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.btf"), GOOD).unwrap();
    util::ok(tmp.path(), &["ingest", "--archive", "db", "good.btf"]);
    tmp
}

#[test]
fn statements_span_lines_share_lines_and_survive_errors() {
    let tmp = archive();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    t.line("SELECT entity,");
    t.line("       response_time FROM instances;");
    let out = t.sync();
    assert!(out.contains(" entity  | response_time\n varchar | bigint\n"), "typed header:\n{out}");
    assert!(out.contains(" TASK_A  |            30\n(1 row)"), "{out}");

    t.line("SELECT 'a;b' AS one; SELECT NULL AS two;");
    let out = t.sync();
    assert!(out.contains("a;b") && out.contains(" NULL\n(1 row)"), "both statements ran:\n{out}");

    t.line("SELEC 1;");
    t.line("SELECT 2 + 2 AS four;");
    let out = t.sync();
    assert!(out.contains("Error: Parser Error: syntax error at or near \"SELEC\""), "{out}");
    assert!(out.contains("LINE 1: SELEC 1") && out.contains('^'), "position marked:\n{out}");
    assert!(out.contains("       4\n(1 row)"), "the next statement runs:\n{out}");

    // A timestamp with a time zone prints (DuckDB casts it to text), under its own type.
    t.line("SELECT to_timestamp(1) AS t;");
    let out = t.sync();
    assert!(out.contains("timestamp with time zone\n"), "typed header:\n{out}");
    assert!(out.contains(" 1970-01-01 00:00:01+00\n(1 row)"), "{out}");

    t.line(".mode csv");
    t.line("SELECT entity, response_time, fmt_ns(response_time) AS human FROM instances;");
    let out = t.sync();
    assert!(
        out.contains("entity,response_time,human\nTASK_A,30,30 ns\n"),
        "raw integers in csv:\n{out}"
    );
    t.line(".mode json");
    t.line("SELECT ns('2ms') AS d;");
    let out = t.sync();
    assert!(out.contains("[\n  {\"d\": 2000000}\n]"), "{out}");
}

#[test]
fn meta_commands() {
    let tmp = archive();
    std::fs::write(
        tmp.path().join("script.sql"),
        ".mode line\nSELECT 7 AS seven,\n  'x' AS ex;\n.mode table\n",
    )
    .unwrap();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    t.line(".help");
    let out = t.sync();
    for cmd in [
        ".tables",
        ".schema [TABLE]",
        ".run NAME [key=value...]",
        ".mode table|csv|json|markdown|line",
        ".quit, .exit",
    ] {
        assert!(out.contains(cmd), "{cmd} in help:\n{out}");
    }
    t.line(".tables");
    let out = t.sync();
    assert!(row(&out, "events").is_some_and(|r| r.ends_with("| 3")), "row counts:\n{out}");
    assert!(row(&out, "diagnostics").is_some_and(|r| r.ends_with("| 0")), "{out}");
    t.line(".schema events");
    let out = t.sync();
    assert!(out.contains("CREATE TABLE events (") && out.contains("-- "), "documented DDL:\n{out}");
    t.line(".schema nosuch");
    assert!(t.sync().contains("Error: no table named 'nosuch'"));
    t.line(".captures");
    let out = t.sync();
    assert!(out.contains("capture_id | name") && out.contains("good"), "{out}");
    // In json mode, as `captures --format json`: source_files an array, not JSON text.
    t.line(".mode json");
    t.line(".captures");
    let out = t.sync();
    assert!(out.contains("\"source_files\": [\"good.btf\"]"), "{out}");
    t.line(".mode table");
    t.line(".queries");
    let out = t.sync();
    let cat = tracedb::store::queries::catalog();
    match cat.first() {
        None => assert!(out.contains("no predefined analyses in this build"), "{out}"),
        Some(q) => assert!(out.contains(&q.name) && out.contains(&q.summary), "{out}"),
    }
    // A parameter with no default shows its kind, not `-`.
    if cat.iter().any(|q| q.params.iter().any(|p| p.name == "deadlines")) {
        assert!(out.contains("deadlines=<file>") && !out.contains("deadlines=-"), "{out}");
    }
    t.line(".run no_such_analysis window=1ms");
    assert!(t.sync().contains("Error: no analysis named 'no_such_analysis' (.queries lists them)"));
    t.line(".mode markdown");
    t.line(".mode");
    t.line("SELECT 1 AS n, 'a|b' AS s;");
    let out = t.sync();
    assert!(
        out.contains("markdown\n") && out.contains("| n | s |\n|--:|---|\n| 1 | a\\|b |"),
        "{out}"
    );
    t.line(".mode table");
    t.line(".maxrows 2");
    t.line(".maxrows");
    t.line("SELECT * FROM range(5);");
    let out = t.sync();
    assert!(out.contains("\n2\n") && out.contains("(5 rows, 3 not shown)"), "{out}");
    t.line(".timer on");
    t.line("SELECT 1 AS one;");
    assert!(t.sync().contains("Time: "), "timer footer");
    t.line(".timer off");
    t.line(".output out.txt");
    t.line("SELECT 'to the file' AS f;");
    t.line(".output");
    let out = t.sync();
    assert!(!out.contains("to the file\n"), "result went to the file:\n{out}");
    let file = std::fs::read_to_string(tmp.path().join("out.txt")).unwrap();
    assert!(file.contains(" to the file\n(1 row)"), "{file}");
    t.line(".read script.sql");
    let out = t.sync();
    assert!(out.contains("seven = 7\n   ex = x\n"), "line mode from the script:\n{out}");
    t.line("SELECT 5 AS five;");
    let out = t.sync();
    assert!(out.contains(" five\n integer\n"), "the script set table mode back:\n{out}");
    t.line(".mode xml");
    assert!(t.sync().contains("Error: usage: .mode table|csv|json|markdown|line"));
    // Errors in a script read by a script name that script and the line, DuckDB's own
    // line numbers included; the statements around them still run.
    std::fs::write(
        tmp.path().join("bad.sql"),
        "SELECT 1 AS a;\n\n-- a comment\nSELECT 2,\n  nosuch FROM events;\n.mode xml\nSELECT 3 AS c\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("outer.sql"), "SELECT 0 AS z;\n.read bad.sql\n.read none.sql\n")
        .unwrap();
    t.line(".read outer.sql");
    let out = t.sync();
    assert!(out.contains("Error: bad.sql: line 5: Binder Error"), "{out}");
    assert!(out.contains("LINE 5:   nosuch FROM events"), "{out}");
    assert!(out.contains("Error: bad.sql: line 6: usage: .mode"), "{out}");
    assert!(out.contains("Error: outer.sql: line 3: none.sql: "), "{out}");
    assert!(out.contains(" c\n integer\n"), "{out}");
    t.line(".quit");
    t.wait_for("shell exited with 0");
}

#[test]
fn completion_keys_and_history() {
    let tmp = archive();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    // Tab completes a table name.
    t.type_at_prompt("SELECT count(*) AS n FROM ent");
    t.key("Tab");
    t.wait_for("FROM entities");
    t.line(";");
    let out = t.sync();
    assert!(out.contains(" n\n bigint\n"), "{out}");

    // Ctrl-C at the prompt drops the line (and an unfinished statement).
    t.line("SELECT 'never");
    t.type_at_prompt("run' AS x");
    t.key("C-c");
    t.prompts += 1;
    let out = t.sync();
    assert!(!out.contains("never\nrun") && !out.contains("Error"), "{out}");

    // Ctrl-C during a query that would run for minutes cancels it; the next one works.
    t.line("SELECT count(*) FROM range(100000000) a, range(100000000) b;");
    t.wait_for("range(100000000) b;\n");
    let start = Instant::now();
    while !t.screen().contains("Cancelled (Ctrl-C)") {
        // Repeated: a Ctrl-C that arrives before the query starts only clears the prompt.
        assert!(start.elapsed() < TIMEOUT, "query not cancelled:\n{}", t.screen());
        t.key("C-c");
        std::thread::sleep(Duration::from_millis(300));
    }
    t.line("SELECT 40 + 2 AS answer;");
    t.wait_for("      42\n(1 row)");

    // Ctrl-D quits; the history file holds the statements for the next session.
    t.ready();
    t.key("C-d");
    t.wait_for("shell exited with 0");
    let history = std::fs::read_to_string(tmp.path().join("data/tracedb/history")).unwrap();
    assert!(history.contains("SELECT 40 + 2 AS answer;"), "{history}");
    drop(t);

    let Some(t) = Term::start(tmp.path(), "db") else { return };
    t.key("C-r");
    t.typ("40 + 2");
    t.key("Enter");
    t.key("Enter");
    t.wait_for("      42\n(1 row)");
}

/// The table row whose first cell is `first`, spaces squeezed: `events | 3`.
fn row(out: &str, first: &str) -> Option<String> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|l| l.starts_with(&format!("{first} |")))
}

#[test]
fn helper_macros_work_outside_the_shell() {
    let tmp = archive();
    let q = "SELECT fmt_ns(850) AS a, fmt_ns(12345) AS b, fmt_ns(-12345678) AS c, fmt_ns(1500000000) AS d, \
             fmt_ns(NULL) AS e, ns('2ms') AS f, ns(' 1.5 us') AS g, ns('250') AS h, ns('3s') AS i, \
             overlap(0, 10, 5, 10) AS j, overlap(0, 5, 10, 5) AS k, overlap(0, 100, 10, 5) AS l";
    assert_eq!(
        util::csv(tmp.path(), "db", q),
        "a,b,c,d,e,f,g,h,i,j,k,l\n850 ns,12.345 us,-12.346 ms,1.500 s,,2000000,1500,250,3000000000,5,0,5\n"
    );
    // TASK_A: running 10..30 on Core_0 (two rows: the task's state and the core's occupant).
    let window = "SELECT entity, state, ts, dur, clip_ts, clip_dur FROM intervals_in(15, 25) \
                  WHERE channel IN ('state', 'running') AND dur > 0 ORDER BY entity";
    assert_eq!(
        util::csv(tmp.path(), "db", window),
        "entity,state,ts,dur,clip_ts,clip_dur\nCore_0,TASK_A,10,20,15,10\nTASK_A,running,10,20,15,10\n"
    );
    assert_eq!(
        util::scalar(tmp.path(), "db", "SELECT count(*) FROM intervals_in(15, 25, capture := 2)"),
        "0"
    );
    assert_eq!(
        util::scalar(tmp.path(), "db", "SELECT count(*) FROM intervals_in(30, 40) WHERE dur > 0"),
        "0",
        "[t0, t1)"
    );
    let bad = util::run(tmp.path(), &["sql", "--archive", "db", "-c", "SELECT ns('fast')"]);
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("ns(): expected a number with unit ns, us, ms or s"));
}

#[test]
fn docs_follow_the_definitions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for line in tracedb::repl::meta::help().lines().filter(|l| l.starts_with('.')) {
        assert!(readme.contains(line), "README's meta-command list lacks (or differs in) {line:?}");
    }
    let helpers = std::fs::read_to_string(root.join("sql/helpers.sql")).unwrap();
    let lines: Vec<&str> = helpers.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.strip_prefix("CREATE OR REPLACE TEMP MACRO ") {
            let name = rest.split('(').next().unwrap();
            assert!(i > 0 && lines[i - 1].starts_with("--"), "{name}: no comment block above it");
            assert!(
                helpers.contains(&format!("-- {name}(")),
                "{name}: comment does not show its call"
            );
            assert!(readme.contains(&format!("`{name}(")), "README does not list {name}");
        }
    }
    // `.schema TABLE` shows the schema files' column comments: the README's table reference
    // says the same, column by column (`.schema captures` said `btf, ...` for `btf, prv`).
    for table in tracedb::store::schema::tables() {
        let heading = format!("\n### `{}`\n", table.name);
        let at = readme.find(&heading).unwrap_or_else(|| panic!("README lacks {heading:?}"));
        let section = &readme[at + heading.len()..];
        let section = &section[..section.find("\n### ").unwrap_or(section.len())];
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
        let expected: Vec<String> = table
            .columns
            .iter()
            .map(|c| {
                let computed = if c.computed.is_some() { " (computed)" } else { "" };
                format!("| `{}` | {} | {}{computed} |", c.name, c.sql_type, c.doc)
            })
            .collect();
        assert_eq!(rows, expected, "README's {} columns differ from the schema", table.name);
    }
}

#[test]
fn the_shell_follows_changes_other_processes_make_to_the_archive() {
    let tmp = archive();
    std::fs::write(tmp.path().join("two.btf"), GOOD.replace("30,", "40,")).unwrap();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    t.line("SELECT count(*) AS n FROM captures;");
    let out = t.sync();
    assert!(out.contains("      1\n(1 row)"), "{out}");
    // Another process adds a capture, then removes the first one (deleting its files).
    util::ok(tmp.path(), &["ingest", "--archive", "db", "two.btf"]);
    t.line("SELECT count(*) AS n FROM captures;");
    let out = t.sync();
    assert!(out.contains("(the archive changed: 2 captures now)"), "{out}");
    assert!(out.contains("      2\n(1 row)"), "{out}");
    // An idle shell holds no reader's lock: the files go at once.
    let rm = util::run(tmp.path(), &["rm", "--archive", "db", "1"]);
    assert!(!String::from_utf8_lossy(&rm.stderr).contains("note:"), "{rm:?}");
    assert!(!tmp.path().join("db/events/capture_id=1").exists());
    t.line("SELECT max(response_time) AS rt FROM instances;");
    let out = t.sync();
    assert!(!out.contains("Error"), "the removed capture's files are no longer read:\n{out}");
    assert!(out.contains("40\n(1 row)"), "{out}");
    // Meta commands follow too: .captures after a rebuild reads the new files.
    util::ok(tmp.path(), &["ingest", "--archive", "db", "--force", "two.btf"]);
    t.line(".captures");
    let out = t.sync();
    assert!(out.contains("(the archive changed: 2 captures now)"), "{out}");
    assert!(!out.contains("Error"), "{out}");
    // Down to no capture, and back: a table with no file is still a view to remake.
    for id in ["2", "3"] {
        util::ok(tmp.path(), &["rm", "--archive", "db", id]);
    }
    t.line("SELECT count(*) AS n FROM events;");
    let out = t.sync();
    assert!(out.contains("(the archive changed: 0 captures now)"), "{out}");
    assert!(out.contains("      0\n(1 row)") && !out.contains("rror"), "{out}");
    util::ok(tmp.path(), &["ingest", "--archive", "db", "--force", "two.btf"]);
    t.line("SELECT count(*) AS n FROM events;");
    let out = t.sync();
    assert!(out.contains("(the archive changed: 1 capture now)"), "{out}");
    assert!(out.contains("      3\n(1 row)") && !out.contains("rror"), "{out}");
}

#[test]
fn scripts_stop_on_ctrl_c_and_meta_commands_work_after_comments() {
    let tmp = archive();
    std::fs::write(
        tmp.path().join("long.sql"),
        "SELECT count(*) FROM range(100000000) a, range(100000000) b;\nSELECT 'after' || 'cancel' AS z;\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("d.csv"), "TASK_A,5ns\n").unwrap();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    // Ctrl-C during a script's statement stops the script too.
    t.line(".read long.sql");
    let start = Instant::now();
    while !t.screen().contains("Cancelled (Ctrl-C)") {
        assert!(start.elapsed() < TIMEOUT, "query not cancelled:\n{}", t.screen());
        t.key("C-c");
        std::thread::sleep(Duration::from_millis(300));
    }
    t.wait_for("the rest of the script was not run");
    // A comment-only line waits for nothing; DDL prints no empty Count table; TEMP tables
    // are listed; `.run` applies a deadline file.
    t.line("-- just a note");
    t.line("CREATE VIEW v2 AS SELECT 1 AS x;");
    t.line(".tables");
    t.line(".run deadline_summary deadlines=d.csv capture=good");
    let out = t.sync();
    assert!(!out.contains("aftercancel"), "{out}");
    assert!(!out.contains("Parser Error") && !out.contains("Count"), "{out}");
    assert!(out.contains(" v2 "), "{out}");
    assert!(out.contains("| file"), "{out}");
    // A run that fails after its deadline file was read leaves no deadlines behind.
    t.line(".run deadline_summary deadlines=d.csv bogus=1");
    t.line("SELECT count(*) AS left_over FROM param_deadlines;");
    let out = t.sync();
    assert!(out.contains("no parameter 'bogus'") && out.contains(" 0\n(1 row)"), "{out}");
}

#[test]
fn ctrl_c_stops_the_rest_of_the_line_and_the_tables_listing() {
    let tmp = archive();
    // The history path is a directory: one warning, not one per entry.
    std::fs::create_dir_all(tmp.path().join("data/tracedb/history")).unwrap();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    let cancel = |t: &mut Term, what: &str| {
        let (start, seen) =
            (Instant::now(), t.screen().to_lowercase().matches("cancelled (ctrl-c)").count());
        while t.screen().to_lowercase().matches("cancelled (ctrl-c)").count() == seen {
            assert!(start.elapsed() < TIMEOUT, "{what} not cancelled:\n{}", t.screen());
            t.key("C-c");
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    t.line("SELECT count(*) FROM range(100000000) a, range(100000000) b; SELECT 'still' || 'ran' AS z;");
    cancel(&mut t, "the first statement");
    t.line("CREATE TEMP VIEW slow AS SELECT * FROM range(100000000) a, range(100000000) b;");
    t.line(".tables");
    cancel(&mut t, ".tables");
    t.line("SELECT 'back' || 'again' AS z;");
    let out = t.sync();
    assert!(!out.contains("stillran"), "the rest of the line ran:\n{out}");
    assert!(out.contains("backagain"), "{out}");
    assert_eq!(out.matches("is a directory").count(), 1, "{out}");
}

/// `.run NAME deadlines=FILE` applies the file to that run only: deadlines the session put
/// in `param_deadlines` itself are there again after it, whether the run worked, failed or
/// its file could not be read.
#[test]
fn run_with_a_deadline_file_keeps_the_sessions_own_deadlines() {
    let tmp = archive();
    std::fs::write(tmp.path().join("d.csv"), "TASK_A,5ns\n").unwrap();
    std::fs::write(tmp.path().join("bad.csv"), "TASK_A,soon\n").unwrap();
    let Some(mut t) = Term::start(tmp.path(), "db") else { return };
    t.line("INSERT INTO param_deadlines VALUES ('TASK_*', 7), ('OTHER', 9);");
    t.line(".run deadline_summary deadlines=d.csv");
    let out = t.sync();
    assert!(out.contains("| file"), "the file applied to the run: {out}");
    let kept = "SELECT string_agg(entity || '=' || deadline, ' ' ORDER BY entity) AS kept FROM param_deadlines;";
    t.line(kept);
    let out = t.sync();
    assert!(out.contains("OTHER=9 TASK_*=7"), "{out}");
    t.line(".run deadline_summary deadlines=bad.csv");
    t.line(".run deadline_summary deadlines=d.csv bogus=1");
    t.line(kept);
    let out = t.sync();
    assert!(out.contains("bad.csv") && out.contains("no parameter 'bogus'"), "{out}");
    assert!(out.contains("OTHER=9 TASK_*=7"), "{out}");
    // capture= twice is refused as any key given twice is, not the last one silently taken.
    t.line(".run data_loss capture=1 capture=good");
    let out = t.sync();
    assert!(
        out.contains("Error: capture is given twice (capture=1, then capture=good): give it once"),
        "{out}"
    );
    assert!(!out.contains("capture_id"), "nothing ran: {out}");
    // capture= takes a tag as --capture does (none here has it).
    t.line(".run data_loss capture=day=mon");
    let out = t.sync();
    assert!(out.contains("Error: no capture tagged 'day=mon' in"), "{out}");
    // And the session's deadlines still judge the next statement.
    t.line("SELECT deadline_source, misses FROM deadline_summary;");
    let out = t.sync();
    let judged = out.lines().any(|l| {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        cells == ["file", "1"]
    });
    assert!(judged, "{out}");
}

/// The README's REPL session, typed line by line into the shell over the bundled sample
/// (ingested as the README says), gives the screen the README shows, line for line.
#[test]
fn the_readme_session_gives_the_screen_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme.split("\n## REPL\n").nth(1).expect("README has a REPL section");
    let session = section.split("```text\n").nth(1).unwrap().split("```").next().unwrap();
    let mut shown: Vec<&str> = session.lines().collect();
    assert_eq!(shown.remove(0), "$ tracedb sql --archive ecu.tdb", "{session}");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("datasets/btf")).unwrap();
    let sample = "datasets/btf/ecu-4cores.btf.gz";
    std::fs::copy(root.join(sample), d.join(sample)).unwrap();
    util::ok(d, &["ingest", "--archive", "ecu.tdb", sample]);
    let Some(mut term) = Term::start(d, "ecu.tdb") else { return };
    for line in &shown {
        let typed = line.strip_prefix("tracedb> ").or_else(|| line.strip_prefix("    ...> "));
        if let Some(typed) = typed {
            term.line(typed);
        }
    }
    let screen = term.wait_for("shell exited with 0");
    let got: Vec<&str> =
        screen.lines().map(str::trim_end).take_while(|l| !l.starts_with("shell exited")).collect();
    assert_eq!(got, shown, "the README's session differs from the shell's screen");
}
