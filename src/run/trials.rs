//! The trials of a run: the repetitions with the targets in a balanced order
//! ([`super::order`]), one trial of a workload on a target, what `--reps auto` decides,
//! and the names of the trial logs.

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) fn run_trials(
    plan: &Plan,
    log_dir: &std::path::Path,
    targets: &mut [Box<dyn Target>],
    result: &mut RunResult,
    progress: &dyn Progress,
    sink: &mut Sink,
    dist: &Dist,
    run_started: std::time::Instant,
) -> Result<()> {
    let done = |result: &RunResult, target: &str, label: &str, rep: u32| {
        result
            .trials
            .iter()
            .any(|t| t.status == "ok" && t.target == target && t.label == label && t.rep == rep)
    };
    let reps = plan.policy.reps;
    // Trials not yet done on `target` in repetitions `from..=to`.
    let todo_in = |result: &RunResult, target: &str, from: u32, to: u32| {
        (from..=to)
            .flat_map(|rep| plan.workloads.iter().map(move |w| (rep, w)))
            .filter(|(rep, w)| !done(result, target, &label_of(plan, w), *rep))
            .count() as u64
    };
    let todo = |result: &RunResult, target: &str| todo_in(result, target, 1, reps);
    for t in targets.iter_mut() {
        check_stop()?;
        if matches!(t.info().kind.as_str(), "loop" | "device") && todo(result, &t.info().name) > 0 {
            progress.note(&format!(
                "{}: measuring the device's cold read rates (O_DIRECT and buffered) and service \
                 times",
                t.info().name
            ));
            if let Err(e) = t.calibrate() {
                progress.note(&format!("{}: calibration failed: {e:#}", t.info().name));
                t.teardown().ok();
            }
        }
    }
    // `--reps auto` plans its minimum; each repetition past it is added when it starts, so
    // that the ETA is not reckoned to --max-reps.
    let planned = match &plan.auto_reps {
        Some(_) => crate::reps::MIN_REPS.min(reps),
        None => reps,
    };
    progress.start(
        targets
            .iter()
            .map(|t| todo_in(result, &t.info().name, 1, planned))
            .sum(),
    );
    let started = std::time::Instant::now();
    let elapsed = || crate::reps::Elapsed {
        run_s: run_started.elapsed().as_secs_f64(),
        reps_s: started.elapsed().as_secs_f64(),
    };
    for rep in 1..=reps {
        if let Some(rule) = &plan.auto_reps {
            if let Some(line) = crate::reps::over_budget(rule, rep - 1, elapsed()) {
                progress.note(&line);
            }
            if let Some(why) = crate::reps::stop(rule, result, rep - 1, elapsed()) {
                decided(rule, result, rep - 1, why, progress);
                return Ok(());
            }
            if rep > planned {
                let more: u64 = targets
                    .iter()
                    .map(|t| todo_in(result, &t.info().name, rep, rep))
                    .sum();
                progress.extend(more);
            }
        }
        for i in super::order::target_order(targets.len(), rep) {
            let t = &mut targets[i];
            for w in &plan.workloads {
                if done(result, &t.info().name, &label_of(plan, w), rep) {
                    continue;
                }
                dist.start_trial()?;
                let expected = expected_ops(&result.trials, &t.info().name, &label_of(plan, w));
                let log = log_dir.join(log_name(&t.info().name, &label_of(plan, w), rep));
                let trial = run_trial(plan, t.as_mut(), w, rep, progress, &expected, log, dist);
                let trial = dist.gather_trial(trial)?;
                progress.trial_done();
                let interrupted = trial.status == "interrupted";
                if let Some(err) = &trial.error {
                    progress.note(&format!(
                        "{} {} rep {rep}: {} ({err})",
                        trial.target, trial.workload, trial.status
                    ));
                }
                // Committed now: a run killed later keeps this trial.
                sink.trial(&result.run_id, &trial, progress);
                let error = trial.error.clone();
                result.trials.push(trial);
                if interrupted {
                    return Err(Error::Interrupted.into());
                }
                if dist.failure_seen() || dist.is_gone() {
                    // One rank failed, was interrupted or is lost: every rank stops the
                    // run here.
                    return Err(dist.run_error(error));
                }
            }
        }
    }
    if let Some(rule) = &plan.auto_reps {
        let why =
            crate::reps::stop(rule, result, reps, elapsed()).unwrap_or(crate::reps::Stop::MaxReps);
        decided(rule, result, reps, why, progress);
    }
    Ok(())
}

/// Records and says what `--reps auto` decided after `done` repetitions.
pub(super) fn decided(
    rule: &crate::reps::AutoReps,
    result: &mut RunResult,
    done: u32,
    why: crate::reps::Stop,
    progress: &dyn Progress,
) {
    let lines = crate::reps::report(rule, result, done, why);
    if let Some(planned) = result.planned_trials {
        result.planned_trials = Some(planned / rule.max * done);
    }
    result.policy.reps = done;
    let mut record = rule.record();
    record.outcome = lines;
    // The record names every phase short of the precision; a person reads a few.
    crate::reps::summary(&record, result)
        .iter()
        .for_each(|l| progress.note(l));
    result.policy.auto_reps = Some(record);
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_trial(
    plan: &Plan,
    target: &mut dyn Target,
    w: &crate::workload::WorkloadSpec,
    rep: u32,
    progress: &dyn Progress,
    expected: &[(String, u64)],
    log: std::path::PathBuf,
    dist: &Dist,
) -> Trial {
    let name = target.info().name.clone();
    let mut trial = Trial::new(
        &name,
        w.info.name,
        &label_of(plan, w),
        w.params.to_text_map(),
        rep,
    );
    crate::probe::sys::reset_peak_rss();
    let started = std::time::Instant::now();
    target.set_repetition(rep);
    let outcome = (|| -> Result<()> {
        let (workdir, shared_dir) = dist.workdirs(target.prepare()?)?;
        let workload = w.workload.clone();
        let pool = DataPool::new(plan.policy.data, plan.policy.seed);
        let reps = plan.policy.reps;
        let wname = w.info.name;
        let on_phase = |phase: &str| {
            progress.phase(&PhaseStart {
                rep,
                reps,
                target: &name,
                workload: wname,
                phase,
                expected_ops: expected.iter().find(|(p, _)| p == phase).map(|e| e.1),
            })
        };
        let procs = match dist.is_shared() {
            true => Procs {
                index: dist.rank(),
                count: dist.size(),
            },
            false => Procs::SOLO,
        };
        let watch = crate::probe::disturb::Watch::start(
            &target.info().kind,
            target.device_stat(),
            ranks_here(dist),
        );
        let mut cx = TrialContext::new(workdir.clone(), &plan.policy, target, pool, &on_phase)
            .with_log_path(log)
            .with_procs(procs, shared_dir)
            .with_gate(dist)
            .with_repetition(rep);
        let res = workload.run(&mut cx);
        trial.disturbance = Some(watch.finish());
        trial.log = cx.used_log().map(|p| p.display().to_string());
        trial.engine = cx.take_engine();
        for m in cx.take_messages() {
            progress.note(&format!("{name} {wname} rep {rep}: {m}"));
        }
        trial.phases = cx.into_phases();
        crate::probe::disturb::mark(&mut trial);
        match res {
            Err(e) if is_enospc(&e) && crate::probe::sys::inodes_free(&workdir) == Some(0) => {
                Err(e.context(
                    "out of inodes while free blocks remain: give mkfs more inodes \
                     (e.g. --mkfs-opt 'ext4=-N 2000000') or use a larger --size",
                ))
            }
            other => other,
        }
    })();
    // Every rank is done with the target before rank 0 tears it down.
    let outcome = dist.end_trial(outcome);
    let teardown = target.teardown();
    trial.elapsed_s = Some(started.elapsed().as_secs_f64());
    trial.provision = target.provision();
    trial.peak_rss_bytes = crate::probe::sys::peak_rss_bytes();
    let err = outcome.err().or(teardown.err());
    if let Some(e) = err {
        let peer = e.chain().any(|c| c.is::<crate::mpi::PeerStopped>());
        trial.status = if peer {
            "stopped".into()
        } else if crate::error::exit_code(&e) == crate::error::exit::INTERRUPTED {
            "interrupted".into()
        } else {
            "failed".into()
        };
        trial.error = Some(describe_error(&e));
    }
    trial
}

/// Registers this run machine-wide and says which other runs are live (the run header).
pub(crate) fn announce(
    run_id: &str,
    plan: &Plan,
    progress: &dyn Progress,
) -> Option<crate::probe::disturb::registry::Registration> {
    use crate::probe::disturb::{live_lines, registry};
    let registered = registry::register(run_id, &plan.image_dir)
        .map_err(|why| progress.note(&format!("other fsarena runs cannot see this one: {why}")))
        .ok();
    for line in live_lines(&registry::other_live_runs()) {
        progress.note(&line);
    }
    registered
}

/// Whether other ranks of this MPI run share this machine (their CPU is the run's own).
pub(super) fn ranks_here(dist: &Dist) -> bool {
    let hosts = dist.hosts();
    hosts
        .get(dist.rank())
        .is_some_and(|me| hosts.iter().filter(|h| *h == me).count() > 1)
}

/// The file name of a trial's log: target, label and repetition, with every character
/// that is not alphanumeric, `-`, `_` or `.` replaced by `_` (labels may hold a whole spec).
pub(super) fn log_name(target: &str, label: &str, rep: u32) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect()
    };
    format!("{}-{}-rep{rep}.log", clean(target), clean(label))
}

/// Operations per phase of the latest successful trial of workload `label`, on `target`
/// when it has one, else on any target: the amount of work progress bars expect.
pub(super) fn expected_ops(done: &[Trial], target: &str, label: &str) -> Vec<(String, u64)> {
    let ok = |t: &&Trial| t.label == label && t.status == "ok";
    done.iter()
        .rev()
        .filter(ok)
        .find(|t| t.target == target)
        .or_else(|| done.iter().rev().find(ok))
        .map(|t| t.phases.iter().map(|p| (p.name.clone(), p.ops)).collect())
        .unwrap_or_default()
}

/// The name reports group a workload's trials under ([`Plan::label`]).
pub(super) fn label_of(plan: &Plan, w: &crate::workload::WorkloadSpec) -> String {
    plan.label(w)
}
