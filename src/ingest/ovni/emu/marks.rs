//! libovni marks (`OM[`, `OM]`, `OM=`) on ovni's model: each mark type a channel of the
//! thread and CPU rows, named as the emulator's Paraver output names it ([`paraver_names`]),
//! single or stacked values, what ovni refuses said and applied all the same.
use super::*;

impl Model {
    /// Names the mark channels and renames the built-in ones a mark shares a title with, as
    /// the Paraver ingest names the types of the emulator's thread.pcf and cpu.pcf, where the
    /// channels of the runtime models `models` (as [`runtime::MODELS`]) are.
    pub(super) fn name_channels(&mut self, models: [bool; runtime::MODELS.len()]) {
        for (side, cpu) in [false, true].into_iter().enumerate() {
            let mut builtin: Vec<(i64, &'static str)> =
                if cpu { CPU_TYPES.to_vec() } else { TH_TYPES.to_vec() };
            for ((_, specs), on) in runtime::MODELS.iter().zip(models) {
                if on {
                    builtin
                        .extend(specs.iter().map(|c| (c.prv, if cpu { c.cpu } else { c.thread })));
                }
            }
            let (renamed, names) = paraver_names(&builtin, &self.marks);
            if let Some(r) = self.renamed.get_mut(side) {
                *r = renamed;
            }
            for (ty, name) in names {
                if let Some(n) = self.mark_names.entry(ty).or_default().get_mut(side) {
                    *n = name;
                }
            }
        }
    }

    pub(super) fn mark(
        &mut self,
        th: usize,
        op: u8,
        d: Option<&Decoded>,
        at: At,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let (Some(value), Some(ty)) =
            (d.and_then(|d| d.int("value")), d.and_then(|d| d.int("type")))
        else {
            return Ok(());
        };
        let (Ok(value), Ok(ty)) = (i64::try_from(value), i64::try_from(ty)) else { return Ok(()) };
        if !self.marks.contains_key(&ty) {
            if self.unknown_marks >= MAX_UNKNOWN_MARK_TYPES {
                if self.said.insert("marks_full".into()) {
                    let msg = format!(
                        "more than {MAX_UNKNOWN_MARK_TYPES} mark types that no metadata declares: \
                         the events of further undeclared types are kept, they change no channel"
                    );
                    warn(sink, "too_many_mark_types", at, msg)?;
                }
                return Ok(());
            }
            self.unknown_marks += 1;
            // A declared mark may be titled `Mark <ty>` (no built-in channel is, renamed or
            // not): the type is then appended, as for two declared types titled alike, so
            // that the two never share a channel.
            let plain = format!("Mark {ty}");
            let taken = self.mark_names.values().flatten().any(|n| *n == plain);
            let name = if taken { format!("{plain} ({})", ty.saturating_add(100)) } else { plain };
            if self.said.insert(format!("mark{ty}")) {
                let msg = format!(
                    "mark type {ty} is not declared in any stream's metadata (ovni.mark): its \
                     events are kept, its channel is named '{name}'"
                );
                warn(sink, "unknown_mark_type", at, msg)?;
            }
            self.mark_names.insert(ty, [name.clone(), name.clone()]);
            self.marks
                .insert(ty, MarkType { title: name, stack: op != b'=', labels: BTreeMap::new() });
        }
        if value == 0 {
            let msg =
                format!("{} mark value 0 (type {ty}): ovni refuses it; ignored", self.th_name(th));
            return warn(sink, "bad_mark", at, msg);
        }
        let name = self.th_name(th);
        // ovni's emulator sets only a single channel and pushes and pops only a stack one
        // (`chan_set`/`chan_push`/`chan_pop` refuse the other type, and it stops): said, and
        // applied all the same (a set replaces the whole stack).
        let stack = self.marks.get(&ty).is_some_and(|m| m.stack);
        if stack == (op == b'=') {
            let (what, kind) = if stack { ("sets", "stack") } else { ("pushes or pops", "single") };
            let msg = format!(
                "{name} {what} mark {value} of type {ty}, a {kind} channel (metadata chan_type; \
                 ovni's emulator refuses it and stops): applied all the same"
            );
            warn(sink, "bad_mark", at, msg)?;
        }
        let Some(t) = self.threads.get_mut(th) else { return Ok(()) };
        let stack = t.marks.entry(ty).or_default();
        match op {
            b'[' if stack.len() >= MAX_MARK_STACK => {
                // Its pop is then a pop of nothing pushed (counted, not a bad_mark).
                *self.mark_overflow.entry((th, ty)).or_default() += 1;
                let msg = format!(
                    "{name} pushes mark {value} of type {ty} on a stack of {MAX_MARK_STACK} \
                     (ovni's limit, where its emulator stops): not pushed, nor popped later"
                );
                return warn(sink, "mark_stack_full", at, msg);
            }
            b']' if self.mark_overflow.get(&(th, ty)).is_some_and(|&n| n > 0) => {
                if let Some(n) = self.mark_overflow.get_mut(&(th, ty)) {
                    *n -= 1;
                }
            }
            b'[' => stack.push(value),
            b'=' => {
                self.mark_overflow.remove(&(th, ty));
                stack.clear();
                stack.push(value);
            }
            _ => match stack.last() {
                Some(&top) if top == value => {
                    stack.pop();
                }
                top => {
                    let msg = format!(
                        "{name} pops mark {value} of type {ty} but {} is on top: the top is \
                         popped",
                        top.map_or("nothing".into(), |v| v.to_string())
                    );
                    stack.pop();
                    return warn(sink, "bad_mark", at, msg);
                }
            },
        }
        Ok(())
    }

    pub(super) fn mark_value(&self, th: usize, ty: i64) -> i128 {
        self.threads
            .get(th)
            .and_then(|t| t.marks.get(&ty))
            .and_then(|s| s.last())
            .map_or(0, |&v| i128::from(v))
    }
}

/// The channel names the Paraver ingest gives the types of one .pcf of the emulator (thread.pcf
/// or cpu.pcf): ovni's own channels `builtin` (type, title) and the mark types, Paraver types
/// `100 + type` labelled with their titles, trimmed. An empty title is the number, and a title
/// two types of the file share (two marks, or a mark and an own channel), one of tracedb's own
/// channel names (`state`, `running`, `value`) or another number (cpu.pcf leaves its types 1-3
/// unnamed) gets the type appended (`Phase (101)`, `Thread: thread state (4)`, `1 (101)`), so
/// two types never share a channel. Returns the own channels so renamed and each mark type's
/// name.
pub(super) fn paraver_names(
    builtin: &[(i64, &'static str)],
    marks: &BTreeMap<i64, MarkType>,
) -> (HashMap<&'static str, String>, BTreeMap<i64, String>) {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    for (_, title) in builtin {
        *seen.entry(title).or_default() += 1;
    }
    for m in marks.values() {
        *seen.entry(m.title.trim()).or_default() += 1;
    }
    let name = |title: &str, prv_type: i64| {
        let shared = seen.get(title).is_some_and(|n| *n > 1);
        crate::ingest::prv::pcf::channel_name(title, i128::from(prv_type), shared)
    };
    let renamed = builtin
        .iter()
        .filter_map(|&(ty, title)| Some((title, name(title, ty))).filter(|(t, n)| t != n))
        .collect();
    let names = marks.iter().map(|(ty, m)| (*ty, name(m.title.trim(), ty.saturating_add(100))));
    (renamed, names.collect())
}
