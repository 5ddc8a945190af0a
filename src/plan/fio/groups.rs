//! The jobs of a job file grouped as fio runs them (between two `stonewall`s, at once),
//! each group one [`Entry`] of the job engine.

use super::map::Mapped;
use super::options;
use super::{Entry, Issue, Loc};

/// The jobs between two `stonewall`s run at once in fio: each such group becomes one
/// entry, its jobs alike one kind, the kinds at once (`with`).
pub(super) fn groups(
    jobs: &[Mapped],
    issues: &mut Vec<Issue>,
    notes: &mut Vec<String>,
) -> Vec<Entry> {
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

/// fio's `wait_for=X`: the job starts when every job named X is done. That is a
/// `stonewall` before it when the jobs before it in its group are all X's and every job
/// after it in the group waits too (else they would start with X's): so it runs, with a
/// note; otherwise it is refused (`--fio-lenient` runs the job at once with the others).
pub(super) fn wait_for(jobs: &mut [Mapped], issues: &mut Vec<Issue>, notes: &mut Vec<String>) {
    for i in 0..jobs.len() {
        let Some(o) = jobs[i].wait_for.clone() else {
            continue;
        };
        let x = o.value.clone().unwrap_or_default();
        let start = (0..i).rev().find(|&k| jobs[k].stonewall).unwrap_or(0);
        let before = &jobs[start..i];
        let end = (i + 1..jobs.len())
            .find(|&k| jobs[k].stonewall)
            .unwrap_or(jobs.len());
        let after_wait = jobs[i + 1..end].iter().all(|j| j.wait_for.is_some());
        if jobs[i].stonewall
            || (!before.is_empty() && before.iter().all(|j| j.name == x) && after_wait)
        {
            jobs[i].stonewall = true;
            notes.push(format!(
                "{}: {}: job {} starts when job {x} is done, as in fio: fsarena runs it after \
                 the jobs before it (stonewall), which are job {x}'s",
                o.at,
                o.text(),
                jobs[i].name
            ));
            continue;
        }
        issues.push(Issue::approx(
            o.at.clone(),
            &o.text(),
            format!(
                "fio starts job {} when job {x} is done, while other jobs of its group run on: \
                 fsarena runs a job after others only after its whole group (stonewall)",
                jobs[i].name
            ),
            "runs it at once with them",
        ));
    }
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
    }
    // Jobs alike are one kind; the job engine runs the kinds at once (`with`).
    let mut kinds: Vec<Vec<&Mapped>> = Vec::new();
    for j in group {
        match kinds.iter_mut().find(|k| k[0].params == j.params) {
            Some(k) => k.push(j),
            None => kinds.push(vec![j]),
        }
    }
    let files_of = unlike(&kinds, issues, notes);
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
    let whose = match kinds.len() {
        1 => "the group's",
        _ => "the kind's",
    };
    items.extend(kind_items(&kinds[0], None, whose, notes));
    if kinds.len() > 1 {
        let others: Vec<String> = kinds[1..]
            .iter()
            .zip(&files_of[1..])
            .map(|(k, of)| kind_items(k, of.as_ref(), whose, notes).join(","))
            .collect();
        items.push(format!("with='{}'", others.join(";")));
    }
    Entry {
        spec: format!("job:{}", items.join(",")),
        jobs: group.iter().map(|j| j.name.clone()).collect(),
        at: first.at.clone(),
    }
}

/// Checks the kinds of one group (jobs that run at once but differ) and notes how they
/// run: at once, each kind with files of its own, after one ramp.
/// Each kind's `files_of`, where it has one.
fn unlike(
    kinds: &[Vec<&Mapped>],
    issues: &mut Vec<Issue>,
    notes: &mut Vec<String>,
) -> Vec<Option<String>> {
    let Some((first, others)) = kinds.split_first() else {
        return Vec::new();
    };
    let ramp = |j: &Mapped| param(j, "ramp").map(str::to_string);
    for k in others {
        let j = k[0];
        if ramp(j) != ramp(first[0]) {
            issues.push(Issue::fatal(
                j.at.clone(),
                "",
                format!(
                    "job {} runs at once with job {} ({}) in fio but ramps for another time: \
                     the job engine ramps the jobs of one group together; give them one \
                     ramp_time, or add stonewall to run it after",
                    j.name, first[0].name, first[0].at
                ),
            ));
        }
    }
    // A kind whose jobs all name a file an earlier kind names works on that kind's
    // (files_of); other files named in two kinds would be two files here.
    let mut files_of = vec![None; kinds.len()];
    for (b, kb) in kinds.iter().enumerate().skip(1) {
        let named = |j: &&Mapped| j.filename.as_ref().and_then(|o| o.value.clone());
        let names: Vec<Option<String>> = kb.iter().map(named).collect();
        for (j, name) in kb.iter().zip(&names) {
            let Some(name) = name else { continue };
            let earlier = kinds[..b].iter().enumerate().find_map(|(a, ka)| {
                let set = sets(ka)
                    .iter()
                    .position(|s| s.name.as_ref() == Some(name))?;
                let start: u64 = sets(ka)[..set].iter().map(|s| s.jobs).sum();
                Some((a, start, ka[0]))
            });
            let Some((a, start, other)) = earlier else {
                continue;
            };
            if names.iter().all(|n| n.as_ref() == Some(name)) {
                files_of[b] = Some(format!("{}:{start}", a + 1));
                continue;
            }
            let apart = kb
                .iter()
                .zip(&names)
                .find(|(_, n)| n.as_ref() != Some(name))
                .map_or("", |(o, _)| o.name.as_str());
            let at = j.filename.as_ref().map_or(&j.at, |o| &o.at);
            issues.push(Issue::fatal(
                at.clone(),
                &format!("filename={name}"),
                format!(
                    "job {} and job {} ({}) differ and run at once on one file in fio, \
                     while job {apart}, alike to job {0}, works on another file: the job \
                     engine puts jobs on another kind's file only when all the jobs alike \
                     name it",
                    j.name, other.name, other.at
                ),
            ));
        }
    }
    if others.is_empty() {
        return files_of;
    }
    let names = |k: &Vec<&Mapped>| {
        k.iter()
            .map(|j| j.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let list: Vec<String> = kinds.iter().map(|k| format!("({})", names(k))).collect();
    notes.push(format!(
        "{}: jobs that differ run at once in fio: {} kinds {}, in one trial, each kind on \
         files of its own or on an earlier kind's (with=…); their figures are the group's, as fio's group_reporting",
        first[0].at,
        kinds.len(),
        list.join(" ")
    ));
    files_of
}

/// A set of jobs of one kind that work on one set of files: the jobs that name one
/// filename, or one clone of a job that names none.
struct Set<'a> {
    at: Option<&'a Loc>,
    name: Option<String>,
    jobs: u64,
    names: Vec<&'a str>,
}

/// The sets of a kind's jobs, in order of their first job (the job engine's `file_sets`).
fn sets<'a>(kind: &[&'a Mapped]) -> Vec<Set<'a>> {
    let mut sets: Vec<Set> = Vec::new();
    for j in kind {
        let Some(o) = &j.filename else {
            sets.extend((0..j.numjobs).map(|_| Set {
                at: None,
                name: None,
                jobs: 1,
                names: vec![j.name.as_str()],
            }));
            continue;
        };
        match sets
            .iter_mut()
            .find(|s| s.name.is_some() && s.name == o.value)
        {
            Some(s) => {
                s.jobs += j.numjobs;
                s.names.push(&j.name);
            }
            None => sets.push(Set {
                at: Some(&o.at),
                name: o.value.clone(),
                jobs: j.numjobs,
                names: vec![&j.name],
            }),
        }
    }
    sets
}

/// The job workload's parameters for one kind of a group: jobs alike, each clone of a job
/// that names no filename on files of its own, jobs that name one filename sharing it;
/// all on an earlier kind's files with `files_of`. `whose` says whose jobs they are in
/// notes ("the group's").
fn kind_items(
    kind: &[&Mapped],
    files_of: Option<&String>,
    whose: &str,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let first = kind[0];
    let numjobs: u64 = kind.iter().map(|j| j.numjobs).sum();
    let mut items: Vec<String> = first
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if numjobs != 1 {
        items.push(format!("numjobs={numjobs}"));
    }
    if let Some(of) = files_of {
        items.push(format!("files_of={of}"));
        return items;
    }
    // Jobs that name one filename share its files in fio, each over all of them; each
    // clone of a job that names none works on files of its own.
    let sets = sets(kind);
    let sizes: Vec<u64> = sets.iter().map(|s| s.jobs).collect();
    let common = sizes.len() == 1 && sizes[0] > 1;
    let file_sets = !common && sizes.iter().any(|&n| n > 1);
    for s in sets.iter().filter(|s| s.jobs > 1) {
        let (at, name, n) = (
            s.at.expect("named"),
            s.name.as_deref().unwrap_or(""),
            s.jobs,
        );
        let jobs = s.names.join(", ");
        notes.push(match common {
            true => format!(
                "{at}: filename={name}: {whose} {n} jobs ({jobs}) share these files, each over \
                 all of them, as in fio (common_files=true)",
            ),
            false => format!(
                "{at}: filename={name}: {n} of {whose} {numjobs} jobs ({jobs}) share these \
                 files, each over all of them, as in fio (file_sets={})",
                sizes
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        });
    }
    if common {
        items.push("common_files=true".into());
    }
    if file_sets {
        let list: Vec<String> = sizes.iter().map(u64::to_string).collect();
        items.push(format!("file_sets={}", list.join(",")));
    }
    items
}
