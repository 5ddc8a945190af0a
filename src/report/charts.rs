//! The figures of a run's report: for each workload and phase, a bar chart per metric
//! across targets, a latency-percentile chart and a throughput time series, each with the
//! table of its figures, and a compact table of the metrics after the headline
//! ([`crate::report::more`]). The HTML report draws the headline and time-series charts and
//! shows the rest as tables; `fsarena report --svg/--png` writes every chart as a file for
//! slides.
//!
//! Bars are medians over the successful repetitions, whiskers their min–max, and the thick
//! band the 95% confidence interval of the mean (`stats::describe`). Percentile points are
//! the median over repetitions of each repetition's percentile. A time series is the
//! repetition whose headline figure is the median one, so a writeback stall shown is one
//! that a typical repetition had.

use crate::report::lines;
use crate::report::svg::{self, Bar, PALETTE};
use crate::report::terminal::MARKS;
use crate::result::{PhaseResult, RunResult, Trial};
use crate::stats::{Better, Summary, METRICS};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// A table of figures shown beneath a chart. Cells are plain text.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What a chart shows, which decides where the HTML report puts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The phase's headline figure across targets.
    Headline,
    /// Another metric of the phase (wall time, CPU, write amplification, …): a chart for
    /// files and slides; the HTML report shows these as one compact table.
    Metric,
    /// Latency percentiles on a log axis.
    Latency,
    /// Throughput over time.
    Series,
}

/// One chart with its figures.
#[derive(Clone, Debug)]
pub struct Figure {
    pub kind: Kind,
    /// The metric of a bar chart (empty for latency and series).
    pub metric: String,
    /// File stem when exported: `postmark-transactions-ops_per_s`.
    pub slug: String,
    pub title: String,
    pub svg: String,
    pub table: Table,
}

/// The figures of one phase of one workload.
#[derive(Clone, Debug)]
pub struct PhaseFigures {
    pub phase: String,
    /// Honesty flags of the phase on some target, with the targets concerned.
    pub flags: Vec<(String, Vec<String>)>,
    pub figures: Vec<Figure>,
    /// The metrics other than the headline, one row each (see [`crate::report::more`]).
    pub more: Table,
}

/// The figures of one workload (a trial label).
#[derive(Clone, Debug)]
pub struct WorkloadFigures {
    pub workload: String,
    /// Parameters as `key=value`, from its first trial.
    pub params: String,
    pub phases: Vec<PhaseFigures>,
}

/// Every target's colour: its position in the run.
pub(crate) fn color(run: &RunResult, target: &str) -> &'static str {
    let i = run
        .targets
        .iter()
        .position(|t| t.name == target)
        .unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

/// The marks of [`MARKS`] for these flags (and `noisy`).
pub fn marks(flags: &[String], noisy: bool) -> String {
    MARKS
        .iter()
        .filter(|(name, _, _)| (*name == "noisy" && noisy) || flags.iter().any(|f| f == name))
        .map(|(_, m, _)| *m)
        .collect()
}

fn flag_words(flags: &[String], noisy: bool) -> String {
    let mut v: Vec<&str> = flags.iter().map(String::as_str).collect();
    if noisy {
        v.insert(0, "noisy");
    }
    v.join(", ")
}

/// A metric's unit and which side is better (as declared, see [`crate::figures`]), for an
/// axis caption.
fn axis_caption(metric: &str, unit: &str, better: Better) -> String {
    let side = match better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
        Better::None => "neither side is better",
    };
    format!("{metric}, {unit} — {side}")
}

pub(crate) fn slug(parts: &[&str], taken: &mut Vec<String>) -> String {
    let raw: String = parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let mut s = raw.clone();
    let mut k = 2;
    while taken.contains(&s) {
        s = format!("{raw}-{k}");
        k += 1;
    }
    taken.push(s.clone());
    s
}

fn unique<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// The metrics charted for a phase, in order: the headline, the other rate when it is not
/// zero, wall time, CPU (when every target's phase lasted [`CPU_MIN_S`] or more), write
/// amplification, the workload's own figures, dirty bytes when any.
///
/// [`CPU_MIN_S`]: crate::report::terminal::CPU_MIN_S Latency percentiles have their own chart.
fn charted_metrics<'a>(summaries: &[&'a Summary], primary: &str) -> Vec<&'a str> {
    let present = unique(summaries.iter().map(|s| s.metric.as_str()));
    let nonzero = |m: &str| {
        summaries
            .iter()
            .any(|s| s.metric == m && s.stats.median != 0.0)
    };
    let other = if primary == "mb_per_s" {
        "ops_per_s"
    } else {
        "mb_per_s"
    };
    // CPU% of a phase too short to sample it (on any target) is not shown.
    let sampled = summaries
        .iter()
        .filter(|s| s.metric == "wall_s")
        .all(|s| s.stats.median >= crate::report::terminal::CPU_MIN_S);
    let mut out: Vec<&str> = Vec::new();
    for m in [primary, other, "wall_s", "cpu_pct", "write_amplification"] {
        if let Some(p) = present.iter().find(|p| **p == m) {
            let shown = match m {
                "cpu_pct" => sampled,
                _ => m != other || nonzero(m),
            };
            if !out.contains(p) && shown {
                out.push(p);
            }
        }
    }
    for p in &present {
        if !METRICS.iter().any(|(n, _)| n == p) {
            out.push(p);
        }
    }
    if let Some(p) = present.iter().find(|p| **p == "dirty_bytes_end") {
        if nonzero(p) {
            out.push(p);
        }
    }
    out
}

/// One metric's bar chart and table. `incomplete` holds the figures of targets whose every
/// trial failed ([`crate::stats::incomplete_summaries`]): they get a table row, no bar.
fn bar_figure(
    run: &RunResult,
    incomplete: &[Summary],
    workload: &str,
    phase: &PhaseResult,
    metric: &str,
    targets: &[&str],
    taken: &mut Vec<String>,
) -> Figure {
    let declared = run
        .summaries
        .iter()
        .chain(incomplete)
        .find(|s| s.workload == workload && s.phase == phase.name && s.metric == metric);
    let unit = declared.map_or_else(|| "?".to_string(), |s| s.unit.clone());
    let better = declared.map_or(Better::None, |s| s.better);
    // Figures in human units (`93.4 MB/s`, `64.5 GiB`); the CSV and JSON keep exact ones.
    let hv = |v: f64| super::human::value(v, &unit);
    let mut bars = Vec::new();
    let mut table = Table {
        head: ["target", "median", "min–max", "95% CI", "CV", "n", "flags"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
    };
    for &t in targets {
        let this = |s: &&Summary| {
            s.target == t && s.workload == workload && s.phase == phase.name && s.metric == metric
        };
        let Some(s) = run.summaries.iter().find(this) else {
            // A failed trial's figure: in the table, flagged, never a bar.
            if let Some(s) = incomplete.iter().find(this) {
                table.rows.push(figure_row(t, s, &hv));
                continue;
            }
            let why = if phase_reps(run, workload, &phase.name, t).is_empty() {
                "no successful repetition"
            } else {
                "not measured on this target"
            };
            let mut row = vec![t.to_string(), why.into()];
            row.resize(table.head.len(), String::new());
            table.rows.push(row);
            continue;
        };
        let d = &s.stats;
        bars.push(Bar {
            label: t.to_string(),
            marks: marks(&s.flags, s.noisy),
            median: d.median,
            min: d.min,
            max: d.max,
            ci: d.ci95_low.zip(d.ci95_high),
            color: color(run, t),
        });
        table.rows.push(figure_row(t, s, &hv));
    }
    unit_in_head(&mut table, 1..4);
    let title = format!("{workload} · {} · {metric}", phase.name);
    Figure {
        kind: if metric == phase.primary {
            Kind::Headline
        } else {
            Kind::Metric
        },
        metric: metric.to_string(),
        slug: slug(&[workload, &phase.name, metric], taken),
        svg: svg::bars(&title, &axis_caption(metric, &unit, better), &bars),
        title,
        table,
    }
}

/// A target's row of a figure's table: median, min–max, 95% CI, CV, n and flags.
fn figure_row(target: &str, s: &Summary, hv: &dyn Fn(f64) -> String) -> Vec<String> {
    let d = &s.stats;
    let range = |a: f64, b: f64| {
        let (a, b) = (hv(a), hv(b));
        // One unit for both ends when they share it: `27976–30261 files/s`.
        match (a.split_once('\u{a0}'), b.split_once('\u{a0}')) {
            (Some((x, u)), Some((y, w))) if u == w => format!("{x}–{y}\u{a0}{u}"),
            _ => format!("{a}–{b}"),
        }
    };
    vec![
        target.to_string(),
        hv(d.median),
        range(d.min, d.max),
        d.ci95_low
            .zip(d.ci95_high)
            .map_or("–".to_string(), |(a, b)| range(a, b)),
        d.cv.map_or("–".into(), |c| format!("{:.1}%", c * 100.0)),
        d.n.to_string(),
        flag_words(&s.flags, s.noisy),
    ]
}

/// Moves the unit of columns `cols` into their heading (`median (files/s)`) when every
/// figure in the column has the same one (`1234\u{a0}files/s`), so that it is written once.
fn unit_in_head(t: &mut Table, cols: std::ops::Range<usize>) {
    for c in cols {
        let units: Vec<Option<&str>> = t
            .rows
            .iter()
            .filter_map(|r| r.get(c))
            .filter(|v| !v.is_empty() && *v != "–")
            .map(|v| v.split_once('\u{a0}').map(|(_, u)| u))
            .collect();
        let Some(Some(unit)) = units.first().copied() else {
            continue;
        };
        // Not when the ends of a range differ in unit (`900 KiB–1.2 MiB`).
        if unit.contains(['–', '\u{a0}']) || units.iter().any(|u| *u != Some(unit)) {
            continue;
        }
        let unit = unit.to_string();
        t.head[c] = format!("{} ({unit})", t.head[c]);
        for r in &mut t.rows {
            if let Some(v) = r.get_mut(c) {
                if let Some((n, _)) = v.split_once('\u{a0}') {
                    *v = n.to_string();
                }
            }
        }
    }
}

/// The successful repetitions' results of one phase on one target.
pub fn phase_reps<'a>(
    run: &'a RunResult,
    workload: &str,
    phase: &str,
    target: &str,
) -> Vec<(&'a Trial, &'a PhaseResult)> {
    run.trials
        .iter()
        .filter(|t| t.label == workload && t.target == target && t.status == "ok")
        .filter_map(|t| t.phases.iter().find(|p| p.name == phase).map(|p| (t, p)))
        .collect()
}

/// Every figure of the run, workload by workload, phase by phase.
pub fn build(run: &RunResult) -> Vec<WorkloadFigures> {
    let mut taken = Vec::new();
    let mut out = Vec::new();
    let incomplete = crate::stats::incomplete_summaries(&run.trials, crate::workload::figures_of);
    for w in unique(run.trials.iter().map(|t| t.label.as_str())) {
        let trials: Vec<&Trial> = run.trials.iter().filter(|t| t.label == w).collect();
        let targets = unique(trials.iter().map(|t| t.target.as_str()));
        let mut phases: Vec<&PhaseResult> = Vec::new();
        for t in &trials {
            for p in &t.phases {
                if !phases.iter().any(|x| x.name == p.name) {
                    phases.push(p);
                }
            }
        }
        let params = trials
            .first()
            .map_or(String::new(), |t| crate::workload::applied_params(t));
        let mut wf = WorkloadFigures {
            workload: w.to_string(),
            params,
            phases: Vec::new(),
        };
        for p in phases {
            let sums: Vec<&Summary> = run
                .summaries
                .iter()
                .chain(&incomplete)
                .filter(|s| s.workload == w && s.phase == p.name)
                .collect();
            let mut flags: Vec<(String, Vec<String>)> = Vec::new();
            for s in &sums {
                let mut f = s.flags.clone();
                if s.noisy && s.metric == p.primary {
                    f.push("noisy".into());
                }
                for flag in f {
                    match flags.iter_mut().find(|(n, _)| *n == flag) {
                        Some((_, ts)) if !ts.contains(&s.target) => ts.push(s.target.clone()),
                        Some(_) => {}
                        None => flags.push((flag, vec![s.target.clone()])),
                    }
                }
            }
            let metrics = charted_metrics(&sums, &p.primary);
            let mut figures: Vec<Figure> = metrics
                .iter()
                .map(|m| bar_figure(run, &incomplete, w, p, m, &targets, &mut taken))
                .collect();
            figures.extend(lines::latency_figure(run, w, &p.name, &targets, &mut taken));
            figures.extend(lines::series_figure(run, w, p, &targets, &mut taken));
            let others: Vec<&str> = metrics.into_iter().filter(|m| *m != p.primary).collect();
            wf.phases.push(PhaseFigures {
                phase: p.name.clone(),
                flags,
                figures,
                more: crate::report::more::table(run, &incomplete, w, &p.name, &others, &targets),
            });
        }
        out.push(wf);
    }
    out
}

/// Writes every chart as `SLUG.svg` into `svg_dir` and/or `SLUG.png` into `png_dir`
/// (created when missing); returns the files written.
pub fn write(
    run: &RunResult,
    svg_dir: Option<&Path>,
    png_dir: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    let figures: Vec<Figure> = build(run)
        .into_iter()
        .flat_map(|w| w.phases)
        .flat_map(|p| p.figures)
        .collect();
    let mut written = Vec::new();
    if let Some(dir) = svg_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for f in &figures {
            let path = dir.join(format!("{}.svg", f.slug));
            std::fs::write(&path, svg::standalone(&f.svg))
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    if let Some(dir) = png_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let raster = crate::report::png::Rasterizer::new();
        for f in &figures {
            let path = dir.join(format!("{}.png", f.slug));
            let png = raster
                .png(&svg::standalone(&f.svg))
                .with_context(|| format!("drawing {}", f.slug))?;
            std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap()
    }

    #[test]
    fn every_phase_gets_its_headline_chart_first() {
        let run = fixture();
        let all = build(&run);
        assert_eq!(
            all.iter().map(|w| w.workload.as_str()).collect::<Vec<_>>(),
            ["bonnie", "bonnie-files", "postmark"]
        );
        for w in &all {
            for p in &w.phases {
                let first = &p.figures[0];
                let ph = run
                    .trials
                    .iter()
                    .find(|t| t.label == w.workload)
                    .and_then(|t| t.phases.iter().find(|x| x.name == p.phase))
                    .unwrap();
                assert!(first.slug.ends_with(&ph.primary), "{}", first.slug);
                assert_eq!(first.table.rows.len(), 2, "one row per target");
            }
        }
    }

    #[test]
    fn slugs_are_unique_file_names() {
        let mut taken = Vec::new();
        assert_eq!(slug(&["a b", "c/d"], &mut taken), "a-b-c-d");
        assert_eq!(slug(&["a b", "c/d"], &mut taken), "a-b-c-d-2");
        let all: Vec<String> = build(&fixture())
            .into_iter()
            .flat_map(|w| w.phases)
            .flat_map(|p| p.figures)
            .map(|f| f.slug)
            .collect();
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), all.len());
    }

    #[test]
    fn bar_whiskers_are_the_summary_s_min_max_and_interval() {
        let run = fixture();
        let s = run
            .summaries
            .iter()
            .find(|s| s.target == "ext4" && s.workload == "postmark" && s.metric == "ops_per_s")
            .unwrap();
        let phase = run
            .trials
            .iter()
            .find(|t| t.label == "postmark")
            .and_then(|t| t.phases.iter().find(|p| p.name == s.phase))
            .unwrap();
        let fig = bar_figure(
            &run,
            &[],
            "postmark",
            phase,
            "ops_per_s",
            &["ext4"],
            &mut Vec::new(),
        );
        let d = &s.stats;
        assert!(d.min < d.max, "the fixture's repetitions differ");
        let row = &fig.table.rows[0];
        // The unit, shared by every row, is written once in the heading.
        assert_eq!(
            fig.table.head[1..4],
            ["median (files/s)", "min–max (files/s)", "95% CI (files/s)"]
        );
        assert_eq!(row[1], svg::num(d.median));
        assert_eq!(row[2], format!("{}–{}", svg::num(d.min), svg::num(d.max)));
        // Drawn where the figures are: on the axis of the chart's ticks from 0.
        let tag = |class: &str| {
            let i = fig.svg.find(&format!("class=\"{class}\"")).unwrap();
            fig.svg[i..i + fig.svg[i..].find("/>").unwrap()].to_string()
        };
        let bar = tag("bar");
        assert!(
            bar.contains(&format!("data-value=\"{}\"", d.median)),
            "{bar}"
        );
        let minmax = tag("minmax");
        let ticks = svg::linear_ticks(d.max.max(d.ci95_high.unwrap_or(0.0)));
        let end = *ticks.last().unwrap();
        let x0: f64 = {
            let k = bar.find(" x=\"").unwrap() + 4;
            bar[k..k + bar[k..].find('"').unwrap()].parse().unwrap()
        };
        // The grid's last line is the last tick's, at the end of the plot.
        let grid = tag("grid");
        let x_end: f64 = {
            let k = grid.rfind('M').unwrap() + 1;
            grid[k..k + grid[k..].find(' ').unwrap()].parse().unwrap()
        };
        let at = |v: f64| format!("M{} ", (x0 + v / end * (x_end - x0)).round());
        assert!(minmax.contains(&at(d.min)), "{minmax} min {}", at(d.min));
        assert!(minmax.contains(&at(d.max)), "{minmax} max {}", at(d.max));
    }

    /// The caption says what the workload declared: io500's `score_bw_gib_s` is a bandwidth
    /// (it was captioned "s — lower is better" for its name's ending).
    #[test]
    fn an_io500_bandwidth_score_is_captioned_as_a_bandwidth() {
        let mut run = fixture();
        for (i, t) in run
            .trials
            .iter_mut()
            .filter(|t| t.label == "postmark")
            .enumerate()
        {
            (t.workload, t.label) = ("io500".into(), "io500".into());
            let last = t.phases.last_mut().unwrap();
            last.extra
                .insert("score_bw_gib_s".into(), 1.5 + i as f64 / 10.0);
        }
        run.summaries = crate::stats::summarize(&run.trials, crate::workload::figures_of);
        let t = run.trials.iter().find(|t| t.label == "io500").unwrap();
        let phase = t.phases.last().unwrap().clone();
        let fig = bar_figure(
            &run,
            &[],
            "io500",
            &phase,
            "score_bw_gib_s",
            &["ext4"],
            &mut Vec::new(),
        );
        assert!(
            fig.svg.contains("score_bw_gib_s, GiB/s — higher is better"),
            "{}",
            fig.svg
        );
    }

    #[test]
    fn marks_follow_the_terminal_legend() {
        assert_eq!(marks(&["cache-suspect".into()], true), "~c");
        assert_eq!(marks(&[], false), "");
    }
}
