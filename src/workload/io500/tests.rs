//! Tests of the `io500` workload: a short run in a temporary directory makes all twelve
//! phases in the official order, reads back exactly what it wrote, and scores as the
//! formula says.

use super::*;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::workload::testutil::in_context_at;

fn io500(spec: &str) -> Io500 {
    Io500::from_params(&Params::parse("io500", PARAMS, spec).unwrap()).unwrap()
}

/// The phases of one run of `w` in a temporary directory under `sync`.
fn phases_of(w: &Io500, sync: SyncPolicy) -> Vec<crate::result::PhaseResult> {
    in_context_at(&std::env::temp_dir(), DataPolicy::Random, sync, |cx| {
        w.run(cx).unwrap_or_else(|e| panic!("{e:#}"));
        cx.phases().to_vec()
    })
}

#[test]
fn a_short_run_makes_the_twelve_phases_and_scores_them() {
    let w = io500(
        "tasks=2,stonewall=0.3,ior_easy_xfer=64KiB,ior_easy_block=4MiB,ior_hard_segments=200,\
         mdtest_easy_files=300,mdtest_hard_files=300",
    );
    let phases = phases_of(&w, SyncPolicy::End);
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    let official: Vec<&str> = PHASES.iter().map(|p| p.name).collect();
    assert_eq!(names, official);
    let by = |n: &str| phases.iter().find(|p| p.name == n).unwrap();
    // Reads, stats and deletes handle exactly what the writes made.
    assert_eq!(by("ior-easy-read").bytes, by("ior-easy-write").bytes);
    assert_eq!(by("ior-hard-read").bytes, by("ior-hard-write").bytes);
    assert_eq!(by("ior-hard-write").bytes % 47008, 0);
    let made = by("mdtest-easy-write").ops;
    assert!(made > 0);
    assert_eq!(by("mdtest-easy-stat").ops, made);
    assert_eq!(by("mdtest-easy-delete").ops, made);
    let hard = by("mdtest-hard-write").ops;
    assert_eq!(by("mdtest-hard-read").bytes, hard * 3901);
    assert_eq!(by("mdtest-hard-delete").ops, hard);
    assert_eq!(by("mdtest-hard-write").extra["reached"], hard as f64);
    // find saw every file and directory; matched the hard files with "01" in the name.
    assert!(by("find").extra["find_matched"] > 0.0);
    assert!(
        by("find").ops >= made + hard + 2,
        "find examined every entry"
    );
    // Scores from the stored figures.
    let fig: Vec<(Group, f64)> = phases
        .iter()
        .map(|p| (group(&p.name), score::figure(p, group(&p.name))))
        .collect();
    let s = score::scores(&fig);
    let last = &phases[11].extra;
    assert_eq!(last["score_total"], s.total);
    assert!(s.total > 0.0);
    assert_eq!(last["official"], 0.0);
    assert_eq!(last["unofficial_stonewall_below_300"], 1.0);
    assert_eq!(last["unofficial_write_phase_short"], 1.0);
}

#[test]
fn find_matches_as_pfind_does() {
    let dir = tempfile::tempdir().unwrap();
    let stamp = dir.path().join("stamp");
    std::fs::write(&stamp, b"").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    for name in ["file.mdtest.0.101", "file.mdtest.0.7", "x01"] {
        std::fs::write(dir.path().join(name), vec![0u8; 3901]).unwrap();
    }
    std::fs::write(dir.path().join("file.mdtest.1.01"), vec![0u8; 10]).unwrap();
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(&stamp).unwrap();
    let spec = mdtest::FindSpec {
        newer_ns: md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
        size_bytes: 3901,
        name_part: "01",
    };
    let found = AtomicU64::new(0);
    crate::workload::testutil::in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        cx.phase(&FIND, 1, |w| {
            mdtest::find(w, dir.path(), &spec, &found, None)
        })
        .unwrap();
        // 5 entries examined; "file.mdtest.0.101" and "x01" match (size 3901, newer, *01*);
        // the stamp is not newer than itself; the 10-byte file has the wrong size.
        assert_eq!(cx.phases()[0].ops, 5);
    });
    assert_eq!(found.into_inner(), 2);
}

#[test]
fn parameters_are_checked() {
    for bad in [
        "tasks=0",
        "ior_easy_xfer=47001",
        "stonewall=0",
        "ior_easy_block=1MiB",
    ] {
        let e = Params::parse("io500", PARAMS, bad)
            .and_then(|p| Io500::from_params(&p))
            .err()
            .unwrap_or_else(|| panic!("{bad} should be refused"));
        assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e}");
    }
}

/// The verdict looks at each write phase's own stonewall: 300 s everywhere passes that
/// rule even when `stonewall` itself is shorter; one phase at 299.5 s does not.
#[test]
fn stonewall_rule_reads_the_phases_stonewalls() {
    let all_300 =
        io500("stonewall=5,ior_easy_s=300,mdtest_easy_s=300,ior_hard_s=300,mdtest_hard_s=300");
    let one_short = io500("ior_hard_s=299.5");
    crate::workload::testutil::in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        let keys = |cfg: &Io500| -> Vec<&'static str> {
            rules::reasons(cx, cfg, &[], 1)
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert!(!keys(&all_300).contains(&"stonewall_below_300"));
        assert!(keys(&one_short).contains(&"stonewall_below_300"));
        // No phases ran in this context: a missing phase is a zero score.
        assert!(keys(&all_300).contains(&"zero_score"));
        // The test context keeps the caches (no cold policy): not official either.
        assert!(keys(&all_300).contains(&"caches_kept"));
        assert!(!keys(&all_300).contains(&"not_synced"));
    });
}

/// `--sync each` fsyncs what each operation changed, inside its time: every file and its
/// directory in the mdtest creates, the directory in the deletes, every ior transfer.
#[test]
fn sync_each_fsyncs_every_item_of_the_write_and_delete_phases() {
    let w = io500(
        "tasks=1,stonewall=5,ior_easy_xfer=64KiB,ior_easy_block=256KiB,ior_hard_segments=4,\
         mdtest_easy_files=20,mdtest_hard_files=20",
    );
    let phases = phases_of(&w, SyncPolicy::Each);
    let by = |n: &str| phases.iter().find(|p| p.name == n).unwrap();
    let fsyncs = |n: &str| {
        by(n)
            .lat_by_op
            .iter()
            .find(|o| o.op == "fsync")
            .map_or(0, |o| o.count)
    };
    for (phase, per_op) in [
        ("mdtest-easy-write", 2),
        ("mdtest-hard-write", 2),
        ("mdtest-easy-delete", 1),
        ("mdtest-hard-delete", 1),
    ] {
        assert_eq!(fsyncs(phase), per_op * by(phase).ops, "{phase}");
    }
    // Each transfer, and ior's own fsync before close (-e).
    assert_eq!(fsyncs("ior-easy-write"), by("ior-easy-write").ops + 1);
    assert_eq!(fsyncs("ior-hard-write"), by("ior-hard-write").ops + 1);
}

#[test]
fn figure_units_follow_the_score_groups() {
    for spec in PHASES {
        let bw = BW_PHASES.contains(&spec.name);
        assert_ne!(bw, MD_PHASES.contains(&spec.name), "{}", spec.name);
        assert_eq!(bw, group(spec.name) == Group::Bw, "{}", spec.name);
    }
    assert_eq!(BW_PHASES.len() + MD_PHASES.len(), PHASES.len());
}
