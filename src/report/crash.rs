//! What a power cut costs, as the reports say it: per `crash` pattern, one line per target
//! with its speed beside the crash states that broke a promise, then the verdict on the
//! differences in loss ([`crate::compare::crash`]). docs/durability.md says how to read it.

use crate::compare::crash::{losses, PatternLoss, TargetLoss, ALPHA};
use crate::compare::family::Outcome;
use crate::compare::rank::{fmt_interval, fmt_ratio, PhaseVerdict};
use crate::report::aging::thousands;
use crate::result::RunResult;

/// The median of `v` (0 when empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// `ext4: 1,234 files/s; 3 of 120 crash states broke a promise (2 files lost, 1 empty);
/// 5 of 120 needed repair`: states the checker had to repair are a class of their own,
/// beside the broken promises (a journaling filesystem should need none after a power cut),
/// and so are files lost where POSIX promised nothing (`; 34 files not promised, lost`).
pub fn target_line(t: &TargetLoss, unit: &str) -> String {
    let (bad, states) = t.totals();
    let speed = format!(
        "{}\u{a0}{unit}",
        thousands(median(&t.ops_per_s).round() as u64)
    );
    let loss = if bad == 0 {
        format!("none of {} crash states broke a promise", thousands(states))
    } else {
        format!(
            "{} of {} crash states broke a promise",
            thousands(bad),
            thousands(states)
        )
    };
    let parts: Vec<String> = [
        (t.lost, "files lost"),
        (t.empty, "files empty"),
        (t.garbage, "files with garbage"),
        (t.leftover, "temporaries left after a promised rename"),
        (t.reappeared, "files back after a promised unlink"),
        (t.metadata, "files with a mode or attribute not kept"),
        (t.unmountable, "states unmountable"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", thousands(*n)))
    .collect();
    let repaired = match t.repaired {
        0 => String::new(),
        n => format!("; {} of {} needed repair", thousands(n), thousands(states)),
    };
    let unpromised = match t.unpromised {
        0 => String::new(),
        n => format!("; {} files not promised, lost", thousands(n)),
    };
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    // Per promise, comparable across filesystems whatever their flushes and states.
    let promises = match t.promises_broken {
        0 => String::new(),
        n => format!(
            "; promised data lost at {} of {} promises",
            thousands(n),
            thousands(t.promises)
        ),
    };
    let exposed = match median(&t.exposed_pct) {
        x if x <= 0.0 => String::new(),
        x => format!(
            "; a power cut during {} of its recorded run would lose promised data",
            percent(x)
        ),
    };
    format!(
        "{}: {speed}; {loss}{detail}{promises}{exposed}{repaired}{unpromised}",
        t.target
    )
}

/// A share in percent as the reports print it: whole percents, `under 1%` and `over 99%`
/// rather than a 0% or 100% that is not so.
fn percent(x: f64) -> String {
    match x {
        x if x < 1.0 => "under 1%".to_string(),
        x if x > 99.0 && x < 100.0 => "over 99%".to_string(),
        x => format!("{x:.0}%"),
    }
}

/// What a target lost: the share, and its words (`at 64 of 64 promises`, `at none`; in
/// crash states, `in 3 of 40 crash states`, for a run that did not count its promises).
fn lost(t: &TargetLoss) -> (f64, String) {
    if t.promises > 0 {
        let share = t.promises_broken as f64 / t.promises as f64;
        return match t.promises_broken {
            0 => (0.0, "at none".to_string()),
            n => (
                share,
                format!("at {} of {} promises", thousands(n), thousands(t.promises)),
            ),
        };
    }
    let (bad, states) = t.totals();
    match bad {
        0 => (0.0, "in no crash state".to_string()),
        n => (
            n as f64 / states.max(1) as f64,
            format!("in {} of {} crash states", thousands(n), thousands(states)),
        ),
    }
}

/// Speed against loss, per pair of targets of which one lost promised data and the other
/// less: `ext4+barrier=0: 1.66× faster than ext4 [1.22–2.1×]; loses promised data at 64 of
/// 64 promises, ext4 at none`. The speed is the run's verdict on the pattern's time (its
/// family, its interval); the loss is a count of what the crash states showed.
fn speed_and_loss(v: Option<&PhaseVerdict>, pl: &PatternLoss) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in pl.targets.iter().enumerate() {
        for b in &pl.targets[i + 1..] {
            let ((la, ta), (lb, tb)) = (lost(a), lost(b));
            if la == lb {
                continue;
            }
            let (worse, better, tw, tb) = if la > lb {
                (a, b, ta, tb)
            } else {
                (b, a, tb, ta)
            };
            let speed = v.map_or_else(
                || format!("speed not judged against {}", better.target),
                |v| speed_text(v, &worse.target, &better.target),
            );
            out.push(format!(
                "{}: {speed}; loses promised data {tw}, {} {tb}",
                worse.target, better.target
            ));
        }
    }
    out
}

/// `1.66× faster than ext4 [1.22–2.1×]`, `1.2× slower than xfs [1.1–1.3×]`, `as fast as
/// ext4 (within ±3%)`, `speed not told apart from ext4's`: `who` against `other` in the
/// phase verdict `v`.
fn speed_text(v: &PhaseVerdict, who: &str, other: &str) -> String {
    let at = |t: &str| v.places.iter().position(|p| p.target == t);
    let not_told = format!("speed not told apart from {other}'s");
    let (Some(w), Some(o)) = (at(who), at(other)) else {
        return not_told;
    };
    let Some(pair) = v
        .pairs
        .iter()
        .find(|p| (p.above, p.below) == (w.min(o), w.max(o)))
    else {
        return not_told;
    };
    match (pair.outcome, pair.test) {
        (Outcome::Apart, Some(t)) => {
            let (lo, hi) = v.family.interval(&t);
            let how = if w == pair.above { "faster" } else { "slower" };
            format!(
                "{} {how} than {other} {}",
                fmt_ratio(t.ratio()),
                fmt_interval(lo, hi)
            )
        }
        (Outcome::Within, _) => format!(
            "as fast as {other} (within ±{}%)",
            crate::compare::family::pct_text(v.family.margin * 100.0)
        ),
        _ => not_told,
    }
}

/// `checked on ext4: 175 of 175 flush points, 40 of 1,016 reordered states`: which crash
/// states there were and which were checked (over all trials); `None` for runs that did
/// not count them.
pub fn coverage_line(t: &TargetLoss) -> Option<String> {
    if t.flush_points == 0 {
        return None;
    }
    let of = if t.reorderings < 1e6 {
        thousands(t.reorderings as u64)
    } else {
        format!("at least 10^{}", t.reorderings.log10().floor())
    };
    let torn = match t.torn {
        0 => String::new(),
        n => format!(
            ", {} torn states (of {} writes that could tear)",
            thousands(n),
            thousands(t.tearable)
        ),
    };
    Some(format!(
        "checked on {}: {} of {} flush points, {} of {of} reordered states{torn}",
        t.target,
        thousands(t.flush_points_checked),
        thousands(t.flush_points),
        thousands(t.reordered)
    ))
}

/// The verdict on the differences in loss of one pattern.
pub fn verdict_lines(pl: &PatternLoss) -> Vec<String> {
    let mut out = Vec::new();
    let share = |t: &str| {
        let x = pl
            .targets
            .iter()
            .find(|x| x.target == t)
            .expect("a target of the pattern");
        let (b, s) = x.totals();
        if s == 0 {
            0.0
        } else {
            b as f64 / s as f64
        }
    };
    for p in pl.pairs.iter().filter(|p| p.real) {
        let (worse, better) = if share(&p.a) > share(&p.b) {
            (&p.a, &p.b)
        } else {
            (&p.b, &p.a)
        };
        out.push(format!(
            "{worse} breaks more promises than {better}: a real difference (p\u{a0}=\u{a0}{:.3} \
             after Holm over {} pair(s))",
            p.p_holm,
            pl.pairs.len()
        ));
    }
    let differ = pl
        .pairs
        .iter()
        .any(|p| !p.real && share(&p.a) != share(&p.b));
    if differ {
        let blind = pl
            .pairs
            .iter()
            .filter(|p| !p.real)
            .all(|p| p.p_min >= ALPHA);
        let other = if out.is_empty() { "" } else { "other " };
        out.push(if blind {
            format!(
                "the {other}differences in loss are not judged: with so few repetitions the \
                 exact test cannot reach p\u{a0}<\u{a0}0.05 (4 or more a target can)"
            )
        } else {
            format!("the {other}differences in loss may be chance (p\u{a0}≥\u{a0}0.05 after Holm)")
        });
    }
    out.extend(repair_line(pl));
    out
}

/// The states each target needed repaired, when any did and there is more than one target:
/// `needed repair: ext4+barrier=0 in 15 of 20 states, ext4 in none`. A count, not a test.
fn repair_line(pl: &PatternLoss) -> Option<String> {
    if pl.targets.len() < 2 || pl.targets.iter().all(|t| t.repaired == 0) {
        return None;
    }
    let each: Vec<String> = pl
        .targets
        .iter()
        .map(|t| match t.repaired {
            0 => format!("{} in none", t.target),
            n => format!(
                "{} in {} of {} states",
                t.target,
                thousands(n),
                thousands(t.totals().1)
            ),
        })
        .collect();
    Some(format!("needed repair: {}", each.join(", ")))
}

/// Each pattern's heading and lines.
pub fn sections(run: &RunResult) -> Vec<(String, Vec<String>)> {
    let losses = losses(run);
    let verdicts = if losses.is_empty() {
        Vec::new()
    } else {
        crate::compare::rank::verdicts(run)
    };
    losses
        .iter()
        .map(|pl| {
            let unit = pl.ops_unit.clone();
            let mut lines: Vec<String> = pl.targets.iter().map(|t| target_line(t, &unit)).collect();
            lines.extend(pl.targets.iter().filter_map(coverage_line));
            let time = verdicts
                .iter()
                .find(|v| v.workload == pl.workload && v.phase == pl.pattern && v.figure.is_none());
            lines.extend(speed_and_loss(time, pl));
            lines.extend(verdict_lines(pl));
            (
                format!("what a power cut costs: {} ({})", pl.pattern, pl.workload),
                lines,
            )
        })
        .collect()
}

/// `text` with its first letter in upper case (an HTML heading).
pub fn capital(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The terminal's section, wrapped at `width`; empty without crash states.
pub fn render(run: &RunResult, width: usize) -> String {
    let mut out = String::new();
    for (head, lines) in sections(run) {
        out.push('\n');
        out.push_str(&crate::report::fit::wrap_options(&head, width, 0, 4));
        out.push('\n');
        for l in lines {
            out.push_str(&crate::report::fit::wrap_options(&l, width, 2, 4));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
#[path = "crash_tests.rs"]
mod tests;
