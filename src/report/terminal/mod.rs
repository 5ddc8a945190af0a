//! Terminal tables: one per workload, rows = targets, columns = phases; each cell is the
//! median of the phase's headline figure over the repetitions, its spread (coefficient of
//! variation), CPU% and honesty marks.

use super::fit::{self, Grid};

mod work;
pub use crate::result::unit_of;
use crate::result::{PhaseResult, RunResult};
use crate::stats::Summary;
use std::fmt::Write;

/// Marks printed next to figures, with their meaning.
pub const MARKS: &[(&str, &str, &str)] = &[
    (
        "noisy",
        "~",
        "noisy: coefficient of variation over 5% across repetitions",
    ),
    (
        "short",
        "s",
        "short: phase took under 0.1 s; timed to the ns, but treat with care",
    ),
    (
        "not-synced",
        "n",
        "not synced: --sync none, data may still be in the page cache",
    ),
    (
        "cache-suspect",
        "c",
        "cache suspect: the device's counters show it delivered under 90% of the bytes \
         read (half for a phase in ops/s, e.g. seeks; not judged for compressible data), \
         or an MB/s read beat 1.2× the faster of the device's cold read rates (direct, \
         buffered) without the counters showing the device delivered 90% of its bytes",
    ),
    (
        "cold-unverifiable",
        "u",
        "cold not verifiable: no device counters or rate to check it (tmpfs, no block device)",
    ),
    (
        "cache-not-dropped",
        "d",
        "caches could not be dropped (not root): 'cold' is not cold",
    ),
    (
        "warm",
        "w",
        "warm: the phase ran unmeasured first (--cache warm, or a job's ramp)",
    ),
    (
        "busy",
        "b",
        "busy: another fsarena run, or others' CPU or I/O, competed (listed below)",
    ),
    (
        crate::stats::FAILED_TRIAL,
        "f",
        "failed trial: no repetition completed; measured before the trial stopped",
    ),
    (
        "emulated",
        "e",
        "emulated: measured in a guest under QEMU's emulation (tcg); compare only with \
         targets of the same guest: relative order at best, not absolute speed",
    ),
];

fn find<'a>(
    s: &'a [Summary],
    target: &str,
    workload: &str,
    phase: &str,
    metric: &str,
) -> Option<&'a Summary> {
    s.iter().find(|x| {
        x.target == target && x.workload == workload && x.phase == phase && x.metric == metric
    })
}

/// The device's calibrated cold read rates in human units, each named by how it read
/// (`715 MB/s direct, 2.00 GB/s buffered`); `None` when neither was measured.
pub fn device_cold_read(t: &crate::result::TargetInfo) -> Option<String> {
    let rate = |r: Option<f64>, how: &str| {
        r.map(|r| format!("{}\u{a0}{how}", super::human::value(r, "MB/s")))
    };
    let rates: Vec<String> = [
        rate(t.device_read_mb_per_s, "direct"),
        rate(t.device_buffered_read_mb_per_s, "buffered"),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!rates.is_empty()).then(|| rates.join(", "))
}

/// Formats a figure with 4 significant digits at most, without exponent noise.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A figure's median with its spread (`56639 ±15.4%`); `-` when not measured.
fn median_cell(s: Option<&Summary>, show: impl Fn(f64) -> String) -> String {
    s.map_or_else(
        || "-".to_string(),
        |s| {
            let spread = s.stats.cv.map(|cv| format!(" ±{:.1}%", cv * 100.0));
            format!("{}{}", show(s.stats.median), spread.unwrap_or_default())
        },
    )
}

/// The workload-specific figures of workload `w` ([`PhaseResult::extra`]): one row per
/// phase and figure, one column per target, medians over the repetitions in human units
/// ([`super::human`]).
fn extra_grid(run: &RunResult, w: &str, targets: &[&str]) -> Option<Grid> {
    let mut rows: Vec<(&str, &str)> = Vec::new();
    for t in run.trials.iter().filter(|t| t.label == w) {
        for p in &t.phases {
            for k in p
                .extra
                .keys()
                .filter(|k| !crate::report::procs::is_proc_figure(k))
            {
                if !rows.contains(&(p.name.as_str(), k.as_str())) {
                    rows.push((&p.name, k));
                }
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut head = vec!["phase: figure".to_string()];
    head.extend(targets.iter().map(|t| t.to_string()));
    let mut grid = Grid::new(head, 1);
    grid.right = std::iter::once(false)
        .chain(targets.iter().map(|_| true))
        .collect();
    for (phase, key) in rows {
        let unit = run
            .summaries
            .iter()
            .find(|s| s.workload == w && s.phase == phase && s.metric == key)
            .map_or("?", |s| s.unit.as_str());
        let mut row = vec![format!("{phase}: {key}")];
        for target in targets {
            let s = find(&run.summaries, target, w, phase, key);
            row.push(median_cell(s, |v| super::human::value(v, unit)));
        }
        grid.rows.push(row);
    }
    Some(grid)
}

/// Renders every workload's tables fitted to the terminal ([`fit::width`]), then the
/// legend of marks used.
pub fn render(run: &RunResult) -> String {
    render_width(run, fit::width())
}

/// The figures of one workload: targets as rows and phases as columns, or transposed
/// (phases as rows) when that fits `width` in fewer tables or lines.
fn workload_tables(
    run: &RunResult,
    w: &str,
    width: usize,
    used_marks: &mut Vec<&'static str>,
) -> String {
    let trials: Vec<_> = run.trials.iter().filter(|t| t.label == w).collect();
    let mut phases: Vec<&PhaseResult> = Vec::new();
    for t in &trials {
        for ph in &t.phases {
            if !phases.iter().any(|x| x.name == ph.name) {
                phases.push(ph);
            }
        }
    }
    let mut targets: Vec<&str> = Vec::new();
    for t in &trials {
        if !targets.contains(&t.target.as_str()) {
            targets.push(&t.target);
        }
    }
    let mut head = vec!["target".to_string()];
    head.extend(
        phases
            .iter()
            .map(|ph| format!("{}\n{}", ph.name, unit_of(ph))),
    );
    let mut grid = Grid::new(head, 1);
    for &target in &targets {
        let ok = trials
            .iter()
            .filter(|t| t.target == target && t.status == "ok")
            .count();
        let reps = (run.policy.reps as usize).max(ok);
        let mut row = vec![if ok == reps {
            target.to_string()
        } else {
            format!("{target}\n{ok} of {reps} ok")
        }];
        for ph in &phases {
            row.push(phase_cell(run, target, w, ph, used_marks));
        }
        grid.rows.push(row);
    }
    let normal = fit::parts(&grid, width);
    let flipped = fit::parts(&grid.transposed("phase"), width);
    let size = |p: &[String]| (p.len(), p.iter().map(|t| t.lines().count()).sum::<usize>());
    let mut out = if size(&flipped) < size(&normal) {
        flipped
    } else {
        normal
    }
    .join("\n");
    if let Some(extra) = extra_grid(run, w, &targets) {
        out.push('\n');
        out.push_str(&fit::render(&extra, width));
    }
    if let Some(work) = work::grid(run, w, &targets) {
        out.push('\n');
        out.push_str(&fit::render(&work, width));
        for note in work::unmeasured(run, &targets) {
            out.push('\n');
            out.push_str(crate::compare::rank::wrap(&note, width, "").trim_end());
        }
    }
    for table in crate::report::procs::tables(run, w, &targets, width) {
        out.push('\n');
        out.push_str(&table);
    }
    out
}

/// One phase's headline on one target: median, spread and marks, and its CPU share when
/// the phase lasted long enough to sample it ([`CPU_MIN_S`]).
fn phase_cell(
    run: &RunResult,
    target: &str,
    w: &str,
    ph: &PhaseResult,
    used_marks: &mut Vec<&'static str>,
) -> String {
    // With no successful repetition, the phases the failed ones finished, marked `f`.
    let incomplete;
    let (s, summaries) = match find(&run.summaries, target, w, &ph.name, &ph.primary) {
        Some(s) => (s, &run.summaries),
        None => {
            incomplete =
                crate::stats::incomplete_summaries(&run.trials, crate::workload::figures_of);
            let Some(s) = find(&incomplete, target, w, &ph.name, &ph.primary) else {
                let mut mine = run
                    .trials
                    .iter()
                    .filter(|t| t.target == target && t.label == w);
                return if mine.all(|t| t.status == "interrupted") {
                    "interrupted".into()
                } else {
                    "failed".into()
                };
            };
            (s, &incomplete)
        }
    };
    let mut marks = String::new();
    for (flag, mark, _) in MARKS {
        let has = if *flag == "noisy" {
            s.noisy
        } else {
            s.flags.iter().any(|f| f == flag)
        };
        if has {
            marks.push_str(mark);
            if !used_marks.contains(flag) {
                used_marks.push(flag);
            }
        }
    }
    let sep = if marks.is_empty() { "" } else { " " };
    let wall = find(summaries, target, w, &ph.name, "wall_s").map(|s| s.stats.median);
    let cpu = find(summaries, target, w, &ph.name, "cpu_pct")
        .filter(|_| wall.is_some_and(|s| s >= CPU_MIN_S))
        .map(|c| format!("\ncpu\u{a0}{:.0}%", c.stats.median))
        .unwrap_or_default();
    format!("{}{sep}{marks}{cpu}", median_cell(Some(s), fmt_num))
}

/// Phases shorter than this (median wall time) show no CPU share: getrusage's CPU time
/// advances in scheduler ticks (1–10 ms), too coarse to share out a few milliseconds.
pub const CPU_MIN_S: f64 = crate::context::SHORT_PHASE_S;

/// [`render`] at `width` columns.
pub fn render_width(run: &RunResult, width: usize) -> String {
    let mut out = String::new();
    let p = &run.policy;
    let _ = writeln!(
        out,
        "fsarena {} run {}: cache={} sync={} data={} reps={} seed={}{}",
        run.fsarena_version,
        run.run_id,
        p.cache,
        p.sync,
        p.data,
        p.reps,
        p.seed,
        if run.can_drop_caches {
            ""
        } else {
            " (not root: caches not dropped)"
        }
    );
    let _ = writeln!(
        out,
        "host {} · kernel {} · {} · {} cores",
        run.host.hostname, run.host.kernel, run.host.cpu_model, run.host.cores
    );
    if let Some(line) = crate::result::left_out_line(&run.left_out) {
        let _ = writeln!(out, "{line}");
    }
    // What the run said before it started (`fio: …`), one line each.
    for line in &run.notes {
        let _ = writeln!(out, "{line}");
    }
    for line in crate::result::guest_lines(&run.targets) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = crate::result::resumed_line(run) {
        let _ = writeln!(out, "{line}");
    }
    let names = run.trials.iter().map(|t| t.workload.as_str());
    if let Some(line) = crate::workload::classic_policy_line(names, &run.policy) {
        let _ = writeln!(out, "{line}");
    }
    let mut used_marks: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for t in &run.trials {
        if !workloads.contains(&t.label.as_str()) {
            workloads.push(&t.label);
        }
    }
    let mut out = fit::wrap_text(&out, width, 2);
    for w in workloads {
        let params = run
            .trials
            .iter()
            .find(|t| t.label == w)
            .map(crate::workload::applied_params);
        let heading = format!("{w}  ({})", params.unwrap_or_default());
        let _ = writeln!(out, "\n{}", fit::wrap(&heading, width, 4));
        let _ = writeln!(out, "{}", workload_tables(run, w, width, &mut used_marks));
    }
    let mut notes = String::new();
    let _ = writeln!(notes, "\n{}", trials_line(run));
    let _ = writeln!(
        notes,
        "each cell: median over the successful repetitions, ± the coefficient of variation; \
         cpu not shown for phases under {CPU_MIN_S}\u{a0}s; MB:\u{a0}10^6\u{a0}bytes, MiB:\u{a0}2^20"
    );
    for (flag, mark, text) in MARKS {
        if used_marks.contains(flag) {
            let _ = writeln!(notes, "  {mark}  {text}");
        }
    }
    for t in &run.targets {
        let dev = device_cold_read(t)
            .map(|r| format!(", device cold read {r}"))
            .unwrap_or_else(|| match t.kind.as_str() {
                "loop" | "device" => ", device cold read rate not measured".into(),
                _ => String::new(),
            });
        let dio = match t.loop_direct_io {
            Some(true) => ", loop direct-io on",
            Some(false) => ", loop direct-io OFF (host page cache under the device)",
            None => "",
        };
        let guest = t
            .guest
            .as_ref()
            .map(|g| format!(", in {}", g.label()))
            .unwrap_or_default();
        let _ = writeln!(
            notes,
            "  target {} ({}): mkfs [{}] mount [{}]{dev}{dio}{guest}",
            t.name,
            t.kind,
            t.mkfs_opts.join(" "),
            t.mount_opts
        );
        if let Some(s) = crate::report::aging::of_target(run, t) {
            let done = crate::report::aging::done_text(&s);
            let _ = writeln!(notes, "     {done}");
            if let Some(frag) = crate::report::aging::fragmentation_text(s.aging) {
                let _ = writeln!(notes, "     {frag}");
            }
        }
        // A loop image's notes say why it is not as usual (buffered, not preallocated); a
        // served target's, what its figures include.
        if t.kind == "loop" || t.kind == "served" {
            for note in &t.notes {
                let _ = writeln!(notes, "     {note}");
            }
        }
    }
    for line in crate::report::engines::lines(run) {
        let _ = writeln!(notes, "  engine of {line}");
    }
    notes.push_str(&failure_summary(run));
    notes.push_str(&busy_summary(run));
    let mut out = out + &fit::wrap_text(&notes, width, 5);
    let verdicts = crate::compare::rank::verdicts(run);
    if let Some(decided) = &run.policy.auto_reps {
        out.push('\n');
        for (i, line) in crate::stats::precision::summary(decided, run)
            .iter()
            .enumerate()
        {
            let indent = if i == 0 { "" } else { "  " };
            out.push_str(&crate::compare::rank::wrap(line, width, indent));
        }
    }
    if !verdicts.is_empty() {
        out.push('\n');
    }
    out.push_str(&crate::compare::rank::render(
        &verdicts,
        run.policy.reps,
        width,
    ));
    let aged = crate::compare::aging::aged_vs_fresh(&verdicts, &run.targets);
    let margin = verdicts.first().map_or(0.03, |v| v.family.margin);
    out.push_str(&crate::compare::aging::render(&aged, margin, width));
    out.push_str(&crate::report::crash::render(run, width));
    let agreement = crate::compare::proxy::agreement(&verdicts);
    out.push_str(&crate::compare::proxy::render(&agreement, width));
    out
}

/// The busy trials (mark `b`), each with what competed with it, one reason a line (they
/// fit 80 columns but for long image directory paths); empty when none was busy.
pub fn busy_summary(run: &RunResult) -> String {
    let busy: Vec<_> = crate::probe::disturb::busy_trials(run).collect();
    if busy.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{} of {} trial(s) were busy (b):\n",
        busy.len(),
        run.trials.len()
    );
    for (trial, d) in busy {
        let _ = writeln!(out, "  {trial}:");
        for part in d.parts() {
            let _ = writeln!(out, "    {part}");
        }
    }
    out
}

/// How many trials were planned, succeeded, failed and never started (`8 trials: 6 ok,
/// 1 failed, 1 interrupted, 0 never started`).
pub fn trials_line(run: &RunResult) -> String {
    let count = |s: &str| run.trials.iter().filter(|t| t.status == s).count();
    let ok = count("ok");
    let interrupted = count("interrupted");
    let failed = run.trials.len() - ok - interrupted;
    let planned = run
        .planned_trials
        .map_or(run.trials.len(), |p| (p as usize).max(run.trials.len()));
    let mut parts = vec![format!("{ok} ok")];
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    if interrupted > 0 {
        parts.push(format!("{interrupted} interrupted"));
    }
    let never = planned - run.trials.len();
    if never > 0 || run.status == "interrupted" {
        parts.push(format!("{never} never started"));
    }
    format!(
        "{planned} trial(s) planned ({} repetition(s) of each workload on each target): {}",
        run.policy.reps,
        parts.join(", ")
    )
}

/// The failed and interrupted trials, one line each (target, workload, repetition,
/// cause) under a heading that counts them; empty when every trial succeeded.
pub fn failure_summary(run: &RunResult) -> String {
    let failed: Vec<_> = run.trials.iter().filter(|t| t.status != "ok").collect();
    if failed.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{} of {} trial(s) did not succeed:\n",
        failed.len(),
        run.trials.len()
    );
    for t in failed {
        let _ = writeln!(
            out,
            "  {} {} rep {}: {}: {}",
            t.target,
            t.label,
            t.rep,
            t.status,
            t.error.as_deref().unwrap_or("(no cause recorded)")
        );
    }
    out
}

#[cfg(test)]
mod tests;
