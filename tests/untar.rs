//! End-to-end runs of `untar` on tmpfs and an ext4 loop image: a generated web cache and a
//! user's .tar.gz made with the system tar; .tar.gz, .tar.xz and .tar.zst read with no
//! decompressor binary on the `PATH`.

mod common;

use common::phase;
use std::process::Command;

fn check(fs: &str, size: &str) {
    let test = format!("untar_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available_or_tmpfs(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a/b")).unwrap();
    for i in 0..50 {
        std::fs::write(src.join(format!("a/b/f{i}")), vec![b'x'; 1000 + i]).unwrap();
    }
    std::os::unix::fs::symlink("b/f1", src.join("a/link")).unwrap();
    let tgz = dir.path().join("user.tar.gz");
    let st = Command::new("tar")
        .arg("czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&src)
        .arg("a")
        .status()
        .unwrap();
    assert!(st.success());
    let user = format!("untar:archive={}", tgz.display());
    let (v, table) = common::run_json(
        &[
            "untar:scale=0.004",
            &user,
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
    let gen = &trials[0];
    assert_eq!(gen["status"], "ok", "{gen}");
    assert_eq!(phase(gen, "extract")["extra"]["files"], 1000.0);
    assert!(phase(gen, "extract")["bytes_written"].as_u64().unwrap() > 10_000_000);
    let usr = &trials[1];
    assert_eq!(usr["status"], "ok", "{usr}");
    let ex = phase(usr, "extract");
    assert_eq!(ex["extra"]["files"], 50.0);
    assert_eq!(ex["bytes_written"], 50 * 1000 + (0..50).sum::<u64>());
    assert!(phase(usr, "delete")["ops"].as_u64().unwrap() >= 53);
    assert!(table.contains("extract"), "{table}");
    common::assert_clean(dir.path());
}

#[test]
fn untar_on_tmpfs() {
    check("tmpfs", "256MiB");
}

#[test]
fn untar_on_ext4() {
    check("ext4", "256MiB");
}

/// Filesystems of `list` this machine can make; a SKIP line for each other one.
fn available(test: &str, list: &[&str]) -> Vec<String> {
    list.iter()
        .filter(|fs| common::fs_available(test, fs))
        .map(|s| s.to_string())
        .collect()
}

/// A real tree — the system's `/usr/include` (absolute and outward symlinks: `mpi ->
/// /etc/alternatives/…`, `clang/14/include -> ../../../lib/…`) with a small tree of the
/// same shapes and a hard link beside it — archived by GNU tar, extracts on ext4, xfs and
/// btrfs: every member made (the delete phase removes them all), every byte written.
#[test]
fn real_include_tree_extracts_on_ext4_xfs_btrfs() {
    let test = "real_include_tree_extracts_on_ext4_xfs_btrfs";
    if common::skip_without_loop(test) {
        return;
    }
    let fs = available(test, &["ext4", "xfs", "btrfs"]);
    if fs.is_empty() {
        return;
    }
    let dir = common::image_dir();
    let shapes = common::symlink_shapes(dir.path());
    let include = std::path::Path::new("/usr/include");
    let mut tar = Command::new("tar");
    tar.arg("czf").arg(dir.path().join("inc.tar.gz"));
    let (mut want, mut entries) = (common::tally(&shapes), 0);
    if include.is_dir() {
        let t = common::tally(include);
        (want.files_unique, want.bytes_unique) = (
            want.files_unique + t.files_unique,
            want.bytes_unique + t.bytes_unique,
        );
        entries += t.entries;
        tar.args(["-C", "/usr", "include"]);
    } else {
        eprintln!("{test}: no /usr/include here; the small tree only");
    }
    entries += want.entries;
    assert!(tar
        .arg("-C")
        .arg(dir.path())
        .arg("shapes")
        .status()
        .unwrap()
        .success());
    let spec = format!("untar:archive={}", dir.path().join("inc.tar.gz").display());
    let fs_list = fs.join(",");
    let (v, _) = common::run_json(
        &[
            &spec, "--fs", &fs_list, "--size", "512MiB", "--reps", "1", "--quiet",
        ],
        dir.path(),
    );
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), fs.len());
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        let ex = phase(t, "extract");
        assert_eq!(
            ex["extra"]["files"], want.files_unique as f64,
            "{}",
            t["target"]
        );
        assert_eq!(ex["bytes_written"], want.bytes_unique, "{}", t["target"]);
        // Every member was made: the delete phase removes each one and the root.
        assert_eq!(phase(t, "delete")["ops"], entries + 1, "{}", t["target"]);
    }
    common::assert_clean(dir.path());
}

/// A corrupt archive is refused before anything is provisioned: exit 2, a message naming
/// the file and the fault, no mkfs run (FSARENA_LOG logs every external command), no image.
#[test]
fn corrupt_archive_exits_2_before_any_mkfs() {
    let test = "corrupt_archive_exits_2_before_any_mkfs";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    common::symlink_shapes(dir.path());
    let tar = dir.path().join("a.tar");
    assert!(Command::new("tar")
        .arg("cf")
        .arg(&tar)
        .arg("-C")
        .arg(dir.path())
        .arg("shapes")
        .status()
        .unwrap()
        .success());
    let mut bytes = std::fs::read(&tar).unwrap();
    // The third member's header: its name changed, its checksum no longer matches.
    let mut at = 0;
    for _ in 0..2 {
        let size = std::str::from_utf8(&bytes[at + 124..at + 135]).unwrap();
        let size = u64::from_str_radix(size.trim_matches(|c| c == ' ' || c == '\0'), 8).unwrap();
        at += 512 + size.div_ceil(512) as usize * 512;
    }
    bytes[at + 1] ^= 0x11;
    let fault = format!("checksum at byte {at}");
    let corrupt = dir.path().join("corrupt.tar");
    std::fs::write(&corrupt, &bytes).unwrap();
    let truncated = dir.path().join("truncated.tar.gz");
    let gz = Command::new("gzip")
        .arg("-c")
        .arg(&tar)
        .output()
        .unwrap()
        .stdout;
    std::fs::write(&truncated, &gz[..gz.len() / 2]).unwrap();
    for (path, fault) in [(&corrupt, fault.as_str()), (&truncated, "gzip")] {
        let spec = format!("untar:archive={}", path.display());
        let out = Command::new(common::bin())
            .env("FSARENA_LOG", "1")
            .args([
                "run", &spec, "--fs", "ext4", "--size", "256MiB", "--reps", "3",
            ])
            .arg("--image-dir")
            .arg(dir.path())
            .arg("--db")
            .arg(dir.path().join("results.db"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains(fault),
            "{fault}: {stderr}"
        );
        assert!(!stderr.contains("mkfs"), "mkfs ran: {stderr}");
        assert!(common::images_under(dir.path()).is_empty());
    }
    common::assert_clean(dir.path());
}

/// `tar` compressed in-process as `ext` (what `gzip`, `xz -6` and `zstd -3`
/// write by default, checksums included).
fn compressed(tar: &[u8], ext: &str) -> Vec<u8> {
    use std::io::Write;
    match ext {
        "tar.gz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        "tar.xz" => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        "tar.zst" => {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            e.include_checksum(true).unwrap();
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!("{ext}"),
    }
}

/// A directory holding only `mount` and `umount` (what a tmpfs target runs): as `PATH`,
/// no `gzip`, `xz` or `zstd` can be found.
fn path_without_decompressors(dir: &std::path::Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["mount", "umount"] {
        let found = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no {tool}"));
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    bin
}

/// Issue 24: `untar:archive=x.tar.zst` (and .tar.xz, .tar.gz) works on a machine without
/// the `zstd` (`xz`, `gzip`) binary: fsarena runs with a `PATH` that lacks them, extracts
/// every file, and a corrupt one still exits 2 naming the file and the format.
#[test]
fn compressed_archives_need_no_decompressor_binary() {
    let test = "compressed_archives_need_no_decompressor_binary";
    if common::skip_without_loop(test) {
        return;
    }
    let dir = common::image_dir();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a/b")).unwrap();
    for i in 0..20 {
        std::fs::write(src.join(format!("a/b/f{i}")), vec![b'z'; 3000 + i]).unwrap();
    }
    let tar = Command::new("tar")
        .arg("cf")
        .arg("-")
        .arg("-C")
        .arg(&src)
        .arg("a")
        .output()
        .unwrap();
    assert!(tar.status.success());
    let bin = path_without_decompressors(dir.path());
    for tool in ["gzip", "xz", "zstd"] {
        assert!(!bin.join(tool).exists());
    }
    let fsarena = |spec: &str| {
        Command::new(common::bin())
            .env("PATH", &bin)
            .args([
                "run", spec, "--fs", "tmpfs", "--size", "64MiB", "--reps", "1",
            ])
            .arg("--quiet")
            .arg("--image-dir")
            .arg(dir.path())
            .arg("--json")
            .arg(dir.path().join("out.json"))
            .arg("--db")
            .arg(dir.path().join("results.db"))
            .output()
            .unwrap()
    };
    for ext in ["tar.gz", "tar.xz", "tar.zst"] {
        let path = dir.path().join(format!("x.{ext}"));
        let bytes = compressed(&tar.stdout, ext);
        std::fs::write(&path, &bytes).unwrap();
        let out = fsarena(&format!("untar:archive={}", path.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{ext}: {stderr}");
        let v = common::run_document(&std::fs::read(dir.path().join("out.json")).unwrap());
        let ex = phase(&v["trials"][0], "extract");
        assert_eq!(ex["extra"]["files"], 20.0, "{ext}");
        assert_eq!(
            ex["bytes_written"],
            20 * 3000 + (0..20).sum::<u64>(),
            "{ext}"
        );
        // Cut in half: refused before anything runs, naming the file and the format.
        let cut = dir.path().join(format!("cut.{ext}"));
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let out = fsarena(&format!("untar:archive={}", cut.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let format = match ext {
            "tar.gz" => "gzip",
            "tar.xz" => "xz",
            _ => "zstd",
        };
        assert_eq!(out.status.code(), Some(2), "{ext}: {stderr}");
        assert!(
            stderr.contains(&cut.display().to_string())
                && stderr.contains(&format!("not valid {format} data")),
            "{ext}: {stderr}"
        );
    }
    common::assert_clean(dir.path());
}
