//! Unit tests of `untar`.

use super::format::ustar_header;
use super::*;

#[test]
fn a_users_archive_shows_no_corpus_parameters() {
    let mut p = std::collections::BTreeMap::new();
    p.insert("profile".to_string(), "web-cache".to_string());
    assert!(param_applies(&p, "profile") && param_applies(&p, "scale"));
    p.insert("archive".to_string(), "/tmp/a.tar".to_string());
    assert!(!param_applies(&p, "profile") && !param_applies(&p, "scale"));
    assert!(param_applies(&p, "archive"));
}
use crate::context::{PhaseKind, PhaseSpec, Primary};
use crate::data::DataPool;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const SPEC: PhaseSpec = PhaseSpec {
    name: "x",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "",
};

/// A tar archive made of (name, kind, data, link) entries, with end blocks.
fn archive(entries: &[(&str, u8, &[u8], &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, kind, data, link) in entries {
        out.extend(entry_headers(
            name.as_bytes(),
            *kind,
            data.len() as u64,
            0o644,
            1_600_000_000,
            link.as_bytes(),
        ));
        out.extend_from_slice(data);
        out.resize(out.len() + padding(data.len() as u64) as usize, 0);
    }
    out.extend([0u8; 2 * BLOCK]);
    out
}

/// Extracts `bytes` into `<tmp>/in/x`; returns the result and whether anything appeared
/// in `<tmp>/in` besides `x` or in `<tmp>` besides `in`.
pub(super) fn try_extract(bytes: Vec<u8>) -> (Result<Counts>, Vec<String>) {
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        let inner = cx.workdir().join("in");
        let root = inner.join("x");
        std::fs::create_dir_all(&root).unwrap();
        let res = std::sync::Mutex::new(None);
        let _ = cx.phase(&SPEC, 1, |w| {
            let r = extract(w, Box::new(io::Cursor::new(bytes.clone())), &root);
            let failed = r.is_err();
            *res.lock().unwrap() = Some(r);
            if failed {
                bail!("failed")
            } else {
                Ok(())
            }
        });
        let mut outside: Vec<String> = std::fs::read_dir(&inner)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "x")
            .collect();
        outside.extend(
            std::fs::read_dir(cx.workdir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "in"),
        );
        (res.into_inner().unwrap().unwrap(), outside)
    })
}

#[test]
fn hostile_archives_are_refused_and_write_nothing_outside() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "absolute",
            archive(&[("/tmp/evil", b'0', b"x", "")]),
            "absolute",
        ),
        ("dotdot", archive(&[("../evil", b'0', b"x", "")]), "'..'"),
        (
            "inner dotdot",
            archive(&[("a/../../evil", b'0', b"x", "")]),
            "'..'",
        ),
        (
            "symlink up then through it",
            archive(&[("a", b'2', b"", ".."), ("a/evil", b'0', b"x", "")]),
            "not a directory",
        ),
        (
            "absolute symlink then through it",
            archive(&[("a", b'2', b"", "/tmp"), ("a/evil", b'0', b"x", "")]),
            "not a directory",
        ),
        (
            "directory over a symlink",
            archive(&[("a", b'2', b"", ".."), ("a/", b'5', b"", "")]),
            "symlink",
        ),
        (
            "hard link through a symlink",
            archive(&[("a", b'2', b"", ".."), ("p", b'1', b"", "a/evil")]),
            "not a directory",
        ),
        (
            "through an inside symlink",
            archive(&[
                ("d/", b'5', b"", ""),
                ("l", b'2', b"", "d"),
                ("l/evil", b'0', b"x", ""),
            ]),
            "not a directory",
        ),
        (
            "hard link to /etc/passwd",
            archive(&[("p", b'1', b"", "/etc/passwd")]),
            "absolute",
        ),
        (
            "hard link up",
            archive(&[("p", b'1', b"", "../evil")]),
            "'..'",
        ),
    ];
    for (what, bytes, msg) in cases {
        let err = format!("{:#}", validate(&bytes).expect_err(what));
        assert!(err.contains(msg), "{what}: validate: {err}");
        let (res, outside) = try_extract(bytes);
        let err = format!("{:#}", res.expect_err(what));
        assert!(err.contains(msg), "{what}: {err}");
        assert!(
            outside.is_empty(),
            "{what}: wrote {outside:?} outside the target"
        );
    }
}

#[test]
fn truncated_and_corrupt_archives_are_errors() {
    let good = archive(&[("f", b'0', &[7u8; 3000], "")]);
    for cut in [100, 512 + 1000, 512 + 3000] {
        let (res, _) = try_extract(good[..cut].to_vec());
        let err = format!("{:#}", res.unwrap_err());
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
        let err = format!("{:#}", validate(&good[..cut]).unwrap_err());
        assert!(err.contains("truncated"), "validate, cut at {cut}: {err}");
    }
    let mut bad = good.clone();
    bad[10] ^= 0x20;
    let err = format!("{:#}", validate(&bad).unwrap_err());
    assert!(err.contains("checksum at byte 0"), "{err}");
    let err = format!("{:#}", try_extract(bad).0.unwrap_err());
    assert!(err.contains("checksum"), "{err}");
    let mut second = archive(&[("a", b'0', b"1", ""), ("b", b'0', b"2", "")]);
    second[2 * BLOCK + 3] ^= 1;
    let err = format!("{:#}", validate(&second).unwrap_err());
    assert!(err.contains("checksum at byte 1024"), "{err}");
    assert_eq!(validate(&good).unwrap().bytes, 3000);
    let (res, _) = try_extract(good);
    assert_eq!(res.unwrap().bytes, 3000);
}

/// Symlinks pointing anywhere are made as they are; nothing is ever written through
/// one: not a member below it, not a file or hard link of the same name.
#[test]
fn outward_symlinks_are_made_and_never_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let (dir, vic) = (
        outside.path().to_string_lossy().into_owned(),
        victim.to_string_lossy().into_owned(),
    );
    let links = [
        ("abs", b'2', &b""[..], dir.as_str()),
        ("mpi", b'2', b"", "/etc/alternatives/mpi-x86_64-linux-gnu"),
        ("d/up", b'2', b"", "../../../lib/llvm-14/include"),
        ("d/in", b'2', b"", "../abs"),
        ("f", b'2', b"", vic.as_str()),
        ("h", b'2', b"", vic.as_str()),
        ("src", b'0', b"src", ""),
        // Replacing the symlinks `f` and `h`: the victim must stay as it was.
        ("f", b'0', b"new", ""),
        ("h", b'1', b"", "src"),
    ];
    let bytes = archive(&links);
    let c = validate(&bytes).unwrap();
    assert_eq!((c.symlinks, c.files, c.hardlinks), (6, 2, 1));
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        let root = cx.workdir().join("x");
        std::fs::create_dir(&root).unwrap();
        let got = std::sync::Mutex::new(Counts::default());
        cx.phase(&SPEC, 1, |w| {
            *got.lock().unwrap() = extract(w, Box::new(io::Cursor::new(bytes.clone())), &root)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(got.into_inner().unwrap().symlinks, 6);
        for (name, target) in [
            ("abs", dir.as_str()),
            ("mpi", "/etc/alternatives/mpi-x86_64-linux-gnu"),
            ("d/up", "../../../lib/llvm-14/include"),
            ("d/in", "../abs"),
        ] {
            assert_eq!(
                std::fs::read_link(root.join(name)).unwrap(),
                Path::new(target)
            );
        }
        assert_eq!(std::fs::read(root.join("f")).unwrap(), b"new");
        assert_eq!(std::fs::read(root.join("h")).unwrap(), b"src");
        assert!(!std::fs::symlink_metadata(root.join("h"))
            .unwrap()
            .is_symlink());
    });
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // Through the absolute symlink, directly or by the in-tree one: refused, and the
    // directory it points to gets nothing.
    for through in ["abs/evil", "d/in/evil"] {
        let mut hostile = links[..4].to_vec();
        hostile.push((through, b'0', b"x", ""));
        let bytes = archive(&hostile);
        let err = format!("{:#}", validate(&bytes).unwrap_err());
        assert!(err.contains("never followed"), "{through}: {err}");
        let (res, _) = try_extract(bytes);
        let err = format!("{:#}", res.unwrap_err());
        assert!(err.contains("never followed"), "{through}: {err}");
        let names: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{through}: wrote into the symlink's target");
    }
}

#[test]
fn generated_stream_is_a_valid_tar_and_round_trips() {
    let corpus = Corpus::new("source-tree", 0.01, 5).unwrap();
    let pool = DataPool::new(DataPolicy::Text, 1);
    let mut bytes = Vec::new();
    TarStream::new(&corpus, pool.source(0))
        .read_to_end(&mut bytes)
        .unwrap();
    let t = corpus.totals();
    // GNU tar lists it without complaint.
    let tmp = tempfile::tempdir().unwrap();
    let tar_path = tmp.path().join("a.tar");
    std::fs::write(&tar_path, &bytes).unwrap();
    let out = std::process::Command::new("tar")
        .arg("tf")
        .arg(&tar_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
    assert_eq!(listed, t.files + t.dirs + t.symlinks);
    // GNU tar's extraction and ours agree file by file.
    let by_tar = tmp.path().join("tar");
    std::fs::create_dir(&by_tar).unwrap();
    let st = std::process::Command::new("tar")
        .args(["xf"])
        .arg(&tar_path)
        .arg("-C")
        .arg(&by_tar)
        .status()
        .unwrap();
    assert!(st.success());
    let bytes2 = bytes.clone();
    in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
        let root = cx.workdir().join("x");
        std::fs::create_dir(&root).unwrap();
        let got = std::sync::Mutex::new(Counts::default());
        cx.phase(&SPEC, 1, |w| {
            *got.lock().unwrap() = extract(w, Box::new(io::Cursor::new(bytes2.clone())), &root)?;
            Ok(())
        })
        .unwrap();
        let c = got.into_inner().unwrap();
        assert_eq!(
            (c.files, c.dirs, c.symlinks, c.bytes),
            (t.files, t.dirs, t.symlinks, t.bytes)
        );
        let diff = std::process::Command::new("diff")
            .arg("-r")
            .arg(&by_tar)
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            diff.status.success(),
            "{}",
            String::from_utf8_lossy(&diff.stdout)
        );
        for e in corpus.entries().take(300) {
            let (ours, theirs) = (root.join(e.path()), by_tar.join(e.path()));
            let (a, b) = (
                std::fs::symlink_metadata(&ours).unwrap(),
                std::fs::symlink_metadata(&theirs).unwrap(),
            );
            assert_eq!(
                (a.mode(), a.mtime(), a.len()),
                (b.mode(), b.mtime(), b.len()),
                "{}",
                e.path()
            );
            if let Entry::Symlink { target, .. } = e {
                assert_eq!(std::fs::read_link(&ours).unwrap(), Path::new(&target));
            }
        }
    });
}

#[test]
fn long_names_pax_and_replacing_files() {
    let long = format!("{}/f", "d".repeat(150));
    let mut bytes = archive(&[
        (&format!("{}/", "d".repeat(150)), b'5', b"", ""),
        (&long, b'0', b"abc", ""),
    ]);
    bytes.truncate(bytes.len() - 2 * BLOCK);
    let rec = b"20 path=paxname.txt\n";
    bytes.extend(ustar_header(
        b"PaxHeader",
        b'x',
        rec.len() as u64,
        0o644,
        0,
        b"",
    ));
    bytes.extend_from_slice(rec);
    bytes.resize(bytes.len() + padding(rec.len() as u64) as usize, 0);
    bytes.extend(ustar_header(b"short", b'0', 2, 0o640, 1_600_000_000, b""));
    bytes.extend_from_slice(b"hi");
    bytes.resize(bytes.len() + padding(2) as usize, 0);
    // The same name again: replaced.
    bytes.extend(ustar_header(
        b"paxname.txt",
        b'0',
        1,
        0o600,
        1_600_000_000,
        b"",
    ));
    bytes.extend_from_slice(b"!");
    bytes.resize(bytes.len() + padding(1) as usize, 0);
    bytes.extend([0u8; 2 * BLOCK]);
    in_context(DataPolicy::Random, SyncPolicy::Each, |cx| {
        let root = cx.workdir().join("x");
        std::fs::create_dir(&root).unwrap();
        cx.phase(&SPEC, 1, |w| {
            extract(w, Box::new(io::Cursor::new(bytes.clone())), &root).map(|_| ())
        })
        .unwrap();
        assert_eq!(std::fs::read(root.join(&long)).unwrap(), b"abc");
        assert_eq!(std::fs::read(root.join("paxname.txt")).unwrap(), b"!");
        assert!(
            !root.join("short").exists(),
            "the pax path replaced the name"
        );
        let mode = std::fs::metadata(root.join("paxname.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    });
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "scale=0",
        "profile=kernel",
        "archive=/nonexistent.tar",
        "archive=/etc/passwd",
    ] {
        let err = WorkloadSpec::parse(&format!("untar:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
}

/// A faulty archive is refused when the spec is parsed, with the file and the fault.
#[test]
fn faulty_archives_are_usage_errors_naming_file_and_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let good = archive(&[("a/f", b'0', &[1u8; 2000], "")]);
    let gzip = |name: &str, tar: &[u8]| {
        let path = tmp.path().join(name);
        let mut child = std::process::Command::new("gzip")
            .arg("-c")
            .stdin(std::process::Stdio::piped())
            .stdout(std::fs::File::create(&path).unwrap())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(tar).unwrap();
        assert!(child.wait().unwrap().success());
        path
    };
    let mut bad_sum = good.clone();
    bad_sum[0] = b'b';
    let hostile = archive(&[("../evil", b'0', b"x", "")]);
    let not_gzip = tmp.path().join("plain.tar.gz");
    std::fs::write(&not_gzip, &good).unwrap();
    let cases = [
        (not_gzip, "gzip"),
        (gzip("sum.tar.gz", &bad_sum), "checksum at byte 0"),
        (gzip("cut.tar.gz", &good[..1200]), "truncated"),
        (gzip("evil.tgz", &hostile), "refusing file '../evil'"),
    ];
    for (path, fault) in cases {
        let spec = format!("untar:archive={}", path.display());
        let err = WorkloadSpec::parse(&spec).err().expect(fault);
        let msg = format!("{err:#}");
        assert_eq!(exit_code(&err), 2, "{msg}");
        assert!(
            msg.contains(&path.display().to_string()) && msg.contains(fault),
            "{fault}: {msg}"
        );
    }
    let ok = gzip("ok.tar.gz", &good);
    let spec = WorkloadSpec::parse(&format!("untar:archive={}", ok.display())).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        spec.workload.run(cx).unwrap();
        assert_eq!(cx.phases()[0].bytes_written, 2000);
    });
}

#[test]
fn end_to_end_generated_web_cache() {
    let spec = WorkloadSpec::parse("untar:scale=0.002").unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        workload.run(cx).unwrap();
        let p = cx.phases();
        assert_eq!(p[0].extra["files"], 500.0);
        let corpus = Corpus::new("web-cache", 0.002, cx.seed()).unwrap().totals();
        assert_eq!(p[0].bytes_written, corpus.bytes);
        assert_eq!(
            p[1].ops,
            corpus.files + corpus.dirs + 1,
            "files, dirs and the root"
        );
        assert_eq!(std::fs::read_dir(cx.workdir()).unwrap().count(), 0);
    });
}
