//! `fsarena compare S1 S2 S3 …`: three sides or more ranked together, phase by phase, with
//! the engine of a run's verdict ([`super::rank`]): best first, each other side's ratio to
//! the best with its interval, letters shared by sides not told apart, and every pair of
//! sides of every phase and target one family ([`super::family`]).
//!
//! Sides are all whole runs, or `RUN:TARGET`s (a whole run among them stands for the
//! target the others name, or its only target). Whole runs are ranked target by target,
//! for each target name every run has (the others are named, not ranked); the same
//! filesystem across kernels, mount options, or before and after a change. Each side goes
//! by a short label: its run id's last part (`455e` of `20261123-023431-455e`) or its
//! target, with, in brackets, what sets it apart from the others (kernel, host, mount
//! options, …) when the sides differ in that.
//!
//! One side is the verdict of that run alone; two are [`super::compare`], metric by metric.

use super::rank::{self, PhaseVerdict, Side};
use super::{busy_trials, check_target, counterpart, parameter_differences, split_spec};
use crate::error::usage;
use crate::report::fit;
use crate::result::RunResult;
use crate::store::Store;
use anyhow::Result;

/// What `compare` prints for `sides` (one, two or more), and its exit status (the
/// `--fail-if-slower` gate's, [`super::gate::Outcome::code`]); `margin` is the equivalence
/// margin of the verdicts (0.03 for ±3%).
pub fn command(
    store: &Store,
    sides: &[String],
    fail_if_slower: Option<f64>,
    margin: f64,
    gate_phases: &[String],
) -> Result<(String, i32)> {
    if fail_if_slower.is_some() && sides.len() != 2 {
        return Err(usage(format!(
            "--fail-if-slower needs two sides to compare, A and B ({} given): it gates B \
             against A",
            sides.len()
        )));
    }
    match sides {
        [a, b] => super::command(store, a, b, fail_if_slower, margin, gate_phases),
        [run] => one_run(store, run, margin).map(|text| (text, crate::error::exit::OK)),
        _ => {
            let mut loaded = Vec::new();
            for spec in sides {
                let (run, target) = split_spec(spec)?;
                loaded.push((super::across::load(store, run)?, target.map(str::to_string)));
            }
            let given: Vec<(&str, &RunResult)> = sides
                .iter()
                .map(String::as_str)
                .zip(loaded.iter().map(|(r, _)| r))
                .collect();
            super::across::check_sides(&given, false)?;
            let width = fit::width();
            let mut text = String::new();
            for (spec, run) in &given {
                if let Some(line) = super::across::head(Some(spec), run) {
                    text.push_str(&rank::wrap(&line, width, ""));
                }
            }
            Ok((
                text + &render(&ranking(&loaded, margin)?, width),
                crate::error::exit::OK,
            ))
        }
    }
}

/// `compare RUN`: the run's targets ranked, as `run` ends.
fn one_run(store: &Store, spec: &str, margin: f64) -> Result<String> {
    if let (run, Some(_)) = split_spec(spec)? {
        return Err(usage(format!(
            "'{spec}' alone has nothing to be compared with: give two sides or more, or the \
             run alone ('{run}') to rank all its targets"
        )));
    }
    let run = super::across::load(store, spec)?;
    let verdicts = rank::verdicts_with(&run, margin);
    if verdicts.is_empty() {
        return Err(usage(format!(
            "run {} has no phase measured on two targets or more: nothing to rank",
            run.run_id
        )));
    }
    let head =
        super::across::head(None, &run).map_or(String::new(), |l| rank::wrap(&l, fit::width(), ""));
    Ok(head + &rank::render(&verdicts, run.policy.reps, fit::width()))
}

/// The sides ranked together: what to say about them, then one group of verdicts per
/// compared target.
#[derive(Clone, Debug)]
pub struct Ranking {
    /// One line per side (per run, for whole runs): its label, run, target(s), host,
    /// kernel, start and status.
    pub legend: Vec<String>,
    /// What differs between the runs besides their targets: `kernel (455e 6.18; 6b33 6.19)`.
    pub differ: Vec<String>,
    /// Targets not in every run, not ranked: `xfs (in 455e)`.
    pub not_common: Vec<String>,
    /// Parameters that differ, busy trials.
    pub warnings: Vec<String>,
    pub groups: Vec<Group>,
    /// The fewest repetitions a side's run planned (for the note when no verdict exists).
    pub reps: u32,
}

/// The verdicts on one target of several runs, or on the `RUN:TARGET` sides.
#[derive(Clone, Debug)]
pub struct Group {
    /// The target, for whole runs.
    pub target: Option<String>,
    /// Each side's label, in the order given.
    pub labels: Vec<String>,
    /// What differs in this target's set-up between the runs (mount or mkfs options).
    pub differ: Vec<String>,
    pub verdicts: Vec<PhaseVerdict>,
}

/// Ranks loaded sides, each a run and perhaps one of its targets (see the module docs).
/// Every pair of sides of every phase and target is one family, judged with equivalence
/// margin `margin` (0.03 for ±3%).
pub fn ranking(sides: &[(RunResult, Option<String>)], margin: f64) -> Result<Ranking> {
    let shorts = short_ids(sides);
    let runs: Vec<&RunResult> = sides.iter().map(|(r, _)| r).collect();
    let run_traits: Vec<Traits> = runs.iter().map(|r| run_traits(r)).collect();
    let mut r = Ranking {
        legend: Vec::new(),
        differ: differing(&run_traits, &shorts),
        not_common: Vec::new(),
        warnings: warnings(&runs, &shorts),
        groups: Vec::new(),
        reps: runs.iter().map(|r| r.policy.reps).min().unwrap_or(1),
    };
    if sides.iter().all(|(_, t)| t.is_none()) {
        by_target(&mut r, &runs, &shorts, &run_traits)?;
    } else {
        let targets = resolve_targets(sides)?;
        let named: Vec<(&RunResult, &str)> = runs
            .iter()
            .zip(&targets)
            .map(|(r, t)| (*r, t.as_str()))
            .collect();
        crate::result::refuse_mixed(&named)?;
        together(&mut r, &runs, &targets, &shorts, &run_traits);
    }
    rank::settle(
        r.groups.iter_mut().flat_map(|g| g.verdicts.iter_mut()),
        margin,
    );
    if r.groups.iter().all(|g| g.verdicts.is_empty()) {
        return Err(usage(
            "the sides have no workload phase measured by two of them or more: nothing to rank",
        ));
    }
    Ok(r)
}

/// Whole runs: one group per target name they all have.
fn by_target(
    r: &mut Ranking,
    runs: &[&RunResult],
    shorts: &[String],
    run_traits: &[Traits],
) -> Result<()> {
    let common = common_targets(runs, shorts, &mut r.not_common)?;
    for (i, (run, short)) in runs.iter().zip(shorts).enumerate() {
        if !runs[..i].iter().any(|x| x.run_id == run.run_id) {
            r.legend.push(super::render::side(short, run, &common));
        }
    }
    for t in common {
        let sides: Vec<(&RunResult, &str)> = runs.iter().map(|r| (*r, t)).collect();
        crate::result::refuse_mixed(&sides)?;
        let targets = vec![t.to_string(); runs.len()];
        let mut g = group(runs, &targets, shorts.to_vec(), run_traits, true);
        g.target = Some(t.to_string());
        r.groups.push(g);
    }
    Ok(())
}

/// `RUN:TARGET` sides: one group, each side named by its target (all of one run) or by
/// `RUN:TARGET`; the targets' options tell sides apart only when all are one filesystem.
fn together(
    r: &mut Ranking,
    runs: &[&RunResult],
    targets: &[String],
    shorts: &[String],
    run_traits: &[Traits],
) {
    let one_run = runs.iter().all(|x| x.run_id == runs[0].run_id);
    let base: Vec<String> = if one_run {
        targets.to_vec()
    } else {
        shorts
            .iter()
            .zip(targets)
            .map(|(s, t)| format!("{s}:{t}"))
            .collect()
    };
    let fs0 = fstype(runs[0], &targets[0]);
    let same_fs = runs.iter().zip(targets).all(|(x, t)| fstype(x, t) == fs0);
    let g = group(runs, targets, base, run_traits, same_fs);
    for ((run, t), label) in runs.iter().zip(targets).zip(&g.labels) {
        r.legend
            .push(super::render::side(label, run, &[t.as_str()]));
    }
    r.groups.push(g);
}

/// Each side's run id, shortened to its last part when those are distinct between runs.
fn short_ids(sides: &[(RunResult, Option<String>)]) -> Vec<String> {
    let last = |id: &str| id.rsplit('-').next().unwrap_or(id).to_string();
    let distinct = sides.iter().all(|(a, _)| {
        sides
            .iter()
            .all(|(b, _)| a.run_id == b.run_id || last(&a.run_id) != last(&b.run_id))
    });
    sides
        .iter()
        .map(|(r, _)| {
            if distinct {
                last(&r.run_id)
            } else {
                r.run_id.clone()
            }
        })
        .collect()
}

/// The target names every run has, in the first run's order; the others go to
/// `not_common` with the runs that have them.
fn common_targets<'a>(
    runs: &[&'a RunResult],
    shorts: &[String],
    not_common: &mut Vec<String>,
) -> Result<Vec<&'a str>> {
    let names: Vec<Vec<&'a str>> = runs.iter().map(|r| super::target_names(r)).collect();
    let common: Vec<&str> = names[0]
        .iter()
        .copied()
        .filter(|t| names.iter().all(|n| n.contains(t)))
        .collect();
    let mut all: Vec<&str> = Vec::new();
    for t in names.iter().flatten() {
        if !all.contains(t) && !common.contains(t) {
            all.push(t);
        }
    }
    for t in all {
        let runs_with: Vec<&str> = names
            .iter()
            .zip(shorts)
            .filter(|(n, _)| n.contains(&t))
            .map(|(_, s)| s.as_str())
            .collect();
        not_common.push(format!("{t} (in {})", runs_with.join(", ")));
    }
    if common.is_empty() {
        let each: Vec<String> = runs
            .iter()
            .zip(&names)
            .map(|(r, n)| format!("{} ({})", r.run_id, n.join(", ")))
            .collect();
        return Err(usage(format!(
            "the runs have no target name in common: {}; compare RUN:TARGET sides",
            each.join(", ")
        )));
    }
    Ok(common)
}

/// Each side's target: the one it names, or for a whole run, the target of the first
/// name given (or the run's only target).
fn resolve_targets(sides: &[(RunResult, Option<String>)]) -> Result<Vec<String>> {
    let named = sides
        .iter()
        .find_map(|(_, t)| t.clone())
        .unwrap_or_default();
    sides
        .iter()
        .map(|(run, t)| match t {
            Some(t) => check_target(run, t),
            None => counterpart(run, &named),
        })
        .collect()
}

fn fstype<'a>(run: &'a RunResult, target: &str) -> &'a str {
    run.targets
        .iter()
        .find(|t| t.name == target)
        .map_or("", |t| t.fstype.as_str())
}

/// What may set sides apart besides their data, as (what, value).
type Traits = Vec<(&'static str, String)>;

fn run_traits(run: &RunResult) -> Traits {
    vec![
        ("host", run.host.hostname.clone()),
        ("kernel", run.host.kernel.clone()),
        ("cpu", run.host.cpu_model.clone()),
        ("cache", run.policy.cache.to_string()),
        ("sync", run.policy.sync.to_string()),
        ("data", run.policy.data.to_string()),
        ("seed", run.policy.seed.to_string()),
        ("caches dropped", run.can_drop_caches.to_string()),
        ("fsarena", run.fsarena_version.clone()),
    ]
}

fn target_traits(run: &RunResult, target: &str) -> Traits {
    let info = run.targets.iter().find(|t| t.name == target);
    let or = |s: String, none: &str| if s.is_empty() { none.to_string() } else { s };
    vec![
        (
            "mount options",
            or(
                info.map(|t| t.requested_mount_opts.clone())
                    .unwrap_or_default(),
                "defaults",
            ),
        ),
        (
            "mkfs options",
            or(
                info.map(|t| t.mkfs_opts.join(" ")).unwrap_or_default(),
                "none",
            ),
        ),
    ]
}

/// The indices of the traits whose value is not the same for every side.
fn differing_at(traits: &[Traits]) -> Vec<usize> {
    (0..traits.first().map_or(0, Vec::len))
        .filter(|&i| traits.iter().any(|t| t[i].1 != traits[0][i].1))
        .collect()
}

/// The traits that differ, each with every side's value: `kernel (455e 6.18; 6b33 6.19)`.
fn differing(traits: &[Traits], labels: &[String]) -> Vec<String> {
    differing_at(traits)
        .into_iter()
        .map(|i| {
            let mut each: Vec<String> = Vec::new();
            for (t, l) in traits.iter().zip(labels) {
                let e = format!("{l} {}", t[i].1);
                if !each.contains(&e) {
                    each.push(e);
                }
            }
            format!("{} ({})", traits[0][i].0, each.join("; "))
        })
        .collect()
}

/// Each side's tag: the value of the first differing trait that tells every side apart on
/// its own, else of all differing traits, joined by commas; no-break spaces inside. A
/// suffix every value shares after a `-` (`-fc-v595` of kernels) is left out.
fn tags(traits: &[Traits]) -> Vec<String> {
    let apart = differing_at(traits);
    let values = |k: usize| -> Vec<String> {
        let vs: Vec<&str> = traits.iter().map(|t| t[k].1.as_str()).collect();
        let suffix = common_suffix(&vs);
        vs.iter()
            .map(|v| v[..v.len() - suffix].replace(' ', "\u{a0}"))
            .collect()
    };
    let unique = |vs: &[String]| vs.iter().enumerate().all(|(i, v)| !vs[..i].contains(v));
    if let Some(vs) = apart.iter().map(|&k| values(k)).find(|vs| unique(vs)) {
        return vs;
    }
    let each: Vec<Vec<String>> = apart.iter().map(|&k| values(k)).collect();
    (0..traits.len())
        .map(|i| {
            let v: Vec<&str> = each.iter().map(|vs| vs[i].as_str()).collect();
            v.join(",")
        })
        .collect()
}

/// The length of the suffix, starting at a `-`, that all of `vs` end with and none is only.
fn common_suffix(vs: &[&str]) -> usize {
    let Some(first) = vs.first() else {
        return 0;
    };
    first
        .match_indices('-')
        .map(|(i, _)| &first[i..])
        .find(|s| vs.iter().all(|v| v.ends_with(s) && v.len() > s.len()))
        .map_or(0, str::len)
}

/// The verdicts on `targets[i]` of `runs[i]`, each side labelled `base[i]` with, in
/// brackets, the values of the traits that set it apart ([`tags`]; the target's options
/// count too when `with_options`); a label given twice gets `#n`.
fn group(
    runs: &[&RunResult],
    targets: &[String],
    base: Vec<String>,
    run_traits: &[Traits],
    with_options: bool,
) -> Group {
    let options: Vec<Traits> = if with_options {
        runs.iter()
            .zip(targets)
            .map(|(r, t)| target_traits(r, t))
            .collect()
    } else {
        vec![Vec::new(); runs.len()]
    };
    // The target's options first: within a target, they are what one means to compare.
    let all: Vec<Traits> = options
        .iter()
        .zip(run_traits)
        .map(|(a, b)| a.iter().chain(b).cloned().collect())
        .collect();
    let mut labels: Vec<String> = Vec::new();
    for (i, (b, tags)) in base.iter().zip(tags(&all)).enumerate() {
        let mut l = if tags.is_empty() {
            b.clone()
        } else {
            format!("{b}[{tags}]")
        };
        if labels.contains(&l) {
            l = format!("{l}#{}", i + 1);
        }
        labels.push(l);
    }
    let sides: Vec<Side> = runs
        .iter()
        .zip(targets)
        .zip(&labels)
        .map(|((run, target), label)| Side {
            label: label.clone(),
            run,
            target: target.clone(),
        })
        .collect();
    Group {
        target: None,
        differ: differing(&options, &base),
        verdicts: rank::measure(&sides),
        labels,
    }
}

/// Workload parameters that differ from the first run's, and busy trials.
fn warnings(runs: &[&RunResult], shorts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (run, short)) in runs.iter().zip(shorts).enumerate() {
        if runs[..i].iter().any(|r| r.run_id == run.run_id) {
            continue;
        }
        if i > 0 {
            for w in parameter_differences(runs[0], run) {
                out.push(format!("{} vs {short}: {w}", shorts[0]));
            }
        }
        out.extend(busy_trials(short, run));
    }
    out
}

/// The ranking as text `width` columns wide: the sides, what differs between them, then
/// the verdict lines of [`rank::render`], under a heading per target for whole runs.
pub fn render(r: &Ranking, width: usize) -> String {
    let mut head = String::from("Sides, ranked together phase by phase:\n");
    for l in &r.legend {
        head.push_str(&format!("  {l}"));
    }
    if !r.differ.is_empty() {
        head.push_str(&format!("The runs differ in {}\n", r.differ.join(", ")));
    }
    if !r.not_common.is_empty() {
        head.push_str(&format!(
            "targets not in every run (not ranked): {}\n",
            r.not_common.join(", ")
        ));
    }
    for w in &r.warnings {
        head.push_str(&format!("warning: {w}\n"));
    }
    let all: Vec<PhaseVerdict> = r.groups.iter().flat_map(|g| g.verdicts.clone()).collect();
    let mut out = fit::wrap_text(&head, width, 4) + &rank::render_head(&all, r.reps, width);
    for g in &r.groups {
        if let Some(t) = &g.target {
            let mut line = format!("== target {t} ==");
            if g.verdicts.is_empty() {
                line.push_str(" no phase measured by two runs or more");
            }
            out.push_str(&rank::wrap(&line, width, ""));
            if !g.differ.is_empty() {
                let line = format!("The runs' {t} differ in {}", g.differ.join(", "));
                out.push_str(&rank::wrap(&line, width, ""));
            }
        }
        out.push_str(&rank::render_body(&g.verdicts, width));
    }
    out
}

#[cfg(test)]
mod tests;
