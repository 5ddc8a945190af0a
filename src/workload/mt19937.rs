//! The Mersenne Twister MT19937 (Matsumoto & Nishimura 1998), and the draws Python's
//! `random.Random` makes from it, so that workloads whose originals are seeded Python or C
//! programs (compilebench's `random.Random(555)`) make exactly the same choices. The
//! generator is `rand_mt`'s; the 1999 seeding Postmark uses and Python's derivations
//! (`randint`, `choice`, `shuffle`) are fsarena's.

use rand_mt::Mt;

const N: usize = 624;

/// MT19937 with 32-bit output.
#[derive(Clone)]
pub struct Mt19937(Mt);

impl Mt19937 {
    /// Seeded with `init_genrand(seed)` (the reference code's seeding by one word).
    pub fn new(seed: u32) -> Self {
        Self(Mt::new(seed))
    }

    /// Seeded with the 1999 reference code's `sgenrand(seed)` (two steps of the LCG
    /// 69069·x + 1 per word, keeping their upper halves), as Postmark 1.5 seeds it.
    pub fn sgenrand_1999(seed: u32) -> Self {
        let mut mt = [0u32; N];
        let mut s = seed;
        for w in mt.iter_mut() {
            *w = s & 0xffff_0000;
            s = s.wrapping_mul(69_069).wrapping_add(1);
            *w |= (s & 0xffff_0000) >> 16;
            s = s.wrapping_mul(69_069).wrapping_add(1);
        }
        // rand_mt sets a state only from 624 outputs, which it untempers: temper the
        // words, and its state is exactly `mt`, about to twist, as after sgenrand.
        Self(Mt::from(mt.map(temper)))
    }

    /// Seeded with `init_by_array(key)`, as Python's `random.seed(n)` does with the 32-bit
    /// words of `n` (least significant first).
    pub fn by_array(key: &[u32]) -> Self {
        Self(Mt::new_with_key(key.iter().copied()))
    }

    /// Python's `random.Random(seed)` for a non-negative integer seed below 2^64.
    pub fn python(seed: u64) -> Self {
        let (lo, hi) = (seed as u32, (seed >> 32) as u32);
        if hi == 0 {
            Self::by_array(&[lo])
        } else {
            Self::by_array(&[lo, hi])
        }
    }

    /// The next 32-bit output (`genrand_int32`).
    pub fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    /// Python's `getrandbits(k)` for 1 ≤ k ≤ 32.
    fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.next_u32() >> (32 - k)
    }

    /// Python's `_randbelow(n)`: uniform in `[0, n)` by rejection (n ≥ 1, n < 2^32).
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        let k = 32 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// Python's `randint(a, b)`: uniform in `[a, b]`.
    pub fn randint(&mut self, a: u32, b: u32) -> u32 {
        a + self.below(b - a + 1)
    }

    /// Python's `choice(seq)`: the index of the chosen element (`len` ≥ 1).
    pub fn choice(&mut self, len: usize) -> usize {
        self.below(len as u32) as usize
    }

    /// Python's `shuffle(x)` (Fisher–Yates from the end).
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            x.swap(i, j);
        }
    }
}

/// MT19937's output transformation (the reference code's tempering of a state word).
fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_outputs() {
        // mt19937ar.c's test vector: init_by_array({0x123, 0x234, 0x345, 0x456}).
        let mut mt = Mt19937::by_array(&[0x123, 0x234, 0x345, 0x456]);
        let first: Vec<u32> = (0..5).map(|_| mt.next_u32()).collect();
        assert_eq!(
            first,
            [
                1_067_595_299,
                955_945_823,
                477_289_528,
                4_107_218_783,
                4_228_976_476
            ]
        );
        // std::mt19937 default seed 5489: the 10000th output is 4123659995 (C++ standard).
        let mut mt = Mt19937::new(5489);
        let x = (0..10_000).map(|_| mt.next_u32()).last().unwrap();
        assert_eq!(x, 4_123_659_995);
    }

    #[test]
    fn sgenrand_1999_matches_postmark() {
        // Postmark 1.51 (Debian's 1.53 binary, seed 42, sizes 500..10000) fills its
        // 20,000-byte text buffer with 32 + RND(95), then makes files of 1390, 4732, 3583,
        // 6507 and 9640 bytes (seen with strace), starting "LeZebJ6S5~".
        let mut r = Mt19937::sgenrand_1999(42);
        let text: Vec<u8> = (0..20_000)
            .map(|_| 32 + (r.next_u32() % 95) as u8)
            .collect();
        assert_eq!(&text[..10], b"LeZebJ6S5~");
        let sizes: Vec<u32> = (0..5).map(|_| 500 + r.next_u32() % 9500).collect();
        assert_eq!(sizes, [1390, 4732, 3583, 6507, 9640]);
    }

    #[test]
    fn matches_python_random() {
        // python3 -c 'import random; r = random.Random(555);
        //   print([r.randint(0, 3) for _ in range(8)], r.randint(100, 100000),
        //         r.choice(range(7)), r.getrandbits(32))'
        let mut r = Mt19937::python(555);
        let ints: Vec<u32> = (0..8).map(|_| r.randint(0, 3)).collect();
        assert_eq!(ints, [1, 2, 1, 1, 0, 1, 2, 3]);
        let got = (r.randint(100, 100_000), r.choice(7), r.next_u32());
        assert_eq!(got, (25_261, 4, 3_071_295_507));
        // python3 -c 'import random; r = random.Random(555); x = list(range(10));
        //   r.shuffle(x); print(x)'
        let mut r = Mt19937::python(555);
        let mut x: Vec<u32> = (0..10).collect();
        r.shuffle(&mut x);
        assert_eq!(x, [5, 7, 9, 6, 0, 8, 1, 2, 4, 3]);
    }
}
