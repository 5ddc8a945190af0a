//! How each aged target was aged, for the reports: one summary per target from its trials'
//! `provision.aging` (docs/aging.md says how to read it).

use crate::result::{Aging, RunResult, TargetInfo};

/// Bytes as read: `1.9 GiB`, `57.2 KiB` (no-break space).
fn size(bytes: u64) -> String {
    crate::report::human::bytes(bytes as f64).replace(' ', "\u{a0}")
}

/// `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The aging of one target's trials.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary<'a> {
    /// The first trial that aged (or, all reusing a kept image, the first).
    pub aging: &'a Aging,
    pub trials: usize,
    /// Trials that started from a copy of the kept image, the longest copy and how the
    /// copies were made.
    pub reused: usize,
    pub copy_s: Option<f64>,
    pub copy_how: Option<&'a str>,
    /// How many different seeds the trials were aged from: more than one with
    /// `independent` aging (one per repetition).
    pub seeds: usize,
}

/// The aging of target `t`'s trials; `None` when it was not aged.
pub fn of_target<'a>(run: &'a RunResult, t: &TargetInfo) -> Option<Summary<'a>> {
    let all: Vec<&Aging> = run
        .trials
        .iter()
        .filter(|x| x.target == t.name)
        .filter_map(|x| x.provision.aging.as_ref())
        .collect();
    let first = all.iter().find(|a| !a.reused).or(all.first())?;
    let copies = all.iter().filter(|a| a.reused);
    let mut seeds: Vec<u64> = all.iter().filter_map(|a| a.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    Some(Summary {
        aging: first,
        trials: all.len(),
        reused: copies.clone().count(),
        copy_s: copies.clone().filter_map(|a| a.copy_s).reduce(f64::max),
        copy_how: copies.filter_map(|a| a.copy_how.as_deref()).next(),
        seeds: seeds.len(),
    })
}

/// What aging did: `aged desktop:fill=75,churn=2: 2.0 GiB written in 44,345 operations
/// (10.6 s), left 10,333 files in 1,181 directories, 77% used; 2 of 3 trials started from
/// the kept image (copied in at most 4.1 s)`.
pub fn done_text(s: &Summary) -> String {
    let (a, trials, reused) = (s.aging, s.trials, s.reused);
    let used = if a.capacity_bytes > 0 {
        100.0 * a.used_bytes as f64 / a.capacity_bytes as f64
    } else {
        0.0
    };
    let full = match a.full {
        0 => String::new(),
        1 => "; full once on the way (a file deleted to go on)".into(),
        n => format!("; full {n} times on the way (a file deleted each time to go on)"),
    };
    let independent = match s.seeds {
        0 | 1 => String::new(),
        n => format!(
            "; aged independently from {n} seeds, one per repetition (figures of the first)"
        ),
    };
    let kept = match (trials, reused) {
        (_, 0) if trials > s.seeds.max(1) => format!("; aged anew for each of {trials} trials"),
        (_, 0) => String::new(),
        _ => format!(
            "; {reused} of {trials} trials started from the kept image{}",
            match (s.copy_how, s.copy_s) {
                (Some(how), Some(secs)) => format!(" ({how}, at most {secs:.1}\u{a0}s)"),
                _ => String::new(),
            }
        ),
    };
    format!(
        "aged {}: {} written in {} operations ({:.1}\u{a0}s), left {} files in {} \
         directories, {used:.0}% used{full}{independent}{kept}",
        a.spec,
        size(a.bytes_written),
        thousands(a.operations),
        a.seconds,
        thousands(a.files),
        thousands(a.dirs),
    )
}

/// How fragmented aging left it: `fragments per file: mean 1.31, p99 6, 12.0% of files in
/// more than one; free space: 1,234 extents (e2freefrag), mean 160.0KiB, largest 64MiB`.
pub fn fragmentation_text(a: &Aging) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(f) = &a.file_fragments {
        parts.push(format!(
            "fragments per file: mean {:.2}, p99 {}, {:.1}% of {} files in more than one",
            f.mean,
            f.p99,
            100.0 * f.fragmented_share,
            thousands(f.files)
        ));
    }
    if let Some(s) = &a.free_space {
        let mean = s.free_bytes.checked_div(s.extents).unwrap_or(0);
        let largest = s
            .largest_bytes
            .map(|b| format!(", largest {}", size(b)))
            .unwrap_or_default();
        let what = if s.method == "probe file" {
            format!(
                "a {} probe file fallocated into it took {} extents",
                size(s.free_bytes),
                thousands(s.extents)
            )
        } else {
            format!(
                "{} in {} extents ({}), mean {}{largest}",
                size(s.free_bytes),
                thousands(s.extents),
                s.method,
                size(mean)
            )
        };
        parts.push(format!("free space: {what}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_aging_says_from_how_many_seeds() {
        let trial = |rep: u32, seed: u64| {
            let mut t = crate::result::Trial::new("ext4+aged", "w", "w", Default::default(), rep);
            t.provision.aging = Some(Aging {
                spec: "desktop:fill=75,churn=2,independent".into(),
                seed: Some(seed),
                ..Default::default()
            });
            t
        };
        let target = TargetInfo {
            name: "ext4+aged".into(),
            ..Default::default()
        };
        let text = |trials: Vec<crate::result::Trial>| {
            let run = crate::report::fixture_with(trials);
            done_text(&of_target(&run, &target).unwrap())
        };
        // Two workloads in repetition 2 share its seed.
        let both = text(vec![trial(1, 42), trial(2, 7), trial(2, 7)]);
        assert!(
            both.contains("aged independently from 2 seeds, one per repetition"),
            "{both}"
        );
        // One trial per repetition: "aged anew" would say it twice.
        let each = text(vec![trial(1, 42), trial(2, 7)]);
        assert!(each.contains("from 2 seeds"), "{each}");
        assert!(!each.contains("aged anew for each"), "{each}");
        let one = text(vec![trial(1, 42), trial(2, 42)]);
        assert!(!one.contains("independently"), "{one}");
        assert!(one.contains("aged anew for each of 2 trials"), "{one}");
    }

    #[test]
    fn counts_are_grouped_in_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(44_345), "44,345");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
