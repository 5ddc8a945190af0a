//! The line charts of a phase: latency percentiles (p50 to max, one line per target, on a
//! log axis) and throughput over time (one line per target: the repetition whose headline
//! figure is the median one, so a writeback stall shown is one that a typical repetition
//! had), each with the table of its figures. [`crate::report::charts`] gathers them with
//! the bar charts.

use crate::report::charts::{color, phase_reps, slug, Figure, Kind, Table};
use crate::report::svg::{self, Line};
use crate::result::{PhaseResult, RunResult};
use crate::stats::describe;

const PERCENTILES: [&str; 5] = ["p50", "p90", "p99", "p99.9", "max"];

pub fn latency_figure(
    run: &RunResult,
    workload: &str,
    phase: &str,
    targets: &[&str],
    taken: &mut Vec<String>,
) -> Option<Figure> {
    let mut lines = Vec::new();
    let mut head = vec!["target".to_string()];
    head.extend(PERCENTILES.iter().map(|p| format!("{p} µs (min–max)")));
    head.push("n".into());
    let mut table = Table {
        head,
        rows: Vec::new(),
    };
    for &t in targets {
        let lats: Vec<_> = phase_reps(run, workload, phase, t)
            .into_iter()
            .filter_map(|(_, p)| p.lat_us)
            .collect();
        if lats.is_empty() {
            continue;
        }
        let mut line = Line {
            label: t.to_string(),
            color: color(run, t),
            points: Vec::new(),
            spread: Vec::new(),
        };
        let mut row = vec![t.to_string()];
        type Get = fn(&crate::probe::hist::Percentiles) -> f64;
        let getters: [Get; 5] = [|l| l.p50, |l| l.p90, |l| l.p99, |l| l.p999, |l| l.max];
        for (i, get) in getters.iter().enumerate() {
            let xs: Vec<f64> = lats.iter().map(get).collect();
            let d = describe(&xs).expect("at least one repetition");
            line.points.push((i as f64, d.median));
            let spread = (d.n > 1).then_some((d.min, d.max)).filter(|_| d.min > 0.0);
            line.spread.push(spread);
            // Three significant digits: as many as the histogram resolves.
            let short = super::human::short;
            row.push(match spread {
                Some((a, b)) => format!("{} ({}–{})", short(d.median), short(a), short(b)),
                None => short(d.median),
            });
        }
        row.push(lats.len().to_string());
        table.rows.push(row);
        lines.push(line);
    }
    if lines.is_empty() {
        return None;
    }
    let title = format!("{workload} · {phase} · latency percentiles (log scale)");
    Some(Figure {
        kind: Kind::Latency,
        metric: String::new(),
        slug: slug(&[workload, phase, "latency"], taken),
        svg: svg::percentiles(&title, &PERCENTILES, &lines),
        title,
        table,
    })
}

pub fn series_figure(
    run: &RunResult,
    workload: &str,
    phase: &PhaseResult,
    targets: &[&str],
    taken: &mut Vec<String>,
) -> Option<Figure> {
    let bytes = phase.primary == "mb_per_s";
    // The y values are a rate per interval whatever the headline is: MB/s (10^6 bytes)
    // or the phase's operations per second — not the headline's unit, which is "s" for a
    // phase whose headline is its wall time.
    let unit = if bytes {
        "MB/s".to_string()
    } else if phase.ops_unit.is_empty() {
        "ops/s".to_string()
    } else {
        phase.ops_unit.clone()
    };
    let mut lines = Vec::new();
    let mut table = Table {
        head: [
            "target".to_string(),
            "repetition".into(),
            "interval (s)".into(),
            format!("mean ({unit})"),
            format!("min ({unit})"),
            format!("max ({unit})"),
            "intervals with nothing done".into(),
        ]
        .to_vec(),
        rows: Vec::new(),
    };
    for &t in targets {
        let mut reps = phase_reps(run, workload, &phase.name, t);
        let key = |p: &PhaseResult| if bytes { p.mb_per_s } else { p.ops_per_s };
        reps.sort_by(|a, b| key(a.1).total_cmp(&key(b.1)));
        let Some((trial, p)) = reps.get(reps.len().saturating_sub(1) / 2) else {
            continue;
        };
        let s = &p.series;
        if s.ops.len() < 2 || s.interval_s <= 0.0 {
            continue;
        }
        let points = rate_points(s, p.wall_s, bytes);
        let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
        let idle = points.iter().filter(|p| p.2).count();
        let d = describe(&ys).expect("two points or more");
        table.rows.push(vec![
            t.to_string(),
            format!("{} of {}", trial.rep, reps.len()),
            svg::num(s.interval_s),
            svg::num(d.mean),
            svg::num(d.min),
            svg::num(d.max),
            format!("{idle} of {}", ys.len()),
        ]);
        lines.push(Line {
            label: t.to_string(),
            color: color(run, t),
            points: points.iter().map(|p| (p.0, p.1)).collect(),
            spread: Vec::new(),
        });
    }
    if lines.is_empty() {
        return None;
    }
    let title = format!("{workload} · {} · throughput over time", phase.name);
    Some(Figure {
        kind: Kind::Series,
        metric: String::new(),
        slug: slug(&[workload, &phase.name, "series"], taken),
        svg: svg::series(&title, &format!("{unit} — higher is better"), &lines),
        title,
        table,
    })
}

/// The points of a time series: (end of the interval in seconds since the phase start,
/// rate over the interval in MB/s (10^6 bytes) when `bytes`, else operations per second,
/// whether nothing was done in it). The last interval ends with the phase (`wall_s`), so
/// it is usually shorter than the others: its rate is over its real length, and a last
/// interval shorter than half of one is merged into the one before (a rate over a sliver
/// of time is noise, and over a whole interval it would look like a stall at the end).
fn rate_points(
    s: &crate::probe::series::SeriesOut,
    wall_s: f64,
    bytes: bool,
) -> Vec<(f64, f64, bool)> {
    let n = s.ops.len().min(s.bytes.len());
    let iv = s.interval_s;
    // The width of each interval; all whole when the phase's wall time does not fit.
    let last_w = wall_s - (n.saturating_sub(1)) as f64 * iv;
    let last_w = if last_w > 0.0 && last_w <= iv {
        last_w
    } else {
        iv
    };
    let mut cells: Vec<(f64, f64, u64, u64)> = (0..n)
        .map(|i| {
            let w = if i + 1 == n { last_w } else { iv };
            (i as f64 * iv, w, s.ops[i], s.bytes[i])
        })
        .collect();
    if n >= 2 && last_w < iv / 2.0 {
        let last = cells.pop().expect("n >= 2");
        let prev = cells.last_mut().expect("n >= 2");
        prev.1 += last.1;
        prev.2 += last.2;
        prev.3 += last.3;
    }
    cells
        .into_iter()
        .map(|(start, w, ops, b)| {
            let rate = if bytes {
                b as f64 / w / 1e6
            } else {
                ops as f64 / w
            };
            (start + w, rate, ops == 0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap()
    }

    #[test]
    fn series_rates_are_over_each_interval_s_real_length() {
        use crate::probe::series::SeriesOut;
        // 10 ms intervals, a phase of 32 ms: the fourth interval lasts 2 ms.
        let s = SeriesOut {
            interval_s: 0.01,
            ops: vec![10, 20, 30, 2],
            bytes: vec![1_000_000, 2_000_000, 3_000_000, 200_000],
        };
        let pts = rate_points(&s, 0.032, true);
        // The 2 ms sliver joins the third interval: 3.2 MB over 12 ms, ending at 32 ms.
        assert_eq!(pts.len(), 3);
        assert!((pts[0].0 - 0.01).abs() < 1e-12 && (pts[0].1 - 100.0).abs() < 1e-9);
        assert!((pts[2].0 - 0.032).abs() < 1e-12, "{pts:?}");
        assert!(
            (pts[2].1 - 3.2 / 0.012).abs() < 1e-9,
            "MB/s = 10^6 bytes/s: {pts:?}"
        );
        // A last interval of 7 ms stays one point, its rate over 7 ms; ops per second.
        let pts = rate_points(&s, 0.037, false);
        assert_eq!(pts.len(), 4);
        assert!((pts[3].0 - 0.037).abs() < 1e-12 && (pts[3].1 - 2.0 / 0.007).abs() < 1e-6);
        assert!((pts[1].1 - 2000.0).abs() < 1e-9);
        // Totals are kept: the rates times the lengths give back every operation.
        let total: f64 = pts
            .iter()
            .zip([0.0, 0.01, 0.02, 0.03])
            .map(|(p, start)| p.1 * (p.0 - start))
            .sum();
        assert!((total - 62.0).abs() < 1e-9);
    }

    #[test]
    fn a_series_of_a_timed_phase_is_in_operations_per_second() {
        let mut run = fixture();
        let t = run
            .trials
            .iter_mut()
            .find(|t| t.label == "postmark")
            .unwrap();
        let p = t
            .phases
            .iter_mut()
            .find(|p| p.name == "transactions")
            .unwrap();
        p.primary = "wall_s".into();
        p.ops_unit = "transactions/s".into();
        let phase = p.clone();
        let fig = series_figure(&run, "postmark", &phase, &["ext4"], &mut Vec::new()).unwrap();
        assert!(
            fig.svg.contains(">transactions/s — higher is better<"),
            "{}",
            fig.svg
        );
    }
}
