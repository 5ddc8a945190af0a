//! What a metric's move means: which direction is better, the words for it, and the verdict
//! on one metric's two samples.
//!
//! A verdict names a direction only when the 95% interval of the ratio excludes 1 (see
//! [`super::welch`]); with one repetition on either side it says significance cannot be
//! judged, and so it does for samples with no spread at all and two repetitions on a side.
//! Values that are zero or negative have no logarithm: two all-zero samples are
//! `equal`, anything else with such values is `n/a`.

use super::welch::{self, LogRatio};
use crate::figures::{Better, Figure};

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    /// A rate, higher is faster: `ops_per_s`, `mb_per_s`, io500's `score_bw_gib_s`.
    Rate,
    /// A duration, lower is faster: `wall_s`, Postmark's `total_s`, `lat_*`.
    Duration,
    /// Higher is better but it is no speed alone: io500's `score_total`, `efficiency`.
    HigherBetter,
    /// Lower is better but it is no speed: `write_amplification`.
    LowerBetter,
    /// Neither better nor worse (`cpu_pct`, `dirty_bytes_end`, counts): "more" or "less".
    Neutral,
}

impl Sense {
    /// The sense of a figure as its emitter declared it ([`crate::figures::find`]): its
    /// better side, and whether it is a speed; an undeclared figure has none.
    pub fn of(figure: Option<&Figure>) -> Self {
        let Some(f) = figure else {
            return Self::Neutral;
        };
        match (f.better, f.is_speed()) {
            (Better::Higher, true) => Self::Rate,
            (Better::Higher, false) => Self::HigherBetter,
            (Better::Lower, true) => Self::Duration,
            (Better::Lower, false) => Self::LowerBetter,
            (Better::None, _) => Self::Neutral,
        }
    }

    /// The word for B moving up (`up`) or down against A.
    pub(super) fn word(self, up: bool) -> &'static str {
        match (self, up) {
            (Self::Rate, true) | (Self::Duration, false) => "faster",
            (Self::Rate, false) | (Self::Duration, true) => "slower",
            (Self::LowerBetter, true) | (Self::HigherBetter, false) => "worse",
            (Self::LowerBetter, false) | (Self::HigherBetter, true) => "better",
            (Self::Neutral, true) => "more",
            (Self::Neutral, false) => "less",
        }
    }

    /// How much worse B is than A, in percent, for a ratio B/A: the share of "goodness" lost,
    /// (1 − r)·100 for a rate and (1 − 1/r)·100 for a duration or a cost, so that a phase
    /// that takes 1.25 times as long and its throughput at 0.8 times both count as 20% slower.
    /// `None` when B is not worse or the metric has no better side. Always below 100.
    pub fn worse_pct(self, ratio: f64) -> Option<f64> {
        match self {
            Self::Rate | Self::HigherBetter if ratio < 1.0 => Some((1.0 - ratio) * 100.0),
            Self::Duration | Self::LowerBetter if ratio > 1.0 => Some((1.0 - 1.0 / ratio) * 100.0),
            _ => None,
        }
    }
}

/// The verdict on one metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The interval excludes 1: B is `word` ("faster", "worse", "more", …) than A;
    /// `worse_pct` is set when B is worse (see [`Sense::worse_pct`]).
    Significant {
        word: &'static str,
        /// How many times: B/A when B is higher, A/B when lower (≥ 1).
        times: f64,
        worse_pct: Option<f64>,
    },
    /// The interval contains 1.
    NoDifference,
    /// A headline whose interval at the family's level lies within ±this many percent
    /// ([`super::family`]).
    Within(f64),
    /// One repetition on a side: no interval.
    CannotJudge,
    /// Different values with no spread on either side and fewer than [`MIN_REPS_NO_SPREAD`]
    /// repetitions on one: two equal timings say little about the next (a coarse clock, a
    /// count), so the zero-width interval is not taken as certainty.
    NoSpread,
    /// Both samples are all zeros.
    Equal,
    /// Zero, negative or non-finite values: no ratio on a log scale.
    NotApplicable(&'static str),
}

impl Verdict {
    /// The text shown in the table.
    pub fn text(&self) -> String {
        match self {
            Self::Significant { word, times, .. } => {
                format!("{} {word}", super::rank::fmt_ratio(*times))
            }
            Self::NoDifference => "no significant difference".into(),
            Self::Within(pct) => format!("within ±{}%", super::family::pct_text(*pct)),
            Self::CannotJudge => "cannot judge (1 repetition)".into(),
            Self::NoSpread => "cannot judge (no spread in 2 repetitions)".into(),
            Self::Equal => "equal".into(),
            Self::NotApplicable(why) => format!("n/a ({why})"),
        }
    }
}

/// Repetitions a side needs before a difference between samples that do not vary at all
/// counts as certain.
pub const MIN_REPS_NO_SPREAD: usize = 3;

/// The verdict on a figure of sense `sense` and, where it exists, the ratio with its
/// interval.
pub fn judge(sense: Sense, a: &[f64], b: &[f64]) -> (Option<LogRatio>, Verdict) {
    let all = a.iter().chain(b);
    if all.clone().any(|x| !x.is_finite()) {
        return (None, Verdict::NotApplicable("non-finite values"));
    }
    if all.clone().all(|x| *x == 0.0) {
        return (None, Verdict::Equal);
    }
    if all.clone().any(|x| *x < 0.0) {
        return (None, Verdict::NotApplicable("negative values"));
    }
    let Some(r) = welch::log_ratio(a, b) else {
        return (None, Verdict::NotApplicable("zero values"));
    };
    // The same values on both sides (a count that never varies, a run against itself):
    // equal, not merely "no significant difference".
    let sorted = |xs: &[f64]| {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        v
    };
    let same_everywhere = a
        .first()
        .is_some_and(|first| all.clone().all(|x| x == first));
    if same_everywhere || sorted(a) == sorted(b) {
        return (Some(r), Verdict::Equal);
    }
    let no_spread = r.df.is_none() && r.ci.is_some_and(|(lo, hi)| lo == hi);
    let few = a.len().min(b.len()) < MIN_REPS_NO_SPREAD;
    let verdict = match r.significant() {
        Some(true) if no_spread && few => Verdict::NoSpread,
        None => Verdict::CannotJudge,
        Some(false) => Verdict::NoDifference,
        Some(true) => Verdict::Significant {
            word: sense.word(r.ratio > 1.0),
            times: r.ratio.max(1.0 / r.ratio),
            worse_pct: sense.worse_pct(r.ratio),
        },
    };
    (Some(r), verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sense of figure `m` of phase `phase` of workload `w`, as declared.
    fn of(w: &str, phase: &str, m: &str) -> Sense {
        Sense::of(crate::figures::find(
            crate::workload::figures_of(w),
            phase,
            m,
        ))
    }

    #[test]
    fn senses_of_the_metrics() {
        for (w, phase, m, s) in [
            ("bonnie", "write_block", "ops_per_s", Sense::Rate),
            ("bonnie", "write_block", "mb_per_s", Sense::Rate),
            (
                "postmark",
                "transactions",
                "transactions_per_s",
                Sense::Rate,
            ),
            ("bonnie", "write_block", "wall_s", Sense::Duration),
            ("postmark", "delete", "total_s", Sense::Duration),
            ("bonnie", "write_block", "lat_p99_us", Sense::Duration),
            (
                "bonnie",
                "write_block",
                "write_amplification",
                Sense::LowerBetter,
            ),
            ("bonnie", "write_block", "cpu_pct", Sense::Neutral),
            ("bonnie", "write_block", "dirty_bytes_end", Sense::Neutral),
            ("untar", "extract", "files", Sense::Neutral),
            ("io500", "mdtest-hard-delete", "score_bw_gib_s", Sense::Rate),
            ("io500", "mdtest-hard-delete", "score_md_kiops", Sense::Rate),
            (
                "io500",
                "mdtest-hard-delete",
                "score_total",
                Sense::HigherBetter,
            ),
            ("command", "run", "children_cpu_user_s", Sense::Neutral),
            ("command", "run", "command_s", Sense::Duration),
            ("bonnie", "write_block", "undeclared_s", Sense::Neutral),
        ] {
            assert_eq!(of(w, phase, m), s, "{w} {phase} {m}");
        }
        assert_eq!(Sense::Rate.worse_pct(0.8).map(|p| p.round()), Some(20.0));
        assert_eq!(Sense::Rate.worse_pct(1.2), None);
        assert_eq!(
            Sense::Duration.worse_pct(1.25).map(|p| p.round()),
            Some(20.0)
        );
        assert_eq!(
            Sense::LowerBetter.worse_pct(2.0).map(|p| p.round()),
            Some(50.0)
        );
        assert_eq!(Sense::LowerBetter.worse_pct(0.9), None);
        assert_eq!(Sense::Neutral.worse_pct(5.0), None);
        assert_eq!(
            Sense::HigherBetter.worse_pct(0.5).map(|p| p.round()),
            Some(50.0)
        );
    }

    #[test]
    fn verdicts() {
        let slow = [100.0, 101.0, 99.0];
        let fast = [200.0, 202.0, 198.0];
        let sig = |m: &str, a: &[f64], b: &[f64]| judge(of("bonnie", "write_block", m), a, b).1;
        let Verdict::Significant {
            word,
            times,
            worse_pct: None,
        } = sig("mb_per_s", &slow, &fast)
        else {
            panic!()
        };
        assert_eq!(word, "faster");
        assert!((times - 2.0).abs() < 0.01, "{times}");
        let Verdict::Significant {
            word, worse_pct, ..
        } = sig("mb_per_s", &fast, &slow)
        else {
            panic!()
        };
        assert_eq!(word, "slower");
        assert!((worse_pct.unwrap() - 50.0).abs() < 0.5);
        // Ratios, not lost percentages: twice the time is "2.0× slower".
        assert_eq!(sig("wall_s", &slow, &fast).text(), "2.0× slower");
        assert_eq!(sig("lat_p50_us", &fast, &slow).text(), "2.0× faster");
        assert_eq!(
            sig("write_amplification", &slow, &fast).text(),
            "2.0× worse"
        );
        let Verdict::Significant {
            word, worse_pct, ..
        } = sig("cpu_pct", &slow, &fast)
        else {
            panic!()
        };
        assert_eq!((word, worse_pct), ("more", None));
        assert_eq!(sig("dirty_bytes_end", &fast, &slow).text(), "2.0× less");
        // The same count on both sides is equal, not "no significant difference".
        assert_eq!(sig("ops_per_s", &[8147.0; 3], &[8147.0; 3]), Verdict::Equal);
        assert_eq!(Verdict::Equal.text(), "equal");
        assert_eq!(sig("mb_per_s", &slow, &slow), Verdict::Equal);
        assert_eq!(
            sig("mb_per_s", &slow, &[100.5, 99.0, 101.0]),
            Verdict::NoDifference
        );
        assert_eq!(sig("mb_per_s", &[100.0], &fast), Verdict::CannotJudge);
        // Two equal timings a side that differ: not certain (it was "faster" at n = 2) …
        let two = sig("mb_per_s", &[100.0, 100.0], &[120.0, 120.0]);
        assert_eq!(two, Verdict::NoSpread);
        assert_eq!(two.text(), "cannot judge (no spread in 2 repetitions)");
        // … from three a side it is, and the same value everywhere is equal.
        let three = sig("mb_per_s", &[100.0; 3], &[120.0; 3]);
        assert_eq!(three.text(), "1.20× faster");
        assert_eq!(sig("mb_per_s", &[100.0; 2], &[100.0; 2]), Verdict::Equal);
        assert_eq!(sig("dirty_bytes_end", &[0.0, 0.0], &[0.0]), Verdict::Equal);
        assert_eq!(
            sig("dirty_bytes_end", &[0.0, 4096.0], &[8192.0, 4096.0]).text(),
            "n/a (zero values)"
        );
        assert_eq!(
            sig("x", &[-1.0, 1.0], &[1.0, 2.0]).text(),
            "n/a (negative values)"
        );
        assert_eq!(
            sig("x", &[f64::INFINITY], &[1.0]).text(),
            "n/a (non-finite values)"
        );
    }
}
