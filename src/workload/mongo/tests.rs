use super::*;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;
use std::path::PathBuf;

/// Runs `mongo:<params>` on a fresh directory target; returns its phases and what was left
/// in the (last) work directory.
fn run(params: &str, sync: SyncPolicy) -> (Vec<PhaseResult>, Vec<PathBuf>) {
    let spec = WorkloadSpec::parse(&format!("mongo:{params}")).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, sync, |cx| {
        workload.run(cx).unwrap();
        let left = std::fs::read_dir(cx.workdir()).unwrap();
        let left = left.map(|e| e.unwrap().path()).collect();
        (cx.phases().to_vec(), left)
    })
}

fn phase<'a>(phases: &'a [PhaseResult], name: &str) -> &'a PhaseResult {
    phases
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

fn ops(p: &PhaseResult, op: &str) -> u64 {
    p.lat_by_op
        .iter()
        .find(|o| o.op == op)
        .map_or(0, |o| o.count)
}

#[test]
fn the_phase_table_names_every_set() {
    assert_eq!(PHASES.len(), 28);
    assert_eq!(INFO.phases.len(), 28);
    let names: Vec<_> = PHASES.iter().map(|p| p.name).collect();
    assert_eq!(
        names[..7],
        [
            "create_1",
            "copy_1",
            "symlinks_1",
            "read_1",
            "stats_1",
            "rename_1",
            "delete_1"
        ]
    );
    assert_eq!(names[21], "create_4");
    assert_eq!(names[27], "delete_4");
    assert_eq!(phases_of(3).map(|i| PHASES[i].name)[6], "delete_3");
}

/// (files, bytes, subdirectories) of each set's tree at scale 0.01, from
/// `bench/mongo_fract_tree summary round(bytes × 0.01) MEDIAN`.
const SCALE_0_01: [(u64, u64, u64); 4] = [
    (492, 529_666, 4),
    (224, 1_063_207, 4),
    (38, 1_108_664, 0),
    (8, 1_080_089, 0),
];

#[test]
fn scaled_trees_have_the_c_models_counts() {
    for (i, &(files, bytes, dirs)) in SCALE_0_01.iter().enumerate() {
        let (total, median) = SETS[i];
        let tree = FractTree::new((total as f64 * 0.01).round() as u64, median, 1).unwrap();
        let (f, b, d, _, _) = fract_tree::tests::summary(&tree);
        assert_eq!((f, b as u64, d), (files, bytes, dirs), "set {}", i + 1);
    }
}

#[test]
fn one_set_runs_its_seven_phases_and_leaves_nothing() {
    let (phases, left) = run("set=2,scale=0.01,procs=2", SyncPolicy::End);
    let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
    let want: Vec<_> = PHASES[7..14].iter().map(|p| p.name).collect();
    assert_eq!(names, want);
    assert!(left.is_empty(), "left behind: {left:?}");
    let (files, bytes, subdirs) = SCALE_0_01[1];
    let (f, b, d) = (2 * files, 2 * bytes, 2 * (subdirs + 1));
    let create = phase(&phases, "create_2");
    assert_eq!((ops(create, "create"), ops(create, "mkdir")), (f, d));
    assert_eq!(create.bytes_written, b);
    assert_eq!(create.workers, 2);
    assert_eq!(create.extra["files"], f as f64);
    assert_eq!(
        create.extra["dirs"], d as f64,
        "the two roots and their subdirectories"
    );
    assert!(create.extra["space_used_kib"] >= 0.0);
    let copy = phase(&phases, "copy_2");
    assert_eq!((ops(copy, "create"), ops(copy, "mkdir")), (f, d));
    assert_eq!(copy.bytes_written, b);
    assert_eq!(copy.extra["files"], 2.0 * f as f64);
    assert_eq!(copy.extra["dirs"], 2.0 * d as f64);
    assert_eq!(ops(phase(&phases, "symlinks_2"), "symlink"), f);
    let read = phase(&phases, "read_2");
    assert_eq!((ops(read, "read"), read.bytes_read), (2 * f, 2 * b));
    // lstat of files, links and subdirectories of testdir1, files and subdirectories of
    // testdir2 (the roots themselves are not entries).
    let stats = phase(&phases, "stats_2");
    assert_eq!(ops(stats, "stat"), 3 * f + 2 * (d - 2));
    assert_eq!(ops(phase(&phases, "rename_2"), "rename"), f);
    let delete = phase(&phases, "delete_2");
    assert_eq!(
        (ops(delete, "delete"), ops(delete, "rmdir")),
        (3 * f, 2 * d)
    );
}

#[test]
fn all_sets_run_in_order_with_their_own_phases() {
    let (phases, left) = run("set=all,scale=0.002", SyncPolicy::None);
    let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
    let want: Vec<_> = PHASES.iter().map(|p| p.name).collect();
    assert_eq!(names, want);
    assert!(left.is_empty(), "left behind: {left:?}");
    for (i, &(total, median)) in SETS.iter().enumerate() {
        let tree = FractTree::new((total as f64 * 0.002).round() as u64, median, 1).unwrap();
        let create = phase(&phases, PHASES[i * 7].name);
        assert_eq!(ops(create, "create"), tree.files(), "set {}", i + 1);
        assert_eq!(create.extra["files"], tree.files() as f64);
        assert!(create.flags.iter().any(|f| f == "not-synced"));
    }
}

#[test]
fn files_hold_their_sizes_and_links_point_at_them() {
    let spec = WorkloadSpec::parse("mongo:set=3,scale=0.005").unwrap();
    let Mongo { sets, .. } = Mongo::from_params(&spec.params).unwrap();
    let tree = &sets[0].tree;
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        let trees = Trees {
            base: cx.workdir().to_path_buf(),
        };
        cx.phase(&PHASES[14], 1, |w| ops::create(w, tree, &trees.src(0)))
            .unwrap();
        cx.phase(&PHASES[16], 1, |w| ops::symlinks(w, &trees))
            .unwrap();
        let mut n = 0;
        tree.walk(|e| {
            if let fract_tree::Event::File { number, size } = e {
                // Set 3 at this scale has no subdirectories: every file is in the root.
                let path = trees.src(0).join(number.to_string());
                assert_eq!(std::fs::metadata(&path).unwrap().len(), size as u64);
                let link = trees.src(0).join(format!("{number}.lnk"));
                assert_eq!(std::fs::metadata(link).unwrap().len(), size as u64);
                n += 1;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(n, tree.files());
    });
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "set=5",
        "set=0",
        "scale=0",
        "scale=101",
        "scale=-1",
        "scale=0.0000000001",
        "procs=0",
        "procs=1025",
        "seed=4294967296",
        "files=3",
    ] {
        let err = WorkloadSpec::parse(&format!("mongo:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
    for good in ["set=1,scale=0.5", "set=4,procs=3,seed=0", "scale=100,set=3"] {
        assert!(
            WorkloadSpec::parse(&format!("mongo:{good}")).is_ok(),
            "{good}"
        );
    }
}
