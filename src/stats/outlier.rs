//! Which nodes of a fleet stand out: a node whose figure is more than 3 median absolute
//! deviations (MAD) from the fleet's median.
//!
//! MAD = median(|xᵢ − median(x)|), unscaled (not the ×1.4826 that makes it estimate a
//! normal σ): 3 raw MADs is the threshold the issue names, about 2 σ for normal noise.
//! The median and MAD resist the outlier itself, unlike mean and standard deviation, which
//! one slow node of three drags towards itself. So that a fleet of near-identical figures
//! (MAD ≈ 0) does not flag rounding noise, a node must also be more than 1% from the
//! median.

/// Smallest relative distance from the median that is flagged.
pub const MIN_REL_DEVIATION: f64 = 0.01;
/// Distance from the median, in MADs, beyond which a node is an outlier.
pub const MAD_LIMIT: f64 = 3.0;

/// The median of `v` (mean of the middle two for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    })
}

/// For each value, whether it is an outlier of `v` (see the module). Fewer than 3 values
/// have no meaningful median to stand out from: none is flagged.
pub fn outliers(v: &[f64]) -> Vec<bool> {
    let Some(med) = median(v).filter(|_| v.len() >= 3) else {
        return vec![false; v.len()];
    };
    let dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev).unwrap_or(0.0);
    dev.iter()
        .map(|&d| d > MAD_LIMIT * mad && d > MIN_REL_DEVIATION * med.abs())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slow_node_of_five_is_flagged() {
        let v = [100.0, 102.0, 98.0, 101.0, 60.0];
        assert_eq!(outliers(&v), vec![false, false, false, false, true]);
    }

    #[test]
    fn identical_and_noisy_fleets_flag_nothing() {
        assert_eq!(outliers(&[5.0, 5.0, 5.0]), vec![false; 3]);
        assert_eq!(outliers(&[100.0, 100.4, 99.7]), vec![false; 3]);
        // Spread evenly: nobody is 3 MADs out.
        assert_eq!(outliers(&[80.0, 100.0, 120.0, 90.0, 110.0]), vec![false; 5]);
    }

    #[test]
    fn too_few_nodes_flag_nothing() {
        assert_eq!(outliers(&[1.0, 100.0]), vec![false, false]);
        assert!(outliers(&[]).is_empty());
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
