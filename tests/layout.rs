//! House rules checked on the source tree.
use std::path::Path;

#[test]
fn importers_and_model_know_nothing_of_storage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Importers may live in subdirectories (src/ingest/prv/): walk them all.
    let mut dirs = vec![root.join("ingest"), root.join("model")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains("duckdb"), "{} mentions duckdb", entry.path().display());
            assert!(!text.contains("parquet::"), "{} mentions parquet", entry.path().display());
        }
    }
}

#[test]
fn readme_documents_every_table() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    // Every table of schema/ (which a unit test checks against DESIGN.md's list).
    for t in tracedb::store::schema::tables().iter().map(|t| t.name.as_str()) {
        assert!(readme.contains(&format!("### `{t}`")), "README has no section for table {t}");
    }
}

#[test]
fn readme_documents_every_analysis() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("### ")).collect();
    for q in tracedb::store::queries::catalog() {
        let name = format!("`{}`", q.name);
        assert!(
            headings.iter().any(|h| h.contains(&name)),
            "README has no section heading naming {}",
            q.name
        );
    }
}

#[test]
fn every_query_file_is_embedded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let embedded: Vec<&str> = tracedb::store::queries::FILES.iter().map(|(f, _)| *f).collect();
    for area in std::fs::read_dir(&root).unwrap().flatten() {
        for f in std::fs::read_dir(area.path()).unwrap().flatten() {
            let rel = format!(
                "{}/{}",
                area.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            );
            assert!(
                embedded.contains(&rel.as_str()),
                "queries/{rel} is not listed in store::queries::FILES"
            );
        }
    }
}

/// The README's "Bad input" table lists every diagnostic kind the code writes (every
/// importer under src/ingest and the derive stage), and every kind it lists is written
/// somewhere: no kind goes undocumented, and no row outlives the code that wrote it.
#[test]
fn readme_diagnostics_table_matches_the_kinds_the_code_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let written = diagnostic_kinds_written(&[root.join("src/ingest"), root.join("src/derive")]);
    // Every format's importer is covered (each writes kinds of its own).
    assert!(written.len() > 100, "{written:?}");
    for k in ["malformed_line", "malformed_record", "frame_too_long", "bad_row"] {
        assert!(
            written.contains(k),
            "{k} not found: the scan below misses a way kinds are written"
        );
    }
    for k in ["clock_backwards", "numevents_mismatch", "missing_type", "core_conflict"] {
        assert!(
            written.contains(k),
            "{k} not found: the scan below misses a way kinds are written"
        );
    }
    let section = readme.split("\n## Bad input\n").nth(1).expect("README has a Bad input section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let listed: std::collections::BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(k, _)| k))
        .collect();
    let undocumented: Vec<&String> =
        written.iter().filter(|k| !listed.contains(k.as_str())).collect();
    assert!(undocumented.is_empty(), "README's diagnostics table lacks {undocumented:?}");
    let stale: Vec<&&str> = listed.iter().filter(|k| !written.contains(**k)).collect();
    assert!(stale.is_empty(), "README's diagnostics table lists kinds no code writes: {stale:?}");
}

/// The diagnostic kinds written by the non-test sources under `dirs`: the string right after
/// `kind:`, `Severity::X,`, `(sink,` (`warn(sink, "x", ...)`) or `(severity,`
/// (`self.diag(severity, "x", ...)`).
fn diagnostic_kinds_written(dirs: &[std::path::PathBuf]) -> std::collections::BTreeSet<String> {
    let mut kinds = std::collections::BTreeSet::new();
    let mut dirs = dirs.to_vec();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            // Unit tests live in `tests.rs` files and `tests/` folders (src/derive/tests/).
            if path.is_dir() {
                if name != "tests" {
                    dirs.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs")
                || ["tests.rs", "test_sink.rs", "testelf.rs"].contains(&&*name)
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("\n#[cfg(test)]\nmod tests {").next().unwrap_or(&text);
            let parts: Vec<&str> = code.split('"').collect();
            for w in parts.windows(2) {
                let (tail, inside) = (w[0].trim_end(), w[1]);
                let is_kind = !inside.is_empty()
                    && inside
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                let arg = tail.strip_suffix(',').map(str::trim_end).is_some_and(|t| {
                    t.ends_with("(sink")
                        || t.ends_with("(severity")
                        || t.rsplit_once("Severity::").is_some_and(|(_, s)| {
                            !s.is_empty() && s.chars().all(char::is_alphanumeric)
                        })
                });
                if is_kind && (tail.ends_with("kind:") || arg) {
                    kinds.insert(inside.to_string());
                }
            }
        }
    }
    kinds
}

/// The README's examples on the bundled sample run as written and print what it shows: the
/// opening command (`cargo run --release -- ARGS` is `tracedb ARGS`), the 60-second tour, the
/// Analyses examples (the synth example's trace written by the library) and (when `../shared`
/// is there) the Paraver one, each `$` line run by bash
/// with `tracedb` on the PATH in a directory holding `datasets/btf/ecu-4cores.btf.gz`. Output
/// is compared line by line (standard output, then standard error, where the ingest's summary
/// goes), numbers included, but for the ingest's timing and the ingest time `captures` shows,
/// and only up to a `...` line where the README cuts a result short; a command shown without
/// output only has to exit 0.
#[test]
fn readme_examples_on_the_bundled_sample_print_what_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // A clone's directory, with `../shared` beside it when this checkout has one (the
    // Paraver example reads `../shared/datasets`).
    let d = &tmp.path().join("clone");
    let shared = root.join("../shared/datasets");
    if shared.is_dir() {
        std::os::unix::fs::symlink(root.join("../shared"), tmp.path().join("shared")).unwrap();
    } else {
        eprintln!("skipped the Paraver example: ../shared/datasets is absent");
    }
    std::fs::create_dir_all(d.join("datasets/btf")).unwrap();
    let sample = "datasets/btf/ecu-4cores.btf.gz";
    std::fs::copy(root.join(sample), d.join(sample)).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_tracedb")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let sh = |cmd: &str| {
        let out = std::process::Command::new("bash")
            .args(["-c", cmd])
            .current_dir(d)
            .env("PATH", &path)
            .env_remove("TRACEDB_ARCHIVE")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("bash runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "README command failed ({:?}): {cmd}\n{text}", out.status);
        text.replace("\r\n", "\n")
    };

    // The opening block's two commands, into their own archive.
    let opening = readme.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    let cargo: Vec<&str> =
        opening.lines().filter_map(|l| l.strip_prefix("cargo run --release -- ")).collect();
    assert_eq!(cargo.len(), 2, "{opening}");
    let ingest = sh(&format!("tracedb {}", cargo[0].trim_end_matches(" && \\")));
    assert!(ingest.starts_with("capture 1 'ecu-4cores' (btf): 34357 events"), "{ingest}");
    let answer = sh(&format!("tracedb {}", cargo[1]));
    assert!(answer.starts_with(" entity ") && answer.ends_with("(5 rows)\n"), "{answer}");

    // The tour, then the Analyses examples on the sample, `priority_inversions` on the
    // synthetic system its own command writes, and the Paraver one, in order: the tour's
    // ingest makes the archive the others read.
    let between = |from: &str, to: &str| {
        let rest = readme.split(from).nth(1).unwrap_or_else(|| panic!("README lacks {from:?}"));
        rest.split(to).next().unwrap().to_string()
    };
    let mut text = [
        between("\n## 60-second tour\n", "\n## Command line\n"),
        between("Any other choice of\ncaptures is a filter in SQL:", "All times are ns;"),
        between("The examples below run on the bundled sample", "\n### `state_time`"),
    ]
    .join("\n");
    if shared.is_dir() {
        text.push_str(&between("\n### `state_time`", "\n## Table reference\n"));
    }
    let mut ran = 0;
    for block in text.split("```console\n").skip(1) {
        let block = block.split("```").next().unwrap();
        for (cmd, expected) in console_commands(block) {
            // `cargo run --release --example synth -- ARGS`: what the example writes, without
            // building it (its arguments are read by the library).
            if let Some(args) = cmd.strip_prefix("cargo run --release --example synth -- ") {
                let args: Vec<String> = args.split_whitespace().map(String::from).collect();
                let (out, cfg) = tracedb::synth::config_from_args(&args).unwrap();
                assert!(!out.ends_with(".gz"), "{cmd}");
                let file = std::fs::File::create(d.join(&out)).unwrap();
                tracedb::synth::write_btf(file, &cfg).unwrap();
                assert!(expected.is_empty(), "{cmd}");
                ran += 1;
                continue;
            }
            let got = sh(&cmd);
            let got: Vec<String> = got.lines().map(mask_varying).collect();
            let expected: Vec<String> = expected.iter().map(|l| mask_varying(l)).collect();
            let shown = match expected.iter().position(|l| l == "...") {
                Some(cut) => &expected[..cut],
                None => &expected[..],
            };
            // A command shown without output (a `printf`, an ingest) only has to work.
            if !shown.is_empty() {
                let compared: Vec<&String> = if shown.len() < expected.len() {
                    got.iter().take(shown.len()).collect()
                } else {
                    got.iter().collect()
                };
                assert_eq!(
                    compared,
                    shown.iter().collect::<Vec<_>>(),
                    "README's output of `{cmd}` differs"
                );
            }
            ran += 1;
        }
    }
    assert!(ran >= 30, "only {ran} README commands found");
}

/// The `$ ` commands of a console block (a command goes on while a `"` is open or a line ends
/// in `\`), each with the lines it prints.
fn console_commands(block: &str) -> Vec<(String, Vec<String>)> {
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(first) = line.strip_prefix("$ ") else {
            if let Some((_, out)) = commands.last_mut() {
                out.push(line.to_string());
            }
            continue;
        };
        let mut cmd = first.to_string();
        while cmd.matches('"').count() % 2 == 1 || cmd.ends_with('\\') {
            match lines.next() {
                Some(more) => {
                    cmd.push('\n');
                    cmd.push_str(more);
                }
                None => break,
            }
        }
        commands.push((cmd, Vec::new()));
    }
    // The blank line that separates one command's output from the next `$` is not output.
    for (_, out) in &mut commands {
        while out.last().is_some_and(|l| l.is_empty()) {
            out.pop();
        }
    }
    commands
}

/// `line` with what differs from run to run masked: an ingest summary's timing
/// (`; 0.05 s (4.5 MB/s)`) and RFC 3339 ingest times (`2026-11-22T12:34:01Z`).
fn mask_varying(line: &str) -> String {
    let mut line = line.to_string();
    if line.starts_with("capture ") && line.ends_with(" MB/s)") {
        if let Some(at) = line.rfind("; ") {
            line.truncate(at);
        }
    }
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < line.len() {
        let is_time = b.len() >= i + 20
            && b[i..i + 20].iter().enumerate().all(|(k, c)| match k {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 | 16 => *c == b':',
                19 => *c == b'Z',
                _ => c.is_ascii_digit(),
            });
        if is_time {
            out.push_str("YYYY-MM-DDTHH:MM:SSZ");
            i += 20;
        } else {
            let c = line[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The README's command-line synopsis and each subcommand's `--help` name the same options:
/// every option the synopsis gives a command is in its help, and every option its help lists
/// (by its short or long name) is in the synopsis, so neither gains a flag the other lacks.
#[test]
fn readme_synopsis_and_help_name_the_same_options() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme.split("\n## Command line\n").nth(1).expect("README has a Command line");
    let synopsis = section.split("```text\n").nth(1).unwrap().split("```").next().unwrap();
    // Each `tracedb CMD ...` line with the indented lines after it.
    let mut commands: Vec<(String, String)> = Vec::new();
    for line in synopsis.lines() {
        match line.strip_prefix("tracedb ") {
            Some(rest) => {
                let (cmd, args) = rest.split_once(' ').unwrap_or((rest, ""));
                commands.push((cmd.to_string(), args.to_string()));
            }
            None => commands.last_mut().expect("synopsis starts with a command").1.push_str(line),
        }
    }
    let options = |text: &str| -> std::collections::BTreeSet<String> {
        // `--name` and `-x` at the start of a word (a bracket, space or `|` before it).
        let mut found = std::collections::BTreeSet::new();
        for word in text.split(|c: char| c.is_whitespace() || "[]|(),".contains(c)) {
            let name: String = word
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
                .trim_end_matches('-')
                .to_string();
            let long = name.starts_with("--") && name.len() > 3;
            let short = name.len() == 2 && name.starts_with('-') && name != "--";
            if long || short {
                found.insert(name);
            }
        }
        found
    };
    let names: Vec<&str> = commands.iter().map(|(c, _)| c.as_str()).collect();
    for cmd in ["ingest", "captures", "sql", "queries", "query", "report", "rm", "verify", "export"]
    {
        assert!(names.contains(&cmd), "the synopsis lacks {cmd}: {names:?}");
    }
    let tmp = tempfile::tempdir().unwrap();
    for (cmd, args) in &commands {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracedb"))
            .args([cmd.as_str(), "--help"])
            .current_dir(tmp.path())
            .output()
            .expect("tracedb runs");
        assert!(out.status.success(), "tracedb {cmd} --help failed");
        let help = String::from_utf8_lossy(&out.stdout);
        let in_help = options(&help);
        let in_readme = options(args);
        for o in &in_readme {
            assert!(in_help.contains(o), "README gives `tracedb {cmd} {o}`; its --help lacks it");
        }
        // Each option line of the help (`  -c, --command <SQL>`): one of its names is in the
        // synopsis.
        for line in help.lines().map(str::trim_start).filter(|l| l.starts_with('-')) {
            let spelled = options(line.split("  ").next().unwrap_or(line));
            // (`- table: ...` lines list an option's values.)
            if spelled.is_empty() || spelled.contains("--help") || spelled.contains("--version") {
                continue;
            }
            assert!(
                spelled.iter().any(|o| in_readme.contains(o)),
                "`tracedb {cmd} --help` lists {spelled:?}, which the README's synopsis lacks"
            );
        }
    }
}

/// `verify --help` said only "against the manifest": it did not say that files no capture
/// lists fail it too (the README's `unlisted`), nor what it prints.
#[test]
fn verify_help_says_what_fails_it() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracedb"))
        .args(["verify", "--help"])
        .output()
        .expect("tracedb runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for says in ["no\ncapture lists", "unlisted", "status 1", "ok: N captures"] {
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&says.split_whitespace().collect::<Vec<_>>().join(" ")), "{help}");
    }
}
