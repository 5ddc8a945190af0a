//! Booting a guest with virtme-ng (`vng`) and watching it: the command line, the
//! accelerator check, the console (kept in a log, its last lines for errors), the idle
//! timeout and SIGINT. vng builds a shell command line from some of its arguments without
//! quoting them, so every path handed to it is checked to hold only plain characters.

use super::kernel::Kernel;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Lines of the console kept for an error message.
const TAIL_LINES: usize = 15;

/// The `vng` program: on PATH, else in the venv the test script installs it to.
pub fn find_vng() -> Option<PathBuf> {
    crate::cmd::which("vng").or_else(|| {
        let p = PathBuf::from("/opt/vng/bin/vng");
        p.is_file().then_some(p)
    })
}

/// Refuses a path vng would mangle: it reaches a shell unquoted.
pub fn plain(path: &Path) -> Result<&str> {
    let s = path.to_str().unwrap_or("");
    let ok = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+@:".contains(&b));
    if !ok {
        bail!(
            "{}: a guest needs paths of letters, digits and / . _ - + @ : only (virtme-ng \
             passes them through a shell unquoted)",
            path.display()
        );
    }
    Ok(s)
}

/// One guest boot.
pub struct Boot<'a> {
    pub vng: &'a Path,
    pub kernel: &'a Kernel,
    pub kvm: bool,
    pub vcpus: u32,
    pub memory_bytes: u64,
    /// Shared read-write with the guest, at the same path.
    pub shared: Option<&'a Path>,
    /// The scratch disk: a raw image, attached as virtio-blk with the host cache bypassed.
    pub disk: Option<(&'a Path, &'a str)>,
    /// Where QEMU writes its pid.
    pub pidfile: &'a Path,
    /// The shell script the guest runs.
    pub script: String,
}

/// How the scratch disk is attached: raw, no host page cache, Linux native AIO.
pub const DISK_CACHE: &str = "none";

impl Boot<'_> {
    /// vng's arguments.
    pub fn argv(&self) -> Result<Vec<String>> {
        let mut v: Vec<String> = vec![
            "-r".into(),
            plain(&self.kernel.path)?.into(),
            // The root is shared over 9p: virtiofs needs virtiofsd, and nothing measured
            // goes through the root.
            "--force-9p".into(),
            "--disable-microvm".into(),
            "--cpus".into(),
            self.vcpus.to_string(),
            "--memory".into(),
            format!("{}M", self.memory_bytes >> 20),
            "--name".into(),
            "fsarena-guest".into(),
            // The kernel's messages too: a panic's lines end the console the error quotes.
            "--verbose".into(),
        ];
        if !self.kvm {
            v.push("--disable-kvm".into());
        }
        if let Some(dir) = self.shared {
            v.push("--rwdir".into());
            v.push(plain(dir)?.into());
        }
        let mut qemu = format!("-pidfile {}", plain(self.pidfile)?);
        if let Some((image, serial)) = self.disk {
            qemu.push_str(&format!(
                " -drive if=none,id=fsarena,file={},format=raw,cache={DISK_CACHE},aio=native \
                 -device virtio-blk-pci,drive=fsarena,serial={serial}",
                plain(image)?
            ));
        }
        v.push(format!("--qemu-opts={qemu}"));
        v.push("--".into());
        v.push(self.script.clone());
        Ok(v)
    }
}

/// How a guest ended.
#[derive(Debug)]
pub enum Ended {
    /// vng exited with this status (the script's).
    Exited(Option<i32>),
    /// No console line for the idle timeout: stopped.
    Hung,
    /// SIGINT/SIGTERM: stopped.
    Interrupted,
}

/// A finished guest: how it ended and its console's last lines.
pub struct Outcome {
    pub ended: Ended,
    pub tail: Vec<String>,
    pub seconds: f64,
}

impl Outcome {
    /// The console's last lines, indented, for an error message.
    pub fn tail_text(&self) -> String {
        let mut s = String::new();
        for l in &self.tail {
            s.push_str("\n  | ");
            s.push_str(l);
        }
        s
    }
}

/// Boots the guest and waits for it, writing its console to `console_log` and passing each
/// line to `on_line`. Stops it (its whole process group, then QEMU by its pidfile) on
/// SIGINT/SIGTERM, after `idle` without a line, or once it has run for `limit`.
pub fn run(
    boot: &Boot,
    console_log: &Path,
    idle: Duration,
    limit: Option<Duration>,
    on_line: &dyn Fn(&str),
) -> Result<Outcome> {
    let argv = boot.argv()?;
    let mut log = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .custom_flags_nofollow()
        .open(console_log)
        .with_context(|| format!("creating {}", console_log.display()))?;
    let path = match (boot.vng.parent(), std::env::var_os("PATH")) {
        (Some(dir), Some(p)) => {
            let mut dirs = vec![dir.to_path_buf()];
            dirs.extend(std::env::split_paths(&p));
            std::env::join_paths(dirs)?
        }
        (_, p) => p.unwrap_or_default(),
    };
    let mut child = Command::new(boot.vng)
        .args(&argv)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {}", boot.vng.display()))?;
    let pgid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<String>();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe)
                .split(b'\n')
                .map_while(|l| l.ok())
            {
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                if tx.send(text).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let started = Instant::now();
    let mut last = Instant::now();
    let mut tail: std::collections::VecDeque<String> = Default::default();
    let mut stop: Option<Ended> = None;
    let mut pipes_open = true;
    let status = loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let _ = writeln!(log, "{line}");
                last = Instant::now();
                if !line.trim().is_empty() {
                    on_line(&line);
                    tail.push_back(line);
                    if tail.len() > TAIL_LINES {
                        tail.pop_front();
                    }
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => pipes_open = false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Some(st) = child.try_wait()? {
            if !pipes_open || stop.is_some() {
                break st;
            }
            // Exited: drain what the readers still hold.
            if rx.recv_timeout(Duration::from_millis(500)).is_err() {
                break st;
            }
            continue;
        }
        if stop.is_none() {
            if crate::signals::stop_requested() {
                stop = Some(Ended::Interrupted);
            } else if last.elapsed() > idle || limit.is_some_and(|l| started.elapsed() > l) {
                stop = Some(Ended::Hung);
            }
            if stop.is_some() {
                kill_group(pgid, boot.pidfile);
            }
        }
    };
    // vng gone: its QEMU must be too (a vng killed hard leaves it).
    let _ = crate::state::stop_guest(boot.pidfile);
    let ended = stop.unwrap_or(Ended::Exited(status.code()));
    Ok(Outcome {
        ended,
        tail: tail.into(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// SIGTERM to vng's process group, then QEMU by its pidfile, then SIGKILL to the group.
fn kill_group(pgid: i32, pidfile: &Path) {
    // SAFETY: killpg on the group this process made for vng (process_group(0)).
    unsafe { libc::killpg(pgid, libc::SIGTERM) };
    let _ = crate::state::stop_guest(pidfile);
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: as above.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
}

/// Opening a file never through a symlink.
trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for std::fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o600).custom_flags(libc::O_NOFOLLOW)
    }
}

/// Whether KVM boots `kernel` here: `/dev/kvm` may exist and still hang a stock kernel
/// (nested virtualisation without the features it needs), so a minimal guest is booted
/// and must answer within `limit`. `Err` says why not.
pub fn kvm_works(vng: &Path, kernel: &Kernel, work: &Path, limit: Duration) -> Result<(), String> {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_err()
    {
        return Err("no usable /dev/kvm".into());
    }
    let pidfile = work.join("kvm-check.pid");
    let log = work.join("kvm-check.log");
    let _ = std::fs::remove_file(&log);
    let boot = Boot {
        vng,
        kernel,
        kvm: true,
        vcpus: 1,
        memory_bytes: 512 << 20,
        shared: None,
        disk: None,
        pidfile: &pidfile,
        script: "echo fsarena-kvm-ok".into(),
    };
    let seen = std::sync::atomic::AtomicBool::new(false);
    let out = run(&boot, &log, limit, Some(limit), &|l| {
        if l.contains("fsarena-kvm-ok") {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    })
    .map_err(|e| format!("{e:#}"))?;
    let _ = std::fs::remove_file(&log);
    match out.ended {
        Ended::Exited(Some(0)) if seen.into_inner() => Ok(()),
        Ended::Hung => Err(format!(
            "/dev/kvm is there but a KVM guest did not boot within {} s",
            limit.as_secs()
        )),
        Ended::Interrupted => Err("interrupted".into()),
        Ended::Exited(_) => Err(format!("a KVM guest failed:{}", out.tail_text())),
    }
}
