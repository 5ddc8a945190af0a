//! The error control of a whole verdict: every headline comparison a reader could read a
//! difference from, tested together.
//!
//! **The family** is every pair of targets (or sides) of every phase of a run, or of a
//! `compare`: k targets over P phases make P·k(k−1)/2 tests. All pairs, not the best and
//! its neighbours, because which target is best is chosen after looking at the data.
//!
//! **Each test** is Welch's t on logarithms ([`super::welch`]): d = mean ln b − mean ln a,
//! se² = s²_a/n_a + s²_b/n_b, Welch–Satterthwaite ν, two-sided p = 2·P(T_ν > |d|/se).
//! Each side's log standard deviation is floored at [`LOG_SD_FLOOR`] (0.1%), so that
//! repetitions that happen to be equal never make a zero-width interval; and a pair where
//! neither side varies is not tested at all unless both have [`MIN_REPS_NO_SPREAD`]
//! repetitions (two equal timings say little about the next).
//!
//! **The control** is Benjamini–Hochberg (1995) at q = 5% over the m tests: with p sorted
//! p₍₁₎ ≤ … ≤ p₍ₘ₎, R = max{i : p₍ᵢ₎ ≤ i·q/m} pairs are told apart. The expected share of
//! false "told apart" among those called is at most 5% (the false-discovery rate); when
//! nothing differs (an A/A run) any call is false, so the chance that an A/A run calls any
//! difference at all is at most 5% too. Every interval is printed at the level
//! 1 − max(R, 1)·q/m (the false-coverage-rate intervals of Benjamini & Yekutieli 2005), at
//! which a pair's interval excludes 1 exactly when the procedure told it apart: the words,
//! the marks and the intervals come from one test and cannot contradict each other.
//!
//! **Three outcomes** per pair: told apart (the interval excludes 1), within ±X% (the same
//! interval lies inside [1/(1+X), 1+X], an equivalence claim at the same level; X is the
//! margin, [`DEFAULT_MARGIN_PCT`] unless `--margin` says otherwise), or cannot tell.

pub use crate::stats::power::{detectable_log, reps_for, LOG_SD_FLOOR, MAX_REPS_FOR, POWER};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The false-discovery rate of a verdict, and so the chance that an A/A run calls any
/// difference.
pub const ALPHA: f64 = 0.05;
/// The equivalence margin when none is given, in percent: `within ±3%`.
pub const DEFAULT_MARGIN_PCT: f64 = 3.0;
/// Repetitions each side needs before a pair in which neither side varies is tested.
pub const MIN_REPS_NO_SPREAD: usize = super::verdict::MIN_REPS_NO_SPREAD;

/// `--margin PCT` as a fraction: [`DEFAULT_MARGIN_PCT`] when not given; above 0, below 100.
pub fn margin(pct: Option<f64>) -> anyhow::Result<f64> {
    let pct = pct.unwrap_or(DEFAULT_MARGIN_PCT);
    if !(pct > 0.0 && pct < 100.0) {
        return Err(crate::error::usage(format!(
            "--margin {pct}: give a percentage above 0 and below 100 (3 reads as within ±3%)"
        )));
    }
    Ok(pct / 100.0)
}

/// Welch's t on the logarithms of two samples, with each side's spread floored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Test {
    /// mean ln b − mean ln a: ln of the ratio of geometric means b/a.
    pub d: f64,
    /// Its standard error.
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Each side's variance of log values, floored ([`LOG_SD_FLOOR`]).
    pub var_a: f64,
    pub var_b: f64,
}

fn usable(xs: &[f64]) -> bool {
    !xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x > 0.0)
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

impl Test {
    /// The test of b against a (see the module docs); `None` when a side has fewer than
    /// two values, a value that is not finite and above zero, or when neither side varies
    /// and one has fewer than [`MIN_REPS_NO_SPREAD`] values.
    pub fn of(a: &[f64], b: &[f64]) -> Option<Self> {
        if !usable(a) || !usable(b) || a.len() < 2 || b.len() < 2 {
            return None;
        }
        let (ma, va) = mean_var(a);
        let (mb, vb) = mean_var(b);
        if va == 0.0 && vb == 0.0 && a.len().min(b.len()) < MIN_REPS_NO_SPREAD {
            return None;
        }
        let floor = LOG_SD_FLOOR * LOG_SD_FLOOR;
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let (wa, wb) = (va.max(floor) / na, vb.max(floor) / nb);
        let df = (wa + wb).powi(2) / (wa * wa / (na - 1.0) + wb * wb / (nb - 1.0));
        Some(Self {
            d: mb - ma,
            se: (wa + wb).sqrt(),
            df,
            var_a: va.max(floor),
            var_b: vb.max(floor),
        })
    }

    /// The ratio of geometric means b/a.
    pub fn ratio(&self) -> f64 {
        self.d.exp()
    }

    /// The two-sided p-value of "the geometric means are equal".
    pub fn p(&self) -> f64 {
        let t = StudentsT::new(0.0, 1.0, self.df).expect("df > 0");
        (2.0 * t.sf((self.d / self.se).abs())).min(1.0)
    }

    /// The interval of b/a at confidence `level`.
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = crate::stats::t_quantile(0.5 + level / 2.0, self.df) * self.se;
        ((self.d - half).exp(), (self.d + half).exp())
    }
}

/// The smallest slowdown, in percent of A's speed, that `test` could have detected at
/// [`POWER`] with a two-sided test at level `alpha`: 1 − e^(−δ), δ from
/// [`detectable_log`]; the same for rates and for times.
pub fn detectable_pct(test: &Test, alpha: f64) -> f64 {
    (1.0 - (-detectable_log(test.se, test.df, alpha)).exp()) * 100.0
}

/// How the family of a verdict was controlled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Family {
    /// Tests in the family (pairs with an interval).
    pub tests: usize,
    /// Pairs told apart.
    pub apart: usize,
    /// The confidence level of every printed interval.
    pub level: f64,
    /// The equivalence margin, as a fraction (0.03 for ±3%).
    pub margin: f64,
}

impl Family {
    /// Benjamini–Hochberg over the p-values `p` at [`ALPHA`] (see the module docs).
    pub fn control(p: &[f64], margin: f64) -> Self {
        let m = p.len();
        let mut s = p.to_vec();
        s.sort_by(f64::total_cmp);
        let r = (1..=m)
            .rev()
            .find(|&i| s[i - 1] <= i as f64 * ALPHA / m as f64)
            .unwrap_or(0);
        Self {
            tests: m,
            apart: r,
            level: 1.0 - r.max(1) as f64 * ALPHA / m.max(1) as f64,
            margin,
        }
    }

    /// The outcome of a pair's test under this family: told apart when its interval at
    /// [`Family::level`] excludes 1, within the margin when that interval lies inside
    /// [1/(1+X), 1+X]. Decided with Student's t distribution function rather than its
    /// quantile (the same answer, and what a run of 60 phases of 7 targets can afford):
    /// the interval d ± q·se excludes 0 when P(T > |d|/se) < (1 − level)/2, and lies within
    /// ±ln(1+X) when P(T > (ln(1+X) − |d|)/se) ≤ (1 − level)/2.
    pub fn outcome(&self, test: Option<&Test>) -> Outcome {
        let Some(t) = test else {
            return Outcome::CannotTell;
        };
        let tail = (1.0 - self.level) / 2.0;
        let dist = StudentsT::new(0.0, 1.0, t.df).expect("df > 0");
        let d = t.d.abs();
        let bound = (1.0 + self.margin).ln();
        if dist.sf(d / t.se) < tail {
            Outcome::Apart
        } else if d < bound && dist.sf((bound - d) / t.se) <= tail {
            Outcome::Within
        } else {
            Outcome::CannotTell
        }
    }

    /// The one line a verdict says about its control: `what` names the comparisons
    /// (`pairs of targets over all phases`).
    pub fn line(&self, what: &str) -> String {
        format!(
            "Control: Benjamini-Hochberg over all {} {what} together, 5% false discovery \
             rate (identical sides show a difference at most 5% of the time); intervals at \
             {}%; as fast means within ±{}%",
            self.tests,
            fmt_level(self.level),
            pct_text(self.margin * 100.0)
        )
    }
}

/// A percentage as typed: 3, 0.5 (not 0.49999999999999994).
pub fn pct_text(pct: f64) -> String {
    format!("{}", (pct * 1e9).round() / 1e9)
}

/// A confidence level in percent with the digits that matter: 95, 99.2, 99.96.
pub fn fmt_level(level: f64) -> String {
    let pct = level * 100.0;
    let miss = 100.0 - pct;
    let decimals = if miss >= 1.0 {
        1
    } else {
        (1.0 - miss.log10().floor()) as usize
    };
    let s = format!("{pct:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    s
}

/// What a family says about one pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The interval excludes 1.
    Apart,
    /// The interval lies inside the equivalence margin.
    Within,
    /// Neither: the data cannot tell (or there is no interval).
    CannotTell,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_matches_welch_on_logs() {
        // The numbers of welch.rs's scipy check: ratio 1.2020, df 3.9985, 95% CI
        // 1.1231–1.2864; scipy's ttest_ind(b, a, equal_var=False) on the logs gives
        // t = 7.529538478598757, p = 0.0016644 (stats.t.sf(7.5295, 3.9985)*2).
        let t = Test::of(&[100.0, 104.0, 98.0], &[120.0, 118.0, 125.0]).unwrap();
        assert!((t.ratio() - 1.2020004136527165).abs() < 1e-12);
        assert!((t.df - 3.9985091716937946).abs() < 1e-9);
        let (lo, hi) = t.interval(0.95);
        assert!((lo - 1.1231460209918849).abs() < 1e-9 && (hi - 1.2863910546069064).abs() < 1e-9);
        assert!((t.d / t.se - 7.529538478598757).abs() < 1e-9);
        assert!(t.p() > 0.0015 && t.p() < 0.0018, "{}", t.p());
    }

    #[test]
    fn equal_repetitions_are_never_certain() {
        // Two identical repetitions a side: not tested.
        assert_eq!(Test::of(&[100.0, 100.0], &[99.0, 99.0]), None);
        // Three: tested, with the floored spread: an interval of non-zero width.
        let t = Test::of(&[100.0; 3], &[99.0; 3]).unwrap();
        let (lo, hi) = t.interval(0.95);
        assert!(hi / lo > 1.001, "{lo} {hi}");
        assert_eq!(Test::of(&[100.0], &[99.0, 98.0]), None);
        assert_eq!(Test::of(&[100.0, 0.0, 3.0], &[99.0, 98.0, 1.0]), None);
        assert_eq!(Test::of(&[f64::NAN, 1.0], &[99.0, 98.0]), None);
    }

    #[test]
    fn benjamini_hochberg_and_its_level() {
        let f = Family::control(&[0.001, 0.008, 0.039, 0.041, 0.6], 0.03);
        // i·q/m = 0.01, 0.02, 0.03, 0.04, 0.05: the largest i with p(i) below is 2.
        assert_eq!((f.tests, f.apart), (5, 2));
        assert!((f.level - (1.0 - 2.0 * 0.05 / 5.0)).abs() < 1e-12);
        let none = Family::control(&[0.2, 0.5], 0.03);
        assert_eq!(none.apart, 0);
        assert!((none.level - 0.975).abs() < 1e-12);
        assert_eq!(Family::control(&[], 0.03).level, 0.95);
        assert_eq!(fmt_level(0.95), "95");
        assert_eq!(fmt_level(0.992), "99.2");
        assert_eq!(fmt_level(0.9996), "99.96");
        assert_eq!(fmt_level(1.0 - 0.05 / 1260.0), "99.996");
    }

    #[test]
    fn the_detectable_slowdown_and_the_repetitions_it_takes() {
        // CV 5% a side, 3 repetitions, one test at 5%: se = 0.05·√(2/3) = 0.0408, df = 4,
        // (t(0.975, 4) + t(0.8, 4))·se = (2.776 + 0.941)·0.0408 = 0.152: 14% slower.
        let a = [0.05f64.exp(), 1.0, (-0.05f64).exp()];
        let t = Test::of(&a, &a).unwrap();
        let sd = t.var_a.sqrt();
        assert!((sd - 0.05).abs() < 0.001, "{sd}");
        let pct = detectable_pct(&t, 0.05);
        assert!((pct - 14.1).abs() < 0.3, "{pct}");
        // 10% (ln 1/0.9 = 0.105) needs more, planned with Welch's fewest df, n − 1: at
        // n = 5, df 4, (2.776 + 0.941)·0.05·√(2/5) = 0.118; at n = 6, df 5,
        // (2.571 + 0.920)·0.05·√(2/6) = 0.101.
        assert_eq!(reps_for(t.var_a, t.var_b, 10.0, 0.05), Some(6));
        assert!(reps_for(t.var_a, t.var_b, 10.0, 0.05 / 30.0).unwrap() > 5);
        assert_eq!(reps_for(t.var_a, t.var_b, 0.0, 0.05), None);
        assert_eq!(reps_for(1.0, 1.0, 1.0, 0.05), None);
    }

    #[test]
    fn three_outcomes() {
        let f = Family::control(&[0.5], 0.03);
        let apart = Test::of(&[100.0, 101.0, 99.0], &[120.0, 121.0, 119.0]).unwrap();
        let within = Test::of(
            &[100.0, 100.2, 99.8, 100.1, 99.9],
            &[100.1, 100.3, 99.9, 100.0, 99.8],
        )
        .unwrap();
        let unsure = Test::of(&[100.0, 130.0, 80.0], &[105.0, 70.0, 125.0]).unwrap();
        assert_eq!(f.outcome(Some(&apart)), Outcome::Apart);
        assert_eq!(f.outcome(Some(&within)), Outcome::Within);
        assert_eq!(f.outcome(Some(&unsure)), Outcome::CannotTell);
        assert_eq!(f.outcome(None), Outcome::CannotTell);
    }
}
