//! The run's verdicts in the JSON document (`verdicts`): for each phase, its time verdict
//! and its work verdicts, as the terminal prints them — each target's place, value and
//! letters, and against the best the ratio, its interval and the outcome — with each
//! family's control. Derived from the trials (recomputed on export, never read back).

use crate::compare::crash::PatternLoss;
use crate::compare::family::{Family, Outcome};
use crate::compare::rank::{self, Axis, PhaseVerdict};
use crate::result::RunResult;
use serde::{Deserialize, Serialize};

/// One phase's verdict on one figure.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerdictJson {
    pub workload: String,
    pub phase: String,
    /// `time` for the phase's headline; else the work figure judged
    /// (`dev_kib_written_per_op`, `dev_flushes_per_op`, `dev_reads_per_op`,
    /// `cpu_ms_per_op`).
    pub figure: String,
    /// The unit of `places[].value` (`files/s`, `KiB/file`).
    pub unit: String,
    /// Whether a higher value is better (a rate); work figures are better lower.
    pub higher_better: bool,
    /// Best first.
    pub places: Vec<PlaceJson>,
    /// Memory targets (tmpfs) shown beside a time ranking, not ranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// The family this verdict was judged in.
    pub family: FamilyJson,
    /// On a phase's time verdict, what settled the phase: `time` (every pair of its
    /// targets told apart or within the margin on the headline), `work` (else every pair
    /// on time or on some work figure) or `open` (some pair on neither) — the phases the
    /// `Could tell:` line counts. Absent on work verdicts and on phases nothing was
    /// tested in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<String>,
}

/// One target's place in a verdict.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlaceJson {
    pub target: String,
    /// The geometric mean of the headline over the repetitions; for a work figure, the
    /// mean count per operation.
    pub value: Option<f64>,
    pub n: usize,
    /// Targets that share a letter are not told apart.
    pub letters: String,
    /// How many times worse than the best (the best has none).
    pub ratio: Option<f64>,
    /// The interval of `ratio` at the family's level for its outcome.
    pub interval: Option<(f64, f64)>,
    /// `apart`, `within` (the margin) or `cannot_tell`, against the best.
    pub outcome: Option<String>,
    /// On a `crash` pattern's time verdict: what a power cut cost this target, over all
    /// its trials — beside its speed, so that speed bought with lost data shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossJson>,
}

/// What the crash states of a `crash` pattern showed of one target, over all its trials.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LossJson {
    /// Promises made (file versions whose `fsync` returned, committed transactions) and
    /// those some crash state broke; 0 and 0 for a run that did not count them.
    pub promises: u64,
    pub promises_broken: u64,
    /// Crash states checked, and those counted bad (`crash_bad_states`: a promise broken,
    /// or garbage, or no mount).
    pub states: u64,
    pub bad_states: u64,
}

/// A family's control.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FamilyJson {
    /// `time` or `work`.
    pub name: String,
    /// Pairs tested in it (all phases).
    pub tests: usize,
    pub apart: usize,
    pub within: usize,
    /// The equivalence margin, a fraction (0.03 for ±3%).
    pub margin: f64,
    /// The false-discovery rate controlled (Benjamini-Hochberg).
    pub fdr: f64,
}

fn outcome(o: Outcome) -> String {
    match o {
        Outcome::Apart => "apart",
        Outcome::Within => "within",
        Outcome::CannotTell => "cannot_tell",
    }
    .to_string()
}

fn family(name: &str, f: &Family) -> FamilyJson {
    FamilyJson {
        name: name.into(),
        tests: f.tests,
        apart: f.apart,
        within: f.within,
        margin: f.margin,
        fdr: crate::compare::family::ALPHA,
    }
}

fn one(v: &PhaseVerdict, losses: &[PatternLoss]) -> VerdictJson {
    let finite = |x: f64| x.is_finite().then_some(x);
    let pattern = losses
        .iter()
        .find(|l| v.figure.is_none() && l.workload == v.workload && l.pattern == v.phase);
    let loss = |target: &str| {
        let t = pattern?.targets.iter().find(|t| t.target == target)?;
        let (bad_states, states) = t.totals();
        Some(LossJson {
            promises: t.promises,
            promises_broken: t.promises_broken,
            states,
            bad_states,
        })
    };
    VerdictJson {
        workload: v.workload.clone(),
        phase: v.phase.clone(),
        figure: v.figure.unwrap_or("time").to_string(),
        unit: v.unit.clone(),
        higher_better: v.higher_better,
        places: v
            .places
            .iter()
            .map(|p| PlaceJson {
                target: p.target.clone(),
                value: finite(p.value),
                n: p.n,
                letters: p.letters.clone(),
                ratio: p.vs_best.map(|r| r.ratio).and_then(finite),
                interval: p.vs_best.and_then(|r| r.ci),
                outcome: p.vs_best_outcome.map(outcome),
                loss: loss(&p.target),
            })
            .collect(),
        references: v.references.iter().map(|r| r.target.clone()).collect(),
        family: family(if v.figure.is_some() { "work" } else { "time" }, &v.family),
        settled: (v.figure.is_none() && v.judged()).then(|| {
            match v.settled() {
                Some(Axis::Time) => "time",
                Some(Axis::Work) => "work",
                None => "open",
            }
            .to_string()
        }),
    }
}

/// Every verdict of `run`: each phase's time verdict followed by its work verdicts.
pub fn verdicts(run: &RunResult) -> Vec<VerdictJson> {
    let losses = crate::compare::crash::losses(run);
    rank::verdicts(run)
        .iter()
        .flat_map(|v| std::iter::once(v).chain(&v.work))
        .map(|v| one(v, &losses))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_has_its_time_verdict_then_its_work_verdicts() {
        let run: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap();
        let v = verdicts(&run);
        assert_eq!(v[0].figure, "time");
        assert_eq!(v[0].family.name, "time");
        // The fixture's targets have no device counters in it: CPU is the work judged.
        assert_eq!(v[1].figure, "cpu_ms_per_op");
        assert_eq!(v[1].family.name, "work");
        assert_eq!(
            (v[0].workload.as_str(), v[1].phase.as_str()),
            ("bonnie", "write_char")
        );
        // The best has no ratio; every other place has one, with its outcome.
        for x in &v {
            assert!(x.places[0].ratio.is_none() && x.places[0].outcome.is_none());
            assert!(x.places[1..].iter().all(|p| p.outcome.is_some()));
        }
        let time = v.iter().filter(|x| x.figure == "time").count();
        assert_eq!(time, 15);
        assert_eq!(v[0].family.tests, 15);
        // What settled each phase is on its time verdict alone, and agrees with the
        // ranking's own account (the `Could tell:` line's).
        let ranked = rank::verdicts(&run);
        let times: Vec<&VerdictJson> = v.iter().filter(|x| x.figure == "time").collect();
        for (x, r) in times.iter().zip(&ranked) {
            let want = match r.settled() {
                Some(Axis::Time) => "time",
                Some(Axis::Work) => "work",
                None => "open",
            };
            assert_eq!(x.settled.as_deref(), Some(want), "{}", x.phase);
        }
        assert!(v
            .iter()
            .filter(|x| x.figure != "time")
            .all(|x| x.settled.is_none()));
    }
}
