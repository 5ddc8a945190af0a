use super::*;
use crate::compare::verdict::Sense;
use crate::result::TargetInfo;

fn verdict(sense: Sense, samples: &[(&str, f64)]) -> PhaseVerdict {
    let tight = |x: f64| vec![x, x * 1.01, x * 0.99, x * 1.005, x * 0.995];
    let s: Vec<(&str, Vec<f64>)> = samples.iter().map(|(t, x)| (*t, tight(*x))).collect();
    crate::compare::rank::rank("dbrandom", "random", "ops/s", sense, &s).unwrap()
}

#[test]
fn ratios_are_aged_over_fresh_and_an_order_change_is_named() {
    let v = verdict(
        Sense::Rate,
        &[
            ("ext4", 100.0),
            ("ext4+aged", 80.0),
            ("xfs", 90.0),
            ("xfs+aged", 90.2),
        ],
    );
    let a = aged_vs_fresh(&[v], &infos(&["ext4", "ext4+aged", "xfs", "xfs+aged"]));
    assert_eq!(a.len(), 1);
    let ext4 = a[0].ratios.iter().find(|r| r.fresh == "ext4").unwrap();
    assert!((ext4.ratio - 0.8).abs() < 0.01, "{ext4:?}");
    assert!(ext4.interval.0 < 0.8 && ext4.interval.1 > 0.8);
    assert_eq!(ext4.outcome, Outcome::Apart);
    assert!(ext4.text(true, "3").contains("worse aged"));
    let xfs = a[0].ratios.iter().find(|r| r.fresh == "xfs").unwrap();
    assert!((xfs.ratio - 90.2 / 90.0).abs() < 0.01);
    assert_ne!(xfs.outcome, Outcome::Apart);
    let (fresh, aged) = a[0].reordered.clone().unwrap();
    assert_eq!(fresh, ["ext4", "xfs"]);
    assert_eq!(aged, ["xfs", "ext4"]);
    assert_eq!(a[0].swapped, [("ext4–xfs".to_string(), true)]);
}

#[test]
fn for_a_time_a_larger_ratio_is_worse_and_no_change_is_no_line() {
    let v = verdict(
        Sense::Duration,
        &[
            ("ext4", 10.0),
            ("ext4+aged", 12.0),
            ("xfs", 20.0),
            ("xfs+aged", 26.0),
        ],
    );
    let a = aged_vs_fresh(&[v], &infos(&["ext4", "ext4+aged", "xfs", "xfs+aged"]));
    let ext4 = a[0].ratios.iter().find(|r| r.fresh == "ext4").unwrap();
    assert!((ext4.ratio - 1.2).abs() < 0.01, "{ext4:?}");
    assert!(ext4.text(false, "3").contains("worse aged"));
    assert_eq!(a[0].reordered, None);
    assert_eq!(a[0].lines("3").len(), 1);
}

#[test]
fn a_run_without_aged_twins_has_nothing_to_say() {
    let v = verdict(Sense::Rate, &[("ext4", 100.0), ("xfs", 90.0)]);
    assert!(aged_vs_fresh(&[v], &infos(&["ext4", "xfs"])).is_empty());
    assert_eq!(render(&[], 0.03, 80), "");
}

#[test]
fn a_target_aged_in_one_run_and_fresh_in_the_other_is_set_up_differently() {
    let a = crate::report::fixture_with(Vec::new());
    let mut b = a.clone();
    b.targets[0].age = Some("desktop:fill=75,churn=2".into());
    let name = a.targets[0].name.clone();
    let d = crate::compare::differences::setup_differences(&a, &b, &[(name.clone(), name)]);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].1.contains("aging fresh vs desktop:fill=75,churn=2"),
        "{d:?}"
    );
    assert!(crate::compare::differences::setup_differences(&a, &a, &[]).is_empty());
}

/// A loop target of `fs` named `name`, aged with `age`, with mount options `mount`.
fn info(name: &str, fs: &str, mount: &str, age: Option<&str>) -> TargetInfo {
    TargetInfo {
        name: name.into(),
        fstype: fs.into(),
        kind: "loop".into(),
        requested_mount_opts: mount.into(),
        size_bytes: 1 << 30,
        age: age.map(String::from),
        ..Default::default()
    }
}

/// The targets of a run with `names`: those with `+aged` in their name aged, each of the
/// filesystem its name begins with.
fn infos(names: &[&str]) -> Vec<TargetInfo> {
    names
        .iter()
        .map(|n| {
            let fs = n.split(['+', '@']).next().unwrap();
            let age = n.contains("+aged").then_some("desktop:fill=75,churn=2");
            info(n, fs, "", age)
        })
        .collect()
}

#[test]
fn the_fresh_twin_is_the_target_set_up_alike_not_by_its_name() {
    let aged = info("ext4+aged", "ext4", "", Some("desktop:fill=75,churn=2"));
    let plain = info("ext4", "ext4", "", None);
    let writeback = info("ext4+data=writeback", "ext4", "data=writeback", None);
    let xfs = info("xfs", "xfs", "", None);
    let all = [xfs.clone(), writeback.clone(), plain.clone(), aged.clone()];
    assert_eq!(fresh_of(&aged, &all), Some("ext4"));
    // Set up differently (mount options, filesystem): no twin, whatever the names say.
    assert_eq!(fresh_of(&aged, &[writeback.clone(), xfs.clone()]), None);
    // Named by a plan: an aged `fast` is ext4's twin when set up alike.
    let mut named = aged.clone();
    named.name = "fast".into();
    assert_eq!(fresh_of(&named, &all), Some("ext4"));
    // A fresh target is nobody's aged twin, even one named like an aged one.
    let mut looks_aged = plain.clone();
    looks_aged.name = "ext4+aged".into();
    assert_eq!(fresh_of(&looks_aged, &all), None);
    // Among two alike, the one whose name begins the aged one's.
    let mut other = plain.clone();
    other.name = "a".into();
    assert_eq!(fresh_of(&aged, &[other, plain]), Some("ext4"));
}
