//! Text that fits the terminal: its width (`$COLUMNS`, else the terminal's, else 80),
//! tables that never wrap inside a number or a word, and prose wrapped at spaces.
//!
//! A table wider than the width has its widest columns wrapped at spaces (never inside a
//! word; a no-break space, U+00A0, keeps `93.4 MB/s` or `cpu 40%` on one line); when even
//! the longest words of every column do not fit side by side, its columns are split into
//! several tables, each repeating the columns that name a row. Only a single word wider
//! than the terminal can still overflow it.
//!
//! The terminal's width and prose wrapped to it are [`crate::term`]'s (below everything
//! that writes a note to stderr), re-exported here beside the tables.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

pub use crate::term::{cols, stderr_width, width, wrap, wrap_text, DEFAULT_WIDTH};

/// `s` followed by spaces up to `width` columns, as `format!("{s:<width$}")` pads it but
/// without its limit: a computed width beyond `u16::MAX` makes `fmt` panic (a plan with
/// a 100 KB option once did, issue 43), this never does. Text wider than `width` is left
/// whole.
pub fn pad_right(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(s.len() + width.saturating_sub(cols(s)));
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(cols(s))));
    out
}

/// `s` after spaces up to `width` columns, as `format!("{s:>width$}")` pads it, without
/// its limit (see [`pad_right`]).
pub fn pad_left(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(s.len() + width.saturating_sub(cols(s)));
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(cols(s))));
    out.push_str(s);
    out
}

/// `item` (a workload spec: `name:k=v,k=v`, no spaces) indented by `indent` and broken
/// after `sep` where it does not fit `width`, continued `hang` columns in.
pub fn wrap_after(item: &str, sep: char, width: usize, indent: usize, hang: usize) -> String {
    let mut out = " ".repeat(indent);
    let mut room = width.saturating_sub(indent);
    let mut line_len = 0;
    for (i, piece) in item.split_inclusive(sep).enumerate() {
        if i > 0 && line_len + cols(piece) > room {
            out.push('\n');
            out.push_str(&" ".repeat(hang));
            room = width.saturating_sub(hang);
            line_len = 0;
        }
        out.push_str(piece);
        line_len += cols(piece);
    }
    out
}

/// `text` starting `indent` columns in, broken between words to `width` columns and
/// continued `hang` columns in; a word too long for a line (mkfs `-E a=1,b=2`, mount
/// options) is broken after its commas, and only a piece without one can overflow.
pub fn wrap_options(text: &str, width: usize, indent: usize, hang: usize) -> String {
    let room = width.saturating_sub(hang);
    // (piece, glued to the piece before it with no space)
    let mut pieces: Vec<(&str, bool)> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if cols(word) > room {
            for (i, p) in word.split_inclusive(',').enumerate() {
                pieces.push((p, i > 0));
            }
        } else {
            pieces.push((word, false));
        }
    }
    let mut out = " ".repeat(indent);
    let mut len = indent;
    let mut fresh = true;
    for (piece, glued) in pieces {
        let gap = usize::from(!fresh && !glued);
        if !fresh && len + gap + cols(piece) > width {
            out.push('\n');
            out.push_str(&" ".repeat(hang));
            len = hang;
        } else if gap == 1 {
            out.push(' ');
            len += 1;
        }
        out.push_str(piece);
        len += cols(piece);
        fresh = false;
    }
    out
}

/// [`wrap`] applied to every line of `text`, each continued under its own second field:
/// after the first run of two or more spaces that follows a word (`  ext4      yes …`
/// continues under `yes`), else two columns in from where the line starts.
pub fn wrap_aligned(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let lead = line.len() - line.trim_start_matches(' ').len();
        let body = &line[lead..];
        let field = body
            .find("  ")
            .map(|i| i + body[i..].len() - body[i..].trim_start_matches(' ').len())
            .filter(|&i| i < body.len())
            .map(|i| cols(&line[..lead + i]))
            .filter(|&c| c <= width / 2);
        out.push(wrap(line, width, field.unwrap_or(lead + 2)));
    }
    if text.ends_with('\n') {
        out.push(String::new());
    }
    out.join("\n")
}

/// A table's content before it is drawn.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The leading columns that name a row, repeated in every part of a split table.
    pub keys: usize,
    /// Columns drawn aligned right (figures); missing ones are aligned left.
    pub right: Vec<bool>,
}

impl Grid {
    /// A grid with `head`, no rows, `keys` naming columns, every column aligned left.
    pub fn new(head: Vec<String>, keys: usize) -> Self {
        Self {
            head,
            keys,
            ..Self::default()
        }
    }

    fn cells(&self, c: usize) -> impl Iterator<Item = &str> {
        std::iter::once(&self.head)
            .chain(&self.rows)
            .filter_map(move |r| r.get(c).map(String::as_str))
    }

    /// The widest line of column `c`.
    fn natural(&self, c: usize) -> usize {
        self.cells(c)
            .flat_map(str::lines)
            .map(cols)
            .max()
            .unwrap_or(0)
    }

    /// The longest word of column `c`: the narrowest it can be wrapped to.
    fn least(&self, c: usize) -> usize {
        self.cells(c)
            .flat_map(|s| s.split(['\n', ' ']))
            .map(cols)
            .max()
            .unwrap_or(0)
    }

    /// The same grid with only columns `keep`.
    fn select(&self, keep: &[usize]) -> Grid {
        let pick = |r: &Vec<String>| -> Vec<String> {
            keep.iter()
                .map(|&c| r.get(c).cloned().unwrap_or_default())
                .collect()
        };
        Grid {
            head: pick(&self.head),
            rows: self.rows.iter().map(pick).collect(),
            keys: keep.iter().filter(|&&c| c < self.keys).count(),
            right: keep
                .iter()
                .map(|&c| self.right.get(c).copied().unwrap_or(false))
                .collect(),
        }
    }

    /// Rows become columns: the first column's cells head the new columns, the old
    /// header (after its first cell, which heads the new first column) names the rows.
    pub fn transposed(&self, corner: &str) -> Grid {
        let mut head = vec![corner.to_string()];
        head.extend(
            self.rows
                .iter()
                .map(|r| r.first().cloned().unwrap_or_default()),
        );
        let rows = (1..self.head.len())
            .map(|c| {
                let mut row = vec![self.head[c].clone()];
                row.extend(
                    self.rows
                        .iter()
                        .map(|r| r.get(c).cloned().unwrap_or_default()),
                );
                row
            })
            .collect();
        Grid {
            head,
            rows,
            keys: 1,
            right: Vec::new(),
        }
    }
}

/// The width of a drawn table whose columns hold `widths` columns of text: one space of
/// padding each side of a cell, a border between cells and at each end.
fn drawn(widths: &[usize]) -> usize {
    widths.iter().map(|w| w + 3).sum::<usize>() + 1
}

/// Column widths that fit `width` by wrapping the widest columns first, none below its
/// longest word; `None` when even that does not fit.
fn shrink(grid: &Grid, width: usize) -> Option<Vec<usize>> {
    let n = grid.head.len();
    let mut w: Vec<usize> = (0..n).map(|c| grid.natural(c)).collect();
    let least: Vec<usize> = (0..n).map(|c| grid.least(c).min(w[c])).collect();
    while drawn(&w) > width {
        let excess = drawn(&w) - width;
        let c = (0..n).filter(|&c| w[c] > least[c]).max_by_key(|&c| w[c])?;
        let next = (0..n)
            .filter(|&d| d != c)
            .map(|d| w[d])
            .filter(|&x| x < w[c])
            .max()
            .unwrap_or(0);
        w[c] = w[c]
            .saturating_sub(excess)
            .max(least[c])
            .max(next.min(w[c] - 1));
    }
    Some(w)
}

/// Wraps every line of `cell` at spaces to `width` columns.
fn wrap_cell(cell: &str, width: usize) -> String {
    cell.lines()
        .map(|l| wrap(l, width, 0))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Draws `grid` with columns `widths` wide (cells wrapped to them).
fn draw(grid: &Grid, widths: &[usize]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let cells = |r: &Vec<String>| -> Vec<Cell> {
        r.iter()
            .enumerate()
            .map(|(c, s)| {
                let cell = Cell::new(wrap_cell(s, widths.get(c).copied().unwrap_or(usize::MAX)));
                if grid.right.get(c).copied().unwrap_or(false) {
                    cell.set_alignment(CellAlignment::Right)
                } else {
                    cell
                }
            })
            .collect()
    };
    t.set_header(cells(&grid.head));
    for r in &grid.rows {
        t.add_row(cells(r));
    }
    t.to_string()
}

/// `grid` drawn to fit `width` columns: one table, or several (split between columns,
/// each repeating the key columns) separated by a blank line.
pub fn render(grid: &Grid, width: usize) -> String {
    parts(grid, width).join("\n\n")
}

/// The tables [`render`] draws, one per part.
pub fn parts(grid: &Grid, width: usize) -> Vec<String> {
    if let Some(w) = shrink(grid, width) {
        return vec![draw(grid, &w)];
    }
    let keys: Vec<usize> = (0..grid.keys.min(grid.head.len())).collect();
    let key_width: Vec<usize> = keys.iter().map(|&c| grid.least(c)).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for c in grid.keys..grid.head.len() {
        let mut widths = key_width.clone();
        widths.extend(cur.iter().chain([&c]).map(|&d| grid.least(d)));
        if !cur.is_empty() && drawn(&widths) > width {
            groups.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() || groups.is_empty() {
        groups.push(cur);
    }
    groups
        .into_iter()
        .map(|g| {
            let keep: Vec<usize> = keys.iter().chain(&g).copied().collect();
            let part = grid.select(&keep);
            let w = shrink(&part, width)
                .unwrap_or_else(|| (0..keep.len()).map(|c| part.least(c)).collect());
            draw(&part, &w)
        })
        .collect()
}

/// Whether every line of `text` is at most `width` columns.
pub fn fits(text: &str, width: usize) -> bool {
    text.lines().all(|l| cols(l) <= width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(cols_n: usize, cell: &str) -> Grid {
        let mut g = Grid::new(
            std::iter::once("target".to_string())
                .chain((0..cols_n).map(|i| format!("phase_{i}\nentries/s")))
                .collect(),
            1,
        );
        for t in ["ext4", "tmpfs"] {
            let mut r = vec![t.to_string()];
            r.extend((0..cols_n).map(|i| format!("{}{i} {cell}", 1234567)));
            g.rows.push(r);
        }
        g
    }

    #[test]
    fn padding_pads_like_fmt_and_takes_widths_fmt_panics_on() {
        assert_eq!(pad_right("ab", 4), format!("{:<4}", "ab"));
        assert_eq!(pad_left("ab", 4), format!("{:>4}", "ab"));
        assert_eq!(pad_right("abcdef", 2), "abcdef");
        assert_eq!(pad_left("é", 3), "  é");
        // `format!("{:<w$}", "x")` with this width panics ("Formatting argument out of
        // range"); a listing once computed one from a 100 KB name.
        let w = usize::from(u16::MAX) + 10;
        assert_eq!(cols(&pad_right("x", w)), w);
        assert_eq!(cols(&pad_left("x", w)), w);
    }

    #[test]
    fn options_wrap_between_words_then_after_commas() {
        let text =
            "mkfs: mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -b 1024";
        let w = wrap_options(text, 40, 4, 10);
        assert_eq!(
            w,
            "    mkfs: mkfs.ext4 -F -q -E nodiscard,\n          lazy_itable_init=0,\n          \
             lazy_journal_init=0 -b 1024"
        );
        for line in w.lines() {
            assert!(cols(line) <= 40, "{line}");
        }
        // Nothing lost: the words come back joined by spaces.
        assert_eq!(
            w.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace(", ", ","),
            text
        );
        assert_eq!(wrap_options("a b", 40, 2, 4), "  a b");
    }

    #[test]
    fn specs_break_after_commas() {
        let w = wrap_after(
            "postmark:read_block=4096,write_block=4096,number=5000",
            ',',
            30,
            4,
            6,
        );
        assert_eq!(
            w,
            "    postmark:read_block=4096,\n      write_block=4096,\n      number=5000"
        );
    }

    #[test]
    fn listings_continue_under_their_second_field() {
        let text = "  ext4      loop image yes, with many words after it\nplain words here and there too\n";
        let want = "  ext4      loop image yes,\n            with many words\n            after it\nplain words here and there\n  too\n";
        assert_eq!(wrap_aligned(text, 27), want);
    }

    #[test]
    fn a_table_that_fits_is_drawn_as_it_is() {
        let g = grid(2, "±1.0%");
        let text = render(&g, 80);
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(fits(&text, 80));
    }

    #[test]
    fn wide_tables_wrap_at_spaces_then_split_and_never_inside_a_number() {
        for n in [3, 6, 13] {
            let g = grid(n, "±12.5% ~s\ncpu\u{a0}40%");
            for width in [40, 80, 120] {
                let text = render(&g, width);
                assert!(fits(&text, width), "{n} columns at {width}:\n{text}");
                for i in 0..n {
                    assert!(text.contains(&format!("1234567{i}")), "{text}");
                    assert!(text.contains(&format!("phase_{i}")), "{text}");
                }
                assert!(text.contains("cpu\u{a0}40%"), "{text}");
                let parts = parts(&g, width).len();
                assert_eq!(text.matches("ext4").count(), parts, "key column repeated");
            }
        }
    }

    #[test]
    fn transposing_swaps_rows_and_columns() {
        let g = grid(3, "x");
        let t = g.transposed("phase");
        assert_eq!(t.head, ["phase", "ext4", "tmpfs"]);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows[1],
            ["phase_1\nentries/s", "12345671 x", "12345671 x"]
        );
    }
}
