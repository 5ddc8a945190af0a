//! The bad-input suite (issue 31): a repeatable generator of malformed and extreme inputs
//! for each input surface — workload strings, sizes, `--fs`, `--mkfs-opt`/`--mount-opt`,
//! plan TOML, output paths and run ids — each run through the binary under a timeout.
//! Every input must end in a clear exit (0, or 2 with a message), never a panic (exit 101
//! or "panicked"), a hang or a signal; the inputs the issue found wrongly accepted must now
//! be refused. The seed and the counts are fixed, so a failure reproduces; the tally line
//! says what was tried.
//!
//! Nothing here can touch a disk: every `run` ends in a usage error before anything is
//! provisioned (`--reps 0`, which is refused after the workloads are parsed, or the
//! `provision` workload on a `--dir` target, refused after all targets are checked), and
//! plans go through `plan check`. Children run in an empty directory of their own.

mod common;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The generator's seed, fixed in CI; `BAD_INPUT_SEED=N` explores others.
const SEED: u64 = 31;
/// Inputs generated per surface; `BAD_INPUT_PER_SURFACE=N` for a longer exploration.
const PER_SURFACE: usize = 120;

/// The longest message an input may cause: user input is echoed cut to ~200 characters.
const MAX_MESSAGE_BYTES: usize = 4096;

/// `name` from the environment, else `default`.
fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// Longest one input may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(20);

/// How one input ended.
#[derive(Debug, PartialEq)]
enum End {
    /// Exit 0 (a valid input, or `plan check` of a valid plan).
    Accepted,
    /// Exit 2 with a message.
    Refused,
    /// Another exit code, with stderr.
    Other(i32),
    Panic,
    Hang,
    Signal(i32),
}

struct Outcome {
    end: End,
    stderr: String,
}

/// The fresh directories one suite run uses: the children's working directory, a
/// directory target, an image directory and a database.
struct Sandbox {
    _tmp: tempfile::TempDir,
    cwd: PathBuf,
    dir: PathBuf,
    images: PathBuf,
    db: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let sub = |n: &str| {
            let p = tmp.path().join(n);
            std::fs::create_dir(&p).unwrap();
            p
        };
        let (cwd, dir, images) = (sub("cwd"), sub("dir"), sub("images"));
        let db = common::fixture_db(tmp.path());
        Self {
            _tmp: tmp,
            cwd,
            dir,
            images,
            db,
        }
    }

    /// Runs `fsarena ARGS` (with `--db` for the sandbox's database) under [`TIMEOUT`].
    fn fsarena(&self, args: &[&str]) -> Outcome {
        let err_path = self.cwd.join(".stderr");
        let mut child = Command::new(common::bin())
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .expect("start fsarena");
        let t0 = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break Some(st);
            }
            if t0.elapsed() > TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let stderr = String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned();
        use std::os::unix::process::ExitStatusExt;
        let end = match status {
            None => End::Hang,
            Some(st) if stderr.contains("panicked") || st.code() == Some(101) => End::Panic,
            Some(st) => match (st.code(), st.signal()) {
                (_, Some(sig)) => End::Signal(sig),
                (Some(0), _) => End::Accepted,
                (Some(2), _) if !stderr.trim().is_empty() => End::Refused,
                (Some(c), _) => End::Other(c),
                (None, None) => End::Other(-1),
            },
        };
        Outcome { end, stderr }
    }

    /// `run ARGS --dir DIR --image-dir IMAGES` with `extra` ending it before anything
    /// is provisioned.
    fn run(&self, args: &[&str], extra: &[&str]) -> Outcome {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        let (dir, images) = (self.dir.to_str().unwrap(), self.images.to_str().unwrap());
        all.extend_from_slice(&["--image-dir", images]);
        if !args.contains(&"--dir") {
            all.extend_from_slice(&["--dir", dir]);
        }
        all.extend_from_slice(extra);
        self.fsarena(&all)
    }

    /// `plan check FILE` of plan `text`.
    fn plan_check(&self, text: &str) -> Outcome {
        let path = self.cwd.join("p.toml");
        std::fs::write(&path, text).unwrap();
        self.fsarena(&["plan", "check", path.to_str().unwrap()])
    }
}

/// The tally of one surface or of the whole suite.
#[derive(Default)]
struct Tally {
    tried: usize,
    refused: usize,
    accepted: usize,
    other: usize,
    panics: usize,
    hangs: usize,
    signals: usize,
    failures: Vec<String>,
}

impl Tally {
    /// Counts `o`, the outcome of `input`; a panic, a hang or a signal is a failure.
    fn count(&mut self, surface: &str, input: &str, o: &Outcome) {
        self.tried += 1;
        if o.stderr.len() > MAX_MESSAGE_BYTES {
            self.failures.push(format!(
                "{surface}: a {}-byte message for {}: {}",
                o.stderr.len(),
                cut(input),
                cut(&o.stderr)
            ));
        }
        let bad = match o.end {
            End::Accepted => {
                self.accepted += 1;
                false
            }
            End::Refused => {
                self.refused += 1;
                false
            }
            End::Other(_) => {
                self.other += 1;
                false
            }
            End::Panic => {
                self.panics += 1;
                true
            }
            End::Hang => {
                self.hangs += 1;
                true
            }
            End::Signal(_) => {
                self.signals += 1;
                true
            }
        };
        if bad {
            self.failures.push(format!(
                "{surface}: {:?} on {}\n{}",
                o.end,
                cut(input),
                cut(&o.stderr)
            ));
        }
    }

    /// Requires `o` to be a refusal whose message contains `needle`.
    fn refused(&mut self, surface: &str, input: &str, o: &Outcome, needle: &str) {
        self.count(surface, input, o);
        if o.end != End::Refused || !o.stderr.contains(needle) {
            self.failures.push(format!(
                "{surface}: {} was not refused with '{needle}': {:?}\n{}",
                cut(input),
                o.end,
                cut(&o.stderr)
            ));
        }
    }

    fn line(&self) -> String {
        format!(
            "bad input: tried {}, clear errors {}, accepted {}, other exits {}, panics {}, \
             hangs {}, signals {}",
            self.tried,
            self.refused,
            self.accepted,
            self.other,
            self.panics,
            self.hangs,
            self.signals
        )
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// Values that break parsers: extremes, non-numbers, quoting, separators, long text.
fn junk(rng: &mut SmallRng) -> String {
    const POOL: &[&str] = &[
        "",
        "0",
        "-1",
        "1",
        "1.5",
        "5.0",
        "1e3",
        "1e20",
        "1e300",
        "NaN",
        "inf",
        "-inf",
        "0x10",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "16777215T",
        "16777215TiB",
        "1EiB",
        "0B",
        "1GiB",
        "4KiB-1KiB",
        "4KiB:18446744073709551615,8KiB:18446744073709551615",
        "1KiB:0",
        " ",
        "'",
        "\"",
        "'a,b'",
        "a,b",
        "=",
        ",,",
        "é",
        "\u{202e}x",
        "true",
        "yes",
    ];
    match rng.gen_range(0..10) {
        0 => "9".repeat(rng.gen_range(20..200)),
        1 => "x".repeat(rng.gen_range(1000..100_000)),
        2 => format!("{}", rng.gen::<u64>()),
        3 => format!("{:e}", rng.gen::<f64>() * 10f64.powi(rng.gen_range(0..310))),
        _ => POOL.choose(rng).unwrap().to_string(),
    }
}

/// A workload string: a known workload (or junk) with known keys (or junk) and junk
/// values. Path parameters get only junk, resolved in the children's empty directory.
fn workload_string(rng: &mut SmallRng) -> String {
    let registry = fsarena::workload::registry();
    let info = registry.choose(rng).unwrap();
    let mut items = Vec::new();
    for _ in 0..rng.gen_range(1..4) {
        let key = match (rng.gen_range(0..8), info.params.choose(rng)) {
            (0, _) | (_, None) => junk(rng),
            (_, Some(p)) => p.name.to_string(),
        };
        items.push(format!("{key}={}", junk(rng)));
    }
    let name = if rng.gen_range(0..20) == 0 {
        junk(rng)
    } else {
        info.name.to_string()
    };
    // One argument may be at most 128 KiB (MAX_ARG_STRLEN).
    fit_arg(format!("{name}:{}", items.join(",")))
}

/// `s` cut to 120,000 bytes, under the kernel's limit for one argument.
fn fit_arg(mut s: String) -> String {
    let mut end = s.len().min(120_000);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// A plan: a valid base with one or two lines replaced or added, or its text cut.
fn plan_text(rng: &mut SmallRng) -> String {
    const KEYS: &[&str] = &[
        "size",
        "reps",
        "seed",
        "cache",
        "fs",
        "mkfs",
        "mount",
        "name",
        "dir",
        "number",
        "transactions",
        "runtime",
        "run",
        "kind",
        "suite",
        "files",
    ];
    const VALUES: &[&str] = &[
        "5.0",
        "1e3",
        "[5]",
        "-1",
        "0",
        "4294967295",
        "9223372036854775807",
        "1e300",
        "nan",
        "inf",
        "\"\"",
        "\"x\"",
        "\"true\\u0000\"",
        "\"16777215T\"",
        "\"1MiB\"",
        "\"12XB\"",
        "\"size=1T\"",
        "\"/dev/loop0\"",
        "\"/\"",
        "{a = 1}",
        "[[1]]",
        "[]",
        "true",
        "\"ext4\"",
        "[\"ext4\", \"ext4\"]",
    ];
    let mut lines: Vec<String> = [
        "[defaults]",
        "size = \"256MiB\"",
        "reps = 2",
        "[[target]]",
        "fs = \"tmpfs\"",
        "[[matrix]]",
        "fs = [\"ext4\", \"xfs\"]",
        "mount = [\"\", \"noatime\"]",
        "[[workload]]",
        "kind = \"postmark\"",
        "number = 100",
        "[[workload]]",
        "kind = \"job\"",
        "runtime = 1.5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..rng.gen_range(1..3) {
        let key = match rng.gen_range(0..8) {
            0 => format!("\"{}\"", junk(rng).replace(['\\', '"'], "")),
            _ => KEYS.choose(rng).unwrap().to_string(),
        };
        let value = if rng.gen_range(0..6) == 0 {
            format!(
                "\"{}\"",
                junk(rng).replace('\\', "\\\\").replace('"', "\\\"")
            )
        } else {
            VALUES.choose(rng).unwrap().to_string()
        };
        let at = rng.gen_range(0..=lines.len());
        let line = format!("{key} = {value}");
        if at < lines.len() && rng.gen_bool(0.5) && !lines[at].starts_with('[') {
            lines[at] = line;
        } else {
            lines.insert(at, line);
        }
    }
    let text = lines.join("\n") + "\n";
    if rng.gen_range(0..10) == 0 {
        let cut = rng.gen_range(0..text.len());
        return text.chars().take(cut).collect();
    }
    text
}

/// The inputs issue 31 found wrongly accepted, each with what its refusal must say.
fn listed_acceptances(s: &Sandbox, t: &mut Tally) {
    let max = u64::MAX.to_string();
    let reps0 = ["--reps", "0"];
    for (w, needle) in [
        ("job:runtime=1e20".to_string(), "30 days"),
        ("job:ramp=1e20".to_string(), "30 days"),
        ("io500:stonewall=1e20".to_string(), "30 days"),
        ("io500:ior_easy_s=1e300".to_string(), "30 days"),
        (format!("bonnie:seeks={max}"), "10^12"),
        (format!("postmark:transactions={max}"), "10^12"),
        (format!("dbrandom:cycles={max}"), "10^12"),
        (format!("space:copies={max}"), "10^12"),
        ("space:copies=1000".to_string(), "give 1 to 100"),
        (format!("job:bs=4KiB:{max},8KiB:{max}"), "weight"),
        ("bonnie:size=18446744073709551615".to_string(), "at most"),
        ("bonnie:size=1GiB,size=2GiB".to_string(), "given twice"),
    ] {
        let o = s.run(&[&w], &reps0);
        t.refused("listed", &w, &o, needle);
    }
    let long = format!("bonnie:seeks={}", "9".repeat(100_000));
    let o = s.run(&[&long], &reps0);
    t.refused(
        "listed",
        "bonnie:seeks=9…(100 kB)",
        &o,
        "at most 4096 bytes",
    );
    if o.stderr.len() > 2000 {
        t.failures
            .push(format!("a 100 kB input echoed in {} bytes", o.stderr.len()));
    }
    let o = s.run(&["postmark"], &["--reps", "4294967295"]);
    t.refused("listed", "--reps 4294967295", &o, "give 1 to 1000");
    // Root-only checks come first for loop and tmpfs targets (as a user, "needs root").
    if fsarena::probe::sys::is_root() {
        let o = s.run(
            &[
                "--fs",
                "ext4",
                "--mkfs-opt",
                "xfs=-d agcount=4",
                "--size",
                "256MiB",
            ],
            &["provision"],
        );
        t.refused(
            "listed",
            "--fs ext4 --mkfs-opt xfs=…",
            &o,
            "xfs is not a target",
        );
        let o = s.run(
            &["--fs", "tmpfs", "--mount-opt", "tmpfs=size=1T"],
            &["provision"],
        );
        t.refused(
            "listed",
            "--mount-opt tmpfs=size=1T",
            &o,
            "override the size",
        );
        let o = s.run(
            &["--fs", "tmpfs", "--size", "256MiB"],
            &["bonnie:size=1GiB"],
        );
        t.refused(
            "listed",
            "bonnie:size=1GiB on 256MiB",
            &o,
            "larger than the whole",
        );
    }
    for dir in ["/", "/proc", "/sys", "/dev", s.images.to_str().unwrap()] {
        let o = s.run(&["--dir", dir], &["postmark"]);
        t.refused("listed", &format!("--dir {dir}"), &o, "--dir");
    }
    for cmd in [
        &["show", ""][..],
        &["export", "", "--json"],
        &["report", "", "--html", "x.html"],
        &["compare", "", "last"],
    ] {
        let o = s.fsarena(cmd);
        t.refused("listed", &format!("{cmd:?}"), &o, "empty run id");
    }
    let plan = s.cwd.join("resume.toml");
    std::fs::write(
        &plan,
        "[[target]]\ndir = \"../dir\"\n[[workload]]\nkind = \"postmark\"\nnumber = 10\n",
    )
    .unwrap();
    let images = s.images.to_str().unwrap();
    let plan = plan.to_str().unwrap();
    let o = s.fsarena(&["run", "--plan", plan, "--resume", "", "--image-dir", images]);
    t.refused("listed", "run --plan P --resume ''", &o, "empty run id");
    // Plan files that are not regular files, and plans that could not work.
    let fifo = s.cwd.join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for p in [Path::new("/dev/zero"), Path::new("/dev/urandom"), &fifo] {
        let path = p.to_str().unwrap();
        let o = s.fsarena(&["plan", "check", path]);
        t.refused(
            "listed",
            &format!("plan check {path}"),
            &o,
            "not a regular file",
        );
        let o = s.fsarena(&["run", "--plan", path]);
        t.refused(
            "listed",
            &format!("run --plan {path}"),
            &o,
            "not a regular file",
        );
    }
    let axis = |n: usize, f: &dyn Fn(usize) -> String| {
        (0..n)
            .map(|i| format!("\"{}\"", f(i)))
            .collect::<Vec<_>>()
            .join(",")
    };
    let matrix = format!(
        "[[matrix]]\nfs = [{}]\nmkfs = [{}]\nmount = [{}]\n[[workload]]\nkind = \"postmark\"\n",
        axis(300, &|_| "ext4".into()),
        axis(300, &|i| format!("-N {}", 1000 + i)),
        axis(300, &|i| format!("commit={}", i + 1)),
    );
    let o = s.plan_check(&matrix);
    t.refused("listed", "a 300×300×300 matrix", &o, "at most 1000");
    let tgt = "[[target]]\ndir = \"../dir\"\n[[workload]]\n";
    for (body, needle) in [
        ("kind = \"postmark\"\nnumber = 5.0\n", "not a whole number"),
        ("kind = \"postmark\"\nnumber = 1e3\n", "not a whole number"),
        ("kind = \"postmark\"\nnumber = [5]\n", "not a list"),
        ("kind = \"job\"\nruntime = 1e300\n", "30 days"),
        ("kind = \"command\"\nrun = \"true\\u0000\"\n", "NUL"),
    ] {
        let o = s.plan_check(&format!("{tgt}{body}"));
        t.refused("listed", body, &o, needle);
    }
    let o = s.plan_check(&format!(
        "[defaults]\nsize = \"12XB\"\n{tgt}kind = \"postmark\"\n"
    ));
    t.refused("listed", "[defaults] size = 12XB", &o, "12XB");
    let o = s.plan_check(&format!(
        "[defaults]\nreps = 4294967295\n{tgt}kind = \"postmark\"\n"
    ));
    t.refused("listed", "reps = 4294967295", &o, "from 1 to 1000");
}

#[test]
fn bad_inputs_end_clearly_and_the_listed_acceptances_are_refused() {
    let s = Sandbox::new();
    let seed = knob("BAD_INPUT_SEED", SEED);
    let per_surface = knob("BAD_INPUT_PER_SURFACE", PER_SURFACE);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut t = Tally::default();
    let t0 = Instant::now();
    let reps0 = ["--reps", "0"];
    let dir = s.dir.to_str().unwrap();
    for _ in 0..per_surface {
        let w = workload_string(&mut rng);
        t.count("workload", &w, &s.run(&[&w], &reps0));
    }
    for _ in 0..per_surface {
        let size = junk(&mut rng);
        t.count("size", &size, &s.run(&["--size", &size], &["provision"]));
        let w = format!("bonnie:size={size}");
        t.count("size", &w, &s.run(&[&w], &reps0));
    }
    const FS: &[&str] = &[
        "ext4",
        "xfs",
        "btrfs",
        "tmpfs",
        "ext2",
        "nope",
        "EXT4",
        "ext4,ext4",
    ];
    for _ in 0..per_surface / 2 {
        let fs = match rng.gen_range(0..3) {
            0 => junk(&mut rng),
            _ => FS.choose(&mut rng).unwrap().to_string(),
        };
        t.count("--fs", &fs, &s.run(&["--fs", &fs], &["provision"]));
    }
    for _ in 0..per_surface {
        let flag = ["--mkfs-opt", "--mount-opt"].choose(&mut rng).unwrap();
        let fs = FS.choose(&mut rng).unwrap();
        let opt = fit_arg(match rng.gen_range(0..4) {
            0 => junk(&mut rng),
            1 => format!("{fs}={}", junk(&mut rng)),
            2 => format!("{fs}=-{}", junk(&mut rng)),
            _ => format!("{fs}=size={}", junk(&mut rng)),
        });
        let o = s.run(
            &["--fs", "ext4,tmpfs", flag, &opt, "--size", "256MiB"],
            &["provision"],
        );
        t.count(flag, &opt, &o);
    }
    for _ in 0..per_surface * 2 {
        let text = plan_text(&mut rng);
        t.count("plan", &text, &s.plan_check(&text));
    }
    let db = s.db.to_str().unwrap();
    for _ in 0..per_surface / 2 {
        let flag = ["--json", "--html"].choose(&mut rng).unwrap();
        let path = match rng.gen_range(0..5) {
            0 => db.to_string(),
            1 => format!("{db}-wal"),
            2 => "/nonexistent/x".to_string(),
            3 => dir.to_string(),
            _ => junk(&mut rng),
        };
        let o = s.run(&[flag, &path], &["provision"]);
        t.count("output", &path, &o);
    }
    for _ in 0..per_surface / 2 {
        let id = match rng.gen_range(0..3) {
            0 => junk(&mut rng),
            1 => "last".to_string(),
            _ => String::new(),
        };
        let cmd = ["show", "compare", "export"].choose(&mut rng).unwrap();
        let args: Vec<&str> = match *cmd {
            "compare" => vec![cmd, &id, "last"],
            "export" => vec![cmd, &id, "--json", "-o", "out.json"],
            _ => vec![cmd, &id],
        };
        t.count("run id", &id, &s.fsarena(&args));
    }
    listed_acceptances(&s, &mut t);
    let line = format!(
        "{} in {:.1} s (seed {seed})",
        t.line(),
        t0.elapsed().as_secs_f64()
    );
    println!("{line}");
    assert!(
        t.failures.is_empty(),
        "{} failures:\n{}",
        t.failures.len(),
        t.failures.join("\n---\n")
    );
    assert_eq!((t.panics, t.hangs, t.signals), (0, 0, 0));
    assert!(
        std::fs::read_dir(&s.dir).unwrap().next().is_none(),
        "a run wrote into the --dir target"
    );
}
