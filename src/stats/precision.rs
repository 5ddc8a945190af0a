//! How precisely a run's figures are known so far, as `--reps auto` ([`crate::reps`])
//! judges them: per phase, its widest 95% interval among targets and whether each target
//! has the repetitions Stein's two-stage rule asks for ([`needed`]); and the lines a
//! person reads of a decided run ([`summary`]), which the run's report shows.

use crate::policy::Decided;
use crate::result::RunResult;

/// At least this many repetitions before a stop is considered.
pub const MIN_REPS: u32 = 3;

/// How one phase stands after the repetitions so far.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseState {
    pub workload: String,
    pub phase: String,
    /// The widest relative half-width of a 95% interval among its targets now (e.g. 0.08
    /// for ±8%).
    pub widest: f64,
    /// The target with that widest interval.
    pub widest_target: String,
    /// The fewest repetitions any of its targets has.
    pub done: usize,
    /// The largest variance of log values among its targets' first [`MIN_REPS`]
    /// repetitions, at its upper [`SPREAD_BOUND`] confidence bound; infinity when a target
    /// has fewer, or a value that is not positive.
    pub first_var: f64,
}

impl PhaseState {
    /// Whether more repetitions are not needed for this phase: each target has the
    /// repetitions its first three call for ([`needed`]); never whether its ranking looks
    /// decided.
    pub fn settled(&self, precision: f64) -> bool {
        needed(self.first_var, precision).is_some_and(|n| self.done >= n)
    }
}

/// The confidence of the upper bound of the first repetitions' spread: 80%.
pub const SPREAD_BOUND: f64 = 0.8;

/// The repetitions a target needs for a 95% interval of its geometric mean within
/// ±`precision`, from the variance of its logs `var`: the fewest n with t(0.975, n−1)·
/// √(var/n) ≤ ln(1 + precision), and at least twice [`MIN_REPS`], so that the three that
/// chose it are at most half of what the verdict reads (with fewer, the verdict of
/// identical targets at CV 2% erred in 6.7% of simulated runs); `None` beyond 10,000 or
/// without a variance.
pub fn needed(var: f64, precision: f64) -> Option<usize> {
    if !var.is_finite() {
        return None;
    }
    let want = (1.0 + precision).ln();
    (2 * MIN_REPS as usize..=10_000).find(|&n| super::t975(n - 1) * (var / n as f64).sqrt() <= want)
}

/// The variance of the logs of the first [`MIN_REPS`] of `xs` at its upper
/// [`SPREAD_BOUND`] confidence bound, s²·(k−1)/χ²(1 − SPREAD_BOUND, k−1); infinity with
/// fewer values or a value that is not positive.
pub fn first_variance(xs: &[f64]) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let k = MIN_REPS as usize;
    let first = &xs[..xs.len().min(k)];
    if first.len() < k || first.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return f64::INFINITY;
    }
    let logs: Vec<f64> = first.iter().map(|x| x.ln()).collect();
    let df = (k - 1) as f64;
    let mean = logs.iter().sum::<f64>() / k as f64;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / df;
    let chi = ChiSquared::new(df).expect("df > 0");
    var * df / chi.inverse_cdf(1.0 - SPREAD_BOUND)
}

/// The relative half-width of the 95% interval of the geometric mean of `xs`, or
/// infinity with fewer than two values or a value that is not positive.
pub fn relative_half_width(xs: &[f64]) -> f64 {
    if xs.len() < 2 || xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return f64::INFINITY;
    }
    let n = xs.len() as f64;
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let h = super::t975(xs.len() - 1) * (var / n).sqrt();
    h.exp() - 1.0
}

/// Where every phase of `run` stands.
pub fn states(run: &RunResult) -> Vec<PhaseState> {
    let mut out = Vec::new();
    for t in &run.trials {
        for p in &t.phases {
            if out
                .iter()
                .any(|s: &PhaseState| s.workload == t.label && s.phase == p.name)
            {
                continue;
            }
            let (mut widest, mut widest_target) = (0.0_f64, String::new());
            let (mut done, mut first_var) = (usize::MAX, 0.0_f64);
            let mut targets: Vec<&str> = Vec::new();
            for u in run.trials.iter().filter(|u| u.label == t.label) {
                if !targets.contains(&u.target.as_str()) {
                    targets.push(&u.target);
                }
            }
            for target in targets {
                let xs: Vec<f64> = run
                    .trials
                    .iter()
                    .filter(|u| u.status == "ok" && u.label == t.label && u.target == target)
                    .flat_map(|u| u.phases.iter().filter(|q| q.name == p.name))
                    .map(crate::result::primary_value)
                    .collect();
                done = done.min(xs.len());
                first_var = first_var.max(first_variance(&xs));
                let h = relative_half_width(&xs);
                if h > widest || widest_target.is_empty() {
                    widest = h;
                    widest_target = target.to_string();
                }
            }
            out.push(PhaseState {
                workload: t.label.clone(),
                phase: p.name.clone(),
                widest,
                widest_target,
                done,
                first_var,
            });
        }
    }
    out
}

/// Phases short of the precision named by [`summary`]; the record has them all.
pub const WIDEST_SHOWN: usize = 3;

/// What a person reads of `decided` for `run` (its repetitions done): the record's first
/// line, then the phases furthest from the precision, at most [`WIDEST_SHOWN`], and where
/// the rest are. Nothing while the run is not decided. Lines are whole: the caller wraps.
pub fn summary(decided: &Decided, run: &RunResult) -> Vec<String> {
    let Some(head) = decided.outcome.first() else {
        return Vec::new();
    };
    let pct = pct_as_typed(decided.precision_pct);
    let mut open: Vec<PhaseState> = states(run)
        .into_iter()
        .filter(|s| !s.settled(decided.precision_pct / 100.0))
        .collect();
    if open.is_empty() {
        return vec![head.clone()];
    }
    // Widest first; no interval at all counts as the widest.
    open.sort_by(|a, b| b.widest.total_cmp(&a.widest));
    let named: Vec<String> = open
        .iter()
        .take(WIDEST_SHOWN)
        .map(|s| {
            let got = if s.widest.is_finite() {
                format!("±{}%", fmt_width_pct(s.widest * 100.0))
            } else {
                "no interval".into()
            };
            format!("{} {} {got} on {}", s.workload, s.phase, s.widest_target)
        })
        .collect();
    let line = if open.len() <= WIDEST_SHOWN {
        format!("short of ±{pct}%: {}", named.join(", "))
    } else {
        format!(
            "{n} short of ±{pct}%, widest: {}; all {n} in the run's JSON, \
             policy.auto_reps.outcome",
            named.join(", "),
            n = open.len()
        )
    };
    vec![head.clone(), line]
}

/// A percentage as typed: 5, 0.5, 0.0001 (not 0.00009999999999999999).
pub fn pct_as_typed(pct: f64) -> f64 {
    (pct * 1e9).round() / 1e9
}

/// An interval's half-width in percent, to two figures: 240, 56, 12, 7.4.
pub fn fmt_width_pct(pct: f64) -> String {
    if pct >= 9.95 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    }
}
