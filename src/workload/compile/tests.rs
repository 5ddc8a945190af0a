//! Unit tests of `compile`.

use super::datasets::{Dataset, Datasets, MIB};
use super::sim::{Sim, Step, Trees, OPS};
use super::*;

#[test]
fn kernel_build_shows_no_compilebench_parameters() {
    let mut p = std::collections::BTreeMap::new();
    p.insert("mode".to_string(), "kernel-build".to_string());
    assert!(!param_applies(&p, "initial_dirs") && !param_applies(&p, "runs"));
    assert!(param_applies(&p, "scale") && param_applies(&p, "source"));
    p.insert("mode".to_string(), "compilebench".to_string());
    assert!(param_applies(&p, "initial_dirs") && !param_applies(&p, "source"));
}
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;

fn run(params: &str) -> (Vec<PhaseResult>, Vec<PathBuf>) {
    let spec = WorkloadSpec::parse(&format!("compile:{params}")).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        workload.run(cx).unwrap();
        let left = fs::read_dir(cx.workdir()).unwrap();
        let left = left.map(|e| e.unwrap().path()).collect();
        let phases = cx.phases().to_vec();
        (phases, left)
    })
}

#[test]
fn datasets_have_compilebench_counts_and_bytes() {
    let d = Datasets::generate(1.0, 555).unwrap();
    let total = |d: &Dataset| d.iter().map(|(_, s)| *s).sum::<u64>() as f64 / MIB;
    assert_eq!(d.unpatched.len(), 21_280);
    assert!((total(&d.unpatched) - 222.37).abs() < 0.5);
    assert_eq!(d.patched.len(), 6_136);
    assert!((total(&d.patched) - 109.67).abs() < 0.5);
    assert_eq!(d.unpatched_compiled.len(), 3_263);
    assert!((total(&d.unpatched_compiled) - 680.63).abs() < 1.0);
    assert_eq!(d.compiled.len(), 2_573);
    assert!((total(&d.compiled) - 691.60).abs() < 1.0);
    let clean: HashSet<&str> = d.unpatched.iter().map(|(p, _)| p.as_str()).collect();
    assert!(d.patched.iter().all(|(p, _)| clean.contains(p.as_str())));
    assert!(d
        .unpatched_compiled
        .iter()
        .all(|(p, _)| !clean.contains(p.as_str())));
    let uc: HashSet<&str> = d
        .unpatched_compiled
        .iter()
        .map(|(p, _)| p.as_str())
        .collect();
    assert!(d.compiled.iter().all(|(p, _)| uc.contains(p.as_str())));
    let obj_dirs: HashSet<&str> = d
        .unpatched_compiled
        .iter()
        .map(|(p, _)| p.rsplit_once('/').map_or("", |(d, _)| d))
        .collect();
    assert!(
        (250..450).contains(&obj_dirs.len()),
        "{} object dirs",
        obj_dirs.len()
    );
}

/// The first operations compilebench 0.6 makes with its defaults (30 initial trees):
/// the sequence its random.Random(555) gives after shuffling the 3,263 compiled-only
/// files, as the real compilebench printed it.
#[test]
fn operation_sequence_matches_compilebench() {
    let mut rnd = Mt19937::python(555);
    let mut files: Vec<u32> = (0..3_263).collect();
    rnd.shuffle(&mut files);
    let mut sim = Sim {
        rnd,
        unpatched: Trees::default(),
        patched: Trees::default(),
        unpatched_compiled: Trees::default(),
        patched_compiled: Trees::default(),
    };
    (0..30).for_each(|i| sim.unpatched.insert(&format!("kernel-{i}")));
    let mut taken: HashSet<String> = sim.unpatched.0.iter().cloned().collect();
    let mut seq = Vec::new();
    while seq.len() < EXPECTED_SEQUENCE.len() {
        let op = OPS[sim.rnd.choice(OPS.len())];
        let t = taken.clone();
        if let Some(step) = sim.step(op, &|n| t.contains(n)) {
            let (what, tree) = match &step {
                Step::Write { spec, tree, .. } => (spec.name, tree.clone()),
                Step::Clean { tree, .. } => ("clean", tree.clone()),
                Step::Delete { tree, .. } => ("delete", tree.clone()),
                Step::Read { tree, .. } => ("read", tree.clone()),
                Step::Stat { tree, .. } => ("stat", tree.clone()),
            };
            taken.insert(tree.clone());
            seq.push(format!("{what} {tree}"));
        }
    }
    assert_eq!(seq, EXPECTED_SEQUENCE);
}

/// compilebench 0.6's stderr for `-i 30 -r 100 -n` with datasets of its counts
/// (bench/compilebench-sequence.py), first 20 random operations.
const EXPECTED_SEQUENCE: &[&str] = &[
    "stat kernel-22",
    "patch kernel-24",
    "read kernel-9",
    "patch kernel-14",
    "stat kernel-19",
    "create kernel-93078",
    "stat kernel-19",
    "compile kernel-26",
    "read kernel-26",
    "read kernel-11",
    "patch kernel-28",
    "clean kernel-26",
    "delete kernel-24",
    "compile kernel-13",
    "create kernel-34119",
    "patch kernel-13",
    "create kernel-29088",
    "stat kernel-5",
    "read kernel-28",
];

#[test]
fn compilebench_end_to_end_on_a_directory() {
    let (phases, left) = run("scale=0.005,initial_dirs=3,runs=30");
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names[0], "initial_create");
    let runs: f64 = phases.iter().filter_map(|p| p.extra.get("runs")).sum();
    assert_eq!(runs, 30.0, "{names:?}");
    for p in &phases[1..] {
        let key = if p.primary == "mb_per_s" {
            "compilebench_mb_per_s"
        } else {
            "compilebench_s"
        };
        assert!(p.extra[key] > 0.0, "{} {key}", p.name);
        assert!(p.ops > 0, "{}", p.name);
    }
    let initial = &phases[0];
    let tree_bytes = Datasets::generate(0.005, 42)
        .unwrap()
        .unpatched
        .iter()
        .map(|(_, s)| s)
        .sum::<u64>();
    assert_eq!(initial.bytes_written, 3 * tree_bytes);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// compilebench's own MB/s of a phase run once is the phase's `mb_per_s`: both count
/// 10^6 bytes (it was MiB/s under the name MB/s, 4.6% lower).
#[test]
fn compilebench_mb_per_s_agrees_with_the_phase_mb_per_s() {
    let (phases, _) = run("scale=0.005,initial_dirs=1,runs=6");
    let mut checked = Vec::new();
    for p in phases.iter().filter(|p| p.extra.get("runs") == Some(&1.0)) {
        let Some(own) = p.extra.get("compilebench_mb_per_s") else {
            continue;
        };
        if p.mb_per_s == 0.0 {
            continue; // clean moves no payload: its MB/s counts the bytes deleted
        }
        let rel = (own / p.mb_per_s - 1.0).abs();
        assert!(rel < 1e-3, "{}: {own} vs {} MB/s", p.name, p.mb_per_s);
        checked.push(p.name.as_str());
    }
    assert!(checked.len() >= 2, "too few phases run once: {checked:?}");
}

#[test]
fn makej_compiles_reads_and_deletes_everything() {
    let (phases, left) = run("scale=0.005,initial_dirs=4,makej=true");
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "initial_create",
            "compile",
            "read_compiled_tree",
            "delete_compiled_tree"
        ]
    );
    assert_eq!(phases[2].extra["runs"], 3.0);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn kernel_build_end_to_end_generated_and_real_source() {
    let (phases, left) = run("mode=kernel-build,scale=0.01");
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["copy", "build", "clean", "delete"]);
    let corpus = Corpus::new("source-tree", 0.01, 42).unwrap().totals();
    assert_eq!(phases[0].bytes_written, corpus.bytes);
    assert_eq!(
        phases[1].bytes_read, corpus.bytes,
        "build reads every source"
    );
    assert_eq!(
        phases[2].bytes, phases[1].bytes_written,
        "clean removes the objects"
    );
    assert!(left.is_empty());
    let src = tempfile::tempdir().unwrap();
    fs::create_dir_all(src.path().join("kernel/sched")).unwrap();
    fs::write(src.path().join("kernel/sched/core.c"), vec![b'x'; 5000]).unwrap();
    fs::write(src.path().join("Makefile"), b"all:\n").unwrap();
    let (phases, left) = run(&format!(
        "mode=kernel-build,source={}",
        src.path().display()
    ));
    assert_eq!(phases[0].bytes_written, 5005);
    assert_eq!(phases[1].bytes_read, 5005);
    assert!(left.is_empty());
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "scale=0",
        "scale=11",
        "buffer=0",
        "initial_dirs=10001",
        "makej=true,initial_dirs=0",
        "source=/tmp",
        "mode=kernel-build,source=/nonexistent",
        "mode=kernel-build,source=/etc/passwd",
        // The whole system or a kernel filesystem is no source tree (refused before
        // a walk that would meet sockets, devices and vanishing /proc entries).
        "mode=kernel-build,source=/",
        "mode=kernel-build,source=/proc",
        "mode=kernel-build,source=/sys/kernel",
        "mode=kernel-build,source=/dev/",
        "mode=make",
    ] {
        let err = WorkloadSpec::parse(&format!("compile:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
}

/// A source tree holding a FIFO (which would block the copy) or a device (which would
/// be read whole) is refused when the spec is parsed, naming the entry.
#[test]
fn source_with_a_fifo_or_device_is_refused_up_front() {
    let src = tempfile::tempdir().unwrap();
    fs::create_dir_all(src.path().join("a/b")).unwrap();
    fs::write(src.path().join("a/f.c"), b"int x;").unwrap();
    std::os::unix::fs::symlink("/etc/alternatives/cc", src.path().join("a/cc")).unwrap();
    let spec = format!("compile:mode=kernel-build,source={}", src.path().display());
    WorkloadSpec::parse(&spec).unwrap();
    let fifo = src.path().join("a/b/pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = WorkloadSpec::parse(&spec).err().expect("a FIFO is refused");
    let msg = format!("{err:#}");
    assert_eq!(exit_code(&err), 2, "{msg}");
    assert!(msg.contains("a/b/pipe") && msg.contains("FIFO"), "{msg}");
    fs::remove_file(&fifo).unwrap();
    if crate::probe::sys::is_root() {
        let dev = src.path().join("null");
        let c = std::ffi::CString::new(dev.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; /dev/null's device number (1, 3).
        let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
        assert_eq!(rc, 0);
        let msg = format!("{:#}", WorkloadSpec::parse(&spec).err().expect("a device"));
        assert!(msg.contains("device"), "{msg}");
    }
}
