//! Tests of jobs of several kinds at once (`with`): one trial, one phase per step, each
//! kind on files of its own, and the refusals.

use super::tests::{job, job_err, phase};

/// `spec` is refused with a message that says each of `what`.
fn refused(spec: &str, what: &[&str]) {
    let e = job_err(spec);
    assert!(what.iter().all(|w| e.contains(w)), "{spec}: {e}");
}
use super::*;
use crate::policy::DataPolicy;
use crate::result::PhaseResult;
use crate::workload::testutil::in_context_at;

/// Runs `j` in a fresh directory: its phases, and the sizes of `paths` in its work
/// directory afterwards (`None`: absent).
fn run(j: &Job, paths: &[&str]) -> (Vec<PhaseResult>, Vec<Option<u64>>) {
    in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::End,
        |cx| {
            j.run(cx).unwrap();
            let dir = cx.workdir();
            let size = |p: &&str| std::fs::metadata(dir.join(p)).map(|m| m.len()).ok();
            (cx.phases().to_vec(), paths.iter().map(size).collect())
        },
    )
}

/// A reader beside two verified writers of another block size: one layout, one run and
/// one verify phase hold both kinds' bytes; each kind's files are its own (kind 2 in
/// `with1`), of its own size.
#[test]
fn kinds_run_in_one_phase_on_files_of_their_own() {
    let j = job("rw=read,size=1MiB,with='rw=write,bs=64KiB,size=2MiB,numjobs=2,verify=true'");
    assert_eq!(j.data_bytes(), Some(5 << 20), "1 MiB + 2 × 2 MiB");
    let (phases, files) = run(&j, &["job0.0", "job1.0", "with1/job0.0", "with1/job1.0"]);
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
    refused("with='rw=write;rw=nope'", &["with: kind 3", "nope"]);
    refused("with='with=rw=read'", &["kind 2", "once"]);
    refused("with='name=w'", &["name is given once"]);
    refused("shared_file=true,with='rw=write'", &["shared_file"]);
    refused("with='rw=write,shared_file=true'", &["shared_file"]);
    refused("ramp=1,with='rw=write'", &["ramp"]);
    refused("numjobs=1000,with='numjobs=30'", &["1030 jobs"]);
    job("ramp=1,with='rw=write,ramp=1'");
}

/// A kind with `files_of` works on an earlier kind's files, laid out once and filled
/// because it reads them (the owner only writes), and has no files of its own.
#[test]
fn a_kind_works_on_an_earlier_kinds_files() {
    let j = job("rw=write,size=1MiB,with='rw=randread,size=512KiB,numjobs=2,files_of=1:0'");
    assert_eq!(j.data_bytes(), Some(1 << 20), "one file");
    let (phases, files) = run(&j, &["job0.0", "with1"]);
    assert_eq!(files, [Some(1 << 20), None]);
    assert_eq!(phase(&phases, "layout").bytes_written, 1 << 20, "filled for the readers");
    let run = phase(&phases, "run");
    assert_eq!((run.bytes_read, run.bytes_written), (1 << 20, 1 << 20));
}

#[test]
fn files_of_names_an_earlier_kind_whose_files_fit() {
    refused("files_of=1:0", &["files_of applies to a kind of with"]);
    refused("files_of=1:0,with='rw=write'", &["not the first"]);
    refused("with='rw=write,files_of=2:0'", &["no earlier kind 2"]);
    refused("with='rw=write,files_of=1:1'", &["1 job(s)"]);
    refused("size=1MiB,with='rw=write,size=2MiB,files_of=1:0'", &["do not fit"]);
    refused("verify=true,with='rw=write,files_of=1:0'", &["verify"]);
    refused("with='rw=write,files_of=1:0;rw=read,files_of=2:0'", &["name that one"]);
    refused("with='rw=write,files_of=x'", &["K:J"]);
    refused("with='rw=write,numjobs=2,common_files=true,files_of=1:0'", &["common_files"]);
    // Job 1 of a kind whose jobs share job 0's files: job 0's.
    let j = job("numjobs=2,common_files=true,with='rw=write,files_of=1:1'");
    assert_eq!(j.with[0].files_of, Some((0, 0)));
}
