//! The verdicts as text: ratios and intervals as read, each phase's ranking with its letters
//! and words, wrapped to the terminal's width.

use super::*;

/// A ratio as read: `1.06×`, `6.0×`, `12×`.
pub fn fmt_ratio(r: f64) -> String {
    if r >= 9.95 {
        format!("{r:.0}×")
    } else if r >= 1.995 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

/// The widest interval printed as numbers: bounds more than this many times apart, or
/// beyond 0.01 and 10,000, say only that the data cannot tell.
pub const WIDEST_READABLE: f64 = 10.0;

/// Whether an interval is narrow enough to be quoted ([`WIDEST_READABLE`]).
pub fn readable(lo: f64, hi: f64) -> bool {
    lo >= 0.01 && hi <= 10_000.0 && hi / lo <= WIDEST_READABLE
}

/// An interval of ratios as read: `[5.1–7.0×]`; one wider than [`WIDEST_READABLE`]
/// (two repetitions of seven targets give bounds like 10^40) is `[wider than 10×]`, with no-break spaces so that it is never broken across lines.
pub fn fmt_interval(lo: f64, hi: f64) -> String {
    if !readable(lo, hi) {
        return "[wider\u{a0}than\u{a0}10×]".into();
    }
    format!(
        "[{}–{}]",
        fmt_ratio(lo).trim_end_matches('×'),
        fmt_ratio(hi)
    )
}

impl PhaseVerdict {
    /// The ratio of `pair`'s geometric means on the "worse" scale (≥ 1 but for ties).
    pub(super) fn places_value_ratio(&self, pair: &Pair) -> f64 {
        match pair.test {
            Some(t) => t.ratio(),
            None => {
                let (a, b) = (self.places[pair.above].value, self.places[pair.below].value);
                (a / b).max(b / a)
            }
        }
    }

    /// The ranking as a line of words, best first, each target with its letters:
    /// `tmpfs(a) ext4(b) xfs(bc) btrfs(c)`; targets that share a letter are not told
    /// apart, `?` has no interval.
    pub fn ranking(&self) -> String {
        let each: Vec<String> = self
            .places
            .iter()
            .map(|p| format!("{}({})", p.target, p.letters))
            .collect();
        each.join(" ")
    }

    /// The memory references beside the ranking, one string each: `tmpfs 3.2× faster
    /// than xfs`, `tmpfs 1.4× slower than xfs`, `tmpfs same as xfs (1.00×)`, `tmpfs no
    /// ratio`; empty without any. A reference is never tested: these are point ratios.
    pub fn reference_texts(&self) -> Vec<String> {
        let best = self.places.first().map_or("", |p| p.target.as_str());
        self.references
            .iter()
            .map(|r| {
                // The interval in the words' direction: of "n× faster", or of "n× slower".
                let within = |slower: bool| {
                    r.interval
                        .map(|(a, b)| if slower { (1.0 / b, 1.0 / a) } else { (a, b) })
                        .map(|(a, b)| format!(" {}", fmt_interval(a, b)))
                        .unwrap_or_default()
                };
                match r.vs_best {
                    Some(x) if fmt_ratio(x) == "1.00×" => {
                        format!("{} same as {best} (1.00×{})", r.target, within(false))
                    }
                    Some(x) if x >= 1.0 => format!(
                        "{} {} faster than {best}{}",
                        r.target,
                        fmt_ratio(x),
                        within(false)
                    ),
                    Some(x) => format!(
                        "{} {} slower than {best}{}",
                        r.target,
                        fmt_ratio(1.0 / x),
                        within(true)
                    ),
                    None => format!("{} no ratio", r.target),
                }
            })
            .collect()
    }

    /// Whether any interval exists (more than one repetition on the compared sides).
    pub fn judged(&self) -> bool {
        self.pairs.iter().any(|p| p.test.is_some())
    }

    /// The outcome of the pair of `a` and `b` (indices into `places`).
    pub fn outcome(&self, a: usize, b: usize) -> Option<Outcome> {
        self.pairs
            .iter()
            .find(|p| (p.above, p.below) == (a.min(b), a.max(b)))
            .map(|p| p.outcome)
    }

    /// What each non-best target is against the best, one string each: `ext4 6.0× slower
    /// [5.1–7.0×]` (told apart), `xfs as fast (within ±3%) [0.99–1.02×]`, `btrfs cannot
    /// tell (1.93× [0.92–4.1×])`, `f2fs no ratio (a repetition of 0)`.
    pub fn ratios(&self) -> Vec<String> {
        let margin = crate::compare::family::pct_text(self.family.margin * 100.0);
        self.places
            .iter()
            .skip(1)
            .map(|p| {
                let t = &p.target;
                if let Some(flaw) = &p.flaw {
                    return format!("{t} no ratio ({flaw})");
                }
                let Some(r) = p.vs_best else {
                    return format!("{t} cannot tell");
                };
                let ci = r.ci.map(|(lo, hi)| fmt_interval(lo, hi));
                match (p.vs_best_outcome, ci) {
                    (Some(Outcome::Apart), Some(ci)) => {
                        format!("{t} {} slower {ci}", fmt_ratio(r.ratio))
                    }
                    (Some(Outcome::Within), Some(ci)) => {
                        format!("{t} as fast (within ±{margin}%) {ci}")
                    }
                    (_, Some(ci)) => format!("{t} cannot tell ({} {ci})", fmt_ratio(r.ratio)),
                    (_, None) => format!("{t} cannot tell ({}, no interval)", fmt_ratio(r.ratio)),
                }
            })
            .collect()
    }
}

/// The verdicts as text for a terminal `width` columns wide: per workload, one block per
/// phase, lines broken between words only.
pub fn render(verdicts: &[PhaseVerdict], reps: u32, width: usize) -> String {
    if verdicts.is_empty() {
        return String::new();
    }
    let mut out = render_head(verdicts, reps, width) + &render_body(verdicts, width);
    if let Some(line) = resolution(verdicts) {
        out.push_str(&wrap(&line, width, ""));
    }
    out
}

/// What the run could and could not tell, in one sentence: how many phases are settled
/// (every pair told apart or within the margin) and, for the pairs that cannot tell, the
/// smallest ratio the median such pair could have seen at 80% power with the repetitions
/// it had, and the repetitions a target a 10% slowdown (1.11×) would take, both at
/// the level a first call of the family must pass (0.05/m for m tests, as the CI gate
/// plans). `None` when nothing was tested.
pub fn resolution(verdicts: &[PhaseVerdict]) -> Option<String> {
    use crate::compare::family::ALPHA;
    let m = verdicts.first()?.family.tests;
    if m == 0 {
        return None;
    }
    let alpha = ALPHA / m as f64;
    let axes: Vec<Option<Axis>> = verdicts.iter().map(PhaseVerdict::settled).collect();
    let on = |a: Axis| axes.iter().filter(|x| **x == Some(a)).count();
    let (time, work) = (on(Axis::Time), on(Axis::Work));
    let open: Vec<&Test> = verdicts
        .iter()
        .flat_map(|v| v.open_pairs())
        .filter_map(|p| p.test.as_ref())
        .collect();
    let margin = crate::compare::family::pct_text(verdicts[0].family.margin * 100.0);
    let any_work = verdicts.iter().any(|v| !v.work.is_empty());
    let mut line = match any_work {
        false => format!(
            "Could tell: {time} of {} phases settled (every pair told apart or within \
             ±{margin}%)",
            verdicts.len()
        ),
        true => format!(
            "Could tell: {} of {} phases settled (every pair told apart or within \
             ±{margin}% on time or on work: {time} on time, {work} more on work)",
            time + work,
            verdicts.len()
        ),
    };
    if open.is_empty() {
        line.push('.');
        return Some(line);
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let seen = median(open.iter().map(|t| t.detectable_log(alpha).exp()).collect());
    let reps = median(
        open.iter()
            .map(|t| t.reps_for(10.0, alpha).map_or(f64::INFINITY, |n| n as f64))
            .collect(),
    );
    let reps = match reps.is_finite() {
        true => format!("about {reps:.0} repetitions a target"),
        false => format!(
            "more than {} repetitions",
            crate::compare::family::MAX_REPS_FOR
        ),
    };
    // Beyond 10× a ratio is not a number a reader would quote (as the intervals).
    let seen = match seen < 10.0 {
        true => format!("differences of {} or more", fmt_ratio(seen)),
        false => "only differences over 10×".to_string(),
    };
    line.push_str(&format!(
        "; the {} pairs that cannot tell{} could see, at the median, {seen} (80% power) \
         in time; telling 1.11× (10% slower) would take {reps}.",
        open.len(),
        if any_work { " on either" } else { "" },
    ));
    Some(line)
}

/// What the verdict lines mean, the family's control in one line, and, when no interval
/// exists anywhere, that `reps` repetitions give no verdict.
pub fn render_head(verdicts: &[PhaseVerdict], reps: u32, width: usize) -> String {
    let mut out = String::new();
    let head = "Verdict: per phase, best first; targets that share a letter are not told \
                apart; each other target against the best: n× slower (told apart), as fast \
                (within the margin) or cannot tell, with the interval of the ratio";
    out.push_str(&wrap(head, width, ""));
    let any_work = verdicts.iter().any(|v| !v.work.is_empty());
    if any_work {
        out.push_str(&wrap(
            "Work per operation (lower is better; the device's own counters and the \
             workload's CPU): each figure's lowest target and its value, each other target \
             n× as much [interval] when told apart, `same` within the margin, `?` cannot \
             tell (docs/work.md)",
            width,
            "",
        ));
    }
    if let Some(v) = verdicts.first() {
        out.push_str(&wrap(
            &v.family.line("pairs of sides, all phases"),
            width,
            "",
        ));
    }
    if let Some(w) = verdicts.iter().find_map(|v| v.work.first()) {
        out.push_str(&wrap(&work_control(&w.family), width, ""));
    }
    let memory: Vec<&str> = verdicts
        .iter()
        .flat_map(|v| v.references.iter().map(|r| r.target.as_str()))
        .fold(Vec::new(), |mut seen, t| {
            if !seen.contains(&t) {
                seen.push(t);
            }
            seen
        });
    if !memory.is_empty() {
        out.push_str(&wrap(
            &format!(
                "Persistent filesystems are ranked among themselves; {} (memory, kept by no \
                 disk) is shown beside each ranking as a reference, not ranked (its interval \
                 95% on its own, outside the control)",
                memory.join(", ")
            ),
            width,
            "",
        ));
    }
    if !verdicts.iter().any(PhaseVerdict::judged) {
        out.push_str(&wrap(
            &format!(
                "{reps} repetition(s): the ranking is by single values; no verdict can be \
                 given (use --reps 3 or more)"
            ),
            width,
            "",
        ));
    }
    out
}

/// The control of the work verdicts' family, in one sentence.
pub fn work_control(f: &crate::compare::family::Family) -> String {
    format!(
        "Work: a family of its own, Benjamini-Hochberg at 5% over all {} pairs of sides \
         and work figures (identical sides differ in one at most 5% of the time; `same` \
         is within ±{}%); intervals at {}",
        f.tests,
        crate::compare::family::pct_text(f.margin * 100.0),
        f.levels_text()
    )
}

/// The verdict lines: per workload, one block per phase.
pub fn render_body(verdicts: &[PhaseVerdict], width: usize) -> String {
    let mut out = String::new();
    let mut last = String::new();
    for v in verdicts {
        let head = match &v.among {
            Some(among) => format!("{} ({among})", v.workload),
            None => v.workload.clone(),
        };
        if head != last {
            out.push_str(&format!("{head}\n"));
            last = head;
        }
        let mut line = format!("{} ({}): {}", v.phase, v.unit, v.ranking());
        if !v.missing.is_empty() {
            line.push_str(&format!("; no value: {}", v.missing.join(", ")));
        }
        let ratios = v.ratios().join("; ");
        let one = format!("{line} — {ratios}");
        if ratios.is_empty() {
            out.push_str(&wrap(&line, width, "  "));
        } else if one.chars().count() + 2 <= width {
            out.push_str(&wrap(&one, width, "  "));
        } else {
            out.push_str(&wrap(&line, width, "  "));
            out.push_str(&wrap(&ratios, width, "      "));
        }
        let refs = v.reference_texts();
        if !refs.is_empty() {
            out.push_str(&wrap(
                &format!("reference: {}", refs.join("; ")),
                width,
                "      ",
            ));
        }
        if let Some(work) = v.work_line() {
            out.push_str(&wrap(&work, width, "    "));
        }
    }
    out
}

/// `text` broken into lines of at most `width` columns between words, each starting with
/// `indent` (continuation lines indented two more); a word longer than a line stands
/// alone, whole.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    let cont = format!("{indent}  ");
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && len > width {
            out.push_str(&line);
            out.push('\n');
            line = cont.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}
