//! Building each crash state's image from the starting image and the write log, and
//! checking it as a machine would meet it after the power cut.
//!
//! A state's image is a sparse copy of the starting image with the log's prefix replayed
//! (kept up to date in one working image, since states are taken in log order) and the
//! state's kept writes applied. Each is then:
//!
//! 1. **recovered** by the kernel: attached to a loop device and mounted read-write with
//!    the target's options made safe ([`crash_mount_opts`]: never the user's `errors=`),
//!    then unmounted (journal or log replay, orphan processing, as at the next
//!    boot); a mount that fails here sends the state straight to repair;
//! 2. **checked** by the filesystem's own read-only checker (`e2fsck -f -n`,
//!    `xfs_repair -n`, `btrfs check --readonly`); when it finds damage (or recovery
//!    failed), **repaired** (`e2fsck -f -y`; `xfs_repair`, then `xfs_repair -L` when the
//!    log cannot be replayed; `btrfs check --repair --force`), which counts as "needed
//!    repair";
//! 3. **mounted** again, read-only (read-write where the inspection writes: SQLite
//!    recovers its database when it opens it): a state that does not mount now is *unmountable*; one that does is
//!    handed to the workload's inspection (its promises), then unmounted.
//!
//! Two states are checked at once (one per core on the 2-core machines this is meant for;
//! xfs mounted with `nouuid`, as both copies carry one UUID; btrfs one at a time, see
//! [`CheckEnv::workers`]) while another thread builds the next images. Every loop device and mount is recorded in
//! the run's state file as it is made; the images live in the recording's directory, which
//! the state file holds too, so `fsarena cleanup` removes what a killed run left.

use super::log::Log;
use super::sparse_copy;
use super::states::CrashState;
use crate::cmd;
use crate::provision::fs::FsType;
use crate::provision::{loopdev, mount};
use crate::state::{Resource, State};
use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};

/// What checking a state gave: the filesystem's part, and the inspection's when it mounted.
pub type Checked<T> = (StateCheck, Option<T>);

/// States checked at once (one per core of the 2-core machines this is meant for).
pub const WORKERS: usize = 2;

/// Where and how states are checked.
#[derive(Clone)]
pub struct CheckEnv {
    pub state: Arc<State>,
    pub fs: FsType,
    /// The target's mount options.
    pub mount_opts: String,
    /// A directory of the recording (in the state file) for the images and mount points.
    pub dir: PathBuf,
    /// Whether the inspection writes (SQLite recovers a database's WAL or journal when it
    /// opens it), so that the inspection mount must be read-write too.
    pub inspect_writes: bool,
}

/// What the filesystem made of one crash state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateCheck {
    /// The kernel's recovery mount failed.
    pub recovery_failed: bool,
    /// The read-only checker found damage after recovery (or recovery failed) and the
    /// repair tool ran.
    pub repaired: bool,
    /// The repair tool itself failed.
    pub repair_failed: bool,
    /// It mounted in the end (and was inspected).
    pub mounted: bool,
    /// The checker's, repair's or mount's own words, for the trial's log.
    pub detail: String,
}

/// Builds the images of crash states in log order: a working image kept at the latest
/// prefix, copied for each state and given the state's kept writes.
pub struct Builder<'a> {
    log: &'a Log,
    work: File,
    len: u64,
    at: usize,
}

impl<'a> Builder<'a> {
    /// A builder over `log` starting from the image `base`, its working image made at
    /// `work` (a new file).
    pub fn new(log: &'a Log, base: &Path, work: &Path) -> Result<Builder<'a>> {
        let base = File::open(base).with_context(|| format!("opening {}", base.display()))?;
        let len = base.metadata()?.len();
        let w =
            loopdev::create_image(work).with_context(|| format!("creating {}", work.display()))?;
        sparse_copy(&base, &w, len)?;
        Ok(Builder {
            log,
            work: w,
            len,
            at: 0,
        })
    }

    /// Writes the image of `state` to the new file `out`. States must come in ascending
    /// [`CrashState::base`] (the working image only moves forward).
    pub fn build(&mut self, state: &CrashState, out: &Path) -> Result<File> {
        let base = state.base();
        if base < self.at {
            return Err(anyhow!("crash states out of log order"));
        }
        self.log.replay(&self.work, self.at, base)?;
        self.at = base;
        let f =
            loopdev::create_image(out).with_context(|| format!("creating {}", out.display()))?;
        sparse_copy(&self.work, &f, self.len)?;
        // The rest of the prefix, without the pending writes the state dropped.
        for i in (base..state.upto).filter(|i| state.dropped.binary_search(i).is_err()) {
            self.log.apply(i, &f)?;
        }
        for &i in &state.kept {
            self.log.apply(i, &f)?;
        }
        if let Some(t) = &state.torn {
            let block = super::states::TEAR_BLOCK;
            self.log.apply_blocks(t.write, &t.blocks, block, &f)?;
        }
        Ok(f)
    }
}

/// The repair commands for `fs` on `dev`, tried in turn until one succeeds.
fn repair_argvs(fs: FsType, dev: &str) -> Vec<Vec<String>> {
    let v = |words: &[&str]| -> Vec<String> {
        words
            .iter()
            .map(|w| w.to_string())
            .chain([dev.to_string()])
            .collect()
    };
    match fs.name() {
        "ext2" | "ext3" | "ext4" => vec![v(&["e2fsck", "-f", "-y"])],
        "xfs" => vec![v(&["xfs_repair"]), v(&["xfs_repair", "-L"])],
        "btrfs" => vec![v(&["btrfs", "check", "--repair", "--force"])],
        _ => Vec::new(),
    }
}

/// Whether a repair command's failure is only its way of saying it repaired something
/// (e2fsck exits 1 or 2 when it corrected errors).
fn repaired_ok(argv0: &str, e: &anyhow::Error) -> bool {
    argv0 == "e2fsck" && matches!(cmd::exit_code(e), Some(1 | 2))
}

impl CheckEnv {
    /// States of this filesystem checked at once: btrfs one at a time (two copies of one
    /// filesystem share its fsid, and which device a btrfs mount then opens is the
    /// kernel's device registry's choice), others [`WORKERS`].
    pub fn workers(&self) -> usize {
        if self.fs.name() == "btrfs" {
            1
        } else {
            WORKERS
        }
    }

    /// The mount options of a check ([`crash_mount_opts`]): the recovery mount
    /// read-write (it replays the journal), the inspection mount read-only unless the
    /// inspection writes.
    fn opts(&self, mount: CrashMount) -> String {
        let mount = match mount {
            CrashMount::Inspect if self.inspect_writes => CrashMount::Recovery,
            m => m,
        };
        crash_mount_opts(self.fs.name(), &self.mount_opts, mount)
    }
}

/// Which mount of a crash state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMount {
    /// The first mount, which replays the journal or log: it must write.
    Recovery,
    /// The mount the workload inspects: nothing is written to the state any more.
    Inspect,
}

/// The options a crash state of filesystem `fs` is mounted with, from the target's `user`
/// options. A crash state is damaged on purpose, so the user's choice of what the kernel
/// does on an error found there is not kept: every `errors=` is dropped (an
/// `errors=panic` would panic the host, an `errors=continue` would keep writing to a
/// filesystem known damaged) and ext2/3/4 get `errors=remount-ro`; xfs and btrfs take no
/// `errors=` (xfs sets its error handling in sysfs, not at mount), and btrfs's
/// `fatal_errors=panic` is dropped the same way (its default, `bug`, stays). A `ro` or
/// `rw` of the user's is dropped too: the recovery mount is read-write, the inspection
/// mount `ro`. xfs gets `nouuid` (two copies of one filesystem are checked at once, and
/// xfs refuses a second mount of a UUID).
pub fn crash_mount_opts(fs: &str, user: &str, mount: CrashMount) -> String {
    let unsafe_opt = |o: &str| {
        o.starts_with("errors=") || o.starts_with("fatal_errors=") || o == "ro" || o == "rw"
    };
    let mut opts: Vec<&str> = user
        .split(',')
        .filter(|o| !o.is_empty() && !unsafe_opt(o))
        .collect();
    match fs {
        "ext2" | "ext3" | "ext4" => opts.push("errors=remount-ro"),
        "xfs" => opts.push("nouuid"),
        _ => {}
    }
    if mount == CrashMount::Inspect {
        opts.push("ro");
    }
    opts.join(",")
}

/// Checks the crash state in `image` on checker `worker`'s mount point: recovery,
/// read-only check, repair, mount, then `inspect` on the mounted filesystem (module docs).
pub fn check_one<T>(
    env: &CheckEnv,
    image: &File,
    image_path: &Path,
    worker: usize,
    inspect: impl FnOnce(&Path) -> T,
) -> Result<(StateCheck, Option<T>)> {
    let attached = loopdev::attach(image, image_path)?;
    let dev = attached.device.clone();
    let record = Resource::Loop {
        device: dev.clone(),
        image: image_path.to_path_buf(),
    };
    if let Err(e) = env.state.add(record.clone()) {
        let _ = crate::state::detach_loop(&dev, image_path);
        return Err(e);
    }
    let mnt = env.dir.join(format!("mnt{worker}"));
    let result = check_on(env, &dev, &mnt, inspect);
    crate::state::detach_loop(&dev, image_path)?;
    env.state.remove(&record)?;
    result
}

fn check_on<T>(
    env: &CheckEnv,
    dev: &str,
    mnt: &Path,
    inspect: impl FnOnce(&Path) -> T,
) -> Result<(StateCheck, Option<T>)> {
    let mut c = StateCheck::default();
    let fstype = env.fs.mount_type();
    let recovery = env.opts(CrashMount::Recovery);
    match mount::mount(&env.state, fstype, dev, mnt, &recovery) {
        Ok(_) => {
            mount::unmount(&env.state, mnt)?;
        }
        Err(e) => {
            c.recovery_failed = true;
            c.detail = format!("recovery mount: {e:#}");
        }
    }
    let damage = match env.fs.fsck_argv(dev) {
        Some(argv) => cmd::run_stoppable(&argv).err(),
        None => None,
    };
    if let Some(e) = &damage {
        c.detail = format!("{}{}check: {e:#}", c.detail, sep(&c.detail));
    }
    if damage.is_some() || c.recovery_failed {
        c.repaired = true;
        c.repair_failed = true;
        for argv in repair_argvs(env.fs, dev) {
            match cmd::run_stoppable(&argv) {
                Ok(_) => {}
                Err(e) if repaired_ok(&argv[0], &e) => {}
                Err(e) => {
                    crate::signals::check_stop()?;
                    c.detail = format!("{}; repair: {e:#}", c.detail);
                    continue;
                }
            }
            c.repair_failed = false;
            break;
        }
    }
    let inspect_opts = env.opts(CrashMount::Inspect);
    match mount::mount(&env.state, fstype, dev, mnt, &inspect_opts) {
        Ok(_) => {
            c.mounted = true;
            let seen = inspect(mnt);
            mount::unmount(&env.state, mnt)?;
            Ok((c, Some(seen)))
        }
        Err(e) => {
            c.detail = format!("{}{}mount: {e:#}", c.detail, sep(&c.detail));
            Ok((c, None))
        }
    }
}

fn sep(s: &str) -> &'static str {
    if s.is_empty() {
        ""
    } else {
        "; "
    }
}

/// Checks every state of `states` (in ascending `upto`) built from `base` and `log`,
/// [`CheckEnv::workers`] at once, with `inspect(state index, mount point)` on each that mounts.
/// Results come in the order of `states`.
pub fn check_all<T: Send>(
    env: &CheckEnv,
    log: &Log,
    base: &Path,
    states: &[CrashState],
    inspect: &(dyn Fn(usize, &Path) -> T + Sync),
) -> Result<Vec<Checked<T>>> {
    let mut builder = Builder::new(log, base, &env.dir.join("work.img"))?;
    let workers = env.workers();
    let (tx, rx) = mpsc::sync_channel::<(usize, File, PathBuf)>(workers);
    let rx = Mutex::new(rx);
    let results: Mutex<Vec<Option<Checked<T>>>> =
        Mutex::new((0..states.len()).map(|_| None).collect());
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for worker in 0..workers {
            let (rx, results, failed) = (&rx, &results, &failed);
            s.spawn(move || loop {
                let next = rx.lock().expect("receiver").recv();
                let Ok((i, file, path)) = next else { break };
                let r = check_one(env, &file, &path, worker, |m| inspect(i, m));
                drop(file);
                let _ = std::fs::remove_file(&path);
                match r {
                    Ok(r) => results.lock().expect("results")[i] = Some(r),
                    Err(e) => {
                        failed.lock().expect("failed").get_or_insert(e);
                        break;
                    }
                }
            });
        }
        for (i, st) in states.iter().enumerate() {
            if failed.lock().expect("failed").is_some() {
                break;
            }
            let sent = crate::signals::check_stop().and_then(|()| {
                let path = env.dir.join(format!("state{i}.img"));
                let f = builder.build(st, &path)?;
                hand_over(&tx, (i, f, path), &failed)
            });
            if let Err(e) = sent {
                failed.lock().expect("failed").get_or_insert(e);
                break;
            }
        }
        drop(tx);
    });
    if let Some(e) = failed.into_inner().expect("failed") {
        return Err(e);
    }
    let done = results.into_inner().expect("results");
    Ok(done.into_iter().map(|r| r.expect("checked")).collect())
}

/// Sends `item` to the checkers, waiting while they are busy, unless one of them failed
/// meanwhile (then none may be left to take it: a blocking send would wait for ever).
fn hand_over<T>(
    tx: &mpsc::SyncSender<T>,
    mut item: T,
    failed: &Mutex<Option<anyhow::Error>>,
) -> Result<()> {
    loop {
        match tx.try_send(item) {
            Ok(()) => return Ok(()),
            Err(mpsc::TrySendError::Full(back)) => item = back,
            Err(mpsc::TrySendError::Disconnected(_)) => bail!("the checkers stopped"),
        }
        if failed.lock().expect("failed").is_some() {
            bail!("a checker failed");
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_sparse_copy_keeps_data_and_holes() {
        let from = tempfile::tempfile().unwrap();
        from.set_len(8 << 20).unwrap();
        from.write_all_at(&[5u8; 4096], 1 << 20).unwrap();
        from.write_all_at(&[6u8; 100], (8 << 20) - 100).unwrap();
        let to = tempfile::tempfile().unwrap();
        sparse_copy(&from, &to, 8 << 20).unwrap();
        let (mut a, mut b) = (vec![0u8; 8 << 20], vec![0u8; 8 << 20]);
        from.read_exact_at(&mut a, 0).unwrap();
        to.read_exact_at(&mut b, 0).unwrap();
        assert!(a == b);
        use std::os::unix::fs::MetadataExt;
        assert!(to.metadata().unwrap().blocks() * 512 < 1 << 20);
    }

    #[test]
    fn the_builder_applies_the_prefix_and_only_the_kept_writes() {
        use super::super::log::LogWriter;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        std::fs::write(&base, vec![0u8; 16384]).unwrap();
        let mut w = LogWriter::new(File::create(dir.path().join("log")).unwrap()).unwrap();
        w.write(0, &[1u8; 4096]).unwrap();
        w.flush().unwrap();
        w.write(4096, &[2u8; 4096]).unwrap();
        w.write(8192, &[3u8; 4096]).unwrap();
        w.write(8192, &[4u8; 8192]).unwrap();
        w.flush().unwrap();
        w.finish().unwrap();
        let log = Log::open(&dir.path().join("log")).unwrap();
        let mut b = Builder::new(&log, &base, &dir.path().join("work")).unwrap();
        let st = CrashState {
            upto: 2,
            kept: vec![3],
            ..CrashState::default()
        };
        let f = b.build(&st, &dir.path().join("s0")).unwrap();
        let byte = |at| {
            let mut x = [0u8];
            f.read_exact_at(&mut x, at).unwrap();
            x[0]
        };
        assert_eq!((byte(0), byte(4096), byte(8192)), (1, 0, 3));
        // Torn: of the 8 KiB write at 4096 (two blocks), only its second block.
        let torn = CrashState {
            upto: 2,
            kept: vec![],
            torn: Some(super::super::states::Torn {
                write: 4,
                blocks: vec![1],
            }),
            ..CrashState::default()
        };
        let t = b.build(&torn, &dir.path().join("s2")).unwrap();
        let at = |at| {
            let mut x = [0u8];
            t.read_exact_at(&mut x, at).unwrap();
            x[0]
        };
        assert_eq!((at(0), at(4096), at(8192), at(12288)), (1, 0, 0, 4));
        // After the second flush, without the write at 4096 that it did not cover.
        let dropped = CrashState {
            upto: 6,
            dropped: vec![2],
            ..CrashState::default()
        };
        let d = b.build(&dropped, &dir.path().join("s3")).unwrap();
        let at = |at| {
            let mut x = [0u8];
            d.read_exact_at(&mut x, at).unwrap();
            x[0]
        };
        assert_eq!((at(0), at(4096), at(8192), at(12288)), (1, 0, 4, 4));
        let back = CrashState {
            upto: 0,
            kept: vec![],
            ..CrashState::default()
        };
        assert!(b.build(&back, &dir.path().join("s1")).is_err());
    }

    #[test]
    fn the_builder_stops_waiting_once_a_checker_failed() {
        let (tx, _rx) = mpsc::sync_channel::<u32>(1);
        let failed = Mutex::new(None);
        hand_over(&tx, 1, &failed).unwrap();
        *failed.lock().unwrap() = Some(anyhow!("mount failed"));
        // The channel is full and nobody takes from it: an error, not a hang.
        assert!(hand_over(&tx, 2, &failed).is_err());
    }

    #[test]
    fn repairs_exist_for_the_filesystems_the_workload_names() {
        for name in ["ext4", "xfs", "btrfs"] {
            let fs = FsType::parse(name).unwrap();
            assert!(!repair_argvs(fs, "/dev/loop9").is_empty(), "{name}");
        }
    }

    #[test]
    fn crash_states_are_mounted_with_safe_errors_and_read_only_for_inspection() {
        use CrashMount::{Inspect, Recovery};
        let user = "errors=panic,data=journal,ro,noauto_da_alloc";
        assert_eq!(
            crash_mount_opts("ext4", user, Recovery),
            "data=journal,noauto_da_alloc,errors=remount-ro"
        );
        assert_eq!(
            crash_mount_opts("ext4", user, Inspect),
            "data=journal,noauto_da_alloc,errors=remount-ro,ro"
        );
        assert_eq!(crash_mount_opts("ext4", "", Recovery), "errors=remount-ro");
        assert_eq!(
            crash_mount_opts("ext3", "errors=continue", Inspect),
            "errors=remount-ro,ro"
        );
        assert_eq!(
            crash_mount_opts("ext2", "", Inspect),
            "errors=remount-ro,ro"
        );
        assert_eq!(crash_mount_opts("xfs", "", Recovery), "nouuid");
        assert_eq!(
            crash_mount_opts("xfs", "logbsize=256k", Inspect),
            "logbsize=256k,nouuid,ro"
        );
        assert_eq!(
            crash_mount_opts("btrfs", "fatal_errors=panic,compress=zstd", Recovery),
            "compress=zstd"
        );
        assert_eq!(crash_mount_opts("btrfs", "rw", Inspect), "ro");
    }
}
