//! One fio job's options → the `job` workload's parameters (src/workload/job/mod.rs,
//! `PARAMS`). An option is mapped only where the job engine does what fio does with it;
//! anything else becomes an [`Issue`] naming the option, its place and what fsarena
//! lacks. The table of what maps to what is in docs/fio.md.

use super::ini::Opt;
use super::options::*;
use super::pace::{loops_of, think_of};
use super::rw::rw_of;
use super::{Issue, Loc};
use std::collections::BTreeMap;

/// A job as the job workload will run it.
#[derive(Clone, Debug)]
pub struct Mapped {
    pub name: String,
    pub at: Loc,
    /// The job workload's parameters but `numjobs`, in a fixed order.
    pub params: Vec<(&'static str, String)>,
    pub numjobs: u64,
    pub stonewall: bool,
    pub new_group: Option<Loc>,
    /// `wait_for`: the job it starts after; resolved in [`super::groups::wait_for`].
    pub wait_for: Option<Opt>,
    /// `filename`, when given: jobs that share it share a file in fio.
    pub filename: Option<Opt>,
    /// fio's `invalidate` (default 1) and where it was set.
    pub invalidate: (bool, Option<Loc>),
    pub seed: Option<(u64, Loc)>,
    /// Its size is a share (percent) of the file `filename` names, which fio finds made
    /// by an earlier group: `size=N%`, or no size at all (100); resolved in
    /// [`super::groups`], where the `size` parameter is still empty.
    pub size_share: Option<(u64, Loc)>,
    /// The bytes it moves when fewer than its files hold: `size` under `filesize` ×
    /// `nrfiles` (fio's `io_size` unless that is given).
    pub moves: Option<u64>,
}

/// fio's names for the same option → the name used here.
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blocksize_range" | "bsrange" => "bs",
        "blocksize_split" => "bssplit",
        "timeout" => "runtime",
        "wait_for_previous" => "stonewall",
        "nr_files" => "nrfiles",
        "rand_repeatable" => "randrepeat",
        "rwmixwrite" => "rwmixread",
        "io_limit" => "io_size",
        k => k,
    }
}

/// fio options fsarena knows it lacks, with what is missing.
const LACKS: &[(&str, &str)] = &[
    ("offset", "the job engine's files start at offset 0"),
    ("percentage_random", "a job is all sequential or all random"),
    (
        "create_on_open",
        "the job engine lays out files before the run",
    ),
    ("unlink", "fsarena removes the files with the target"),
    (
        "iodepth_batch_submit",
        "io_uring submits what is queued in one call",
    ),
    (
        "iodepth_batch_complete_min",
        "io_uring reaps what has completed",
    ),
    ("iodepth_low", "io_uring keeps iodepth requests in flight"),
];

/// Options that change nothing fsarena does: a job's name and description.
const ACCEPTED: &[&str] = &["name", "description"];

/// Options that change how fio reports or times, never what I/O it does: each runs as if
/// absent, with a note saying what fsarena does instead.
const NO_IO: &[(&[&str], &str)] = &[
    (
        &["gtod_reduce", "clocksource"],
        "fio reads the clock less or from another source; fsarena times every request \
         with the monotonic clock (the TSC where the kernel trusts it)",
    ),
    (
        &["disable_lat", "disable_clat", "disable_slat"],
        "fio stops recording latencies; fsarena records them anyway",
    ),
    (
        &["disable_bw_measurement", "disable_bw"],
        "fio stops measuring bandwidth; fsarena measures it anyway",
    ),
    (
        &["group_reporting"],
        "fsarena reports the jobs of a group as one, as fio does with it",
    ),
    (&["thread"], "fsarena's jobs are threads either way"),
    (
        &["filename_format"],
        "fio's names for the job's files; fsarena names them itself",
    ),
    (
        &[
            "write_bw_log",
            "write_iops_log",
            "log_avg_msec",
            "log_max_value",
            "bwavgtime",
            "iopsavgtime",
        ],
        "fio writes bandwidth or IOPS logs; fsarena keeps each phase's time series \
         (`series` in its JSON) instead",
    ),
    (
        &[
            "write_lat_log",
            "write_hist_log",
            "log_hist_msec",
            "log_hist_coarseness",
        ],
        "fio writes latency logs; fsarena keeps latency histograms per operation \
         (`lat_by_op` in its JSON) instead",
    ),
    (
        &[
            "per_job_logs",
            "log_offset",
            "log_compression",
            "log_unix_epoch",
            "log_alternate_epoch",
        ],
        "only changes fio's log files, which fsarena does not write",
    ),
    (
        &[
            "lat_percentiles",
            "clat_percentiles",
            "slat_percentiles",
            "percentile_list",
            "significant_figures",
            "unified_rw_reporting",
        ],
        "only changes fio's report; fsarena reports p50, p90, p99, p99.9 and max of each \
         operation",
    ),
];

/// Maps one job: `opts` are the globals in force at its section, then its own options.
pub fn job(
    name: &str,
    at: &Loc,
    opts: &[Opt],
    issues: &mut Vec<Issue>,
    notes: &mut Vec<String>,
) -> Mapped {
    let mut cx = Ctx { issues, notes };
    let mut last: BTreeMap<String, Opt> = BTreeMap::new();
    for o in opts {
        last.insert(canonical(&o.key).to_string(), o.clone());
    }
    let get = |k: &str| last.get(k).cloned();
    let mut m = Mapped {
        name: name.to_string(),
        at: at.clone(),
        params: Vec::new(),
        numjobs: 1,
        stonewall: false,
        new_group: None,
        wait_for: None,
        moves: None,
        filename: None,
        invalidate: (true, None),
        seed: None,
        size_share: None,
    };
    for (key, o) in &last {
        let known = [
            "rw",
            "rwmixread",
            "bs",
            "bssplit",
            "size",
            "filesize",
            "nrfiles",
            "openfiles",
            "filename",
            "directory",
            "ioengine",
            "iodepth",
            "direct",
            "buffered",
            "fsync",
            "fdatasync",
            "end_fsync",
            "runtime",
            "time_based",
            "ramp_time",
            "rate",
            "random_distribution",
            "norandommap",
            "randrepeat",
            "randseed",
            "verify",
            "fallocate",
            "overwrite",
            "invalidate",
            "cpus_allowed",
            "cpus_allowed_policy",
            "fadvise_hint",
            "fsync_on_close",
            "pre_read",
            "rate_iops",
            "startdelay",
            "numjobs",
            "stonewall",
            "wait_for",
            "new_group",
            "kb_base",
            "loops",
            "io_size",
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "zero_buffers",
            "refill_buffers",
            "cpumask",
            "sync",
            "random_generator",
            "number_ios",
            "buffer_compress_percentage",
            "buffer_compress_chunk",
            "buffer_pattern",
            "fill_device",
            "fill_fs",
        ];
        if ACCEPTED.contains(&key.as_str()) || known.contains(&key.as_str()) {
            continue;
        }
        if let Some((_, why)) = NO_IO.iter().find(|(keys, _)| keys.contains(&key.as_str())) {
            cx.note(format!("{}: {}: no I/O changes: {why}", o.at, o.text()));
            continue;
        }
        match LACKS.iter().find(|(k, _)| k == key) {
            Some((_, why)) => cx.ignored(o, format!("fsarena has no {key}: {why}")),
            None => cx.ignored(
                o,
                format!("fsarena's job engine has no equivalent of fio's {key} (or it is not a fio option)"),
            ),
        }
    }
    if let Some(o) = get("kb_base") {
        if o.value.as_deref().map(str::trim) != Some("1024") {
            cx.bad(
                &o,
                "only fio's default kb_base=1024 is read (4k = 4096 bytes)",
            );
        }
    }
    if let Some(o) = get("name") {
        m.name = o.value.clone().unwrap_or_default();
    }
    m.stonewall = get("stonewall").is_some_and(|o| flag_of(&mut cx, &o));
    m.wait_for = get("wait_for").filter(|o| o.value.as_deref().is_some_and(|v| !v.is_empty()));
    if let Some(o) = get("new_group") {
        if flag_of(&mut cx, &o) {
            m.new_group = Some(o.at.clone());
        }
    }
    if let Some(o) = get("numjobs") {
        m.numjobs = count_of(&mut cx, &o).unwrap_or(1);
    }
    if let Some(o) = get("invalidate") {
        m.invalidate = (flag_of(&mut cx, &o), Some(o.at.clone()));
    }
    if let Some(o) = get("randseed") {
        m.seed = count_of(&mut cx, &o).map(|s| (s, o.at.clone()));
    }
    // fio's randseed fixes the sequence whatever randrepeat says.
    let fresh = get("randrepeat").is_some_and(|o| !flag_of(&mut cx, &o)) && m.seed.is_none();
    if let Some(o) = get("directory") {
        cx.note(format!(
            "{}: {}: fsarena runs the job in the target's directory instead",
            o.at,
            o.text()
        ));
    }
    let (rw, seq_add) = rw_of(&mut cx, get("rw"));
    let reads = rw != "write" && rw != "randwrite";
    let writes = rw != "read" && rw != "randread";
    let random = rw.starts_with("rand");
    let mut p: Vec<(&'static str, String)> = vec![("rw", rw.clone())];
    p.extend(seq_add.map(|a| ("seq_add", a)));
    if let Some(o) = get("rwmixread") {
        if let Some(n) = count_of(&mut cx, &o) {
            let read = if o.key == "rwmixwrite" {
                100u64.saturating_sub(n)
            } else {
                n
            };
            if n > 100 {
                cx.bad(&o, "give 0 to 100");
            } else if reads && writes {
                p.push(("rwmixread", read.to_string()));
            }
        }
    }
    let bs = bs_of(&mut cx, get("bs"), get("bssplit"), reads, writes);
    p.push(("bs", bs.clone()));
    let engine = engine_of(&mut cx, get("ioengine"));
    let files = files_of(&mut cx, &get, &mut m);
    if let (Some((_, nrfiles)), Some(_)) = (files, &m.size_share) {
        p.push(("size", String::new()));
        if nrfiles != 1 {
            p.push(("nrfiles", nrfiles.to_string()));
        }
    } else if let Some((mut size, nrfiles)) = files {
        // A sequential job of fio's stops at the last whole block inside each file (a
        // size from arithmetic is seldom whole blocks); a random one without a map runs on
        // until its bytes reach the size (fio 3.33: 23 requests of 4 KiB in 96,420 bytes
        // sequentially, 263 of 4000 in 1 MiB at random).
        let block = crate::size::parse_size(&bs).unwrap_or(1).max(1);
        let share = size / nrfiles.max(1);
        if !random && share % block != 0 && share >= block {
            size = share / block * block * nrfiles.max(1);
            cx.note(format!(
                "{}: each file's {share} bytes rounded down to whole blocks of {block}, as fio \
                 moves them",
                m.at
            ));
        }
        p.push(("size", exact(size)));
        if nrfiles != 1 {
            p.push(("nrfiles", nrfiles.to_string()));
        }
    }
    let norandommap = get("norandommap").is_some_and(|o| flag_of(&mut cx, &o));
    if let Some(o) = get("openfiles") {
        let nrfiles = files.map_or(1, |f| f.1);
        match count_of(&mut cx, &o) {
            Some(n) if random && norandommap && n < nrfiles => cx.ignored(
                &o,
                "fio moves to a random job's next files only when their random map is full, \
                 so never with norandommap; fsarena's job moves on after size/nrfiles bytes",
            ),
            Some(n) => p.push(("openfiles", n.to_string())),
            None => {}
        }
    }
    depth_of(&mut cx, get("iodepth"), &engine, &mut p);
    p.push(("engine", engine.clone()));
    let mut direct = get("direct").is_some_and(|o| flag_of(&mut cx, &o));
    if let Some(o) = get("buffered") {
        let unbuffered = !flag_of(&mut cx, &o);
        if get("direct").is_some() && unbuffered != direct {
            cx.bad(&o, "contradicts direct= (buffered=0 is direct=1)");
        }
        direct |= unbuffered;
    }
    if direct {
        p.push(("direct", "true".into()));
    }
    for k in ["fsync", "fdatasync"] {
        if let Some(o) = get(k) {
            match count_of(&mut cx, &o) {
                Some(n) if n > 0 => p.push((
                    if k == "fsync" { "fsync" } else { "fdatasync" },
                    n.to_string(),
                )),
                _ => {}
            }
        }
    }
    if get("end_fsync").is_some_and(|o| flag_of(&mut cx, &o)) {
        p.push(("end_fsync", "true".into()));
    }
    time_of(&mut cx, &get, &mut p);
    let time_based = p.iter().any(|(k, _)| *k == "runtime");
    if let Some(o) = get("number_ios") {
        let size = files.map(|f| f.0);
        m.moves = super::pace::ios_of(&mut cx, &o, time_based, &bs, size, m.moves);
    }
    let loops = loops_of(
        &mut cx,
        &get,
        time_based,
        files.map(|f| f.0),
        m.moves,
        &mut p,
    );
    think_of(&mut cx, &get, &mut p);
    rate_of(&mut cx, get("rate"), reads, writes, &mut p);
    rate_iops_of(
        &mut cx,
        get("rate_iops"),
        get("rate"),
        reads,
        writes,
        &mut p,
    );
    if let Some(o) = get("startdelay") {
        let v = o.value.clone().unwrap_or_default();
        if v.contains('-') {
            cx.ignored(
                &o,
                "a random delay per job: the job engine delays all the jobs alike",
            );
        } else {
            match super::units::seconds(&v) {
                Ok(s) if s > 0.0 => p.push(("startdelay", format!("{s}"))),
                Ok(_) => {}
                Err(e) => cx.bad(&o, e),
            }
        }
    }
    if get("fsync_on_close").is_some_and(|o| flag_of(&mut cx, &o)) {
        p.push(("fsync_on_close", "true".into()));
    }
    // fio's pre_read reads the files into the cache after its layout's fsync, and turns
    // invalidate off (pointless after it).
    if get("pre_read").is_some_and(|o| flag_of(&mut cx, &o)) && engine != "null" {
        p.push(("pre_read", "true".into()));
        m.invalidate = (false, None);
    }
    let mut uniform = true;
    if let Some(o) = get("random_distribution") {
        if let Some(d) = distribution_of(&mut cx, &o) {
            p.push(("random_distribution", d));
            uniform = false;
        }
    }
    // fio turns its random map off for the other distributions. Its lfsr generator
    // visits each block once per pass without one, as the map does.
    let lfsr = generator_of(&mut cx, get("random_generator"));
    if random && (!norandommap || lfsr) && uniform {
        randommap_of(&mut p);
    }
    if let Some(o) = get("sync").filter(|o| {
        !matches!(
            o.value.as_deref().map(str::trim),
            Some("0" | "none" | "false")
        )
    }) {
        cx.ignored(&o, "the job engine does not open files O_SYNC or O_DSYNC");
    }
    let overwrite = get("overwrite").is_some_and(|o| flag_of(&mut cx, &o));
    verify_of(&mut cx, get("verify"), &rw, overwrite, writes, &mut p);
    super::pace::compress_of(&mut cx, &get, &mut p);
    let zero = get("zero_buffers").is_some_and(|o| flag_of(&mut cx, &o));
    if zero {
        p.push(("buffers", "zero".into()));
    } else if get("refill_buffers").is_some_and(|o| flag_of(&mut cx, &o)) {
        p.push(("buffers", "refill".into()));
    }
    let cpus = match get("cpus_allowed") {
        Some(o) => Some(o),
        None => get("cpumask").and_then(|o| mask_as_list(&mut cx, o)),
    };
    cpus_of(&mut cx, cpus, get("cpus_allowed_policy"), &mut p);
    fallocate_of(&mut cx, get("fallocate"), &rw, overwrite, &engine, &mut p);
    if overwrite && !reads {
        p.push(("overwrite", "true".into()));
    }
    let lays_out = engine != "null" && (reads || overwrite);
    if let (false, Some(at)) = (m.invalidate.0, &m.invalidate.1) {
        if lays_out {
            cx.issues.push(Issue::approx(
                at.clone(),
                "invalidate=0",
                "fio fsyncs the files it lays out (create_fsync=1); with --cache keep and \
                 --sync none fsarena's layout leaves them to writeback"
                    .into(),
                "layout not synced",
            ));
        }
    }
    // fio drops a file's cached pages each time a time-based buffered job goes round it
    // (`loop_cache_invalidate` under invalidate=1): a sequential job of one file at its
    // end, a random one when its map is full (never with norandommap); and each time it
    // opens a file, so at every loop of `loops`.
    let goes_round = if random {
        p.contains(&("randommap", "true".into()))
    } else {
        files.is_some_and(|f| f.1 == 1)
    };
    let engines = ["psync", "io_uring", "libaio"];
    if (time_based && goes_round || loops)
        && m.invalidate.0
        && !direct
        && engines.contains(&engine.as_str())
    {
        p.push(("loop_invalidate", "true".into()));
    }
    if let Some(o) = get("fadvise_hint") {
        match o.value.as_deref().map(str::trim) {
            Some("0") | Some("false") => p.push(("fadvise_hint", "false".into())),
            None | Some("1") | Some("true") => {}
            Some(_) => cx.ignored(
                &o,
                "the job engine advises RANDOM or SEQUENTIAL by the job's pattern (fio's \
                 fadvise_hint=1), or nothing (0)",
            ),
        }
    }
    if fresh {
        p.push(("randrepeat", "false".into()));
    }
    m.params = p;
    m
}

/// fio's `cpumask` (a bit mask of the CPUs a job may run on, `0x` for hex) as the
/// `cpus_allowed` list it means.
fn mask_as_list(cx: &mut Ctx, o: Opt) -> Option<Opt> {
    let v = o.value.as_deref().unwrap_or("").trim();
    let mask = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse::<u64>(),
    };
    match mask {
        Ok(m) if m != 0 => {
            let cpus: Vec<String> = (0..64)
                .filter(|i| m >> i & 1 == 1)
                .map(|i| i.to_string())
                .collect();
            Some(Opt {
                value: Some(cpus.join(",")),
                ..o
            })
        }
        _ => {
            cx.bad(
                &o,
                "a bit mask of CPUs, not 0 (1 is CPU 0, 0x6 CPUs 1 and 2)",
            );
            None
        }
    }
}

/// fio's `random_generator`: whether it is `lfsr`, which never draws a block twice in a
/// pass (a random map's promise, without the map); fio's others draw as fsarena's does.
fn generator_of(cx: &mut Ctx, o: Option<Opt>) -> bool {
    let Some(o) = o else { return false };
    match o.value.as_deref().map(str::trim) {
        Some("lfsr") => {
            cx.note(format!(
                "{}: {}: each block once per pass, as fio's lfsr: fsarena's random map \
                 (randommap=true), its offsets in another order",
                o.at,
                o.text()
            ));
            true
        }
        Some("tausworthe" | "tausworthe64") => {
            cx.note(format!(
                "{}: {}: no I/O changes: fsarena draws offsets with its own generator",
                o.at,
                o.text()
            ));
            false
        }
        _ => {
            cx.bad(&o, "fio's generators are tausworthe, lfsr and tausworthe64");
            false
        }
    }
}
