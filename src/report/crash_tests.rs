//! Tests of the power-cut report lines.

use super::*;

#[test]
fn a_target_line_puts_speed_and_loss_together() {
    let t = TargetLoss {
        target: "ext4".into(),
        ops_per_s: vec![1000.0, 1300.0, 1234.4],
        bad: vec![(2, 40), (1, 40), (0, 40)],
        lost: 0,
        empty: 3,
        garbage: 0,
        unmountable: 0,
        repaired: 1,
        leftover: 0,
        reappeared: 0,
        metadata: 0,
        unpromised: 0,
        ..Default::default()
    };
    assert_eq!(
        target_line(&t, "files/s"),
        "ext4: 1,234\u{a0}files/s; 3 of 120 crash states broke a promise (3 files empty); \
         1 of 120 needed repair"
    );
}

#[test]
fn the_line_says_which_crash_states_were_checked_of_how_many() {
    let t = TargetLoss {
        target: "ext4".into(),
        ops_per_s: vec![900.0],
        bad: vec![(0, 215)],
        flush_points: 175,
        flush_points_checked: 175,
        reordered: 40,
        reorderings: 1016.0,
        ..Default::default()
    };
    assert_eq!(
        coverage_line(&t).unwrap(),
        "checked on ext4: 175 of 175 flush points, 40 of 1,016 reordered states"
    );
    let many = TargetLoss {
        flush_points_checked: 100,
        reorderings: 3.5e18,
        ..t.clone()
    };
    assert_eq!(
        coverage_line(&many).unwrap(),
        "checked on ext4: 100 of 175 flush points, 40 of at least 10^18 reordered states"
    );
    let torn = TargetLoss {
        torn: 20,
        tearable: 312,
        ..t.clone()
    };
    assert_eq!(
        coverage_line(&torn).unwrap(),
        "checked on ext4: 175 of 175 flush points, 40 of 1,016 reordered states, 20 torn \
         states (of 312 writes that could tear)"
    );
    // A run from before the coverage was counted says nothing of it.
    let old = TargetLoss {
        flush_points: 0,
        ..t
    };
    assert_eq!(coverage_line(&old), None);
}

#[test]
fn the_promises_broken_are_counted_beside_the_states() {
    let t = TargetLoss {
        target: "ext4+barrier=0".into(),
        ops_per_s: vec![1500.0],
        bad: vec![(18, 20)],
        lost: 1017,
        promises: 129,
        promises_broken: 31,
        ..Default::default()
    };
    assert_eq!(
        target_line(&t, "files/s"),
        "ext4+barrier=0: 1,500\u{a0}files/s; 18 of 20 crash states broke a promise \
         (1,017 files lost); promised data lost at 31 of 129 promises"
    );
    // None broken: the states' line says it; no count of promises is added.
    let kept = TargetLoss {
        bad: vec![(0, 20)],
        lost: 0,
        promises_broken: 0,
        ..t
    };
    assert!(!target_line(&kept, "files/s").contains("promises"));
}

#[test]
fn the_time_a_power_cut_would_lose_promised_data_is_said_as_a_share() {
    let t = TargetLoss {
        target: "ext4".into(),
        ops_per_s: vec![16_000.0],
        bad: vec![(23, 61)],
        promises: 64,
        promises_broken: 64,
        exposed_pct: vec![99.26],
        ..Default::default()
    };
    assert!(target_line(&t, "files/s").ends_with(
        "promised data lost at 64 of 64 promises; a power cut during over 99% of its \
         recorded run would lose promised data"
    ));
    assert_eq!(percent(0.4), "under 1%");
    assert_eq!(percent(57.4), "57%");
    assert_eq!(percent(100.0), "100%");
    // Nothing exposed, nothing said.
    let kept = TargetLoss {
        exposed_pct: vec![0.0],
        ..t
    };
    assert!(!target_line(&kept, "files/s").contains("power cut"));
}

/// A target of `fsync-write` that broke `broken` of its 64 promises.
fn target(name: &str, broken: u64) -> TargetLoss {
    TargetLoss {
        target: name.into(),
        ops_per_s: vec![1000.0],
        bad: vec![(broken.min(1), 20)],
        promises: 64,
        promises_broken: broken,
        ..Default::default()
    }
}

/// `fsync-write`'s losses on `targets`.
fn fsync_write(targets: Vec<TargetLoss>) -> PatternLoss {
    PatternLoss {
        workload: "crash".into(),
        pattern: "fsync-write".into(),
        ops_unit: "files/s".into(),
        pairs: Vec::new(),
        targets,
    }
}

#[test]
fn speed_and_loss_name_the_target_that_loses_first_and_skip_equal_losses() {
    let pl = fsync_write(vec![
        target("ext4", 0),
        target("ext4+barrier=0", 64),
        target("xfs", 0),
    ]);
    assert_eq!(
        speed_and_loss(None, &pl),
        [
            "ext4+barrier=0: speed not judged against ext4; loses promised data at 64 of \
             64 promises, ext4 at none",
            "ext4+barrier=0: speed not judged against xfs; loses promised data at 64 of 64 \
             promises, xfs at none"
        ]
    );
    // A run that did not count promises (the SQLite patterns before December 2026)
    // counts crash states.
    let db = |name: &str, bad: u64| TargetLoss {
        promises: 0,
        promises_broken: 0,
        bad: vec![(bad, 40)],
        ..target(name, 0)
    };
    let pl = PatternLoss {
        targets: vec![db("ext4", 3), db("xfs", 0)],
        ..pl
    };
    assert_eq!(
        speed_and_loss(None, &pl),
        [
            "ext4: speed not judged against xfs; loses promised data in 3 of 40 crash states, \
          xfs in no crash state"
        ]
    );
}

#[test]
fn files_lost_where_nothing_was_promised_are_not_broken_promises() {
    let t = TargetLoss {
        target: "xfs".into(),
        ops_per_s: vec![500.0],
        bad: vec![(1, 40)],
        lost: 0,
        empty: 0,
        garbage: 0,
        unmountable: 0,
        repaired: 0,
        leftover: 1,
        reappeared: 2,
        metadata: 0,
        unpromised: 34,
        ..Default::default()
    };
    assert_eq!(
        target_line(&t, "replacements/s"),
        "xfs: 500\u{a0}replacements/s; 1 of 40 crash states broke a promise (1 \
         temporaries left after a promised rename, 2 files back after a promised unlink); \
         34 files not promised, lost"
    );
    let none = TargetLoss {
        bad: vec![(0, 40)],
        leftover: 0,
        reappeared: 0,
        ..t
    };
    assert_eq!(
        target_line(&none, "replacements/s"),
        "xfs: 500\u{a0}replacements/s; none of 40 crash states broke a promise; 34 files \
         not promised, lost"
    );
}

#[test]
fn repairs_are_their_own_class_beside_broken_promises() {
    let target = |name: &str, bad: u64, repaired: u64| TargetLoss {
        target: name.into(),
        ops_per_s: vec![1000.0],
        bad: vec![(bad, 40)],
        lost: bad,
        empty: 0,
        garbage: 0,
        unmountable: 0,
        repaired,
        leftover: 0,
        reappeared: 0,
        metadata: 0,
        unpromised: 0,
        ..Default::default()
    };
    let (nobarrier, ext4) = (target("ext4+barrier=0", 0, 33), target("ext4", 0, 0));
    assert_eq!(
        target_line(&nobarrier, "files/s"),
        "ext4+barrier=0: 1,000\u{a0}files/s; none of 40 crash states broke a promise; \
         33 of 40 needed repair"
    );
    let pl = PatternLoss {
        workload: "crash".into(),
        pattern: "fsync-write".into(),
        ops_unit: "files/s".into(),
        pairs: crate::compare::crash::pairs(&[nobarrier.clone(), ext4.clone()]),
        targets: vec![nobarrier, ext4],
    };
    assert_eq!(
        verdict_lines(&pl),
        ["needed repair: ext4+barrier=0 in 33 of 40 states, ext4 in none"]
    );
    // With a difference in loss too, the repairs come after the verdict on it.
    let lossy = target("ext4+barrier=0", 18, 15);
    let pl = PatternLoss {
        pairs: crate::compare::crash::pairs(&[lossy.clone(), pl.targets[1].clone()]),
        targets: vec![lossy, pl.targets[1].clone()],
        ..pl
    };
    let lines = verdict_lines(&pl);
    assert!(
        lines[0].starts_with("the differences in loss are not judged"),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        "needed repair: ext4+barrier=0 in 15 of 40 states, ext4 in none"
    );
}

/// With repetitions the speed is the run's verdict: "N× faster than …" with its interval,
/// "as fast as … (within ±3%)", beside each loss.
#[test]
fn speed_and_loss_quote_the_verdict_when_there_is_one() {
    use crate::compare::rank::rank;
    use crate::compare::verdict::Sense;
    let pl = fsync_write(vec![target("ext4", 0), target("ext4+barrier=0", 64)]);
    let fast = [
        ("ext4", vec![880.0, 884.0, 890.0, 878.0]),
        ("ext4+barrier=0", vec![1500.0, 1525.0, 1510.0, 1490.0]),
    ];
    let v = rank("crash", "fsync-write", "files/s", Sense::Rate, &fast).unwrap();
    let lines = speed_and_loss(Some(&v), &pl);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (speed, loss) = lines[0].split_once("; ").unwrap();
    assert!(
        speed.starts_with("ext4+barrier=0: 1.71× faster than ext4 ["),
        "{speed}"
    );
    assert_eq!(
        loss,
        "loses promised data at 64 of 64 promises, ext4 at none"
    );
    // The same speed: "as fast as", the loss all the same.
    let same = [
        ("ext4", vec![1000.0, 1001.0, 999.0, 1000.5, 999.5]),
        ("ext4+barrier=0", vec![1000.2, 1001.2, 998.5, 1000.0, 999.8]),
    ];
    let v = rank("crash", "fsync-write", "files/s", Sense::Rate, &same).unwrap();
    let lines = speed_and_loss(Some(&v), &pl);
    assert!(
        lines[0]
            .starts_with("ext4+barrier=0: as fast as ext4 (within ±3%); loses promised data at 64"),
        "{lines:?}"
    );
}
