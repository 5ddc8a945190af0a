//! `fsarena history`: the runs a database holds ([`crate::store::Store::history`]), one row
//! each, as a table fitted to the terminal.

use super::fit::{self, Grid};
use crate::store::RunSummary;

/// `fsarena history`'s table.
pub fn render(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet\n".into();
    }
    // A run's id is its UTC start (`20261125-152408-095a`): no column repeats it.
    let head = [
        "run (UTC start)",
        "host",
        "targets",
        "workloads",
        "trials",
        "status",
    ];
    let mut t = Grid::new(head.map(String::from).to_vec(), 1);
    for r in runs {
        t.rows.push(vec![
            r.id.clone(),
            r.hostname.clone(),
            r.targets.join(", "),
            r.workloads.join(" "),
            r.trials.to_string(),
            r.status.clone(),
        ]);
    }
    format!("{}\n", fit::render(&t, fit::width()))
}
