//! End-to-end runs of `untar` on tmpfs and an ext4 loop image: a generated web cache and a
//! user's .tar.gz made with the system tar.

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
