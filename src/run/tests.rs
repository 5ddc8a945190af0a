//! Unit tests of `run`.

use super::rotation;

#[test]
fn each_target_takes_each_place_once_in_as_many_repetitions() {
    let order = |rep| rotation(3, rep).collect::<Vec<_>>();
    assert_eq!(order(1), [0, 1, 2]);
    assert_eq!(order(2), [1, 2, 0]);
    assert_eq!(order(3), [2, 0, 1]);
    assert_eq!(order(4), [0, 1, 2]);
    for place in 0..3 {
        let mut who: Vec<usize> = (1..=3).map(|rep| order(rep)[place]).collect();
        who.sort();
        assert_eq!(who, [0, 1, 2], "place {place}");
    }
    assert_eq!(rotation(0, 5).count(), 0);
}
