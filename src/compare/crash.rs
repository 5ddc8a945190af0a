//! What a power cut costs, target against target: for each `crash` pattern, every target's
//! speed beside the crash states that broke a promise, and which differences in loss are
//! real.
//!
//! The unit of the test is the **repetition**: each trial records the pattern anew, so its
//! crash states depend on each other (they are cut from one recording) but trials do not.
//! Two targets differ when the exact permutation test on their per-trial shares of bad
//! states (the difference of the means, two-sided: every way of splitting the pooled
//! trials into two groups of the same sizes is enumerated) gives p below 0.05 after Holm's
//! correction over the pattern's pairs of targets. The test is exact whatever the
//! distribution (ties and all-zero sides included), but it needs repetitions: with three
//! a side the smallest p is 2/20 = 0.10, so no difference is ever called real; with four a
//! side it is 2/70 ≈ 0.029. The counts themselves are facts either way: one state that lost
//! a promised file is a reproducible finding, whatever the test says about rates.

use crate::result::{PhaseResult, RunResult};

/// The family-wise error rate of the pairs of one pattern.
pub const ALPHA: f64 = 0.05;

/// One target's figures for one pattern.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetLoss {
    pub target: String,
    /// The pattern's speed per trial (operations per second).
    pub ops_per_s: Vec<f64>,
    /// Per trial: (bad states, states checked).
    pub bad: Vec<(u64, u64)>,
    pub lost: u64,
    pub empty: u64,
    pub garbage: u64,
    pub unmountable: u64,
    pub repaired: u64,
    /// Temporaries left after a promised rename, files back after a promised unlink,
    /// promised files with the wrong mode.
    pub leftover: u64,
    pub reappeared: u64,
    pub metadata: u64,
    /// Files lost where nothing was promised: not among the broken promises.
    pub unpromised: u64,
    /// Coverage over all trials: flush points recorded and checked, reordered states
    /// checked and there were.
    pub flush_points: u64,
    pub flush_points_checked: u64,
    pub reordered: u64,
    pub reorderings: f64,
    /// Torn states checked and the writes that could tear, over all trials.
    pub torn: u64,
    pub tearable: u64,
    /// The promises made (file versions, committed transactions), and broken in some
    /// state (over all trials; 0 for runs that did not count them).
    pub promises: u64,
    pub promises_broken: u64,
    /// Per trial that measured it: the share of the pattern's recorded time during which
    /// a power cut would have lost promised data (percent; the phase's
    /// `crash_exposed_pct`).
    pub exposed_pct: Vec<f64>,
}

impl TargetLoss {
    /// Bad states and states checked over all trials.
    pub fn totals(&self) -> (u64, u64) {
        self.bad.iter().fold((0, 0), |(b, s), x| (b + x.0, s + x.1))
    }

    fn shares(&self) -> Vec<f64> {
        let share = |&(b, s): &(u64, u64)| if s == 0 { 0.0 } else { b as f64 / s as f64 };
        self.bad.iter().map(share).collect()
    }
}

/// One pair of targets tested.
#[derive(Clone, Debug, PartialEq)]
pub struct LossPair {
    pub a: String,
    pub b: String,
    /// The exact permutation p-value, and after Holm's correction.
    pub p: f64,
    pub p_holm: f64,
    /// Whether the difference is real at [`ALPHA`] over the pattern's pairs.
    pub real: bool,
    /// The smallest p the repetitions allow: above [`ALPHA`], no verdict was possible.
    pub p_min: f64,
}

/// One pattern of one `crash` workload across the run's targets.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternLoss {
    /// The workload's label and the pattern (its phase).
    pub workload: String,
    pub pattern: String,
    pub ops_unit: String,
    pub targets: Vec<TargetLoss>,
    pub pairs: Vec<LossPair>,
}

fn figure(p: &PhaseResult, key: &str) -> u64 {
    p.extra.get(key).copied().unwrap_or(0.0) as u64
}

/// Every `crash` pattern of `run` with crash states, its targets in the run's order.
pub fn losses(run: &RunResult) -> Vec<PatternLoss> {
    let mut out: Vec<PatternLoss> = Vec::new();
    let trials = run
        .trials
        .iter()
        .filter(|t| t.workload == "crash" && t.status == "ok");
    for t in trials {
        for p in t
            .phases
            .iter()
            .filter(|p| p.extra.contains_key("crash_states"))
        {
            let at = match out
                .iter()
                .position(|x| x.workload == t.label && x.pattern == p.name)
            {
                Some(i) => i,
                None => {
                    out.push(PatternLoss {
                        workload: t.label.clone(),
                        pattern: p.name.clone(),
                        ops_unit: ops_unit(&p.name),
                        targets: Vec::new(),
                        pairs: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            let pl = &mut out[at];
            let tl = match pl.targets.iter().position(|x| x.target == t.target) {
                Some(i) => &mut pl.targets[i],
                None => {
                    pl.targets.push(TargetLoss {
                        target: t.target.clone(),
                        ops_per_s: Vec::new(),
                        bad: Vec::new(),
                        lost: 0,
                        empty: 0,
                        garbage: 0,
                        unmountable: 0,
                        repaired: 0,
                        leftover: 0,
                        reappeared: 0,
                        metadata: 0,
                        unpromised: 0,
                        flush_points: 0,
                        flush_points_checked: 0,
                        reordered: 0,
                        reorderings: 0.0,
                        torn: 0,
                        tearable: 0,
                        promises: 0,
                        promises_broken: 0,
                        exposed_pct: Vec::new(),
                    });
                    pl.targets.last_mut().expect("pushed")
                }
            };
            tl.ops_per_s.push(p.ops_per_s);
            tl.bad
                .push((figure(p, "crash_bad_states"), figure(p, "crash_states")));
            tl.lost += figure(p, "crash_lost");
            tl.empty += figure(p, "crash_empty");
            tl.garbage += figure(p, "crash_garbage");
            tl.unmountable += figure(p, "crash_unmountable");
            tl.repaired += figure(p, "crash_repaired");
            tl.leftover += figure(p, "crash_leftover");
            tl.reappeared += figure(p, "crash_reappeared");
            tl.metadata += figure(p, "crash_metadata");
            tl.unpromised += figure(p, "crash_unpromised_lost");
            tl.flush_points += figure(p, "crash_flush_points");
            tl.flush_points_checked += figure(p, "crash_flush_points_checked");
            tl.reordered += figure(p, "crash_reordered");
            tl.torn += figure(p, "crash_torn");
            tl.tearable += figure(p, "crash_tearable");
            tl.reorderings += p.extra.get("crash_reorderings").copied().unwrap_or(0.0);
            tl.promises += figure(p, "crash_promises");
            tl.promises_broken += figure(p, "crash_promises_broken");
            tl.exposed_pct
                .extend(p.extra.get("crash_exposed_pct").copied());
        }
    }
    for pl in &mut out {
        pl.pairs = pairs(&pl.targets);
    }
    out
}

/// The unit of a pattern's operations, as its phase declares it.
fn ops_unit(pattern: &str) -> String {
    crate::workload::find("crash")
        .ok()
        .and_then(|w| w.phases.iter().find(|p| p.name == pattern))
        .map_or("ops/s", |p| p.ops_unit)
        .to_string()
}

/// Every pair of `targets` tested, Holm-corrected together.
pub fn pairs(targets: &[TargetLoss]) -> Vec<LossPair> {
    let mut out = Vec::new();
    for (i, a) in targets.iter().enumerate() {
        for b in &targets[i + 1..] {
            let (x, y) = (a.shares(), b.shares());
            out.push(LossPair {
                a: a.target.clone(),
                b: b.target.clone(),
                p: permutation_p(&x, &y),
                p_holm: 1.0,
                real: false,
                p_min: min_p(x.len(), y.len()),
            });
        }
    }
    let ps: Vec<f64> = out.iter().map(|p| p.p).collect();
    for (pair, adj) in out.iter_mut().zip(holm(&ps)) {
        pair.p_holm = adj;
        pair.real = adj < ALPHA;
    }
    out
}

/// Holm's step-down adjustment of `ps` (Holm 1979): the k-th smallest is multiplied by
/// (m − k + 1), made monotone, capped at 1.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (k, &i) in order.iter().enumerate() {
        running = running.max((ps[i] * (m - k) as f64).min(1.0));
        out[i] = running;
    }
    out
}

/// The smallest two-sided p the exact test can give with `n` and `m` trials.
pub fn min_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    (2.0 / binomial(n + m, n)).min(1.0)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Splits beyond which the test samples instead of enumerating (C(20,10) ≈ 185 000).
const ENUMERATE_MAX: f64 = 200_000.0;

/// The exact two-sided permutation p-value of the difference of the means of `x` and
/// `y`: the share of all splits of the pooled values into groups of their sizes whose
/// difference is at least as large in absolute value (1 when a side is empty). Beyond
/// [`ENUMERATE_MAX`] splits, the share of 100 000 seeded random splits (plus the observed
/// one), which stays valid.
pub fn permutation_p(x: &[f64], y: &[f64]) -> f64 {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 {
        return 1.0;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let total: f64 = pooled.iter().sum();
    let mean_gap = |sum_x: f64| (sum_x / n as f64 - (total - sum_x) / m as f64).abs();
    let observed = mean_gap(x.iter().sum()) - 1e-12;
    if binomial(n + m, n) <= ENUMERATE_MAX {
        let (mut hits, mut all) = (0u64, 0u64);
        combinations(n + m, n, &mut |pick| {
            all += 1;
            let s: f64 = pick.iter().map(|&i| pooled[i]).sum();
            hits += u64::from(mean_gap(s) >= observed);
        });
        return hits as f64 / all as f64;
    }
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(0x9e37);
    let mut idx: Vec<usize> = (0..n + m).collect();
    let draws = 100_000u64;
    let mut hits = 1u64;
    for _ in 0..draws {
        idx.shuffle(&mut rng);
        let s: f64 = idx[..n].iter().map(|&i| pooled[i]).sum();
        hits += u64::from(mean_gap(s) >= observed);
    }
    hits as f64 / (draws + 1) as f64
}

/// Calls `f` with every `k`-subset of `0..n` (ascending indices).
fn combinations(n: usize, k: usize, f: &mut dyn FnMut(&[usize])) {
    fn walk(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
        if cur.len() == k {
            f(cur);
            return;
        }
        for i in start..=n - (k - cur.len()) {
            cur.push(i);
            walk(i + 1, n, k, cur, f);
            cur.pop();
        }
    }
    walk(0, n, k, &mut Vec::with_capacity(k), f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_separation_gives_the_smallest_p() {
        let p = permutation_p(&[0.0, 0.0, 0.0], &[0.2, 0.1, 0.3]);
        assert!((p - 0.1).abs() < 1e-9, "{p}");
        assert!((min_p(3, 3) - 0.1).abs() < 1e-9);
        let p4 = permutation_p(&[0.0; 4], &[0.2, 0.1, 0.3, 0.1]);
        assert!((p4 - 2.0 / 70.0).abs() < 1e-9, "{p4}");
        assert_eq!(permutation_p(&[0.0; 3], &[0.0; 3]), 1.0);
        assert_eq!(permutation_p(&[], &[0.1]), 1.0);
    }

    #[test]
    fn holm_multiplies_by_rank_and_stays_monotone() {
        let adj = holm(&[0.01, 0.04, 0.03]);
        assert!((adj[0] - 0.03).abs() < 1e-12);
        assert!((adj[2] - 0.06).abs() < 1e-12);
        assert!((adj[1] - 0.06).abs() < 1e-12);
    }

    /// The false-positive rate under the null (both sides' bad-state counts drawn from one
    /// binomial), by simulation through the shipped functions: never above [`ALPHA`].
    #[test]
    fn the_false_positive_rate_stays_below_alpha() {
        for (reps, rate) in [(4, 0.05), (5, 0.2), (6, 0.02)] {
            let fpr = simulate(reps, 40, rate, rate, 2000, 11);
            assert!(fpr <= ALPHA, "reps {reps} rate {rate}: {fpr}");
        }
    }

    /// The table of docs/durability.md: the share of comparisons called real, by
    /// repetitions a side and bad-state rates (`cargo test --lib compare::crash::tests::table
    /// -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn table() {
        println!("| reps a side | rates a vs b | called real |");
        println!("|---|---|---|");
        for reps in [3, 4, 5, 8] {
            for (a, b) in [
                (0.1, 0.1),
                (0.0, 0.02),
                (0.0, 0.05),
                (0.0, 0.1),
                (0.05, 0.15),
            ] {
                let share = simulate(reps, 40, a, b, 4000, 5);
                println!("| {reps} | {a:.2} vs {b:.2} | {:.3} |", share);
            }
        }
    }

    /// Share of `runs` simulated comparisons of `reps` trials a side, `states` states each,
    /// with bad-state probabilities `rate_a` and `rate_b`, that the test calls real.
    pub fn simulate(
        reps: usize,
        states: u64,
        rate_a: f64,
        rate_b: f64,
        runs: usize,
        seed: u64,
    ) -> f64 {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut side = |name: &str, rate: f64| TargetLoss {
            target: name.into(),
            ops_per_s: vec![],
            bad: (0..reps)
                .map(|_| {
                    (
                        (0..states).filter(|_| rng.gen_bool(rate)).count() as u64,
                        states,
                    )
                })
                .collect(),
            lost: 0,
            empty: 0,
            garbage: 0,
            unmountable: 0,
            repaired: 0,
            leftover: 0,
            reappeared: 0,
            metadata: 0,
            unpromised: 0,
            ..Default::default()
        };
        let mut real = 0;
        for _ in 0..runs {
            let t = [side("a", rate_a), side("b", rate_b)];
            real += usize::from(pairs(&t)[0].real);
        }
        real as f64 / runs as f64
    }
}
