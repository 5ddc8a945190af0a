//! Fault injection: small runs (smallfiles and postmark on ext4 and tmpfs, each try in an
//! image directory of its own) hit at seeded random points — a step of the run's log, plus
//! a few milliseconds — by `kill -9`, SIGINT or SIGTERM, an image directory whose own
//! filesystem fills up, and a result database whose filesystem fills up, turns read-only,
//! or that is deleted; and pgbench runs (a PostgreSQL server of fsarena's on the target)
//! hit by `kill -9` or SIGINT, after which no server may be left running; and crash runs
//! (a write recorder's FUSE daemon under a loop device, crash states on loop devices of
//! their own) hit by `kill -9` or SIGINT, after which no recorder may be left running. After each: `fsarena cleanup --image-dir`, then nothing may be left
//! (mount, loop device, image, state or temporary file) and no trial the run had finished
//! may be lost: each is in the database or comes back from the run's journal.
//!
//! Prints one tally line per kind (`fault-injection: KIND: tries N, clean N, lost N`, lost
//! counting trials). Bounded for CI (two tries per kind, seed 1); a campaign:
//! `FSARENA_FAULT_TRIES=200 FSARENA_FAULT_SEED=7 cargo test --test fault_injection -- --nocapture`
//! (`FSARENA_FAULT_KIND=Crash`: only the tries of that kind).

mod common;

use common::watch::{leftovers, Watched};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The runs hit: 8 trials of a few seconds in all.
const RUN: &[&str] = &[
    "smallfiles:files=1500",
    "postmark:number=200,transactions=400",
    "--fs",
    "ext4,tmpfs",
    "--size",
    "64MiB",
    "--reps",
    "2",
];

/// Lines an undisturbed run of [`RUN`] logs (81 here): the fault lands after one of
/// them, or after the run's end.
const STEPS: usize = 85;

/// The pgbench runs hit (Kind::Pgbench): 2 trials, server started and stopped in each.
const PG_RUN: &[&str] = &[
    "pgbench:scale=1,duration=2",
    "--fs",
    "ext4,tmpfs",
    "--size",
    "128MiB",
    "--reps",
    "1",
];

/// Lines an undisturbed run of [`PG_RUN`] logs, about.
const PG_STEPS: usize = 8;

/// The crash runs hit (Kind::Crash): two patterns, each recorded on a twin (a FUSE daemon
/// of fsarena's under a loop device) and its crash states checked on loop devices.
const CRASH_RUN: &[&str] = &[
    "crash:pattern=fsync-write,ops=16,states=16",
    "crash:pattern=sqlite-wal,ops=16,states=16",
    "--fs",
    "ext4",
    "--size",
    "256MiB",
    "--reps",
    "1",
];

/// Lines an undisturbed run of [`CRASH_RUN`] logs (262 here).
const CRASH_STEPS: usize = 262;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Kill9,
    Interrupt,
    ImageDirFull,
    DbFull,
    DbReadOnly,
    DbDeleted,
    /// `kill -9` (even steps) or SIGINT (odd) during a pgbench run.
    Pgbench,
    /// `kill -9` (even steps) or SIGINT (odd) during a crash run: while recording, or
    /// checking crash states.
    Crash,
}

const KINDS: [Kind; 8] = [
    Kind::Kill9,
    Kind::Interrupt,
    Kind::ImageDirFull,
    Kind::DbFull,
    Kind::DbReadOnly,
    Kind::DbDeleted,
    Kind::Pgbench,
    Kind::Crash,
];

/// What one try found.
#[derive(Default)]
struct Outcome {
    /// The exit code, and whether the run was still alive when hit.
    code: Option<i32>,
    alive: bool,
    /// Whether the hit was a `kill -9`.
    killed: bool,
    /// Seconds from SIGINT/SIGTERM to the exit.
    stop_s: Option<f64>,
    /// Nothing was left after cleanup.
    clean: bool,
    /// Finished trials found neither in the database nor in the journal.
    lost: usize,
    /// What went wrong, for the failure message.
    problems: Vec<String>,
}

/// A filesystem of the test's own (tmpfs or a small loop ext4), unmounted when dropped.
struct OwnFs {
    mnt: PathBuf,
    image: Option<PathBuf>,
}

impl OwnFs {
    fn tmpfs(mnt: PathBuf, size: &str) -> OwnFs {
        std::fs::create_dir_all(&mnt).unwrap();
        sh(
            "mount",
            &["-t", "tmpfs", "-o", &format!("size={size}"), "fsarena-fi"],
            &mnt,
        );
        OwnFs { mnt, image: None }
    }

    fn ext4(mnt: PathBuf, size_mib: u64, options: &str) -> OwnFs {
        std::fs::create_dir_all(&mnt).unwrap();
        let image = mnt.with_extension("img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size_mib << 20)
            .unwrap();
        sh("mkfs.ext4", &["-q", "-F"], &image);
        let opts = format!("loop,{options}");
        let ok = Command::new("mount")
            .args(["-o", &opts])
            .arg(&image)
            .arg(&mnt)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount {}", image.display());
        OwnFs {
            mnt,
            image: Some(image),
        }
    }

    /// Fills it: a file of zeros as large as it takes.
    fn fill(&self) {
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=4k", "status=none"])
            .arg(format!("of={}", self.mnt.join("filler").display()))
            .stderr(std::process::Stdio::null())
            .status();
    }

    /// ext4's reaction to a disk error under `errors=remount-ro`: read-only from now on.
    fn fail_read_only(&self) {
        let dev = String::from_utf8_lossy(
            &Command::new("findmnt")
                .args(["-no", "SOURCE"])
                .arg(&self.mnt)
                .output()
                .unwrap()
                .stdout,
        )
        .trim()
        .trim_start_matches("/dev/")
        .to_string();
        let _ = std::fs::write(format!("/sys/fs/ext4/{dev}/trigger_fs_error"), "1");
    }
}

impl Drop for OwnFs {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.mnt.join("filler"));
        let _ = Command::new("umount").arg(&self.mnt).status();
        if let Some(img) = &self.image {
            let _ = std::fs::remove_file(img);
        }
    }
}

fn sh(program: &str, args: &[&str], path: &Path) {
    let ok = Command::new(program)
        .args(args)
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "{program} {args:?} {}", path.display());
}

/// (target, workload, rep) of every trial a phase line of `lines` names, in order.
fn started(lines: &[String]) -> Vec<(String, String, u64)> {
    let mut out: Vec<(String, String, u64)> = Vec::new();
    for l in lines {
        let Some(rest) = l.split("[rep ").nth(1) else {
            continue;
        };
        let Some((rep, rest)) = rest.split_once('/') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once("] ") else {
            continue;
        };
        let Some((who, _phase)) = rest.split_once(": ") else {
            continue;
        };
        let mut w = who.split(' ');
        let (Some(target), Some(workload), Ok(rep)) = (w.next(), w.next(), rep.parse()) else {
            continue;
        };
        let key = (target.to_string(), workload.to_string(), rep);
        if out.last() != Some(&key) {
            out.push(key);
        }
    }
    out
}

/// The trials kept of the try: in the database at `db` and in the journals under
/// `image_dir/journal`, as (target, workload, rep).
fn kept(db: &Path, image_dir: &Path) -> BTreeSet<(String, String, u64)> {
    let mut all = BTreeSet::new();
    let key = |t: &fsarena::result::Trial| (t.target.clone(), t.workload.clone(), t.rep as u64);
    if let Ok(store) = fsarena::store::Store::open_existing(db) {
        if let Ok(run) = store.load("last") {
            all.extend(run.trials.iter().map(key));
        }
    }
    for e in std::fs::read_dir(image_dir.join("journal"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(run) = fsarena::journal::read(&e.path()) {
            all.extend(run.trials.iter().map(key));
        }
    }
    all
}

/// The trials the run reported finished: those of its JSON when it wrote one, else every
/// trial whose successor had begun (the journal and database get a trial before the next
/// one starts).
fn finished(json: &Path, lines: &[String]) -> BTreeSet<(String, String, u64)> {
    if let Ok(bytes) = std::fs::read(json) {
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        return v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["status"] != "interrupted")
            .map(|t| {
                (
                    t["target"].as_str().unwrap().to_string(),
                    t["workload"].as_str().unwrap().to_string(),
                    t["rep"].as_u64().unwrap(),
                )
            })
            .collect();
    }
    let mut s = started(lines);
    s.pop();
    s.into_iter().collect()
}

/// Where one try's run writes: its image directory, database and JSON, and the
/// filesystem of the test's own that the fault fills or fails.
struct Place {
    own: Option<OwnFs>,
    image_dir: PathBuf,
    db: PathBuf,
    json: PathBuf,
    /// Last: removed after `own` is unmounted (fields drop in order).
    _top: tempfile::TempDir,
}

impl Place {
    fn new(kind: Kind) -> Place {
        let top = common::image_dir();
        if kind == Kind::Pgbench {
            // The server runs as `postgres`, which must reach its data directory.
            let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
            std::fs::set_permissions(top.path(), mode).unwrap();
        }
        let out_dir = top.path().join("out");
        std::fs::create_dir_all(&out_dir).unwrap();
        let at = |name: &str| top.path().join(name);
        let own = match kind {
            Kind::ImageDirFull => Some(OwnFs::ext4(at("imgfs"), 200, "errors=continue")),
            Kind::DbFull => Some(OwnFs::tmpfs(at("dbfs"), "2m")),
            Kind::DbReadOnly => Some(OwnFs::ext4(at("dbfs"), 16, "errors=remount-ro")),
            _ => None,
        };
        let mnt = own.as_ref().map(|o| o.mnt.clone());
        let image_dir = match kind {
            Kind::ImageDirFull => mnt.clone().unwrap().join("img"),
            _ => at("img"),
        };
        let db = match kind {
            Kind::DbFull | Kind::DbReadOnly => mnt.unwrap().join("r.db"),
            _ => out_dir.join("r.db"),
        };
        Place {
            own,
            image_dir,
            db,
            json: out_dir.join("run.json"),
            _top: top,
        }
    }

    /// Where [`Kind::DbDeleted`] puts the database it takes away.
    fn gone(&self) -> PathBuf {
        self.db.with_extension("gone")
    }

    /// Hits the run with the fault of `kind`.
    fn hit(&self, kind: Kind, run: &mut Watched, step: usize) {
        match kind {
            Kind::Kill9 => {
                let _ = run.child.kill();
            }
            Kind::Pgbench | Kind::Crash if step % 2 == 0 => {
                let _ = run.child.kill();
            }
            Kind::Pgbench | Kind::Crash => {
                // SAFETY: a signal to our own child.
                unsafe { libc::kill(run.child.id() as i32, libc::SIGINT) };
            }
            Kind::Interrupt => {
                let sig = [libc::SIGINT, libc::SIGTERM][step % 2];
                // SAFETY: a signal to our own child.
                unsafe { libc::kill(run.child.id() as i32, sig) };
            }
            Kind::ImageDirFull | Kind::DbFull => self.own.as_ref().unwrap().fill(),
            Kind::DbReadOnly => self.own.as_ref().unwrap().fail_read_only(),
            Kind::DbDeleted => {
                // To the run, a rename is a deletion (its path names no file any more);
                // the test keeps the file to see what the run had stored when it went.
                let _ = std::fs::rename(&self.db, self.gone());
            }
        }
    }
}

/// Whether `kind` is hit by `kill -9` on even steps and SIGINT on odd ones.
fn paired(kind: Kind) -> bool {
    matches!(kind, Kind::Pgbench | Kind::Crash)
}

/// One try of `kind`, the fault after log line `step` plus `extra`.
fn one_try(kind: Kind, step: usize, extra: Duration) -> Outcome {
    let place = Place::new(kind);
    let mut args = vec!["run"];
    args.extend_from_slice(match kind {
        Kind::Pgbench => PG_RUN,
        Kind::Crash => CRASH_RUN,
        _ => RUN,
    });
    args.extend(["--image-dir", place.image_dir.to_str().unwrap()]);
    args.extend(["--db", place.db.to_str().unwrap()]);
    args.extend(["--json", place.json.to_str().unwrap()]);
    let mut run = Watched::start(&args);
    let mut lines_seen = 0;
    while lines_seen < step && run.wait_for("fsarena", Duration::from_secs(60)) {
        lines_seen += 1;
    }
    std::thread::sleep(extra);
    let alive = run.child.try_wait().unwrap().is_none();
    let hit = Instant::now();
    if alive {
        // After the end the fault would hit results already reported stored (deleting
        // a database then is deleting them): the run is only checked as it ended.
        place.hit(kind, &mut run, step);
    }
    let status = run.wait_until(Instant::now() + Duration::from_secs(180));
    let mut o = Outcome {
        code: status.and_then(|s| s.code()),
        alive,
        killed: kind == Kind::Kill9 || (paired(kind) && step % 2 == 0),
        ..Default::default()
    };
    let interrupt = kind == Kind::Interrupt || (paired(kind) && !o.killed);
    if interrupt && alive {
        o.stop_s = Some(hit.elapsed().as_secs_f64());
    }
    judge_exit(kind, &run, &place.json, hit.elapsed(), &mut o);
    if interrupt {
        // Teardown alone leaves nothing: cleanup must have nothing to do.
        let left = leftovers(&place.image_dir);
        if !left.is_empty() {
            o.problems
                .push(format!("left after SIGINT/SIGTERM: {left:?}"));
        }
    }
    // The filesystems the test filled are emptied first: cleanup is not asked to work on a
    // full disk, and what it leaves is then fsarena's doing.
    if let Some(fs) = &place.own {
        let _ = std::fs::remove_file(fs.mnt.join("filler"));
    }
    let cleanup = common::cleanup(&place.image_dir);
    if !cleanup.status.success() {
        let out = String::from_utf8_lossy(&cleanup.stdout);
        o.problems.push(format!("cleanup failed: {out}"));
    }
    let left = leftovers(&place.image_dir);
    o.clean = left.is_empty();
    if !o.clean {
        o.problems.push(format!("left after cleanup: {left:?}"));
        // Undone before the directory goes (the test's own mess, not a result).
        let _ = common::cleanup(&place.image_dir);
    }
    // A run that said "stored in" before the database went had stored everything (the
    // deletion came after its last check, as after its end): that file is the database
    // the user deleted. A run that noticed must have kept everything in its journal.
    let db = match (kind, o.code) {
        (Kind::DbDeleted, Some(0)) if place.gone().exists() => place.gone(),
        _ => place.db.clone(),
    };
    let have = kept(&db, &place.image_dir);
    let done = finished(&place.json, &run.seen);
    let lost: Vec<_> = done.difference(&have).cloned().collect();
    o.lost = lost.len();
    if !lost.is_empty() {
        o.problems.push(format!("finished trials lost: {lost:?}"));
    }
    if !o.problems.is_empty() {
        o.problems.push(format!("output:\n{}", run.text()));
    }
    o
}

/// Checks the exit code and what the run said against what the fault of `kind` allows;
/// `took` is the time from the fault to the exit.
fn judge_exit(kind: Kind, run: &Watched, json: &Path, took: Duration, o: &mut Outcome) {
    let said = run.text();
    let interrupt = kind == Kind::Interrupt || (paired(kind) && !o.killed);
    let expected: &[Option<i32>] = match kind {
        _ if !o.alive => &[Some(0)],
        Kind::Kill9 => &[None],
        Kind::Pgbench | Kind::Crash if o.killed => &[None],
        Kind::Pgbench | Kind::Crash => &[Some(130), Some(0)],
        // A signal after the last trial, while the run reports, finds nothing to stop
        // (checked below: the run is complete then).
        Kind::Interrupt => &[Some(130), Some(0)],
        _ => &[Some(0), Some(1)],
    };
    if interrupt && o.alive && o.code == Some(0) {
        let status = std::fs::read(json)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|v| v["status"].clone());
        if status != Some("complete".into()) {
            o.problems
                .push(format!("exit 0 after the signal, run {status:?}"));
        }
    }
    if !expected.contains(&o.code) {
        o.problems
            .push(format!("exit {:?}, expected {expected:?}", o.code));
    }
    if interrupt && o.alive && took > Duration::from_secs(10) {
        let s = took.as_secs_f64();
        o.problems
            .push(format!("{s:.1} s from the signal to the exit"));
    }
    if o.code == Some(0) && !said.contains("stored in") {
        o.problems.push("exit 0 without 'stored in'".into());
    }
    if o.code == Some(1) && said.contains("stored in") && kind == Kind::DbDeleted {
        o.problems.push("'stored in' a deleted database".into());
    }
}

#[test]
fn seeded_faults_leave_nothing_and_lose_no_finished_trial() {
    let test = "seeded_faults_leave_nothing_and_lose_no_finished_trial";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let tries = env("FSARENA_FAULT_TRIES", KINDS.len() as u64 * 2);
    let seed = env("FSARENA_FAULT_SEED", 1);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut tally = vec![(0usize, 0usize, 0usize); KINDS.len()];
    let mut stop_max_s: f64 = 0.0;
    let mut problems = Vec::new();
    // FSARENA_FAULT_KIND=Crash (a kind's name): a campaign of that kind only.
    let only = std::env::var("FSARENA_FAULT_KIND").ok();
    for i in 0..tries as usize {
        let k = i % KINDS.len();
        if only
            .as_ref()
            .is_some_and(|o| *o != format!("{:?}", KINDS[k]))
        {
            continue;
        }
        let step = match KINDS[k] {
            Kind::Pgbench => rng.gen_range(1..PG_STEPS),
            Kind::Crash => rng.gen_range(1..CRASH_STEPS),
            _ => rng.gen_range(1..STEPS),
        };
        let extra = Duration::from_millis(rng.gen_range(0..300));
        let o = one_try(KINDS[k], step, extra);
        eprintln!(
            "fault-injection: try {i}: {:?} after line {step} + {} ms: {}, exit {:?}, {}, lost {}",
            KINDS[k],
            extra.as_millis(),
            if o.alive {
                "hit while running"
            } else {
                "after the end"
            },
            o.code,
            if o.clean { "clean" } else { "NOT clean" },
            o.lost
        );
        stop_max_s = stop_max_s.max(o.stop_s.unwrap_or(0.0));
        tally[k].0 += 1;
        tally[k].1 += o.clean as usize;
        tally[k].2 += o.lost;
        if !o.problems.is_empty() {
            let what = format!(
                "{:?} after line {step} + {} ms",
                KINDS[k],
                extra.as_millis()
            );
            eprintln!("fault-injection: {what}: {}", o.problems.join("; "));
            problems.push(what);
        }
    }
    for (k, (n, clean, lost)) in tally.iter().enumerate() {
        eprintln!(
            "fault-injection: {:?}: tries {n}, clean {clean}, lost {lost}",
            KINDS[k]
        );
    }
    eprintln!("fault-injection: longest time from SIGINT/SIGTERM to exit: {stop_max_s:.2} s");
    let (n, clean, lost) = tally
        .iter()
        .fold((0, 0, 0), |a, t| (a.0 + t.0, a.1 + t.1, a.2 + t.2));
    eprintln!("fault-injection: all (seed {seed}): tries {n}, clean {clean}, lost {lost}");
    assert!(
        problems.is_empty(),
        "{} of {n} tries went wrong: {problems:?}",
        problems.len()
    );
}
