//! Tests of jobs of several kinds at once (`with`): one trial, one phase per step, each
//! kind on files of its own, and the refusals.

use super::tests::{job, job_err, phase};
use super::*;
use crate::policy::DataPolicy;
use crate::workload::testutil::in_context_at;

/// A reader beside two verified writers of another block size: one layout, one run and
/// one verify phase hold both kinds' bytes; each kind's files are its own (kind 2 in
/// `with1`), of its own size.
#[test]
fn kinds_run_in_one_phase_on_files_of_their_own() {
    let j = job("rw=read,size=1MiB,with='rw=write,bs=64KiB,size=2MiB,numjobs=2,verify=true'");
    assert_eq!(j.data_bytes(), Some(5 << 20), "1 MiB + 2 × 2 MiB");
    let (phases, files) = in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::End,
        |cx| {
            j.run(cx).unwrap();
            let dir = cx.workdir().to_path_buf();
            let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).ok();
            let files = [
                size(dir.join("job0.0")),
                size(dir.join("job1.0")),
                size(dir.join("with1").join("job0.0")),
                size(dir.join("with1").join("job1.0")),
            ];
            (cx.phases().to_vec(), files)
        },
    );
    assert_eq!(files, [Some(1 << 20), None, Some(2 << 20), Some(2 << 20)]);
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["layout", "run", "verify"]);
    let run = phase(&phases, "run");
    assert_eq!((run.bytes_read, run.bytes_written), (1 << 20, 4 << 20));
    assert_eq!(run.ops, 256 + 64, "4 KiB reads and 64 KiB writes");
    // Only the writers verify.
    assert_eq!(phase(&phases, "verify").bytes_read, 4 << 20);
    // One queue depth for all: shown.
    assert_eq!(run.extra.get("iodepth"), Some(&1.0));
}

/// A kind's parameters are checked as any job's, and what cannot be one per kind is
/// refused, naming the kind.
#[test]
fn kinds_are_checked_and_named() {
    let e = job_err("with='rw=write;rw=nope'");
    assert!(e.contains("with: kind 3") && e.contains("nope"), "{e}");
    let e = job_err("with='with=rw=read'");
    assert!(e.contains("kind 2") && e.contains("once"), "{e}");
    let e = job_err("with='name=w'");
    assert!(e.contains("name is given once"), "{e}");
    let e = job_err("shared_file=true,with='rw=write'");
    assert!(e.contains("shared_file"), "{e}");
    let e = job_err("with='rw=write,shared_file=true'");
    assert!(e.contains("shared_file"), "{e}");
    let e = job_err("ramp=1,with='rw=write'");
    assert!(e.contains("ramp"), "{e}");
    let e = job_err("numjobs=1000,with='numjobs=30'");
    assert!(e.contains("1030 jobs"), "{e}");
    job("ramp=1,with='rw=write,ramp=1'");
}
