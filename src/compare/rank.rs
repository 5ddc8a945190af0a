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

use super::family::{Family, Outcome, Test, DEFAULT_MARGIN_PCT};
use super::verdict::Sense;
use super::welch::LogRatio;
use crate::result::{PhaseResult, RunResult};

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
}

/// The headline value of a phase: its `primary` figure.
fn headline(p: &PhaseResult) -> f64 {
    crate::report::procs::primary_value(p)
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
/// family ([`super::family`]) with the default equivalence margin; phases with fewer than
/// two targets are left out. A run whose targets ran on several kinds of machine (the
/// host's kernel, KVM guests, emulated guests: `plan` targets with `kernel = "…"` beside
/// others) has each kind ranked apart, never one against another
/// ([`crate::result::comparable`]), each verdict saying which it is `among`. Where two
/// persistent targets or more are ranked, a memory filesystem (tmpfs) beside them is not:
/// it is shown as a [`Reference`], so that the disks are ranked against each other rather
/// than each divided by a filesystem that keeps nothing across a reboot.
pub fn verdicts(run: &RunResult) -> Vec<PhaseVerdict> {
    verdicts_with(run, DEFAULT_MARGIN_PCT / 100.0)
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
            v.references = references.iter().filter_map(|s| reference(&v, s)).collect();
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

/// `side` as a reference beside verdict `v`: its geometric mean over the repetitions of
/// `v`'s phase and how many times faster than `v`'s best; `None` when it has no
/// repetition of that phase.
fn reference(v: &PhaseVerdict, side: &Side) -> Option<Reference> {
    let xs = headlines_of(side, &v.workload, &v.phase);
    if xs.is_empty() {
        return None;
    }
    let value = if usable(&xs) { geo_mean(&xs) } else { f64::NAN };
    let best = v.places.first().map_or(f64::NAN, |p| p.value);
    let higher = v.higher_better;
    let times = if higher { value / best } else { best / value };
    Some(Reference {
        target: side.label.clone(),
        value,
        n: xs.len(),
        vs_best: (times.is_finite() && times > 0.0).then_some(times),
    })
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
                    let unit = crate::report::terminal::unit_of(p);
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
        if let Some(v) = rank(&label, &phase, &unit, sense, &samples) {
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
    let higher = higher_better(sense);
    let mut ok: Vec<(&str, &[f64], f64)> = samples
        .iter()
        .filter(|(_, xs)| usable(xs))
        .map(|(t, xs)| (*t, xs.as_slice(), geo_mean(xs)))
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
    let worse_test = |better: &[f64], worse: &[f64]| -> Option<Test> {
        if higher {
            Test::of(worse, better)
        } else {
            Test::of(better, worse)
        }
    };
    let mut places: Vec<Place> = ok
        .iter()
        .map(|(target, xs, value)| Place {
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
                (Some(a), Some(b)) => worse_test(a.1, b.1),
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
    };
    settle(std::iter::once(&mut v), DEFAULT_MARGIN_PCT / 100.0);
    Some(v)
}

/// Judges `verdicts` as one family ([`super::family`]) with equivalence margin `margin`:
/// every pair's outcome, each place's ratio to the best with its interval at the family's
/// level, and the letters.
pub fn settle<'a>(verdicts: impl IntoIterator<Item = &'a mut PhaseVerdict>, margin: f64) {
    let mut all: Vec<&mut PhaseVerdict> = verdicts.into_iter().collect();
    let p: Vec<f64> = all
        .iter()
        .flat_map(|v| v.pairs.iter().filter_map(|x| x.test.map(|t| t.p())))
        .collect();
    let mut family = Family::control(&p, margin);
    let mut apart = 0;
    for v in &mut all {
        for pair in &mut v.pairs {
            pair.outcome = family.outcome(pair.test.as_ref());
            apart += usize::from(pair.outcome == Outcome::Apart);
        }
    }
    // The count as the intervals say it (the same as the procedure's but for rounding).
    family.apart = apart;
    for v in &mut all {
        v.family = family;
        let k = v.places.len();
        let vs_best: Vec<(usize, Outcome, LogRatio)> = v
            .pairs
            .iter()
            .filter(|x| x.above == 0)
            .map(|pair| {
                let r = LogRatio {
                    ratio: v.places_value_ratio(pair),
                    ci: pair.test.map(|t| t.interval(family.level)),
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
    fn places_value_ratio(&self, pair: &Pair) -> f64 {
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
            .map(|r| match r.vs_best {
                Some(x) if fmt_ratio(x) == "1.00×" => {
                    format!("{} same as {best} (1.00×)", r.target)
                }
                Some(x) if x >= 1.0 => format!("{} {} faster than {best}", r.target, fmt_ratio(x)),
                Some(x) => format!("{} {} slower than {best}", r.target, fmt_ratio(1.0 / x)),
                None => format!("{} no ratio", r.target),
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
        let margin = super::family::pct_text(self.family.margin * 100.0);
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
    use super::family::{detectable_log, reps_for, ALPHA};
    let m = verdicts.first()?.family.tests;
    if m == 0 {
        return None;
    }
    let alpha = ALPHA / m as f64;
    let settled = verdicts
        .iter()
        .filter(|v| {
            v.judged()
                && v.pairs
                    .iter()
                    .all(|p| matches!(p.outcome, Outcome::Apart | Outcome::Within))
        })
        .count();
    let open: Vec<&Test> = verdicts
        .iter()
        .flat_map(|v| &v.pairs)
        .filter(|p| p.outcome == Outcome::CannotTell)
        .filter_map(|p| p.test.as_ref())
        .collect();
    let margin = super::family::pct_text(verdicts[0].family.margin * 100.0);
    let mut line = format!(
        "Could tell: {settled} of {} phases settled (every pair told apart or within \
         ±{margin}%)",
        verdicts.len()
    );
    if open.is_empty() {
        line.push('.');
        return Some(line);
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let seen = median(
        open.iter()
            .map(|t| detectable_log(t.se, t.df, alpha).exp())
            .collect(),
    );
    let reps = median(
        open.iter()
            .map(|t| reps_for(t.var_a, t.var_b, 10.0, alpha).map_or(f64::INFINITY, |n| n as f64))
            .collect(),
    );
    let reps = match reps.is_finite() {
        true => format!("about {reps:.0} repetitions a target"),
        false => format!("more than {} repetitions", super::family::MAX_REPS_FOR),
    };
    line.push_str(&format!(
        "; the {} pairs that cannot tell could see, at the median, differences of {} or \
         more (80% power); telling 1.11× (10% slower) would take {reps}.",
        open.len(),
        fmt_ratio(seen)
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
    if let Some(v) = verdicts.first() {
        out.push_str(&wrap(
            &v.family.line("pairs of sides, all phases"),
            width,
            "",
        ));
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
                 disk) is shown beside each ranking as a reference, not ranked",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_too_wide_to_quote_are_not_printed_as_numbers() {
        assert_eq!(fmt_interval(5.1, 7.0), "[5.1–7.0×]");
        assert_eq!(fmt_interval(280.0, 340.0), "[280–340×]");
        assert_eq!(fmt_interval(0.0, 7.93e44), "[wider\u{a0}than\u{a0}10×]");
        assert_eq!(fmt_interval(0.02, 3215.0), "[wider\u{a0}than\u{a0}10×]");
        assert_eq!(fmt_interval(1.64, 1077.0), "[wider\u{a0}than\u{a0}10×]");
        assert_eq!(fmt_interval(0.5, 4.9), "[0.50–4.9×]");
    }

    fn v(samples: &[(&str, Vec<f64>)], sense: Sense) -> PhaseVerdict {
        rank("smallfiles", "create", "files/s", sense, samples).unwrap()
    }

    fn place<'a>(r: &'a PhaseVerdict, t: &str) -> &'a Place {
        r.places.iter().find(|p| p.target == t).unwrap()
    }

    #[test]
    fn a_clear_winner_is_apart_and_identical_targets_are_as_fast() {
        let s = [
            ("ext4", vec![1000.0, 1001.0, 999.0, 1000.5, 999.5]),
            ("tmpfs", vec![6000.0, 6100.0, 5900.0, 6050.0, 5950.0]),
            ("xfs", vec![1000.2, 1001.2, 998.5, 1000.0, 999.8]),
        ];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.places[0].target, "tmpfs");
        let ranking = r.ranking();
        assert!(
            ranking == "tmpfs(a) ext4(b) xfs(b)" || ranking == "tmpfs(a) xfs(b) ext4(b)",
            "{ranking}"
        );
        let ext4 = place(&r, "ext4");
        let vs = ext4.vs_best.unwrap();
        assert!((vs.ratio - 6.0).abs() < 0.1, "{vs:?}");
        let (lo, hi) = vs.ci.unwrap();
        assert!(lo > 1.0 && lo < vs.ratio && hi > vs.ratio);
        assert_eq!(ext4.vs_best_outcome, Some(Outcome::Apart));
        let (e, x) = (
            r.places.iter().position(|p| p.target == "ext4").unwrap(),
            r.places.iter().position(|p| p.target == "xfs").unwrap(),
        );
        assert_eq!(r.outcome(e, x), Some(Outcome::Within));
        assert_eq!((r.family.tests, r.family.apart), (3, 2));
    }

    #[test]
    fn for_a_time_lower_wins_and_the_ratio_is_still_times_slower() {
        let s = [("a", vec![2.0, 2.1, 1.9]), ("b", vec![1.0, 1.05, 0.95])];
        let r = v(&s, Sense::Duration);
        assert_eq!(r.ranking(), "b(a) a(b)");
        assert!((r.places[1].vs_best.unwrap().ratio - 2.0).abs() < 0.05);
        assert!(
            r.ratios()[0].starts_with("a 2.0× slower ["),
            "{:?}",
            r.ratios()
        );
    }

    #[test]
    fn one_repetition_orders_but_does_not_judge() {
        let s = [("a", vec![5.0]), ("b", vec![7.0])];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.ranking(), "b(?) a(?)");
        assert!(!r.judged());
        assert_eq!(r.ratios(), ["a cannot tell (1.40×, no interval)"]);
        let text = render(&[r], 1, 80);
        assert!(text.contains("no verdict can be given"), "{text}");
    }

    #[test]
    fn two_equal_repetitions_a_side_are_not_taken_as_certain() {
        // Issue 42: A=[100,100], B=[99,99] printed `A > B — B 1.01× slower [1.01–1.01×]`.
        let r = v(
            &[("a", vec![100.0, 100.0]), ("b", vec![99.0, 99.0])],
            Sense::Rate,
        );
        assert_eq!(r.ranking(), "a(?) b(?)");
        assert_eq!(r.ratios(), ["b cannot tell (1.01×, no interval)"]);
    }

    #[test]
    fn a_target_without_a_value_is_named_and_a_zero_ranks_last() {
        let s = [("a", vec![5.0, 5.1]), ("b", vec![]), ("c", vec![6.0, 6.2])];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.missing, ["b"]);
        let s = [
            ("a", vec![5.0, 5.1, 5.05]),
            ("z", vec![9.0, 0.0, 9.1]),
            ("c", vec![6.0, 6.2, 6.1]),
        ];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.places.last().unwrap().target, "z");
        assert!(r.missing.is_empty());
        assert_eq!(r.ratios()[1], "z no ratio (a repetition of 0)");
        assert!(r.ranking().ends_with("z(?)"), "{}", r.ranking());
        let s = [("a", vec![5.0, 5.1]), ("b", vec![0.0, 0.0])];
        assert!(rank("w", "p", "u", Sense::Rate, &s).is_some());
        let s = [("a", vec![5.0, 5.1]), ("b", vec![])];
        assert!(rank("w", "p", "u", Sense::Rate, &s).is_none());
    }

    /// Issue 42: A=[100,104,96,101,99], B=[97,101,93,98,96], C=[94,98,90,95,93] printed
    /// `A = B = C` while C's interval against A excluded 1. Letters say it truthfully.
    #[test]
    fn a_non_transitive_result_is_shown_with_letters() {
        let s = [
            ("A", vec![100.0, 104.0, 96.0, 101.0, 99.0]),
            ("B", vec![97.0, 101.0, 93.0, 98.0, 96.0]),
            ("C", vec![94.0, 98.0, 90.0, 95.0, 93.0]),
        ];
        let r = v(&s, Sense::Rate);
        let c = place(&r, "C");
        let apart = c.vs_best_outcome == Some(Outcome::Apart);
        let (lo, hi) = c.vs_best.unwrap().ci.unwrap();
        // Whatever the family decides, the words, the letters and the interval agree.
        assert_eq!(apart, lo > 1.0 || hi < 1.0);
        let share = |x: &str, y: &str| {
            let (a, b) = (&place(&r, x).letters, &place(&r, y).letters);
            a.chars().any(|ch| b.contains(ch))
        };
        assert_eq!(share("A", "C"), !apart);
        assert!(share("A", "B") && share("B", "C"), "{}", r.ranking());
        assert_eq!(r.ratios()[1].contains("slower"), apart, "{:?}", r.ratios());
    }

    #[test]
    fn letters_follow_the_pairs() {
        let pair = |above, below, apart: bool| Pair {
            above,
            below,
            test: Some(Test {
                d: 0.0,
                se: 1.0,
                df: 3.0,
                var_a: 1.0,
                var_b: 1.0,
            }),
            outcome: if apart {
                Outcome::Apart
            } else {
                Outcome::CannotTell
            },
        };
        // 0–2 apart, 0–3, 1–3 apart; the rest not.
        let pairs = [
            pair(0, 1, false),
            pair(0, 2, true),
            pair(0, 3, true),
            pair(1, 2, false),
            pair(1, 3, true),
            pair(2, 3, false),
        ];
        assert_eq!(letters(4, &pairs), ["a", "ab", "bc", "c"]);
        let none: Vec<Pair> = pairs
            .iter()
            .map(|p| pair(p.above, p.below, false))
            .collect();
        assert_eq!(letters(4, &none), ["a", "a", "a", "a"]);
        let all: Vec<Pair> = pairs.iter().map(|p| pair(p.above, p.below, true)).collect();
        assert_eq!(letters(4, &all), ["a", "b", "c", "d"]);
    }

    #[test]
    fn the_family_widens_with_more_targets() {
        let a = vec![100.0, 104.0, 97.0, 101.0];
        let b = vec![110.0, 114.0, 107.0, 111.0];
        let two = v(&[("a", a.clone()), ("b", b.clone())], Sense::Rate);
        let mut many = vec![("a", a), ("b", b)];
        for t in ["c", "d", "e", "f"] {
            many.push((t, vec![100.0, 104.0, 97.0, 101.0]));
        }
        let many = v(&many, Sense::Rate);
        let width = |r: &PhaseVerdict| {
            let p = r.places.iter().find(|p| p.target == "a").unwrap();
            let (lo, hi) = p.vs_best.unwrap().ci.unwrap();
            hi / lo
        };
        assert_eq!(many.family.tests, 15);
        assert!(width(&many) > width(&two));
    }

    #[test]
    fn lines_break_between_words_only() {
        let text = "smallfiles create (files/s): tmpfs(a) ext4(b) xfs(b) btrfs(c) 123456789.5";
        for w in [20, 40, 80] {
            let out = wrap(text, w, "  ");
            for word in text.split(' ') {
                assert!(out.contains(word), "{word} split at {w}: {out}");
            }
            for line in out.lines() {
                assert!(
                    line.chars().count() <= w || !line.trim().contains(' '),
                    "{line:?} over {w}"
                );
            }
        }
    }
}

#[cfg(test)]
mod fixture {
    #[test]
    fn the_fixture_run_has_a_verdict_for_every_phase() {
        let run: crate::result::RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap();
        let v = super::verdicts(&run);
        let text = super::render(&v, run.policy.reps, 80);
        println!("{text}");
        for t in &run.trials {
            for p in &t.phases {
                assert!(
                    v.iter().any(|v| v.workload == t.label && v.phase == p.name),
                    "{} {} has no verdict",
                    t.label,
                    p.name
                );
            }
        }
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(v.iter().all(|v| v.among.is_none()));
    }

    #[test]
    fn host_and_guest_targets_of_one_run_are_ranked_apart() {
        let mut run: crate::result::RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap();
        // The same figures again, as if measured in an emulated guest (a plan whose
        // targets name kernels beside targets that run on the host).
        let guest = crate::result::GuestInfo {
            kernel: "6.1.0-56-amd64".into(),
            accel: "tcg".into(),
            vcpus: 2,
            memory_bytes: 2 << 30,
            disk_cache: "none".into(),
        };
        for mut t in run.targets.clone() {
            t.name = format!("{}@6.1.0-56", t.name);
            t.guest = Some(guest.clone());
            run.targets.push(t);
        }
        for mut t in run.trials.clone() {
            t.target = format!("{}@6.1.0-56", t.target);
            run.trials.push(t);
        }
        let v = super::verdicts(&run);
        let host: Vec<_> = v
            .iter()
            .filter(|v| v.among.as_deref() == Some("on the host"))
            .collect();
        let tcg: Vec<_> = v
            .iter()
            .filter(|v| v.among.as_deref() == Some("in tcg guests"))
            .collect();
        assert_eq!(host.len() + tcg.len(), v.len());
        assert_eq!(host.len(), tcg.len());
        for v in &host {
            assert!(v.places.iter().all(|p| !p.target.contains('@')), "{v:?}");
        }
        for v in &tcg {
            assert!(
                v.places.iter().all(|p| p.target.ends_with("@6.1.0-56")),
                "{v:?}"
            );
        }
        let text = super::render(&v, run.policy.reps, 80);
        assert!(text.contains("postmark (on the host)\n"), "{text}");
        assert!(text.contains("postmark (in tcg guests)\n"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }
}

#[cfg(test)]
pub(crate) mod memory_reference {
    use crate::result::RunResult;

    fn fixture() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap()
    }

    /// The fixture (ext4 and tmpfs) with a second disk, `xfs`: ext4's trials again, half
    /// as fast.
    pub(crate) fn with_xfs() -> RunResult {
        let mut run = fixture();
        let mut t = run
            .targets
            .iter()
            .find(|t| t.name == "ext4")
            .unwrap()
            .clone();
        t.name = "xfs".into();
        t.fstype = "xfs".into();
        run.targets.push(t);
        let copies: Vec<_> = run
            .trials
            .iter()
            .filter(|t| t.target == "ext4")
            .cloned()
            .map(|mut t| {
                t.target = "xfs".into();
                for p in &mut t.phases {
                    p.mb_per_s /= 2.0;
                    p.ops_per_s /= 2.0;
                    p.wall_s *= 2.0;
                }
                t
            })
            .collect();
        run.trials.extend(copies);
        run
    }

    #[test]
    fn one_disk_beside_tmpfs_is_ranked_with_it() {
        let v = super::verdicts(&fixture());
        assert!(v.iter().all(|v| v.references.is_empty()));
        assert!(v
            .iter()
            .all(|v| v.places.iter().any(|p| p.target == "tmpfs")));
    }

    #[test]
    fn two_disks_are_ranked_among_themselves_and_tmpfs_is_their_reference() {
        let run = with_xfs();
        let v = super::verdicts(&run);
        assert!(!v.is_empty());
        for v in &v {
            let ranked: Vec<&str> = v.places.iter().map(|p| p.target.as_str()).collect();
            assert!(!ranked.contains(&"tmpfs"), "{ranked:?}");
            assert_eq!(v.references.len(), 1, "{} {}", v.workload, v.phase);
            let r = &v.references[0];
            assert_eq!(r.target, "tmpfs");
            // Against the best disk's geometric mean, in the phase's own sense.
            let best = &v.places[0];
            let want = if v.higher_better {
                r.value / best.value
            } else {
                best.value / r.value
            };
            if let Some(x) = r.vs_best {
                assert!((x - want).abs() < 1e-9 * want, "{x} {want}");
            }
        }
        // The family counts the pairs of disks only: one pair a phase.
        assert!(v.iter().all(|v| v.pairs.len() == 1));
        let text = super::render(&v, run.policy.reps, 80);
        assert!(text.contains("reference: tmpfs"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }
}

#[cfg(test)]
mod resolution_tests {
    use super::*;

    #[test]
    fn it_counts_settled_phases_and_states_what_the_open_pairs_could_see() {
        let apart = rank(
            "w",
            "fast",
            "MB/s",
            Sense::Rate,
            &[
                ("a", vec![100.0, 101.0, 99.0]),
                ("b", vec![50.0, 51.0, 49.0]),
            ],
        )
        .unwrap();
        let open = rank(
            "w",
            "noisy",
            "MB/s",
            Sense::Rate,
            &[
                ("a", vec![100.0, 80.0, 120.0]),
                ("b", vec![95.0, 70.0, 125.0]),
            ],
        )
        .unwrap();
        let mut vs = vec![apart, open];
        settle(vs.iter_mut(), 0.03);
        assert_eq!(vs[0].pairs[0].outcome, Outcome::Apart);
        assert_eq!(vs[1].pairs[0].outcome, Outcome::CannotTell);
        let line = resolution(&vs).unwrap();
        assert!(
            line.starts_with("Could tell: 1 of 2 phases settled"),
            "{line}"
        );
        // The open pair's figures, at the level 0.05/m for the family's m = 2 tests.
        let t = vs[1].pairs[0].test.as_ref().unwrap();
        let seen = fmt_ratio(super::super::family::detectable_log(t.se, t.df, 0.025).exp());
        assert!(
            line.contains(&format!("differences of {seen} or more")),
            "{line}"
        );
        let n = super::super::family::reps_for(t.var_a, t.var_b, 10.0, 0.025).unwrap();
        assert!(line.contains(&format!("about {n} repetitions")), "{line}");
        // One repetition: nothing tested, nothing to say.
        let one = rank(
            "w",
            "p",
            "MB/s",
            Sense::Rate,
            &[("a", vec![1.0]), ("b", vec![2.0])],
        );
        assert_eq!(resolution(&[one.unwrap()]), None);
    }
}
