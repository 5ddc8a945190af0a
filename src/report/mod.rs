//! Reports: they read only the results, never the run. Exporters return bytes.

pub mod bonnie_csv;
pub mod charts;
pub mod csv;
pub mod fit;
pub mod history;
pub mod html;
pub mod human;
pub mod json;
pub mod lines;
pub mod more;
pub mod overview;
pub mod png;
pub mod procs;
pub mod svg;
pub mod terminal;

/// The fixture run (`tests/fixtures/run.json`: its host, policy and targets) with `trials`
/// in place of its own.
#[cfg(test)]
pub(crate) fn fixture_with(trials: Vec<crate::result::Trial>) -> crate::result::RunResult {
    let text = include_str!("../../tests/fixtures/run.json");
    let mut r: crate::result::RunResult = serde_json::from_str(text).unwrap();
    r.trials = trials;
    r
}
