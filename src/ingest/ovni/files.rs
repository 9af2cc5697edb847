//! The files of an ovni trace besides the event streams: where the streams of a trace
//! directory are, the metadata and clock-offset files read with them (hashed and kept as the
//! capture's companions), the paths messages show them by, and the per-loom clock offsets of
//! `clock-offsets.txt` (ovnisync's table, the median used).
use super::*;

/// The directory holding the `loom.*` folders of a trace directory given as itself or as
/// the experiment directory around its `ovni/` folder; `None` when there are no streams.
pub fn streams_dir(dir: &Path) -> Option<(PathBuf, Vec<StreamFile>)> {
    [dir.to_path_buf(), dir.join("ovni")].into_iter().find_map(|d| {
        let s = find_streams(&d);
        (!s.is_empty()).then_some((d, s))
    })
}

/// A file read besides the streams (metadata, clock offsets), for the capture's hash and
/// kept sources.
#[derive(Debug, Clone)]
pub struct Companion {
    /// The file.
    pub path: PathBuf,
    /// Its digest, from the bytes read.
    pub digest: Digest256,
    /// Bytes of text read (decompressed).
    pub text_bytes: u64,
}

/// The companions [`super::read`] reads for the streams `files` (when they are streams), in its
/// order: metadata files, then the clock offset file.
pub fn companion_paths(files: &[PathBuf]) -> Vec<PathBuf> {
    let streams: Vec<StreamFile> = files.iter().filter_map(|f| stream_of(f)).collect();
    if streams.len() != files.len() || streams.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for s in &streams {
        for j in &s.json {
            if !out.contains(j) {
                out.push(j.clone());
            }
        }
    }
    if let Some(root) = streams.first().and_then(root_of) {
        let off = root.join(CLOCK_OFFSETS);
        if off.is_file() {
            out.push(off);
        }
    }
    out
}

/// The folder holding the `loom.*` folder of the stream `s`.
pub fn root_of(s: &StreamFile) -> Option<PathBuf> {
    s.obs.ancestors().nth(if s.v2 { 3 } else { 4 }).map(Path::to_path_buf)
}

/// The path stream `s` is shown by (the file first ingested, on a rebuild).
pub fn shown_of(s: &StreamFile) -> String {
    s.shown.clone().unwrap_or_else(|| s.obs.display().to_string())
}

/// The folder holding the `loom.*` folder of the path stream `s` is shown by.
pub fn shown_root_of(s: &StreamFile) -> Option<PathBuf> {
    let shown = PathBuf::from(shown_of(s));
    shown.ancestors().nth(if s.v2 { 3 } else { 4 }).map(Path::to_path_buf)
}

/// Shows files of the trace read (metadata, clock offsets) by their path below the folder
/// the streams are shown in: on a rebuild, the files first ingested, not extracted copies.
pub(super) struct Shower {
    pub(super) root: Option<PathBuf>,
    pub(super) shown_root: Option<PathBuf>,
}

impl Shower {
    pub(super) fn show(&self, p: &Path) -> String {
        match (&self.root, &self.shown_root) {
            (Some(r), Some(s)) => match p.strip_prefix(r) {
                Ok(rel) => s.join(rel).display().to_string(),
                Err(_) => p.display().to_string(),
            },
            _ => p.display().to_string(),
        }
    }
}

/// Name of the clock offset file ovniemu reads by default.
pub const CLOCK_OFFSETS: &str = "clock-offsets.txt";

pub(super) fn clip_key(clock: u64, offset: i64) -> u64 {
    if offset >= 0 {
        clock.saturating_add(offset.unsigned_abs())
    } else {
        clock.saturating_sub(offset.unsigned_abs())
    }
}

/// Reads clock offsets: hostname -> offset (ns).
pub(super) fn clock_offsets(
    path: &Path,
    shown: &str,
    sink: &mut dyn Sink,
) -> Result<(HashMap<String, i64>, Option<Companion>)> {
    let mut out = HashMap::new();
    if !path.is_file() {
        return Ok((out, None));
    }
    sink.source_file(shown);
    let (text, digest, len) = match meta::read_json_text(path) {
        Ok(t) => t,
        Err(e) => {
            bad_metadata(
                sink,
                Pos::None,
                format!("{shown}: {e}: clocks are taken without offsets"),
            )?;
            return Ok((out, None));
        }
    };
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        match (f.get(1), f.get(2).and_then(|m| m.parse::<f64>().ok())) {
            (Some(host), Some(median))
                if f.len() == 5 && median.is_finite() && median.abs() < 1e18 =>
            {
                #[allow(clippy::cast_possible_truncation)]
                out.insert((*host).to_string(), median.trunc() as i64);
            }
            _ => bad_metadata(
                sink,
                Pos::Line(i as u64 + 1),
                format!(
                    "{shown}: '{}' is not 'index hostname median mean stdev': line ignored",
                    line.trim()
                ),
            )?,
        }
    }
    Ok((out, Some(Companion { path: path.to_path_buf(), digest, text_bytes: len })))
}

/// The offset of loom `loom` (`loom.<host>` or `loom.<host>.<suffix>`).
pub(super) fn offset_of(offsets: &HashMap<String, i64>, loom: &str) -> Option<i64> {
    let host = loom.strip_prefix("loom.").unwrap_or(loom);
    offsets.get(host).copied().or_else(|| {
        offsets
            .iter()
            .find(|(h, _)| host.strip_prefix(h.as_str()).is_some_and(|r| r.starts_with('.')))
            .map(|(_, o)| *o)
    })
}
