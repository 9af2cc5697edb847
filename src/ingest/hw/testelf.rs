//! A minimal ELF32 image with a `.symtab` (tests only; shared by the unit tests and
//! tests/hw.rs): what a linker writes for an embedded target, less the code.

/// One symbol: name, value, size, whether it is a function (else a variable).
pub type TestSymbol<'a> = (&'a str, u32, u32, bool);

/// An ELF32 executable of `machine` (40 ARM, 20 PowerPC), little- or big-endian, whose
/// `.symtab` holds `syms` (absolute symbols, global).
pub fn elf32(machine: u16, big_endian: bool, syms: &[TestSymbol<'_>]) -> Vec<u8> {
    let u16b = |v: u16| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32b = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    // .strtab
    let mut strtab = vec![0u8];
    let mut names = Vec::new();
    for (n, ..) in syms {
        names.push(strtab.len() as u32);
        strtab.extend_from_slice(n.as_bytes());
        strtab.push(0);
    }
    while strtab.len() % 4 != 0 {
        strtab.push(0);
    }
    // .symtab: the null symbol, then ours.
    let mut symtab = vec![0u8; 16];
    for ((_, value, size, func), name) in syms.iter().zip(&names) {
        symtab.extend_from_slice(&u32b(*name));
        symtab.extend_from_slice(&u32b(*value));
        symtab.extend_from_slice(&u32b(*size));
        symtab.push(if *func { 0x12 } else { 0x11 });
        symtab.push(0);
        symtab.extend_from_slice(&u16b(0xfff1));
    }
    let shstrtab = b"\0.strtab\0.symtab\0.shstrtab\0\0\0\0\0".to_vec();
    let strtab_off = 52u32;
    let symtab_off = strtab_off + strtab.len() as u32;
    let shstr_off = symtab_off + symtab.len() as u32;
    let sh_off = shstr_off + shstrtab.len() as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, if big_endian { 2 } else { 1 }, 1, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&u16b(2)); // ET_EXEC
    out.extend_from_slice(&u16b(machine));
    out.extend_from_slice(&u32b(1));
    out.extend_from_slice(&u32b(0)); // entry
    out.extend_from_slice(&u32b(0)); // phoff
    out.extend_from_slice(&u32b(sh_off));
    out.extend_from_slice(&u32b(0)); // flags
    out.extend_from_slice(&u16b(52));
    out.extend_from_slice(&u16b(0));
    out.extend_from_slice(&u16b(0));
    out.extend_from_slice(&u16b(40));
    out.extend_from_slice(&u16b(4)); // shnum
    out.extend_from_slice(&u16b(3)); // shstrndx
    out.extend_from_slice(&strtab);
    out.extend_from_slice(&symtab);
    out.extend_from_slice(&shstrtab);
    // Section headers: null, .strtab (1), .symtab (2), .shstrtab (3).
    let sh = |out: &mut Vec<u8>, f: [u32; 10]| {
        for v in f {
            out.extend_from_slice(&u32b(v));
        }
    };
    sh(&mut out, [0; 10]);
    sh(&mut out, [1, 3, 0, 0, strtab_off, strtab.len() as u32, 0, 0, 1, 0]);
    sh(&mut out, [9, 2, 0, 0, symtab_off, symtab.len() as u32, 1, 1, 4, 16]);
    sh(&mut out, [17, 3, 0, 0, shstr_off, shstrtab.len() as u32, 0, 0, 1, 0]);
    out
}
