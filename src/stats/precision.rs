//! How precisely a run's figures are known so far, as `--reps auto` ([`crate::reps`])
//! judges them: per phase, its widest 95% interval among targets and whether each target
//! has the repetitions its first ones ask for (a first stage as in Stein's two-stage
//! procedure, described in `crate::reps`) — for a wanted precision
//! ([`needed`]) or for a difference to be seen (`--reps-for`, [`Goal::Detect`]); and the
//! lines a person reads of a decided run ([`summary`]), which the run's report shows.

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
    /// The same of the first [`PILOT_FOR`] repetitions, which `--reps-for` judges by.
    pub pilot_var: f64,
}

impl PhaseState {
    /// Whether more repetitions are not needed for this phase: each target has the
    /// repetitions its first three call for under `goal`; never whether its ranking looks
    /// decided.
    pub fn settled(&self, goal: Goal) -> bool {
        self.needs(goal).is_some_and(|n| self.done >= n)
    }

    /// The repetitions this phase needs under `goal`: what its first ones call for. Fixed
    /// by them alone: looking again later — after every repetition, or once at the count
    /// the first ones asked for — stops when the spread happens to look low, and
    /// identical targets then differed in 5.8% and 5.9% of 3000 simulated runs.
    pub fn needs(&self, goal: Goal) -> Option<usize> {
        match goal {
            Goal::Precision(_) => goal.needs(self.first_var),
            Goal::Detect { .. } => goal.needs(self.pilot_var),
        }
    }
}

/// What `--reps auto` repeats for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Goal {
    /// Each headline figure's 95% interval within ±this fraction (`--precision`).
    Precision(f64),
    /// A slowdown of `pct` percent seen at 80% power ([`super::power::POWER`]) by a
    /// two-sided test at level `alpha` between two figures each as spread as the phase's
    /// most spread target (`--reps-for`).
    Detect { pct: f64, alpha: f64 },
}

impl Goal {
    /// The goal `decided` recorded for `run`.
    pub fn of(decided: &Decided, run: &RunResult) -> Self {
        match decided.reps_for_pct {
            Some(pct) => Self::Detect {
                pct,
                alpha: detect_alpha(run),
            },
            None => Self::Precision(decided.precision_pct / 100.0),
        }
    }

    /// The repetitions a target whose first ones have the log variance `var` (at its
    /// upper bound, [`first_variance`]) needs; `None` beyond what is considered, or
    /// without a variance. Never fewer than twice [`MIN_REPS`] (see [`needed`]).
    pub fn needs(self, var: f64) -> Option<usize> {
        match self {
            Self::Precision(p) => needed(var, p),
            Self::Detect { pct, alpha } => {
                if !var.is_finite() {
                    return None;
                }
                let var = var.max(super::power::LOG_SD_FLOOR.powi(2));
                super::power::gate_reps_for(var, var, pct, alpha).map(|n| n.max(2 * PILOT_FOR))
            }
        }
    }

    /// `±5%` or `a 10% difference`, for the lines a person reads.
    pub fn text(self) -> String {
        match self {
            Self::Precision(p) => format!("±{}%", pct_as_typed(p * 100.0)),
            Self::Detect { pct, .. } => format!("a {}% difference", pct_as_typed(pct)),
        }
    }
}

/// The level `--reps-for` plans each test at for `run`: 0.05/m, m the larger of the
/// run's own family (every pair of its k targets in each of its P phases, P·k(k−1)/2)
/// and the CI gate's (each target's phases against another run's, P·k) — the level a
/// first call of either must pass.
pub fn detect_alpha(run: &RunResult) -> f64 {
    let phases = states(run).len().max(1);
    let mut targets: Vec<&str> = run.trials.iter().map(|t| t.target.as_str()).collect();
    targets.sort_unstable();
    targets.dedup();
    let k = targets.len().max(1);
    0.05 / (phases * (k * (k - 1) / 2).max(k)) as f64
}

/// The repetitions whose spread fixes how many `--reps-for` runs: more than the three of
/// `--precision`, since its count varies widely with them (from twelve to hundreds), and
/// the verdict then reads a sample whose first part was chosen for its low spread: with
/// three, identical targets differed in 5.7–5.9% of 3000 simulated runs.
pub const PILOT_FOR: usize = 6;

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
    let k = MIN_REPS as usize;
    if xs.len() < k {
        return f64::INFINITY;
    }
    bounded_variance(&xs[..k])
}

/// The variance of the logs of `xs` at its upper [`SPREAD_BOUND`] confidence bound,
/// s²·(n−1)/χ²(1 − SPREAD_BOUND, n−1); infinity as [`log_variance`].
pub fn bounded_variance(xs: &[f64]) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let var = log_variance(xs);
    if !var.is_finite() {
        return f64::INFINITY;
    }
    let df = (xs.len() - 1) as f64;
    let chi = ChiSquared::new(df).expect("df > 0");
    var * df / chi.inverse_cdf(1.0 - SPREAD_BOUND)
}

/// The variance of the logs of `xs`; infinity with fewer than two values or a value that
/// is not positive.
pub fn log_variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 || xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return f64::INFINITY;
    }
    let n = xs.len() as f64;
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n;
    logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0)
}

/// The relative half-width of the 95% interval of the geometric mean of `xs`, or
/// infinity with fewer than two values or a value that is not positive.
pub fn relative_half_width(xs: &[f64]) -> f64 {
    let var = log_variance(xs);
    if !var.is_finite() {
        return f64::INFINITY;
    }
    let h = super::t975(xs.len() - 1) * (var / xs.len() as f64).sqrt();
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
            let (mut done, mut first_var, mut pilot_var) = (usize::MAX, 0.0_f64, 0.0_f64);
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
                pilot_var = pilot_var.max(match xs.len() >= PILOT_FOR {
                    true => bounded_variance(&xs[..PILOT_FOR]),
                    false => f64::INFINITY,
                });
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
                pilot_var,
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
    let goal = Goal::of(decided, run);
    let mut open: Vec<PhaseState> = states(run)
        .into_iter()
        .filter(|s| !s.settled(goal))
        .collect();
    if open.is_empty() {
        return vec![head.clone()];
    }
    // Furthest first; no interval at all counts as the furthest.
    let far = |s: &PhaseState| match goal {
        Goal::Precision(_) => s.widest,
        Goal::Detect { .. } => s.needs(goal).map_or(f64::INFINITY, |n| n as f64),
    };
    open.sort_by(|a, b| far(b).total_cmp(&far(a)));
    let named: Vec<String> = open
        .iter()
        .take(WIDEST_SHOWN)
        .map(|s| format!("{} {} {}", s.workload, s.phase, s.shortfall(goal)))
        .collect();
    let short = match goal {
        Goal::Precision(_) => format!("short of {}", goal.text()),
        Goal::Detect { .. } => format!("cannot yet see {}", goal.text()),
    };
    let line = if open.len() <= WIDEST_SHOWN {
        format!("{short}: {}", named.join(", "))
    } else {
        let first = match goal {
            Goal::Precision(_) => "widest",
            Goal::Detect { .. } => "furthest",
        };
        format!(
            "{n} {short}, {first}: {}; all {n} in the run's JSON, \
             policy.auto_reps.outcome",
            named.join(", "),
            n = open.len()
        )
    };
    vec![head.clone(), line]
}

impl PhaseState {
    /// How far this phase is from `goal`: `±12% on xfs` (its widest interval) or `needs
    /// about 14 repetitions` (what its first ones call for).
    pub fn shortfall(&self, goal: Goal) -> String {
        match goal {
            Goal::Precision(_) if self.widest.is_finite() => format!(
                "±{}% on {}",
                fmt_width_pct(self.widest * 100.0),
                self.widest_target
            ),
            Goal::Precision(_) => format!("no interval on {}", self.widest_target),
            Goal::Detect { .. } => match self.needs(goal) {
                Some(n) => format!("needs about {n} repetitions"),
                None if self.pilot_var.is_finite() => {
                    format!("needs more than {} repetitions", super::power::MAX_REPS_FOR)
                }
                None => format!("no spread yet on {}", self.widest_target),
            },
        }
    }
}

/// A level of [`detect_alpha`] as a person reads it: `0.05/180`.
pub fn fmt_alpha(alpha: f64) -> String {
    format!("0.05/{:.0}", 0.05 / alpha)
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
