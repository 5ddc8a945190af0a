//! A memory filesystem beside the ranked disks: its ratio to the best and that ratio's
//! interval ([`Reference`]).

use super::{geo_mean, headlines_of, usable, PhaseVerdict, Reference, Side};

/// `side` as a reference beside verdict `v`: its geometric mean over the repetitions of
/// `v`'s phase and how many times faster than `v`'s best (`best`'s side), with its
/// interval; `None` when it has no repetition of that phase.
pub(super) fn reference(
    v: &PhaseVerdict,
    side: &Side,
    best_side: Option<&Side>,
) -> Option<Reference> {
    let xs = headlines_of(side, &v.workload, &v.phase);
    if xs.is_empty() {
        return None;
    }
    let value = if usable(&xs) { geo_mean(&xs) } else { f64::NAN };
    let best = v.places.first().map_or(f64::NAN, |p| p.value);
    let higher = v.higher_better;
    let times = if higher { value / best } else { best / value };
    let interval = best_side
        .map(|b| headlines_of(b, &v.workload, &v.phase))
        .and_then(|bs| crate::compare::family::Test::of(&bs, &xs))
        .map(|t| {
            let (lo, hi) = t.interval(0.95);
            if higher {
                (lo, hi)
            } else {
                (1.0 / hi, 1.0 / lo)
            }
        });
    Some(Reference {
        target: side.label.clone(),
        value,
        n: xs.len(),
        vs_best: (times.is_finite() && times > 0.0).then_some(times),
        interval,
    })
}
