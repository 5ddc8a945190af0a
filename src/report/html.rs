//! The HTML report: one self-contained file (inline CSS and SVG, no script, no font, no
//! network), readable on a phone (charts scale to the width, wide tables scroll) and
//! printable (no navigation, figures kept whole on a page).
//!
//! It opens with what a reader needs to judge the figures — the command that reproduces
//! the run, host and kernel, every target's mkfs and mount options, the policies and the
//! seed, failed trials, the meaning of each honesty mark — then, workload by workload and
//! phase by phase, the figures of [`crate::report::charts`], each chart above its table.

use crate::report::charts::{self, Table};
use crate::report::svg::esc;
use crate::report::terminal::MARKS;
use crate::result::RunResult;
use std::fmt::Write;

const CSS: &str = include_str!("report.css");

/// Quotes an argument for a POSIX shell when it needs it.
pub fn shell_quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn table(out: &mut String, t: &Table) {
    table_with(out, t, "figures");
}

fn table_with(out: &mut String, t: &Table, class: &str) {
    let _ = write!(
        out,
        "<div class=\"scroll\"><table class=\"{class}\"><thead><tr>"
    );
    for h in &t.head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            let _ = write!(out, "<{tag}>{}</{tag}>", esc(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn key_values(out: &mut String, rows: &[(&str, String)]) {
    out.push_str("<div class=\"scroll\"><table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    out.push_str("</tbody></table></div>");
}

/// An RFC 3339 time as people read it: `2026-11-23 02:34:31 UTC`.
fn when(t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t).map_or_else(
        |_| t.to_string(),
        |d| {
            d.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M:%S UTC")
                .to_string()
        },
    )
}

fn meaning(flag: &str) -> &'static str {
    MARKS
        .iter()
        .find(|(name, _, _)| *name == flag)
        .map_or("", |(_, _, m)| m)
}

fn setup(out: &mut String, run: &RunResult) {
    let cmd: Vec<String> = run.command_line.iter().map(|a| shell_quote(a)).collect();
    let _ = write!(
        out,
        "<section id=\"setup\"><h2>How this run was made</h2><p>Reproduce it with:</p><pre>{}</pre>",
        esc(&cmd.join(" "))
    );
    let h = &run.host;
    let p = &run.policy;
    let mut facts = vec![
        ("host", h.hostname.clone()),
        ("kernel", h.kernel.clone()),
        ("CPU", format!("{} ({} cores)", h.cpu_model, h.cores)),
        (
            "memory",
            format!("{:.1} GiB", h.mem_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("fsarena", run.fsarena_version.clone()),
        ("cache policy", p.cache.to_string()),
        ("sync policy", p.sync.to_string()),
        ("data written", p.data.to_string()),
        ("repetitions", p.reps.to_string()),
        ("seed", p.seed.to_string()),
        (
            "caches dropped",
            if run.can_drop_caches {
                "yes (root)".into()
            } else {
                "no (not root): cold figures are not cold".into()
            },
        ),
    ];
    if !run.left_out.is_empty() {
        facts.push((
            "left out (this machine cannot make them)",
            run.left_out.join("; "),
        ));
    }
    if let Some(line) = crate::result::resumed_line(run) {
        facts.push(("resumed", line));
    }
    let names = run.trials.iter().map(|t| t.workload.as_str());
    if let Some(line) = crate::result::classic_policy_line(names, p) {
        facts.push(("classic tools", line));
    }
    key_values(out, &facts);
    out.push_str("<h3>Targets</h3>");
    let mut t = Table {
        head: [
            "target",
            "filesystem",
            "kind",
            "size",
            "mkfs options",
            "mount options asked",
            "mount options in force",
            "device cold read",
            "notes",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for x in &run.targets {
        t.rows.push(vec![
            x.name.clone(),
            x.fstype.clone(),
            match x.loop_direct_io {
                Some(true) => format!("{} (direct I/O)", x.kind),
                Some(false) => format!("{} (buffered)", x.kind),
                None => x.kind.clone(),
            },
            format!("{} MiB", x.size_bytes >> 20),
            x.mkfs_opts.join(" "),
            x.requested_mount_opts.clone(),
            x.mount_opts.clone(),
            crate::report::terminal::device_cold_read(x).unwrap_or_else(|| "–".into()),
            x.notes.join("; "),
        ]);
    }
    table_with(out, &t, "targets");
    let _ = write!(
        out,
        "<p class=\"trials\">{}</p>",
        esc(&crate::report::terminal::trials_line(run))
    );
    let failed: Vec<_> = run.trials.iter().filter(|t| t.status != "ok").collect();
    if !failed.is_empty() {
        out.push_str("<h3>Trials that did not complete</h3><ul class=\"failed\">");
        for t in failed {
            let _ = write!(
                out,
                "<li>{} on {}, repetition {}: {} — {}</li>",
                esc(&t.label),
                esc(&t.target),
                t.rep,
                esc(&t.status),
                esc(t.error.as_deref().unwrap_or("no message"))
            );
        }
        out.push_str("</ul>");
    }
    let busy = crate::probe::disturb::busy_lines(run);
    if !busy.is_empty() {
        out.push_str("<h3>Busy trials (b): something competed with them</h3><ul class=\"failed\">");
        for l in busy {
            let _ = write!(out, "<li>{}</li>", esc(&l));
        }
        out.push_str("</ul>");
    }
    out.push_str("<h3>Reading the charts</h3><p>Bars are medians over the successful repetitions and start at zero. The thin whisker spans min–max over the repetitions, the thick grey band the 95% confidence interval of the mean (Student's t); with one repetition there is no interval. Latency charts use a logarithmic axis, and say so; a latency point is the median over the repetitions of each repetition's own percentile (histograms are not pooled across repetitions). Hover a mark for its figures.</p><dl class=\"marks\">");
    for (name, mark, m) in MARKS {
        let _ = write!(
            out,
            "<dt><span class=\"flag\">{}</span> {}</dt><dd>{}</dd>",
            esc(mark),
            esc(name),
            esc(m)
        );
    }
    out.push_str("</dl></section>");
}

/// The whole report as one HTML document.
/// The background of a verdict cell: white for the best, redder the more times worse
/// (log scale, full at 10×).
fn ratio_colour(ratio: f64) -> String {
    let t = (ratio.max(1.0).log10()).min(1.0);
    let g = (255.0 - 120.0 * t).round() as u8;
    format!("rgb(255,{g},{g})")
}

/// The answer first: a table of every workload phase (rows) by target (columns), each cell
/// the target's ratio to the phase's best (see [`crate::compare::rank`]), `=` when the
/// data cannot tell it from the best, each row linking to the phase's figures.
fn verdict(out: &mut String, run: &RunResult, all: &[charts::WorkloadFigures]) {
    use crate::compare::rank::{self, fmt_ratio};
    let verdicts = rank::verdicts(run);
    if verdicts.is_empty() {
        return;
    }
    let targets: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = write!(
        out,
        "<section id=\"verdict\"><h2>Verdict</h2><p>Each cell: how many times slower than the \
         phase's best target (the geometric mean of its repetitions), with the interval of that \
         ratio; <b>=</b> where the data cannot tell it from the best. Intervals are {:.0}% \
         family-wise per phase (Bonferroni).{}</p>",
        rank::FAMILY_LEVEL * 100.0,
        if verdicts.iter().any(|v| v.judged()) {
            ""
        } else {
            " One repetition: the ranking is by single values and no verdict can be given."
        }
    );
    out.push_str(
        "<div class=\"scroll\"><table class=\"verdict\"><thead><tr><th>phase</th><th>ranking</th>",
    );
    for t in &targets {
        let _ = write!(out, "<th>{}</th>", esc(t));
    }
    out.push_str("</tr></thead><tbody>");
    for v in &verdicts {
        let anchor = all.iter().enumerate().find_map(|(i, w)| {
            (w.workload == v.workload)
                .then(|| w.phases.iter().position(|p| p.phase == v.phase))
                .flatten()
                .map(|j| format!("#w{i}p{j}"))
        });
        let name = format!("{} · {} ({})", v.workload, v.phase, v.unit);
        let name = match anchor {
            Some(a) => format!("<a href=\"{a}\">{}</a>", esc(&name)),
            None => esc(&name),
        };
        let _ = write!(out, "<tr><th>{name}</th><td>{}</td>", esc(&v.ranking()));
        for t in &targets {
            let cell = match v.places.iter().position(|p| p.target == *t) {
                None => "<td>–</td>".to_string(),
                Some(0) => "<td class=\"best\"><b>best</b></td>".to_string(),
                Some(i) => {
                    let p = &v.places[i];
                    let Some(r) = p.vs_best else {
                        out.push_str("<td>?</td>");
                        continue;
                    };
                    let apart = r.significant() == Some(true);
                    let ci = r.ci.map_or(String::new(), |(lo, hi)| {
                        format!(
                            " [{}–{}]",
                            fmt_ratio(lo).trim_end_matches('×'),
                            fmt_ratio(hi)
                        )
                    });
                    format!(
                        "<td style=\"background:{}\">{}{}{}</td>",
                        if apart {
                            ratio_colour(r.ratio)
                        } else {
                            "#fff".into()
                        },
                        if apart { "" } else { "= " },
                        esc(&fmt_ratio(r.ratio)),
                        esc(&ci)
                    )
                }
            };
            out.push_str(&cell);
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></section>");
}

pub fn render(run: &RunResult) -> String {
    let all = charts::build(run);
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>fsarena run {id}</title><style>{CSS}</style></head><body><header><h1>fsarena run {id}</h1><p>{status} · started {start} · finished {end} · {n} trials on {t} targets</p></header>",
        id = esc(&run.run_id),
        status = esc(&run.status),
        start = esc(&when(&run.started_at)),
        end = esc(&run.finished_at.as_deref().map_or("never (interrupted)".into(), when)),
        n = run.trials.len(),
        t = run.targets.len(),
    );
    verdict(&mut out, run, &all);
    out.push_str("<nav><h2>Contents</h2><ul><li><a href=\"#verdict\">Verdict</a></li><li><a href=\"#setup\">How this run was made</a></li>");
    for (i, w) in all.iter().enumerate() {
        let _ = write!(out, "<li><a href=\"#w{i}\">{}</a>: ", esc(&w.workload));
        let links: Vec<String> = w
            .phases
            .iter()
            .enumerate()
            .map(|(j, p)| format!("<a href=\"#w{i}p{j}\">{}</a>", esc(&p.phase)))
            .collect();
        let _ = write!(out, "{}</li>", links.join(" · "));
    }
    out.push_str("</ul></nav><main>");
    setup(&mut out, run);
    for (i, w) in all.iter().enumerate() {
        let _ = write!(
            out,
            "<section id=\"w{i}\"><h2>{}</h2><p class=\"params\">{}</p>",
            esc(&w.workload),
            esc(&w.params)
        );
        let targets: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
        for (heading, t) in crate::report::ranks::rank_tables(run, &w.workload, &targets) {
            let _ = write!(out, "<p>{}</p>", esc(&heading));
            table(&mut out, &t);
        }
        for (j, p) in w.phases.iter().enumerate() {
            let _ = write!(
                out,
                "<h3 id=\"w{i}p{j}\">{} · {}</h3>",
                esc(&w.workload),
                esc(&p.phase)
            );
            if !p.flags.is_empty() {
                out.push_str("<ul class=\"flags\">");
                for (flag, targets) in &p.flags {
                    let _ = write!(
                        out,
                        "<li><span class=\"flag\">{}</span> on {}: {}</li>",
                        esc(flag),
                        esc(&targets.join(", ")),
                        esc(meaning(flag))
                    );
                }
                out.push_str("</ul>");
            }
            for f in &p.figures {
                let _ = write!(out, "<figure id=\"{}\">{}<figcaption>", esc(&f.slug), f.svg);
                table(&mut out, &f.table);
                out.push_str("</figcaption></figure>");
            }
        }
        out.push_str("</section>");
    }
    out.push_str("</main><footer>Made by fsarena from the stored run; figures are medians of the repetitions unless a table says otherwise.</footer></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_the_shell_would_split() {
        assert_eq!(shell_quote("bonnie:size=32MiB"), "bonnie:size=32MiB");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
