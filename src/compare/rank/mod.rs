//! The verdict of a run: for each workload's phases, its targets ranked by the phase's
//! headline figure, each with how many times worse than the best it is and the interval
//! of that ratio, and letters that say which targets the data cannot tell apart.
//!
//! Method. For a phase measured on k targets, targets are ranked by the geometric mean of
//! the headline figure over their repetitions. Every pair of targets is tested (Welch's t
//! on log ratios), and all pairs of all phases of the run form one family, controlled
//! together ([`super::family`]: Benjamini–Hochberg, with every interval at the level at
//! which its exclusion of 1 is exactly the procedure's "told apart"). Each pair is told
//! apart, within the equivalence margin, or cannot tell; the words (`n× slower` only for
//! told apart, `as fast` only within the margin), the letters (a compact letter display:
//! targets sharing a letter are not told apart, Piepho 2004) and the HTML shading all read
//! those outcomes. Ratios are stated as "n× slower" (how many times the best's rate, or how
//! many times the time), never as a lost percentage.

use super::family::{Family, Floor, Outcome, Test, DEFAULT_MARGIN_PCT};
use super::verdict::Sense;
use super::welch::LogRatio;
use crate::result::{PhaseResult, RunResult};

mod reference;
mod render;
mod work;
mod work_render;

pub use work_render::{fmt_value, Axis};

pub use render::{
    fmt_interval, fmt_ratio, readable, render, render_body, render_head, resolution, work_control,
    wrap, WIDEST_READABLE,
};

/// One target's place in a phase's ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub target: String,
    /// Geometric mean of the headline figure over the repetitions (NaN when a repetition
    /// has no logarithm, see `flaw`).
    pub value: f64,
    /// Repetitions it rests on.
    pub n: usize,
    /// How many times worse than the best (1 for the best) and its interval at the
    /// family's level; `None` for the best itself and for a flawed target.
    pub vs_best: Option<LogRatio>,
    /// What the family says about it against the best; `None` for the best.
    pub vs_best_outcome: Option<Outcome>,
    /// Its letters: targets that share one are not told apart; `?` when it has no
    /// interval with any other target.
    pub letters: String,
    /// Why it has no ratio (`a repetition of 0`): such a target is ranked last.
    pub flaw: Option<String>,
}

/// One pair of a phase's targets: `above` ranked before `below` (indices into `places`).
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub above: usize,
    pub below: usize,
    /// The test of how many times worse `below` is (b/a on the "worse" scale: above 1
    /// when `below` is worse); `None` when no interval exists.
    pub test: Option<Test>,
    pub outcome: Outcome,
}

/// A target shown beside a phase's ranking but not in it: a memory filesystem (tmpfs)
/// when the run has two persistent targets or more, which are ranked among themselves
/// ([`verdicts`]). It is not tested, so no verdict names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub target: String,
    /// Geometric mean of the headline figure over its repetitions.
    pub value: f64,
    /// Repetitions it rests on.
    pub n: usize,
    /// How many times faster (or better) than the ranking's best it is: above 1 when
    /// faster; `None` when either has no logarithm.
    pub vs_best: Option<f64>,
    /// The 95% interval of `vs_best` from both sides' repetitions (Welch's t on the
    /// logarithms, as the ranked pairs'), each reference's on its own: outside the run's
    /// error control, which covers the ranked pairs only. `None` with fewer than two
    /// repetitions a side.
    pub interval: Option<(f64, f64)>,
}

/// The verdict on one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseVerdict {
    pub workload: String,
    pub phase: String,
    /// The headline figure's unit (`files/s`, `MB/s`, `s`).
    pub unit: String,
    /// Whether a higher figure is better (a rate) or a lower one (a time).
    pub higher_better: bool,
    /// Best first; flawed targets last.
    pub places: Vec<Place>,
    /// Every pair of places.
    pub pairs: Vec<Pair>,
    /// Targets without any value (no successful trial).
    pub missing: Vec<String>,
    /// Memory targets shown beside the ranking, not in it (see [`Reference`]).
    pub references: Vec<Reference>,
    /// Which of a run's kinds of machine its targets ran on (`on the host`, `in tcg
    /// guests`), when the run had several: they are ranked apart ([`verdicts`]).
    pub among: Option<String>,
    /// The control of the family this phase was judged in (the same for every phase of a
    /// run or of a `compare`).
    pub family: Family,
    /// The work figure judged ([`crate::result::work`]: `dev_kib_written_per_op`), `None`
    /// for the phase's headline (its time).
    pub figure: Option<&'static str>,
    /// The verdicts on the phase's work figures, each ranked like the headline (lower
    /// first), judged together in a family of their own ([`settle`]); empty for a work
    /// verdict.
    pub work: Vec<PhaseVerdict>,
}

/// The headline value of a phase: its `primary` figure.
fn headline(p: &PhaseResult) -> f64 {
    crate::result::primary_value(p)
}

/// The sense of a phase's headline: declared by its workload, else by its metric.
fn sense_of(workload: &str, p: &PhaseResult) -> Sense {
    match Sense::of(crate::figures::find(
        crate::workload::figures_of(workload),
        &p.name,
        &p.primary,
    )) {
        Sense::Neutral if p.primary == "wall_s" => Sense::Duration,
        Sense::Neutral => Sense::Rate,
        s => s,
    }
}

/// Whether higher is better for `s`.
fn higher_better(s: Sense) -> bool {
    matches!(s, Sense::Rate | Sense::HigherBetter | Sense::Neutral)
}

/// One side of a ranking: the name it goes by in the verdict, and the run and target its
/// repetitions come from (a target of one run, or the same target of several runs).
#[derive(Clone, Debug)]
pub struct Side<'a> {
    pub label: String,
    pub run: &'a RunResult,
    pub target: String,
}

/// The verdicts of every workload's phases, in the order the run ran them, judged as one
/// family ([`super::family`]) with the run's equivalence margin (`run --margin`, recorded in
/// its policy; else the default); phases with fewer than
/// two targets are left out. A run whose targets ran on several kinds of machine (the
/// host's kernel, KVM guests, emulated guests: `plan` targets with `kernel = "…"` beside
/// others) has each kind ranked apart, never one against another
/// ([`crate::result::comparable`]), each verdict saying which it is `among`. Where two
/// persistent targets or more are ranked, a memory filesystem (tmpfs) beside them is not:
/// it is shown as a [`Reference`], so that the disks are ranked against each other rather
/// than each divided by a filesystem that keeps nothing across a reboot.
pub fn verdicts(run: &RunResult) -> Vec<PhaseVerdict> {
    let pct = run.policy.margin_pct.unwrap_or(DEFAULT_MARGIN_PCT);
    verdicts_with(run, pct / 100.0)
}

/// [`verdicts`] with the equivalence margin `margin` (0.03 for ±3%).
pub fn verdicts_with(run: &RunResult, margin: f64) -> Vec<PhaseVerdict> {
    // (kind, its sides) in first-seen order.
    let mut groups: Vec<(String, Vec<Side>)> = Vec::new();
    for t in &run.trials {
        if groups
            .iter()
            .any(|(_, g)| g.iter().any(|s| s.target == t.target))
        {
            continue;
        }
        let kind = machine_of(run, &t.target);
        let side = Side {
            label: t.target.clone(),
            run,
            target: t.target.clone(),
        };
        match groups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, g)) => g.push(side),
            None => groups.push((kind, vec![side])),
        }
    }
    let several = groups.len() > 1;
    let mut out = Vec::new();
    for (kind, sides) in groups {
        let (memory, persistent): (Vec<Side>, Vec<Side>) = sides
            .iter()
            .cloned()
            .partition(|s| is_memory(run, &s.target));
        let (ranked, references) = match persistent.len() >= 2 && !memory.is_empty() {
            true => (persistent, memory),
            false => (sides, Vec::new()),
        };
        for mut v in measure(&ranked) {
            v.among = several.then(|| kind.clone());
            let best = v
                .places
                .first()
                .and_then(|p| ranked.iter().find(|s| s.label == p.target));
            v.references = references
                .iter()
                .filter_map(|s| reference::reference(&v, s, best))
                .collect();
            out.push(v);
        }
    }
    settle(out.iter_mut(), margin);
    out
}

/// Whether target `name` of `run` is a memory filesystem (tmpfs, ramfs): its figures are
/// the page cache's and the CPU's, a reference for the disks rather than a rival.
pub fn is_memory(run: &RunResult, name: &str) -> bool {
    run.targets
        .iter()
        .find(|t| t.name == name)
        .is_some_and(|t| matches!(t.fstype.as_str(), "tmpfs" | "ramfs"))
}

/// The headline values of phase `phase` of workload label `label` in `side`'s successful
/// repetitions.
fn headlines_of(side: &Side, label: &str, phase: &str) -> Vec<f64> {
    side.run
        .trials
        .iter()
        .filter(|t| t.status == "ok" && t.label == label && t.target == side.target)
        .flat_map(|t| t.phases.iter().filter(|p| p.name == phase))
        .map(headline)
        .collect()
}

/// The kind of machine target `name` of `run` ran on, as verdicts name it.
fn machine_of(run: &RunResult, name: &str) -> String {
    match run
        .targets
        .iter()
        .find(|t| t.name == name)
        .and_then(|t| t.guest.as_ref())
    {
        None => "on the host".into(),
        Some(g) => format!("in {} guests", g.accel),
    }
}

/// The verdicts of `sides` ranked together and judged as one family, with the default
/// margin: [`measure`], then [`settle`].
pub fn verdicts_of(sides: &[Side]) -> Vec<PhaseVerdict> {
    let mut out = measure(sides);
    settle(out.iter_mut(), DEFAULT_MARGIN_PCT / 100.0);
    out
}

/// The phases of `sides` ranked together, each pair tested but not yet judged (that is
/// [`settle`]'s, over the whole family): each workload label × phase that some side's run
/// measured on its target, in the order the runs ran them (first run first); phases with
/// fewer than two sides with values are left out. Workloads are matched across runs by
/// label.
pub fn measure(sides: &[Side]) -> Vec<PhaseVerdict> {
    // (label, phase, unit, sense) in first-seen order.
    let mut keys: Vec<(String, String, String, Sense)> = Vec::new();
    let mut runs: Vec<&RunResult> = Vec::new();
    for s in sides {
        if !runs.iter().any(|r| std::ptr::eq(*r, s.run)) {
            runs.push(s.run);
        }
    }
    for run in runs {
        let mine = |t: &str| {
            sides
                .iter()
                .any(|s| std::ptr::eq(s.run, run) && s.target == t)
        };
        for t in run.trials.iter().filter(|t| mine(&t.target)) {
            for p in &t.phases {
                if !keys.iter().any(|k| k.0 == t.label && k.1 == p.name) {
                    let unit = crate::result::unit_of(p);
                    let sense = sense_of(&t.workload, p);
                    keys.push((t.label.clone(), p.name.clone(), unit, sense));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (label, phase, unit, sense) in keys {
        let samples: Vec<(&str, Vec<f64>)> = sides
            .iter()
            .map(|s| (s.label.as_str(), headlines_of(s, &label, &phase)))
            .collect();
        if let Some(mut v) = rank(&label, &phase, &unit, sense, &samples) {
            v.work = work::measure_work(sides, &label, &phase);
            out.push(v);
        }
    }
    out
}

fn usable(xs: &[f64]) -> bool {
    !xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x > 0.0)
}

fn geo_mean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// Why a sample has no logarithm: `a repetition of 0`, `a non-finite repetition`.
fn flaw_of(xs: &[f64]) -> String {
    if xs.iter().any(|x| !x.is_finite()) {
        "a non-finite repetition".into()
    } else if xs.contains(&0.0) {
        "a repetition of 0".into()
    } else {
        "a negative repetition".into()
    }
}

/// Ranks the targets of one phase from their samples and tests every pair (see the module
/// docs), judged as a family of its own; `None` when fewer than two targets have values.
/// A target with a repetition of zero or a non-finite one is ranked last, unjudged.
pub fn rank(
    workload: &str,
    phase: &str,
    unit: &str,
    sense: Sense,
    samples: &[(&str, Vec<f64>)],
) -> Option<PhaseVerdict> {
    rank_floored(workload, phase, unit, sense, samples, None)
}

/// [`rank`], with each sample's log standard deviation floored at `floors` (one per
/// sample, [`Test::of_figure`]) when given: the ranking of a work figure.
pub fn rank_floored(
    workload: &str,
    phase: &str,
    unit: &str,
    sense: Sense,
    samples: &[(&str, Vec<f64>)],
    floors: Option<&[Floor]>,
) -> Option<PhaseVerdict> {
    let higher = higher_better(sense);
    let floor_of = |i: usize| floors.and_then(|f| f.get(i).copied());
    let mut ok: Vec<(&str, &[f64], f64, Option<Floor>)> = samples
        .iter()
        .enumerate()
        .filter(|(_, (_, xs))| usable(xs))
        .map(|(i, (t, xs))| (*t, xs.as_slice(), geo_mean(xs), floor_of(i)))
        .collect();
    let flawed: Vec<(&str, &[f64])> = samples
        .iter()
        .filter(|(_, xs)| !xs.is_empty() && !usable(xs))
        .map(|(t, xs)| (*t, xs.as_slice()))
        .collect();
    let missing: Vec<String> = samples
        .iter()
        .filter(|(_, xs)| xs.is_empty())
        .map(|(t, _)| t.to_string())
        .collect();
    if ok.len() + flawed.len() < 2 {
        return None;
    }
    ok.sort_by(|a, b| {
        let o = a.2.total_cmp(&b.2);
        if higher {
            o.reverse()
        } else {
            o
        }
    });
    // "How many times worse" than `better`: better/worse for a rate, worse/better for a time.
    let test =
        |a: &(&str, &[f64], f64, Option<Floor>), b: &(&str, &[f64], f64, Option<Floor>)| match (
            a.3, b.3,
        ) {
            (Some(fa), Some(fb)) => Test::of_figure(a.1, b.1, fa, fb),
            _ => Test::of(a.1, b.1),
        };
    let worse_test = |better: &(&str, &[f64], f64, Option<Floor>),
                      worse: &(&str, &[f64], f64, Option<Floor>)|
     -> Option<Test> {
        if higher {
            test(worse, better)
        } else {
            test(better, worse)
        }
    };
    let mut places: Vec<Place> = ok
        .iter()
        .map(|(target, xs, value, _)| Place {
            target: target.to_string(),
            value: *value,
            n: xs.len(),
            vs_best: None,
            vs_best_outcome: None,
            letters: String::new(),
            flaw: None,
        })
        .collect();
    places.extend(flawed.iter().map(|(target, xs)| Place {
        target: target.to_string(),
        value: f64::NAN,
        n: xs.len(),
        vs_best: None,
        vs_best_outcome: None,
        letters: String::new(),
        flaw: Some(flaw_of(xs)),
    }));
    let mut pairs = Vec::new();
    for above in 0..places.len() {
        for below in above + 1..places.len() {
            let test = match (ok.get(above), ok.get(below)) {
                (Some(a), Some(b)) => worse_test(a, b),
                _ => None,
            };
            pairs.push(Pair {
                above,
                below,
                test,
                outcome: Outcome::CannotTell,
            });
        }
    }
    let mut v = PhaseVerdict {
        workload: workload.to_string(),
        phase: phase.to_string(),
        unit: unit.to_string(),
        higher_better: higher,
        places,
        pairs,
        missing,
        references: Vec::new(),
        among: None,
        family: Family::control(&[], DEFAULT_MARGIN_PCT / 100.0),
        figure: None,
        work: Vec::new(),
    };
    settle(std::iter::once(&mut v), DEFAULT_MARGIN_PCT / 100.0);
    Some(v)
}

/// Judges `verdicts` as one family ([`super::family`]) with equivalence margin `margin`:
/// every pair's outcome, each place's ratio to the best with its interval at the family's
/// level, and the letters.
pub fn settle<'a>(verdicts: impl IntoIterator<Item = &'a mut PhaseVerdict>, margin: f64) {
    let mut heads: Vec<&mut PhaseVerdict> = verdicts.into_iter().collect();
    // The headlines are one family; the work verdicts of all phases another, of its own,
    // so that the many work figures plainly equal or plainly apart never loosen the
    // threshold a headline must pass.
    let mut works: Vec<Vec<PhaseVerdict>> = heads
        .iter_mut()
        .map(|v| std::mem::take(&mut v.work))
        .collect();
    settle_all(&mut heads, margin);
    let mut all: Vec<&mut PhaseVerdict> = works.iter_mut().flatten().collect();
    settle_all(&mut all, margin);
    for (v, w) in heads.iter_mut().zip(works) {
        v.work = w;
    }
}

/// [`settle`] over a flat list of verdicts judged as one family.
fn settle_all(all: &mut [&mut PhaseVerdict], margin: f64) {
    let tests: Vec<Test> = all
        .iter()
        .flat_map(|v| v.pairs.iter().filter_map(|x| x.test))
        .collect();
    let mut family = Family::control(&tests, margin);
    let (mut apart, mut within) = (0, 0);
    for v in all.iter_mut() {
        for pair in &mut v.pairs {
            pair.outcome = family.outcome(pair.test.as_ref());
            apart += usize::from(pair.outcome == Outcome::Apart);
            within += usize::from(pair.outcome == Outcome::Within);
        }
    }
    // The counts as the outcomes say them (told apart as the procedure's but for rounding;
    // "as fast" without the pairs also told apart).
    family.apart = apart;
    family.within = within;
    for v in all.iter_mut() {
        v.family = family;
        let k = v.places.len();
        let vs_best: Vec<(usize, Outcome, LogRatio)> = v
            .pairs
            .iter()
            .filter(|x| x.above == 0)
            .map(|pair| {
                let r = LogRatio {
                    ratio: v.places_value_ratio(pair),
                    ci: pair.test.map(|t| family.interval(&t)),
                    df: pair.test.map(|t| t.df),
                };
                (pair.below, pair.outcome, r)
            })
            .collect();
        for (i, outcome, r) in vs_best {
            let place = &mut v.places[i];
            place.vs_best_outcome = Some(outcome);
            place.vs_best = place.flaw.is_none().then_some(r);
        }
        let letters = letters(k, &v.pairs);
        for (place, l) in v.places.iter_mut().zip(letters) {
            place.letters = l;
        }
    }
}

/// A compact letter display of `k` places (Piepho 2004, insert and absorb): two places
/// share a letter exactly when their pair is not told apart; `?` for a place with no
/// interval against any other.
fn letters(k: usize, pairs: &[Pair]) -> Vec<String> {
    let tested = |i: usize| {
        pairs
            .iter()
            .any(|p| (p.above == i || p.below == i) && p.test.is_some())
    };
    let members: Vec<usize> = (0..k).filter(|&i| tested(i)).collect();
    let mut columns: Vec<Vec<usize>> = vec![members.clone()];
    for p in pairs.iter().filter(|p| p.outcome == Outcome::Apart) {
        let mut next = Vec::new();
        for c in columns {
            if c.contains(&p.above) && c.contains(&p.below) {
                next.push(c.iter().copied().filter(|&i| i != p.above).collect());
                next.push(c.iter().copied().filter(|&i| i != p.below).collect());
            } else {
                next.push(c);
            }
        }
        // Absorb: a column inside another says nothing more.
        let mut kept: Vec<Vec<usize>> = Vec::new();
        for (i, c) in next.iter().enumerate() {
            let inside = next.iter().enumerate().any(|(j, d)| {
                j != i && c.iter().all(|x| d.contains(x)) && (c.len() < d.len() || j < i)
            });
            if !inside && !c.is_empty() {
                kept.push(c.clone());
            }
        }
        columns = kept;
    }
    // Letters in the order of the best place each column holds.
    columns.sort_by_key(|c| c.iter().copied().min());
    (0..k)
        .map(|i| {
            if !members.contains(&i) {
                return "?".to_string();
            }
            columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.contains(&i))
                .map(|(n, _)| letter(n))
                .collect()
        })
        .collect()
}

/// The `n`th letter: a…z, then A…Z, then `*`.
fn letter(n: usize) -> char {
    match n {
        0..=25 => (b'a' + n as u8) as char,
        26..=51 => (b'A' + (n - 26) as u8) as char,
        _ => '*',
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fixture;

#[cfg(test)]
pub(crate) mod memory_reference;

#[cfg(test)]
mod resolution_tests;
