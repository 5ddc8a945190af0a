//! End-to-end runs on the filesystems beyond ext/xfs/btrfs and on network targets:
//! ntfs-3g over FUSE on a loop image, a filesystem this kernel lacks refused with its
//! reason, and an sshfs target served by a private sshd on 127.0.0.1 (the stand-in for
//! NFS and CIFS, which this kernel has no client for).

mod common;

use fsarena::provision::fs::{FsType, Support};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn ntfs_runs_end_to_end_and_unmounts() {
    let test = "ntfs_runs_end_to_end_and_unmounts";
    if common::skip_without_loop(test) || !common::fs_available(test, "ntfs") {
        return;
    }
    let dir = common::image_dir();
    let (v, table) = common::run_json(
        &[
            "smallfiles:files=500",
            "--fs",
            "ntfs",
            "--size",
            "256MiB",
            "--reps",
            "1",
        ],
        dir.path(),
    );
    let target = &v["targets"][0];
    assert_eq!(target["name"], "ntfs");
    assert_eq!(target["kind"], "loop");
    assert!(table.contains("ntfs"), "{table}");
    let trial = &v["trials"][0];
    assert_eq!(trial["status"], "ok", "{trial}");
    let create = common::phase(trial, "create");
    let files = create["lat_by_op"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "create")
        .map(|o| o["count"].as_u64());
    assert_eq!(files, Some(Some(500)), "files created");
    common::assert_clean(dir.path());
    let fuse_left: Vec<_> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&*dir.path().to_string_lossy()))
        .map(String::from)
        .collect();
    assert!(fuse_left.is_empty(), "{fuse_left:?}");
}

#[test]
fn a_filesystem_the_kernel_lacks_is_refused_with_the_reason() {
    let test = "a_filesystem_the_kernel_lacks_is_refused_with_the_reason";
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP {test}: not root");
        return;
    }
    let Support::No(why) = FsType::F2fs.support() else {
        eprintln!("SKIP {test}: this machine can make f2fs");
        return;
    };
    let dir = common::image_dir();
    let out = Command::new(common::bin())
        .args(["run", "smallfiles:files=10", "--fs", "f2fs", "--reps", "1"])
        .arg("--image-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--fs f2fs: this machine cannot make it"),
        "{stderr}"
    );
    assert!(stderr.contains(&why), "{stderr}");
    // Wide enough that no line of the list wraps: this test reads the reason whole.
    let list = Command::new(common::bin())
        .arg("list")
        .env("COLUMNS", "300")
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    let line = list
        .lines()
        .find(|l| l.trim_start().starts_with("f2fs "))
        .unwrap();
    assert!(line.contains(&format!("no: {why}")), "{line}");
    common::assert_clean(dir.path());
}

#[test]
fn net_and_size_errors_are_usage_errors() {
    let test = "net_and_size_errors_are_usage_errors";
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP {test}: not root");
        return;
    }
    let dir = common::image_dir();
    let run = |args: &[&str]| {
        let out = Command::new(common::bin())
            .arg("run")
            .args(args)
            .arg("--image-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["smallfiles", "--net", "cifs=server:/x"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("//server/share"), "{err}");
    if let Support::No(why) = fsarena::provision::net::NetKind::Nfs.support() {
        let (code, err) = run(&["smallfiles", "--net", "nfs=127.0.0.1:/srv"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(&why), "{err}");
    }
    if FsType::Nilfs2.support() == Support::Yes {
        let (code, err) = run(&["smallfiles", "--fs", "nilfs2", "--size", "64MiB"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("mkfs.nilfs2 needs at least"), "{err}");
    }
}

/// A private sshd on 127.0.0.1 with its own host key and one authorized key, killed on drop.
struct Sshd {
    child: Child,
    port: u16,
    key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "ssh-keygen {}", path.display());
}

/// Starts sshd in `dir`; `None` (and why) when sshd or sshfs is missing.
fn start_sshd(dir: &Path) -> Result<Sshd, String> {
    let sshd = Path::new("/usr/sbin/sshd");
    if !sshd.is_file() {
        return Err("sshd missing: apt-get install openssh-server".into());
    }
    if fsarena::cmd::which("sshfs").is_none() {
        return Err("sshfs missing: apt-get install sshfs".into());
    }
    if fsarena::provision::net::NetKind::Sshfs.support() != Support::Yes {
        return Err(format!(
            "{:?}",
            fsarena::provision::net::NetKind::Sshfs.support()
        ));
    }
    keygen(&dir.join("host_key"));
    keygen(&dir.join("user_key"));
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
         AuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\n\
         PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
         KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
         Subsystem sftp internal-sftp\n",
        d = dir.display()
    );
    std::fs::write(dir.join("sshd_config"), config).unwrap();
    // sshd insists on its privilege separation directory.
    std::fs::create_dir_all("/run/sshd").ok();
    let child = Command::new(sshd)
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
        .spawn()
        .map_err(|e| format!("starting sshd: {e}"))?;
    let server = Sshd {
        child,
        port,
        key: dir.join("user_key"),
    };
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t.elapsed() > Duration::from_secs(10) {
            let log = std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
            return Err(format!("sshd did not listen on {port} within 10 s: {log}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(server)
}

#[test]
fn sshfs_over_loopback_runs_postmark_and_leaves_nothing_mounted() {
    let test = "sshfs_over_loopback_runs_postmark_and_leaves_nothing_mounted";
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP {test}: needs root (mount, sshd)");
        return;
    }
    let ssh_dir = tempfile::tempdir().unwrap();
    let server = match start_sshd(ssh_dir.path()) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("SKIP {test}: {why}");
            return;
        }
    };
    let export = ssh_dir.path().join("export");
    std::fs::create_dir(&export).unwrap();
    let net = format!(
        "sshfs=root@127.0.0.1:{},port={},IdentityFile={},StrictHostKeyChecking=no,\
         UserKnownHostsFile=/dev/null",
        export.display(),
        server.port,
        server.key.display()
    );
    let dir = common::image_dir();
    let (v, _) = common::run_json(
        &[
            "postmark:number=100,transactions=200",
            "--net",
            &net,
            "--reps",
            "2",
        ],
        dir.path(),
    );
    let target = &v["targets"][0];
    assert_eq!(target["kind"], "net", "{target}");
    assert_eq!(target["fstype"], "fuse.sshfs", "{target}");
    assert!(
        target["name"]
            .as_str()
            .unwrap()
            .starts_with("sshfs:root@127.0.0.1:"),
        "{target}"
    );
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        assert!(t["provision"]["mount_s"].as_f64().unwrap() > 0.0, "{t}");
    }
    // Unmounted, mount point gone, and the export holds nothing of fsarena's.
    common::assert_clean(dir.path());
    assert!(!std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .contains("fuse.sshfs"));
    let left: Vec<_> = std::fs::read_dir(&export).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    drop(server);
}
