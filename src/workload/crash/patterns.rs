//! The application patterns of `crash`, after ALICE (Pillai et al., "All File Systems Are
//! Not Created Equal", OSDI '14) and the seeds: each writes files the way a kind of
//! application does, and records what it was promised ([`Expect`]) at the log positions the
//! recorder reports (`Tape::position`).
//!
//! * `fsync-write`: a new file per operation, written whole, `fsync`ed, and its directory
//!   `fsync`ed; promised then.
//! * `rename-replace`: four files replaced in turn by writing `NAME.tmp`, `fsync`ing it,
//!   renaming it over `NAME` and `fsync`ing the directory: the careful way; each new
//!   version promised, and `NAME.tmp` promised gone.
//! * `rename-replace-nofsync`: the same without either `fsync` (the way many programs save
//!   a file); an unrelated small file is written and `fsync`ed after each rename, as other
//!   programs do all the time, which makes the filesystem commit. Only the first versions
//!   (written carefully) are promised. The program assumes the file is a whole version,
//!   old or new, never empty (what ext4's `auto_da_alloc` provides), but POSIX promises
//!   nothing once the unsynced rename began: a file found empty, cut short or mixed then
//!   is "not promised, lost" ([`super::expect::Finding::Unpromised`]), not a broken promise.
//! * `overwrite`: four files overwritten in place in turn, each overwrite `fsync`ed and then
//!   promised; a file found mixed from the old and new contents, or cut short, while an
//!   overwrite was in flight is "not promised, lost": no write is atomic.
//! * `append-log`: 1000-byte records appended to one file, `fdatasync` every `sync_every`
//!   records; the records up to each `fdatasync` promised.
//! * `churn`: a Postmark-like mix on a pool of files: create (written, `fsync`ed with its
//!   directory), append (`fsync`ed) or delete (directory `fsync`ed), chosen from the seed.
//!   Each file's last `fsync`ed contents are promised, and only those: its files are
//!   judged as logs, so an append in flight may have left any prefix of its bytes, or
//!   zeros, after them. A deleted file must stay gone once its directory's `fsync`
//!   returned.
//!
//! The SQLite patterns are in [`super::sqlite`].

use super::expect::{Expect, Shape};
use crate::probe::recorder::Op;
use anyhow::{Context, Result};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Bytes of one `append-log` record.
pub const RECORD: usize = 1000;
/// Files `rename-replace` cycles through.
const REPLACED: u64 = 4;
/// Files `churn` keeps at most.
const CHURN_POOL: usize = 8;

/// Where a pattern reports its operations and learns the log's position.
pub trait Tape {
    /// One operation done, begun at `t`, of `bytes`.
    fn done(&mut self, op: Op, t: Instant, bytes: u64);
    /// The write log's position now (0 where nothing is recorded).
    fn position(&mut self) -> Result<u64>;
    /// An `fsync` or `fdatasync` returned (counted where recorded).
    fn synced(&mut self) {}
}

/// The size of a pattern's work.
#[derive(Clone, Debug)]
pub struct Work {
    /// Operations (files, replacements, records, transactions).
    pub ops: u64,
    /// Bytes of a file (`fsync-write`, `rename-replace`; `churn`'s largest).
    pub size: usize,
    /// `append-log`: records between two `fdatasync`s.
    pub sync_every: u64,
    pub seed: u64,
    /// A negative control of the checker: every `forget`-th `fsync` or `fdatasync` of the
    /// pattern is left out, its promise recorded all the same (0: none).
    pub forget: u64,
    /// The SQLite patterns' `PRAGMA synchronous` (`None`: FULL with WAL, EXTRA without).
    pub synchronous: Option<&'static str>,
    /// `ace`: the workloads, each its steps ([`super::ace`]).
    pub ace: Vec<Vec<super::ace::Step>>,
}

/// The contents of version `version` of file `name`: seeded bytes, different for every
/// file and version, so that a block in a crash state tells which it came from.
pub fn contents(seed: u64, name: &str, version: u64, len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ crate::fnv::hash(name.as_bytes()));
    for _ in 0..version {
        rng.jump();
    }
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

/// `fsync` of `dir` itself.
pub fn sync_dir(dir: &Path, tape: &mut dyn Tape) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("fsync of {}", dir.display()))?;
    tape.synced();
    Ok(())
}

/// A pattern's own `fsync`s and `fdatasync`s, of which one told to forget
/// ([`Work::forget`] = N) leaves out every N-th — as a program with that bug would, which
/// goes on to believe its data safe.
pub(super) struct Syncs {
    every: u64,
    calls: u64,
}

impl Syncs {
    pub(super) fn new(w: &Work) -> Syncs {
        Syncs {
            every: w.forget,
            calls: 0,
        }
    }

    fn forgets(&mut self) -> bool {
        self.calls += 1;
        self.every > 0 && self.calls % self.every == 0
    }

    /// `fsync` of `f` (`fdatasync` when `data_only`), unless this one is forgotten.
    pub(super) fn file(&mut self, f: &File, data_only: bool, tape: &mut dyn Tape) -> Result<()> {
        if self.forgets() {
            return Ok(());
        }
        if data_only {
            f.sync_data()?;
        } else {
            f.sync_all()?;
        }
        tape.synced();
        Ok(())
    }

    /// `fsync` of `dir` itself, unless this one is forgotten.
    pub(super) fn dir(&mut self, dir: &Path, tape: &mut dyn Tape) -> Result<()> {
        match self.forgets() {
            true => Ok(()),
            false => sync_dir(dir, tape),
        }
    }
}

/// Writes `data` to the new or truncated file `path`, `fsync`ed through `sync` if given.
fn write_file(path: &Path, data: &[u8], sync: Option<&mut Syncs>, tape: &mut dyn Tape) -> Result<()> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(data)?;
    if let Some(s) = sync {
        s.file(&f, false, tape)?;
    }
    Ok(())
}

/// `fsync-write`.
pub fn fsync_write(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let mut s = Syncs::new(w);
    for i in 0..w.ops {
        let name = format!("f{i}");
        let data = contents(w.seed, &name, 0, w.size);
        let t = Instant::now();
        e.begin(&name, Shape::Whole, data.clone(), tape.position()?);
        write_file(&dir.join(&name), &data, Some(&mut s), tape)?;
        s.dir(dir, tape)?;
        e.promise(&name, tape.position()?);
        tape.done(Op::Create, t, data.len() as u64);
    }
    Ok(e)
}

/// The first versions of the files a pattern replaces in turn (`PREFIX0`, `PREFIX1`, …,
/// at most [`REPLACED`]): each written and `fsync`ed, their directory `fsync`ed, all
/// promised then. Returns how many.
fn first_versions(
    dir: &Path,
    w: &Work,
    prefix: &str,
    e: &mut Expect,
    s: &mut Syncs,
    tape: &mut dyn Tape,
) -> Result<u64> {
    let files = REPLACED.min(w.ops.max(1));
    for i in 0..files {
        let name = format!("{prefix}{i}");
        let data = contents(w.seed, &name, 0, w.size);
        e.begin(&name, Shape::Whole, data.clone(), tape.position()?);
        write_file(&dir.join(&name), &data, Some(&mut *s), tape)?;
    }
    s.dir(dir, tape)?;
    let at = tape.position()?;
    (0..files).for_each(|i| e.promise(&format!("{prefix}{i}"), at));
    Ok(files)
}

/// `rename-replace` (`careful`) and `rename-replace-nofsync`.
pub fn rename_replace(dir: &Path, w: &Work, careful: bool, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let mut s = Syncs::new(w);
    let files = first_versions(dir, w, "cfg", &mut e, &mut s, tape)?;
    for round in 0..w.ops {
        let name = format!("cfg{}", round % files);
        let version = 1 + round / files;
        let data = contents(w.seed, &name, version, w.size);
        let tmp_name = format!("{name}.tmp");
        let tmp = dir.join(&tmp_name);
        let t = Instant::now();
        let started = tape.position()?;
        if careful {
            e.begin(&name, Shape::Whole, data.clone(), started);
            e.temp_created(&tmp_name, started);
        } else {
            e.begin_unsynced(&name, data.clone(), started);
        }
        write_file(&tmp, &data, careful.then_some(&mut s), tape)?;
        std::fs::rename(&tmp, dir.join(&name)).context("rename over the old file")?;
        if careful {
            s.dir(dir, tape)?;
            let at = tape.position()?;
            e.promise(&name, at);
            e.temp_gone(&tmp_name, at);
        } else {
            let tick = contents(w.seed, "tick", round, 512);
            write_file(&dir.join("tick"), &tick, Some(&mut s), tape)?;
        }
        tape.done(Op::Rename, t, data.len() as u64);
    }
    Ok(e)
}

/// `overwrite`: four files written and `fsync`ed with their directory, then overwritten
/// in place in turn (the same size, new contents, from offset 0) and `fsync`ed after each
/// overwrite, as a program that keeps fixed-size records in place does. Each version is
/// promised when its `fsync` returned; while an overwrite is in flight the program expects
/// the old or the new contents, but POSIX makes no write atomic, so a file found mixed or
/// cut short then is "not promised, lost" ([`super::expect::Finding::Unpromised`]): what
/// a device that tears a write leaves ([`crate::provision::recorded::states`]' torn states).
pub fn overwrite(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let mut s = Syncs::new(w);
    let files = first_versions(dir, w, "rec", &mut e, &mut s, tape)?;
    for round in 0..w.ops {
        let name = format!("rec{}", round % files);
        let data = contents(w.seed, &name, 1 + round / files, w.size);
        let t = Instant::now();
        e.begin_unsynced(&name, data.clone(), tape.position()?);
        let path = dir.join(&name);
        let mut f = OpenOptions::new()
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        f.write_all(&data)?;
        s.file(&f, false, tape)?;
        e.promise(&name, tape.position()?);
        tape.done(Op::Write, t, data.len() as u64);
    }
    Ok(e)
}

/// `append-log`.
pub fn append_log(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let stream = contents(w.seed, "log", 0, RECORD * w.ops as usize);
    let path = dir.join("log");
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    let mut s = Syncs::new(w);
    s.dir(dir, tape)?;
    for k in 0..w.ops as usize {
        let t = Instant::now();
        let end = (k + 1) * RECORD;
        e.begin("log", Shape::Log, stream[..end].to_vec(), tape.position()?);
        f.write_all(&stream[k * RECORD..end])?;
        if (k as u64 + 1) % w.sync_every == 0 || k as u64 + 1 == w.ops {
            s.file(&f, true, tape)?;
            e.promise("log", tape.position()?);
        }
        tape.done(Op::Append, t, RECORD as u64);
    }
    Ok(e)
}

/// `churn`.
pub fn churn(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    let mut e = Expect::default();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(w.seed ^ 0xc4u64);
    let mut s = Syncs::new(w);
    let mut live: Vec<(String, Vec<u8>)> = Vec::new();
    for n in 0..w.ops {
        let t = Instant::now();
        let choice = if live.is_empty() {
            0
        } else if live.len() >= CHURN_POOL {
            1 + rng.gen_range(0..2)
        } else {
            rng.gen_range(0..3)
        };
        let at = tape.position()?;
        match choice {
            0 => {
                let name = format!("p{n}");
                let len = rng.gen_range(1..=w.size);
                let data = contents(w.seed, &name, 0, len);
                e.begin(&name, Shape::Log, data.clone(), at);
                write_file(&dir.join(&name), &data, Some(&mut s), tape)?;
                s.dir(dir, tape)?;
                e.promise(&name, tape.position()?);
                tape.done(Op::Create, t, len as u64);
                live.push((name, data));
            }
            1 => {
                let k = rng.gen_range(0..live.len());
                let (name, data) = &mut live[k];
                let more = contents(w.seed, name, data.len() as u64, rng.gen_range(1..=4096));
                data.extend_from_slice(&more);
                e.begin(name, Shape::Log, data.clone(), at);
                let mut f = OpenOptions::new().append(true).open(dir.join(&*name))?;
                f.write_all(&more)?;
                s.file(&f, false, tape)?;
                e.promise(name, tape.position()?);
                tape.done(Op::Append, t, more.len() as u64);
            }
            _ => {
                let (name, _) = live.swap_remove(rng.gen_range(0..live.len()));
                e.unlink(&name, at);
                std::fs::remove_file(dir.join(&name))?;
                s.dir(dir, tape)?;
                e.promise_unlink(&name, tape.position()?);
                tape.done(Op::Delete, t, 0);
            }
        }
    }
    Ok(e)
}

/// Bytes of each `in-flight` write.
const IN_FLIGHT: usize = 1 << 20;

/// `in-flight`, the pessimistic log's negative control: a program with a bug. For each of
/// `ops` files (1 MiB, written and promised first), it overwrites the file in place with
/// `O_DIRECT` from a second thread and, while that write is still in flight, `fdatasync`s
/// another file and takes the first as safe (promised) — before its write completed, with
/// no `fsync` of its own. A flush issued
/// while a write is in flight does not cover it, so the states after the promise that
/// leave the write out must lose it; the optimistic log (a flush covers all served before
/// it) misses those whose write was served before the flush.
pub fn in_flight(dir: &Path, w: &Work, tape: &mut dyn Tape) -> Result<Expect> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let mut e = Expect::default();
    let mut s = Syncs::new(w);
    // A file per round, written and promised whole first, so that what a state lacks of
    // its overwrite is that overwrite's alone.
    let name = |round: u64| format!("slow{round}");
    for round in 0..w.ops {
        let first = contents(w.seed, &name(round), 0, IN_FLIGHT);
        e.begin(&name(round), Shape::Whole, first.clone(), tape.position()?);
        write_file(&dir.join(name(round)), &first, Some(&mut s), tape)?;
    }
    let other = dir.join("other");
    write_file(&other, &contents(w.seed, "other", 0, 4096), Some(&mut s), tape)?;
    s.dir(dir, tape)?;
    let at = tape.position()?;
    (0..w.ops).for_each(|round| e.promise(&name(round), at));
    let small = OpenOptions::new().write(true).open(&other)?;
    // O_DIRECT wants an aligned buffer: 4 KiB alignment serves every device here.
    let layout = std::alloc::Layout::from_size_align(IN_FLIGHT, 4096).expect("a valid layout");
    // SAFETY: the layout is not empty; the buffer is freed below with the same layout.
    let buf = unsafe { std::alloc::alloc(layout) };
    anyhow::ensure!(!buf.is_null(), "no memory for an aligned buffer");
    let result = (|| -> Result<()> {
        for round in 0..w.ops {
            let t = Instant::now();
            let path = dir.join(name(round));
            let direct = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(&path)
                .with_context(|| format!("opening {} with O_DIRECT", path.display()))?;
            let data = contents(w.seed, &name(round), 1, IN_FLIGHT);
            // SAFETY: `buf` holds IN_FLIGHT bytes, and no one else uses it meanwhile.
            let aligned = unsafe { std::slice::from_raw_parts_mut(buf, IN_FLIGHT) };
            aligned.copy_from_slice(&data);
            e.begin(&name(round), Shape::Whole, data, tape.position()?);
            std::thread::scope(|scope| -> Result<()> {
                let writer = scope.spawn(|| direct.write_all_at(aligned, 0));
                std::thread::sleep(std::time::Duration::from_micros(200));
                small.write_all_at(&contents(w.seed, "other", round + 1, 4096), 0)?;
                s.file(&small, true, tape)?;
                // The bug: taken as safe, though its write may not have completed.
                e.promise(&name(round), tape.position()?);
                writer.join().expect("the writer thread")?;
                Ok(())
            })?;
            tape.done(Op::Write, t, IN_FLIGHT as u64);
        }
        Ok(())
    })();
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(buf, layout) };
    result.map(|()| e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::crash::expect::{Finding, Window};

    /// Counts operations and syncs; positions go up by one per question.
    #[derive(Default)]
    struct Counting {
        ops: u64,
        at: u64,
        syncs: u64,
    }

    impl Tape for Counting {
        fn done(&mut self, _: Op, _: Instant, _: u64) {
            self.ops += 1;
        }
        fn position(&mut self) -> Result<u64> {
            self.at += 1;
            Ok(self.at)
        }
        fn synced(&mut self) {
            self.syncs += 1;
        }
    }

    fn work() -> Work {
        Work {
            ops: 12,
            size: 10_000,
            sync_every: 4,
            seed: 3,
            forget: 0,
            synchronous: None,
            ace: Vec::new(),
        }
    }

    #[test]
    fn a_pattern_told_to_forget_leaves_out_every_nth_sync_and_promises_all_the_same() {
        let run = |forget| {
            let dir = tempfile::tempdir().unwrap();
            let mut tape = Counting::default();
            let w = Work { forget, ..work() };
            let e = fsync_write(dir.path(), &w, &mut tape).unwrap();
            (tape.syncs, e.promises())
        };
        // 12 files, each an fsync of the file and of its directory.
        assert_eq!(run(0), (24, 12));
        assert_eq!(run(2), (12, 12));
        assert_eq!(run(1), (0, 12));
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Counting::default();
        let w = Work { forget: 3, ..work() };
        append_log(dir.path(), &w, &mut tape).unwrap();
        // The directory and 3 fdatasyncs (12 records, one every 4): the 3rd left out.
        assert_eq!(tape.syncs, 3);
    }

    /// After a pattern ran to its end (nothing lost), every file judges ok in the state
    /// that holds everything, and the expected files are the ones on disk.
    fn all_ok(run: fn(&Path, &Work, &mut dyn Tape) -> Result<Expect>) {
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Counting::default();
        let e = run(dir.path(), &work(), &mut tape).unwrap();
        assert_eq!(tape.ops, 12);
        let end = tape.at + 1;
        for (path, finding) in e.judge_dir(dir.path(), Window { from: end, to: u64::MAX }) {
            assert_eq!(finding, Finding::Ok, "{path}");
        }
    }

    #[test]
    fn each_pattern_judges_its_own_finished_files_ok() {
        all_ok(fsync_write);
        all_ok(|d, w, t| rename_replace(d, w, true, t));
        all_ok(|d, w, t| rename_replace(d, w, false, t));
        all_ok(append_log);
        all_ok(churn);
    }

    #[test]
    fn a_promised_file_emptied_is_found_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut tape = Counting::default();
        let e = fsync_write(dir.path(), &work(), &mut tape).unwrap();
        std::fs::write(dir.path().join("f3"), b"").unwrap();
        std::fs::remove_file(dir.path().join("f4")).unwrap();
        let end = tape.at + 1;
        let found: Vec<Finding> = e.judge_dir(dir.path(), Window { from: end, to: u64::MAX }).into_iter().map(|x| x.1).collect();
        assert_eq!(found.iter().filter(|&&f| f == Finding::Empty).count(), 1);
        assert_eq!(found.iter().filter(|&&f| f == Finding::Lost).count(), 1);
    }

    #[test]
    fn contents_differ_by_file_and_version_and_repeat_by_seed() {
        assert_eq!(contents(1, "a", 0, 64), contents(1, "a", 0, 64));
        assert_ne!(contents(1, "a", 0, 64), contents(1, "a", 1, 64));
        assert_ne!(contents(1, "a", 0, 64), contents(1, "b", 0, 64));
        assert_ne!(contents(1, "a", 0, 64), contents(2, "a", 0, 64));
    }
}
