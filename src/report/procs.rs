//! The ranks of an MPI run side by side: per phase, the aggregate, the straggler tail
//! (first and last rank done), the stonewall figure when asked for, and each rank's own
//! figure — under `--mpi fleet` with the nodes that stand out marked (more than 3 median
//! absolute deviations from the fleet's median, [`crate::stats::outlier`]).

use super::fit::{self, Grid};
use super::terminal::{fmt_num, unit_of};
use crate::report::charts::Table;
pub use crate::result::primary_value;
use crate::result::{PhaseResult, RunResult, Trial};
use crate::stats::outlier::{median, outliers};

/// Whether `key` of [`PhaseResult::extra`] is one of the figures this module shows (the
/// aggregate's rank and stonewall figures), not a workload's.
pub fn is_proc_figure(key: &str) -> bool {
    key == "ranks" || key.starts_with("rank_") || key.starts_with("stonewall_")
}

/// Per target of workload `w` run by several ranks: a heading and a table, for the
/// terminal, fitted to `width` columns.
pub fn tables(run: &RunResult, w: &str, targets: &[&str], width: usize) -> Vec<String> {
    proc_tables(run, w, targets)
        .into_iter()
        .map(|(heading, t)| {
            let mut grid = Grid::new(t.head, 1);
            grid.rows = t.rows;
            grid.right = (0..grid.head.len()).map(|c| c > 0).collect();
            format!(
                "{}\n{}",
                fit::wrap(&heading, width, 2),
                fit::render(&grid, width)
            )
        })
        .collect()
}

/// Per target of workload `w` run by several ranks: a heading and the table of its
/// phases (aggregate, first and last done, stonewall, each rank), medians over the
/// repetitions; nothing for a run without MPI.
pub fn proc_tables(run: &RunResult, w: &str, targets: &[&str]) -> Vec<(String, Table)> {
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
        let mut head = vec!["phase".to_string(), "aggregate".into()];
        head.extend(["first done s".into(), "last done s".into()]);
        if mpi.stonewall {
            head.push("at first done".into());
        }
        head.extend(
            first
                .ranks
                .iter()
                .map(|r| format!("rank {}\n{}", r.rank, r.host)),
        );
        let rows = (first.phases.iter().enumerate())
            .map(|(i, p)| phase_row(&trials, i, p, n, mpi.stonewall, fleet))
            .collect();
        out.push((heading, Table { head, rows }));
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
) -> Vec<String> {
    let med = |f: &dyn Fn(&Trial) -> Option<f64>| {
        let v: Vec<f64> = trials.iter().filter_map(|t| f(t)).collect();
        median(&v).map_or_else(|| "-".to_string(), fmt_num)
    };
    let extra = |k: &'static str| move |t: &Trial| t.phases.get(i)?.extra.get(k).copied();
    let mut row = vec![
        format!("{} ({})", p.name, unit_of(p)),
        med(&|t| t.phases.get(i).map(primary_value)),
        med(&extra("rank_first_done_s")),
        med(&extra("rank_last_done_s")),
    ];
    if stonewall {
        let key = if p.primary == "mb_per_s" {
            "stonewall_mb_per_s"
        } else {
            "stonewall_ops_per_s"
        };
        row.push(med(&extra(key)));
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
            .map(|(v, o)| format!("{}{}", fmt_num(*v), if o { " !" } else { "" })),
    );
    row
}
