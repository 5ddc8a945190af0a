//! Power: how likely a test on the logarithms of two samples is to see a true difference,
//! the smallest difference it sees with a given probability, and the repetitions a
//! difference needs. The CI gate (`compare::gate`), the verdict's `Could tell:` line,
//! `--reps-for` (`crate::reps`) and the noise probe's forecast plan with these, so that
//! what each promises is computed one way.
//!
//! **The test** is the verdict's: d = mean ln b − mean ln a over se = √(s²_a/n_a + s²_b/n_b),
//! compared with Student's t at Hsu's degrees of freedom, min(n_a, n_b) − 1 ([`test_df`]),
//! which keeps its false-positive rate at or below the nominal level whatever the two
//! spreads (Mickey & Brown 1966); Welch–Satterthwaite's estimated df does not at the small
//! levels a family of many tests uses (3 repetitions, one side 10× noisier: 3× the nominal
//! rate at 0.05/30).
//!
//! **Power is computed exactly**, not with the usual (t₁₋α/₂ + t_power)·se shortcut, which
//! promised 80% where the test had 65–79% at 4–8 df. With a true log difference δ and true
//! standard error σ, d/σ = Z ~ N(λ, 1) with λ = δ/σ, and se/σ = W = √(χ²_ν/ν), independent
//! of Z, where ν is the denominator's degrees of freedom: 2(n − 1) exactly for equal spreads
//! and repetitions, Satterthwaite's (s²_a/n_a + s²_b/n_b)²/(…) in general
//! ([`statistic_df`]). The test rejects when |Z/W| > c, c = t(1 − α/2, Hsu df), so its power
//! is E_W[Φ(λ − cW) + Φ(−λ − cW)] (the noncentral t with ν df and noncentrality λ),
//! evaluated here by Simpson's rule over W's density ([`Denominator`]); within 1e-5 of
//! scipy's `nct` (the unit tests).

use super::t_quantile;
use statrs::distribution::{ContinuousCDF, Normal};
use std::cell::RefCell;
use std::collections::HashMap;

/// The power a gate is planned for: a slowdown is seen 80% of the time.
pub const POWER: f64 = 0.8;
/// The least standard deviation of a side's log values (0.1%): the resolution below which
/// equal repetitions say nothing more.
pub const LOG_SD_FLOOR: f64 = 1e-3;
/// The most repetitions [`reps_for`] considers.
pub const MAX_REPS_FOR: usize = 1000;

/// The degrees of freedom the test uses for samples of `na` and `nb` values: Hsu's,
/// min(n_a, n_b) − 1 (at least 1).
pub fn test_df(na: usize, nb: usize) -> f64 {
    (na.min(nb).max(2) - 1) as f64
}

/// Welch–Satterthwaite's degrees of freedom of se² = `wa` + `wb` (each a variance over its
/// count), the distribution of the test's denominator; `na`, `nb` the counts.
pub fn statistic_df(wa: f64, wb: f64, na: usize, nb: usize) -> f64 {
    let m = wa.max(wb);
    if m <= 0.0 {
        return (na + nb).saturating_sub(2).max(1) as f64;
    }
    let (xa, xb) = (wa / m, wb / m);
    let (fa, fb) = ((na.max(2) - 1) as f64, (nb.max(2) - 1) as f64);
    (xa + xb).powi(2) / (xa * xa / fa + xb * xb / fb)
}

/// The distribution of W = √(χ²_ν/ν) as weighted points: the weighted mean of a function
/// of W over them is its expectation. W = Y/√ν with Y ~ χ_ν, whose density
/// y^(ν−1)·e^(−y²/2)/(2^(ν/2−1)·Γ(ν/2)) is bounded for ν ≥ 1; Simpson's rule on 401 points
/// over [0, √ν + 12] (beyond, below 1e-30 of the mass), weights normalised to 1.
pub struct Denominator {
    w: Vec<f64>,
    weight: Vec<f64>,
}

/// Simpson intervals of a [`Denominator`] (an even number).
const INTERVALS: usize = 400;

impl Denominator {
    /// The denominator with `nu` degrees of freedom (ν ≥ 1; cached per ν: power searches
    /// ask for the same few many times).
    pub fn new(nu: f64) -> std::rc::Rc<Self> {
        thread_local! {
            static CACHE: RefCell<HashMap<u64, std::rc::Rc<Denominator>>> =
                RefCell::new(HashMap::new());
        }
        let key = nu.to_bits();
        CACHE.with(|c| {
            if let Some(d) = c.borrow().get(&key) {
                return d.clone();
            }
            let d = std::rc::Rc::new(Self::compute(nu));
            let mut cache = c.borrow_mut();
            if cache.len() > 4096 {
                cache.clear();
            }
            cache.insert(key, d.clone());
            d
        })
    }

    fn compute(nu: f64) -> Self {
        let nu = nu.max(1.0);
        let top = nu.sqrt() + 12.0;
        let h = top / INTERVALS as f64;
        let ln_c =
            (nu / 2.0 - 1.0) * std::f64::consts::LN_2 + statrs::function::gamma::ln_gamma(nu / 2.0);
        let (mut w, mut weight) = (Vec::new(), Vec::new());
        for i in 0..=INTERVALS {
            let y = i as f64 * h;
            let density = match y > 0.0 {
                true => ((nu - 1.0) * y.ln() - y * y / 2.0 - ln_c).exp(),
                false if nu == 1.0 => (-ln_c).exp(),
                false => 0.0,
            };
            let simpson = match i {
                0 => 1.0,
                _ if i == INTERVALS => 1.0,
                _ if i % 2 == 1 => 4.0,
                _ => 2.0,
            };
            w.push(y / nu.sqrt());
            weight.push(simpson * density);
        }
        let total: f64 = weight.iter().sum();
        weight.iter_mut().for_each(|x| *x /= total);
        Self { w, weight }
    }

    /// E[f(W)].
    pub fn mean(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.w
            .iter()
            .zip(&self.weight)
            .map(|(&w, &p)| p * f(w))
            .sum()
    }
}

fn phi(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

/// The power of the two-sided test |Z/W| > `crit` when Z ~ N(`lambda`, 1) and W has `nu`
/// degrees of freedom (see the module docs).
pub fn power_two_sided(lambda: f64, nu: f64, crit: f64) -> f64 {
    Denominator::new(nu).mean(|w| phi(lambda - crit * w) + phi(-lambda - crit * w))
}

/// The chance that an interval whose worse end is Z + `crit`·W standard errors from the
/// truth stays below a loss `lambda` standard errors away, Z ~ N(0, 1): E_W[Φ(λ − cW)].
/// The CI gate (`compare::gate`) passes an unchanged B with this probability, and, by
/// symmetry, fails a B that truly lost λ with it too.
pub fn rule_out_power(lambda: f64, nu: f64, crit: f64) -> f64 {
    Denominator::new(nu).mean(|w| phi(lambda - crit * w))
}

/// The chance the CI gate is planned for: an unchanged B passes it, and a B that truly
/// lost the gate's percentage fails it, 95% of the time. With k gated figures each is
/// planned to rule out (or catch) the loss with 1 − 0.05/k, so that all k together pass
/// at least 95% of the time (Bonferroni's inequality).
pub const GATE_POWER: f64 = 0.95;

/// The two-sided critical value at level `alpha` with the test's `df`.
pub fn critical(alpha: f64, df: f64) -> f64 {
    t_quantile(1.0 - alpha / 2.0, df)
}

/// The smallest λ (in standard errors) at which `power(λ)`, increasing in λ, reaches
/// [`POWER`]; infinity when it never does.
fn smallest_lambda(power: impl Fn(f64) -> f64) -> f64 {
    let mut hi = 1.0;
    while power(hi) < POWER {
        hi *= 2.0;
        if hi > 1e6 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    // To 1e-5 of λ: a detectable difference to five digits.
    while hi - lo > 1e-5 * hi {
        let mid = (lo + hi) / 2.0;
        if power(mid) >= POWER {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The spread of a planned or observed comparison: each side's log variance and count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub var_a: f64,
    pub var_b: f64,
    pub n_a: usize,
    pub n_b: usize,
}

impl Spread {
    /// Both sides with `n` repetitions, variances floored at [`LOG_SD_FLOOR`].
    pub fn planned(var_a: f64, var_b: f64, n: usize) -> Self {
        let floor = LOG_SD_FLOOR * LOG_SD_FLOOR;
        Self {
            var_a: var_a.max(floor),
            var_b: var_b.max(floor),
            n_a: n,
            n_b: n,
        }
    }

    /// The standard error of the log difference.
    pub fn se(&self) -> f64 {
        (self.var_a / self.n_a as f64 + self.var_b / self.n_b as f64).sqrt()
    }

    /// The denominator's degrees of freedom ([`statistic_df`]).
    pub fn nu(&self) -> f64 {
        statistic_df(
            self.var_a / self.n_a as f64,
            self.var_b / self.n_b as f64,
            self.n_a,
            self.n_b,
        )
    }

    /// The test's degrees of freedom ([`test_df`]).
    pub fn df(&self) -> f64 {
        test_df(self.n_a, self.n_b)
    }

    /// The exact power of the two-sided test at level `alpha` against a true log
    /// difference `delta`.
    pub fn power(&self, delta: f64, alpha: f64) -> f64 {
        power_two_sided(delta / self.se(), self.nu(), critical(alpha, self.df()))
    }

    /// The smallest |log difference| the two-sided test at level `alpha` sees with
    /// probability [`POWER`].
    pub fn detectable_log(&self, alpha: f64) -> f64 {
        let (nu, c) = (self.nu(), critical(alpha, self.df()));
        smallest_lambda(|l| power_two_sided(l, nu, c)) * self.se()
    }

    /// The chance that the CI gate, each figure's interval at one-sided level `alpha`,
    /// rules out a loss of `loss` (log) when B is unchanged ([`rule_out_power`]).
    pub fn rule_out(&self, loss: f64, alpha: f64) -> f64 {
        let c = t_quantile(1.0 - alpha, self.df());
        rule_out_power(loss / self.se(), self.nu(), c)
    }
}

/// The smallest change of the log ratio that `n` repetitions a side of two samples whose
/// logs have the variance `var` detect at [`POWER`] by a two-sided test at level `alpha`,
/// planned before the samples exist (exact power, see the module docs).
pub fn planned_detectable_log(var: f64, n: usize, alpha: f64) -> f64 {
    Spread::planned(var, var, n).detectable_log(alpha)
}

/// A percentage as a log loss: ln(1/(1 − pct/100)); `None` outside (0, 100).
fn loss_log(pct: f64) -> Option<f64> {
    (pct > 0.0 && pct < 100.0).then(|| -(1.0 - pct / 100.0).ln())
}

/// The fewest repetitions per side (the same on both, from 3) at which `reaches(spread)`
/// holds, it being monotone in n; `None` beyond [`MAX_REPS_FOR`].
fn fewest(var_a: f64, var_b: f64, reaches: impl Fn(&Spread) -> bool) -> Option<usize> {
    let at = |n| reaches(&Spread::planned(var_a, var_b, n));
    if at(3) {
        return Some(3);
    }
    if !at(MAX_REPS_FOR) {
        return None;
    }
    let (mut lo, mut hi) = (3, MAX_REPS_FOR);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if at(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The repetitions per side (the same on both, from 3) at which a slowdown of `pct`
/// percent is detected at [`POWER`] by the two-sided test at level `alpha`, with the log
/// variances `var_a` and `var_b` seen so far; `None` when even [`MAX_REPS_FOR`] would not
/// do.
pub fn reps_for(var_a: f64, var_b: f64, pct: f64, alpha: f64) -> Option<usize> {
    let want = loss_log(pct)?;
    fewest(var_a, var_b, |s| s.power(want, alpha) >= POWER)
}

/// The repetitions per side at which the CI gate set for `pct` percent, each figure tested
/// two-sided at level `alpha` (0.05/k for k gated figures: its interval's worse end at
/// `alpha`/2), rules out a `pct` loss of an unchanged B with probability 1 − `alpha` (and
/// so catches a true `pct` loss as often): over k figures, an unchanged B passes with at
/// least [`GATE_POWER`] (Bonferroni's inequality).
pub fn gate_reps_for(var_a: f64, var_b: f64, pct: f64, alpha: f64) -> Option<usize> {
    let want = loss_log(pct)?;
    fewest(var_a, var_b, |s| {
        s.rule_out(want, alpha / 2.0) >= 1.0 - alpha
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_matches_the_noncentral_t() {
        // /tmp/py/bin/python -c 'from scipy import stats
        //   for nu, lam, c in [(4, 3.0, 2.776445105), (10, 2.5, 2.228138852),
        //                      (2.5, 5.0, 6.0), (30, 4.0, 3.5)]:
        //     print(stats.nct.sf(c, nu, lam) + stats.nct.cdf(-c, nu, lam))'
        // → 0.6192614594557404 0.6165347649509904 0.46703660308691236 0.6856705698993127
        for (nu, lam, c, want) in [
            (4.0, 3.0, 2.776445105, 0.6192614594557404),
            (10.0, 2.5, 2.228138852, 0.6165347649509904),
            (2.5, 5.0, 6.0, 0.46703660308691236),
            (30.0, 4.0, 3.5, 0.6856705698993127),
        ] {
            let got = power_two_sided(lam, nu, c);
            assert!(
                (got - want).abs() < 1e-5,
                "nu {nu} lam {lam}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn ruling_out_matches_the_noncentral_t() {
        // P(Z + cW < λ) = P(T' < c) for T' = (λ − Z)/W, a noncentral t with ν df and
        // noncentrality λ: /tmp/py/bin/python -c 'from scipy import stats
        //   print(stats.nct.cdf(2.5, 6, 4.0), stats.nct.cdf(3.2, 18, 5.5))'
        // → 0.09654466753390109 0.019600523016795268 (1 − those: the chances below)
        let got = rule_out_power(4.0, 6.0, 2.5);
        assert!((got - (1.0 - 0.09654466753390109)).abs() < 1e-6, "{got}");
        let got = rule_out_power(5.5, 18.0, 3.2);
        assert!((got - (1.0 - 0.019600523016795268)).abs() < 1e-6, "{got}");
    }

    #[test]
    fn detectable_and_repetitions_agree() {
        let var = 0.05f64.powi(2);
        let alpha = 0.05 / 30.0;
        let n = reps_for(var, var, 10.0, alpha).unwrap();
        let want = -(0.9f64).ln();
        assert!(planned_detectable_log(var, n, alpha) <= want);
        assert!(planned_detectable_log(var, n - 1, alpha) > want);
        let g = gate_reps_for(var, var, 10.0, alpha).unwrap();
        assert!(g >= n, "{g} {n}");
        assert!(Spread::planned(var, var, g).rule_out(want, alpha / 2.0) >= 1.0 - alpha);
        assert!(Spread::planned(var, var, g - 1).rule_out(want, alpha / 2.0) < 1.0 - alpha);
        assert_eq!(reps_for(var, var, 0.0, alpha), None);
        assert_eq!(reps_for(1.0, 1.0, 1.0, alpha), None);
    }

    #[test]
    fn hsu_df_is_the_smaller_sample_less_one() {
        assert_eq!(test_df(3, 10), 2.0);
        assert_eq!(test_df(7, 7), 6.0);
        assert!((statistic_df(1.0, 1.0, 5, 5) - 8.0).abs() < 1e-12);
        assert!((statistic_df(1.0, 1e-9, 5, 20) - 4.0).abs() < 1e-6);
    }
}
