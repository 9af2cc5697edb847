//! The traced system as the streams' metadata describes it, before any event is read: each
//! thread's metadata and the one table of mark types, the clock offsets, the looms and their
//! CPUs (numbered as ovni's emulator numbers them), and the threads' names.
use super::*;

/// Each stream's metadata (each JSON file read once: a v2 process's metadata.json is shared
/// by its threads), and the mark types of all threads as one table. The files read are added
/// to `outcome`'s companions.
pub(super) fn read_metadata<R>(
    inputs: &[(StreamFile, R)],
    shower: &Shower,
    outcome: &mut Outcome,
    sink: &mut dyn Sink,
) -> Result<(Vec<Meta>, BTreeMap<i64, meta::MarkType>)> {
    let mut read_json: HashMap<PathBuf, String> = HashMap::new();
    let mut metas = Vec::new();
    let mut marks: BTreeMap<i64, meta::MarkType> = BTreeMap::new();
    for (s, _) in inputs {
        let mut m = Meta::default();
        sink.source_file(&shown_of(s));
        if s.json.is_empty() {
            sink.diagnostic(Diagnostic {
                severity: Severity::Warning,
                kind: "missing_metadata",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{}: no stream.json (or v2 metadata.json): the thread is named with app id \
                     1, its loom's CPUs are those other streams declare",
                    s.relpath
                ),
            })?;
        }
        for j in &s.json {
            if !read_json.contains_key(j) {
                match meta::read_json_text(j) {
                    Ok((text, digest, len)) => {
                        outcome.companions.push(Companion {
                            path: j.clone(),
                            digest,
                            text_bytes: len,
                        });
                        read_json.insert(j.clone(), text);
                    }
                    Err(e) => {
                        let msg = format!("{}: {e}: its metadata is not used", shower.show(j));
                        bad_metadata(sink, Pos::None, msg)?;
                        read_json.insert(j.clone(), String::new());
                    }
                }
            }
            if let Some(text) = read_json.get(j).filter(|t| !t.is_empty()) {
                m.merge_json(text, &shower.show(j));
            }
        }
        for p in std::mem::take(&mut m.problems) {
            bad_metadata(sink, Pos::None, p)?;
        }
        // The mark types of all threads make one table, as in ovni's emulator (a thread's
        // `ovni_mark_label` calls are in its own metadata): labels add up; a declaration
        // that disagrees with an earlier one is said, and the earlier one kept.
        for (t, mt) in &m.marks {
            match marks.get_mut(t) {
                None => {
                    marks.insert(*t, mt.clone());
                }
                Some(old) => {
                    for p in meta::merge_mark(old, mt) {
                        bad_metadata(
                            sink,
                            Pos::None,
                            format!("{}: mark type {t}: {p}", s.relpath),
                        )?;
                    }
                }
            }
        }
        if m.finished == Some(false) {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "unfinished_stream",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{}: its metadata says the thread did not finish (no ovni_thread_free): \
                     events after the last flush may be missing",
                    s.relpath
                ),
            })?;
        }
        metas.push(m);
    }
    Ok((metas, marks))
}

/// The per-loom clock offsets of the `clock-offsets.txt` beside the looms (the file, when
/// there is one, added to `outcome`'s companions), checked against the looms as ovni's
/// emulator checks them.
pub(super) fn read_offsets<R>(
    inputs: &[(StreamFile, R)],
    loom_names: &[String],
    shower: &Shower,
    outcome: &mut Outcome,
    sink: &mut dyn Sink,
) -> Result<HashMap<String, i64>> {
    let root = inputs.first().and_then(|(s, _)| root_of(s));
    let (offsets, off_file) = match &root {
        Some(r) => {
            let path = r.join(CLOCK_OFFSETS);
            clock_offsets(&path, &shower.show(&path), sink)?
        }
        None => (HashMap::new(), None),
    };
    let off_path = root.as_ref().map(|r| shower.show(&r.join(CLOCK_OFFSETS)));
    let had_offsets = off_file.is_some();
    outcome.companions.extend(off_file);
    // As ovni's emulator: several looms without offsets is said (their clocks may not
    // agree), and an offset whose host is no loom's (which it refuses) too.
    if let Some(shown) = &off_path {
        sink.source_file(shown);
        if !had_offsets && loom_names.len() > 1 {
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "no_clock_offsets",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "{} looms and no {CLOCK_OFFSETS} (ovnisync's table) beside them: each \
                     loom's clocks are taken as they are, which aligns them only if the nodes \
                     share a clock",
                    loom_names.len()
                ),
            })?;
        }
        let mut hosts: Vec<&String> = offsets.keys().collect();
        hosts.sort();
        for h in hosts {
            let one = HashMap::from([(h.clone(), 0i64)]);
            if !loom_names.iter().any(|l| offset_of(&one, l).is_some()) {
                let msg =
                    format!("{shown}: host '{h}' is no loom's (loom.{h}): its offset is not used");
                bad_metadata(sink, Pos::None, msg)?;
            }
        }
    }
    Ok(offsets)
}

/// The CPUs of the looms `loom_names` (sorted by name), each loom's sorted by physical id then
/// its virtual CPU, declared as entities, and the looms that index them.
pub(super) fn loom_cpus<R>(
    inputs: &[(StreamFile, R)],
    metas: &[Meta],
    loom_names: &[String],
    sink: &mut dyn Sink,
) -> Result<(Vec<emu::Cpu>, Vec<emu::Loom>)> {
    let mut cpus = Vec::new();
    let mut looms = Vec::new();
    for (li, name) in loom_names.iter().enumerate() {
        let mut list: Vec<(i64, i64)> = Vec::new();
        for ((s, _), m) in inputs.iter().zip(metas) {
            if &s.loom == name {
                for &(index, phyid) in &m.loom_cpus {
                    // One CPU per index and per physical id (ovni's emulator refuses a second
                    // CPU with a phyid, and a loom whose streams disagree): the first kept.
                    let clash = list.iter().find(|&&(i, p)| (i == index) != (p == phyid));
                    if let Some(&(i, p)) = clash {
                        sink.source_file(&shown_of(s));
                        let msg = format!(
                            "{}: loom_cpus lists CPU index {index} with phyid {phyid}, where the \
                             loom's metadata already has index {i} with phyid {p}: not used",
                            s.relpath
                        );
                        bad_metadata(sink, Pos::None, msg)?;
                    } else if !list.contains(&(index, phyid)) {
                        list.push((index, phyid));
                    }
                }
            }
        }
        list.sort_by_key(|(i, p)| (*p, *i));
        let mut loom = emu::Loom::default();
        for (index, phyid) in list {
            loom.by_index.insert(index, cpus.len());
            let gi = cpus.len() as i64;
            cpus.push(Model::cpu(format!("CPU {li}.{phyid}"), gi));
        }
        loom.vcpu = cpus.len();
        let gi = cpus.len() as i64;
        cpus.push(Model::cpu(format!("vCPU {li}.*"), gi));
        looms.push(loom);
    }
    for c in &cpus {
        sink.declare_entity(&c.name, Some("CPU"), None);
    }
    for c in &cpus {
        sink.declare_entity(&c.name, Some("CPU"), None);
    }
    Ok((cpus, looms))
}

/// The threads' names, one per stream: `TH <app>.<tid>`, unique.
pub(super) fn thread_names<R>(
    inputs: &[(StreamFile, R)],
    metas: &[Meta],
    sink: &mut dyn Sink,
) -> Result<Vec<String>> {
    // ovni's thread label `TH <app>.<tid>` repeats when tids do across looms: as the
    // Paraver importer does with the emulator's rows, each such thread gets its row id
    // (`1.1.<row>`, rows in stream order) appended, so both ingests name it alike.
    let labels: Vec<String> = inputs
        .iter()
        .zip(metas)
        .map(|((s, _), m)| format!("TH {}.{}", m.app_id.unwrap_or(1), s.tid))
        .collect();
    let mut names = Vec::new();
    for ((row, l), (s, _)) in labels.iter().enumerate().zip(inputs) {
        if labels.iter().filter(|o| *o == l).count() > 1 {
            let name = format!("{l} (1.1.{})", row + 1);
            sink.source_file(&shown_of(s));
            sink.diagnostic(Diagnostic {
                severity: Severity::Info,
                kind: "duplicate_row_label",
                pos: Pos::None,
                ts: None,
                message: format!(
                    "thread label '{l}' is also another stream's: this one is named '{name}'"
                ),
            })?;
            names.push(name);
        } else {
            names.push(l.clone());
        }
    }
    Ok(names)
}
