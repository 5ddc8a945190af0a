//! Hand-written SVG charts: horizontal bar charts whose value axis starts at zero, with
//! min–max and 95%-interval whiskers; latency-percentile charts on a log axis; time-series
//! line charts. Each chart is a standalone `<svg>` document (it is also exported as a file
//! and rasterised to PNG), every mark carries a `<title>` tooltip, and text uses DejaVu Sans
//! or the reader's sans-serif — no web fonts, no scripts.
//!
//! Why not plotters: its SVG backend with default features off draws text without metrics,
//! and the three chart kinds here need less code than configuring it. The rules the seed
//! readers asked for ("use an origin of zero for all your graphs") are enforced here, not
//! left to each caller: [`bars`] has no way to start its axis anywhere but 0.

use std::fmt::Write;

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D00", "#000000",
];

const WIDTH: f64 = 640.0;
const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

/// Escapes text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A figure with up to 4 significant digits, no exponent.
pub fn num(v: f64) -> String {
    crate::report::terminal::fmt_num(v)
}

/// A tick label: the figure without trailing zeros (`0`, `2.5`, `1000`), millions and
/// billions with an SI suffix (`250M`, `1.5G`) so that long numbers do not collide.
pub fn tick(v: f64) -> String {
    let (v, suffix) = if v.abs() >= 1e9 {
        (v / 1e9, "G")
    } else if v.abs() >= 1e6 {
        (v / 1e6, "M")
    } else {
        (v, "")
    };
    let s = num(v);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// Tick positions of a linear axis from 0 to at least `max`: steps of 1, 2 or 5 × 10^k,
/// about five of them. The last tick is ≥ `max`, the first is always 0.
pub fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// Decade ticks of a log axis covering `[lo, hi]` (both > 0).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(1e-3);
    let hi = hi.max(lo * 10.0);
    let a = lo.log10().floor() as i32;
    let b = hi.log10().ceil() as i32;
    (a..=b).map(|e| 10f64.powi(e)).collect()
}

/// A latency in µs as people read it: 20 µs, 1.5 ms, 2 s.
pub fn us_label(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", tick(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", tick(us / 1e3))
    } else {
        format!("{} µs", tick(us))
    }
}

fn open(out: &mut String, class: &str, height: f64, title: &str, extra: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart {class}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="{FONT}" font-size="12" role="img" aria-label="{t}"{extra}><title>{t}</title><rect width="100%" height="100%" fill="#fff"/><text x="8" y="18" font-size="14" font-weight="bold">{t}</text>"##,
        t = esc(title)
    );
}

/// One bar: a target's median with its spread over the repetitions.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    /// Short honesty marks shown after the label (`~c`).
    pub marks: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The 95% confidence interval of the mean, when there are two repetitions or more.
    pub ci: Option<(f64, f64)>,
    pub color: &'static str,
    /// The tooltip.
    pub tip: String,
}

/// A horizontal bar chart. The value axis starts at 0 (`data-axis-min="0"`) whatever the
/// data; negative figures (none of fsarena's metrics can be) are drawn as 0-width bars.
/// `axis` names the unit and which side is better.
pub fn bars(title: &str, axis: &str, bars: &[Bar]) -> String {
    let label_w = bars
        .iter()
        .map(|b| (b.label.chars().count() + b.marks.chars().count() + 1) as f64 * 7.2)
        .fold(40.0, f64::max)
        .min(220.0);
    let (x0, right, top, row) = (label_w + 14.0, 56.0, 34.0, 30.0);
    let plot_w = WIDTH - x0 - right;
    let height = top + row * bars.len() as f64 + 50.0;
    let top_value = bars
        .iter()
        .map(|b| b.max.max(b.median).max(b.ci.map_or(0.0, |c| c.1)))
        .fold(0.0, f64::max);
    let ticks = linear_ticks(top_value);
    let end = *ticks.last().expect("ticks are never empty");
    let x = |v: f64| x0 + v.clamp(0.0, end) / end * plot_w;
    let mut s = String::new();
    open(&mut s, "bar", height, title, r#" data-axis-min="0""#);
    let bottom = top + row * bars.len() as f64;
    for t in &ticks {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="{top}" y2="{bottom}" stroke="#ddd"/><text class="tick" x="{0:.1}" y="{1}" text-anchor="middle" fill="#333">{2}</text>"##,
            x(*t),
            bottom + 15.0,
            tick(*t)
        );
    }
    let _ = write!(
        s,
        r##"<line class="axis" x1="{x0:.1}" x2="{x0:.1}" y1="{top}" y2="{bottom}" stroke="#000"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#000">{}</text>"##,
        x0 + plot_w / 2.0,
        bottom + 34.0,
        esc(axis)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + row * i as f64;
        let mid = y + row / 2.0;
        let w = (x(b.median) - x0).max(0.0);
        let _ = write!(
            s,
            r##"<g><title>{tip}</title><text x="{lx:.1}" y="{ty:.1}" text-anchor="end">{label}<tspan fill="#B00000" font-weight="bold">{marks}</tspan></text><rect class="bar" x="{x0:.1}" y="{by:.1}" width="{w:.1}" height="{bh:.1}" fill="{c}" data-value="{v}"/>"##,
            tip = esc(&b.tip),
            lx = x0 - 6.0,
            ty = mid + 4.0,
            label = esc(&b.label),
            marks = if b.marks.is_empty() {
                String::new()
            } else {
                format!("\u{a0}{}", esc(&b.marks))
            },
            by = y + 6.0,
            bh = row - 12.0,
            c = b.color,
            v = b.median,
        );
        if let Some((lo, hi)) = b.ci {
            let _ = write!(
                s,
                r##"<line class="ci" x1="{:.1}" x2="{:.1}" y1="{mid:.1}" y2="{mid:.1}" stroke="#000" stroke-opacity="0.45" stroke-width="5"/>"##,
                x(lo),
                x(hi)
            );
        }
        let (a, z) = (x(b.min), x(b.max));
        let _ = write!(
            s,
            r##"<path class="minmax" d="M{a:.1} {:.1}V{:.1}M{a:.1} {mid:.1}H{z:.1}M{z:.1} {:.1}V{:.1}" stroke="#000" fill="none"/><text x="{:.1}" y="{:.1}" fill="#000">{}</text></g>"##,
            mid - 5.0,
            mid + 5.0,
            mid - 5.0,
            mid + 5.0,
            x(b.median.max(b.max)) + 4.0,
            mid - 6.0,
            num(b.median)
        );
    }
    s.push_str("</svg>");
    s
}

/// A line of a chart: one target.
#[derive(Clone, Debug)]
pub struct Line {
    pub label: String,
    pub color: &'static str,
    /// (x, y) points; for percentile charts also the (min, max) over repetitions.
    pub points: Vec<(f64, f64)>,
    pub spread: Vec<Option<(f64, f64)>>,
}

fn legend(s: &mut String, lines: &[Line], y: f64) {
    let mut x = 60.0;
    for l in lines {
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{:.1}" width="14" height="4" fill="{}"/><text x="{:.1}" y="{y:.1}">{}</text>"##,
            y - 6.0,
            l.color,
            x + 18.0,
            esc(&l.label)
        );
        x += 30.0 + l.label.chars().count() as f64 * 7.2;
    }
}

/// Latency percentiles (categories along x, µs on a log y axis labelled as log), one line
/// per target, with min–max whiskers over the repetitions.
pub fn percentiles(title: &str, categories: &[&str], lines: &[Line]) -> String {
    let (x0, right, top, plot_h) = (96.0, 20.0, 34.0, 220.0);
    let height = top + plot_h + 70.0;
    let all: Vec<f64> = lines
        .iter()
        .flat_map(|l| {
            l.points
                .iter()
                .map(|p| p.1)
                .chain(l.spread.iter().flatten().flat_map(|s| [s.0, s.1]))
        })
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let ticks = if all.is_empty() {
        vec![1.0, 10.0]
    } else {
        log_ticks(lo, hi)
    };
    let (la, lb) = (ticks[0].log10(), ticks[ticks.len() - 1].log10());
    let bottom = top + plot_h;
    let y = |v: f64| bottom - (v.max(ticks[0]).log10() - la) / (lb - la) * plot_h;
    let plot_w = WIDTH - x0 - right;
    let step = plot_w / categories.len().max(1) as f64;
    let x = |i: usize| x0 + step * (i as f64 + 0.5);
    let mut s = String::new();
    open(&mut s, "percentiles", height, title, r#" data-scale="log""#);
    for t in &ticks {
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{x1:.1}" y1="{yt:.1}" y2="{yt:.1}" stroke="#ddd"/><text class="tick" x="{xl:.1}" y="{yl:.1}" text-anchor="end">{label}</text>"##,
            yt = y(*t),
            x1 = x0 + plot_w,
            xl = x0 - 6.0,
            yl = y(*t) + 4.0,
            label = us_label(*t)
        );
    }
    for (i, c) in categories.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(i),
            bottom + 16.0,
            esc(c)
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{x0}" x2="{x0}" y1="{top}" y2="{bottom}" stroke="#000"/><text x="14" y="{ym:.1}" transform="rotate(-90 14 {ym:.1})" text-anchor="middle">latency (LOG scale) — lower is better</text>"##,
        ym = top + plot_h / 2.0
    );
    for (k, l) in lines.iter().enumerate() {
        // Offset targets a little so their whiskers do not hide each other.
        let dx = (k as f64 - (lines.len() as f64 - 1.0) / 2.0) * 6.0;
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.0 as usize) + dx, y(p.1)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            pts.join(" "),
            l.color
        );
        for (j, p) in l.points.iter().enumerate() {
            let cx = x(p.0 as usize) + dx;
            let spread = l.spread.get(j).copied().flatten();
            let _ = write!(
                s,
                r#"<g><title>{}: {} {}{}</title>"#,
                esc(&l.label),
                esc(categories.get(p.0 as usize).copied().unwrap_or("")),
                us_label(p.1),
                spread.map_or(String::new(), |(a, b)| format!(
                    " (min–max over repetitions {}–{})",
                    us_label(a),
                    us_label(b)
                ))
            );
            if let Some((a, b)) = spread {
                let _ = write!(
                    s,
                    r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" stroke="{}"/>"#,
                    y(a),
                    y(b),
                    l.color
                );
            }
            let _ = write!(
                s,
                r#"<circle cx="{cx:.1}" cy="{:.1}" r="3.5" fill="{}"/></g>"#,
                y(p.1),
                l.color
            );
        }
    }
    legend(&mut s, lines, height - 20.0);
    s.push_str("</svg>");
    s
}

/// A time series: x in seconds from the phase start, y from 0 in `unit`.
pub fn series(title: &str, unit: &str, lines: &[Line]) -> String {
    let (x0, right, top, plot_h) = (84.0, 20.0, 34.0, 200.0);
    let height = top + plot_h + 66.0;
    let xmax = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let ymax = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (xt, yt) = (linear_ticks(xmax), linear_ticks(ymax));
    let (xe, ye) = (xt[xt.len() - 1], yt[yt.len() - 1]);
    let plot_w = WIDTH - x0 - right;
    let bottom = top + plot_h;
    let x = |v: f64| x0 + v / xe * plot_w;
    let y = |v: f64| bottom - v / ye * plot_h;
    let mut s = String::new();
    open(&mut s, "series", height, title, r#" data-axis-min="0""#);
    for t in &yt {
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{x1:.1}" y1="{yt:.1}" y2="{yt:.1}" stroke="#ddd"/><text class="tick" x="{xl:.1}" y="{yl:.1}" text-anchor="end">{label}</text>"##,
            x1 = x0 + plot_w,
            yt = y(*t),
            xl = x0 - 6.0,
            yl = y(*t) + 4.0,
            label = tick(*t)
        );
    }
    for t in &xt {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(*t),
            bottom + 16.0,
            tick(*t)
        );
    }
    let _ = write!(
        s,
        r##"<path d="M{x0} {top}V{bottom}H{x1:.1}" stroke="#000" fill="none"/><text x="{xm:.1}" y="{yc:.1}" text-anchor="middle">seconds since the phase started</text><text x="14" y="{ym:.1}" transform="rotate(-90 14 {ym:.1})" text-anchor="middle">{unit}</text>"##,
        x1 = x0 + plot_w,
        xm = x0 + plot_w / 2.0,
        yc = bottom + 32.0,
        ym = top + plot_h / 2.0,
        unit = esc(unit)
    );
    for l in lines {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"><title>{}</title></polyline>"#,
            pts.join(" "),
            l.color,
            esc(&l.label)
        );
    }
    legend(&mut s, lines, height - 14.0);
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_start_at_zero_and_cover_the_maximum() {
        assert_eq!(linear_ticks(97.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(
            linear_ticks(0.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        for m in [0.013, 1.0, 7.5, 12_345.0, 3.2e9] {
            let t = linear_ticks(m);
            assert_eq!(t[0], 0.0);
            assert!(*t.last().unwrap() >= m, "{m}: {t:?}");
            assert!((3..=11).contains(&t.len()), "{m}: {t:?}");
        }
    }

    #[test]
    fn log_ticks_are_decades_around_the_data() {
        assert_eq!(log_ticks(35.0, 2500.0), vec![10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(us_label(1500.0), "1.5 ms");
        assert_eq!(us_label(20.0), "20 µs");
        assert_eq!(us_label(2.5e6), "2.5 s");
        assert_eq!(tick(250_000_000.0), "250M");
        assert_eq!(tick(1.5e9), "1.5G");
        assert_eq!(tick(40_000.0), "40000");
    }

    #[test]
    fn bars_start_at_zero_even_when_values_are_close() {
        let bar = |v: f64| Bar {
            label: format!("t{v}"),
            marks: String::new(),
            median: v,
            min: v - 1.0,
            max: v + 1.0,
            ci: Some((v - 2.0, v + 2.0)),
            color: PALETTE[0],
            tip: String::new(),
        };
        let svg = bars("close", "MB/s", &[bar(1000.0), bar(1010.0)]);
        assert!(svg.contains(r#"data-axis-min="0""#));
        assert!(svg.contains(">0</text>"), "{svg}");
        // Nearly equal figures make nearly equal bars: no truncated axis exaggerates them.
        let widths: Vec<f64> = svg
            .match_indices(r#"class="bar" x=""#)
            .map(|(i, _)| {
                let rest = &svg[i..];
                let w = rest.find("width=\"").unwrap() + 7;
                rest[w..w + rest[w..].find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(widths.len(), 2);
        assert!(widths[1] / widths[0] < 1.02, "{widths:?}");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let svg = series("a<b", "MB/s", &[]);
        assert!(svg.contains("a&lt;b") && !svg.contains("a<b"));
    }
}
