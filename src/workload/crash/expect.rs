//! What a pattern wrote and promised, and how a crash state's files are judged against it.
//!
//! Every file a pattern writes has *versions*: its whole contents after each write the
//! pattern made (an append makes a new, longer version). Each version carries the log
//! position before it began (it cannot be on the disk in a state whose records all come
//! before that) and, once the pattern was promised it (its `fsync`, and its directory's
//! where the pattern needs it, returned), the log position at that moment. A crash state
//! stands for the crashes of a window of log positions ([`Window`]): from when its last
//! durable or kept record was logged to just before the flush that ends its epoch. A
//! version promised at `p` must be there, or a later one, in every state whose window
//! reaches `p` — whatever the device kept of the writes no flush covered. So a promise
//! whose `fsync` sent no flush (a disk mounted without barriers, an `fsync` that does
//! nothing) is checked, and found lost, in the states after it that did not keep its
//! writes; a promise whose flush was logged before `p` is checked from that flush on,
//! also when other records were logged between the flush and `p`.
//!
//! A file found in a state is, block by block (4 KiB), compared with the versions:
//! * **ok**: it is a whole version at least as new as the promised one (for an append-only
//!   log: it starts with the promised records, and the rest is a prefix of the stream);
//! * **lost**: a promised file missing, older than promised, cut short or mixed from
//!   several versions;
//! * **empty**: a promised file of length zero or only zeros where data was promised;
//! * **garbage**: a block holding bytes the pattern never wrote there (not zeros) — bad
//!   whether or not anything was promised;
//! * **leftover**: a temporary (`NAME.tmp`) still there although the rename that consumed
//!   it was promised (its directory's `fsync` returned after it);
//! * **reappeared**: a file whose unlink was promised (its directory's `fsync` returned
//!   after it) is there again;
//! * **metadata**: a promised file's mode is not the one the pattern set (checked only
//!   where a pattern set one; its size is checked with its contents: a whole file must be
//!   exactly a version, a log at least its promised records);
//! * **not promised, lost**: a file whose replacement was written without `fsync` and
//!   renamed over it (`rename-replace-nofsync`), or is being written over it in place
//!   (`overwrite`, until that overwrite's `fsync` returns), found empty, cut short or
//!   mixed: the data the program had is gone, but POSIX promised nothing there, so it is
//!   not a broken promise and is counted on its own.
//!
//! A file nothing was promised of may be missing, empty, old or cut short: no finding.

pub use crate::provision::recorded::states::Window;
use std::collections::BTreeMap;
use std::path::Path;

/// The block size files are compared in.
const BLOCK: usize = 4096;

/// One version of a file.
#[derive(Clone, Debug)]
pub struct Version {
    pub data: Vec<u8>,
    /// The log position before its writing began.
    pub started: u64,
    /// The log position when its durability was promised.
    pub promised: Option<u64>,
    /// Written without `fsync` and renamed over the file, or written over it in place:
    /// POSIX promises nothing about it until (if ever) its own `fsync` returns, nor, once
    /// it began, about the contents it replaces.
    pub unsynced: bool,
    /// The mode (permission bits) the pattern set, promised with the version.
    pub mode: Option<u32>,
}

/// How a file grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Each version replaces the last (written anew, renamed over).
    Whole,
    /// Each version extends the last (an append-only log, or a file only appended to):
    /// the promised version's bytes must be there, anything after them is unpromised.
    Log,
}

/// A file's history.
#[derive(Clone, Debug)]
pub struct FileExpect {
    pub shape: Shape,
    pub versions: Vec<Version>,
    /// The log position before it was unlinked, if it was.
    pub unlinked: Option<u64>,
    /// The log position when its unlink was promised (its directory's `fsync` returned).
    pub unlink_promised: Option<u64>,
}

/// What a crash state holds of one file, judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    Ok,
    Lost,
    Empty,
    Garbage,
    /// A temporary still there after the rename that consumed it was promised.
    Leftover,
    /// A file back after its unlink was promised.
    Reappeared,
    /// A promised file's mode is not the one set.
    Metadata,
    /// Lost where nothing was promised: a replacement written without `fsync`.
    Unpromised,
}

impl Finding {
    /// Whether the finding breaks a promise (or is garbage, bad whatever was promised).
    pub fn broken(self) -> bool {
        !matches!(self, Finding::Ok | Finding::Unpromised)
    }
}

/// The history of every file a pattern wrote, by path relative to its directory.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    pub files: BTreeMap<String, FileExpect>,
    /// Temporaries by path: in log order, when each was created (`false`) and when the
    /// rename that consumed it was promised (`true`).
    pub temps: BTreeMap<String, Vec<(u64, bool)>>,
}

impl Expect {
    /// Starts a version of `path` at log position `started` (a new file, or new contents).
    pub fn begin(&mut self, path: &str, shape: Shape, data: Vec<u8>, started: u64) {
        let f = self
            .files
            .entry(path.to_string())
            .or_insert_with(|| FileExpect {
                shape,
                versions: Vec::new(),
                unlinked: None,
                unlink_promised: None,
            });
        f.versions.push(Version {
            data,
            started,
            promised: None,
            unsynced: false,
            mode: None,
        });
    }

    /// Starts a version of `path` written without `fsync` and renamed over the file.
    pub fn begin_unsynced(&mut self, path: &str, data: Vec<u8>, started: u64) {
        self.begin(path, Shape::Whole, data, started);
        if let Some(v) = self.latest(path) {
            v.unsynced = true;
        }
    }

    /// Records that the latest version of `path` was given `mode` (permission bits).
    pub fn set_mode(&mut self, path: &str, mode: u32) {
        if let Some(v) = self.latest(path) {
            v.mode = Some(mode & 0o7777);
        }
    }

    fn latest(&mut self, path: &str) -> Option<&mut Version> {
        self.files.get_mut(path).and_then(|f| f.versions.last_mut())
    }

    /// Records that temporary `tmp` was created, starting at log position `started`.
    pub fn temp_created(&mut self, tmp: &str, started: u64) {
        self.temps.entry(tmp.to_string()).or_default().push((started, false));
    }

    /// Records that the rename consuming temporary `tmp` was promised at position `at`.
    pub fn temp_gone(&mut self, tmp: &str, at: u64) {
        self.temps.entry(tmp.to_string()).or_default().push((at, true));
    }

    /// Records that the unlink of `path` was promised at log position `at`.
    pub fn promise_unlink(&mut self, path: &str, at: u64) {
        if let Some(f) = self.files.get_mut(path) {
            f.unlink_promised.get_or_insert(at);
        }
    }

    /// Marks the latest version of `path` promised at log position `at`.
    pub fn promise(&mut self, path: &str, at: u64) {
        if let Some(v) = self.latest(path) {
            v.promised.get_or_insert(at);
        }
    }

    /// Records that `path` was unlinked, starting at log position `started`.
    pub fn unlink(&mut self, path: &str, started: u64) {
        if let Some(f) = self.files.get_mut(path) {
            f.unlinked.get_or_insert(started);
        }
    }

    /// The finding for each file in the state standing for the crashes of `w`, as found
    /// under `dir` (`None`: missing).
    pub fn judge_dir(&self, dir: &Path, w: Window) -> Vec<(String, Finding)> {
        // Never through a symlink: a damaged state must not make root read elsewhere.
        let read = |p: &str| {
            use std::io::Read;
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(dir.join(p))
                .ok()?;
            let mode = f.metadata().ok()?.permissions().mode() & 0o7777;
            let mut v = Vec::new();
            f.read_to_end(&mut v).ok().map(|_| (v, mode))
        };
        let files = self.files.iter().map(|(p, f)| {
            let found = read(p);
            let finding = f.judge_meta(found.as_ref().map(|x| x.0.as_slice()), found.as_ref().map(|x| x.1), w);
            (p.clone(), finding)
        });
        let temps = self.temps.iter().map(|(p, events)| {
            let there = std::fs::symlink_metadata(dir.join(p)).is_ok();
            (p.clone(), judge_temp(events, there, w))
        });
        files.chain(temps).collect()
    }
}

impl Expect {
    /// The promises of file contents the pattern was made: each version whose `fsync`
    /// returned.
    pub fn promises(&self) -> u64 {
        let promised = |f: &FileExpect| f.versions.iter().filter(|v| v.promised.is_some()).count();
        self.files.values().map(promised).sum::<usize>() as u64
    }

    /// The promises `found` (a state's [`Expect::judge_dir`] for the crashes of `w`)
    /// broke: each promised file found lost, empty, garbled or with its mode not kept, as
    /// (path, index of the version it had been promised).
    pub fn broken_promises(&self, found: &[(String, Finding)], w: Window) -> Vec<(String, usize)> {
        found
            .iter()
            .filter(|(_, f)| {
                matches!(f, Finding::Lost | Finding::Empty | Finding::Garbage | Finding::Metadata)
            })
            .filter_map(|(p, _)| Some((p.clone(), self.files.get(p)?.promise_at(w)?)))
            .collect()
    }

    /// The log position at which the earliest of `broken` ([`Expect::broken_promises`])
    /// was promised: a crash from there on loses it.
    pub fn since(&self, broken: &[(String, usize)]) -> Option<u64> {
        let at = |(p, v): &(String, usize)| self.files.get(p)?.versions.get(*v)?.promised;
        broken.iter().filter_map(at).min()
    }
}

/// The finding for a temporary with `events` ([`Expect::temps`]) that is `there` or not in
/// the state of `w`: at the window's latest crash, the last thing that happened to it is
/// what counts; once the rename that consumed it was promised it must be gone, until it
/// is created again.
pub fn judge_temp(events: &[(u64, bool)], there: bool, w: Window) -> Finding {
    let last = events.iter().filter(|e| e.0 <= w.to).max_by_key(|e| e.0);
    match last {
        Some((_, true)) if there => Finding::Leftover,
        _ => Finding::Ok,
    }
}

impl FileExpect {
    /// The finding for `found` in a state standing for the crashes of `w`: a finding when
    /// it breaks what was promised at some crash of the window. Promises only add up over
    /// time, so that is the latest crash of the window, or, for a file unlinked within it,
    /// the latest before its unlink began; a file whose unlink began before the window may
    /// be gone.
    pub fn judge(&self, found: Option<&[u8]>, w: Window) -> Finding {
        self.judge_meta(found, None, w)
    }

    /// [`FileExpect::judge`] of contents and mode: a file back after its unlink was
    /// promised is [`Finding::Reappeared`]; one whose contents are fine but whose mode is
    /// not the one the pattern set, [`Finding::Metadata`]; one whose promised version was
    /// replaced by a version written without `fsync` that began in the window, and that is
    /// not a whole version, [`Finding::Unpromised`] instead of lost or empty.
    pub fn judge_meta(&self, found: Option<&[u8]>, mode: Option<u32>, w: Window) -> Finding {
        if found.is_some() && self.unlink_promised.is_some_and(|p| p <= w.to) {
            return Finding::Reappeared;
        }
        let finding = self.judge_data(found, w);
        let at = self.unlinked.map_or(w.to, |u| u.min(w.to));
        let promised = self
            .versions
            .iter()
            .rposition(|v| v.promised.is_some_and(|p| p <= at));
        let Some(d) = promised else {
            return finding;
        };
        match finding {
            Finding::Lost | Finding::Empty
                if self.versions[d + 1..]
                    .iter()
                    .any(|v| v.unsynced && v.started <= at) =>
            {
                Finding::Unpromised
            }
            Finding::Ok => {
                let want: Vec<u32> = self.versions[d..].iter().filter_map(|v| v.mode).collect();
                match mode {
                    Some(m) if !want.is_empty() && !want.contains(&m) => Finding::Metadata,
                    _ => Finding::Ok,
                }
            }
            other => other,
        }
    }

    /// The version whose promise a state standing for the crashes of `w` is judged
    /// against: the latest promised by the window's latest crash (or by its unlink).
    pub fn promise_at(&self, w: Window) -> Option<usize> {
        let at = self.unlinked.map_or(w.to, |u| u.min(w.to));
        self.versions
            .iter()
            .rposition(|v| v.promised.is_some_and(|p| p <= at))
    }

    fn judge_data(&self, found: Option<&[u8]>, w: Window) -> Finding {
        let may_be_gone = self.unlinked.is_some_and(|u| u < w.from);
        let at = self.unlinked.map_or(w.to, |u| u.min(w.to));
        let promised = self
            .versions
            .iter()
            .rposition(|v| v.promised.is_some_and(|p| p <= at));
        let Some(found) = found else {
            return match promised {
                Some(_) if !may_be_gone => Finding::Lost,
                _ => Finding::Ok,
            };
        };
        if self.has_garbage(found) {
            return Finding::Garbage;
        }
        let Some(d) = promised else {
            return Finding::Ok;
        };
        if may_be_gone {
            return Finding::Ok;
        }
        if found.iter().all(|&b| b == 0) && !self.versions[d].data.iter().all(|&b| b == 0) {
            return Finding::Empty;
        }
        let ok = match self.shape {
            Shape::Whole => self.versions[d..].iter().any(|v| v.data == found),
            Shape::Log => found.starts_with(&self.versions[d].data),
        };
        if ok {
            Finding::Ok
        } else {
            Finding::Lost
        }
    }

    /// Whether a block of `found` holds bytes no version had at that offset (and that are
    /// not zeros): data never written there. For a log, the tail past the last version's
    /// end may only be zeros.
    fn has_garbage(&self, found: &[u8]) -> bool {
        found.chunks(BLOCK).enumerate().any(|(k, block)| {
            let at = k * BLOCK;
            let zero = block.iter().all(|&b| b == 0);
            // Each byte is the version's at that offset, or zero past the version's end.
            let matches = |v: &Version| {
                let have = v.data.len().saturating_sub(at).min(block.len());
                v.data[at.min(v.data.len())..][..have] == block[..have]
                    && block[have..].iter().all(|&b| b == 0)
            };
            !zero && !self.versions.iter().any(matches)
        })
    }
}

#[cfg(test)]
#[path = "expect_tests.rs"]
mod tests;
