//! A zip archive holding one trace file, read as a stream.
//!
//! The central directory at the end of the file says which member is the trace and how it
//! is stored; it is read first (with seeks, before the reading thread starts). The member is
//! then decoded from the same sequential read that hashes the whole file: the bytes before
//! its local header are skipped, its data is inflated (deflate) or taken as it is (stored),
//! and its CRC-32 and size are checked against the directory at its end, so a damaged or cut
//! archive is an error and never a shorter trace.
//!
//! Layout (PKWARE APPNOTE 6.3): local file header `PK\x03\x04` (30 bytes, then the name and
//! extra field) and data per member; central directory entries `PK\x01\x02` (46 bytes, then
//! name, extra field and comment); end of central directory `PK\x05\x06` (22 bytes and a
//! comment of up to 65,535 bytes); archives past 4 GiB or 65,535 entries put the real values
//! in a zip64 end record `PK\x06\x06`, found through its locator `PK\x06\x07`, and in the
//! entries' zip64 extra field (id 1).
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// The file member of a zip archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its name in the archive.
    pub name: String,
    /// 0 stored, 8 deflate, 12 bzip2, 93 zstd.
    pub method: u16,
    /// CRC-32 of the uncompressed bytes.
    pub crc32: u32,
    /// Bytes of data in the archive.
    pub compressed: u64,
    /// Bytes once uncompressed.
    pub size: u64,
    /// Offset of its local file header.
    pub local_offset: u64,
    /// Read from its local header because the archive has no central directory (cut
    /// short): the sizes and CRC-32 are those of the local header, `None` when it defers them
    /// to a data descriptor after the data.
    pub cut: Option<Cut>,
}

/// What the local header of a cut archive's first member knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The header gives the CRC-32 and sizes (no data descriptor).
    pub sizes_known: bool,
}

const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

/// Largest central directory read (a trace's archive has a handful of entries).
const MAX_DIRECTORY: u64 = 16 << 20;

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// The little-endian integer at `at` (0 past the end: the checks that follow catch it).
fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).and_then(|s| s.try_into().ok()).map_or(0, u16::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_le_bytes)
}

fn read_at(file: &mut File, at: u64, len: usize) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(at))?;
    let mut b = vec![0u8; len];
    file.read_exact(&mut b).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            bad(format!("zip archive cut short: its directory points past its end (byte {at})"))
        } else {
            e
        }
    })?;
    Ok(b)
}

/// Reads the central directory of the zip archive `file` and returns its one file member.
/// Directories and macOS's `__MACOSX/` resource forks are not members that count. The file
/// position is left anywhere: seek before reading on.
pub fn member(file: &mut File) -> io::Result<Member> {
    let len = file.metadata()?.len();
    let tail_len = len.min(22 + 65_535);
    let tail_start = len - tail_len;
    let tail = read_at(file, tail_start, usize::try_from(tail_len).unwrap_or(0))?;
    // The last end record whose comment reaches the end of the file (a comment may itself
    // hold the signature's bytes).
    let eocd = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| {
            u32_at(&tail, i) == EOCD && i + 22 + usize::from(u16_at(&tail, i + 20)) == tail.len()
        })
        .or_else(|| (0..tail.len().saturating_sub(21)).rev().find(|&i| u32_at(&tail, i) == EOCD));
    let Some(eocd) = eocd else {
        return first_local_member(file);
    };
    let mut entries = u64::from(u16_at(&tail, eocd + 10));
    let mut dir_size = u64::from(u32_at(&tail, eocd + 12));
    let mut dir_offset = u64::from(u32_at(&tail, eocd + 16));
    if entries == 0xFFFF || dir_size == 0xFFFF_FFFF || dir_offset == 0xFFFF_FFFF {
        let loc = eocd.checked_sub(20).filter(|&l| u32_at(&tail, l) == ZIP64_LOCATOR);
        if let Some(l) = loc {
            let at = u64_at(&tail, l + 8);
            let rec = read_at(file, at, 56)?;
            if u32_at(&rec, 0) != ZIP64_EOCD {
                return Err(bad(format!("zip64 end of central directory not found at byte {at}")));
            }
            entries = u64_at(&rec, 32);
            dir_size = u64_at(&rec, 40);
            dir_offset = u64_at(&rec, 48);
        }
    }
    if dir_size > MAX_DIRECTORY {
        return Err(bad(format!(
            "zip central directory of {dir_size} bytes ({entries} entries): not a trace's archive"
        )));
    }
    let dir = read_at(file, dir_offset, usize::try_from(dir_size).unwrap_or(0))?;
    let mut files = Vec::new();
    let mut at = 0usize;
    while at + 46 <= dir.len() && u32_at(&dir, at) == CENTRAL {
        let flags = u16_at(&dir, at + 8);
        let method = u16_at(&dir, at + 10);
        let crc32 = u32_at(&dir, at + 16);
        let mut compressed = u64::from(u32_at(&dir, at + 20));
        let mut size = u64::from(u32_at(&dir, at + 24));
        let name_len = usize::from(u16_at(&dir, at + 28));
        let extra_len = usize::from(u16_at(&dir, at + 30));
        let comment_len = usize::from(u16_at(&dir, at + 32));
        let mut local_offset = u64::from(u32_at(&dir, at + 42));
        let name_at = at + 46;
        let name = dir.get(name_at..name_at + name_len).unwrap_or_default();
        let name = String::from_utf8_lossy(name).into_owned();
        let extra = dir.get(name_at + name_len..name_at + name_len + extra_len).unwrap_or_default();
        // zip64 extra field: the 64-bit values of the 32-bit fields that are all ones, in
        // the order size, compressed size, offset.
        let mut x = 0;
        while x + 4 <= extra.len() {
            let id = u16_at(extra, x);
            let n = usize::from(u16_at(extra, x + 2));
            if id == 1 {
                let mut v = x + 4;
                for field in [&mut size, &mut compressed, &mut local_offset] {
                    if *field == 0xFFFF_FFFF && v + 8 <= x + 4 + n {
                        *field = u64_at(extra, v);
                        v += 8;
                    }
                }
            }
            x += 4 + n;
        }
        at = name_at + name_len + extra_len + comment_len;
        if name.ends_with('/') || name.starts_with("__MACOSX/") {
            continue;
        }
        if flags & 1 != 0 {
            return Err(bad(format!("zip member {name} is encrypted: not read")));
        }
        files.push(Member { name, method, crc32, compressed, size, local_offset, cut: None });
    }
    if at < dir.len() && files.len() <= 1 {
        // The directory is damaged where it should go on: its first member, from the
        // local header at the start, is what can still be read.
        return first_local_member(file);
    }
    match files.len() {
        1 => {}
        0 => return Err(bad("zip archive holds no file")),
        n => {
            let mut names: Vec<&str> = files.iter().take(5).map(|m| m.name.as_str()).collect();
            if n > 5 {
                names.push("...");
            }
            return Err(bad(format!(
                "zip archive holds {n} files ({}): tracedb reads a zip of one trace file; unzip \
                 it and ingest the trace (a Paraver .prv finds its .pcf and .row beside it)",
                names.join(", ")
            )));
        }
    }
    let m = files.swap_remove(0);
    check_method(&m)?;
    Ok(m)
}

fn check_method(m: &Member) -> io::Result<()> {
    if ![0, 8, 12, 93].contains(&m.method) {
        return Err(bad(format!(
            "zip member {} is compressed with method {} (tracedb reads stored, deflate, bzip2 \
             and zstd members): unzip it first",
            m.name, m.method
        )));
    }
    Ok(())
}

/// The first file member of an archive without its central directory (a cut download or
/// copy), from the local headers at its start (directories and `__MACOSX/` entries before it
/// are stepped over): what its data holds can still be read.
fn first_local_member(file: &mut File) -> io::Result<Member> {
    let no_directory =
        || bad("zip archive without its end of central directory (cut short, or not a zip)");
    let mut at = 0u64;
    for _ in 0..1000 {
        let header = read_at(file, at, 30).map_err(|_| no_directory())?;
        if u32_at(&header, 0) != LOCAL {
            return Err(no_directory());
        }
        let flags = u16_at(&header, 6);
        let name_len = usize::from(u16_at(&header, 26));
        let extra_len = u64::from(u16_at(&header, 28));
        let name = read_at(file, at + 30, name_len).map_err(|_| no_directory())?;
        let name = String::from_utf8_lossy(&name).into_owned();
        let (crc32, compressed, size) =
            (u32_at(&header, 14), u32_at(&header, 18), u32_at(&header, 22));
        // Sizes deferred to a data descriptor (bit 3), or in a zip64 extra field: unknown.
        let sizes_known = flags & 8 == 0 && compressed != 0xFFFF_FFFF && size != 0xFFFF_FFFF;
        if (name.ends_with('/') || name.starts_with("__MACOSX/")) && sizes_known {
            at += 30 + name_len as u64 + extra_len + u64::from(compressed);
            continue;
        }
        if flags & 1 != 0 {
            return Err(bad(format!("zip member {name} is encrypted: not read")));
        }
        let m = Member {
            name,
            method: u16_at(&header, 8),
            crc32,
            compressed: if sizes_known { u64::from(compressed) } else { u64::MAX },
            size: u64::from(size),
            local_offset: at,
            cut: Some(Cut { sizes_known }),
        };
        check_method(&m)?;
        return Ok(m);
    }
    Err(no_directory())
}

/// Where a [`ZipReader`] is in the archive.
enum Body<R: Read> {
    /// Before the member's local header.
    Start(R),
    Stored(io::Take<R>),
    Deflate(flate2::read::DeflateDecoder<io::Take<R>>),
    Bzip2(bzip2::read::BzDecoder<io::Take<R>>),
    Zstd(zstd::stream::read::Decoder<'static, io::BufReader<io::Take<R>>>),
    /// Past the member (or failed to reach it).
    Done(R),
    /// Only while a state is taken out.
    Gone,
}

/// The uncompressed bytes of the archive's member, read from `inner` (the whole archive,
/// from its first byte); checked against the member's CRC-32 and size at its end.
pub struct ZipReader<R: Read> {
    member: Member,
    body: Body<R>,
    crc: flate2::Crc,
    /// Bytes of `inner` consumed before it was given.
    skipped: u64,
    /// Bytes of the member read.
    out: u64,
}

impl<R: Read> ZipReader<R> {
    /// Reads `member` out of `inner`, which is at the archive's byte `at` (after a peek at
    /// its first bytes).
    pub fn new(inner: R, member: Member, at: u64) -> ZipReader<R> {
        ZipReader { member, body: Body::Start(inner), crc: flate2::Crc::new(), skipped: at, out: 0 }
    }

    /// The archive reader, wherever the member's reading stopped.
    pub fn into_inner(self) -> Option<R> {
        match self.body {
            Body::Start(r) | Body::Done(r) => Some(r),
            Body::Stored(t) => Some(t.into_inner()),
            Body::Deflate(d) => Some(d.into_inner().into_inner()),
            Body::Bzip2(d) => Some(d.into_inner().into_inner()),
            Body::Zstd(d) => Some(d.finish().into_inner().into_inner()),
            Body::Gone => None,
        }
    }

    /// Reads `r` up to the member's data: the bytes before its local header, the header,
    /// its name and extra field.
    fn reach(m: &Member, skipped: u64, r: &mut R) -> io::Result<()> {
        let skip = m.local_offset.saturating_sub(skipped);
        let done = io::copy(&mut r.take(skip), &mut io::sink())?;
        let mut header = [0u8; 30];
        if done < skip || r.read_exact(&mut header).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("zip archive ends before its member {}", m.name),
            ));
        }
        if u32_at(&header, 0) != LOCAL {
            return Err(bad(format!(
                "zip member {}: no local header at byte {} where the directory puts it",
                m.name, m.local_offset
            )));
        }
        let skip = u64::from(u16_at(&header, 26)) + u64::from(u16_at(&header, 28));
        if io::copy(&mut r.take(skip), &mut io::sink())? < skip {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("zip archive ends inside the header of its member {}", m.name),
            ));
        }
        Ok(())
    }

    /// At the member's end: its CRC-32 and size must be those the directory holds.
    fn check_end(&self) -> io::Result<()> {
        let m = &self.member;
        if m.cut.is_some_and(|c| !c.sizes_known) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "zip archive cut short: no central directory, so the {} bytes of its member \
                     {} could not be checked against its size and CRC-32",
                    self.out, m.name
                ),
            ));
        }
        let got = self.out;
        if got != m.size {
            let kind = if got < m.size {
                io::ErrorKind::UnexpectedEof
            } else {
                io::ErrorKind::InvalidData
            };
            return Err(io::Error::new(
                kind,
                format!("zip member {} ends after {got} of its {} bytes", m.name, m.size),
            ));
        }
        if self.crc.sum() != m.crc32 {
            return Err(bad(format!(
                "zip member {}: CRC-32 {:08x} of the bytes read, {:08x} in the archive (the \
                 archive is corrupt)",
                m.name,
                self.crc.sum(),
                m.crc32
            )));
        }
        Ok(())
    }
}

impl<R: Read> Read for ZipReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = match &mut self.body {
                Body::Start(r) => {
                    let reached = Self::reach(&self.member, self.skipped, r);
                    let Body::Start(r) = std::mem::replace(&mut self.body, Body::Gone) else {
                        return Ok(0);
                    };
                    if let Err(e) = reached {
                        self.body = Body::Done(r);
                        return Err(e);
                    }
                    let data = r.take(self.member.compressed);
                    self.body = match self.member.method {
                        8 => Body::Deflate(flate2::read::DeflateDecoder::new(data)),
                        12 => Body::Bzip2(bzip2::read::BzDecoder::new(data)),
                        93 => Body::Zstd(zstd::stream::read::Decoder::new(data)?),
                        _ => Body::Stored(data),
                    };
                    continue;
                }
                Body::Stored(t) => t.read(buf)?,
                Body::Deflate(d) => d.read(buf)?,
                Body::Bzip2(d) => d.read(buf)?,
                Body::Zstd(d) => d.read(buf)?,
                Body::Done(_) | Body::Gone => return Ok(0),
            };
            if n > 0 {
                self.crc.update(buf.get(..n).unwrap_or_default());
                self.out += n as u64;
                return Ok(n);
            }
            let done = match std::mem::replace(&mut self.body, Body::Gone) {
                Body::Stored(t) => t.into_inner(),
                Body::Deflate(d) => d.into_inner().into_inner(),
                Body::Bzip2(d) => d.into_inner().into_inner(),
                Body::Zstd(d) => d.finish().into_inner().into_inner(),
                Body::Start(r) | Body::Done(r) => r,
                Body::Gone => return Ok(0),
            };
            self.body = Body::Done(done);
            self.check_end()?;
            return Ok(0);
        }
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod testzip;

#[cfg(test)]
mod tests {
    use super::testzip::{archive, entry, Entry};
    use super::*;

    /// The member's text, or the error that ended it; the archive read from its byte 0.
    fn unzip(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zip");
        std::fs::write(&path, bytes).unwrap();
        let mut file = File::open(&path).unwrap();
        let m = member(&mut file)?;
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut r = ZipReader::new(file, m, 0);
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn text() -> Vec<u8> {
        (0..20_000)
            .flat_map(|i| format!("{i},Core_0,0,T,TASK_{},0,start\n", i % 7).into_bytes())
            .collect()
    }

    #[test]
    fn every_method_and_layout_gives_the_member_back() {
        let t = text();
        for method in [0, 8, 12, 93] {
            for descriptor in [false, true] {
                for zip64 in [false, true] {
                    let e = Entry { name: "trace.btf", text: &t, method, descriptor };
                    let z = archive(&[entry("traces/", b"", 0), e], zip64);
                    let out = unzip(&z).unwrap_or_else(|e| panic!("{method} {descriptor}: {e}"));
                    assert!(
                        out == t,
                        "method {method}, descriptor {descriptor}, zip64 {zip64}: {} bytes",
                        out.len()
                    );
                }
            }
        }
        // A member after other bytes (a macOS resource fork) is reached.
        let z = archive(&[entry("__MACOSX/._t.btf", b"fork", 0), entry("t.btf", &t, 8)], false);
        assert!(unzip(&z).unwrap() == t);
    }

    #[test]
    fn archives_tracedb_cannot_read_say_why() {
        let t = text();
        let msg = |z: Vec<u8>| match unzip(&z) {
            Ok(out) => panic!("read {} bytes", out.len()),
            Err(e) => e.to_string(),
        };
        let two =
            archive(&[entry("t.prv", &t, 8), entry("t.pcf", b"x", 8), entry("d/", b"", 0)], false);
        assert!(msg(two).contains("holds 2 files (t.prv, t.pcf): tracedb reads a zip of one"));
        assert!(msg(archive(&[entry("d/", b"", 0)], false)).contains("holds no file"));
        assert!(msg(archive(&[entry("t", &t, 14)], false)).contains("method 14"));
        let mut enc = archive(&[entry("t", &t, 0)], false);
        let central = enc.windows(4).rposition(|w| w == CENTRAL.to_le_bytes()).unwrap();
        enc[central + 8] |= 1; // the flags of the central directory's entry
        assert!(msg(enc).contains("encrypted"));
        assert!(msg(b"PK\x03\x04 not a zip at all".to_vec()).contains("end of central directory"));
    }

    #[test]
    fn damage_is_an_error_after_the_text_before_it() {
        let t = text();
        // A changed byte of a stored member: every byte comes out, then the CRC says no.
        let mut z = archive(&[entry("t.btf", &t, 0)], false);
        z[1000] ^= 0x20;
        let e = unzip(&z).map(|o| o.len()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("CRC-32"), "{e}");
        // Cut in its data: the directory is gone, the local header still reads the member
        // up to the cut, then says it ended early.
        let z = archive(&[entry("t.btf", &t, 8)], false);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zip");
        std::fs::write(&path, &z[..z.len() / 2]).unwrap();
        let mut file = File::open(&path).unwrap();
        let m = member(&mut file).unwrap();
        assert_eq!(m.cut, Some(Cut { sizes_known: true }));
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut r = ZipReader::new(file, m, 0);
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        let e = loop {
            match r.read(&mut buf) {
                Ok(0) => panic!("a cut member must not end quietly"),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => break e,
            }
        };
        assert!(t.starts_with(&out) && out.len() > t.len() / 4, "{} of {}", out.len(), t.len());
        assert!(matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData));
        // A damaged central directory: the member is read from its local header and checked
        // against the CRC-32 and size that header holds.
        let mut z = archive(&[entry("d/", b"", 0), entry("t.btf", &t, 8)], false);
        let central = z.windows(4).position(|w| w == CENTRAL.to_le_bytes()).unwrap();
        z[central + 50] = 0xFF; // inside the first entry's name: the second one is lost
        let second = z.windows(4).rposition(|w| w == CENTRAL.to_le_bytes()).unwrap();
        z[second] = b'X';
        assert!(unzip(&z).unwrap() == t);
        // Streamed (sizes in a data descriptor) and cut: read to the cut, said unverifiable.
        let z = archive(&[Entry { name: "t.btf", text: &t, method: 8, descriptor: true }], false);
        let e = unzip(&z[..z.len() - 60]).map(|o| o.len()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    }
}
