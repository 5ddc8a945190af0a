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
//! Under the *pessimistic* log ([`super::trace`]) a flush does not cover every write
//! logged before it: one in flight when the flush was issued, or one beside a FUA write
//! whose flush after it was all the block layer sent. Such writes are *pending* at the
//! flush point ([`Pending`]) and belong to the next epoch: its subsets may leave them out
//! (a state's `dropped`), and so may the states after later flush points, until a flush
//! covers them.
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
use std::collections::{BTreeMap, BTreeSet};

/// Per prefix boundary, the writes logged before it that no flush up to it covers
/// (ascending; [`super::trace::Uncovered::pending`]). Empty: the optimistic log.
pub type Pending = BTreeMap<usize, Vec<usize>>;

/// Up to this many writes an epoch's proper subsets are enumerated, not drawn.
const ENUMERATE_UP_TO: usize = 12;
/// Draws of a random subset per state before giving up on an epoch (all duplicates).
const DRAWS: usize = 64;

/// The block a torn write is kept or lost by: 4 KiB, the filesystems' block size.
pub const TEAR_BLOCK: u64 = 4096;

/// One crash state.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrashState {
    /// Records `0..upto` are all on the disk: `upto` is 0 or just after a flush record (or
    /// the log's end). Which promises must hold is [`window`]'s to say.
    pub upto: usize,
    /// Writes after `upto` (indices into the log, ascending, all before the next flush)
    /// that are on the disk too.
    pub kept: Vec<usize>,
    /// A write after every kept one, of which only some blocks are on the disk.
    pub torn: Option<Torn>,
    /// Writes before `upto` that are not on the disk: some of those pending there
    /// ([`Pending`]), ascending.
    pub dropped: Vec<usize>,
}

impl CrashState {
    /// The first record the state leaves out of its prefix: `upto` unless it drops a
    /// pending write. States are built in ascending order of it.
    pub fn base(&self) -> usize {
        self.dropped.first().copied().unwrap_or(self.upto)
    }
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
    /// Reordered states there are: 2^n − 2 for each epoch of n ≥ 2 writes (its pending
    /// writes counted in n; 2^n − 1 when all n are pending), an epoch of more than 62
    /// writes counted as 2^62 − 2 (so the sum is a lower bound there).
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
pub fn plan(
    records: &[Record],
    pending: &Pending,
    budget: usize,
    reorder: usize,
    tear: usize,
    seed: u64,
) -> Planned {
    let bounds = boundaries(records);
    let prefixes = bounds.len();
    let mut states: BTreeSet<CrashState> = BTreeSet::new();
    let chosen = spread(&bounds, budget);
    let prefixes_sampled = chosen.len() < bounds.len();
    states.extend(chosen.iter().map(|&upto| CrashState {
        upto,
        ..CrashState::default()
    }));
    let prefixes_chosen = states.len();
    let total_budget = budget;
    let budget = budget.min(prefixes_chosen + reorder);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xc4a5_4e5f);
    // The epochs with a subset other than their two flush points, each with the source
    // of its subsets; the last boundary's too when writes are pending there.
    let ends = bounds.iter().skip(1).copied().chain([records.len()]);
    let mut epochs: Vec<Epoch> = bounds
        .iter()
        .zip(ends)
        .map(|(&from, to)| Epoch::new(records, pending, from, to))
        .filter(|e| e.count() > 0.0)
        .collect();
    let reorderings = epochs.iter().map(Epoch::count).sum();
    // The epochs with pending writes first: their states are the pessimistic log's own.
    epochs.sort_by_key(|e| e.pending == 0);
    while states.len() < budget && !epochs.is_empty() {
        epochs.retain_mut(|e| {
            if states.len() >= budget {
                return true;
            }
            match e.next(&mut rng) {
                Some(st) => {
                    states.insert(st);
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
    let mut states: Vec<CrashState> = states.into_iter().collect();
    states.sort_by_key(CrashState::base);
    Planned {
        states,
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
        dropped: Vec::new(),
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

/// The writes of one epoch and the subsets of them handed out so far: the writes pending
/// at its flush point first, then those logged after it.
struct Epoch {
    upto: usize,
    pending: usize,
    writes: Vec<usize>,
    /// The next subset to enumerate (as a bit mask), for small epochs.
    next_mask: u64,
    seen: BTreeSet<Vec<usize>>,
}

impl Epoch {
    fn new(records: &[Record], pending: &Pending, from: usize, to: usize) -> Epoch {
        let before = pending.get(&from).cloned().unwrap_or_default();
        let n = before.len();
        let after = (from..to).filter(|&i| records[i].kind != Kind::Flush);
        Epoch {
            upto: from,
            pending: n,
            writes: before.into_iter().chain(after).collect(),
            next_mask: 0,
            seen: BTreeSet::new(),
        }
    }

    /// Its subsets other than the flush point's (the pending writes all kept, none after)
    /// and the next one's (all kept).
    fn count(&self) -> f64 {
        let n = self.writes.len();
        if n == 0 {
            return 0.0;
        }
        let all = 2f64.powi(n.min(62) as i32);
        all - if self.pending == n { 1.0 } else { 2.0 }
    }

    /// Whether subset `mask` is one of the two flush points.
    fn is_flush_point(&self, mask: u64) -> bool {
        let n = self.writes.len();
        mask == (1u64 << self.pending) - 1 || mask == (1u64 << n) - 1
    }

    /// A state of a subset not handed out before; `None` when there is none left (or
    /// only duplicates were drawn).
    fn next(&mut self, rng: &mut impl Rng) -> Option<CrashState> {
        let n = self.writes.len();
        if n <= ENUMERATE_UP_TO {
            while self.next_mask < 1 << n {
                let mask = self.next_mask;
                self.next_mask += 1;
                if !self.is_flush_point(mask) {
                    return Some(self.state(|k| mask & (1 << k) != 0));
                }
            }
            return None;
        }
        for _ in 0..DRAWS {
            let keep: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.5)).collect();
            let pending_all = keep[..self.pending].iter().all(|&k| k);
            let after = &keep[self.pending..];
            let flush_point =
                pending_all && (after.iter().all(|&k| !k) || after.iter().all(|&k| k));
            let key: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
            if !flush_point && self.seen.insert(key) {
                return Some(self.state(|k| keep[k]));
            }
        }
        None
    }

    fn state(&self, mut keep: impl FnMut(usize) -> bool) -> CrashState {
        let mut st = CrashState {
            upto: self.upto,
            ..CrashState::default()
        };
        for (k, &i) in self.writes.iter().enumerate() {
            match (keep(k), k < self.pending) {
                (true, false) => st.kept.push(i),
                (false, true) => st.dropped.push(i),
                _ => {}
            }
        }
        st
    }
}

#[cfg(test)]
#[path = "states_tests.rs"]
mod tests;
