//! The shell's meta-commands (lines starting with `.`): one table, [`COMMANDS`], holds each
//! command's name, argument synopsis, one-line help and parser, so `.help`, parsing and tab
//! completion can never disagree (datafusion-cli's `ALL_COMMANDS`).
//!
//! Arguments are split on whitespace; `.output` and `.read` take the rest of the line as a
//! path (surrounding quotes removed), so paths may hold spaces.
use crate::{Error, Result};
use std::path::PathBuf;

/// How the shell prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Aligned columns with types in the header, numbers right-aligned.
    #[default]
    Table,
    /// RFC 4180 CSV (every row, raw values).
    Csv,
    /// A JSON array of objects (every row, raw values).
    Json,
    /// A Markdown table.
    Markdown,
    /// One `column = value` line per column, rows separated by a blank line.
    Line,
}

impl Mode {
    /// Every mode with its name, in the order `.help` lists them.
    pub const ALL: [(&'static str, Mode); 5] = [
        ("table", Mode::Table),
        ("csv", Mode::Csv),
        ("json", Mode::Json),
        ("markdown", Mode::Markdown),
        ("line", Mode::Line),
    ];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        Mode::ALL.iter().find(|(_, m)| *m == self).map_or("table", |(n, _)| n)
    }
}

/// A parsed meta-command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meta {
    /// List the meta-commands.
    Help,
    /// Tables and views with their row counts.
    Tables,
    /// The documented definition of one table, or of all.
    Schema(Option<String>),
    /// The captures in the archive.
    Captures,
    /// The predefined analyses.
    Queries,
    /// Run a predefined analysis with `key=value` parameters.
    Run {
        /// Analysis name.
        name: String,
        /// Parameters in the order given.
        params: Vec<(String, String)>,
    },
    /// Set the output mode, or show it (`None`).
    Mode(Option<Mode>),
    /// Limit printed rows (`None`: no limit).
    MaxRows(Option<usize>),
    /// Show the row limit.
    ShowMaxRows,
    /// Show the elapsed time after each statement.
    Timer(bool),
    /// Send results to a file (`None`: back to the terminal).
    Output(Option<PathBuf>),
    /// Run the statements and meta-commands of a file.
    Read(PathBuf),
    /// Leave the shell.
    Quit,
}

/// One meta-command's definition.
pub struct Spec {
    /// Name with the leading dot.
    pub name: &'static str,
    /// Other names accepted.
    pub aliases: &'static [&'static str],
    /// Argument synopsis for `.help`.
    pub args: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Builds the command from the text after the name (trimmed).
    parse: fn(&str) -> std::result::Result<Meta, String>,
}

/// Every meta-command, in `.help` order.
pub const COMMANDS: &[Spec] = &[
    Spec {
        name: ".help",
        aliases: &[],
        args: "",
        help: "show this list",
        parse: |a| none(a, Meta::Help),
    },
    Spec {
        name: ".tables",
        aliases: &[],
        args: "",
        help: "tables and views with row counts",
        parse: |a| none(a, Meta::Tables),
    },
    Spec {
        name: ".schema",
        aliases: &[],
        args: "[TABLE]",
        help: "documented columns of TABLE (all tables without one)",
        parse: |a| Ok(Meta::Schema((!a.is_empty()).then(|| a.to_string()))),
    },
    Spec {
        name: ".captures",
        aliases: &[],
        args: "",
        help: "captures in the archive",
        parse: |a| none(a, Meta::Captures),
    },
    Spec {
        name: ".queries",
        aliases: &[],
        args: "",
        help: "predefined analyses, one line each",
        parse: |a| none(a, Meta::Queries),
    },
    Spec {
        name: ".run",
        aliases: &[],
        args: "NAME [key=value...]",
        help: "run a predefined analysis",
        parse: parse_run,
    },
    Spec {
        name: ".mode",
        aliases: &[],
        args: "table|csv|json|markdown|line",
        help: "how results are printed (no argument: show the mode)",
        parse: |a| {
            if a.is_empty() {
                return Ok(Meta::Mode(None));
            }
            Mode::ALL
                .iter()
                .find(|(n, _)| *n == a)
                .map(|(_, m)| Meta::Mode(Some(*m)))
                .ok_or_else(String::new)
        },
    },
    Spec {
        name: ".maxrows",
        aliases: &[],
        args: "[N]",
        help:
            "print at most N rows of a table (0: all; no argument: show it); csv and json print all",
        parse: |a| {
            if a.is_empty() {
                return Ok(Meta::ShowMaxRows);
            }
            a.parse::<usize>()
                .map(|n| Meta::MaxRows((n > 0).then_some(n)))
                .map_err(|_| String::new())
        },
    },
    Spec {
        name: ".timer",
        aliases: &[],
        args: "on|off",
        help: "show row count and elapsed time after each statement",
        parse: |a| match a {
            "on" => Ok(Meta::Timer(true)),
            "off" => Ok(Meta::Timer(false)),
            _ => Err(String::new()),
        },
    },
    Spec {
        name: ".output",
        aliases: &[],
        args: "[FILE]",
        help: "write results to FILE (no argument: back to the terminal)",
        parse: |a| Ok(Meta::Output((!a.is_empty()).then(|| PathBuf::from(unquote(a))))),
    },
    Spec {
        name: ".read",
        aliases: &[],
        args: "FILE.sql",
        help: "run the statements and meta-commands in FILE.sql",
        parse: |a| {
            if a.is_empty() {
                Err(String::new())
            } else {
                Ok(Meta::Read(PathBuf::from(unquote(a))))
            }
        },
    },
    Spec {
        name: ".quit",
        aliases: &[".exit"],
        args: "",
        help: "leave the shell (also Ctrl-D)",
        parse: |a| none(a, Meta::Quit),
    },
];

fn none(args: &str, m: Meta) -> std::result::Result<Meta, String> {
    if args.is_empty() {
        Ok(m)
    } else {
        Err(format!("takes no argument, found '{args}'"))
    }
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn parse_run(args: &str) -> std::result::Result<Meta, String> {
    let mut words = args.split_whitespace();
    let name = words.next().ok_or_else(String::new)?.to_string();
    let mut params = Vec::new();
    for w in words {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("expected key=value, found '{w}'"))?;
        if k.is_empty() {
            return Err(format!("expected key=value, found '{w}'"));
        }
        params.push((k.to_string(), v.to_string()));
    }
    Ok(Meta::Run { name, params })
}

/// The definition of the command named `name` (with its dot), aliases included.
pub fn spec(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|s| s.name == name || s.aliases.contains(&name))
}

/// Parses a meta-command line (starting with `.`; a trailing `;` is ignored).
pub fn parse(line: &str) -> Result<Meta> {
    let line = line.trim().trim_end_matches(';').trim_end();
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let spec = spec(name)
        .ok_or_else(|| Error::Usage(format!("unknown command '{name}' (.help lists them)")))?;
    (spec.parse)(args.trim()).map_err(|why| {
        let usage = format!("usage: {} {}", spec.name, spec.args);
        Error::Usage(if why.is_empty() {
            usage.trim_end().to_string()
        } else {
            format!("{}: {why}", spec.name)
        })
    })
}

/// The `.help` text, generated from [`COMMANDS`].
pub fn help() -> String {
    let synopsis = |s: &Spec| {
        let mut n = s.name.to_string();
        for a in s.aliases {
            n.push_str(&format!(", {a}"));
        }
        if s.args.is_empty() {
            n
        } else {
            format!("{n} {}", s.args)
        }
    };
    let width = COMMANDS.iter().map(|s| synopsis(s).len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in COMMANDS {
        out.push_str(&format!("{:<width$}  {}\n", synopsis(s), s.help));
    }
    out.push_str(
        "SQL statements end with ';' and may span lines. Ctrl-C cancels a running query or\n",
    );
    out.push_str("clears the line, Ctrl-D quits, Ctrl-R searches the history, Tab completes.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_parses_and_has_help() {
        let examples = [
            (".help", Meta::Help),
            (".tables", Meta::Tables),
            (".schema", Meta::Schema(None)),
            (".schema events", Meta::Schema(Some("events".into()))),
            (".captures", Meta::Captures),
            (".queries", Meta::Queries),
            (
                ".run cpu_load window=2ms",
                Meta::Run {
                    name: "cpu_load".into(),
                    params: vec![("window".into(), "2ms".into())],
                },
            ),
            (".mode csv", Meta::Mode(Some(Mode::Csv))),
            (".mode", Meta::Mode(None)),
            (".maxrows 10", Meta::MaxRows(Some(10))),
            (".maxrows 0", Meta::MaxRows(None)),
            (".maxrows", Meta::ShowMaxRows),
            (".timer on", Meta::Timer(true)),
            (".timer off;", Meta::Timer(false)),
            (".output 'my out.txt'", Meta::Output(Some("my out.txt".into()))),
            (".output", Meta::Output(None)),
            (".read q.sql", Meta::Read("q.sql".into())),
            (".quit", Meta::Quit),
            (".exit", Meta::Quit),
        ];
        for (line, want) in &examples {
            assert_eq!(&parse(line).unwrap(), want, "{line}");
        }
        let h = help();
        for s in COMMANDS {
            assert!(
                examples.iter().any(|(l, _)| l.split_whitespace().next() == Some(s.name)),
                "{} untested",
                s.name
            );
            assert!(
                h.lines().any(|l| l.starts_with(s.name) && l.contains(s.help)),
                "{} not in help",
                s.name
            );
        }
    }

    #[test]
    fn errors_say_what_was_expected() {
        let msg = |l: &str| parse(l).unwrap_err().to_string();
        assert_eq!(msg(".frobnicate"), "unknown command '.frobnicate' (.help lists them)");
        assert_eq!(msg(".mode xml"), "usage: .mode table|csv|json|markdown|line");
        assert_eq!(msg(".maxrows many"), "usage: .maxrows [N]");
        assert_eq!(msg(".timer maybe"), "usage: .timer on|off");
        assert_eq!(msg(".read"), "usage: .read FILE.sql");
        assert_eq!(msg(".run"), "usage: .run NAME [key=value...]");
        assert_eq!(msg(".run x window"), ".run: expected key=value, found 'window'");
        assert_eq!(msg(".tables x"), ".tables: takes no argument, found 'x'");
    }
}
