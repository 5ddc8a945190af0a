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
        let got = with_plan_in(&args, &shared, &four_trials()).unwrap();
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

/// `run --fio FILE --kernel K`: the guest gets the workloads and policies the host read
/// from the job file (its include is the host's), and builds from them, without the file,
/// the plan the host adopts its trials into: the same labels, the same policy.
#[test]
fn a_job_file_goes_to_the_guest_as_the_workloads_and_policies_the_host_read() {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    for sub in ["work", "img", "shared"] {
        std::fs::create_dir(d(sub)).unwrap();
    }
    std::fs::write(d("common.inc"), "size=1m\nioengine=sync\n").unwrap();
    std::fs::write(
        d("t.fio"),
        "[global]\ninclude common.inc\ninvalidate=0\nrandseed=7\n\
         [w]\nrw=write\nbs=64k\n[r]\nstonewall\nrw=read\n",
    )
    .unwrap();
    let plan_of = |run_args: &[String]| {
        let argv = ["fsarena", "run"].iter().map(|s| s.to_string());
        let cli = crate::cli::Cli::try_parse_from(argv.chain(run_args.iter().cloned()))
            .expect("clap takes it");
        let crate::cli::Command::Run(a) = cli.command else {
            panic!("not a run");
        };
        Plan::from_args(&a).unwrap_or_else(|e| panic!("{e:#}"))
    };
    let (job, work, img) = (d("t.fio"), d("work"), d("img"));
    for fio in [
        vec!["--fio".to_string(), job.clone()],
        vec![format!("--fio={job}")],
    ] {
        let given: Vec<String> = fio
            .iter()
            .cloned()
            .chain(words(
                "--fio-lenient --fio-set size=1m --fio-section w --fio-section=r --dir",
            ))
            .chain([work.clone()])
            .chain(words("--reps 1 --seed=7 --cache keep"))
            .collect();
        let host = plan_of(&[given.clone(), vec!["--image-dir".into(), img.clone()]].concat());
        let argv: Vec<String> = words("fsarena --db h.db run --kernel /boot/x --image-dir")
            .into_iter()
            .chain([img.clone()])
            .chain(given)
            .collect();
        let got = with_plan_in(&guest_args(&argv), Path::new(&d("shared")), &host).unwrap();
        let texts: Vec<&str> = host.workloads.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts.len(), 2, "one workload per group");
        let want: Vec<String> = texts
            .iter()
            .map(|t| t.to_string())
            .chain(words("--dir"))
            .chain([work.clone()])
            .chain(words("--reps 1 --cache keep --sync none --seed 7"))
            .collect();
        assert_eq!(got, want);
        // The guest reads no job file: gone, the plan is the same.
        std::fs::rename(&job, d("gone.fio")).unwrap();
        let guest = plan_of(&[got, vec!["--image-dir".into(), img.clone()]].concat());
        std::fs::rename(d("gone.fio"), &job).unwrap();
        let labels = |p: &Plan| p.workloads.iter().map(|w| p.label(w)).collect::<Vec<_>>();
        assert_eq!(labels(&guest), labels(&host));
        let policy = |p: &Plan| (p.policy.cache, p.policy.sync, p.policy.seed);
        assert_eq!(policy(&guest), policy(&host));
        assert!(guest.notes.is_empty(), "the host's run keeps the notes");
    }
}
