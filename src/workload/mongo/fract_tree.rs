//! The tree generator of Mongo: `reiser_fract_tree` (Hans Reiser, 2000; LTP
//! `testcases/kernel/fs/mongo/reiser_fract_tree.c`), reproduced draw for draw, with glibc's
//! `rand()` underneath, so that seed 1 gives the original's tree: the same directories,
//! file names and file sizes in the same creation order.
//!
//! The original's steps, each starting from `srand(seed)`:
//! 1. count files: draw file sizes until their sum reaches `bytes`;
//! 2. directory sizes: draw (with the directory parameters, at least 1, at most the files
//!    left) until every file has a directory — the stream continues after step 1's reset;
//! 3. the tree, depth first: a directory draws its files' sizes, then its branching
//!    (`size(0, 1) + 1`), then a branch for each remaining directory of its subtree
//!    (`rand() % branching`); non-empty branches become subdirectories `d<N>` (one global
//!    counter from 0, in creation order) that take their directories in order. Files are
//!    named by a global counter from 1.
//!
//! The sizes of step 3 are not those counted in step 1 (branching and branch draws
//! interleave), so the tree's total differs from `bytes` — as in the original.

use anyhow::{bail, Result};

/// Largest file size parameter of every Mongo set (the size function can exceed it).
pub const MAX_FILE_SIZE: f64 = 1_000_000.0;
/// Median and maximum files per directory.
pub const DIR_FILES: (f64, f64) = (100.0, 10_000.0);
/// Median and maximum branching of a directory.
pub const DIR_BRANCHING: (f64, f64) = (0.0, 1.0);

/// glibc's `random()` (and `rand()`) with the default TYPE_3 state: an additive lagged
/// Fibonacci generator `r[i] = r[i-3] + r[i-31]` (mod 2^32) whose 31 words are seeded by
/// the Park–Miller LCG `16807 · x mod (2^31 − 1)`; the first 310 outputs are discarded and
/// each output is the word shifted right by one (glibc `stdlib/random_r.c`).
#[derive(Clone, Debug)]
pub struct GlibcRandom {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    /// `srand(seed)`; glibc treats seed 0 as 1.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; 31];
        state[0] = if seed == 0 { 1 } else { seed };
        for i in 1..31 {
            // Schrage's method on the signed 32-bit word, as glibc computes it.
            let word = i64::from(state[i - 1] as i32);
            let (hi, lo) = (word / 127_773, word % 127_773);
            let mut next = 16_807 * lo - 2_836 * hi;
            if next < 0 {
                next += 2_147_483_647;
            }
            state[i] = next as u32;
        }
        let mut rng = Self {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            rng.next();
        }
        rng
    }

    /// The next `rand()`: 0 ..= 2^31 − 1.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> i32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        (sum >> 1) as i32
    }
}

/// C's `(int)` of a double as x86-64 compilers emit it (`cvttsd2si`): truncation toward
/// zero, and `INT_MIN` for NaN or a value out of range (undefined behaviour in C that the
/// original relies on for its rare huge draws).
fn c_int(x: f64) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x <= -2_147_483_649.0 {
        i32::MIN
    } else {
        x as i32
    }
}

/// The size function of reiser_fract_tree (`determine_size`), one `rand()` per call:
/// with m = median + 1 and R = max / m, x = (rand() mod ⌊g·R⌋) / g where g = 2^20 when
/// R < 1024 (finer steps for small ranges) and 1 otherwise, and
/// size = ⌊m · (1 / (1 − x/R) − 1)⌋. It returns m at x = R/2, grows without bound as x
/// nears R (the maximum only bounds x), and is 0 at x = 0.
pub fn size(rng: &mut GlibcRandom, median: f64, max: f64) -> i32 {
    let r = rng.next();
    let m = median + 1.0;
    let ratio = max / m;
    let g: i32 = if ratio < 1024.0 { 1 << 20 } else { 1 };
    let modulus = c_int(f64::from(g) * ratio);
    assert!(modulus > 0, "size function needs max ≥ (median + 1) / 2^20");
    let x = f64::from(r % modulus) / f64::from(g);
    c_int(m * (1.0 / (1.0 - x / ratio) - 1.0))
}

/// One step of building the tree, in the original's creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Make the subdirectory `d<n>` of the current directory and enter it.
    Dir(u64),
    /// Make file `<number>` of `size` bytes in the current directory. The original's C
    /// cast can make a size negative (see [`size`]); such a file is created empty.
    File { number: u64, size: i64 },
    /// Return to the parent directory.
    Up,
}

/// The shape of one reiser_fract_tree: its file count and directory sizes, from which
/// [`FractTree::walk`] replays the tree.
#[derive(Clone, Debug)]
pub struct FractTree {
    median_file: f64,
    seed: u32,
    files: u64,
    /// Files of each directory, in the order the tree takes them.
    dir_sizes: Vec<u64>,
}

/// A directory being filled: the directory counts of its non-empty branches, in order.
struct Frame {
    branches: Vec<u64>,
    next_branch: usize,
    /// Index in `dir_sizes` of the next branch's first directory.
    next_dir: usize,
}

impl FractTree {
    /// The tree of `bytes` bytes in files of median size `median_file` (mongo.pl's fixed
    /// parameters for the rest), from `srand(seed)`.
    pub fn new(bytes: u64, median_file: u64, seed: u32) -> Result<Self> {
        let median_file = median_file as f64;
        let mut rng = GlibcRandom::new(seed);
        let (mut files, mut total) = (0u64, 0i64);
        while total < bytes as i64 {
            total += i64::from(size(&mut rng, median_file, MAX_FILE_SIZE));
            files += 1;
        }
        let mut rng = GlibcRandom::new(seed);
        let (mut dir_sizes, mut left) = (Vec::new(), files);
        while left > 0 {
            let s = i64::from(size(&mut rng, DIR_FILES.0, DIR_FILES.1));
            if s < 0 {
                bail!("seed {seed}: a directory size overflows C's int; the original would loop forever");
            }
            let s = (s.max(1) as u64).min(left);
            dir_sizes.push(s);
            left -= s;
        }
        Ok(Self {
            median_file,
            seed,
            files,
            dir_sizes,
        })
    }

    /// How many files the tree has.
    pub fn files(&self) -> u64 {
        self.files
    }

    /// How many directories the tree has, its root included.
    pub fn dirs(&self) -> u64 {
        self.dir_sizes.len() as u64
    }

    /// Replays the tree's creation, depth first, calling `visit` for each step. Memory is
    /// bounded by the number of directories, not of files.
    pub fn walk(&self, mut visit: impl FnMut(Event) -> Result<()>) -> Result<()> {
        if self.dir_sizes.is_empty() {
            return Ok(());
        }
        let mut rng = GlibcRandom::new(self.seed);
        let (mut file_no, mut dir_no) = (1u64, 0u64);
        let last = self.dir_sizes.len() - 1;
        let root = self.fill(0, last, &mut rng, &mut file_no, &mut visit)?;
        let mut stack = vec![root];
        while let Some(top) = stack.last_mut() {
            if let Some(&count) = top.branches.get(top.next_branch) {
                let first = top.next_dir;
                top.next_branch += 1;
                top.next_dir += count as usize;
                visit(Event::Dir(dir_no))?;
                dir_no += 1;
                let end = first + count as usize - 1;
                let frame = self.fill(first, end, &mut rng, &mut file_no, &mut visit)?;
                stack.push(frame);
            } else {
                stack.pop();
                if !stack.is_empty() {
                    visit(Event::Up)?;
                }
            }
        }
        Ok(())
    }

    /// Fills directory `first` (whose subtree holds directories `first..=last`) with its
    /// files and spreads the other directories over its branches.
    fn fill(
        &self,
        first: usize,
        last: usize,
        rng: &mut GlibcRandom,
        file_no: &mut u64,
        visit: &mut impl FnMut(Event) -> Result<()>,
    ) -> Result<Frame> {
        for _ in 0..self.dir_sizes[first] {
            let size = i64::from(size(rng, self.median_file, MAX_FILE_SIZE));
            visit(Event::File {
                number: *file_no,
                size,
            })?;
            *file_no += 1;
        }
        let branching = i64::from(size(rng, DIR_BRANCHING.0, DIR_BRANCHING.1)) + 1;
        let mut picks: Vec<i64> = (first + 1..=last)
            .map(|_| i64::from(rng.next()) % branching)
            .collect();
        picks.sort_unstable();
        let branches = picks
            .chunk_by(|a, b| a == b)
            .map(|run| run.len() as u64)
            .collect();
        Ok(Frame {
            branches,
            next_branch: 0,
            next_dir: first + 1,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn glibc_rand_sequences() {
        // `srand(s); rand()` with glibc 2.36 (gcc, Debian 12), seeds 1, 0 (= 1) and 2.
        let first = |seed| {
            let mut r = GlibcRandom::new(seed);
            (0..8).map(|_| r.next()).collect::<Vec<_>>()
        };
        let one = [
            1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335, 719885386,
            1649760492,
        ];
        assert_eq!(first(1), one);
        assert_eq!(first(0), one);
        assert_eq!(first(2)[..3], [1505335290, 1738766719, 190686788]);
    }

    #[test]
    fn c_int_truncates_and_overflows_to_int_min() {
        assert_eq!(c_int(2.9), 2);
        assert_eq!(c_int(-2.9), -2);
        assert_eq!(c_int(2_147_483_647.5), i32::MAX);
        assert_eq!(c_int(2_147_483_648.0), i32::MIN);
        assert_eq!(c_int(1e12), i32::MIN);
        assert_eq!(c_int(f64::NAN), i32::MIN);
    }

    /// A generator that returns `r` once (state words chosen so that the next output is r).
    fn returning(r: i32) -> GlibcRandom {
        let mut rng = GlibcRandom {
            state: [0; 31],
            front: 3,
            rear: 0,
        };
        rng.state[3] = (r as u32) << 1;
        rng
    }

    #[test]
    fn size_function_is_the_median_at_half_range() {
        // Files of set 1: m = 101, R = 1e6/101 ≈ 9900.99 ≥ 1024, so g = 1 and x = r mod 9900.
        // x = 4950 ≈ R/2 gives about m (within a unit: R/2 is not an integer).
        let s = size(&mut returning(4950), 100.0, MAX_FILE_SIZE);
        assert!((100..=101).contains(&s), "{s}");
        assert_eq!(size(&mut returning(0), 100.0, MAX_FILE_SIZE), 0);
        // x = 9899 (the largest): 101 · (9900.990099/1.990099 − 1) = 502_386.9…, the
        // largest file of set 1 (the maximum parameter bounds x, not the size).
        assert_eq!(size(&mut returning(9899), 100.0, MAX_FILE_SIZE), 502_386);
        assert_eq!(size(&mut returning(9900 + 4950), 100.0, MAX_FILE_SIZE), s);
        // Set 4: m = 100001, R ≈ 9.9999 < 1024, so g = 2^20: x = R/2 is r = g·R/2.
        let half = (f64::from(1 << 20) * (1e6 / 100_001.0) / 2.0) as i32;
        let s = size(&mut returning(half), 100_000.0, MAX_FILE_SIZE);
        assert!((100_000..=100_002).contains(&s), "{s}");
        // Branching: size(0, 1) + 1 is 1 for x < 1/2 and grows as x nears 1.
        assert_eq!(size(&mut returning((1 << 19) - 1), 0.0, 1.0), 0);
        assert_eq!(size(&mut returning(1 << 19), 0.0, 1.0), 1);
        assert_eq!(size(&mut returning(3 << 18), 0.0, 1.0), 3);
    }

    #[test]
    fn directory_branching_never_overflows() {
        assert_eq!(size(&mut returning((1 << 20) - 1), 0.0, 1.0), (1 << 20) - 1);
    }

    /// files, signed byte total, dirs, depth and FNV-1a 64 of "path size\n" per file, as
    /// `bench/mongo_fract_tree.c summary` prints them.
    pub(crate) fn summary(tree: &FractTree) -> (u64, i64, u64, u64, u64) {
        let (mut files, mut bytes, mut dirs, mut depth, mut max_depth) = (0, 0, 0, 0, 0);
        let mut fnv: u64 = 0xcbf2_9ce4_8422_2325;
        let mut path: Vec<String> = Vec::new();
        tree.walk(|ev| {
            match ev {
                Event::Dir(n) => {
                    path.push(format!("d{n}"));
                    dirs += 1;
                    depth += 1;
                    max_depth = u64::max(max_depth, depth);
                }
                Event::Up => {
                    path.pop();
                    depth -= 1;
                }
                Event::File { number, size } => {
                    files += 1;
                    bytes += size;
                    let mut line = path.join("/");
                    if !line.is_empty() {
                        line.push('/');
                    }
                    line.push_str(&format!("{number} {size}\n"));
                    for b in line.bytes() {
                        fnv = (fnv ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
        (files, bytes, dirs, max_depth, fnv)
    }

    #[test]
    fn trees_of_the_four_sets_match_the_c_model() {
        // From `bench/mongo_fract_tree summary BYTES MEDIAN SEED` (glibc 2.36 rand()).
        let want = [
            (
                50 << 20,
                100,
                1,
                (67295, 52177125, 123, 8, 0x66850bbdbef87d4e),
            ),
            (
                100 << 20,
                1000,
                1,
                (11422, 113196614, 39, 6, 0xf077b9609271d925),
            ),
            (
                100 << 20,
                10000,
                1,
                (1264, 105683118, 6, 3, 0xa55f8ac8b1965bf2),
            ),
            (
                100 << 20,
                100000,
                1,
                (233, 115397036, 4, 2, 0x176d575ce4c08268),
            ),
            (
                100 << 20,
                1000,
                7,
                (10726, 110886787, 36, 10, 0x8d44303c28cd4b9c),
            ),
            (
                2 << 20,
                1000,
                4_000_000_000,
                (171, 2097548, 0, 0, 0xe2e46fb5a0620e56),
            ),
        ];
        for (bytes, median, seed, expect) in want {
            let tree = FractTree::new(bytes, median, seed).unwrap();
            let got = summary(&tree);
            assert_eq!(got, expect, "set ({bytes}, {median}), seed {seed}");
            assert_eq!(tree.files(), got.0);
            assert_eq!(tree.dirs(), got.2 + 1, "the root is a directory too");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_tree() {
        let events = |seed| {
            let mut v = Vec::new();
            let tree = FractTree::new(2 << 20, 1000, seed).unwrap();
            tree.walk(|e| {
                v.push(e);
                Ok(())
            })
            .unwrap();
            v
        };
        let a = events(1);
        assert_eq!(a, events(1));
        assert_eq!(a, events(0), "glibc seeds 0 and 1 alike");
        assert_ne!(a, events(7));
        let files = a.iter().filter(|e| matches!(e, Event::File { .. })).count();
        assert!(files > 100, "{files}");
    }

    #[test]
    fn a_visitor_error_stops_the_walk() {
        let tree = FractTree::new(1 << 20, 100, 1).unwrap();
        let mut seen = 0;
        let err = tree.walk(|_| {
            seen += 1;
            if seen == 10 {
                bail!("stop")
            }
            Ok(())
        });
        assert!(err.is_err());
        assert_eq!(seen, 10);
    }
}
