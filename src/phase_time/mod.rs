//! `--phase-time DURATION`: workloads scaled so that each phase lasts at least that long
//! on every target, calibrated from this host's stored trials.
//!
//! A phase much shorter than a second is timed exactly but carries start-up effects and
//! noise the run cannot average away; the remedy is more work, and the same work on every
//! target, so the comparison stays fair. Each workload names the parameters its work grows
//! with and the phases each one drives, in its `INFO`
//! ([`crate::workload::WorkloadInfo::phase_time_knobs`]). For every such parameter the stored
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
    let scaled: Vec<&str> = spec.info.phase_time_knobs.iter().map(|k| k.param).collect();
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

/// The new value of a parameter at `base` that `needed` would make long enough: rounded up
/// to two digits, at most [`MAX_FACTOR`] × `base`, and keeping at most 90% of `inodes` at
/// `entries` a unit (rounded down then); with why it stopped short, if it did.
fn raised(needed: f64, base: f64, entries: f64, inodes: Option<f64>) -> (f64, String) {
    let mut value = round_up_2(needed.min(base * MAX_FACTOR));
    let mut cap = if needed > base * MAX_FACTOR {
        format!("; capped at {MAX_FACTOR}×")
    } else {
        String::new()
    };
    if let Some(n) = inodes.filter(|_| entries > 0.0) {
        let room = 0.9 * n / entries;
        if value > room {
            value = round_down_2(room);
            cap = format!(
                "; capped to fit the smallest target's {} inodes: a larger --size gives more",
                n as u64
            );
        }
    }
    (value, cap)
}

/// `x` rounded down to two significant digits (65,536 → 65,000).
fn round_down_2(x: f64) -> f64 {
    let step = 10f64.powf(x.log10().floor() - 1.0);
    ((x / step) + 1e-9).floor() * step
}

/// How many files and directories target `t` can hold when its filesystem fixes that at
/// mkfs: ext2/3/4 on a loop image, one inode per 16 KiB (mke2fs's default ratio), unless
/// its mkfs options set the count or ratio (`-N`, `-i`, `-T`).
pub fn inodes_of(t: &crate::provision::TargetSpec) -> Option<f64> {
    match t {
        crate::provision::TargetSpec::Loop {
            fs,
            mkfs_opts,
            size_bytes,
            ..
        } if fs.name().starts_with("ext")
            && !mkfs_opts
                .iter()
                .any(|o| ["-N", "-i", "-T"].iter().any(|f| o.starts_with(f))) =>
        {
            Some((*size_bytes / 16384) as f64)
        }
        _ => None,
    }
}

/// `spec` scaled so that each phase its parameters drive lasts at least `goal_s` on the
/// fastest of `targets`, judged from `times`.
/// `inodes`: the fewest files and directories one of the run's targets can hold, when
/// fixed by its filesystem ([`inodes_of`]); a parameter that keeps files is raised no
/// further than 90% of it.
pub fn scale(
    spec: &WorkloadSpec,
    targets: &[String],
    times: &[PhaseTime],
    goal_s: f64,
    inodes: Option<f64>,
) -> Scaled {
    let name = spec.info.name;
    let mut lines = Vec::new();
    if spec.info.phase_time_knobs.is_empty() {
        lines.push(format!(
            "{name}: kept as given (no parameter scales its work)"
        ));
        return Scaled { spec: None, lines };
    }
    let (head, _) = spec.text.split_once(':').unwrap_or((&spec.text, ""));
    let mut rest = spec.text.split_once(':').map_or("", |(_, r)| r).to_string();
    let mut changed = false;
    for k in spec.info.phase_time_knobs {
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
            "{phase} on {target} took {} at {}",
            crate::report::human::seconds(now_s),
            given[k.param]
        );
        if needed <= base {
            lines.push(format!(
                "{name}: {} kept at {} ({why})",
                k.param, given[k.param]
            ));
            continue;
        }
        let (value, cap) = raised(needed, base, k.entries, inodes);
        if value <= base {
            lines.push(format!(
                "{name}: {} kept at {} ({why}{cap})",
                k.param, given[k.param]
            ));
            continue;
        }
        let text = as_text(value, !given[k.param].contains('.'));
        match crate::workload::params::with_value(&rest, k.param, &text) {
            Some(r) => rest = r,
            None => continue,
        }
        changed = true;
        lines.push(format!(
            "{name}: {} {} → {text} ({why}{cap})",
            k.param, given[k.param]
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
    let inodes = plan
        .targets
        .iter()
        .filter_map(|t| inodes_of(&t.spec))
        .min_by(f64::total_cmp);
    let mut said = Vec::new();
    for w in plan.workloads.iter_mut() {
        let s = scale(w, &targets, times, goal_s, inodes);
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
