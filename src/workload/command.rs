//! The user's own commands, timed on each filesystem, as the seed article "Ext2, ReiserFS
//! and XFS Benchmarks" (Ricardo Galli, 22 May 2001, "Linux Kernel Compilation") did by
//! hand: `cp -a /usr/linux /mnt/`, `make bzImage`, `make clean` and `rm -rf /mnt/linux`,
//! three times, CPU and real seconds each, on a freshly mounted partition.
//!
//! `command:setup='cp -a /usr/src/linux .',run='make -C linux -j2 bzImage',clean='make -C
//! linux clean'` runs each given command with `/bin/sh -c` in the trial's work directory
//! (an empty directory on the freshly made filesystem), stdin from /dev/null, the variables
//! of `env` (`NAME=VALUE;NAME=VALUE`) added to fsarena's environment. A variable named
//! like a secret (`PGPASSWORD`, `API_TOKEN`, see [`crate::secret`]) reaches the commands
//! as given but is `***` in the stored parameters, the log's headers and errors.
//!
//! **Phases**: `setup` (when given), `run`, `clean` (when given) — each a measured phase,
//! so the cache policy applies before each (`--cache cold`: caches dropped and loop targets
//! remounted, as Galli remounted for every run) and setup and clean get their own figures,
//! as the article's `cp -a` and `make clean` did. A phase is one operation ([`Op::Other`],
//! its latency the command's own wall time) and, under `--sync end`, a syncfs inside the
//! timing ([`Op::Fsync`]), so data the command left dirty is counted; `--sync none` leaves
//! it out (flagged `not-synced`).
//!
//! **Figures**: `wall_s` (command + syncfs); extras `command_s` (the command alone, the
//! article's "Real"), `children_cpu_user_s` and `children_cpu_sys_s` (getrusage
//! RUSAGE_CHILDREN before and after waiting for the shell: every descendant the shell
//! waited for; the article's "CPU"). The phase's `cpu_user_s`/`cpu_sys_s` already include
//! the children too (the probe reads SELF + CHILDREN), plus fsarena's own small share.
//!
//! **Log**: the commands' stdout and stderr go, each phase under a `==> fsarena` header
//! line, to the trial's log file (`<image-dir>/logs/<run id>/<target>-<label>-rep<N>.log`),
//! kept after the run and recorded as the trial's `log`. A non-zero exit fails the trial
//! with the exit status, the log's path and its last lines in the error; the run goes on
//! with the next trial. On Ctrl-C the command's process group gets SIGTERM (SIGKILL 2 s
//! later).

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::probe::sys::children_cpu_times;
use crate::signals::check_stop;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, bail, Result};
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines of the log's end quoted in a failure.
pub const TAIL_LINES: usize = 20;
/// Bytes of the log's end read for the tail at most.
pub const TAIL_BYTES: u64 = 8192;

const fn text(name: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help,
    }
}

const PARAMS: &[ParamSpec] = &[
    text(
        "run",
        "the timed command, run with /bin/sh -c in the work directory (required; quote a \
         command with commas: run='a,b')",
    ),
    text("setup", "command run before, as its own phase (optional)"),
    text("clean", "command run after, as its own phase (optional)"),
    text(
        "env",
        "variables for the commands: NAME=VALUE;NAME=VALUE (quote values with commas)",
    ),
];

const fn phase(name: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind: PhaseKind::Write,
        // A command is timed, not counted: its headline is its seconds.
        primary: Primary::Seconds,
        ops_unit: "commands/s",
    }
}

const SETUP: PhaseSpec = phase("setup");
const RUN: PhaseSpec = phase("run");
const CLEAN: PhaseSpec = phase("clean");

/// The command's own wall time and its children's CPU time (CPU seconds have no better
/// side, like the probe's `cpu_user_s`: less may mean less work or less parallelism).
pub const FIGURES: &[Figure] = &[
    Figure::lower("command_s", "s"),
    Figure::neither("children_cpu_user_s", "s"),
    Figure::neither("children_cpu_sys_s", "s"),
];

/// The `command` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "command",
    about: "your own commands (setup, run, clean) with /bin/sh in the work directory: wall \
            and children's CPU; output kept in the trial's log",
    params: PARAMS,
    phases: &[SETUP, RUN, CLEAN],
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

/// The validated `command` configuration.
#[derive(Clone, Debug)]
pub struct UserCommands {
    setup: Option<String>,
    run: String,
    clean: Option<String>,
    env: Vec<(String, String)>,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let run = p.text("run").ok_or_else(|| {
        usage("command: run= is required, e.g. command:run='make -j2',setup='tar xf /src/x.tar'")
    })?;
    let env = parse_env(p.text("env").unwrap_or("")).map_err(|e| usage(format!("command: {e}")))?;
    for (_, value) in env.iter().filter(|(k, _)| crate::secret::is_secret_name(k)) {
        crate::secret::remember(value);
    }
    Ok(Box::new(UserCommands {
        setup: p.text("setup").map(str::to_string),
        run: run.to_string(),
        clean: p.text("clean").map(str::to_string),
        env,
    }))
}

/// Parses `NAME=VALUE;NAME=VALUE` (empty items ignored; a value may be empty).
pub fn parse_env(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = item.split_once('=').ok_or_else(|| {
            format!("env: '{item}' is not NAME=VALUE (e.g. env=CC=clang;CFLAGS=-O2)")
        })?;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "env: '{name}' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
            ));
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// What one command's run gave, beside the phase's own figures.
#[derive(Clone, Copy, Default)]
struct Ran {
    command_s: f64,
    user_s: f64,
    sys_s: f64,
}

impl Workload for UserCommands {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let log = cx.log_file()?;
        let steps = [
            (SETUP, self.setup.as_deref()),
            (RUN, Some(self.run.as_str())),
            (CLEAN, self.clean.as_deref()),
        ];
        for (spec, cmd) in steps {
            let Some(cmd) = cmd else { continue };
            let workdir = cx.workdir().to_path_buf();
            let ran = Mutex::new(Ran::default());
            cx.phase(&spec, 1, |w| {
                let r = self.execute(w, spec.name, cmd, &workdir, &log)?;
                *ran.lock().unwrap_or_else(|e| e.into_inner()) = r;
                w.end_fs(&workdir).on("syncfs", &workdir)?;
                Ok(())
            })?;
            let r = *ran.lock().unwrap_or_else(|e| e.into_inner());
            cx.note("command_s", r.command_s);
            cx.note("children_cpu_user_s", r.user_s);
            cx.note("children_cpu_sys_s", r.sys_s);
        }
        Ok(())
    }
}

impl UserCommands {
    /// Runs `cmd` as phase `name`, output appended to `log`; one [`Op::Other`] timed from
    /// spawn to exit. Fails on a non-zero exit with the log's tail.
    fn execute(
        &self,
        w: &mut Worker,
        name: &str,
        cmd: &str,
        dir: &Path,
        log: &Path,
    ) -> Result<Ran> {
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .on("open the log", log)?;
        // The command as the log and errors show it: secrets hidden (the real values
        // reach the shell through its environment and argv only).
        let shown = crate::secret::redact_value(cmd);
        writeln!(out, "==> fsarena {name}: {shown}").on("write", log)?;
        let err = out.try_clone().on("dup", log)?;
        let cpu0 = children_cpu_times();
        let t = w.start();
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(dir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own process group: Ctrl-C is fsarena's to handle; the watcher ends the
            // whole group (make's children included).
            .process_group(0)
            .spawn()
            .map_err(|e| anyhow!("{name}: starting /bin/sh -c {shown:?}: {e}"))?;
        let done = Arc::new(AtomicBool::new(false));
        watch_for_stop(child.id() as i32, Arc::clone(&done));
        let status = child.wait();
        done.store(true, Ordering::Relaxed);
        w.done(Op::Other, t, 0);
        let command_s = t.elapsed().as_secs_f64();
        let cpu1 = children_cpu_times();
        let status = status.map_err(|e| anyhow!("{name}: waiting for {shown:?}: {e}"))?;
        check_stop()?;
        if !status.success() {
            bail!(
                "{name} command {shown:?} {}; log {}, last lines:\n{}",
                how_it_ended(status),
                log.display(),
                tail(log)
            );
        }
        Ok(Ran {
            command_s,
            user_s: cpu1.user_s - cpu0.user_s,
            sys_s: cpu1.sys_s - cpu0.sys_s,
        })
    }
}

/// How a process that failed ended, as errors say it: `exited with status 3`, `was
/// killed by signal 9`.
pub(crate) fn how_it_ended(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => format!("failed ({status})"),
    }
}

/// Runs a database engine's program (pgbench, db_bench) as a step of a workload: `argv`
/// in `cwd`, stdin from /dev/null, stdout and stderr to `out` and `err`, in its own
/// process group, which gets SIGTERM on Ctrl-C ([`watch_for_stop`]); `tick` is called
/// every half second while it runs (progress). Its end is noticed within 10 ms, inside a
/// phase's time. Returns how it ended, once a stop request is ruled out.
pub(crate) fn run_engine(
    program: &Path,
    argv: &[String],
    cwd: &Path,
    out: std::fs::File,
    err: std::fs::File,
    tick: &dyn Fn(),
) -> Result<std::process::ExitStatus> {
    let name = program.file_name().unwrap_or_default().to_string_lossy();
    crate::cmd::record(&format!("{name} {}", argv.join(" ")));
    let mut child = Command::new(program)
        .args(argv)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow!("starting {}: {e}", program.display()))?;
    let done = Arc::new(AtomicBool::new(false));
    watch_for_stop(child.id() as i32, Arc::clone(&done));
    let mut shown = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {
                if shown.elapsed() >= Duration::from_millis(500) {
                    tick();
                    shown = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => break Err(e),
        }
    };
    done.store(true, Ordering::Relaxed);
    let status = status.map_err(|e| anyhow!("waiting for {name}: {e}"))?;
    check_stop()?;
    Ok(status)
}

/// A thread that sends SIGTERM to process group `pgid` when a stop is requested (SIGKILL
/// 2 s later), and ends once `done` is set.
fn watch_for_stop(pgid: i32, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut killed_at: Option<Instant> = None;
        while !done.load(Ordering::Relaxed) {
            if crate::signals::stop_requested() {
                let sig = match killed_at {
                    None => Some(libc::SIGTERM),
                    Some(t) if t.elapsed() > Duration::from_secs(2) => Some(libc::SIGKILL),
                    Some(_) => None,
                };
                if let Some(sig) = sig {
                    // SAFETY: kill has no memory effects; a negative pid names the group.
                    unsafe { libc::kill(-pgid, sig) };
                    killed_at.get_or_insert_with(Instant::now);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

/// The last [`TAIL_LINES`] lines of `log` (from its last [`TAIL_BYTES`] bytes).
pub fn tail(log: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(log) else {
        return "(log unreadable)".into();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::result::PhaseResult;
    use crate::workload::testutil::in_context;
    use crate::workload::WorkloadSpec;

    #[test]
    fn env_syntax() {
        assert_eq!(
            parse_env("CC=clang; CFLAGS=-O2 -g;EMPTY=;").unwrap(),
            [
                ("CC".to_string(), "clang".to_string()),
                ("CFLAGS".to_string(), "-O2 -g".to_string()),
                ("EMPTY".to_string(), String::new())
            ]
        );
        assert_eq!(parse_env("A=b=c").unwrap()[0].1, "b=c");
        for bad in ["CC", "1X=2", "A-B=1", "=x"] {
            assert!(parse_env(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parameters() {
        for bad in [
            "",
            "setup=true",
            "run=true,env=X",
            "run=echo a,b",
            "cmd=true",
        ] {
            let err = WorkloadSpec::parse(&format!("command:{bad}")).err();
            let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
            assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
        }
        let s = WorkloadSpec::parse("command:run='echo a,b',env='X=1,2;Y=3'").unwrap();
        assert_eq!(s.params.text("run"), Some("echo a,b"));
        assert_eq!(s.params.text("env"), Some("X=1,2;Y=3"));
    }

    /// Runs `spec` in a fresh context: the phases or the error, the log, the work directory.
    fn run(spec: &str) -> (Result<Vec<PhaseResult>, String>, String, String) {
        let spec = WorkloadSpec::parse(spec).unwrap();
        let workload = (spec.info.build)(&spec.params).unwrap();
        in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            let r = workload.run(cx);
            let log = std::fs::read_to_string(cx.used_log().unwrap()).unwrap();
            let dir = cx.workdir().display().to_string();
            let r = r
                .map(|_| cx.phases().to_vec())
                .map_err(|e| format!("{e:#}"));
            (r, log, dir)
        })
    }

    #[test]
    fn phases_env_cwd_and_log() {
        let (phases, log, dir) = run(
            "command:setup='echo made > f; pwd',run='cat f; echo \"$GREETING, $WHO\" >&2',\
             clean='rm f',env='GREETING=hello, world;WHO=you'",
        );
        let phases = phases.unwrap();
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["setup", "run", "clean"]);
        for p in &phases {
            assert_eq!(p.ops, 1);
            assert!(p.extra["command_s"] > 0.0 && p.extra["command_s"] <= p.wall_s);
            let fsync = p
                .lat_by_op
                .iter()
                .find(|o| o.op == "fsync")
                .map(|o| o.count);
            assert_eq!(fsync, Some(1), "syncfs under --sync end");
        }
        assert!(
            log.contains("==> fsarena setup: echo made > f; pwd"),
            "{log}"
        );
        assert!(
            log.contains(&format!("\n{dir}\n")),
            "cwd is the work directory: {log}"
        );
        assert!(
            log.contains("made\n") && log.contains("hello, world, you\n"),
            "{log}"
        );
        assert!(log.contains("==> fsarena clean: rm f"), "{log}");
    }

    #[test]
    fn secrets_reach_the_command_but_not_the_log_headers_or_errors() {
        let (r, log, _) = run(
            "command:run='echo got=$MY_PASSWORD; PGPASSWORD=hunter3 false',\
             env='MY_PASSWORD=hunter2 x,y;CC=gcc'",
        );
        let err = r.unwrap_err();
        assert!(
            log.contains("got=hunter2 x,y\n"),
            "the command got it: {log}"
        );
        let headers: Vec<&str> = log.lines().filter(|l| l.starts_with("==>")).collect();
        assert!(headers.iter().all(|l| !l.contains("hunter")), "{headers:?}");
        let err_lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("got=")).collect();
        assert!(err_lines.iter().all(|l| !l.contains("hunter")), "{err}");
        let spec = WorkloadSpec::parse(
            "command:run='PGPASSWORD=hunter3 psql',env='MY_PASSWORD=hunter2 x,y;CC=gcc'",
        )
        .unwrap();
        let shown = spec.params.to_text_map();
        assert_eq!(shown["env"], "MY_PASSWORD=***;CC=gcc");
        assert_eq!(shown["run"], "PGPASSWORD=***");
    }

    #[test]
    fn children_cpu_is_counted() {
        let (phases, _, _) = run("command:run='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'");
        let p = &phases.unwrap()[0];
        assert!(p.extra["children_cpu_user_s"] > 0.05, "{:?}", p.extra);
        assert!(p.cpu_user_s >= p.extra["children_cpu_user_s"] * 0.99);
    }

    #[test]
    fn a_failure_carries_status_and_tail() {
        let (r, log, _) = run("command:setup='echo one',run='for i in $(seq 1 50); do echo line$i; done; exit 3',clean='echo never'");
        let err = r.unwrap_err();
        assert!(err.contains("exited with status 3"), "{err}");
        assert!(err.contains("line50") && !err.contains("line30\n"), "{err}");
        assert!(err.contains("trial.log"), "{err}");
        assert!(
            !log.contains("never"),
            "clean does not run after a failure: {log}"
        );
    }
}
