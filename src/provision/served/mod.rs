//! Served targets (`--fs nfs`, `nfs3`, `smb`): network filesystems fsarena provisions
//! whole, as the seeds measured NFS and smbfs. Each trial makes a fresh backing filesystem
//! (ext4 on a loop image, as `--fs ext4`), a server exports it — the kernel's NFS server
//! (v4.2 or v3) or Samba (SMB 3.1.1) — and the kernel's client mounts it over loopback; the
//! workload runs on the client mount, through the `--net` code paths.
//!
//! Only inside a guest fsarena boots (`run --kernel`): a guest has no network but its
//! loopback, while on the host rpcbind, mountd and statd would listen on every interface
//! (none of them can be bound to loopback alone) and the kernel's NFS server is the
//! machine's own. The servers start with the first trial that needs them and stop when
//! the run's targets go (the guest's power-off stops them on any other path). The NFS
//! server's grace period (10 s here, the kernel's least) is waited out once before the
//! first trial: during it, opens and locks are refused and retried.

use super::{loopfs::LoopTarget, net, Env, Target, TargetSpec};
use crate::provision::fs::{FsType, Host, Kernel, LiveHost, Support};
use crate::result::{Provision, TargetInfo};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// A served protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// NFS v4.2 (`--fs nfs`).
    Nfs4,
    /// NFS v3 with NLM locking (`--fs nfs3`).
    Nfs3,
    /// SMB 3.1.1 from Samba to the kernel's CIFS client (`--fs smb`).
    Smb,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Nfs4, Protocol::Nfs3, Protocol::Smb];

    /// The name in `--fs`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Nfs4 => "nfs",
            Protocol::Nfs3 => "nfs3",
            Protocol::Smb => "smb",
        }
    }

    /// The protocol named `name` in `--fs`, if any.
    pub fn parse(name: &str) -> Option<Protocol> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// What the target is, for its notes and `fsarena list`.
    pub fn what(self) -> &'static str {
        match self {
            Protocol::Nfs4 => "NFS v4.2, kernel server, sync export",
            Protocol::Nfs3 => "NFS v3 with NLM locks, kernel server, sync export",
            Protocol::Smb => "SMB 3.1.1, Samba to the kernel's CIFS client",
        }
    }

    /// The client's mount options: fsarena's, then the user's `user`.
    pub fn client_mount_opts(self, user: &str) -> String {
        if user.is_empty() {
            self.client_opts().to_string()
        } else {
            format!("{},{user}", self.client_opts())
        }
    }

    /// The client's mount options fsarena gives first (the user's come after).
    fn client_opts(self) -> &'static str {
        match self {
            Protocol::Nfs4 => "vers=4.2",
            Protocol::Nfs3 => "vers=3",
            Protocol::Smb => "guest,vers=3.1.1",
        }
    }

    /// Kernel modules: the server's and the client's.
    pub fn modules(self) -> &'static [Kernel] {
        const NFS: [Kernel; 2] = [
            Kernel {
                what: "NFS server",
                ..Kernel::fs("nfsd")
            },
            Kernel {
                what: "NFS client",
                ..Kernel::fs("nfs")
            },
        ];
        const SMB: [Kernel; 1] = [Kernel {
            what: "CIFS client",
            ..Kernel::fs("cifs")
        }];
        match self {
            Protocol::Nfs4 | Protocol::Nfs3 => &NFS,
            Protocol::Smb => &SMB,
        }
    }

    /// Programs and their Debian packages.
    fn programs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Protocol::Nfs4 | Protocol::Nfs3 => &[
                ("rpc.nfsd", "nfs-kernel-server"),
                ("rpc.mountd", "nfs-kernel-server"),
                ("exportfs", "nfs-kernel-server"),
                ("rpcbind", "rpcbind"),
                ("rpc.statd", "nfs-common"),
                ("mount.nfs", "nfs-common"),
            ],
            Protocol::Smb => &[("smbd", "samba"), ("mount.cifs", "cifs-utils")],
        }
    }

    /// Whether a guest of the kernel [`LiveHost`] looks at can serve this protocol.
    pub fn support(self) -> Support {
        self.support_on(&LiveHost, in_guest_context())
    }

    /// [`Self::support`] on `host`; `guest`: whether the target would run in a guest.
    pub fn support_on(self, host: &dyn Host, guest: bool) -> Support {
        if !guest {
            return Support::No(
                "only in a guest (run --kernel): on the host its servers would listen on \
                 every network interface"
                    .into(),
            );
        }
        let mut why: Vec<String> = self
            .modules()
            .iter()
            .filter_map(|k| crate::provision::fs::kernel_lacks(host, k))
            .collect();
        let mut packages: Vec<&str> = Vec::new();
        for (program, package) in self.programs() {
            if !host.has_program(program) && !packages.contains(package) {
                packages.push(package);
            }
        }
        if !packages.is_empty() {
            why.push(format!(
                "its server or client is missing: apt-get install {}",
                packages.join(" ")
            ));
        }
        if why.is_empty() {
            Support::Yes
        } else {
            Support::No(why.join("; "))
        }
    }
}

static IN_GUEST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks this process as the fsarena of a guest (`run --in-guest`).
pub fn set_in_guest() {
    IN_GUEST.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether served targets may be made: in a guest, or planning for one (`fs::with_guest_kernel`).
fn in_guest_context() -> bool {
    IN_GUEST.load(std::sync::atomic::Ordering::Relaxed)
        || crate::provision::fs::planning_for_guest()
}

/// The filesystem served targets export (made fresh for every trial).
pub const BACKING: FsType = FsType::Ext4;

/// The NFS server's grace and lease time, in seconds (the kernel's least lease time).
const NFS_GRACE_S: u64 = 10;

/// The NFS server of this process, shared by its NFS targets.
static NFS: Mutex<Weak<NfsServer>> = Mutex::new(Weak::new());

/// The kernel's NFS server with its user-space helpers, started by fsarena.
struct NfsServer {
    daemons: Mutex<Vec<Child>>,
    /// When the grace period ends.
    ready_at: Instant,
}

impl NfsServer {
    /// The running server, or a new one.
    fn get() -> Result<Arc<NfsServer>> {
        let mut slot = NFS.lock().map_err(|_| anyhow::anyhow!("NFS server lock"))?;
        if let Some(s) = slot.upgrade() {
            return Ok(s);
        }
        let s = Arc::new(Self::start()?);
        *slot = Arc::downgrade(&s);
        Ok(s)
    }

    fn start() -> Result<NfsServer> {
        let mut server = NfsServer {
            daemons: Mutex::new(Vec::new()),
            ready_at: Instant::now(),
        };
        let nfsd_fs = Path::new("/proc/fs/nfsd");
        if !crate::state::is_mounted(nfsd_fs) {
            crate::cmd::run(&["mount", "-t", "nfsd", "nfsd", "/proc/fs/nfsd"])?;
        }
        std::fs::create_dir_all("/run/rpcbind")?;
        server.spawn(&["rpcbind", "-f", "-w"])?;
        wait_for("rpcbind", || {
            crate::cmd::run(&["rpcinfo", "-p", "127.0.0.1"]).is_ok()
        })?;
        server.spawn(&["rpc.statd", "-F", "--no-notify"])?;
        server.spawn(&["rpc.mountd", "-F"])?;
        // lockd's grace period for NFSv3 locks, as short as NFSv4's.
        let _ = std::fs::write("/proc/sys/fs/nfs/nlm_grace_period", NFS_GRACE_S.to_string());
        let t = NFS_GRACE_S.to_string();
        crate::cmd::run(&["rpc.nfsd", "--lease-time", &t, "--grace-time", &t, "8"])
            .context("starting the kernel's NFS server")?;
        server.ready_at = Instant::now() + Duration::from_secs(NFS_GRACE_S + 1);
        Ok(server)
    }

    fn spawn(&self, argv: &[&str]) -> Result<()> {
        let child = spawn_daemon(argv)?;
        self.daemons
            .lock()
            .map_err(|_| anyhow::anyhow!("NFS daemons lock"))?
            .push(child);
        Ok(())
    }

    /// Waits out the grace period; `true` when there was one to wait.
    fn wait_ready(&self) -> Result<bool> {
        let mut waited = false;
        while Instant::now() < self.ready_at {
            crate::signals::check_stop()?;
            std::thread::sleep(Duration::from_millis(100));
            waited = true;
        }
        Ok(waited)
    }
}

impl Drop for NfsServer {
    fn drop(&mut self) {
        let _ = crate::cmd::run(&["exportfs", "-au"]);
        let _ = crate::cmd::run(&["rpc.nfsd", "0"]);
        if let Ok(mut d) = self.daemons.lock() {
            stop_all(&mut d);
        }
    }
}

/// Starts a server in the foreground of its own process group, its output to the log.
fn spawn_daemon(argv: &[&str]) -> Result<Child> {
    use std::os::unix::process::CommandExt;
    crate::cmd::record(&crate::cmd::shell_words(argv));
    let program = crate::cmd::which(argv[0]).with_context(|| format!("{} missing", argv[0]))?;
    Command::new(program)
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {}", argv[0]))
}

/// Stops daemons: SIGTERM, then SIGKILL after 5 s.
fn stop_all(children: &mut Vec<Child>) {
    for c in children.iter() {
        // SAFETY: kill(2) on a child this process started and has not reaped.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
    }
    let until = Instant::now() + Duration::from_secs(5);
    for c in children.iter_mut() {
        while Instant::now() < until && matches!(c.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(c.try_wait(), Ok(None)) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    children.clear();
}

/// How long a server may take to listen (smbd takes 8 s in an emulated guest).
const SERVER_START: Duration = Duration::from_secs(90);

/// Polls `ready` for up to [`SERVER_START`].
fn wait_for(what: &str, ready: impl Fn() -> bool) -> Result<()> {
    let until = Instant::now() + SERVER_START;
    while !ready() {
        crate::signals::check_stop()?;
        if Instant::now() > until {
            bail!("{what} did not come up within {} s", SERVER_START.as_secs());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Samba serving one share, the export of one target.
struct Samba {
    dir: PathBuf,
    daemon: Vec<Child>,
}

impl Samba {
    /// The share name clients mount: `//127.0.0.1/fsarena`.
    const SHARE: &'static str = "fsarena";

    /// Starts smbd on loopback with its configuration and state under `dir` (new),
    /// serving `export` to guests as root.
    fn start(dir: &Path, export: &Path) -> Result<Samba> {
        std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        let d = dir.display();
        for sub in ["private", "lock", "state", "cache", "run", "ncalrpc"] {
            std::fs::create_dir(dir.join(sub))?;
        }
        let conf = format!(
            "[global]\n  interfaces = lo\n  bind interfaces only = yes\n  \
             disable netbios = yes\n  smb ports = 445\n  load printers = no\n  \
             map to guest = Bad User\n  private dir = {d}/private\n  \
             lock directory = {d}/lock\n  state directory = {d}/state\n  \
             cache directory = {d}/cache\n  pid directory = {d}/run\n  \
             ncalrpc dir = {d}/ncalrpc\n  log file = {d}/log\n\
             [{}]\n  path = {}\n  read only = no\n  guest ok = yes\n  force user = root\n",
            Self::SHARE,
            export.display()
        );
        let conf_path = dir.join("smb.conf");
        std::fs::write(&conf_path, conf)?;
        let c = conf_path.to_string_lossy().into_owned();
        let child = spawn_daemon(&["smbd", "--foreground", "--no-process-group", "-s", &c])?;
        let mut samba = Samba {
            dir: dir.to_path_buf(),
            daemon: vec![child],
        };
        let listening = wait_for("smbd", || {
            std::fs::read_to_string("/proc/net/tcp").is_ok_and(|t| {
                t.lines()
                    .any(|l| l.contains(":01BD ") && l.contains(" 0A "))
            })
        });
        if let Err(e) = listening {
            stop_all(&mut samba.daemon);
            return Err(e);
        }
        Ok(samba)
    }
}

impl Drop for Samba {
    fn drop(&mut self) {
        stop_all(&mut self.daemon);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server side of a served target while it runs (stopped when dropped).
enum Server {
    Nfs(Arc<NfsServer>),
    Smb { _smbd: Samba },
}

/// A served target: backing filesystem, server, client mount.
pub struct ServedTarget {
    info: TargetInfo,
    env: Env,
    proto: Protocol,
    backing: LoopTarget,
    user_opts: String,
    server: Option<Server>,
    exported: Option<PathBuf>,
    client: Option<net::NetTarget>,
    provision: Provision,
}

impl ServedTarget {
    /// The same target serving a filesystem aged as `spec` says before each trial
    /// (deterministically from `seed`): the server's ext4 is what ages.
    pub fn with_age(mut self, spec: crate::provision::age::AgeSpec, seed: u64) -> Self {
        self.backing.set_age(spec, seed);
        self.info.age = Some(spec.canonical());
        self
    }

    /// A target for `spec` (must be [`TargetSpec::Served`]) named `name`.
    pub fn new(spec: &TargetSpec, name: &str, env: &Env) -> Self {
        let TargetSpec::Served {
            proto,
            mkfs_opts,
            mount_opts,
            size_bytes,
        } = spec
        else {
            unreachable!("ServedTarget::new takes a served spec")
        };
        let backing_spec = TargetSpec::Loop {
            fs: BACKING,
            mkfs_opts: mkfs_opts.clone(),
            mount_opts: String::new(),
            size_bytes: *size_bytes,
        };
        let backing = LoopTarget::new(&backing_spec, env).with_name(&format!("{name}-export"));
        let mut info = backing.info().clone();
        info.name = name.to_string();
        info.kind = "served".into();
        info.fstype = proto.name().into();
        info.requested_mount_opts = proto.client_mount_opts(mount_opts);
        info.notes.push(format!(
            "{} of a fresh {} ({}) on a loop image, mounted by the same kernel over \
             loopback: figures include client, server and RPC, no physical network",
            proto.what(),
            BACKING.name(),
            crate::size::format_size(*size_bytes)
        ));
        Self {
            info,
            env: env.clone(),
            proto: *proto,
            backing,
            user_opts: mount_opts.clone(),
            server: None,
            exported: None,
            client: None,
            provision: Provision::default(),
        }
    }

    /// Exports `path` to loopback and returns the client's source.
    fn export(&mut self, path: &Path) -> Result<String> {
        match self.proto {
            Protocol::Nfs4 | Protocol::Nfs3 => {
                let server = match &self.server {
                    Some(Server::Nfs(s)) => s.clone(),
                    _ => {
                        let s = NfsServer::get()?;
                        self.server = Some(Server::Nfs(s.clone()));
                        s
                    }
                };
                // NFSv4 finds the export as the root of its pseudo filesystem (fsid=0):
                // the path to it here crosses the guest's 9p root, which NFS cannot
                // export.
                let fsid = if self.proto == Protocol::Nfs4 {
                    "fsid=0"
                } else {
                    "fsid=1"
                };
                let p = path.to_string_lossy();
                crate::cmd::run(&[
                    "exportfs",
                    "-i",
                    "-o",
                    &format!("rw,sync,no_root_squash,no_subtree_check,insecure,{fsid}"),
                    &format!("127.0.0.1:{p}"),
                ])?;
                self.exported = Some(path.to_path_buf());
                if server.wait_ready()? {
                    self.info.notes.push(format!(
                        "the NFS server's {NFS_GRACE_S} s grace period after its start was \
                         waited out before the first trial"
                    ));
                }
                Ok(match self.proto {
                    Protocol::Nfs4 => "127.0.0.1:/".to_string(),
                    _ => format!("127.0.0.1:{p}"),
                })
            }
            Protocol::Smb => {
                if self.server.is_none() {
                    let dir = self
                        .env
                        .image_dir
                        .join(format!("{}-{}-samba", self.env.run_id, self.info.name));
                    self.server = Some(Server::Smb {
                        _smbd: Samba::start(&dir, path)?,
                    });
                }
                Ok(format!("//127.0.0.1/{}", Samba::SHARE))
            }
        }
    }

    fn unexport(&mut self) -> Result<()> {
        if let Some(p) = self.exported.take() {
            crate::cmd::run(&[
                "exportfs",
                "-u",
                &format!("127.0.0.1:{}", p.to_string_lossy()),
            ])?;
        }
        Ok(())
    }
}

impl Target for ServedTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn calibrate(&mut self) -> Result<()> {
        self.backing.calibrate()?;
        let b = self.backing.info();
        self.info.device_read_mb_per_s = b.device_read_mb_per_s;
        self.info.device_buffered_read_mb_per_s = b.device_buffered_read_mb_per_s;
        self.info.loop_direct_io = b.loop_direct_io;
        Ok(())
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.teardown()?;
        // Aged (`with_age`): the backing filesystem ages here, before it is exported.
        let export = self.backing.prepare()?;
        let backing = self.backing.provision();
        let source = self.export(&export)?;
        let spec = net::NetSpec {
            kind: match self.proto {
                Protocol::Smb => net::NetKind::Cifs,
                _ => net::NetKind::Nfs,
            },
            source,
            opts: self.proto.client_mount_opts(&self.user_opts),
        };
        let mut client = net::NetTarget::new(&spec, &self.env);
        let work = client.prepare();
        let client_info = client.info().clone();
        let client_provision = client.provision();
        self.client = Some(client);
        let work = work?;
        self.info.mount_opts = client_info.mount_opts;
        let b = self.backing.info();
        self.info.mkfs_opts = b.mkfs_opts.clone();
        self.info.loop_direct_io = b.loop_direct_io;
        for n in &b.notes {
            if !self.info.notes.contains(n) {
                self.info.notes.push(n.clone());
            }
        }
        self.provision = Provision {
            mkfs_s: backing.mkfs_s,
            mount_s: client_provision.mount_s,
            umount_s: None,
            capacity_bytes: client_provision.capacity_bytes,
            free_bytes: client_provision.free_bytes,
            aging: backing.aging,
        };
        Ok(work)
    }

    /// The client forgets what it cached (it remounts) and the guest's caches, the
    /// server's included, are dropped.
    fn reset(&mut self) -> Result<()> {
        match self.client.as_mut() {
            Some(c) => c.reset(),
            None => bail!("{}: not prepared", self.info.name),
        }
    }

    /// The backing loop device: what the server wrote and read.
    fn device_stat(&self) -> Option<PathBuf> {
        self.backing.device_stat()
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    fn set_repetition(&mut self, rep: u32) {
        self.backing.set_repetition(rep);
    }

    fn teardown(&mut self) -> Result<()> {
        let mut first: Option<anyhow::Error> = None;
        if let Some(mut c) = self.client.take() {
            match c.teardown() {
                Ok(()) => self.provision.umount_s = c.provision().umount_s,
                Err(e) => first = Some(e),
            }
        }
        for done in [self.unexport(), self.backing.teardown()] {
            first = first.or(done.err());
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for ServedTarget {
    fn drop(&mut self) {
        let _ = self.teardown();
        self.server = None;
    }
}

#[cfg(test)]
mod tests;
