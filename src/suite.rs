//! Suites: named sets of workloads for a use case (`fsarena run --suite NAME`), and the
//! `quick` suite that `fsarena run` runs when no workload is named.
//!
//! Parameters come from the seed articles where they gave them: Bonnie `-s 256` (seed
//! 001), Postmark `set number 5000 / set transactions 5000` (seed 003, a web cache) and the
//! mail-server configuration `read 4096 / write 4096 / transactions 10000 / size 500 500000
//! / number 5000` (seed 004), the 3.1 GB, 250,000-file web-cache archive (seed 003), and
//! the timed `make bzImage` of a kernel tree (seed 000).
//!
//! The `aged` suite runs its filesystems fresh and aged (`--age both` unless `--age` is
//! given: [`Suite::age`]), with workloads like those of the seeds' comparisons scaled to
//! the quarter of the image aging leaves free; the 2006 article behind it says its own
//! limit: "all tests were done in pristine environment".
//!
//! `fsarena list` estimates each suite's duration **on this machine** from the stored
//! trials of this host (median elapsed time of the same workload with the same parameters
//! on the same target, × repetitions; an aged target's trials include its aging, or the
//! copy of its kept aged image); parts never run here are named, not guessed.

use crate::store::TrialTime;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::fmt::Write;

/// A named set of workloads.
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    /// Filesystems it runs on when neither `--fs` nor `--dir` is given; empty: every
    /// filesystem this machine can make.
    pub fs: &'static [&'static str],
    /// Image size when `--size` is not given; `None`: the default.
    pub size: Option<&'static str>,
    /// `--budget` of the `--reps auto` a suite runs with when neither `--reps` nor
    /// `--budget` is given: no repetition past the third starts that would end later.
    pub budget: &'static str,
    pub workloads: &'static [&'static str],
    /// The `--age` values it runs with when `--age` is not given (`["both"]`: each
    /// filesystem fresh and aged); empty: fresh only.
    pub age: &'static [&'static str],
}

/// The suites, in the order `fsarena list` shows them. `full` is every other suite's
/// workloads together and is not listed here (see [`find`]).
pub const SUITES: &[Suite] = &[
    Suite {
        name: "quick",
        about: "a first comparison in a few minutes: small Bonnie, Bonnie++ file tests, \
                Postmark, many small files, a database-like random loop, metadata scans",
        fs: &["ext4", "xfs", "btrfs", "tmpfs"],
        size: Some("1GiB"),
        budget: "5m",
        workloads: &[
            "bonnie:size=256MiB,seeks=8000",
            "bonnie-files:files=24",
            "postmark:number=5000,transactions=10000",
            "smallfiles:files=20000,size_max=4KiB",
            "dbrandom:scale=0.1,cycles=100",
            "metascan:scale=0.5,passes=2",
        ],
        age: &[],
    },
    Suite {
        name: "classic",
        about: "the classic articles' Bonnie (-s 256), Bonnie++ file tests (-n 128:128k:0) and \
                Postmark (number 5000, transactions 5000)",
        fs: &[],
        size: None,
        budget: "20m",
        workloads: &[
            "bonnie:size=256MiB",
            "bonnie-files:files=128,max_size=128KiB",
            "postmark:number=5000,transactions=5000",
        ],
        age: &[],
    },
    Suite {
        name: "kernel-build",
        about: "compilebench, the 2001 kernel build (copy, make, clean, rm) and metadata \
                scans of a source tree",
        fs: &[],
        size: None,
        budget: "1h",
        workloads: &[
            "compile",
            "compile:mode=kernel-build",
            "metascan",
        ],
        age: &[],
    },
    Suite {
        name: "web-cache",
        about: "extract and delete a web cache (250,000 files, 3.1 GB), Postmark 5000/5000, \
                Bonnie 1 GiB",
        fs: &[],
        size: Some("8GiB"),
        budget: "1h",
        workloads: &[
            "untar:profile=web-cache",
            "postmark:number=5000,transactions=5000",
            "bonnie:size=1GiB",
        ],
        age: &[],
    },
    Suite {
        name: "mail-server",
        about: "Postmark as a mail server (as in a 2006 ext4 benchmark) and small files fsync'ed one by one",
        fs: &[],
        size: None,
        budget: "20m",
        workloads: &[
            "postmark:read_block=4096,write_block=4096,transactions=10000,size_low=500,size_high=500000,number=5000",
            "smallfiles:files=50000,size_min=1KiB,size_max=64KiB,fsync=true",
        ],
        age: &[],
    },
    Suite {
        name: "database",
        about: "the seeds' proxy (the random read/write+fsync loop over files of 1-500 MiB, \
                and over one file of 60% of the free space: the seed comment asked for \
                files over 4 GB) beside real engines: SQLite in WAL and rollback modes, \
                PostgreSQL's pgbench, RocksDB's db_bench; whether the proxy ranks the \
                filesystems as they do",
        fs: &[],
        size: Some("8GiB"),
        budget: "1h",
        workloads: &[
            "dbrandom",
            "dbrandom:fill=60,cycles=20,write_pct=50",
            "sqlite:mode=tpcb,journal=wal,scale=10,transactions=5000",
            "sqlite:mode=tpcb,journal=delete,scale=10,transactions=2000",
            "pgbench",
            "db_bench",
        ],
        age: &[],
    },
    Suite {
        name: "desktop",
        about: "metadata scans, space efficiency, responsiveness under writeback, and \
                extracting media and desktop trees",
        fs: &[],
        size: Some("16GiB"),
        budget: "1h",
        workloads: &[
            "metascan",
            "space",
            "writeback",
            "untar:profile=media",
            "untar:profile=desktop",
        ],
        age: &[],
    },
    Suite {
        name: "io500",
        about: "the IO500 (ior-easy/hard, mdtest-easy/hard, find; 300 s write phases as the \
                rules ask) with its scores and whether the run met the rules; give it room: \
                the write phases stop early, and the run is not official, when the \
                filesystem fills first (docs/io500.md)",
        fs: &[],
        size: None,
        budget: "2h",
        workloads: &["io500"],
        age: &[],
    },
    Suite {
        name: "io500-quick",
        about: "the IO500's 12 phases shrunk to try it out: 5 s write phases, 2 tasks, \
                limits that fit a 1 GiB image; never official",
        fs: &["ext4", "xfs", "btrfs", "tmpfs"],
        size: Some("1GiB"),
        budget: "4m",
        workloads: &[IO500_QUICK],
        age: &[],
    },
    Suite {
        name: "aged",
        about: "fresh against aged (desktop profile, 75% full, twice its capacity \
                written): a sequential read of large files, small files, a database-like \
                random loop; what aging costs each filesystem, and whether it reorders them",
        fs: &["ext4", "xfs", "btrfs"],
        size: Some("2GiB"),
        budget: "1h",
        workloads: AGED,
        age: &["both"],
    },
];

/// The `aged` suite's workloads, each sized to run in the quarter of a 2 GiB image that
/// aging to 75% leaves (about 480 MiB): 4 files of 64 MiB read sequentially in 1 MiB
/// blocks (read after the run's cold-cache drop, so from the disk, where the aged
/// layout shows), 20,000 files of up to 4 KiB (~80 MiB in 4 KiB blocks; with the
/// desktop profile's ~23,000 aged files well within ext4's 131,072 inodes at 2 GiB),
/// and random.c's files at a quarter of their size (1–500 MiB × 0.25: 215 MiB).
pub const AGED: &[&str] = &[
    "job:name=seqread,rw=read,bs=1MiB,size=256MiB,nrfiles=4",
    "smallfiles:files=20000,size_max=4KiB",
    "dbrandom:scale=0.25,cycles=100",
];

/// The `io500-quick` suite's workload: 5 s stonewalls, 2 tasks, at most 50,000
/// mdtest-easy and 20,000 mdtest-hard files per task; the ior phases are bounded by the
/// workload's free-space caps (30% of the free space each), which faster
/// filesystems reach before 5 s.
pub const IO500_QUICK: &str = "io500:tasks=2,stonewall=5,mdtest_easy_files=50000,\
mdtest_hard_files=20000";

/// The names `--suite` accepts.
pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name).chain(["full"]).collect()
}

/// The suite `name`; `full` is every suite's workloads, each once, on every filesystem.
pub fn find(name: &str) -> Result<Suite> {
    if name == "full" {
        return Ok(Suite {
            name: "full",
            about: "every suite's workloads, each once (io500 as io500-quick)",
            fs: &[],
            size: SUITES
                .iter()
                .filter_map(|s| s.size)
                .max_by_key(|s| crate::size::parse_size(s).unwrap_or(0)),
            budget: "4h",
            workloads: workloads_of_all(),
            age: &[],
        });
    }
    SUITES
        .iter()
        .find(|s| s.name == name)
        .map(|s| Suite { ..*s })
        .ok_or_else(|| {
            crate::error::usage(format!(
                "unknown suite '{}'{}; valid: {}",
                crate::error::echo(name),
                crate::error::did_you_mean(name, names()),
                names().join(", ")
            ))
        })
}

fn workloads_of_all() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<&'static str> = Vec::new();
        // `io500` alone takes over 20 minutes per filesystem (four 300 s write
        // phases): `full` runs `io500-quick` instead.
        for s in SUITES.iter().filter(|s| s.name != "io500") {
            for w in s.workloads {
                if !all.contains(w) {
                    all.push(w);
                }
            }
        }
        all
    })
}

/// The names the suite's targets get on the filesystems `fs`: each filesystem once per
/// choice of the suite's `age` (`ext4`, `ext4+aged`, as `--age` names them), so that its
/// estimate finds the trials of aged targets, whose times include the aging.
pub fn target_names(suite: &Suite, fs: &[String]) -> Result<Vec<String>> {
    let args: Vec<String> = suite.age.iter().map(|a| a.to_string()).collect();
    let choices = crate::plan::age::choices(&args, true)?;
    Ok(fs
        .iter()
        .flat_map(|f| {
            choices.iter().map(|c| match c {
                Some(spec) => crate::plan::age::aged_name(f, spec, &choices),
                None => f.clone(),
            })
        })
        .collect())
}

/// The estimated duration of `suite` with `reps` repetitions on `targets`, from this
/// host's stored trials: (seconds of the parts measured before, parts never measured).
pub fn estimate(
    suite: &Suite,
    targets: &[String],
    reps: u32,
    times: &[TrialTime],
) -> Result<(f64, Vec<String>)> {
    let specs = suite
        .workloads
        .iter()
        .map(|t| WorkloadSpec::parse(t))
        .collect::<Result<Vec<_>>>()?;
    Ok(estimate_specs(&specs, targets, reps, times))
}

/// The estimated duration of `workloads` with `reps` repetitions on the targets named
/// `targets`: for each workload and target, the median elapsed time of (up to 9 of) the
/// newest stored trials of the same workload with the same parameters on a target of the
/// same name, × `reps`. Returns (seconds of the parts measured before, the parts never
/// measured, as "SPEC on TARGET").
pub fn estimate_specs(
    workloads: &[WorkloadSpec],
    targets: &[String],
    reps: u32,
    times: &[TrialTime],
) -> (f64, Vec<String>) {
    let mut total = 0.0;
    let mut missing = Vec::new();
    for spec in workloads {
        let params = spec.params.to_text_map();
        for t in targets {
            let xs: Vec<f64> = times
                .iter()
                .filter(|x| x.workload == spec.info.name && x.params == params && &x.target == t)
                .map(|x| x.elapsed_s)
                .take(9)
                .collect();
            match crate::stats::describe(&xs) {
                Some(d) => total += d.median * f64::from(reps),
                None => missing.push(format!("{} on {t}", crate::secret::redact_word(&spec.text))),
            }
        }
    }
    (total, missing)
}

/// A duration as people say it: `45 s`, `4 min 10 s`, `2 h 05 min`.
pub fn human_duration(s: f64) -> String {
    let s = s.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// The suites' part of `fsarena list`: each suite's filesystems, workloads with their
/// parameters, and its estimated duration here (`times`: this host's past trials, none
/// without a database).
pub fn render(times: &[TrialTime], reps: u32) -> String {
    let width = crate::report::fit::width();
    let mut out =
        String::from("\nSuites (fsarena run --suite NAME; `fsarena run` alone runs quick):\n");
    for name in names() {
        let suite = find(name).expect("listed suites exist");
        let fs: Vec<String> = if suite.fs.is_empty() {
            crate::plan::default_filesystems()
        } else {
            suite.fs.iter().map(|s| s.to_string()).collect()
        };
        let _ = writeln!(out, "\n  {:<14} {}", suite.name, suite.about);
        let aged = match suite.age {
            [] => String::new(),
            age => format!(" with --age {}", age.join(" --age ")),
        };
        let _ = writeln!(
            out,
            "  {:<14} on {} ({} each){aged}, {reps} or more repetitions (--reps auto, \
             --budget {})",
            "",
            fs.join(", "),
            suite.size.unwrap_or(crate::cli::DEFAULT_SIZE),
            suite.budget
        );
        for w in suite.workloads {
            let _ = writeln!(
                out,
                "{}",
                crate::report::fit::wrap_after(w, ',', width, 4, 6)
            );
        }
        let targets = match target_names(&suite, &fs) {
            Ok(t) => t,
            Err(e) => {
                let _ = writeln!(out, "  {:<14} estimated: cannot estimate: {e:#}", "");
                continue;
            }
        };
        let line = match estimate(&suite, &targets, reps, times) {
            Err(e) => format!("cannot estimate: {e:#}"),
            Ok((_, missing)) if missing.len() == suite.workloads.len() * targets.len() => {
                "never run on this host: no estimate (run it once, then `fsarena list` \
                 estimates it from the stored trials)"
                    .to_string()
            }
            Ok((s, missing)) if missing.is_empty() => {
                format!(
                    "about {} here for {reps}, from this host's stored trials",
                    human_duration(s)
                )
            }
            Ok((s, missing)) => format!(
                "at least {} here; never run on this host: {}",
                human_duration(s),
                missing.join("; ")
            ),
        };
        let _ = writeln!(out, "  {:<14} estimated: {line}", "");
    }
    crate::report::fit::wrap_aligned(&out, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_parses() {
        for name in names() {
            let s = find(name).unwrap();
            assert!(!s.workloads.is_empty(), "{name}");
            for w in s.workloads {
                WorkloadSpec::parse(w).unwrap_or_else(|e| panic!("{name}: {w}: {e:#}"));
            }
        }
        assert!(find("nope").is_err());
    }

    fn plan(args: &[&str]) -> Result<crate::plan::Plan> {
        use clap::Parser;
        let dir = tempfile::tempdir().unwrap();
        let mut argv = vec![
            "fsarena",
            "run",
            "--image-dir",
            dir.path().to_str().unwrap(),
        ];
        argv.extend(args);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Run(a) => crate::plan::Plan::from_args(&a),
            _ => unreachable!(),
        }
    }

    fn texts(p: &crate::plan::Plan) -> Vec<String> {
        p.workloads.iter().map(|w| w.text.clone()).collect()
    }

    #[test]
    fn run_without_workloads_is_the_quick_suite() {
        let p = plan(&[]).unwrap();
        assert_eq!(texts(&p), find("quick").unwrap().workloads);
        let names: Vec<String> = p.targets.iter().map(|t| t.name.clone()).collect();
        let can = crate::plan::default_filesystems();
        let want: Vec<&str> = ["ext4", "xfs", "btrfs", "tmpfs"]
            .into_iter()
            .filter(|f| can.iter().any(|c| c == f))
            .collect();
        assert_eq!(names, want);
        for t in &p.targets {
            if let crate::provision::TargetSpec::Tmpfs { size_bytes, .. } = t.spec {
                assert_eq!(size_bytes, 1 << 30, "the suite's 1GiB");
            }
        }
        // --fs and --size win over the suite's; a named suite replaces the workloads.
        let p = plan(&["--suite", "classic", "--fs", "tmpfs", "--size", "256MiB"]).unwrap();
        assert_eq!(texts(&p), find("classic").unwrap().workloads);
        assert!(matches!(
            p.targets[..],
            [crate::plan::PlanTarget { spec: crate::provision::TargetSpec::Tmpfs { size_bytes, .. }, .. }] if size_bytes == 256 << 20
        ));
        let err = plan(&["--suite", "nope", "--fs", "tmpfs"]).err().unwrap();
        assert!(
            format!("{err:#}").contains("valid: quick, classic"),
            "{err:#}"
        );
    }

    #[test]
    fn a_suite_repeats_until_its_figures_are_known_within_its_budget() {
        let auto = |args: &[&str]| plan(args).unwrap().auto_reps;
        let quick = auto(&["--fs", "tmpfs"]).expect("a suite runs --reps auto");
        assert_eq!(quick.budget_s, Some(300.0));
        assert_eq!(quick.max, crate::reps::DEFAULT_MAX_REPS);
        let classic = auto(&["--suite", "classic", "--fs", "tmpfs"]).unwrap();
        assert_eq!(classic.budget_s, Some(1200.0));
        // --budget and --precision apply to the suite's automatic repetitions.
        let own = auto(&["--fs", "tmpfs", "--budget", "10m", "--precision", "2"]).unwrap();
        assert_eq!((own.budget_s, own.precision), (Some(600.0), 0.02));
        // A fixed --reps, or named workloads, run a fixed number.
        assert!(auto(&["--fs", "tmpfs", "--reps", "2"]).is_none());
        assert!(auto(&["bonnie", "--fs", "tmpfs"]).is_none());
        assert!(plan(&["bonnie", "--fs", "tmpfs", "--budget", "1m"]).is_err());
        assert!(plan(&["--fs", "tmpfs", "--reps", "2", "--budget", "1m"]).is_err());
    }

    #[test]
    fn the_aged_suite_runs_each_filesystem_fresh_and_aged() {
        let aged = find("aged").unwrap();
        assert_eq!(aged.age, ["both"]);
        let fs = ["ext4".to_string(), "xfs".to_string()];
        assert_eq!(
            target_names(&aged, &fs).unwrap(),
            ["ext4", "ext4+aged", "xfs", "xfs+aged"]
        );
        assert_eq!(target_names(&find("quick").unwrap(), &fs).unwrap(), fs);
        if !crate::probe::sys::is_root() {
            eprintln!("SKIP the aged suite's plan: making loop targets needs root");
            return;
        }
        let p = plan(&["--suite", "aged", "--fs", "ext4"]).unwrap();
        let names: Vec<&str> = p.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ext4", "ext4+aged"]);
        let spec = p.targets[1].age.expect("aged");
        assert_eq!(spec.canonical(), "desktop:fill=75,churn=2");
        assert!(spec.keep);
        assert!(matches!(
            p.targets[0].spec,
            crate::provision::TargetSpec::Loop { size_bytes, .. } if size_bytes == 2 << 30
        ));
        // --age wins over the suite's; --age-cache applies.
        let p = plan(&["--suite", "aged", "--fs", "ext4", "--age", "database"]).unwrap();
        let names: Vec<&str> = p.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["ext4+aged"]);
        let p = plan(&["--suite", "aged", "--fs", "ext4", "--age-cache", "off"]).unwrap();
        assert!(!p.targets[1].age.unwrap().keep);
        let err = plan(&["--suite", "aged", "--fs", "tmpfs"]).err().unwrap();
        assert!(format!("{err:#}").contains("--age fresh"), "{err:#}");
        assert_eq!(crate::error::exit_code(&err), 2);
    }

    #[test]
    fn an_aged_suite_is_estimated_from_its_aged_targets_trials() {
        let suite = find("aged").unwrap();
        let t = |target: &str, w: &str, s: f64| {
            let spec = WorkloadSpec::parse(w).unwrap();
            TrialTime {
                target: target.into(),
                workload: spec.info.name.into(),
                params: spec.params.to_text_map(),
                elapsed_s: s,
            }
        };
        let mut times = Vec::new();
        for w in suite.workloads {
            times.push(t("ext4", w, 10.0));
        }
        let targets = target_names(&suite, &["ext4".into()]).unwrap();
        let (s, missing) = estimate(&suite, &targets, 3, &times).unwrap();
        assert_eq!(s, 90.0);
        assert_eq!(missing.len(), 3, "the aged target never ran: {missing:?}");
        assert!(
            missing.iter().all(|m| m.ends_with(" on ext4+aged")),
            "{missing:?}"
        );
        for w in suite.workloads {
            times.push(t("ext4+aged", w, 40.0));
        }
        let (s, missing) = estimate(&suite, &targets, 3, &times).unwrap();
        assert_eq!((s, missing.len()), (450.0, 0));
    }

    #[test]
    fn full_holds_every_workload_once() {
        let full = find("full").unwrap();
        assert!(
            !full.workloads.contains(&"io500"),
            "io500-quick stands in for it"
        );
        for s in SUITES.iter().filter(|s| s.name != "io500") {
            for w in s.workloads {
                assert_eq!(full.workloads.iter().filter(|x| *x == w).count(), 1, "{w}");
            }
        }
        assert_eq!(full.size, Some("16GiB"));
    }

    #[test]
    fn estimates_use_medians_of_matching_trials_and_name_the_rest() {
        let suite = find("classic").unwrap();
        let spec = WorkloadSpec::parse(suite.workloads[0]).unwrap();
        let t = |target: &str, s: f64| TrialTime {
            target: target.into(),
            workload: spec.info.name.into(),
            params: spec.params.to_text_map(),
            elapsed_s: s,
        };
        let times = [
            t("ext4", 10.0),
            t("ext4", 30.0),
            t("ext4", 12.0),
            t("xfs", 5.0),
        ];
        let (s, missing) = estimate(&suite, &["ext4".into()], 3, &times).unwrap();
        assert_eq!(s, 36.0);
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].starts_with("bonnie-files"));
        assert_eq!(human_duration(250.4), "4 min 10 s");
        assert_eq!(human_duration(7500.0), "2 h 05 min");
    }
}
