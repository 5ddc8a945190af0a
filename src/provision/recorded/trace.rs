//! What the block layer saw of a recording's loop device, for the pessimistic log
//! (issue 55): the kernel's block tracepoints, read from a tracing instance of fsarena's
//! own while the recording runs.
//!
//! The write log ([`super::log`]) is in the order the recorder served requests, and a
//! flush covers everything served before it. Two things make that optimistic, and the
//! trace shows both:
//!
//! * **Writes in flight.** A flush only promises the writes that had *completed* when it
//!   was issued. A write issued before the flush and completed after it may have been
//!   served first; the log then puts it before the flush. From the trace, each flush
//!   request's issue and the writes issued and not yet completed at that moment.
//! * **FUA.** The loop device has no FUA, so the block layer sends a FUA write as the write
//!   and a flush after it. On a disk with FUA only that write is durable when it
//!   completes; the flush after it covers the other writes that completed meanwhile too.
//!   From the trace, which writes the filesystem marked FUA (`block_bio_queue`), and which
//!   flushes served no request for a flush before data (`PREFLUSH`) since the previous one:
//!   those are a FUA write's flush after it, and cover that write alone.
//!
//! [`Trace::uncovered`] maps both onto the log: per flush point, the writes logged before
//! it that it does not cover, which a crash state may then leave out
//! ([`super::states::plan`]). A recording whose trace cannot be read or does not match the
//! log keeps the optimistic log, and says why.

use super::log::{Kind, Record};
use crate::state::{Resource, State};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Where the kernel's tracing filesystem is mounted, tried in turn.
const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
/// The events traced, all in the `block` group.
const EVENTS: [&str; 3] = ["block_bio_queue", "block_rq_issue", "block_rq_complete"];
/// Each CPU's trace buffer, KiB (about 150,000 events of a recording).
const BUFFER_KB: u32 = 16384;
/// What the instances fsarena makes are called: this prefix, a pid and a number.
pub const PREFIX: &str = "fsarena-";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A tracing instance of fsarena's own, tracing one block device (in the state file
/// before it exists; removed on drop).
pub struct Tracer {
    dir: PathBuf,
    state: Arc<State>,
    record: Resource,
}

/// Whether `name` is an instance name fsarena makes (`fsarena-PID-N`).
pub fn is_ours(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

/// The instances directory of the tracing filesystem, when it is mounted.
fn instances() -> Option<PathBuf> {
    ROOTS
        .iter()
        .map(|r| Path::new(r).join("instances"))
        .find(|p| p.is_dir())
}

/// Removes instance `name` (an [`is_ours`] name); `Ok(true)` when it was there.
pub fn remove(name: &str) -> Result<bool> {
    if !is_ours(name) {
        bail!("{name} is not a tracing instance of fsarena");
    }
    let Some(dir) = instances().map(|d| d.join(name)) else {
        return Ok(false);
    };
    if !dir.exists() {
        return Ok(false);
    }
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    std::fs::remove_dir(&dir).with_context(|| format!("removing {}", dir.display()))?;
    Ok(true)
}

impl Tracer {
    /// Starts tracing the block device `device` (`/dev/loopN`).
    pub fn start(state: &Arc<State>, device: &str) -> Result<Tracer> {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(device)
            .with_context(|| format!("reading {device}"))?
            .rdev();
        // The kernel's own dev_t, as the tracepoints print and filter it.
        let dev = (libc::major(rdev) << 20) | libc::minor(rdev);
        let root = instances().context(
            "the tracing filesystem is not mounted (as root: mount -t tracefs nodev \
             /sys/kernel/tracing)",
        )?;
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed) + 1
        );
        let record = Resource::Trace {
            instance: name.clone(),
        };
        state.add(record.clone())?;
        let dir = root.join(&name);
        if let Err(e) = std::fs::create_dir(&dir) {
            let _ = state.remove(&record);
            return Err(e).with_context(|| format!("creating {}", dir.display()));
        }
        let t = Tracer {
            dir,
            state: Arc::clone(state),
            record,
        };
        let set = |file: &str, value: &str| {
            let p = t.dir.join(file);
            std::fs::write(&p, value).with_context(|| format!("writing {value} to {}", p.display()))
        };
        set("trace_clock", "mono")?;
        set("buffer_size_kb", &BUFFER_KB.to_string())?;
        // Keep the first events when the buffer fills (the loss is then counted).
        set("options/overwrite", "0")?;
        for e in EVENTS {
            set(
                &format!("events/block/{e}/filter"),
                &format!("dev == {dev}"),
            )?;
            set(&format!("events/block/{e}/enable"), "1")?;
        }
        set("tracing_on", "1")?;
        crate::cmd::record(&format!("(tracefs) {} traces {device}", t.dir.display()));
        Ok(t)
    }

    /// Stops tracing and reads what was traced; fails when events were lost.
    pub fn finish(self) -> Result<Trace> {
        std::fs::write(self.dir.join("tracing_on"), "0").context("stopping the trace")?;
        let mut lost = 0u64;
        if let Ok(cpus) = std::fs::read_dir(self.dir.join("per_cpu")) {
            for cpu in cpus.flatten() {
                let stats = std::fs::read_to_string(cpu.path().join("stats")).unwrap_or_default();
                lost += stats
                    .lines()
                    .filter(|l| l.starts_with("overrun:") || l.starts_with("dropped events:"))
                    .filter_map(|l| l.rsplit(' ').next()?.trim().parse::<u64>().ok())
                    .sum::<u64>();
            }
        }
        if lost > 0 {
            bail!("the block trace lost {lost} events (its buffer filled)");
        }
        let text = std::fs::read_to_string(self.dir.join("trace")).context("reading the trace")?;
        Ok(Trace::parse(&text))
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        let name = self.dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if remove(name).is_ok() {
            let _ = self.state.remove(&self.record);
        }
    }
}

/// What one traced event was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// A bio the filesystem submitted.
    Queue,
    /// A request handed to the driver.
    Issue,
    /// A request completed.
    Complete,
}

/// One event of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub what: What,
    /// On the monotonic clock, nanoseconds (the trace prints microseconds).
    pub at_ns: u64,
    /// It asks for a flush before its data (`PREFLUSH`).
    pub preflush: bool,
    /// A flush request.
    pub flush: bool,
    /// It writes (or discards) data.
    pub write: bool,
    /// It asks for its data to be durable on completion (`FUA`).
    pub fua: bool,
    pub sector: u64,
    pub sectors: u64,
}

/// The events of a trace, in the order of their time.
#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<Event>,
}

/// What [`Trace::uncovered`] found.
#[derive(Debug, Default, PartialEq)]
pub struct Uncovered {
    /// Per prefix boundary (the index just after a flush), the writes logged before it
    /// that no flush up to it covers, ascending.
    pub pending: BTreeMap<usize, Vec<usize>>,
    /// Flushes issued while writes were in flight, and those writes (log records).
    pub flushes_in_flight: u64,
    pub writes_in_flight: u64,
    /// Writes the filesystem marked FUA, the flushes that only followed one, and the other
    /// writes such a flush did not cover (log records).
    pub fua_writes: u64,
    pub fua_flushes: u64,
    pub beside_fua: u64,
}

impl Trace {
    /// Reads the text of a tracing instance's `trace` file (comment lines and events of
    /// other kinds are skipped).
    pub fn parse(text: &str) -> Trace {
        Trace {
            events: text.lines().filter_map(parse_line).collect(),
        }
    }

    /// The writes of `records` that the flushes after them do not cover (module docs);
    /// an error when the trace and the log disagree.
    pub fn uncovered(&self, records: &[Record]) -> Result<Uncovered> {
        let seen = self.flushes()?;
        let log_flushes: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].kind == Kind::Flush)
            .collect();
        let mut out = Uncovered::default();
        // Each traced flush is the log's flush served between its issue and completion.
        let mut at_log: BTreeMap<usize, &Seen> = BTreeMap::new();
        for s in &seen {
            let f = log_flushes
                .iter()
                .copied()
                .find(|&f| within(records[f].at_ns, s.issue_ns, s.complete_ns));
            let Some(f) = f else {
                bail!(
                    "a flush issued at {} ns reached no flush of the log",
                    s.issue_ns
                );
            };
            at_log.insert(f, s);
        }
        let mut pending: Vec<usize> = Vec::new();
        let mut previous = 0;
        for &f in &log_flushes {
            let Some(s) = at_log.get(&f) else {
                // A flush the trace did not see (not through the loop device): it covers
                // everything served before it.
                pending.clear();
                previous = f + 1;
                continue;
            };
            let in_flight: Vec<usize> = s
                .in_flight
                .iter()
                .flat_map(|r| records_of(records, r, 0..f))
                .collect();
            if !in_flight.is_empty() {
                out.flushes_in_flight += 1;
                out.writes_in_flight += in_flight.len() as u64;
            }
            if s.fua_only {
                out.fua_flushes += 1;
                let fua: Vec<usize> = s
                    .fua
                    .iter()
                    .flat_map(|r| records_of(records, r, previous..f))
                    .collect();
                let beside: Vec<usize> = (previous..f)
                    .filter(|&i| records[i].kind != Kind::Flush && !fua.contains(&i))
                    .collect();
                out.beside_fua += beside.len() as u64;
                pending.retain(|i| !fua.contains(i));
                pending.extend(beside);
            } else {
                pending.clear();
            }
            pending.extend(in_flight);
            pending.sort_unstable();
            pending.dedup();
            if !pending.is_empty() {
                out.pending.insert(f + 1, pending.clone());
            }
            previous = f + 1;
        }
        out.fua_writes = self
            .events
            .iter()
            .filter(|e| e.what == What::Queue && e.write && e.fua)
            .count() as u64;
        Ok(out)
    }

    /// The flush requests, each with the writes in flight at its issue and, for one that
    /// only followed FUA writes, those writes.
    fn flushes(&self) -> Result<Vec<Seen>> {
        let mut reqs: Vec<Req> = Vec::new();
        let mut in_flight: Vec<usize> = Vec::new();
        let mut fua_bios: Vec<(u64, u64)> = Vec::new();
        let mut preflush = false;
        let mut since: Vec<usize> = Vec::new();
        let mut seen: Vec<Seen> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for e in &self.events {
            match e.what {
                What::Queue => {
                    preflush |= e.preflush;
                    if e.write && e.fua && e.sectors > 0 {
                        fua_bios.push((e.sector, e.sectors));
                    }
                }
                What::Issue if e.flush => {
                    let fua: Vec<Req> = since.iter().map(|&i| reqs[i]).filter(|r| r.fua).collect();
                    seen.push(Seen {
                        issue_ns: e.at_ns,
                        complete_ns: u64::MAX,
                        in_flight: in_flight.iter().map(|&i| reqs[i]).collect(),
                        fua_only: !preflush && !fua.is_empty(),
                        fua,
                    });
                    open.push(seen.len() - 1);
                    preflush = false;
                    since.clear();
                }
                What::Complete if e.flush => {
                    if open.is_empty() {
                        bail!("a flush completed at {} ns that was not issued", e.at_ns);
                    }
                    let k = open.remove(0);
                    seen[k].complete_ns = e.at_ns;
                }
                What::Issue if e.write && e.sectors > 0 => {
                    let fua = match fua_bios.iter().position(|b| b.0 == e.sector) {
                        Some(k) => {
                            fua_bios.remove(k);
                            true
                        }
                        None => false,
                    };
                    reqs.push(Req {
                        sector: e.sector,
                        sectors: e.sectors,
                        issue_ns: e.at_ns,
                        complete_ns: u64::MAX,
                        fua,
                    });
                    in_flight.push(reqs.len() - 1);
                }
                What::Complete if e.write => {
                    let end = e.sector + e.sectors.max(1);
                    in_flight.retain(|&i| {
                        let done = (e.sector..end).contains(&reqs[i].sector);
                        if done {
                            reqs[i].complete_ns = e.at_ns;
                            since.push(i);
                        }
                        !done
                    });
                }
                _ => {}
            }
        }
        // The requests as they ended (a copy was taken at each flush's issue).
        for s in &mut seen {
            for r in s.in_flight.iter_mut().chain(s.fua.iter_mut()) {
                if let Some(done) = reqs
                    .iter()
                    .find(|q| q.sector == r.sector && q.issue_ns == r.issue_ns)
                {
                    r.complete_ns = done.complete_ns;
                }
            }
        }
        Ok(seen)
    }
}

/// A write request.
#[derive(Clone, Copy, Debug)]
struct Req {
    sector: u64,
    sectors: u64,
    issue_ns: u64,
    complete_ns: u64,
    fua: bool,
}

/// A flush request as the trace saw it.
#[derive(Debug)]
struct Seen {
    issue_ns: u64,
    complete_ns: u64,
    in_flight: Vec<Req>,
    /// It served no `PREFLUSH` since the previous flush's issue, only FUA writes: these.
    fua_only: bool,
    fua: Vec<Req>,
}

/// Whether `t` is in `[from, to]`, the trace's microseconds widened to whole ones.
fn within(t: u64, from: u64, to: u64) -> bool {
    t + 1000 > from && t <= to.saturating_add(1000)
}

/// The log's write records in `range` that request `r` was served as: inside its bytes,
/// served while it was in flight.
fn records_of(records: &[Record], r: &Req, range: std::ops::Range<usize>) -> Vec<usize> {
    let (lo, hi) = (r.sector * 512, (r.sector + r.sectors) * 512);
    range
        .filter(|&i| {
            let x = &records[i];
            x.kind != Kind::Flush
                && x.offset >= lo
                && x.offset + x.len <= hi
                && within(x.at_ns, r.issue_ns, r.complete_ns)
        })
        .collect()
}

/// One line of a `trace` file, when it is an event of [`EVENTS`]:
/// `TASK-PID [CPU] FLAGS SECS.MICROS: block_rq_issue: 7,0 WS 4096 () 2048 + 8 ...`.
fn parse_line(line: &str) -> Option<Event> {
    let (head, rest) = line.split_once(": block_")?;
    let (name, body) = rest.split_once(": ")?;
    let what = match name {
        "bio_queue" => What::Queue,
        "rq_issue" => What::Issue,
        "rq_complete" => What::Complete,
        _ => return None,
    };
    let stamp = head.rsplit(' ').next()?;
    let (secs, micros) = stamp.split_once('.')?;
    let at_ns = secs.parse::<u64>().ok()? * 1_000_000_000 + micros.parse::<u64>().ok()? * 1000;
    let mut words = body.split_whitespace();
    let _dev = words.next()?;
    let rwbs = words.next()?.as_bytes();
    let (sector, sectors) = body.split_once(" + ").map(|(a, b)| {
        let s = a.rsplit(' ').next().and_then(|s| s.parse().ok());
        let n = b.split(' ').next().and_then(|n| n.parse().ok());
        (s, n)
    })?;
    let preflush = rwbs.len() >= 2 && rwbs[0] == b'F';
    let op = *rwbs.get(usize::from(preflush))?;
    let fua = rwbs.get(usize::from(preflush) + 1) == Some(&b'F');
    Some(Event {
        what,
        at_ns,
        preflush,
        flush: op == b'F',
        write: matches!(op, b'W' | b'D' | b'N'),
        fua,
        sector: sector.unwrap_or(0),
        sectors: sectors.unwrap_or(0),
    })
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
