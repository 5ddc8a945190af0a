//! Plan files: expansion, naming, precedence and located errors.

use super::build::{build, Overrides};
use super::file::parse;
use super::Plan;
use crate::provision::TargetSpec;

fn plan(text: &str, o: &Overrides) -> anyhow::Result<Plan> {
    Ok(build(&parse("t.toml", text)?, o)?.plan)
}

fn names(p: &Plan) -> Vec<String> {
    p.targets.iter().map(|t| t.name.clone()).collect()
}

const MATRIX: &str = r#"
[defaults]
size = "256MiB"
reps = 2

[[target]]
fs = "tmpfs"

[[matrix]]
fs = ["ext3", "ext4"]
mount = ["", "data=writeback", "data=journal"]

[[workload]]
kind = "postmark"
number = 100
transactions = 200
"#;

#[test]
fn a_matrix_expands_fs_outermost_with_readable_names() {
    let p = plan(MATRIX, &Overrides::default()).unwrap();
    assert_eq!(
        names(&p),
        [
            "tmpfs",
            "ext3",
            "ext3+data=writeback",
            "ext3+data=journal",
            "ext4",
            "ext4+data=writeback",
            "ext4+data=journal"
        ]
    );
    match &p.targets[2].spec {
        TargetSpec::Loop {
            fs,
            mount_opts,
            size_bytes,
            mkfs_opts,
        } => {
            assert_eq!(fs.name(), "ext3");
            assert_eq!(mount_opts, "data=writeback");
            assert_eq!(*size_bytes, 256 << 20);
            assert!(mkfs_opts.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.policy.reps, 2);
    assert_eq!(p.workloads.len(), 1);
    assert_eq!(p.workloads[0].params.count("number"), Some(100));
}

#[test]
fn mkfs_and_size_axes_name_their_targets() {
    let p = plan(
        r#"
[[matrix]]
fs = "xfs"
mkfs = ["", "-d agcount=120"]
size = ["1GiB", "2GiB"]
[[workload]]
kind = "bonnie"
"#,
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(
        names(&p),
        [
            "xfs+1GiB",
            "xfs+2GiB",
            "xfs+-d_agcount=120+1GiB",
            "xfs+-d_agcount=120+2GiB"
        ]
    );
    let TargetSpec::Loop { mkfs_opts, .. } = &p.targets[2].spec else {
        panic!()
    };
    assert_eq!(mkfs_opts, &["-d", "agcount=120"]);
}

#[test]
fn command_line_beats_plan_defaults_which_beat_fsarena_defaults() {
    let text = r#"
[defaults]
size = "512MiB"
reps = 5
cache = "warm"
seed = 7
[[target]]
fs = "ext4"
[[target]]
name = "big"
fs = "ext4"
size = "1GiB"
[[workload]]
kind = "bonnie"
size = "128MiB"
"#;
    let p = plan(text, &Overrides::default()).unwrap();
    assert_eq!((p.policy.reps, p.policy.seed), (5, 7));
    assert_eq!(p.policy.cache.to_string(), "warm");
    assert_eq!(p.policy.sync.to_string(), "end", "fsarena's default");
    let o = Overrides {
        reps: Some(1),
        size: Some("256MiB".into()),
        cache: Some("keep".into()),
        ..Default::default()
    };
    let p = plan(text, &o).unwrap();
    assert_eq!((p.policy.reps, p.policy.seed), (1, 7));
    assert_eq!(p.policy.cache.to_string(), "keep");
    let sizes: Vec<u64> = p
        .targets
        .iter()
        .map(|t| match t.spec {
            TargetSpec::Loop { size_bytes, .. } => size_bytes,
            _ => 0,
        })
        .collect();
    // --size replaces [defaults] size; a target's own size is more specific and stays.
    assert_eq!(sizes, [256 << 20, 1 << 30]);
    let bad = Overrides {
        reps: Some(0),
        ..Default::default()
    };
    let e = format!("{:#}", plan(text, &bad).err().unwrap());
    assert!(e.starts_with("--reps:"), "{e}");
}

#[test]
fn a_suite_entry_brings_the_suites_workloads() {
    let p = plan(
        "[[target]]\nfs = \"tmpfs\"\n[[workload]]\nsuite = \"classic\"\n",
        &Overrides::default(),
    )
    .unwrap();
    let texts: Vec<&str> = p.workloads.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(texts, crate::suite::find("classic").unwrap().workloads);
}

#[test]
fn the_hash_ignores_spelling_and_sees_what_changes_results() {
    let o = Overrides::default();
    let a = plan(MATRIX, &o).unwrap();
    let respelled = MATRIX
        .replace("\"256MiB\"", "\"262144KiB\"")
        .replace("number = 100", "number = 1_00");
    let b = plan(&format!("# a comment\n{respelled}"), &o).unwrap();
    assert_eq!(a.canonical(), b.canonical());
    assert_eq!(a.hash(), b.hash());
    let c = plan(&MATRIX.replace("data=journal", "data=ordered"), &o).unwrap();
    assert_ne!(a.hash(), c.hash());
    let d = plan(
        MATRIX,
        &Overrides {
            reps: Some(3),
            ..Default::default()
        },
    )
    .unwrap();
    assert_ne!(a.hash(), d.hash());
    // A workload the plan has twice is labelled with its spec as typed, and its trials are
    // stored under that label: a plan spelling it otherwise cannot resume them (it would
    // find none of them done and store every one again under the new label).
    let twice = format!(
        "{MATRIX}[[workload]]\nkind = \"bonnie\"\nsize = \"64MiB\"\n\
         [[workload]]\nkind = \"bonnie\"\nsize = \"128MiB\"\n"
    );
    let e = plan(&twice, &o).unwrap();
    let f = plan(&twice.replace("\"64MiB\"", "\"65536KiB\""), &o).unwrap();
    assert_eq!(e.label(&e.workloads[1]), "bonnie:size=64MiB");
    assert_eq!(f.label(&f.workloads[1]), "bonnie:size=65536KiB");
    assert_eq!(
        e.workloads[1].params.to_text_map(),
        f.workloads[1].params.to_text_map()
    );
    assert_ne!(e.hash(), f.hash());
}

fn err_of(text: &str, o: &Overrides) -> String {
    format!("{:#}", plan(text, o).err().unwrap())
}

#[test]
fn a_device_target_needs_a_filesystem_other_than_tmpfs() {
    let e = err_of(
        "[[target]]\ndevice = \"/dev/sdz\"\n[[workload]]\nkind = \"bonnie\"\n",
        &Overrides::default(),
    );
    assert!(
        e.starts_with("t.toml:1:1: a device target needs the filesystem"),
        "{e}"
    );
    let e = err_of(
        "[[target]]\ndevice = \"/dev/sdz\"\nfs = \"tmpfs\"\n[[workload]]\nkind = \"bonnie\"\n",
        &Overrides::default(),
    );
    assert!(
        e.starts_with("t.toml:2:10: a device target needs a filesystem"),
        "{e}"
    );
    let e = err_of(
        "[[target]]\ndevice = \"/dev/sdz\"\ndir = \"/tmp\"\n[[workload]]\nkind = \"bonnie\"\n",
        &Overrides::default(),
    );
    assert!(e.contains("neither fs nor device"), "{e}");
}

#[test]
fn an_unconfirmed_device_target_is_a_located_host_problem() {
    let text = "[[target]]\ndevice = \"/dev/sdz\"\nfs = \"ext4\"\nmkfs = \"-b 4096\"\n\
                [[workload]]\nkind = \"bonnie\"\n";
    let built = build(&parse("t.toml", text).unwrap(), &Overrides::default()).unwrap();
    assert_eq!(names(&built.plan), ["ext4@sdz"]);
    match &built.plan.targets[0].spec {
        TargetSpec::Device {
            fs,
            mkfs_opts,
            guard,
            ..
        } => {
            assert_eq!(fs.name(), "ext4");
            assert_eq!(mkfs_opts, &["-b", "4096"]);
            assert_eq!(guard.rdev, 0, "a refused device's guard matches no device");
        }
        other => panic!("{other:?}"),
    }
    let problems: Vec<String> = built
        .host_problems
        .iter()
        .map(|e| format!("{e:#}"))
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("t.toml:2:10: device /dev/sdz: refused")),
        "{problems:?}"
    );
}

#[test]
fn consent_must_name_a_device_target_of_the_plan() {
    let text =
        "[[target]]\ndevice = \"/dev/sdz\"\nfs = \"ext4\"\n[[workload]]\nkind = \"bonnie\"\n";
    let o = Overrides {
        destroy_data_on: vec!["/dev/sdy".into()],
        ..Default::default()
    };
    let e = err_of(text, &o);
    assert!(
        e.contains("--destroy-data-on /dev/sdy: no device target"),
        "{e}"
    );
    let o = Overrides {
        force: true,
        ..Default::default()
    };
    let e = err_of(
        "[[target]]\nfs = \"ext4\"\n[[workload]]\nkind = \"bonnie\"\n",
        &o,
    );
    assert!(e.contains("go with device targets"), "{e}");
}

#[test]
fn a_size_below_the_filesystems_minimum_is_refused_where_it_is_written() {
    let e = err_of(
        "[[target]]\nfs = \"nilfs2\"\nsize = \"64MiB\"\n[[workload]]\nkind = \"bonnie\"\n",
        &Overrides::default(),
    );
    assert!(
        e.starts_with("t.toml:3:8: mkfs.nilfs2 needs at least"),
        "{e}"
    );
    let e = err_of(
        "[defaults]\nsize = \"64MiB\"\n[[target]]\nfs = \"nilfs2\"\n[[workload]]\nkind = \"bonnie\"\n",
        &Overrides::default(),
    );
    assert!(
        e.starts_with("t.toml:4:6: mkfs.nilfs2 needs at least"),
        "{e}"
    );
}

#[test]
fn filesystems_this_machine_cannot_make_are_left_out_with_the_package() {
    use crate::provision::fs::Support;
    let support = |name: &str| match name {
        "xfs" => Support::No("mkfs.xfs missing: apt-get install xfsprogs".into()),
        "btrfs" => Support::No("mkfs.btrfs missing: apt-get install btrfs-progs".into()),
        _ => Support::Yes,
    };
    let (can, cannot) = super::makeable_with(&["ext4", "xfs", "btrfs", "tmpfs"], &support);
    assert_eq!(can, ["ext4", "tmpfs"]);
    assert_eq!(
        cannot,
        [
            "xfs: mkfs.xfs missing: apt-get install xfsprogs",
            "btrfs: mkfs.btrfs missing: apt-get install btrfs-progs"
        ]
    );
    let line = crate::result::left_out_line(&cannot).unwrap();
    assert_eq!(
        line.lines().collect::<Vec<_>>(),
        [
            "left out (`fsarena setup` installs what is missing):",
            "  xfs: mkfs.xfs missing: apt-get install xfsprogs",
            "  btrfs: mkfs.btrfs missing: apt-get install btrfs-progs"
        ]
    );
    assert!(line.contains("fsarena setup") && line.contains("apt-get install btrfs-progs"));
    assert_eq!(crate::result::left_out_line(&[]), None);
}

/// Issue 31 item 6: `plan check /dev/zero` read forever and a FIFO blocked in open; a plan
/// must be a regular file of at most 1 MiB.
#[test]
fn a_plan_file_is_a_regular_file_of_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "#".repeat((1 << 20) + 1)).unwrap();
    for (path, why) in [
        (std::path::Path::new("/dev/zero"), "not a regular file"),
        (std::path::Path::new("/dev/urandom"), "not a regular file"),
        (fifo.as_path(), "not a regular file"),
        (dir.path(), "not a regular file"),
        (big.as_path(), "larger than 1 MiB"),
    ] {
        let e = super::file::load(path).err().unwrap();
        assert_eq!(crate::error::exit_code(&e), 2, "{}", path.display());
        let msg = e.to_string();
        assert!(msg.contains(why), "{}: {msg}", path.display());
    }
}

/// Issue 31 item 7: three 100-item axes (a million targets) ran `plan check` past 300 s
/// at 880 MB; the product is now refused before anything is expanded, and the check of
/// unique names is linear (1,000 targets with one duplicate at the end).
#[test]
fn a_matrix_larger_than_the_target_cap_is_refused_before_expanding() {
    let axis = |n: usize, f: &dyn Fn(usize) -> String| {
        (0..n)
            .map(|i| format!("\"{}\"", f(i)))
            .collect::<Vec<_>>()
            .join(",")
    };
    let text = format!(
        "[[matrix]]\nfs = [{}]\nmkfs = [{}]\nmount = [{}]\n[[workload]]\nkind = \"bonnie\"\n",
        axis(100, &|_| "ext4".into()),
        axis(100, &|i| format!("-N {}", 1000 + i)),
        axis(100, &|i| format!("commit={}", i + 1)),
    );
    let t0 = std::time::Instant::now();
    let e = parse("t.toml", &text).err().unwrap();
    assert!(t0.elapsed().as_secs() < 5, "{:?}", t0.elapsed());
    assert_eq!(crate::error::exit_code(&e), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("1000000 targets") && msg.contains("at most 1000"),
        "{msg}"
    );
    // A matrix after [[target]]s counts them too.
    let text = format!(
        "[[target]]\nfs = \"ext4\"\nname = \"a\"\n[[matrix]]\nfs = [\"ext4\"]\nmount = [{}]\n\
         [[workload]]\nkind = \"bonnie\"\n",
        axis(1000, &|i| format!("commit={}", i + 1)),
    );
    let msg = parse("t.toml", &text).err().unwrap().to_string();
    assert!(msg.contains("besides the 1 listed before it"), "{msg}");
    // 1,000 targets are allowed; a duplicate name among them is found.
    let text = format!(
        "[[matrix]]\nfs = [\"ext4\"]\nmount = [{}]\n[[target]]\nfs = \"ext4\"\n\
         name = \"ext4+commit=1\"\n[[workload]]\nkind = \"bonnie\"\n",
        axis(999, &|i| format!("commit={}", i + 1)),
    );
    let msg = err_of(&text, &Overrides::default());
    assert!(
        msg.contains("a second target named 'ext4+commit=1'"),
        "{msg}"
    );
}

/// Issue 31 items 9 and 10 in plan files: each of these was accepted.
#[test]
fn plan_values_that_cannot_work_are_refused() {
    let o = Overrides::default();
    let t = "[[target]]\nfs = \"ext4\"\nsize = \"256MiB\"\n";
    let cases = [
        // An invalid [defaults] size that no target uses.
        (
            format!("[defaults]\nsize = \"12XB\"\n{t}[[workload]]\nkind = \"postmark\"\n"),
            "12XB",
        ),
        (
            format!("[defaults]\nsize = \"1MiB\"\n{t}[[workload]]\nkind = \"postmark\"\n"),
            "at least 64MiB",
        ),
        // Floats and lists where a count is expected.
        (
            format!("{t}[[workload]]\nkind = \"postmark\"\nnumber = 5.0\n"),
            "'5.0' is not a whole number",
        ),
        (
            format!("{t}[[workload]]\nkind = \"postmark\"\nnumber = 1e3\n"),
            "'1000.0' is not a whole number",
        ),
        (
            format!("{t}[[workload]]\nkind = \"postmark\"\nnumber = [5]\n"),
            "takes one value, not a list",
        ),
        (
            format!("{t}[[workload]]\nkind = \"job\"\nruntime = 1e300\n"),
            "30 days",
        ),
        (
            format!("{t}[[workload]]\nkind = \"job\"\nruntime = nan\n"),
            "is not a time: give seconds",
        ),
        // NUL in a text parameter.
        (
            format!("{t}[[workload]]\nkind = \"command\"\nrun = \"true\\u0000\"\n"),
            "NUL",
        ),
        (
            "[[target]]\nfs = \"ext4\"\nmkfs = \"-L x\\u0000\"\n[[workload]]\nkind = \"postmark\"\n"
                .to_string(),
            "NUL",
        ),
        (
            "[[matrix]]\nfs = [\"ext4\"]\nmount = [\"noatime\\u0000\"]\n[[workload]]\nkind = \"postmark\"\n"
                .to_string(),
            "NUL",
        ),
        // Repetitions that could never finish.
        (
            format!("[defaults]\nreps = 4294967295\n{t}[[workload]]\nkind = \"postmark\"\n"),
            "from 1 to 1000",
        ),
        // A tmpfs size in its mount options would override the size given.
        (
            "[[target]]\nfs = \"tmpfs\"\nmount = \"size=1T\"\n[[workload]]\nkind = \"postmark\"\n"
                .to_string(),
            "override the size",
        ),
        // A workload's data larger than the whole target: one file, or all instances'
        // files together.
        (
            format!("{t}[[workload]]\nkind = \"bonnie\"\nsize = \"128MiB\"\nprocs = 4\n"),
            "512MiB of data is larger than the whole",
        ),
        (
            format!("{t}[[workload]]\nkind = \"job\"\nsize = \"64MiB\"\nnumjobs = 8\n"),
            "512MiB of data is larger than the whole",
        ),
        (
            format!("{t}[[workload]]\nkind = \"bonnie\"\nsize = \"1GiB\"\n"),
            "larger than the whole",
        ),
    ];
    for (text, needle) in &cases {
        let e = match parse("t.toml", text).and_then(|f| build(&f, &o)) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e,
        };
        assert_eq!(crate::error::exit_code(&e), 2, "{text}");
        let msg = format!("{e:#}");
        assert!(msg.contains(needle), "{text}\n→ {msg}");
    }
    // The same values as whole numbers, a float where a float is expected and a list where
    // a list is expected are fine.
    for ok in [
        format!("{t}[[workload]]\nkind = \"postmark\"\nnumber = 5\n"),
        format!("{t}[[workload]]\nkind = \"job\"\nruntime = 1.5\n"),
        format!("{t}[[workload]]\nkind = \"job\"\nruntime = 2\n"),
    ] {
        if let Err(e) = plan(&ok, &o) {
            panic!("{ok}\n→ {e:#}");
        }
    }
}

proptest::proptest! {
    /// Any plan text ends in a plan or an error, never a panic; lines of a valid plan with
    /// a value replaced exercise the checks past the TOML parser.
    #[test]
    fn plan_texts_never_panic(
        any in "\\PC{0,200}",
        key in "(size|reps|seed|fs|mkfs|mount|number|runtime|files|name|dir)",
        value in "(-?[0-9]{1,22}(\\.[0-9]{0,3})?(e[0-9]{1,3})?|\"[^\"\\\\]{0,30}\"|\\[[0-9, ]{0,12}\\]|nan|inf|true)",
    ) {
        let _ = parse("t.toml", &any).and_then(|f| build(&f, &Overrides::default()));
        let text = format!(
            "[defaults]\nreps = 1\n[[target]]\nfs = \"tmpfs\"\n{key} = {value}\n\
             [[workload]]\nkind = \"postmark\"\n{key} = {value}\n"
        );
        let _ = parse("t.toml", &text).and_then(|f| build(&f, &Overrides::default()));
    }
}

/// `plan check` at 80 columns: a target with long mkfs and mount options, a name wider
/// than its column and a workload with many parameters printed 100–170-column lines.
#[test]
fn plan_check_fits_80_columns_with_long_options() {
    let text = r#"
[defaults]
size = "8GiB"

[[target]]
name = "ext4-with-a-rather-long-name"
fs = "ext4"
mkfs = "-O dir_index,extent,huge_file,flex_bg,metadata_csum,64bit -b 4096 -I 256"
mount = "noatime,nodiratime,data=writeback,barrier=0,commit=60,errors=remount-ro"

[[target]]
name = "t"
fs = "tmpfs"

[[workload]]
kind = "postmark"
number = 5000
"#;
    let p = plan(text, &Overrides::default()).unwrap();
    let out = p.describe(80);
    for line in out.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}\n{out}",
            line.chars().count()
        );
    }
    // Each part on its own line under the name, the options broken between words or after
    // a comma, nothing lost.
    assert!(
        out.contains("\n  ext4-with-a-rather-long-name\n       ext4 on a 8GiB loop image\n       mkfs: mkfs.ext4 "),
        "{out}"
    );
    assert!(
        out.contains("\n  t    tmpfs of 8GiB\n       mount: defaults\n"),
        "{out}"
    );
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.replace(", ", ",").contains(
            "mount: noatime,nodiratime,data=writeback,barrier=0,commit=60,errors=remount-ro"
        ),
        "{out}"
    );
    assert!(
        flat.contains("-O dir_index,extent,huge_file,flex_bg,metadata_csum,64bit -b 4096 -I 256"),
        "{out}"
    );
    assert!(out.contains("\n  postmark       bias_create=5 "), "{out}");
    assert!(
        out.contains("\n                 "),
        "params continue under the first: {out}"
    );
    // Wide enough: one line per target, as before.
    let wide = p.describe(400);
    let t = format!("\n  {:<28} tmpfs of 8GiB; mount: defaults\n", "t");
    assert!(wide.contains(&t), "{wide}");
}

/// Two guest kernels installed under /boot (with their modules), or `None` after a SKIP
/// line naming `test`.
fn two_kernels(test: &str) -> Option<(String, String)> {
    match crate::guest::kernel::installed().as_slice() {
        [a, b, ..] => Some((a.clone(), b.clone())),
        _ => {
            println!("SKIP {test}: fewer than two kernels with modules under /boot");
            None
        }
    }
}

#[test]
fn targets_may_name_their_guest_kernels_and_go_by_name_at_release() {
    let test = "targets_may_name_their_guest_kernels_and_go_by_name_at_release";
    let Some((a, b)) = two_kernels(test) else {
        return;
    };
    let text = format!(
        "[[target]]\nfs = \"tmpfs\"\n\
         [[target]]\nfs = \"tmpfs\"\nkernel = \"{a}\"\n\
         [[target]]\nfs = \"tmpfs\"\nkernel = \"/boot/vmlinuz-{b}\"\n\
         [[workload]]\nkind = \"postmark\"\n"
    );
    let p = plan(&text, &Overrides::default()).unwrap();
    // The same name three times: apart, by their kernels.
    assert_eq!(names(&p), ["tmpfs", "tmpfs", "tmpfs"]);
    let shown: Vec<String> = p.targets.iter().map(|t| t.report_name()).collect();
    let short = crate::guest::kernel::short_release;
    assert_eq!(
        shown,
        [
            "tmpfs".to_string(),
            format!("tmpfs@{}", short(&a)),
            format!("tmpfs@{}", short(&b))
        ]
    );
    assert!(p.targets_name_kernels());
    assert_eq!(p.targets[2].kernel.as_ref().unwrap().release, b);
    let described = p.describe(400);
    assert!(
        described.contains(&format!("tmpfs@{}", short(&a))),
        "{described}"
    );
    assert!(
        described.contains("in a guest booted from /boot/vmlinuz-"),
        "{described}"
    );
    // The kernel is part of what the plan is.
    let same_host = plan(
        "[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"postmark\"\n",
        &Overrides::default(),
    )
    .unwrap();
    assert!(!same_host.targets_name_kernels());
    assert!(!same_host.canonical().contains("kernel"));
    assert!(p.canonical().contains(&format!("\"kernel\":\"{a}\"")));
    // In the guest the host chose the targets: kernel keys are not read there.
    let inside = Overrides {
        in_guest: true,
        guest_targets: vec![1],
        ..Default::default()
    };
    let g = plan(&text, &inside).unwrap();
    assert!(!g.targets_name_kernels());
    assert_eq!(names(&g), ["tmpfs"]);
    // This guest's targets only: the others are not even checked (a filesystem another
    // guest's kernel has may be missing from this one).
    let text = text.replace(
        "[[target]]\nfs = \"tmpfs\"\nkernel",
        "[[target]]\nfs = \"no-such-fs\"\nkernel",
    );
    let mine = Overrides {
        in_guest: true,
        guest_targets: vec![0],
        ..Default::default()
    };
    assert_eq!(names(&plan(&text, &mine).unwrap()), ["tmpfs"]);
    let beyond = Overrides {
        in_guest: true,
        guest_targets: vec![3],
        ..Default::default()
    };
    let Err(e) = plan(&text, &beyond) else {
        panic!("a target beyond the plan's is accepted");
    };
    assert!(
        format!("{e:#}").contains("has no target 3 (it has 3)"),
        "{e:#}"
    );
}

#[test]
fn a_kernel_is_refused_where_no_guest_can_run_it_or_when_missing() {
    let o = Overrides::default();
    let cases = [
        (
            "[[target]]\ndir = \"/tmp\"\nkernel = \"6.1.0-56-amd64\"\n",
            "t.toml:3:10: 'kernel' does not apply to a dir or device target",
        ),
        (
            "[[target]]\nfs = \"ext4\"\ndevice = \"/dev/null\"\nkernel = \"6.1.0-56-amd64\"\n",
            "'kernel' does not apply to a dir or device target",
        ),
        (
            "[[target]]\nfs = \"tmpfs\"\nkernel = \"0.0.0-none\"\n",
            "t.toml:3:10: kernel 0.0.0-none: cannot read /boot/vmlinuz-0.0.0-none",
        ),
        ("[[target]]\nfs = \"tmpfs\"\nkernel = 6\n", "kernel"),
    ];
    for (targets, needle) in cases {
        let text = format!("{targets}[[workload]]\nkind = \"postmark\"\n");
        let e = match parse("t.toml", &text).and_then(|f| build(&f, &o)) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e,
        };
        assert_eq!(crate::error::exit_code(&e), 2, "{text}");
        let msg = format!("{e:#}");
        assert!(msg.contains(needle), "{text}\n→ {msg}");
    }
}

#[test]
fn two_targets_of_one_name_in_one_kernel_are_still_refused() {
    let Some(a) = crate::guest::kernel::installed().into_iter().next() else {
        println!(
            "SKIP two_targets_of_one_name_in_one_kernel_are_still_refused: no kernel with \
             modules under /boot"
        );
        return;
    };
    let text = format!(
        "[[target]]\nfs = \"tmpfs\"\nkernel = \"{a}\"\n\
         [[target]]\nfs = \"tmpfs\"\nkernel = \"/boot/vmlinuz-{a}\"\n\
         [[workload]]\nkind = \"postmark\"\n"
    );
    let Err(e) = plan(&text, &Overrides::default()) else {
        panic!("accepted:\n{text}");
    };
    let msg = format!("{e:#}");
    let short = crate::guest::kernel::short_release(&a);
    assert!(
        msg.contains(&format!("a second target named 'tmpfs@{short}'")),
        "{msg}"
    );
}

#[test]
fn a_matrix_kernel_axis_makes_one_target_per_kernel_with_the_host_as_empty() {
    let test = "a_matrix_kernel_axis_makes_one_target_per_kernel_with_the_host_as_empty";
    let Some((a, b)) = two_kernels(test) else {
        return;
    };
    let text = format!(
        "[[matrix]]\nfs = [\"tmpfs\"]\nmount = [\"\", \"noatime\"]\n\
         kernel = [\"\", \"{a}\", \"{b}\"]\n\
         [[workload]]\nkind = \"postmark\"\n"
    );
    let p = plan(&text, &Overrides::default()).unwrap();
    let short = crate::guest::kernel::short_release;
    let (sa, sb) = (short(&a), short(&b));
    let shown: Vec<String> = p.targets.iter().map(|t| t.report_name()).collect();
    assert_eq!(
        shown,
        [
            "tmpfs".to_string(),
            format!("tmpfs@{sa}"),
            format!("tmpfs@{sb}"),
            "tmpfs+noatime".to_string(),
            format!("tmpfs+noatime@{sa}"),
            format!("tmpfs+noatime@{sb}"),
        ]
    );
    // A kernel that is not there is refused at its place in the list.
    let bad = "[[matrix]]\nfs = \"tmpfs\"\nkernel = [\"\", \"0.0.0-none\"]\n\
               [[workload]]\nkind = \"postmark\"\n";
    let Err(e) = plan(bad, &Overrides::default()) else {
        panic!("accepted:\n{bad}");
    };
    let msg = format!("{e:#}");
    assert!(
        msg.contains("t.toml:3:15: kernel 0.0.0-none: cannot read"),
        "{msg}"
    );
}

/// The text of `err` with its causes.
fn chain(err: &anyhow::Error) -> String {
    format!("{err:#}")
}

#[test]
fn an_option_string_beyond_the_limit_is_refused_where_it_is_read() {
    use crate::limits::{MAX_KEY_BYTES, MAX_OPTION_BYTES};
    let over = "-O x ".repeat(MAX_OPTION_BYTES / 5 + 1);
    let cases = [
        format!("[[target]]\nfs = \"ext4\"\nmkfs = \"{over}\"\n"),
        format!("[[target]]\nfs = \"ext4\"\nmount = \"{over}\"\n"),
        format!("[[target]]\nname = \"{over}\"\nfs = \"tmpfs\"\n"),
        format!("[[matrix]]\nfs = [\"ext4\"]\nmkfs = [\"\", \"{over}\"]\n"),
        format!("[defaults]\ndata = \"{over}\"\n[[target]]\nfs = \"tmpfs\"\n"),
        format!("[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"smallfiles\"\nsize_mix = \"{over}\"\n"),
        format!("[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"{over}\"\n"),
        format!(
            "[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"smallfiles\"\n{} = 1\n",
            "k".repeat(MAX_KEY_BYTES + 1)
        ),
    ];
    for text in &cases {
        let e = parse(
            "t.toml",
            &format!("{text}\n[[workload]]\nkind = \"smallfiles\"\n"),
        )
        .err()
        .unwrap_or_else(|| panic!("accepted: {}", &text[..60]));
        assert_eq!(crate::error::exit_code(&e), 2, "{}", chain(&e));
        assert!(chain(&e).contains("at most"), "{}", chain(&e));
        assert!(
            chain(&e).len() < 1000,
            "the value is echoed: {}",
            chain(&e).len()
        );
    }
    // At the limit, an option is read (and then judged as an option).
    let at = "x".repeat(MAX_OPTION_BYTES);
    let text = format!("[[target]]\nfs = \"ext4\"\nmount = \"{at}\"\n");
    assert!(parse("t.toml", &text).is_ok());
}

#[test]
fn a_command_line_value_beyond_the_limit_is_refused_before_the_plan_is_made() {
    use clap::Parser;
    let over = "x".repeat(crate::limits::MAX_OPTION_BYTES + 1);
    for flag in ["--mkfs-opt", "--mount-opt", "--net", "--size", "--data"] {
        let argv = [
            "fsarena",
            "run",
            "--dir=/tmp",
            &format!("{flag}={over}"),
            "--",
            "smallfiles",
        ];
        let cli = crate::cli::Cli::try_parse_from(argv).expect("clap takes it");
        let crate::cli::Command::Run(a) = cli.command else {
            panic!("not a run");
        };
        let e = Plan::from_args(&a).err().expect("refused");
        assert_eq!(crate::error::exit_code(&e), 2, "{}", chain(&e));
        assert!(
            chain(&e).contains(flag) && chain(&e).contains("at most"),
            "{}",
            chain(&e)
        );
    }
    let spec = format!("smallfiles:files=1,{over}");
    let cli = crate::cli::Cli::try_parse_from(["fsarena", "run", "--dir=/tmp", "--", &spec])
        .expect("clap takes it");
    let crate::cli::Command::Run(a) = cli.command else {
        panic!("not a run");
    };
    let e = Plan::from_args(&a).err().expect("refused");
    assert!(chain(&e).contains("a workload"), "{}", chain(&e));
}

const AGED: &str = r#"
[defaults]
size = "1GiB"
[[matrix]]
fs = ["ext4", "xfs"]
age = ["fresh", "desktop:fill=60"]
[[target]]
fs = "btrfs"
age = "database"
[[target]]
name = "mine"
fs = "ext4"
age = "web-cache:fill=50,churn=1"
[[workload]]
kind = "postmark"
"#;

#[test]
fn an_age_axis_crosses_targets_with_fresh_and_aged_named_as_age_names_them() {
    let p = plan(AGED, &Overrides::default()).unwrap();
    assert_eq!(
        names(&p),
        ["btrfs+aged", "mine", "ext4", "ext4+aged", "xfs", "xfs+aged"]
    );
    let ages: Vec<Option<String>> = p
        .targets
        .iter()
        .map(|t| t.age.map(|a| a.canonical()))
        .collect();
    assert_eq!(
        ages,
        [
            Some("database:fill=75,churn=2".to_string()),
            Some("web-cache:fill=50,churn=1".to_string()),
            None,
            Some("desktop:fill=60,churn=2".to_string()),
            None,
            Some("desktop:fill=60,churn=2".to_string()),
        ]
    );
    assert!(p.targets.iter().flat_map(|t| t.age).all(|a| a.keep));
    // --age-cache off: every aged target of the plan is aged anew for each trial.
    let off = Overrides {
        age_cache_off: true,
        ..Default::default()
    };
    let q = plan(AGED, &off).unwrap();
    assert!(q.targets.iter().flat_map(|t| t.age).all(|a| !a.keep));
    assert_eq!(p.hash(), q.hash(), "keeping aged images changes no result");
    // Two aged choices: named by profile, or by every parameter when the profile is the
    // same, as `--age` names them; every name stays a valid one.
    let two = |axis: &str| {
        let text =
            format!("[[matrix]]\nfs = \"ext4\"\nage = {axis}\n[[workload]]\nkind = \"postmark\"\n");
        names(&plan(&text, &Overrides::default()).unwrap())
    };
    assert_eq!(
        two(r#"["fresh", "desktop", "database"]"#),
        ["ext4", "ext4+aged-desktop", "ext4+aged-database"]
    );
    let same = two(r#"["desktop", "desktop:fill=50,churn=0.5"]"#);
    assert_eq!(
        same,
        [
            "ext4+aged-desktop-fill=75-churn=2",
            "ext4+aged-desktop-fill=50-churn=0.5"
        ]
    );
    assert!(same.iter().all(|n| super::matrix::valid_name(n)));
}

#[test]
fn plans_differing_only_in_age_have_different_hashes() {
    let o = Overrides::default();
    let fresh = plan(&AGED.replace("\"fresh\", ", ""), &o).unwrap();
    let base = "[[target]]\nfs = \"ext4\"\nsize = \"1GiB\"\n[[workload]]\nkind = \"postmark\"\n";
    let a = plan(base, &o).unwrap();
    let aged = |spec: &str| {
        plan(
            &base.replace("size", &format!("age = \"{spec}\"\nsize")),
            &o,
        )
        .unwrap()
    };
    let b = aged("desktop");
    let c = aged("desktop:fill=60");
    assert_eq!(names(&a), ["ext4"]);
    assert_eq!(names(&b), ["ext4+aged"]);
    assert_ne!(a.hash(), b.hash());
    assert_ne!(b.hash(), c.hash());
    assert_eq!(
        b.hash(),
        aged("desktop:fill=75,churn=2").hash(),
        "the same age spelt out"
    );
    assert_ne!(fresh.hash(), plan(AGED, &o).unwrap().hash());
    let independent = aged("desktop:independent");
    assert_ne!(
        b.hash(),
        independent.hash(),
        "independent aging changes results"
    );
    assert_eq!(names(&independent), ["ext4+aged"]);
}

#[test]
fn independent_aging_is_planned_and_said_with_its_cost() {
    let text = "[[target]]\nfs = \"ext4\"\nage = \"database:fill=50,independent\"\n\
                [[workload]]\nkind = \"postmark\"\n";
    let p = plan(text, &Overrides::default()).unwrap();
    let age = p.targets[0].age.expect("aged");
    assert!(age.independent && age.keep);
    assert_eq!(age.canonical(), "database:fill=50,churn=2,independent");
    let flat = p
        .describe(400)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains(&format!(
            "aged: database:fill=50,churn=2,independent; aged anew for each of the {} \
             repetitions, each from its own seed (each pays the aging's time)",
            p.policy.reps
        )),
        "{flat}"
    );
    // The command line's --age takes the same spec, beside the plain one.
    let both =
        super::age::choices(&["desktop".into(), "desktop:independent".into()], true).unwrap();
    let specs: Vec<String> = both.iter().flatten().map(|a| a.canonical()).collect();
    assert_eq!(
        specs,
        [
            "desktop:fill=75,churn=2",
            "desktop:fill=75,churn=2,independent"
        ]
    );
    let (plain, indep) = (both[0].unwrap(), both[1].unwrap());
    assert_eq!(
        super::age::aged_name("ext4", &plain, &both),
        "ext4+aged-desktop-fill=75-churn=2"
    );
    assert_eq!(
        super::age::aged_name("ext4", &indep, &both),
        "ext4+aged-desktop-fill=75-churn=2-independent"
    );
}

#[test]
fn age_is_refused_where_nothing_can_be_aged() {
    let o = Overrides::default();
    let e = err_of(
        "[[matrix]]\nfs = [\"ext4\", \"tmpfs\"]\nage = [\"fresh\", \"desktop\"]\n\
         [[workload]]\nkind = \"postmark\"\n",
        &o,
    );
    assert!(
        e.starts_with("t.toml:3:17: age does not apply to tmpfs"),
        "{e}"
    );
    let e = err_of(
        "[[matrix]]\nfs = \"ext4\"\nage = [\"fresh\", \"both\"]\n[[workload]]\nkind = \"postmark\"\n",
        &o,
    );
    assert!(e.starts_with("t.toml:3:17: age = \"both\""), "{e}");
    // A served NFS target ages the ext4 it exports.
    let nfs = "[[target]]\nfs = \"nfs\"\nage = \"desktop\"\n[[workload]]\nkind = \"postmark\"\n";
    match plan(nfs, &o) {
        Ok(p) => {
            assert_eq!(p.targets[0].name, "nfs+aged");
            assert!(p.targets[0].age.is_some());
        }
        Err(e) => assert!(!format!("{e:#}").contains("age"), "{e:#}"),
    }
    let e = err_of(
        "[[target]]\nfs = \"ext4\"\ndevice = \"/dev/null\"\nage = \"desktop\"\n\
         [[workload]]\nkind = \"postmark\"\n",
        &o,
    );
    assert!(
        e.starts_with("t.toml:4:7: 'age' does not apply to a dir or device"),
        "{e}"
    );
}
