//! Where and how much the `job` engine reads or writes next: a seeded xoshiro256++
//! generator, block indexes drawn uniform, zipf or pareto, and block-size mixes.
//!
//! The zipf and pareto draws follow fio's `lib/zipf.c` (Jens Axboe): zipf by Gray et al.'s
//! rejection-free approximation ("Quickly generating billion-record synthetic databases",
//! SIGMOD 1994) with ζ(n, θ) summed over at most 10 million ranks as fio does, pareto as
//! rank = (n − 1)·u^(ln h / ln(1 − h)), so that a share `h` of the blocks receives a share
//! 1 − h of the accesses. Ranks (0 = hottest) are spread over the file by a bijection
//! r ↦ (r·m + c) mod n with m coprime to n — fio hashes instead, which lets ranks collide.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Ranks over which ζ(n, θ) is summed at most (fio's `ZIPF_MAX_GEN`).
const ZETA_MAX_TERMS: u64 = 10_000_000;

/// A fast seeded generator (xoshiro256++), one per job.
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, n)` by Lemire's multiply-shift (bias below 2⁻⁶⁴·n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// How random offsets are distributed (`random_distribution`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent θ (θ > 0, θ ≠ 1).
    Zipf(f64),
    /// Pareto: a share h (0 < h < 1) of the blocks gets a share 1 − h of the accesses.
    Pareto(f64),
}

impl Distribution {
    /// Parses `uniform`, `zipf:θ` or `pareto:h`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
        let num = || {
            arg.trim()
                .parse::<f64>()
                .map_err(|_| format!("'{text}': give a number after ':' (zipf:1.2, pareto:0.2)"))
        };
        match kind.trim() {
            "uniform" if arg.is_empty() => Ok(Self::Uniform),
            "zipf" => match num()? {
                t if t > 0.0 && t != 1.0 && t.is_finite() => Ok(Self::Zipf(t)),
                t => Err(format!("zipf:{t}: θ must be > 0 and ≠ 1 (as in fio)")),
            },
            "pareto" => match num()? {
                h if h > 0.0 && h < 1.0 => Ok(Self::Pareto(h)),
                h => Err(format!("pareto:{h}: h must be between 0 and 1")),
            },
            _ => Err(format!("'{text}' is not uniform, zipf:θ or pareto:h")),
        }
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        pow: f64,
    },
}

/// Draws block indexes in `[0, n)`.
#[derive(Clone, Debug)]
pub struct Picker {
    n: u64,
    kind: Kind,
    mult: u64,
    add: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Picker {
    /// A picker over `n` ≥ 1 blocks; zipf sums ζ now (up to 10 M terms, ~50 ms).
    pub fn new(dist: Distribution, n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let kind = match dist {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Zipf(theta) => {
                let zetan: f64 = (1..=n.min(ZETA_MAX_TERMS))
                    .map(|i| (i as f64).powf(-theta))
                    .sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                Kind::Zipf {
                    theta,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                }
            }
            Distribution::Pareto(h) => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
        };
        let mut mult = (0x9e37_79b9_7f4a_7c15 ^ seed) % n;
        while gcd(mult, n) != 1 {
            mult += 1;
        }
        Self {
            n,
            kind,
            mult,
            add: seed.rotate_left(17) % n,
        }
    }

    /// How many blocks it draws from.
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// The rank (0 = hottest) of the next draw, before ranks are spread over the file.
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        let n = self.n;
        match self.kind {
            Kind::Uniform => rng.below(n),
            Kind::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u = rng.unit();
                let z = u * zetan;
                if z < 1.0 {
                    0
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    1.min(n - 1)
                } else {
                    ((n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64).min(n - 1)
                }
            }
            Kind::Pareto { pow } => ((((n - 1) as f64) * rng.unit().powf(pow)) as u64).min(n - 1),
        }
    }

    /// The next block index.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        match self.kind {
            Kind::Uniform => rng.below(self.n),
            _ => self.spread(self.rank(rng)),
        }
    }

    /// Where rank `r` lies in the file (a bijection of `[0, n)`).
    #[inline]
    pub fn spread(&self, r: u64) -> u64 {
        ((r as u128 * self.mult as u128 + self.add as u128) % self.n as u128) as u64
    }
}

/// fio's random map for one file: each block is used once per pass. A draw lands on a
/// random block; on a used one it takes the next free block after it (wrapping), as fio's
/// `axmap_next_free` does; a full map starts a new pass (as fio's time-based jobs reset
/// theirs). With several block sizes its blocks are the smallest size's, and a larger
/// request marks the free blocks after its first ([`Self::extend`]). One bit per block:
/// 32 KiB for a 1 GiB file of 4 KiB blocks.
#[derive(Clone, Debug)]
pub struct RandMap {
    words: Vec<u64>,
    n: u64,
    used: u64,
}

impl RandMap {
    /// A map over `n` ≥ 1 blocks, all free.
    pub fn new(n: u64) -> Self {
        let n = n.max(1);
        Self {
            words: vec![0; n.div_ceil(64) as usize],
            n,
            used: 0,
        }
    }

    /// Every block is used: the next draw starts a new pass.
    pub fn full(&self) -> bool {
        self.used == self.n
    }

    /// Marks block `b` (drawn in `[0, n)`) or, when it is used, the next free one;
    /// returns the block marked.
    #[inline]
    pub fn take(&mut self, b: u64) -> u64 {
        if self.used == self.n {
            self.words.fill(0);
            self.used = 0;
        }
        let b = if self.words[(b / 64) as usize] & (1 << (b % 64)) == 0 {
            b
        } else {
            self.next_free(b)
        };
        self.words[(b / 64) as usize] |= 1 << (b % 64);
        self.used += 1;
        b
    }

    /// Marks after block `first` (just taken) up to `nr - 1` more blocks, as long as they
    /// are free and in the map, as fio's `axmap_set_nr` marks a request of several blocks
    /// and shortens it to the blocks it could mark; returns how many are marked with it.
    #[inline]
    pub fn extend(&mut self, first: u64, nr: u64) -> u64 {
        let mut k = 1;
        while k < nr && first + k < self.n {
            let b = first + k;
            let bit = 1 << (b % 64);
            let word = &mut self.words[(b / 64) as usize];
            if *word & bit != 0 {
                break;
            }
            *word |= bit;
            self.used += 1;
            k += 1;
        }
        k
    }

    /// The first free block after `b`, wrapping (one exists: the map is not full). No
    /// division: it runs on a good share of the draws late in a pass.
    fn next_free(&self, b: u64) -> u64 {
        let start = if b + 1 == self.n { 0 } else { b + 1 };
        let nw = self.words.len();
        let (w0, bit0) = ((start / 64) as usize, start % 64);
        // The rest of the first word, the words after it, then from the start (the bits
        // past n in the last word are never set, so they look free: skipped by `f < n`).
        let first = !self.words[w0] & (!0u64 << bit0);
        if first != 0 {
            let f = w0 as u64 * 64 + first.trailing_zeros() as u64;
            if f < self.n {
                return f;
            }
        }
        let mut w = w0;
        for _ in 0..nw {
            w += 1;
            if w == nw {
                w = 0;
            }
            let free = !self.words[w];
            if free != 0 {
                let f = w as u64 * 64 + free.trailing_zeros() as u64;
                if f < self.n {
                    return f;
                }
            }
        }
        unreachable!("a map that is not full has a free block")
    }
}

/// Chooses each operation's size from a `bs` mix (`4KiB`, `4KiB-64KiB`,
/// `4KiB:60,64KiB:40`): an item by weight, then within a range as fio's `bsrange` draws:
/// each multiple of the low end equally often, and a high end that is not one too.
#[derive(Clone, Debug)]
pub struct BlockSizes {
    /// (cumulative weight, low, high)
    items: Vec<(u64, u64, u64)>,
    total: u64,
    fixed: Option<u64>,
}

impl BlockSizes {
    /// From the parsed `bs` items.
    pub fn new(mix: &[crate::workload::params::SizeWeight]) -> Self {
        let mut total = 0;
        let items = mix
            .iter()
            .map(|w| {
                total += w.weight;
                (total, w.lo, w.hi)
            })
            .collect();
        let fixed = match mix {
            [one] if one.lo == one.hi => Some(one.lo),
            _ => None,
        };
        Self {
            items,
            total,
            fixed,
        }
    }

    /// One size only.
    #[inline]
    pub fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }

    /// The smallest size that can be drawn.
    pub fn min(&self) -> u64 {
        self.items.iter().map(|i| i.1).min().unwrap_or(0)
    }

    /// The largest size that can be drawn.
    pub fn max(&self) -> u64 {
        self.items.iter().map(|i| i.2).max().unwrap_or(0)
    }

    /// Every size that can be drawn is a multiple of `k` (a range's multiples of its low
    /// end, and its high end).
    pub fn all_multiples_of(&self, k: u64) -> bool {
        self.items.iter().all(|i| i.1 % k == 0 && i.2 % k == 0)
    }

    /// The next size.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        if let Some(b) = self.fixed {
            return b;
        }
        let pick = rng.below(self.total);
        let &(_, lo, hi) = self
            .items
            .iter()
            .find(|i| pick < i.0)
            .expect("pick < total weight");
        if lo == hi {
            lo
        } else {
            // fio's draw (`get_next_buflen`): low + a uniform share of high, aligned down
            // to low and capped at high. Each multiple of low up to high comes as often,
            // and high itself, when not one, as often as the share left above the last.
            let b = lo + rng.below(hi);
            (b - b % lo).min(hi)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::params::parse_size_mix;

    #[test]
    fn parses_distributions() {
        assert_eq!(Distribution::parse("uniform"), Ok(Distribution::Uniform));
        assert_eq!(Distribution::parse("zipf:1.2"), Ok(Distribution::Zipf(1.2)));
        assert_eq!(
            Distribution::parse("pareto:0.2"),
            Ok(Distribution::Pareto(0.2))
        );
        for bad in [
            "zipf:1",
            "zipf:x",
            "pareto:1.5",
            "normal",
            "uniform:3",
            "zipf",
        ] {
            assert!(Distribution::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn spread_is_a_bijection() {
        for n in [1u64, 2, 12, 4096, 1000] {
            let p = Picker::new(Distribution::Zipf(0.9), n, 42);
            let mut seen: Vec<u64> = (0..n).map(|r| p.spread(r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n={n}");
        }
    }

    /// zipf:θ gives rank 0 the probability 1/ζ(n,θ) and rank 1 2^−θ/ζ(n,θ) exactly (the
    /// approximation is exact for the two hottest ranks); the top 1% of ranks get close to
    /// the true share. Fixed seed; tolerance ~5 standard deviations.
    #[test]
    fn zipf_gives_the_requested_proportions() {
        let (n, theta, draws) = (10_000u64, 0.8, 400_000);
        let p = Picker::new(Distribution::Zipf(theta), n, 7);
        let mut rng = Rng::new(1);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[p.rank(&mut rng) as usize] += 1;
        }
        let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
        let share = |c: u64| c as f64 / draws as f64;
        let near = |got: f64, want: f64| {
            let sd = (want * (1.0 - want) / draws as f64).sqrt();
            assert!((got - want).abs() < 5.0 * sd, "got {got}, want {want}");
        };
        near(share(counts[0]), 1.0 / zeta);
        near(share(counts[1]), 0.5f64.powf(theta) / zeta);
        let top: u64 = counts[..100].iter().sum();
        let want_top: f64 = (1..=100).map(|i| (i as f64).powf(-theta)).sum::<f64>() / zeta;
        assert!(
            (share(top) - want_top).abs() < 0.03,
            "top 1%: {} vs {want_top}",
            share(top)
        );
    }

    /// pareto:h sends a share 1 − h of the draws to the hottest share h of the blocks.
    #[test]
    fn pareto_gives_the_requested_proportions() {
        let (n, draws) = (100_000u64, 200_000);
        let p = Picker::new(Distribution::Pareto(0.2), n, 7);
        let mut rng = Rng::new(2);
        let hot = (0..draws).filter(|_| p.rank(&mut rng) < n / 5).count();
        let got = hot as f64 / draws as f64;
        assert!((got - 0.8).abs() < 0.005, "{got}");
    }

    #[test]
    fn uniform_stays_in_range_and_is_flat() {
        let p = Picker::new(Distribution::Uniform, 10, 3);
        let mut rng = Rng::new(3);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[p.next(&mut rng) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
    }

    /// A pass visits every block once, in an order that is not sequential, and the next
    /// pass starts over; a used block gives way to the next free one, wrapping.
    #[test]
    fn the_random_map_uses_each_block_once_per_pass() {
        for n in [1u64, 5, 64, 65, 1000] {
            let mut map = RandMap::new(n);
            let mut rng = Rng::new(9);
            for _pass in 0..2 {
                let mut seen: Vec<u64> = (0..n).map(|_| map.take(rng.below(n))).collect();
                if n == 1000 {
                    assert_ne!(seen, (0..n).collect::<Vec<_>>());
                }
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n={n}");
            }
        }
        let mut map = RandMap::new(70);
        assert_eq!((map.take(69), map.take(69), map.take(69)), (69, 0, 1));
        assert_eq!((map.take(63), map.take(63), map.take(62)), (63, 64, 62));
    }

    #[test]
    fn block_size_mixes() {
        let mut rng = Rng::new(4);
        let fixed = BlockSizes::new(&parse_size_mix("4KiB").unwrap());
        assert_eq!(
            (fixed.next(&mut rng), fixed.min(), fixed.max()),
            (4096, 4096, 4096)
        );
        let range = BlockSizes::new(&parse_size_mix("4KiB-16KiB").unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..1000 {
            seen.insert(range.next(&mut rng));
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [4096, 8192, 12288, 16384]
        );
        // A high end not a multiple of the low: fio draws it too, a fifth of the time
        // here (low + a share of 10 KiB, aligned to 4 KiB: 4, 8, or 12 capped to 10).
        let odd = BlockSizes::new(&parse_size_mix("4KiB-10KiB").unwrap());
        let mut count = std::collections::BTreeMap::new();
        for _ in 0..100_000 {
            *count.entry(odd.next(&mut rng)).or_insert(0) += 1;
        }
        assert_eq!(count.keys().copied().collect::<Vec<_>>(), [4096, 8192, 10240]);
        assert!((19_000..21_000).contains(&count[&10240]), "{count:?}");
        assert!((39_000..41_000).contains(&count[&4096]), "{count:?}");
        assert_eq!(odd.max(), 10240);
        assert!(odd.all_multiples_of(2048) && !odd.all_multiples_of(4096));
        let mix = BlockSizes::new(&parse_size_mix("4KiB:60,64KiB:40").unwrap());
        let big = (0..100_000).filter(|_| mix.next(&mut rng) == 65536).count();
        assert!((39_000..41_000).contains(&big), "{big}");
        assert_eq!((mix.min(), mix.max()), (4096, 65536));
        assert!(mix.all_multiples_of(4096) && !mix.all_multiples_of(8192));
    }
}
