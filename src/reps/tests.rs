//! Unit tests of `reps`.

use super::*;

#[test]
fn durations_and_bounds() {
    assert_eq!(parse_duration_s("300").unwrap(), 300.0);
    assert_eq!(parse_duration_s("5m").unwrap(), 300.0);
    assert_eq!(parse_duration_s("1.5h").unwrap(), 5400.0);
    for bad in ["", "m", "-1s", "0", "inf", "1e300h", "5 minutes"] {
        assert!(parse_duration_s(bad).is_err(), "{bad}");
    }
    assert!(AutoReps::new(Some(0.0), None, None).is_err());
    assert!(AutoReps::new(None, Some(2), None).is_err());
    let r = AutoReps::new(None, None, Some("10m")).unwrap();
    assert_eq!((r.max, r.precision, r.budget_s), (10, 0.05, Some(600.0)));
}

#[test]
fn the_half_width_narrows_with_more_values_and_is_zero_without_spread() {
    let few = relative_half_width(&[100.0, 110.0, 90.0]);
    let many = relative_half_width(&[100.0, 110.0, 90.0, 100.0, 110.0, 90.0, 100.0, 110.0, 90.0]);
    assert!(many < few, "{many} {few}");
    assert_eq!(relative_half_width(&[5.0, 5.0, 5.0]), 0.0);
    assert!(relative_half_width(&[5.0]).is_infinite());
    assert!(relative_half_width(&[5.0, 0.0]).is_infinite());
}

fn run_of(values: &[(&str, &[f64])]) -> RunResult {
    let template = serde_json::from_str::<RunResult>(include_str!("../../tests/fixtures/run.json"))
        .unwrap()
        .trials
        .remove(0);
    let mut trials = Vec::new();
    for (target, xs) in values {
        for (i, x) in xs.iter().enumerate() {
            let mut t = template.clone();
            t.target = target.to_string();
            t.label = "w".into();
            t.workload = "w".into();
            t.rep = i as u32 + 1;
            t.status = "ok".into();
            t.phases.truncate(1);
            t.phases[0].name = "p".into();
            t.phases[0].primary = "ops_per_s".into();
            t.phases[0].ops_per_s = *x;
            trials.push(t);
        }
    }
    crate::report::fixture_with(trials)
}

#[test]
fn a_run_stops_when_settled_at_the_maximum_or_before_the_budget_runs_out() {
    let rule = AutoReps::new(Some(5.0), Some(6), Some("100s")).unwrap();
    // Tight figures: the first three ask for the least, six repetitions (so that they
    // are at most half of the sample the verdict reads); settled there.
    let tight = run_of(&[("a", &[100.0, 101.0, 100.5]), ("b", &[100.2, 100.9, 100.4])]);
    let at = |run_s: f64| Elapsed {
        run_s,
        reps_s: run_s,
    };
    assert_eq!(stop(&rule, &tight, 2, at(10.0)), None, "never before 3");
    assert_eq!(stop(&rule, &tight, 3, at(10.0)), None, "tight, but three");
    let six: &[f64] = &[100.0, 101.0, 100.5, 100.3, 100.6, 100.1];
    let tight = run_of(&[("a", six), ("b", six)]);
    assert_eq!(stop(&rule, &tight, 6, at(10.0)), Some(Stop::Settled));
    assert_eq!(needed(first_variance(six), 0.05), Some(6));
    // Noisier first three ask for more: at CV 4%, over ten.
    let more = needed(first_variance(&[100.0, 104.0, 96.0]), 0.05).unwrap();
    assert!(more > 10, "{more}");
    // Far apart but noisy: a difference that looks significant does not stop the
    // repetitions (that would be optional stopping); only precision does.
    let apart = run_of(&[
        ("a", &[100.0, 130.0, 80.0]),
        ("b", &[10000.0, 13000.0, 8000.0]),
    ]);
    assert_eq!(stop(&rule, &apart, 3, at(10.0)), None);
    // Noisy and close: goes on, until the maximum or the budget.
    let noisy = run_of(&[("a", &[100.0, 130.0, 80.0]), ("b", &[105.0, 70.0, 125.0])]);
    assert_eq!(stop(&rule, &noisy, 3, at(30.0)), None);
    assert_eq!(stop(&rule, &noisy, 3, at(80.0)), Some(Stop::Budget));
    assert_eq!(stop(&rule, &noisy, 6, at(30.0)), Some(Stop::MaxReps));
    // The budget bounds the whole run: 30 s of repetitions after 65 s of set-up
    // leave no room for a fourth of 10 s.
    let late = Elapsed {
        run_s: 95.0,
        reps_s: 30.0,
    };
    assert_eq!(stop(&rule, &noisy, 3, late), Some(Stop::Budget));
    let lines = report(&rule, &noisy, 6, Stop::MaxReps);
    assert!(
        lines[0].contains("0 of 1 phases precise to ±5%"),
        "{lines:?}"
    );
    assert!(lines[1].contains("not within ±5%: w p ("), "{lines:?}");
}

#[test]
fn a_minimum_that_will_not_fit_is_said_after_the_first_repetition() {
    let rule = AutoReps::new(Some(5.0), Some(6), Some("4m")).unwrap();
    let pace = |run_s, reps_s| Elapsed { run_s, reps_s };
    // 30 s of set-up and a first repetition of 80 s: three end after 270 s.
    let line = over_budget(&rule, 1, pace(110.0, 80.0)).expect("said");
    assert!(
        line.contains("4 min 30 s, past the 4 min 00 s budget"),
        "{line}"
    );
    assert_eq!(over_budget(&rule, 1, pace(90.0, 60.0)), None, "210 s fit");
    assert_eq!(over_budget(&rule, 2, pace(900.0, 900.0)), None, "said once");
    let none = AutoReps::new(Some(5.0), Some(6), None).unwrap();
    assert_eq!(over_budget(&none, 1, pace(900.0, 900.0)), None);
}

/// A run of `phases` phases on targets `a` and `b`, three repetitions, phase `i`'s
/// values spread by 3·`i` percent around 100: the first settled, the last the widest.
fn run_of_phases(phases: usize) -> RunResult {
    let mut run = run_of(&[("a", &[1.0, 1.0, 1.0]), ("b", &[1.0, 1.0, 1.0])]);
    let one = run.trials[0].phases[0].clone();
    for t in &mut run.trials {
        let sign = if t.target == "a" { 1.0 } else { -1.0 };
        t.phases = (0..phases)
            .map(|i| {
                let mut p = one.clone();
                p.name = format!("phase{i:02}");
                let d = 3.0 * i as f64 * [0.0, 1.0, -1.0][t.rep as usize - 1];
                p.ops_per_s = 100.0 + sign * d;
                p
            })
            .collect();
    }
    run
}

#[test]
fn a_shortfall_is_a_few_lines_naming_the_widest_and_where_the_rest_are() {
    let rule = AutoReps::new(Some(5.0), Some(10), Some("4m")).unwrap();
    let run = run_of_phases(30);
    let record = report(&rule, &run, 3, Stop::Budget);
    let open = states(&run)
        .iter()
        .filter(|s| !s.settled(Goal::Precision(0.05)))
        .count();
    assert_eq!(open, 30, "three repetitions settle nothing");
    // The record keeps a line per phase that fell short, with its widest interval.
    assert_eq!(record.len(), 1 + open, "{record:?}");
    assert!(record[1].contains("w phase"), "{record:?}");
    let mut decided = rule.record();
    decided.outcome = record;
    let mut run = run;
    run.policy.reps = 3;
    let lines = summary(&decided, &run);
    assert_eq!(
        lines[0],
        format!(
            "--reps auto: 3 repetitions (--budget reached); {} of 30 phases precise to ±5%",
            30 - open
        )
    );
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].starts_with(&format!("{open} short of ±5%, widest: w phase29 ±")),
        "{lines:?}"
    );
    assert!(lines[1].contains(", w phase28 ±"), "{lines:?}");
    assert!(!lines[1].contains("phase26"), "only three named: {lines:?}");
    assert!(
        lines[1].ends_with(&format!(
            "; all {open} in the run's JSON, policy.auto_reps.outcome"
        )),
        "{lines:?}"
    );
    // Each fits 80 columns wrapped as the report and the notes wrap it.
    for l in &lines {
        for part in crate::compare::rank::wrap(l, 80, "  ").lines() {
            assert!(part.chars().count() <= 80, "{part}");
        }
    }
    // Settled: the one line; a few short: each named, nothing more to look up.
    let tight = run_of_phases(2);
    let mut decided = rule.record();
    decided.outcome = report(&rule, &tight, 3, Stop::MaxReps);
    let lines = summary(&decided, &tight);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].starts_with("short of ±5%: w phase01 ±"),
        "{lines:?}"
    );
    assert!(!lines[1].contains("JSON"), "{lines:?}");
    let rule = AutoReps::new(Some(50.0), Some(10), None).unwrap();
    let mut decided = rule.record();
    decided.outcome = report(&rule, &tight, 3, Stop::Settled);
    assert_eq!(
        summary(&decided, &tight)[0],
        "--reps auto: 3 repetitions; all 2 phases precise to ±50% (the repetitions it needs)"
    );
    // Not decided (an interrupted run): nothing to say.
    assert!(summary(&rule.record(), &tight).is_empty());
}

#[test]
fn the_printed_report_shows_the_summary_and_fits_80_columns() {
    let rule = AutoReps::new(Some(5.0), Some(10), Some("4m")).unwrap();
    let mut run = run_of_phases(30);
    let mut decided = rule.record();
    decided.outcome = report(&rule, &run, 3, Stop::Budget);
    run.policy.reps = 3;
    run.policy.auto_reps = Some(decided);
    let text = crate::report::terminal::render_width(&run, 80);
    assert!(!text.contains("not within"), "{text}");
    let at = text.find("--reps auto:").expect("the summary is shown");
    let block: Vec<&str> = text[at..].lines().take_while(|l| !l.is_empty()).collect();
    assert!(block.len() <= 4, "{block:#?}");
    assert!(block[1].starts_with("  30 short of ±5%, widest: w phase29"));
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
}

#[test]
fn reps_for_asks_what_seeing_the_difference_takes_and_stops_there() {
    assert!(AutoReps::detecting(0.0, None, None).is_err());
    assert!(AutoReps::detecting(100.0, None, None).is_err());
    assert!(AutoReps::detecting(10.0, Some(11), None).is_err());
    assert_eq!(AutoReps::detecting(10.0, Some(12), None).unwrap().max, 12);
    let rule = AutoReps::detecting(10.0, None, None).unwrap();
    assert_eq!(rule.max, DEFAULT_MAX_REPS_FOR);
    assert_eq!(rule.record().reps_for_pct, Some(10.0));
    // Two targets, one phase: the family and the gate's are 2 tests, each at 0.025.
    let first: &[f64] = &[100.0, 107.0, 93.0, 100.0, 107.0, 93.0];
    let run = run_of(&[("a", &first[..3]), ("b", &first[..3])]);
    assert_eq!(detect_alpha(&run), 0.025);
    let at = Elapsed {
        run_s: 1.0,
        reps_s: 1.0,
    };
    assert_eq!(stop(&rule, &run, 3, at), None, "three are not enough");
    // The first six fix the count: what the gate would ask of figures this spread (at
    // their upper bound), at its level for the same tests, and at least twelve.
    let run = run_of(&[("a", first), ("b", first)]);
    let goal = rule.goal(&run);
    let v = crate::stats::precision::bounded_variance(first);
    let n = states(&run)[0].needs(goal).unwrap();
    let gate = crate::stats::power::gate_reps_for(v, v, 10.0, 0.025).unwrap();
    assert_eq!(n, gate.max(12));
    assert!(n > 12 && n < DEFAULT_MAX_REPS_FOR as usize, "{n}");
    assert_eq!(stop(&rule, &run, 6, at), None, "six are not enough here");
    let values: Vec<f64> = first.iter().cycle().take(n).copied().collect();
    let run = run_of(&[("a", &values), ("b", &values)]);
    assert_eq!(stop(&rule, &run, n as u32, at), Some(Stop::Settled));
    let lines = report(&rule, &run, n as u32, Stop::Settled);
    assert_eq!(
        lines,
        vec![format!(
            "--reps-for 10: {n} repetitions; all 1 phases could see a 10% difference \
             (95% power as the CI gate judges it, each test at 0.05/2)"
        )]
    );
    // A smaller difference, or more targets (a smaller level), takes more.
    let half = AutoReps::detecting(5.0, None, None).unwrap();
    assert!(half.goal(&run).needs(v).unwrap() > n);
    let four = run_of(&[("a", first), ("b", first), ("c", first), ("d", first)]);
    assert_eq!(detect_alpha(&four), 0.05 / 6.0);
    assert!(rule.goal(&four).needs(v).unwrap() > n);
    // Too noisy for the maximum: stopped there, each phase with what it needs.
    let wide: &[f64] = &[100.0, 150.0, 70.0, 100.0, 150.0, 70.0];
    let noisy = run_of(&[("a", wide), ("b", wide)]);
    let lines = report(&rule, &noisy, 30, Stop::MaxReps);
    assert!(
        lines[0].starts_with("--reps-for 10: 30 repetitions (--max-reps reached); 0 of 1"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("  cannot yet see a 10% difference: w p (needs "),
        "{lines:?}"
    );
    let mut decided = rule.record();
    decided.outcome = lines;
    let shown = summary(&decided, &noisy);
    assert!(
        shown[1].starts_with("cannot yet see a 10% difference: w p needs "),
        "{shown:?}"
    );
}
