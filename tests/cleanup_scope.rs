//! `fsarena cleanup` undoes only what is this host's: a loop device that another host
//! sharing the kernel (a container, a mount namespace) attached to an image of the same
//! path is left alone, while this host's own orphan is detached.

mod common;

use std::path::Path;
use std::process::Command;

fn attached(device: &str) -> bool {
    let name = device.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).is_ok()
}

/// Attaches `image` (made inside `dir`) to a free loop device from a private mount
/// namespace where `dir` is a tmpfs of its own, kept alive (so the kernel names the backing
/// file by that namespace's path) until the returned process is killed; returns the device.
fn attach_elsewhere(dir: &Path, image: &str) -> (String, std::process::Child) {
    use std::io::BufRead;
    let script = format!(
        "mount -t tmpfs none '{d}' && truncate -s 8M '{d}/{image}' && \
         losetup -f --show '{d}/{image}' && exec sleep 300",
        d = dir.display()
    );
    let mut child = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("/dev/loop"),
        "losetup in the namespace said {line:?}"
    );
    (line.trim().to_string(), child)
}

#[test]
fn another_hosts_loop_device_of_the_same_path_is_left_alone() {
    let test = "another_hosts_loop_device_of_the_same_path_is_left_alone";
    if common::skip_without_loop(test) {
        return;
    }
    if Command::new("unshare").arg("--version").output().is_err() {
        eprintln!("SKIP {test}: needs unshare (util-linux)");
        return;
    }
    let img = common::image_dir();
    fsarena::state::ensure_owned_dir(img.path()).unwrap();
    let (theirs, mut host) = attach_elsewhere(img.path(), "20200101-000000-aaaa-ext4.img");
    // This host's own orphan: an image here, attached, recorded nowhere.
    let ours_image = img.path().join("20200101-000000-bbbb-ext4.img");
    std::fs::write(&ours_image, vec![0u8; 8 << 20]).unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&ours_image)
        .output()
        .unwrap();
    let ours = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(attached(&theirs) && attached(&ours));

    let cleanup = common::cleanup(img.path());
    let said = String::from_utf8_lossy(&cleanup.stdout).into_owned()
        + &String::from_utf8_lossy(&cleanup.stderr);
    let theirs_left = attached(&theirs);
    let ours_left = attached(&ours);
    // Undo before asserting, so a failure leaves nothing attached.
    for d in [&theirs, &ours] {
        let _ = Command::new("losetup").args(["-d", d]).output();
    }
    let _ = host.kill();
    let _ = host.wait();
    assert!(cleanup.status.success(), "{said}");
    assert!(
        theirs_left,
        "another host's loop device was detached: {said}"
    );
    assert!(said.contains(&format!("left {theirs} alone")), "{said}");
    assert!(!ours_left, "this host's orphan stayed attached: {said}");
}
