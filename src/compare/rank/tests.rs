//! Unit tests of `rank`.

use super::*;

#[test]
fn intervals_too_wide_to_quote_are_not_printed_as_numbers() {
    assert_eq!(fmt_interval(5.1, 7.0), "[5.1–7.0×]");
    assert_eq!(fmt_interval(280.0, 340.0), "[280–340×]");
    assert_eq!(fmt_interval(0.0, 7.93e44), "[wider\u{a0}than\u{a0}10×]");
    assert_eq!(fmt_interval(0.02, 3215.0), "[wider\u{a0}than\u{a0}10×]");
    assert_eq!(fmt_interval(1.64, 1077.0), "[wider\u{a0}than\u{a0}10×]");
    assert_eq!(fmt_interval(0.5, 4.9), "[0.50–4.9×]");
}

fn v(samples: &[(&str, Vec<f64>)], sense: Sense) -> PhaseVerdict {
    rank("smallfiles", "create", "files/s", sense, samples).unwrap()
}

fn place<'a>(r: &'a PhaseVerdict, t: &str) -> &'a Place {
    r.places.iter().find(|p| p.target == t).unwrap()
}

#[test]
fn a_clear_winner_is_apart_and_identical_targets_are_as_fast() {
    let s = [
        ("ext4", vec![1000.0, 1001.0, 999.0, 1000.5, 999.5]),
        ("tmpfs", vec![6000.0, 6100.0, 5900.0, 6050.0, 5950.0]),
        ("xfs", vec![1000.2, 1001.2, 998.5, 1000.0, 999.8]),
    ];
    let r = v(&s, Sense::Rate);
    assert_eq!(r.places[0].target, "tmpfs");
    let ranking = r.ranking();
    assert!(
        ranking == "tmpfs(a) ext4(b) xfs(b)" || ranking == "tmpfs(a) xfs(b) ext4(b)",
        "{ranking}"
    );
    let ext4 = place(&r, "ext4");
    let vs = ext4.vs_best.unwrap();
    assert!((vs.ratio - 6.0).abs() < 0.1, "{vs:?}");
    let (lo, hi) = vs.ci.unwrap();
    assert!(lo > 1.0 && lo < vs.ratio && hi > vs.ratio);
    assert_eq!(ext4.vs_best_outcome, Some(Outcome::Apart));
    let (e, x) = (
        r.places.iter().position(|p| p.target == "ext4").unwrap(),
        r.places.iter().position(|p| p.target == "xfs").unwrap(),
    );
    assert_eq!(r.outcome(e, x), Some(Outcome::Within));
    assert_eq!((r.family.tests, r.family.apart), (3, 2));
}

#[test]
fn for_a_time_lower_wins_and_the_ratio_is_still_times_slower() {
    let s = [("a", vec![2.0, 2.1, 1.9]), ("b", vec![1.0, 1.05, 0.95])];
    let r = v(&s, Sense::Duration);
    assert_eq!(r.ranking(), "b(a) a(b)");
    assert!((r.places[1].vs_best.unwrap().ratio - 2.0).abs() < 0.05);
    assert!(
        r.ratios()[0].starts_with("a 2.0× slower ["),
        "{:?}",
        r.ratios()
    );
}

#[test]
fn one_repetition_orders_but_does_not_judge() {
    let s = [("a", vec![5.0]), ("b", vec![7.0])];
    let r = v(&s, Sense::Rate);
    assert_eq!(r.ranking(), "b(?) a(?)");
    assert!(!r.judged());
    assert_eq!(r.ratios(), ["a cannot tell (1.40×, no interval)"]);
    let text = render(&[r], 1, 80);
    assert!(text.contains("no verdict can be given"), "{text}");
}

#[test]
fn two_equal_repetitions_a_side_are_not_taken_as_certain() {
    // Issue 42: A=[100,100], B=[99,99] printed `A > B — B 1.01× slower [1.01–1.01×]`.
    let r = v(
        &[("a", vec![100.0, 100.0]), ("b", vec![99.0, 99.0])],
        Sense::Rate,
    );
    assert_eq!(r.ranking(), "a(?) b(?)");
    assert_eq!(r.ratios(), ["b cannot tell (1.01×, no interval)"]);
}

#[test]
fn a_target_without_a_value_is_named_and_a_zero_ranks_last() {
    let s = [("a", vec![5.0, 5.1]), ("b", vec![]), ("c", vec![6.0, 6.2])];
    let r = v(&s, Sense::Rate);
    assert_eq!(r.missing, ["b"]);
    let s = [
        ("a", vec![5.0, 5.1, 5.05]),
        ("z", vec![9.0, 0.0, 9.1]),
        ("c", vec![6.0, 6.2, 6.1]),
    ];
    let r = v(&s, Sense::Rate);
    assert_eq!(r.places.last().unwrap().target, "z");
    assert!(r.missing.is_empty());
    assert_eq!(r.ratios()[1], "z no ratio (a repetition of 0)");
    assert!(r.ranking().ends_with("z(?)"), "{}", r.ranking());
    let s = [("a", vec![5.0, 5.1]), ("b", vec![0.0, 0.0])];
    assert!(rank("w", "p", "u", Sense::Rate, &s).is_some());
    let s = [("a", vec![5.0, 5.1]), ("b", vec![])];
    assert!(rank("w", "p", "u", Sense::Rate, &s).is_none());
}

/// Issue 42: A=[100,104,96,101,99], B=[97,101,93,98,96], C=[94,98,90,95,93] printed
/// `A = B = C` while C's interval against A excluded 1. Letters say it truthfully.
#[test]
fn a_non_transitive_result_is_shown_with_letters() {
    let s = [
        ("A", vec![100.0, 104.0, 96.0, 101.0, 99.0]),
        ("B", vec![97.0, 101.0, 93.0, 98.0, 96.0]),
        ("C", vec![94.0, 98.0, 90.0, 95.0, 93.0]),
    ];
    let r = v(&s, Sense::Rate);
    let c = place(&r, "C");
    let apart = c.vs_best_outcome == Some(Outcome::Apart);
    let (lo, hi) = c.vs_best.unwrap().ci.unwrap();
    // Whatever the family decides, the words, the letters and the interval agree.
    assert_eq!(apart, lo > 1.0 || hi < 1.0);
    let share = |x: &str, y: &str| {
        let (a, b) = (&place(&r, x).letters, &place(&r, y).letters);
        a.chars().any(|ch| b.contains(ch))
    };
    assert_eq!(share("A", "C"), !apart);
    assert!(share("A", "B") && share("B", "C"), "{}", r.ranking());
    assert_eq!(r.ratios()[1].contains("slower"), apart, "{:?}", r.ratios());
}

#[test]
fn letters_follow_the_pairs() {
    let pair = |above, below, apart: bool| Pair {
        above,
        below,
        test: Some(Test {
            d: 0.0,
            se: 1.0,
            df: 3.0,
            var_a: 1.0,
            var_b: 1.0,
            n_a: 4,
            n_b: 4,
        }),
        outcome: if apart {
            Outcome::Apart
        } else {
            Outcome::CannotTell
        },
    };
    // 0–2 apart, 0–3, 1–3 apart; the rest not.
    let pairs = [
        pair(0, 1, false),
        pair(0, 2, true),
        pair(0, 3, true),
        pair(1, 2, false),
        pair(1, 3, true),
        pair(2, 3, false),
    ];
    assert_eq!(letters(4, &pairs), ["a", "ab", "bc", "c"]);
    let none: Vec<Pair> = pairs
        .iter()
        .map(|p| pair(p.above, p.below, false))
        .collect();
    assert_eq!(letters(4, &none), ["a", "a", "a", "a"]);
    let all: Vec<Pair> = pairs.iter().map(|p| pair(p.above, p.below, true)).collect();
    assert_eq!(letters(4, &all), ["a", "b", "c", "d"]);
}

#[test]
fn the_family_widens_with_more_targets() {
    let a = vec![100.0, 104.0, 97.0, 101.0];
    let b = vec![110.0, 114.0, 107.0, 111.0];
    let two = v(&[("a", a.clone()), ("b", b.clone())], Sense::Rate);
    let mut many = vec![("a", a), ("b", b)];
    for t in ["c", "d", "e", "f"] {
        many.push((t, vec![100.0, 104.0, 97.0, 101.0]));
    }
    let many = v(&many, Sense::Rate);
    let width = |r: &PhaseVerdict| {
        let p = r.places.iter().find(|p| p.target == "a").unwrap();
        let (lo, hi) = p.vs_best.unwrap().ci.unwrap();
        hi / lo
    };
    assert_eq!(many.family.tests, 15);
    assert!(width(&many) > width(&two));
}

#[test]
fn lines_break_between_words_only() {
    let text = "smallfiles create (files/s): tmpfs(a) ext4(b) xfs(b) btrfs(c) 123456789.5";
    for w in [20, 40, 80] {
        let out = wrap(text, w, "  ");
        for word in text.split(' ') {
            assert!(out.contains(word), "{word} split at {w}: {out}");
        }
        for line in out.lines() {
            assert!(
                line.chars().count() <= w || !line.trim().contains(' '),
                "{line:?} over {w}"
            );
        }
    }
}
