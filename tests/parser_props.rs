//! Properties of the parsers fsarena feeds from outside, beside their fuzz targets
//! (`fuzz/`, docs/security.md "Fuzzing"): `--net` sources and the mount commands made of
//! them, `--mkfs-opt`/`--mount-opt` words and the path refusal, and the structure of a
//! plan file read back from its TOML.

use fsarena::plan::file::parse;
use fsarena::provision::fs::{refuse_paths, split_opts, FsType};
use fsarena::provision::net::{NetKind, NetSpec};
use proptest::prelude::*;

/// A host as a user types one, sometimes empty or starting with `-`.
fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9][a-z0-9.-]{0,12}",
        Just(String::new()),
        "-[a-zA-Z=]{1,8}",
        "\\[[0-9a-f:]{2,8}\\]",
    ]
}

/// A `--net` value: kind, source (well-formed or not), options with secrets in places.
fn net_text() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(vec!["nfs", "cifs", "sshfs"]);
    let path = "(/[a-z]{0,6}){0,3}";
    let source = prop_oneof![
        (host(), path).prop_map(|(h, p)| format!("{h}:{p}")),
        (host(), path).prop_map(|(h, p)| format!("//{h}{p}")),
        ("[a-z-]{0,4}", host(), path).prop_map(|(u, h, p)| format!("{u}@{h}:{p}")),
        "[ -~]{0,12}",
    ];
    let opt = prop_oneof![
        "(ro|vers=4.2|port=22|domain=d|noatime)",
        "(password|pass|passwd)=[a-z,]{0,8}",
        "(username|user)=[a-z]{1,4}%[a-z]{4,8}",
        "(credentials|cred)=/nonexistent/[a-z]{1,4}",
        "[A-Za-z_]{1,10}=[ -~]{0,6}",
    ];
    (kind, source, prop::collection::vec(opt, 0..4)).prop_map(|(k, s, o)| {
        let mut t = format!("{k}={s}");
        for x in o {
            t.push(',');
            t.push_str(&x);
        }
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// An accepted source makes a mount command in which only the options after `-o` or
    /// `-t` start with `-`, the source is followed by the mount point, and a CIFS
    /// password is in the environment (`PASSWD`), never in argv; a source starting with
    /// `-` is always refused (an error, not a panic).
    #[test]
    fn net_sources_never_become_options_or_show_passwords(text in net_text()) {
        let (_, rest) = text.split_once('=').unwrap();
        let source = rest.split(',').next().unwrap().trim();
        let parsed = NetSpec::parse(&text);
        if source.starts_with('-') {
            prop_assert!(parsed.is_err(), "{text} accepted");
        }
        let Ok(spec) = parsed else { return Ok(()) };
        let mp = "/var/tmp/fsarena/mnt/t";
        let (argv, env) = spec.mount_command(mp);
        let mut after_flag = false;
        for a in &argv[1..] {
            prop_assert!(after_flag || !a.starts_with('-') || a == "-o" || a == "-t", "{argv:?}");
            after_flag = a == "-o" || a == "-t";
        }
        prop_assert!(argv.windows(2).any(|w| w[0] == spec.source && w[1] == mp), "{argv:?}");
        let password = text.split(',').skip(1).find_map(|o| {
            let (k, v) = o.split_once('=')?;
            match k {
                "password" | "pass" | "passwd" => Some(v.to_string()),
                "username" | "user" => v.split_once('%').map(|(_, p)| p.to_string()),
                _ => None,
            }
        });
        if let Some(p) = password.filter(|p| p.len() >= 4 && !p.contains(',')) {
            prop_assert_eq!(spec.kind, NetKind::Cifs, "a password for another kind");
            prop_assert!(!argv.iter().any(|a| a.contains(&format!("={p}"))), "{argv:?}");
            prop_assert!(!argv.iter().any(|a| a.contains(&format!("%{p}"))), "{argv:?}");
            prop_assert!(env.iter().any(|(k, _)| k == "PASSWD"), "{env:?}");
        }
    }

    /// Words without quotes or spaces, joined by spaces, split back to the same words;
    /// quoted, a word keeps its spaces.
    #[test]
    fn split_opts_round_trips(words in prop::collection::vec("[-=a-z0-9^,./]{1,10}", 0..6),
                              spaced in "[a-z]{1,4} [a-z ]{0,6}") {
        prop_assert_eq!(split_opts(&words.join(" ")).unwrap(), words.clone());
        let mut quoted = words.clone();
        quoted.push(spaced.clone());
        let text = format!("{} '{spaced}'", words.join(" "));
        prop_assert_eq!(split_opts(&text).unwrap(), quoted);
    }

    /// An option value that names a path (absolute, `./`, `../`), alone, after `=` or in a
    /// comma list, is refused; whatever passes leaves the device fsarena made the only
    /// argument of mkfs that names a file.
    #[test]
    fn mkfs_and_mount_options_never_name_a_file(
        words in prop::collection::vec(prop_oneof![
            "-[a-zA-Z]",
            "[a-z_]{1,8}=[0-9]{1,4}",
            "(device|logdev|rtdev|file)=(/|\\./|\\.\\./)[a-z]{1,6}",
            "(/|\\./|\\.\\./)(dev/)?[a-z]{1,6}[0-9]?",
            "[a-z]{1,4},(/dev/)?[a-z]{1,4}",
            "'[a-z ]{1,6}'",
        ], 0..5),
    ) {
        let text = words.join(" ");
        let Ok(split) = split_opts(&text) else { return Ok(()) };
        let names_path = |v: &str| v.starts_with('/') || v.starts_with("./") || v.starts_with("../");
        let any_path = split.iter().any(|w| {
            w.split(',').any(|i| names_path(i) || i.split_once('=').is_some_and(|(_, v)| names_path(v)))
        });
        let refused = refuse_paths(&split);
        prop_assert!(refused.is_ok() || !refused.clone().unwrap_err().is_empty());
        prop_assert!(!any_path || refused.is_err(), "{:?} accepted", split);
        // As mount options: one word, items split at commas.
        let opts = split.join(",");
        let item_path = opts
            .split(',')
            .any(|i| names_path(i) || i.split_once('=').is_some_and(|(_, v)| names_path(v)));
        prop_assert!(!item_path || refuse_paths(&[&opts]).is_err(), "mount {} accepted", opts);
        if refused.is_ok() {
            for fs in FsType::ALL {
                let argv = fs.mkfs_argv("/dev/loop999", &split);
                let named: Vec<_> = argv.iter().filter(|a| names_path(a)).collect();
                prop_assert_eq!(named, vec!["/dev/loop999"]);
            }
        }
    }
}

/// A TOML basic string holding `s` (JSON's escapes are TOML's).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A generated plan: targets (name, fs, size, mount) and workloads (kind, params).
type Targets = Vec<(Option<String>, String, Option<String>, Option<String>)>;
type Workloads = Vec<(String, Vec<(String, String)>)>;

fn plan_model() -> impl Strategy<Value = (Targets, Workloads, Vec<String>, Vec<String>)> {
    let fs = prop::sample::select(vec!["ext2", "ext4", "xfs", "btrfs", "tmpfs", "nilfs2"]);
    let text = "[ -~\u{e9}\u{3bb}\t]{0,12}";
    let target = (
        prop::option::of("[a-z][a-z0-9_-]{0,10}"),
        fs.clone(),
        prop::option::of(text),
        prop::option::of(text),
    )
        .prop_map(|(n, f, s, m)| (n, f.to_string(), s, m));
    let kinds: Vec<&str> = fsarena::workload::registry()
        .iter()
        .map(|w| w.name)
        .collect();
    let workload = (
        prop::sample::select(kinds),
        prop::collection::vec(("[a-z_]{1,8}", "[^,'\"\u{7f}]{0,10}"), 0..3),
    )
        .prop_map(|(k, p)| (k.to_string(), p));
    let axis = prop::collection::btree_set(fs, 1..4)
        .prop_map(|s| s.into_iter().map(String::from).collect::<Vec<_>>());
    let sizes = prop::collection::btree_set("[1-9][0-9]{0,3}(MiB|GiB)", 1..3)
        .prop_map(|s| s.into_iter().collect::<Vec<_>>());
    (
        prop::collection::vec(target, 0..4),
        prop::collection::vec(workload, 0..3),
        axis,
        sizes,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A plan written as TOML reads back as written: every target's keys and values in
    /// order, a matrix's fs × size targets after them, every workload's kind and its
    /// parameters with their values as text.
    #[test]
    fn plan_files_read_back_as_written((targets, workloads, axis, sizes) in plan_model()) {
        let mut text = String::from("description = \"generated\"\n");
        for (name, fs, size, mount) in &targets {
            text.push_str("[[target]]\n");
            if let Some(n) = name { text.push_str(&format!("name = {}\n", toml_str(n))); }
            text.push_str(&format!("fs = {}\n", toml_str(fs)));
            if let Some(s) = size { text.push_str(&format!("size = {}\n", toml_str(s))); }
            if let Some(m) = mount { text.push_str(&format!("mount = {}\n", toml_str(m))); }
        }
        let list = |v: &[String]| v.iter().map(|s| toml_str(s)).collect::<Vec<_>>().join(", ");
        text.push_str(&format!("[[matrix]]\nfs = [{}]\nsize = [{}]\n", list(&axis), list(&sizes)));
        for (kind, params) in &workloads {
            text.push_str(&format!("[[workload]]\nkind = {}\n", toml_str(kind)));
            let mut seen = std::collections::HashSet::new();
            for (k, v) in params.iter().filter(|(k, _)| k != "kind" && k != "suite") {
                if seen.insert(k) {
                    text.push_str(&format!("{k} = {}\n", toml_str(v)));
                }
            }
        }
        let file = match parse("gen.toml", &text) {
            Ok(f) => f,
            Err(e) => return Err(TestCaseError::fail(format!("{e:#}\n{text}"))),
        };
        prop_assert_eq!(file.targets.len(), targets.len() + axis.len() * sizes.len());
        for (got, (name, fs, size, mount)) in file.targets.iter().zip(&targets) {
            let v = |a: &Option<fsarena::plan::located::At<String>>| a.as_ref().map(|a| a.v.clone());
            prop_assert_eq!(v(&got.name), name.clone());
            prop_assert_eq!(v(&got.fs), Some(fs.clone()));
            prop_assert_eq!(v(&got.size), size.clone());
            prop_assert_eq!(v(&got.mount), mount.clone());
        }
        let made: Vec<_> = file.targets[targets.len()..]
            .iter()
            .map(|t| (t.fs.as_ref().unwrap().v.clone(), t.size.as_ref().unwrap().v.clone()))
            .collect();
        for f in &axis {
            for s in &sizes {
                prop_assert!(made.contains(&(f.clone(), s.clone())), "{f} {s}: {made:?}");
            }
        }
        prop_assert_eq!(file.workloads.len(), workloads.len());
        for (got, (kind, params)) in file.workloads.iter().zip(&workloads) {
            prop_assert_eq!(&got.kind.v, kind);
            for (k, v) in &got.params {
                let given = params.iter().find(|(pk, _)| *pk == k.v).map(|(_, pv)| pv);
                prop_assert_eq!(Some(&v.v), given);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every duration parameter (unit `s`) of every workload takes 0 to 30 days and
    /// refuses more, negative and non-numbers with an error; building with an accepted
    /// value never panics (`Duration::from_secs_f64` panicked above ~1.8e19 s).
    #[test]
    fn durations_are_bounded(x in prop_oneof![
        0.0..=fsarena::workload::params::MAX_SECONDS,
        fsarena::workload::params::MAX_SECONDS * 1.000_001..1e300,
        -1e20..-1e-9f64,
    ]) {
        use fsarena::workload::params::{Params, MAX_SECONDS};
        for info in fsarena::workload::registry() {
            for p in info.params.iter().filter(|p| p.unit == "s") {
                let parsed = Params::parse(info.name, info.params, &format!("{}={x}", p.name));
                prop_assert_eq!(parsed.is_ok(), (0.0..=MAX_SECONDS).contains(&x), "{}:{}={}", info.name, p.name, x);
                if let Ok(params) = parsed {
                    let _ = (info.build)(&params);
                }
            }
        }
    }
}

/// A line of an fio job file: a header, a known option with a value (well-formed or
/// not), a comment, an include or junk.
fn fio_line() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "rw",
        "bs",
        "bsrange",
        "bssplit",
        "size",
        "filesize",
        "nrfiles",
        "openfiles",
        "numjobs",
        "iodepth",
        "ioengine",
        "direct",
        "buffered",
        "fsync",
        "runtime",
        "time_based",
        "ramp_time",
        "rate",
        "random_distribution",
        "norandommap",
        "verify",
        "fallocate",
        "overwrite",
        "invalidate",
        "cpus_allowed",
        "stonewall",
        "new_group",
        "filename",
        "rwmixwrite",
        "randseed",
        "gtod_reduce",
        "thinktime",
    ]);
    let value = prop_oneof![
        "[0-9]{1,4}(k|m|g|kib|%|ms|s|)?",
        "(read|write|randread|randrw|rw|trim|psync|libaio|null|io_uring|zipf:1.2|native|md5)",
        "[0-9]k(-|/|:|,)[0-9]{0,2}k?(/[0-9]{0,3})?",
        "[ -~]{0,10}",
    ];
    prop_oneof![
        "\\[(global|[a-z]{1,5})\\]",
        (key.clone(), value).prop_map(|(k, v)| format!("{k}={v}")),
        key.prop_map(str::to_string),
        "[;#][ -~]{0,10}",
        Just("include x.inc".to_string()),
        "[ -~]{0,16}",
    ]
}

proptest! {
    /// Any job file: parsed strict and lenient without a panic; a plan's entries are specs
    /// the job workload accepts (the fuzz target's invariants, on stable).
    #[test]
    fn fio_job_files_never_panic(
        lines in prop::collection::vec(fio_line(), 0..14),
        include in prop::collection::vec(fio_line(), 0..3),
    ) {
        let text = format!("{}\0{}", lines.join("\n"), include.join("\n"));
        fsarena::fuzzing::fio_job(text.as_bytes());
    }
}
