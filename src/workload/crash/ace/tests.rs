//! Unit tests of `ace.rs`: the space, the names, and each kind of promise judged on
//! crafted crash states (a workload run in a temporary directory, then changed as a
//! filesystem that broke the promise would leave it).

use super::*;
use crate::workload::crash::expect::{Finding, Window, NAME};

/// Positions go up by one per question.
#[derive(Default)]
struct Counting {
    at: u64,
}

impl Tape for Counting {
    fn done(&mut self, _: Op, _: Instant, _: u64) {}
    fn position(&mut self) -> Result<u64> {
        self.at += 1;
        Ok(self.at)
    }
}

fn work(ace: Vec<Vec<Step>>) -> Work {
    Work {
        ops: 64,
        size: 16 << 10,
        sync_every: 1,
        seed: 5,
        forget: 0,
        synchronous: None,
        ace,
    }
}

/// Runs the workloads `only` in a new directory: it, what was promised, and a window
/// standing for a crash after everything.
fn ran(only: &str) -> (tempfile::TempDir, Expect, Window) {
    let dir = tempfile::tempdir().unwrap();
    let mut tape = Counting::default();
    let e = run(dir.path(), &work(parse(only).unwrap()), &mut tape).unwrap();
    let end = Window {
        from: tape.at + 1,
        to: u64::MAX,
    };
    (dir, e, end)
}

/// The findings that are not ok, by path.
fn bad(dir: &Path, e: &Expect, w: Window) -> Vec<(String, Finding)> {
    let mut found = e.judge_dir(dir, w);
    found.retain(|x| x.1 != Finding::Ok);
    found
}

#[test]
fn the_space_holds_every_step_once_and_each_name_parses_back() {
    let one = space(1);
    assert_eq!(one.len(), CORES.len() * PERSISTS.len());
    let two = space(2);
    // Left out: a step on a name an earlier step removed.
    // 54 × 54, but for the 108 that need foo's name after `unlink` or `rename-over` took
    // it, and the 9 that remove `user.a` twice.
    assert_eq!(two.len(), 54 * 54 - 108 - 9);
    assert!(!two.iter().any(|w| name(w) == "unlink:fsync+rename:fsync"));
    for w in one.iter().chain(&two) {
        assert_eq!(&parse(&name(w)).unwrap()[0], w);
    }
    assert_eq!(chosen(1, 64, 9), one);
    let some = chosen(2, 64, 9);
    assert_eq!(some.len(), 64);
    assert_eq!(some, chosen(2, 64, 9));
    assert_ne!(some, chosen(2, 64, 10));
}

#[test]
fn a_workload_that_cannot_run_or_a_wrong_name_is_refused() {
    for bad in ["unlink:fsync+link:fsyncdir", "nope:fsync", "append", "append:sync"] {
        assert!(parse(bad).is_err(), "{bad}");
    }
    assert_eq!(parse("append:fsync/chmod:fsyncdir").unwrap().len(), 2);
}

/// Every one-step workload and 200 two-step ones, run to their end on this machine's
/// temporary directory, judge ok in the state that holds everything.
#[test]
fn every_workload_run_to_its_end_judges_ok() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = space(1);
    all.extend(chosen(2, 200, 1));
    let mut tape = Counting::default();
    let e = run(dir.path(), &work(all), &mut tape).unwrap();
    let end = Window {
        from: tape.at + 1,
        to: u64::MAX,
    };
    assert_eq!(bad(dir.path(), &e, end), []);
    assert!(e.promises() > 300, "{}", e.promises());
}

/// Linux's generic/789 (btrfs, fixed in 6.1.191): a file truncated to 0 and fsynced,
/// then linked and its directory fsynced, came back with its old size after log replay.
#[test]
fn a_truncated_file_back_with_its_old_contents_loses_a_promise() {
    let (dir, e, end) = ran("truncate0:fsync+link:fsyncdir");
    let foo = dir.path().join("w0/A/foo");
    assert_eq!(std::fs::metadata(&foo).unwrap().len(), 0);
    std::fs::write(&foo, contents(5, "w0/A/foo", 0, 16 << 10)).unwrap();
    // Both names of the file hold what it had before.
    let found = bad(dir.path(), &e, end);
    let lost = |n: &str| (n.to_string(), Finding::Lost);
    assert_eq!(found, [lost("w0/A/foo"), lost("w0/A/link1")]);
    assert_eq!(e.broken_promises(&found, end).len(), 2);
    // Before the truncate's fsync returned the old contents were the promise.
    let setup = Window { from: 1, to: 2 };
    assert_eq!(bad(dir.path(), &e, setup), []);
}

#[test]
fn a_link_is_promised_by_its_directorys_fsync_only() {
    let (dir, e, end) = ran("link:fsyncdir");
    std::fs::remove_file(dir.path().join("w0/A/link0")).unwrap();
    let found = bad(dir.path(), &e, end);
    assert_eq!(found, [("w0/A/link0".to_string(), Finding::Lost)]);
    // No version of it was promised apart from its name: the name is the promise broken.
    let broken = e.broken_promises(&found, end);
    assert!(broken == [("w0/A/link0".to_string(), 0)] || broken[0].1 == NAME, "{broken:?}");
    let (dir, e, end) = ran("link:fsync");
    std::fs::remove_file(dir.path().join("w0/A/link0")).unwrap();
    assert_eq!(bad(dir.path(), &e, end), []);
}

#[test]
fn an_unlink_promised_by_the_directorys_fsync_must_stay_gone() {
    // As the file was: its contents and its attribute.
    let put_back = |dir: &Path| {
        std::fs::write(dir.join("w0/A/foo"), contents(5, "w0/A/foo", 0, 16 << 10)).unwrap();
        let mut fds = vec![File::open(dir.join("w0/A/foo")).unwrap()];
        let attr = DiskOp::SetXattr(0, "user.a".into(), b"alpha".to_vec());
        on_disk(&dir.join("w0"), &attr, &mut fds).unwrap();
    };
    let (dir, e, end) = ran("unlink:fsyncdir");
    put_back(dir.path());
    assert_eq!(bad(dir.path(), &e, end), [("w0/A/foo".to_string(), Finding::Reappeared)]);
    let (dir, e, end) = ran("unlink:fsync");
    put_back(dir.path());
    assert_eq!(bad(dir.path(), &e, end), []);
}

#[test]
fn mode_and_attributes_are_promised_by_fsync_not_fdatasync() {
    let revert = |dir: &Path| {
        let foo = dir.join("w0/A/foo");
        std::fs::set_permissions(&foo, std::fs::Permissions::from_mode(0o644)).unwrap();
    };
    let (dir, e, end) = ran("chmod:fsync");
    revert(dir.path());
    assert_eq!(bad(dir.path(), &e, end), [("w0/A/foo".to_string(), Finding::Metadata)]);
    let (dir, e, end) = ran("chmod:fdatasync");
    revert(dir.path());
    assert_eq!(bad(dir.path(), &e, end), []);
    let (dir, e, end) = ran("removexattr:fsync");
    let mut fds = vec![File::open(dir.path().join("w0/A/foo")).unwrap()];
    let attr = DiskOp::SetXattr(0, "user.a".into(), b"alpha".to_vec());
    on_disk(&dir.path().join("w0"), &attr, &mut fds).unwrap();
    assert_eq!(bad(dir.path(), &e, end), [("w0/A/foo".to_string(), Finding::Metadata)]);
}

/// A rename over a promised file: until the directory's fsync either file may be there;
/// after it, only the one renamed.
#[test]
fn a_rename_over_is_promised_by_the_directorys_fsync() {
    let (dir, e, end) = ran("rename-over:fsyncdir");
    let foo = dir.path().join("w0/A/foo");
    std::fs::write(&foo, contents(5, "w0/A/foo", 0, 16 << 10)).unwrap();
    assert_eq!(bad(dir.path(), &e, end), [("w0/A/foo".to_string(), Finding::Lost)]);
    let (dir, e, end) = ran("rename-over:fsync");
    std::fs::write(dir.path().join("w0/A/foo"), contents(5, "w0/A/foo", 0, 16 << 10)).unwrap();
    assert_eq!(bad(dir.path(), &e, end), []);
}
