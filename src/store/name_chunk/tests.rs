use super::*;

/// Decodes the hybrid encoding of `n` values (the reference for the tests).
fn decode_hybrid(mut data: &[u8], width: u8, n: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let read_varint = |data: &mut &[u8]| {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = data[0];
            *data = &data[1..];
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    };
    while out.len() < n {
        let header = read_varint(&mut data);
        if header & 1 == 0 {
            let bytes = usize::from(width).div_ceil(8);
            let mut v = [0u8; 8];
            v[..bytes].copy_from_slice(&data[..bytes]);
            data = &data[bytes..];
            out.extend(std::iter::repeat_n(u64::from_le_bytes(v), (header >> 1) as usize));
        } else {
            let count = (header >> 1) as usize * 8;
            let (mut acc, mut bits) = (0u128, 0u32);
            let mask = (1u128 << width) - 1;
            for _ in 0..count {
                while bits < u32::from(width) {
                    acc |= u128::from(data[0]) << bits;
                    data = &data[1..];
                    bits += 8;
                }
                out.push((acc & mask) as u64);
                acc >>= width;
                bits -= u32::from(width);
            }
        }
    }
    assert!(data.is_empty(), "{} bytes left over", data.len());
    out.truncate(n);
    out
}

#[test]
fn hybrid_encoding_round_trips_runs_literals_and_their_mixes() {
    let mut cases: Vec<(Vec<u32>, u8)> = vec![
        (vec![], 1),
        (vec![1], 1),
        (vec![1; 7], 1),
        (vec![1; 8], 1),
        (vec![3; 1000], 2),
        ((0..1000).map(|i| i % 5).collect(), 3),
        ((0..20_000).map(|i| (i * 7919) % 65_536).collect(), 16),
        ((0..20_000).map(|i| (i * 7919) % (1 << 17)).collect(), 17),
        ((0..5_000).map(|i| (i * 104_729) % (1 << 20)).collect(), 20),
        ((0..100).map(|i| u32::from(i % 9 == 0) * 0xFFFF_FFFF).collect(), 32),
    ];
    // Literals then a run whose start completes a group, runs of every length around 8.
    for lead in 0..10u32 {
        for run in 6..11 {
            let mut v: Vec<u32> = (0..lead).map(|i| i % 4).collect();
            v.extend(std::iter::repeat_n(5, run));
            v.extend([1, 2, 3]);
            cases.push((v, 3));
        }
    }
    for (values, width) in cases {
        let mut out = Vec::new();
        encode_hybrid(&values, width, &mut out);
        let want: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
        assert_eq!(decode_hybrid(&out, width, values.len()), want, "width {width}");
    }
    // A run is an RLE run (2 bytes), not 1000 bit-packed values.
    let mut out = Vec::new();
    encode_hybrid(&[3u32; 1000], 2, &mut out);
    assert_eq!(out.len(), 3);
}
