//! The busy verdict on made-up counters, and the registry in a private directory.

use super::registry::{live_in, publish, trusted_dir};
use super::*;
use std::os::unix::fs::PermissionsExt;

const STAT: &str = "cpu  1000 20 300 5000 100 7 8 0 0 0\n\
                    cpu0 500 10 150 2500 50 3 4 0 0 0\n\
                    intr 1 2 3\n";

/// A `/proc/PID/stat` line with the given flags, times and start time.
fn pid_stat(comm: &str, flags: u64, ut: u64, st: u64, cut: u64, cst: u64, start: u64) -> String {
    format!("42 ({comm}) S 2 0 0 0 -1 {flags} 0 0 0 0 {ut} {st} {cut} {cst} 20 0 1 0 {start} 0 0")
}

#[test]
fn parses_proc_stat_and_pid_stat() {
    assert_eq!(parse_proc_stat(STAT), Some((6435, 1320)));
    assert_eq!(parse_proc_stat("intr 1 2\n"), None);
    let own = pid_stat("fsarena (dev) x", 0x400000, 10, 20, 30, 40, 99);
    assert_eq!(parse_own_ticks(&own), Some(100));
    assert_eq!(parse_kthread(&own), None, "no kernel thread");
    let kt = pid_stat("kworker/u4:2-loop0", 0x04208060, 7, 5, 0, 0, 1234);
    assert_eq!(parse_kthread(&kt), Some((1234, 12)));
    let real = std::fs::read_to_string("/proc/self/stat").unwrap();
    assert!(parse_own_ticks(&real).is_some());
}

fn ticks(total: u64, busy: u64, own: u64) -> CpuTicks {
    CpuTicks { total, busy, own }
}

#[test]
fn others_cpu_is_busy_minus_own_minus_kernel_threads() {
    // 2 CPUs for 10 s at 100 Hz: 2000 ticks. fsarena used 900, kernel threads 100.
    let before = ticks(10_000, 3_000, 50);
    let lone = ticks(12_000, 4_050, 950);
    let share = others_cpu_share(before, lone, 100).unwrap();
    assert!((share - 0.025).abs() < 1e-9, "{share}");
    // A busy loop on one of the two CPUs the whole time: 1000 ticks more.
    let hog = ticks(12_000, 5_050, 950);
    let share = others_cpu_share(before, hog, 100).unwrap();
    assert!((share - 0.525).abs() < 1e-9, "{share}");
    assert_eq!(others_cpu_share(before, before, 0), None, "no time passed");
    // Own time accounted more finely than the CPU lines never makes others negative.
    assert_eq!(
        others_cpu_share(before, ticks(10_100, 3_010, 80), 0),
        Some(0.0)
    );
}

#[test]
fn kernel_threads_are_matched_by_pid_and_start() {
    let before: Kthreads = [(10, (5, 100)), (11, (6, 50)), (12, (7, 1000))].into();
    // 10 used 20; 11 was replaced by a new thread of the same pid (30 ticks); 12 exited;
    // 13 is new (4 ticks).
    let after: Kthreads = [(10, (5, 120)), (11, (90, 30)), (13, (95, 4))].into();
    assert_eq!(kthread_delta(&before, &after), 54);
}

#[test]
fn the_verdict_names_each_reason_and_a_quiet_trial_has_none() {
    let mut quiet = Disturbance {
        others_cpu_share: Some(0.04),
        others_device_bytes: Some(2 << 20),
        others_device_share: Some(0.9),
        ..Default::default()
    };
    judge(&mut quiet);
    assert!(!quiet.busy, "{quiet:?}");
    assert!(quiet.reasons.is_empty());
    assert_eq!(quiet.describe(), "");
    let mut cpu = Disturbance {
        others_cpu_share: Some(0.48),
        ..Default::default()
    };
    judge(&mut cpu);
    assert_eq!(cpu.reasons, ["cpu"]);
    assert_eq!(cpu.describe(), "others used 48% of the CPUs");
    let mut all = Disturbance {
        other_runs: vec![LiveRun {
            run_id: "20261125-1200-abcd".into(),
            pid: 77,
            image_dir: "/tmp/other".into(),
        }],
        others_cpu_share: Some(0.3),
        others_device_bytes: Some(64_000_000),
        others_device_share: Some(0.5),
        ..Default::default()
    };
    judge(&mut all);
    assert!(all.busy);
    assert_eq!(all.reasons, ["other-run", "cpu", "device"]);
    assert_eq!(
        all.describe(),
        "another fsarena run: run 20261125-1200-abcd (pid 77, image dir /tmp/other); \
         others used 30% of the CPUs; others moved 64.0 MB on the device (50% of its traffic)"
    );
}

#[test]
fn device_share_is_what_the_loop_device_did_not_move() {
    assert_eq!(others_device(0, 0), None);
    assert_eq!(others_device(100, 100), Some((0, 0.0)));
    assert_eq!(others_device(100, 25), Some((75, 0.75)));
    // Loop reads served by the host's page cache: the device moved less than the loop.
    assert_eq!(others_device(40, 100), Some((0, 0.0)));
}

#[test]
fn only_loop_targets_check_the_device() {
    let why = |kind| device_pair(kind, None).unwrap_err();
    assert!(why("tmpfs").contains("tmpfs has no device"));
    assert!(why("dir").contains("directory"));
    assert!(why("device").contains("only a loop image"));
    assert!(why("loop").contains("no counters"));
}

#[test]
fn a_busy_trial_marks_its_phases_and_the_report_lines_say_why() {
    let phase = |name: &str| crate::result::PhaseResult {
        name: name.into(),
        ..Default::default()
    };
    let mut trial = crate::result::Trial {
        target: "ext4".into(),
        workload: "smallfiles".into(),
        label: "smallfiles".into(),
        params: Default::default(),
        rep: 2,
        status: "ok".into(),
        error: None,
        provision: Default::default(),
        phases: vec![phase("create"), phase("delete")],
        peak_rss_bytes: 0,
        log: None,
        elapsed_s: None,
        ranks: Vec::new(),
        disturbance: None,
        engine: None,
    };
    mark(&mut trial);
    assert!(
        trial.phases.iter().all(|p| p.flags.is_empty()),
        "not watched"
    );
    let mut d = Disturbance {
        others_cpu_share: Some(0.6),
        ..Default::default()
    };
    judge(&mut d);
    trial.disturbance = Some(d);
    mark(&mut trial);
    mark(&mut trial);
    assert!(trial.phases.iter().all(|p| p.flags == ["busy"]));
    let run = crate::report::fixture_with(vec![trial]);
    assert_eq!(
        busy_lines(&run),
        ["ext4 smallfiles rep 2: others used 60% of the CPUs"]
    );
}

fn private_dir(mode: u32) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    d
}

#[test]
fn a_registered_run_is_live_until_dropped_and_a_dead_entry_goes() {
    let me = crate::probe::sys::euid();
    let dir = private_dir(0o755);
    if trusted_dir(dir.path(), me).is_err() {
        println!("SKIP: the temporary directory's parents are not trusted here");
        return;
    }
    let reg = publish(dir.path(), "run-a", Path::new("/tmp/img-a")).unwrap();
    let live = live_in(dir.path(), me);
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].run_id, "run-a");
    assert_eq!(live[0].pid, std::process::id());
    assert_eq!(live[0].image_dir, "/tmp/img-a");
    drop(reg);
    assert!(live_in(dir.path(), me).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // An entry nobody holds (its process was killed) is dead and removed.
    std::fs::write(
        dir.path().join("run-b.1.lock"),
        r#"{"run_id":"run-b","pid":1,"image_dir":"/x"}"#,
    )
    .unwrap();
    assert!(live_in(dir.path(), me).is_empty());
    assert!(!dir.path().join("run-b.1.lock").exists());
}

#[test]
fn a_registry_writable_by_others_or_owned_by_another_is_not_believed() {
    let me = crate::probe::sys::euid();
    let open = private_dir(0o777);
    assert!(trusted_dir(open.path(), me).is_err());
    let dir = private_dir(0o755);
    assert!(trusted_dir(dir.path(), me + 1)
        .unwrap_err()
        .contains("owned by uid"));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    assert!(trusted_dir(&link, me).is_err());
}

#[test]
fn a_dead_entry_in_another_users_registry_is_read_but_never_removed() {
    use std::os::unix::fs::chown;
    if crate::probe::sys::euid() != 0 {
        println!("SKIP: needs root to make a registry owned by another user");
        return;
    }
    let dir = private_dir(0o755);
    let entry = dir.path().join("run-c.1.lock");
    std::fs::write(&entry, r#"{"run_id":"run-c","pid":1,"image_dir":"/x"}"#).unwrap();
    chown(&entry, Some(65534), Some(65534)).unwrap();
    chown(dir.path(), Some(65534), Some(65534)).unwrap();
    assert!(live_in(dir.path(), 65534).is_empty(), "dead");
    assert!(entry.exists(), "only its user removes it");
    // Held by a process (this one, through a lock on it): live, and read.
    let f = std::fs::File::open(&entry).unwrap();
    // SAFETY: flock(2) on a descriptor owned here.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) },
        0
    );
    let live = live_in(dir.path(), 65534);
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].run_id, "run-c");
    // Not believed under another owner.
    assert!(live_in(dir.path(), 0).is_empty());
}
