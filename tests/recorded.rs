//! The write recorder (issue 39) on real filesystems: replaying the whole log onto the
//! image mkfs made gives the image the recorder served, byte for byte; every fsync shows
//! as a flush in the log and moves the position; a discard (fstrim) reaches the log as zero
//! ranges; a `kill -9` of the process that started a
//! recording, then `fsarena cleanup`'s code, leaves no mount, loop device, daemon or
//! directory; the recorder outlives SIGINT, SIGTERM and SIGHUP; a recorder that dies, or a
//! filesystem that cannot mount, is an error, and the teardown still leaves nothing.
//!
//! Figures each validation prints (writes, flushes, bytes; flushes per fsync) are the ones
//! docs/durability.md quotes.

mod common;

use fsarena::provision::fs::FsType;
use fsarena::provision::recorded::{log::Kind, log::Log, sparse_copy, Recording, Twin};
use fsarena::state::State;
use std::fs::File;
use std::io::{BufRead, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

/// Why a recorder test cannot run here (root, loop devices, FUSE, the filesystem's mkfs),
/// after a SKIP line; `false` when it can.
fn skip(test: &str, fs: &str) -> bool {
    if common::skip_without_loop(test) {
        return true;
    }
    if !Path::new("/dev/fuse").exists() {
        eprintln!("SKIP {test}: needs FUSE (/dev/fuse is missing)");
        return true;
    }
    !common::fs_available(test, fs)
}

fn twin(fs: &str, dir: &Path, run: &str) -> Twin {
    let state = State::create(&dir.join("state"), run).expect("state file");
    Twin {
        fs: FsType::parse(fs).unwrap(),
        mkfs_opts: Vec::new(),
        mount_opts: String::new(),
        image_dir: dir.to_path_buf(),
        state: Arc::new(state),
        name: fs.to_string(),
    }
}

/// Data that differs per file and per byte (so a misplaced write shows).
fn data(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Whether two files hold the same bytes (compared a MiB at a time).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (fa, fb) = (File::open(a).unwrap(), File::open(b).unwrap());
    let len = fa.metadata().unwrap().len();
    if len != fb.metadata().unwrap().len() {
        return false;
    }
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut at = 0;
    while at < len {
        let n = (len - at).min(1 << 20) as usize;
        fa.read_exact_at(&mut x[..n], at).unwrap();
        fb.read_exact_at(&mut y[..n], at).unwrap();
        if x[..n] != y[..n] {
            return false;
        }
        at += n as u64;
    }
    true
}

/// Records a workload of `files` files, each written and fsynced with its directory, on a
/// fresh `fs` of `size` bytes; checks the replay, the flushes and the positions.
fn validate(fs: &str, size: u64) {
    let test = format!("the_recorder_is_validated_on_{fs}");
    if skip(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let t = twin(fs, dir.path(), "rec");
    let started = Instant::now();
    let rec = Recording::start_with(&t, size, &common::bin()).expect("recording starts");
    let start_s = started.elapsed().as_secs_f64();
    let mut positions = vec![rec.position().unwrap()];
    let work = rec.mountpoint().join("work");
    std::fs::create_dir(&work).unwrap();
    let files = 4;
    for i in 0..files {
        let path = work.join(format!("f{i}"));
        let mut f = File::create(&path).unwrap();
        f.write_all(&data(i, 100_000 + 37 * i as usize)).unwrap();
        f.sync_all().unwrap();
        positions.push(rec.position().unwrap());
        File::open(&work).unwrap().sync_all().unwrap();
        positions.push(rec.position().unwrap());
    }
    let fsyncs = 2 * files as usize;
    // A large file, written and synced: how large the writes reaching the daemon are.
    std::fs::write(work.join("big"), data(99, 3 << 20)).unwrap();
    fsarena::probe::sys::syncfs(rec.mountpoint()).unwrap();
    let direct_io = rec.loop_direct_io();
    // A discard (fstrim after a deletion) reaches the daemon as zero ranges.
    std::fs::remove_file(work.join("f0")).unwrap();
    fsarena::probe::sys::syncfs(rec.mountpoint()).unwrap();
    let trim = Command::new("fstrim")
        .arg(rec.mountpoint())
        .output()
        .expect("fstrim runs");
    assert!(
        trim.status.success(),
        "fstrim on {fs}: {}",
        String::from_utf8_lossy(&trim.stderr)
    );
    let finishing = Instant::now();
    let done = rec.finish().expect("recording finishes");
    let finish_s = finishing.elapsed().as_secs_f64();

    let log = Log::open(&done.log).unwrap();
    let replayed = dir.path().join("replayed.img");
    let img = fsarena::provision::loopdev::create_image(&replayed).unwrap();
    sparse_copy(&File::open(&done.base).unwrap(), &img, size).unwrap();
    log.replay(&img, 0, log.records.len()).unwrap();
    drop(img);
    assert!(
        same_bytes(&replayed, &done.live),
        "{fs}: the replayed log does not give the live image"
    );
    assert!(
        !same_bytes(&done.base, &done.live),
        "{fs}: nothing was recorded"
    );

    let (writes, flushes, bytes) = log.counts();
    // Each file's fsync returned after a flush reached the daemon: between the positions
    // before and after it the log moved and ends with a flush. A directory's fsync right
    // after may find nothing left to write (ext4 and xfs committed the new entry with the
    // file's fsync): then nothing moves; when it moves, it ends with a flush too.
    let mut per_fsync = Vec::new();
    let mut patterns = Vec::new();
    for (k, w) in positions.windows(2).enumerate() {
        let is_file = k % 2 == 0;
        let between = &log.records[w[0] as usize..w[1] as usize];
        let f = between.iter().filter(|r| r.kind == Kind::Flush).count();
        per_fsync.push(f);
        let kinds: String = between
            .iter()
            .map(|r| match r.kind {
                Kind::Write => 'W',
                Kind::Zero => 'Z',
                Kind::Flush => 'F',
            })
            .collect();
        patterns.push(kinds);
        if is_file {
            assert!(
                w[1] > w[0],
                "{fs}: the position did not move across an fsync: {positions:?}"
            );
        }
        if !between.is_empty() {
            assert_eq!(
                between.last().map(|r| r.kind),
                Some(Kind::Flush),
                "{fs}: the last record before an fsync returned is not a flush: {positions:?}"
            );
        }
    }
    let moved = per_fsync.iter().filter(|&&f| f > 0).count();
    assert!(moved >= files as usize, "{fs}: {per_fsync:?}");
    assert!(
        flushes as usize >= moved,
        "{fs}: {flushes} flushes for {moved} fsyncs that wrote"
    );
    let zero = log.records.iter().filter(|r| r.kind == Kind::Zero).count();
    assert!(zero > 0, "{fs}: fstrim sent no discard to the recorder");
    let largest = log
        .records
        .iter()
        .filter(|r| r.kind == Kind::Write)
        .map(|r| r.len)
        .max()
        .unwrap_or(0);
    assert!(largest > 4096, "{fs}: FUSE cut the writes into pages");
    let data_bytes: u64 = log
        .records
        .iter()
        .filter(|r| r.kind == Kind::Write)
        .map(|r| r.len)
        .sum();
    println!(
        "RECORDED {fs} ({} MiB): {writes} writes and zero ranges ({zero} zero ranges), \
         {flushes} flushes, {data_bytes} bytes written, {bytes} bytes written or zeroed; {fsyncs} fsyncs (file, directory, …), flush records per fsync \
         {per_fsync:?}; \
         start {start_s:.2} s, finish {finish_s:.2} s; records before the workload {}; \
         records per fsync {patterns:?}; largest write {largest} bytes; loop direct I/O \
         {direct_io}",
        size >> 20,
        positions[0]
    );
    let state = Arc::clone(&t.state);
    done.remove(&state).unwrap();
    state.finish().unwrap();
    assert_eq!(common::mounts_under(dir.path()), Vec::<String>::new());
    assert_eq!(common::loops_under(dir.path()), Vec::<String>::new());
    assert_no_recording_dirs(dir.path());
}

fn assert_no_recording_dirs(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-recorded-"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "recording directories left");
}

/// Recorder daemons whose command line names a path under `dir`.
fn daemons_under(dir: &Path) -> Vec<i32> {
    let want = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("record-serve") && c.contains(&want)
            })
        })
        .collect()
}

#[test]
fn the_recorder_is_validated_on_ext4() {
    validate("ext4", 256 << 20);
}

#[test]
fn the_recorder_is_validated_on_xfs() {
    validate("xfs", 320 << 20);
}

#[test]
fn the_recorder_is_validated_on_btrfs() {
    validate("btrfs", 256 << 20);
}

/// The environment variable that makes the next test the child that is killed.
const CHILD: &str = "FSARENA_RECORDED_CHILD";
/// What the child prints once its recording is up.
const UP: &str = "RECORDING-IS-UP";

#[test]
fn a_recording_killed_with_9_leaves_nothing_after_cleanup() {
    if let Some(dir) = std::env::var_os(CHILD) {
        // The child: start a recording, write, say so, wait to be killed.
        let t = twin("ext4", Path::new(&dir), "killed");
        let rec = Recording::start_with(&t, 64 << 20, &common::bin()).unwrap();
        std::fs::write(rec.mountpoint().join("a"), b"written").unwrap();
        println!("{UP} {}", rec.mountpoint().display());
        std::io::stdout().flush().unwrap();
        std::thread::sleep(std::time::Duration::from_secs(600));
        return;
    }
    if skip(
        "a_recording_killed_with_9_leaves_nothing_after_cleanup",
        "ext4",
    ) {
        return;
    }
    let dir = common::image_dir();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_recording_killed_with_9_leaves_nothing_after_cleanup",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The harness prints the test's name on the same line first.
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let up = out.lines().map_while(Result::ok).any(|l| l.contains(UP));
        let _ = tx.send(up);
    });
    let up = rx.recv_timeout(std::time::Duration::from_secs(120));
    if up != Ok(true) {
        child.kill().unwrap();
        child.wait().unwrap();
        fsarena::state::cleanup(dir.path()).unwrap();
        panic!("the child did not say its recording was up ({up:?})");
    }
    assert_eq!(
        common::mounts_under(dir.path()).len(),
        2,
        "fs and FUSE mounted"
    );
    assert_eq!(daemons_under(dir.path()).len(), 1);
    let pid = child.id();
    let traces = || traces_of(pid);
    let traced = Path::new(INSTANCES).is_dir();
    if traced {
        assert_eq!(traces().len(), 1, "the recording's block trace");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The daemon outlives the process that started it, serving the filesystem above.
    assert_eq!(daemons_under(dir.path()).len(), 1);
    let lines = fsarena::state::cleanup(dir.path()).unwrap();
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("could not") || l.starts_with("ignored")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("undid write recorder")),
        "{lines:#?}"
    );
    assert_eq!(common::mounts_under(dir.path()), Vec::<String>::new());
    assert_eq!(common::loops_under(dir.path()), Vec::<String>::new());
    assert_eq!(daemons_under(dir.path()), Vec::<i32>::new());
    assert_no_recording_dirs(dir.path());
    if traced {
        assert!(
            lines.iter().any(|l| l.starts_with("undid block trace")),
            "{lines:#?}"
        );
        assert_eq!(traces(), Vec::<String>::new());
    }
}

const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// The tracing instances process `pid` made (`fsarena-PID-N`).
fn traces_of(pid: u32) -> Vec<String> {
    let prefix = format!("fsarena-{pid}-");
    std::fs::read_dir(INSTANCES)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_recorder_that_dies_is_an_error_and_the_teardown_leaves_nothing() {
    let test = "a_recorder_that_dies_is_an_error_and_the_teardown_leaves_nothing";
    if skip(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let t = twin("ext4", dir.path(), "dies");
    let rec = Recording::start_with(&t, 64 << 20, &common::bin()).unwrap();
    let pids = daemons_under(dir.path());
    assert_eq!(pids.len(), 1);
    // A Ctrl-C (or a terminal closing, or a polite kill) does not stop it: the filesystem
    // above must be unmounted first.
    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: kill(2) of the daemon this test just started.
        unsafe { libc::kill(pids[0], s) };
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        daemons_under(dir.path()),
        pids,
        "a signal stopped the recorder"
    );
    let before = rec.position().unwrap();
    std::fs::write(rec.mountpoint().join("kept"), b"kept").unwrap();
    File::open(rec.mountpoint().join("kept"))
        .unwrap()
        .sync_all()
        .unwrap();
    assert!(rec.position().unwrap() > before);
    // SAFETY: kill(2) of the daemon this test just started.
    unsafe { libc::kill(pids[0], libc::SIGKILL) };
    // Writes and their sync fail now; the filesystem can still be unmounted.
    let wrote = std::fs::write(rec.mountpoint().join("a"), b"lost")
        .and_then(|_| File::open(rec.mountpoint().join("a"))?.sync_all());
    assert!(wrote.is_err(), "a write reached a dead recorder");
    let err = rec.finish().unwrap_err();
    assert!(format!("{err:#}").contains("recorder"), "{err:#}");
    t.state.finish().unwrap();
    assert!(!dir.path().join("state/dies.json").exists(), "records left");
    assert_eq!(common::mounts_under(dir.path()), Vec::<String>::new());
    assert_eq!(common::loops_under(dir.path()), Vec::<String>::new());
    assert_eq!(daemons_under(dir.path()), Vec::<i32>::new());
    assert_no_recording_dirs(dir.path());
}

#[test]
fn a_recording_that_cannot_mount_leaves_nothing() {
    let test = "a_recording_that_cannot_mount_leaves_nothing";
    if skip(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let mut t = twin("ext4", dir.path(), "nomount");
    t.mount_opts = "no_such_option_at_all".into();
    let err = Recording::start_with(&t, 64 << 20, &common::bin())
        .err()
        .expect("a mount option ext4 does not know fails the start");
    assert!(format!("{err:#}").contains("mount"), "{err:#}");
    t.state.finish().unwrap();
    assert!(
        !dir.path().join("state/nomount.json").exists(),
        "records left"
    );
    assert_eq!(common::mounts_under(dir.path()), Vec::<String>::new());
    assert_eq!(common::loops_under(dir.path()), Vec::<String>::new());
    assert_eq!(daemons_under(dir.path()), Vec::<i32>::new());
    assert_no_recording_dirs(dir.path());
}
