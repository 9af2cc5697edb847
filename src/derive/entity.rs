//! The entities of a capture (the `entities` table) and their types: each name is
//! registered once, in order of first appearance, and keeps the first type it is declared
//! or written with (names are unique across types, SEMANTICS.md: another type written later
//! is a `type_conflict`); a type inferred (a core named as a source) gives way to one written.
//! The type decides which state machine an entity's events go through ([`Class`]).
use super::{Deriver, EntityInfo, Output};
use crate::ingest::Severity;
use crate::model::{Event, Pos, Sym};
use crate::Result;

/// What kind of state machine an entity type has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Process,
    Runnable,
    Semaphore,
    Signal,
    Core,
    Other,
}

fn class_of(ty: &str) -> Class {
    match ty {
        "T" | "I" | "ISR" => Class::Process,
        "R" => Class::Runnable,
        "SEM" => Class::Semaphore,
        "SIG" => Class::Signal,
        // `CPU`: the Paraver and ovni ingests' processors (a task event caused by one runs on
        // it, as a BTF core's does). In any case (`CORE`, `cpu`): a core declared so is
        // still a core, and no other type is spelled so.
        t if ["C", "Core", "CPU"].iter().any(|c| t.eq_ignore_ascii_case(c)) => Class::Core,
        _ => Class::Other,
    }
}

impl<O: Output> Deriver<O> {
    /// The entity id of `name`, registering it when new.
    pub(super) fn entity(&mut self, name: Sym, pos: Pos) -> usize {
        if let Some(&id) = self.entity_ids.get(&name) {
            return id;
        }
        let id = self.entities.len();
        let first_line = match pos {
            Pos::Line(n) => Some(n),
            _ => None,
        };
        self.entities.push(EntityInfo {
            name,
            entity_type: None,
            parent: None,
            first_line,
            btf_id: None,
            inferred: false,
            declared: false,
        });
        self.entity_ids.insert(name, id);
        id
    }

    /// Records `ty` as the type of `name` unless it already has one.
    pub(super) fn set_type(&mut self, name: Sym, ty: Sym, inferred: bool, pos: Pos) {
        let id = self.entity(name, pos);
        self.set_type_of(id, ty, inferred);
    }

    /// [`Self::set_type`] of the entity with id `id`.
    pub(super) fn set_type_of(&mut self, id: usize, ty: Sym, inferred: bool) {
        if let Some(e) = self.entities.get_mut(id) {
            if e.entity_type.is_none() || (e.inferred && !inferred) {
                e.entity_type = Some(ty);
                e.inferred = inferred;
            }
        }
    }

    /// Reports a target line giving `entity` another type than the one it has (declared or
    /// written first; names are unique across types, SEMANTICS.md). The entity keeps its
    /// first type; the line's own type drives this event's state machine, as before.
    pub(super) fn type_conflict(
        &mut self,
        id: usize,
        written: Sym,
        ev: &Event<'_>,
        ts: i64,
    ) -> Result<()> {
        let Some(e) = self.entities.get(id) else { return Ok(()) };
        let Some(known) = e.entity_type.filter(|&t| t != written && !e.inferred) else {
            return Ok(());
        };
        let k = &self.known;
        let same = |a: Sym, b: Sym| {
            [(k.isr_type, k.isr_type_old), (k.core_type, k.core_type_old)]
                .iter()
                .any(|&(x, y)| (a == x && b == y) || (a == y && b == x))
        };
        if same(known, written) {
            return Ok(());
        }
        let whence = if e.declared { "declared" } else { "first written" };
        let msg = format!(
            "{} is written as type {} here but was {whence} as {}: names are unique across \
             types; the entity keeps type {}, this event is read as a {} event",
            ev.target,
            ev.target_type,
            self.names.resolve(known),
            self.names.resolve(known),
            ev.target_type
        );
        self.diag(Severity::Warning, "type_conflict", ev.pos, ts, msg)
    }

    pub(super) fn type_of(&self, name: Sym) -> Option<Sym> {
        let id = self.entity_ids.get(&name)?;
        self.entities.get(*id)?.entity_type
    }

    pub(super) fn class(&mut self, ty: Sym) -> Class {
        if let Some(&c) = self.classes.get(&ty) {
            return c;
        }
        let c = class_of(self.names.resolve(ty));
        self.classes.insert(ty, c);
        c
    }

    pub(super) fn is_core(&mut self, name: Sym) -> bool {
        match self.type_of(name) {
            Some(t) => self.class(t) == Class::Core,
            None => false,
        }
    }
}
