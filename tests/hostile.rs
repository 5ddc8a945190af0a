//! A generator of hostile inputs (issue 43): plans, workload strings, command lines and
//! result databases made to be absurd — huge and odd values, deep nesting, unicode,
//! control characters, NUL, huge, negative and NaN numbers, duplicate keys, strings
//! longer than any column — fed to the real parsers, checks and readers through the entry
//! points of `fsarena::fuzzing` (which mount, make and write nothing; databases are copies
//! in a temporary directory). A panic, or an input that takes too long, is a finding:
//! the test names the surface, the input's number and the input.
//!
//! Deterministic: input N of a surface comes from a seeded RNG of its own, so
//! `FSARENA_HOSTILE_ONLY=plans:1234` replays one input. By default the test runs
//! [`DEFAULT_INPUTS`] inputs (CI); `FSARENA_HOSTILE=200000 cargo test --release --test
//! hostile -- --nocapture` runs more and prints inputs per second per surface
//! (docs/security.md, "Hostile inputs").

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Inputs when `FSARENA_HOSTILE` does not say: all surfaces together.
const DEFAULT_INPUTS: usize = 5000;

/// An input slower than this is a finding (a hang in the making), even when it ends.
const SLOW: Duration = Duration::from_secs(20);

/// An input still running after this is a hang: the watchdog prints it and aborts.
const HANG: Duration = Duration::from_secs(180);

/// The surfaces and how many of [`DEFAULT_INPUTS`] each takes (`FSARENA_HOSTILE=N`
/// scales them alike). A database input opens, loads, exports and compares two stored
/// runs, about 0.3 s in a debug build (50 times a plan's), so it has few of them here:
/// the default run takes about a minute in a debug build.
const SURFACES: &[(&str, usize)] = &[
    ("plans", 2540),
    ("workloads", 600),
    ("flags", 1200),
    ("net_opts", 300),
    ("sizes", 300),
    ("databases", 60),
];
const _: () = {
    let mut sum = 0;
    let mut i = 0;
    while i < SURFACES.len() {
        sum += SURFACES[i].1;
        i += 1;
    }
    assert!(sum == DEFAULT_INPUTS);
};

// ---------------------------------------------------------------- hostile text

/// A piece of hostile text: long, unicode, control characters, odd numbers, separators.
fn piece(rng: &mut StdRng) -> String {
    const PLAIN: &[&str] = &[
        "",
        " ",
        "x",
        "ext4",
        "tmpfs",
        "xfs",
        "btrfs",
        "noatime",
        "-O x",
        "-E a=1,b=2",
        "size=1G",
        "1GiB",
        "64MiB",
        "0",
        "1",
        "-1",
        "-0",
        "3",
        "1e3",
        "1e308",
        "1e400",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "18446744073709551615",
        "18446744073709551616",
        "9223372036854775808",
        "-9223372036854775809",
        "0x10",
        "0b1",
        "1_000",
        "1.5.5",
        "99999999999TiB",
        "-5MB",
        "1.0",
        "0.0000001",
        "2s",
        "30d",
        "100000000d",
        "auto",
        "cold",
        "warm",
        "keep",
        "end",
        "none",
        "each",
        "random",
        "zeros",
        "text",
        "compress:50",
        "compress:-1",
        "compress:1e9",
        ",",
        ",,",
        "=",
        "==",
        ":",
        "::",
        ";",
        "'",
        "\"",
        "\\",
        "\\\\",
        "%s%n",
        "${HOME}",
        "$(reboot)",
        "`id`",
        "/etc/passwd",
        "../..",
        "./x",
        "/",
        "//",
        "nfs=h:/p",
        "smb=//h/s",
        "sshfs=u@h:/p",
        "sshfs=u@h:/p,ProxyCommand=sh -c 'id'",
        "loop",
        "dir",
        "files=1",
        "size=2",
        "files=0",
        "depth=999999",
        "threads=1000000",
        "é",
        "🦀",
        "\u{202e}abc",
        "\u{200b}",
        "\u{feff}",
        "ＡＢ",
        "\u{0301}\u{0301}\u{0301}",
        "\t",
        "\r\n",
        "\n",
        "\x1b[31m",
        "\u{7f}",
        "\0",
        "\u{fffd}",
        "\u{10ffff}",
        "[",
        "]",
        "{",
        "}",
        "#",
        "[[target]]",
    ];
    match rng.gen_range(0..100) {
        0..=69 => PLAIN.choose(rng).expect("non-empty").to_string(),
        70..=79 => rng.gen_range(0..u64::MAX).to_string(),
        80..=84 => format!(
            "{}",
            rng.gen::<f64>() * 10f64.powi(rng.gen_range(-300..300))
        ),
        85..=89 => (0..rng.gen_range(1..40))
            .map(|_| char::from_u32(rng.gen_range(0..0x11_0000)).unwrap_or('\u{fffd}'))
            .collect(),
        90..=95 => {
            let unit = PLAIN.choose(rng).expect("non-empty");
            unit.repeat(rng.gen_range(100..2000))
        }
        _ => {
            // Longer than any limit: the 100 KB option of issue 43 and its kin.
            let unit = ["-O x ", "x", "é", "a,", "🦀", "=,"]
                .choose(rng)
                .expect("unit");
            unit.repeat(rng.gen_range(1000..30_000))
        }
    }
}

/// Hostile text of one to four pieces.
fn text(rng: &mut StdRng) -> String {
    let n = rng.gen_range(1..=4);
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(&piece(rng));
    }
    s
}

/// `s` as a TOML basic string (any character, NUL and controls as `\uXXXX`).
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A hostile TOML value: mostly strings, else numbers, NaN, arrays, deep nesting, junk.
fn toml_value(rng: &mut StdRng) -> String {
    match rng.gen_range(0..100) {
        0..=59 => toml_string(&text(rng)),
        60..=64 => ["nan", "-nan", "inf", "-inf", "1e400", "-0.0", "1.5"]
            .choose(rng)
            .expect("float")
            .to_string(),
        65..=72 => [
            "-1",
            "0",
            "1",
            "3",
            "9223372036854775807",
            "-9223372036854775808",
            "99999999999999999999",
            "0xFFFF_FFFF",
        ]
        .choose(rng)
        .expect("int")
        .to_string(),
        73..=74 => "true".into(),
        75..=80 => {
            let n = rng.gen_range(0..6);
            let items: Vec<String> = (0..n).map(|_| toml_string(&text(rng))).collect();
            format!("[{}]", items.join(", "))
        }
        81..=83 => {
            let n = rng.gen_range(0..200);
            let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            format!("[{}]", items.join(","))
        }
        84..=87 => {
            let depth = rng.gen_range(1..3000);
            format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
        }
        88..=91 => {
            let depth = rng.gen_range(1..3000);
            format!("{}1{}", "{a=".repeat(depth), "}".repeat(depth))
        }
        92..=93 => "1979-05-27T07:32:00Z".into(),
        94..=95 => format!("'''{}'''", text(rng).replace('\'', "")),
        _ => text(rng).replace(['\n', '\r'], ""),
    }
}

// ---------------------------------------------------------------- surfaces

/// A hostile plan: a plausible skeleton with hostile values, duplicate and unknown keys,
/// broken lines, or one of the known hard cases.
fn plan(rng: &mut StdRng, dir: &Path) -> String {
    if rng.gen_range(0..40) == 0 {
        // Issue 43's case, verbatim.
        return format!(
            "[[target]]\nfs = \"ext4\"\nmkfs = \"{}\"\n\n[[workload]]\nkind = \"smallfiles\"\n",
            "-O x ".repeat(20_000)
        );
    }
    let target_keys = ["name", "fs", "mkfs", "mount", "size", "dir"];
    let matrix_keys = ["fs", "mkfs", "mount", "size"];
    let default_keys = ["size", "reps", "cache", "sync", "data", "seed"];
    let workloads: Vec<&str> = fsarena::workload::registry()
        .iter()
        .map(|w| w.name)
        .collect();
    let good = |rng: &mut StdRng, key: &str| -> String {
        let v = match key {
            "fs" => ["ext4", "xfs", "btrfs", "tmpfs", "f2fs"]
                .choose(rng)
                .expect("fs"),
            "size" => ["64MiB", "1GiB", "512M"].choose(rng).expect("size"),
            "dir" => return toml_string(&dir.display().to_string()),
            "reps" | "seed" => return rng.gen_range(1..5).to_string(),
            "cache" => "cold",
            "sync" => "end",
            "data" => "random",
            _ => "t",
        };
        toml_string(v)
    };
    let value = |rng: &mut StdRng, key: &str| -> String {
        if rng.gen_bool(0.5) {
            good(rng, key)
        } else {
            toml_value(rng)
        }
    };
    let mut s = String::new();
    if rng.gen_bool(0.3) {
        s += &format!("description = {}\n", toml_value(rng));
    }
    if rng.gen_bool(0.4) {
        s += "[defaults]\n";
        let picked: Vec<_> = default_keys.iter().filter(|_| rng.gen_bool(0.4)).collect();
        for k in picked {
            s += &format!("{k} = {}\n", value(rng, k));
        }
    }
    for _ in 0..rng.gen_range(0..4) {
        s += "\n[[target]]\n";
        let picked: Vec<_> = target_keys.iter().filter(|_| rng.gen_bool(0.5)).collect();
        for k in picked {
            s += &format!("{k} = {}\n", value(rng, k));
        }
    }
    if rng.gen_bool(0.3) {
        s += "\n[[matrix]]\n";
        let picked: Vec<_> = matrix_keys.iter().filter(|_| rng.gen_bool(0.6)).collect();
        for k in picked {
            let n = rng.gen_range(1..8);
            let items: Vec<String> = (0..n).map(|_| value(rng, k)).collect();
            s += &format!("{k} = [{}]\n", items.join(", "));
        }
    }
    for _ in 0..rng.gen_range(0..4) {
        s += "\n[[workload]]\n";
        let kind = if rng.gen_bool(0.8) {
            toml_string(workloads.choose(rng).expect("workload"))
        } else {
            toml_value(rng)
        };
        s += &format!("kind = {kind}\n");
        if let Some(info) = fsarena::workload::registry()
            .iter()
            .find(|w| kind == toml_string(w.name))
        {
            let picked: Vec<_> = info.params.iter().filter(|_| rng.gen_bool(0.3)).collect();
            for p in picked {
                if p.unit == "path" {
                    continue;
                }
                s += &format!("{} = {}\n", p.name, toml_value(rng));
            }
        }
    }
    // Odd additions: a duplicate key, an unknown one, a stray line, a huge key.
    match rng.gen_range(0..10) {
        0 => s += "fs = \"ext4\"\nfs = \"xfs\"\n",
        1 => s += &format!("{} = 1\n", toml_string(&text(rng))),
        2 => s += &format!("{}\n", text(rng)),
        3 => s += &format!("\"{}\" = 1\n", "k".repeat(rng.gen_range(300..70_000))),
        4 => s += "[[target]]\n[target]\n",
        _ => {}
    }
    if !s.contains("[[workload]]") && rng.gen_bool(0.7) {
        s += "\n[[workload]]\nkind = \"smallfiles\"\n";
    }
    s
}

/// A hostile workload spec: a known workload's name and parameters with hostile values,
/// or junk.
fn workload(rng: &mut StdRng) -> String {
    let reg = fsarena::workload::registry();
    let info = reg.choose(rng).expect("workload");
    let name = if rng.gen_bool(0.9) {
        info.name.to_string()
    } else {
        text(rng)
    };
    let mut params = Vec::new();
    let picked: Vec<_> = info.params.iter().filter(|_| rng.gen_bool(0.3)).collect();
    for p in picked {
        if p.unit == "path" {
            continue;
        }
        let v = if rng.gen_bool(0.3) {
            p.default.to_string()
        } else {
            text(rng).replace('\n', "")
        };
        params.push(format!("{}={v}", p.name));
    }
    if rng.gen_bool(0.1) {
        params.push(format!("{}={}", text(rng), text(rng)));
    }
    let mut spec = format!("{name}:{}", params.join(","));
    if rng.gen_bool(0.1) {
        spec = text(rng);
    }
    spec.replace('\n', " ")
}

/// A hostile `fsarena run` command line (after `run --dir=TMP`).
fn flags(rng: &mut StdRng) -> Vec<String> {
    const FLAGS: &[&str] = &[
        "--fs",
        "--net",
        "--size",
        "--suite",
        "--mkfs-opt",
        "--mount-opt",
        "--reps",
        "--precision",
        "--max-reps",
        "--budget",
        "--phase-time",
        "--cache",
        "--sync",
        "--data",
        "--seed",
        "--stonewall",
        "--quiet",
        "--force",
        "--mpi-timeout",
        "--guest-cpus",
        "--guest-memory",
        "--guest-timeout",
        "--no-such-flag",
    ];
    let mut argv = Vec::new();
    for _ in 0..rng.gen_range(0..6) {
        let flag = FLAGS.choose(rng).expect("flag");
        let v = match *flag {
            "--fs" if rng.gen_bool(0.5) => "ext4,tmpfs".to_string(),
            "--mkfs-opt" | "--mount-opt" if rng.gen_bool(0.5) => {
                format!("ext4={}", text(rng))
            }
            _ => text(rng),
        };
        if rng.gen_bool(0.7) {
            argv.push(format!("{flag}={v}"));
        } else {
            argv.push(flag.to_string());
            argv.push(v);
        }
    }
    if rng.gen_bool(0.8) {
        argv.push("--".into());
        for _ in 0..rng.gen_range(1..3) {
            argv.push(workload(rng));
        }
    }
    argv
}

/// Lines of hostile fields for the `net_opts` and `sizes` entries.
fn fields(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let lines: Vec<String> = (0..n).map(|_| text(rng).replace('\n', " ")).collect();
    lines.join("\n").into_bytes()
}

// ---------------------------------------------------------------- databases

/// fsarena's database with two stored runs (the fixture run, trimmed, and a copy), made
/// once; every hostile database starts from its bytes.
fn base_database(dir: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .expect("fixture");
    let mut run: fsarena::result::RunResult = serde_json::from_str(&text).expect("fixture run");
    // Two repetitions of each trial (the first holds raw samples, 40 times the bytes):
    // enough for every report's statistics, small enough to copy and read many times.
    run.trials.retain(|t| t.rep >= 2);
    let path = dir.join("base.db");
    let mut store = fsarena::store::Store::open(&path).expect("base database");
    store.import(&run).expect("import");
    run.run_id = "20261124-010000-bbbb".into();
    store.import(&run).expect("import");
    drop(store);
    std::fs::read(&path).expect("base bytes")
}

/// A hostile SQL value for a cell.
fn cell(rng: &mut StdRng) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match rng.gen_range(0..12) {
        0 => Value::Null,
        1 => Value::Integer(*[i64::MIN, i64::MAX, -1, 0, 1 << 53].choose(rng).expect("i")),
        2 => Value::Integer(rng.gen()),
        3 => Value::Real(
            *[
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MAX,
                -0.0,
                1e-320,
                -1.0,
            ]
            .choose(rng)
            .expect("f"),
        ),
        4 => Value::Real(f64::NAN),
        5 => Value::Blob((0..rng.gen_range(0..64)).map(|_| rng.gen()).collect()),
        6 => Value::Text(
            [
                "{}",
                "[]",
                "null",
                "{\"a\":",
                "[1,2",
                "\"x\"",
                "{\"k\":1e999}",
                "-",
            ]
            .choose(rng)
            .expect("json")
            .to_string(),
        ),
        _ => Value::Text(text(rng)),
    }
}

/// One hostile database at `path`, from `base`'s bytes.
fn database(rng: &mut StdRng, base: &[u8], path: &Path) {
    match rng.gen_range(0..20) {
        0 => {
            let n = rng.gen_range(0..4096);
            let junk: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            std::fs::write(path, junk).expect("write");
        }
        1 => {
            let mut b = b"SQLite format 3\0".to_vec();
            b.extend((0..rng.gen_range(0..8192)).map(|_| rng.gen::<u8>()));
            std::fs::write(path, b).expect("write");
        }
        2 | 3 => {
            let cut = rng.gen_range(0..base.len());
            std::fs::write(path, &base[..cut]).expect("write");
        }
        4 | 5 => {
            let mut b = base.to_vec();
            for _ in 0..rng.gen_range(1..40) {
                let at = rng.gen_range(0..b.len());
                b[at] = rng.gen();
            }
            std::fs::write(path, b).expect("write");
        }
        6 => {
            // Another application's database, sometimes with a table named `runs`.
            let conn = rusqlite::Connection::open(path).expect("open");
            let sql = [
                "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x');",
                "CREATE TABLE runs(x); PRAGMA user_version = 0;",
                "CREATE TABLE runs(x); INSERT INTO runs VALUES (NULL); PRAGMA user_version = 3;",
                "CREATE TABLE runs(id TEXT); PRAGMA user_version = 99;",
                "PRAGMA user_version = 9;",
            ]
            .choose(rng)
            .expect("sql");
            let _ = conn.execute_batch(sql);
        }
        7 => std::fs::write(path, b"").expect("write"),
        _ => {
            std::fs::write(path, base).expect("write");
            mutate(rng, path);
        }
    }
}

/// Absurd rows in fsarena's own schema: cells set to hostile values, rows deleted or
/// added with NULLs, a table dropped, the schema version changed.
fn mutate(rng: &mut StdRng, path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("open");
    let _ = conn.execute_batch("PRAGMA foreign_keys=OFF;");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    for _ in 0..rng.gen_range(1..8) {
        let Some(table) = tables.choose(rng) else {
            break;
        };
        let cols: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
            .unwrap_or_default();
        let Some(col) = cols.choose(rng) else {
            continue;
        };
        let _ = match rng.gen_range(0..20) {
            0 => conn.execute(&format!("DELETE FROM \"{table}\" WHERE rowid % 2 = 0"), []),
            1 => conn.execute(&format!("INSERT INTO \"{table}\" DEFAULT VALUES"), []),
            2 => conn.execute(&format!("DROP TABLE \"{table}\""), []),
            3 => conn.execute(
                &format!("PRAGMA user_version = {}", rng.gen_range(-2..12)),
                [],
            ),
            4..=8 => conn.execute(
                &format!("UPDATE \"{table}\" SET \"{col}\" = ?1"),
                [cell(rng)],
            ),
            _ => conn.execute(
                &format!(
                    "UPDATE \"{table}\" SET \"{col}\" = ?1 WHERE rowid = \
                     (SELECT rowid FROM \"{table}\" ORDER BY random() LIMIT 1)"
                ),
                [cell(rng)],
            ),
        };
    }
}

// ---------------------------------------------------------------- the driver

/// What went wrong with one input.
struct Finding {
    surface: &'static str,
    index: usize,
    input: String,
    what: String,
}

/// The input being tried, for the watchdog: (surface, index, since, input).
type Current = Arc<Mutex<Option<(&'static str, usize, Instant, String)>>>;

/// `text` cut to what a report can show.
fn shown(text: &str) -> String {
    const KEEP: usize = 600;
    match text.char_indices().nth(KEEP) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}…({} bytes in all)", &text[..end], text.len()),
    }
}

/// The RNG of input `index` of `surface`.
fn rng_for(surface: &str, index: usize) -> StdRng {
    let mut seed: u64 = 0x4f53_4152_454e_4131;
    for b in surface.bytes() {
        seed = (seed ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    StdRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

#[test]
fn hostile_inputs_are_refused_without_a_panic_or_a_hang() {
    let total: usize = std::env::var("FSARENA_HOSTILE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_INPUTS);
    let only: Option<(String, usize)> = std::env::var("FSARENA_HOSTILE_ONLY").ok().and_then(|v| {
        let (s, i) = v.split_once(':')?;
        Some((s.to_string(), i.parse().ok()?))
    });
    let tmp = tempfile::tempdir().expect("temp dir");
    let base = base_database(tmp.path());

    // The panic message and where, kept by the hook for the report.
    let last_panic: Arc<Mutex<String>> = Arc::default();
    let keep = last_panic.clone();
    std::panic::set_hook(Box::new(move |info| {
        *keep.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
    }));
    let current: Current = Arc::default();
    let watched = current.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(5));
        let cur = watched.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some((surface, index, since, input)) = cur {
            if since.elapsed() > HANG {
                eprintln!(
                    "HANG: {surface} input {index} still running after {:?}: {input}",
                    HANG
                );
                std::process::abort();
            }
        }
    });

    let mut findings = Vec::new();
    let mut tried = 0;
    for &(surface, share) in SURFACES {
        let n = (total * share).div_ceil(DEFAULT_INPUTS);
        let started = Instant::now();
        let mut count = 0;
        for index in 0..n {
            if let Some((s, i)) = &only {
                if s != surface || *i != index {
                    continue;
                }
            }
            let mut rng = rng_for(surface, index);
            let db = tmp.path().join(format!("{index}.db"));
            // The input, shown in a report, and the call that tries it.
            let (input, call): (String, Box<dyn FnOnce()>) = match surface {
                "plans" => {
                    let p = plan(&mut rng, tmp.path());
                    (
                        shown(&p),
                        Box::new(move || fsarena::fuzzing::plan_toml(p.as_bytes())),
                    )
                }
                "workloads" => {
                    let lines: Vec<String> = (0..rng.gen_range(1..4))
                        .map(|_| workload(&mut rng))
                        .collect();
                    let t = lines.join("\n");
                    (
                        shown(&t),
                        Box::new(move || fsarena::fuzzing::workload_spec(t.as_bytes())),
                    )
                }
                "flags" => {
                    let argv = flags(&mut rng);
                    (
                        shown(&format!("{argv:?}")),
                        Box::new(move || fsarena::fuzzing::run_flags(&argv)),
                    )
                }
                "net_opts" => {
                    let f = fields(&mut rng, 7);
                    let s = String::from_utf8_lossy(&f).into_owned();
                    (shown(&s), Box::new(move || fsarena::fuzzing::net_opts(&f)))
                }
                "sizes" => {
                    let f = fields(&mut rng, 9);
                    let s = String::from_utf8_lossy(&f).into_owned();
                    (shown(&s), Box::new(move || fsarena::fuzzing::sizes(&f)))
                }
                "databases" => {
                    database(&mut rng, &base, &db);
                    let p: PathBuf = db.clone();
                    (
                        format!(
                            "database {index} (FSARENA_HOSTILE_ONLY=databases:{index} remakes it)"
                        ),
                        Box::new(move || fsarena::fuzzing::database(&p)),
                    )
                }
                other => unreachable!("surface {other}"),
            };
            let since = Instant::now();
            *current.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((surface, index, since, input.clone()));
            let result = catch_unwind(AssertUnwindSafe(call));
            *current.lock().unwrap_or_else(|e| e.into_inner()) = None;
            let took = since.elapsed();
            if result.is_err() {
                let what = last_panic.lock().unwrap_or_else(|e| e.into_inner()).clone();
                findings.push(Finding {
                    surface,
                    index,
                    input,
                    what,
                });
            } else if took > SLOW {
                findings.push(Finding {
                    surface,
                    index,
                    input,
                    what: format!("took {took:?}"),
                });
            }
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
            count += 1;
        }
        let s = started.elapsed().as_secs_f64();
        println!("hostile: {surface}: {count} inputs in {s:.1} s");
        tried += count;
    }
    let _ = std::panic::take_hook();
    println!("hostile: {tried} inputs, {} findings", findings.len());
    if !findings.is_empty() {
        let mut report = String::new();
        for f in &findings {
            report += &format!(
                "\n{} input {} (FSARENA_HOSTILE_ONLY={}:{}): {}\n  input: {}\n",
                f.surface, f.index, f.surface, f.index, f.what, f.input
            );
        }
        panic!("{} hostile inputs were findings:{report}", findings.len());
    }
    assert!(
        only.is_some() || tried >= total,
        "{tried} of {total} inputs tried"
    );
}
