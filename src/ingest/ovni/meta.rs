//! Where the streams are (the directory layouts) and what their JSON metadata says.
use super::super::input::{strip_compressed, Digest256, Input, COMPRESSED_SUFFIXES};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most metadata text read from one JSON file (they are a few KiB).
const MAX_JSON: u64 = 16 << 20;

/// One thread's stream and where it sits.
#[derive(Debug, Clone)]
pub struct StreamFile {
    /// The binary events (`stream.obs`, or `thread.<tid>.obs` in the v2 layout).
    pub obs: PathBuf,
    /// Its metadata: `stream.json` (v3); `thread.<tid>.json` and the process's
    /// `metadata.json` (v2). Only those that exist.
    pub json: Vec<PathBuf>,
    /// `loom.<L>/proc.<P>/thread.<T>`, as ovni names the stream.
    pub relpath: String,
    /// `loom.<L>`.
    pub loom: String,
    /// Process id from the path.
    pub pid: i64,
    /// Thread id from the path.
    pub tid: i64,
    /// The v2 layout.
    pub v2: bool,
    /// The path shown in positions and messages, when not `obs`: on a rebuild, which reads
    /// extracted copies, the file first ingested.
    pub shown: Option<String>,
}

/// `dir/name`, plain or in a compressed form (`stream.json.gz`).
fn first_existing(dir: &Path, name: &str) -> Option<PathBuf> {
    std::iter::once("")
        .chain(COMPRESSED_SUFFIXES)
        .map(|c| dir.join(format!("{name}{c}")))
        .find(|p| p.is_file())
}

fn number_after(name: &str, prefix: &str) -> Option<i64> {
    name.strip_prefix(prefix)?.parse().ok()
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The stream an `.obs` file is, from its path: `.../loom.L/proc.P/thread.T/stream.obs`
/// (v3) or `.../loom.L/proc.P/thread.T.obs` (v2). `None` when the path says neither.
pub fn stream_of(obs: &Path) -> Option<StreamFile> {
    let name = file_name(obs);
    let plain = strip_compressed(&name);
    let parent = obs.parent()?;
    let (thread_dir, proc_dir, v2, tid) = if plain == "stream.obs" {
        let tid = number_after(&file_name(parent), "thread.")?;
        (Some(parent), parent.parent()?, false, tid)
    } else {
        let tid = number_after(plain.strip_suffix(".obs")?, "thread.")?;
        (None, parent, true, tid)
    };
    let pid = number_after(&file_name(proc_dir), "proc.")?;
    let loom_dir = proc_dir.parent()?;
    let loom = file_name(loom_dir);
    if !loom.starts_with("loom.") {
        return None;
    }
    let mut json = Vec::new();
    match thread_dir {
        Some(t) => json.extend(first_existing(t, "stream.json")),
        None => {
            json.extend(first_existing(proc_dir, &format!("thread.{tid}.json")));
            json.extend(first_existing(proc_dir, "metadata.json"));
        }
    }
    Some(StreamFile {
        obs: obs.to_path_buf(),
        json,
        relpath: format!("{loom}/proc.{pid}/thread.{tid}"),
        loom,
        pid,
        tid,
        v2,
        shown: None,
    })
}

fn sorted_dirs(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && file_name(p).starts_with(prefix))
        .collect();
    out.sort();
    out
}

/// The streams under `dir` (its `loom.*` folders), sorted as ovni sorts them: by loom
/// name, then process id, then thread id.
pub fn find_streams(dir: &Path) -> Vec<StreamFile> {
    let mut out = Vec::new();
    for loom in sorted_dirs(dir, "loom.") {
        for proc in sorted_dirs(&loom, "proc.") {
            for entry in std::fs::read_dir(&proc).into_iter().flatten().flatten() {
                let p = entry.path();
                let name = file_name(&p);
                if p.is_dir() && name.starts_with("thread.") {
                    if let Some(obs) = first_existing(&p, "stream.obs") {
                        out.extend(stream_of(&obs));
                    }
                } else if p.is_file() && strip_compressed(&name).ends_with(".obs") {
                    out.extend(stream_of(&p));
                }
            }
        }
    }
    sort_streams(&mut out);
    out
}

/// Sorts streams by loom name, process id, thread id.
pub fn sort_streams(s: &mut [StreamFile]) {
    s.sort_by(|a, b| (&a.loom, a.pid, a.tid, &a.obs).cmp(&(&b.loom, b.pid, b.tid, &b.obs)));
}

/// A mark type (`ovni.mark` of a stream's metadata, libovni >= 1.12).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkType {
    /// Title: the channel name (ovni's PCF type `100 + type`).
    pub title: String,
    /// `stack` (push/pop) rather than `single` (set).
    pub stack: bool,
    /// Value labels.
    pub labels: BTreeMap<i64, String>,
}

/// What one stream's metadata says (v3 `stream.json`, or v2 `metadata.json`).
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// Application id (the `1` of `TH 1.<tid>`).
    pub app_id: Option<i64>,
    /// MPI rank.
    pub rank: Option<i64>,
    /// The loom's CPUs: (index, physical id).
    pub loom_cpus: Vec<(i64, i64)>,
    /// Mark types by type number.
    pub marks: BTreeMap<i64, MarkType>,
    /// Models and versions required (`ovni.require`), `name=version`.
    pub require: Vec<String>,
    /// libovni version that wrote the stream.
    pub lib_version: Option<String>,
    /// The thread called `ovni_thread_free` (`finished: 1`).
    pub finished: Option<bool>,
    /// Problems found (reported as diagnostics).
    pub problems: Vec<String>,
}

/// The text of `path`, decompressed, its digest and size.
pub fn read_json_text(path: &Path) -> std::io::Result<(String, Digest256, u64)> {
    let mut input = Input::open(path)?;
    let mut bytes = Vec::new();
    (&mut input).take(MAX_JSON + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_JSON {
        return Err(std::io::Error::other(format!(
            "more than {} MiB of text: not read",
            MAX_JSON >> 20
        )));
    }
    let digest = input.finish()?;
    let len = bytes.len() as u64;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), digest, len))
}

/// JSON with `//` and `/* */` comments removed (outside strings), as ovni's parser allows.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn int(v: Option<&serde_json::Value>) -> Option<i64> {
    v.and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok())))
}

impl Meta {
    /// Adds what the JSON `text` (of the file `shown`) says.
    pub fn merge_json(&mut self, text: &str, shown: &str) {
        let v: serde_json::Value = match serde_json::from_str(&strip_comments(text)) {
            Ok(v) => v,
            Err(e) => {
                self.problems.push(format!("{shown}: not JSON ({e}): its metadata is not used"));
                return;
            }
        };
        // v3: everything under "ovni"; v2: at the top level.
        let o = v.get("ovni").unwrap_or(&v);
        if let Some(a) = int(o.get("app_id")) {
            self.app_id = Some(a);
        }
        if let Some(r) = int(o.get("rank")) {
            self.rank = Some(r);
        }
        if let Some(f) = int(o.get("finished")) {
            self.finished = Some(f != 0);
        }
        if let Some(l) = o.get("lib").and_then(|l| l.get("version")).and_then(|v| v.as_str()) {
            self.lib_version = Some(l.to_string());
        }
        if let Some(req) = o.get("require").and_then(|r| r.as_object()) {
            for (k, v) in req {
                self.require.push(format!("{k}={}", v.as_str().unwrap_or("?")));
            }
        }
        let cpus = o.get("loom_cpus").or_else(|| o.get("cpus")).and_then(|c| c.as_array());
        for c in cpus.into_iter().flatten() {
            match (int(c.get("index")), int(c.get("phyid"))) {
                (Some(i), Some(p)) => {
                    if !self.loom_cpus.iter().any(|(j, _)| *j == i) {
                        self.loom_cpus.push((i, p));
                    }
                }
                _ => self.problems.push(format!("{shown}: a CPU without index or phyid: {c}")),
            }
        }
        if let Some(marks) = o.get("mark").and_then(|m| m.as_object()) {
            for (ty, m) in marks {
                let Ok(t) = ty.trim().parse::<i64>() else {
                    self.problems.push(format!("{shown}: mark type '{ty}' is not a number"));
                    continue;
                };
                // Tabs read as spaces, as the Paraver ingest reads the title in the
                // emulator's .pcf (names then trim it, as there).
                let title = match m.get("title").and_then(|t| t.as_str()) {
                    Some(t) if !t.is_empty() => t.replace('\t', " "),
                    _ => {
                        // ovni's emulator refuses a mark type without a title; a channel
                        // named '' would be hard to ask for.
                        self.problems.push(format!(
                            "{shown}: mark type {t} has no title: its channel is named 'Mark {t}'"
                        ));
                        format!("Mark {t}")
                    }
                };
                let stack = m.get("chan_type").and_then(|t| t.as_str()) == Some("stack");
                let mut labels = BTreeMap::new();
                for (k, l) in m.get("labels").and_then(|l| l.as_object()).into_iter().flatten() {
                    // As the Paraver ingest reads a .pcf's VALUES line: tabs as spaces,
                    // trimmed, and an empty label no label.
                    let l = l.as_str().map(|l| l.replace('\t', " ").trim().to_string());
                    if let (Ok(k), Some(l)) = (k.trim().parse::<i64>(), l) {
                        if !l.is_empty() {
                            labels.insert(k, l);
                        }
                    }
                }
                let mt = MarkType { title, stack, labels };
                match self.marks.get_mut(&t) {
                    Some(old) => {
                        for p in merge_mark(old, &mt) {
                            self.problems.push(format!("{shown}: mark type {t}: {p}"));
                        }
                    }
                    None => {
                        self.marks.insert(t, mt);
                    }
                }
            }
        }
    }
}

/// Adds the declaration `new` of a mark type to the one known, `old`: its labels of values
/// not labelled yet. What disagrees (title, channel type, another label for a value, which
/// ovni's emulator refuses) is left as `old` has it, and said in the messages returned.
pub fn merge_mark(old: &mut MarkType, new: &MarkType) -> Vec<String> {
    let mut problems = Vec::new();
    if new.title != old.title {
        problems.push(format!(
            "declared with title '{}' where another thread's metadata says '{}': '{}' is kept",
            new.title, old.title, old.title
        ));
    }
    if new.stack != old.stack {
        let ty = |s: bool| if s { "stack" } else { "single" };
        problems.push(format!(
            "declared with channel type {} where another thread's metadata says {}: {} is kept",
            ty(new.stack),
            ty(old.stack),
            ty(old.stack)
        ));
    }
    for (v, l) in &new.labels {
        match old.labels.get(v) {
            None => {
                old.labels.insert(*v, l.clone());
            }
            Some(o) if o != l => problems.push(format!(
                "value {v} labelled '{l}' where another thread's metadata says '{o}': '{o}' is \
                 kept"
            )),
            Some(_) => {}
        }
    }
    problems
}
