//! FNV-1a, the stable hash that names what fsarena keeps: plans (their hash, compared by
//! `--resume`) and kept aged images. It must never change, or stored names stop matching;
//! its reference vectors are tested in `plan::canon`.

/// FNV-1a, 64 bits (Fowler, Noll, Vo), as 16 lowercase hex digits.
pub fn fnv1a64(bytes: &[u8]) -> String {
    format!("{:016x}", hash(bytes))
}

/// FNV-1a, 64 bits, as a number.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
