//! Figures in units people read: `93.4 MB/s`, `64.5 GiB`, `1.2 ms`, counts as integers.
//! Only the terminal and the HTML report use them; JSON and CSV keep the exact bytes and
//! seconds. MB, kB, GB are powers of 1000 (rates, as `MB/s` everywhere in fsarena); KiB,
//! MiB, GiB powers of 1024 (sizes). A no-break space joins number and unit, so that a
//! table never wraps between them.

use super::terminal::fmt_num;

/// Joins a number and its unit (a no-break space between them).
const NBSP: char = '\u{a0}';

/// Units whose figures count whole things.
const COUNTS: &[&str] = &[
    "calls",
    "files",
    "flushes",
    "fsyncs",
    "names",
    "dirs",
    "entries",
    "ops",
    "parts",
    "ranks",
    "rounds",
    "states",
    "requests",
    "retries",
    "syncs",
    "transfers",
    "tx",
    "writes",
];

/// Whether figures in `unit` count whole things (printed as integers).
pub fn is_count(unit: &str) -> bool {
    COUNTS.contains(&unit)
}

/// `v` scaled by the first of `steps` (factor, name) it reaches, else by the last.
fn scaled(v: f64, steps: &[(f64, &str)]) -> String {
    let (f, name) = steps
        .iter()
        .find(|(f, _)| v.abs() >= *f)
        .or(steps.last())
        .copied()
        .unwrap_or((1.0, ""));
    format!("{}{NBSP}{name}", short(v / f))
}

/// Three significant digits at most below 1000 (`93.4`, `1.25`), whole above.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.2e}")
    }
}

/// Bytes in powers of 1024.
pub fn bytes(v: f64) -> String {
    scaled(
        v,
        &[
            ((1u64 << 40) as f64, "TiB"),
            ((1u64 << 30) as f64, "GiB"),
            (1048576.0, "MiB"),
            (1024.0, "KiB"),
            (1.0, "B"),
        ],
    )
}

/// Seconds, in the unit that keeps the figure readable (`1.2 ms`, `35 us`, `12.5 s`).
pub fn seconds(v: f64) -> String {
    scaled(v, &[(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")])
}

/// Figure `v` of `unit` (as declared in [`crate::figures`]) for a reader.
pub fn value(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    match unit {
        "bytes" => bytes(v),
        "KiB" => bytes(v * 1024.0),
        "bytes/s" => scaled(
            v,
            &[(1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")],
        ),
        "MB/s" => scaled(v * 1e6, &[(1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")]),
        "s" => seconds(v),
        "ms" => seconds(v / 1e3),
        "us" => seconds(v / 1e6),
        "centiseconds" => seconds(v / 100.0),
        "%" => format!("{v:.0}%"),
        "yes=1" if v == 1.0 => "yes".into(),
        "yes=1" if v == 0.0 => "no".into(),
        "ratio" => fmt_num(v),
        u if is_count(u) => format!("{}{NBSP}{u}", v.round()),
        u => format!("{}{NBSP}{u}", fmt_num(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: String) -> String {
        s.replace(NBSP, " ")
    }

    #[test]
    fn figures_read_in_human_units() {
        for (v, unit, want) in [
            (93_437_719.0, "bytes/s", "93.4 MB/s"),
            (7378.0, "MB/s", "7.38 GB/s"),
            (715.0, "MB/s", "715 MB/s"),
            (64.5 * 1073741824.0, "bytes", "64.5 GiB"),
            (-58_820.0, "bytes", "-57.4 KiB"),
            (279_980.0, "KiB", "273 MiB"),
            (512.0, "bytes", "512 B"),
            (0.0012, "s", "1.20 ms"),
            (12.5, "s", "12.5 s"),
            (35.0, "us", "35.0 us"),
            (1500.0, "us", "1.50 ms"),
            (3000.0, "centiseconds", "30.0 s"),
            (1000.0, "files", "1000 files"),
            (9554.5, "names", "9555 names"),
            (1.0, "yes=1", "yes"),
            (17.33, "ratio", "17.33"),
            (2.5, "fragments/file", "2.500 fragments/file"),
        ] {
            assert_eq!(plain(value(v, unit)), want, "{v} {unit}");
        }
    }
}
