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
//! A file found in a state is compared with the versions (for garbage, 512-byte sector by
//! sector: a filesystem with 1 KiB blocks zeroes a cut block's tail by its own blocks):
//! * **ok**: it is a whole version at least as new as the promised one (for an append-only
//!   log: it starts with the promised records, and the rest is a prefix of the stream);
//! * **lost**: a promised file missing, older than promised, cut short or mixed from
//!   several versions;
//! * **empty**: a promised file of length zero or only zeros where data was promised;
//! * **garbage**: a sector holding bytes the pattern never wrote there (not zeros) — bad
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

/// In [`Expect::broken_promises`], a promised name rather than a version.
pub const NAME: usize = usize::MAX;

/// The size of the pieces files are searched for garbage in: a sector.
const SECTOR: usize = 512;

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
    /// The `user.` extended attributes the pattern set, by name, promised with the version.
    pub xattrs: Option<Xattrs>,
}

/// Extended attributes, sorted by name.
pub type Xattrs = Vec<(String, Vec<u8>)>;

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
    /// Whether the name itself is promised apart from the contents ([`Expect::track_name`]):
    /// then a missing file is lost only once [`FileExpect::name_promised`] is reached; a
    /// promised version only says what the file holds if it is there.
    pub name_tracked: bool,
    /// The log position when its name was promised (its directory's `fsync` returned).
    pub name_promised: Option<u64>,
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
                name_tracked: false,
                name_promised: None,
            });
        f.versions.push(Version {
            data,
            started,
            promised: None,
            unsynced: false,
            mode: None,
            xattrs: None,
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

    /// Records that the latest version of `path` has the `user.` attributes `xattrs`.
    pub fn set_xattrs(&mut self, path: &str, mut xattrs: Xattrs) {
        xattrs.sort();
        if let Some(v) = self.latest(path) {
            v.xattrs = Some(xattrs);
        }
    }

    /// Makes `path`'s name a promise of its own: missing is lost only once
    /// [`Expect::promise_name`] was reached, whatever its contents' promises.
    pub fn track_name(&mut self, path: &str) {
        if let Some(f) = self.files.get_mut(path) {
            f.name_tracked = true;
        }
    }

    /// Records that the name `path` was promised at log position `at` (its directory's
    /// `fsync` returned).
    pub fn promise_name(&mut self, path: &str, at: u64) {
        if let Some(f) = self.files.get_mut(path) {
            f.name_promised.get_or_insert(at);
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
            let xattrs = f
                .versions
                .iter()
                .any(|v| v.xattrs.is_some())
                .then(|| user_xattrs(&dir.join(p)))
                .flatten();
            let meta = Meta {
                mode: found.as_ref().map(|x| x.1),
                xattrs,
            };
            let finding = f.judge_meta(found.as_ref().map(|x| x.0.as_slice()), &meta, w);
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
    /// The promises the pattern was made: each version whose `fsync` returned, and each
    /// name promised apart ([`Expect::track_name`]) whose directory's `fsync` returned.
    pub fn promises(&self) -> u64 {
        let promised = |f: &FileExpect| {
            let names = f.name_tracked && f.name_promised.is_some();
            f.versions.iter().filter(|v| v.promised.is_some()).count() + usize::from(names)
        };
        self.files.values().map(promised).sum::<usize>() as u64
    }

    /// The promises `found` (a state's [`Expect::judge_dir`] for the crashes of `w`)
    /// broke: each promised file found lost, empty, garbled or with its mode or attributes
    /// not kept, as (path, index of the version it had been promised), or ([`NAME`]) a
    /// promised name found missing.
    pub fn broken_promises(&self, found: &[(String, Finding)], w: Window) -> Vec<(String, usize)> {
        found
            .iter()
            .filter(|(_, f)| {
                matches!(f, Finding::Lost | Finding::Empty | Finding::Garbage | Finding::Metadata)
            })
            .filter_map(|(p, _)| {
                let f = self.files.get(p)?;
                let name = f.name_tracked && f.name_promised.is_some_and(|n| n <= w.to);
                Some((p.clone(), f.promise_at(w).or(name.then_some(NAME))?))
            })
            .collect()
    }

    /// The log position at which the earliest of `broken` ([`Expect::broken_promises`])
    /// was promised: a crash from there on loses it.
    pub fn since(&self, broken: &[(String, usize)]) -> Option<u64> {
        let at = |(p, v): &(String, usize)| {
            let f = self.files.get(p)?;
            match *v {
                NAME => f.name_promised,
                v => f.versions.get(v)?.promised,
            }
        };
        broken.iter().filter_map(at).min()
    }
}

/// What a crash state holds of a file besides its contents, where read.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    pub mode: Option<u32>,
    pub xattrs: Option<Xattrs>,
}

/// The `user.` extended attributes of the file at `path` (never through a symlink),
/// sorted; `None` where they cannot be read.
fn user_xattrs(path: &Path) -> Option<Xattrs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: each buffer is as long as the length passed with it.
    let get = |name: Option<&std::ffi::CStr>, buf: &mut Vec<u8>| unsafe {
        let (ptr, len) = (buf.as_mut_ptr(), buf.len());
        let n = match name {
            None => libc::llistxattr(c.as_ptr(), ptr.cast(), len),
            Some(n) => libc::lgetxattr(c.as_ptr(), n.as_ptr(), ptr.cast(), len),
        };
        usize::try_from(n).ok()
    };
    let mut names = vec![0u8; 64 << 10];
    let n = get(None, &mut names)?;
    let mut out = Vec::new();
    for name in names[..n].split(|&b| b == 0).filter(|x| x.starts_with(b"user.")) {
        let cname = std::ffi::CString::new(name).ok()?;
        let mut value = vec![0u8; 64 << 10];
        let len = get(Some(&cname), &mut value)?;
        value.truncate(len);
        out.push((String::from_utf8_lossy(name).into_owned(), value));
    }
    out.sort();
    Some(out)
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
        self.judge_meta(found, &Meta::default(), w)
    }

    /// [`FileExpect::judge`] of contents, mode and `user.` attributes: a file back after
    /// its unlink was promised is [`Finding::Reappeared`]; one whose contents are fine but
    /// whose mode or attributes are none of those the pattern set since the promised
    /// version, [`Finding::Metadata`]; one whose promised version was
    /// replaced by a version written without `fsync` that began in the window, and that is
    /// not a whole version, [`Finding::Unpromised`] instead of lost or empty.
    pub fn judge_meta(&self, found: Option<&[u8]>, meta: &Meta, w: Window) -> Finding {
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
                let later = &self.versions[d..];
                let modes: Vec<u32> = later.iter().filter_map(|v| v.mode).collect();
                let xattrs: Vec<&Xattrs> = later.iter().filter_map(|v| v.xattrs.as_ref()).collect();
                let mode_kept = meta.mode.is_none_or(|m| modes.is_empty() || modes.contains(&m));
                let xattrs_kept = meta
                    .xattrs
                    .as_ref()
                    .is_none_or(|x| xattrs.is_empty() || xattrs.contains(&x));
                match mode_kept && xattrs_kept {
                    true => Finding::Ok,
                    false => Finding::Metadata,
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
            let must_be_there = match self.name_tracked {
                true => self.name_promised.is_some_and(|p| p <= at),
                false => promised.is_some(),
            };
            return match must_be_there && !may_be_gone {
                true => Finding::Lost,
                false => Finding::Ok,
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
        let ok = match self.shape {
            Shape::Whole => self.versions[d..].iter().any(|v| v.data == found),
            Shape::Log => found.starts_with(&self.versions[d].data),
        };
        if ok {
            Finding::Ok
        } else if found.iter().all(|&b| b == 0) && !self.versions[d].data.iter().all(|&b| b == 0) {
            Finding::Empty
        } else {
            Finding::Lost
        }
    }

    /// Whether a sector of `found` holds bytes no version had at that offset (and that
    /// are not zeros): data never written there. For a log, the tail past the last
    /// version's end may only be zeros.
    fn has_garbage(&self, found: &[u8]) -> bool {
        found.chunks(SECTOR).enumerate().any(|(k, block)| {
            let at = k * SECTOR;
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
