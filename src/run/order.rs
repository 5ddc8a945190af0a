//! The order of the targets within each repetition: a Williams design (E. J. Williams,
//! "Experimental designs balanced for the estimation of residual effects of treatments",
//! Australian Journal of Scientific Research A 2, 1949), balanced for first-order
//! carry-over.
//!
//! A target can leave something behind for the next one (write-back still under way, a
//! warm or fragmented host cache, the disk's own state). A cyclic rotation (a b c, b c a,
//! c a b) moves every target through every position but always runs b right after a: the
//! carry-over from a is then confounded with b. In a Williams design, over one cycle of its
//! sequences every target takes every position equally often *and* every target runs right
//! after every other target equally often.
//!
//! Construction, for k targets numbered 0..k in the plan's order: the first sequence is
//! 0, 1, k−1, 2, k−2, 3, …; sequence i adds i (mod k) to each entry. For even k these k
//! sequences are the design; for odd k they are followed by their mirror images (each of
//! the k sequences reversed), 2k in all. The first k sequences are a Latin square either
//! way, so after k repetitions the positions are balanced already. Repetition r (from 1)
//! uses sequence (r − 1) mod (the number of sequences): the order is a pure function of
//! the number of targets and the repetition, so a resumed run (`--resume`) and every MPI
//! rank or guest follows the same one.

/// The sequences of the Williams design for `k` targets: `k` of them when `k` is even
/// (or 1), `2k` when `k` is odd and over 1; none for no target.
pub fn williams(k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return Vec::new();
    }
    // 0, 1, k−1, 2, k−2, …: odd places count up from 1, even places down from k−1.
    let first: Vec<usize> = (0..k)
        .map(|j| match j {
            0 => 0,
            j if j % 2 == 1 => j.div_ceil(2),
            j => k - j / 2,
        })
        .collect();
    let mut rows: Vec<Vec<usize>> = (0..k)
        .map(|i| first.iter().map(|&x| (x + i) % k).collect())
        .collect();
    if k % 2 == 1 && k > 1 {
        let mirrors: Vec<Vec<usize>> = rows
            .iter()
            .map(|r| r.iter().rev().copied().collect())
            .collect();
        rows.extend(mirrors);
    }
    rows
}

/// The order of `targets` targets (indices into the plan's targets) in repetition `rep`
/// (from 1): sequence (rep − 1) mod its number of the [`williams`] design. With two
/// targets they alternate (a b, b a, a b, …); with three, six repetitions go a b c, b c a,
/// c a b, c b a, a c b, b a c.
pub fn target_order(targets: usize, rep: u32) -> Vec<usize> {
    let mut design = williams(targets);
    if design.is_empty() {
        return Vec::new();
    }
    let i = (rep.saturating_sub(1) as usize) % design.len();
    design.swap_remove(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often each target runs at each position, and right after each other target,
    /// over one cycle of the design.
    fn counts(k: usize) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let mut at = vec![vec![0; k]; k];
        let mut after = vec![vec![0; k]; k];
        let design = williams(k);
        for seq in &design {
            let mut sorted = seq.clone();
            sorted.sort();
            assert_eq!(sorted, (0..k).collect::<Vec<_>>(), "k={k}: {seq:?}");
            for (pos, &t) in seq.iter().enumerate() {
                at[t][pos] += 1;
            }
            for w in seq.windows(2) {
                after[w[0]][w[1]] += 1;
            }
        }
        (at, after)
    }

    #[test]
    fn every_target_takes_every_position_equally_often_over_a_cycle() {
        for k in 1..=8 {
            let n = williams(k).len();
            assert_eq!(n, if k % 2 == 0 || k == 1 { k } else { 2 * k }, "k={k}");
            let (at, _) = counts(k);
            for (t, row) in at.iter().enumerate() {
                assert!(
                    row.iter().all(|&c| c == n / k),
                    "k={k}, target {t}: {row:?}"
                );
            }
        }
    }

    #[test]
    fn every_target_follows_every_other_equally_often_over_a_cycle() {
        for k in 2..=8 {
            let (_, after) = counts(k);
            // k−1 neighbouring pairs in each of n sequences, over k(k−1) ordered pairs.
            let each = williams(k).len() / k;
            for (a, row) in after.iter().enumerate() {
                for (b, &count) in row.iter().enumerate() {
                    let want = if a == b { 0 } else { each };
                    assert_eq!(count, want, "k={k}: {a} before {b}");
                }
            }
        }
    }

    #[test]
    fn the_first_k_sequences_are_a_latin_square() {
        for k in 1..=8 {
            let design = williams(k);
            for pos in 0..k {
                let mut who: Vec<usize> = design[..k].iter().map(|s| s[pos]).collect();
                who.sort();
                assert_eq!(who, (0..k).collect::<Vec<_>>(), "k={k}, position {pos}");
            }
        }
    }

    #[test]
    fn repetitions_walk_the_design_and_start_over() {
        assert_eq!(target_order(0, 5), Vec::<usize>::new());
        for rep in 1..=4 {
            assert_eq!(target_order(1, rep), [0]);
        }
        let two: Vec<Vec<usize>> = (1..=4).map(|r| target_order(2, r)).collect();
        assert_eq!(two, [[0, 1], [1, 0], [0, 1], [1, 0]]);
        let three: Vec<Vec<usize>> = (1..=7).map(|r| target_order(3, r)).collect();
        assert_eq!(
            three,
            [
                [0, 1, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0],
                [0, 2, 1],
                [1, 0, 2],
                [0, 1, 2]
            ]
        );
        assert_eq!(target_order(4, 1), [0, 1, 3, 2]);
        assert_eq!(target_order(5, 1), [0, 1, 4, 2, 3]);
        // Repetition 0 (none) is taken as the first.
        assert_eq!(target_order(4, 0), target_order(4, 1));
    }
}
