//! The HTML report: one self-contained file (inline CSS and SVG, no script, no font, no
//! network), readable on a phone (charts scale to the width, wide tables scroll) and
//! printable (no navigation, figures kept whole on a page).
//!
//! It opens with what a reader needs to judge the figures — the command that reproduces
//! the run, host and kernel, every target's mkfs and mount options, the policies and the
//! seed, failed trials, the meaning of each honesty mark — after the verdict that answers
//! first ([`crate::report::overview`]). Then, workload by workload and phase by phase, the
//! headline chart of [`crate::report::charts`] above its table, and folded in `<details>`
//! the rest: latency percentiles, the other metrics as one table ([`crate::report::more`]),
//! throughput over time. Every metric's own chart stays available as a file
//! (`fsarena report --svg/--png`).

use crate::report::charts::{self, Kind, Table};
use crate::report::svg::esc;
use crate::report::terminal::MARKS;
use crate::result::RunResult;
use std::fmt::Write;

const CSS: &str = include_str!("report.css");
const SVG_CSS: &str = crate::report::svg::CSS;

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
    let guests = crate::result::guest_lines(&run.targets);
    if !guests.is_empty() {
        facts.push(("guest kernels", guests.join("; ")));
    }
    if let Some(line) = crate::result::resumed_line(run) {
        facts.push(("resumed", line));
    }
    let names = run.trials.iter().map(|t| t.workload.as_str());
    if let Some(line) = crate::workload::classic_policy_line(names, p) {
        facts.push(("classic tools", line));
    }
    key_values(out, &facts);
    if !run.notes.is_empty() {
        // What the run said before it started: an fio job file's mapping and policies.
        out.push_str("<h3>Notes</h3><ul class=\"notes\">");
        for n in &run.notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>");
    }
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
            "aged",
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
            match (x.loop_direct_io, &x.guest) {
                (Some(true), None) => format!("{} (direct I/O)", x.kind),
                (Some(false), None) => format!("{} (buffered)", x.kind),
                (None, None) => x.kind.clone(),
                (_, Some(g)) => format!("{} in {}", x.kind, g.label()),
            },
            format!("{} MiB", x.size_bytes >> 20),
            x.mkfs_opts.join(" "),
            x.requested_mount_opts.clone(),
            x.mount_opts.clone(),
            crate::report::terminal::device_cold_read(x).unwrap_or_else(|| "–".into()),
            match crate::report::aging::of_target(run, x) {
                Some(s) => {
                    let done = crate::report::aging::done_text(&s);
                    match crate::report::aging::fragmentation_text(s.aging) {
                        Some(f) => format!("{done}; {f}"),
                        None => done,
                    }
                }
                None if matches!(x.kind.as_str(), "loop" | "device") => "no: fresh from mkfs".into(),
                None => "–".into(),
            },
            x.notes.join("; "),
        ]);
    }
    table_with(out, &t, "targets");
    let engines = crate::report::engines::lines(run);
    if !engines.is_empty() {
        out.push_str("<h3>Database engines</h3><ul class=\"engines\">");
        for line in engines {
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>");
    }
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
    out.push_str("<h3 id=\"marks\">Reading the charts</h3><p>Bars are medians over the successful repetitions and start at zero. The thin whisker spans min–max over the repetitions, the thick grey band the 95% confidence interval of the mean (Student's t); with one repetition there is no interval. Each phase shows its headline figure; its latency percentiles, its other metrics (wall time, CPU, write amplification, dirty bytes, device counters, the workload's own figures) and its throughput over time are folded beneath it: click to open. A latency percentile is the median over the repetitions of each repetition's own percentile (histograms are not pooled across repetitions), with their min–max; here as tables, and as charts on a logarithmic axis (labelled so) in <code>fsarena report --svg DIR</code>, which also draws every other metric. The table beneath each chart gives its figures.</p><dl class=\"marks\">");
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

/// A chart with its table beneath it.
fn figure(out: &mut String, f: &charts::Figure) {
    let _ = write!(out, "<figure id=\"{}\">{}<figcaption>", esc(&f.slug), f.svg);
    table(out, &f.table);
    out.push_str("</figcaption></figure>");
}

/// A phase's honesty flags with the targets concerned, in a line; what each flag means is
/// said once, in the legend of the marks, which the line links to.
fn flags(out: &mut String, flags: &[(String, Vec<String>)]) {
    if flags.is_empty() {
        return;
    }
    out.push_str("<ul class=\"flags\">");
    for (flag, targets) in flags {
        let _ = write!(
            out,
            "<li><span class=\"flag\">{}</span> on {}</li>",
            esc(flag),
            esc(&targets.join(", ")),
        );
    }
    out.push_str("<li><a href=\"#marks\">what the flags mean</a></li></ul>");
}

/// One phase: its honesty flags, the headline chart and table in view, then folded
/// (`<details>`) the latency percentiles, the other metrics as one table and the
/// throughput over time.
fn phase(out: &mut String, w: &charts::WorkloadFigures, p: &charts::PhaseFigures, id: &str) {
    let _ = write!(
        out,
        "<h3 id=\"{id}\">{} · {}</h3>",
        esc(&w.workload),
        esc(&p.phase)
    );
    flags(out, &p.flags);
    let of = |k: Kind| p.figures.iter().filter(move |f| f.kind == k);
    for f in of(Kind::Headline) {
        figure(out, f);
    }
    // Latency as its table only: the chart on a log axis would draw the same twenty
    // figures again; it is written by `fsarena report --svg/--png`.
    for f in of(Kind::Latency) {
        let _ = write!(
            out,
            "<details id=\"{}\"><summary>Latency percentiles</summary>",
            esc(&f.slug)
        );
        table(out, &f.table);
        out.push_str("</details>");
    }
    if !p.more.rows.is_empty() {
        // The metrics' names, without the units some rows carry.
        let names: Vec<&str> = (p.more.rows.iter())
            .map(|r| {
                let name = r[0].split(" (").next().unwrap_or_default();
                name.trim_end_matches([' ', '↑', '↓'])
            })
            .collect();
        let _ = write!(
            out,
            "<details><summary>More figures: {}</summary><p>Medians over the repetitions \
             ± their coefficient of variation; ↑ higher is better, ↓ lower is better.</p>",
            esc(&names.join(", "))
        );
        table_with(out, &p.more, "figures more");
        out.push_str("</details>");
    }
    for f in of(Kind::Series) {
        out.push_str("<details><summary>Throughput over time</summary>");
        figure(out, f);
        out.push_str("</details>");
    }
}

/// `report --html FILE` and `run --html PATH`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "html",
    export: None,
    report: Some(
        "One self-contained HTML file (no script, font or network): the verdict first, each \
         cell linked to its phase; the setup; then per workload and phase the headline's \
         zero-based bar chart with min-max and 95% CI whiskers above its table, and folded \
         beneath it the latency percentiles, the other metrics and the throughput over time",
    ),
    run: Some(super::AfterRun {
        help: "Write the HTML report of the run to PATH (as `fsarena report RUN --html PATH`)",
        stored: true,
        says: true,
    }),
    writes: super::Writes::Bytes(document),
};

/// [`render`] as bytes.
fn document(run: &RunResult) -> anyhow::Result<Vec<u8>> {
    Ok(render(run).into_bytes())
}

/// The whole report as one HTML document.
pub fn render(run: &RunResult) -> String {
    let all = charts::build(run);
    let mut out = String::with_capacity(1 << 18);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>fsarena run {id}</title><style>{CSS}{SVG_CSS}</style></head><body><header><h1>fsarena run {id}</h1><p>{status} · started {start} · finished {end} · {n} trials on {t} targets</p></header>",
        id = esc(&run.run_id),
        status = esc(&run.status),
        start = esc(&when(&run.started_at)),
        end = esc(&run.finished_at.as_deref().map_or("never (interrupted)".into(), when)),
        n = run.trials.len(),
        t = run.targets.len(),
    );
    crate::report::overview::section(&mut out, run, &all);
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
        for (heading, t) in crate::report::procs::proc_tables(run, &w.workload, &targets) {
            let _ = write!(out, "<p>{}</p>", esc(&heading));
            table(&mut out, &t);
        }
        for (j, p) in w.phases.iter().enumerate() {
            phase(&mut out, w, p, &format!("w{i}p{j}"));
        }
        out.push_str("</section>");
    }
    // Predictions (`--price-on`), apart from the measurements, as the terminal shows them.
    let priced = crate::price::render_width(run, 100);
    if !priced.is_empty() {
        let _ = write!(out, "<section id=\"predictions\"><h2>Predicted on device profiles, not measured</h2><pre>{}</pre></section>", esc(&priced));
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
