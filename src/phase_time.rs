//! `--phase-time DURATION`: workloads scaled so that each phase lasts at least that long
//! on every target, calibrated from this host's stored trials.
//!
//! A phase much shorter than a second is timed exactly but carries start-up effects and
//! noise the run cannot average away; the remedy is more work, and the same work on every
//! target, so the comparison stays fair. Each workload names the parameters its work grows
//! with ([`knobs`]) and the phases each one drives. For every such parameter the stored
//! trials of the same workload (same other parameters) on the run's targets give seconds
//! per unit of it, phase by phase (median of the newest 9); the phase's fastest target
//! sets the new value: goal ÷ seconds per unit, rounded up to two significant digits. A
//! parameter is only ever raised, at most [`MAX_FACTOR`] times. What was changed, from
//! what and why, is said before the run starts, and the run stores the parameters it used.

use crate::store::PhaseTime;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::collections::BTreeMap;

/// The most a parameter is multiplied by.
pub const MAX_FACTOR: f64 = 100.0;

/// A parameter that the work of some phases grows with, in proportion.
pub struct Knob {
    pub param: &'static str,
    /// The phases it drives; empty: all of them.
    pub phases: &'static [&'static str],
}

const fn knob(param: &'static str, phases: &'static [&'static str]) -> Knob {
    Knob { param, phases }
}

const FILES: &[Knob] = &[knob("files", &[])];
const SCALE: &[Knob] = &[knob("scale", &[])];
const POSTMARK: &[Knob] = &[
    knob("number", &["create", "delete"]),
    knob("transactions", &["transactions"]),
];
const DBRANDOM: &[Knob] = &[knob("scale", &["create"]), knob("cycles", &["random"])];
const BONNIE: &[Knob] = &[knob("seeks", &["seeks"])];

/// The parameters workload `kind` scales by. Bonnie's `size` is not one: it is bound to
/// the target's size and to memory (the file must outgrow the cache).
pub fn knobs(kind: &str) -> &'static [Knob] {
    match kind {
        "smallfiles" | "bonnie-files" => FILES,
        "metascan" => SCALE,
        "postmark" => POSTMARK,
        "dbrandom" => DBRANDOM,
        "bonnie" => BONNIE,
        _ => &[],
    }
}

/// What `--phase-time` did to one workload.
pub struct Scaled {
    /// The workload to run: the given one, or it with raised parameters.
    pub spec: Option<WorkloadSpec>,
    /// One line per parameter: raised from what to what and why, or why not.
    pub lines: Vec<String>,
}

/// Seconds per unit of `param`, phase by phase, on each target: medians over the newest
/// 9 matching trials. Keys: (phase, target).
fn per_unit(
    spec: &WorkloadSpec,
    param: &str,
    targets: &[String],
    times: &[PhaseTime],
) -> BTreeMap<(String, String), f64> {
    let scaled: Vec<&str> = knobs(spec.info.name).iter().map(|k| k.param).collect();
    let others = |m: &BTreeMap<String, String>| {
        m.iter()
            .filter(|(k, _)| !scaled.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let want = others(&spec.params.to_text_map());
    let mut seen: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for t in times.iter().filter(|t| {
        t.workload == spec.info.name && targets.contains(&t.target) && others(&t.params) == want
    }) {
        let Some(units) = t.params.get(param).and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        if units > 0.0 && t.wall_s > 0.0 {
            let xs = seen.entry((t.phase.clone(), t.target.clone())).or_default();
            if xs.len() < 9 {
                xs.push(t.wall_s / units);
            }
        }
    }
    seen.into_iter()
        .filter_map(|(k, xs)| crate::stats::describe(&xs).map(|d| (k, d.median)))
        .collect()
}

/// `x` rounded up to two significant digits (12,345 → 13,000; 0.123 → 0.13).
fn round_up_2(x: f64) -> f64 {
    let step = 10f64.powf(x.log10().floor() - 1.0);
    ((x / step) - 1e-9).ceil() * step
}

/// `v` as the parameter's text: whole numbers without a fraction.
fn as_text(v: f64, whole: bool) -> String {
    if whole {
        format!("{}", v.round() as u64)
    } else {
        let t = format!("{v:.6}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `spec` scaled so that each phase its parameters drive lasts at least `goal_s` on the
/// fastest of `targets`, judged from `times`.
pub fn scale(spec: &WorkloadSpec, targets: &[String], times: &[PhaseTime], goal_s: f64) -> Scaled {
    let name = spec.info.name;
    let mut lines = Vec::new();
    if knobs(name).is_empty() {
        lines.push(format!(
            "{name}: kept as given (no parameter scales its work)"
        ));
        return Scaled { spec: None, lines };
    }
    let (head, _) = spec.text.split_once(':').unwrap_or((&spec.text, ""));
    let mut rest = spec.text.split_once(':').map_or("", |(_, r)| r).to_string();
    let mut changed = false;
    for k in knobs(name) {
        let given = spec.params.to_text_map();
        let Some(base) = given.get(k.param).and_then(|v| v.parse::<f64>().ok()) else {
            lines.push(format!("{name}: {} kept (derived, not a number)", k.param));
            continue;
        };
        let units = per_unit(spec, k.param, targets, times);
        // The shortest of the driven phases on its fastest target.
        let worst = units
            .iter()
            .filter(|((phase, _), _)| k.phases.is_empty() || k.phases.contains(&phase.as_str()))
            .map(|((phase, target), u)| (goal_s / u, phase, target, u * base))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((needed, phase, target, now_s)) = worst else {
            lines.push(format!(
                "{name}: {} kept at {} (no stored trial of {name} with these parameters on \
                 {} on this host)",
                k.param,
                given[k.param],
                targets.join(", ")
            ));
            continue;
        };
        let why = format!(
            "{phase} on {target} took {now_s:.3} s at {}",
            given[k.param]
        );
        if needed <= base {
            lines.push(format!(
                "{name}: {} kept at {} ({why})",
                k.param, given[k.param]
            ));
            continue;
        }
        let capped = needed > base * MAX_FACTOR;
        let value = round_up_2(needed.min(base * MAX_FACTOR));
        let text = as_text(value, !given[k.param].contains('.'));
        match crate::workload::params::with_value(&rest, k.param, &text) {
            Some(r) => rest = r,
            None => continue,
        }
        changed = true;
        lines.push(format!(
            "{name}: {} {} → {text} ({why}){}",
            k.param,
            given[k.param],
            if capped {
                format!("; capped at {MAX_FACTOR}×")
            } else {
                String::new()
            }
        ));
    }
    if !changed {
        return Scaled { spec: None, lines };
    }
    match WorkloadSpec::parse(&format!("{head}:{rest}")) {
        Ok(s) => Scaled {
            spec: Some(s),
            lines,
        },
        Err(e) => Scaled {
            spec: None,
            lines: vec![format!(
                "{name}: kept as given: the scaled workload is refused: {e:#}"
            )],
        },
    }
}

/// Scales every workload of `plan` to `goal_s` from `times`; returns what to say.
pub fn apply(
    plan: &mut crate::plan::Plan,
    times: &[PhaseTime],
    goal_s: f64,
) -> Result<Vec<String>> {
    let targets: Vec<String> = plan.targets.iter().map(|t| t.name.clone()).collect();
    let mut said = Vec::new();
    for w in plan.workloads.iter_mut() {
        let s = scale(w, &targets, times, goal_s);
        said.extend(s.lines);
        let Some(spec) = s.spec else { continue };
        let unfit = plan
            .targets
            .iter()
            .find_map(|t| crate::workload::check_target(&spec, &t.spec).err());
        match unfit {
            Some(e) => said.push(format!(
                "{}: kept as given: scaled, it would not fit: {e:#}",
                spec.info.name
            )),
            None => *w = spec,
        }
    }
    Ok(said)
}

#[cfg(test)]
mod tests;
