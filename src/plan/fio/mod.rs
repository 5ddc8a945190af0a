//! fio job files (`run --fio FILE`): fio's INI format (Jens Axboe, fio HOWTO "Job file
//! format") read into entries of the `job` workload, so that everything after the plan —
//! targets, repetitions, policies, the store, reports — is what it is for any workload.
//! [`ini`] reads sections, includes and `${VAR}`; `map` turns one job's options into
//! `job` parameters; here jobs become groups: fio runs the jobs between two `stonewall`s
//! at once, so each such group is one plan entry, and the entries run in file order.
//!
//! What fsarena cannot run as fio would is refused all at once, each with its file, line,
//! option and what fsarena lacks; `--fio-lenient` runs without the refusals it can leave
//! out and lists them. docs/fio.md is the user's page.

pub mod ini;
mod keywords;
mod map;
mod options;
mod pace;
pub mod units;

use crate::error::usage;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use map::Mapped;
use std::fmt;
use std::path::Path;

/// The largest job file read (include files too).
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// A place in a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An option fsarena cannot run as fio would.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    pub at: Loc,
    /// The option as written (`ioengine=libaio`), or empty for a whole job.
    pub option: String,
    /// What fsarena lacks.
    pub why: String,
    /// Refused even with `--fio-lenient`.
    pub fatal: bool,
    /// What `--fio-lenient` does instead (`left out`, `runs with offsets drawn with replacement`).
    pub lenient: String,
}

impl Issue {
    pub fn fatal(at: Loc, option: &str, why: String) -> Self {
        Self {
            at,
            option: option.to_string(),
            why,
            fatal: true,
            lenient: String::new(),
        }
    }

    pub fn approx(at: Loc, option: &str, why: String, lenient: &str) -> Self {
        Self {
            at,
            option: option.to_string(),
            why,
            fatal: false,
            lenient: lenient.to_string(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = crate::error::echo(&self.option);
        match (self.option.is_empty(), self.fatal) {
            (true, _) => write!(f, "{}: {}", self.at, self.why),
            (false, true) => write!(f, "{}: {opt}: {}", self.at, self.why),
            (false, false) => write!(
                f,
                "{}: {opt}: {} (--fio-lenient: {})",
                self.at, self.why, self.lenient
            ),
        }
    }
}

/// One plan entry: a group of jobs fio runs at once.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The `job` workload spec (`job:rw=randread,bs=4KiB,…`).
    pub spec: String,
    /// The fio jobs it runs.
    pub jobs: Vec<String>,
    pub at: Loc,
}

/// A job file read into plan entries.
#[derive(Clone, Debug)]
pub struct FioPlan {
    pub entries: Vec<Entry>,
    /// Mappings the run states (`ioengine=sync runs as psync`, `directory` overridden).
    pub notes: Vec<String>,
    /// With `lenient`: what was refused and run without (or as said).
    pub ignored: Vec<Issue>,
    /// fio's `invalidate` of every job (1 by default): the cache policy it asks for.
    pub invalidate: bool,
    /// `randseed`, when the jobs give one.
    pub seed: Option<u64>,
    /// Some job has `randrepeat=0` (and no `randseed`): a fresh seed each run.
    pub fresh_seed: bool,
}

impl FioPlan {
    /// The lines a run states before it starts (and its report keeps): each group and the
    /// jobs it runs, the policies the file sets in place of fsarena's defaults, the
    /// mappings, and what `--fio-lenient` ran without.
    pub fn run_notes(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("fio: {} ({}) runs as {}", e.jobs.join(", "), e.at, e.spec))
            .collect();
        lines.push(self.policy_note());
        lines.extend(self.notes.iter().map(|n| format!("fio: {n}")));
        lines.extend(
            self.ignored
                .iter()
                .map(|i| format!("fio --fio-lenient: {i}")),
        );
        lines
    }

    /// The policies the job file sets (`fio_policy` in `plan/args.rs`, docs/fio.md): the
    /// cache from `invalidate`, sync `none` (fsarena's default is `end`), the seed from
    /// `randseed` when given.
    fn policy_note(&self) -> String {
        let cache = if self.invalidate {
            "cache cold (invalidate=1, fio's default)"
        } else {
            "cache keep (invalidate=0)"
        };
        let mut seed = self
            .seed
            .map(|s| format!(", seed {s} (randseed={s})"))
            .unwrap_or_default();
        if self.fresh_seed {
            seed.push_str(
                ", each repetition drawing from the run's seed plus the repetition − 1 \
                 (randrepeat=0; `run --fio` without --seed picks a fresh run seed)",
            );
        }
        format!(
            "fio: policies as the job file asks: {cache}, sync none (fio syncs only where \
             the file says: fsync, fdatasync, end_fsync){seed}"
        )
    }
}

/// The job sections to run (all when `names` is empty), and where they were named: the
/// place of a name no job section has (`--fio-section`, or a plan's `sections`).
#[derive(Clone, Copy)]
pub struct Only<'a> {
    pub names: &'a [String],
    pub from: &'a str,
}

impl Only<'_> {
    /// Every job section.
    pub const ALL: Only<'static> = Only {
        names: &[],
        from: "",
    };
}

/// Reads the job file at `path` (includes and `${VAR}` from this machine), with the
/// options `sets` (`--fio-set`) over every job's own, and only the job sections `only`.
pub fn load(path: &Path, lenient: bool, sets: &[String], only: Only) -> Result<FioPlan> {
    let text = read_job_file(path)
        .map_err(|e| usage(format!("cannot read fio job file {}: {e}", path.display())))?;
    parse_only(path, &text, &mut ini::Real, lenient, sets, only)
        .map_err(|issues| refusal(path, &issues))
}

/// The usage error that lists every issue.
pub fn refusal(path: &Path, issues: &[Issue]) -> anyhow::Error {
    let mut msg = format!(
        "{}: {} fsarena cannot run as fio would:",
        path.display(),
        match issues.len() {
            1 => "1 option".to_string(),
            n => format!("{n} options"),
        }
    );
    // One issue a line, wrapped at word boundaries to stderr's width (a 140-column line
    // broke mid-word in an 80-column terminal).
    let width = crate::term::stderr_width();
    for i in issues {
        msg.push('\n');
        msg.push_str(&crate::term::wrap(&format!("  {i}"), width, 4));
    }
    if issues.iter().all(|i| !i.fatal) {
        msg.push_str("\n--fio-lenient runs it as each line says");
    }
    usage(msg)
}

/// Parses job-file `text` (the file `path`); `Err` holds every issue, none left out.
pub fn parse(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
) -> Result<FioPlan, Vec<Issue>> {
    parse_set(path, text, src, lenient, &[])
}

/// [`parse`] with the options `sets` (`OPT=VALUE` or `OPT`, from `--fio-set`) after every
/// job's own, so that they win; their place is `--fio-set:N`, the Nth given.
pub fn parse_set(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
    sets: &[String],
) -> Result<FioPlan, Vec<Issue>> {
    parse_only(path, text, src, lenient, sets, Only::ALL)
}

/// [`parse_set`] of the job sections `only`, as fio's `--section`: the global sections
/// still apply; a name no job section has is refused, its place `only.from`'s Nth name.
pub fn parse_only(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
    sets: &[String],
    only: Only,
) -> Result<FioPlan, Vec<Issue>> {
    let (from, only) = (only.from, only.names);
    let (mut sections, mut issues) = ini::read(path, text, src);
    for name in only
        .iter()
        .filter(|n| !sections.iter().any(|s| !s.global && s.name == **n))
    {
        let at = Loc {
            file: from.into(),
            line: 1 + only.iter().position(|n| n == name).unwrap_or(0),
        };
        issues.push(Issue::fatal(
            at,
            name,
            format!("the file has no job section [{name}]"),
        ));
    }
    if !only.is_empty() {
        sections.retain(|s| s.global || only.contains(&s.name));
    }
    let sets: Vec<ini::Opt> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (key, value) = match s.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (s.trim(), None),
            };
            ini::Opt {
                key: key.to_string(),
                value,
                at: Loc {
                    file: "--fio-set".into(),
                    line: i + 1,
                },
            }
        })
        .collect();
    let mut notes = Vec::new();
    let mut globals = Vec::new();
    let mut jobs: Vec<Mapped> = Vec::new();
    for s in &sections {
        if s.global {
            globals.extend(s.opts.iter().cloned());
            continue;
        }
        let opts: Vec<ini::Opt> = globals
            .iter()
            .chain(&s.opts)
            .chain(&sets)
            .cloned()
            .collect();
        jobs.push(map::job(&s.name, &s.at, &opts, &mut issues, &mut notes));
    }
    if jobs.is_empty() && issues.is_empty() {
        let at = Loc {
            file: path.display().to_string(),
            line: 1,
        };
        issues.push(Issue::fatal(at, "", "no job section in the file".into()));
    }
    // Every job has one (fio's default is 1); a seed only where given.
    let invalidate = one_setting(&jobs, &mut issues, "invalidate", |j| {
        let at = j.invalidate.1.clone().unwrap_or_else(|| j.at.clone());
        Some((u8::from(j.invalidate.0), at))
    })
    .is_none_or(|v| v == 1);
    let seed = one_setting(&jobs, &mut issues, "randseed", |j| j.seed.clone());
    let entries = groups(&jobs, &mut issues, &mut notes);
    if !issues.iter().any(|i| i.fatal) {
        for e in &entries {
            if let Err(err) = WorkloadSpec::parse(&e.spec) {
                let why = format!("job {}: {err:#}", e.jobs.join(", "));
                issues.push(Issue::fatal(e.at.clone(), "", why));
            }
        }
    }
    // A [global] option is the same issue in every job.
    let mut seen = Vec::new();
    issues.retain(|i| {
        let fresh = !seen.contains(i);
        if fresh {
            seen.push(i.clone());
        }
        fresh
    });
    if issues.iter().any(|i| i.fatal) || (!lenient && !issues.is_empty()) {
        return Err(issues);
    }
    let fresh_seed = jobs.iter().any(|j| {
        j.params
            .iter()
            .any(|(k, v)| *k == "randrepeat" && v == "false")
    });
    Ok(FioPlan {
        entries,
        notes,
        ignored: issues,
        invalidate,
        seed,
        fresh_seed,
    })
}

/// A setting fsarena takes once per run (`invalidate` → the cache policy, `randseed` →
/// the seed): refused where jobs give it different values.
fn one_setting<T: PartialEq + Copy + fmt::Display>(
    jobs: &[Mapped],
    issues: &mut Vec<Issue>,
    name: &str,
    of: impl Fn(&Mapped) -> Option<(T, Loc)>,
) -> Option<T> {
    let mut first: Option<(T, Loc)> = None;
    for j in jobs {
        let Some((v, at)) = of(j) else { continue };
        match &first {
            None => first = Some((v, at)),
            Some((f, f_at)) if *f != v => issues.push(Issue::fatal(
                at,
                &format!("{name}={v}"),
                format!("{name}={f} at {f_at}: fsarena takes one {name} for all the jobs of a run"),
            )),
            Some(_) => {}
        }
    }
    first.map(|(v, _)| v)
}

/// The jobs between two `stonewall`s run at once in fio: each such group becomes one
/// entry, which the job engine can run only when its jobs are alike.
fn groups(jobs: &[Mapped], issues: &mut Vec<Issue>, notes: &mut Vec<String>) -> Vec<Entry> {
    let mut groups: Vec<Vec<Mapped>> = Vec::new();
    for j in jobs {
        match groups.last_mut() {
            Some(g) if !j.stonewall => g.push(j.clone()),
            _ => groups.push(vec![j.clone()]),
        }
    }
    // A file an earlier group made is there, written, when a later group writes it: fio
    // overwrites it (it lays out only files missing or too short). Its size is known: a
    // later job's size=N% (or no size) is a share of it.
    let mut made: Vec<String> = Vec::new();
    let mut made_size: Vec<(String, u64)> = Vec::new();
    for g in &mut groups {
        for j in g.iter_mut() {
            let Some(name) = j.filename.as_ref().and_then(|o| o.value.clone()) else {
                continue;
            };
            if let Some((pct, at)) = j.size_share.clone() {
                share_of_made(j, &name, pct, at, &made_size, issues, notes);
            }
            let writes_only = j
                .params
                .iter()
                .any(|(k, v)| *k == "rw" && (v == "write" || v == "randwrite"));
            if made.contains(&name) && writes_only && !j.params.iter().any(|p| p.0 == "overwrite") {
                j.params.retain(|(k, _)| *k != "fallocate");
                j.params.push(("overwrite", "true".into()));
                let line = format!(
                    "job {} ({}): filename={name} is written by an earlier group in fio: \
                     fsarena lays it out written in full first (overwrite=1)",
                    j.name, j.at
                );
                if !notes.contains(&line) {
                    notes.push(line);
                }
            }
        }
        for j in g.iter() {
            if let Some(name) = j.filename.as_ref().and_then(|o| o.value.clone()) {
                let per_file = param(j, "size").and_then(|s| crate::size::parse_size(s).ok());
                let files = param(j, "nrfiles")
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(1);
                if let Some(bytes) = per_file.filter(|_| files == 1) {
                    made_size.push((name.clone(), bytes));
                }
                made.push(name);
            }
        }
    }
    groups.iter().map(|g| entry(g, issues, notes)).collect()
}

/// The value of the job parameter `key` of `j`.
fn param<'a>(j: &'a Mapped, key: &str) -> Option<&'a str> {
    j.params
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_str())
}

/// Sets the size of job `j`, `pct`% of the file `name` an earlier group made (`made`),
/// rounded down to whole blocks of its smallest size, as fio's `size=N%` (or no size) on
/// an existing file; refused when no earlier group made it.
fn share_of_made(
    j: &mut Mapped,
    name: &str,
    pct: u64,
    at: Loc,
    made: &[(String, u64)],
    issues: &mut Vec<Issue>,
    notes: &mut Vec<String>,
) {
    // The file is as large as the largest an earlier job laid it out to (fio extends a
    // file that is too short, and never shortens one).
    let Some(bytes) = made.iter().filter(|(n, _)| n == name).map(|m| m.1).max() else {
        let (option, why) = match pct {
            100 => (
                String::new(),
                format!(
                    "job {}: no size= (or filesize=), and filename={name} is no file an \
                     earlier group made: fio needs a size for a new file",
                    j.name
                ),
            ),
            _ => (
                format!("size={pct}%"),
                format!(
                    "a share of an existing file, and filename={name} is no file an earlier \
                     group made: fsarena lays out new files (give a size)"
                ),
            ),
        };
        issues.push(Issue::fatal(at, &option, why));
        return;
    };
    let least = param(j, "bs")
        .unwrap_or("4KiB")
        .split([',', '-'])
        .filter_map(|b| crate::size::parse_size(b.split(':').next()?).ok())
        .min()
        .unwrap_or(1)
        .max(1);
    let size = bytes * pct / 100 / least * least;
    if let Some(p) = j.params.iter_mut().find(|(k, _)| *k == "size") {
        p.1 = options::exact(size);
    }
    let of = match pct {
        100 => "no size: all".to_string(),
        _ => format!("size={pct}%"),
    };
    notes.push(format!(
        "job {} ({at}): {of} of filename={name}, which an earlier group made ({}), is {}, \
         whole blocks of {}, as fio",
        j.name,
        options::exact(bytes),
        options::exact(size),
        options::exact(least)
    ));
}

fn entry(group: &[Mapped], issues: &mut Vec<Issue>, notes: &mut Vec<String>) -> Entry {
    let first = &group[0];
    for j in &group[1..] {
        if let Some(at) = &j.new_group {
            // Reporting only: the jobs still run at once, as here.
            let line = format!(
                "{at}: new_group: no I/O changes: fio runs job {} at once with job {} and \
                 reports it apart; fsarena reports the jobs that run at once as one",
                j.name, first.name
            );
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
        if j.params != first.params {
            let diff: Vec<String> = j
                .params
                .iter()
                .filter(|p| !first.params.contains(p))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            issues.push(Issue::fatal(
                j.at.clone(),
                "",
                format!(
                    "job {} runs at once with job {} ({}) in fio but differs ({}): the job \
                     engine runs one kind of job per trial; add stonewall to run it after",
                    j.name,
                    first.name,
                    first.at,
                    if diff.is_empty() {
                        "in what it leaves out".into()
                    } else {
                        diff.join(", ")
                    }
                ),
            ));
        }
    }
    let numjobs: u64 = group.iter().map(|j| j.numjobs).sum();
    let named: Vec<&Mapped> = group.iter().filter(|j| j.filename.is_some()).collect();
    let mut common = false;
    if let Some(j) = named.first() {
        let o = j.filename.as_ref().expect("named");
        let sharing: u64 = named
            .iter()
            .filter(|k| k.filename.as_ref().map(|f| &f.value) == Some(&o.value))
            .map(|k| k.numjobs)
            .sum();
        if sharing > 1 && sharing == numjobs {
            common = true;
            notes.push(format!(
                "{}: {}: the group's {sharing} jobs share these files, each over all of \
                 them, as in fio (common_files=true)",
                o.at,
                o.text()
            ));
        } else if sharing > 1 {
            issues.push(Issue::approx(
                o.at.clone(),
                &o.text(),
                format!(
                    "in fio {sharing} of the {numjobs} jobs of this group share this file, \
                     each over all of it; fsarena's job engine shares files among all the \
                     jobs of a group or none"
                ),
                "each job gets its own files",
            ));
        }
    }
    // The group's job names, as reports call it, where the job engine takes them.
    let name = group
        .iter()
        .map(|j| j.name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    let named = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c));
    let mut items: Vec<String> = named.then(|| format!("name={name}")).into_iter().collect();
    items.extend(first.params.iter().map(|(k, v)| format!("{k}={v}")));
    if numjobs != 1 {
        items.push(format!("numjobs={numjobs}"));
    }
    if common {
        items.push("common_files=true".into());
    }
    Entry {
        spec: format!("job:{}", items.join(",")),
        jobs: group.iter().map(|j| j.name.clone()).collect(),
        at: first.at.clone(),
    }
}

/// The text of a job file: a regular file of at most [`MAX_JOB_FILE_BYTES`], in UTF-8.
pub fn read_job_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err("larger than 1 MiB".into());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

#[cfg(test)]
mod tests;
