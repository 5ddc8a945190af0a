//! Statistics over repetitions: median, mean, sample standard deviation, min, max, the 95%
//! confidence interval of the mean (Student's t), and the coefficient of variation.
//!
//! * mean x̄ = Σx/n; sample stddev s = sqrt(Σ(x−x̄)²/(n−1)) (Bessel's correction);
//! * CI95 = x̄ ± t(0.975, n−1)·s/√n, t from [`t_quantile`];
//! * CV = s/x̄; above [`NOISY_CV`] a figure is flagged `noisy`.
//! * A sample with no negative value is of a quantity that cannot be negative (every
//!   figure fsarena measures: times, rates, counts, bytes, ratios): its interval is
//!   truncated at 0, [max(0, x̄ − h), x̄ + h]. Truncating an interval to the values the
//!   mean can take keeps its coverage (a true mean ≥ 0 inside the t interval is inside the
//!   truncated one), where a lower bound of −58,820 bytes would say nothing true.
//!
//! Which of several nodes' figures stand out (median absolute deviations) is [`outlier`];
//! how precisely a run's figures are known so far (`--reps auto`) is [`precision`].

pub mod outlier;
pub mod power;
pub mod precision;

use crate::result::{PhaseResult, Trial};
use serde::{Deserialize, Serialize};

/// Coefficient of variation above which a summary is flagged noisy.
pub const NOISY_CV: f64 = 0.05;

/// Above this many degrees of freedom, [`t_quantile`] uses the Cornish–Fisher expansion.
const CORNISH_FISHER_DF: f64 = 1e4;

/// The quantile t(p, df) of Student's t for 0 < p < 1 and real `df` ≥ 1 (fractional for
/// Welch): `statrs`'s inverse distribution function, within 1e-8 (relative) of a 40-digit
/// reference for df 1..10^4, the tails Bonferroni uses included. Above df 10^4 statrs
/// drifts (3.5e-6 relative at 10^5), so there t = z + g₁(z)/ν + g₂(z)/ν² + g₃(z)/ν³ around the normal quantile z
/// (Cornish–Fisher; Abramowitz & Stegun 26.7.5), whose next term is below 1e-12.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    assert!(
        p > 0.0 && p < 1.0 && df > 0.0,
        "t quantile needs 0 < p < 1 and df > 0 (p {p}, df {df})"
    );
    if df <= CORNISH_FISHER_DF {
        let t = StudentsT::new(0.0, 1.0, df).expect("df > 0");
        return t.inverse_cdf(p);
    }
    let z = Normal::standard().inverse_cdf(p);
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    z + g1 / df + g2 / (df * df) + g3 / (df * df * df)
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    assert!(df > 0, "t quantile needs at least one degree of freedom");
    t_quantile(0.975, df as f64)
}

/// Descriptive statistics of a sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Describe {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation; `None` for n < 2.
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// stddev / mean; `None` for n < 2 or a zero mean.
    pub cv: Option<f64>,
}

/// Describes a non-empty sample; `None` when empty.
///
/// ```
/// let d = fsarena::stats::describe(&[10.0, 12.0, 9.0, 11.0, 13.0]).unwrap();
/// assert_eq!(d.median, 11.0);
/// assert!((d.ci95_low.unwrap() - 9.036757).abs() < 1e-5); // R: t.test(x)$conf.int
/// ```
pub fn describe(xs: &[f64]) -> Option<Describe> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let (stddev, ci, cv) = if n >= 2 {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let s = var.sqrt();
        let half = t975(n - 1) * s / (n as f64).sqrt();
        let cv = (mean != 0.0).then(|| s / mean.abs());
        let low = if v[0] >= 0.0 {
            (mean - half).max(0.0)
        } else {
            mean - half
        };
        (Some(s), Some((low, mean + half)), cv)
    } else {
        (None, None, None)
    };
    Some(Describe {
        n,
        median,
        mean,
        stddev,
        min: v[0],
        max: v[n - 1],
        ci95_low: ci.map(|c| c.0),
        ci95_high: ci.map(|c| c.1),
        cv,
    })
}

/// Statistics of one metric of one phase over the repetitions of a target × workload.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub target: String,
    pub workload: String,
    pub phase: String,
    pub metric: String,
    /// The metric's unit and better side, as its emitter declared them
    /// ([`crate::figures`]); `?` and `none` for a figure nobody declared.
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub better: Better,
    #[serde(flatten)]
    pub stats: Describe,
    pub noisy: bool,
    /// Union of the honesty flags of the phases summarised.
    pub flags: Vec<String>,
}

/// Reads one metric from a phase result.
pub type MetricFn = fn(&PhaseResult) -> Option<f64>;

pub use crate::figures::Better;

/// The metrics summarised for every phase.
pub const METRICS: &[(&str, MetricFn)] = &[
    ("wall_s", |p| Some(p.wall_s)),
    ("ops_per_s", |p| Some(p.ops_per_s)),
    ("mb_per_s", |p| Some(p.mb_per_s)),
    ("cpu_pct", |p| Some(p.cpu_pct)),
    ("lat_p50_us", |p| p.lat_us.map(|l| l.p50)),
    ("lat_p99_us", |p| p.lat_us.map(|l| l.p99)),
    ("lat_max_us", |p| p.lat_us.map(|l| l.max)),
    ("write_amplification", |p| p.write_amplification),
    ("dirty_bytes_end", |p| Some(p.dirty_bytes_end as f64)),
    // The work figures (crate::result::work::WORK), in its order.
    ("dev_kib_written_per_op", |p| {
        work("dev_kib_written_per_op", p)
    }),
    ("dev_writes_per_op", |p| work("dev_writes_per_op", p)),
    ("dev_flushes_per_op", |p| work("dev_flushes_per_op", p)),
    ("dev_reads_per_op", |p| work("dev_reads_per_op", p)),
    ("dev_kib_read_per_op", |p| work("dev_kib_read_per_op", p)),
    ("cpu_ms_per_op", |p| work("cpu_ms_per_op", p)),
    ("kernel_cpu_ms_per_op", |p| work("kernel_cpu_ms_per_op", p)),
];

/// The work figure `name` of phase `p`, per operation.
fn work(name: &str, p: &PhaseResult) -> Option<f64> {
    crate::result::work::find(name)?.per_op(p)
}

/// Summaries of every target × workload × phase × metric over the successful trials; each
/// figure's unit and better side as its workload declared them (`own`:
/// [`crate::workload::figures_of`]).
pub fn summarize(trials: &[Trial], own: crate::figures::Own) -> Vec<Summary> {
    let mut out = Vec::new();
    for (target, workload) in groups(trials) {
        let reps: Vec<&Trial> = trials
            .iter()
            .filter(|t| t.target == target && t.label == workload && t.status == "ok")
            .collect();
        out.extend(summarize_reps(target, workload, &reps, own));
    }
    out
}

/// The flag of a figure that only trials which did not complete measured
/// ([`incomplete_summaries`]).
pub const FAILED_TRIAL: &str = "failed-trial";

/// For each target × workload with no successful trial, summaries of the phases its failed
/// or interrupted trials finished before they stopped, each flagged [`FAILED_TRIAL`]: what
/// was measured is shown, marked, instead of `failed` in every cell. They are for display
/// only; comparisons and verdicts use [`summarize`]'s, over successful trials.
pub fn incomplete_summaries(trials: &[Trial], own: crate::figures::Own) -> Vec<Summary> {
    let mut out = Vec::new();
    for (target, workload) in groups(trials) {
        let mine = trials
            .iter()
            .filter(|t| t.target == target && t.label == workload);
        if mine.clone().any(|t| t.status == "ok") {
            continue;
        }
        let reps: Vec<&Trial> = mine.collect();
        for mut s in summarize_reps(target, workload, &reps, own) {
            s.flags.push(FAILED_TRIAL.to_string());
            out.push(s);
        }
    }
    out
}

/// Every target × workload (trial label) of `trials`, in order of first appearance.
fn groups(trials: &[Trial]) -> Vec<(&str, &str)> {
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for t in trials {
        if !groups.contains(&(&t.target, &t.label)) {
            groups.push((&t.target, &t.label));
        }
    }
    groups
}

/// The summaries of one target × workload over the repetitions `reps`.
fn summarize_reps(
    target: &str,
    workload: &str,
    reps: &[&Trial],
    own: crate::figures::Own,
) -> Vec<Summary> {
    let mut out = Vec::new();
    let Some(kind) = reps.first().map(|t| t.workload.as_str()) else {
        return out;
    };
    let mut phase_names: Vec<&str> = Vec::new();
    for t in reps {
        for p in &t.phases {
            if !phase_names.contains(&p.name.as_str()) {
                phase_names.push(&p.name);
            }
        }
    }
    for phase in phase_names {
        let ps: Vec<&PhaseResult> = reps
            .iter()
            .filter_map(|t| t.phases.iter().find(|p| p.name == phase))
            .collect();
        let mut flags: Vec<String> = Vec::new();
        for p in &ps {
            for f in &p.flags {
                if !flags.contains(f) {
                    flags.push(f.clone());
                }
            }
        }
        let mut extras: Vec<&str> = Vec::new();
        for p in &ps {
            for k in p.extra.keys() {
                if !extras.contains(&k.as_str()) {
                    extras.push(k);
                }
            }
        }
        let standard = METRICS
            .iter()
            .map(|(metric, get)| (*metric, ps.iter().filter_map(|p| get(p)).collect()));
        let extra = extras.iter().map(|k| {
            (
                *k,
                ps.iter().filter_map(|p| p.extra.get(*k).copied()).collect(),
            )
        });
        for (metric, xs) in standard.chain(extra) {
            let xs: Vec<f64> = xs;
            if let Some(stats) = describe(&xs) {
                let noisy = stats.cv.is_some_and(|cv| cv > NOISY_CV);
                let unit = match ps.first() {
                    Some(p) if metric == "ops_per_s" && !p.ops_unit.is_empty() => {
                        p.ops_unit.clone()
                    }
                    _ => crate::figures::unit(own(kind), phase, metric).to_string(),
                };
                out.push(Summary {
                    target: target.to_string(),
                    workload: workload.to_string(),
                    phase: phase.to_string(),
                    metric: metric.to_string(),
                    unit,
                    better: crate::figures::better(own(kind), phase, metric),
                    stats,
                    noisy,
                    flags: flags.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        // R: x <- c(10, 12, 9, 11, 13); mean 11, sd 1.581139, t.test(x)$conf.int 9.036757 12.963243
        let d = describe(&[10.0, 12.0, 9.0, 11.0, 13.0]).unwrap();
        assert_eq!(d.median, 11.0);
        assert!((d.mean - 11.0).abs() < 1e-12);
        assert!((d.stddev.unwrap() - 1.581139).abs() < 1e-6);
        assert!((d.ci95_low.unwrap() - 9.036757).abs() < 1e-5);
        assert!((d.ci95_high.unwrap() - 12.963243).abs() < 1e-5);
        assert!((d.cv.unwrap() - 0.1437399).abs() < 1e-6);
        // R: t.test(c(0, 0, 90000))$conf.int -99079.6 159079.6: truncated at 0.
        let d = describe(&[0.0, 0.0, 90000.0]).unwrap();
        assert_eq!(d.ci95_low, Some(0.0));
        assert!((d.ci95_high.unwrap() - 159_079.59).abs() < 0.01);
        let signed = describe(&[-1.0, 0.0, 4.0]).unwrap();
        assert!(
            signed.ci95_low.unwrap() < -1.0,
            "a signed sample keeps its interval"
        );
        let two = describe(&[1.0, 3.0]).unwrap();
        assert_eq!(two.median, 2.0);
        let one = describe(&[5.0]).unwrap();
        assert_eq!((one.stddev, one.ci95_low, one.cv), (None, None, None));
        assert!(describe(&[]).is_none());
    }

    /// Summaries carry the unit and better side the workload declared, looked up by the
    /// workload's name (not its label) and the phase.
    #[test]
    fn summaries_carry_declared_units_and_sides() {
        let phase = PhaseResult {
            name: "mdtest-hard-delete".into(),
            ops_unit: "files/s".into(),
            extra: [("score_bw_gib_s".to_string(), 1.5)].into_iter().collect(),
            ..Default::default()
        };
        let trial = Trial {
            target: "ext4".into(),
            workload: "io500".into(),
            label: "io500:tasks=2".into(),
            params: Default::default(),
            rep: 1,
            status: "ok".into(),
            error: None,
            provision: Default::default(),
            phases: vec![phase],
            peak_rss_bytes: 0,
            log: None,
            elapsed_s: None,
            ranks: Vec::new(),
            disturbance: None,
            engine: None,
        };
        let s = summarize(&[trial], crate::workload::figures_of);
        let get = |m: &str| s.iter().find(|s| s.metric == m).unwrap();
        let bw = get("score_bw_gib_s");
        assert_eq!((bw.unit.as_str(), bw.better), ("GiB/s", Better::Higher));
        let ops = get("ops_per_s");
        assert_eq!((ops.unit.as_str(), ops.better), ("files/s", Better::Higher));
        assert_eq!(
            (get("wall_s").unit.as_str(), get("wall_s").better),
            ("s", Better::Lower)
        );
    }

    #[test]
    fn t_quantiles() {
        assert!((t975(2) - 4.302653).abs() < 1e-6);
        // qt(0.975, 40) = 2.021075, qt(0.975, 100) = 1.983972
        assert!((t975(40) - 2.021075).abs() < 1e-4);
        assert!((t975(100) - 1.983972).abs() < 1e-4);
        assert!(t975(31) < t975(30));
    }

    /// Within 1e-7 (relative) of scipy 1.10.1's `stats.t.ppf` — the table's df 1..30 at
    /// 0.975, fractional df as Welch's, the Bonferroni tail 1 − 0.05/9/2, and past the
    /// switch to Cornish–Fisher; and t(1 − p) = −t(p).
    #[test]
    fn t_quantiles_match_scipy() {
        let close = |got: f64, want: f64| (got - want).abs() <= 1e-7 * want.abs();
        // /usr/bin/python3 -c 'from scipy import stats
        //   print([stats.t.ppf(0.975, d) for d in range(1, 31)])'
        #[rustfmt::skip]
        let t975_scipy = [
            12.706204736432095, 4.302652729911275, 3.182446305284263, 2.7764451051977987,
            2.5705818366147395, 2.4469118487916806, 2.3646242510102993, 2.3060041350333704,
            2.2621571627409915, 2.2281388519649385, 2.200985160082949, 2.1788128296634177,
            2.1603686564610127, 2.1447866879169273, 2.131449545559323, 2.1199052992210112,
            2.1098155778331806, 2.10092204024096, 2.093024054408263, 2.0859634472658364,
            2.079613844727662, 2.0738730679040147, 2.0686576104190406, 2.0638985616280205,
            2.059538552753294, 2.055529438642871, 2.0518305164802833, 2.048407141795244,
            2.045229642132703, 2.0422724563012373,
        ];
        for (df, want) in (1..=30).zip(t975_scipy) {
            assert!(close(t975(df), want), "df {df}: {} vs {want}", t975(df));
        }
        // for df in [1, 1.5, 2.5, 3.7, 7.3, 12.9, 45.2, 100, 1000, 1e4, 1e5, 1e6]:
        //   print([stats.t.ppf(p, df) for p in [0.975, 1 - 0.05/9/2, 0.995, 0.9]])
        let ps = [0.975, 1.0 - 0.05 / 9.0 / 2.0, 0.995, 0.9];
        #[rustfmt::skip]
        let scipy = [
            (1.0, [12.706204736432095, 114.58865012930991, 63.65674116287399, 3.0776835372078066]),
            (1.5, [6.016663107990447, 26.393340500102802, 17.820310514461323, 2.1963984175668427]),
            (2.5, [3.5746548420118773, 9.126299407529219, 7.16372813402124, 1.730250928807177]),
            (3.7, [2.8675207071912086, 5.8050856422535, 4.869252253428671, 1.5575658381523119]),
            (7.3, [2.345066736150929, 3.8832539683832668, 3.451031655622189, 1.4089223177469472]),
            (12.9, [2.1620722796325587, 3.3226151910034827, 3.016164974120892, 1.3507315108762843]),
            (45.2, [2.0138574382150076, 2.9123552958357277, 2.6890612452238973, 1.3005635614594035]),
            (100.0, [1.9839715184496334, 2.834393604099025, 2.6258905205863337, 1.2900747613398769]),
            (1000.0, [1.9623390808264074, 2.7789570346269414, 2.580754698065942, 1.2823987214609247]),
            (1e4, [1.960201239890626, 2.7735237706564004, 2.576321046668529, 1.2816362297304775]),
            (1e5, [1.9599877075346093, 2.772981531250663, 2.5758784699083748, 1.2815600314493611]),
            (1e6, [1.9599663568141066, 2.772927318163252, 2.575834220105334, 1.2815524121299386]),
        ];
        for (df, wants) in scipy {
            for (p, want) in ps.into_iter().zip(wants) {
                let got = t_quantile(p, df);
                assert!(close(got, want), "df {df} p {p}: {got} vs {want}");
                assert_eq!(t_quantile(1.0 - p, df), -got, "df {df} p {p}");
            }
        }
    }

    proptest! {
        #[test]
        fn order_statistics_hold(xs in proptest::collection::vec(-1e6f64..1e6, 1..40)) {
            let d = describe(&xs).unwrap();
            prop_assert!(d.min <= d.median && d.median <= d.max);
            prop_assert!(d.min <= d.mean + 1e-6 && d.mean <= d.max + 1e-6);
            if let (Some(lo), Some(hi)) = (d.ci95_low, d.ci95_high) {
                prop_assert!(lo <= d.mean + 1e-9 && d.mean <= hi + 1e-9);
            }
        }

        #[test]
        fn constant_sample_has_no_spread(x in -1e6f64..1e6, n in 2usize..20) {
            let d = describe(&vec![x; n]).unwrap();
            prop_assert!(d.stddev.unwrap().abs() < 1e-9);
            prop_assert_eq!(d.median, x);
        }
    }
}
