//! PNG export of the SVG charts, drawn with resvg at twice the SVG's size (sharp on slides
//! and high-density screens). Text uses the system's fonts (DejaVu Sans on Debian); the
//! font database is loaded once per export, not per chart.

use anyhow::{anyhow, Context, Result};
use resvg::{tiny_skia, usvg};

/// `report --png DIR`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "png",
    export: None,
    report: Some("Write every chart as DIR/SLUG.png (twice the SVG's size), creating DIR"),
    run: None,
    writes: super::Writes::Files(|run, dir| super::charts::write(run, None, Some(dir))),
};

/// Pixels per SVG unit in the PNG.
pub const SCALE: f32 = 2.0;

/// Turns chart SVG documents into PNG bytes.
pub struct Rasterizer {
    options: usvg::Options<'static>,
}

impl Default for Rasterizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Rasterizer {
    /// Loads the system fonts.
    pub fn new() -> Self {
        let mut options = usvg::Options::default();
        options.fontdb_mut().load_system_fonts();
        Self { options }
    }

    /// The PNG of one SVG document.
    pub fn png(&self, svg: &str) -> Result<Vec<u8>> {
        let tree = usvg::Tree::from_str(svg, &self.options).context("parsing the SVG")?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(SCALE)
            .ok_or_else(|| anyhow!("empty chart"))?;
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| anyhow!("chart too large to draw"))?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(SCALE, SCALE),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().context("encoding the PNG")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_chart_with_ink_on_it() {
        let bar = crate::report::svg::Bar {
            label: "ext4".into(),
            marks: String::new(),
            median: 10.0,
            min: 9.0,
            max: 11.0,
            ci: None,
            color: crate::report::svg::PALETTE[0],
        };
        let svg = crate::report::svg::standalone(&crate::report::svg::bars("t", "MB/s", &[bar]));
        let png = Rasterizer::new().png(&svg).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let pixmap = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!(pixmap.width(), 1280);
        // The bar's colour (#0072B2) is there: the chart was drawn, not just a white page.
        let blue = pixmap
            .pixels()
            .iter()
            .filter(|p| (p.red(), p.green(), p.blue()) == (0x00, 0x72, 0xB2))
            .count();
        assert!(blue > 1000, "{blue} blue pixels");
        // The chart's style (its classes, not inline attributes) reached the renderer: the
        // grid lines are light grey and the background white.
        let count = |rgb: (u8, u8, u8)| {
            (pixmap.pixels().iter())
                .filter(|p| (p.red(), p.green(), p.blue()) == rgb)
                .count()
        };
        assert!(count((0xdd, 0xdd, 0xdd)) > 100, "no grey grid line");
        assert!(count((0xff, 0xff, 0xff)) > 100_000, "no white background");
    }
}
