//! The figures of a phase that come after its headline — wall time, the other rate, CPU,
//! write amplification, dirty bytes, the workload's own figures, the device's byte
//! counters — as one compact table: a row per metric, a column per target, each cell the
//! median over the repetitions with its coefficient of variation (`1.23 s ±4.1%`, as the
//! terminal shows figures), the name marked ↑ where higher is better and ↓ where lower is.
//! The HTML report folds it under the headline chart; each of
//! these metrics still has its own chart in `fsarena report --svg/--png`.

use crate::report::charts::{phase_reps, Table};
use crate::report::human;
use crate::stats::{describe, Better};

/// The table of `metrics` (summary metric names) and the device counters of `phase` of
/// `workload`, for `targets`; no rows when there is nothing to show. A target whose every
/// trial failed shows the figures of `incomplete` ([`crate::stats::incomplete_summaries`]).
pub fn table(
    run: &crate::result::RunResult,
    incomplete: &[crate::stats::Summary],
    workload: &str,
    phase: &str,
    metrics: &[&str],
    targets: &[&str],
) -> Table {
    let mut head = vec!["metric".to_string()];
    head.extend(targets.iter().map(|t| t.to_string()));
    let mut rows = Vec::new();
    for m in metrics {
        let mut better = Better::None;
        let figures: Vec<Option<(String, Option<f64>)>> = targets
            .iter()
            .map(|t| {
                run.summaries
                    .iter()
                    .chain(incomplete)
                    .find(|s| {
                        s.target == *t
                            && s.workload == workload
                            && s.phase == phase
                            && s.metric == *m
                    })
                    .map(|s| {
                        better = s.better;
                        (human::value(s.stats.median, &s.unit), s.stats.cv)
                    })
            })
            .collect();
        let name = match better {
            Better::Higher => format!("{m} ↑"),
            Better::Lower => format!("{m} ↓"),
            Better::None => m.to_string(),
        };
        rows.push(row(&name, figures));
    }
    for (name, get) in DEVICE {
        let figures: Vec<Option<(String, Option<f64>)>> = targets
            .iter()
            .map(|t| {
                let xs: Vec<f64> = phase_reps(run, workload, phase, t)
                    .into_iter()
                    .filter_map(|(_, p)| get(p).map(|b| b as f64))
                    .collect();
                describe(&xs).map(|d| (human::bytes(d.median), d.cv))
            })
            .collect();
        if figures.iter().any(Option::is_some) {
            rows.push(row(name, figures));
        }
    }
    Table { head, rows }
}

type DeviceFn = fn(&crate::result::PhaseResult) -> Option<u64>;

/// The block device's own counters over the phase (`/sys/block/*/stat`).
const DEVICE: [(&str, DeviceFn); 2] = [
    ("device bytes read", |p| p.dev_read_bytes),
    ("device bytes written", |p| p.dev_write_bytes),
];

/// A metric's row: each target's median (in human units) ± its coefficient of variation,
/// `–` where there is none. When every figure has the same unit it is written once, after
/// the metric's name (`appended_per_s (files/s)`).
fn row(name: &str, figures: Vec<Option<(String, Option<f64>)>>) -> Vec<String> {
    let units: Vec<Option<&str>> = figures
        .iter()
        .flatten()
        .map(|(v, _)| v.split_once('\u{a0}').map(|(_, u)| u))
        .collect();
    let common = match units.first() {
        Some(Some(u)) if units.iter().all(|x| x == &Some(*u)) => Some(u.to_string()),
        _ => None,
    };
    let mut out = vec![match &common {
        Some(u) => format!("{name} ({u})"),
        None => name.to_string(),
    }];
    out.extend(figures.into_iter().map(|f| match f {
        None => "–".to_string(),
        Some((v, cv)) => {
            let v = match &common {
                Some(_) => v
                    .split_once('\u{a0}')
                    .map_or(v.clone(), |(n, _)| n.to_string()),
                None => v,
            };
            match cv {
                Some(c) => format!("{v} ±{:.1}%", c * 100.0),
                None => v,
            }
        }
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> crate::result::RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap()
    }

    #[test]
    fn a_row_per_metric_and_a_column_per_target() {
        let run = fixture();
        let t = table(
            &run,
            &[],
            "postmark",
            "transactions",
            &["wall_s", "dirty_bytes_end"],
            &["ext4", "tmpfs"],
        );
        assert_eq!(t.head, ["metric", "ext4", "tmpfs"]);
        assert!(t.rows[0][0].starts_with("wall_s ↓"), "{:?}", t.rows[0]);
        assert!(
            t.rows[1][0].starts_with("dirty_bytes_end"),
            "{:?}",
            t.rows[1]
        );
        let s = run
            .summaries
            .iter()
            .find(|s| {
                s.target == "ext4"
                    && s.workload == "postmark"
                    && s.phase == "transactions"
                    && s.metric == "wall_s"
            })
            .unwrap();
        // The figure in human units, its unit written once in the row's name when shared.
        let shown = human::value(s.stats.median, &s.unit);
        let (number, unit) = shown.split_once('\u{a0}').unwrap();
        assert!(t.rows[0][1].starts_with(number), "{:?}", t.rows[0]);
        assert!(
            t.rows[0][1].contains(unit) || t.rows[0][0].contains(unit),
            "{:?}",
            t.rows[0]
        );
        assert!(t.rows.iter().all(|r| r.len() == 3));
    }

    #[test]
    fn a_shared_unit_is_written_once() {
        let f = |v: &str, cv| Some((v.to_string(), cv));
        let r = row(
            "x",
            vec![
                f("1\u{a0}files/s", Some(0.1)),
                None,
                f("2\u{a0}files/s", None),
            ],
        );
        assert_eq!(r, ["x (files/s)", "1 ±10.0%", "–", "2"]);
        let r = row("y", vec![f("1\u{a0}KiB", None), f("2\u{a0}MiB", None)]);
        assert_eq!(r, ["y", "1\u{a0}KiB", "2\u{a0}MiB"]);
    }

    #[test]
    fn a_missing_target_is_a_dash() {
        let t = table(
            &fixture(),
            &[],
            "postmark",
            "transactions",
            &["wall_s"],
            &["ext4", "nowhere"],
        );
        assert_eq!(t.rows[0][2], "–");
    }
}
