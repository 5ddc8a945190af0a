//! Unit tests of `corpus`.

use super::profiles::scaled;
use super::*;
use crate::context::{PhaseKind, PhaseSpec, Primary};
use crate::policy::{DataPolicy, SyncPolicy};
use crate::workload::testutil::in_context;
use std::collections::HashSet;

#[test]
fn profiles_have_their_counts_and_bytes_at_every_scale() {
    let want: &[(&str, u64, f64)] = &[
        ("source-tree", 21_280, 222.0 * 1048576.0),
        ("web-cache", 250_000, 3.1e9),
        ("maildir", 50_000, 250e6),
        ("media", 300, 1.65e9),
        ("desktop", 20_000, 1073741824.0),
    ];
    for &(profile, files, bytes) in want {
        for scale in [1.0, 0.1, 0.01] {
            let c = Corpus::new(profile, scale, 42).unwrap();
            let t = c.totals();
            let (want_files, want_bytes) = (scaled(files, scale), bytes * scale);
            assert_eq!(t.files, want_files, "{profile} at {scale}");
            let err = (t.bytes as f64 - want_bytes).abs() / want_bytes;
            assert!(err < 1e-3, "{profile} at {scale}: {} bytes", t.bytes);
        }
    }
    let src = Corpus::new("source-tree", 1.0, 42).unwrap().totals();
    assert_eq!((src.files, src.dirs), (21_280, 1263));
    let web = Corpus::new("web-cache", 1.0, 42).unwrap().totals();
    assert_eq!(web.dirs, 16 + 16 * 256);
}

#[test]
fn sizes_follow_their_distribution() {
    let c = Corpus::new("source-tree", 1.0, 42).unwrap();
    let mut sizes: Vec<u64> = (0..c.files.len()).map(|i| c.files.size(i)).collect();
    sizes.sort_unstable();
    let median = sizes[sizes.len() / 2] as f64;
    // The mean is fixed by the total (10.96 KB); the median of a log-normal with σ 1.41
    // is mean / e^(σ²/2) ≈ 4.05 KB, as in the real 2.6.20 tree.
    assert!((3500.0..4700.0).contains(&median), "median {median}");
    let m = Corpus::new("media", 1.0, 42).unwrap();
    for i in 0..m.files.len() {
        let s = m.files.size(i);
        assert!((2_900_000..8_300_000).contains(&s), "{s}");
    }
}

#[test]
fn deterministic_unique_and_parents_first() {
    for profile in PROFILES {
        let a: Vec<Entry> = Corpus::new(profile, 0.02, 7).unwrap().entries().collect();
        let b: Vec<Entry> = Corpus::new(profile, 0.02, 7).unwrap().entries().collect();
        let c: Vec<Entry> = Corpus::new(profile, 0.02, 8).unwrap().entries().collect();
        assert_eq!(a, b, "{profile}");
        assert_ne!(a, c, "{profile}: another seed, another corpus");
        let mut seen = HashSet::new();
        seen.insert(String::new());
        for e in &a {
            let p = e.path();
            let parent = p.rsplit_once('/').map_or("", |(d, _)| d);
            assert!(seen.contains(parent), "{profile}: {p} before its directory");
            assert!(seen.insert(p.to_string()), "{profile}: {p} twice");
            assert!(!p.starts_with('/') && !p.split('/').any(|c| c == ".." || c.is_empty()));
        }
    }
}

#[test]
fn squid_layout_and_maildir_names() {
    let c = Corpus::new("web-cache", 0.01, 1).unwrap();
    let p = c.file_path(&c.files, 0);
    assert!(
        p.len() == 14 && p.as_bytes()[2] == b'/' && p.ends_with("00000000"),
        "{p}"
    );
    let m = Corpus::new("maildir", 0.01, 1).unwrap();
    let p = m.file_path(&m.files, 3);
    assert!(p.contains("/cur/") || p.contains("/new/"), "{p}");
    assert!(p.ends_with(":2,S") && p.contains(&format!("S={}", m.files.size(3))));
}

#[test]
fn objects_can_be_placed_next_to_sources() {
    let c = Corpus::new("source-tree", 0.05, 555).unwrap();
    let objs = FileSet::new(
        9,
        Naming::Objects,
        SizeDist::LogNormal {
            median: 60_000.0,
            sigma: 1.5,
            max: 64 << 20,
        },
        163,
        34 << 20,
        &c.dir_weights(),
    );
    assert_eq!(objs.len(), 163);
    for i in 0..objs.len() {
        assert!(c.files.in_dir(objs.dir_of(i)).end > c.files.in_dir(objs.dir_of(i)).start);
    }
    let names: HashSet<_> = (0..objs.len()).map(|i| c.file_path(&objs, i)).collect();
    assert_eq!(names.len(), 163);
}

#[test]
fn bad_profiles_and_scales_are_usage_errors() {
    for (p, s) in [
        ("kernel", 1.0),
        ("maildir", 0.0),
        ("media", -1.0),
        ("media", 1e9),
    ] {
        let e = Corpus::new(p, s, 1).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{p} {s}");
    }
}

#[test]
fn writes_what_it_lists() {
    const SPEC: PhaseSpec = PhaseSpec {
        name: "w",
        kind: PhaseKind::Write,
        primary: Primary::MbPerS,
        ops_unit: "",
    };
    in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
        let c = Corpus::new("source-tree", 0.01, 3).unwrap();
        let root = cx.workdir().join("tree");
        fs::create_dir(&root).unwrap();
        let got = std::sync::Mutex::new(TreeCount::default());
        cx.phase(&SPEC, 1, |w| {
            *got.lock().unwrap() = c.write(w, &root)?;
            Ok(())
        })
        .unwrap();
        let t = c.totals();
        let got = got.into_inner().unwrap();
        assert_eq!((got.files, got.dirs, got.bytes), (t.files, t.dirs, t.bytes));
        assert_eq!(cx.phases()[0].bytes_written, t.bytes);
        let first = c
            .entries()
            .find(|e| matches!(e, Entry::File { .. }))
            .unwrap();
        let Entry::File { path, size, .. } = first else {
            unreachable!()
        };
        assert_eq!(fs::metadata(root.join(path)).unwrap().len(), size);
    });
}
