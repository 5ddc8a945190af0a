//! `fsarena compare R1+R2+R3`: runs as the unit, so that day-to-day variance is in the
//! intervals.
//!
//! A run's verdict treats its repetitions as the whole variance, but they share the run's
//! day, its machine's state and each target's one image placement: its intervals, and a CI
//! gate's 5%, hold within that run's conditions only. A side given as several runs of one
//! plan joined by `+` (`R1+R2+R3`, or `R1+R2+R3:TARGET`, the target once for all of them)
//! becomes one synthetic run whose repetitions are the runs: for each target × workload ×
//! phase, each run contributes one value per figure, the geometric mean of that run's
//! successful repetitions (geometric because the verdict works on logarithms, where it is
//! the mean). The verdict, `compare` and the gate then judge it unchanged, with n the
//! number of runs.
//!
//! The separator. Run ids (`20261206-160222-1a2b`, a prefix of one, `last`) hold neither
//! `+` nor `:`, but target names may hold `+` (a matrix names `ext4+commit=1`): so a side
//! is split at its first `:` first, and only the runs before it are split at `+`; the
//! target after it is one name, as typed. A run part that is itself a stored run's id (an
//! imported run named with a `+`) stays that run.
//!
//! Refused, as usage errors naming what differs: runs of different plans (the plan hash
//! `run` stores (`plan::Plan::hash`), where every run has one; and always the
//! targets' set-up, the workloads with their parameters and the policies, as read from
//! the runs), a run given twice in one side, an empty run between `+`s, and beside a
//! side of runs as the unit a side of one run (its intervals hold one run's variance
//! only; [`check_sides`]); the gate wants 3 runs a side.

use super::differences::{parameter_differences, setup_differences};
use crate::error::usage;
use crate::result::{Percentiles, PhaseResult, RunResult, Trial};
use crate::store::Store;
use anyhow::Result;
use std::collections::BTreeMap;

/// What joins the runs of one side.
pub const JOIN: char = '+';

/// The fewest runs a side needs under `--fail-if-slower` (as it needs 3 repetitions).
pub const MIN_GATE_RUNS: usize = 3;

/// How the note a pooled run carries starts ([`composition`] reads it).
const NOTE: &str = "runs as the unit: ";

/// The run part of a side (what comes before any `:TARGET`): one run, as ever, or several
/// runs of one plan joined by `+`, pooled into one run whose repetitions are the runs
/// ([`pool`]).
pub fn load(store: &Store, runs: &str) -> Result<RunResult> {
    if !runs.contains(JOIN) || store.resolve(runs).is_ok() {
        return store.load(runs);
    }
    let specs: Vec<&str> = runs.split(JOIN).collect();
    if specs.iter().any(|s| s.trim().is_empty()) {
        return Err(usage(format!(
            "'{}': a run is missing between the '+'s; give RUN+RUN+… (e.g. \
             20261204-1015+20261205-0930+last), each a run id, a unique prefix or last",
            crate::error::echo(runs)
        )));
    }
    let mut loaded: Vec<(RunResult, Option<String>)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let run = store.load(spec)?;
        if let Some(j) = loaded.iter().position(|(r, _)| r.run_id == run.run_id) {
            return Err(usage(format!(
                "'{}': run {} is given twice ('{}' and '{}'); each run of a side counts \
                 once, as one repetition",
                crate::error::echo(runs),
                run.run_id,
                specs[j],
                specs[i]
            )));
        }
        let hash = store.plan_hash(&run.run_id)?;
        loaded.push((run, hash));
    }
    let plan = same_plan(&loaded)?;
    let runs: Vec<RunResult> = loaded.into_iter().map(|(r, _)| r).collect();
    Ok(pool(&runs, plan.as_deref()))
}

/// Checks that `runs` (each with its stored plan hash, if any) are runs of one plan: alike
/// in what their results show ([`differences`]), and of one hash where they have one;
/// returns that plan's hash when every run has one.
pub fn same_plan(runs: &[(RunResult, Option<String>)]) -> Result<Option<String>> {
    let Some((first, _)) = runs.first() else {
        return Ok(None);
    };
    for (run, _) in &runs[1..] {
        let what = differences(first, run);
        if !what.is_empty() {
            return Err(not_one_plan(first, run, &what.join("; ")));
        }
    }
    let hashed: Vec<(&RunResult, &str)> = runs
        .iter()
        .filter_map(|(r, h)| h.as_deref().map(|h| (r, h)))
        .collect();
    if let Some(&(r0, h0)) = hashed.first() {
        if let Some((r, h)) = hashed.iter().find(|(_, h)| *h != h0) {
            let why = format!(
                "plan {h0} vs {h} (their results show no other difference; `fsarena plan \
                 check` prints a plan with its hash)"
            );
            return Err(not_one_plan(r0, r, &why));
        }
    }
    Ok(match hashed.len() == runs.len() {
        true => hashed.first().map(|(_, h)| h.to_string()),
        false => None,
    })
}

fn not_one_plan(a: &RunResult, b: &RunResult, why: &str) -> anyhow::Error {
    usage(format!(
        "runs {} and {} are not runs of one plan: {why}. The runs of a side (RUN+RUN+…) must \
         repeat one plan, e.g. the same `fsarena run` on different days",
        a.run_id, b.run_id
    ))
}

/// What differs between the plans of runs `a` and `b`, as read from their results: the
/// targets and their set-up, the workloads and their parameters, the policies.
pub fn differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let (ta, tb) = (super::target_names(a), super::target_names(b));
    if ta != tb {
        out.push(format!("targets {} vs {}", ta.join(", "), tb.join(", ")));
    }
    let pairs: Vec<(String, String)> = ta
        .iter()
        .filter(|t| tb.contains(t))
        .map(|t| (t.to_string(), t.to_string()))
        .collect();
    for (t, what) in setup_differences(a, b, &pairs) {
        out.push(format!("target {t}: {what}"));
    }
    for (t, _) in &pairs {
        let info = |r: &RunResult| r.targets.iter().find(|x| x.name == *t).cloned();
        let (Some(x), Some(y)) = (info(a), info(b)) else {
            continue;
        };
        if x.path != y.path {
            out.push(format!(
                "target {t}: path {} vs {}",
                x.path.as_deref().unwrap_or_default(),
                y.path.as_deref().unwrap_or_default()
            ));
        }
        let kernel = |i: &crate::result::TargetInfo| i.guest.as_ref().map(|g| g.kernel.clone());
        if kernel(&x) != kernel(&y) {
            out.push(format!("target {t}: guest kernel differs"));
        }
    }
    let (wa, wb) = (workloads(a), workloads(b));
    if wa != wb {
        out.push(format!("workloads {} vs {}", wa.join(", "), wb.join(", ")));
    }
    out.extend(parameter_differences(a, b));
    let (pa, pb) = (&a.policy, &b.policy);
    for (what, x, y) in [
        ("cache policy", pa.cache.to_string(), pb.cache.to_string()),
        ("sync policy", pa.sync.to_string(), pb.sync.to_string()),
        ("data policy", pa.data.to_string(), pb.data.to_string()),
        ("seed", pa.seed.to_string(), pb.seed.to_string()),
        ("repetitions", pa.reps.to_string(), pb.reps.to_string()),
    ] {
        if x != y {
            out.push(format!("{what} {x} vs {y}"));
        }
    }
    out
}

/// The workload labels a run has trials of, in its order.
fn workloads(run: &RunResult) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in &run.trials {
        if !out.contains(&t.label.as_str()) {
            out.push(&t.label);
        }
    }
    out
}

/// The runs as one run whose repetitions are the runs (see the module docs): repetition
/// `i` of each target × workload is run `i`'s, each phase's figures the geometric means of
/// that run's successful repetitions ([`geometric_mean`]). Its id is the runs' ids (their
/// last parts when those tell them apart) joined by `+`; its host, kernel and version
/// each run's where they differ; its policy the first run's with one repetition per run;
/// it carries one note, its composition ([`composition`]), naming `plan` (the plan hash)
/// when known.
pub fn pool(runs: &[RunResult], plan: Option<&str>) -> RunResult {
    let first = &runs[0];
    let mut trials = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let mut keys: Vec<(&str, &str)> = Vec::new();
        for t in run.trials.iter().filter(|t| t.status == "ok") {
            if !keys.contains(&(&t.target, &t.label)) {
                keys.push((&t.target, &t.label));
            }
        }
        for (target, label) in keys {
            let reps: Vec<&Trial> = run
                .trials
                .iter()
                .filter(|t| t.status == "ok" && t.target == target && t.label == label)
                .collect();
            trials.push(pooled_trial(&reps, i as u32 + 1));
        }
    }
    let joined = |get: fn(&RunResult) -> &str| {
        let mut vs: Vec<&str> = Vec::new();
        for r in runs {
            if !vs.contains(&get(r)) {
                vs.push(get(r));
            }
        }
        vs.join(", ")
    };
    let mut host = first.host.clone();
    host.hostname = joined(|r| &r.host.hostname);
    host.kernel = joined(|r| &r.host.kernel);
    host.cpu_model = joined(|r| &r.host.cpu_model);
    let mut policy = first.policy.clone();
    policy.reps = runs.len() as u32;
    policy.auto_reps = None;
    let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
    let plan = match plan {
        Some(h) => format!("plan {h}"),
        None => "one plan".into(),
    };
    let note = format!(
        "{NOTE}{} runs of {plan} as repetitions ({}), each worth the geometric mean of its \
         own: day-to-day variance is in the intervals",
        runs.len(),
        ids.join(", ")
    );
    RunResult {
        fsarena_version: joined(|r| &r.fsarena_version),
        run_id: pooled_id(&ids),
        started_at: runs
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: runs.iter().filter_map(|r| r.finished_at.clone()).max(),
        status: joined(|r| &r.status),
        command_line: first.command_line.clone(),
        host,
        policy,
        can_drop_caches: runs.iter().all(|r| r.can_drop_caches),
        targets: first.targets.clone(),
        trials,
        summaries: Vec::new(),
        mpi: first.mpi.clone(),
        left_out: Vec::new(),
        notes: vec![note],
        resumed_at: Vec::new(),
        planned_trials: None,
    }
}

/// The pooled run's id: the runs' ids joined by `+`, each by its last part (`455e` of
/// `20261123-023431-455e`, as `compare` labels runs) when those tell them apart.
fn pooled_id(ids: &[&str]) -> String {
    let last = |id: &'_ str| id.rsplit('-').next().unwrap_or(id).to_string();
    let shorts: Vec<String> = ids.iter().map(|id| last(id)).collect();
    let distinct = shorts
        .iter()
        .enumerate()
        .all(|(i, s)| !shorts[..i].contains(s));
    match distinct {
        true => shorts.join("+"),
        false => ids.join("+"),
    }
}

/// What a pooled run is made of, as its note says it (`3 runs of plan … as repetitions
/// (…): …`); `None` for a run as stored.
pub fn composition(run: &RunResult) -> Option<&str> {
    run.notes.iter().find_map(|n| n.strip_prefix(NOTE))
}

/// The line `compare` prints near the verdict's head for a side of runs as the unit:
/// `Runs as the unit: A is 3 runs of plan … as repetitions …`; `label` names the side
/// (`None` when it is the only one); `None` for a side of one run.
pub fn head(label: Option<&str>, run: &RunResult) -> Option<String> {
    let what = composition(run)?;
    Some(match label {
        Some(l) => format!("Runs as the unit: {l} is {what}"),
        None => format!("Runs as the unit: {what}"),
    })
}

/// Refuses sides that mix runs as the unit with single runs (a test would weigh one
/// side's day-to-day variance against the other's within-run variance), and, under the
/// gate (`gate`), a side of fewer than [`MIN_GATE_RUNS`] runs. `sides` are the loaded
/// sides with the specs they were given as.
pub fn check_sides(sides: &[(&str, &RunResult)], gate: bool) -> Result<()> {
    let pooled = |r: &RunResult| composition(r).is_some();
    if let (Some((p, _)), Some((s, _))) = (
        sides.iter().find(|(_, r)| pooled(r)),
        sides.iter().find(|(_, r)| !pooled(r)),
    ) {
        return Err(usage(format!(
            "'{p}' is runs as the unit but '{s}' is one run: its intervals hold one run's \
             repetitions only, so the sides would be judged with different variances; give \
             every side as RUN+RUN+… (runs of one plan), or none"
        )));
    }
    if gate {
        for (spec, run) in sides.iter().filter(|(_, r)| pooled(r)) {
            let n = run.policy.reps as usize;
            if n < MIN_GATE_RUNS {
                return Err(usage(format!(
                    "--fail-if-slower needs {MIN_GATE_RUNS} runs a side with runs as the unit \
                     (as it needs 3 repetitions); '{spec}' has {n}"
                )));
            }
        }
    }
    Ok(())
}

/// The geometric mean of `xs` (exp of the mean logarithm); 0 when one is 0, NaN when one
/// is negative or not finite (no logarithm: the verdict judges neither, as it judges no
/// such repetition), NaN for none.
pub fn geometric_mean(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x < 0.0) {
        return f64::NAN;
    }
    if xs.contains(&0.0) {
        return 0.0;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// One run's successful repetitions `reps` of a target × workload as repetition `rep` of
/// the pooled run.
fn pooled_trial(reps: &[&Trial], rep: u32) -> Trial {
    let t0 = reps[0];
    let mut t = Trial::new(&t0.target, &t0.workload, &t0.label, t0.params.clone(), rep);
    let mut names: Vec<&str> = Vec::new();
    for p in reps.iter().flat_map(|t| &t.phases) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    t.phases = names
        .into_iter()
        .map(|name| {
            let ps: Vec<&PhaseResult> = reps
                .iter()
                .filter_map(|t| t.phases.iter().find(|p| p.name == name))
                .collect();
            pooled_phase(&ps)
        })
        .collect();
    t.peak_rss_bytes = reps.iter().map(|t| t.peak_rss_bytes).max().unwrap_or(0);
    t.disturbance = reps
        .iter()
        .find_map(|t| t.disturbance.clone().filter(|d| d.busy));
    t
}

/// One phase of one run's repetitions `ps` as one value per figure (the geometric means);
/// counts and amounts are the first repetition's; histograms and series, which belong to
/// one repetition, are left out; flags are all the repetitions'.
fn pooled_phase(ps: &[&PhaseResult]) -> PhaseResult {
    let g = |get: fn(&PhaseResult) -> f64| {
        geometric_mean(&ps.iter().map(|p| get(p)).collect::<Vec<_>>())
    };
    let some = |xs: Vec<f64>| (!xs.is_empty()).then(|| geometric_mean(&xs));
    let mut p = ps[0].clone();
    p.wall_s = g(|p| p.wall_s);
    p.cpu_user_s = g(|p| p.cpu_user_s);
    p.cpu_sys_s = g(|p| p.cpu_sys_s);
    p.cpu_pct = g(|p| p.cpu_pct);
    p.ops_per_s = g(|p| p.ops_per_s);
    p.mb_per_s = g(|p| p.mb_per_s);
    p.dirty_bytes_end = g(|p| p.dirty_bytes_end as f64).round() as u64;
    let lat: Vec<Percentiles> = ps.iter().filter_map(|p| p.lat_us).collect();
    p.lat_us = (!lat.is_empty()).then(|| {
        let m =
            |get: fn(&Percentiles) -> f64| geometric_mean(&lat.iter().map(get).collect::<Vec<_>>());
        Percentiles {
            p50: m(|l| l.p50),
            p90: m(|l| l.p90),
            p99: m(|l| l.p99),
            p999: m(|l| l.p999),
            max: m(|l| l.max),
        }
    });
    p.write_amplification = some(ps.iter().filter_map(|p| p.write_amplification).collect());
    let mut extra: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for q in ps {
        for (k, v) in &q.extra {
            extra.entry(k.clone()).or_default().push(*v);
        }
    }
    p.extra = extra
        .into_iter()
        .map(|(k, xs)| (k, geometric_mean(&xs)))
        .collect();
    p.flags = Vec::new();
    for f in ps.iter().flat_map(|q| &q.flags) {
        if !p.flags.contains(f) {
            p.flags.push(f.clone());
        }
    }
    p.lat_by_op = Vec::new();
    p.series = Default::default();
    p.lat_buckets = Vec::new();
    p.first_done_s = None;
    p.last_done_s = None;
    p
}

#[cfg(test)]
mod tests;
