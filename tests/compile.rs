//! End-to-end runs of the `compile` workload (compilebench and kernel-build modes) on tmpfs
//! and an ext4 loop image, at small scale.

mod common;

use common::phase;

fn check(fs: &str, size: &str) {
    let test = format!("compile_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available_or_tmpfs(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let (v, table) = common::run_json(
        &[
            "compile:scale=0.005,initial_dirs=3,runs=20",
            "compile:mode=kernel-build,scale=0.01",
            "--fs",
            fs,
            "--size",
            size,
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(v["status"], "complete");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let cb = &trials[0];
    assert_eq!(cb["status"], "ok", "{cb}");
    let initial = phase(cb, "initial_create");
    assert!(initial["bytes_written"].as_u64().unwrap() > 3 * 1_000_000);
    let runs: f64 = cb["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["extra"]["runs"].as_f64())
        .sum();
    assert_eq!(runs, 20.0);
    assert!(table.contains("compilebench_mb_per_s"), "{table}");
    let kb = &trials[1];
    assert_eq!(kb["status"], "ok", "{kb}");
    let copy = phase(kb, "copy");
    let build = phase(kb, "build");
    assert_eq!(build["bytes_read"], copy["bytes_written"]);
    assert!(phase(kb, "delete")["ops"].as_u64().unwrap() > 200);
    common::assert_clean(dir.path());
}

#[test]
fn compile_on_tmpfs() {
    check("tmpfs", "256MiB");
}

#[test]
fn compile_on_ext4() {
    check("ext4", "512MiB");
}

/// A real tree — the system's `/usr/include` (absolute and outward symlinks) and a small
/// tree of the same shapes with a hard link — copies on ext4, xfs and btrfs under
/// `mode=kernel-build`: every entry made (the delete phase removes them all), symlinks as
/// they are, every file's bytes written (a hard link copied as a file, like `cp -r`).
#[test]
fn real_include_tree_copies_on_ext4_xfs_btrfs() {
    let test = "real_include_tree_copies_on_ext4_xfs_btrfs";
    if common::skip_without_loop(test) {
        return;
    }
    let fs: Vec<&str> = ["ext4", "xfs", "btrfs"]
        .into_iter()
        .filter(|fs| common::fs_available(test, fs))
        .collect();
    if fs.is_empty() {
        return;
    }
    let dir = common::image_dir();
    let shapes = common::symlink_shapes(dir.path());
    let mut sources = vec![shapes];
    // The machine's own include tree, unless packages (boost, …) made it too large for
    // 1 GiB images; then its Linux headers, still a tree nobody here wrote.
    let include = ["/usr/include", "/usr/include/linux"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_dir() && common::tally(p).bytes_all < 150 << 20);
    match include {
        Some(tree) => sources.push(tree),
        None => eprintln!("{test}: no include tree under 150 MB here; the small tree only"),
    }
    let specs: Vec<String> = sources
        .iter()
        .map(|s| format!("compile:mode=kernel-build,source={}", s.display()))
        .collect();
    let fs_list = fs.join(",");
    let mut args: Vec<&str> = specs.iter().map(String::as_str).collect();
    args.extend(["--fs", &fs_list, "--size", "1GiB", "--reps", "1", "--quiet"]);
    let (v, _) = common::run_json(&args, dir.path());
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), fs.len() * sources.len());
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        let src = t["params"]["source"].as_str().unwrap();
        let want = common::tally(std::path::Path::new(src));
        let what = format!("{src} on {}", t["target"]);
        assert_eq!(phase(t, "copy")["bytes_written"], want.bytes_all, "{what}");
        assert_eq!(phase(t, "delete")["ops"], want.entries, "{what}");
    }
    common::assert_clean(dir.path());
}
