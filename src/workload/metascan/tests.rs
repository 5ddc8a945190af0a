use super::*;
use crate::context::{PhaseKind, PhaseSpec, Primary};
use crate::corpus::Entry;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime};

const STEP: PhaseSpec = PhaseSpec {
    name: "step",
    kind: PhaseKind::Read,
    primary: Primary::OpsPerS,
    ops_unit: "",
};

/// Runs `f` once as a phase of `cx` and returns what it returned.
fn in_phase<T: Send>(
    cx: &mut TrialContext,
    f: impl Fn(&mut Worker) -> Result<T> + Sync,
) -> (T, PhaseResult) {
    let out = Mutex::new(None);
    cx.phase(&STEP, 1, |w| {
        *out.lock().unwrap() = Some(f(w)?);
        Ok(())
    })
    .unwrap();
    let r = cx.phases().last().unwrap().clone();
    (out.into_inner().unwrap().unwrap(), r)
}

/// Writes the `source-tree` corpus at `scale` below `cx`'s work directory; returns its root.
fn corpus_tree(cx: &mut TrialContext, scale: f64) -> (Corpus, PathBuf) {
    let corpus = Corpus::new("source-tree", scale, 11).unwrap();
    let root = cx.workdir().join("tree");
    fs::create_dir(&root).unwrap();
    in_phase(cx, |w| corpus.write(w, &root));
    (corpus, root)
}

/// stdout of a system tool run with `args` (`ROOT` stands for `root`) in the C locale, or
/// `None` (with a SKIP line) when the tool is not GNU's.
fn gnu_tool(tool: &str, args: &[&str], root: &Path) -> Option<String> {
    let version = Command::new(tool).arg("--version").output().ok()?;
    if !String::from_utf8_lossy(&version.stdout).contains("GNU") {
        eprintln!("SKIP comparison with {tool}: not GNU {tool}");
        return None;
    }
    let args = args.iter().map(|a| {
        if *a == "ROOT" {
            root.as_os_str()
        } else {
            a.as_ref()
        }
    });
    let out = Command::new(tool)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    assert!(out.status.success(), "{tool} failed: {out:?}");
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn ls_lr_prints_what_gnu_ls_prints() {
    in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
        let (_, root) = corpus_tree(cx, 0.01);
        // What the corpus lacks: hidden names, special mode bits, old and future times,
        // a hard link, an empty directory.
        let sub = root.join(".hidden");
        fs::create_dir(&sub).unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o1777)).unwrap();
        let f = sub.join("setuid");
        fs::write(&f, b"x").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o4755)).unwrap();
        let g = sub.join("setgid-no-x");
        fs::write(&g, vec![7u8; 5000]).unwrap();
        fs::set_permissions(&g, fs::Permissions::from_mode(0o2644)).unwrap();
        fs::hard_link(&g, sub.join("hardlink")).unwrap();
        symlink("setuid", sub.join("a-link")).unwrap();
        fs::create_dir(sub.join("empty")).unwrap();
        let day = Duration::from_secs(86_400);
        for (name, t) in [
            ("old", SystemTime::UNIX_EPOCH + 18_000 * day),
            ("future", SystemTime::now() + 2 * day),
        ] {
            let file = fs::File::create(sub.join(name)).unwrap();
            file.set_modified(t).unwrap();
        }
        let (out, phase) = in_phase(cx, |w| {
            let mut text = Vec::new();
            let seen = ls::ls_lr(w, &root, &mut text)?;
            Ok((seen, text))
        });
        let (seen, text) = out;
        let text = String::from_utf8(text).unwrap();
        assert_eq!(seen.output_bytes, text.len() as u64);
        assert_eq!(phase.ops, seen.entries, "one stat per entry, root included");
        assert!(
            text.contains("drwxrwxrwt") && text.contains("-rwsr-xr-x"),
            "{text}"
        );
        assert!(text.contains("-rw-r-Sr--") && text.contains("a-link -> setuid"));
        if let Some(want) = gnu_tool("ls", &["-lnAR", "ROOT"], &root) {
            assert_eq!(text, want);
        }
    });
}

#[test]
fn ls_lr_sorts_by_name_and_lists_depth_first() {
    in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
        let root = cx.workdir().join("r");
        for d in ["b", "a/z", "a/c", "B", "a.c"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("a/0"), b"").unwrap();
        let (text, _) = in_phase(cx, |w| {
            let mut text = Vec::new();
            ls::ls_lr(w, &root, &mut text)?;
            Ok(String::from_utf8(text).unwrap())
        });
        let headers: Vec<&str> = text.lines().filter(|l| l.ends_with(':')).collect();
        let r = root.display().to_string();
        let want: Vec<String> = ["", "/B", "/a", "/a/c", "/a/z", "/a.c", "/b"]
            .iter()
            .map(|s| format!("{r}{s}:"))
            .collect();
        assert_eq!(headers, want, "{text}");
        let names: Vec<&str> = text
            .split("\n\n")
            .next()
            .unwrap()
            .lines()
            .skip(2)
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(names, ["B", "a", "a.c", "b"]);
        assert!(text.starts_with(&format!("{r}:\ntotal ")), "{text}");
        assert!(
            text.contains(&format!("\n\n{r}/a/c:\ntotal 0\n\n")),
            "{text}"
        );
    });
}

#[test]
fn mode_strings_are_ls_s() {
    for (mode, want) in [
        (0o100644, "-rw-r--r--"),
        (0o104755, "-rwsr-xr-x"),
        (0o102644, "-rw-r-Sr--"),
        (0o041777, "drwxrwxrwt"),
        (0o041776, "drwxrwxrwT"),
        (0o120777, "lrwxrwxrwx"),
        (0o010600, "prw-------"),
    ] {
        let mut out = Vec::new();
        ls::mode_string(mode, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), want, "{mode:o}");
    }
}

/// st_blocks of every entry below and including `dir`, hard links once: a plain
/// recursive walk, independent of the workload's.
fn blocks_of(dir: &Path, linked: &mut std::collections::HashSet<u64>) -> u64 {
    let mut sum = fs::symlink_metadata(dir).unwrap().blocks();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let md = fs::symlink_metadata(&p).unwrap();
        if md.is_dir() {
            sum += blocks_of(&p, linked);
        } else if md.nlink() == 1 || linked.insert(md.ino()) {
            sum += md.blocks();
        }
    }
    sum
}

#[test]
fn du_sums_the_blocks_du_sums() {
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        let (corpus, root) = corpus_tree(cx, 0.01);
        let first = corpus
            .entries()
            .find(|e| matches!(e, Entry::File { .. }))
            .unwrap();
        fs::hard_link(root.join(first.path()), root.join("hardlink")).unwrap();
        let (seen, phase) = in_phase(cx, |w| walk::du(w, &root));
        let t = corpus.totals();
        assert_eq!(seen.entries, 2 + t.dirs + t.files + t.symlinks);
        assert_eq!(
            phase.ops, seen.entries,
            "one lstat per entry, root included"
        );
        assert_eq!(seen.blocks, blocks_of(&root, &mut Default::default()));
        let first_blocks = fs::metadata(root.join(first.path())).unwrap().blocks();
        assert!(
            first_blocks > 0,
            "the hard-linked file has blocks to count twice"
        );
        if let Some(out) = gnu_tool("du", &["-s", "-B512", "ROOT"], &root) {
            let du: u64 = out.split_whitespace().next().unwrap().parse().unwrap();
            assert_eq!(seen.blocks, du, "du -s -B512 {}", root.display());
        }
    });
}

#[test]
fn find_matches_what_the_corpus_lists() {
    in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
        let (corpus, root) = corpus_tree(cx, 0.02);
        let names: Vec<String> = corpus
            .entries()
            .map(|e| e.path().rsplit('/').next().unwrap().to_string())
            .collect();
        for (pattern, want) in [
            ("*.c", names.iter().filter(|n| n.ends_with(".c")).count()),
            (
                "Makefile.*",
                names.iter().filter(|n| n.starts_with("Makefile.")).count(),
            ),
            ("*", names.len() + 1),
        ] {
            let pat = CString::new(pattern).unwrap();
            let (seen, phase) = in_phase(cx, |w| walk::find(w, &root, &pat));
            assert!(want > 0, "{pattern}: the corpus has such names");
            assert_eq!(seen.matches, want as u64, "{pattern}");
            assert_eq!(seen.entries, names.len() as u64 + 1);
            // The root's lstat, then every entry counted in its directory's listing.
            assert_eq!(phase.ops, seen.entries, "{pattern}");
            if let Some(out) = gnu_tool("find", &["ROOT", "-name", pattern], &root) {
                assert_eq!(out.lines().count(), want, "find -name '{pattern}'");
            }
        }
    });
}

#[test]
fn tar_read_reads_every_byte_of_every_file() {
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        let (corpus, root) = corpus_tree(cx, 0.02);
        let t = corpus.totals();
        let (seen, phase) = in_phase(cx, |w| {
            walk::tar_read(w, &root, &mut vec![0u8; walk::TAR_RECORD])
        });
        assert_eq!((seen.files, seen.bytes), (t.files, t.bytes));
        assert_eq!((seen.dirs, seen.symlinks), (t.dirs, t.symlinks));
        assert_eq!(phase.bytes_read, t.bytes, "bytes recorded are bytes read");
        assert_eq!(phase.ops, seen.entries);
    });
}

fn names(phases: &[PhaseResult]) -> Vec<&str> {
    phases.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn runs_every_pass_and_checks_each_scan() {
    let spec = WorkloadSpec::parse("metascan:scale=0.01,passes=2,pattern=*.h").unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    let phases = in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        workload.run(cx).unwrap();
        cx.phases().to_vec()
    });
    assert_eq!(
        names(&phases),
        [
            "populate",
            "du_1",
            "ls_lR_1",
            "find_1",
            "tar_read_1",
            "du_2",
            "ls_lR_2",
            "find_2",
            "tar_read_2"
        ]
    );
    let t = Corpus::new("source-tree", 0.01, 42).unwrap().totals();
    let entries = 1 + t.dirs + t.files + t.symlinks;
    for p in &phases[1..] {
        assert_eq!(p.ops, entries, "{}", p.name);
    }
    assert_eq!(phases[0].bytes_written, t.bytes);
    assert_eq!(phases[4].bytes_read, t.bytes);
    assert_eq!(phases[4].primary, "mb_per_s");
    assert_eq!(phases[1].primary, "ops_per_s");
    assert!(phases[1].extra["kib"] > (t.bytes / 1024) as f64 * 0.9);
    assert!(phases[3].extra["matches"] > 0.0);
    assert!(
        !phases[1].extra.contains_key("cold_warm_ratio"),
        "no ratio when pass 1 was not cold (--cache keep)"
    );
    let readdirs = |p: &PhaseResult| p.lat_by_op.iter().any(|o| o.op == "readdir");
    assert!(
        phases[1..].iter().all(readdirs),
        "directory listings recorded"
    );
}

#[test]
fn a_scan_that_misses_part_of_the_tree_fails() {
    let want = Seen {
        entries: 10,
        files: 7,
        dirs: 2,
        bytes: 100,
        matches: 3,
        ..Default::default()
    };
    assert!(Scan::Du.check(&want, &want).is_ok());
    let fewer = Seen {
        entries: 9,
        files: 6,
        ..want
    };
    for scan in Scan::ALL {
        let e = scan.check(&fewer, &want).unwrap_err().to_string();
        assert!(
            e.contains("saw 9 entries") && e.contains("changed the tree"),
            "{e}"
        );
    }
    let short = Seen { bytes: 99, ..want };
    assert!(Scan::TarRead.check(&short, &want).is_err());
    assert!(
        Scan::Find.check(&short, &want).is_ok(),
        "find reads no data"
    );
}

#[test]
fn phases_are_declared_for_every_pass() {
    let default: usize = PARAMS
        .iter()
        .find(|p| p.name == "passes")
        .unwrap()
        .default
        .parse()
        .unwrap();
    assert_eq!(default, DEFAULT_PASSES);
    assert_eq!(INFO.phases.len(), 1 + 4 * DEFAULT_PASSES);
    assert_eq!(INFO.phases.last().unwrap().name, "tar_read_3");
    assert_eq!(Scan::LsLr.spec(MAX_PASSES).name, "ls_lR_9");
    assert_eq!(Scan::Du.spec(1).name, "du_1");
    let mut all: Vec<&str> = ALL_PHASES.iter().map(|p| p.name).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), ALL_PHASES.len(), "names are unique");
}

#[test]
fn bad_parameters_say_what_to_do() {
    for (params, needle) in [
        ("passes=0", "must be 1 to 9"),
        ("passes=10", "must be 1 to 9"),
        ("pattern=src/*.c", "pattern=*.c"),
        ("pattern=", "pattern is empty"),
        ("scale=0", "above 0"),
        ("profile=kernel", "source-tree"),
    ] {
        let e = WorkloadSpec::parse(&format!("metascan:{params}"))
            .err()
            .unwrap();
        assert_eq!(exit_code(&e), 2, "{params}");
        assert!(format!("{e:#}").contains(needle), "{params}: {e:#}");
    }
}
