//! The terminal's block of predictions: after the measured report, under its own heading,
//! one line per phase and profile with the targets best first; wrapped between targets,
//! never inside a figure.

use super::{Predictions, PricedPhase, MEASURED};
use crate::report::human::short;
use crate::result::RunResult;

/// A space the wrapping never breaks at.
const NBSP: char = '\u{a0}';

/// The predictions of `run` for the terminal's width; empty when it asked for none.
pub fn render(run: &RunResult) -> String {
    render_width(run, crate::term::width())
}

/// [`render`] at `width` columns.
pub fn render_width(run: &RunResult, width: usize) -> String {
    let Some(pred) = super::predictions(run) else {
        return String::new();
    };
    let mut lines = vec![
        "Predicted, not measured: each phase's measured device work and CPU time priced \
         on a device profile by fsarena's model (docs/pricing.md). Median of the \
         repetitions' predictions, best first; N× = predicted N times slower than the \
         best; [a–b]: the range over repetitions (the spread of the work, not the model's \
         error)."
            .to_string(),
    ];
    for spec in &pred.priced_on {
        lines.push(String::new());
        lines.push(heading(spec, &pred));
        let mine: Vec<&PricedPhase> = pred.phases.iter().filter(|p| &p.profile == spec).collect();
        let mut i = 0;
        while i < mine.len() {
            let first = mine[i];
            let group: Vec<&PricedPhase> = mine[i..]
                .iter()
                .take_while(|p| p.workload == first.workload && p.phase == first.phase)
                .copied()
                .collect();
            i += group.len();
            lines.push(phase_line(&group));
        }
        for why in pred
            .unpriced
            .iter()
            .filter(|w| w.contains(&format!(" on {spec}: ")))
        {
            lines.push(format!("  not priced: {why}"));
        }
    }
    for why in pred
        .unpriced
        .iter()
        .filter(|w| w.starts_with("every target on "))
    {
        lines.push(format!("Not priced: {why}"));
    }
    let text: Vec<String> = lines
        .iter()
        .map(|l| crate::term::wrap(l, width, 4).replace(NBSP, " "))
        .collect();
    text.join("\n") + "\n"
}

/// The heading of a profile: what it stands for, or each target's probed figures.
fn heading(spec: &str, pred: &Predictions) -> String {
    if spec != MEASURED {
        let about = pred
            .profiles
            .iter()
            .find(|p| p.name == spec)
            .map_or("", |p| p.about.as_str());
        return format!("On {spec}: {about}");
    }
    let each: Vec<String> = pred
        .measured
        .iter()
        .map(|(t, p)| {
            format!(
                "{t} read{NBSP}{}{NBSP}us write{NBSP}{}{NBSP}us flush{NBSP}{}{NBSP}us \
                 {}/{}{NBSP}MB/s ×{}",
                short(p.read_4k_us),
                short(p.write_4k_us),
                short(p.flush_us),
                short(p.read_mb_per_s),
                short(p.write_mb_per_s),
                short(p.parallelism)
            )
        })
        .collect();
    format!(
        "On measured: each target's own device as probed (4 KiB at depth 1, \
         sequential read/write, requests at once): {}",
        each.join("; ")
    )
}

/// `  bonnie/write_block MB/s: xfs 812 · ext4 790 1.03× · btrfs 401 2.0×`.
fn phase_line(group: &[&PricedPhase]) -> String {
    let first = group[0];
    let best = first.predicted.median;
    let items: Vec<String> = group
        .iter()
        .map(|p| {
            let r = p.predicted;
            let mut s = format!("{}{NBSP}{}", p.target, short(r.median));
            if r.max - r.min >= 0.005 * r.median.abs() {
                s.push_str(&format!("{NBSP}[{}–{}]", short(r.min), short(r.max)));
            }
            if p.rank > 1 && r.median > 0.0 {
                s.push_str(&format!(
                    "{NBSP}{}",
                    crate::compare::rank::fmt_ratio(best / r.median)
                ));
            }
            if p.capped_reps > 0 {
                s.push(NBSP);
                s.push_str("capped");
            }
            s
        })
        .collect();
    format!(
        "  {}/{} {}: {}",
        first.workload,
        first.phase,
        first.unit,
        items.join(" · ")
    )
}
