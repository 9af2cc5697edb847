//! Zip archives written as PKWARE's APPNOTE lays them out (tests only; shared by the unit
//! tests of `zip.rs` and tests/cli.rs): stored, deflate, bzip2 and zstd members, data
//! descriptors, zip64 records.
use std::io::Write;

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const EOCD: u32 = 0x0605_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;

/// One member to write: name, text, method, sizes in a data descriptor after the data.
pub struct Entry<'a> {
    pub name: &'a str,
    pub text: &'a [u8],
    pub method: u16,
    pub descriptor: bool,
}

pub fn entry<'a>(name: &'a str, text: &'a [u8], method: u16) -> Entry<'a> {
    Entry { name, text, method, descriptor: false }
}

/// A zip archive of `entries`, as PKWARE's APPNOTE lays it out; with `zip64`, every
/// size and offset of the directory is in zip64 extra fields and a zip64 end record.
pub fn archive(entries: &[Entry<'_>], zip64: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut dir = Vec::new();
    for e in entries {
        let data = match e.method {
            8 => {
                let mut d =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                d.write_all(e.text).unwrap();
                d.finish().unwrap()
            }
            12 => {
                let mut d = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                d.write_all(e.text).unwrap();
                d.finish().unwrap()
            }
            93 => zstd::encode_all(e.text, 1).unwrap(),
            _ => e.text.to_vec(),
        };
        let mut crc = flate2::Crc::new();
        crc.update(e.text);
        let flags: u16 = if e.descriptor { 8 } else { 0 };
        let offset = out.len() as u32;
        let (c, u) = (data.len() as u32, e.text.len() as u32);
        let (lc, lu, lcrc) = if e.descriptor { (0, 0, 0) } else { (c, u, crc.sum()) };
        out.extend(LOCAL.to_le_bytes());
        out.extend(20u16.to_le_bytes());
        out.extend(flags.to_le_bytes());
        out.extend(e.method.to_le_bytes());
        out.extend([0u8; 4]); // time, date
        out.extend(lcrc.to_le_bytes());
        out.extend(lc.to_le_bytes());
        out.extend(lu.to_le_bytes());
        out.extend((e.name.len() as u16).to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(e.name.as_bytes());
        out.extend(&data);
        if e.descriptor {
            out.extend(0x0807_4b50u32.to_le_bytes());
            out.extend(crc.sum().to_le_bytes());
            out.extend(c.to_le_bytes());
            out.extend(u.to_le_bytes());
        }
        let mut extra = Vec::new();
        let (dc, du, doff) = if zip64 {
            extra.extend(1u16.to_le_bytes());
            extra.extend(24u16.to_le_bytes());
            extra.extend(u64::from(u).to_le_bytes());
            extra.extend(u64::from(c).to_le_bytes());
            extra.extend(u64::from(offset).to_le_bytes());
            (u32::MAX, u32::MAX, u32::MAX)
        } else {
            (c, u, offset)
        };
        dir.extend(CENTRAL.to_le_bytes());
        dir.extend([20, 0, 20, 0]);
        dir.extend(flags.to_le_bytes());
        dir.extend(e.method.to_le_bytes());
        dir.extend([0u8; 4]);
        dir.extend(crc.sum().to_le_bytes());
        dir.extend(dc.to_le_bytes());
        dir.extend(du.to_le_bytes());
        dir.extend((e.name.len() as u16).to_le_bytes());
        dir.extend((extra.len() as u16).to_le_bytes());
        dir.extend([0u8; 6]); // comment length, disk, internal attributes
        dir.extend([0u8; 4]); // external attributes
        dir.extend(doff.to_le_bytes());
        dir.extend(e.name.as_bytes());
        dir.extend(&extra);
    }
    let dir_offset = out.len() as u64;
    out.extend(&dir);
    let n = entries.len() as u16;
    if zip64 {
        let at = out.len() as u64;
        out.extend(ZIP64_EOCD.to_le_bytes());
        out.extend(44u64.to_le_bytes());
        out.extend([45, 0, 45, 0]);
        out.extend([0u8; 8]);
        out.extend(u64::from(n).to_le_bytes());
        out.extend(u64::from(n).to_le_bytes());
        out.extend((dir.len() as u64).to_le_bytes());
        out.extend(dir_offset.to_le_bytes());
        out.extend(ZIP64_LOCATOR.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(at.to_le_bytes());
        out.extend(1u32.to_le_bytes());
    }
    out.extend(EOCD.to_le_bytes());
    out.extend([0u8; 4]);
    let (n16, size32, off32) =
        if zip64 { (0xFFFF, u32::MAX, u32::MAX) } else { (n, dir.len() as u32, dir_offset as u32) };
    out.extend(n16.to_le_bytes());
    out.extend(n16.to_le_bytes());
    out.extend(size32.to_le_bytes());
    out.extend(off32.to_le_bytes());
    out.extend(5u16.to_le_bytes());
    out.extend(b"PK\x05\x06"); // a comment holding the end record's signature
    out
}
