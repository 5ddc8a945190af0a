//! Unit tests of `bonnie_files`.

use super::*;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;
use std::collections::HashSet;

fn name(key: u64, i: u64, random_first: bool) -> String {
    let mut v = Vec::new();
    file_name(key, i, random_first, &mut v);
    String::from_utf8(v).unwrap()
}

#[test]
fn names_are_seven_digits_and_up_to_twelve_alphanumerics() {
    let mut lengths = HashSet::new();
    for i in (0..5000).chain([MAX_FILES]) {
        let (seq, rand) = (name(7, i, false), name(7, i, true));
        let num = format!("{i:07}");
        assert!(
            seq.starts_with(&num) && rand.ends_with(&num),
            "{seq} {rand}"
        );
        let (s_extra, r_extra) = (&seq[7..], &rand[..rand.len() - 7]);
        for extra in [s_extra, r_extra] {
            assert!(extra.len() <= 12 && extra.bytes().all(|b| b.is_ascii_alphanumeric()));
        }
        assert_eq!(s_extra, r_extra, "same key: same characters, other order");
        lengths.insert(s_extra.len());
    }
    assert_eq!(lengths.len(), 13, "suffix lengths 0..=12 all occur");
    assert_eq!(name(7, 42, false), name(7, 42, false));
    let differ = (0..100)
        .filter(|&i| name(7, i, false) != name(8, i, false))
        .count();
    assert!(differ > 80, "another key gives other names ({differ}/100)");
}

#[test]
fn instances_name_by_pass_and_spread_over_directories() {
    let cfg = BonnieFiles {
        n: 1024,
        min_size: 10,
        max_size: 20,
        dirs: 4,
        procs: 1,
        chunk: 1,
    };
    let base = Path::new("/w");
    let rel = |pass, i| {
        let mut v = Vec::new();
        Instance::new(cfg, base, 1, 0, pass).rel_name(i, &mut v);
        String::from_utf8(v).unwrap()
    };
    assert!(rel(Pass::Seq, 0).starts_with("00000/0000000"));
    assert!(rel(Pass::Seq, 1023).starts_with("00003/0001023"));
    let r = rel(Pass::Rand, 300);
    assert!(r.starts_with("00001/") && r.ends_with("0000300\0"), "{r}");
    let inst = Instance::new(cfg, base, 1, 0, Pass::Seq);
    assert_eq!(inst.root, Path::new("/w/Bonnie.0"));
    let sizes: HashSet<_> = (0..1024).map(|i| inst.size_of(i)).collect();
    assert_eq!(sizes, (10..=20).collect(), "uniform over [min, max]");
}

#[test]
fn permutation_is_a_bijection() {
    for n in [
        1, 2, 3, 5, 7, 8, 9, 100, 1000, 1023, 1024, 1025, 4097, 65_537,
    ] {
        for seed in [0, 1, 0xdead_beef] {
            let p = Permutation::new(n, seed);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i);
                assert!(x < n && !seen[x as usize], "n={n} seed={seed} i={i} -> {x}");
                seen[x as usize] = true;
            }
        }
    }
}

#[test]
fn permutation_looks_random_and_depends_on_the_seed() {
    let n = 10_000;
    let order = |seed| {
        (0..n)
            .map(|i| Permutation::new(n, seed).get(i))
            .collect::<Vec<_>>()
    };
    let (a, b) = (order(1), order(2));
    assert_ne!(a, b);
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    assert!(same < 20, "{same} equal positions");
    let fixed = a
        .iter()
        .enumerate()
        .filter(|(i, &x)| *i as u64 == x)
        .count();
    assert!(fixed < 20, "{fixed} fixed points");
    let rising = a.windows(2).filter(|w| w[1] > w[0]).count() as f64 / n as f64;
    assert!((0.45..0.55).contains(&rising), "rising fraction {rising}");
}

/// Runs the workload on a fresh directory target; returns its phases and what was left
/// in the work directory afterwards (listed before the target's teardown).
fn run(params: &str) -> (Vec<PhaseResult>, Vec<PathBuf>) {
    let spec = WorkloadSpec::parse(&format!("bonnie-files:{params}")).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        workload.run(cx).unwrap();
        let left = std::fs::read_dir(cx.workdir()).unwrap();
        let left = left.map(|e| e.unwrap().path()).collect();
        (cx.phases().to_vec(), left)
    })
}

#[test]
fn end_to_end_on_a_directory() {
    let (phases, left) = run("files=1,procs=2,dirs=4");
    let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
    let expected: Vec<_> = PHASES.iter().map(|p| p.name).collect();
    assert_eq!(names, expected);
    for p in &phases {
        assert_eq!(p.ops, 1024 * 2, "{}", p.name);
        assert_eq!((p.bytes, p.workers, p.ops_unit.as_str()), (0, 2, "files/s"));
    }
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn stat_reads_the_data_that_create_wrote() {
    let (phases, left) = run("files=1,max_size=4096,min_size=1024,chunk=1000");
    let bytes = |name: &str| phases.iter().find(|p| p.name == name).unwrap().bytes;
    let written = bytes("seq_create");
    assert!(written > 1024 * 1024 && written < 4096 * 1024, "{written}");
    assert_eq!(bytes("seq_stat"), written);
    assert!(bytes("rand_create") > 1024 * 1024);
    assert_eq!(bytes("rand_stat"), bytes("rand_create"), "each file once");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "files=0",
        "files=10000",
        "procs=0",
        "min_size=2KiB,max_size=1KiB",
        "dirs=100000",
        "chunk=0",
        "sizes=1",
    ] {
        let err = WorkloadSpec::parse(&format!("bonnie-files:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
    assert!(WorkloadSpec::parse("bonnie-files:min_size=1KiB,max_size=1KiB").is_ok());
}
