//! The churn driver: creates, changes and deletes files in `aged/` until the filesystem is
//! as full as asked and as much has been written in all, every choice drawn from one
//! random stream seeded by the run's seed, so that the same seed on the same filesystem
//! makes the same aged file set.
//!
//! One step either changes a live file (with the profile's `change_share`) or, when the
//! live files hold less than the goal, creates one, else deletes one (the profile's
//! victim). The steps go on until both goals are met. Every `sync_every` bytes the
//! filesystem is synced (`syncfs`), as time passing would: without it delayed allocation
//! would place everything written since the last writeback at once, and files that grew
//! over weeks would look as if written in one go. Nothing is fsynced per file.
//!
//! Room is counted in bytes of file data (what the steps wrote), not from `statfs`, so the
//! steps do not depend on how the filesystem accounts its metadata; the space the
//! filesystem reports as used afterwards is measured and stored beside. When the
//! filesystem is full before the goal (its metadata took more than planned), the step
//! that failed is undone, a file is deleted, and the event counted.

use super::profiles::{Change, Layout, Shape, SizeDist, Victims};
use super::AgeSpec;
use crate::data::{DataPool, DataSource, MAX_SLICE};
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How much aging is to do on a filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goal {
    /// Bytes of file data the live files hold at the end.
    pub live_bytes: u64,
    /// Bytes written in all (creates, appends, saves, page writes).
    pub write_bytes: u64,
    /// Bytes written between two syncs.
    pub sync_every: u64,
}

impl Goal {
    /// The goal for `spec` on a fresh filesystem of `capacity_bytes` of which `used_bytes`
    /// are used before aging (its metadata): `fill` percent of the capacity used, `churn`
    /// times the capacity written.
    pub fn new(spec: &AgeSpec, capacity_bytes: u64, used_bytes: u64) -> Goal {
        let full = (capacity_bytes as f64 * spec.fill_pct / 100.0) as u64;
        let live_bytes = full.saturating_sub(used_bytes);
        let write_bytes = ((capacity_bytes as f64 * spec.churn) as u64).max(live_bytes);
        Goal {
            live_bytes,
            write_bytes,
            sync_every: (capacity_bytes / 64).max(16 << 20),
        }
    }
}

/// What aging did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Churned {
    pub seconds: f64,
    /// Creates, changes and deletes.
    pub operations: u64,
    pub bytes_written: u64,
    /// Files and directories in `aged/` at the end.
    pub files: u64,
    pub dirs: u64,
    pub deleted: u64,
    /// Times the filesystem was full before the goal.
    pub full: u64,
}

/// One live file.
#[derive(Clone, Copy, Debug)]
struct Live {
    id: u64,
    dir: usize,
    size: u64,
}

struct Driver<'a> {
    root: &'a Path,
    shape: Shape,
    goal: Goal,
    rng: Xoshiro256PlusPlus,
    data: DataSource,
    dirs: Vec<(PathBuf, usize)>,
    made: Vec<bool>,
    live: VecDeque<Live>,
    live_bytes: u64,
    next_id: u64,
    max_size: u64,
    out: Churned,
    since_sync: u64,
}

/// Ages the empty directory `root` (on the filesystem to age) towards `goal` with the
/// profile of `spec`, deterministically from `seed`; `tick` is called now and then with
/// the bytes written so far (for progress). Stops with an error when a stop is asked for.
pub fn age(
    root: &Path,
    spec: &AgeSpec,
    goal: Goal,
    seed: u64,
    pool: &DataPool,
    tick: &mut dyn FnMut(u64),
) -> Result<Churned> {
    let started = Instant::now();
    let shape = spec.profile.shape();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6167_6564);
    let expected_files = (goal.live_bytes as f64 / mean_size(&shape.sizes)).max(1.0);
    let dirs = layout(&shape.layout, expected_files, &mut rng);
    let mut d = Driver {
        root,
        shape,
        goal,
        rng,
        data: pool.source(0x6167),
        made: vec![false; dirs.len()],
        dirs,
        live: VecDeque::new(),
        live_bytes: 0,
        next_id: 0,
        max_size: (goal.live_bytes / 16).max(64 << 10),
        out: Churned::default(),
        since_sync: 0,
    };
    d.made[0] = true;
    while d.out.bytes_written < goal.write_bytes || d.live_bytes < goal.live_bytes {
        if d.out.operations % 64 == 0 {
            crate::signals::check_stop()?;
            tick(d.out.bytes_written);
        }
        d.step()?;
        if d.since_sync >= goal.sync_every {
            crate::probe::sys::syncfs(root).context("syncfs while aging")?;
            d.since_sync = 0;
        }
    }
    crate::probe::sys::syncfs(root).context("syncfs after aging")?;
    d.out.files = d.live.len() as u64;
    d.out.dirs = d.made.iter().filter(|m| **m).count() as u64 - 1;
    d.out.seconds = started.elapsed().as_secs_f64();
    Ok(d.out)
}

/// Mean of a size distribution (the log-normal's cap ignored), for sizing the layout.
fn mean_size(sizes: &SizeDist) -> f64 {
    match *sizes {
        SizeDist::LogNormal { median, sigma, .. } => median * (sigma * sigma / 2.0).exp(),
        SizeDist::Uniform { lo, hi } => (lo + hi) as f64 / 2.0,
    }
}

/// The directories of a layout, as (path relative to the root, parent index); index 0 is
/// the root itself.
fn layout(layout: &Layout, files: f64, rng: &mut Xoshiro256PlusPlus) -> Vec<(PathBuf, usize)> {
    let mut dirs = vec![(PathBuf::new(), 0)];
    match *layout {
        Layout::Tree { depth, .. } => {
            let n = (files / 10.0).clamp(8.0, 5000.0) as usize;
            let mut depths = vec![0u32];
            for i in 1..=n {
                let mut parent = rng.gen_range(0..i);
                if depths[parent] >= depth {
                    parent = 0;
                }
                depths.push(depths[parent] + 1);
                dirs.push((dirs[parent].0.join(format!("d{i}")), parent));
            }
        }
        Layout::Maildir => {
            let folders = (files / 2500.0).clamp(1.0, 20.0) as usize;
            for f in 0..folders {
                let name = match f {
                    0 => "INBOX".to_string(),
                    _ => format!(".folder{f}"),
                };
                let top = dirs.len();
                dirs.push((PathBuf::from(&name), 0));
                for sub in ["tmp", "new", "cur"] {
                    dirs.push((Path::new(&name).join(sub), top));
                }
            }
        }
        Layout::Squid => {
            let l2 = (files / 16.0 / 61.0).clamp(1.0, 256.0) as usize;
            for a in 0..16 {
                dirs.push((PathBuf::from(format!("{a:02X}")), 0));
            }
            for a in 0..16usize {
                for b in 0..l2 {
                    dirs.push((PathBuf::from(format!("{a:02X}/{b:02X}")), 1 + a));
                }
            }
        }
        Layout::Relations { .. } => dirs.push((PathBuf::from("base/16384"), 0)),
    }
    dirs
}

impl Driver<'_> {
    fn step(&mut self) -> Result<()> {
        let change =
            !self.live.is_empty() && self.rng.gen_bool(self.shape.change_share.clamp(0.0, 1.0));
        if change {
            let what = self.pick_change();
            self.change(what)?;
        } else if self.live_bytes < self.goal.live_bytes {
            self.grow()?;
        } else {
            self.delete_victim()?;
        }
        self.out.operations += 1;
        Ok(())
    }

    fn pick_change(&mut self) -> Change {
        let total: f64 = self.shape.changes.iter().map(|c| c.1).sum();
        let mut x = self.rng.gen_range(0.0..total);
        for &(c, w) in self.shape.changes {
            if x < w {
                return c;
            }
            x -= w;
        }
        self.shape.changes[self.shape.changes.len() - 1].0
    }

    /// A size drawn from the profile, at most a sixteenth of the goal.
    fn draw_size(&mut self) -> u64 {
        let raw = match self.shape.sizes {
            SizeDist::LogNormal { median, sigma, max } => {
                let (u1, u2): (f64, f64) = (self.rng.gen(), self.rng.gen());
                let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (median * (sigma * z).exp()).min(max as f64) as u64
            }
            SizeDist::Uniform { lo, hi } => self.rng.gen_range(lo..=hi),
        };
        raw.min(self.max_size)
    }

    /// The path of live file `f`.
    fn path(&self, f: &Live) -> PathBuf {
        self.root.join(&self.dirs[f.dir].0).join(self.name(f))
    }

    /// File names as each kind of program makes them.
    fn name(&self, f: &Live) -> String {
        let id = f.id;
        match self.shape.layout {
            Layout::Tree { exts, .. } => {
                format!("f{id}.{}", exts[(id % exts.len() as u64) as usize])
            }
            Layout::Maildir => {
                let seen = if self.dirs[f.dir].0.ends_with("cur") {
                    ":2,S"
                } else {
                    ""
                };
                format!(
                    "{}.M{}P4242Q{id}.fsarena,S={}{seen}",
                    1_700_000_000 + id / 16,
                    (id * 7919) % 1_000_000,
                    f.size
                )
            }
            Layout::Squid => format!("{id:08X}"),
            Layout::Relations { .. } => format!("{}", 16_384 + id),
        }
    }

    fn ensure_dir(&mut self, d: usize) -> Result<()> {
        if !self.made[d] {
            let p = self.root.join(&self.dirs[d].0);
            std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
            self.made[d] = true;
            let mut up = self.dirs[d].1;
            while !self.made[up] {
                self.made[up] = true;
                up = self.dirs[up].1;
            }
        }
        Ok(())
    }

    /// Writes `len` bytes of pattern data to `f` at `offset`.
    fn write(&mut self, f: &File, mut offset: u64, len: u64) -> std::io::Result<()> {
        let mut left = len;
        while left > 0 {
            let n = left.min(MAX_SLICE.min(1 << 20) as u64) as usize;
            f.write_all_at(self.data.slice(n), offset)?;
            offset += n as u64;
            left -= n as u64;
        }
        self.out.bytes_written += len;
        self.since_sync += len;
        Ok(())
    }

    /// Creates `path` with `size` bytes; on a full filesystem removes what it made and
    /// returns `Ok(false)`.
    fn create(&mut self, path: &Path, size: u64) -> Result<bool> {
        let res = (|| -> std::io::Result<()> {
            let f = File::options()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(0o644)
                .open(path)?;
            self.write(&f, 0, size)
        })();
        match res {
            Ok(()) => Ok(true),
            Err(e) if is_full(&e) => {
                let _ = std::fs::remove_file(path);
                self.full()?;
                Ok(false)
            }
            Err(e) => Err(e).with_context(|| format!("writing {}", path.display())),
        }
    }

    /// The filesystem was full: one more file goes.
    fn full(&mut self) -> Result<()> {
        self.out.full += 1;
        if self.live.is_empty() || self.out.full > 10_000 {
            bail!(
                "the filesystem is full with {} bytes of aged files (aim: {}): \
                 its metadata takes more than the fill leaves; age to a lower fill",
                self.live_bytes,
                self.goal.live_bytes
            );
        }
        self.delete_victim()
    }

    /// Adds a file (or, for relations, extends one).
    fn grow(&mut self) -> Result<()> {
        if let Layout::Relations { count } = self.shape.layout {
            if self.live.len() >= count {
                // Every relation made: one of them is extended.
                return self.change(Change::Append);
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let size = self.draw_size();
        let dir = self.place(id);
        self.ensure_dir(dir)?;
        let f = Live { id, dir, size };
        let path = self.path(&f);
        if !self.create(&path, size)? {
            return Ok(());
        }
        let f = if self.shape.layout == Layout::Maildir {
            // Delivered: written into tmp/, renamed into new/.
            let new = Live { dir: dir + 1, ..f };
            self.rename(&f, &new)?;
            new
        } else {
            f
        };
        self.live.push_back(f);
        self.live_bytes += size;
        Ok(())
    }

    /// The directory a new file goes to.
    fn place(&mut self, id: u64) -> usize {
        let n = self.dirs.len();
        match self.shape.layout {
            Layout::Tree { .. } => self.rng.gen_range(0..n),
            Layout::Maildir => 2 + 4 * self.rng.gen_range(0..(n - 1) / 4),
            Layout::Squid => {
                let l2 = ((n - 17) / 16) as u64;
                let a = (id / l2 / l2) % 16;
                let b = (id / l2) % l2;
                (17 + a * l2 + b) as usize
            }
            Layout::Relations { .. } => 1,
        }
    }

    fn rename(&mut self, from: &Live, to: &Live) -> Result<()> {
        self.ensure_dir(to.dir)?;
        let (a, b) = (self.path(from), self.path(to));
        std::fs::rename(&a, &b)
            .with_context(|| format!("renaming {} to {}", a.display(), b.display()))
    }

    fn delete_victim(&mut self) -> Result<()> {
        let f = match self.shape.victims {
            Victims::Oldest => self.live.pop_front(),
            Victims::Random => {
                let i = self.rng.gen_range(0..self.live.len().max(1));
                self.live.swap_remove_back(i)
            }
        };
        let Some(f) = f else { return Ok(()) };
        let path = self.path(&f);
        std::fs::remove_file(&path).with_context(|| format!("deleting {}", path.display()))?;
        self.live_bytes -= f.size;
        self.out.deleted += 1;
        Ok(())
    }

    /// Overwrites 16 random 8 KiB pages of a file of `size` bytes (none when it is smaller
    /// than a page).
    fn pages(&mut self, file: &File, size: u64) -> std::io::Result<()> {
        let pages = size / 8192;
        if pages > 0 {
            for _ in 0..16 {
                let p = self.rng.gen_range(0..pages);
                self.write(file, p * 8192, 8192)?;
            }
        }
        Ok(())
    }

    fn change(&mut self, what: Change) -> Result<()> {
        let i = match what {
            // Delivered mail is among the latest files.
            Change::Seen => {
                let n = self.live.len();
                n - 1 - self.rng.gen_range(0..n.min(256))
            }
            _ => self.rng.gen_range(0..self.live.len()),
        };
        let f = self.live[i];
        match what {
            Change::Append | Change::Pages => {
                let path = self.path(&f);
                let file = File::options()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)
                    .with_context(|| format!("opening {}", path.display()))?;
                let res = if what == Change::Append {
                    let add = self.draw_size();
                    self.write(&file, f.size, add).map(|_| add)
                } else {
                    self.pages(&file, f.size).map(|_| 0)
                };
                match res {
                    Ok(add) => {
                        self.live[i].size += add;
                        self.live_bytes += add;
                    }
                    Err(e) if is_full(&e) => {
                        file.set_len(f.size)?;
                        self.full()?;
                    }
                    Err(e) => return Err(e).with_context(|| format!("writing {}", path.display())),
                }
            }
            Change::Save => {
                // The new version: within -20 % … +25 % of the old size.
                let size = (f.size as f64 * self.rng.gen_range(0.8..1.25)) as u64;
                let path = self.path(&f);
                let tmp = path.with_file_name(format!(".{}.tmp", self.name(&f)));
                if self.create(&tmp, size)? {
                    // A full filesystem may have made the old version a victim meanwhile.
                    match self.live.iter_mut().find(|l| l.id == f.id) {
                        Some(l) => {
                            l.size = size;
                            self.live_bytes = self.live_bytes - f.size + size;
                            std::fs::rename(&tmp, &path)
                                .with_context(|| format!("saving {}", path.display()))?;
                        }
                        None => std::fs::remove_file(&tmp)
                            .with_context(|| format!("deleting {}", tmp.display()))?,
                    }
                }
            }
            Change::Rename => {
                let dir = self.place(f.id);
                let to = Live { dir, ..f };
                self.rename(&f, &to)?;
                self.live[i].dir = dir;
            }
            Change::Seen => {
                if self.dirs[f.dir].0.ends_with("new") {
                    let to = Live {
                        dir: f.dir + 1,
                        ..f
                    };
                    self.rename(&f, &to)?;
                    self.live[i].dir = to.dir;
                }
            }
        }
        Ok(())
    }
}

/// Whether an error says the filesystem is full (`ENOSPC`, or `EDQUOT`).
fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
