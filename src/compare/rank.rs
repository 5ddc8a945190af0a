//! The verdict of a run: for each workload's phases, its targets ranked by the phase's
//! headline figure, each with how many times worse than the best it is and the interval
//! of that ratio, and `=` between neighbours the data cannot tell apart.
//!
//! Method. For a phase measured on k targets, the best target is the one with the best
//! geometric mean of the headline figure over its repetitions. Each other target is
//! compared with the best, and each with its neighbour in the ranking: 2k − 3 Welch
//! intervals on log ratios ([`super::welch`]). To keep the chance of any false "faster"
//! in a phase at 5% (family-wise), each interval is taken at level 1 − 0.05/(2k − 3)
//! (Bonferroni). A neighbour whose interval contains 1 is written `=`; one whose
//! interval excludes 1 is written `>`. Ratios are stated as "n× slower" (how many times
//! the best's rate, or how many times the time), never as a lost percentage.

use super::verdict::Sense;
use super::welch::{log_ratio_at, LogRatio};
use crate::result::{PhaseResult, RunResult};

/// Family-wise level of each phase's comparisons.
pub const FAMILY_LEVEL: f64 = 0.95;

/// One target's place in a phase's ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub target: String,
    /// Geometric mean of the headline figure over the repetitions.
    pub value: f64,
    /// Repetitions it rests on.
    pub n: usize,
    /// How many times worse than the best (≥ 1; 1 for the best) and its interval; `None`
    /// for the best itself.
    pub vs_best: Option<LogRatio>,
    /// Whether it is told apart from the target ranked just above it (`>`); `None` for
    /// the best, or when no interval exists (one repetition).
    pub apart_from_above: Option<bool>,
}

/// The verdict on one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseVerdict {
    pub workload: String,
    pub phase: String,
    /// The headline figure's unit (`files/s`, `MB/s`, `s`).
    pub unit: String,
    /// Best first.
    pub places: Vec<Place>,
    /// Targets without a usable value (no successful trial, or a value of zero).
    pub missing: Vec<String>,
    /// Which of a run's kinds of machine its targets ran on (`on the host`, `in tcg
    /// guests`), when the run had several: they are ranked apart ([`verdicts`]).
    pub among: Option<String>,
}

/// The headline value of a phase: its `primary` figure.
fn headline(p: &PhaseResult) -> f64 {
    crate::report::ranks::primary_value(p)
}

/// The sense of a phase's headline: declared by its workload, else by its metric.
fn sense_of(workload: &str, p: &PhaseResult) -> Sense {
    match Sense::of(crate::figures::find(workload, &p.name, &p.primary)) {
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

/// The verdicts of every workload's phases, in the order the run ran them; phases with
/// fewer than two targets are left out. A run whose targets ran on several kinds of
/// machine (the host's kernel, KVM guests, emulated guests: `plan` targets with
/// `kernel = "…"` beside others) has each kind ranked apart, never one against another
/// ([`crate::guest::comparable`]), each verdict saying which it is `among`.
pub fn verdicts(run: &RunResult) -> Vec<PhaseVerdict> {
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
        for mut v in verdicts_of(&sides) {
            v.among = several.then(|| kind.clone());
            out.push(v);
        }
    }
    out
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

/// The verdicts of `sides` ranked together, phase by phase: each workload label × phase
/// that some side's run measured on its target, in the order the runs ran them (first
/// run first); phases with fewer than two sides with values are left out. Workloads are
/// matched across runs by label.
pub fn verdicts_of(sides: &[Side]) -> Vec<PhaseVerdict> {
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
            .map(|s| {
                let xs = s
                    .run
                    .trials
                    .iter()
                    .filter(|t| t.status == "ok" && t.label == label && t.target == s.target)
                    .flat_map(|t| t.phases.iter().filter(|p| p.name == phase))
                    .map(headline)
                    .collect();
                (s.label.as_str(), xs)
            })
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

/// Ranks the targets of one phase from their samples (see the module docs); `None` when
/// fewer than two targets have usable values.
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
    let missing: Vec<String> = samples
        .iter()
        .filter(|(_, xs)| !usable(xs))
        .map(|(t, _)| t.to_string())
        .collect();
    if ok.len() < 2 {
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
    let k = ok.len();
    let level = 1.0 - (1.0 - FAMILY_LEVEL) / (2 * k - 3) as f64;
    // "How many times worse" than `better`: better/worse for a rate, worse/better for a time.
    let worse_ratio = |better: &[f64], worse: &[f64]| -> Option<LogRatio> {
        if higher {
            log_ratio_at(worse, better, level)
        } else {
            log_ratio_at(better, worse, level)
        }
    };
    let best = ok[0].1;
    let places = ok
        .iter()
        .enumerate()
        .map(|(i, (target, xs, value))| Place {
            target: target.to_string(),
            value: *value,
            n: xs.len(),
            vs_best: (i > 0).then(|| worse_ratio(best, xs)).flatten(),
            apart_from_above: (i > 0)
                .then(|| worse_ratio(ok[i - 1].1, xs).and_then(|r| r.significant()))
                .flatten(),
        })
        .collect();
    Some(PhaseVerdict {
        workload: workload.to_string(),
        phase: phase.to_string(),
        unit: unit.to_string(),
        places,
        missing,
        among: None,
    })
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

/// An interval of ratios as read: `[5.1–7.0×]`; bounds beyond 0.01 and 10,000 are shown
/// as `<0.01` and `>10,000×` (two repetitions of seven targets give bounds like 10^40,
/// which say only that the data cannot tell).
pub fn fmt_interval(lo: f64, hi: f64) -> String {
    let lo = if lo < 0.01 {
        "<0.01".to_string()
    } else {
        fmt_ratio(lo).trim_end_matches('×').to_string()
    };
    let hi = if hi > 10_000.0 {
        ">10,000×".to_string()
    } else {
        fmt_ratio(hi)
    };
    format!("[{lo}–{hi}]")
}

impl PhaseVerdict {
    /// The ranking as a line of words: `tmpfs > ext4 = xfs > btrfs`; `?` between
    /// neighbours that one repetition cannot order.
    pub fn ranking(&self) -> String {
        let mut s = String::new();
        for (i, p) in self.places.iter().enumerate() {
            if i > 0 {
                s.push_str(match p.apart_from_above {
                    Some(true) => " > ",
                    Some(false) => " = ",
                    None => " ? ",
                });
            }
            s.push_str(&p.target);
        }
        s
    }

    /// Whether any interval exists (more than one repetition on the compared sides).
    pub fn judged(&self) -> bool {
        self.places.iter().any(|p| p.apart_from_above.is_some())
    }

    /// What each non-best target loses: `ext4 6.0× slower [5.1–7.0]`, one string each.
    pub fn ratios(&self) -> Vec<String> {
        self.places
            .iter()
            .skip(1)
            .filter_map(|p| {
                let r = p.vs_best?;
                let ci =
                    r.ci.map(|(lo, hi)| format!(" {}", fmt_interval(lo, hi)))
                        .unwrap_or_default();
                if r.ratio < 1.005 {
                    return Some(format!("{} as fast{ci}", p.target));
                }
                Some(format!("{} {} slower{ci}", p.target, fmt_ratio(r.ratio)))
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

/// What the verdict lines mean, and, when no interval exists anywhere, that `reps`
/// repetitions give no verdict.
pub fn render_head(verdicts: &[PhaseVerdict], reps: u32, width: usize) -> String {
    let mut out = String::new();
    let level = (FAMILY_LEVEL * 100.0).round();
    let head = format!(
        "Verdict: per phase, best first; `=` not told apart, `>` told apart; \
         n× slower than the best with its interval ({level}% family-wise per phase, \
         Bonferroni)"
    );
    out.push_str(&wrap(&head, width, ""));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_beyond_what_data_can_say_are_cut_to_bounds() {
        assert_eq!(fmt_interval(5.1, 7.0), "[5.1–7.0×]");
        assert_eq!(fmt_interval(280.0, 340.0), "[280–340×]");
        assert_eq!(fmt_interval(0.0, 7.93e44), "[<0.01–>10,000×]");
        assert_eq!(fmt_interval(0.02, 3215.0), "[0.02–3215×]");
    }

    fn v(samples: &[(&str, Vec<f64>)], sense: Sense) -> PhaseVerdict {
        rank("smallfiles", "create", "files/s", sense, samples).unwrap()
    }

    #[test]
    fn a_clear_winner_is_apart_and_identical_targets_are_equal() {
        let s = [
            ("ext4", vec![1000.0, 1010.0, 990.0, 1005.0, 995.0]),
            ("tmpfs", vec![6000.0, 6100.0, 5900.0, 6050.0, 5950.0]),
            ("xfs", vec![1002.0, 1012.0, 985.0, 1000.0, 998.0]),
        ];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.places[0].target, "tmpfs");
        let ranking = r.ranking();
        assert!(
            ranking == "tmpfs > ext4 = xfs" || ranking == "tmpfs > xfs = ext4",
            "{ranking}"
        );
        let ext4 = r.places.iter().find(|p| p.target == "ext4").unwrap();
        let vs = ext4.vs_best.unwrap();
        assert!((vs.ratio - 6.0).abs() < 0.1, "{vs:?}");
        let (lo, hi) = vs.ci.unwrap();
        assert!(lo > 1.0 && lo < vs.ratio && hi > vs.ratio);
    }

    #[test]
    fn for_a_time_lower_wins_and_the_ratio_is_still_times_slower() {
        let s = [("a", vec![2.0, 2.1, 1.9]), ("b", vec![1.0, 1.05, 0.95])];
        let r = v(&s, Sense::Duration);
        assert_eq!(r.ranking(), "b > a");
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
        assert_eq!(r.ranking(), "b ? a");
        assert!(!r.judged());
        let text = render(&[r], 1, 80);
        assert!(text.contains("no verdict can be given"), "{text}");
    }

    #[test]
    fn a_target_without_a_value_is_named_and_one_alone_gets_no_verdict() {
        let s = [("a", vec![5.0, 5.1]), ("b", vec![]), ("c", vec![6.0, 6.2])];
        let r = v(&s, Sense::Rate);
        assert_eq!(r.missing, ["b"]);
        let s = [("a", vec![5.0, 5.1]), ("b", vec![0.0, 0.0])];
        assert!(rank("w", "p", "u", Sense::Rate, &s).is_none());
    }

    #[test]
    fn the_family_level_widens_with_more_targets() {
        let a = vec![100.0, 104.0, 97.0, 101.0];
        let b = vec![110.0, 114.0, 107.0, 111.0];
        let two = v(&[("a", a.clone()), ("b", b.clone())], Sense::Rate);
        let mut many = vec![("a", a), ("b", b)];
        for t in ["c", "d", "e", "f"] {
            many.push((t, vec![50.0, 52.0, 49.0, 51.0]));
        }
        let many = v(&many, Sense::Rate);
        let width = |r: &PhaseVerdict| {
            let p = r.places.iter().find(|p| p.target == "a").unwrap();
            let (lo, hi) = p.vs_best.unwrap().ci.unwrap();
            hi / lo
        };
        assert!(width(&many) > width(&two));
    }

    #[test]
    fn lines_break_between_words_only() {
        let text = "smallfiles create (files/s): tmpfs > ext4 = xfs > btrfs 123456789.5";
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
