//! Welch's t interval for the ratio of two samples' geometric means, and the Student t
//! distribution for fractional degrees of freedom that it needs.
//!
//! For positive samples a (n_a values) and b (n_b values), on logarithms:
//!
//! * d = mean(ln b) − mean(ln a), v_a = s²(ln a)/n_a, v_b = s²(ln b)/n_b, se = √(v_a + v_b);
//! * Welch–Satterthwaite degrees of freedom ν = (v_a + v_b)² / (v_a²/(n_a−1) + v_b²/(n_b−1))
//!   (Welch 1947, Satterthwaite 1946), fractional in general;
//! * ratio B/A = e^d (the ratio of geometric means), 95% CI = e^(d ± t(0.975, ν)·se).
//!
//! The t quantile is found by bisection on the t distribution function
//! F(t) = 1 − ½·I_{ν/(ν+t²)}(ν/2, ½) for t ≥ 0, with the regularized incomplete beta
//! function I_x(a, b) evaluated by its continued fraction (modified Lentz; Numerical Recipes
//! 3rd ed., §6.4) and ln Γ by the Lanczos approximation (g = 7, 9 terms).

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The distribution function of Student's t with `df` > 0 degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The quantile t(p, df) of Student's t for 0.5 ≤ p < 1 and any real `df` > 0.
///
/// Bisection on the upper tail ½·I_{ν/(ν+t²)}(ν/2, ½) = 1 − p, which stays accurate where
/// 1 − F(t) is tiny; to about 1e-12 relative.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    assert!(
        (0.5..1.0).contains(&p) && df > 0.0,
        "t quantile needs 0.5 ≤ p < 1 and df > 0 (p {p}, df {df})"
    );
    let want = 1.0 - p;
    let upper = |t: f64| 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while upper(hi) > want && hi < 1e300 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..400 {
        let mid = 0.5 * (lo + hi);
        if upper(mid) > want {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The ratio of B's geometric mean to A's and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogRatio {
    /// e^(mean ln b − mean ln a).
    pub ratio: f64,
    /// The 95% interval of the ratio; `None` when either sample has one value.
    pub ci: Option<(f64, f64)>,
    /// Welch–Satterthwaite degrees of freedom; `None` without an interval or when neither
    /// sample varies.
    pub df: Option<f64>,
}

impl LogRatio {
    /// Whether the interval excludes 1; `None` when there is no interval.
    pub fn significant(&self) -> Option<bool> {
        self.ci.map(|(lo, hi)| lo > 1.0 || hi < 1.0)
    }
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// Welch's t on logarithms (see the module docs). Needs non-empty samples of finite values
/// above zero; returns `None` otherwise. When neither log sample varies, the interval is the
/// point e^d itself (no spread; [`super::verdict::judge`] trusts that from 3 repetitions a
/// side only).
pub fn log_ratio(a: &[f64], b: &[f64]) -> Option<LogRatio> {
    log_ratio_at(a, b, 0.95)
}

/// [`log_ratio`] with a two-sided interval of confidence `level` (0 < level < 1) instead of
/// 95%: `--fail-if-slower` asks for 1 − 0.05/k when it gates on k figures (Bonferroni).
pub fn log_ratio_at(a: &[f64], b: &[f64], level: f64) -> Option<LogRatio> {
    let ok = |xs: &[f64]| !xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x > 0.0);
    if !ok(a) || !ok(b) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (ma, va) = mean_var(&la);
    let (mb, vb) = mean_var(&lb);
    let d = mb - ma;
    let ratio = d.exp();
    if la.len() < 2 || lb.len() < 2 {
        return Some(LogRatio {
            ratio,
            ci: None,
            df: None,
        });
    }
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let (wa, wb) = (va / na, vb / nb);
    if wa == 0.0 && wb == 0.0 {
        return Some(LogRatio {
            ratio,
            ci: Some((ratio, ratio)),
            df: None,
        });
    }
    // Scaled by the larger term so that tiny variances do not underflow to 0/0.
    let m = wa.max(wb);
    let (xa, xb) = (wa / m, wb / m);
    let df = (xa + xb).powi(2) / (xa * xa / (na - 1.0) + xb * xb / (nb - 1.0));
    let half = crate::stats::t_quantile(0.5 + level / 2.0, df) * (wa + wb).sqrt();
    Some(LogRatio {
        ratio,
        ci: Some(((d - half).exp(), (d + half).exp())),
        df: Some(df),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(x: f64, want: f64, rel: f64) -> bool {
        (x - want).abs() <= rel * want.abs()
    }

    #[test]
    fn t_quantiles_match_mpmath_and_scipy() {
        // 40-digit reference, python3 with mpmath 1.3.0:
        //   import mpmath as mp; mp.mp.dps = 40
        //   for df in ['1','1.5','2','2.5','3.7','7.3','12.9','45.2','1000']:
        //     d = mp.mpf(df); f = lambda t: mp.betainc(d/2, mp.mpf(1)/2, 0, d/(d+t*t),
        //                                               regularized=True)/2 - mp.mpf('0.025')
        //     print(df, mp.nstr(mp.findroot(f, 2.5), 16))
        // and /usr/bin/python3 -c 'from scipy import stats; print(repr(stats.t.ppf(0.975, df)))'
        // (scipy 1.10.1), which agrees with mpmath only to ~2e-9 relative (its stdtrit);
        // df = 1 is tan(0.475π) = 12.706204736174705 exactly.
        let reference = [
            (1.0, 12.7062047361747, 12.706204736432095),
            (1.5, 6.016663104427932, 6.016663107990447),
            (2.0, 4.302652729749464, 4.302652729911275),
            (2.5, 3.574654842003683, 3.5746548420118773),
            (3.7, 2.867520707191189, 2.8675207071912086),
            (7.3, 2.345066736547704, 2.345066736150929),
            (12.9, 2.162072279634474, 2.1620722796325587),
            (45.2, 2.013857442173475, 2.0138574382150076),
            (1000.0, 1.962339080826408, 1.9623390808264074),
        ];
        for (df, mpmath, scipy) in reference {
            let got = t_quantile(0.975, df);
            assert!(
                close(got, mpmath, 1e-12),
                "df {df}: {got} vs mpmath {mpmath}"
            );
            assert!(close(got, scipy, 5e-9), "df {df}: {got} vs scipy {scipy}");
        }
        let exact = (0.475 * std::f64::consts::PI).tan();
        assert!(close(t_quantile(0.975, 1.0), exact, 1e-12));
        // The table in stats.rs agrees at integer df.
        for df in 1..=30 {
            let got = t_quantile(0.975, df as f64);
            assert!((got - crate::stats::t975(df)).abs() < 1e-6, "df {df}");
        }
    }

    #[test]
    fn t_cdf_matches_scipy() {
        // /usr/bin/python3 -c 'from scipy import stats
        //   for t, df in [(0.5,1),(2.0,2.5),(-1.3,7.3),(3.0,45.2)]: print(repr(stats.t.cdf(t, df)))'
        let scipy = [
            (0.5, 1.0, 0.6475836176504333),
            (2.0, 2.5, 0.9213042521210171),
            (-1.3, 7.3, 0.1165707750330829),
            (3.0, 45.2, 0.9978094244124798),
        ];
        for (t, df, want) in scipy {
            let got = t_cdf(t, df);
            assert!(close(got, want, 1e-12), "t {t} df {df}: {got} vs {want}");
        }
    }

    #[test]
    fn welch_on_logs_matches_scipy() {
        // /usr/bin/python3 -c 'import numpy as np; from scipy import stats
        //   a = np.log([100., 104., 98.]); b = np.log([120., 118., 125.])
        //   va, vb = a.var(ddof=1)/3, b.var(ddof=1)/3; d = b.mean() - a.mean()
        //   df = (va+vb)**2 / (va**2/2 + vb**2/2); h = stats.t.ppf(0.975, df)*np.sqrt(va+vb)
        //   print(repr(np.exp(d)), repr(df), repr(np.exp(d-h)), repr(np.exp(d+h)))
        //   print(stats.ttest_ind(b, a, equal_var=False).statistic, d/np.sqrt(va+vb))'
        // → 1.2020004136527165 3.9985091716937946 1.1231460209918849 1.2863910546069064
        //   (Welch's t statistic 7.529538478598757 from ttest_ind and from d/se alike)
        let r = log_ratio(&[100.0, 104.0, 98.0], &[120.0, 118.0, 125.0]).unwrap();
        assert!(close(r.ratio, 1.2020004136527165, 1e-12), "{r:?}");
        assert!(close(r.df.unwrap(), 3.9985091716937946, 1e-12), "{r:?}");
        let (lo, hi) = r.ci.unwrap();
        assert!(close(lo, 1.1231460209918849, 1e-10), "{r:?}");
        assert!(close(hi, 1.2863910546069064, 1e-10), "{r:?}");
        assert_eq!(r.significant(), Some(true));
    }

    #[test]
    fn unequal_sizes_and_unequal_variances() {
        // The script above with a = [10, 30, 20, 25, 15], b = [21, 23], va = a.var(ddof=1)/5,
        // vb = b.var(ddof=1)/2 and df = (va+vb)**2 / (va**2/4 + vb**2/1):
        // → 1.1790631376532938 4.398758176810197 0.6912545358979252 2.0111114074166654
        //   (Welch's t 0.8267191108481762)
        let r = log_ratio(&[10.0, 30.0, 20.0, 25.0, 15.0], &[21.0, 23.0]).unwrap();
        assert!(close(r.ratio, 1.1790631376532938, 1e-12), "{r:?}");
        assert!(close(r.df.unwrap(), 4.398758176810197, 1e-12), "{r:?}");
        let (lo, hi) = r.ci.unwrap();
        assert!(close(lo, 0.6912545358979252, 1e-10), "{r:?}");
        assert!(close(hi, 2.0111114074166654, 1e-10), "{r:?}");
        assert_eq!(r.significant(), Some(false));
    }

    #[test]
    fn degenerate_samples() {
        assert_eq!(log_ratio(&[], &[1.0]), None);
        assert_eq!(log_ratio(&[0.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(log_ratio(&[-1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(log_ratio(&[f64::NAN, 1.0], &[1.0, 2.0]), None);
        let one = log_ratio(&[2.0], &[4.0, 4.2]).unwrap();
        assert!(close(one.ratio, (4.0f64 * 4.2).sqrt() / 2.0, 1e-12));
        assert_eq!((one.ci, one.significant()), (None, None));
        let flat = log_ratio(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(
            (flat.ratio, flat.ci, flat.significant()),
            (1.0, Some((1.0, 1.0)), Some(false))
        );
        let apart = log_ratio(&[5.0, 5.0], &[10.0, 10.0]).unwrap();
        assert_eq!(apart.significant(), Some(true));
        // Variances so small that their squares underflow still give a finite df.
        let tiny = log_ratio(&[1.0, 1.0 + 1e-15], &[1.0, 1.0 + 2e-15]).unwrap();
        assert!(tiny.df.unwrap().is_finite() && tiny.ci.unwrap().0.is_finite());
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec(1e-3f64..1e6, 2..12)
    }

    proptest! {
        #[test]
        fn identical_samples_are_not_significant(xs in sample()) {
            let r = log_ratio(&xs, &xs).unwrap();
            prop_assert!((r.ratio - 1.0).abs() < 1e-12);
            prop_assert_eq!(r.significant(), Some(false));
        }

        #[test]
        fn separated_samples_are_significant_in_their_direction(
            xs in proptest::collection::vec(1.0f64..1.1, 3..10),
            ys in proptest::collection::vec(1.0f64..1.1, 3..10),
            scale in 1.5f64..1e3,
        ) {
            // Every b is at least 1.5/1.1 ≈ 1.36 times every a.
            let b: Vec<f64> = ys.iter().map(|y| y * scale).collect();
            let up = log_ratio(&xs, &b).unwrap();
            prop_assert_eq!(up.significant(), Some(true));
            prop_assert!(up.ratio > 1.0 && up.ci.unwrap().0 > 1.0);
            let down = log_ratio(&b, &xs).unwrap();
            prop_assert_eq!(down.significant(), Some(true));
            prop_assert!(down.ratio < 1.0 && down.ci.unwrap().1 < 1.0);
        }

        #[test]
        fn interval_contains_ratio_and_swapping_inverts(a in sample(), b in sample()) {
            let r = log_ratio(&a, &b).unwrap();
            let (lo, hi) = r.ci.unwrap();
            prop_assert!(lo <= r.ratio * (1.0 + 1e-12) && r.ratio <= hi * (1.0 + 1e-12));
            let s = log_ratio(&b, &a).unwrap();
            let (slo, shi) = s.ci.unwrap();
            prop_assert!(close(s.ratio, 1.0 / r.ratio, 1e-9));
            prop_assert!(close(slo, 1.0 / hi, 1e-9) && close(shi, 1.0 / lo, 1e-9));
        }

        #[test]
        fn quantile_inverts_cdf(df in 0.5f64..500.0, p in 0.5f64..0.9999) {
            let t = t_quantile(p, df);
            prop_assert!((t_cdf(t, df) - p).abs() < 1e-9, "df {} p {} t {}", df, p, t);
        }
    }
}
