use super::*;
use crate::compare::verdict::Sense;

fn verdict(sense: Sense, samples: &[(&str, f64)]) -> PhaseVerdict {
    let tight = |x: f64| vec![x, x * 1.01, x * 0.99, x * 1.005, x * 0.995];
    let s: Vec<(&str, Vec<f64>)> = samples.iter().map(|(t, x)| (*t, tight(*x))).collect();
    crate::compare::rank::rank("dbrandom", "random", "ops/s", sense, &s).unwrap()
}

#[test]
fn aged_targets_name_the_fresh_one() {
    assert_eq!(fresh_of("ext4+aged"), Some("ext4"));
    assert_eq!(
        fresh_of("ext4+data=writeback+aged-database"),
        Some("ext4+data=writeback")
    );
    assert_eq!(fresh_of("ext4"), None);
    assert_eq!(fresh_of("ext4+agedness"), None);
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
    let a = aged_vs_fresh(&[v]);
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
    let a = aged_vs_fresh(&[v]);
    let ext4 = a[0].ratios.iter().find(|r| r.fresh == "ext4").unwrap();
    assert!((ext4.ratio - 1.2).abs() < 0.01, "{ext4:?}");
    assert!(ext4.text(false, "3").contains("worse aged"));
    assert_eq!(a[0].reordered, None);
    assert_eq!(a[0].lines("3").len(), 1);
}

#[test]
fn a_run_without_aged_twins_has_nothing_to_say() {
    let v = verdict(Sense::Rate, &[("ext4", 100.0), ("xfs", 90.0)]);
    assert!(aged_vs_fresh(&[v]).is_empty());
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
