//! pgbench's parameters and its named profiles: each profile answers one question a DBA
//! asks and sets the defaults of the parameters not given (docs/databases.md):
//! * **`commit-latency`** (the default): one client, a database that fits in memory, 30 s —
//!   one WAL flush per commit, so it measures the filesystem's fsync latency;
//! * **`steady`**: 8 clients on 2 threads with prepared statements, a minute of untimed
//!   warm-up, then 10 minutes timed with a checkpoint every minute, so that checkpoints
//!   fall inside the window again and again, as on a server that has been up for hours;
//! * **`io-bound`**: the steady load on a database of scale 40 (about 600 MiB of tables and
//!   indexes, 1.1 GB with the WAL and the rest of the cluster) with the
//!   server's processes limited to 192 MiB of memory, page cache included, and 32 MB of
//!   shared buffers, so that most reads go to the device (its read bytes per transaction
//!   show it); 30 s of warm-up, 2 minutes timed. On tmpfs the limit is not applied (its
//!   files are memory that a limit could only kill the server over), so tmpfs's lead is
//!   what keeping the whole database in memory buys.
//!
//! A parameter given wins over its profile's default; the parameters recorded with the
//! trial are the ones that ran.

use crate::error::usage;
use crate::workload::params::{param, Value};
use crate::workload::{ParamKind, ParamSpec, Params};
use anyhow::Result;

/// The tables and indexes pgbench makes per scale unit (what the transactions read):
/// `pgbench_accounts` is 13 MiB per 100,000 rows and its key 2.2 MiB (PostgreSQL 15).
const TABLES_PER_SCALE: u64 = 15 << 20;

/// A profile's defaults.
struct Defaults {
    scale: u64,
    clients: u64,
    jobs: u64,
    duration_s: f64,
    warmup_s: f64,
    protocol: &'static str,
    memory: Option<u64>,
    shared_buffers: Option<&'static str>,
    /// Server settings it adds unless `set=` names them.
    settings: &'static [&'static str],
}

/// The defaults of profile `name`.
fn defaults(name: &str) -> Defaults {
    let commit = Defaults {
        scale: 10,
        clients: 1,
        jobs: 1,
        duration_s: 30.0,
        warmup_s: 0.0,
        protocol: "simple",
        memory: None,
        shared_buffers: None,
        settings: &[],
    };
    let steady = Defaults {
        clients: 8,
        jobs: 2,
        duration_s: 600.0,
        warmup_s: 60.0,
        protocol: "prepared",
        settings: &["checkpoint_timeout=1min"],
        ..commit
    };
    match name {
        "steady" => steady,
        "io-bound" => Defaults {
            scale: 40,
            duration_s: 120.0,
            warmup_s: 30.0,
            memory: Some(192 << 20),
            shared_buffers: Some("32MiB"),
            ..steady
        },
        _ => commit,
    }
}

/// Fills the defaults the profile sets ([`crate::workload::WorkloadInfo::resolve`]).
pub fn resolve(p: &mut Params) -> Result<()> {
    let d = defaults(p.choice("profile"));
    let fill: [(&'static str, Value); 6] = [
        ("scale", Value::Count(d.scale)),
        ("clients", Value::Count(d.clients)),
        ("jobs", Value::Count(d.jobs)),
        ("duration", Value::Float(d.duration_s)),
        ("warmup", Value::Float(d.warmup_s)),
        ("protocol", Value::Choice(d.protocol.to_string())),
    ];
    for (name, v) in fill {
        if !p.given(name) {
            p.set(name, v);
        }
    }
    if let (false, Some(m)) = (p.given("memory"), d.memory) {
        p.set("memory", Value::Bytes(m));
    }
    if let (false, Some(b)) = (p.given("shared_buffers"), d.shared_buffers) {
        p.set("shared_buffers", Value::Text(b.to_string()));
    }
    let given = p.text("set").unwrap_or("").to_string();
    let mut items: Vec<String> = d
        .settings
        .iter()
        .filter(|s| {
            let name = s.split('=').next().unwrap_or("");
            !given.split(',').any(|g| g.trim().split('=').next() == Some(name))
        })
        .map(|s| s.to_string())
        .collect();
    if !given.trim().is_empty() {
        items.push(given);
    }
    p.set("set", Value::Text(items.join(",")));
    if p.choice("profile") == "io-bound" {
        let scale = p.count("scale").unwrap_or(0);
        let data = scale.saturating_mul(TABLES_PER_SCALE);
        if let Some(m) = p.bytes("memory").filter(|m| data < 2 * m) {
            return Err(usage(format!(
                "pgbench: profile=io-bound needs a database at least twice the memory limit: \
                 scale={scale} makes about {} MiB, memory={} MiB (raise scale or lower memory)",
                data >> 20,
                m >> 20
            )));
        }
    }
    Ok(())
}

/// The server settings a run may give, each a choice with `server` for the server's own
/// default.
const ON_OFF: &[&str] = &["server", "on", "off"];

pub const PARAMS: &[ParamSpec] = &[
    param(
        "profile",
        ParamKind::Choice(&["commit-latency", "steady", "io-bound"]),
        "commit-latency",
        "",
        "what the run answers (docs/databases.md); sets the defaults of the others",
    ),
    param(
        "scale",
        ParamKind::Count,
        "",
        "×100k rows",
        "pgbench -i -s: 100,000 accounts per unit (profile's: 10, io-bound 40)",
    ),
    param(
        "clients",
        ParamKind::Count,
        "",
        "clients",
        "pgbench -c: concurrent sessions (profile's: 1, steady and io-bound 8)",
    ),
    param(
        "jobs",
        ParamKind::Count,
        "",
        "threads",
        "pgbench -j: client threads (profile's: 1, steady and io-bound 2)",
    ),
    param(
        "duration",
        ParamKind::Float,
        "",
        "s",
        "pgbench -T: seconds the transactions are timed (30, 2m; profile's: 30, steady 10m, io-bound 2m)",
    ),
    param(
        "fsync",
        ParamKind::Choice(ON_OFF),
        "server",
        "",
        "server setting fsync (server: its default)",
    ),
    param(
        "synchronous_commit",
        ParamKind::Choice(&["server", "on", "off", "local", "remote_write", "remote_apply"]),
        "server",
        "",
        "server setting synchronous_commit",
    ),
    param(
        "wal_sync_method",
        ParamKind::Choice(&["server", "fsync", "fdatasync", "open_sync", "open_datasync"]),
        "server",
        "",
        "server setting wal_sync_method",
    ),
    param(
        "shared_buffers",
        ParamKind::Text,
        "server",
        "",
        "server setting shared_buffers: a size (128MiB), or server: its default",
    ),
    param(
        "full_page_writes",
        ParamKind::Choice(ON_OFF),
        "server",
        "",
        "server setting full_page_writes",
    ),
    param(
        "set",
        ParamKind::Text,
        "",
        "",
        "more server settings, quoted: set='checkpoint_timeout=1min,max_wal_size=4GB'",
    ),
    param(
        "warmup",
        ParamKind::Float,
        "",
        "s",
        "untimed transactions before the timed ones (profile's: 0 s, steady 1m, io-bound 30 s)",
    ),
    param(
        "protocol",
        ParamKind::Choice(&["simple", "prepared"]),
        "",
        "",
        "pgbench -M (profile's: simple, steady and io-bound prepared)",
    ),
    param(
        "memory",
        ParamKind::Size,
        "",
        "bytes",
        "memory limit of the server's processes, page cache included (a memory control \
         group; profile's: none, io-bound 192MiB; not on tmpfs)",
    ),
];
