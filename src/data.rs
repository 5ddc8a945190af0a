//! Data patterns written by workloads, chosen by `--data`.
//!
//! A pool of pattern bytes is generated once per trial (outside any timed region) and handed
//! out as consecutive slices, so writing costs a `memcpy` at most and no two slices within
//! 16 MiB of a stream repeat: a compressing filesystem (btrfs `compress=zstd` compresses
//! 128 KiB extents) cannot find matches in `random` data, while `zeros`, `text` and
//! `compress:PCT` compress as their names say.
//!
//! Deduplicating storage (ZFS `dedup`, VDO, a deduplicating array) compares aligned 4 KiB
//! blocks. So that it finds few repeats either, each stream starts at its own byte offset
//! within a 4 KiB block and moves [`LAP_SHIFT_BYTES`] further every time it wraps: the
//! 4 KiB blocks a stream hands out do not repeat for 4096 laps (64 GiB), and 64 workers
//! (streams 0–63) share no block for their first 1 GiB each. This holds within one phase:
//! every phase starts its workers' streams afresh, so two phases that write (Bonnie's
//! per-character and block writes, a job's ramp and its run) write the same bytes, and a
//! filesystem that skips rewriting identical data (ZFS `nopwrite`) could skip the second.

use crate::policy::DataPolicy;
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// Bytes of distinct pattern in a pool.
pub const POOL_BYTES: usize = 16 << 20;
/// Largest slice [`DataSource::slice`] returns without copying; the pool carries this many
/// bytes of wrap-around tail (a copy of the pool from [`LAP_SHIFT_BYTES`] on, where a
/// stream goes on after it wraps) so every slice up to this length is contiguous.
pub const MAX_SLICE: usize = 4 << 20;
/// Bytes a stream skips each time it wraps around the pool: odd, so that the stream's
/// offset within a 4 KiB block takes all 4096 values before it repeats.
pub const LAP_SHIFT_BYTES: usize = 1021;

/// The pattern bytes for one trial, shared by all workers.
#[derive(Clone)]
pub struct DataPool {
    bytes: Arc<Vec<u8>>,
    policy: DataPolicy,
}

impl DataPool {
    /// Generates the pool for `policy` deterministically from `seed`.
    pub fn new(policy: DataPolicy, seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xda7a_da7a);
        // Made in place (`Vec` → `Arc<[u8]>` would copy the 20 MiB into a second
        // allocation and double the trial's peak RSS for a moment: 47 MiB instead of 37),
        // zeroed by the allocator: a fresh mapping of zero pages, faulted in when first
        // touched, so that a pool of zeros costs neither time nor memory up front.
        let mut v = vec![0u8; POOL_BYTES + MAX_SLICE];
        let (pool, tail) = v.split_at_mut(POOL_BYTES);
        match policy {
            DataPolicy::Random => rng.fill_bytes(pool),
            DataPolicy::Zeros => {}
            DataPolicy::Text => fill_text(pool, &mut rng),
            DataPolicy::Compress(pct) => {
                rng.fill_bytes(pool);
                let zeros = 4096 * pct as usize / 100;
                for block in pool.chunks_mut(4096) {
                    let n = zeros.min(block.len());
                    block[..n].fill(0);
                }
            }
        }
        if policy != DataPolicy::Zeros {
            // Where a stream goes on after the wrap (see `DataSource::slice`).
            tail.copy_from_slice(&pool[LAP_SHIFT_BYTES..LAP_SHIFT_BYTES + MAX_SLICE]);
        }
        let bytes = Arc::new(v);
        Self { bytes, policy }
    }

    /// The policy this pool was made for.
    pub fn policy(&self) -> DataPolicy {
        self.policy
    }

    /// A stream over the pool starting at a position derived from `stream` (e.g. a worker
    /// index), so that concurrent writers do not write identical bytes, nor identical
    /// 4 KiB blocks: streams start at different offsets within a 4 KiB block.
    pub fn source(&self, stream: u64) -> DataSource {
        let start = (stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) % POOL_BYTES as u64) as usize;
        // Stream n starts where stream 0 would be after 64·n laps (of 4096 offsets, each
        // lap moving one step): streams under 64 apart meet in no block for 64 laps.
        let within = (stream as usize % 64).wrapping_mul(64 * LAP_SHIFT_BYTES) % 4096;
        DataSource {
            pool: self.bytes.clone(),
            pos: (start & !4095) + within,
        }
    }
}

/// A cursor handing out consecutive pattern bytes.
pub struct DataSource {
    pool: Arc<Vec<u8>>,
    pos: usize,
}

impl DataSource {
    /// The next `len` pattern bytes (`len` ≤ [`MAX_SLICE`]), without copying.
    #[inline]
    pub fn slice(&mut self, len: usize) -> &[u8] {
        debug_assert!(len <= MAX_SLICE);
        let start = self.pos;
        self.pos += len;
        if self.pos >= POOL_BYTES {
            self.pos = self.pos - POOL_BYTES + LAP_SHIFT_BYTES;
        }
        &self.pool[start..start + len]
    }

    /// Fills `buf` with the next pattern bytes (any length).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for piece in buf.chunks_mut(MAX_SLICE) {
            let len = piece.len();
            piece.copy_from_slice(self.slice(len));
        }
    }

    /// The next single byte (for per-character tests).
    #[inline]
    pub fn byte(&mut self) -> u8 {
        let b = self.pool[self.pos];
        self.pos += 1;
        if self.pos >= POOL_BYTES {
            self.pos = self.pos - POOL_BYTES + LAP_SHIFT_BYTES;
        }
        b
    }
}

/// Lines in the set of common lines of [`DataPolicy::Text`], and their share of all lines.
const COMMON_LINES: usize = 400;
const COMMON_SHARE: f64 = 0.65;

/// Source-code-like text: identifiers, keywords and punctuation with a skewed word
/// frequency, indented lines. It compresses roughly like real C source.
fn fill_text(buf: &mut [u8], rng: &mut Xoshiro256PlusPlus) {
    const KEYWORDS: [&str; 24] = [
        "int", "return", "if", "else", "for", "while", "struct", "static", "const", "void",
        "unsigned", "long", "char", "sizeof", "break", "case", "switch", "goto", "NULL", "err",
        "#include", "#define", "u32", "u64",
    ];
    const PUNCT: [&str; 12] = [
        "(", ")", ";", " = ", ", ", "->", "{", "}", " + ", " == ", "[i]", "&",
    ];
    // A vocabulary of synthetic identifiers, drawn with a skewed (roughly Zipfian) rank.
    let vocab: Vec<String> = (0..2000)
        .map(|_| {
            let len = rng.gen_range(3..12);
            (0..len)
                .map(|i| {
                    let c = rng.gen_range(0..28u8);
                    match c {
                        26 if i > 0 => '_',
                        27 if i > 0 => char::from(b'0' + rng.gen_range(0..10u8)),
                        _ => char::from(b'a' + c % 26),
                    }
                })
                .collect()
        })
        .collect();
    let line = |rng: &mut Xoshiro256PlusPlus, out: &mut Vec<u8>| {
        let words = rng.gen_range(2..10);
        for _ in 0..words {
            let r: f64 = rng.gen();
            if r < 0.3 {
                out.extend_from_slice(KEYWORDS[rng.gen_range(0..KEYWORDS.len())].as_bytes());
                out.push(b' ');
            } else if r < 0.55 {
                out.extend_from_slice(PUNCT[rng.gen_range(0..PUNCT.len())].as_bytes());
            } else {
                let rank = (vocab.len() as f64 * r.powi(6)) as usize;
                out.extend_from_slice(vocab[rank.min(vocab.len() - 1)].as_bytes());
            }
        }
    };
    // Real code repeats whole lines (includes, error paths, closing braces, boilerplate):
    // a share of lines comes from a set of common lines, chosen with a skewed rank.
    let common: Vec<Vec<u8>> = (0..COMMON_LINES)
        .map(|_| {
            let mut l = Vec::new();
            line(rng, &mut l);
            l
        })
        .collect();
    let mut out = Vec::with_capacity(buf.len() + 64);
    let mut indent = 0usize;
    while out.len() < buf.len() {
        out.extend(std::iter::repeat_n(b'\t', indent));
        if rng.gen::<f64>() < COMMON_SHARE {
            let rank = (COMMON_LINES as f64 * rng.gen::<f64>().powi(3)) as usize;
            out.extend_from_slice(&common[rank.min(COMMON_LINES - 1)]);
        } else {
            line(rng, &mut out);
        }
        out.push(b'\n');
        indent = match rng.gen_range(0..6) {
            0 => indent.saturating_sub(1),
            1 if indent < 4 => indent + 1,
            _ => indent,
        };
    }
    buf.copy_from_slice(&out[..buf.len()]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distinct_4k_blocks(data: &[u8]) -> usize {
        let mut set = std::collections::HashSet::new();
        data.chunks(4096).for_each(|c| {
            set.insert(c.to_vec());
        });
        set.len()
    }

    #[test]
    fn random_pool_does_not_repeat_and_wraps_contiguously() {
        let pool = DataPool::new(DataPolicy::Random, 1);
        let mut src = pool.source(0);
        let mut first = vec![0u8; 1 << 20];
        src.fill(&mut first);
        assert_eq!(distinct_4k_blocks(&first), 256);
        // Slices across the wrap point are contiguous and go on where the next lap starts.
        let mut s = pool.source(0);
        s.pos = POOL_BYTES - 10;
        let slice = s.slice(20).to_vec();
        assert_eq!(
            &slice[10..],
            &pool.bytes[LAP_SHIFT_BYTES..LAP_SHIFT_BYTES + 10]
        );
        assert_eq!(s.pos, 10 + LAP_SHIFT_BYTES);
    }

    /// The first 32 bytes of each aligned 4 KiB block of `n` bytes of `src` (two equal
    /// blocks have equal keys; random blocks with equal keys do not happen).
    fn block_keys(src: &mut DataSource, n: usize) -> Vec<[u8; 32]> {
        let mut buf = vec![0u8; n];
        src.fill(&mut buf);
        buf.chunks(4096)
            .map(|c| c[..32].try_into().unwrap())
            .collect()
    }

    #[test]
    fn dedup_finds_no_repeated_block_in_a_stream_or_across_workers() {
        let pool = DataPool::new(DataPolicy::Random, 1);
        // One worker writing 3 laps of the pool (48 MiB): no 4 KiB block repeats.
        let one = block_keys(&mut pool.source(0), 3 * POOL_BYTES);
        let set: std::collections::HashSet<_> = one.iter().collect();
        assert_eq!(set.len(), one.len(), "a stream repeats a 4 KiB block");
        // A second worker's 16 MiB shares no block with the first's.
        let other = block_keys(&mut pool.source(1), POOL_BYTES);
        let shared = other.iter().filter(|k| set.contains(k)).count();
        assert_eq!(shared, 0, "two workers write {shared} equal 4 KiB blocks");
        // The per-character path wraps the same way.
        let mut a = pool.source(0);
        let mut b = pool.source(0);
        let mut bytes = vec![0u8; POOL_BYTES + 8192];
        a.fill(&mut bytes);
        let by_byte: Vec<u8> = (0..bytes.len()).map(|_| b.byte()).collect();
        assert!(by_byte == bytes, "byte() and fill() disagree after a wrap");
    }

    #[test]
    fn policies_have_their_content() {
        let zeros = DataPool::new(DataPolicy::Zeros, 1);
        assert!(zeros.source(3).slice(1 << 16).iter().all(|&b| b == 0));
        let text = DataPool::new(DataPolicy::Text, 1);
        let t = text.source(0).slice(1 << 16).to_vec();
        assert!(t.iter().all(|b| b.is_ascii()));
        assert!(t.iter().filter(|&&b| b == b'\n').count() > 500);
        let half = DataPool::new(DataPolicy::Compress(50), 1);
        let h = half.source(0).slice(4096 * 16).to_vec();
        let zero_count = h.iter().filter(|&&b| b == 0).count();
        assert!((zero_count as f64 / h.len() as f64 - 0.5).abs() < 0.01);
    }

    #[test]
    fn deterministic_from_seed() {
        let a = DataPool::new(DataPolicy::Random, 7)
            .source(1)
            .slice(64)
            .to_vec();
        let b = DataPool::new(DataPolicy::Random, 7)
            .source(1)
            .slice(64)
            .to_vec();
        let c = DataPool::new(DataPolicy::Random, 8)
            .source(1)
            .slice(64)
            .to_vec();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
