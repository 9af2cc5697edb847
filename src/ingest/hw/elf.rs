//! Addresses to names: the `.symtab` of an ELF file (`--hw-elf`), functions (`STT_FUNC`) and
//! variables (`STT_OBJECT`, `STT_COMMON`) with their sizes. An address inside
//! `[value, value + size)` is that symbol (a function at an offset shows `+0x..`); a symbol of
//! size 0 covers its own address only. On ARM the Thumb bit of a function's value is cleared.
use object::{Object, ObjectSymbol, SymbolKind};

/// Most symbols kept: a debug build of a large application has a few hundred thousand.
pub const MAX_SYMBOLS: usize = 1 << 21;

/// Symbols overlapping one address looked through (aliases, nested objects).
const OVERLAP_SCAN: usize = 16;

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
        Ok(Symbols::new(syms, dropped))
    }

    /// A table of `syms` (any order).
    pub fn new(mut syms: Vec<Symbol>, dropped: usize) -> Symbols {
        // By address; at one address the larger first, then by name: a stable choice among
        // aliases (`foo` and `__foo`).
        syms.sort_by(|a, b| {
            a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)).then(a.name.cmp(&b.name))
        });
        syms.dedup_by(|a, b| a.addr == b.addr && a.size == b.size && a.func == b.func);
        Symbols { syms, dropped }
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
    pub fn lookup(&self, addr: u64) -> Option<Hit<'_>> {
        let end = self.syms.partition_point(|s| s.addr <= addr);
        let from = end.saturating_sub(OVERLAP_SCAN);
        let found = self.syms.get(from..end)?.iter().rev().find(|s| {
            let offset = addr - s.addr;
            offset < s.size || offset == 0
        })?;
        Some(Hit { name: &found.name, offset: addr - found.addr, func: found.func })
    }

    /// The address of the symbol named `name` (the first, by address).
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.syms.iter().find(|s| s.name == name).map(|s| s.addr)
    }
}
