//! The runner: Plan → for each repetition × target × workload a Trial on a freshly made
//! filesystem → results. Teardown always happens: on success, error, panic (targets tear
//! down in `Drop`) and SIGINT/SIGTERM.
//!
//! A resumed run (`--resume`, [`Plan::resume`]) keeps the run id and its successful
//! trials and runs every other trial of the plan again.
//!
//! Repetitions are the outer loop, so the targets alternate (rep 1 of every target, then
//! rep 2, …) and slow drifts of the machine spread over all targets instead of one. Within
//! a repetition the targets run in the order of a Williams design ([`order`]), so that no
//! target always runs first, or always right after the same other target. The trials'
//! order is what the results keep: the store numbers trials as they are committed, and
//! reports and `--json` list them in that order.

use crate::context::{Procs, TrialContext};
use crate::data::DataPool;
use crate::error::Error;
use crate::mpi::shared::{SharedLead, SharedView};
use crate::mpi::Dist;
use crate::plan::Plan;
use crate::progress::{PhaseStart, Progress};
use crate::provision::{self, Env, Target};
use crate::result::{RunResult, Trial};
use crate::signals::check_stop;
use crate::state::State;
use crate::store::Store;
use anyhow::{Context, Result};
use std::sync::Arc;

mod noise;
pub mod order;
mod trials;

pub use order::target_order;
pub(crate) use trials::announce;
use trials::run_trials;

/// A fresh run id: UTC time plus random hex, sortable and unique enough.
pub fn new_run_id() -> String {
    let now = chrono::Utc::now();
    format!(
        "{}-{:04x}",
        now.format("%Y%m%d-%H%M%S"),
        rand::random::<u16>()
    )
}

/// What became of a run's figures besides the results themselves: whether every trial
/// reached the database, and the journal that holds them all when not.
#[derive(Debug, Default)]
pub struct Kept {
    /// Trials that could not be stored in the database (each is in the journal).
    pub unstored: usize,
    /// Why storing failed (the first error), or why the run's end could not be recorded.
    pub store_error: Option<String>,
    /// The journal, kept because something did not reach the database; `None` when all
    /// did (it was removed) or there is none (ranks other than 0).
    pub journal: Option<std::path::PathBuf>,
}

/// Runs the plan. Returns the run's results also when trials failed or the run was
/// interrupted (see `status`), with what became of them ([`Kept`]). Under `--mpi`, every
/// rank calls this with its `dist`; only rank 0 has a `store`, a journal and the
/// aggregate figures.
pub fn execute(
    plan: &Plan,
    command_line: Vec<String>,
    progress: &dyn Progress,
    mut store: Option<&mut Store>,
    dist: &Dist,
) -> Result<(RunResult, Kept)> {
    let run_started = std::time::Instant::now();
    crate::probe::clock::init_in_background();
    if dist.is_multi() && plan.resume.is_some() {
        return Err(crate::error::usage(
            "--resume cannot continue an MPI run: start it again",
        ));
    }
    // Before anything is made: what of the plan runs as root as its author wrote it.
    for line in crate::plan::programs::run_notes(&crate::plan::programs::of(plan)) {
        progress.note(&line);
    }
    let previous = match &plan.resume {
        Some(run) => {
            let s = store.as_deref().ok_or_else(|| {
                crate::error::usage("--resume needs the result database (--db) the run is in")
            })?;
            let prev = s.resume_run(run, &plan.hash(), &plan.canonical())?;
            // What the interrupted process left mounted or attached goes first (its
            // images and mount points have the names this run is about to use).
            for line in crate::state::cleanup(&plan.image_dir)? {
                progress.note(&format!("resume: {line}"));
            }
            Some(prev)
        }
        None => None,
    };
    let run_id = previous
        .as_ref()
        .map_or_else(new_run_id, |p| p.run_id.clone());
    let run_id = dist.agree_run_id(run_id)?;
    let own_id = dist.resource_id(&run_id);
    let state = Arc::new(dist.agree(open_state(plan, &own_id))?);
    if dist.is_multi() {
        let db = store
            .as_deref()
            .map(|s| (s.path().to_path_buf(), run_id.as_str()));
        guard(plan, &own_id, db, progress);
    }
    let env = Env {
        run_id: own_id,
        image_dir: plan.image_dir.clone(),
        state: Arc::clone(&state),
    };
    let mut result = new_result(
        &run_id,
        &command_line,
        plan,
        dist.info(),
        plan.targets.len(),
    );
    // Held for the run's life: other runs on this machine see this one live.
    let _registered = announce(&run_id, plan, progress);
    if let Some(line) = crate::result::left_out_line(&plan.left_out) {
        progress.note(&line);
    }
    for line in &result.notes {
        progress.note(line);
    }
    let names = plan.workloads.iter().map(|w| w.info.name);
    if let Some(line) = crate::workload::classic_policy_line(names, &plan.policy) {
        progress.note(&line);
    }
    if plan.auto_reps.is_some() && !dist.is_multi() && previous.is_none() {
        match noise::measure(&plan.image_dir) {
            Ok(probe) => {
                let tests = noise::tests_of(plan);
                if let Some(line) = noise::forecast(&probe, tests, crate::reps::MIN_REPS) {
                    progress.note(&line);
                }
                result.host.noise = Some(probe);
            }
            Err(e) => progress.note(&format!("no noise probe: {e:#}")),
        }
    }
    if let Some(prev) = previous {
        result.started_at = prev.started_at;
        result.command_line = prev.command_line;
        result.resumed_at = prev.resumed_at;
        result.trials = prev
            .trials
            .into_iter()
            .filter(|t| t.status == "ok")
            .collect();
    }
    let mut targets: Vec<Box<dyn Target>> = plan
        .targets
        .iter()
        .map(|t| {
            own_target(
                provision::build_aged(&t.spec, &t.name, t.age.map(|a| (a, plan.policy.seed)), &env),
                dist,
                &run_id,
            )
        })
        .collect();
    let mut begun = Ok(());
    if let Some(s) = store.as_deref_mut() {
        let infos: Vec<_> = targets.iter().map(|t| t.info().without_secrets()).collect();
        begun = if plan.resume.is_some() {
            s.save_targets(&result.run_id, &infos)
        } else {
            s.begin_run(&result, &infos)
                .and_then(|_| s.set_plan(&result.run_id, &plan.hash(), &plan.canonical()))
                .and_then(|_| match &result.mpi {
                    Some(mpi) => s.set_mpi(&result.run_id, mpi),
                    None => Ok(()),
                })
        };
    }
    if let Err(e) = dist.agree(begun) {
        // Nothing is provisioned yet: only the empty state file is to go.
        drop(targets);
        state.finish()?;
        return Err(e.context("recording the run in the result database"));
    }
    // The journal lies beside the state and log directories.
    let log_dir = state.log_dir();
    let base = log_dir.parent().and_then(std::path::Path::parent);
    let journal_dir = match &plan.journal_dir {
        Some(d) => Some(d.clone()),
        None => base.map(|b| b.join("journal")),
    };
    let mut sink = Sink {
        store,
        journal: None,
        keep_journal: plan.journal_dir.is_some(),
        kept: Kept::default(),
    };
    if dist.rank() == 0 {
        match journal_dir.map(|d| crate::journal::Journal::create(&d, &result)) {
            Some(Ok(j)) => sink.journal = Some(j),
            Some(Err(e)) => progress.note(&format!(
                "no journal for this run ({e:#}): only the database keeps its trials"
            )),
            None => {}
        }
    }
    let outcome = run_trials(
        plan,
        &log_dir,
        &mut targets,
        &mut result,
        progress,
        &mut sink,
        dist,
        run_started,
    );
    for t in targets.iter_mut() {
        if let Err(e) = t.teardown() {
            progress.note(&format!(
                "teardown of {} failed: {e:#}; run `fsarena cleanup`",
                t.info().name
            ));
        }
    }
    result.targets = targets.iter().map(|t| t.info().without_secrets()).collect();
    drop(targets);
    if let Err(e) = state.finish() {
        // The figures stand; what is left is for `cleanup` (the message says so).
        progress.note(&format!("{e:#}"));
    }
    end_result(&mut result, &outcome);
    let kept = sink.finish(&result, progress);
    if let Err(e) = outcome {
        if result.status != "interrupted" {
            if let Some(j) = &kept.journal {
                return Err(e.context(format!(
                    "the finished trials are in the journal {} (`fsarena import` stores them)",
                    j.display()
                )));
            }
            return Err(e);
        }
    }
    Ok((result, kept))
}

/// Where finished trials go: the database, if there is one, and the journal.
struct Sink<'a> {
    store: Option<&'a mut Store>,
    journal: Option<crate::journal::Journal>,
    /// Keep the journal also when the database has it all (`--journal-dir`: a guest's,
    /// which the host reads when the guest ends without its results).
    keep_journal: bool,
    kept: Kept,
}

impl Sink<'_> {
    /// Keeps a finished trial: journal first (synced), then the database. A failure to
    /// store is said once; the journal keeps the trial.
    fn trial(&mut self, run_id: &str, trial: &Trial, progress: &dyn Progress) {
        if let Some(j) = self.journal.as_mut() {
            if let Err(e) = j.trial(trial) {
                progress.note(&format!("{e:#}"));
                self.journal = None;
            }
        }
        let Some(s) = self.store.as_deref_mut() else {
            return;
        };
        // A database deleted or replaced mid-run may take writes into a file nobody can
        // open again: its file is checked too.
        if let Err(e) = s.add_trial(run_id, trial).and_then(|_| s.still_there()) {
            self.failed(format!("storing a trial: {e:#}"), progress);
        }
    }

    /// Records that something did not reach the database; says so the first time.
    fn failed(&mut self, why: String, progress: &dyn Progress) {
        self.kept.unstored += 1;
        if self.kept.store_error.is_none() {
            let keep = match &self.journal {
                Some(j) => format!("; every trial is kept in {}", j.path().display()),
                None => String::new(),
            };
            progress.note(&format!("{why}{keep}"));
            self.kept.store_error = Some(why);
        }
    }

    /// Records the run's end in both; removes the journal when the database has it all.
    fn finish(mut self, result: &RunResult, progress: &dyn Progress) -> Kept {
        if let Some(j) = self.journal.as_mut() {
            if let Err(e) = j.end(result) {
                progress.note(&format!("{e:#}"));
            }
        }
        if let Some(s) = self.store.as_deref_mut() {
            let mut why = None;
            if let Err(e) = s.finish_run(result) {
                why = Some(format!("recording the run's end: {e:#}"));
            }
            if let Err(e) = s.still_there() {
                // Whatever was written went to a file nobody can open: no trial is kept.
                why = Some(format!("{e:#}"));
                self.kept.unstored = result.trials.len();
            }
            if let Some(why) = why {
                self.kept.store_error.get_or_insert(why);
            }
        }
        let all_stored = self.store.is_some() && self.kept.store_error.is_none();
        match self.journal {
            Some(j) if all_stored && !self.keep_journal => {
                if let Err(e) = j.remove() {
                    progress.note(&format!("{e:#}"));
                }
            }
            Some(j) if !all_stored => self.kept.journal = Some(j.path().to_path_buf()),
            Some(_) | None => {}
        }
        self.kept
    }
}

fn open_state(plan: &Plan, run_id: &str) -> Result<State> {
    let dir = plan.image_dir.join("state");
    match State::create(&dir, run_id) {
        Ok(s) => Ok(s),
        Err(e)
            if plan
                .targets
                .iter()
                .all(|t| matches!(t.spec, provision::TargetSpec::Dir { .. })) =>
        {
            // A non-root user with only --dir targets may not write the shared image dir.
            // SAFETY: getuid has no arguments and cannot fail.
            let uid = unsafe { libc::getuid() };
            let alt = std::env::temp_dir()
                .join(format!("fsarena-{uid}"))
                .join("state");
            State::create(&alt, run_id)
                .with_context(|| format!("{e:#}; also tried {}", alt.display()))
        }
        Err(e) => Err(e),
    }
}

/// This rank's target: the one `built` under `--mpi shared` only on rank 0 (which tells
/// the others where it is), a view of it on the others; `built` itself otherwise.
fn own_target(built: Box<dyn Target>, dist: &Dist, run_id: &str) -> Box<dyn Target> {
    if !dist.is_shared() {
        return built;
    }
    if dist.rank() == 0 {
        return Box::new(SharedLead::new(built, dist.transport(), run_id));
    }
    let info = built.info().clone();
    Box::new(SharedView::new(
        info,
        dist.transport(),
        run_id,
        dist.hosts(),
    ))
}

/// Whether an ENOSPC io::Error is anywhere in the chain.
fn is_enospc(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.raw_os_error() == Some(libc::ENOSPC))
    })
}

/// The error's whole chain, with ENOSPC spelled out as "filesystem full" and secrets
/// hidden ([`crate::secret::redact`]).
pub fn describe_error(e: &anyhow::Error) -> String {
    let text = crate::secret::redact(&format!("{e:#}"));
    if is_enospc(e) {
        format!("filesystem full: {text}")
    } else {
        text
    }
}

/// Ends a run's result: its finish time, the summaries of its trials, and its status from
/// how the run went (`interrupted`, `failed` when it failed or a trial did, `complete`).
pub(crate) fn end_result(result: &mut RunResult, outcome: &Result<()>) {
    result.finished_at = Some(chrono::Utc::now().to_rfc3339());
    result.summaries = crate::stats::summarize(&result.trials, crate::workload::figures_of);
    result.status = match outcome {
        Err(e) if crate::error::exit_code(e) == crate::error::exit::INTERRUPTED => "interrupted",
        Err(_) => "failed",
        Ok(()) if result.trials.iter().any(|t| t.status != "ok") => "failed",
        Ok(()) => "complete",
    }
    .into();
}

/// A run's result as it starts: `running`, nothing measured yet, with `targets`
/// targets (all the plan's, once per guest kernel under `--kernel`) planned.
pub(crate) fn new_result(
    run_id: &str,
    command_line: &[String],
    plan: &Plan,
    mpi: Option<crate::result::MpiInfo>,
    targets: usize,
) -> RunResult {
    RunResult {
        fsarena_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: run_id.to_string(),
        started_at: chrono::Utc::now().to_rfc3339(),
        finished_at: None,
        status: "running".into(),
        command_line: crate::secret::redact_argv(command_line),
        host: crate::host::host_info(),
        policy: plan.policy.clone(),
        can_drop_caches: crate::probe::sys::is_root(),
        targets: Vec::new(),
        trials: Vec::new(),
        summaries: Vec::new(),
        mpi,
        left_out: plan.left_out.clone(),
        notes: plan
            .notes
            .iter()
            .map(|n| crate::secret::redact(n))
            .collect(),
        resumed_at: Vec::new(),
        planned_trials: u32::try_from(targets * plan.workloads.len() * plan.policy.reps as usize)
            .ok(),
    }
}

/// Starts this rank's guardian: `fsarena cleanup --run RUN` in a process group of its own
/// (mpirun and Slurm signal a rank's group), waiting for this process to end — it holds the
/// guardian's stdin until then. A rank killed before it tore down (mpirun's SIGKILL a second
/// after its SIGTERM, `kill -9`) leaves its records, which the guardian then undoes; after
/// a rank that finished there is nothing left to undo.
///
/// Rank 0's guardian also ends the run in the database (`db`: its path and the run's id)
/// as interrupted when the rank was killed before it could: its finished trials are there.
fn guard(
    plan: &Plan,
    run_id: &str,
    db: Option<(std::path::PathBuf, &str)>,
    progress: &dyn Progress,
) {
    use std::os::unix::process::CommandExt;
    let started = std::env::current_exe().and_then(|exe| {
        let mut c = std::process::Command::new(exe);
        if let Some((path, _)) = &db {
            c.arg("--db").arg(path);
        }
        c.arg("cleanup")
            .arg("--image-dir")
            .arg(&plan.image_dir)
            .args(["--run", run_id, "--when-stdin-closes"])
            .args(db.iter().flat_map(|(_, run)| ["--end-run", run]))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .process_group(0)
            .spawn()
    });
    match started {
        // The pipe's end (close-on-exec) stays open for this process's life.
        Ok(mut child) => std::mem::forget(child.stdin.take()),
        Err(e) => progress.note(&format!(
            "no guardian for this rank ({e}): if it is killed, run `fsarena cleanup` on its host"
        )),
    }
}
