use super::*;

/// [`plan`] of the optimistic log (nothing pending).
fn plan_(records: &[Record], budget: usize, reorder: usize, tear: usize, seed: u64) -> Planned {
    plan(records, &Pending::new(), budget, reorder, tear, seed)
}

fn log(kinds: &str) -> Vec<Record> {
    let rec = |c| Record {
        kind: if c == 'F' { Kind::Flush } else { Kind::Write },
        offset: 0,
        len: 1,
        data_at: 0,
        at_ns: 0,
    };
    kinds.chars().map(rec).collect()
}

#[test]
fn every_flush_is_a_state_and_subsets_are_proper_and_within_their_epoch() {
    let records = log("WWFWWWFW");
    assert_eq!(boundaries(&records), [0, 3, 7, 8]);
    let p = plan_(&records, 100, 100, 0, 1);
    assert_eq!(p.prefixes, 4);
    assert!(!p.prefixes_sampled);
    // 4 prefixes + (2^2 - 2) + (2^3 - 2) subsets; the last epoch has one write.
    assert_eq!(p.states.len(), 4 + 2 + 6);
    for s in &p.states {
        let next = boundaries(&records).into_iter().find(|&b| b > s.upto);
        for &k in &s.kept {
            assert!(k >= s.upto && next.is_some_and(|n| k < n));
            assert_eq!(records[k].kind, Kind::Write);
        }
    }
    let unique: BTreeSet<_> = p.states.iter().collect();
    assert_eq!(unique.len(), p.states.len());
}

#[test]
fn the_budget_bounds_the_states_and_the_seed_decides_them() {
    let records = log(&format!("{}F{}F", "W".repeat(30), "W".repeat(20)));
    let a = plan_(&records, 25, 25, 0, 7);
    assert_eq!(a.states.len(), 25);
    assert_eq!(a.states, plan_(&records, 25, 25, 0, 7).states);
    assert_ne!(a.states, plan_(&records, 25, 25, 0, 8).states);
    // Both epochs got subsets, taken in turn.
    let in_epoch = |u| {
        a.states
            .iter()
            .filter(move |s| s.upto == u && !s.kept.is_empty())
    };
    assert!(in_epoch(0).count() >= 10 && in_epoch(31).count() >= 10);
}

#[test]
fn a_state_stands_for_the_crashes_until_its_epoch_ends() {
    let records = log("WWFWWWFW");
    let w = |upto, kept: &[usize]| {
        window(
            &records,
            &CrashState {
                upto,
                kept: kept.to_vec(),
                ..CrashState::default()
            },
        )
    };
    // Nothing durable: every crash before the first flush was logged (index 2).
    assert_eq!(w(0, &[]), Window { from: 0, to: 2 });
    assert_eq!(w(0, &[1]), Window { from: 2, to: 2 });
    // After the first flush, until the second (index 6).
    assert_eq!(w(3, &[]), Window { from: 3, to: 6 });
    assert_eq!(w(3, &[3, 5]), Window { from: 6, to: 6 });
    // No flush after the last prefixes: every later crash.
    assert_eq!(
        w(7, &[]),
        Window {
            from: 7,
            to: u64::MAX
        }
    );
    assert_eq!(
        w(8, &[]),
        Window {
            from: 8,
            to: u64::MAX
        }
    );
}

#[test]
fn a_window_lasts_from_its_first_crash_to_the_flush_that_ends_it() {
    // Records served at 10, 20, ... ns: W W F W W.
    let mut records = log("WWFWW");
    for (i, r) in records.iter_mut().enumerate() {
        r.at_ns = 10 * (i as u64 + 1);
    }
    let w = |upto, kept: &[usize]| {
        let st = CrashState {
            upto,
            kept: kept.to_vec(),
            ..CrashState::default()
        };
        window_ns(&records, window(&records, &st))
    };
    // Nothing durable: from the log's start until the flush was served.
    assert_eq!(w(0, &[]), (0, 30));
    // Write 1 kept: crashes after it was served (20) until the flush (30).
    assert_eq!(w(0, &[1]), (20, 30));
    // After the flush, no flush follows: without end.
    assert_eq!(w(3, &[]), (30, u64::MAX));
    assert_eq!(reached(&records, 1), 10);
    // The union, clipped: [0, 30) and [20, 30) and [30, 50) inside [10, 40).
    assert_eq!(covered(vec![(0, 30), (20, 30), (30, 50)], 10, 40), 30);
    assert_eq!(covered(vec![(0, 5), (45, 60)], 10, 40), 0);
    assert_eq!(covered(vec![(12, 15), (14, 20), (30, 35)], 10, 40), 13);
}

#[test]
fn every_flush_point_first_then_at_most_reorder_reordered_and_the_coverage_counted() {
    let records = log("WWFWWWFW");
    // 4 flush points, 2 + 6 reorderings; 3 of them asked for.
    let p = plan_(&records, 100, 3, 0, 1);
    assert_eq!((p.prefixes, p.prefixes_chosen), (4, 4));
    assert_eq!((p.reordered, p.reorderings), (3, 8.0));
    assert_eq!(p.states.len(), 7);
    // The budget before the reordered ones: prefixes first.
    let p = plan_(&records, 5, 3, 0, 1);
    assert_eq!((p.prefixes_chosen, p.reordered, p.states.len()), (4, 1, 5));
    // No reordering asked: flush points alone.
    let p = plan_(&records, 100, 0, 0, 1);
    assert_eq!((p.prefixes_chosen, p.reordered), (4, 0));
    // An epoch of 100 writes counts as 2^62 - 2 reorderings, not infinity.
    let big = plan_(&log(&"W".repeat(100)), 10, 10, 0, 1);
    assert_eq!(big.reorderings, 2f64.powi(62) - 2.0);
}

#[test]
fn a_torn_state_keeps_its_epoch_before_the_write_and_part_of_its_blocks() {
    // W(1 block) F W(1) W(4 blocks) W(3 blocks) F
    let mut records = log("WFWWWF");
    for (i, blocks) in [(3, 4), (4, 3)] {
        records[i].len = blocks * TEAR_BLOCK;
    }
    let p = plan_(&records, 100, 0, 5, 9);
    assert_eq!(p.tearable, 2);
    assert_eq!(p.torn, 5);
    for s in p.states.iter().filter(|s| s.torn.is_some()) {
        let t = s.torn.as_ref().unwrap();
        assert!(t.write == 3 || t.write == 4, "{s:?}");
        assert_eq!(s.upto, 2);
        assert_eq!(s.kept, (2..t.write).collect::<Vec<_>>());
        let n = records[t.write].len / TEAR_BLOCK;
        assert!(!t.blocks.is_empty() && (t.blocks.len() as u64) < n, "{s:?}");
        assert!(t.blocks.iter().all(|&b| b < n));
        // Its crashes come after the torn write began.
        assert_eq!(window(&records, s).from, t.write as u64 + 1);
    }
    // Seeded, and within the budget.
    assert_eq!(p.states, plan_(&records, 100, 0, 5, 9).states);
    assert_eq!(plan_(&records, 4, 0, 5, 9).torn, 1);
    // Nothing to tear: no torn state.
    assert_eq!(plan_(&log("WWF"), 100, 0, 5, 9).torn, 0);
}

#[test]
fn more_flushes_than_the_budget_keeps_the_first_and_last_evenly() {
    let records = log(&"WF".repeat(50));
    let p = plan_(&records, 5, 5, 0, 1);
    assert!(p.prefixes_sampled);
    let uptos: Vec<usize> = p.states.iter().map(|s| s.upto).collect();
    assert_eq!(uptos, [0, 24, 50, 74, 100]);
    assert!(p.states.iter().all(|s| s.kept.is_empty()));
}

#[test]
fn writes_a_flush_did_not_cover_may_be_left_out_after_it() {
    // Write 1 was in flight when the flush at 2 was issued: pending at boundary 3.
    let records = log("WWFWWF");
    let pending = Pending::from([(3, vec![1])]);
    let p = plan(&records, &pending, 100, 100, 0, 1);
    // Epoch 0: 2^2 - 2; epoch 3 over writes 1, 3, 4 but the two flush points: 2^3 - 2.
    assert_eq!(p.reorderings, 8.0);
    assert_eq!(p.states.len(), 3 + 8);
    let dropping: Vec<&CrashState> = p.states.iter().filter(|s| !s.dropped.is_empty()).collect();
    // Write 1 left out, with each subset of writes 3 and 4 (all four).
    assert_eq!(dropping.len(), 4);
    for s in &dropping {
        assert_eq!((s.upto, s.dropped.as_slice(), s.base()), (3, &[1][..], 1));
        assert!(s.kept.iter().all(|&k| k == 3 || k == 4), "{s:?}");
        // It stands for crashes after the flush, like the prefix it drops from.
        assert_eq!(window(&records, s).to, 5);
    }
    // Built in ascending base: the working image never moves back.
    let bases: Vec<usize> = p.states.iter().map(CrashState::base).collect();
    assert!(bases.windows(2).all(|w| w[0] <= w[1]), "{bases:?}");
    // The optimistic log of the same records has none of them.
    assert!(plan_(&records, 100, 100, 0, 1)
        .states
        .iter()
        .all(|s| s.dropped.is_empty()));
}

#[test]
fn a_write_pending_at_the_logs_end_is_left_out_in_a_state_of_its_own() {
    let records = log("WWF");
    let p = plan(&records, &Pending::from([(3, vec![0])]), 100, 100, 0, 1);
    // Epoch 0: 2; the end: write 0 left out (its only subset but the flush point).
    assert_eq!(p.reorderings, 3.0);
    let last: Vec<&CrashState> = p.states.iter().filter(|s| s.upto == 3).collect();
    assert_eq!(last.len(), 2);
    assert!(last.iter().any(|s| s.dropped == [0] && s.kept.is_empty()));
    assert!(last.iter().any(|s| s.dropped.is_empty()));
}

#[test]
fn epochs_with_pending_writes_get_their_states_first() {
    // 30 epochs of two writes; the last one's flush left write 87 uncovered.
    let records = log(&"WWF".repeat(30));
    let pending = Pending::from([(90, vec![87])]);
    // Room for the flush points and one reordered state: it drops write 87.
    let p = plan(&records, &pending, 32, 1, 0, 1);
    let reordered: Vec<&CrashState> = p
        .states
        .iter()
        .filter(|s| !s.kept.is_empty() || !s.dropped.is_empty())
        .collect();
    assert_eq!(reordered.len(), 1, "{reordered:?}");
    assert_eq!(reordered[0].dropped, [87]);
}
