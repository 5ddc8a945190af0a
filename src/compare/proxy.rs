//! Whether the seeds' database proxy ranks filesystems as real database engines do: the
//! 2001 article's `random.c` (fsarena's `dbrandom`, its `random` phase) against SQLite's,
//! PostgreSQL's (`pgbench`) and RocksDB's (`db_bench`) transactions, when a run has both
//! (the `database` suite).
//!
//! Per engine and per pair of filesystems ranked in both: the proxy's verdict and the
//! engine's, each as the run's verdicts give them ([`super::rank`]: told apart with its
//! direction, within the margin, or cannot tell). They **agree** when both tell the pair
//! apart in the same direction; they **disagree** when both tell it apart in opposite
//! directions; a pair **neither** tells apart is counted on its own (shared lack of power
//! is not agreement); otherwise one tells apart what the other cannot (**partly**). Each
//! pair's ratio and interval from both sides are kept, to be read beside each other. Over
//! all filesystems ranked in both, Spearman's rank correlation of the two orders (of their
//! geometric means), from -1 (reversed) to 1 (the same order) — only from
//! [`RHO_FROM`] filesystems: over 3 it can only be ±0.5 or ±1.

use super::family::Outcome;
use super::rank::PhaseVerdict;
use super::rank::{fmt_interval, fmt_ratio};
use crate::workload::DatabaseRole;

/// The fewest filesystems a rank correlation is given over.
pub const RHO_FROM: usize = 5;

/// How many times slower the second filesystem of a pair is than the first, by one side,
/// with the interval its verdict prints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Ratio {
    fn text(self) -> String {
        format!(
            "{} {}",
            fmt_ratio(self.ratio),
            fmt_interval(self.lo, self.hi)
        )
    }
}

/// One pair of filesystems, as `a–b`, with each side's [`Ratio`] of `b` to `a`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRatios {
    pub pair: String,
    pub proxy: Option<Ratio>,
    pub engine: Option<Ratio>,
}

/// How one engine's verdicts compare with the proxy's.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// The engine's workload label and phase (`pgbench run`).
    pub engine: String,
    /// The proxy's workload label and phase.
    pub proxy: String,
    /// Pairs of filesystems ranked in both.
    pub pairs: usize,
    /// Pairs both tell apart in the same direction.
    pub agree: usize,
    /// Pairs neither tells apart.
    pub neither: usize,
    /// Pairs told apart in opposite directions, as `a–b`.
    pub disagree: Vec<String>,
    /// Pairs one tells apart and the other does not, as `a–b (proxy)` or `a–b (engine)`
    /// naming the one that does.
    pub partly: Vec<String>,
    /// Spearman's rank correlation over the filesystems ranked in both, when at least
    /// [`RHO_FROM`] are.
    pub rho: Option<f64>,
    /// Filesystems ranked in both.
    pub n: usize,
    /// Every pair's ratios, proxy and engine.
    pub ratios: Vec<PairRatios>,
}

impl Agreement {
    /// One line: `pgbench run: agrees on 1 of 3 pairs; neither tells apart 1; reversed:
    /// xfs–btrfs; no rank correlation over 3 filesystems (needs 5)`.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{}: agrees on {} of {} pairs",
            self.engine, self.agree, self.pairs
        );
        if self.neither > 0 {
            line.push_str(&format!("; neither tells apart {}", self.neither));
        }
        if !self.disagree.is_empty() {
            line.push_str(&format!("; reversed: {}", self.disagree.join(", ")));
        }
        if !self.partly.is_empty() {
            line.push_str(&format!(
                "; told apart by only one of them: {}",
                self.partly.join(", ")
            ));
        }
        match self.rho {
            Some(r) => line.push_str(&format!(
                "; rank correlation {r:+.2} over {} filesystems",
                self.n
            )),
            None => line.push_str(&format!(
                "; no rank correlation over {} filesystems (needs {RHO_FROM})",
                self.n
            )),
        }
        line
    }

    /// Per pair, the ratio of its second filesystem to its first by each side:
    /// `xfs/ext4: proxy 1.50× [1.40–1.61×], pgbench 1.02× [0.95–1.10×]`.
    pub fn ratio_lines(&self) -> Vec<String> {
        let engine = self.engine.split([':', ' ']).next().unwrap_or("engine");
        let side = |r: Option<Ratio>| r.map_or("no interval".to_string(), Ratio::text);
        self.ratios
            .iter()
            .map(|p| {
                format!(
                    "{}: proxy {}, {engine} {}",
                    p.pair,
                    side(p.proxy),
                    side(p.engine)
                )
            })
            .collect()
    }
}

/// The database role of the workload a run's label names (`sqlite`, `sqlite:mode=tpcb`),
/// as it declares it ([`crate::workload::WorkloadInfo::database`]).
fn role(label: &str) -> Option<DatabaseRole> {
    let name = label.split(':').next().unwrap_or(label);
    let info = crate::workload::registry()
        .iter()
        .find(|w| w.name == name)?;
    info.database
}

/// What a verdict says of the pair `a`, `b`: `Some(true)` when `a` is told better,
/// `Some(false)` when `b` is, `None` when not told apart; `Err` when either is not ranked.
fn says(v: &PhaseVerdict, a: &str, b: &str) -> Result<Option<bool>, ()> {
    let i = v.places.iter().position(|p| p.target == a).ok_or(())?;
    let j = v.places.iter().position(|p| p.target == b).ok_or(())?;
    if v.places[i].flaw.is_some() || v.places[j].flaw.is_some() {
        return Err(());
    }
    Ok(match v.outcome(i, j) {
        Some(Outcome::Apart) => Some(i < j),
        _ => None,
    })
}

/// The targets of `v` that are in `common`, best first.
fn order<'a>(v: &'a PhaseVerdict, common: &[&str]) -> Vec<&'a str> {
    (v.places.iter())
        .map(|p| p.target.as_str())
        .filter(|t| common.contains(t))
        .collect()
}

/// How many times slower `b` is than `a` by verdict `v`, with its interval.
fn ratio(v: &PhaseVerdict, a: &str, b: &str) -> Option<Ratio> {
    let i = v.places.iter().position(|p| p.target == a)?;
    let j = v.places.iter().position(|p| p.target == b)?;
    let pair = v
        .pairs
        .iter()
        .find(|p| (p.above, p.below) == (i.min(j), i.max(j)))?;
    let test = pair.test.as_ref()?;
    let (lo, hi) = v.family.interval(test);
    let r = test.d.exp();
    // The test is of the lower-placed one against the higher: turned round when `b` is
    // placed above `a`.
    Some(if i < j {
        Ratio { ratio: r, lo, hi }
    } else {
        Ratio {
            ratio: 1.0 / r,
            lo: 1.0 / hi,
            hi: 1.0 / lo,
        }
    })
}

/// Spearman's ρ of two orders of the same items (each best first; ties are not kept by a
/// ranking, so ranks are positions), from [`RHO_FROM`] items.
fn spearman(x: &[&str], y: &[&str]) -> Option<f64> {
    let n = x.len();
    if n < RHO_FROM || y.len() != n {
        return None;
    }
    let d2: f64 = x
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let j = y.iter().position(|u| u == t).unwrap_or(i);
            (i as f64 - j as f64).powi(2)
        })
        .sum();
    let n = n as f64;
    Some(1.0 - 6.0 * d2 / (n * (n * n - 1.0)))
}

/// The agreement of each engine phase among `verdicts` with the proxy's, engines in the
/// order `fsarena list` shows them; empty without the proxy or without an engine. Which
/// workload is the proxy and which are engines, and by which phase, each workload declares
/// ([`DatabaseRole`]). The proxy is its plain (unlabelled) run when the run has one, else
/// its first labelled variant.
pub fn agreement(verdicts: &[PhaseVerdict]) -> Vec<Agreement> {
    let proxies: Vec<&PhaseVerdict> = verdicts
        .iter()
        .filter(|v| matches!(role(&v.workload), Some(DatabaseRole::Proxy(p)) if p == v.phase))
        .collect();
    let Some(proxy) = proxies
        .iter()
        .find(|v| !v.workload.contains(':'))
        .or(proxies.first())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for info in crate::workload::registry() {
        let Some(DatabaseRole::Engine(phase)) = info.database else {
            continue;
        };
        let mine = |v: &&PhaseVerdict| {
            v.workload.split(':').next() == Some(info.name)
                && v.phase == phase
                && v.among == proxy.among
        };
        for e in verdicts.iter().filter(mine) {
            let common: Vec<&str> = proxy
                .places
                .iter()
                .filter(|p| p.flaw.is_none())
                .map(|p| p.target.as_str())
                .filter(|t| e.places.iter().any(|q| q.target == *t && q.flaw.is_none()))
                .collect();
            let mut a = Agreement {
                engine: format!("{} {}", e.workload, e.phase),
                proxy: format!("{} {}", proxy.workload, proxy.phase),
                pairs: 0,
                agree: 0,
                neither: 0,
                disagree: Vec::new(),
                partly: Vec::new(),
                rho: None,
                n: common.len(),
                ratios: Vec::new(),
            };
            for (i, x) in common.iter().enumerate() {
                for y in &common[i + 1..] {
                    let (Ok(p), Ok(q)) = (says(proxy, x, y), says(e, x, y)) else {
                        continue;
                    };
                    a.pairs += 1;
                    match (p, q) {
                        (Some(p), Some(q)) if p != q => a.disagree.push(format!("{x}–{y}")),
                        (Some(_), Some(_)) => a.agree += 1,
                        (Some(_), None) => a.partly.push(format!("{x}–{y} (proxy)")),
                        (None, Some(_)) => a.partly.push(format!("{x}–{y} ({})", info.name)),
                        (None, None) => a.neither += 1,
                    }
                    a.ratios.push(PairRatios {
                        pair: format!("{y}/{x}"),
                        proxy: ratio(proxy, x, y),
                        engine: ratio(e, x, y),
                    });
                }
            }
            a.rho = spearman(&order(proxy, &common), &order(e, &common));
            if a.pairs > 0 {
                out.push(a);
            }
        }
    }
    out
}

/// The agreement as the terminal report shows it, wrapped at `width`; empty when there is
/// none to show.
pub fn render(agreements: &[Agreement], width: usize) -> String {
    let Some(first) = agreements.first() else {
        return String::new();
    };
    let head = format!(
        "Proxy against real engines: does {} rank the filesystems as each engine does? \
         (agree: both tell a pair apart the same way; each pair's ratio, how many times \
         slower the first named is, by both)",
        first.proxy
    );
    let mut out = format!("\n{}", super::rank::wrap(&head, width, ""));
    for a in agreements {
        let line = a.summary();
        out.push_str(&super::rank::wrap(&line, width, "  "));
        for r in a.ratio_lines() {
            out.push_str(&super::rank::wrap(&format!("  {r}"), width, "    "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_orders() {
        let abc = ["a", "b", "c", "d", "e"];
        assert_eq!(spearman(&abc, &abc), Some(1.0));
        assert_eq!(spearman(&abc, &["e", "d", "c", "b", "a"]), Some(-1.0));
        assert_eq!(spearman(&abc, &["b", "a", "c", "d", "e"]), Some(0.9));
        // Below five, none: over three it could only be ±0.5 or ±1.
        assert_eq!(spearman(&["a", "b", "c"], &["a", "b", "c"]), None);
    }

    /// A verdict on `phase` of `label` from samples of each target, higher better.
    fn verdict(label: &str, phase: &str, samples: &[(&str, [f64; 5])]) -> PhaseVerdict {
        let s: Vec<(&str, Vec<f64>)> = samples.iter().map(|(t, x)| (*t, x.to_vec())).collect();
        crate::compare::rank::rank(
            label,
            phase,
            "tx/s",
            crate::compare::verdict::Sense::Rate,
            &s,
        )
        .unwrap()
    }

    /// The proxy ranks ext4 > xfs > btrfs, clearly; pgbench agrees on ext4 and btrfs but
    /// reverses xfs and btrfs; db_bench cannot tell ext4 from xfs.
    #[test]
    fn pairs_agree_reverse_or_are_told_apart_by_one() {
        let tight = |x: f64| [x, x * 1.01, x * 0.99, x * 1.005, x * 0.995];
        let proxy = verdict(
            "dbrandom",
            "random",
            &[
                ("ext4", tight(300.0)),
                ("xfs", tight(200.0)),
                ("btrfs", tight(100.0)),
            ],
        );
        let pg = verdict(
            "pgbench",
            "run",
            &[
                ("ext4", tight(900.0)),
                ("xfs", tight(300.0)),
                ("btrfs", tight(600.0)),
            ],
        );
        let wide = [100.0, 300.0, 150.0, 250.0, 200.0];
        let db = verdict(
            "db_bench",
            "readwhilewriting",
            &[
                ("ext4", wide),
                ("xfs", wide.map(|x| x * 0.9)),
                ("btrfs", tight(10.0)),
            ],
        );
        let other = verdict(
            "pgbench",
            "load",
            &[("ext4", tight(1.0)), ("xfs", tight(2.0))],
        );
        let a = agreement(&[proxy.clone(), other, pg, db]);
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(a[0].engine, "pgbench run");
        assert_eq!(a[0].proxy, "dbrandom random");
        assert_eq!((a[0].pairs, a[0].agree, a[0].neither), (3, 2, 0));
        assert_eq!(a[0].disagree, ["xfs–btrfs"]);
        assert!(a[0].partly.is_empty());
        assert_eq!(a[0].rho, None, "three filesystems");
        // Each pair's ratio of its second to its first, by both: xfs is 1.5× slower than
        // ext4 by the proxy (300 against 200), 3× by pgbench; btrfs/xfs turned round.
        let r = &a[0].ratios;
        assert_eq!(r[0].pair, "xfs/ext4");
        assert!((r[0].proxy.unwrap().ratio - 1.5).abs() < 0.01, "{r:?}");
        assert!((r[0].engine.unwrap().ratio - 3.0).abs() < 0.03, "{r:?}");
        assert_eq!(r[2].pair, "btrfs/xfs");
        let turned = r[2].engine.unwrap();
        assert!((turned.ratio - 0.5).abs() < 0.01, "{r:?}");
        assert!(
            turned.lo < turned.ratio && turned.ratio < turned.hi,
            "{r:?}"
        );
        assert_eq!(a[1].engine, "db_bench readwhilewriting");
        assert_eq!(a[1].partly, ["ext4–xfs (proxy)"]);
        assert_eq!(a[1].agree, 2);
        assert!(agreement(&[proxy]).is_empty());
        let text = render(&a, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }

    /// Two sides that both cannot tell a pair apart do not agree on it: the pair is
    /// counted apart, as neither telling it.
    #[test]
    fn a_pair_neither_tells_apart_is_not_agreement() {
        let wide = [100.0, 300.0, 150.0, 250.0, 200.0];
        let proxy = verdict(
            "dbrandom",
            "random",
            &[("ext4", wide), ("xfs", wide.map(|x| x * 1.1))],
        );
        let pg = verdict(
            "pgbench",
            "run",
            &[("ext4", wide.map(|x| x * 0.9)), ("xfs", wide)],
        );
        let a = agreement(&[proxy, pg]);
        assert_eq!((a[0].pairs, a[0].agree, a[0].neither), (1, 0, 1), "{a:?}");
        assert!(
            a[0].summary().contains("neither tells apart 1"),
            "{}",
            a[0].summary()
        );
    }

    #[test]
    fn roles_come_from_the_workloads() {
        assert_eq!(role("dbrandom"), Some(DatabaseRole::Proxy("random")));
        assert_eq!(
            role("dbrandom:fill=60"),
            Some(DatabaseRole::Proxy("random"))
        );
        assert_eq!(
            role("sqlite:mode=tpcb,journal=wal"),
            Some(DatabaseRole::Engine("run"))
        );
        assert_eq!(
            role("db_bench"),
            Some(DatabaseRole::Engine("readwhilewriting"))
        );
        assert_eq!(role("sqlitex"), None);
        assert_eq!(role("bonnie"), None);
    }
}
