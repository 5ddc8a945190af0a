//! Power: the smallest difference a two-sided Welch test on logarithms detects with a
//! given probability, and the repetitions a difference needs. The CI gate
//! (`compare::gate`), the verdict's `Could tell:` line and `--reps-for` (`crate::reps`)
//! plan with these, so that what each promises is computed one way.

use super::t_quantile;

/// The power a gate is planned for: a slowdown is seen 80% of the time.
pub const POWER: f64 = 0.8;
/// The least standard deviation of a side's log values (0.1%): the resolution below which
/// equal repetitions say nothing more.
pub const LOG_SD_FLOOR: f64 = 1e-3;
/// The most repetitions [`reps_for`] considers.
pub const MAX_REPS_FOR: usize = 1000;

/// The smallest change of the log ratio, |d|, that a two-sided test at level `alpha` with
/// standard error `se` and `df` degrees of freedom detects with probability [`POWER`]:
/// (t(1 − alpha/2, df) + t(POWER, df))·se (the usual normal-theory approximation with t
/// quantiles, e.g. Julious 2004).
pub fn detectable_log(se: f64, df: f64, alpha: f64) -> f64 {
    (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df)) * se
}

/// The smallest change of the log ratio that `n` repetitions a side of two samples whose
/// logs have the variance `var` detect at [`POWER`] by a two-sided test at level `alpha`,
/// planned before the samples exist: [`detectable_log`] with se = √(2·var/n) and n − 1
/// degrees of freedom, the fewest Welch's test can have. With 2(n − 1), the most, the
/// approximation promised 80% where a simulation of the verdict found 38–72% at three to
/// five repetitions and small levels (tests/verdict_sim.rs).
pub fn planned_detectable_log(var: f64, n: usize, alpha: f64) -> f64 {
    let nf = n as f64;
    detectable_log((2.0 * var / nf).sqrt(), nf - 1.0, alpha)
}

/// The repetitions per side (the same on both, from 3) at which a slowdown of `pct`
/// percent is detected at [`POWER`] by a test at level `alpha`, with the log variances
/// `var_a` and `var_b` seen so far (planned as [`planned_detectable_log`], with their
/// mean); `None` when even [`MAX_REPS_FOR`] would not do.
pub fn reps_for(var_a: f64, var_b: f64, pct: f64, alpha: f64) -> Option<usize> {
    if !(pct > 0.0 && pct < 100.0) {
        return None;
    }
    let want = -(1.0 - pct / 100.0).ln();
    let var = (var_a + var_b) / 2.0;
    (3..=MAX_REPS_FOR).find(|&n| planned_detectable_log(var, n, alpha) <= want)
}
