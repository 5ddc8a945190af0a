//! How each fio option, or group of options that go together, becomes `job` parameters:
//! the pieces [`super::map::job`] puts together, each refusing what the job engine would
//! run differently from fio.

use super::ini::Opt;
use super::map::Mapped;
use super::units;
use super::Issue;

pub(super) struct Ctx<'a> {
    pub issues: &'a mut Vec<Issue>,
    pub notes: &'a mut Vec<String>,
}

impl Ctx<'_> {
    /// Refused in every mode: there is nothing sound to run instead.
    pub fn bad(&mut self, o: &Opt, why: impl Into<String>) {
        self.issues
            .push(Issue::fatal(o.at.clone(), &o.text(), why.into()));
    }
    /// Refused; `--fio-lenient` leaves it out.
    pub fn ignored(&mut self, o: &Opt, why: impl Into<String>) {
        self.issues.push(Issue::approx(
            o.at.clone(),
            &o.text(),
            why.into(),
            "left out",
        ));
    }
    /// A mapping the output states.
    pub fn note(&mut self, text: String) {
        if !self.notes.contains(&text) {
            self.notes.push(text);
        }
    }
}

/// Bytes as `job` parameter text, exactly: `64KiB`, `1MiB`, or `4000` (fsarena's own
/// [`crate::size::format_size`] rounds what is not a whole number of its unit).
pub(super) fn exact(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes > 0 && bytes % (1u64 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

pub(super) type Get<'a> = &'a dyn Fn(&str) -> Option<Opt>;
pub(super) type Params = Vec<(&'static str, String)>;

/// A value with fio's `read,write[,trim]` form: (read, write).
fn per_dir(v: &str) -> (Option<&str>, Option<&str>) {
    let mut parts = v.split(',').map(str::trim);
    let r = parts.next().filter(|s| !s.is_empty());
    match parts.next() {
        None => (r, r),
        Some(w) => (r, Some(w).filter(|s| !s.is_empty())),
    }
}

/// The one value of a `read,write` option a job uses, or a refusal when it reads and
/// writes with different values.
fn one_dir<'v>(cx: &mut Ctx, o: &'v Opt, reads: bool, writes: bool) -> Option<&'v str> {
    let (r, w) = per_dir(o.value.as_deref().unwrap_or(""));
    match (reads, writes) {
        (true, true) if r != w => {
            cx.bad(
                o,
                "different values for reads and writes: the job engine takes one",
            );
            None
        }
        (true, _) => r,
        _ => w,
    }
}

pub(super) fn flag_of(cx: &mut Ctx, o: &Opt) -> bool {
    units::flag(o.value.as_deref()).unwrap_or_else(|e| {
        cx.bad(o, e);
        false
    })
}

pub(super) fn count_of(cx: &mut Ctx, o: &Opt) -> Option<u64> {
    match units::count(o.value.as_deref().unwrap_or("")) {
        Ok(n) => Some(n),
        Err(e) => {
            cx.bad(o, e);
            None
        }
    }
}

pub(super) fn bytes_of(cx: &mut Ctx, o: &Opt, text: &str, why_no_percent: &str) -> Option<u64> {
    units::bytes(text, why_no_percent)
        .map_err(|e| cx.bad(o, e))
        .ok()
}

pub(super) fn bs_of(
    cx: &mut Ctx,
    bs: Option<Opt>,
    split: Option<Opt>,
    reads: bool,
    writes: bool,
) -> String {
    if let Some(o) = split {
        if let Some(v) = one_dir(cx, &o, reads, writes) {
            return bssplit(cx, &o, v).unwrap_or_else(|| "4KiB".into());
        }
    }
    let Some(o) = bs else {
        return "4KiB".into();
    };
    let Some(v) = one_dir(cx, &o, reads, writes) else {
        return "4KiB".into();
    };
    let why = "a block size is not a percentage";
    match v.split_once('-').or_else(|| v.split_once(':')) {
        Some((lo, hi)) => {
            let lo = bytes_of(cx, &o, lo, why).unwrap_or(4096);
            let hi = bytes_of(cx, &o, hi, why).unwrap_or(4096);
            if lo == hi {
                exact(lo)
            } else {
                format!("{}-{}", exact(lo), exact(hi))
            }
        }
        None => exact(bytes_of(cx, &o, v, why).unwrap_or(4096)),
    }
}

/// fio's `4k/10:64k/50:32k/` → `4KiB:10,64KiB:50,32KiB:40`: a missing share gets an equal
/// part of what the others leave of 100, as fio's.
fn bssplit(cx: &mut Ctx, o: &Opt, v: &str) -> Option<String> {
    let mut items = Vec::new();
    for item in v.split(':').filter(|s| !s.trim().is_empty()) {
        let (size, pct) = item.split_once('/').unwrap_or((item, ""));
        let size = bytes_of(cx, o, size, "a block size is not a percentage")?;
        let pct = match pct.trim() {
            "" => None,
            t => Some(
                t.parse::<u64>()
                    .map_err(|_| cx.bad(o, format!("'{t}' is not a share")))
                    .ok()?,
            ),
        };
        items.push((size, pct));
    }
    let given: u64 = items.iter().filter_map(|i| i.1).sum();
    let missing = items.iter().filter(|i| i.1.is_none()).count() as u64;
    if items.is_empty() || given > 100 || (missing == 0 && given != 100) {
        cx.bad(o, "the shares must add up to 100");
        return None;
    }
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    // fio rounds a size down to a multiple of the smallest (without bs_unaligned).
    let least = items.iter().map(|i| i.0).min().unwrap_or(1).max(1);
    for (size, _) in items.iter_mut().filter(|(s, _)| *s % least != 0) {
        let down = *size - *size % least;
        cx.note(format!(
            "{}: fio rounds {} down to {}, a multiple of the smallest size, and so does \
             fsarena",
            o.text(),
            exact(*size),
            exact(down)
        ));
        *size = down;
    }
    let list: Vec<String> = items
        .iter()
        .filter(|(_, p)| p.unwrap_or(share) > 0)
        .map(|(s, p)| format!("{}:{}", exact(*s), p.unwrap_or(share)))
        .collect();
    (!list.is_empty()).then(|| list.join(","))
}

pub(super) fn engine_of(cx: &mut Ctx, o: Option<Opt>) -> String {
    let Some(o) = o else {
        return "psync".into();
    };
    match o.value.as_deref().unwrap_or("").trim() {
        "psync" => "psync".into(),
        e @ ("pvsync" | "sync" | "vsync") => {
            cx.note(format!(
                "{}: ioengine={e} runs as psync (pread/pwrite: the same requests, one system \
                 call each)",
                o.at
            ));
            "psync".into()
        }
        e @ ("io_uring" | "libaio" | "mmap" | "null") => e.into(),
        e => {
            cx.bad(
                &o,
                format!(
                    "fsarena's job engine has no {e} (it has psync, io_uring, libaio, mmap, null)"
                ),
            );
            "psync".into()
        }
    }
}

/// `size`, `filesize`, `nrfiles` and `filename`: the job's (size, nrfiles), or `None`
/// (and a refusal) without a size.
pub(super) fn files_of(cx: &mut Ctx, get: Get, m: &mut Mapped) -> Option<(u64, u64)> {
    let no_pct = "fio's size=N% is a share of an existing file or device; fsarena lays out \
                  new files (give a size)";
    let mut nrfiles = get("nrfiles").and_then(|o| count_of(cx, &o)).unwrap_or(1);
    // Its size is what the filesystem holds: no size to lay out, another I/O.
    let fill = ["fill_device", "fill_fs"]
        .iter()
        .find_map(|k| get(k).filter(|o| flag_of(cx, o)));
    if let Some(o) = fill {
        cx.bad(
            &o,
            "fio writes until the filesystem is full (ENOSPC) and takes what it wrote as the \
             size; fsarena's job engine moves the size it is given",
        );
        return None;
    }
    if let Some(o) = get("filename") {
        let v = o.value.clone().unwrap_or_default();
        let names: Vec<&str> = v.split(':').filter(|s| !s.is_empty()).collect();
        if names.iter().any(|n| n.starts_with("/dev/")) {
            cx.bad(&o, "a device is not a file: fsarena runs job files on files in its targets (--fs, --dir)");
        } else {
            cx.note(format!(
                "{}: {}: fsarena names the job's files itself, in the target's directory",
                o.at,
                o.text()
            ));
        }
        nrfiles = names.len().max(1) as u64;
        m.filename = Some(o);
    }
    // A share of a file an earlier group made, resolved with the groups.
    let share = |o: &Opt| match units::amount(o.value.as_deref().unwrap_or_default()) {
        Ok(units::Amount::Percent(p)) if (1..=100).contains(&p) => Some(p),
        _ => None,
    };
    if let (Some(o), Some(_)) = (get("size"), &m.filename) {
        if let Some(p) = share(&o) {
            m.size_share = Some((p, o.at.clone()));
            return Some((0, nrfiles));
        }
    }
    let size = get("size").and_then(|o| {
        let v = o.value.clone().unwrap_or_default();
        Some((bytes_of(cx, &o, &v, no_pct)?, o))
    });
    let filesize = get("filesize").and_then(|o| {
        let v = o.value.clone().unwrap_or_default();
        if v.contains('-') || v.contains(':') {
            cx.bad(&o, "the job engine's files of a job all have one size");
            return None;
        }
        Some((bytes_of(cx, &o, &v, no_pct)?, o))
    });
    match (size, filesize) {
        (Some((s, _)), None) => Some((s, nrfiles)),
        (None, Some((f, o))) => match f.checked_mul(nrfiles) {
            Some(s) => Some((s, nrfiles)),
            None => {
                cx.bad(&o, "filesize × nrfiles is out of range");
                None
            }
        },
        // fio's files are filesize bytes each; size is the I/O the job does in them, at
        // most all of them.
        (Some((s, so)), Some((f, o))) => match f.checked_mul(nrfiles) {
            None => {
                cx.bad(&o, "filesize × nrfiles is out of range");
                None
            }
            Some(total) => {
                if s != total {
                    m.moves = (s < total).then_some(s);
                    cx.note(format!(
                        "{}: {} with {}: files of filesize, in which the job moves {} \
                         (size, at most filesize × nrfiles), as fio",
                        so.at,
                        so.text(),
                        o.text(),
                        exact(s.min(total))
                    ));
                }
                Some((total, nrfiles))
            }
        },
        (None, None)
            if m.filename
                .as_ref()
                .is_some_and(|o| o.text().contains("/dev/")) =>
        {
            None
        }
        (None, None) if m.filename.is_some() => {
            m.size_share = Some((100, m.at.clone()));
            Some((0, nrfiles))
        }
        (None, None) => {
            let why = format!(
                "job {}: no size= (or filesize=): fio needs one for a job's files",
                m.name
            );
            cx.issues.push(Issue::fatal(m.at.clone(), "", why));
            None
        }
    }
}

pub(super) fn depth_of(cx: &mut Ctx, o: Option<Opt>, engine: &str, p: &mut Params) {
    let Some(o) = o else { return };
    let Some(depth) = count_of(cx, &o) else {
        return;
    };
    match engine {
        "io_uring" | "libaio" if depth != 1 => p.push(("iodepth", depth.to_string())),
        "psync" | "mmap" if depth > 1 => cx.note(format!(
            "{}: iodepth={depth}: fio runs a synchronous engine ({engine}) at depth 1, and so does fsarena",
            o.at
        )),
        "null" if depth > 1 => cx.ignored(&o, "fsarena's null engine completes each request at once (depth 1)"),
        _ => {}
    }
}

/// `runtime`, `time_based` and `ramp_time`.
pub(super) fn time_of(cx: &mut Ctx, get: Get, p: &mut Params) {
    let time_based = get("time_based").is_some_and(|o| flag_of(cx, &o));
    let runtime = get("runtime").and_then(|o| {
        let s = units::seconds(o.value.as_deref().unwrap_or(""))
            .map_err(|e| cx.bad(&o, e))
            .ok()?;
        Some((s, o))
    });
    match (runtime, time_based) {
        (Some((s, _)), true) if s > 0.0 => p.push(("runtime", format!("{s}"))),
        (Some((s, _)), false) if s > 0.0 => p.push(("timeout", format!("{s}"))),
        (_, true) => {
            let o = get("time_based").expect("given");
            cx.bad(&o, "time_based needs a runtime");
        }
        _ => {}
    }
    if let Some(o) = get("ramp_time") {
        match units::seconds(o.value.as_deref().unwrap_or("")) {
            Ok(s) if s > 0.0 => p.push(("ramp", format!("{s}"))),
            Ok(_) => {}
            Err(e) => cx.bad(&o, e),
        }
    }
}

pub(super) fn rate_of(cx: &mut Ctx, o: Option<Opt>, reads: bool, writes: bool, p: &mut Params) {
    let Some(o) = o else { return };
    let (r, w) = per_dir(o.value.as_deref().unwrap_or(""));
    if reads && writes && (r.is_some() || w.is_some()) {
        return cx.ignored(
            &o,
            "fio limits reads and writes each to the rate; fsarena's job engine limits their sum",
        );
    }
    let v = if reads { r } else { w };
    if let Some(bytes) = v.and_then(|v| bytes_of(cx, &o, v, "a rate is not a percentage")) {
        if bytes > 0 {
            p.push(("rate", exact(bytes)));
        }
    }
}

pub(super) fn distribution_of(cx: &mut Ctx, o: &Opt) -> Option<String> {
    let v = o.value.as_deref().unwrap_or("").trim();
    let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
    match kind {
        "random" => None,
        "zipf" | "pareto" if !arg.is_empty() && !arg.contains(':') => Some(format!("{kind}:{arg}")),
        _ => {
            cx.ignored(o, "fsarena's job engine draws uniform, zipf:θ or pareto:h (no center, normal or zones)");
            None
        }
    }
}

pub(super) fn verify_of(
    cx: &mut Ctx,
    o: Option<Opt>,
    rw: &str,
    overwrite: bool,
    writes: bool,
    p: &mut Params,
) {
    let Some(o) = o else { return };
    let v = o.value.as_deref().unwrap_or("").trim();
    let methods = [
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
    ];
    if v == "0" || v.is_empty() {
        return;
    }
    if !methods.contains(&v) {
        return cx.ignored(
            &o,
            "the job engine checks its own pattern; fio's verify=pattern/null have no equivalent",
        );
    }
    if !writes {
        return cx.ignored(&o, "verify on a read job checks what an earlier fio job wrote; fsarena lays out each job's own files");
    }
    if rw == "write" && !overwrite {
        return cx.ignored(&o, "the job engine lays out verified files written in full first (fio's overwrite=1); add overwrite=1");
    }
    cx.note(format!(
        "{}: verify={v}: fsarena writes its own self-checking pattern and reads it all back in a verify phase",
        o.at
    ));
    p.push(("verify", "true".into()));
}

pub(super) fn cpus_of(cx: &mut Ctx, o: Option<Opt>, policy: Option<Opt>, p: &mut Params) {
    let Some(o) = o else { return };
    let cpus = match units::cpu_list(o.value.as_deref().unwrap_or("")) {
        Ok(c) => c,
        Err(e) => return cx.bad(&o, e),
    };
    let split = policy
        .as_ref()
        .and_then(|o| o.value.as_deref())
        .map(str::trim)
        == Some("split");
    if cpus.len() > 1 && !split {
        return cx.ignored(
            &o,
            "fio lets every job run on any of these CPUs; fsarena pins each job to one \
             (as cpus_allowed_policy=split)",
        );
    }
    let list: Vec<String> = cpus.iter().map(u64::to_string).collect();
    p.push(("cpus", list.join(",")));
}

pub(super) fn fallocate_of(
    cx: &mut Ctx,
    o: Option<Opt>,
    rw: &str,
    overwrite: bool,
    engine: &str,
    p: &mut Params,
) {
    let v = o
        .as_ref()
        .and_then(|o| o.value.clone())
        .unwrap_or_else(|| "native".into());
    let mode = match v.trim() {
        "native" => "native",
        "posix" | "1" => {
            if let Some(o) = &o {
                cx.note(format!(
                    "{}: fallocate=posix runs as native (glibc's posix_fallocate is fallocate(2) mode 0 where the filesystem has it)",
                    o.at
                ));
            }
            "native"
        }
        "keep" => "keep",
        "none" | "0" => "none",
        _ => {
            if let Some(o) = &o {
                cx.ignored(
                    o,
                    "the job engine preallocates with fallocate(2) or not at all",
                );
            }
            "none"
        }
    };
    // The job engine preallocates only the files a write-only job starts empty in: the
    // others are written in full in layout, which allocates them as fio's would be.
    let write_only = rw == "write" || rw == "randwrite";
    if write_only && !overwrite && engine != "null" && mode != "none" {
        p.push(("fallocate", mode.into()));
    }
}

/// fio's default random map for a random job: `randommap=true`. With several block sizes
/// the map is in blocks of the smallest, and a request is shortened to the free blocks at
/// its offset, as fio's.
pub(super) fn randommap_of(p: &mut Params) {
    p.push(("randommap", "true".into()));
}

/// `rate_iops`: requests per second, as bytes per second of the job's one block size (the
/// job engine paces by bytes, which is the same pace when every request is `bs` bytes).
pub(super) fn rate_iops_of(
    cx: &mut Ctx,
    o: Option<Opt>,
    rate: Option<Opt>,
    reads: bool,
    writes: bool,
    p: &mut Params,
) {
    let Some(o) = o else { return };
    if rate.is_some() {
        return cx.bad(
            &o,
            "give rate or rate_iops, not both: the job engine takes one limit",
        );
    }
    let (r, w) = per_dir(o.value.as_deref().unwrap_or(""));
    if reads && writes && (r.is_some() || w.is_some()) {
        return cx.ignored(
            &o,
            "fio limits reads and writes each to the rate; fsarena's job engine limits their sum",
        );
    }
    let Some(v) = (if reads { r } else { w }) else {
        return;
    };
    let Some(n) = units::count(v).map_err(|e| cx.bad(&o, e)).ok() else {
        return;
    };
    let bs = p.iter().find(|(k, _)| *k == "bs").map(|(_, v)| v.clone());
    // The job parameter's own reading of `bs` (`4KiB` is 4096 there, not fio's 4000).
    let mix = bs.and_then(|b| crate::workload::params::parse_size_mix(&b).ok());
    let fixed = match mix.as_deref() {
        Some([one]) if one.lo == one.hi => Some(one.lo),
        _ => None,
    };
    match fixed {
        _ if n == 0 => {}
        Some(b) => p.push(("rate", exact(n.saturating_mul(b)))),
        None => cx.ignored(
            &o,
            "with several block sizes fio paces requests, the job engine bytes",
        ),
    }
}
