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
//!   whether or not anything was promised.
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
}

/// How a file grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Each version replaces the last (written anew, renamed over).
    Whole,
    /// Each version extends the last (an append-only log).
    Log,
}

/// A file's history.
#[derive(Clone, Debug)]
pub struct FileExpect {
    pub shape: Shape,
    pub versions: Vec<Version>,
    /// The log position before it was unlinked, if it was.
    pub unlinked: Option<u64>,
}

/// What a crash state holds of one file, judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    Ok,
    Lost,
    Empty,
    Garbage,
}

/// The history of every file a pattern wrote, by path relative to its directory.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    pub files: BTreeMap<String, FileExpect>,
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
            });
        f.versions.push(Version {
            data,
            started,
            promised: None,
        });
    }

    /// Marks the latest version of `path` promised at log position `at`.
    pub fn promise(&mut self, path: &str, at: u64) {
        if let Some(v) = self
            .files
            .get_mut(path)
            .and_then(|f| f.versions.last_mut())
        {
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
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(dir.join(p))
                .ok()?;
            let mut v = Vec::new();
            f.read_to_end(&mut v).ok().map(|_| v)
        };
        self.files
            .iter()
            .map(|(p, f)| (p.clone(), f.judge(read(p).as_deref(), w)))
            .collect()
    }
}

impl FileExpect {
    /// The finding for `found` in a state standing for the crashes of `w`: a finding when
    /// it breaks what was promised at some crash of the window. Promises only add up over
    /// time, so that is the latest crash of the window, or, for a file unlinked within it,
    /// the latest before its unlink began; a file whose unlink began before the window may
    /// be gone.
    pub fn judge(&self, found: Option<&[u8]>, w: Window) -> Finding {
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
mod tests {
    use super::*;

    /// A state standing for the crashes from `from` to `to`.
    fn w(from: u64, to: u64) -> Window {
        Window { from, to }
    }

    fn bytes(seed: u8, n: usize) -> Vec<u8> {
        (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed | 1).collect()
    }

    fn replaced() -> FileExpect {
        let mut e = Expect::default();
        e.begin("f", Shape::Whole, bytes(1, 10000), 0);
        e.promise("f", 10);
        e.begin("f", Shape::Whole, bytes(2, 9000), 20);
        e.promise("f", 30);
        e.files["f"].clone()
    }

    #[test]
    fn a_whole_file_must_be_the_promised_version_or_newer() {
        let f = replaced();
        let (old, new) = (bytes(1, 10000), bytes(2, 9000));
        // Before any promise anything goes, but garbage.
        assert_eq!(f.judge(None, w(5, 5)), Finding::Ok);
        assert_eq!(f.judge(Some(&[]), w(5, 5)), Finding::Ok);
        assert_eq!(f.judge(Some(&[9u8; 5000]), w(5, 5)), Finding::Garbage);
        // Old promised: old or new are fine, missing or empty are not.
        assert_eq!(f.judge(Some(&old), w(10, 25)), Finding::Ok);
        assert_eq!(f.judge(Some(&new), w(10, 25)), Finding::Ok);
        assert_eq!(f.judge(None, w(10, 25)), Finding::Lost);
        assert_eq!(f.judge(Some(&[]), w(10, 25)), Finding::Empty);
        assert_eq!(f.judge(Some(&vec![0u8; 9000]), w(10, 25)), Finding::Empty);
        // New promised: old is lost; a mix of both is lost too.
        assert_eq!(f.judge(Some(&old), w(30, 30)), Finding::Lost);
        let mut mixed = new.clone();
        mixed[..4096].copy_from_slice(&old[..4096]);
        assert_eq!(f.judge(Some(&mixed), w(30, 30)), Finding::Lost);
        assert_eq!(f.judge(Some(&new[..4096]), w(30, 30)), Finding::Lost);
    }

    #[test]
    fn a_log_must_hold_its_promised_records_and_only_a_prefix_after_them() {
        let stream = bytes(3, 12288);
        let mut e = Expect::default();
        e.begin("log", Shape::Log, stream[..4096].to_vec(), 0);
        e.promise("log", 5);
        e.begin("log", Shape::Log, stream.clone(), 6);
        let f = &e.files["log"];
        assert_eq!(f.judge(Some(&stream[..4096]), w(5, 6)), Finding::Ok);
        assert_eq!(f.judge(Some(&stream[..8192]), w(5, 9)), Finding::Ok);
        let mut zero_tail = stream[..4096].to_vec();
        zero_tail.extend([0u8; 4096]);
        assert_eq!(f.judge(Some(&zero_tail), w(5, 9)), Finding::Ok);
        assert_eq!(f.judge(Some(&stream[..100]), w(5, 9)), Finding::Lost);
        let mut bad = stream.clone();
        bad[5000] ^= 0xff;
        assert_eq!(f.judge(Some(&bad), w(5, 9)), Finding::Garbage);
    }

    #[test]
    fn an_unlinked_file_may_be_missing_once_its_unlink_could_have_reached_the_disk() {
        let mut e = Expect::default();
        e.begin("g", Shape::Whole, bytes(4, 100), 0);
        e.promise("g", 3);
        e.unlink("g", 8);
        let f = &e.files["g"];
        assert_eq!(f.judge(None, w(3, 5)), Finding::Lost);
        // A window reaching past the unlink holds crashes before it too.
        assert_eq!(f.judge(None, w(3, 12)), Finding::Lost);
        // Every crash of the window is after the unlink began.
        assert_eq!(f.judge(None, w(9, 12)), Finding::Ok);
    }

    use crate::provision::recorded::log::{Kind, Record};
    use crate::provision::recorded::states::{window, CrashState};

    /// A log of writes (`W`) and flushes (`F`).
    fn log(kinds: &str) -> Vec<Record> {
        let rec = |c| Record {
            kind: if c == 'F' { Kind::Flush } else { Kind::Write },
            offset: 0,
            len: 1,
            data_at: 0,
        };
        kinds.chars().map(rec).collect()
    }

    /// `f`'s finding in the state of `records` with prefix `upto`, nothing kept.
    fn judged(records: &[Record], f: &FileExpect, found: Option<&[u8]>, upto: usize) -> Finding {
        let kept = Vec::new();
        f.judge(found, window(records, &CrashState { upto, kept }))
    }

    #[test]
    fn a_promise_no_flush_followed_is_checked_in_every_state_after_it() {
        // The file's writes are records 2 and 3; its fsync returned at 4 without a flush
        // (a disk without barriers); the log goes on without one.
        let records = log("WFWWWW");
        let mut e = Expect::default();
        e.begin("f", Shape::Whole, bytes(5, 100), 2);
        e.promise("f", 4);
        let f = &e.files["f"];
        let data = bytes(5, 100);
        // The state after the first flush stands for crashes after the promise: the
        // device kept none of the file's writes, so the promise is broken.
        assert_eq!(judged(&records, f, None, 2), Finding::Lost);
        assert_eq!(judged(&records, f, Some(&[]), 2), Finding::Empty);
        // Kept writes do not take the state out of the window: still after the promise.
        let kept = CrashState {
            upto: 2,
            kept: vec![2],
        };
        assert_eq!(f.judge(None, window(&records, &kept)), Finding::Lost);
        assert_eq!(f.judge(Some(&data), window(&records, &kept)), Finding::Ok);
        // The state before the first flush ends before the promise: never checked.
        assert_eq!(judged(&records, f, None, 0), Finding::Ok);
        // The old rule (`promised <= upto`) checked it in no state but the log's end.
        assert_eq!(judged(&records, f, None, 6), Finding::Lost);
    }

    #[test]
    fn a_promise_its_flush_covers_is_checked_from_that_flush_on() {
        // The file's writes are records 0 and 1, its fsync's flush is 2; a background
        // write (3) was logged before the fsync's return was read (4); another flush at 4.
        let records = log("WWFWFW");
        let mut e = Expect::default();
        e.begin("f", Shape::Whole, bytes(6, 5000), 0);
        e.promise("f", 4);
        let f = &e.files["f"];
        let data = bytes(6, 5000);
        // The state at the fsync's flush must hold the file (the old rule skipped it:
        // 4 > 3), and does when the flush made it durable.
        assert_eq!(judged(&records, f, Some(&data), 3), Finding::Ok);
        assert_eq!(judged(&records, f, None, 3), Finding::Lost);
        assert_eq!(judged(&records, f, Some(&data), 5), Finding::Ok);
        // Before the flush, the crash came before the promise: nothing to check.
        assert_eq!(judged(&records, f, None, 0), Finding::Ok);
        let before = CrashState {
            upto: 0,
            kept: vec![0],
        };
        assert_eq!(f.judge(Some(&data[..4096]), window(&records, &before)), Finding::Ok);
    }
}
