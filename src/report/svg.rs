//! Hand-written SVG charts: horizontal bar charts whose value axis starts at zero, with
//! min–max and 95%-interval whiskers; latency-percentile charts on a log axis; time-series
//! line charts. Each chart is an `<svg>` element styled by the classes of [`CSS`] — written
//! once in the HTML report, and into each chart exported as a file or rasterised to PNG by
//! [`standalone`] — with whole-pixel coordinates and no per-mark tooltips (each chart's
//! table carries its figures). Text uses DejaVu Sans or the reader's sans-serif — no web
//! fonts, no scripts.
//!
//! Why not plotters: its SVG backend with default features off draws text without metrics,
//! and the three chart kinds here need less code than configuring it. The rules the seed
//! readers asked for ("use an origin of zero for all your graphs") are enforced here, not
//! left to each caller: [`bars`] has no way to start its axis anywhere but 0.

use std::fmt::Write;

/// `report --svg DIR`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "svg",
    export: None,
    report: Some("Write every chart as DIR/SLUG.svg, creating DIR"),
    run: None,
    writes: super::Writes::Files(|run, dir| super::charts::write(run, Some(dir), None)),
};

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D00", "#000000",
];

const WIDTH: f64 = 640.0;

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

/// The charts' style, by class: written once into the HTML report's stylesheet, and into
/// each chart exported as a file ([`standalone`]). Charts carry classes, not inline styles.
pub const CSS: &str = "svg.chart{font-family:DejaVu Sans,Verdana,sans-serif;font-size:12px;background:#fff}\
.hd{font-size:14px;font-weight:bold}.grid{stroke:#ddd;fill:none}.axis,.minmax{stroke:#000;fill:none}\
.tick{fill:#333}.mid{text-anchor:middle}.end{text-anchor:end}\
.ci{stroke:#000;stroke-opacity:.45;stroke-width:5}.mk{fill:#B00000;font-weight:bold}\
.line{fill:none;stroke-width:2}.dot{fill:none;stroke-width:7;stroke-linecap:round}.sl{fill:none;stroke-width:1.5}";

/// A chart as a file of its own: with the namespace, its style and a white background,
/// which in the HTML report are the page's (the style written once).
pub fn standalone(svg: &str) -> String {
    match (svg.strip_prefix("<svg "), svg.find('>')) {
        (Some(_), Some(i)) => format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" {}<style>{CSS}</style><rect width="100%" height="100%" fill="#fff"/>{}"##,
            &svg[5..=i],
            &svg[i + 1..]
        ),
        _ => svg.to_string(),
    }
}

fn open(out: &mut String, class: &str, height: f64, title: &str, extra: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart {class}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img"{extra}><title>{t}</title><text class="hd" x="8" y="18">{t}</text>"#,
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
}

/// A horizontal bar chart. The value axis starts at 0 (`data-axis-min="0"`) whatever the
/// data; negative figures (none of fsarena's metrics can be) are drawn as 0-width bars.
/// `axis` names the unit and which side is better. Coordinates are whole units (a pixel
/// of a 640-wide chart).
pub fn bars(title: &str, axis: &str, bars: &[Bar]) -> String {
    let label_w = bars
        .iter()
        .map(|b| (b.label.chars().count() + b.marks.chars().count() + 1) as f64 * 7.2)
        .fold(40.0, f64::max)
        .min(220.0);
    let (x0, right, top, row) = ((label_w + 14.0).round(), 56.0, 34.0, 30.0);
    let plot_w = WIDTH - x0 - right;
    let height = top + row * bars.len() as f64 + 50.0;
    let top_value = bars
        .iter()
        .map(|b| b.max.max(b.median).max(b.ci.map_or(0.0, |c| c.1)))
        .fold(0.0, f64::max);
    let ticks = linear_ticks(top_value);
    let end = *ticks.last().expect("ticks are never empty");
    let x = |v: f64| (x0 + v.clamp(0.0, end) / end * plot_w).round();
    let mut s = String::new();
    open(&mut s, "bar", height, title, r#" data-axis-min="0""#);
    let bottom = top + row * bars.len() as f64;
    let grid: String = ticks
        .iter()
        .map(|t| format!("M{} {top}V{bottom}", x(*t)))
        .collect();
    let _ = write!(s, r#"<path class="grid" d="{grid}"/>"#);
    for t in &ticks {
        let _ = write!(
            s,
            r#"<text class="tick mid" x="{}" y="{}">{}</text>"#,
            x(*t),
            bottom + 15.0,
            tick(*t)
        );
    }
    let _ = write!(
        s,
        r#"<line class="axis" x1="{x0}" x2="{x0}" y1="{top}" y2="{bottom}"/><text class="mid" x="{:.0}" y="{}">{}</text>"#,
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
            r#"<text class="end" x="{lx}" y="{ty}">{label}{marks}</text><rect class="bar" x="{x0}" y="{by}" width="{w}" height="{bh}" fill="{c}" data-value="{v}"/>"#,
            lx = x0 - 6.0,
            ty = mid + 4.0,
            label = esc(&b.label),
            marks = if b.marks.is_empty() {
                String::new()
            } else {
                format!("<tspan class=\"mk\">\u{a0}{}</tspan>", esc(&b.marks))
            },
            by = y + 6.0,
            bh = row - 12.0,
            c = b.color,
            v = b.median,
        );
        if let Some((lo, hi)) = b.ci {
            let _ = write!(
                s,
                r#"<line class="ci" x1="{}" x2="{}" y1="{mid}" y2="{mid}"/>"#,
                x(lo),
                x(hi)
            );
        }
        let (a, z) = (x(b.min), x(b.max));
        let _ = write!(
            s,
            r#"<path class="minmax" d="M{a} {}V{}M{a} {mid}H{z}M{z} {}V{}"/><text x="{}" y="{}">{}</text>"#,
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
            r#"<rect x="{x:.0}" y="{}" width="14" height="4" fill="{}"/><text x="{:.0}" y="{y}">{}</text>"#,
            y - 6.0,
            l.color,
            x + 18.0,
            esc(&l.label)
        );
        x += 30.0 + l.label.chars().count() as f64 * 7.2;
    }
}

/// Horizontal grid lines at `ys` from `x0` to `x1`, with their labels left of `x0`.
fn y_grid(s: &mut String, x0: f64, x1: f64, ys: &[(f64, String)]) {
    let grid: String = ys
        .iter()
        .map(|(y, _)| format!("M{x0} {y:.0}H{x1:.0}"))
        .collect();
    let _ = write!(s, r#"<path class="grid" d="{grid}"/>"#);
    for (y, label) in ys {
        let _ = write!(
            s,
            r#"<text class="tick end" x="{}" y="{:.0}">{label}</text>"#,
            x0 - 6.0,
            y + 4.0
        );
    }
}

/// Latency percentiles (categories along x, µs on a log y axis labelled as log), one line
/// per target, with min–max whiskers over the repetitions; the figures are in the table
/// that goes with the chart.
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
    let y = |v: f64| (bottom - (v.max(ticks[0]).log10() - la) / (lb - la) * plot_h).round();
    let plot_w = WIDTH - x0 - right;
    let step = plot_w / categories.len().max(1) as f64;
    let x = |i: usize| x0 + step * (i as f64 + 0.5);
    let mut s = String::new();
    open(&mut s, "percentiles", height, title, r#" data-scale="log""#);
    let ys: Vec<(f64, String)> = ticks.iter().map(|t| (y(*t), us_label(*t))).collect();
    y_grid(&mut s, x0, x0 + plot_w, &ys);
    for (i, c) in categories.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text class="mid" x="{:.0}" y="{}">{}</text>"#,
            x(i),
            bottom + 16.0,
            esc(c)
        );
    }
    let _ = write!(
        s,
        r#"<line class="axis" x1="{x0}" x2="{x0}" y1="{top}" y2="{bottom}"/><text class="mid" x="14" y="{ym}" transform="rotate(-90 14 {ym})">latency (LOG scale) — lower is better</text>"#,
        ym = top + plot_h / 2.0
    );
    for (k, l) in lines.iter().enumerate() {
        // Offset targets a little so their whiskers do not hide each other.
        let dx = (k as f64 - (lines.len() as f64 - 1.0) / 2.0) * 6.0;
        let cx = |p: &(f64, f64)| (x(p.0 as usize) + dx).round();
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{},{}", cx(p), y(p.1)))
            .collect();
        let whiskers: String = l
            .points
            .iter()
            .zip(&l.spread)
            .filter_map(|(p, sp)| sp.map(|(a, b)| format!("M{} {}V{}", cx(p), y(a), y(b))))
            .collect();
        // Each point is a dot: a zero-length stroke with round caps.
        let dots: String = l
            .points
            .iter()
            .map(|p| format!("M{} {}h0", cx(p), y(p.1)))
            .collect();
        let whiskers = if whiskers.is_empty() {
            whiskers
        } else {
            format!(r#"<path d="{whiskers}"/>"#)
        };
        let _ = write!(
            s,
            r#"<g stroke="{}"><polyline class="line" points="{}"/>{whiskers}<path class="dot" d="{dots}"/></g>"#,
            l.color,
            pts.join(" "),
        );
    }
    legend(&mut s, lines, height - 20.0);
    s.push_str("</svg>");
    s
}

/// A line through whole-unit points as a path: the first point absolute, then each step
/// relative to the one before (`M89 222l6 -3 5 -3`), the shortest way to write a long
/// series.
fn relative_path(points: impl Iterator<Item = (f64, f64)>) -> String {
    let mut d = String::new();
    let mut last: Option<(f64, f64)> = None;
    for (x, y) in points {
        match last {
            None => {
                let _ = write!(d, "M{x} {y}l");
            }
            Some((a, b)) => {
                let _ = write!(d, "{} {} ", x - a, y - b);
            }
        }
        last = Some((x, y));
    }
    d.trim_end().trim_end_matches('l').to_string()
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
    let x = |v: f64| (x0 + v / xe * plot_w).round();
    let y = |v: f64| (bottom - v / ye * plot_h).round();
    let mut s = String::new();
    open(&mut s, "series", height, title, r#" data-axis-min="0""#);
    let ys: Vec<(f64, String)> = yt.iter().map(|t| (y(*t), tick(*t))).collect();
    y_grid(&mut s, x0, x0 + plot_w, &ys);
    for t in &xt {
        let _ = write!(
            s,
            r#"<text class="mid" x="{}" y="{}">{}</text>"#,
            x(*t),
            bottom + 16.0,
            tick(*t)
        );
    }
    let _ = write!(
        s,
        r#"<path class="axis" d="M{x0} {top}V{bottom}H{x1}"/><text class="mid" x="{xm}" y="{yc}">seconds since the phase started</text><text class="mid" x="14" y="{ym}" transform="rotate(-90 14 {ym})">{unit}</text>"#,
        x1 = x0 + plot_w,
        xm = x0 + plot_w / 2.0,
        yc = bottom + 32.0,
        ym = top + plot_h / 2.0,
        unit = esc(unit)
    );
    for l in lines {
        let _ = write!(
            s,
            r#"<path class="sl" d="{}" stroke="{}"><title>{}</title></path>"#,
            relative_path(l.points.iter().map(|p| (x(p.0), y(p.1)))),
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
    fn a_relative_path_returns_to_each_point() {
        let pts = [(89.0, 222.0), (95.0, 219.0), (100.0, 230.0)];
        assert_eq!(relative_path(pts.into_iter()), "M89 222l6 -3 5 11");
        assert_eq!(relative_path([(1.0, 2.0)].into_iter()), "M1 2");
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
