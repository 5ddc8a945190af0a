//! A PostgreSQL server of fsarena's own on the target: `initdb` into a directory of the
//! work directory, `postgres` started listening only on a Unix socket in a directory of
//! its own (`listen_addresses=''`, no TCP port), stopped fast, then immediately, then
//! killed — when the trial ends, fails or is stopped, and by `fsarena cleanup` after a
//! `kill -9` (the data and socket directories are in the run's state file before the
//! server starts: [`Resource::Postgres`]).
//!
//! As root the server runs as the `postgres` user (PostgreSQL refuses root), which must be
//! able to reach the data directory; otherwise as the user running fsarena.

use crate::owned::{Removal, MARKER};
use crate::state::{Resource, State};
use crate::workload::IoContext;
use anyhow::{anyhow, bail, Context, Result};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a server may take to accept connections (a guest kernel under emulation is
/// slow; crash recovery after an immediate stop replays the WAL).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The user the server runs as.
#[derive(Clone, Copy, Debug)]
pub struct ServerUser {
    pub uid: u32,
    pub gid: u32,
}

impl ServerUser {
    /// `postgres` when running as root, else the user running fsarena.
    pub fn pick() -> Result<Self> {
        if !crate::probe::sys::is_root() {
            // SAFETY: getuid/getgid cannot fail.
            return Ok(unsafe {
                Self {
                    uid: libc::getuid(),
                    gid: libc::getgid(),
                }
            });
        }
        let name = c"postgres";
        // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
        let pw = unsafe { libc::getpwnam(name.as_ptr()) };
        if pw.is_null() {
            bail!(
                "PostgreSQL refuses to run as root and there is no `postgres` user to run it \
                 as (Debian's postgresql package creates it: `fsarena setup --workload \
                 pgbench`)"
            );
        }
        // SAFETY: pw is non-null and points to a passwd record.
        let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
        Ok(Self { uid, gid })
    }

    /// Why this user cannot reach `dir`: the first directory from `/` down to it that
    /// it may not search.
    fn cannot_reach(&self, dir: &Path) -> Option<String> {
        if self.uid == 0 {
            return None;
        }
        let mut chain: Vec<&Path> = dir.ancestors().collect();
        chain.reverse();
        for d in chain {
            let m = std::fs::metadata(d).ok()?;
            let mode = m.mode();
            let ok = if m.uid() == self.uid {
                mode & 0o100 != 0
            } else if m.gid() == self.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            };
            if !ok {
                return Some(format!(
                    "the server's user (uid {}) cannot enter {} (mode {:o}, owner uid {})",
                    self.uid,
                    d.display(),
                    mode & 0o7777,
                    m.uid()
                ));
            }
        }
        None
    }

    /// A command that runs as this user.
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        // SAFETY: getuid cannot fail.
        if self.uid != unsafe { libc::getuid() } {
            c.uid(self.uid).gid(self.gid);
        }
        c
    }
}

/// Settings given to the server on its command line (`-c name=value`).
pub type Settings = Vec<(String, String)>;

/// A database cluster made by `initdb` in `datadir`, not running.
pub struct Cluster {
    pub bin: PathBuf,
    pub datadir: PathBuf,
    pub user: ServerUser,
    /// The server's console output (the trial's log).
    pub log: PathBuf,
}

impl Cluster {
    /// Runs `initdb` into `datadir` (made here, mode 0700, owned by the server's user),
    /// with trust authentication (only the socket reaches it, in a directory only the
    /// server's user and root may enter) and the C locale. Untimed.
    pub fn init(bin: &Path, datadir: &Path, log: &Path) -> Result<Self> {
        let user = ServerUser::pick()?;
        let parent = datadir.parent().unwrap_or(Path::new("/"));
        if let Some(why) = user.cannot_reach(parent) {
            bail!("the PostgreSQL data directory {}: {why}", datadir.display());
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(datadir)
            .on("create", datadir)?;
        std::os::unix::fs::chown(datadir, Some(user.uid), Some(user.gid)).on("chown", datadir)?;
        let out = open_log(log)?;
        let err = out.try_clone().on("dup", log)?;
        let status = user
            .command(&bin.join("initdb"))
            .arg("-D")
            .arg(datadir)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-instructions",
            ])
            .current_dir(parent)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .status()
            .with_context(|| format!("starting {}", bin.join("initdb").display()))?;
        crate::cmd::record(&format!("initdb -D {}", datadir.display()));
        if !status.success() {
            bail!(
                "initdb -D {} failed ({status}); log {}, last lines:\n{}",
                datadir.display(),
                log.display(),
                crate::workload::command::tail(log)
            );
        }
        Ok(Self {
            bin: bin.to_path_buf(),
            datadir: datadir.to_path_buf(),
            user,
            log: log.to_path_buf(),
        })
    }

    /// What the server would run with for `name` given `settings` (`postgres -C`), without
    /// starting it: how the report names the server's defaults.
    pub fn setting(&self, settings: &Settings, name: &str) -> Result<String> {
        let mut c = self.user.command(&self.bin.join("postgres"));
        c.arg("-D").arg(&self.datadir).arg("-C").arg(name);
        for (k, v) in settings {
            c.arg("-c").arg(format!("{k}={v}"));
        }
        let out = c
            .current_dir(&self.datadir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("postgres -C {name}"))?;
        if !out.status.success() {
            bail!(
                "postgres -C {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Starts the server with `settings`, recorded in `state` first, inside memory group
    /// `limit` when given (it enters the group before it execs, so every process it
    /// starts is in it); returns once it accepts connections on its socket.
    pub fn start(
        &self,
        settings: &Settings,
        state: Option<Arc<State>>,
        limit: Option<&crate::provision::memlimit::MemoryLimit>,
    ) -> Result<Server> {
        let sockets = socket_dir(self.user)?;
        let resource = Resource::Postgres {
            datadir: self.datadir.clone(),
            sockets: sockets.clone(),
            pid: None,
        };
        if let Some(s) = &state {
            if let Err(e) = s.add(resource.clone()) {
                let _ = crate::owned::remove(&sockets, Removal::Tree);
                return Err(e);
            }
        }
        let mut server = Server {
            child: None,
            sockets,
            datadir: self.datadir.clone(),
            state,
            resource,
        };
        let out = open_log(&self.log)?;
        let err = out.try_clone().on("dup", &self.log)?;
        let mut c = self.user.command(&self.bin.join("postgres"));
        c.arg("-D")
            .arg(&self.datadir)
            .args(["-c", "listen_addresses="])
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                server.sockets.display()
            ));
        for (k, v) in settings {
            c.arg("-c").arg(format!("{k}={v}"));
        }
        if let Some(limit) = limit {
            enter_on_exec(&mut c, &limit.procs_file())?;
        }
        crate::cmd::record(&format!(
            "postgres -D {} (socket in {})",
            self.datadir.display(),
            server.sockets.display()
        ));
        let child = c
            .current_dir(&self.datadir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own process group: a Ctrl-C is fsarena's to handle, which stops it.
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", self.bin.join("postgres").display()))?;
        let pid = child.id() as i32;
        server.child = Some(child);
        // The record gains the pid: the new one is written before the old one goes, so a
        // kill between the two leaves both (cleanup stops the server once).
        if let Some(s) = &server.state {
            let with_pid = Resource::Postgres {
                datadir: self.datadir.clone(),
                sockets: server.sockets.clone(),
                pid: Some(pid),
            };
            s.add(with_pid.clone())?;
            s.remove(&server.resource)?;
            server.resource = with_pid;
        }
        server.wait_ready(&self.log)?;
        Ok(server)
    }
}

/// Makes the process `c` starts write its own pid to `procs` (a control group's
/// `cgroup.procs`, opened here, as root) before it execs: the server is in the group from
/// its first instruction, and so is every process it forks.
fn enter_on_exec(c: &mut Command, procs: &Path) -> Result<()> {
    use std::os::fd::{AsRawFd, OwnedFd};
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(procs)
        .with_context(|| format!("opening {}", procs.display()))?;
    let fd: OwnedFd = file.into();
    // SAFETY: the closure runs in the forked child before exec and only formats into a
    // stack buffer and calls write(2), both async-signal-safe; `fd` lives in the closure.
    unsafe {
        c.pre_exec(move || {
            let mut buf = [0u8; 16];
            let mut n = libc::getpid() as u32;
            let mut at = buf.len();
            loop {
                at -= 1;
                buf[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            let len = buf.len() - at;
            let wrote = libc::write(fd.as_raw_fd(), buf[at..].as_ptr().cast(), len);
            if wrote != len as isize {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// Opens the trial's log for appending.
fn open_log(log: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .on("open the log", log)
}

/// A new directory for the server's socket, only its user may enter: under `/run` as
/// root (short, root's), else under the temporary directory; it carries fsarena's marker
/// so that `cleanup` may remove it.
fn socket_dir(user: ServerUser) -> Result<PathBuf> {
    let base = if crate::probe::sys::is_root() && Path::new("/run").is_dir() {
        PathBuf::from("/run")
    } else {
        std::env::temp_dir()
    };
    let dir = tempfile::Builder::new()
        .prefix("fsarena-pg-")
        .tempdir_in(&base)
        .with_context(|| format!("creating a socket directory in {}", base.display()))?
        .keep();
    let made = (|| -> std::io::Result<()> {
        std::fs::write(dir.join(MARKER), "PostgreSQL socket directory of an fsarena run\n")?;
        std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
    })();
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(anyhow!("preparing {}: {e}", dir.display()));
    }
    Ok(dir)
}

/// A running server; stopped when dropped.
pub struct Server {
    child: Option<Child>,
    /// The directory of its socket.
    pub sockets: PathBuf,
    datadir: PathBuf,
    state: Option<Arc<State>>,
    resource: Resource,
}

impl Server {
    /// CPU seconds the server has used so far, its processes included
    /// ([`crate::probe::disturb::tree_cpu_s`]); `None` when it is not running.
    pub fn cpu_s(&self) -> Option<f64> {
        crate::probe::disturb::tree_cpu_s(self.child.as_ref()?.id())
    }

    /// Waits until `postmaster.pid` says `ready`, failing with the log's end when the
    /// server exits first or takes longer than [`START_TIMEOUT`].
    fn wait_ready(&mut self, log: &Path) -> Result<()> {
        let t = Instant::now();
        let pidfile = self.datadir.join("postmaster.pid");
        loop {
            crate::signals::check_stop()?;
            if let Some(child) = self.child.as_mut() {
                if let Some(status) = child.try_wait().context("waiting for postgres")? {
                    self.child = None;
                    bail!(
                        "the PostgreSQL server exited as it started ({status}); log {}, \
                         last lines:\n{}",
                        log.display(),
                        crate::workload::command::tail(log)
                    );
                }
            }
            // The eighth line is the postmaster's status (PostgreSQL 10 and later).
            let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if text.lines().nth(7).is_some_and(|l| l.trim() == "ready") {
                return Ok(());
            }
            if t.elapsed() > START_TIMEOUT {
                bail!(
                    "the PostgreSQL server did not accept connections within {} s; log {}, \
                     last lines:\n{}",
                    START_TIMEOUT.as_secs(),
                    log.display(),
                    crate::workload::command::tail(log)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server: fast shutdown (SIGINT), after 20 s immediate (SIGQUIT), after 5 s
    /// more SIGKILL; then forgets it in the state file and removes its socket directory.
    pub fn stop(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            let pid = child.id() as i32;
            let mut gone = false;
            'signals: for (signal, tenths) in
                [(libc::SIGINT, 200), (libc::SIGQUIT, 50), (libc::SIGKILL, 50)]
            {
                // SAFETY: kill(2) on our own child, not yet reaped.
                unsafe { libc::kill(pid, signal) };
                for _ in 0..tenths {
                    if child.try_wait().ok().flatten().is_some() {
                        gone = true;
                        break 'signals;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            if !gone {
                bail!(
                    "the PostgreSQL server (pid {pid}) of {} did not stop",
                    self.datadir.display()
                );
            }
        }
        crate::owned::remove(&self.sockets, Removal::Tree)?;
        if let Some(s) = &self.state {
            s.remove(&self.resource)?;
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
