//! What the Monte-Carlo tests of the shipped verdict share (`verdict_sim`, `work_sim`): a
//! seeded generator, the scale `FSARENA_SIM_SCALE` asks for, and rates checked within their
//! Monte-Carlo error.

/// xorshift64*: a small, seeded generator, so that every run of a test sees the same
/// samples.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform on (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Uniform on 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

/// How many times the brief run's trial counts `FSARENA_SIM_SCALE` asks for.
pub fn scale() -> usize {
    std::env::var("FSARENA_SIM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Whether `hits` of `n` is at most `bound` plus two Monte-Carlo standard errors.
pub fn at_most(hits: usize, n: usize, bound: f64) -> bool {
    let p = hits as f64 / n as f64;
    p <= bound + 2.0 * (bound * (1.0 - bound) / n as f64).sqrt()
}

/// Whether `hits` of `n` is at least `bound` less two Monte-Carlo standard errors.
pub fn at_least(hits: usize, n: usize, bound: f64) -> bool {
    let p = hits as f64 / n as f64;
    p >= bound - 2.0 * (bound * (1.0 - bound) / n as f64).sqrt()
}

/// A rate and its Monte-Carlo standard error, in percent: `5.2% ± 0.7`.
pub fn pct_se(hits: usize, n: usize) -> String {
    let p = hits as f64 / n as f64;
    format!(
        "{:.1}% ± {:.1}",
        100.0 * p,
        100.0 * (p * (1.0 - p) / n as f64).sqrt().max(0.5 / n as f64)
    )
}
