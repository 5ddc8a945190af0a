//! Crash states: what the disk may hold when the power is cut, rebuilt from a write log.
//!
//! The persistence model is CrashMonkey's (Mohan et al., "Finding Crash-Consistency Bugs
//! with Bounded Black-Box Crash Testing", OSDI '18): every write that reached the disk
//! before the last completed flush is on it; of the writes after that flush, the disk's
//! cache may have written any subset, in any order, when the power went. So a state is a
//! *prefix* of the log ending just after a flush (or the empty prefix), plus a subset of
//! the writes of the *epoch* that follows it (up to the next flush). A write is whole or
//! absent, except in *torn* states: the power went while one write of several 4 KiB blocks
//! was being written, so the disk holds the epoch's writes before it and only some of its
//! blocks ([`Torn`]; a sector-atomic disk of 4 KiB blocks, the size filesystems write).
//!
//! [`plan`] picks at most `budget` states, deterministically from a seed: first the state
//! at every flush (evenly spaced ones when there are more flushes than the budget), then,
//! epoch by epoch in turn, distinct subsets of each epoch's writes (every subset when an
//! epoch has few writes, seeded random ones otherwise) — *reordered* states, at most
//! `reorder` of them — until the budget is spent or no subset is left; then at most `tear`
//! torn states, each a seeded write of two blocks or more with a seeded proper subset of its
//! blocks. [`Planned`] says how many of each kind exist and how many were chosen: the
//! coverage a report states.
//!
//! [`window`] says which crashes a state stands for, as log positions (how many records
//! the log held when the power went): a crash at position `L` leaves on the disk every
//! record before the last flush logged before `L`, and any subset of the writes after it.
//! So a state whose durable prefix ends at `upto` and that kept writes up to index `k`
//! stands for every crash from `max(upto, k + 1)` up to the index of the flush that ends
//! its epoch (that flush not yet logged), or later without end when no flush follows.
//! A promise made when the log was at `p` must hold in a state that stands for any crash
//! at or after `p`: whatever the device kept, the program had been told its data was safe.

use super::log::{Kind, Record};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// Up to this many writes an epoch's proper subsets are enumerated, not drawn.
const ENUMERATE_UP_TO: usize = 12;
/// Draws of a random subset per state before giving up on an epoch (all duplicates).
const DRAWS: usize = 64;

/// The block a torn write is kept or lost by: 4 KiB, the filesystems' block size.
pub const TEAR_BLOCK: u64 = 4096;

/// One crash state.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrashState {
    /// Records `0..upto` are all on the disk: `upto` is 0 or just after a flush record (or
    /// the log's end). Which promises must hold is [`window`]'s to say.
    pub upto: usize,
    /// Writes after `upto` (indices into the log, ascending, all before the next flush)
    /// that are on the disk too.
    pub kept: Vec<usize>,
    /// A write after every kept one, of which only some blocks are on the disk.
    pub torn: Option<Torn>,
}

/// A write that reached the disk in part: which of its [`TEAR_BLOCK`]s did.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Torn {
    /// Its index in the log.
    pub write: usize,
    /// Its blocks on the disk (0 is the one at its offset), ascending: a proper, non-empty
    /// subset.
    pub blocks: Vec<u64>,
}

/// The states chosen, and how many there were to choose from.
#[derive(Debug)]
pub struct Planned {
    pub states: Vec<CrashState>,
    /// Flush boundaries in the log (prefix states), before any was left out.
    pub prefixes: usize,
    /// Whether some prefix states were left out (more flushes than the budget).
    pub prefixes_sampled: bool,
    /// Prefix states chosen (all of `prefixes` unless sampled).
    pub prefixes_chosen: usize,
    /// Reordered states chosen: a prefix and a proper, non-empty subset of the next
    /// epoch's writes.
    pub reordered: usize,
    /// Reordered states there are: 2^n − 2 for each epoch of n ≥ 2 writes, an epoch of
    /// more than 62 writes counted as 2^62 − 2 (so the sum is a lower bound there).
    pub reorderings: f64,
    /// Torn states chosen, and the writes of two blocks or more that could tear.
    pub torn: usize,
    pub tearable: usize,
}

/// The prefix boundaries of a log: 0, just after each flush, and its end.
pub fn boundaries(records: &[Record]) -> Vec<usize> {
    let mut b = vec![0];
    for (i, r) in records.iter().enumerate() {
        if r.kind == Kind::Flush {
            b.push(i + 1);
        }
    }
    if *b.last().expect("starts with 0") != records.len() {
        b.push(records.len());
    }
    b.dedup();
    b
}

/// The crashes a state stands for, as log positions: from `from` to `to`, both included
/// (module docs). A promise made at position `p` must hold when `p <= to`; a file whose
/// unlink began at `u` may be gone when `u < from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The earliest: the durable prefix and every kept write had been logged.
    pub from: u64,
    /// The latest: the index of the flush that ends the state's epoch (it was not logged
    /// yet), or `u64::MAX` when no flush follows.
    pub to: u64,
}

/// The crashes `st` stands for in the log `records` (module docs).
pub fn window(records: &[Record], st: &CrashState) -> Window {
    let last = st
        .torn
        .as_ref()
        .map(|t| t.write)
        .or(st.kept.last().copied());
    let from = last.map_or(st.upto, |k| k + 1).max(st.upto);
    let rest = records.get(st.upto..).unwrap_or_default();
    let to = rest
        .iter()
        .position(|r| r.kind == Kind::Flush)
        .map_or(u64::MAX, |i| (st.upto + i) as u64);
    Window {
        from: from as u64,
        to,
    }
}

/// When the log reached position `pos` (held `pos` records): when its last record was
/// served ([`super::log::monotonic_ns`]; 0 for the empty log, the end for a position past
/// it).
pub fn reached(records: &[Record], pos: u64) -> u64 {
    let last = records.last().map_or(0, |r| r.at_ns);
    match usize::try_from(pos) {
        Ok(0) => 0,
        Ok(p) => records.get(p - 1).map_or(last, |r| r.at_ns),
        Err(_) => last,
    }
}

/// The time the crashes of `w` span, `[start, end)` on the log's clock: a crash at
/// position `L` falls after record `L − 1` was served and before record `L` was, so the
/// window runs from when the log reached `w.from` to when the flush at `w.to` was served
/// (without end when no flush follows).
pub fn window_ns(records: &[Record], w: Window) -> (u64, u64) {
    let start = reached(records, w.from);
    let end = match usize::try_from(w.to).ok().and_then(|i| records.get(i)) {
        Some(r) => r.at_ns,
        None => u64::MAX,
    };
    (start, end.max(start))
}

/// How long of `[lo, hi)` the union of `spans` covers, in the spans' unit: the time a
/// power cut would have left one of them on the disk.
pub fn covered(mut spans: Vec<(u64, u64)>, lo: u64, hi: u64) -> u64 {
    spans.sort_unstable();
    let (mut total, mut reach) = (0, lo);
    for (s, e) in spans {
        let (s, e) = (s.max(reach), e.min(hi));
        if e > s {
            total += e - s;
            reach = e;
        }
    }
    total
}

/// At most `budget` crash states of the log `records`, of which at most `reorder` are
/// reordered ones and `tear` torn ones, chosen from `seed` (module docs).
pub fn plan(records: &[Record], budget: usize, reorder: usize, tear: usize, seed: u64) -> Planned {
    let bounds = boundaries(records);
    let prefixes = bounds.len();
    let mut states: BTreeSet<CrashState> = BTreeSet::new();
    let chosen = spread(&bounds, budget);
    let prefixes_sampled = chosen.len() < bounds.len();
    states.extend(chosen.iter().map(|&upto| CrashState {
        upto,
        kept: Vec::new(),
        torn: None,
    }));
    let prefixes_chosen = states.len();
    let total_budget = budget;
    let budget = budget.min(prefixes_chosen + reorder);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xc4a5_4e5f);
    // The epochs with at least two writes (one write kept is the next prefix), each with
    // the source of its subsets.
    let mut epochs: Vec<Epoch> = bounds
        .windows(2)
        .map(|w| Epoch::new(records, w[0], w[1]))
        .filter(|e| e.writes.len() >= 2)
        .collect();
    let reorderings = epochs
        .iter()
        .map(|e| 2f64.powi(e.writes.len().min(62) as i32) - 2.0)
        .sum();
    while states.len() < budget && !epochs.is_empty() {
        epochs.retain_mut(|e| {
            if states.len() >= budget {
                return true;
            }
            match e.next(&mut rng) {
                Some(kept) => {
                    states.insert(CrashState {
                        upto: e.upto,
                        kept,
                        torn: None,
                    });
                    true
                }
                None => false,
            }
        });
    }
    let reordered = states.len() - prefixes_chosen;
    let tearable: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].kind == Kind::Write && records[i].len >= 2 * TEAR_BLOCK)
        .collect();
    let room = total_budget.saturating_sub(states.len()).min(tear);
    let before = states.len();
    for _ in 0..room * DRAWS {
        if states.len() - before >= room || tearable.is_empty() {
            break;
        }
        let w = tearable[rng.gen_range(0..tearable.len())];
        states.insert(torn_state(records, &bounds, w, &mut rng));
    }
    let torn = states.len() - before;
    Planned {
        states: states.into_iter().collect(),
        prefixes,
        prefixes_sampled,
        prefixes_chosen,
        reordered,
        reorderings,
        torn,
        tearable: tearable.len(),
    }
}

/// The state in which the power went while write `w` was written: every write of its
/// epoch before it on the disk, and a seeded proper, non-empty subset of its blocks.
fn torn_state(records: &[Record], bounds: &[usize], w: usize, rng: &mut impl Rng) -> CrashState {
    let upto = bounds
        .iter()
        .copied()
        .filter(|&b| b <= w)
        .max()
        .unwrap_or(0);
    let kept = (upto..w)
        .filter(|&i| records[i].kind != Kind::Flush)
        .collect();
    let n = records[w].len.div_ceil(TEAR_BLOCK);
    let blocks = loop {
        let pick: Vec<u64> = (0..n).filter(|_| rng.gen_bool(0.5)).collect();
        if !pick.is_empty() && (pick.len() as u64) < n {
            break pick;
        }
    };
    CrashState {
        upto,
        kept,
        torn: Some(Torn { write: w, blocks }),
    }
}

/// `n` of `items` evenly spaced, the first and last included (all when `n` ≥ their count).
fn spread(items: &[usize], n: usize) -> Vec<usize> {
    if n >= items.len() {
        return items.to_vec();
    }
    if n <= 1 {
        return items.last().into_iter().copied().take(n).collect();
    }
    let last = items.len() - 1;
    let mut picked: Vec<usize> = (0..n).map(|k| items[k * last / (n - 1)]).collect();
    picked.dedup();
    picked
}

/// The writes of one epoch and the subsets of them handed out so far.
struct Epoch {
    upto: usize,
    writes: Vec<usize>,
    /// The next subset to enumerate (as a bit mask), for small epochs.
    next_mask: u64,
    seen: BTreeSet<Vec<usize>>,
}

impl Epoch {
    fn new(records: &[Record], from: usize, to: usize) -> Epoch {
        let writes = (from..to)
            .filter(|&i| records[i].kind != Kind::Flush)
            .collect();
        Epoch {
            upto: from,
            writes,
            next_mask: 1,
            seen: BTreeSet::new(),
        }
    }

    /// A proper, non-empty subset not handed out before; `None` when there is none left
    /// (or only duplicates were drawn).
    fn next(&mut self, rng: &mut impl Rng) -> Option<Vec<usize>> {
        let n = self.writes.len();
        if n <= ENUMERATE_UP_TO {
            let full = (1u64 << n) - 1;
            if self.next_mask >= full {
                return None;
            }
            let mask = self.next_mask;
            self.next_mask += 1;
            return Some(self.pick(|k| mask & (1 << k) != 0));
        }
        for _ in 0..DRAWS {
            let kept = self.pick(|_| rng.gen_bool(0.5));
            if !kept.is_empty() && kept.len() < n && self.seen.insert(kept.clone()) {
                return Some(kept);
            }
        }
        None
    }

    fn pick(&self, mut keep: impl FnMut(usize) -> bool) -> Vec<usize> {
        let writes = self.writes.iter().enumerate();
        writes.filter(|&(k, _)| keep(k)).map(|(_, &i)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(kinds: &str) -> Vec<Record> {
        let rec = |c| Record {
            kind: if c == 'F' { Kind::Flush } else { Kind::Write },
            offset: 0,
            len: 1,
            data_at: 0,
            at_ns: 0,
        };
        kinds.chars().map(rec).collect()
    }

    #[test]
    fn every_flush_is_a_state_and_subsets_are_proper_and_within_their_epoch() {
        let records = log("WWFWWWFW");
        assert_eq!(boundaries(&records), [0, 3, 7, 8]);
        let p = plan(&records, 100, 100, 0, 1);
        assert_eq!(p.prefixes, 4);
        assert!(!p.prefixes_sampled);
        // 4 prefixes + (2^2 - 2) + (2^3 - 2) subsets; the last epoch has one write.
        assert_eq!(p.states.len(), 4 + 2 + 6);
        for s in &p.states {
            let next = boundaries(&records).into_iter().find(|&b| b > s.upto);
            for &k in &s.kept {
                assert!(k >= s.upto && next.is_some_and(|n| k < n));
                assert_eq!(records[k].kind, Kind::Write);
            }
        }
        let unique: BTreeSet<_> = p.states.iter().collect();
        assert_eq!(unique.len(), p.states.len());
    }

    #[test]
    fn the_budget_bounds_the_states_and_the_seed_decides_them() {
        let records = log(&format!("{}F{}F", "W".repeat(30), "W".repeat(20)));
        let a = plan(&records, 25, 25, 0, 7);
        assert_eq!(a.states.len(), 25);
        assert_eq!(a.states, plan(&records, 25, 25, 0, 7).states);
        assert_ne!(a.states, plan(&records, 25, 25, 0, 8).states);
        // Both epochs got subsets, taken in turn.
        let in_epoch = |u| {
            a.states
                .iter()
                .filter(move |s| s.upto == u && !s.kept.is_empty())
        };
        assert!(in_epoch(0).count() >= 10 && in_epoch(31).count() >= 10);
    }

    #[test]
    fn a_state_stands_for_the_crashes_until_its_epoch_ends() {
        let records = log("WWFWWWFW");
        let w = |upto, kept: &[usize]| {
            window(
                &records,
                &CrashState {
                    upto,
                    kept: kept.to_vec(),
                    torn: None,
                },
            )
        };
        // Nothing durable: every crash before the first flush was logged (index 2).
        assert_eq!(w(0, &[]), Window { from: 0, to: 2 });
        assert_eq!(w(0, &[1]), Window { from: 2, to: 2 });
        // After the first flush, until the second (index 6).
        assert_eq!(w(3, &[]), Window { from: 3, to: 6 });
        assert_eq!(w(3, &[3, 5]), Window { from: 6, to: 6 });
        // No flush after the last prefixes: every later crash.
        assert_eq!(
            w(7, &[]),
            Window {
                from: 7,
                to: u64::MAX
            }
        );
        assert_eq!(
            w(8, &[]),
            Window {
                from: 8,
                to: u64::MAX
            }
        );
    }

    #[test]
    fn a_window_lasts_from_its_first_crash_to_the_flush_that_ends_it() {
        // Records served at 10, 20, ... ns: W W F W W.
        let mut records = log("WWFWW");
        for (i, r) in records.iter_mut().enumerate() {
            r.at_ns = 10 * (i as u64 + 1);
        }
        let w = |upto, kept: &[usize]| {
            let st = CrashState {
                upto,
                kept: kept.to_vec(),
                torn: None,
            };
            window_ns(&records, window(&records, &st))
        };
        // Nothing durable: from the log's start until the flush was served.
        assert_eq!(w(0, &[]), (0, 30));
        // Write 1 kept: crashes after it was served (20) until the flush (30).
        assert_eq!(w(0, &[1]), (20, 30));
        // After the flush, no flush follows: without end.
        assert_eq!(w(3, &[]), (30, u64::MAX));
        assert_eq!(reached(&records, 1), 10);
        // The union, clipped: [0, 30) and [20, 30) and [30, 50) inside [10, 40).
        assert_eq!(covered(vec![(0, 30), (20, 30), (30, 50)], 10, 40), 30);
        assert_eq!(covered(vec![(0, 5), (45, 60)], 10, 40), 0);
        assert_eq!(covered(vec![(12, 15), (14, 20), (30, 35)], 10, 40), 13);
    }

    #[test]
    fn every_flush_point_first_then_at_most_reorder_reordered_and_the_coverage_counted() {
        let records = log("WWFWWWFW");
        // 4 flush points, 2 + 6 reorderings; 3 of them asked for.
        let p = plan(&records, 100, 3, 0, 1);
        assert_eq!((p.prefixes, p.prefixes_chosen), (4, 4));
        assert_eq!((p.reordered, p.reorderings), (3, 8.0));
        assert_eq!(p.states.len(), 7);
        // The budget before the reordered ones: prefixes first.
        let p = plan(&records, 5, 3, 0, 1);
        assert_eq!((p.prefixes_chosen, p.reordered, p.states.len()), (4, 1, 5));
        // No reordering asked: flush points alone.
        let p = plan(&records, 100, 0, 0, 1);
        assert_eq!((p.prefixes_chosen, p.reordered), (4, 0));
        // An epoch of 100 writes counts as 2^62 - 2 reorderings, not infinity.
        let big = plan(&log(&"W".repeat(100)), 10, 10, 0, 1);
        assert_eq!(big.reorderings, 2f64.powi(62) - 2.0);
    }

    #[test]
    fn a_torn_state_keeps_its_epoch_before_the_write_and_part_of_its_blocks() {
        // W(1 block) F W(1) W(4 blocks) W(3 blocks) F
        let mut records = log("WFWWWF");
        for (i, blocks) in [(3, 4), (4, 3)] {
            records[i].len = blocks * TEAR_BLOCK;
        }
        let p = plan(&records, 100, 0, 5, 9);
        assert_eq!(p.tearable, 2);
        assert_eq!(p.torn, 5);
        for s in p.states.iter().filter(|s| s.torn.is_some()) {
            let t = s.torn.as_ref().unwrap();
            assert!(t.write == 3 || t.write == 4, "{s:?}");
            assert_eq!(s.upto, 2);
            assert_eq!(s.kept, (2..t.write).collect::<Vec<_>>());
            let n = records[t.write].len / TEAR_BLOCK;
            assert!(!t.blocks.is_empty() && (t.blocks.len() as u64) < n, "{s:?}");
            assert!(t.blocks.iter().all(|&b| b < n));
            // Its crashes come after the torn write began.
            assert_eq!(window(&records, s).from, t.write as u64 + 1);
        }
        // Seeded, and within the budget.
        assert_eq!(p.states, plan(&records, 100, 0, 5, 9).states);
        assert_eq!(plan(&records, 4, 0, 5, 9).torn, 1);
        // Nothing to tear: no torn state.
        assert_eq!(plan(&log("WWF"), 100, 0, 5, 9).torn, 0);
    }

    #[test]
    fn more_flushes_than_the_budget_keeps_the_first_and_last_evenly() {
        let records = log(&"WF".repeat(50));
        let p = plan(&records, 5, 5, 0, 1);
        assert!(p.prefixes_sampled);
        let uptos: Vec<usize> = p.states.iter().map(|s| s.upto).collect();
        assert_eq!(uptos, [0, 24, 50, 74, 100]);
        assert!(p.states.iter().all(|s| s.kept.is_empty()));
    }
}
