//! Aged against fresh (`run --age both`): per target and phase, how the aged filesystem's
//! headline figure compares with the same filesystem's fresh one, and whether aging changed
//! the order of the filesystems.
//!
//! Both come from the run's verdicts ([`super::rank`]). An aged target's fresh twin is the
//! target of the run set up alike but not aged (the same kind, filesystem, mkfs and mount
//! options, size and guest, as recorded with the run; by name when several are: `ext4`
//! for `ext4+aged`). Both are ranked in the same family, so the ratio aged/fresh is that
//! pair's test, read as the figure's ratio, with its interval at
//! the family's level and its outcome: nothing here is tested a second time. The rank
//! order changes when a pair of filesystems is ordered one way fresh and the other aged;
//! each such pair says whether both verdicts told it apart (a change the data shows) or not
//! (an order the noise may have made).

use super::family::Outcome;
use super::rank::PhaseVerdict;
use crate::result::TargetInfo;

/// One target's aged figure against its fresh one, in one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct AgedRatio {
    /// The fresh target (`ext4`) and the aged one (`ext4+aged`).
    pub fresh: String,
    pub aged: String,
    /// Aged figure over fresh figure (geometric means), and its interval.
    pub ratio: f64,
    pub interval: (f64, f64),
    pub outcome: Outcome,
}

/// What aging did to one phase's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct AgedPhase {
    pub workload: String,
    pub phase: String,
    pub unit: String,
    pub higher_better: bool,
    pub ratios: Vec<AgedRatio>,
    /// The fresh targets in the fresh order and in the order of their aged twins (best
    /// first), when the orders differ.
    pub reordered: Option<(Vec<String>, Vec<String>)>,
    /// The pairs ordered differently, `a–b`, each with whether both verdicts told it apart.
    pub swapped: Vec<(String, bool)>,
}

/// The fresh target of `targets` that aged target `aged` was aged from: set up alike, not
/// aged; among several, the one whose name begins `aged`'s, else the first.
pub fn fresh_of<'a>(aged: &TargetInfo, targets: &'a [TargetInfo]) -> Option<&'a str> {
    aged.age.as_ref()?;
    let alike = |t: &&TargetInfo| {
        t.age.is_none()
            && t.kind == aged.kind
            && t.fstype == aged.fstype
            && t.mkfs_opts == aged.mkfs_opts
            && t.requested_mount_opts == aged.requested_mount_opts
            && t.size_bytes == aged.size_bytes
            && t.guest == aged.guest
    };
    let twins: Vec<&TargetInfo> = targets.iter().filter(alike).collect();
    twins
        .iter()
        .find(|t| aged.name.starts_with(&t.name))
        .or(twins.first())
        .map(|t| t.name.as_str())
}

/// The ratio of places `aged` to `fresh` in `v` as a figure ratio (aged/fresh), from their
/// pair's test.
fn ratio_of(v: &PhaseVerdict, fresh: usize, aged: usize) -> Option<AgedRatio> {
    let pair = v
        .pairs
        .iter()
        .find(|p| (p.above, p.below) == (fresh.min(aged), fresh.max(aged)))?;
    let test = pair.test?;
    let (lo, hi) = v.family.interval(&test);
    // The test is "how many times worse `below` is": below/above of the figure is its
    // inverse for a rate, itself for a time.
    let (mut r, mut lo, mut hi) = (test.ratio(), lo, hi);
    if v.higher_better {
        (r, lo, hi) = (1.0 / r, 1.0 / hi, 1.0 / lo);
    }
    // That is below/above; aged/fresh is its inverse when the aged one ranked above.
    if aged < fresh {
        (r, lo, hi) = (1.0 / r, 1.0 / hi, 1.0 / lo);
    }
    Some(AgedRatio {
        fresh: v.places[fresh].target.clone(),
        aged: v.places[aged].target.clone(),
        ratio: r,
        interval: (lo, hi),
        outcome: pair.outcome,
    })
}

/// Aged against fresh for every phase of `verdicts` that ranks an aged target of
/// `targets` (the run's) beside the target it was aged from ([`fresh_of`]); empty when
/// none does.
pub fn aged_vs_fresh(verdicts: &[PhaseVerdict], targets: &[TargetInfo]) -> Vec<AgedPhase> {
    let mut out = Vec::new();
    for v in verdicts {
        let twins: Vec<(usize, usize)> = (0..v.places.len())
            .filter_map(|a| {
                let info = targets.iter().find(|t| t.name == v.places[a].target)?;
                let base = fresh_of(info, targets)?;
                let f = v.places.iter().position(|p| p.target == base)?;
                Some((f, a))
            })
            .filter(|(f, a)| v.places[*f].flaw.is_none() && v.places[*a].flaw.is_none())
            .collect();
        if twins.is_empty() {
            continue;
        }
        let ratios: Vec<AgedRatio> = twins
            .iter()
            .filter_map(|&(f, a)| ratio_of(v, f, a))
            .collect();
        // Orders: places are best first; each twin pair by its fresh name. Only one aged
        // twin per fresh target takes part (the first, when a run ages with several
        // profiles the orders are given per profile by their ratios).
        let mut seen = Vec::new();
        let twins: Vec<(usize, usize)> = twins
            .into_iter()
            .filter(|(f, _)| {
                let new = !seen.contains(f);
                seen.push(*f);
                new
            })
            .collect();
        let mut fresh: Vec<usize> = twins.iter().map(|t| t.0).collect();
        fresh.sort();
        let mut aged: Vec<(usize, usize)> = twins.iter().map(|&(f, a)| (a, f)).collect();
        aged.sort();
        let fresh_names: Vec<String> = fresh.iter().map(|&f| v.places[f].target.clone()).collect();
        let aged_names: Vec<String> = aged
            .iter()
            .map(|&(_, f)| v.places[f].target.clone())
            .collect();
        let mut swapped = Vec::new();
        for (i, &x) in fresh.iter().enumerate() {
            for &y in &fresh[i + 1..] {
                // x is above y fresh; where are their twins?
                let ax = twins.iter().find(|t| t.0 == x).map(|t| t.1).unwrap_or(0);
                let ay = twins.iter().find(|t| t.0 == y).map(|t| t.1).unwrap_or(0);
                if ax > ay {
                    let apart = v.outcome(x, y) == Some(Outcome::Apart)
                        && v.outcome(ax, ay) == Some(Outcome::Apart);
                    let name = format!("{}–{}", v.places[x].target, v.places[y].target);
                    swapped.push((name, apart));
                }
            }
        }
        out.push(AgedPhase {
            workload: v.workload.clone(),
            phase: v.phase.clone(),
            unit: v.unit.clone(),
            higher_better: v.higher_better,
            ratios,
            reordered: (fresh_names != aged_names).then_some((fresh_names, aged_names)),
            swapped,
        });
    }
    out
}

impl AgedRatio {
    /// `ext4 0.82× [0.75–0.90×] worse aged`, `xfs 1.01× [0.97–1.05×] as fast (within
    /// ±3%)`, `btrfs 0.93× [0.71–1.2×] cannot tell`; `higher_better` says which way is
    /// worse.
    pub fn text(&self, higher_better: bool, margin_pct: &str) -> String {
        let worse = (self.ratio < 1.0) == higher_better;
        let word = match self.outcome {
            Outcome::Apart if worse => "worse aged".to_string(),
            Outcome::Apart => "better aged".to_string(),
            Outcome::Within => format!("as good aged (within ±{margin_pct}%)"),
            Outcome::CannotTell => "cannot tell".to_string(),
        };
        format!(
            "{} {} {} {word}",
            self.fresh,
            super::rank::fmt_ratio(self.ratio),
            super::rank::fmt_interval(self.interval.0, self.interval.1)
        )
    }
}

impl AgedPhase {
    /// The lines of this phase: ratios, then the order change if any.
    pub fn lines(&self, margin_pct: &str) -> Vec<String> {
        let sense = if self.higher_better {
            "higher"
        } else {
            "lower"
        };
        let ratios: Vec<String> = self
            .ratios
            .iter()
            .map(|r| r.text(self.higher_better, margin_pct))
            .collect();
        let mut lines = vec![format!(
            "{} {} ({}, {sense} is better), aged/fresh: {}",
            self.workload,
            self.phase,
            self.unit,
            ratios.join("; ")
        )];
        if let Some((fresh, aged)) = &self.reordered {
            let pairs: Vec<String> = self
                .swapped
                .iter()
                .map(|(p, apart)| match apart {
                    true => format!("{p} (told apart fresh and aged)"),
                    false => format!("{p} (not told apart both times)"),
                })
                .collect();
            lines.push(format!(
                "order changes when aged: fresh {}, aged {}; swapped: {}",
                fresh.join(" > "),
                aged.join(" > "),
                pairs.join(", ")
            ));
        }
        lines
    }
}

/// Aged against fresh as the terminal report shows it, wrapped at `width`; empty when the
/// run has no aged target beside its fresh one.
pub fn render(phases: &[AgedPhase], margin: f64, width: usize) -> String {
    if phases.is_empty() {
        return String::new();
    }
    let margin = super::family::pct_text(margin * 100.0);
    let head = "Aged against fresh: each filesystem's figure aged over its figure fresh from \
                mkfs, with its interval from the verdict above";
    let mut out = format!("\n{}", super::rank::wrap(head, width, ""));
    for p in phases {
        for (i, line) in p.lines(&margin).iter().enumerate() {
            let indent = if i == 0 { "  " } else { "    " };
            out.push_str(&super::rank::wrap(line, width, indent));
        }
    }
    out
}

#[cfg(test)]
mod tests;
