//! The answer that opens the HTML report: a table of every workload phase (rows) by target
//! (columns), each cell the target's ratio to the phase's best with its interval
//! ([`crate::compare::rank`], the engine `run`, `show` and `compare` use), coloured by
//! that ratio where the run's family told it apart, `≈` within the equivalence margin, `?`
//! where the data cannot tell, and every cell a link to the phase's figures further down.

use crate::compare::family::Outcome;
use crate::compare::rank::{self, fmt_ratio, PhaseVerdict};
use crate::report::charts::WorkloadFigures;
use crate::report::svg::esc;
use crate::result::RunResult;
use std::fmt::Write;

/// The background of a verdict cell: white for the best, redder the more times worse
/// (log scale, full at 10×).
fn ratio_colour(ratio: f64) -> String {
    let t = (ratio.max(1.0).log10()).min(1.0);
    let g = (255.0 - 120.0 * t).round() as u8;
    format!("rgb(255,{g},{g})")
}

/// The anchor of the figures of `phase` of `workload`: `#w{i}p{j}` as [`super::html`]
/// numbers the sections.
pub fn anchor(all: &[WorkloadFigures], workload: &str, phase: &str) -> Option<String> {
    all.iter().enumerate().find_map(|(i, w)| {
        (w.workload == workload)
            .then(|| w.phases.iter().position(|p| p.phase == phase))
            .flatten()
            .map(|j| format!("#w{i}p{j}"))
    })
}

/// One target's cell of a phase's row, its text linked to `href`: shaded only where the
/// family told it apart from the best, `≈` within the equivalence margin, `?` where the
/// data cannot tell — the outcomes the terminal's words and letters read too.
fn cell(v: &PhaseVerdict, target: &str, href: Option<&str>) -> String {
    let link = |text: String| match href {
        Some(h) => format!("<a href=\"{h}\">{text}</a>"),
        None => text,
    };
    match v.places.iter().position(|p| p.target == target) {
        None => match v.references.iter().find(|r| r.target == target) {
            // A memory reference: its ratio to the best disk, never shaded (not ranked).
            Some(r) => {
                let shown = |(a, b): (f64, f64)| format!(" {}", rank::fmt_interval(a, b));
                let text = match r.vs_best {
                    Some(x) if x >= 1.0 => format!(
                        "{} faster{}",
                        fmt_ratio(x),
                        r.interval.map(shown).unwrap_or_default()
                    ),
                    Some(x) => format!(
                        "{} slower{}",
                        fmt_ratio(1.0 / x),
                        r.interval
                            .map(|(a, b)| shown((1.0 / b, 1.0 / a)))
                            .unwrap_or_default()
                    ),
                    None => "no ratio".into(),
                };
                format!(
                    "<td class=\"reference\">{}</td>",
                    link(format!("{}<br><small>reference</small>", esc(&text)))
                )
            }
            None => "<td>–</td>".to_string(),
        },
        Some(0) => format!("<td class=\"best\">{}</td>", link("<b>best</b>".into())),
        Some(i) => {
            let place = &v.places[i];
            if let Some(flaw) = &place.flaw {
                return format!("<td>{}</td>", link(format!("no ratio ({})", esc(flaw))));
            }
            let Some(r) = place.vs_best else {
                return format!("<td>{}</td>", link("?".into()));
            };
            // The interval under the ratio, smaller, so that four targets fit a screen.
            let ci = r.ci.map_or(String::new(), |(lo, hi)| {
                format!("<br><small>{}</small>", esc(&rank::fmt_interval(lo, hi)))
            });
            match place.vs_best_outcome {
                Some(Outcome::Apart) => format!(
                    "<td style=\"background:{}\">{}</td>",
                    ratio_colour(r.ratio),
                    link(format!("{}{ci}", esc(&fmt_ratio(r.ratio))))
                ),
                Some(Outcome::Within) => format!(
                    "<td>{}</td>",
                    link(format!("≈ {}{ci}", esc(&fmt_ratio(r.ratio))))
                ),
                _ => format!(
                    "<td>{}</td>",
                    link(format!("? {}{ci}", esc(&fmt_ratio(r.ratio))))
                ),
            }
        }
    }
}

/// The verdict section; nothing when no phase has two targets to rank.
pub fn section(out: &mut String, run: &RunResult, all: &[WorkloadFigures]) {
    let verdicts = rank::verdicts(run);
    if verdicts.is_empty() {
        // One target: nothing to rank, but a power cut's cost is still its own.
        let mut lines = String::new();
        power_cut(&mut lines, run);
        if !lines.is_empty() {
            let _ = write!(
                out,
                "<section id=\"power-cut\"><h2>Power cuts</h2>{lines}</section>"
            );
        }
        return;
    }
    let targets: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = write!(
        out,
        "<section id=\"verdict\"><h2>Verdict</h2><p>Each cell: how many times slower than the \
         phase's best target (the geometric mean of its repetitions), with the interval of that \
         ratio; shaded redder the slower where the difference is told apart, <b>≈</b> where \
         it is within ±{}% of the best, <b>?</b> where the data cannot tell. In the ranking, \
         targets that share a letter are not told apart. {} A cell links to the phase's \
         figures.{}{}{}{}</p>",
        crate::compare::family::pct_text(verdicts[0].family.margin * 100.0),
        esc(&verdicts[0].family.line("pairs of targets, all phases")),
        if verdicts.iter().any(|v| !v.references.is_empty()) {
            " Persistent filesystems are ranked among themselves; a memory filesystem \
             (tmpfs) is a <b>reference</b>: how many times faster or slower than the \
             phase's best, not ranked."
        } else {
            ""
        },
        verdicts
            .iter()
            .find_map(|v| v.work.first())
            .map_or(String::new(), |w| format!(
                " Each phase's second row is its work per operation (lower is better): a \
                 figure's lowest target with its value, the others n× as much when told \
                 apart, same within the margin, ? cannot tell. {}.",
                esc(&rank::work_control(&w.family))
            )),
        rank::resolution(&verdicts).map_or(String::new(), |l| format!(" {}", esc(&l))),
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
        let href = anchor(all, &v.workload, &v.phase);
        let among = v.among.as_ref().map_or(String::new(), |a| format!(", {a}"));
        let name = esc(&format!("{} · {} ({}){among}", v.workload, v.phase, v.unit));
        let name = match &href {
            Some(a) => format!("<a href=\"{a}\">{name}</a>"),
            None => name,
        };
        let ranking = esc(&v.ranking());
        let ranking = match &href {
            Some(a) => format!("<a href=\"{a}\">{ranking}</a>"),
            None => ranking,
        };
        let _ = write!(out, "<tr><th>{name}</th><td>{ranking}</td>");
        for t in &targets {
            // The target's name on the cell, which a phone-width window shows above the
            // ratio in place of the table's head (report.css).
            let td = cell(v, t, href.as_deref());
            out.push_str(&td.replacen("<td", &format!("<td data-target=\"{}\"", esc(t)), 1));
        }
        out.push_str("</tr>");
        if let Some(work) = v.work_line() {
            let work = match &href {
                Some(a) => format!("<a href=\"{a}\">{}</a>", esc(&work)),
                None => esc(&work),
            };
            let _ = write!(
                out,
                "<tr class=\"work\"><th></th><td colspan=\"{}\">{work}</td></tr>",
                targets.len() + 1,
            );
        }
    }
    out.push_str("</tbody></table></div>");
    aged_vs_fresh(out, &verdicts, &run.targets);
    proxy_agreement(out, &verdicts);
    power_cut(out, run);
    out.push_str("</section>");
}

/// Each aged target against its fresh twin ([`crate::compare::aging`]); nothing in a run
/// without both.
fn aged_vs_fresh(
    out: &mut String,
    verdicts: &[PhaseVerdict],
    targets: &[crate::result::TargetInfo],
) {
    let aged = crate::compare::aging::aged_vs_fresh(verdicts, targets);
    if aged.is_empty() {
        return;
    }
    let margin = verdicts.first().map_or(0.03, |v| v.family.margin);
    let margin = crate::compare::family::pct_text(margin * 100.0);
    out.push_str(
        "<h3>Aged against fresh</h3><p>Each filesystem's figure aged over its figure fresh \
         from mkfs (geometric means), with its interval from the verdicts above.</p><ul>",
    );
    for p in &aged {
        for line in p.lines(&margin) {
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
    }
    out.push_str("</ul>");
}

/// What a power cut costs, per `crash` pattern ([`crate::report::crash`]); nothing in a
/// run without crash states.
fn power_cut(out: &mut String, run: &RunResult) {
    for (head, lines) in crate::report::crash::sections(run) {
        let _ = write!(
            out,
            "<h3>{}</h3><ul>",
            esc(&crate::report::crash::capital(&head))
        );
        for l in lines {
            let _ = write!(out, "<li>{}</li>", esc(&l));
        }
        out.push_str("</ul>");
    }
}

/// Whether the database proxy ranks the filesystems as the real engines do
/// ([`crate::compare::proxy`]); nothing without both.
fn proxy_agreement(out: &mut String, verdicts: &[PhaseVerdict]) {
    let agreement = crate::compare::proxy::agreement(verdicts);
    let Some(first) = agreement.first() else {
        return;
    };
    let _ = write!(
        out,
        "<h3>Proxy against real engines</h3><p>Does {} rank the filesystems as each engine \
         does? Per pair of filesystems ranked by both: they agree when both tell the pair \
         apart the same way; a pair neither can tell apart is counted apart. Under each \
         engine, each pair's ratio (how many times slower the first named is) by the proxy \
         and by the engine, with their intervals. The rank correlation is Spearman's over \
         the filesystems both rank, from {} of them.</p><ul>",
        esc(&first.proxy),
        crate::compare::proxy::RHO_FROM
    );
    for a in &agreement {
        let _ = write!(out, "<li>{}<ul>", esc(&a.summary()));
        for r in a.ratio_lines() {
            let _ = write!(out, "<li>{}</li>", esc(&r));
        }
        out.push_str("</ul></li>");
    }
    out.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    /// With two disks and tmpfs, tmpfs's cells are references: a ratio to the best disk,
    /// unshaded, and the page says why.
    #[test]
    fn tmpfs_beside_two_disks_is_a_reference_cell() {
        let run = crate::compare::rank::memory_reference::with_xfs();
        let mut out = String::new();
        super::section(&mut out, &run, &[]);
        let refs = out
            .matches("<td data-target=\"tmpfs\" class=\"reference\">")
            .count();
        let phases = crate::compare::rank::verdicts(&run).len();
        assert_eq!(refs, phases, "{out}");
        assert!(out.contains("ranked among themselves"));
        assert!(
            !out.contains("tmpfs(a)") && !out.contains("tmpfs(b)"),
            "{out}"
        );
    }
}
