//! A capture's default name: the file name without its extensions, never a number (which
//! commands would read as a capture id).
use std::path::Path;

/// The file name without directory and without `.gz`/`.zip`/`.btf`/`.bin`-like extensions; the
/// whole file name when that would be a number (`5.btf`), see [`not_a_number`].
pub fn default_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    let whole = name.clone();
    name = crate::ingest::input::strip_compressed(&name).to_string();
    for ext in [".btf", ".prv", ".qs", ".bin", ".txt", ".csv"] {
        if let Some(stripped) = name.strip_suffix(ext) {
            name = stripped.to_string();
        }
    }
    // A file called `.btf` keeps its whole name rather than none.
    if name.is_empty() || is_number(&name) {
        name = whole;
    }
    not_a_number(name)
}

/// True when commands would read `name` as a capture id (`5`, ` 5`, `+5`, `05`): such a
/// name could never be given to `rm`, `export` or `--capture`.
pub fn is_number(name: &str) -> bool {
    name.trim().parse::<i64>().is_ok()
}

/// `name`, or `capture-<name>` when it is a number: the name of `ingest <(zcat t.btf.gz)`
/// (`/dev/fd/63`) or of an experiment directory called `2024`.
pub fn not_a_number(name: String) -> String {
    if is_number(&name) {
        format!("capture-{}", name.trim())
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_extensions() {
        assert_eq!(default_name(Path::new("/x/freertos-4cores.btf.gz")), "freertos-4cores");
        assert_eq!(default_name(Path::new("a.BTF")), "a.BTF");
        assert_eq!(default_name(Path::new("/x/.btf")), ".btf");
        assert_eq!(default_name(Path::new(".btf.gz")), ".btf.gz");
        // Commands read a number as a capture id: such a name could not be given to them.
        assert_eq!(default_name(Path::new("/x/5.btf")), "5.btf");
        assert_eq!(default_name(Path::new("/x/+5.btf.gz")), "+5.btf.gz");
        assert_eq!(default_name(Path::new("/dev/fd/63")), "capture-63");
        assert_eq!(default_name(Path::new("5.0.btf")), "5.0");
    }
}
