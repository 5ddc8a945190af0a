//! The aging profiles: what kinds of files an aged filesystem holds and how they came and
//! went. Each profile is a size distribution, a directory layout, which files are deleted
//! when room is needed, and which changes are made to live files between creates and
//! deletes.
//!
//! | profile | sizes | layout | deleted | changes to live files |
//! |---|---|---|---|---|
//! | `desktop` | log-normal, median 4 KiB, σ 2.35, ≤ 256 MiB | random tree ≤ 8 deep | any | appends, saves (write new + rename over), renames |
//! | `source-tree` | log-normal, median 4,055 B, σ 1.41, ≤ 1 MiB | random tree ≤ 6 deep | any | saves (edits), renames |
//! | `maildir` | log-normal, median 3 KiB, σ 1.0, ≤ 64 MiB | folders × `tmp`/`new`/`cur` | any (expunge) | delivery: `tmp` → `new`, then `new` → `cur` |
//! | `database` | extends of 64 KiB–1 MiB | 16 relation files | a whole relation (a table rewritten and dropped) | 8 KiB pages overwritten in place |
//! | `web-cache` | log-normal, median 3.4 KB, σ 1.6, ≤ 64 MiB | squid's 16 × L2 | the oldest (LRU) | none |
//!
//! Sources: the `desktop` sizes are the shape Douceur & Bolosky found over 10,568 desktop
//! file systems ("A Large-Scale Study of File-System Contents", SIGMETRICS 1999), with
//! fsarena's parameters as in the corpus generator ([`crate::corpus`]); `source-tree` is
//! compilebench's Linux 2.6.20 tree (its median and spread); `maildir` follows the Maildir
//! delivery protocol (D. J. Bernstein, maildir(5): write into `tmp`, rename into `new`, the
//! reader moves it to `cur`); `database` is PostgreSQL's storage (8 KiB pages in relation
//! files that grow by extension and are replaced whole by VACUUM FULL, CLUSTER or a table
//! rewrite); `web-cache` is squid's `L1/L2/%08X` cache with LRU replacement, as in the
//! 2001 seed article's 250,000-file cache.

use crate::error::usage;
use anyhow::Result;

/// An aging profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    Desktop,
    SourceTree,
    Maildir,
    Database,
    WebCache,
}

/// Every profile, in the order `fsarena list` shows them.
pub const PROFILES: &[Profile] = &[
    Profile::Desktop,
    Profile::SourceTree,
    Profile::Maildir,
    Profile::Database,
    Profile::WebCache,
];

/// Size distributions (of new files, appends and extends).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    /// Log-normal with this median (bytes) and σ of the natural log, capped at `max`.
    LogNormal { median: f64, sigma: f64, max: u64 },
    /// Uniform in `[lo, hi]` bytes.
    Uniform { lo: u64, hi: u64 },
}

/// How a profile's directories are laid out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    /// A random recursive tree at most `depth` deep, one directory per ten files expected,
    /// its files named with these extensions in turn.
    Tree {
        depth: u32,
        exts: &'static [&'static str],
    },
    /// Maildir++ folders, each with `tmp`, `new` and `cur`.
    Maildir,
    /// squid's 16 first-level directories of L2 second-level ones.
    Squid,
    /// A fixed number of relation files in one directory, grown by extension.
    Relations { count: usize },
}

/// Which live file goes when room is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victims {
    /// Any live file, uniformly.
    Random,
    /// The oldest (least recently created) first.
    Oldest,
}

/// A change made to one live file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Appends a piece drawn from the size distribution.
    Append,
    /// Writes a new version beside it, fsyncs it and renames it over the old one (how
    /// editors and office programs save).
    Save,
    /// Moves it to another directory.
    Rename,
    /// Overwrites 16 random 8 KiB pages in place.
    Pages,
    /// Maildir delivery's second step: `new/` → `cur/`.
    Seen,
}

/// What a profile does.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub sizes: SizeDist,
    pub layout: Layout,
    pub victims: Victims,
    /// Share of steps that change a live file rather than create or delete one.
    pub change_share: f64,
    /// The changes, with their relative weights.
    pub changes: &'static [(Change, f64)],
}

impl Profile {
    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Desktop => "desktop",
            Profile::SourceTree => "source-tree",
            Profile::Maildir => "maildir",
            Profile::Database => "database",
            Profile::WebCache => "web-cache",
        }
    }

    /// One line for `fsarena list`.
    pub fn about(self) -> &'static str {
        match self {
            Profile::Desktop => {
                "documents of log-normal sizes (median 4 KiB) in a deep tree: created, \
                 appended, saved over, moved, deleted (Douceur & Bolosky 1999)"
            }
            Profile::SourceTree => {
                "a source tree's files (median 4,055 B): edited (saved over), moved, \
                 deleted (compilebench's kernel tree)"
            }
            Profile::Maildir => {
                "mail delivered into tmp/, moved to new/ and cur/, expunged at random \
                 (maildir(5))"
            }
            Profile::Database => {
                "16 relation files grown by extension, 8 KiB pages rewritten in place, \
                 whole tables rewritten and dropped (PostgreSQL's storage)"
            }
            Profile::WebCache => {
                "squid's cache: small objects in 16 × L2 directories, the oldest evicted \
                 first (the 2001 article's cache)"
            }
        }
    }

    /// The profile named `name`; unknown names are usage errors.
    pub fn parse(name: &str) -> Result<Profile> {
        PROFILES
            .iter()
            .copied()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = PROFILES.iter().map(|p| p.name()).collect();
                usage(format!(
                    "--age: unknown aging profile '{}'{}; valid: {}",
                    crate::error::echo(name),
                    crate::error::did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                ))
            })
    }

    /// What the profile does (the table in the module documentation).
    pub fn shape(self) -> Shape {
        match self {
            Profile::Desktop => Shape {
                sizes: SizeDist::LogNormal {
                    median: 4096.0,
                    sigma: 2.35,
                    max: 256 << 20,
                },
                layout: Layout::Tree {
                    depth: 8,
                    exts: &["txt", "doc", "pdf", "jpg", "xls", "html", "png", "odt"],
                },
                victims: Victims::Random,
                change_share: 0.3,
                changes: &[
                    (Change::Append, 0.5),
                    (Change::Save, 0.35),
                    (Change::Rename, 0.15),
                ],
            },
            Profile::SourceTree => Shape {
                sizes: SizeDist::LogNormal {
                    median: 4055.0,
                    sigma: 1.41,
                    max: 1 << 20,
                },
                layout: Layout::Tree {
                    depth: 6,
                    exts: &["c", "h", "c", "h", "S", "txt", "c", "o"],
                },
                victims: Victims::Random,
                change_share: 0.5,
                changes: &[(Change::Save, 0.9), (Change::Rename, 0.1)],
            },
            Profile::Maildir => Shape {
                sizes: SizeDist::LogNormal {
                    median: 3072.0,
                    sigma: 1.0,
                    max: 64 << 20,
                },
                layout: Layout::Maildir,
                victims: Victims::Random,
                change_share: 0.3,
                changes: &[(Change::Seen, 1.0)],
            },
            Profile::Database => Shape {
                sizes: SizeDist::Uniform {
                    lo: 64 << 10,
                    hi: 1 << 20,
                },
                layout: Layout::Relations { count: 16 },
                victims: Victims::Random,
                change_share: 0.8,
                changes: &[(Change::Pages, 1.0)],
            },
            Profile::WebCache => Shape {
                sizes: SizeDist::LogNormal {
                    median: 3400.0,
                    sigma: 1.6,
                    max: 64 << 20,
                },
                layout: Layout::Squid,
                victims: Victims::Oldest,
                change_share: 0.0,
                changes: &[],
            },
        }
    }
}
