//! No secret is written down: a CIFS password (through a fake `mount.cifs` that records
//! its argv and environment) and variables named like secrets for the `command` workload
//! appear nowhere fsarena writes or prints — the database (its raw bytes, `-wal`
//! included), every export, the HTML report, the state and log files, `FSARENA_LOG=1`
//! output and argv — while the process that needs one still gets it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every file under `dir`, recursively (symlinks not followed).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_under(&p)),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// `fsarena ARGS --db DB`, its stdout and stderr as one text (asserting success).
fn fsarena(db: &Path, args: &[&str]) -> String {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run fsarena");
    assert!(out.status.success(), "fsarena {args:?}: {}", text(&out));
    text(&out)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Exports the last run of `db` in every format into `dir` (json, csv, bonnie csv, html)
/// and returns what `show` and `history` print.
fn export_everything(db: &Path, dir: &Path) -> String {
    let out = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let mut printed = String::new();
    for (flag, file) in [
        ("--json", "export.json"),
        ("--csv", "export.csv"),
        ("--bonnie-csv", "export.bonnie.csv"),
    ] {
        printed += &fsarena(db, &["export", "last", flag, "-o", &out(file)]);
    }
    printed += &fsarena(db, &["report", "last", "--html", &out("report.html")]);
    printed += &fsarena(db, &["show", "last"]);
    printed += &fsarena(db, &["history"]);
    printed
}

/// Asserts that none of `secrets` is in `printed` or in any file under `dirs`; returns how
/// many files were searched. Of a trial's log (`*.log`), what fsarena writes is its
/// `==> fsarena` header lines; the rest is the user's commands' own output.
fn assert_written_nowhere(secrets: &[&str], printed: &str, dirs: &[&Path]) -> usize {
    let files: Vec<PathBuf> = dirs.iter().flat_map(|d| files_under(d)).collect();
    for s in secrets {
        assert!(!printed.contains(s), "{s} printed:\n{printed}");
        for f in &files {
            let mut bytes = std::fs::read(f).unwrap_or_default();
            if f.extension().is_some_and(|e| e == "log") {
                let text = String::from_utf8_lossy(&bytes);
                let headers: Vec<&str> = text
                    .lines()
                    .filter(|l| l.starts_with("==> fsarena"))
                    .collect();
                assert!(!headers.is_empty(), "{}: no header", f.display());
                bytes = headers.join("\n").into_bytes();
            }
            assert!(!contains(&bytes, s), "{s} written to {}", f.display());
        }
    }
    files.len()
}

#[test]
fn command_variables_named_like_secrets_are_written_nowhere() {
    let dir = common::image_dir();
    let work = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    // Each workload twice, so that the labels are the specs as typed; the third fails
    // with a secret in its output's tail, which the trial's error quotes.
    let first = format!(
        "command:run='printf %s \"$MY_PASSWORD\" > {}',env='MY_PASSWORD=hunter2 a,b;CC=gcc'",
        seen.display()
    );
    let second = "command:run=true,env=API_TOKEN=tok-9f8e7d";
    // For the Bonnie++ CSV export, which holds only bonnie trials.
    let bonnie = "bonnie-files:files=1";
    let third =
        "command:run='echo PGPASSWORD=pg-5a4b3c; echo \"$X_SECRET\"; exit 3',env=X_SECRET=xs-7h6g5f";
    let out = Command::new(common::bin())
        .env("FSARENA_LOG", "1")
        .args(["run", &first, second, third, bonnie, "--dir"])
        .arg(work.path())
        .args(["--reps", "1", "--image-dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(dir.path().join("out.json"))
        .arg("--html")
        .arg(dir.path().join("run.html"))
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .output()
        .expect("run fsarena");
    let mut printed = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the third trial fails: {printed}"
    );
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "hunter2 a,b",
        "the command got the real value"
    );
    std::fs::remove_file(&seen).unwrap();
    let v: serde_json::Value =
        common::run_document(&std::fs::read(dir.path().join("out.json")).unwrap());
    assert_eq!(v["trials"][0]["params"]["env"], "MY_PASSWORD=***;CC=gcc");
    assert!(
        v["trials"][2]["error"]
            .as_str()
            .unwrap()
            .contains("PGPASSWORD=***"),
        "{}",
        v["trials"][2]
    );
    assert!(
        printed.contains("visible to every local user in `ps`"),
        "{printed}"
    );
    printed += &export_everything(&dir.path().join("results.db"), dir.path());
    let n = assert_written_nowhere(
        &["hunter2", "tok-9f8e7d", "pg-5a4b3c", "xs-7h6g5f"],
        &printed,
        &[dir.path(), work.path()],
    );
    assert!(n >= 7, "searched {n} files");
}

/// Why the fake-CIFS test cannot run here, or `None`.
fn cifs_fake_unavailable() -> Option<String> {
    if !fsarena::probe::sys::is_root() {
        return Some("not root (mounts the fake share and a private mount namespace)".into());
    }
    let ok = Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| "unshare -m failed".into())
}

/// A fake `mount.cifs` in `dir/bin` that records its argv and environment in `dir/argv`
/// and `dir/env`, then bind-mounts `dir/share` (kept across remounts, as a share's files
/// are) where the share would be; and a copy of
/// /proc/filesystems naming cifs (bound over the real one in a private mount namespace,
/// since this kernel may have no CIFS client). Returns (bin dir, filesystems file).
fn fake_cifs(dir: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let helper = bin.join("mount.cifs");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" >> {d}/argv\nenv >> {d}/env\n\
             mkdir -p {d}/share && exec mount --bind {d}/share \"$2\"\n",
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut fs = std::fs::read_to_string("/proc/filesystems").unwrap();
    fs.push_str("nodev\tcifs\n");
    let file = dir.join("filesystems");
    std::fs::write(&file, fs).unwrap();
    (bin, file)
}

/// `fsarena ARGS` in a private mount namespace where /proc/filesystems names cifs, with
/// `bin` first in PATH and `FSARENA_LOG=1`.
fn run_in_namespace(bin: &Path, filesystems: &Path, args: &[&str]) -> Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind \"$1\" /proc/filesystems && shift && exec \"$@\"")
        .arg("sh")
        .arg(filesystems)
        .arg(common::bin())
        .args(args)
        .env("PATH", path)
        .env("FSARENA_LOG", "1")
        .output()
        .expect("run unshare")
}

#[test]
fn a_cifs_password_reaches_mount_cifs_in_its_environment_only() {
    let test = "a_cifs_password_reaches_mount_cifs_in_its_environment_only";
    if let Some(why) = cifs_fake_unavailable() {
        eprintln!("SKIP {test}: {why}");
        return;
    }
    let dir = common::image_dir();
    let fake = tempfile::tempdir().unwrap();
    let (bin, filesystems) = fake_cifs(fake.path());
    let secret = "Cifs-9q8w7e";
    let net = format!("cifs=//srv/share,username=bench,password={secret},vers=3.1.1");
    let d = |f: &str| dir.path().join(f).to_string_lossy().into_owned();
    let out = run_in_namespace(
        &bin,
        &filesystems,
        &[
            "run",
            "bonnie-files:files=1",
            "--net",
            &net,
            "--reps",
            "2",
            "--cache",
            "cold",
            "--image-dir",
            &d(""),
            "--json",
            &d("out.json"),
            "--html",
            &d("run.html"),
            "--db",
            &d("results.db"),
        ],
    );
    let mut printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let argv = std::fs::read_to_string(fake.path().join("argv")).unwrap();
    let env = std::fs::read_to_string(fake.path().join("env")).unwrap();
    // Two trials, each mounting once and again for the cold cache.
    assert!(argv.matches("//srv/share\n").count() >= 2, "{argv}");
    assert!(argv.contains("username=bench,vers=3.1.1\n"), "{argv}");
    assert!(!argv.contains(secret), "the password was in argv: {argv}");
    assert!(
        env.lines().any(|l| l == format!("PASSWD={secret}")),
        "mount.cifs got no PASSWD: {env}"
    );
    assert!(
        printed.contains("'PASSWD=***' mount.cifs //srv/share"),
        "{printed}"
    );
    let v: serde_json::Value =
        common::run_document(&std::fs::read(dir.path().join("out.json")).unwrap());
    assert_eq!(
        v["targets"][0]["requested_mount_opts"],
        "username=bench,password=***,vers=3.1.1"
    );
    printed += &export_everything(&dir.path().join("results.db"), dir.path());
    assert_written_nowhere(&[secret], &printed, &[dir.path()]);
    common::assert_clean(dir.path());
}

#[test]
fn a_cifs_credentials_file_is_passed_on_with_a_warning_when_others_may_read_it() {
    let test = "a_cifs_credentials_file_is_passed_on_with_a_warning_when_others_may_read_it";
    if let Some(why) = cifs_fake_unavailable() {
        eprintln!("SKIP {test}: {why}");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = common::image_dir();
    let fake = tempfile::tempdir().unwrap();
    let (bin, filesystems) = fake_cifs(fake.path());
    let cred = fake.path().join("smbcred");
    std::fs::write(&cred, "username=bench\npassword=Cred-1z2x3c\n").unwrap();
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o644)).unwrap();
    let net = format!("cifs=//srv/share,credentials={}", cred.display());
    let d = |f: &str| dir.path().join(f).to_string_lossy().into_owned();
    let args = [
        "run",
        "smallfiles:files=100",
        "--net",
        &net,
        "--reps",
        "1",
        "--quiet",
        "--image-dir",
        &d(""),
        "--json",
        &d("out.json"),
        "--db",
        &d("results.db"),
    ];
    let out = run_in_namespace(&bin, &filesystems, &args);
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(
        printed.contains("readable by others (mode 644)") && printed.contains("chmod 600"),
        "{printed}"
    );
    let argv = std::fs::read_to_string(fake.path().join("argv")).unwrap();
    assert!(
        argv.contains(&format!("credentials={}\n", cred.display())),
        "{argv}"
    );
    let v: serde_json::Value =
        common::run_document(&std::fs::read(dir.path().join("out.json")).unwrap());
    let notes = v["targets"][0]["notes"].to_string();
    assert!(notes.contains("readable by others"), "{notes}");
    // Private now: no warning.
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = run_in_namespace(&bin, &filesystems, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("readable by"), "{}", text(&out));
    common::assert_clean(dir.path());
}
