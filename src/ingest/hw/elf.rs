//! Addresses to names: the `.symtab` of an ELF file (`--hw-elf`), functions (`STT_FUNC`) and
//! variables (`STT_OBJECT`, `STT_COMMON`) with their sizes. An address inside
//! `[value, value + size)` is that symbol (a function at an offset shows `+0x..`); a symbol of
//! size 0 covers its own address only. On ARM the Thumb bit of a function's value is cleared.
use object::{Object, ObjectSymbol, SymbolKind};

/// Most symbols kept: a debug build of a large application has a few hundred thousand.
pub const MAX_SYMBOLS: usize = 1 << 21;

/// Enclosing symbols followed from one address (nesting deeper than this is not real: the
/// lookup stays bounded on a pathological table).
const MAX_NESTING: usize = 1024;

/// One symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Start address.
    pub addr: u64,
    /// Size in bytes (0: unknown).
    pub size: u64,
    /// Name.
    pub name: String,
    /// A function (else a variable).
    pub func: bool,
}

/// An address resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit<'a> {
    /// The symbol's name.
    pub name: &'a str,
    /// Bytes from its start.
    pub offset: u64,
    /// A function.
    pub func: bool,
}

/// A symbol table sorted by address.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    syms: Vec<Symbol>,
    /// For each symbol, the nearest one before it whose extent covers its start.
    parent: Vec<Option<usize>>,
    /// For each symbol, the largest end of it and those before it.
    reach: Vec<u64>,
    /// The ELF has no `.symtab` (stripped).
    pub no_symtab: bool,
    /// Symbols beyond [`MAX_SYMBOLS`] that were not kept.
    pub dropped: usize,
}

impl Symbols {
    /// The functions and variables of an ELF image; the error says why it is not one.
    pub fn from_elf(data: &[u8]) -> std::result::Result<Symbols, String> {
        let file =
            object::File::parse(data).map_err(|e| format!("not a readable ELF file: {e}"))?;
        if !matches!(file.format(), object::BinaryFormat::Elf) {
            return Err("not an ELF file".into());
        }
        let thumb = matches!(file.architecture(), object::Architecture::Arm);
        let mut syms = Vec::new();
        let mut dropped = 0;
        for s in file.symbols() {
            let func = match s.kind() {
                SymbolKind::Text => true,
                SymbolKind::Data => false,
                _ => continue,
            };
            if s.is_undefined() {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            if name.is_empty() {
                continue;
            }
            if syms.len() >= MAX_SYMBOLS {
                dropped += 1;
                continue;
            }
            let addr = if func && thumb { s.address() & !1 } else { s.address() };
            syms.push(Symbol { addr, size: s.size(), name: name.to_string(), func });
        }
        let mut table = Symbols::new(syms, dropped);
        table.no_symtab = file.symbol_table().is_none();
        Ok(table)
    }

    /// A table of `syms` (any order).
    pub fn new(mut syms: Vec<Symbol>, dropped: usize) -> Symbols {
        // By address; at one address the larger first, then by name: a stable choice among
        // aliases (`foo` and `__foo`).
        syms.sort_by(|a, b| {
            a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)).then(a.name.cmp(&b.name))
        });
        syms.dedup_by(|a, b| a.addr == b.addr && a.size == b.size && a.func == b.func);
        // The enclosing symbol of each: a stack of the symbols still open at its start.
        let mut parent = Vec::with_capacity(syms.len());
        let mut reach = Vec::with_capacity(syms.len());
        let mut open: Vec<usize> = Vec::new();
        let mut far = 0u64;
        for (i, s) in syms.iter().enumerate() {
            while open.last().and_then(|&j| syms.get(j)).is_some_and(|o| end(o) <= s.addr) {
                open.pop();
            }
            parent.push(open.last().copied());
            open.push(i);
            far = far.max(end(s));
            reach.push(far);
        }
        Symbols { syms, parent, reach, dropped, no_symtab: false }
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The symbol holding `addr`: the nearest start at or below it whose extent covers it.
    /// A symbol that does not cover `addr` is skipped to the one enclosing its start: those
    /// between end before its start, so before `addr` too.
    pub fn lookup(&self, addr: u64) -> Option<Hit<'_>> {
        let mut i = self.syms.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        for _ in 0..MAX_NESTING {
            if self.reach.get(i).is_none_or(|&r| r <= addr) {
                return None;
            }
            let s = self.syms.get(i)?;
            if addr < end(s) {
                return Some(Hit { name: &s.name, offset: addr - s.addr, func: s.func });
            }
            i = (*self.parent.get(i)?)?;
        }
        None
    }

    /// The address of the symbol named `name` (the first, by address).
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.syms.iter().find(|s| s.name == name).map(|s| s.addr)
    }
}

/// The first address after `s` (a symbol of size 0 covers its own address).
fn end(s: &Symbol) -> u64 {
    s.addr.saturating_add(s.size.max(1))
}
