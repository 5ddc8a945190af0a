use super::churn::{age, Goal};
use super::*;
use crate::data::DataPool;
use crate::policy::DataPolicy;
use crate::provision::{Target, TargetSpec};
use std::path::Path;

#[test]
fn specs_parse_with_defaults_and_refuse_nonsense() {
    let s = AgeSpec::parse("desktop").unwrap();
    assert_eq!(
        (s.profile, s.fill_pct, s.churn),
        (Profile::Desktop, 75.0, 2.0)
    );
    assert_eq!(s.canonical(), "desktop:fill=75,churn=2");
    let s = AgeSpec::parse("web-cache:fill=60,churn=0.5").unwrap();
    assert_eq!(s.canonical(), "web-cache:fill=60,churn=0.5");
    assert_eq!(AgeSpec::parse(&s.canonical()).unwrap(), s);
    for bad in [
        "desk",
        "desktop:fill=99",
        "desktop:fill=x",
        "desktop:churn=-1",
        "desktop:size=3",
        "desktop:fill",
        "desktop:independent=1",
        "desktop:indep",
    ] {
        let e = AgeSpec::parse(bad).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e:#}");
    }
}

#[test]
fn independent_aging_parses_and_gives_each_repetition_its_own_seed() {
    let s = AgeSpec::parse("desktop:fill=60,independent").unwrap();
    assert!(s.independent);
    assert_eq!(s.canonical(), "desktop:fill=60,churn=2,independent");
    assert_eq!(AgeSpec::parse(&s.canonical()).unwrap(), s);
    assert_eq!(
        AgeSpec::parse("desktop:independent").unwrap().fill_pct,
        75.0
    );
    // The first repetition ages as without `independent`; each later one from its own
    // seed, the same in every run of the same seed, exact in JSON (at most 53 bits).
    let seeds: Vec<u64> = (1..=20).map(|rep| s.seed_for(42, rep)).collect();
    assert_eq!(seeds[0], 42);
    let mut distinct = seeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), seeds.len(), "{seeds:?}");
    assert!(seeds.iter().all(|&x| x < 1 << 53));
    assert_eq!(s.seed_for(42, 3), seeds[2]);
    assert_ne!(s.seed_for(43, 2), seeds[1]);
    // Without it, every repetition ages from the run's seed.
    let plain = AgeSpec::parse("desktop:fill=60").unwrap();
    assert!((1..=5).all(|rep| plain.seed_for(42, rep) == 42));
}

#[test]
fn goals_count_the_fresh_metadata_and_never_write_less_than_they_fill() {
    let spec = AgeSpec::parse("desktop:fill=50,churn=2").unwrap();
    let g = Goal::new(&spec, 1000 << 20, 100 << 20);
    assert_eq!(g.live_bytes, 400 << 20);
    assert_eq!(g.write_bytes, 2000 << 20);
    let spec = AgeSpec::parse("desktop:fill=50,churn=0").unwrap();
    assert_eq!(Goal::new(&spec, 1000 << 20, 0).write_bytes, 500 << 20);
}

/// Every file below `root` with its size, sorted.
fn listing(root: &Path) -> Listing {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            out.push((rel, m.is_file().then_some(m.len())));
        }
    }
    out.sort();
    out
}

type Listing = Vec<(String, Option<u64>)>;

/// Ages a temporary directory as if it were an 8 MiB filesystem, to half full, writing
/// it over once (the database profile, which mostly rewrites pages in place, four
/// times: it deletes a relation only once it is full).
fn aged(profile: &str, seed: u64) -> (Listing, churn::Churned, Goal) {
    let dir = tempfile::tempdir().unwrap();
    let churn = if profile == "database" { 4 } else { 1 };
    let spec = AgeSpec::parse(&format!("{profile}:fill=50,churn={churn}")).unwrap();
    let goal = Goal::new(&spec, 8 << 20, 0);
    let pool = DataPool::new(DataPolicy::Random, 1);
    let mut ticks = 0;
    let out = age(dir.path(), &spec, goal, seed, &pool, &mut |_| ticks += 1).unwrap();
    assert!(ticks > 0);
    (listing(dir.path()), out, goal)
}

#[test]
fn the_same_seed_makes_the_same_aged_file_set_for_every_profile() {
    for p in profiles::PROFILES {
        let (a, out, goal) = aged(p.name(), 7);
        let (b, _, _) = aged(p.name(), 7);
        assert_eq!(a, b, "{}", p.name());
        let (c, _, _) = aged(p.name(), 8);
        assert_ne!(a, c, "{}: another seed, another file set", p.name());
        // Both goals met; the live files hold what was aimed at, give or take a file.
        assert!(out.bytes_written >= goal.write_bytes, "{}", p.name());
        let live: u64 = a.iter().filter_map(|f| f.1).sum();
        assert!(live >= goal.live_bytes, "{}: {live}", p.name());
        assert!(
            live <= goal.live_bytes + goal.live_bytes / 8,
            "{}: {live}",
            p.name()
        );
        assert_eq!(out.files, a.iter().filter(|f| f.1.is_some()).count() as u64);
        assert!(out.deleted > 0, "{}: deletes", p.name());
        assert_eq!(out.full, 0);
    }
}

/// An ext4 loop target of 256 MiB aged as `age` from `seed`, in `image_dir`, with its
/// state in `state_dir`.
fn aged_ext4(image_dir: &Path, state_dir: &Path, age: AgeSpec, seed: u64) -> Box<dyn Target> {
    let env = crate::provision::Env::for_test("agetest", image_dir, state_dir);
    let spec = TargetSpec::Loop {
        fs: crate::provision::fs::FsType::Ext4,
        mkfs_opts: Vec::new(),
        mount_opts: String::new(),
        size_bytes: 256 << 20,
    };
    Box::new(crate::provision::loopfs::LoopTarget::new(&spec, &env).with_age(age, seed))
}

/// Prepares `t` (aging it), lists its aged files, and tears it down.
fn aged_listing(t: &mut dyn Target) -> (Listing, crate::result::Aging) {
    let work = t.prepare().unwrap();
    let list = listing(&work.parent().unwrap().join("aged"));
    let aging = t.provision().aging.expect("aged");
    t.teardown().unwrap();
    (list, aging)
}

/// On a real ext4: the same seed ages to the same file set, another seed to another; the
/// aging is measured; a kept image is reused by the next trial, byte for byte the same
/// files, and `cleanup --aged`'s sweep removes it.
#[test]
fn a_loop_filesystem_ages_the_same_from_the_same_seed_and_its_image_is_kept() {
    if !crate::probe::sys::is_root()
        || !Path::new("/dev/loop-control").exists()
        || crate::provision::fs::FsType::Ext4.support() != crate::provision::fs::Support::Yes
    {
        eprintln!("SKIP a_loop_filesystem_ages_the_same…: needs root, loop devices and ext4");
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let (img, state) = (base.path().join("img"), base.path().join("state"));
    let fresh = AgeSpec {
        keep: false,
        ..AgeSpec::parse("desktop:fill=60,churn=1.5").unwrap()
    };
    let (a, aging) = aged_listing(&mut *aged_ext4(&img, &state, fresh, 42));
    let (b, _) = aged_listing(&mut *aged_ext4(&img, &state, fresh, 42));
    let (c, _) = aged_listing(&mut *aged_ext4(&img, &state, fresh, 43));
    assert!(a.len() > 100, "{} entries", a.len());
    assert_eq!(a, b, "the same seed, the same aged files");
    assert_ne!(a, c, "another seed, other files");
    assert!(!aging.reused);
    let f = aging.file_fragments.as_ref().expect("FIEMAP on ext4");
    assert_eq!(f.files, aging.files);
    assert!(f.mean >= 1.0);
    let s = aging.free_space.as_ref().expect("e2freefrag on ext4");
    assert_eq!(s.method, "e2freefrag");
    assert!(s.extents >= 1);
    let used = aging.used_bytes as f64 / aging.capacity_bytes as f64;
    assert!((0.55..0.75).contains(&used), "{used}");
    // Kept: the first trial ages and keeps its image, the next starts from a copy.
    let kept = AgeSpec {
        keep: true,
        ..fresh
    };
    let mut t = aged_ext4(&img, &state, kept, 42);
    let (first, made) = aged_listing(&mut *t);
    let (second, reused) = aged_listing(&mut *t);
    assert_eq!(first, a);
    assert_eq!(second, a, "the copy holds the same files");
    assert!(!made.reused && reused.reused);
    assert_eq!(
        reused,
        crate::result::Aging {
            reused: true,
            copy_s: reused.copy_s,
            copy_how: reused.copy_how.clone(),
            ..made
        }
    );
    assert!(reused.copy_s.is_some_and(|s| s > 0.0));
    assert!(matches!(
        reused.copy_how.as_deref(),
        Some("copy" | "reflink")
    ));
    let kept_dir = img.join(kept::DIR);
    let kept_files = || -> Vec<String> {
        std::fs::read_dir(&kept_dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(".fsarena"))
            .collect()
    };
    assert_eq!(kept_files().len(), 2, "{:?}", kept_files());
    drop(t);
    let removed = crate::state::remove_kept(&img);
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert_eq!(kept_files(), Vec::<String>::new());
}
