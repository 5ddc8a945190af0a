//! `fsarena doctor`: whether this machine can run the default benchmark, and what would make
//! its figures noisy — one line per check with OK, INFO, WARN or FAIL and what to do.
//!
//! The verdicts are pure functions of [`Facts`] (what [`facts::gather`] reads from /proc,
//! /sys, statvfs and `losetup -f`), so every rule is unit-tested with made-up machines.
//! FAIL means the default run (`fsarena run`: the quick suite on ext4, xfs, btrfs loop
//! images and tmpfs) cannot work; WARN means it works but something deserves a look; INFO
//! is a filesystem only `--fs` uses that this machine cannot make, counted apart from the
//! warnings. Only FAIL makes the exit code 1. The rules are documented in `docs/doctor-faults.md`.

pub mod facts;
mod optional;

pub use facts::{gather, Facts};

use crate::provision::fs::Support;
use optional::{engines, guest};
use std::fmt::Write;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Ok,
    /// Worth knowing, nothing to fix for the default run (a filesystem only `--fs` uses).
    Info,
    Warn,
    Fail,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Info => "INFO",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Short name of what was checked (`root`, `fs ext4`, `swap`).
    pub name: String,
    pub verdict: Verdict,
    /// What was found and, unless OK, what to do.
    pub text: String,
}

fn check(name: impl Into<String>, verdict: Verdict, text: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        verdict,
        text: text.into(),
    }
}

/// Bytes with a binary unit and one decimal: `1.0 GiB`, `512.0 MiB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    for (unit, size) in [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)] {
        if bytes >= size {
            return format!("{:.1} {unit}", b / size as f64);
        }
    }
    format!("{:.1} KiB", b / 1024.0)
}

/// Every check, in the order they print.
pub fn checks(f: &Facts) -> Vec<Check> {
    let mut v = vec![root(f), loop_devices(f)];
    v.extend(f.filesystems.iter().map(filesystem));
    v.push(tmpfs(f));
    v.push(drop_caches(f));
    v.push(space(f));
    v.push(memory(f));
    v.push(governor(f));
    v.push(load(f));
    v.push(other_runs(f));
    v.push(swap(f));
    v.push(dirty(f));
    if let Some(c) = thp(f) {
        v.push(c);
    }
    v.push(check("kernel", Verdict::Ok, format!("Linux {}", f.kernel)));
    v.push(guest(&f.guest));
    v.push(engines(&f.engines));
    v
}

fn root(f: &Facts) -> Check {
    if f.root {
        check("root", Verdict::Ok, "running as root")
    } else {
        check(
            "root",
            Verdict::Fail,
            "not root: loop images, tmpfs, mount and drop_caches need root; run `sudo fsarena \
             run`, or measure an existing directory with `fsarena run --dir PATH`",
        )
    }
}

fn loop_devices(f: &Facts) -> Check {
    match (&f.losetup, f.loop_control) {
        (Ok(dev), true) => check(
            "loop",
            Verdict::Ok,
            format!("/dev/loop-control present, next free device {dev}"),
        ),
        (Ok(dev), false) => check(
            "loop",
            Verdict::Fail,
            format!(
                "no /dev/loop-control (losetup -f said {dev}): load the loop driver with \
                 `modprobe loop`; in a container, start it with access to /dev/loop*"
            ),
        ),
        (Err(e), _) => check(
            "loop",
            Verdict::Fail,
            format!(
                "`losetup -f` failed: {e}; run as root, `modprobe loop` (Debian package \
                 util-linux has losetup), or free loop devices with `losetup -D`"
            ),
        ),
    }
}

fn filesystem(fs: &facts::FsFacts) -> Check {
    let name = format!("fs {}", fs.name);
    let fsck_note = match &fs.fsck {
        Support::Yes => String::new(),
        Support::No(why) => format!("; {why}: the provision workload's fsck needs it"),
    };
    match &fs.mkfs {
        Support::Yes if fsck_note.is_empty() => check(
            name,
            Verdict::Ok,
            format!("kernel support, mkfs and checker present ({})", fs.package),
        ),
        Support::Yes => check(
            name,
            Verdict::Warn,
            format!(
                "kernel support and mkfs present{fsck_note}; apt-get install {}",
                fs.package
            ),
        ),
        Support::No(why) => {
            // The reasons name each missing program's package already.
            let to_do = if why.contains("kernel") {
                format!(
                    "load its module (`modprobe {}`) or use a kernel that has it",
                    fs.name
                )
            } else {
                format!("`fsarena setup --fs {}` installs what is missing", fs.name)
            };
            let (verdict, role) = if fs.required {
                (Verdict::Fail, "the default run needs it")
            } else {
                (Verdict::Info, "only needed with --fs")
            };
            check(name, verdict, format!("{why}; {role}: {to_do}"))
        }
    }
}

fn tmpfs(f: &Facts) -> Check {
    match &f.tmpfs {
        Support::Yes => check("fs tmpfs", Verdict::Ok, "kernel support, mount present"),
        Support::No(why) => check(
            "fs tmpfs",
            Verdict::Fail,
            format!("{why}; the default run needs it (a kernel built with CONFIG_TMPFS)"),
        ),
    }
}

fn drop_caches(f: &Facts) -> Check {
    match &f.drop_caches {
        Ok(()) => check(
            "drop caches",
            Verdict::Ok,
            "/proc/sys/vm/drop_caches is writable (opened, nothing dropped): cold phases \
             start cold",
        ),
        Err(e) => check(
            "drop caches",
            Verdict::Warn,
            format!(
                "cannot write /proc/sys/vm/drop_caches ({e}): 'cold' reads would be \
                 served from the page cache and are flagged; run as root, outside a \
                 container that mounts /proc/sys read-only"
            ),
        ),
    }
}

fn space(f: &Facts) -> Check {
    let dir = f.image_dir.display();
    match &f.space {
        Err(e) => check(
            "space",
            Verdict::Fail,
            format!("cannot read the free space of {dir}: {e}; pass --image-dir DIR"),
        ),
        Ok(s) => {
            let space = crate::probe::sys::Space {
                avail_bytes: s.usable_bytes,
                capacity_bytes: s.capacity_bytes,
                read_only: s.read_only,
                ..Default::default()
            };
            // The rule `run` applies before it makes anything.
            let problem = crate::plan::room::space_problem(
                &f.image_dir,
                &s.measured_at,
                &space,
                f.need_bytes,
            );
            if let Some(why) = problem {
                return check("space", Verdict::Fail, why);
            }
            let at = if s.measured_at == f.image_dir {
                String::new()
            } else {
                format!(" (not made yet; measured on {})", s.measured_at.display())
            };
            if s.capacity_bytes == 0 {
                return check(
                    "space",
                    Verdict::Warn,
                    format!(
                        "{dir}{at} is on a filesystem that keeps no count of its space \
                         (ramfs): the default run's {} images cannot be checked to fit",
                        human(f.need_bytes)
                    ),
                );
            }
            check(
                "space",
                Verdict::Ok,
                format!(
                    "{} free in {dir}{at}; the default run needs {} (one {} image at a time)",
                    human(s.usable_bytes),
                    human(f.need_bytes),
                    human(f.need_bytes)
                ),
            )
        }
    }
}

fn memory(f: &Facts) -> Check {
    match f.mem_available_bytes {
        None => check("memory", Verdict::Warn, "cannot read MemAvailable"),
        Some(m) if m >= f.tmpfs_bytes => check(
            "memory",
            Verdict::Ok,
            format!(
                "{} available; the default run's tmpfs holds up to {}",
                human(m),
                human(f.tmpfs_bytes)
            ),
        ),
        Some(m) => check(
            "memory",
            Verdict::Warn,
            format!(
                "{} available but the default run's tmpfs holds up to {}: it would push \
                 other memory out (or fail); close programs or run with --fs ext4,xfs,btrfs",
                human(m),
                human(f.tmpfs_bytes)
            ),
        ),
    }
}

fn governor(f: &Facts) -> Check {
    if f.governors.is_empty() {
        return check(
            "cpu governor",
            Verdict::Ok,
            "no cpufreq here (a virtual machine, or a fixed clock): the host decides the \
             frequency; nothing to set",
        );
    }
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for g in &f.governors {
        match kinds.iter_mut().find(|(k, _)| k == g) {
            Some(k) => k.1 += 1,
            None => kinds.push((g, 1)),
        }
    }
    let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{n}× {k}")).collect();
    if kinds.iter().all(|(k, _)| *k == "performance") {
        check("cpu governor", Verdict::Ok, list.join(", "))
    } else {
        check(
            "cpu governor",
            Verdict::Warn,
            format!(
                "{}: the clock changes with load, so CPU-bound figures vary; for the run: \
                 `cpupower frequency-set -g performance` (or echo performance into \
                 /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)",
                list.join(", ")
            ),
        )
    }
}

/// Another process using at least this share of one CPU is noise worth naming.
pub const BUSY_PROCESS_PCT: f64 = 20.0;
/// A 1-minute load average above this fraction of the cores is a busy machine.
pub const BUSY_LOAD_PER_CORE: f64 = 0.5;

fn load(f: &Facts) -> Check {
    let busy: Vec<String> = f
        .top_cpu
        .iter()
        .filter(|u| u.cpu_pct >= BUSY_PROCESS_PCT)
        .take(3)
        .map(|u| format!("{} (pid {}) {:.0}%", u.comm, u.pid, u.cpu_pct))
        .collect();
    let Some(l) = f.loadavg_1 else {
        return check("load", Verdict::Warn, "cannot read /proc/loadavg");
    };
    let cores = f.cores.max(1);
    let figures = format!("load average {l:.2} on {cores} cores");
    let loaded = l > BUSY_LOAD_PER_CORE * cores as f64;
    if !loaded && busy.is_empty() {
        return check(
            "load",
            Verdict::Ok,
            format!("{figures}; no other busy process"),
        );
    }
    let who = if busy.is_empty() {
        String::new()
    } else {
        format!("; using CPU now: {}", busy.join(", "))
    };
    check(
        "load",
        Verdict::Warn,
        format!(
            "{figures}{who}: other work competes for CPU, disk and cache and makes the \
             figures noisy; stop it or run when the machine is idle"
        ),
    )
}

fn other_runs(f: &Facts) -> Check {
    if f.other_runs.is_empty() {
        return check(
            "other runs",
            Verdict::Ok,
            "no other fsarena run is live on this machine",
        );
    }
    let runs: Vec<String> = f.other_runs.iter().map(|r| r.describe()).collect();
    check(
        "other runs",
        Verdict::Warn,
        format!(
            "live on this machine: {}; runs side by side slow each other down (trials \
             measured meanwhile are marked b, busy); wait for it to end",
            runs.join(", ")
        ),
    )
}

fn swap(f: &Facts) -> Check {
    // /proc/swaps: a header, then `Filename Type Size Used Priority` (sizes in KiB).
    let devices: Vec<(u64, u64)> = f
        .swaps
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.get(2)?.parse().ok()?, w.get(3)?.parse().ok()?))
        })
        .collect();
    if devices.is_empty() {
        return check(
            "swap",
            Verdict::Ok,
            "no swap: memory pressure cannot page out",
        );
    }
    let size: u64 = devices.iter().map(|d| d.0).sum();
    let used: u64 = devices.iter().map(|d| d.1).sum();
    check(
        "swap",
        Verdict::Warn,
        format!(
            "{} swap device(s), {} used of {}: under memory pressure (tmpfs, writeback, \
             big files) results vary with what gets swapped; `swapoff -a` for the run",
            devices.len(),
            human(used * 1024),
            human(size * 1024)
        ),
    )
}

fn dirty(f: &Facts) -> Check {
    match &f.dirty {
        Err(e) => check(
            "vm.dirty",
            Verdict::Warn,
            format!("cannot read the vm.dirty_* settings: {e}"),
        ),
        Ok(d) => {
            let s = &d.settings;
            let rule = if s.bytes > 0 {
                format!(
                    "dirty_bytes {} / background_bytes {}",
                    human(s.bytes),
                    human(s.background_bytes)
                )
            } else {
                format!(
                    "dirty_ratio {}% / background_ratio {}%",
                    s.ratio_pct, s.background_ratio_pct
                )
            };
            check(
                "vm.dirty",
                Verdict::Ok,
                format!(
                    "{rule} → writers throttled above {} dirty (background writeback from {}) \
                     of {} dirtyable; expire {} s: writes up to that much finish in memory \
                     unless synced (fsarena syncs inside the timing by default)",
                    human(d.limits.limit_bytes),
                    human(d.limits.background_bytes),
                    human(d.limits.dirtyable_bytes),
                    s.expire_centisecs / 100
                ),
            )
        }
    }
}

fn thp(f: &Facts) -> Option<Check> {
    let text = f.thp.as_deref()?;
    // The mode in force is bracketed: `always [madvise] never`.
    let mode = text
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(['[', ']']))
        .unwrap_or(text);
    Some(check(
        "hugepages",
        Verdict::Ok,
        format!(
            "transparent hugepages: {mode} (recorded for comparisons; `always` can add \
             compaction stalls to memory-heavy phases)"
        ),
    ))
}

/// The report: one line per check, then a verdict line.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let _ = writeln!(out, "{:<4}  {:<13} {}", c.verdict.word(), c.name, c.text);
    }
    let width = crate::report::fit::width();
    let mut text = crate::report::fit::wrap_text(&out, width, 20);
    text.push('\n');
    text.push_str(&crate::report::fit::wrap_text(&summary(checks), width, 2));
    text.push('\n');
    text
}

/// The verdict lines: ready or not, then what each count holds, in words — the failed and
/// warned checks by name, and the INFO lines as what they are (filesystems only `--fs` uses
/// that this machine cannot make), which are neither noise nor a fault. One count a line,
/// so a number never wraps away from its word.
pub fn summary(checks: &[Check]) -> String {
    let of = |v: Verdict| -> Vec<&str> {
        checks
            .iter()
            .filter(|c| c.verdict == v)
            .map(|c| c.name.as_str())
            .collect()
    };
    let counted = |names: &[&str], one: &str, many: &str| {
        let word = if names.len() == 1 { one } else { many };
        format!("{} {word} ({})", names.len(), names.join(", "))
    };
    let (fails, warns, infos) = (of(Verdict::Fail), of(Verdict::Warn), of(Verdict::Info));
    let mut lines = vec![if fails.is_empty() {
        "ready: `fsarena run` can run here".to_string()
    } else {
        let them = if fails.len() == 1 { "it" } else { "them" };
        format!(
            "not ready: {}; `fsarena run` needs {them} fixed",
            counted(&fails, "check failed", "checks failed")
        )
    }];
    lines.push(if warns.is_empty() {
        "no warnings".to_string()
    } else {
        counted(&warns, "warning", "warnings")
    });
    // Only optional filesystems are INFO today; anything else would be named.
    let (filesystems, others): (Vec<&str>, Vec<&str>) =
        infos.iter().partition(|n| n.starts_with("fs "));
    match filesystems.len() {
        0 => {}
        1 => lines.push("1 INFO: a filesystem only --fs uses cannot be made here".into()),
        n => lines.push(format!(
            "{n} INFO: filesystems only --fs uses cannot be made here"
        )),
    }
    if !others.is_empty() {
        lines.push(counted(&others, "INFO note", "INFO notes"));
    }
    lines.join("\n")
}

/// The exit code: 1 when any check failed, else 0 (warnings never fail).
pub fn exit_code(checks: &[Check]) -> i32 {
    if checks.iter().any(|c| c.verdict == Verdict::Fail) {
        crate::error::exit::FAILURE
    } else {
        crate::error::exit::OK
    }
}

#[cfg(test)]
mod tests;
