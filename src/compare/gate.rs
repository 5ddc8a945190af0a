//! `compare A B --fail-if-slower PCT`: the CI gate, which never passes what it could not
//! judge and says how small a slowdown it catches.
//!
//! Each gated figure (each phase's headline, and scores a workload declares gated) is
//! first checked: three repetitions a side or more, every value finite and above zero, a
//! successful trial on both sides, and the target set up alike in A and B. Then, with the
//! interval of B/A at the family's level ([`super::family`], all gated figures together):
//!
//! * **regression** (exit 3): B is told apart as worse, and the worse end of its interval
//!   reaches a PCT loss: a loss of PCT or more is not ruled out. A figure told apart as
//!   worse whose whole interval stays under PCT (`2% slower [1–4%]`) passes, and is named.
//!   So an unchanged B fails at most 5% of the time (it must be told apart), and a true
//!   loss of PCT fails with the power below (the interval's far end is past PCT nearly
//!   always then). The earlier rule, "told apart and the estimate past PCT", caught a true
//!   PCT loss only about half the time whatever the repetitions, while saying it could;
//! * **power** (exit 5 when short): the smallest true loss this rule catches with 80%
//!   probability with the repetitions it had, computed exactly
//!   ([`crate::stats::power::Spread::gate_power`]: the noncentral t of the statistic,
//!   both conditions) from the observed spread of the logs, each test at 0.05/k for k
//!   gated figures (the first step of Benjamini–Hochberg, the level a single regression
//!   must pass). Above PCT, the gate could not have caught the regression it is set for,
//!   and the repetitions per side that would are named.
//!
//! The outcome is one exit status ([`Outcome::code`]): regression (3) before could not
//! judge (4) before could not see (5); 0 only when every gated figure was judged, none
//! regressed and each could have caught PCT.

use super::family::{self, Test, ALPHA};
use super::verdict::Sense;
use super::{Comparison, Row};
use crate::error::exit;

/// Fewer repetitions than this on a side and a gated figure is not judged.
pub const MIN_GATE_REPS: usize = 3;

/// What the gate found of one gated figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Judged: the true slowdown (percent) the gate's rule catches at 80% power with these
    /// repetitions, and the repetitions per side that would catch the gate's percentage
    /// (`None`: more than [`family::MAX_REPS_FOR`], or a percentage of 0).
    Judged {
        detectable_pct: f64,
        reps_needed: Option<usize>,
    },
    /// Not judged, and why.
    Unjudged(String),
}

/// The gate's outcome over all gated figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Regression,
    Unjudged,
    CannotSee,
}

impl Outcome {
    /// The exit status of `compare` for this outcome.
    pub fn code(self) -> i32 {
        match self {
            Self::Pass => exit::OK,
            Self::Regression => exit::REGRESSION,
            Self::Unjudged => exit::GATE_UNJUDGED,
            Self::CannotSee => exit::GATE_CANNOT_SEE,
        }
    }
}

/// The per-test level the gate's power is planned at, for `k` gated figures.
pub fn planned_alpha(k: usize) -> f64 {
    ALPHA / k.max(1) as f64
}

/// Why `a` against `b` cannot be judged by the gate, if so.
fn unjudgeable(a: &[f64], b: &[f64], setup: Option<&str>) -> Option<String> {
    if let Some(what) = setup {
        return Some(format!("the target is set up differently ({what})"));
    }
    let bad = |xs: &[f64]| xs.iter().any(|x| !(x.is_finite() && *x > 0.0));
    for (side, xs) in [("A", a), ("B", b)] {
        if bad(xs) {
            return Some(format!("a value of 0, below 0 or not a number in {side}"));
        }
    }
    if a.len().min(b.len()) < MIN_GATE_REPS {
        return Some(format!(
            "{} repetition(s) in A, {} in B: the gate needs {MIN_GATE_REPS} a side",
            a.len(),
            b.len()
        ));
    }
    None
}

/// How much worse than A the two ends of `r`'s interval are, in percent, least first
/// (`None` when the row has no interval or B is not worse at both ends).
pub fn loss_range(r: &Row, sense: Sense) -> Option<(f64, f64)> {
    let (lo, hi) = r.ratio?.ci?;
    let (a, b) = (sense.worse_pct(lo)?, sense.worse_pct(hi)?);
    Some((a.min(b), a.max(b)))
}

/// Checks every gated figure of `c` and marks the regressions (see the module docs).
pub fn gate(c: &mut Comparison) {
    c.unjudged.clear();
    // Judged afresh: a row no longer gated (`--gate-phase`) keeps nothing of before.
    for r in c.rows.iter_mut() {
        r.regression = false;
        r.gate = None;
    }
    let Some(limit) = c.fail_if_slower else {
        return;
    };
    let alpha = planned_alpha(c.gated());
    let setup = c.setup_differs.clone();
    let senses: Vec<Sense> = c.rows.iter().map(|r| super::sense_of_row(c, r)).collect();
    for (r, sense) in c.rows.iter_mut().zip(senses).filter(|(r, _)| r.gated) {
        let differs = setup
            .iter()
            .find(|(t, _)| *t == r.target_a)
            .map(|(_, w)| w.as_str());
        let check = match unjudgeable(&r.values_a, &r.values_b, differs) {
            Some(why) => Check::Unjudged(why),
            None => match Test::of(&r.values_a, &r.values_b) {
                None => Check::Unjudged("no interval".into()),
                Some(t) => {
                    let spread = t.spread();
                    let loss = spread.gate_detectable_log(alpha);
                    Check::Judged {
                        detectable_pct: (1.0 - (-loss).exp()) * 100.0,
                        reps_needed: crate::stats::power::gate_reps_for(
                            t.var_a, t.var_b, limit, alpha,
                        ),
                    }
                }
            },
        };
        let worse = matches!(
            r.verdict,
            super::Verdict::Significant {
                worse_pct: Some(_),
                ..
            }
        );
        r.regression = matches!(check, Check::Judged { .. })
            && r.outcome == Some(family::Outcome::Apart)
            && worse
            && loss_range(r, sense).is_some_and(|(_, worst)| worst >= limit);
        r.gate = Some(check);
    }
    // A phase A measured that has no successful trial in B: nothing was compared.
    for what in &c.only_a {
        c.unjudged.push(format!(
            "{what}: measured in A, no successful trial in B (not compared)"
        ));
    }
}

/// The gate's outcome for `c` (see the module docs).
pub fn outcome(c: &Comparison) -> Outcome {
    let limit = c.fail_if_slower.unwrap_or(0.0);
    let checks = || c.rows.iter().filter_map(|r| r.gate.as_ref());
    if c.regressed() {
        Outcome::Regression
    } else if !c.unjudged.is_empty() || checks().any(|g| matches!(g, Check::Unjudged(_))) {
        Outcome::Unjudged
    } else if checks()
        .any(|g| matches!(g, Check::Judged { detectable_pct, .. } if *detectable_pct > limit))
    {
        Outcome::CannotSee
    } else {
        Outcome::Pass
    }
}

/// The most repetitions per side any gated figure needs to see the gate's percentage:
/// `Some(None)` when some would need more than [`family::MAX_REPS_FOR`].
pub fn reps_needed(c: &Comparison) -> Option<Option<usize>> {
    let limit = c.fail_if_slower?;
    let mut most: Option<Option<usize>> = None;
    for g in c.rows.iter().filter_map(|r| r.gate.as_ref()) {
        if let Check::Judged {
            detectable_pct,
            reps_needed,
        } = g
        {
            if *detectable_pct > limit {
                most = Some(match (most, reps_needed) {
                    (Some(None), _) | (_, None) => None,
                    (Some(Some(m)), Some(n)) => Some(m.max(*n)),
                    (None, Some(n)) => Some(*n),
                });
            }
        }
    }
    most
}
