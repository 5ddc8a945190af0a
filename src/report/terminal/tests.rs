//! Unit tests of `report::terminal`.

use super::*;

#[test]
fn an_interrupted_run_counts_trials_ok_failed_and_never_started() {
    let mut run = crate::report::fixture_with(Vec::new());
    let text = include_str!("../../../tests/fixtures/run.json");
    let full: RunResult = serde_json::from_str(text).unwrap();
    run.trials = full.trials[..4].to_vec();
    run.trials[2].status = "failed".into();
    run.trials[3].status = "interrupted".into();
    run.status = "interrupted".into();
    run.planned_trials = Some(18);
    run.summaries = crate::stats::summarize(&run.trials, crate::workload::figures_of);
    assert_eq!(
        trials_line(&run),
        "18 trial(s) planned (3 repetition(s) of each workload on each target): \
         2 ok, 1 failed, 1 interrupted, 14 never started"
    );
    let shown = render_width(&run, 80);
    assert!(shown.contains("14 never started"), "{shown}");
    assert!(
        shown.contains(" of 3 ok"),
        "a target short of repetitions: {shown}"
    );
    assert!(!shown.contains("median of 3"), "{shown}");
}

#[test]
fn a_target_whose_trials_all_failed_shows_the_phases_they_finished_marked_f() {
    let text = include_str!("../../../tests/fixtures/run.json");
    let mut run: RunResult = serde_json::from_str(text).unwrap();
    // ext4's bonnie: every repetition failed in write_block (write_char finished).
    for t in run
        .trials
        .iter_mut()
        .filter(|t| t.target == "ext4" && t.label == "bonnie")
    {
        t.status = "failed".into();
        t.error = Some("filesystem full: write(2) …".into());
        t.phases.truncate(1);
    }
    run.summaries = crate::stats::summarize(&run.trials, crate::workload::figures_of);
    let mine: Vec<f64> = run
        .trials
        .iter()
        .filter(|t| t.target == "ext4" && t.label == "bonnie")
        .map(|t| t.phases[0].mb_per_s)
        .collect();
    let median = crate::stats::describe(&mine).unwrap().median;
    let t = run
        .trials
        .iter()
        .find(|t| t.label == "bonnie" && t.target == "tmpfs")
        .unwrap();
    let mut used = Vec::new();
    let cell = phase_cell(&run, "ext4", "bonnie", &t.phases[0], &mut used);
    let first = cell.lines().next().unwrap();
    assert!(first.starts_with(&fmt_num(median)), "{cell}");
    assert!(first.split(' ').any(|w| w.contains('f')), "{cell}");
    assert!(used.contains(&crate::stats::FAILED_TRIAL));
    assert_eq!(
        phase_cell(&run, "ext4", "bonnie", &t.phases[1], &mut used),
        "failed"
    );
    // tmpfs, which succeeded, is unmarked; the legend says what f means.
    let tmpfs = phase_cell(&run, "tmpfs", "bonnie", &t.phases[0], &mut Vec::new());
    assert!(!tmpfs.contains('f'), "{tmpfs}");
    let shown = render_width(&run, 80);
    assert!(
        shown.contains("  f  failed trial: no repetition completed"),
        "{shown}"
    );
    assert!(shown.lines().all(|l| l.chars().count() <= 80), "{shown}");
}

#[test]
fn cpu_is_shown_only_for_phases_long_enough_to_sample() {
    let text = include_str!("../../../tests/fixtures/run.json");
    let mut run: RunResult = serde_json::from_str(text).unwrap();
    run.summaries = crate::stats::summarize(&run.trials, crate::workload::figures_of);
    let wall = |phase: &str| {
        let s = run
            .summaries
            .iter()
            .find(|s| s.target == "tmpfs" && s.phase == phase && s.metric == "wall_s");
        s.unwrap().stats.median
    };
    assert!(wall("write_char") >= CPU_MIN_S && wall("read_block") < CPU_MIN_S);
    let cell = |phase: &str| {
        let t = run.trials.iter().find(|t| t.label == "bonnie").unwrap();
        let ph = t.phases.iter().find(|p| p.name == phase).unwrap();
        phase_cell(&run, "tmpfs", "bonnie", ph, &mut Vec::new())
    };
    assert!(
        cell("write_char").contains("\ncpu\u{a0}"),
        "{}",
        cell("write_char")
    );
    assert!(
        !cell("read_block").contains("cpu"),
        "{}",
        cell("read_block")
    );
}
