//! The text of `fsarena compare`: a header naming A and B, warnings about mixed causes, one
//! table row per compared metric, a tally of the verdicts and the `--fail-if-slower` result
//! (which figures it gates on, at which level, and those that failed it).

use super::verdict::Verdict;
use super::{gate, Comparison, Row};
use crate::report::fit::{self, Grid};
use crate::report::terminal::fmt_num;
use crate::result::RunResult;
use std::fmt::Write;

/// A figure with three or four significant digits; tiny ones in exponent form.
fn fmt_sig(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a < 1e-3 {
        format!("{v:.2e}")
    } else if a < 1.0 {
        // 3 to 5 here; clamped so that no value can reach `fmt`'s limit on a precision.
        let decimals = ((2.0 - a.log10().floor()) as usize).min(17);
        format!("{v:.decimals$}")
    } else {
        fmt_num(v)
    }
}

pub(super) fn side(label: &str, run: &RunResult, targets: &[&str]) -> String {
    let started = run.started_at.get(..19).unwrap_or(&run.started_at);
    let t = if targets.len() == 1 {
        format!("target {}", targets[0])
    } else {
        format!("targets {}", targets.join(", "))
    };
    let fs: Vec<String> = targets
        .iter()
        .filter_map(|n| run.targets.iter().find(|t| t.name == *n))
        .map(|t| {
            let base = if t.fstype == t.kind {
                t.fstype.clone()
            } else {
                format!("{} {}", t.fstype, t.kind)
            };
            match &t.guest {
                Some(g) => format!("{base} in {}", g.label()),
                None => base,
            }
        })
        .collect();
    let fs = if fs.is_empty() {
        String::new()
    } else {
        format!(" ({})", fs.join(", "))
    };
    let emulated = targets
        .iter()
        .filter_map(|n| run.targets.iter().find(|t| t.name == *n))
        .filter_map(|t| t.guest.as_ref())
        .any(crate::result::GuestInfo::emulated);
    let status = if emulated {
        format!("{}; EMULATED: relative order at best", run.status)
    } else {
        run.status.clone()
    };
    format!(
        "{label}: run {}, {t}{fs}; host {}, kernel {}, started {} UTC, {}\n",
        run.run_id,
        run.host.hostname,
        run.host.kernel,
        started.replace('T', " "),
        status
    )
}

fn header(c: &Comparison) -> String {
    let ta: Vec<&str> = c.pairs.iter().map(|p| p.0.as_str()).collect();
    let tb: Vec<&str> = c.pairs.iter().map(|p| p.1.as_str()).collect();
    let mut s = side("A", &c.a, &ta) + &side("B", &c.b, &tb);
    for (label, run) in [("A", &c.a), ("B", &c.b)] {
        if let Some(line) = super::across::head(Some(label), run) {
            let _ = writeln!(s, "{line}");
        }
    }
    s += "B/A is the ratio of geometric means over the repetitions; its CI comes from \
          Welch's t on the logarithms (Hsu's df, the smaller n - 1). A verdict names a direction \
          only where the CI excludes 1.\n";
    let which = match c.gate_phases.is_empty() {
        true => "each phase's figure that `show` prints, and scores a workload gates on".into(),
        false => format!(
            "the phases --gate-phase names: {}",
            c.gate_phases.join(", ")
        ),
    };
    let _ = writeln!(
        s,
        "Headlines ({which}): {}. The other figures: 95% each, to explore.",
        c.family.line("headline figures")
    );
    if c.a.run_id == c.b.run_id && c.pairs.iter().all(|(x, y)| x == y) {
        s += "note: A and B are the same measurements; no difference is expected\n";
    }
    for w in &c.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if !c.only_a.is_empty() {
        let _ = writeln!(s, "only in A (not compared): {}", c.only_a.join(", "));
    }
    if !c.only_b.is_empty() {
        let _ = writeln!(s, "only in B (not compared): {}", c.only_b.join(", "));
    }
    if !c.metrics_only_a.is_empty() {
        let _ = writeln!(
            s,
            "metrics only in A (not compared): {}",
            c.metrics_only_a.join(", ")
        );
    }
    if !c.metrics_only_b.is_empty() {
        let _ = writeln!(
            s,
            "metrics only in B (not compared): {}",
            c.metrics_only_b.join(", ")
        );
    }
    s
}

fn verdict_cell(r: &Row, limit: Option<f64>) -> String {
    match (&r.verdict, r.regression, limit) {
        (
            Verdict::Significant {
                worse_pct: Some(w), ..
            },
            true,
            Some(l),
        ) => format!("{} ({w:.1}% worse > {l}%) !", r.verdict.text()),
        _ => r.verdict.text(),
    }
}

fn table(c: &Comparison) -> Grid {
    let with_target = c.pairs.len() > 1;
    let mut head = vec![];
    if with_target {
        head.push("target");
    }
    head.extend([
        "workload", "phase", "metric", "median A", "median B", "B/A", "CI", "n A/B", "verdict",
    ]);
    let keys = if with_target { 4 } else { 3 };
    let mut t = Grid::new(head.iter().map(|h| h.to_string()).collect(), keys);
    t.right = (0..head.len())
        .map(|i| i >= keys && i + 1 < head.len())
        .collect();
    for r in &c.rows {
        let mut row = Vec::new();
        if with_target {
            row.push(r.target_a.clone());
        }
        let (ratio, ci) = match &r.ratio {
            Some(l) => (
                fmt_sig(l.ratio),
                l.ci.map_or("—".into(), |(lo, hi)| {
                    // As in the verdict: bounds too far apart to quote say only that the
                    // data cannot tell (two repetitions give bounds like 10^40). Either is
                    // one word (no space, or no-break spaces) so a narrow terminal never
                    // breaks an interval across lines.
                    if super::rank::readable(lo, hi) {
                        format!("{}–{}", fmt_sig(lo), fmt_sig(hi))
                    } else {
                        "wider\u{a0}than\u{a0}10×".into()
                    }
                }),
            ),
            None => ("—".into(), "—".into()),
        };
        row.extend([
            r.workload.clone(),
            r.phase.clone(),
            r.metric.clone(),
            fmt_sig(r.median_a),
            fmt_sig(r.median_b),
            ratio,
            ci,
            format!("{}/{}", r.n_a, r.n_b),
            verdict_cell(r, c.fail_if_slower),
        ]);
        t.rows.push(row);
    }
    t
}

/// The verdicts in the order the tally lists them.
const TALLY_ORDER: &[&str] = &[
    "faster",
    "slower",
    "better",
    "worse",
    "more",
    "less",
    "no significant",
    "within",
    "cannot",
    "equal",
    "n/a",
];

fn tally(rows: &[Row]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in rows {
        // Counted by direction: "63 faster", whatever the ratio of each.
        let text = match &r.verdict {
            Verdict::Significant { word, .. } => (*word).to_string(),
            v => v.text(),
        };
        match counts.iter_mut().find(|(t, _)| *t == text) {
            Some((_, n)) => *n += 1,
            None => counts.push((text, 1)),
        }
    }
    let rank = |t: &str| TALLY_ORDER.iter().position(|p| t.starts_with(p));
    counts.sort_by_key(|(t, _)| rank(t));
    let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
    format!("{} metrics: {}\n", rows.len(), parts.join(", "))
}

/// What `--fail-if-slower` found: what it gates on, what it could not judge, what it
/// cannot tell yet, the figures worse by less than the allowance, the regressions, and the
/// outcome with its exit status.
fn regressions(c: &Comparison) -> String {
    let Some(limit) = c.fail_if_slower else {
        return String::new();
    };
    let k = c.gated();
    let which = match c.gate_phases.is_empty() {
        true => "each phase's headline and the scores a workload declares".to_string(),
        false => format!(
            "the headlines of {} (--gate-phase)",
            c.gate_phases.join(", ")
        ),
    };
    let mut s = format!(
        "--fail-if-slower {limit} gates on {k} figure(s), {which}, judged together (the \
         headlines' family; intervals at {}): a figure fails when B is told apart as worse \
         and its interval reaches a {limit}% loss, passes when its interval rules a \
         {limit}% loss out, and cannot tell otherwise\n",
        c.family.levels_text()
    );
    let name = |r: &Row| {
        let target = if r.target_a == r.target_b {
            r.target_a.clone()
        } else {
            format!("{}→{}", r.target_a, r.target_b)
        };
        format!("{target} {} {} {}", r.workload, r.phase, r.metric)
    };
    // With runs as the unit, a repetition is a run.
    let reps = match super::across::composition(&c.a) {
        Some(_) => "runs",
        None => "repetitions",
    };
    // A gain beyond 2× is a loss below −100%: not a number a reader would quote. No-break
    // spaces keep an interval on one line.
    let pct = |x: f64| match x < -100.0 {
        true => "below\u{a0}-100%".to_string(),
        false => format!("{x:.1}%"),
    };
    let line = |r: &Row| match &r.gate {
        Some(gate::Check::Judged {
            loss_pct, interval, ..
        }) => format!(
            "  {}: {} loss (interval\u{a0}{}\u{a0}to\u{a0}{}); median {} → {}",
            name(r),
            pct(*loss_pct),
            pct(interval.0),
            pct(interval.1),
            fmt_sig(r.median_a),
            fmt_sig(r.median_b)
        ),
        _ => String::new(),
    };
    let in_zone = |r: &Row, z: gate::Zone| matches!(&r.gate, Some(gate::Check::Judged { zone, .. }) if *zone == z);
    let gated: Vec<&Row> = c.rows.iter().filter(|r| r.gated).collect();
    let mut unjudged: Vec<String> = c.unjudged.clone();
    for r in &gated {
        if let Some(gate::Check::Unjudged(why)) = &r.gate {
            unjudged.push(format!("{}: {why}", name(r)));
        }
    }
    if !unjudged.is_empty() {
        let _ = writeln!(s, "could not judge {} gated figure(s):", unjudged.len());
        for u in &unjudged {
            let _ = writeln!(s, "  {u}");
        }
    }
    let open: Vec<&Row> = gated
        .iter()
        .copied()
        .filter(|r| in_zone(r, gate::Zone::CannotTell))
        .collect();
    if !open.is_empty() {
        let _ = writeln!(
            s,
            "cannot tell whether B lost {limit}% in {} gated figure(s):",
            open.len()
        );
        for r in &open {
            let needs = match &r.gate {
                Some(gate::Check::Judged {
                    reps_needed: Some(n),
                    ..
                }) => format!("needs {n} {reps} per side"),
                _ => format!(
                    "needs more than {} {reps} per side",
                    super::family::MAX_REPS_FOR
                ),
            };
            let _ = writeln!(s, "{}; {}/{} {reps}, {needs}", line(r), r.n_a, r.n_b);
        }
    }
    let small: Vec<&Row> = gated
        .iter()
        .copied()
        .filter(|r| in_zone(r, gate::Zone::Pass))
        .filter(
            |r| matches!(&r.gate, Some(gate::Check::Judged { interval, .. }) if interval.0 > 0.0),
        )
        .collect();
    if !small.is_empty() {
        let _ = writeln!(
            s,
            "{} figure(s) of B worse than A, by less than {limit}% (pass):",
            small.len()
        );
        for r in &small {
            let _ = writeln!(s, "{}", line(r));
        }
    }
    let bad: Vec<&Row> = gated
        .iter()
        .copied()
        .filter(|r| in_zone(r, gate::Zone::Regression))
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(
            s,
            "{} figure(s) of B worse than A, a {limit}% loss not ruled out:",
            bad.len()
        );
        for r in &bad {
            let _ = writeln!(s, "{}", line(r));
        }
    }
    let outcome = gate::outcome(c);
    let code = outcome.code();
    let power = format!("{:.0}%", gate::GATE_POWER * 100.0);
    let line = match outcome {
        gate::Outcome::Regression => format!(
            "--fail-if-slower {limit}: FAIL (exit {code}): {} regression(s), listed above",
            bad.len()
        ),
        gate::Outcome::Unjudged => format!(
            "--fail-if-slower {limit}: FAIL (exit {code}): no regression among the figures \
             judged, but {} gated figure(s) could not be judged",
            unjudged.len()
        ),
        gate::Outcome::CannotSee => {
            let needs = match gate::reps_needed(c) {
                Some(Some(n)) if super::across::composition(&c.a).is_some() => format!(
                    "give {n} runs per side (RUN+RUN+…): with the spread seen, an unchanged B \
                     then passes and a true {limit}% loss fails {power} of the time"
                ),
                Some(Some(n)) => format!(
                    "run {n} repetitions per side (--reps {n}): with the spread seen, an \
                     unchanged B then passes and a true {limit}% loss fails {power} of the time"
                ),
                _ => format!(
                    "a {limit}% loss is below what any practical number of {reps} resolves here"
                ),
            };
            format!(
                "--fail-if-slower {limit}: FAIL (exit {code}): no regression, but {} gated \
                 figure(s) cannot tell; {needs}",
                open.len()
            )
        }
        gate::Outcome::Pass => format!(
            "--fail-if-slower {limit}: pass: every gated figure of B rules out a {limit}% \
             loss (a B that truly lost {limit}% passes at most 5% of the time)"
        ),
    };
    s.push_str(&line);
    s.push('\n');
    s
}

/// The whole text printed by `fsarena compare`, fitted to the terminal ([`fit::width`]).
pub fn render(c: &Comparison) -> String {
    render_width(c, fit::width())
}

/// [`render`] at `width` columns.
pub fn render_width(c: &Comparison, width: usize) -> String {
    format!(
        "{}{}\n{}",
        fit::wrap_text(&header(c), width, 2),
        fit::render(&table(c), width),
        fit::wrap_text(&(tally(&c.rows) + &regressions(c)), width, 4)
    )
}

#[cfg(test)]
mod tests {
    use super::fmt_sig;

    #[test]
    fn figures_keep_three_significant_digits() {
        for (v, want) in [
            (0.0, "0"),
            (0.016_04, "0.0160"),
            (0.3456, "0.346"),
            (1.2345, "1.234"),
            (12304.4, "12304"),
            (2.5e-5, "2.50e-5"),
            (-0.5, "-0.500"),
        ] {
            assert_eq!(fmt_sig(v), want, "{v}");
        }
    }
}
