//! Unit tests of `guest`.

use super::adopt::tests::{four_trials, kernel_6_1};
use super::*;

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

#[test]
fn the_guest_gets_the_run_arguments_but_the_hosts_own() {
    let argv = words(
        "fsarena --db h.db run smallfiles:files=20 --fs jfs,vfat --kernel 6.1.0-56-amd64 \
         --json o.json --kernel=/boot/x --guest-cpus 2 --reps 2 --image-dir=/d --html r \
         --journal-dir j",
    );
    assert_eq!(
        guest_args(&argv),
        words("smallfiles:files=20 --fs jfs,vfat --reps 2")
    );
}

#[test]
fn the_plan_file_goes_to_the_guest_as_a_copy_in_the_shared_directory() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.toml");
    std::fs::write(&plan, "x").unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let p = plan.to_string_lossy().into_owned();
    let copy = shared.join("plan.toml").to_string_lossy().into_owned();
    for args in [
        vec!["--plan".to_string(), p.clone(), "--reps".into(), "2".into()],
        vec![format!("--plan={p}"), "--reps".into(), "2".into()],
    ] {
        let got = with_plan_in(&args, &shared).unwrap();
        assert_eq!(got, ["--plan", &copy, "--reps", "2"]);
    }
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "x");
}

#[test]
fn each_guest_runs_its_own_targets_and_the_host_the_others() {
    let k61 = kernel_6_1();
    let k612 = Kernel {
        path: "/boot/vmlinuz-6.12.117+deb12-amd64".into(),
        release: "6.12.117+deb12-amd64".into(),
    };
    // --kernel for all: every guest runs every target, the host none.
    let mut plan = four_trials();
    let at = |v: Vec<(usize, &PlanTarget)>| v.into_iter().map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(at(targets_in(&plan, &k61)), [0, 1]);
    assert_eq!(at(targets_in(&plan, &k612)), [0, 1]);
    assert!(host_part(&plan).is_none());
    // Target b names 6.1: it alone runs there, a on the host.
    plan.targets[1].kernel = Some(k61.clone());
    assert_eq!(at(targets_in(&plan, &k61)), [1]);
    assert!(targets_in(&plan, &k612).is_empty());
    let host = host_part(&plan).unwrap();
    let names: Vec<&str> = host.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    assert!(host.guest.is_none());
    // Every target names a kernel: nothing on the host.
    plan.targets[0].kernel = Some(k612.clone());
    assert_eq!(at(targets_in(&plan, &k612)), [0]);
    assert!(host_part(&plan).is_none());
}
