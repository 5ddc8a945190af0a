//! Each verdict rule of `fsarena doctor` on made-up machines.

use super::facts::{CpuUser, DirSpace, FsFacts};
use super::*;
use crate::probe::dirty::{DirtyLimits, DirtySettings, DirtyState};
use std::path::PathBuf;

const GIB: u64 = 1 << 30;

fn fs(name: &'static str, required: bool) -> FsFacts {
    FsFacts {
        name,
        package: "pkg-progs",
        required,
        mkfs: Support::Yes,
        fsck: Support::Yes,
    }
}

/// A machine where everything is in order.
fn healthy() -> Facts {
    Facts {
        root: true,
        loop_control: true,
        losetup: Ok("/dev/loop0".into()),
        filesystems: vec![fs("ext2", false), fs("ext4", true), fs("xfs", true)],
        tmpfs: Support::Yes,
        drop_caches: Ok(()),
        image_dir: "/var/tmp/fsarena".into(),
        space: Ok(DirSpace {
            measured_at: "/var/tmp/fsarena".into(),
            usable_bytes: 50 * GIB,
            capacity_bytes: 100 * GIB,
            read_only: false,
        }),
        need_bytes: GIB,
        tmpfs_bytes: GIB,
        mem_available_bytes: Some(8 * GIB),
        governors: vec!["performance".into(); 4],
        loadavg_1: Some(0.1),
        cores: 4,
        top_cpu: vec![CpuUser {
            pid: 7,
            comm: "sshd".into(),
            cpu_pct: 2.0,
        }],
        other_runs: Vec::new(),
        swaps: "Filename\tType\tSize\tUsed\tPriority\n".into(),
        dirty: Ok(DirtyState {
            settings: DirtySettings {
                ratio_pct: 20,
                background_ratio_pct: 10,
                bytes: 0,
                background_bytes: 0,
                expire_centisecs: 3000,
                writeback_centisecs: 500,
            },
            limits: DirtyLimits {
                dirtyable_bytes: 10 * GIB,
                limit_bytes: 2 * GIB,
                background_bytes: GIB,
            },
            kernel: None,
        }),
        thp: Some("always [madvise] never".into()),
        kernel: "6.18.0-test".into(),
        guest: crate::doctor::facts::GuestFacts {
            vng: Some("/opt/vng/bin/vng".into()),
            qemu: true,
            busybox: true,
            kernels: vec!["6.1.0-56-amd64".into()],
            kvm: Some(Ok(())),
        },
        engines: vec![
            (
                "pgbench".into(),
                "postgres".into(),
                "postgresql".into(),
                true,
            ),
            (
                "db_bench".into(),
                "db_bench".into(),
                "rocksdb-tools".into(),
                true,
            ),
        ],
    }
}

/// A missing engine is INFO (the default run needs none), naming the package and the
/// command that installs it; all present is OK.
#[test]
fn engines_are_named_with_their_packages() {
    let mut f = healthy();
    assert_eq!(find(&checks(&f), "engines").verdict, Verdict::Ok);
    f.engines[1].3 = false;
    let c = checks(&f);
    let e = find(&c, "engines");
    assert_eq!(e.verdict, Verdict::Info);
    assert!(e.text.contains("rocksdb-tools"), "{}", e.text);
    assert!(e.text.contains("setup --workload db_bench"), "{}", e.text);
    assert!(!e.text.contains("postgresql"), "{}", e.text);
}

fn find<'a>(cs: &'a [Check], name: &str) -> &'a Check {
    cs.iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name} in {cs:?}"))
}

/// The verdict and text of check `name` on `f`.
fn verdict(f: &Facts, name: &str) -> (Verdict, String) {
    let cs = checks(f);
    let c = find(&cs, name);
    (c.verdict, c.text.clone())
}

#[test]
fn guest_runs_say_what_they_lack_and_whether_kvm_works() {
    let mut f = healthy();
    f.guest.kvm = Some(Err("/dev/kvm is there but a KVM guest did not boot".into()));
    let (v, text) = verdict(&f, "guest");
    assert_eq!(v, Verdict::Ok);
    assert!(
        text.contains("6.1.0-56-amd64") && text.contains("emulated (tcg)"),
        "{text}"
    );
    f.guest.vng = None;
    f.guest.kernels.clear();
    let (v, text) = verdict(&f, "guest");
    assert_eq!(v, Verdict::Info);
    assert!(
        text.contains("pip install virtme-ng") && text.contains("linux-image"),
        "{text}"
    );
}

#[test]
fn a_healthy_machine_is_all_ok_and_exits_0() {
    let cs = checks(&healthy());
    assert!(cs.iter().all(|c| c.verdict == Verdict::Ok), "{cs:#?}");
    assert_eq!(exit_code(&cs), 0);
    let text = render(&cs);
    for name in [
        "root",
        "loop",
        "fs ext4",
        "fs tmpfs",
        "drop caches",
        "space",
        "memory",
        "cpu governor",
        "load",
        "swap",
        "vm.dirty",
        "hugepages",
        "kernel",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("OK  ") && l.contains(name)),
            "{name}: {text}"
        );
    }
    assert!(text.contains("ready: `fsarena run` can run here"), "{text}");
    assert!(text.contains("Linux 6.18.0-test") && text.contains("madvise"));
}

#[test]
fn not_root_fails_and_says_what_to_do() {
    let f = Facts {
        root: false,
        ..healthy()
    };
    let (v, text) = verdict(&f, "root");
    assert_eq!(v, Verdict::Fail);
    assert!(text.contains("sudo") && text.contains("--dir"), "{text}");
    let cs = checks(&f);
    assert_eq!(exit_code(&cs), 1);
    assert!(render(&cs).contains("not ready: 1 check failed (root)"));
}

#[test]
fn loop_fails_without_control_device_or_free_device() {
    let f = Facts {
        loop_control: false,
        ..healthy()
    };
    let (v, text) = verdict(&f, "loop");
    assert_eq!(v, Verdict::Fail);
    assert!(text.contains("modprobe loop"), "{text}");
    let f = Facts {
        losetup: Err("losetup: cannot find an unused loop device".into()),
        ..healthy()
    };
    let (v, text) = verdict(&f, "loop");
    assert_eq!(v, Verdict::Fail);
    assert!(text.contains("cannot find an unused loop device"), "{text}");
}

#[test]
fn missing_mkfs_fails_for_default_filesystems_and_warns_for_others() {
    let mut f = healthy();
    f.filesystems[1].mkfs = Support::No("losetup missing: apt-get install mount".into());
    f.filesystems[1].package = "e2fsprogs";
    f.filesystems[0].mkfs = Support::No("the running kernel has no ext2 support".into());
    let (v, text) = verdict(&f, "fs ext4");
    assert_eq!(v, Verdict::Fail);
    // The package of what is missing (mount's losetup), not the filesystem's own.
    assert!(
        text.contains("apt-get install mount")
            && !text.contains("e2fsprogs")
            && text.contains("default run needs it")
            && text.contains("fsarena setup --fs ext4"),
        "{text}"
    );
    let (v, text) = verdict(&f, "fs ext2");
    assert_eq!(
        v,
        Verdict::Info,
        "an optional filesystem is information, not a warning"
    );
    assert!(
        text.contains("modprobe ext2") && text.contains("--fs"),
        "{text}"
    );
    assert_eq!(exit_code(&checks(&f)), 1);
}

#[test]
fn a_filesystem_that_keeps_no_count_of_space_warns() {
    let mut f = healthy();
    f.space = Ok(DirSpace {
        measured_at: "/var/tmp/fsarena".into(),
        usable_bytes: 0,
        capacity_bytes: 0,
        read_only: false,
    });
    let (v, text) = verdict(&f, "space");
    assert_eq!(v, Verdict::Warn, "{text}");
    assert!(text.contains("keeps no count"), "{text}");
}

#[test]
fn summary_counts_warnings_by_name_and_optional_filesystems_as_info() {
    // An idle machine that lacks two filesystems only --fs uses: nothing to fix, no noise.
    let mut f = healthy();
    f.filesystems[0].mkfs = Support::No("the running kernel has no ext2 support".into());
    f.filesystems.push(FsFacts {
        mkfs: Support::No("mkfs.jfs missing: apt-get install jfsutils".into()),
        ..fs("jfs", false)
    });
    let cs = checks(&f);
    assert_eq!(exit_code(&cs), 0);
    assert_eq!(
        summary(&cs),
        "ready: `fsarena run` can run here\nno warnings\n\
         2 INFO: filesystems only --fs uses cannot be made here"
    );
    let text = render(&cs);
    assert!(
        !text.contains("warning(s)") && !text.contains("noise"),
        "{text}"
    );
    // A real warning is counted and named; the INFO line stays what it is.
    f.loadavg_1 = Some(3.0);
    f.filesystems.truncate(3);
    let cs = checks(&f);
    assert_eq!(exit_code(&cs), 0);
    assert_eq!(
        summary(&cs),
        "ready: `fsarena run` can run here\n1 warning (load)\n\
         1 INFO: a filesystem only --fs uses cannot be made here"
    );
    // Failures are named, and warnings are still counted beside them.
    f.root = false;
    f.swaps.push_str("/swap file 1024 0 -2\n");
    let s = summary(&checks(&f));
    assert!(
        s.starts_with(
            "not ready: 1 check failed (root); `fsarena run` needs it fixed\n\
             2 warnings (load, swap)\n"
        ),
        "{s}"
    );
}

#[test]
fn missing_checker_only_warns() {
    let mut f = healthy();
    f.filesystems[2].fsck =
        Support::No("xfs_repair is not installed (Debian package xfsprogs)".into());
    let (v, text) = verdict(&f, "fs xfs");
    assert_eq!(v, Verdict::Warn);
    assert!(
        text.contains("xfs_repair") && text.contains("provision"),
        "{text}"
    );
    assert_eq!(exit_code(&checks(&f)), 0);
}

#[test]
fn no_tmpfs_fails() {
    let f = Facts {
        tmpfs: Support::No("kernel 6.18.0-test has no tmpfs".into()),
        ..healthy()
    };
    assert_eq!(verdict(&f, "fs tmpfs").0, Verdict::Fail);
}

#[test]
fn unwritable_drop_caches_warns() {
    let f = Facts {
        drop_caches: Err("Permission denied (os error 13)".into()),
        ..healthy()
    };
    let (v, text) = verdict(&f, "drop caches");
    assert_eq!(v, Verdict::Warn);
    assert!(
        text.contains("Permission denied") && text.contains("flagged"),
        "{text}"
    );
    assert_eq!(exit_code(&checks(&f)), 0);
}

#[test]
fn space_fails_below_one_image_and_names_where_it_measured() {
    let f = Facts {
        space: Ok(DirSpace {
            measured_at: "/mnt/tiny".into(),
            usable_bytes: 512 << 10,
            capacity_bytes: 100 * GIB,
            read_only: false,
        }),
        image_dir: PathBuf::from("/mnt/tiny/images"),
        ..healthy()
    };
    let (v, text) = verdict(&f, "space");
    assert_eq!(v, Verdict::Fail);
    assert!(
        text.contains("512KiB free") && text.contains("needs 1GiB"),
        "{text}"
    );
    assert!(text.contains("measured on /mnt/tiny") && text.contains("--image-dir"));
    let f = Facts {
        space: Err("statvfs: EIO".into()),
        ..healthy()
    };
    assert_eq!(verdict(&f, "space").0, Verdict::Fail);
    // The margin `run` keeps beside the image counts here too.
    let exactly = |usable_bytes| Facts {
        space: Ok(DirSpace {
            measured_at: "/var/tmp/fsarena".into(),
            usable_bytes,
            capacity_bytes: 100 * GIB,
            read_only: false,
        }),
        ..healthy()
    };
    let margin = crate::plan::room::IMAGE_DIR_MARGIN;
    assert_eq!(verdict(&exactly(GIB + margin), "space").0, Verdict::Ok);
    assert_eq!(
        verdict(&exactly(GIB + margin - 1), "space").0,
        Verdict::Fail
    );
}

#[test]
fn a_read_only_image_dir_is_read_only_not_short_of_space() {
    let f = Facts {
        space: Ok(DirSpace {
            measured_at: "/mnt/cdrom".into(),
            usable_bytes: 16 << 20,
            capacity_bytes: 100 * GIB,
            read_only: true,
        }),
        image_dir: PathBuf::from("/mnt/cdrom/img"),
        ..healthy()
    };
    let (v, text) = verdict(&f, "space");
    assert_eq!(v, Verdict::Fail);
    assert!(text.contains("read-only"), "{text}");
    assert!(!text.contains("16MiB"), "{text}");
}

#[test]
fn little_memory_for_tmpfs_warns() {
    let f = Facts {
        mem_available_bytes: Some(GIB / 2),
        ..healthy()
    };
    let (v, text) = verdict(&f, "memory");
    assert_eq!(v, Verdict::Warn);
    assert!(text.contains("512.0 MiB available"), "{text}");
}

#[test]
fn governor_rules() {
    let f = Facts {
        governors: vec!["performance".into(), "powersave".into(), "powersave".into()],
        ..healthy()
    };
    let (v, text) = verdict(&f, "cpu governor");
    assert_eq!(v, Verdict::Warn);
    assert!(
        text.contains("1× performance, 2× powersave") && text.contains("cpupower"),
        "{text}"
    );
    let f = Facts {
        governors: vec![],
        ..healthy()
    };
    let (v, text) = verdict(&f, "cpu governor");
    assert_eq!(v, Verdict::Ok);
    assert!(text.contains("virtual machine"), "{text}");
}

#[test]
fn load_and_busy_processes_warn() {
    let f = Facts {
        loadavg_1: Some(3.0),
        ..healthy()
    };
    let (v, text) = verdict(&f, "load");
    assert_eq!(v, Verdict::Warn);
    assert!(text.contains("load average 3.00 on 4 cores"), "{text}");
    let f = Facts {
        top_cpu: vec![
            CpuUser {
                pid: 42,
                comm: "rustc".into(),
                cpu_pct: 98.0,
            },
            CpuUser {
                pid: 7,
                comm: "sshd".into(),
                cpu_pct: 2.0,
            },
        ],
        ..healthy()
    };
    let (v, text) = verdict(&f, "load");
    assert_eq!(v, Verdict::Warn);
    assert!(
        text.contains("rustc (pid 42) 98%") && !text.contains("sshd"),
        "{text}"
    );
    let f = Facts {
        loadavg_1: None,
        ..healthy()
    };
    assert_eq!(verdict(&f, "load").0, Verdict::Warn);
}

#[test]
fn swap_warns_with_its_size() {
    let f = Facts {
        swaps: "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 2097148 1024 -2\n".into(),
        ..healthy()
    };
    let (v, text) = verdict(&f, "swap");
    assert_eq!(v, Verdict::Warn);
    assert!(
        text.contains("1 swap device(s), 1.0 MiB used of 2.0 GiB") && text.contains("swapoff"),
        "{text}"
    );
}

#[test]
fn dirty_settings_are_explained() {
    let (v, text) = verdict(&healthy(), "vm.dirty");
    assert_eq!(v, Verdict::Ok);
    assert!(
        text.contains("dirty_ratio 20% / background_ratio 10%")
            && text.contains("above 2.0 GiB")
            && text.contains("expire 30 s"),
        "{text}"
    );
    let mut f = healthy();
    if let Ok(d) = &mut f.dirty {
        d.settings.bytes = 256 << 20;
        d.settings.background_bytes = 64 << 20;
    }
    assert!(verdict(&f, "vm.dirty").1.contains("dirty_bytes 256.0 MiB"));
    let f = Facts {
        dirty: Err("reading /proc/sys/vm/dirty_ratio".into()),
        ..healthy()
    };
    assert_eq!(verdict(&f, "vm.dirty").0, Verdict::Warn);
}

#[test]
fn hugepages_line_only_when_present() {
    let f = Facts {
        thp: None,
        ..healthy()
    };
    assert!(!checks(&f).iter().any(|c| c.name == "hugepages"));
}

#[test]
fn this_machine_gathers_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let f = gather(&dir.path().join("not-yet"));
    assert!(!f.kernel.is_empty() && f.cores >= 1);
    assert_eq!(f.space.as_ref().unwrap().measured_at, dir.path());
    assert!(f.filesystems.iter().any(|x| x.name == "ext4" && x.required));
    assert!(f
        .filesystems
        .iter()
        .any(|x| x.name == "ext2" && !x.required));
    assert!(!checks(&f).is_empty());
}

#[test]
fn another_live_run_is_named_with_its_pid_and_image_dir() {
    let quiet = other_runs(&healthy());
    assert_eq!(quiet.verdict, Verdict::Ok);
    assert_eq!(quiet.text, "no other fsarena run is live on this machine");
    let f = Facts {
        other_runs: vec![crate::probe::disturb::LiveRun {
            run_id: "20261125-151000-beef".into(),
            pid: 4242,
            image_dir: "/tmp/other-img".into(),
        }],
        ..healthy()
    };
    let c = other_runs(&f);
    assert_eq!(c.verdict, Verdict::Warn);
    assert!(
        c.text
            .contains("run 20261125-151000-beef (pid 4242, image dir /tmp/other-img)"),
        "{}",
        c.text
    );
}
