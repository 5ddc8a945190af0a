//! `--reps auto`: as many repetitions as the figures need, judged on their intervals (as
//! hyperfine runs until a minimum count and time, but here until the answer is known).
//!
//! After each repetition from the third on, every workload phase is looked at, target by
//! target, through its headline figure. The first three repetitions of each target fix
//! how many it needs: the fewest n with t(0.975, n−1)·s₃/√n ≤ ln(1 + `precision`), s₃ the
//! spread of the logs of those three at its upper 80% confidence bound,
//! s·√(2/χ²(0.2, 2)), and never fewer than six ([`needed`]). The count comes from a first
//! stage as in Stein's two-stage procedure (Stein 1945), but the verdict is not Stein's
//! interval: it reads every repetition with their whole spread (an internal pilot, whose
//! first stage also sits in the final sample). Its rate of false differences is therefore
//! measured rather than derived: identical targets were told apart in 3.0–5.1% of
//! simulated runs at the default `--max-reps` and at `--max-reps 30` (docs/compare.md,
//! through the shipped code). A phase is **precise** when each of its targets has the
//! repetitions it needs. The run stops when every phase is precise, at
//! `max` repetitions, or when another repetition would not fit in the `budget` at the pace
//! of the repetitions so far. The budget bounds the whole run, from its start: when the
//! first repetition shows that the minimum will not fit, the run says so then
//! ([`over_budget`]).
//!
//! `--reps-for PCT` is the same rule with another goal ([`Goal::Detect`]), judged on the
//! first [`PILOT_FOR`] repetitions instead of three: the fewest n (at least twice those)
//! at which two figures as spread as a phase's most spread target, at its upper bound,
//! would let `compare --fail-if-slower PCT` against a run made the same way rule a PCT
//! loss out — and catch a true one — with probability 1 − 0.05/m at its level 0.05/m
//! ([`detect_alpha`], [`crate::stats::power::gate_reps_for`]), which is more than the
//! 80% power a verdict between two targets needs.
//!
//! The rule looks at precision only, never at whether a difference looks significant:
//! stopping as soon as a verdict turns significant is optional stopping, which makes a
//! run of identical targets call a difference two to three times as often. And it fixes
//! the count from the first repetitions rather than stopping when the running spread
//! first looks small: that too selects samples whose spread happens to be low, so that
//! the verdict reads intervals too narrow (identical targets at CV 5% were told apart in
//! 6.7% of simulated runs that way, not 5%). `tests/verdict_sim.rs` checks the rule on
//! the shipped code.

pub use crate::stats::precision::{
    detect_alpha, first_variance, needed, relative_half_width, states, summary, Goal, PhaseState,
    MIN_REPS, PILOT_FOR, SPREAD_BOUND, WIDEST_SHOWN,
};

use crate::error::usage;
use crate::policy::Decided;
use crate::result::RunResult;
use crate::stats::precision::pct_as_typed;
use anyhow::Result;

/// `--max-reps` when not given.
pub const DEFAULT_MAX_REPS: u32 = 10;
/// `--max-reps` when not given, with `--reps-for`: seeing a difference takes more
/// repetitions than knowing each figure to ±5%.
pub const DEFAULT_MAX_REPS_FOR: u32 = 30;
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
    /// `--reps-for PCT`: repeat until a PCT% difference could be seen, instead of for
    /// `precision`.
    pub reps_for_pct: Option<f64>,
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
            reps_for_pct: None,
        })
    }

    /// Checks `--reps-for PCT`, `--max-reps N` and `--budget DURATION`.
    pub fn detecting(pct: f64, max: Option<u32>, budget: Option<&str>) -> Result<Self> {
        if !(pct > 0.0 && pct < 100.0) {
            return Err(usage(format!(
                "--reps-for {pct}: give a percentage above 0 and below 100 (10 reads as a \
                 10% difference)"
            )));
        }
        let max = max.unwrap_or(DEFAULT_MAX_REPS_FOR);
        let least = 2 * PILOT_FOR as u32;
        if max < least {
            return Err(usage(format!(
                "--max-reps {max}: --reps-for runs at least {least} repetitions (its count is \
                 fixed by the first {PILOT_FOR}, and is at least twice that); give {least} or more"
            )));
        }
        let rule = Self::new(None, Some(max), budget)?;
        Ok(Self {
            reps_for_pct: Some(pct),
            ..rule
        })
    }

    /// What the repetitions of `run` are for.
    pub fn goal(&self, run: &RunResult) -> Goal {
        match self.reps_for_pct {
            Some(pct) => Goal::Detect {
                pct,
                alpha: detect_alpha(run),
            },
            None => Goal::Precision(self.precision),
        }
    }

    /// `--reps auto` or `--reps-for 10`, for the lines a person reads.
    fn name(&self) -> String {
        match self.reps_for_pct {
            Some(pct) => format!("--reps-for {}", pct_as_typed(pct)),
            None => "--reps auto".into(),
        }
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

impl AutoReps {
    /// The record of this rule, before its outcome is known.
    pub fn record(&self) -> Decided {
        Decided {
            precision_pct: (self.precision * 100.0 * 1e9).round() / 1e9,
            max_reps: self.max,
            budget_s: self.budget_s,
            reps_for_pct: self.reps_for_pct.map(pct_as_typed),
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
    let goal = rule.goal(run);
    states(run).iter().all(|s| s.settled(goal))
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
    let goal = rule.goal(run);
    let states = states(run);
    let open: Vec<&PhaseState> = states.iter().filter(|s| !s.settled(goal)).collect();
    let reason = match why {
        Stop::Settled => None,
        Stop::MaxReps => Some("--max-reps reached"),
        Stop::Budget => Some("--budget reached"),
    };
    let (name, settled) = (rule.name(), states.len() - open.len());
    let what = match goal {
        Goal::Precision(_) => format!("precise to {}", goal.text()),
        Goal::Detect { .. } => format!("could see {}", goal.text()),
    };
    let head = match reason {
        Some(reason) if !open.is_empty() => format!(
            "{name}: {done} repetitions ({reason}); {settled} of {} phases {what}",
            states.len()
        ),
        _ => match goal {
            Goal::Precision(_) => format!(
                "{name}: {done} repetitions; all {} phases precise to {} (the repetitions \
                 it needs)",
                states.len(),
                goal.text()
            ),
            Goal::Detect { alpha, .. } => format!(
                "{name}: {done} repetitions; all {} phases could see {} (95% power as \
                 the CI gate judges it, each test at {})",
                states.len(),
                goal.text(),
                crate::stats::precision::fmt_alpha(alpha)
            ),
        },
    };
    let mut lines = vec![head];
    let short = match goal {
        Goal::Precision(_) => format!("not within {}", goal.text()),
        Goal::Detect { .. } => format!("cannot yet see {}", goal.text()),
    };
    for s in open {
        lines.push(format!(
            "  {short}: {} {} ({})",
            s.workload,
            s.phase,
            s.shortfall(goal)
        ));
    }
    lines
}

#[cfg(test)]
mod tests;
