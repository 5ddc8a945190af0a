//! `fsarena list`: workloads with every parameter, its default and unit, and the figures
//! each emits besides the probe's, with their units; filesystems and whether this machine
//! can make them (and if not, why); network filesystems likewise.

use crate::provision::fs::{FsType, Support};
use crate::provision::net::NetKind;
use crate::workload::{registry, ParamKind};
use std::fmt::Write;

/// A workload's own figures with their units and better side (`files_per_s (files/s,
/// higher)`), wrapped under its phases; nothing when it has none.
fn figures_lines(figures: &[crate::figures::Figure], width: usize) -> String {
    let indent = format!("  {:<14} ", "");
    let mut out = String::new();
    let mut line = format!("{indent}figures:");
    for f in figures {
        let only = if f.phases.is_empty() {
            String::new()
        } else {
            format!(" on {}", f.phases.join(", "))
        };
        let item = format!(" {} ({}, {}{only}),", f.name, f.unit, f.better.as_str());
        if line.len() + item.len() > width && line.len() > indent.len() + 8 {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}        ");
        }
        line.push_str(&item);
    }
    if !figures.is_empty() {
        out.push_str(line.trim_end_matches(','));
        out.push('\n');
    }
    out
}

/// The text `fsarena list` prints, fitted to the terminal
/// ([`crate::report::fit::width`]).
pub fn render() -> String {
    let width = crate::report::fit::width();
    crate::report::fit::wrap_aligned(&render_lines(width), width)
}

/// The text of `fsarena list` before it is wrapped; figure lists are broken at `width`.
fn render_lines(width: usize) -> String {
    let mut out = String::from("Workloads (fsarena run NAME:key=value,...):\n");
    for w in registry() {
        let _ = writeln!(out, "\n  {:<14} {}", w.name, w.about);
        let phases: Vec<_> = w.phases.iter().map(|p| p.name).collect();
        let _ = writeln!(out, "  {:<14} phases: {}", "", phases.join(", "));
        for p in w.programs {
            let here = match (p.find)() {
                Some(_) => "installed".to_string(),
                None => format!("missing: fsarena setup --workload {}", w.name),
            };
            let _ = writeln!(
                out,
                "  {:<14} runs {} (package {}): {here}",
                "", p.name, p.package
            );
        }
        out.push_str(&figures_lines(w.figures, width));
        for p in w.params {
            let kind = match p.kind {
                ParamKind::Size => "size".to_string(),
                ParamKind::Count => "count".to_string(),
                ParamKind::Bool => "true|false".to_string(),
                ParamKind::Float => "number".to_string(),
                ParamKind::Text => "text".to_string(),
                ParamKind::CountList => "count,count,…".to_string(),
                ParamKind::SizeMix => "size|size-size|size:weight,…".to_string(),
                // A long list is spaced, so that it wraps between its choices.
                ParamKind::Choice(c) if c.join("|").len() > 16 => c.join(" | "),
                ParamKind::Choice(c) => c.join("|"),
            };
            let default = if p.default.is_empty() && matches!(p.kind, ParamKind::Text) {
                "(none)"
            } else if p.default.is_empty() {
                "(derived)"
            } else {
                p.default
            };
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" [{}]", p.unit)
            };
            let _ = writeln!(
                out,
                "    {:<12} {:<16} default {:<10}{unit} {}",
                p.name, kind, default, p.help
            );
        }
    }
    out.push_str("\nFilesystems (--fs):\n");
    filesystem_lines(&mut out);
    out.push_str("\nNetwork filesystems (--net KIND=SOURCE[,OPTIONS]):\n");
    for k in NetKind::ALL {
        let status = match k.support() {
            Support::Yes => "yes".to_string(),
            Support::No(why) => format!("no: {why}"),
        };
        let _ = writeln!(out, "  {:<9} {:<62} {status}", k.name(), k.example());
    }
    out.push_str(
        "\nAging profiles (--age PROFILE[:fill=PCT,churn=X,independent]; default fill=75, \
         churn=2; docs/aging.md):\n",
    );
    for p in crate::provision::age::profiles::PROFILES {
        let _ = writeln!(out, "  {:<14} {}", p.name(), p.about());
    }
    if !crate::probe::sys::is_root() {
        out.push_str(
            "\nNot root: loop, tmpfs and network targets need root; --dir PATH works without it.\n",
        );
    }
    out
}

/// One line per filesystem: whether this machine (or, inside
/// [`crate::provision::fs::with_guest_kernel`], a guest kernel) can make it.
fn filesystem_lines(out: &mut String) {
    for f in FsType::ALL {
        let k = f.knowledge();
        let mut extra = Vec::new();
        if !f.in_default_set() {
            extra.push("only when named".to_string());
        }
        if !k.note.is_empty() {
            extra.push(k.note.to_string());
        }
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join("; "))
        };
        let status = match f.support() {
            Support::Yes => format!("yes{extra}"),
            Support::No(why) => format!("no: {why}"),
        };
        let _ = writeln!(out, "  {:<9} loop image  {status}", f.name());
    }
    let tmpfs = match crate::provision::fs::tmpfs_support() {
        Support::Yes => "yes".to_string(),
        Support::No(why) => format!("no: {why}"),
    };
    let _ = writeln!(out, "  {:<9} in memory   {tmpfs}", "tmpfs");
    for p in crate::provision::served::Protocol::ALL {
        let status = match p.support() {
            Support::Yes => format!("yes (only when named; {})", p.what()),
            Support::No(why) => format!("no: {why}"),
        };
        let _ = writeln!(out, "  {:<9} served      {status}", p.name());
    }
}

/// `fsarena list --kernel KERNEL`: what a guest booted from KERNEL can make (its modules,
/// this machine's mkfs tools, which the guest shares).
pub fn render_guest(kernel: &str) -> anyhow::Result<String> {
    let k = crate::guest::kernel::resolve(kernel)?;
    let mut out = format!(
        "Filesystems a guest of {} can make (fsarena run --kernel {} --fs …):\n",
        k.release, k.release
    );
    crate::provision::fs::with_guest_kernel(&k.release, || filesystem_lines(&mut out));
    let width = crate::report::fit::width();
    Ok(crate::report::fit::wrap_aligned(&out, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_list_their_figures_with_units_and_sides() {
        let text = render_lines(100);
        for want in [
            " score_bw_gib_s (GiB/s, higher),",
            " children_cpu_user_s (s, none),",
            " io500_figure (GiB/s, higher on ior-easy-write, ior-hard-write,",
            " compilebench_s (s, lower)\n",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        assert!(!text.contains("figures:\n"), "{text}");
    }
}
