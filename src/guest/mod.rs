//! Guest targets (`run --kernel KERNEL`, or `kernel = "…"` on a plan's target): those
//! targets run inside a guest kernel booted with virtme-ng, on a scratch disk the host
//! provides (a preallocated raw image, attached with the host's page cache bypassed), by
//! the same fsarena binary. The guest journals each trial into a directory it shares with
//! the host and writes its run there as JSON at its end; the host names its targets
//! `FS@RELEASE`, labels them with the guest's kernel, accelerator, vCPUs, memory and disk
//! cache mode, and stores them in its own database under one run, with a plan's targets
//! that run on the host ([`mod@adopt`]).
//!
//! Lifecycle: the guest's work directory, scratch image and QEMU pidfile are recorded in
//! the run's state file before they exist, and removed on every exit path (and by
//! `fsarena cleanup`); a guest that is silent for the idle timeout is stopped and the
//! trials it did not finish fail with its last console lines. docs/guest-kernels.md.

pub mod adopt;
pub mod inside;
mod kvm;
pub mod launch;
mod one_guest;

pub use crate::plan::guest::{target_name, GuestPlan};
/// The kernels guests boot, which a plan names ([`crate::plan::kernel`]).
pub use crate::plan::kernel;

use crate::plan::kernel::Kernel;
use crate::plan::{Plan, PlanTarget};
use crate::progress::Progress;
use crate::result::{GuestInfo, RunResult};
use crate::state::{Resource, State};
use adopt::{adopt, left_in, Left, Planned, GUEST_JOURNAL};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

use kvm::check_kvm;
pub use kvm::check_kvm_once;
use one_guest::OneGuest;

/// The serial of the scratch disk, by which the guest finds it.
pub const SCRATCH_SERIAL: &str = "fsarena-scratch";

/// How long a KVM guest may take to answer before KVM counts as not working here.
const KVM_CHECK: Duration = Duration::from_secs(20);

/// Options of `run` that the host keeps for itself (with their values): the guest gets
/// its own database, image directory and output; every output flag `run` offers
/// ([`crate::report::exporters`]) is the host's too ([`host_only`]).
const HOST_ONLY: [&str; 7] = [
    "--kernel",
    "--journal-dir",
    "--guest-cpus",
    "--guest-memory",
    "--guest-timeout",
    "--image-dir",
    "--db",
];

/// Whether `flag` (`--json`) is one the host keeps: in [`HOST_ONLY`] or an output of `run`.
fn host_only(flag: &str) -> bool {
    HOST_ONLY.contains(&flag)
        || crate::report::exporters()
            .iter()
            .any(|e| e.run.is_some() && flag.strip_prefix("--") == Some(e.flag))
}

/// The `run` arguments of `argv` (the host's command line) that the guest's fsarena
/// gets: everything after `run` but the host's own options.
pub fn guest_args(argv: &[String]) -> Vec<String> {
    let start = argv
        .iter()
        .position(|a| a == "run")
        .map_or(argv.len(), |i| i + 1);
    let mut out = Vec::new();
    let mut skip = false;
    for a in &argv[start..] {
        if std::mem::take(&mut skip) {
            continue;
        }
        if host_only(a) {
            skip = true;
            continue;
        }
        if a.split_once('=').is_some_and(|(f, _)| host_only(f)) {
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// `args` as the guest's fsarena gets them: the plan file (`--plan FILE`) replaced by a
/// copy in `shared` (a guest sees the host's root, but has /tmp and /var/tmp of its own),
/// and an fio job file ([`fio_read_here`]) by what the host read from it.
fn with_plan_in(args: &[String], shared: &Path, plan: &Plan) -> Result<Vec<String>> {
    let fio = args.iter().any(|a| a == "--fio" || a.starts_with("--fio="));
    let args = if fio {
        fio_read_here(args, plan)
    } else {
        args.to_vec()
    };
    let mut out = Vec::with_capacity(args.len());
    let mut next_is_plan = false;
    for a in &args {
        let file = if std::mem::take(&mut next_is_plan) {
            Some(a.as_str())
        } else if a == "--plan" {
            next_is_plan = true;
            None
        } else {
            a.strip_prefix("--plan=")
        };
        let Some(file) = file else {
            if !next_is_plan {
                out.push(a.clone());
            }
            continue;
        };
        let copy = shared.join("plan.toml");
        std::fs::copy(file, &copy).with_context(|| format!("copying {file} for the guest"))?;
        out.push("--plan".into());
        out.push(copy.to_string_lossy().into_owned());
    }
    Ok(out)
}

/// `args` with `--fio FILE`, `--fio-lenient`, `--fio-set` and `--fio-section` replaced by `plan`'s workloads (as
/// positional arguments, first) and by the policies the job file set (`--cache`, `--sync`,
/// `--seed`; any given are dropped, the host checked them against the file). The host read
/// the file with its includes and `${VAR}`s from its own files and environment, which the
/// guest does not share; with the same workload texts the guest's trials carry the labels
/// [`adopt`] looks for.
fn fio_read_here(args: &[String], plan: &Plan) -> Vec<String> {
    const REPLACED: [&str; 6] = [
        "--fio",
        "--fio-set",
        "--fio-section",
        "--cache",
        "--sync",
        "--seed",
    ];
    let mut out: Vec<String> = plan.workloads.iter().map(|w| w.text.clone()).collect();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) || a == "--fio-lenient" || a.starts_with("job:fio=") {
            continue;
        }
        if REPLACED.contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if a.split_once('=')
            .is_some_and(|(f, _)| REPLACED.contains(&f))
        {
            continue;
        }
        out.push(a.clone());
    }
    let p = &plan.policy;
    out.extend([
        "--cache".into(),
        p.cache.to_string(),
        "--sync".into(),
        p.sync.to_string(),
        "--seed".into(),
        p.seed.to_string(),
    ]);
    out
}

/// The note every target of an emulated guest carries.
pub fn emulated_note(info: &GuestInfo) -> String {
    format!(
        "emulated ({}): compare only with targets of the same guest; good for whether it \
         works and relative order, not absolute speed",
        info.accel
    )
}

/// The targets of `plan` that run in kernel `k`'s guest, with their positions in the
/// plan: those that name `k` when the plan's targets name their kernels, else all.
pub fn targets_in<'a>(plan: &'a Plan, k: &Kernel) -> Vec<(usize, &'a PlanTarget)> {
    let named = plan.targets_name_kernels();
    plan.targets
        .iter()
        .enumerate()
        .filter(|(_, t)| !named || t.kernel.as_ref().is_some_and(|tk| tk.release == k.release))
        .collect()
}

/// The plan's targets that run on the host, as a plan of their own: those that name no
/// kernel in a plan whose others do; `None` when every target runs in a guest.
fn host_part(plan: &Plan) -> Option<Plan> {
    if !plan.targets_name_kernels() || plan.targets.iter().all(|t| t.kernel.is_some()) {
        return None;
    }
    let mut host = plan.clone();
    host.targets.retain(|t| t.kernel.is_none());
    host.guest = None;
    Some(host)
}

/// Runs the plan's targets in a guest per kernel (and, when a plan's other targets name
/// no kernel, those on the host first, under the same run); returns the run as
/// [`crate::run::execute`] does. The host's database receives the whole run once every
/// guest is done.
pub fn execute(
    plan: &Plan,
    guest: &GuestPlan,
    command_line: Vec<String>,
    progress: &dyn Progress,
    mut store: Option<&mut crate::store::Store>,
    dist: &crate::mpi::Dist,
) -> Result<(RunResult, crate::run::Kept)> {
    let vng = launch::find_vng().ok_or_else(|| {
        crate::error::usage(
            "a guest kernel (--kernel, or kernel = \"…\" in a plan) needs virtme-ng: \
             python3 -m venv /opt/vng && /opt/vng/bin/pip install virtme-ng (and apt-get \
             install qemu-system-x86 busybox-static)",
        )
    })?;
    crate::state::ensure_owned_dir(&plan.image_dir)?;
    let host = host_part(plan);
    let all_targets = host.as_ref().map_or(0, |h| h.targets.len())
        + guest
            .kernels
            .iter()
            .map(|k| targets_in(plan, k).len())
            .sum::<usize>();
    let planned = crate::run::new_result("", &command_line, plan, None, all_targets);
    // What the host's part could not store, and its journal (kept when it could not).
    let mut host_kept = crate::run::Kept::default();
    let mut result = match &host {
        // The host's targets first: the guests then join their run.
        Some(h) => {
            let (mut r, kept) = crate::run::execute(
                h,
                command_line.clone(),
                progress,
                store.as_deref_mut(),
                dist,
            )?;
            r.planned_trials = planned.planned_trials;
            if r.status == "interrupted" {
                return Ok((r, kept));
            }
            // What the host's run could not store is stored with the guests' below. The
            // database hears at once that the run goes on, under the whole plan: the host
            // part recorded itself complete with its own targets only, which a crash
            // during the guests would leave standing.
            r.status = "running".into();
            r.finished_at = None;
            if let Some(s) = store.as_deref_mut() {
                if let Err(e) = s
                    .finish_run(&r)
                    .and_then(|_| s.set_plan(&r.run_id, &plan.hash(), &plan.canonical()))
                {
                    progress.note(&format!("{e:#}"));
                }
            }
            host_kept = kept;
            r
        }
        None => RunResult {
            run_id: crate::run::new_run_id(),
            ..planned
        },
    };
    if host.is_none() {
        // The host's part said them otherwise.
        for line in &result.notes {
            progress.note(line);
        }
    }
    let run_id = result.run_id.clone();
    // Held while the guests run: other runs on this machine (and `doctor`) see this one
    // live, as they see a run on the host, and mark what they measure meanwhile busy.
    let _registered = crate::run::announce(&run_id, plan, progress);
    // A state file of its own: the host part's, under the run's id, may still hold what
    // its teardown could not undo (for `fsarena cleanup`).
    let state = State::create(&plan.image_dir.join("state"), &format!("{run_id}-guests"))?;
    let log_dir = state.log_dir();
    std::fs::create_dir_all(&log_dir)?;
    let args = guest_args(&command_line);
    // As a run on the host: every trial also goes to the journal as it comes back, so
    // that a database that fails at the end loses nothing.
    let mut journal =
        match crate::journal::Journal::create(&plan.image_dir.join("journal"), &result) {
            Ok(j) => Some(j),
            Err(e) => {
                progress.note(&format!(
                    "no journal for this run ({e:#}): only the database keeps its trials"
                ));
                None
            }
        };
    let outcome = (|| -> Result<()> {
        let kvm = check_kvm(&vng, &guest.kernels[0], &state, &plan.image_dir, &run_id);
        if let Err(why) = &kvm {
            progress.note(&format!(
                "KVM not used ({why}): the guests run emulated (tcg)"
            ));
        }
        for (i, k) in guest.kernels.iter().enumerate() {
            crate::signals::check_stop()?;
            let info = GuestInfo {
                kernel: k.release.clone(),
                accel: if kvm.is_ok() { "kvm" } else { "tcg" }.into(),
                vcpus: guest.vcpus,
                memory_bytes: guest.memory_bytes,
                disk_cache: launch::DISK_CACHE.into(),
            };
            let targets = targets_in(plan, k);
            let mut args = args.clone();
            if plan.targets_name_kernels() {
                let at: Vec<String> = targets.iter().map(|(i, _)| i.to_string()).collect();
                args.extend(["--guest-targets".to_string(), at.join(",")]);
            }
            let one = OneGuest {
                plan,
                targets: targets.into_iter().map(|(_, t)| t).collect(),
                guest,
                kernel: k,
                info: &info,
                vng: &vng,
                work: plan.image_dir.join(format!("guest-{run_id}-{i}")),
                console: log_dir.join(format!("guest-{}.log", k.release)),
                args: &args,
            };
            let before = result.trials.len();
            let interrupted = one.run(&state, progress, &mut result)?;
            for t in &result.trials[before..] {
                if let Some(Err(e)) = journal.as_mut().map(|j| j.trial(t)) {
                    progress.note(&format!("{e:#}"));
                    journal = None;
                }
            }
            if interrupted {
                return Err(crate::error::Error::Interrupted.into());
            }
        }
        Ok(())
    })();
    if let Err(e) = state.finish() {
        progress.note(&format!("{e:#}"));
    }
    crate::run::end_result(&mut result, &outcome);
    let mut kept = crate::run::Kept::default();
    let stored = match store {
        Some(s) => match s.import(&result) {
            Ok(()) => true,
            Err(e) => {
                kept.unstored = result.trials.len();
                kept.store_error = Some(format!("{e:#}"));
                false
            }
        },
        None => false,
    };
    if let Some(mut j) = journal {
        if let Err(e) = j.end(&result) {
            progress.note(&format!("{e:#}"));
        }
        if stored {
            if let Err(e) = j.remove() {
                progress.note(&format!("{e:#}"));
            }
        } else {
            kept.journal = Some(j.path().to_path_buf());
        }
    }
    // The host part's journal holds only trials this import stored (its trials are in
    // `result`): it goes when they are in the database, else it stays, said.
    if let Some(path) = host_kept.journal {
        if stored {
            if let Err(e) = std::fs::remove_file(&path) {
                progress.note(&format!("removing {}: {e}", path.display()));
            }
        } else if kept.journal.is_none() {
            kept.journal = Some(path);
        } else {
            progress.note(&format!(
                "the host targets' trials are kept in the journal {}",
                path.display()
            ));
        }
    }
    match outcome {
        Err(e) if result.status != "interrupted" => Err(e),
        _ => Ok((result, kept)),
    }
}

#[cfg(test)]
mod tests;
