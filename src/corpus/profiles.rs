//! The profiles: how `Corpus::new` builds each profile's directory tree and file sets, and
//! the helpers that spread files over directories.

use super::fileset::{normal, word};
use super::*;

/// Splits `count` items over directories in proportion to `weights` (largest remainder);
/// returns the prefix sums (`len = weights.len() + 1`).
pub(super) fn spread(count: u64, weights: &[f64]) -> Vec<u64> {
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights
        .iter()
        .map(|w| count as f64 * w / total.max(f64::MIN_POSITIVE))
        .collect();
    let mut counts: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
    let mut left = count - counts.iter().sum::<u64>().min(count);
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &d in order.iter().cycle() {
        if left == 0 {
            break;
        }
        counts[d] += 1;
        left -= 1;
    }
    let mut start = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0;
    start.push(0);
    for c in counts {
        acc += c;
        start.push(acc);
    }
    start
}

/// Scales a count, keeping at least 1.
pub(super) fn scaled(n: u64, scale: f64) -> u64 {
    ((n as f64 * scale).round() as u64).max(1)
}

/// A random recursive tree of `n` directories below the root, at most `max_depth` deep:
/// each new directory hangs under a uniformly chosen earlier one that is not too deep.
pub(super) fn random_tree(key: u64, n: u64, max_depth: u32) -> Vec<Dir> {
    let mut dirs = vec![Dir {
        path: String::new(),
        parent: 0,
        depth: 0,
    }];
    let mut children = vec![0u64];
    for i in 1..=n {
        let mut parent = (hash(key, i) % dirs.len() as u64) as usize;
        let mut tries = 0;
        while dirs[parent].depth >= max_depth && tries < 64 {
            parent = (hash(key ^ 0x7472_7920, i * 64 + tries) % dirs.len() as u64) as usize;
            tries += 1;
        }
        if dirs[parent].depth >= max_depth {
            parent = 0;
        }
        let name = format!("{}{}", word(hash(key ^ 0x646e_616d, i)), children[parent]);
        children[parent] += 1;
        children.push(0);
        let path = join(&dirs[parent].path, &name);
        let depth = dirs[parent].depth + 1;
        dirs.push(Dir {
            path,
            parent,
            depth,
        });
    }
    dirs
}

pub(super) fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

/// Uneven per-directory weights: log-normal with σ 1 (a few directories hold many files).
pub(super) fn lognormal_weights(key: u64, n: usize) -> Vec<f64> {
    (0..n as u64)
        .map(|d| normal(hash(key, 2 * d), hash(key, 2 * d + 1)).exp())
        .collect()
}

impl Corpus {
    /// The corpus of `profile` at `scale` (file counts, directory counts and bytes
    /// multiplied by it), deterministic from `seed`. Unknown profiles are usage errors.
    pub fn new(profile: &str, scale: f64, seed: u64) -> Result<Self> {
        let profile = PROFILES
            .iter()
            .copied()
            .find(|p| *p == profile)
            .ok_or_else(|| {
                usage(format!(
                    "unknown corpus profile '{}'{}; valid: {}",
                    crate::error::echo(profile),
                    crate::error::did_you_mean(profile, PROFILES.iter().copied()),
                    PROFILES.join(", ")
                ))
            })?;
        if !(scale > 0.0 && scale <= 100.0) {
            return Err(usage(format!(
                "scale={scale}: must be above 0 and at most 100"
            )));
        }
        let key = hash(seed, 0x636f_7270_7573);
        let bytes = |b: f64| (b * scale).round() as u64;
        let (dirs, files, symlink_dirs) = match profile {
            "source-tree" => {
                let dirs = random_tree(key, scaled(1263, scale), 6);
                let weights = lognormal_weights(key ^ 1, dirs.len());
                let dist = SizeDist::LogNormal {
                    median: 4055.0,
                    sigma: 1.41,
                    max: 1 << 20,
                };
                let n = scaled(21_280, scale);
                let fs = FileSet::new(
                    key ^ 2,
                    Naming::Source,
                    dist,
                    n,
                    bytes(222.0 * 1048576.0),
                    &weights,
                );
                let links = (0..dirs.len())
                    .filter(|&d| hash(key ^ 3, d as u64) % 100 == 0)
                    .collect();
                (dirs, fs, links)
            }
            "web-cache" => {
                let l2 = scaled(256, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                for a in 0..16u64 {
                    dirs.push(Dir {
                        path: format!("{a:02X}"),
                        parent: 0,
                        depth: 1,
                    });
                }
                for a in 0..16u64 {
                    for b in 0..l2 {
                        dirs.push(Dir {
                            path: format!("{a:02X}/{b:02X}"),
                            parent: 1 + a as usize,
                            depth: 2,
                        });
                    }
                }
                // squid's (f / l2 / l2) % 16, (f / l2) % l2 fills the leaves evenly.
                let mut weights = vec![0.0; dirs.len()];
                weights[17..].iter_mut().for_each(|w| *w = 1.0);
                let dist = SizeDist::LogNormal {
                    median: 3400.0,
                    sigma: 1.6,
                    max: 64 << 20,
                };
                let n = scaled(250_000, scale);
                let fs = FileSet::new(key ^ 2, Naming::Squid, dist, n, bytes(3.1e9), &weights);
                (dirs, fs, Vec::new())
            }
            "maildir" => {
                let folders = scaled(20, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                let mut weights = vec![0.0];
                let fw = lognormal_weights(key ^ 1, folders as usize);
                for (f, w) in fw.iter().enumerate() {
                    let name = if f == 0 {
                        "INBOX".to_string()
                    } else {
                        format!(".{}{f}", word(hash(key ^ 4, f as u64)))
                    };
                    let top = dirs.len();
                    dirs.push(Dir {
                        path: name.clone(),
                        parent: 0,
                        depth: 1,
                    });
                    weights.push(0.0);
                    for (sub, share) in [("cur", 0.97), ("new", 0.03), ("tmp", 0.0)] {
                        dirs.push(Dir {
                            path: format!("{name}/{sub}"),
                            parent: top,
                            depth: 2,
                        });
                        weights.push(w * share);
                    }
                }
                let dist = SizeDist::LogNormal {
                    median: 3072.0,
                    sigma: 1.0,
                    max: 32 << 20,
                };
                let n = scaled(50_000, scale);
                let fs = FileSet::new(key ^ 2, Naming::Maildir, dist, n, bytes(250e6), &weights);
                (dirs, fs, Vec::new())
            }
            "media" => {
                let albums = scaled(20, scale);
                let mut dirs = vec![Dir {
                    path: String::new(),
                    parent: 0,
                    depth: 0,
                }];
                for a in 0..albums {
                    dirs.push(Dir {
                        path: format!("album-{a:03}"),
                        parent: 0,
                        depth: 1,
                    });
                }
                let mut weights = vec![1.0; dirs.len()];
                weights[0] = 0.0;
                let dist = SizeDist::Uniform {
                    lo: 3_000_000,
                    hi: 8_000_000,
                };
                let n = scaled(300, scale);
                let fs = FileSet::new(key ^ 2, Naming::Media, dist, n, bytes(1.65e9), &weights);
                (dirs, fs, Vec::new())
            }
            _ => {
                let dirs = random_tree(key, scaled(2000, scale), 12);
                let weights = lognormal_weights(key ^ 1, dirs.len());
                let dist = SizeDist::LogNormal {
                    median: 4096.0,
                    sigma: 2.35,
                    max: 256 << 20,
                };
                let n = scaled(20_000, scale);
                let fs = FileSet::new(
                    key ^ 2,
                    Naming::Desktop,
                    dist,
                    n,
                    bytes(1073741824.0),
                    &weights,
                );
                let links = (0..dirs.len())
                    .filter(|&d| hash(key ^ 3, d as u64) % 50 == 0)
                    .collect();
                (dirs, fs, links)
            }
        };
        let symlink_dirs = symlink_dirs
            .into_iter()
            .filter(|&d: &usize| !files.in_dir(d).is_empty())
            .collect();
        Ok(Self {
            profile,
            scale,
            dirs,
            files,
            symlink_dirs,
        })
    }
}
