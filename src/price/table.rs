//! A run's predictions ([`Predictions`]): each phase of each target priced on each profile
//! the run asked for (`policy.price_on`), summarised over the repetitions and ranked; and
//! their terminal rendering, kept apart from the measured figures and labelled.

use super::{from_probe, predict, Profile, Work, MEASURED};
use crate::result::{PhaseResult, RunResult, TargetInfo};
use serde::{Deserialize, Serialize};

/// What `--price-on` adds to the JSON: predictions, not measurements.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Predictions {
    /// Says what these figures are.
    pub note: String,
    /// The profiles' names, in the order asked for (`measured` among them).
    pub priced_on: Vec<String>,
    /// The profiles priced on, but `measured` (each target's, below).
    pub profiles: Vec<Profile>,
    /// The `measured` profile of each target that has one, by target name.
    pub measured: std::collections::BTreeMap<String, Profile>,
    /// One entry per profile, workload, phase and target, best first within each phase.
    pub phases: Vec<PricedPhase>,
    /// Targets a profile could not price, each as `target on profile: why`.
    pub unpriced: Vec<String>,
}

/// One phase of one target priced on one profile, over its repetitions.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PricedPhase {
    pub profile: String,
    pub target: String,
    /// The workload's label, as trials name it.
    pub workload: String,
    pub phase: String,
    /// The phase's headline metric (`mb_per_s`, `ops_per_s`) and its unit (`MB/s`).
    pub metric: String,
    pub unit: String,
    /// Repetitions priced.
    pub reps: usize,
    /// Predicted wall time of the phase, seconds.
    pub predicted_s: Range,
    /// Predicted headline: the measured headline × measured wall time / predicted time.
    pub predicted: Range,
    /// Repetitions whose device part the profile's caps decided.
    pub capped_reps: usize,
    /// 1 for the best predicted headline of the phase on this profile.
    pub rank: usize,
}

/// Median, least and greatest over the repetitions: the spread of the measured work
/// (and CPU time) the predictions were made from, not an error of the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Range {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Range {
    fn of(mut xs: Vec<f64>) -> Range {
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        let median = match n % 2 {
            1 => xs[n / 2],
            _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
        };
        Range {
            median,
            min: xs[0],
            max: xs[n - 1],
        }
    }
}

/// The note every prediction carries.
pub const NOTE: &str = "predictions by fsarena's device model (docs/pricing.md) from each \
    phase's measured device requests, bytes, flushes and CPU time; not measurements";

/// The profile `spec` means for `target`: a shipped one, or the target's probed device.
fn profile_for(spec: &str, target: &TargetInfo) -> Result<Profile, String> {
    if let Some(why) = &target.work_unmeasured {
        return Err(format!("its device work is not measured ({why})"));
    }
    match spec {
        MEASURED => target
            .device_probe
            .as_ref()
            .map(from_probe)
            .ok_or_else(|| "its device was not probed".to_string()),
        spec => super::resolve(spec),
    }
}

/// The phase's headline figure and its unit.
fn headline(p: &PhaseResult) -> (f64, String) {
    match p.primary.as_str() {
        "mb_per_s" => (p.mb_per_s, "MB/s".into()),
        _ => (p.ops_per_s, p.ops_unit.clone()),
    }
}

/// The predictions of `run` on the profiles its policy names (`None` when it names none).
pub fn predictions(run: &RunResult) -> Option<Predictions> {
    let specs = &run.policy.price_on;
    if specs.is_empty() {
        return None;
    }
    let mut out = Predictions {
        note: NOTE.into(),
        profiles: specs
            .iter()
            .filter_map(|s| super::resolve(s).ok())
            .collect(),
        ..Default::default()
    };
    // Phases in the order the trials ran them.
    let mut keys: Vec<(String, String)> = Vec::new();
    for t in run.trials.iter().filter(|t| t.status == "ok") {
        for p in &t.phases {
            let k = (t.label.clone(), p.name.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    for spec in specs {
        let name = match spec.as_str() {
            MEASURED => MEASURED.to_string(),
            s => match super::resolve(s) {
                Ok(p) => p.name,
                Err(why) => {
                    out.unpriced.push(format!("every target on {s}: {why}"));
                    continue;
                }
            },
        };
        out.priced_on.push(name.clone());
        let mut priced: Vec<(&TargetInfo, Profile)> = Vec::new();
        for target in &run.targets {
            match profile_for(spec, target) {
                Ok(profile) => priced.push((target, profile)),
                Err(why) => out
                    .unpriced
                    .push(format!("{} on {name}: {why}", target.name)),
            }
        }
        for (target, profile) in priced.iter().filter(|_| spec == MEASURED) {
            out.measured.insert(target.name.clone(), profile.clone());
        }
        for (label, phase) in &keys {
            let mut group: Vec<PricedPhase> = priced
                .iter()
                .filter_map(|(t, profile)| price(run, t, profile, label, phase))
                .collect();
            // Best first: the higher predicted headline (every headline is a rate).
            group.sort_by(|a, b| b.predicted.median.total_cmp(&a.predicted.median));
            for (i, p) in group.iter_mut().enumerate() {
                p.rank = i + 1;
            }
            out.phases.extend(group);
        }
    }
    Some(out)
}

/// One phase of `target` priced on `profile` over its successful repetitions.
fn price(
    run: &RunResult,
    target: &TargetInfo,
    profile: &Profile,
    label: &str,
    phase: &str,
) -> Option<PricedPhase> {
    let mut secs = Vec::new();
    let mut rates = Vec::new();
    let mut capped = 0;
    let mut unit = (String::new(), String::new());
    for t in run
        .trials
        .iter()
        .filter(|t| t.status == "ok" && t.target == target.name && t.label == label)
    {
        let Some(p) = t.phases.iter().find(|p| p.name == phase) else {
            continue;
        };
        let Some(work) = Work::of(p) else { continue };
        let pred = predict(&work, profile, run.host.cores);
        let (h, u) = headline(p);
        let total = pred.total_s();
        if !(total > 0.0 && p.wall_s > 0.0 && h.is_finite()) {
            continue;
        }
        capped += usize::from(pred.capped());
        secs.push(total);
        rates.push(h * p.wall_s / total);
        unit = (p.primary.clone(), u);
    }
    (!secs.is_empty()).then(|| PricedPhase {
        profile: profile.name.clone(),
        target: target.name.clone(),
        workload: label.to_string(),
        phase: phase.to_string(),
        metric: unit.0,
        unit: unit.1,
        reps: secs.len(),
        predicted_s: Range::of(secs),
        predicted: Range::of(rates),
        capped_reps: capped,
        rank: 0,
    })
}
