//! `tracedb queries`: the predefined analyses, their parameters and columns.
use crate::store::queries::catalog;
use crate::{Error, Result};
use std::io::Write;

/// List the predefined analyses, their parameters and their columns.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show the definitions text and every column of each analysis.
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
