//! The IO500 scores (IO500/io500 `src/main.c`, `calc_score`): the bandwidth score is the
//! geometric mean of the four ior phases in GiB/s (2^30 bytes per second), the metadata
//! score the geometric mean of the eight mdtest and find phases in kIOPS (10^3 operations
//! per second), and the total `sqrt(BW × MD)`. As in `calc_score`, a phase whose figure is
//! not positive is left out of its mean (and the run is then not valid: `main.c` marks a
//! zero score invalid).
//!
//! A phase's figure is recomputed here from what the store keeps — bytes or operations and
//! wall time — so the scores can be checked against the stored phases.

use crate::result::PhaseResult;

/// Which score a phase counts towards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Bandwidth, GiB/s.
    Bw,
    /// Metadata, kIOPS.
    Md,
}

/// The three scores of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    pub bw_gib_s: f64,
    pub md_kiops: f64,
    pub total: f64,
}

/// The geometric mean of the positive values of `xs` (0 when there are none), computed as
/// the exponential of the mean logarithm so long lists of large figures do not overflow.
pub fn geometric_mean(xs: &[f64]) -> f64 {
    let pos: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    if pos.is_empty() {
        return 0.0;
    }
    (pos.iter().map(|x| x.ln()).sum::<f64>() / pos.len() as f64).exp()
}

/// A phase's IO500 figure: GiB/s of bytes moved for bandwidth phases, thousands of
/// operations per second for metadata phases.
pub fn figure(p: &PhaseResult, group: Group) -> f64 {
    if p.wall_s <= 0.0 {
        return 0.0;
    }
    match group {
        Group::Bw => p.bytes as f64 / p.wall_s / (1u64 << 30) as f64,
        Group::Md => p.ops as f64 / p.wall_s / 1e3,
    }
}

/// The scores from each phase's figure and group.
pub fn scores(figures: &[(Group, f64)]) -> Scores {
    let of = |g: Group| -> Vec<f64> {
        figures
            .iter()
            .filter(|(h, _)| *h == g)
            .map(|(_, x)| *x)
            .collect()
    };
    let bw_gib_s = geometric_mean(&of(Group::Bw));
    let md_kiops = geometric_mean(&of(Group::Md));
    Scores {
        bw_gib_s,
        md_kiops,
        total: (bw_gib_s * md_kiops).sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn geometric_mean_known_values() {
        assert!(close(geometric_mean(&[2.0, 8.0]), 4.0));
        assert!(close(geometric_mean(&[1.0, 10.0, 100.0]), 10.0));
        assert!(close(geometric_mean(&[5.0]), 5.0));
        assert_eq!(geometric_mean(&[]), 0.0);
        // Non-positive figures are left out, as calc_score does.
        assert!(close(geometric_mean(&[0.0, 3.0, 12.0]), 6.0));
        // No overflow where the product would be inf.
        assert!(close(geometric_mean(&[1e300, 1e300, 1e300]), 1e300));
    }

    /// Worked by hand with round figures: ior phases 1, 4, 2 and 8 GiB/s give BW =
    /// 64^(1/4) = 2√2; eight metadata phases of 50 kIOPS give MD = 50; the total is
    /// sqrt(2√2 × 50) = sqrt(100 √2) = 10 × 2^(1/4) ≈ 11.892.
    #[test]
    fn scores_follow_calc_score() {
        let mut f = vec![
            (Group::Bw, 1.0),
            (Group::Bw, 4.0),
            (Group::Bw, 2.0),
            (Group::Bw, 8.0),
        ];
        f.extend(std::iter::repeat_n((Group::Md, 50.0), 8));
        let s = scores(&f);
        assert!(close(s.bw_gib_s, 8f64.sqrt()), "{s:?}");
        assert!(close(s.md_kiops, 50.0));
        assert!(close(s.total, (8f64.sqrt() * 50.0).sqrt()));
        assert!(close(s.total, 10.0 * 2f64.powf(0.25)));
        assert!((s.total - 11.892).abs() < 1e-3);
    }

    #[test]
    fn figures_use_gib_and_kilo() {
        let p = PhaseResult {
            wall_s: 2.0,
            bytes: 4 << 30,
            ops: 10_000,
            ..Default::default()
        };
        assert!(close(figure(&p, Group::Bw), 2.0));
        assert!(close(figure(&p, Group::Md), 5.0));
    }
}
