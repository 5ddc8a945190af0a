//! Adopting a guest's run into the host's: the guest's targets and trials under their
//! `FS@RELEASE` names and guest labels, from the JSON it wrote at its end or, when it hung,
//! panicked or was stopped first, from the journal it kept trial by trial in the shared
//! directory; every trial planned for the guest that it did not report fails with why.

use super::{emulated_note, target_name, Kernel};
use crate::plan::{Plan, PlanTarget};
use crate::result::{GuestInfo, RunResult, TargetInfo, Trial};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The subdirectory of the shared directory the guest journals its trials in.
pub const GUEST_JOURNAL: &str = "journal";

/// What a guest left in its shared directory.
pub enum Left {
    /// `result.json`: it ran to its end.
    Results(Result<RunResult>),
    /// No results, but a journal: the trials it finished before it hung, crashed or was
    /// stopped.
    Journal(Result<RunResult>),
    Nothing,
}

/// Reads what the guest left in `shared`: its results, else its journal.
pub fn left_in(shared: &Path) -> Left {
    let json = shared.join("result.json");
    if json.is_file() {
        return Left::Results(crate::journal::read(&json));
    }
    let mut journals: Vec<PathBuf> = std::fs::read_dir(shared.join(GUEST_JOURNAL))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    journals.sort();
    match journals.first() {
        Some(j) => Left::Journal(crate::journal::read(j)),
        None => Left::Nothing,
    }
}

/// What one guest was to run: the plan's `targets` in `kernel`, on machine `info`.
pub struct Planned<'a> {
    pub plan: &'a Plan,
    pub targets: &'a [&'a PlanTarget],
    pub kernel: &'a Kernel,
    pub info: &'a GuestInfo,
}

/// Puts a guest's targets and trials into `result` under their guest names; every
/// trial planned for it that it did not report fails with `failure` (or a generic
/// reason).
pub fn adopt(on: &Planned, run: Option<RunResult>, failure: Option<&str>, result: &mut RunResult) {
    let (plan, k, info) = (on.plan, on.kernel, on.info);
    let mut notes = Vec::new();
    if info.emulated() {
        notes.push(emulated_note(info));
    }
    let mut trials: Vec<Trial> = Vec::new();
    let mut targets: Vec<TargetInfo> = Vec::new();
    if let Some(run) = run {
        for mut t in run.targets {
            t.name = target_name(&t.name, k);
            t.guest = Some(info.clone());
            t.notes.extend(notes.iter().cloned());
            targets.push(t);
        }
        for mut t in run.trials {
            t.target = target_name(&t.target, k);
            if info.emulated() {
                for p in &mut t.phases {
                    if !p.flags.iter().any(|f| f == "emulated") {
                        p.flags.push("emulated".into());
                    }
                }
            }
            trials.push(t);
        }
    }
    for pt in on.targets {
        let name = target_name(&pt.name, k);
        if !targets.iter().any(|t| t.name == name) {
            targets.push(TargetInfo {
                name: name.clone(),
                fstype: pt.spec.name(),
                kind: "guest".into(),
                guest: Some(info.clone()),
                notes: notes.clone(),
                ..Default::default()
            });
        }
        for w in &plan.workloads {
            for rep in 1..=plan.policy.reps {
                let label = plan.label(w);
                let done = trials
                    .iter()
                    .any(|t| t.target == name && t.label == label && t.rep == rep);
                if done || (failure.is_none() && plan.auto_reps.is_some()) {
                    continue;
                }
                let why = failure.unwrap_or("the guest did not run this trial");
                let (status, error) = match why {
                    "interrupted" => (
                        "interrupted",
                        "interrupted (SIGINT/SIGTERM): the guest was stopped".to_string(),
                    ),
                    _ => ("failed", why.to_string()),
                };
                trials.push(Trial::failed(
                    &name,
                    w.info.name,
                    &label,
                    w.params.to_text_map(),
                    rep,
                    status,
                    error,
                ));
            }
        }
    }
    result.targets.extend(targets);
    result.trials.extend(trials);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn guest_info(accel: &str) -> GuestInfo {
        GuestInfo {
            kernel: "6.1.0-56-amd64".into(),
            accel: accel.into(),
            vcpus: 2,
            memory_bytes: 2 << 30,
            disk_cache: "none".into(),
        }
    }

    pub(crate) fn kernel_6_1() -> Kernel {
        Kernel {
            path: "/boot/vmlinuz-6.1.0-56-amd64".into(),
            release: "6.1.0-56-amd64".into(),
        }
    }

    /// Two tmpfs targets, one workload, two repetitions: four trials.
    pub(crate) fn four_trials() -> Plan {
        let text = r#"
[defaults]
reps = 2
size = "64MiB"
[[target]]
name = "a"
fs = "tmpfs"
[[target]]
name = "b"
fs = "tmpfs"
[[workload]]
kind = "smallfiles"
files = 10
"#;
        let f = crate::plan::file::parse("t.toml", text).unwrap();
        crate::plan::build::build(&f, &Default::default())
            .unwrap()
            .plan
    }

    /// A guest journal in `shared` holding an ok trial of `done` (target, rep).
    fn journal_with(shared: &Path, done: &[(&str, u32)]) {
        let mut head = crate::report::fixture_with(Vec::new());
        head.status = "running".into();
        // A run's journal starts before its targets are made: it names none.
        head.targets.clear();
        let mut j = crate::journal::Journal::create(&shared.join(GUEST_JOURNAL), &head).unwrap();
        let base = serde_json::from_str::<RunResult>(include_str!("../../tests/fixtures/run.json"))
            .unwrap()
            .trials
            .remove(0);
        for (target, rep) in done {
            let mut t = base.clone();
            t.target = target.to_string();
            t.label = "smallfiles".into();
            t.workload = "smallfiles".into();
            t.rep = *rep;
            t.status = "ok".into();
            j.trial(&t).unwrap();
        }
    }

    #[test]
    fn a_guest_that_hung_keeps_the_trials_it_journaled_and_fails_only_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path();
        journal_with(shared, &[("a", 1), ("b", 1)]);
        let Left::Journal(Ok(run)) = left_in(shared) else {
            panic!("the journal is not read back");
        };
        let plan = four_trials();
        let mut result = crate::report::fixture_with(Vec::new());
        result.targets.clear();
        let why = "the guest was silent for 30 s and was stopped before this trial \
                   finished; its console ended:\n  | Kernel panic";
        let (k, info) = (kernel_6_1(), guest_info("tcg"));
        let targets: Vec<&PlanTarget> = plan.targets.iter().collect();
        let on = Planned {
            plan: &plan,
            targets: &targets,
            kernel: &k,
            info: &info,
        };
        adopt(&on, Some(run), Some(why), &mut result);
        let got: Vec<(&str, u32, &str)> = result
            .trials
            .iter()
            .map(|t| (t.target.as_str(), t.rep, t.status.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a@6.1.0-56", 1, "ok"),
                ("b@6.1.0-56", 1, "ok"),
                ("a@6.1.0-56", 2, "failed"),
                ("b@6.1.0-56", 2, "failed"),
            ]
        );
        for t in &result.trials[..2] {
            assert!(t.error.is_none());
            assert!(t
                .phases
                .iter()
                .all(|p| p.flags.iter().any(|f| f == "emulated")));
        }
        for t in &result.trials[2..] {
            assert_eq!(t.error.as_deref(), Some(why));
        }
        let names: Vec<&str> = result.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a@6.1.0-56", "b@6.1.0-56"]);
        assert!(result.targets.iter().all(|t| t.guest.is_some()));
    }

    #[test]
    fn an_interrupted_guest_leaves_its_unfinished_trials_interrupted() {
        let plan = four_trials();
        let mut result = crate::report::fixture_with(Vec::new());
        let (k, info) = (kernel_6_1(), guest_info("kvm"));
        let targets: Vec<&PlanTarget> = plan.targets.iter().collect();
        let on = Planned {
            plan: &plan,
            targets: &targets,
            kernel: &k,
            info: &info,
        };
        adopt(&on, None, Some("interrupted"), &mut result);
        assert_eq!(result.trials.len(), 4);
        for t in &result.trials {
            assert_eq!(t.status, "interrupted");
            assert_eq!(
                (t.workload.as_str(), t.label.as_str()),
                ("smallfiles", "smallfiles")
            );
            assert!(t
                .error
                .as_deref()
                .unwrap()
                .contains("the guest was stopped"));
            assert!(t.phases.is_empty());
        }
    }

    #[test]
    fn a_guest_that_ended_leaves_its_results_which_win_over_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path();
        assert!(matches!(left_in(shared), Left::Nothing));
        journal_with(shared, &[("a", 1)]);
        std::fs::write(
            shared.join("result.json"),
            include_str!("../../tests/fixtures/run.json"),
        )
        .unwrap();
        assert!(matches!(left_in(shared), Left::Results(Ok(_))));
        std::fs::write(shared.join("result.json"), "{").unwrap();
        assert!(matches!(left_in(shared), Left::Results(Err(_))));
    }
}
