//! Terminal tables: one per workload, rows = targets, columns = phases; each cell is the
//! median of the phase's headline figure over the repetitions, its spread (coefficient of
//! variation), CPU% and honesty marks.

use crate::result::{PhaseResult, RunResult};
use crate::stats::Summary;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, ContentArrangement, Table};
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
        "cache suspect: too few bytes came from the device, or the read beat its rate",
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

/// The unit of a phase's headline figure.
pub fn unit_of(p: &PhaseResult) -> String {
    if p.primary == "mb_per_s" {
        "MB/s".into()
    } else if p.primary == "wall_s" {
        "s".into()
    } else if p.ops_unit.is_empty() {
        "ops/s".into()
    } else {
        p.ops_unit.clone()
    }
}

/// A table as reports draw them, fitted to the terminal. A terminal that reports almost
/// no width (the pseudo-terminal mpirun gives its ranks says 0 columns) gets 120, so
/// that the table is not squeezed to a character per line.
pub fn new_table() -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if table.width().is_some_and(|w| w < 40) {
        table.set_width(120);
    }
    table
}

/// The workload-specific figures of workload `w` ([`PhaseResult::extra`]): one row per
/// phase and figure with its declared unit, one column per target, medians over the
/// repetitions.
fn extra_table(run: &RunResult, w: &str, targets: &[&str]) -> Option<Table> {
    let mut rows: Vec<(&str, &str)> = Vec::new();
    for t in run.trials.iter().filter(|t| t.label == w) {
        for p in &t.phases {
            for k in p
                .extra
                .keys()
                .filter(|k| !crate::report::ranks::is_rank_figure(k))
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
    let mut table = new_table();
    let mut header = vec![Cell::new("phase: figure")];
    header.extend(targets.iter().map(Cell::new));
    table.set_header(header);
    for (phase, key) in rows {
        let unit = run
            .summaries
            .iter()
            .find(|s| s.workload == w && s.phase == phase && s.metric == key)
            .map_or("?", |s| s.unit.as_str());
        let mut row = vec![Cell::new(format!("{phase}: {key} ({unit})"))];
        for target in targets {
            row.push(Cell::new(
                find(&run.summaries, target, w, phase, key).map_or_else(
                    || "-".to_string(),
                    |s| {
                        let spread = s.stats.cv.map(|cv| format!(" ±{:.1}%", cv * 100.0));
                        format!("{}{}", fmt_num(s.stats.median), spread.unwrap_or_default())
                    },
                ),
            ));
        }
        table.add_row(row);
    }
    Some(table)
}

/// Renders every workload's table, then the legend of marks used.
pub fn render(run: &RunResult) -> String {
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
    if let Some(line) = crate::result::resumed_line(run) {
        let _ = writeln!(out, "{line}");
    }
    let names = run.trials.iter().map(|t| t.workload.as_str());
    if let Some(line) = crate::result::classic_policy_line(names, &run.policy) {
        let _ = writeln!(out, "{line}");
    }
    let mut used_marks: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for t in &run.trials {
        if !workloads.contains(&t.label.as_str()) {
            workloads.push(&t.label);
        }
    }
    for w in workloads {
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
        let targets = &targets;
        let params = trials.first().map(|t| {
            t.params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let _ = writeln!(out, "\n{w}  ({})", params.unwrap_or_default());
        let mut table = new_table();
        let mut header = vec![Cell::new("target")];
        header.extend(
            phases
                .iter()
                .map(|ph| Cell::new(format!("{}\n{}", ph.name, unit_of(ph)))),
        );
        table.set_header(header);
        for &target in targets {
            let ok = trials
                .iter()
                .filter(|t| t.target == target && t.status == "ok")
                .count();
            let all = trials.iter().filter(|t| t.target == target).count();
            let label = if ok == all {
                target.to_string()
            } else {
                format!("{target}\n{ok}/{all} ok")
            };
            let mut row = vec![Cell::new(label)];
            for ph in &phases {
                let Some(s) = find(&run.summaries, target, w, &ph.name, &ph.primary) else {
                    row.push(Cell::new("failed"));
                    continue;
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
                let spread = s
                    .stats
                    .cv
                    .map(|cv| format!(" ±{:.1}%", cv * 100.0))
                    .unwrap_or_default();
                let cpu = find(&run.summaries, target, w, &ph.name, "cpu_pct")
                    .map(|c| format!("cpu {:.0}%", c.stats.median))
                    .unwrap_or_default();
                let sep = if marks.is_empty() { "" } else { " " };
                row.push(Cell::new(format!(
                    "{}{spread}{sep}{marks}\n{cpu}",
                    fmt_num(s.stats.median)
                )));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}");
        if let Some(extra) = extra_table(run, w, targets) {
            let _ = writeln!(out, "{extra}");
        }
        for table in crate::report::ranks::tables(run, w, targets) {
            let _ = writeln!(out, "{table}");
        }
    }
    let _ = writeln!(
        out,
        "\nmedian of {} repetition(s); ± is the coefficient of variation; MB = 10^6 bytes",
        run.policy.reps
    );
    for (flag, mark, text) in MARKS {
        if used_marks.contains(flag) {
            let _ = writeln!(out, "  {mark}  {text}");
        }
    }
    for t in &run.targets {
        let dev = t
            .device_read_mb_per_s
            .map(|r| format!(", device cold read {} MB/s", fmt_num(r)))
            .unwrap_or_else(|| match t.kind.as_str() {
                "loop" | "device" => ", device cold read rate not measured".into(),
                _ => String::new(),
            });
        let dio = match t.loop_direct_io {
            Some(true) => ", loop direct-io on",
            Some(false) => ", loop direct-io OFF (host page cache under the device)",
            None => "",
        };
        let _ = writeln!(
            out,
            "  target {} ({}): mkfs [{}] mount [{}]{dev}{dio}",
            t.name,
            t.kind,
            t.mkfs_opts.join(" "),
            t.mount_opts
        );
    }
    let verdicts = crate::compare::rank::verdicts(run);
    let width = crate::compare::rank::terminal_width();
    if let Some(decided) = &run.policy.auto_reps {
        out.push('\n');
        for line in &decided.outcome {
            let text = line.trim_start();
            let indent = &line[..line.len() - text.len()];
            out.push_str(&crate::compare::rank::wrap(text, width, indent));
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
    out.push_str(&failure_summary(run));
    out.push_str(&busy_summary(run));
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
