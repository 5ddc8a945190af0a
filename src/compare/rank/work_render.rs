//! The work verdicts as text, one line per phase, and which pairs of a phase are settled
//! on time or on work (for the `Could tell:` line).

use super::*;

/// A value with three significant digits: `4.42`, `0.000612`, `1234`.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let digits = 2 - v.abs().log10().floor() as i32;
    if digits <= 0 {
        format!("{v:.0}")
    } else {
        format!("{v:.*}", digits as usize)
    }
}

/// The unit's amount part: `KiB` of `KiB/file`; empty for a count (`flushes/file`).
fn amount(unit: &str) -> &str {
    match unit.split_once('/') {
        Some((u @ ("KiB" | "ms"), _)) => u,
        _ => "",
    }
}

impl PhaseVerdict {
    /// One work verdict as a clause: its lowest target with the figure's value, then each
    /// other against it: `n× [lo–hi]` told apart, `same` within the margin, `?` cannot
    /// tell: `written xfs 4.42 KiB, btrfs 1.02× [1.01–1.03], ext4 ?`.
    fn work_clause(&self) -> String {
        let name = self
            .figure
            .and_then(crate::result::work::find)
            .map_or("work", |f| f.short);
        let Some(best) = self.places.first() else {
            return format!("{name} no value");
        };
        let unit = match amount(&self.unit) {
            "" => String::new(),
            u => format!(" {u}"),
        };
        let mut parts = vec![format!(
            "{name} {} {}{unit}",
            best.target,
            fmt_value(best.value)
        )];
        for p in self.places.iter().skip(1) {
            let what = match (&p.flaw, p.vs_best_outcome, p.vs_best) {
                (Some(_), _, _) => "no value".to_string(),
                (None, Some(Outcome::Apart), Some(r)) => match r.ci {
                    Some((lo, hi)) => {
                        format!("{} {}", fmt_ratio(r.ratio), fmt_interval(lo, hi))
                    }
                    None => fmt_ratio(r.ratio),
                },
                (None, Some(Outcome::Within), _) => "same".to_string(),
                _ => "?".to_string(),
            };
            parts.push(format!("{} {what}", p.target));
        }
        parts.join(", ")
    }

    /// The work line of a headline verdict: `work per file: written …; flushes …`; `None`
    /// without work verdicts.
    pub fn work_line(&self) -> Option<String> {
        let first = self.work.first()?;
        let per = first.unit.split_once('/').map_or("op", |(_, p)| p);
        let clauses: Vec<String> = self.work.iter().map(PhaseVerdict::work_clause).collect();
        Some(format!("work per {per}: {}", clauses.join("; ")))
    }

    /// Whether the pair of targets `a` and `b` is settled on the headline: told apart or
    /// within the margin.
    fn settled_on_time(&self, a: &str, b: &str) -> bool {
        self.pair_outcome(a, b)
            .is_some_and(|o| matches!(o, Outcome::Apart | Outcome::Within))
    }

    /// The outcome of the pair of targets named `a` and `b`, when tested.
    fn pair_outcome(&self, a: &str, b: &str) -> Option<Outcome> {
        let i = self.places.iter().position(|p| p.target == a)?;
        let j = self.places.iter().position(|p| p.target == b)?;
        let pair = self
            .pairs
            .iter()
            .find(|p| (p.above, p.below) == (i.min(j), i.max(j)))?;
        pair.test.map(|_| pair.outcome)
    }

    /// Whether the pair of targets `a` and `b` is settled on work: told apart on some
    /// work figure, or within the margin on every one tested.
    fn settled_on_work(&self, a: &str, b: &str) -> bool {
        let outcomes: Vec<Outcome> = self
            .work
            .iter()
            .filter_map(|w| w.pair_outcome(a, b))
            .collect();
        outcomes.contains(&Outcome::Apart)
            || (!outcomes.is_empty() && outcomes.iter().all(|o| *o == Outcome::Within))
    }

    /// How the phase is settled: every pair of its targets on the headline ([`Axis::Time`]),
    /// else every pair on time or on work ([`Axis::Work`]); `None` when some pair is not.
    pub fn settled(&self) -> Option<Axis> {
        if !self.judged() {
            return None;
        }
        let names = |p: &Pair| {
            (
                self.places[p.above].target.as_str(),
                self.places[p.below].target.as_str(),
            )
        };
        let time = self.pairs.iter().all(|p| {
            let (a, b) = names(p);
            self.settled_on_time(a, b)
        });
        if time {
            return Some(Axis::Time);
        }
        let either = self.pairs.iter().all(|p| {
            let (a, b) = names(p);
            self.settled_on_time(a, b) || self.settled_on_work(a, b)
        });
        either.then_some(Axis::Work)
    }

    /// The pairs settled on neither axis, with their headline's test.
    pub fn open_pairs(&self) -> Vec<&Pair> {
        self.pairs
            .iter()
            .filter(|p| {
                let (a, b) = (
                    self.places[p.above].target.as_str(),
                    self.places[p.below].target.as_str(),
                );
                !self.settled_on_time(a, b) && !self.settled_on_work(a, b)
            })
            .collect()
    }
}

/// What settled a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Every pair told apart or within the margin on the headline (time).
    Time,
    /// Some pair only on its work.
    Work,
}
