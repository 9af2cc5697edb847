//! Parquet's RLE / bit-packing hybrid encoding (definition levels and dictionary indices),
//! and the varints of its run headers.

/// Writes `v` as an unsigned LEB128 varint.
pub(super) fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An RLE run of `count` times `value`, `width` bits wide.
pub(super) fn rle_run(value: u64, count: usize, width: u8, out: &mut Vec<u8>) {
    varint((count as u64) << 1, out);
    let bytes = usize::from(width).div_ceil(8);
    out.extend_from_slice(value.to_le_bytes().get(..bytes).unwrap_or_default());
}

/// Bit-packed runs of `values` (padded with zeros to a multiple of 8), `width` bits each.
pub(super) fn bit_packed<T: Copy + Into<u64>>(values: &[T], width: u8, out: &mut Vec<u8>) {
    // At most 63 groups of 8 per run: the header then fits in one byte, as other writers do.
    for run in values.chunks(63 * 8) {
        let groups = run.len().div_ceil(8);
        varint(((groups as u64) << 1) | 1, out);
        for group in run.chunks(8) {
            let mut v = [0u64; 8];
            for (d, &s) in v.iter_mut().zip(group) {
                *d = s.into();
            }
            pack8(&v, width, out);
        }
    }
}

/// Eight values of `width` bits, packed from the lowest bit up (`width` bytes).
pub(super) fn pack8(v: &[u64; 8], width: u8, out: &mut Vec<u8>) {
    let w = u32::from(width);
    if w <= 16 {
        // All 8 fit in 128 bits.
        let mut acc = 0u128;
        for (k, &x) in (0u32..).zip(v) {
            acc |= u128::from(x) << (k * w);
        }
        out.extend_from_slice(acc.to_le_bytes().get(..usize::from(width)).unwrap_or_default());
        return;
    }
    let (mut acc, mut bits) = (0u64, 0u32);
    for &x in v {
        acc |= x << bits;
        bits += w;
        // At most 7 bits are left over before each value: `acc` never overflows.
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// The RLE/bit-packing hybrid encoding of `values`, `width` bits each: groups of 8 equal
/// values (and the equal values after them) as RLE runs, the rest bit-packed. Runs are
/// looked for a group at a time, counted from the end of the last run (one comparison of 8
/// values per group, not a branch per value); a run of 8 to 14 values that straddles two
/// groups is bit-packed.
pub(super) fn encode_hybrid<T: Copy + PartialEq + Into<u64>>(
    values: &[T],
    width: u8,
    out: &mut Vec<u8>,
) {
    // Values from `start` on are not written yet; `g` is the next group to look at.
    let (mut start, mut g) = (0, 0);
    while let Some(group) = values.get(g..g + 8) {
        let Some(&v) = group.first() else { break };
        if group.iter().all(|&x| x == v) {
            let mut end = g + 8;
            while values.get(end) == Some(&v) {
                end += 1;
            }
            if g > start {
                bit_packed(values.get(start..g).unwrap_or_default(), width, out);
            }
            rle_run(v.into(), end - g, width, out);
            start = end;
            g = end;
        } else {
            g += 8;
        }
    }
    if start < values.len() {
        bit_packed(values.get(start..).unwrap_or_default(), width, out);
    }
}
