//! The one place external commands (mkfs, mount, losetup, umount) are run.
//!
//! Every command's argv is logged (to stderr with `FSARENA_LOG=1`, and kept in memory for
//! error reports); a failure carries the command's stderr. Commands run in their own process
//! group, so a Ctrl-C aimed at fsarena does not kill an `umount` half way through teardown.

use crate::error::Error;
use anyhow::Result;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// What a successful command printed and how long it took.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

fn log_enabled() -> bool {
    std::env::var_os("FSARENA_LOG").is_some_and(|v| v != "0")
}

/// Runs `argv` and waits; fails with the command's stderr when it exits non-zero.
pub fn run<S: AsRef<str>>(argv: &[S]) -> Result<Output> {
    run_with(argv, false)
}

/// Like [`run`], for a command that leaves a daemon behind (sshfs, other FUSE mounts):
/// its output goes to unnamed temporary files instead of pipes, so waiting for it does
/// not wait for the daemon, which may keep the descriptors open for its whole life.
pub fn run_detached<S: AsRef<str>>(argv: &[S]) -> Result<Output> {
    run_with(argv, true)
}

fn run_with<S: AsRef<str>>(argv: &[S], detached: bool) -> Result<Output> {
    let argv: Vec<&str> = argv.iter().map(|s| s.as_ref()).collect();
    let line = shell_words(&argv);
    if log_enabled() {
        eprintln!("fsarena: $ {line}");
    }
    if let Ok(mut log) = LOG.lock() {
        log.push(line.clone());
    }
    let not_started = |e: std::io::Error| Error::Command {
        argv: line.clone(),
        status: "not started".into(),
        stderr: format!("{e} (is the program installed and in PATH?)"),
    };
    let t = Instant::now();
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .process_group(0);
    let (status, stdout, stderr) = if detached {
        let mut out = tempfile::tempfile().map_err(not_started)?;
        let mut err = tempfile::tempfile().map_err(not_started)?;
        let status = command
            .stdout(out.try_clone().map_err(not_started)?)
            .stderr(err.try_clone().map_err(not_started)?)
            .status()
            .map_err(not_started)?;
        (status, read_back(&mut out), read_back(&mut err))
    } else {
        let out = command.output().map_err(not_started)?;
        (
            out.status,
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let seconds = t.elapsed().as_secs_f64();
    if !status.success() {
        let status = status
            .code()
            .map_or_else(|| "killed by signal".to_string(), |c| c.to_string());
        let msg = if stderr.trim().is_empty() {
            stdout.trim()
        } else {
            stderr.trim()
        };
        return Err(Error::Command {
            argv: line,
            status,
            stderr: msg.to_string(),
        }
        .into());
    }
    Ok(Output {
        stdout,
        stderr,
        seconds,
    })
}

/// What a command wrote to `f` (rewound first).
fn read_back(f: &mut std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut buf = Vec::new();
    let _ = f.rewind().and_then(|_| f.read_to_end(&mut buf));
    String::from_utf8_lossy(&buf).into_owned()
}

/// Whether `program` is found in PATH or in the sbin directories root uses.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.is_file());
    found
}

/// The commands run so far by this process, in order.
pub fn history() -> Vec<String> {
    LOG.lock().map(|l| l.clone()).unwrap_or_default()
}

/// Joins argv into a line a shell would accept.
pub fn shell_words(argv: &[&str]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_reports_stderr() {
        let out = run(&["sh", "-c", "echo hi"]).unwrap();
        assert_eq!(out.stdout, "hi\n");
        let err = run(&["sh", "-c", "echo boom >&2; exit 3"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("boom") && err.contains("exit 3"), "{err}");
        let err = run(&["/no/such/program"]).unwrap_err().to_string();
        assert!(err.contains("not started"), "{err}");
        assert!(history().iter().any(|l| l == "sh -c 'echo hi'"));
    }

    #[test]
    fn detached_does_not_wait_for_a_daemon_holding_its_output() {
        // The child exits at once; the grandchild keeps stdout and stderr open for 60 s,
        // as a FUSE daemon would (run() would wait for it).
        let t = Instant::now();
        let out = run_detached(&["sh", "-c", "echo note >&2; sleep 60 & echo $!; exit 0"]).unwrap();
        assert!(t.elapsed().as_secs() < 30, "waited for the daemon");
        assert_eq!(out.stderr, "note\n");
        let pid: i32 = out.stdout.trim().parse().expect("pid of the daemon");
        // SAFETY: kill(2) on the pid of the sleep this test started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let err = run_detached(&["sh", "-c", "echo bad >&2; exit 4"]).unwrap_err();
        assert!(err.to_string().contains("bad"), "{err}");
    }

    #[test]
    fn quoting() {
        assert_eq!(
            shell_words(&["mkfs.ext4", "-E", "a=b,c"]),
            "mkfs.ext4 -E a=b,c"
        );
        assert_eq!(shell_words(&["x", "it's", ""]), "x 'it'\\''s' ''");
    }
}
