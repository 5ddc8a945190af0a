//! Workloads: what to do on a target. One file per workload, each citing its original.
//!
//! A workload is a sequence of named phases run through the [`TrialContext`]; it never
//! measures anything itself.

pub mod bonnie;
pub mod bonnie_files;
pub mod command;
pub mod compile;
pub mod confined;
pub mod dbrandom;
#[cfg(test)]
mod figures_tests;
pub mod io500;
pub mod job;
pub mod metascan;
pub mod mongo;
pub mod mt19937;
pub mod params;
pub mod postmark;
pub mod provision;
pub mod smallfiles;
pub mod space;
pub mod tasks;
pub mod tree;
pub mod untar;
pub mod writeback;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
pub use crate::figures::Figure;
use anyhow::Result;
pub use params::{ParamKind, ParamSpec, Params, Value};

/// Adds "OP PATH" context to an I/O result; the io::Error stays in the chain, so the
/// runner still recognises ENOSPC as "filesystem full".
pub trait IoContext<T> {
    /// Wraps the error with the operation and the path it concerned.
    fn on(self, op: &str, path: &std::path::Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn on(self, op: &str, path: &std::path::Path) -> Result<T> {
        use anyhow::Context;
        self.with_context(|| format!("{op} {}", path.display()))
    }
}

/// A [`PhaseSpec`], positionally: the workloads' phase tables read as tables.
pub(crate) const fn spec(
    name: &'static str,
    kind: PhaseKind,
    primary: Primary,
    unit: &'static str,
) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary,
        ops_unit: unit,
    }
}

/// A configured workload, ready to run trials.
pub trait Workload: Send + Sync {
    /// Runs all phases of one trial.
    fn run(&self, cx: &mut TrialContext) -> Result<()>;

    /// The bytes of file data one trial stores, when known before it runs: checked
    /// against the target's size when the plan is made ([`check_target`]).
    fn data_bytes(&self) -> Option<u64> {
        None
    }
}

/// A workload kind as listed by `fsarena list` and named on the command line.
pub struct WorkloadInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// Phases in the order they run.
    pub phases: &'static [PhaseSpec],
    /// The workload's own figures (its phases' `extra` notes), each with its unit and
    /// better side ([`crate::figures`]); the probe's figures are declared there.
    pub figures: &'static [Figure],
    pub build: fn(&Params) -> Result<Box<dyn Workload>>,
}

/// Re-derives a workload's own figures from its phases merged across MPI ranks, where
/// they are not sums or means of the ranks' notes (the io500 scores are computed from the
/// aggregate phases, as the IO500 computes them from the whole job's).
pub fn after_merge(
    workload: &str,
    phases: &mut [crate::result::PhaseResult],
    ranks: &[crate::result::RankTrial],
) {
    if workload == io500::INFO.name {
        io500::rules::rescore_merged(phases, ranks);
    }
}

/// Every workload fsarena knows, in the order `fsarena list` shows them.
/// The parameters of trial `t` that applied to it, as `key=value` separated by spaces:
/// every parameter but those its mode ignores (an `archive=` untar has no `profile` or
/// `scale`; compile's mode=kernel-build no compilebench `initial_dirs`, `runs`, …).
pub fn applied_params(t: &crate::result::Trial) -> String {
    let applies = |k: &str| match t.workload.as_str() {
        "untar" => untar::param_applies(&t.params, k),
        "compile" => compile::param_applies(&t.params, k),
        _ => true,
    };
    let v: Vec<String> = (t.params.iter())
        .filter(|(k, _)| applies(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    v.join(" ")
}

pub fn registry() -> &'static [&'static WorkloadInfo] {
    static ALL: &[&WorkloadInfo] = &[
        &bonnie::INFO,
        &bonnie_files::INFO,
        &postmark::INFO,
        &mongo::INFO,
        &dbrandom::INFO,
        &job::INFO,
        &io500::INFO,
        &smallfiles::INFO,
        &untar::INFO,
        &compile::INFO,
        &metascan::INFO,
        &writeback::INFO,
        &command::INFO,
        &space::INFO,
        &provision::INFO,
    ];
    ALL
}

/// Looks a workload up by name; the error lists the valid names (exit code 2).
pub fn find(name: &str) -> Result<&'static WorkloadInfo> {
    registry()
        .iter()
        .copied()
        .find(|w| w.name == name)
        .ok_or_else(|| {
            let names: Vec<_> = registry().iter().map(|w| w.name).collect();
            crate::error::usage(format!(
                "unknown workload '{}'{}; valid: {}",
                crate::workload::params::echo(name),
                crate::error::did_you_mean(name, names.iter().copied()),
                names.join(", ")
            ))
        })
}

/// Whether workload `w` can run on `target`, checked when the plan is made, before
/// anything is touched: `provision` needs a loop target, and a workload's data (its
/// [`Workload::data_bytes`], else its `size` parameter) must fit in the filesystem
/// fsarena makes.
pub fn check_target(w: &WorkloadSpec, target: &crate::provision::TargetSpec) -> Result<()> {
    use crate::provision::TargetSpec;
    if std::ptr::eq(w.info, &provision::INFO) {
        return provision::check_target(target);
    }
    let fs_bytes = match target {
        TargetSpec::Loop { size_bytes, .. }
        | TargetSpec::Tmpfs { size_bytes, .. }
        | TargetSpec::Served { size_bytes, .. } => *size_bytes,
        _ => return Ok(()),
    };
    let size = w
        .info
        .params
        .iter()
        .any(|p| p.name == "size" && matches!(p.kind, ParamKind::Size))
        .then(|| w.params.bytes("size"))
        .flatten();
    match w.workload.data_bytes().or(size) {
        Some(b) if b > fs_bytes => Err(crate::error::usage(format!(
            "{}: {} of data is larger than the whole {} target ({}); give a smaller size \
             or a larger --size",
            w.info.name,
            crate::size::format_size(b),
            target.name(),
            crate::size::format_size(fs_bytes)
        ))),
        _ => Ok(()),
    }
}

/// A workload with its parameters, as named on the command line (`bonnie:size=512MiB`).
#[derive(Clone)]
pub struct WorkloadSpec {
    pub info: &'static WorkloadInfo,
    pub params: Params,
    /// The spec as typed.
    pub text: String,
    /// The workload, built (and so validated) once when the plan is made; every trial
    /// runs it. What its build read — a user's archive, a source tree's check — is done
    /// once, before anything is provisioned.
    pub workload: std::sync::Arc<dyn Workload>,
}

impl WorkloadSpec {
    /// Parses `name[:key=value,...]`.
    pub fn parse(text: &str) -> Result<Self> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let info = find(name.trim())?;
        let params = Params::parse(info.name, info.params, rest)?;
        // Validates everything now, before any disk is touched.
        let workload = (info.build)(&params)?.into();
        Ok(Self {
            info,
            params,
            text: text.trim().to_string(),
            workload,
        })
    }
}

/// Test helpers shared by the workloads' unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::context::TrialContext;
    use crate::data::DataPool;
    use crate::policy::{CachePolicy, DataPolicy, Policy, SyncPolicy};
    use crate::provision::{dir::DirTarget, Env, Target};
    use std::sync::Arc;

    /// Calls `f` with a context on a DirTarget in a fresh tempdir (caches kept), then
    /// tears the target down.
    pub fn in_context<R>(
        data: DataPolicy,
        sync: SyncPolicy,
        f: impl FnOnce(&mut TrialContext) -> R,
    ) -> R {
        in_context_at(&std::env::temp_dir(), data, sync, f)
    }

    /// Like [`in_context`], in a fresh tempdir under `base` (e.g. `/dev/shm` for tmpfs).
    pub fn in_context_at<R>(
        base: &std::path::Path,
        data: DataPolicy,
        sync: SyncPolicy,
        f: impl FnOnce(&mut TrialContext) -> R,
    ) -> R {
        let tmp = tempfile::tempdir_in(base).unwrap();
        let env = Env::for_test("test", tmp.path(), &tmp.path().join("state"));
        let policy = Policy {
            cache: CachePolicy::Keep,
            sync,
            data,
            ..Default::default()
        };
        let mut target = DirTarget::new(tmp.path(), &env);
        let workdir = target.prepare().unwrap();
        let pool = DataPool::new(data, policy.seed);
        let log = tmp.path().join("logs").join("trial.log");
        let r = f(
            &mut TrialContext::new(workdir, &policy, &mut target, pool, &|_| {}).with_log_path(log),
        );
        target.teardown().unwrap();
        r
    }

    /// A target that records when its caches were reset, for tests of when the cache
    /// policy acts; its work directory is the directory it was made with, left as it is.
    pub struct ResetClock {
        info: crate::result::TargetInfo,
        dir: std::path::PathBuf,
        /// When each reset happened.
        pub resets: Arc<std::sync::Mutex<Vec<std::time::Instant>>>,
    }

    impl ResetClock {
        pub fn new(dir: &std::path::Path) -> Self {
            Self {
                info: crate::result::TargetInfo::default(),
                dir: dir.to_path_buf(),
                resets: Arc::default(),
            }
        }
    }

    impl Target for ResetClock {
        fn info(&self) -> &crate::result::TargetInfo {
            &self.info
        }
        fn prepare(&mut self) -> anyhow::Result<std::path::PathBuf> {
            Ok(self.dir.clone())
        }
        fn reset(&mut self) -> anyhow::Result<()> {
            let mut resets = self.resets.lock().unwrap_or_else(|e| e.into_inner());
            resets.push(std::time::Instant::now());
            Ok(())
        }
        fn device_stat(&self) -> Option<std::path::PathBuf> {
            None
        }
        fn provision(&self) -> crate::result::Provision {
            crate::result::Provision::default()
        }
        fn teardown(&mut self) -> anyhow::Result<()> {
            Ok(())
        }
    }
}
