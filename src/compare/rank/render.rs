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
/// (two repetitions of seven targets give bounds like 10^40) is `[wider than 10×]`.
pub fn fmt_interval(lo: f64, hi: f64) -> String {
    if !readable(lo, hi) {
        return "[wider than 10×]".into();
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
    render_head(verdicts, reps, width) + &render_body(verdicts, width)
}

/// What the verdict lines mean, the family's control in one line, and, when no interval
/// exists anywhere, that `reps` repetitions give no verdict.
pub fn render_head(verdicts: &[PhaseVerdict], reps: u32, width: usize) -> String {
    let mut out = String::new();
    let head = "Verdict: per phase, best first; targets that share a letter are not told \
                apart; each other target against the best: n× slower (told apart), as fast \
                (within the margin) or cannot tell, with the interval of the ratio";
    out.push_str(&wrap(head, width, ""));
    if let Some(v) = verdicts.first() {
        out.push_str(&wrap(
            &v.family.line("pairs of sides, all phases"),
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
