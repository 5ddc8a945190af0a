//! `fsarena compare A B`: statistical comparison of two runs, or of two targets.
//!
//! A and B are each a run (`last`, an id or a unique prefix of one) or `RUN:TARGET`. Whole
//! runs are matched target by target by name; with a target on one side only, the other
//! side uses the target of that name, or its only target. For every workload × phase ×
//! metric that both sides measured (successful trials only; the metrics of
//! [`crate::stats::METRICS`] and the phases' extra figures) the comparison gives both
//! medians, the ratio of geometric means B/A with its 95% interval from Welch's t on the
//! logarithms ([`welch`]), and a verdict that names a direction only where the interval
//! excludes 1 ([`verdict`]); which side is better is what the workload declared for the
//! figure ([`crate::figures`]). The headline figures (each phase's, and scores a workload
//! declares gated) are the comparisons a reader acts on: they are judged together as one
//! family ([`family`], as a run's verdict is), each with the interval at the family's
//! level; the other figures keep a 95% interval each, to explore.
//!
//! `--fail-if-slower PCT` is the CI gate ([`gate`]): it fails (exit 3) when some headline is
//! told apart and worse in B by more than PCT percent; it fails with exit 4 when a headline
//! could not be judged (too few repetitions, a zero or NaN, no successful trial on one
//! side, targets set up differently) and with exit 5 when no regression was found but some
//! headline could not have seen a PCT slowdown with the repetitions it had (80% power),
//! naming the repetitions per side that would.

pub mod across;
pub mod aging;
pub mod crash;
mod differences;
pub mod family;
pub mod gate;
pub mod nway;
pub mod proxy;
pub mod rank;
mod render;
pub mod verdict;
pub mod welch;

use differences::{busy_trials, mixed_causes, parameter_differences, setup_differences};

use crate::error::usage;
use crate::result::RunResult;
use crate::stats::{describe, METRICS};
use crate::store::Store;
use anyhow::Result;
use std::collections::BTreeMap;
use verdict::{Sense, Verdict};
use welch::LogRatio;

/// One compared metric of one workload phase.
#[derive(Clone, Debug)]
pub struct Row {
    pub target_a: String,
    pub target_b: String,
    pub workload: String,
    pub phase: String,
    pub metric: String,
    pub median_a: f64,
    pub median_b: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// The ratio B/A of geometric means and its interval, where defined.
    pub ratio: Option<LogRatio>,
    pub verdict: Verdict,
    /// Whether `--fail-if-slower` gates on it: the phase's headline figure (its `primary`),
    /// or a figure its workload declared gated (io500's `score_total`).
    pub gated: bool,
    /// The per-repetition values of A and B.
    pub values_a: Vec<f64>,
    pub values_b: Vec<f64>,
    /// For a gated row: what the family says of it ([`family::Outcome`]); `None` when it
    /// has no test (one repetition, a zero).
    pub outcome: Option<family::Outcome>,
    /// For a gated row under `--fail-if-slower`: whether it could be judged, and how small
    /// a slowdown it could have seen.
    pub gate: Option<gate::Check>,
    /// Told apart and worse by more than the `--fail-if-slower` percentage.
    pub regression: bool,
}

/// The whole comparison, ready to render.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub a: RunResult,
    pub b: RunResult,
    /// The compared (A target, B target) pairs.
    pub pairs: Vec<(String, String)>,
    pub rows: Vec<Row>,
    /// Workloads and phases measured on one side only ("ext4 postmark", "ext4 bonnie/seeks").
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Metrics measured on one side only, by name (`write_amplification` needs a device).
    pub metrics_only_a: Vec<String>,
    pub metrics_only_b: Vec<String>,
    /// Differences between A and B other than the targets, which mix causes.
    pub warnings: Vec<String>,
    /// Target pairs of one name set up differently (size, kind, filesystem, mkfs or mount
    /// options): `ext4: size 1024 MiB vs 512 MiB`.
    pub setup_differs: Vec<(String, String)>,
    /// The control of the headline figures' family.
    pub family: family::Family,
    pub fail_if_slower: Option<f64>,
    /// `--gate-phase`: the phases the gate was declared on (empty: every phase).
    pub gate_phases: Vec<String>,
    /// Gated figures the gate could not judge that have no row (a phase with no successful
    /// trial in B): what and why.
    pub unjudged: Vec<String>,
}

impl Comparison {
    /// The figures `--fail-if-slower` gates on, one per phase plus declared scores.
    pub fn gated(&self) -> usize {
        self.rows.iter().filter(|r| r.gated).count()
    }

    /// Whether some metric regressed beyond the `--fail-if-slower` threshold.
    pub fn regressed(&self) -> bool {
        self.rows.iter().any(|r| r.regression)
    }

    /// The exit status of `compare`: [`gate::Outcome::code`] under `--fail-if-slower`,
    /// else success.
    pub fn exit_code(&self) -> i32 {
        match self.fail_if_slower {
            Some(_) => gate::outcome(self).code(),
            None => crate::error::exit::OK,
        }
    }
}

/// Compares `a` and `b` (RUN or RUN:TARGET) from the store; returns the text to print and
/// the exit status ([`Comparison::exit_code`]).
pub fn command(
    store: &Store,
    a: &str,
    b: &str,
    fail_if_slower: Option<f64>,
    margin: f64,
    gate_phases: &[String],
) -> Result<(String, i32)> {
    let mut c = compare(store, a, b, fail_if_slower)?;
    gate_only(&mut c, gate_phases)?;
    judge_headlines(&mut c, margin);
    gate::gate(&mut c);
    Ok((render::render(&c), c.exit_code()))
}

/// `--gate-phase WORKLOAD:PHASE`: only those phases' gated figures stay gated (none
/// given: all). Each name must match a phase compared, else a usage error: a CI job
/// must not gate on nothing because of a typo.
pub fn gate_only(c: &mut Comparison, phases: &[String]) -> Result<()> {
    if phases.is_empty() {
        return Ok(());
    }
    for name in phases {
        let matches = |r: &Row| format!("{}:{}", r.workload, r.phase) == *name;
        if !c.rows.iter().any(|r| r.gated && matches(r)) {
            let known: Vec<String> = c
                .rows
                .iter()
                .filter(|r| r.gated)
                .map(|r| format!("{}:{}", r.workload, r.phase))
                .fold(Vec::new(), |mut v, n| {
                    if !v.contains(&n) {
                        v.push(n);
                    }
                    v
                });
            return Err(crate::error::usage(format!(
                "--gate-phase {}: no such phase compared; the phases are {}",
                crate::error::echo(name),
                known.join(", ")
            )));
        }
    }
    for r in c.rows.iter_mut() {
        if r.gated
            && !phases
                .iter()
                .any(|n| *n == format!("{}:{}", r.workload, r.phase))
        {
            // Explored, as the other figures: its own 95% interval, no family outcome.
            let figure = crate::figures::find(
                crate::workload::figures_of(workload_kind(&c.a, &r.workload)),
                &r.phase,
                &r.metric,
            );
            (r.ratio, r.verdict) = verdict::judge(Sense::of(figure), &r.values_a, &r.values_b);
            r.gated = false;
            r.outcome = None;
        }
    }
    c.gate_phases = phases.to_vec();
    Ok(())
}

/// Loads both sides and compares them (see the module docs).
pub fn compare(store: &Store, a: &str, b: &str, fail_if_slower: Option<f64>) -> Result<Comparison> {
    if let Some(p) = fail_if_slower {
        if !(0.0..100.0).contains(&p) {
            return Err(usage(format!(
                "--fail-if-slower takes a percentage from 0 up to (not including) 100, not {p}: \
                 it is the share of speed lost (a phase 4 times as slow lost 75%)"
            )));
        }
    }
    let (run_a, target_a) = split_spec(a)?;
    let (run_b, target_b) = split_spec(b)?;
    let a = across::load(store, run_a)?;
    let b = across::load(store, run_b)?;
    across::check_sides(&[(run_a, &a), (run_b, &b)], fail_if_slower.is_some())?;
    compare_runs(a, target_a, b, target_b, fail_if_slower)
}

/// Compares two loaded runs, each whole (`None`) or one target of it.
pub fn compare_runs(
    a: RunResult,
    target_a: Option<&str>,
    b: RunResult,
    target_b: Option<&str>,
    fail_if_slower: Option<f64>,
) -> Result<Comparison> {
    let pairs = pair_targets(&a, target_a, &b, target_b)?;
    for (ta, tb) in &pairs {
        crate::result::refuse_mixed(&[(&a, ta), (&b, tb)])?;
    }
    let setup_differs = setup_differences(&a, &b, &pairs);
    let mut warnings = mixed_causes(&a, &b);
    for (t, what) in &setup_differs {
        warnings.push(format!(
            "target {t} is set up differently in A and B ({what}): its figures compare \
             the set-ups too"
        ));
    }
    let mut c = Comparison {
        warnings,
        a,
        b,
        pairs,
        rows: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
        metrics_only_a: Vec::new(),
        metrics_only_b: Vec::new(),
        setup_differs,
        family: family::Family::control(&[], family::DEFAULT_MARGIN_PCT / 100.0),
        fail_if_slower,
        gate_phases: Vec::new(),
        unjudged: Vec::new(),
    };
    for (ta, tb) in c.pairs.clone() {
        compare_targets(&mut c, &ta, &tb);
    }
    judge_headlines(&mut c, family::DEFAULT_MARGIN_PCT / 100.0);
    gate::gate(&mut c);
    if c.rows.is_empty() {
        return Err(usage(format!(
            "A and B have no workload phase in common: A measured {}; B measured {}",
            listing(&c.only_a),
            listing(&c.only_b)
        )));
    }
    Ok(c)
}

fn listing(v: &[String]) -> String {
    if v.is_empty() {
        "nothing that succeeded".into()
    } else {
        v.join(", ")
    }
}

/// `RUN` or `RUN:TARGET` (run ids hold no colon); RUN may be runs joined by `+`
/// ([`across`]), the target one name for all of them.
fn split_spec(spec: &str) -> Result<(&str, Option<&str>)> {
    match spec.split_once(':') {
        None => Ok((spec, None)),
        Some((run, target)) if !run.is_empty() && !target.is_empty() => Ok((run, Some(target))),
        Some(_) => Err(usage(format!(
            "'{spec}': give RUN or RUN:TARGET (e.g. last:ext4)"
        ))),
    }
}

/// The run's target names, in the run's order.
fn target_names(run: &RunResult) -> Vec<&str> {
    let mut names: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    for t in &run.trials {
        if !names.contains(&t.target.as_str()) {
            names.push(&t.target);
        }
    }
    names
}

fn check_target(run: &RunResult, target: &str) -> Result<String> {
    let names = target_names(run);
    if names.contains(&target) {
        Ok(target.to_string())
    } else {
        Err(usage(format!(
            "run {} has no target '{target}'; its targets: {}",
            run.run_id,
            names.join(", ")
        )))
    }
}

/// The target of the side given as a whole run when the other side named `other`.
fn counterpart(run: &RunResult, other: &str) -> Result<String> {
    let names = target_names(run);
    match names.as_slice() {
        _ if names.contains(&other) => Ok(other.to_string()),
        [only] => Ok(only.to_string()),
        _ => Err(usage(format!(
            "run {} has no target '{other}' and more than one target ({}); name one as RUN:TARGET",
            run.run_id,
            names.join(", ")
        ))),
    }
}

fn pair_targets(
    a: &RunResult,
    ta: Option<&str>,
    b: &RunResult,
    tb: Option<&str>,
) -> Result<Vec<(String, String)>> {
    Ok(match (ta, tb) {
        (Some(x), Some(y)) => vec![(check_target(a, x)?, check_target(b, y)?)],
        (Some(x), None) => {
            let x = check_target(a, x)?;
            let y = counterpart(b, &x)?;
            vec![(x, y)]
        }
        (None, Some(y)) => {
            let y = check_target(b, y)?;
            vec![(counterpart(a, &y)?, y)]
        }
        (None, None) => {
            let bs = target_names(b);
            let common: Vec<(String, String)> = target_names(a)
                .into_iter()
                .filter(|t| bs.contains(t))
                .map(|t| (t.to_string(), t.to_string()))
                .collect();
            if common.is_empty() {
                return Err(usage(format!(
                    "runs {} ({}) and {} ({}) have no target name in common; \
                     compare RUN:TARGET RUN:TARGET",
                    a.run_id,
                    target_names(a).join(", "),
                    b.run_id,
                    bs.join(", ")
                )));
            }
            common
        }
    })
}

/// A run's per-repetition values of one target: workload → phase → metric → values, each
/// level in the run's order (metrics as in [`METRICS`], then the extra figures by name).
type Samples = Vec<(String, Vec<(String, Vec<(String, Vec<f64>)>)>)>;

fn samples(run: &RunResult, target: &str) -> Samples {
    let ok: Vec<_> = run
        .trials
        .iter()
        .filter(|t| t.target == target && t.status == "ok")
        .collect();
    let mut labels: Vec<&str> = Vec::new();
    for t in &ok {
        if !labels.contains(&t.label.as_str()) {
            labels.push(&t.label);
        }
    }
    let mut out = Vec::new();
    for label in labels {
        let trials: Vec<_> = ok.iter().filter(|t| t.label == label).collect();
        let mut phases: Vec<&str> = Vec::new();
        for t in &trials {
            for p in &t.phases {
                if !phases.contains(&p.name.as_str()) {
                    phases.push(&p.name);
                }
            }
        }
        let mut by_phase = Vec::new();
        for phase in phases {
            let ps: Vec<_> = trials
                .iter()
                .filter_map(|t| t.phases.iter().find(|p| p.name == phase))
                .collect();
            let mut metrics: Vec<(String, Vec<f64>)> = METRICS
                .iter()
                .map(|(m, get)| (m.to_string(), ps.iter().filter_map(|p| get(p)).collect()))
                .collect();
            let mut extra: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for p in &ps {
                for (k, v) in &p.extra {
                    extra.entry(k).or_default().push(*v);
                }
            }
            metrics.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
            metrics.retain(|(_, v)| !v.is_empty());
            by_phase.push((phase.to_string(), metrics));
        }
        out.push((label.to_string(), by_phase));
    }
    out
}

fn find<'a, T>(v: &'a [(String, T)], key: &str) -> Option<&'a T> {
    v.iter().find(|(k, _)| k == key).map(|(_, t)| t)
}

/// Adds the rows of one target pair, and what only one side measured.
fn compare_targets(c: &mut Comparison, ta: &str, tb: &str) {
    let sa = samples(&c.a, ta);
    let sb = samples(&c.b, tb);
    for (w, _) in &sa {
        if find(&sb, w).is_none() {
            c.only_a.push(format!("{ta} {w}"));
        }
    }
    for (w, phases_b) in &sb {
        let Some(phases_a) = find(&sa, w) else {
            c.only_b.push(format!("{tb} {w}"));
            continue;
        };
        for (p, _) in phases_b {
            if find(phases_a, p).is_none() {
                c.only_b.push(format!("{tb} {w}/{p}"));
            }
        }
    }
    for (w, phases_a) in &sa {
        let Some(phases_b) = find(&sb, w) else {
            continue;
        };
        for (p, metrics_a) in phases_a {
            let Some(metrics_b) = find(phases_b, p) else {
                c.only_a.push(format!("{ta} {w}/{p}"));
                continue;
            };
            for (m, _) in metrics_b {
                if find(metrics_a, m).is_none() && !c.metrics_only_b.contains(m) {
                    c.metrics_only_b.push(m.clone());
                }
            }
            for (m, xa) in metrics_a {
                let Some(xb) = find(metrics_b, m) else {
                    if !c.metrics_only_a.contains(m) {
                        c.metrics_only_a.push(m.clone());
                    }
                    continue;
                };
                let median = |xs: &[f64]| describe(xs).map_or(0.0, |d| d.median);
                let figure =
                    crate::figures::find(crate::workload::figures_of(workload_kind(&c.a, w)), p, m);
                let (ratio, verdict) = verdict::judge(Sense::of(figure), xa, xb);
                let headline = phase_primary(&c.b, w, p) == Some(m.as_str());
                let gated = headline || figure.is_some_and(|f| f.gate);
                c.rows.push(Row {
                    target_a: ta.to_string(),
                    target_b: tb.to_string(),
                    workload: w.clone(),
                    phase: p.clone(),
                    metric: m.clone(),
                    median_a: median(xa),
                    median_b: median(xb),
                    n_a: xa.len(),
                    n_b: xb.len(),
                    ratio,
                    verdict,
                    gated,
                    values_a: xa.clone(),
                    values_b: xb.clone(),
                    outcome: None,
                    gate: None,
                    regression: false,
                });
            }
        }
    }
}

/// The workload (its name, as figures are declared) behind label `label` of `run`.
fn workload_kind<'a>(run: &'a RunResult, label: &str) -> &'a str {
    run.trials
        .iter()
        .find(|t| t.label == label)
        .map_or("", |t| t.workload.as_str())
}

/// The headline figure (`mb_per_s`, `ops_per_s` or `wall_s`) of phase `phase` of label
/// `label` in `run`.
fn phase_primary<'a>(run: &'a RunResult, label: &str, phase: &str) -> Option<&'a str> {
    run.trials
        .iter()
        .filter(|t| t.label == label && t.status == "ok")
        .flat_map(|t| &t.phases)
        .find(|p| p.name == phase)
        .map(|p| p.primary.as_str())
}

/// Which way row `r`'s figure improves, as its workload declared it.
pub(crate) fn sense_of_row(c: &Comparison, r: &Row) -> Sense {
    Sense::of(crate::figures::find(
        crate::workload::figures_of(workload_kind(&c.a, &r.workload)),
        &r.phase,
        &r.metric,
    ))
}

/// Judges the headline rows as one family ([`family`], equivalence margin `margin`): each
/// gets its outcome, its interval at the family's level, and a verdict that names a
/// direction only when told apart (`within ±3%` when equivalent). Judging again (another
/// margin) starts from the rows' own values.
pub fn judge_headlines(c: &mut Comparison, margin: f64) {
    let tests: Vec<Option<family::Test>> = c
        .rows
        .iter()
        .map(|r| {
            r.gated
                .then(|| family::Test::of(&r.values_a, &r.values_b))
                .flatten()
        })
        .collect();
    let judged: Vec<family::Test> = tests.iter().flatten().copied().collect();
    c.family = family::Family::control(&judged, margin);
    let senses: Vec<Sense> = c.rows.iter().map(|r| sense_of_row(c, r)).collect();
    let (mut apart, mut within) = (0, 0);
    for ((r, t), sense) in c.rows.iter_mut().zip(&tests).zip(senses) {
        if !r.gated {
            continue;
        }
        let (ratio, own) = verdict::judge(sense, &r.values_a, &r.values_b);
        r.ratio = ratio;
        r.outcome = t.map(|t| c.family.outcome(Some(&t)));
        if let (Some(t), Some(ratio)) = (t, r.ratio.as_mut()) {
            ratio.ci = Some(c.family.interval(t));
            ratio.df = Some(t.df);
        }
        r.verdict = match (r.outcome, own) {
            (_, v @ (Verdict::Equal | Verdict::NotApplicable(_))) => v,
            (Some(family::Outcome::Apart), _) => {
                apart += 1;
                let ratio = t.map_or(1.0, |t| t.ratio());
                Verdict::Significant {
                    word: sense.word(ratio > 1.0),
                    times: ratio.max(1.0 / ratio),
                    worse_pct: sense.worse_pct(ratio),
                }
            }
            (Some(family::Outcome::Within), _) => {
                within += 1;
                Verdict::Within(margin * 100.0)
            }
            (Some(family::Outcome::CannotTell), _) => Verdict::NoDifference,
            (None, v @ (Verdict::CannotJudge | Verdict::NoSpread)) => v,
            (None, _) => Verdict::CannotJudge,
        };
    }
    c.family.apart = apart;
    c.family.within = within;
}

#[cfg(test)]
mod tests;
