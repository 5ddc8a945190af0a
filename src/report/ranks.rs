//! The ranks of an MPI run side by side: per phase, the aggregate, the straggler tail
//! (first and last rank done), the stonewall figure when asked for, and each rank's own
//! figure — under `--mpi fleet` with the nodes that stand out marked (more than 3 median
//! absolute deviations from the fleet's median, [`crate::dist::outlier`]).

use super::terminal::{fmt_num, new_table, unit_of};
use crate::dist::outlier::{median, outliers};
use crate::result::{PhaseResult, RunResult, Trial};
use comfy_table::Cell;

/// Whether `key` of [`PhaseResult::extra`] is one of the figures this module shows (the
/// aggregate's rank and stonewall figures), not a workload's.
pub fn is_rank_figure(key: &str) -> bool {
    key == "ranks" || key.starts_with("rank_") || key.starts_with("stonewall_")
}

/// The headline figure of a phase (its `primary`).
pub fn primary_value(p: &PhaseResult) -> f64 {
    match p.primary.as_str() {
        "mb_per_s" => p.mb_per_s,
        "wall_s" => p.wall_s,
        _ => p.ops_per_s,
    }
}

/// Per target of workload `w` run by several ranks: a heading and a table.
pub fn tables(run: &RunResult, w: &str, targets: &[&str]) -> Vec<String> {
    let Some(mpi) = &run.mpi else {
        return Vec::new();
    };
    let fleet = mpi.mode == "fleet";
    let mut out = Vec::new();
    for target in targets {
        let trials: Vec<&Trial> = run
            .trials
            .iter()
            .filter(|t| t.label == w && t.target == *target && !t.ranks.is_empty())
            .filter(|t| t.status == "ok")
            .collect();
        let Some(first) = trials.first() else {
            continue;
        };
        let n = first.ranks.len();
        let mut heading = format!(
            "{w} on {target}, {n} ranks (--mpi {}): aggregate = all ranks' operations or \
             bytes / (last rank's finish − common start); first/last done = fastest and \
             slowest rank's seconds",
            mpi.mode
        );
        if fleet {
            heading.push_str("; ! = node more than 3 MADs from the fleet's median");
        }
        let mut table = new_table();
        let mut header = vec!["phase".to_string(), "aggregate".into()];
        header.extend(["first done s".into(), "last done s".into()]);
        if mpi.stonewall {
            header.push("at first done".into());
        }
        header.extend(
            first
                .ranks
                .iter()
                .map(|r| format!("rank {}\n{}", r.rank, r.host)),
        );
        table.set_header(header);
        for (i, p) in first.phases.iter().enumerate() {
            table.add_row(phase_row(&trials, i, p, n, mpi.stonewall, fleet));
        }
        out.push(format!("{heading}\n{table}"));
    }
    out
}

/// One phase's row: medians over the repetitions.
fn phase_row(
    trials: &[&Trial],
    i: usize,
    p: &PhaseResult,
    n: usize,
    stonewall: bool,
    fleet: bool,
) -> Vec<Cell> {
    let med = |f: &dyn Fn(&Trial) -> Option<f64>| {
        let v: Vec<f64> = trials.iter().filter_map(|t| f(t)).collect();
        median(&v).map_or_else(|| "-".to_string(), fmt_num)
    };
    let extra = |k: &'static str| move |t: &Trial| t.phases.get(i)?.extra.get(k).copied();
    let mut row = vec![
        Cell::new(format!("{} ({})", p.name, unit_of(p))),
        Cell::new(med(&|t| t.phases.get(i).map(primary_value))),
        Cell::new(med(&extra("rank_first_done_s"))),
        Cell::new(med(&extra("rank_last_done_s"))),
    ];
    if stonewall {
        let key = if p.primary == "mb_per_s" {
            "stonewall_mb_per_s"
        } else {
            "stonewall_ops_per_s"
        };
        row.push(Cell::new(med(&extra(key))));
    }
    let per_rank: Vec<f64> = (0..n)
        .map(|r| {
            let v: Vec<f64> = trials
                .iter()
                .filter_map(|t| t.ranks.get(r)?.phases.get(i).map(primary_value))
                .collect();
            median(&v).unwrap_or(f64::NAN)
        })
        .collect();
    let odd = if fleet {
        outliers(&per_rank)
    } else {
        vec![false; n]
    };
    row.extend(
        per_rank
            .iter()
            .zip(odd)
            .map(|(v, o)| Cell::new(format!("{}{}", fmt_num(*v), if o { " !" } else { "" }))),
    );
    row
}
