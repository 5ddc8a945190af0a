//! Entry points for fuzzing: one function per surface fsarena takes from outside, each
//! taking arbitrary bytes and running the real parsers and checks on them — what `plan
//! check`, `run`'s option checks and untar's archive validation do before anything is
//! touched. The cargo-fuzz targets in `fuzz/` call them, and `tests/fuzz_corpus.rs`
//! replays the kept corpora through them on stable (docs/security.md, "Fuzzing").
//!
//! A panic here is a finding: fsarena panics, overflows or breaks one of the invariants
//! asserted below. Nothing is provisioned, mounted, created or written; paths an input
//! names are at most `stat`ed (image directories, `dir`, `device`, credentials files).
//! Workload parameters that name a file to read (`untar:archive=`,
//! `compile:source=`) are parsed but not followed, so an input cannot make the fuzzer
//! read a device or walk `/`; the archive reader itself is the [`tar_archive`] surface.

use crate::cli::{Cli, Command};
use crate::provision::fs::{refuse_paths, split_opts, FsType};
use crate::provision::net::{NetKind, NetSpec};
use crate::workload::params::Params;
use crate::workload::{WorkloadInfo, WorkloadSpec};
use clap::Parser;

/// The lines of `data` (lossy UTF-8), at most `n`, missing ones empty.
fn fields(data: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(data);
    let mut v: Vec<String> = text.splitn(n, '\n').map(str::to_string).collect();
    v.resize(n, String::new());
    v
}

/// Whether `params` of workload `info` name a file or tree to read (a parameter whose
/// unit is `path`, given).
fn names_a_path(info: &WorkloadInfo, params: &Params) -> bool {
    info.params
        .iter()
        .any(|p| p.unit == "path" && params.text(p.name).is_some())
}

/// A workload spec `text` (`name:key=value,...`) as the command line parses it, and then
/// checked against a loop and a tmpfs target; path parameters are parsed only.
fn workload_text(text: &str) -> Option<WorkloadSpec> {
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let info = crate::workload::find(name.trim()).ok()?;
    let params = Params::parse(info.name, info.params, rest).ok()?;
    if names_a_path(info, &params) {
        return None;
    }
    let spec = WorkloadSpec::parse(text).ok()?;
    let _ = spec.params.to_text_map();
    let _ = spec.workload.data_bytes();
    for target in [
        crate::provision::TargetSpec::Loop {
            fs: FsType::Ext4,
            mkfs_opts: Vec::new(),
            mount_opts: String::new(),
            size_bytes: 256 << 20,
        },
        crate::provision::TargetSpec::Tmpfs {
            size_bytes: 64 << 20,
            mount_opts: String::new(),
        },
    ] {
        let _ = crate::workload::check_target(&spec, &target);
    }
    Some(spec)
}

/// Workload strings: `smallfiles:files=..`, `job:...`, `bonnie:...`, every registered
/// workload's parameter parsing and build. Each line of `data` is one spec; a line that
/// names no known workload is tried as the parameters of each (`files=1,size=2`).
pub fn workload_spec(data: &[u8]) {
    crate::secret::forget_all();
    let text = String::from_utf8_lossy(data);
    for line in text.lines().take(4) {
        if workload_text(line).is_some() {
            continue;
        }
        let name = line.split_once(':').map_or(line, |(n, _)| n).trim();
        if crate::workload::find(name).is_err() {
            for info in crate::workload::registry() {
                workload_text(&format!("{}:{line}", info.name));
            }
        }
    }
}

/// An fio job file held in memory: the input before its first NUL is the file, what
/// follows is every file it includes; `${A}` is `4k`, `${B}` is `[x]`, others unset.
struct FioInput<'a> {
    include: &'a str,
}

impl crate::plan::fio::ini::Source for FioInput<'_> {
    fn read(&mut self, _: &std::path::Path) -> Result<String, String> {
        Ok(self.include.to_string())
    }
    fn exists(&self, _: &std::path::Path) -> bool {
        true
    }
    fn var(&self, name: &str) -> Option<String> {
        match name {
            "A" => Some("4k".into()),
            "B" => Some("[x]".into()),
            _ => None,
        }
    }
}

/// fio job files: [`crate::plan::fio::parse`], strict and lenient. Invariants: a plan it
/// returns has entries whose specs the job workload accepts; a refusal is never empty and
/// lenient refuses only what is fatal.
pub fn fio_job(data: &[u8]) {
    use crate::plan::fio;
    let text = String::from_utf8_lossy(data);
    let (main, include) = text.split_once('\0').unwrap_or((&text, ""));
    let path = std::path::Path::new("/fuzz/job.fio");
    for lenient in [false, true] {
        match fio::parse(path, main, &mut FioInput { include }, lenient) {
            Ok(plan) => {
                assert!(!plan.entries.is_empty(), "a plan without entries");
                for e in &plan.entries {
                    assert!(WorkloadSpec::parse(&e.spec).is_ok(), "{} refused", e.spec);
                }
                assert!(lenient || plan.ignored.is_empty());
                let _ = plan.run_notes();
            }
            Err(issues) => {
                assert!(!issues.is_empty(), "refused without a reason");
                assert!(!lenient || issues.iter().any(|i| i.fatal));
                let _ = format!("{:#}", fio::refusal(path, &issues));
            }
        }
    }
}

/// Plan TOML: [`crate::plan::file::parse`], then what `fsarena plan check` does with it
/// (build and validate the plan, describe it, its canonical form and hash, the estimate).
pub fn plan_toml(data: &[u8]) {
    crate::secret::forget_all();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = crate::plan::file::parse("fuzz.toml", text) else {
        return;
    };
    if file.workloads.iter().any(|w| w.is_fio) {
        // Building reads the job file a path names: the `fio_job` surface reads job files.
        return;
    }
    for w in file.workloads.iter().filter(|w| !w.is_suite) {
        let Ok(info) = crate::workload::find(&w.kind.v) else {
            continue;
        };
        let reads = w
            .params
            .iter()
            .any(|(k, _)| (info.params.iter()).any(|p| p.unit == "path" && p.name == k.v));
        if reads {
            return;
        }
    }
    let Ok(built) = crate::plan::build::build(&file, &Default::default()) else {
        return;
    };
    let plan = built.plan;
    let _ = plan.describe(80);
    assert_eq!(plan.hash().len(), 16);
    for w in &plan.workloads {
        let _ = plan.label(w);
    }
    let _ = crate::plan::canon::estimate_line(&plan, &[]);
    assert!(!plan.targets.is_empty() && !plan.workloads.is_empty());
    assert!((1..=crate::plan::MAX_REPS).contains(&plan.policy.reps));
    // A plan is a program (issue 43): what it runs of its own is only what its command
    // workloads say, and everything else is one of fsarena's own programs.
    let programs = crate::plan::programs::of(&plan);
    let runs_commands = plan.workloads.iter().any(|w| {
        (crate::plan::programs::COMMAND_PARAMS.iter()).any(|(name, _)| *name == w.info.name)
    });
    if runs_commands {
        // `run` is required: every command workload has at least that line.
        assert!(!programs.commands.is_empty());
    } else {
        assert!(programs.commands.is_empty(), "{:?}", programs.commands);
    }
    for name in &programs.programs {
        assert!(
            crate::plan::programs::why(name).is_some(),
            "{name} is not one of fsarena's own programs"
        );
    }
    let _ = crate::plan::programs::describe(&programs, 80);
}

/// `fsarena run`'s command line with `--dir` (a directory target, nothing to make) and
/// `--flag=VALUE` pairs, through clap and [`crate::plan::Plan::from_args`].
fn run_args(pairs: &[(&str, &str)], workload: &str) {
    let dir = std::env::temp_dir();
    let mut argv = vec![
        "fsarena".to_string(),
        "run".to_string(),
        format!("--dir={}", dir.display()),
    ];
    argv.extend(
        pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("--{k}={v}")),
    );
    argv.push("--".to_string());
    argv.push(workload.to_string());
    let Ok(cli) = Cli::try_parse_from(&argv) else {
        return;
    };
    let Command::Run(a) = cli.command else {
        panic!("`fsarena run …` parsed as another command");
    };
    if let Ok(plan) = crate::plan::Plan::from_args(&a) {
        assert!((1..=crate::plan::MAX_REPS).contains(&plan.policy.reps));
    }
}

/// Sizes, durations and the other numbers of the command line: lines are a size, a
/// number of seconds, a size mix, then `--size --reps --seed --cache --sync --data`.
pub fn sizes(data: &[u8]) {
    let f = fields(data, 9);
    if let Ok(b) = crate::size::parse_size(&f[0]) {
        let shown = crate::size::format_size(b);
        if !shown.contains('.') {
            assert_eq!(crate::size::parse_size(&shown), Ok(b), "{shown}");
        }
    }
    // Every parameter in seconds of every workload, parsed and built.
    for info in crate::workload::registry() {
        for p in info.params.iter().filter(|p| p.unit == "s") {
            if let Ok(params) =
                Params::parse(info.name, info.params, &format!("{}={}", p.name, f[1]))
            {
                let _ = (info.build)(&params);
            }
        }
    }
    if let Ok(mix) = crate::workload::params::parse_size_mix(&f[2]) {
        assert!(mix.iter().all(|w| w.lo > 0 && w.lo <= w.hi && w.weight > 0));
    }
    let _ = crate::plan::refuse_tmpfs_size(&f[2]);
    let flags = ["size", "reps", "seed", "cache", "sync", "data"];
    let pairs: Vec<(&str, &str)> = flags
        .iter()
        .copied()
        .zip(f[3..].iter().map(String::as_str))
        .collect();
    run_args(&pairs, "command:run=true");
}

/// Mount helpers take an argument starting with `-` as an option: besides the options
/// after `-o`/`-t`, no argument of a mount command may start with one.
fn assert_no_stray_option(argv: &[String]) {
    let mut after_flag = false;
    for a in &argv[1..] {
        if after_flag {
            after_flag = false;
            continue;
        }
        if a == "-o" || a == "-t" {
            after_flag = true;
            continue;
        }
        assert!(!a.starts_with('-'), "{a} of {argv:?} would be an option");
    }
}

/// mount.cifs's options one by one: split at single commas, `,,` is a comma inside one.
fn cifs_options(opts: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = opts.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ',' if chars.peek() == Some(&',') => {
                chars.next();
                out.last_mut().expect("one").push(',');
            }
            ',' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out
}

/// The invariants of an accepted `--net` source.
fn check_net(spec: &NetSpec) {
    assert!(!spec.source.is_empty() && !spec.source.starts_with('-'));
    let mountpoint = "/var/tmp/fsarena/mnt/x";
    let (argv, env) = spec.mount_command(mountpoint);
    assert_no_stray_option(&argv);
    assert!(
        argv.windows(2)
            .any(|w| w[0] == spec.source && w[1] == mountpoint),
        "{argv:?}"
    );
    if spec.kind == NetKind::Cifs {
        // A password reaches mount.cifs through PASSWD, never argv.
        let opts = argv.iter().skip_while(|a| *a != "-o").nth(1);
        for o in cifs_options(opts.map_or("", String::as_str)) {
            if let Some((key, _)) = o.split_once('=') {
                let key = key.trim();
                assert!(!matches!(key, "password" | "pass" | "passwd"), "{argv:?}");
            }
        }
    } else {
        assert!(env.is_empty());
    }
    let slug = spec.slug();
    assert!(slug.len() <= 64 && !slug.contains('/'), "{slug}");
    let _ = spec.check_credentials();
}

/// The invariant of mkfs options that passed [`refuse_paths`]: the device fsarena made is
/// the only argument naming a file.
fn check_mkfs(words: &[String]) {
    let device = "/dev/loop999";
    for fs in FsType::ALL {
        let argv = fs.mkfs_argv(device, words);
        let (last, rest) = argv.split_last().expect("argv");
        assert_eq!(last, device);
        for a in rest {
            assert!(
                !(a.starts_with('/') || a.starts_with("./") || a.starts_with("../")),
                "{a} of {argv:?} names a file"
            );
        }
    }
}

/// `--net` sources, `--mkfs-opt` and `--mount-opt`: lines are a `--net` value, mkfs
/// options, mount options, then `--mkfs-opt`, `--mount-opt`, `--net` and `--fs` for the
/// whole command line check.
pub fn net_opts(data: &[u8]) {
    crate::secret::forget_all();
    let f = fields(data, 7);
    if let Ok(spec) = NetSpec::parse(&f[0]) {
        check_net(&spec);
        // Without --allow-ssh-commands, sshfs gets no option that runs a program.
        if spec.kind == NetKind::Sshfs {
            // argv is `sshfs SOURCE MOUNTPOINT -o OPTIONS`: the options fsarena passes
            // are the word after its own `-o`.
            let (argv, _) = spec.mount_command("/var/tmp/fsarena/mnt/x");
            for w in argv.windows(2).filter(|w| w[0] == "-o") {
                let found = crate::provision::net::ssh_command_option(&w[1]);
                assert!(found.is_none(), "{found:?} in {argv:?}");
            }
        }
    }
    if let Ok(words) = split_opts(&f[1]) {
        if refuse_paths(&words).is_ok() {
            check_mkfs(&words);
        }
    }
    let _ = refuse_paths(&[&f[2]]);
    let _ = crate::plan::refuse_tmpfs_size(&f[2]);
    let pairs = [
        ("mkfs-opt", f[3].as_str()),
        ("mount-opt", f[4].as_str()),
        ("net", f[5].as_str()),
        ("fs", f[6].as_str()),
    ];
    run_args(&pairs, "command:run=true");
}

/// Tar archives as untar reads a user's archive: every header (ustar, GNU long names and
/// base-256 numbers, pax records) and every member's name under the confinement policy
/// ([`crate::workload::untar::validate`]); the pure reader, nothing is extracted.
pub fn tar_archive(data: &[u8]) {
    if let Ok(c) = crate::workload::untar::validate(data) {
        // File data is in the archive: what it holds cannot exceed its length.
        assert!(c.bytes <= data.len() as u64, "{c:?}");
    }
}

/// Whether the file at `path` is fsarena's database by [`crate::store`]'s own rule: an
/// SQLite file with a `runs` table and a schema version of at least 1. Read without locks
/// or companions (`immutable=1`), so the look changes nothing.
fn looks_like_fsarena(path: &std::path::Path) -> bool {
    use rusqlite::{Connection, OpenFlags};
    let head = std::fs::read(path).unwrap_or_default();
    if head.len() < 100 || &head[..16] != b"SQLite format 3\0" {
        return false;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let uri = format!("file:{}?immutable=1", path.display());
    let look = || -> rusqlite::Result<bool> {
        let conn = Connection::open_with_flags(&uri, flags)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let runs: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
            [],
            |r| r.get(0),
        )?;
        Ok(version >= 1 && runs == 1)
    };
    look().unwrap_or(false)
}

/// Result databases as the reading commands take them: the file at `path` (a hostile one:
/// garbage, truncated, another application's, fsarena's with absurd rows) is opened as
/// `history`, `show`, `export`, `report` and `compare` open it, and every stored run is
/// loaded and drawn by each exporter in memory (terminal, JSON, CSV, bonnie CSV, HTML, the
/// SVG charts), then compared; `plan check`'s estimate reads it read-only. A file that is
/// not fsarena's database must be refused and left byte for byte as it was.
///
/// Opening may migrate an older fsarena schema, so `path` must be a copy in a scratch
/// directory; nothing else is written.
pub fn database(path: &std::path::Path) {
    use crate::report;
    use crate::store::Store;
    let before = std::fs::read(path).ok();
    if !looks_like_fsarena(path) {
        assert!(
            Store::open_existing(path).is_err(),
            "a file that is not fsarena's database was opened"
        );
        assert!(Store::open_read_only(path).is_err());
        assert!(
            std::fs::read(path).ok() == before,
            "a file that is not fsarena's database was changed"
        );
        return;
    }
    if let Ok(store) = Store::open_read_only(path) {
        let _ = store.trial_times("fuzz");
        let _ = store.phase_times("fuzz");
    }
    let Ok(store) = Store::open_existing(path) else {
        return;
    };
    let _ = store.schema_version();
    let Ok(runs) = store.history() else {
        return;
    };
    let _ = crate::report::history::render(&runs);
    let ids: Vec<String> = runs.iter().take(3).map(|r| r.id.clone()).collect();
    for id in &ids {
        let _ = store.resolve(id);
        let Ok(run) = store.load(id) else {
            continue;
        };
        let _ = report::terminal::render(&run);
        let _ = report::terminal::render_width(&run, 40);
        let _ = report::json::export(&run);
        let _ = report::csv::export(&run);
        let _ = report::bonnie_csv::export(&run);
        let _ = report::html::render(&run);
        for w in report::charts::build(&run) {
            for p in w.phases {
                for f in p.figures {
                    let _ = report::svg::standalone(&f.svg);
                }
            }
        }
    }
    if let [a, b, ..] = ids.as_slice() {
        let _ =
            crate::compare::nway::command(&store, &[a.clone(), b.clone()], Some(5.0), 0.03, &[]);
    }
    if let Some(a) = ids.first() {
        let _ = crate::compare::nway::command(&store, std::slice::from_ref(a), None, 0.03, &[]);
    }
}

/// `fsarena run`'s whole command line after `fsarena run --dir=TMP`: the flags in `args`
/// through clap and [`crate::plan::Plan::from_args`], as [`sizes`] and [`net_opts`] do for
/// their fields. `args` may not name a plan file, a device, an image directory or a
/// kernel (those would read or make files); such argv is skipped.
pub fn run_flags(args: &[String]) {
    crate::secret::forget_all();
    let unsafe_flag = |a: &String| {
        [
            "--plan",
            "--device",
            "--dir",
            "--destroy-data-on",
            "--image-dir",
            "--kernel",
            "--in-guest",
            "--resume",
            "--journal-dir",
            "--db",
            "--mpi",
        ]
        .iter()
        .any(|f| a.starts_with(f))
            // Every output `run` offers writes a file.
            || crate::report::exporters()
                .iter()
                .any(|e| e.run.is_some() && a.starts_with(&format!("--{}", e.flag)))
    };
    if args.iter().any(unsafe_flag) {
        return;
    }
    let dir = std::env::temp_dir();
    let mut argv = vec![
        "fsarena".to_string(),
        "run".to_string(),
        format!("--dir={}", dir.display()),
    ];
    argv.extend(args.iter().cloned());
    let Ok(cli) = Cli::try_parse_from(&argv) else {
        return;
    };
    let Command::Run(a) = cli.command else {
        return;
    };
    if let Ok(plan) = crate::plan::Plan::from_args(&a) {
        assert!((1..=crate::plan::MAX_REPS).contains(&plan.policy.reps));
        let _ = plan.describe(80);
        let _ = plan.hash();
    }
}
