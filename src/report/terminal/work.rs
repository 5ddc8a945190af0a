//! The judged work figures of a workload's phases ([`crate::result::work`]) as one table
//! under its headline figures: a row per phase and figure, a column per target, each cell
//! the mean per operation over the repetitions with its coefficient of variation; and,
//! for targets that have none, why. The figures only reported (write requests, KiB read,
//! kernel threads' CPU) are in the JSON and CSV, not here: the table stays narrow.

use super::fit::Grid;
use crate::compare::rank::fmt_value;
use crate::result::work::{per_what, WORK};
use crate::result::{PhaseResult, RunResult};

/// The successful repetitions' phase `phase` of workload label `w` on `target`.
fn reps<'a>(run: &'a RunResult, w: &str, phase: &str, target: &str) -> Vec<&'a PhaseResult> {
    run.trials
        .iter()
        .filter(|t| t.label == w && t.target == target && t.status == "ok")
        .flat_map(|t| t.phases.iter().filter(|p| p.name == phase))
        .collect()
}

/// Mean and coefficient of variation: `4.28 ±0.8%`.
fn cell(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "-".into();
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 || mean == 0.0 {
        return fmt_value(mean);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    // No-break space: a value and its spread wrap as one.
    format!(
        "{}\u{a0}±{:.1}%",
        fmt_value(mean),
        100.0 * var.sqrt() / mean
    )
}

/// The work table of workload label `w` for `targets`; `None` when no target measured any
/// work figure but CPU.
pub fn grid(run: &RunResult, w: &str, targets: &[&str]) -> Option<Grid> {
    let mut phases: Vec<&PhaseResult> = Vec::new();
    for t in run
        .trials
        .iter()
        .filter(|t| t.label == w && t.status == "ok")
    {
        for p in &t.phases {
            if !phases.iter().any(|x| x.name == p.name) {
                phases.push(p);
            }
        }
    }
    let mut head = vec!["work per op ↓".to_string()];
    head.extend(targets.iter().map(|t| t.to_string()));
    let mut grid = Grid::new(head, 1);
    grid.right = std::iter::once(false)
        .chain(targets.iter().map(|_| true))
        .collect();
    let mut device = false;
    for p in phases {
        for fig in WORK.iter().filter(|f| f.judged) {
            let cols: Vec<Vec<f64>> = targets
                .iter()
                .map(|t| {
                    reps(run, w, &p.name, t)
                        .iter()
                        .filter_map(|r| fig.per_op(r))
                        .collect()
                })
                .collect();
            if cols.iter().all(|xs| xs.iter().all(|x| *x == 0.0)) {
                continue;
            }
            device |= fig.name.starts_with("dev_");
            let per = per_what(p).map_or("op".to_string(), |(w, _)| w);
            let mut row = vec![format!("{} {}/{per}", p.name, fig.what)];
            row.extend(cols.iter().map(|xs| cell(xs)));
            grid.rows.push(row);
        }
    }
    device.then_some(grid)
}

/// One line per target of `targets` whose work figures are not measured, with why:
/// `tmpfs: work not measured (a memory filesystem has no device)`.
pub fn unmeasured(run: &RunResult, targets: &[&str]) -> Vec<String> {
    run.targets
        .iter()
        .filter(|t| targets.contains(&t.name.as_str()))
        .filter_map(|t| {
            let why = t.work_unmeasured.as_ref()?;
            Some(format!("{}: device work not measured ({why})", t.name))
        })
        .collect()
}
