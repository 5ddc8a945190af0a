//! Whether an `io500` trial met the IO500's rules, as far as fsarena can check them, and
//! the figures it records: each phase's IO500 figure (`io500_figure`: GiB/s or kIOPS),
//! the scores and `official` (1/0) on the last phase, and one `unofficial_*` note (= 1)
//! per broken rule, each also said to the user.
//!
//! The rules (io500.org "Submission Rules", and the io500 binary's own checks in
//! `src/main.c` and `src/phase_find.c`), and what is checked here:
//! * each write phase runs at least 300 s — stonewall 300 (rule 2.1; `main.c` marks a
//!   phase shorter than the stonewall or the 300 s minimum INVALID): `stonewall_below_300`
//!   when a stonewall parameter is under 300 s, `write_phase_short` when a write phase
//!   ran under 300 s (its budget or the free space ran out first);
//! * no phase scores 0 (`main.c`), find finds something (`phase_find.c`):
//!   `zero_score`, `find_found_nothing`;
//! * all data on persistent storage within each phase's measured time (rule 6):
//!   `not_synced` under `--sync none`, `not_persistent` on tmpfs;
//! * data written in its entirety, not reduced (rule 7): `data_reducible` unless
//!   `--data random`;
//! * reads from what the storage holds, not the client's cache: the rules ask reads from
//!   another client node (rule 2); with a single client the Student Cluster Competition
//!   rules ask to drop caches before every phase. fsarena cannot tell how many nodes its
//!   ranks run on, so it asks for the cache drop always: `caches_kept` unless
//!   `--cache cold` with the rights to drop caches.
//!
//! Not checkable here, and not claimed: rule 1 (the official io500 binary — this is an
//! implementation of its phases, so "official" means "met the conditions above").

use super::score::{self, Scores};
use super::{group, Io500, OFFICIAL_STONEWALL_S, PHASES};
use crate::context::TrialContext;
use crate::policy::{CachePolicy, DataPolicy, SyncPolicy};
use crate::result::{PhaseResult, RankTrial};

/// The phases that the stonewall applies to.
const WRITES: [&str; 4] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
];

/// Records the figures, the scores and the verdict (see the module docs); `reached` are
/// the transfers or files all tasks of this rank wrote in the four write phases, `found`
/// find's matches.
pub fn record(cx: &mut TrialContext, cfg: &Io500, reached: [u64; 4], found: u64) {
    let mut figures = Vec::new();
    for spec in PHASES {
        let Some(p) = cx.phases().iter().rev().find(|p| p.name == spec.name) else {
            continue;
        };
        let g = group(spec.name);
        let x = score::figure(p, g);
        figures.push((g, x));
        cx.note_phase(spec.name, "io500_figure", x);
    }
    for (name, n) in WRITES.iter().zip(reached) {
        cx.note_phase(name, "reached", n as f64);
    }
    cx.note_phase("find", "find_matched", found as f64);
    let s = score::scores(&figures);
    let reasons = reasons(cx, cfg, &figures, found);
    let last = PHASES[PHASES.len() - 1].name;
    let Scores {
        bw_gib_s,
        md_kiops,
        total,
    } = s;
    cx.note_phase(last, "score_bw_gib_s", bw_gib_s);
    cx.note_phase(last, "score_md_kiops", md_kiops);
    cx.note_phase(last, "score_total", total);
    cx.note_phase(last, "official", reasons.is_empty() as u8 as f64);
    for (key, why) in &reasons {
        cx.note_phase(last, &format!("unofficial_{key}"), 1.0);
        cx.message(format!("io500: not official: {why}"));
    }
    cx.message(format!(
        "io500: BW {bw_gib_s:.4} GiB/s, MD {md_kiops:.4} kIOPS, score {total:.4}{}",
        if reasons.is_empty() {
            ""
        } else {
            " [not official]"
        }
    ));
}

/// The rules this trial broke: (note key, explanation).
pub(super) fn reasons(
    cx: &TrialContext,
    cfg: &Io500,
    figures: &[(score::Group, f64)],
    found: u64,
) -> Vec<(&'static str, String)> {
    let mut r = Vec::new();
    let min_wall = cfg
        .walls
        .iter()
        .map(|w| w.as_secs_f64())
        .fold(f64::INFINITY, f64::min);
    if min_wall < OFFICIAL_STONEWALL_S {
        r.push((
            "stonewall_below_300",
            format!("a write phase's stonewall is {min_wall} s; the rules ask 300 s"),
        ));
    }
    let short: Vec<String> = cx
        .phases()
        .iter()
        .filter(|p| WRITES.contains(&p.name.as_str()) && p.wall_s < OFFICIAL_STONEWALL_S)
        .map(|p| format!("{} {:.1} s", p.name, p.wall_s))
        .collect();
    if !short.is_empty() {
        r.push((
            "write_phase_short",
            format!("write phases ran under 300 s ({})", short.join(", ")),
        ));
    }
    if figures.len() < PHASES.len() || figures.iter().any(|(_, x)| *x <= 0.0) {
        r.push(("zero_score", "a phase scored 0 or did not run".to_string()));
    }
    if found == 0 {
        r.push(("find_found_nothing", "find matched no file".to_string()));
    }
    let policy = cx.policy();
    if policy.sync == SyncPolicy::None {
        r.push((
            "not_synced",
            "--sync none: data need not be persistent when a phase ends (rule 6)".to_string(),
        ));
    }
    if cx.target_info().kind == "tmpfs" {
        r.push((
            "not_persistent",
            "tmpfs is not persistent storage (rule 6)".to_string(),
        ));
    }
    if policy.data != DataPolicy::Random {
        r.push((
            "data_reducible",
            "written data is compressible, not --data random (rule 7)".to_string(),
        ));
    }
    if policy.cache != CachePolicy::Cold || !cx.can_drop_caches() {
        r.push((
            "caches_kept",
            "caches were not dropped before every phase (--cache cold as root); a single \
             client must drop them"
                .to_string(),
        ));
    }
    r
}

/// Under MPI, after the ranks' phases were merged: the figures, scores and verdict of the
/// aggregate phases, recomputed from them, since each rank noted its own share (the
/// generic merge averages notes). `io500_figure` from the aggregate bytes or operations
/// and wall time (the slowest rank's, as IOR computes its aggregate); `reached` and
/// `find_matched` summed over the ranks; `official` only when every rank's trial was and
/// every aggregate phase scored. A trial that stopped before the last phase keeps no
/// scores.
pub fn rescore_merged(phases: &mut [PhaseResult], ranks: &[RankTrial]) {
    let sum = |phase: &str, key: &str| -> f64 {
        ranks
            .iter()
            .filter_map(|r| r.phases.iter().find(|p| p.name == phase))
            .filter_map(|p| p.extra.get(key))
            .sum()
    };
    let mut figures = Vec::new();
    for spec in PHASES {
        let Some(p) = phases.iter_mut().find(|p| p.name == spec.name) else {
            continue;
        };
        let g = group(spec.name);
        let x = score::figure(p, g);
        figures.push((g, x));
        p.extra.insert("io500_figure".into(), x);
        for key in ["reached", "find_matched"] {
            if p.extra.contains_key(key) {
                p.extra.insert(key.into(), sum(spec.name, key));
            }
        }
    }
    let last = PHASES[PHASES.len() - 1].name;
    // The ranks split find's shared directories: one may match nothing while the run
    // found plenty, so "found nothing" is judged on the sum.
    const NOTHING: &str = "unofficial_find_found_nothing";
    let every_rank_official = ranks.iter().all(|r| {
        r.phases.iter().find(|p| p.name == last).is_some_and(|p| {
            p.extra.get("official") == Some(&1.0)
                || p.extra
                    .iter()
                    .filter(|(k, v)| k.starts_with("unofficial_") && **v > 0.0)
                    .all(|(k, _)| k == NOTHING)
        })
    });
    let found_something = sum("find", "find_matched") > 0.0;
    let all_scored = figures.len() == PHASES.len() && figures.iter().all(|(_, x)| *x > 0.0);
    let Some(p) = phases.iter_mut().find(|p| p.name == last) else {
        return;
    };
    let s = score::scores(&figures);
    p.extra.insert("score_bw_gib_s".into(), s.bw_gib_s);
    p.extra.insert("score_md_kiops".into(), s.md_kiops);
    p.extra.insert("score_total".into(), s.total);
    // Set or cleared from the merged figures: a rank's own flag, averaged by the merge
    // with the others', must not survive positive aggregate figures.
    if all_scored {
        p.extra.remove("unofficial_zero_score");
    } else {
        p.extra.insert("unofficial_zero_score".into(), 1.0);
    }
    if found_something {
        p.extra.remove(NOTHING);
    } else {
        p.extra.insert(NOTHING.into(), 1.0);
    }
    let official = every_rank_official && all_scored && found_something;
    p.extra
        .insert("official".into(), f64::from(u8::from(official)));
}
