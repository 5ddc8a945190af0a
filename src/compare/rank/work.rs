//! The verdicts on a phase's work ([`crate::result::work`]): for each judged work figure
//! (device KiB written, flushes and reads per operation, CPU per operation), the targets
//! ranked lower first, every pair tested like the headline and judged in the same family.
//!
//! A work figure may be equal in every repetition (the bytes a phase writes to its own
//! device) and still not be certain: each side's spread is floored at the figure's modelled
//! resolution ([`WorkFigure::log_sd_floor`]: its counter's unit relative to the count, and
//! 0.5% for the journal commits and writeback a timer starts), and every count is taken
//! plus one unit, so that zero has a logarithm. A figure that is zero on every side (no
//! flush in a read phase) says nothing and is not judged. CPU time is floored at 1% and
//! its spread always estimated: nothing bounds it ([`WorkFigure::floor_known`]).

use super::{rank_floored, PhaseVerdict, Side};
use crate::compare::family::Floor;
use crate::compare::verdict::Sense;
use crate::result::work::{WorkFigure, WORK};
use crate::result::PhaseResult;

/// The phases `phase` of workload label `label` in `side`'s successful repetitions.
fn phases_of<'a>(side: &Side<'a>, label: &str, phase: &str) -> Vec<&'a PhaseResult> {
    side.run
        .trials
        .iter()
        .filter(|t| t.status == "ok" && t.label == label && t.target == side.target)
        .flat_map(|t| t.phases.iter().filter(|p| p.name == phase))
        .collect()
}

/// One side's values of `fig` (count plus resolution, per operation) and the floor of its
/// log spread; `None` when a repetition lacks the figure (a target without a device of its
/// own), or when every count is zero (`Some` with `zero` true).
struct SideWork {
    values: Vec<f64>,
    floor: Floor,
    zero: bool,
}

fn side_work(fig: &WorkFigure, ps: &[&PhaseResult]) -> Option<SideWork> {
    let values: Option<Vec<f64>> = ps.iter().map(|p| fig.judged_value(p)).collect();
    let counts: Option<Vec<f64>> = ps.iter().map(|p| (fig.count)(p)).collect();
    let (values, counts) = (values?, counts?);
    if values.is_empty() {
        return None;
    }
    let mean = counts.iter().sum::<f64>() / counts.len() as f64;
    Some(SideWork {
        values,
        floor: Floor {
            sd: fig.log_sd_floor(mean),
            known: fig.floor_known,
        },
        zero: counts.iter().all(|c| *c == 0.0),
    })
}

/// The work verdicts of phase `phase` of workload label `label` over `sides`, one per
/// judged work figure that two sides or more measured and some side did not count zero
/// of; not yet judged (that is `settle`'s, with the rest of the family).
pub fn measure_work(sides: &[Side], label: &str, phase: &str) -> Vec<PhaseVerdict> {
    let mut out = Vec::new();
    for fig in WORK.iter().filter(|f| f.judged) {
        let per_side: Vec<(&str, Vec<&PhaseResult>)> = sides
            .iter()
            .map(|s| (s.label.as_str(), phases_of(s, label, phase)))
            .collect();
        let Some(unit) = per_side
            .iter()
            .find_map(|(_, ps)| ps.first())
            .map(|p| fig.unit_on(p))
        else {
            continue;
        };
        let work: Vec<(&str, Option<SideWork>)> = per_side
            .iter()
            .map(|(l, ps)| (*l, side_work(fig, ps)))
            .collect();
        let measured = work.iter().filter(|(_, w)| w.is_some()).count();
        let all_zero = work.iter().filter_map(|(_, w)| w.as_ref()).all(|w| w.zero);
        if measured < 2 || all_zero {
            continue;
        }
        let samples: Vec<(&str, Vec<f64>)> = work
            .iter()
            .map(|(l, w)| (*l, w.as_ref().map_or(Vec::new(), |w| w.values.clone())))
            .collect();
        let floors: Vec<Floor> = work
            .iter()
            .map(|(_, w)| {
                w.as_ref().map_or(
                    Floor {
                        sd: 0.0,
                        known: false,
                    },
                    |w| w.floor,
                )
            })
            .collect();
        if let Some(mut v) = rank_floored(
            label,
            phase,
            &unit,
            Sense::LowerBetter,
            &samples,
            Some(&floors),
        ) {
            v.figure = Some(fig.name);
            v.missing.clear();
            // Shown: the mean count per operation, without the unit of resolution the
            // test adds.
            for place in &mut v.places {
                let ps = per_side.iter().find(|(l, _)| *l == place.target);
                let xs: Vec<f64> = ps.map_or(Vec::new(), |(_, ps)| {
                    ps.iter().filter_map(|p| fig.per_op(p)).collect()
                });
                if !xs.is_empty() {
                    place.value = xs.iter().sum::<f64>() / xs.len() as f64;
                }
            }
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
#[path = "work_tests.rs"]
mod tests;
