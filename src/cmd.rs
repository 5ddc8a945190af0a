//! The one place external commands (mkfs, mount, losetup, umount) are run.
//!
//! Every command's argv is logged (to stderr with `FSARENA_LOG=1`, and kept in memory for
//! error reports); a failure carries the command's stderr. Commands run in their own process
//! group, so a Ctrl-C aimed at fsarena does not kill an `umount` half way through teardown.
//!
//! A secret never passes through argv (which every local user reads in `ps`) nor into the
//! log: [`run_detached_env`] hands it to the one command in its environment, logged as
//! `NAME=***`, and argv words and error text go through [`crate::secret::redact`] first.

use crate::error::Error;
use anyhow::Result;
use std::io::Write;
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

/// Logs, as a command line would be, a step fsarena takes itself with a system call
/// rather than a program (attaching a loop device through its descriptor), so that
/// `FSARENA_LOG=1` and the error history show every step that changes the machine.
pub fn record(line: &str) {
    if log_enabled() {
        let _ = writeln!(std::io::stderr(), "fsarena: $ {line}");
    }
    if let Ok(mut log) = LOG.lock() {
        log.push(line.to_string());
    }
}

/// How a command's output is collected and whether a stop request ends it.
#[derive(Clone, Copy, PartialEq)]
enum How {
    /// Through pipes, waited for to the end.
    Piped,
    /// Through temporary files (a daemon left behind keeps no pipe open).
    Detached,
    /// Through temporary files, killed with its process group on SIGINT/SIGTERM.
    Stoppable,
}

/// Runs `argv` and waits; fails with the command's stderr when it exits non-zero.
pub fn run<S: AsRef<str>>(argv: &[S]) -> Result<Output> {
    run_with(argv, &[], How::Piped)
}

/// Like [`run`], for a command whose work is thrown away when the run stops (mkfs and
/// fsck of an image or device fsarena is about to measure): after SIGINT/SIGTERM its
/// process group is killed within 10 ms and the error is `Interrupted`, so teardown starts
/// at once instead of after an mkfs that may take minutes (`-cc`, a large device). Never
/// for mount, umount or losetup, whose half-done work would be left behind.
pub fn run_stoppable<S: AsRef<str>>(argv: &[S]) -> Result<Output> {
    run_with(argv, &[], How::Stoppable)
}

/// Like [`run`], for a command that leaves a daemon behind (sshfs, other FUSE mounts):
/// its output goes to unnamed temporary files instead of pipes, so waiting for it does
/// not wait for the daemon, which may keep the descriptors open for its whole life.
pub fn run_detached<S: AsRef<str>>(argv: &[S]) -> Result<Output> {
    run_with(argv, &[], How::Detached)
}

/// Like [`run_detached`], with `env` added to the command's environment: how a secret
/// (mount.cifs's `PASSWD`) reaches the one command that needs it. The log and errors
/// name each variable with its value hidden (`PASSWD=***`).
pub fn run_detached_env<S: AsRef<str>>(argv: &[S], env: &[(String, String)]) -> Result<Output> {
    run_with(argv, env, How::Detached)
}

/// The line logged for `argv` run with `env`: variables as `NAME=***`, argv redacted.
fn log_line(argv: &[&str], env: &[(String, String)]) -> String {
    let words: Vec<String> = env
        .iter()
        .map(|(k, _)| format!("{k}={}", crate::secret::REDACTED))
        .chain(crate::secret::redact_argv(argv))
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    shell_words(&words)
}

fn run_with<S: AsRef<str>>(argv: &[S], env: &[(String, String)], how: How) -> Result<Output> {
    let argv: Vec<&str> = argv.iter().map(|s| s.as_ref()).collect();
    let line = log_line(&argv, env);
    if log_enabled() {
        let _ = writeln!(std::io::stderr(), "fsarena: $ {line}");
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
    // Found the way `which` finds it (cron and `env -i` give PATH=/usr/bin:/bin, without
    // root's sbin directories); the command's own children (mkfs's, mount's helpers) get
    // the same directories.
    let program = which(argv[0]).unwrap_or_else(|| argv[0].into());
    let mut command = Command::new(program);
    command
        .args(&argv[1..])
        .env("PATH", search_path())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .process_group(0);
    let (status, stdout, stderr) = if how != How::Piped {
        let mut out = tempfile::tempfile().map_err(not_started)?;
        let mut err = tempfile::tempfile().map_err(not_started)?;
        let mut child = command
            .stdout(out.try_clone().map_err(not_started)?)
            .stderr(err.try_clone().map_err(not_started)?)
            .spawn()
            .map_err(not_started)?;
        let status = match how {
            How::Stoppable => wait_or_stop(child, &line)?,
            _ => child.wait().map_err(not_started)?,
        };
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
            stderr: crate::secret::redact(msg),
        }
        .into());
    }
    Ok(Output {
        stdout,
        stderr,
        seconds,
    })
}

/// The exit code of a command that failed with it (e2fsck's 1 "errors corrected" is a
/// failure to [`run`], but a result to a caller that reads it); `None` for other errors.
pub fn exit_code(e: &anyhow::Error) -> Option<i32> {
    match e.downcast_ref::<Error>()? {
        Error::Command { status, .. } => status.parse().ok(),
        _ => None,
    }
}

/// Waits for `child`, polling every 10 ms; on a stop request kills its process group (it
/// leads one) and fails with `Interrupted`.
fn wait_or_stop(mut child: std::process::Child, line: &str) -> Result<std::process::ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if crate::signals::stop_requested() {
            // SAFETY: kill(2) on the process group the child leads (`process_group(0)`).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return Err(
                anyhow::Error::from(Error::Interrupted).context(format!("stopped `{line}`"))
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// What a command wrote to `f` (rewound first).
fn read_back(f: &mut std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut buf = Vec::new();
    let _ = f.rewind().and_then(|_| f.read_to_end(&mut buf));
    String::from_utf8_lossy(&buf).into_owned()
}

/// Root's sbin directories and the standard ones, searched after `PATH`.
const SYSTEM_DIRS: [&str; 5] = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// `PATH` followed by those of `SYSTEM_DIRS` it lacks: where fsarena looks for programs,
/// and the `PATH` the commands it runs get.
pub fn search_path() -> String {
    search_path_from(&std::env::var("PATH").unwrap_or_default())
}

/// [`search_path`] for a given `PATH`.
fn search_path_from(path: &str) -> String {
    let mut dirs: Vec<&str> = path.split(':').filter(|d| !d.is_empty()).collect();
    for d in SYSTEM_DIRS {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs.join(":")
}

/// Where `program` is found: itself when it names a path, else the first executable file
/// of that name in [`search_path`].
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = std::path::Path::new(program);
        return executable(p).then(|| p.to_path_buf());
    }
    search_path()
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| executable(p))
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
    fn programs_are_found_in_sbin_whatever_path_says() {
        // What cron and `env -i PATH=/usr/bin:/bin` give: losetup and mkfs are in sbin.
        let path = search_path_from("/usr/bin:/bin");
        assert!(path.starts_with("/usr/bin:/bin:"), "{path}");
        assert!(
            path.contains(":/usr/sbin") && path.contains(":/sbin"),
            "{path}"
        );
        assert_eq!(path.matches("/usr/bin").count(), 1, "{path}");
        assert!(which("sh").is_some());
        assert!(which("/no/such/program").is_none());
        assert!(which("no-such-program-fsarena").is_none());
        // A directory is not a program.
        assert!(which("/usr").is_none());
    }

    #[test]
    fn secrets_reach_the_command_but_not_the_log_or_the_error() {
        let env = [("MY_SECRET".to_string(), "hunter2".to_string())];
        let out = run_detached_env(&["sh", "-c", "echo \"$MY_SECRET\""], &env).unwrap();
        assert_eq!(out.stdout, "hunter2\n");
        let err = run_detached_env(
            &[
                "sh",
                "-c",
                "echo password=hunter2 >&2; exit 1",
                "token=hunter2",
            ],
            &env,
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(
            err.contains("MY_SECRET=***") && err.contains("token=***"),
            "{err}"
        );
        assert!(
            history().iter().all(|l| !l.contains("hunter2")),
            "{:?}",
            history()
        );
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
