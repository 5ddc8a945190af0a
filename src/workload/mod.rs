//! Workloads: what to do on a target. One file per workload, each citing its original.
//!
//! A workload is a sequence of named phases run through the [`TrialContext`]; it never
//! measures anything itself.

pub mod confined;
#[cfg(test)]
mod figures_tests;
pub mod mt19937;
pub mod params;
pub mod programs;
pub mod steadiness;
pub mod tasks;
pub mod tree;

/// Declares each workload's module and lists its `INFO` in [`registry`], in the order
/// `fsarena list` shows them: adding a workload is its file plus one line here.
macro_rules! workloads {
    ($($module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every workload fsarena knows, in the order `fsarena list` shows them.
        pub fn registry() -> &'static [&'static WorkloadInfo] {
            static ALL: &[&WorkloadInfo] = &[$(&$module::INFO),+];
            ALL
        }
    };
}

workloads! {
    bonnie,
    bonnie_files,
    postmark,
    mongo,
    dbrandom,
    sqlite,
    pgbench,
    db_bench,
    job,
    io500,
    smallfiles,
    untar,
    compile,
    metascan,
    writeback,
    command,
    space,
    provision,
    crash,
}

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
pub use crate::figures::Figure;
use crate::result::{PhaseResult, RankTrial};
use anyhow::Result;
pub use params::{ParamKind, ParamSpec, Params, Value};
use std::collections::BTreeMap;

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

/// A workload kind as listed by `fsarena list` and named on the command line: everything
/// the rest of fsarena needs to know about it, declared in its own file.
pub struct WorkloadInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// Phases in the order they run.
    pub phases: &'static [PhaseSpec],
    /// The workload's own figures (its phases' `extra` notes), each with its unit and
    /// better side ([`crate::figures`]); the probe's figures are declared there.
    pub figures: &'static [Figure],
    /// The 1997–2003 tool it reproduces (`Bonnie`, `Postmark`, …), whose original neither
    /// synced nor dropped caches between its phases ([`classic_policy_line`]).
    pub classic_tool: Option<&'static str>,
    /// Whether a stored parameter applied to a trial (`archive=` untar ignores `profile`);
    /// `None`: every one does ([`applied_params`]).
    pub param_applies: Option<ParamApplies>,
    /// Re-derives its own figures from its phases merged across MPI ranks
    /// ([`after_merge`]); `None`: the merged notes stand.
    pub after_merge: Option<AfterMerge>,
    /// Fills the defaults that depend on other parameters (a profile's) once the given
    /// ones are parsed, so that the parameters recorded are the ones run; `None`: every
    /// default is its own.
    pub resolve: Option<fn(&mut Params) -> Result<()>>,
    /// The parameters `--phase-time` scales its work by; empty: it is kept as given.
    pub phase_time_knobs: &'static [Knob],
    /// The part it plays when the seeds' database proxy is set against real engines
    /// (`crate::compare::proxy`); `None`: no part.
    pub database: Option<DatabaseRole>,
    /// The programs it runs that fsarena does not ship (a database server), each with its
    /// Debian package: a run asking for it without them is refused before provisioning.
    pub programs: &'static [programs::Program],
    pub build: fn(&Params) -> Result<Box<dyn Workload>>,
}

/// The part a workload plays when the verdicts of the seeds' database proxy are set
/// against those of real database engines, each by the phase that stands for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatabaseRole {
    /// The proxy (random.c's random read/write+fsync loop).
    Proxy(&'static str),
    /// A real engine (its transactions, or its mixed reads and writes).
    Engine(&'static str),
}

/// Whether stored parameter `name` applied to a trial with parameters `params`
/// ([`WorkloadInfo::param_applies`]).
pub type ParamApplies = fn(params: &BTreeMap<String, String>, name: &str) -> bool;

/// Re-derives a workload's figures from its `phases` merged across MPI `ranks`
/// ([`WorkloadInfo::after_merge`]).
pub type AfterMerge = fn(phases: &mut [PhaseResult], ranks: &[RankTrial]);

/// A parameter that the work of some phases grows with, in proportion: what
/// `--phase-time` raises ([`WorkloadInfo::phase_time_knobs`]).
pub struct Knob {
    pub param: &'static str,
    /// The phases it drives; empty: all of them.
    pub phases: &'static [&'static str],
    /// Files and directories the workload keeps at once per unit of it (0: none to speak
    /// of): what a target with a fixed number of inodes must hold.
    pub entries: f64,
}

impl Knob {
    /// A knob, positionally: the workloads' knob tables read as tables.
    pub const fn new(param: &'static str, phases: &'static [&'static str], entries: f64) -> Self {
        Self {
            param,
            phases,
            entries,
        }
    }
}

/// Re-derives a workload's own figures from its phases merged across MPI ranks, where
/// they are not sums or means of the ranks' notes (the io500 scores are computed from the
/// aggregate phases, as the IO500 computes them from the whole job's).
pub fn after_merge(workload: &str, phases: &mut [PhaseResult], ranks: &[RankTrial]) {
    if let Some(f) = info(workload).and_then(|w| w.after_merge) {
        f(phases, ranks);
    }
}

/// The parameters of trial `t` that applied to it, as `key=value` separated by spaces:
/// every parameter but those its mode ignores (an `archive=` untar has no `profile` or
/// `scale`; compile's mode=kernel-build no compilebench `initial_dirs`, `runs`, …).
pub fn applied_params(t: &crate::result::Trial) -> String {
    let applies = info(&t.workload).and_then(|w| w.param_applies);
    let v: Vec<String> = (t.params.iter())
        .filter(|(k, _)| applies.is_none_or(|f| f(&t.params, k)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    v.join(" ")
}

/// A workload's own figures by its name (as in [`crate::result::Trial::workload`]), empty
/// for a name no workload has (a run stored by an older fsarena): what the figure and
/// statistics core is handed ([`crate::figures::Own`]).
pub fn figures_of(workload: &str) -> &'static [Figure] {
    info(workload).map_or(&[], |w| w.figures)
}

/// What a run says, at its start and atop its report, when it runs a workload that
/// reproduces a classic tool ([`WorkloadInfo::classic_tool`]) under a policy other than
/// the originals': `--cache cold` remounts between Postmark's create and transactions and
/// between dbrandom's phases, and `--sync end` times a sync the originals never did.
/// `None` under `--cache keep --sync none`, or without such a workload.
pub fn classic_policy_line<'a>(
    workloads: impl IntoIterator<Item = &'a str>,
    policy: &crate::policy::Policy,
) -> Option<String> {
    use crate::policy::{CachePolicy, SyncPolicy};
    if policy.cache == CachePolicy::Keep && policy.sync == SyncPolicy::None {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for w in workloads {
        let classic = info(w).is_some_and(|i| i.classic_tool.is_some());
        if classic && !names.contains(&w) {
            names.push(w);
        }
    }
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "{} ran with --cache {} --sync {};\n  the originals neither dropped caches nor \
         synced: `--cache keep --sync none`",
        names.join(", "),
        policy.cache,
        policy.sync
    ))
}

/// The workload named `name`, if there is one.
fn info(name: &str) -> Option<&'static WorkloadInfo> {
    registry().iter().copied().find(|w| w.name == name)
}

/// Looks a workload up by name; the error lists the valid names (exit code 2).
pub fn find(name: &str) -> Result<&'static WorkloadInfo> {
    info(name).ok_or_else(|| {
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
/// anything is touched: the programs it runs must be here ([`programs::check`]),
/// `provision` needs a loop target, and a workload's data (its
/// [`Workload::data_bytes`], else its `size` parameter) must fit in the filesystem
/// fsarena makes.
pub fn check_target(w: &WorkloadSpec, target: &crate::provision::TargetSpec) -> Result<()> {
    use crate::provision::TargetSpec;
    programs::check(w.info.name, w.info.programs)?;
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
        let mut params = Params::parse(info.name, info.params, rest)?;
        if let Some(resolve) = info.resolve {
            resolve(&mut params)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CachePolicy, Policy, SyncPolicy};

    /// What each workload declares in its `INFO` names what it has: unique names, knobs
    /// that are numeric parameters of it driving phases it runs.
    #[test]
    fn every_workload_declares_what_the_others_need() {
        for (i, w) in registry().iter().enumerate() {
            assert!(!w.name.is_empty() && !w.about.is_empty(), "{}", w.name);
            assert!(
                !registry()[..i].iter().any(|v| v.name == w.name),
                "{} registered twice",
                w.name
            );
            assert!(std::ptr::eq(find(w.name).unwrap(), *w), "{}", w.name);
            for k in w.phase_time_knobs {
                let p = w.params.iter().find(|p| p.name == k.param);
                let p = p.unwrap_or_else(|| {
                    panic!("{}: knob {} is no parameter of it", w.name, k.param)
                });
                assert!(
                    matches!(p.kind, ParamKind::Count | ParamKind::Float),
                    "{}: knob {} is not a number",
                    w.name,
                    k.param
                );
                assert!(k.entries >= 0.0, "{}: {}", w.name, k.param);
                for ph in k.phases {
                    assert!(
                        w.phases.iter().any(|s| s.name == *ph),
                        "{}: knob {} drives phase {ph}, which it does not have",
                        w.name,
                        k.param
                    );
                }
            }
            if let Some(DatabaseRole::Proxy(ph) | DatabaseRole::Engine(ph)) = w.database {
                assert!(
                    w.phases.iter().any(|s| s.name == ph),
                    "{}: its database role names phase {ph}, which it does not have",
                    w.name
                );
            }
            if let Some(tool) = w.classic_tool {
                assert!(!tool.is_empty(), "{}", w.name);
            }
        }
        let classic: Vec<_> = (registry().iter())
            .filter(|w| w.classic_tool.is_some())
            .map(|w| w.name)
            .collect();
        assert_eq!(classic, ["bonnie", "bonnie-files", "postmark", "dbrandom"]);
    }

    /// A mode's ignored parameters are left out of what applied; a workload without a
    /// `param_applies`, or a name no workload has, keeps them all.
    #[test]
    fn applied_params_leave_out_what_a_mode_ignores() {
        let run: crate::result::RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap();
        let trial = |workload: &str, params: &[(&str, &str)]| crate::result::Trial {
            workload: workload.into(),
            params: (params.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..run.trials[0].clone()
        };
        let own = [("archive", "/a.tar"), ("profile", "web"), ("scale", "1")];
        assert_eq!(applied_params(&trial("untar", &own)), "archive=/a.tar");
        let generated = [("archive", ""), ("profile", "web")];
        assert_eq!(
            applied_params(&trial("untar", &generated)),
            "archive= profile=web"
        );
        assert_eq!(
            applied_params(&trial("bonnie", &[("seeks", "8000")])),
            "seeks=8000"
        );
        assert_eq!(
            applied_params(&trial("gone", &[("profile", "web")])),
            "profile=web"
        );
        assert!(figures_of("gone").is_empty());
        assert!(std::ptr::eq(figures_of("io500"), io500::INFO.figures));
    }

    /// The classic suite under the default policy names the one that reproduces the
    /// originals; under that policy, or without a classic tool, nothing is said.
    #[test]
    fn classic_tools_name_the_policy_that_reproduces_them() {
        let classic = ["bonnie", "bonnie-files", "postmark", "bonnie", "postmark"];
        let line = classic_policy_line(classic, &Policy::default()).unwrap();
        assert!(
            line.starts_with("bonnie, bonnie-files, postmark ran with --cache cold --sync end;"),
            "{line}"
        );
        assert!(line.contains("`--cache keep --sync none`"), "{line}");
        let original = Policy {
            cache: CachePolicy::Keep,
            sync: SyncPolicy::None,
            ..Default::default()
        };
        assert_eq!(classic_policy_line(classic, &original), None);
        let keep_only = Policy {
            cache: CachePolicy::Keep,
            ..Default::default()
        };
        assert!(classic_policy_line(["dbrandom"], &keep_only).is_some());
        assert_eq!(
            classic_policy_line(["job", "untar"], &Policy::default()),
            None
        );
    }
}
