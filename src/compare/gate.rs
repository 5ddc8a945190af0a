//! `compare A B --fail-if-slower PCT`: the CI gate, which never passes what it could not
//! judge, and whose pass and fail are each a statement with a known error.
//!
//! Each gated figure (each phase's headline, and scores a workload declares gated) is
//! first checked: three repetitions a side or more, every value finite and above zero, a
//! successful trial on both sides, and the target set up alike in A and B. Then its loss
//! (how much of A's speed B lost, in percent: (1 − B/A)·100 for a rate, (1 − A/B)·100 for
//! a time; below 0 when B is faster) is read from the interval the comparison prints for
//! it: the gated figures are one family ([`super::family`]: Benjamini–Hochberg, Hsu's df),
//! so the table and the gate never disagree. Three zones:
//!
//! * **regression** (exit 3): the family tells B apart as worse, and the interval reaches
//!   PCT: a loss of PCT or more is not ruled out. An unchanged B fails so at most 5% of the
//!   time (the family's false-discovery rate: with nothing changed, any call is false).
//! * **pass** for a figure: the interval's worse end is below PCT: a PCT loss is ruled out.
//!   A B that truly lost PCT or more on some figure passes at most 5% of the time (its
//!   interval, at 95% or more, or its "as fast" claim, would have to miss). A figure told
//!   apart as worse whose interval stays under PCT (`2% worse, 1–4%`) passes, and is
//!   named.
//! * **cannot tell** (exit 5): the interval holds both no loss and a PCT loss. The
//!   repetitions per side named are those at which, with the spread seen, each figure of an
//!   unchanged B rules out a PCT loss — and a true PCT loss is caught — with probability
//!   1 − 0.05/k at the family's first level 0.05/k, so that an unchanged B passes the whole
//!   gate at least [`GATE_POWER`] (95%) of the time; computed exactly
//!   ([`crate::stats::power::Spread::rule_out`], the noncentral t).
//!
//! The earlier rule, "told apart and the estimate past PCT", caught a true PCT loss about
//! half the time whatever the repetitions, while saying it could see it.
//!
//! The outcome is one exit status ([`Outcome::code`]): regression (3) before could not
//! judge (4) before cannot tell (5); 0 only when every gated figure was judged and rules out
//! a PCT loss.

use super::family::{Outcome as Told, Test, ALPHA};
use super::verdict::Sense;
use super::{Comparison, Row};
use crate::error::exit;
pub use crate::stats::power::GATE_POWER;

/// Fewer repetitions than this on a side and a gated figure is not judged.
pub const MIN_GATE_REPS: usize = 3;

/// Where a judged figure's interval lies against the gate's percentage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Told apart as worse, and a PCT loss not ruled out.
    Regression,
    /// A PCT loss ruled out (B may still be told apart as worse, by less).
    Pass,
    /// Neither: no loss and a PCT loss both inside the interval.
    CannotTell,
}

/// What the gate found of one gated figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Judged: B's loss in percent (its estimate, and its interval least first), the zone,
    /// and the repetitions per side at which an unchanged B would pass with
    /// [`GATE_POWER`] (`None`: more than [`super::family::MAX_REPS_FOR`]).
    Judged {
        loss_pct: f64,
        interval: (f64, f64),
        zone: Zone,
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

/// The level each gated figure's test is planned at, for `k` gated figures: 0.05/k, the
/// first step of the family's Benjamini–Hochberg.
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

/// B's loss in percent for a ratio B/A of a figure of sense `sense`: (1 − r)·100 when
/// higher is better, (1 − 1/r)·100 when lower is; below 0 when B is better.
pub fn loss_pct(sense: Sense, ratio: f64) -> f64 {
    match sense {
        Sense::Duration | Sense::LowerBetter => (1.0 - 1.0 / ratio) * 100.0,
        _ => (1.0 - ratio) * 100.0,
    }
}

/// Judges gated row `r` (its test `t`, its interval and outcome set by the family) against
/// `limit` percent, `k` figures gated.
pub fn judge(r: &Row, t: &Test, sense: Sense, limit: f64, k: usize) -> Check {
    let (lo, hi) = r.ratio.and_then(|x| x.ci).unwrap_or((t.ratio(), t.ratio()));
    let (a, b) = (loss_pct(sense, lo), loss_pct(sense, hi));
    let interval = (a.min(b), a.max(b));
    let zone = if r.outcome == Some(Told::Apart) && interval.0 > 0.0 && interval.1 >= limit {
        Zone::Regression
    } else if interval.1 < limit {
        Zone::Pass
    } else {
        Zone::CannotTell
    };
    Check::Judged {
        loss_pct: loss_pct(sense, t.ratio()),
        interval,
        zone,
        reps_needed: crate::stats::power::gate_reps_for(t.var_a, t.var_b, limit, planned_alpha(k)),
    }
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
    let k = c.gated();
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
                Some(t) => judge(r, &t, sense, limit, k),
            },
        };
        r.regression = matches!(
            check,
            Check::Judged {
                zone: Zone::Regression,
                ..
            }
        );
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
    let checks = || c.rows.iter().filter_map(|r| r.gate.as_ref());
    if c.regressed() {
        Outcome::Regression
    } else if !c.unjudged.is_empty() || checks().any(|g| matches!(g, Check::Unjudged(_))) {
        Outcome::Unjudged
    } else if checks().any(|g| {
        matches!(
            g,
            Check::Judged {
                zone: Zone::CannotTell,
                ..
            }
        )
    }) {
        Outcome::CannotSee
    } else {
        Outcome::Pass
    }
}

/// The most repetitions per side any gated figure that cannot tell needs:
/// `Some(None)` when some would need more than [`super::family::MAX_REPS_FOR`].
pub fn reps_needed(c: &Comparison) -> Option<Option<usize>> {
    c.fail_if_slower?;
    let mut most: Option<Option<usize>> = None;
    for g in c.rows.iter().filter_map(|r| r.gate.as_ref()) {
        if let Check::Judged {
            zone: Zone::CannotTell,
            reps_needed,
            ..
        } = g
        {
            most = Some(match (most, reps_needed) {
                (Some(None), _) | (_, None) => None,
                (Some(Some(m)), Some(n)) => Some(m.max(*n)),
                (None, Some(n)) => Some(*n),
            });
        }
    }
    most
}
