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
    let argv: Vec<&str> = argv.iter().map(|s| s.as_ref()).collect();
    let line = shell_words(&argv);
    if log_enabled() {
        eprintln!("fsarena: $ {line}");
    }
    if let Ok(mut log) = LOG.lock() {
        log.push(line.clone());
    }
    let t = Instant::now();
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| Error::Command {
            argv: line.clone(),
            status: "not started".into(),
            stderr: format!("{e} (is the program installed and in PATH?)"),
        })?;
    let seconds = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let status = out
            .status
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
    fn quoting() {
        assert_eq!(
            shell_words(&["mkfs.ext4", "-E", "a=b,c"]),
            "mkfs.ext4 -E a=b,c"
        );
        assert_eq!(shell_words(&["x", "it's", ""]), "x 'it'\\''s' ''");
    }
}
