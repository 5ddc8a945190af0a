//! The `Could tell:` line: settled phases, and what the open pairs could see.

use super::*;

#[test]
fn it_counts_settled_phases_and_states_what_the_open_pairs_could_see() {
    let apart = rank(
        "w",
        "fast",
        "MB/s",
        Sense::Rate,
        &[
            ("a", vec![100.0, 101.0, 99.0]),
            ("b", vec![50.0, 51.0, 49.0]),
        ],
    )
    .unwrap();
    let open = rank(
        "w",
        "noisy",
        "MB/s",
        Sense::Rate,
        &[
            ("a", vec![100.0, 80.0, 120.0]),
            ("b", vec![95.0, 70.0, 125.0]),
        ],
    )
    .unwrap();
    let mut vs = vec![apart, open];
    settle(vs.iter_mut(), 0.03);
    assert_eq!(vs[0].pairs[0].outcome, Outcome::Apart);
    assert_eq!(vs[1].pairs[0].outcome, Outcome::CannotTell);
    let line = resolution(&vs).unwrap();
    assert!(
        line.starts_with("Could tell: 1 of 2 phases settled"),
        "{line}"
    );
    // The open pair's figures, at the level 0.05/m for the family's m = 2 tests.
    let t = vs[1].pairs[0].test.as_ref().unwrap();
    let seen = fmt_ratio(t.detectable_log(0.025).exp());
    assert!(
        line.contains(&format!("differences of {seen} or more")),
        "{line}"
    );
    let n = t.reps_for(10.0, 0.025).unwrap();
    assert!(line.contains(&format!("about {n} repetitions")), "{line}");
    // Past 10×, no number is quoted.
    let wild = rank(
        "w",
        "wild",
        "MB/s",
        Sense::Rate,
        &[
            ("a", vec![100.0, 10.0, 1000.0]),
            ("b", vec![90.0, 900.0, 9.0]),
        ],
    )
    .unwrap();
    let mut vs = vec![wild];
    settle(vs.iter_mut(), 0.03);
    let line = resolution(&vs).unwrap();
    assert!(
        line.contains("could see, at the median, only differences over 10× (80% power)"),
        "{line}"
    );
    // One repetition: nothing tested, nothing to say.
    let one = rank(
        "w",
        "p",
        "MB/s",
        Sense::Rate,
        &[("a", vec![1.0]), ("b", vec![2.0])],
    );
    assert_eq!(resolution(&[one.unwrap()]), None);
}
