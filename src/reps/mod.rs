//! `--reps auto`: as many repetitions as the figures need, judged on their intervals (as
//! hyperfine runs until a minimum count and time, but here until the answer is known).
//!
//! After each repetition from the third on, every workload phase is looked at, target by
//! target, through its headline figure. The first three repetitions of each target fix
//! how many it needs (Stein's two-stage rule, Stein 1945): the fewest n with
//! t(0.975, n−1)·s₃/√n ≤ ln(1 + `precision`), s₃ the spread of the logs of those three at
//! its upper 80% confidence bound, s·√(2/χ²(0.2, 2)), and never fewer than six
//! ([`needed`]). A phase is **settled** when each of
//! its targets has the repetitions it needs. The run stops when every phase is settled, at
//! `max` repetitions, or when another repetition would not fit in the `budget` at the pace
//! of the repetitions so far. The budget bounds the whole run, from its start: when the
//! first repetition shows that the minimum will not fit, the run says so then
//! ([`over_budget`]).
//!
//! The rule looks at precision only, never at whether a difference looks significant:
//! stopping as soon as a verdict turns significant is optional stopping, which makes a
//! run of identical targets call a difference two to three times as often. And it fixes
//! the count from the first repetitions rather than stopping when the running spread
//! first looks small: that too selects samples whose spread happens to be low, so that
//! the verdict reads intervals too narrow (identical targets at CV 5% were told apart in
//! 6.7% of simulated runs that way, not 5%). `tests/verdict_sim.rs` checks the rule on
//! the shipped code.

use crate::error::usage;
use crate::policy::Decided;
use crate::result::RunResult;
use anyhow::Result;

/// At least this many repetitions before a stop is considered.
pub const MIN_REPS: u32 = 3;
/// `--max-reps` when not given.
pub const DEFAULT_MAX_REPS: u32 = 10;
/// `--precision` (percent) when not given.
pub const DEFAULT_PRECISION_PCT: f64 = 5.0;

/// The rule of `--reps auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoReps {
    pub max: u32,
    /// Wanted half-width of each figure's 95% interval, as a fraction (0.05 for 5%).
    pub precision: f64,
    /// Wall time the repetitions may take, in seconds.
    pub budget_s: Option<f64>,
}

impl AutoReps {
    /// Checks `--precision PCT`, `--max-reps N` and `--budget DURATION`.
    pub fn new(precision_pct: Option<f64>, max: Option<u32>, budget: Option<&str>) -> Result<Self> {
        let pct = precision_pct.unwrap_or(DEFAULT_PRECISION_PCT);
        if !(pct > 0.0 && pct <= 100.0) {
            return Err(usage(format!(
                "--precision {pct}: give a percentage above 0, up to 100"
            )));
        }
        let max = max.unwrap_or(DEFAULT_MAX_REPS);
        if !(MIN_REPS..=crate::plan::MAX_REPS).contains(&max) {
            return Err(usage(format!(
                "--max-reps {max}: give {MIN_REPS} to {}",
                crate::plan::MAX_REPS
            )));
        }
        let budget_s = budget
            .map(parse_duration_s)
            .transpose()
            .map_err(|e| usage(format!("--budget {e}")))?;
        Ok(Self {
            max,
            precision: pct / 100.0,
            budget_s,
        })
    }
}

/// `300`, `300s`, `5m`, `1.5h` in seconds, up to 30 days. Kept by hand, not `humantime`:
/// one number and one unit is all a budget or a phase time needs.
pub fn parse_duration_s(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * mult <= 30.0 * 86400.0 => Ok(v * mult),
        _ => Err(format!(
            "'{}': give a duration such as 0.5s, 300s, 10m or 2h (up to 30 days)",
            crate::error::echo(text)
        )),
    }
}

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
    (2 * MIN_REPS as usize..=10_000)
        .find(|&n| crate::stats::t975(n - 1) * (var / n as f64).sqrt() <= want)
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
    let h = crate::stats::t975(xs.len() - 1) * (var / n).sqrt();
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
                    .map(crate::report::procs::primary_value)
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

impl AutoReps {
    /// The record of this rule, before its outcome is known.
    pub fn record(&self) -> Decided {
        Decided {
            precision_pct: (self.precision * 100.0 * 1e9).round() / 1e9,
            max_reps: self.max,
            budget_s: self.budget_s,
            outcome: Vec::new(),
        }
    }
}

/// Why the repetitions stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every phase is settled.
    Settled,
    /// `--max-reps` reached.
    MaxReps,
    /// Another repetition would overrun `--budget`.
    Budget,
}

/// How long a run has taken so far, in seconds: in all, since it started (provisioning,
/// the device calibration and everything before the first repetition count against the
/// budget), and in its repetitions, whose pace says how long the next one will take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elapsed {
    pub run_s: f64,
    pub reps_s: f64,
}

impl Elapsed {
    /// When the run would end after `more` repetitions at the pace of `done` so far.
    fn end_after(self, done: u32, more: u32) -> f64 {
        self.run_s + f64::from(more) * self.reps_s / f64::from(done.max(1))
    }
}

/// Whether every phase of `run` is settled under `rule`: each within the precision.
pub fn settled(rule: &AutoReps, run: &RunResult) -> bool {
    states(run).iter().all(|s| s.settled(rule.precision))
}

/// Whether to stop after `done` repetitions, the run having taken `elapsed` so far.
pub fn stop(rule: &AutoReps, run: &RunResult, done: u32, elapsed: Elapsed) -> Option<Stop> {
    if done < MIN_REPS {
        return None;
    }
    if settled(rule, run) {
        return Some(Stop::Settled);
    }
    if done >= rule.max {
        return Some(Stop::MaxReps);
    }
    if let Some(budget) = rule.budget_s {
        if elapsed.end_after(done, 1) > budget {
            return Some(Stop::Budget);
        }
    }
    None
}

/// After the first repetition (`done` = 1), once: a line saying, when it is so, that the
/// repetitions a verdict needs ([`MIN_REPS`]) will end past the budget at this pace —
/// said when it is known, not found out at the end.
pub fn over_budget(rule: &AutoReps, done: u32, elapsed: Elapsed) -> Option<String> {
    let budget = rule.budget_s?;
    if done != 1 {
        return None;
    }
    let end = elapsed.end_after(done, MIN_REPS - done);
    (end > budget).then(|| {
        format!(
            "--reps auto: at this pace the {MIN_REPS} repetitions a verdict needs end after \
             about {}, past the {} budget",
            crate::suite::human_duration(end),
            crate::suite::human_duration(budget)
        )
    })
}

/// What the run records when `--reps auto` stopped: how many repetitions, why, and each
/// phase that did not reach the precision with how far it got ([`Decided::outcome`]).
pub fn report(rule: &AutoReps, run: &RunResult, done: u32, why: Stop) -> Vec<String> {
    let pct = pct_as_typed(rule.precision * 100.0);
    let states = states(run);
    let open: Vec<&PhaseState> = states
        .iter()
        .filter(|s| !s.settled(rule.precision))
        .collect();
    let reason = match why {
        Stop::Settled => None,
        Stop::MaxReps => Some("--max-reps reached"),
        Stop::Budget => Some("--budget reached"),
    };
    let settled = states.len() - open.len();
    let head = match reason {
        Some(reason) if !open.is_empty() => format!(
            "--reps auto: {done} repetitions ({reason}); {settled} of {} phases settled",
            states.len()
        ),
        _ => format!(
            "--reps auto: {done} repetitions; all {} phases settled (the repetitions ±{pct}% needs)",
            states.len()
        ),
    };
    let mut lines = vec![head];
    for s in open {
        let got = if s.widest.is_finite() {
            format!("±{:.1}%", s.widest * 100.0)
        } else {
            "no interval".into()
        };
        lines.push(format!(
            "  not within ±{pct}%: {} {} ({got} on {})",
            s.workload, s.phase, s.widest_target
        ));
    }
    lines
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
fn pct_as_typed(pct: f64) -> f64 {
    (pct * 1e9).round() / 1e9
}

/// An interval's half-width in percent, to two figures: 240, 56, 12, 7.4.
fn fmt_width_pct(pct: f64) -> String {
    if pct >= 9.95 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    }
}

#[cfg(test)]
mod tests;
