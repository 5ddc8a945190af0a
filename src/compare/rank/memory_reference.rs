//! tmpfs beside two disks: a reference, not ranked (a fixture with a second disk).

use crate::result::RunResult;

fn fixture() -> RunResult {
    serde_json::from_str(include_str!("../../../tests/fixtures/run.json")).unwrap()
}

/// The fixture (ext4 and tmpfs) with a second disk, `xfs`: ext4's trials again, half
/// as fast.
pub(crate) fn with_xfs() -> RunResult {
    let mut run = fixture();
    let mut t = run
        .targets
        .iter()
        .find(|t| t.name == "ext4")
        .unwrap()
        .clone();
    t.name = "xfs".into();
    t.fstype = "xfs".into();
    run.targets.push(t);
    let copies: Vec<_> = run
        .trials
        .iter()
        .filter(|t| t.target == "ext4")
        .cloned()
        .map(|mut t| {
            t.target = "xfs".into();
            for p in &mut t.phases {
                p.mb_per_s /= 2.0;
                p.ops_per_s /= 2.0;
                p.wall_s *= 2.0;
            }
            t
        })
        .collect();
    run.trials.extend(copies);
    run
}

#[test]
fn one_disk_beside_tmpfs_is_ranked_with_it() {
    let v = super::verdicts(&fixture());
    assert!(v.iter().all(|v| v.references.is_empty()));
    assert!(v
        .iter()
        .all(|v| v.places.iter().any(|p| p.target == "tmpfs")));
}

#[test]
fn two_disks_are_ranked_among_themselves_and_tmpfs_is_their_reference() {
    let run = with_xfs();
    let v = super::verdicts(&run);
    assert!(!v.is_empty());
    for v in &v {
        let ranked: Vec<&str> = v.places.iter().map(|p| p.target.as_str()).collect();
        assert!(!ranked.contains(&"tmpfs"), "{ranked:?}");
        assert_eq!(v.references.len(), 1, "{} {}", v.workload, v.phase);
        let r = &v.references[0];
        assert_eq!(r.target, "tmpfs");
        // Against the best disk's geometric mean, in the phase's own sense.
        let best = &v.places[0];
        let want = if v.higher_better {
            r.value / best.value
        } else {
            best.value / r.value
        };
        if let Some(x) = r.vs_best {
            assert!((x - want).abs() < 1e-9 * want, "{x} {want}");
            // Its interval, in the same sense, holds it (repetitions on both sides).
            let (lo, hi) = r.interval.expect("an interval");
            assert!(lo <= x && x <= hi, "{lo} {x} {hi}");
        }
    }
    // The family counts the pairs of disks only: one pair a phase.
    assert!(v.iter().all(|v| v.pairs.len() == 1));
    let text = super::render(&v, run.policy.reps, 80);
    assert!(text.contains("reference: tmpfs"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}
