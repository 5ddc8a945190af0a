//! Tests of `openfiles` (files opened on demand, at most `openfiles` at once per job):
//! what was written reads back, every written file is synced, the engines that need all
//! files open refuse it, and a running job never holds more descriptors than allowed.

use super::tests::{bases, count_of, job, job_err, phase, run_at};
use super::*;
use crate::policy::DataPolicy;
use crate::workload::testutil::in_context_at;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[test]
fn openfiles_reads_back_what_it_wrote_and_opens_each_file_once_a_pass() {
    for (fs, base) in bases() {
        for rw in ["randwrite", "randrw", "write"] {
            let spec = format!(
                "rw={rw},size=640KiB,nrfiles=10,openfiles=2,numjobs=2,bs=4KiB:3,16KiB:1,\
                 verify=true"
            );
            let phases = run_at(&base, SyncPolicy::End, &spec)
                .unwrap_or_else(|e| panic!("{fs} {spec}: {e}"));
            let run = phase(&phases, "run");
            // Size-based: one pass over the 10 files, 2 at a time, in each of 2 jobs.
            assert_eq!(count_of(run, "open"), 20, "{fs} {spec}");
            assert_eq!(count_of(run, "fsync"), 20, "{fs} {spec}: every file synced");
            let v = phase(&phases, "verify");
            assert_eq!(
                v.bytes,
                2 * (640 << 10),
                "{fs} {spec}: verify read everything"
            );
        }
    }
}

#[test]
fn all_files_open_records_no_open() {
    let phases = run_at(
        &std::env::temp_dir(),
        SyncPolicy::None,
        "rw=randread,size=1MiB,nrfiles=10,openfiles=10",
    )
    .unwrap();
    assert_eq!(count_of(phase(&phases, "run"), "open"), 0);
}

#[test]
fn openfiles_syncs_every_written_file() {
    let tmp = std::env::temp_dir();
    let spec = "rw=randwrite,size=1MiB,nrfiles=10,openfiles=2,end_fsync=true";
    let phases = run_at(&tmp, SyncPolicy::None, spec).unwrap();
    assert_eq!(count_of(phase(&phases, "run"), "fsync"), 10, "{spec}");
    // fsync=16 over 256 writes: 16 rounds, each syncing the files written since the last
    // (some of them closed by then); every file is written, so at least 16 and 10.
    let spec = "rw=randwrite,size=1MiB,nrfiles=10,openfiles=3,fsync=16";
    let phases = run_at(&tmp, SyncPolicy::None, spec).unwrap();
    let syncs = count_of(phase(&phases, "run"), "fsync");
    assert!((16..=256).contains(&syncs), "{spec}: {syncs} fsyncs");
}

#[test]
fn engines_that_keep_files_open_refuse_openfiles() {
    for engine in ["io_uring", "libaio", "mmap"] {
        let e = job_err(&format!("engine={engine},size=1MiB,nrfiles=4,openfiles=2"));
        assert!(
            e.contains("openfiles=2") && e.contains("engine=psync"),
            "{e}"
        );
        // openfiles covering every file changes nothing: accepted.
        job(&format!("engine={engine},size=1MiB,nrfiles=4,openfiles=4"));
    }
    // One shared file: one descriptor whatever openfiles says.
    let j = job("size=1MiB,nrfiles=4,openfiles=2,shared_file=true");
    assert_eq!(
        j.open_files(Engine::Psync),
        4,
        "segments in one file, all in turn"
    );
}

/// Descriptors of this process that point into `dir`.
fn fds_into(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|p| p.starts_with(dir))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_running_job_holds_at_most_openfiles_descriptors() {
    // 2 jobs × (openfiles 2 + 1 for a sync of a closed file); without the cache, 20.
    let spec = "rw=randrw,size=640KiB,nrfiles=10,openfiles=2,numjobs=2,runtime=0.3,fsync=8";
    let j = job(spec);
    in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::End,
        |cx| {
            let dir = cx.workdir().to_path_buf();
            let (stop, most, samples) = (
                AtomicBool::new(false),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
            );
            std::thread::scope(|s| {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        most.fetch_max(fds_into(&dir), Ordering::Relaxed);
                        samples.fetch_add(1, Ordering::Relaxed);
                        // Not a busy loop: the machine has other tests to run.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                });
                let r = j.run(cx);
                stop.store(true, Ordering::Relaxed);
                r.unwrap();
            });
            let run = phase(cx.phases(), "run");
            let most = most.into_inner();
            assert!(
                most >= 1,
                "the sampler saw the job's files ({} samples)",
                samples.into_inner()
            );
            assert!(
                most <= 6,
                "{most} descriptors into the work directory at once"
            );
            assert!(count_of(run, "open") > 20, "files reopened on each pass");
        },
    );
}
