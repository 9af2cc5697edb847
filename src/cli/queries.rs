//! `tracedb queries`: the predefined analyses, their parameters and columns.
use crate::store::queries::catalog;
use crate::{Error, Result};
use std::io::Write;

/// List the predefined analyses, their parameters and their columns.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show the definitions text and what every column means.
    #[arg(long, short)]
    verbose: bool,
    /// Only this analysis (implies --verbose).
    name: Option<String>,
}

/// Runs `queries`.
pub fn run(args: Args) -> Result<()> {
    let mut out = super::stdout();
    let all = catalog();
    let shown: Vec<_> =
        all.iter().filter(|q| args.name.as_ref().is_none_or(|n| &q.name == n)).collect();
    if shown.is_empty() {
        let names: Vec<&str> = all.iter().map(|q| q.name.as_str()).collect();
        return Err(Error::Usage(format!(
            "no analysis '{}' (analyses: {})",
            args.name.unwrap_or_default(),
            names.join(", ")
        )));
    }
    let verbose = args.verbose || args.name.is_some();
    let width = shown.iter().map(|q| q.name.len()).max().unwrap_or(0);
    for q in shown {
        let w = &mut out;
        (|| -> std::io::Result<()> {
            writeln!(w, "{:width$}  {}", q.name, q.summary)?;
            for p in &q.params {
                let default = if p.default == "-" {
                    String::new()
                } else {
                    format!(" (default {})", p.default)
                };
                writeln!(
                    w,
                    "{:width$}    --param {}=<{}>{default}: {}",
                    "", p.name, p.kind, p.doc
                )?;
            }
            if !verbose {
                let names: Vec<&str> = q.columns.iter().map(|c| c.0.as_str()).collect();
                for line in wrap(&format!("columns: {}", names.join(", ")), 96 - width) {
                    writeln!(w, "{:width$}    {line}", "")?;
                }
            }
            if verbose {
                writeln!(w)?;
                for line in q.doc.lines() {
                    writeln!(w, "    {line}")?;
                }
                writeln!(w, "\n    columns:")?;
                let cw = q.columns.iter().map(|c| c.0.len()).max().unwrap_or(0);
                for (c, d) in &q.columns {
                    writeln!(w, "      {c:cw$}  {d}")?;
                }
                writeln!(w, "\n    file: queries/{}\n", q.file)?;
            }
            Ok(())
        })()
        .map_err(Error::Output)?;
    }
    out.flush().map_err(Error::Output)
}

/// `text` cut at spaces into lines of at most `width` characters (a longer word stands
/// alone); the lines after the first are indented by two spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.trim().is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, "  ".to_string()));
        } else if !line.trim().is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_cuts_at_spaces_and_indents_what_follows() {
        assert_eq!(wrap("columns: a, bb, ccc", 12), ["columns: a,", "  bb, ccc"]);
        assert_eq!(
            wrap("columns: averyveryverylongname", 8),
            ["columns:", "  averyveryverylongname"]
        );
        assert_eq!(wrap("short", 80), ["short"]);
    }
}
