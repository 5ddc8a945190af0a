//! A run watched from outside: started with `FSARENA_LOG=1` so that every step it takes
//! (mkfs, mount, umount, each phase) is a line on stderr, waited for up to a given line,
//! then signalled or killed, and timed to its exit.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `fsarena run` and the stderr lines it printed.
pub struct Watched {
    pub child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl Watched {
    /// Starts `fsarena ARGS` (`--image-dir` and `--db` are the caller's to give), logging
    /// its steps to stderr.
    pub fn start(args: &[&str]) -> Watched {
        let mut child = Command::new(super::bin())
            .args(args)
            .env("FSARENA_LOG", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fsarena");
        let stderr = child.stderr.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx2.send(line);
            }
        });
        Watched {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits until a line contains `mark`; false when the run ended or `limit` passed
    /// first.
    pub fn wait_for(&mut self, mark: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                Ok(line) => {
                    let hit = line.contains(mark);
                    self.seen.push(line);
                    if hit {
                        return true;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        false
    }

    /// Sends `sig`, then waits up to `limit` for the exit; returns the exit status and the
    /// time from the signal to the exit (killed with SIGKILL after `limit`, then `None`).
    pub fn signal_and_time(&mut self, sig: i32, limit: Duration) -> (Option<ExitStatus>, Duration) {
        let sent = Instant::now();
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        let status = self.wait_until(sent + limit);
        (status, sent.elapsed())
    }

    /// Waits for the exit until `deadline`; kills the run and returns `None` after it.
    pub fn wait_until(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                self.drain();
                return Some(st);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.drain();
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads what is left of the output into `seen`.
    pub fn drain(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// The output so far, one line each, for failure messages.
    pub fn text(&self) -> String {
        self.seen.join("\n")
    }
}

/// What fsarena left under `dir`: mounts, loop devices, images, state files and
/// temporary files, one description each; empty when nothing.
pub fn leftovers(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = super::mounts_under(dir)
        .into_iter()
        .map(|m| format!("mounted: {m}"))
        .collect();
    out.extend(
        super::loops_under(dir)
            .into_iter()
            .map(|l| format!("attached: {l}")),
    );
    out.extend(
        super::images_under(dir)
            .into_iter()
            .map(|p| format!("image: {}", p.display())),
    );
    for sub in ["state", "mnt"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // The directory's ownership marker stays.
            if !name.starts_with('.') {
                out.push(format!("{sub}/{name}"));
            }
        }
    }
    out.extend(
        postgres_under(dir)
            .into_iter()
            .map(|pid| format!("PostgreSQL server running: pid {pid}")),
    );
    out.extend(
        recorders_under(dir)
            .into_iter()
            .map(|pid| format!("write recorder running: pid {pid}")),
    );
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "tmp") {
                out.push(format!("temporary file: {}", p.display()));
            }
        }
    }
    out
}

/// Pids of live `postgres` processes (a server of the pgbench workload, or one of its
/// backends) whose command line names a path under `dir`.
pub fn postgres_under(dir: &Path) -> Vec<i32> {
    processes_under(dir, |args| {
        args.first().is_some_and(|a| a.ends_with("postgres"))
    })
}

/// The pids of the write recorders (`fsarena record-serve`) serving a mount under `dir`.
pub fn recorders_under(dir: &Path) -> Vec<i32> {
    processes_under(dir, |args| args.iter().any(|a| a == "record-serve"))
}

/// The pids of processes `is` accepts (by their argv) with an argument naming a path
/// under `dir`.
fn processes_under(dir: &Path, is: fn(&[String]) -> bool) -> Vec<i32> {
    let want = dir.to_string_lossy().into_owned();
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if is(&args) && args.iter().any(|a| a.contains(&want)) {
            pids.push(pid);
        }
    }
    pids
}
