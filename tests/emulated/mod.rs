//! Emulated hosts for MPI tests: N "hosts" on this machine, each a process holding its own
//! network, UTS and mount namespace (its own host name, its own tmpfs on `/var/tmp` with
//! an image directory), joined by veths to a bridge in a namespace of their own. Every
//! address lives only inside these namespaces: nothing leaves the machine. OpenMPI starts
//! its daemons through an rsh agent that enters a host's namespaces with `nsenter`
//! instead of ssh, and the ranks talk TCP over the bridge.
//!
//! Dropping [`Hosts`] kills every process left in the hosts' namespaces, detaches the
//! loop devices whose images lie in a host's image directory, and ends the namespaces.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The hosts' subnet (inside the namespaces only).
const NET: &str = "10.213.0";

/// One emulated host.
pub struct Host {
    /// `h1`, `h2`, …: its UTS host name.
    pub name: String,
    /// Its address on the bridge.
    pub addr: String,
    /// The process holding its namespaces.
    holder: Child,
    /// Its pid (the shell inside the namespaces, which `exec`s sleep).
    pub pid: u32,
    /// Its image directory, in its own view.
    pub img: PathBuf,
}

impl Host {
    /// A path of this host's view, as the test (outside) reaches it.
    pub fn view(&self, p: &Path) -> PathBuf {
        Path::new(&format!("/proc/{}/root", self.pid)).join(p.strip_prefix("/").unwrap_or(p))
    }

    /// `nsenter` into this host's namespaces, running `prog`.
    pub fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new("nsenter");
        c.args(["-t", &self.pid.to_string(), "-n", "-u", "-m", "--", prog]);
        c
    }

    /// Mount points in this host's view under its image directory.
    pub fn mounts(&self) -> Vec<String> {
        let text =
            std::fs::read_to_string(format!("/proc/{}/mountinfo", self.pid)).unwrap_or_default();
        let d = self.img.to_string_lossy().into_owned();
        text.lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|m| m.starts_with(&d))
            .map(String::from)
            .collect()
    }

    /// Loop devices whose backing file lies in this host's image directory (the name is
    /// unique to this host and test, so another host's or test's devices never match).
    pub fn loops(&self) -> Vec<String> {
        let out = self.cmd("losetup").arg("-a").output().expect("losetup -a");
        let d = self.img.to_string_lossy().into_owned();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(&d))
            .map(String::from)
            .collect()
    }

    /// Image files in this host's image directory.
    pub fn images(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.view(&self.img))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "img"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// What is left on this host: mounts, loop devices and images (empty when clean).
    pub fn leftovers(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .mounts()
            .into_iter()
            .map(|m| format!("mount {m}"))
            .collect();
        v.extend(self.loops().into_iter().map(|l| format!("loop {l}")));
        v.extend(
            self.images()
                .into_iter()
                .map(|i| format!("image {}", i.display())),
        );
        v.into_iter()
            .map(|s| format!("{}: {s}", self.name))
            .collect()
    }

    /// Pids of the processes in this host's network namespace, but its holder (and the
    /// `unshare` above it).
    pub fn processes(&self) -> Vec<i32> {
        let Ok(mine) = std::fs::read_link(format!("/proc/{}/ns/net", self.pid)) else {
            return Vec::new();
        };
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&p| p as u32 != self.pid && p as u32 != self.holder.id())
            .filter(|p| std::fs::read_link(format!("/proc/{p}/ns/net")).ok() == Some(mine.clone()))
            .collect()
    }

    /// The pid of a process in this host running program `name` (the file name of its
    /// first argument) with argument `arg`.
    pub fn find(&self, name: &str, arg: &str) -> Option<i32> {
        self.processes().into_iter().find(|p| {
            let c = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let argv: Vec<String> = c
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let prog = argv
                .first()
                .map(|a| Path::new(a).file_name().map(|f| f == name));
            prog == Some(Some(true)) && argv.iter().any(|a| a == arg)
        })
    }
}

/// N emulated hosts and their bridge.
pub struct Hosts {
    pub dir: tempfile::TempDir,
    bridge: Child,
    bridge_pid: u32,
    pub hosts: Vec<Host>,
}

/// Why the harness cannot run here, or `None`.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (namespaces, veths, loop devices)".into());
    }
    for (prog, pkg) in [
        ("mpirun", "openmpi-bin"),
        ("nsenter", "util-linux"),
        ("unshare", "util-linux"),
        ("ip", "iproute2"),
    ] {
        let ok = Command::new(prog)
            .arg(if prog == "ip" { "-V" } else { "--version" })
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return Some(format!("no {prog} (Debian: apt-get install {pkg})"));
        }
    }
    None
}

/// Starts `sh -c SCRIPT` under `unshare ARGS`; the script prints its pid first.
fn holder(unshare: &[&str], script: &str) -> Result<(Child, u32), String> {
    let mut child = Command::new("unshare")
        .args(unshare)
        .args(["--fork", "--kill-child", "sh", "-c"])
        .arg(format!("echo $$; {script}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("unshare: {e}"))?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid = lines.next().and_then(|l| l.ok()?.trim().parse().ok());
    let ready = lines
        .next()
        .and_then(|l| l.ok())
        .is_some_and(|l| l == "ready");
    match (pid, ready) {
        (Some(pid), true) => Ok((child, pid)),
        _ => {
            let _ = child.kill();
            let o = child.wait_with_output().map_err(|e| e.to_string())?;
            Err(format!(
                "unshare {}: {}",
                unshare.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
    }
}

fn run(c: &mut Command) -> Result<(), String> {
    let o = c.output().map_err(|e| format!("{c:?}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{c:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

impl Hosts {
    /// Makes `n` hosts, or says why it cannot.
    pub fn new(n: usize) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("fsarena-hosts-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let (bridge, bridge_pid) = holder(&["--net"], "echo ready; exec sleep 100000")?;
        let mut me = Self {
            dir,
            bridge,
            bridge_pid,
            hosts: Vec::new(),
        };
        let br = me.bridge_pid.to_string();
        let in_bridge = |args: &[&str]| {
            run(Command::new("nsenter")
                .args(["-t", &br, "-n", "ip"])
                .args(args))
        };
        in_bridge(&["link", "add", "br0", "type", "bridge"])?;
        in_bridge(&["link", "set", "br0", "up"])?;
        let tag = format!("{}-{}", std::process::id(), me.dir.path().display()).replace('/', "");
        for i in 1..=n {
            let name = format!("h{i}");
            let img = PathBuf::from(format!("/var/tmp/img-{name}-{tag}"));
            let script = format!(
                "hostname {name} && mount -t tmpfs -o size=1g fsarena-{name} /var/tmp && \
                 mkdir {} && echo ready && exec sleep 100000",
                img.display()
            );
            let (holder, pid) = holder(
                &["--net", "--uts", "--mount", "--propagation", "private"],
                &script,
            )?;
            let addr = format!("{NET}.{i}");
            me.hosts.push(Host {
                name,
                addr: addr.clone(),
                holder,
                pid,
                img,
            });
            let p = pid.to_string();
            let v = format!("v{i}");
            in_bridge(&[
                "link", "add", &v, "type", "veth", "peer", "name", "eth0", "netns", &p,
            ])?;
            in_bridge(&["link", "set", &v, "master", "br0", "up"])?;
            let in_host = |args: &[&str]| {
                run(Command::new("nsenter")
                    .args(["-t", &p, "-n", "ip"])
                    .args(args))
            };
            in_host(&["addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
            in_host(&["link", "set", "eth0", "up"])?;
            in_host(&["link", "set", "lo", "up"])?;
        }
        me.write_agent().map_err(|e| e.to_string())?;
        Ok(me)
    }

    /// The rsh agent OpenMPI runs instead of ssh (`AGENT HOST COMMAND…`), and the
    /// hostfile (one slot per host, by address).
    fn write_agent(&self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let mut cases = String::new();
        for h in &self.hosts {
            cases += &format!("  {}) pid={} ;;\n", h.addr, h.pid);
        }
        let agent = format!(
            "#!/bin/sh\nhost=$1; shift\ncase $host in\n{cases}  *) echo \"no host $host\" >&2; \
             exit 1 ;;\nesac\nexec nsenter -t $pid -n -u -m -- sh -c \"$*\"\n"
        );
        let path = self.dir.path().join("agent");
        std::fs::write(&path, agent)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        let hostfile: String = self
            .hosts
            .iter()
            .map(|h| format!("{} slots=1\n", h.addr))
            .collect();
        std::fs::write(self.dir.path().join("hostfile"), hostfile)
    }

    /// `mpirun` on the first host, with one rank per host (rank i on host i+1), the
    /// daemons started through the agent, TCP over the bridge, and `sigkill_s` seconds
    /// between the SIGTERM and the SIGKILL OpenMPI sends ranks when it ends a job.
    pub fn mpirun(&self, sigkill_s: u32) -> Command {
        let d = self.dir.path();
        let mut c = self.hosts[0].cmd("mpirun");
        c.arg("--allow-run-as-root")
            .arg("--hostfile")
            .arg(d.join("hostfile"))
            .args(["-np", &self.hosts.len().to_string(), "--map-by", "node"])
            .args(["--mca", "plm_rsh_agent"])
            .arg(d.join("agent"))
            .args(["--mca", "btl", "tcp,self"])
            .args(["--mca", "btl_tcp_if_include", &format!("{NET}.0/24")])
            .args(["--mca", "oob_tcp_if_include", &format!("{NET}.0/24")])
            .args(["--mca", "odls_base_sigkill_timeout", &sigkill_s.to_string()])
            .args(["-x", "COLUMNS"])
            .current_dir(d)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("COLUMNS", "200");
        c
    }

    /// `mpirun … fsarena --db DB run --mpi MODE --reps 1 --quiet --image-dir IMG ARGS…`,
    /// where DB and IMG are each host's own (`/var/tmp/…` in its view).
    pub fn fsarena(&self, sigkill_s: u32, mode: &str, args: &[&str]) -> Command {
        let mut c = self.mpirun(sigkill_s);
        // Every host's image directory has its own name; a rank finds its own through
        // its host name (the agent's shell expands it on each host).
        c.args(["sh", "-c"]).arg(format!(
            "exec {} --db {} run --mpi {mode} --reps 1 --quiet --image-dir \
             /var/tmp/img-$(hostname)-{} \"$@\"",
            env!("CARGO_BIN_EXE_fsarena"),
            self.db().display(),
            self.tag()
        ));
        c.arg("fsarena").args(args);
        c
    }

    fn tag(&self) -> String {
        let img = self.hosts[0].img.to_string_lossy().into_owned();
        img.split_once(&format!("img-{}-", self.hosts[0].name))
            .map(|(_, t)| t.to_string())
            .unwrap_or_default()
    }

    /// Rank 0's database, in the first host's view.
    pub fn db(&self) -> PathBuf {
        self.hosts[0].img.join("t.db")
    }

    /// The stored run (from outside, through the first host's view).
    pub fn stored_run(&self) -> fsarena::result::RunResult {
        // SQLite resolves symbolic links, and /proc/PID/root reads as "/": a copy is read.
        let copy = self.dir.path().join("copy");
        let _ = std::fs::create_dir(&copy);
        for ext in ["", "-wal"] {
            let from = self.hosts[0].view(&self.db());
            let from = PathBuf::from(format!("{}{ext}", from.display()));
            if from.exists() {
                std::fs::copy(&from, copy.join(format!("t.db{ext}"))).expect("copy the database");
            }
        }
        let run = super::common::mpi::stored_run(&copy.join("t.db"));
        // As written, not as `history` shows a run whose process is gone.
        let raw: String = rusqlite::Connection::open(copy.join("t.db"))
            .and_then(|c| c.query_row("SELECT status FROM runs", [], |r| r.get(0)))
            .expect("the run's status");
        assert_eq!(
            raw, run.status,
            "the run is stored as it ended, not left running"
        );
        run
    }

    /// What is left on any host (empty when all are clean).
    pub fn leftovers(&self) -> Vec<String> {
        self.hosts.iter().flat_map(Host::leftovers).collect()
    }

    /// Waits up to `limit` for every host but `except` to be clean; how long it took, or
    /// what is left.
    pub fn wait_clean(
        &self,
        since: Instant,
        limit: Duration,
        except: Option<usize>,
    ) -> Result<Duration, Vec<String>> {
        loop {
            let left: Vec<String> = (0..self.hosts.len())
                .filter(|&i| Some(i) != except)
                .flat_map(|i| self.hosts[i].leftovers())
                .collect();
            if left.is_empty() {
                return Ok(since.elapsed());
            }
            if since.elapsed() > limit {
                return Err(left);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Crashes host `i`: every process on it dies at once (its mounts and loop devices
    /// stay, as after a reboot they would need `fsarena cleanup`).
    pub fn crash(&self, i: usize) {
        // Stopped first, so that none sees another die and reacts.
        let all = self.hosts[i].processes();
        for sig in [libc::SIGSTOP, libc::SIGKILL] {
            for &p in &all {
                // SAFETY: kill has no memory effects; the pid is in a namespace we made.
                unsafe { libc::kill(p, sig) };
            }
        }
    }

    /// Takes host `i`'s link down (a partition).
    pub fn link_down(&self, i: usize) {
        run(self.hosts[i]
            .cmd("ip")
            .args(["link", "set", "eth0", "down"]))
        .expect("ip link set eth0 down");
    }
}

/// Waits for `child` up to `limit`; kills it (and says so) when it takes longer.
pub fn wait_for(child: &mut Child, limit: Duration) -> (Option<i32>, bool) {
    let started = Instant::now();
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return (st.code(), true);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, false);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The output of a finished `child` whose stdout and stderr were piped to files.
pub fn output_of(c: &mut Command) -> Output {
    c.output().expect("running mpirun")
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for h in &self.hosts {
            for p in h.processes() {
                // SAFETY: kill has no memory effects; the pid is in a namespace we made.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
        std::thread::sleep(Duration::from_millis(200));
        for h in &self.hosts {
            // Unmount what a killed rank left, then detach its loop devices (their images
            // are in this host's tmpfs, which goes with its mount namespace).
            for m in h.mounts().iter().rev() {
                let _ = h.cmd("umount").args(["-l", m]).output();
            }
            // Read here too (a host whose namespace is gone shows its images' paths from
            // the root of their tmpfs): the directory's name is unique to this host and test.
            let name = h
                .img
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let all = Command::new("losetup").arg("-a").output();
            let all = all.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
            let mut devs: Vec<String> = all
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains(&format!("/{name}/")))
                .chain(h.loops().iter().map(String::as_str))
                .filter_map(|l| l.split(':').next().map(String::from))
                .collect();
            devs.sort();
            devs.dedup();
            for dev in devs {
                let _ = Command::new("losetup").args(["-d", &dev]).output();
            }
        }
        for h in &mut self.hosts {
            // SAFETY: as above.
            unsafe { libc::kill(h.pid as i32, libc::SIGKILL) };
            let _ = h.holder.kill();
            let _ = h.holder.wait();
        }
        let _ = self.bridge.kill();
        let _ = self.bridge.wait();
    }
}
