//! Unit tests of `expect.rs`: each promise judged against crafted crash states.

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
        at_ns: 0,
    };
    kinds.chars().map(rec).collect()
}

/// `f`'s finding in the state of `records` with prefix `upto`, nothing kept.
fn judged(records: &[Record], f: &FileExpect, found: Option<&[u8]>, upto: usize) -> Finding {
    let kept = Vec::new();
    f.judge(found, window(records, &CrashState { upto, kept, ..CrashState::default() }))
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
        ..CrashState::default()
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
        ..CrashState::default()
    };
    assert_eq!(f.judge(Some(&data[..4096]), window(&records, &before)), Finding::Ok);
}

#[test]
fn a_temporary_left_after_its_promised_rename_is_a_finding() {
    // Created at 1, its rename promised at 5; created again at 9, promised gone at 12.
    let events = [(1, false), (5, true), (9, false), (12, true)];
    assert_eq!(judge_temp(&events, true, w(0, 3)), Finding::Ok);
    assert_eq!(judge_temp(&events, true, w(5, 7)), Finding::Leftover);
    assert_eq!(judge_temp(&events, false, w(5, 7)), Finding::Ok);
    // Created again within the window: it may be there.
    assert_eq!(judge_temp(&events, true, w(5, 10)), Finding::Ok);
    assert_eq!(judge_temp(&events, true, w(12, u64::MAX)), Finding::Leftover);
    // Through judge_dir, on a crafted state: the file is fine, its temporary is not.
    let dir = tempfile::tempdir().unwrap();
    let mut e = Expect::default();
    e.begin("cfg0", Shape::Whole, bytes(7, 100), 1);
    e.temp_created("cfg0.tmp", 1);
    e.promise("cfg0", 5);
    e.temp_gone("cfg0.tmp", 5);
    std::fs::write(dir.path().join("cfg0"), bytes(7, 100)).unwrap();
    std::fs::write(dir.path().join("cfg0.tmp"), bytes(7, 100)).unwrap();
    let found = e.judge_dir(dir.path(), w(5, 9));
    assert_eq!(
        found,
        [
            ("cfg0".to_string(), Finding::Ok),
            ("cfg0.tmp".to_string(), Finding::Leftover)
        ]
    );
    std::fs::remove_file(dir.path().join("cfg0.tmp")).unwrap();
    assert!(e.judge_dir(dir.path(), w(5, 9)).iter().all(|x| x.1 == Finding::Ok));
}

#[test]
fn a_file_back_after_its_promised_unlink_is_a_finding() {
    let data = bytes(8, 3000);
    let mut e = Expect::default();
    e.begin("p1", Shape::Log, data.clone(), 0);
    e.promise("p1", 3);
    e.unlink("p1", 8);
    e.promise_unlink("p1", 10);
    let f = &e.files["p1"];
    // Before the unlink's promise it may be there, or gone once the unlink began.
    assert_eq!(f.judge(Some(&data), w(3, 9)), Finding::Ok);
    assert_eq!(f.judge(None, w(9, 9)), Finding::Ok);
    // After it, it must be gone, whatever it holds.
    assert_eq!(f.judge(Some(&data), w(10, 12)), Finding::Reappeared);
    assert_eq!(f.judge(Some(&[]), w(9, 12)), Finding::Reappeared);
    assert_eq!(f.judge(None, w(10, 12)), Finding::Ok);
}

#[test]
fn a_promised_size_and_mode_are_checked() {
    let data = bytes(9, 5000);
    let mut e = Expect::default();
    e.begin("f", Shape::Whole, data.clone(), 0);
    e.set_mode("f", 0o100600);
    e.promise("f", 2);
    let f = &e.files["f"];
    // Size: a whole file must be exactly a version, longer (zeros) or shorter is lost.
    let mut longer = data.clone();
    longer.extend([0u8; 100]);
    assert_eq!(f.judge(Some(&longer), w(2, 4)), Finding::Lost);
    assert_eq!(f.judge(Some(&data[..4999]), w(2, 4)), Finding::Lost);
    // Mode: the one set, promised with the version.
    assert_eq!(f.judge_meta(Some(&data), &mode(0o600), w(2, 4)), Finding::Ok);
    assert_eq!(f.judge_meta(Some(&data), &mode(0o644), w(2, 4)), Finding::Metadata);
    // Not promised yet: no finding.
    assert_eq!(f.judge_meta(Some(&data), &mode(0o644), w(0, 1)), Finding::Ok);
    // A log's size: at least the promised records.
    let mut g = Expect::default();
    g.begin("log", Shape::Log, data.clone(), 0);
    g.promise("log", 2);
    assert_eq!(g.files["log"].judge(Some(&data[..4096]), w(2, 4)), Finding::Lost);
    // Through judge_dir, on a crafted state with the wrong mode.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, &data).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(e.judge_dir(dir.path(), w(2, 4)), [("f".to_string(), Finding::Metadata)]);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(e.judge_dir(dir.path(), w(2, 4)), [("f".to_string(), Finding::Ok)]);
}

#[test]
fn an_append_in_flight_may_leave_a_zero_tail_after_the_promised_contents() {
    // churn: created and fsynced (promised at 3), then appended to, fsynced at 9.
    let old = bytes(10, 3000);
    let mut new = old.clone();
    new.extend(bytes(11, 2000));
    let mut e = Expect::default();
    e.begin("p0", Shape::Log, old.clone(), 0);
    e.promise("p0", 3);
    e.begin("p0", Shape::Log, new.clone(), 5);
    e.promise("p0", 9);
    let f = &e.files["p0"];
    let mut zero_tail = old.clone();
    zero_tail.extend([0u8; 2000]);
    let mut half = old.clone();
    half.extend(&new[3000..4000]);
    // Before the append's promise, only the old contents were promised.
    assert_eq!(f.judge(Some(&zero_tail), w(3, 8)), Finding::Ok);
    assert_eq!(f.judge(Some(&half), w(3, 8)), Finding::Ok);
    assert_eq!(f.judge(Some(&old), w(3, 8)), Finding::Ok);
    assert_eq!(f.judge(Some(&old[..2000]), w(3, 8)), Finding::Lost);
    // After it, the appended bytes are promised too.
    assert_eq!(f.judge(Some(&zero_tail), w(9, 12)), Finding::Lost);
    assert_eq!(f.judge(Some(&new), w(9, 12)), Finding::Ok);
    // Bytes never written there are garbage still.
    let mut bad = zero_tail.clone();
    bad[4000] = 0x5a;
    assert_eq!(f.judge(Some(&bad), w(3, 8)), Finding::Garbage);
}

#[test]
fn a_replacement_renamed_without_fsync_is_not_promised() {
    // rename-replace-nofsync: the first version promised at 3, a replacement written
    // without fsync and renamed over it from 20 on.
    let (old, new) = (bytes(12, 6000), bytes(13, 6000));
    let mut e = Expect::default();
    e.begin("cfg0", Shape::Whole, old.clone(), 0);
    e.promise("cfg0", 3);
    e.begin_unsynced("cfg0", new.clone(), 20);
    let f = &e.files["cfg0"];
    // Before the replacement began, the promise holds as ever.
    assert_eq!(f.judge(Some(&[]), w(3, 15)), Finding::Empty);
    assert_eq!(f.judge(None, w(3, 15)), Finding::Lost);
    // After, what the program lost was not promised.
    assert_eq!(f.judge(Some(&[]), w(3, 25)), Finding::Unpromised);
    assert_eq!(f.judge(Some(&vec![0u8; 6000]), w(21, 25)), Finding::Unpromised);
    assert_eq!(f.judge(Some(&new[..4096]), w(21, 25)), Finding::Unpromised);
    assert_eq!(f.judge(None, w(21, 25)), Finding::Unpromised);
    assert!(!Finding::Unpromised.broken());
    // Old or new whole are fine; garbage is garbage.
    assert_eq!(f.judge(Some(&old), w(21, 25)), Finding::Ok);
    assert_eq!(f.judge(Some(&new), w(21, 25)), Finding::Ok);
    assert_eq!(f.judge(Some(&[7u8; 6000]), w(21, 25)), Finding::Garbage);
}

#[test]
fn a_broken_promise_is_counted_once_whichever_states_break_it() {
    let mut e = Expect::default();
    e.begin("f", Shape::Whole, bytes(1, 10000), 0);
    e.promise("f", 10);
    e.begin("f", Shape::Whole, bytes(2, 9000), 20);
    e.promise("f", 30);
    e.begin("g", Shape::Whole, bytes(3, 100), 40);
    e.promise("g", 50);
    e.begin("h", Shape::Whole, bytes(4, 100), 60);
    // f twice, g once; h never.
    assert_eq!(e.promises(), 3);
    let lost = |p: &str| (p.to_string(), Finding::Lost);
    // A state standing for crashes up to 25 lost f: its first version's promise.
    assert_eq!(e.broken_promises(&[lost("f")], w(10, 25)), [("f".to_string(), 0)]);
    // Up to 55: f's second and g's.
    let found = [lost("f"), lost("g"), ("h".to_string(), Finding::Ok)];
    assert_eq!(
        e.broken_promises(&found, w(50, 55)),
        [("f".to_string(), 1), ("g".to_string(), 0)]
    );
    // Nothing promised yet: no promise broken, whatever is found; a finding that breaks
    // no promise counts none either.
    assert!(e.broken_promises(&[lost("f")], w(5, 5)).is_empty());
    let unpromised = [("f".to_string(), Finding::Unpromised)];
    assert!(e.broken_promises(&unpromised, w(50, 55)).is_empty());
}

fn mode(m: u32) -> Meta {
    Meta {
        mode: Some(m),
        xattrs: None,
    }
}
