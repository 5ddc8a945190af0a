//! SQLite through the linked library (rusqlite, bundled SQLite): a database file
//! `bench.db` in the work directory, loaded, then worked on by `connections` threads, each
//! with its own connection.
//!
//! Modes:
//! * **`tpcb`**: pgbench's TPC-B-like default script (PostgreSQL docs, "pgbench",
//!   `tpcb-like`): `load` is `pgbench -i` — `pgbench_branches` (1 per `scale`),
//!   `pgbench_tellers` (10 per `scale`), `pgbench_accounts` (100,000 per `scale`), all
//!   balances 0, and an empty `pgbench_history` — in one transaction; `run` is `pgbench -t
//!   transactions` per connection: each transaction draws `aid`, `tid`, `bid` and `delta`
//!   uniform as the builtin script does (`random(1, 100000 * :scale)`, `random(1, 10 *
//!   :scale)`, `random(1, :scale)`, `random(-5000, 5000)`) and runs `UPDATE
//!   pgbench_accounts`, `SELECT abalance`, `UPDATE pgbench_tellers`, `UPDATE
//!   pgbench_branches`, `INSERT INTO pgbench_history` between `BEGIN` and `COMMIT`.
//! * **`insert`**: `load` creates `t(id INTEGER PRIMARY KEY, k INTEGER, v BLOB)` with one
//!   secondary index on `k`, empty; `run` inserts `rows` rows (random `k`, 100 bytes of
//!   `--data` in `v`) in transactions of `batch` rows, the transactions dealt round-robin
//!   to the connections.
//! * **`read`**: `load` fills that table with `rows` rows in transactions of `batch`;
//!   `run` is `transactions` point selects per connection (`SELECT k, v FROM t WHERE id =
//!   ?`, `id` uniform over the rows), each in autocommit, each counted as a transaction.
//!   The run phase notes `db_bytes` and `fits_in_cache` (1 when the database file is
//!   smaller than MemAvailable: then a warm run reads from the page cache, not the disk).
//!
//! Every connection sets, at open: `page_size` (before the first table), `journal_mode`,
//! `synchronous`, `cache_size` (as `-KiB`) and a busy timeout of 10 s. The parameters are
//! stored with the trial; each phase notes the library's version as
//! `sqlite_version_number` (`sqlite3_libversion_number`, 3053002 for 3.53.2).
//!
//! Recorded: in `run` each transaction is one
//! [`Op::Transaction`](crate::probe::recorder::Op::Transaction) timed from `BEGIN` to the
//! end of `COMMIT`, so the phase's latency percentiles are commit latencies and its
//! `ops_per_s` is transactions per second (`tx/s`). `load` records rows (`rows/s`) in
//! pieces of up to 10,000 rows, the `COMMIT` in the last piece of its transaction
//! (`insert`'s, which only creates the table, in seconds).
//! `fsyncs_per_tx` on each phase = fsyncs SQLite made during it ÷ its transactions, counted
//! exactly by a VFS shim (`vfs.rs`): each `xSync` is one `fsync`/`fdatasync`, plus the
//! directory fsync of a newly opened journal or WAL. WAL with `synchronous=full` gives
//! about 1 per transaction (the WAL at each commit; checkpoints add a few), `delete`
//! journals 3–5 (journal, its directory, the database), `synchronous=off` none. The
//! connections are closed after the phase: the checkpoint of the last WAL connection to
//! close is neither timed nor counted. The counts equal strace's and the `sqlite3`
//! shell's for the same work (docs/validation/2026-11-workloads.md, "sqlite"). The bundled
//! SQLite is built with `HAVE_FDATASYNC` (`.cargo/config.toml`), as distributions build
//! theirs: it syncs with `fdatasync`, as Debian's shell does.
//!
//! Differs from pgbench: SQLite has one writer at a time, so with `connections` > 1 the
//! write transactions serialize on the database lock (they start with `BEGIN IMMEDIATE`,
//! which takes it at once and waits in the busy handler, instead of pgbench's `BEGIN`,
//! which in SQLite could deadlock two readers that both want to write); a transaction
//! whose wait ran out (`SQLITE_BUSY` after 10 s) is rolled back and retried, and the run
//! notes `busy_retries`. Keys are `INTEGER PRIMARY KEY` (SQLite's rowid, no separate
//! index), fillers are blank strings of pgbench's `char(n)` width, `mtime` is
//! `CURRENT_TIMESTAMP` text; the load is one transaction without the `VACUUM` and the
//! primary-key step of `pgbench -i`. The random numbers come from xoshiro256++ seeded
//! with the trial seed and the connection's index, so repetitions do the same work.
//! `--sync end` adds one syncfs at the end of each connection's work (inside the timing);
//! durability within a phase is SQLite's own, set by `synchronous`.

mod vfs;
mod work;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::workload::bonnie_files::hash;
use crate::workload::params::param;
use work::RunFn;
use crate::workload::{spec, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{Context, Result};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The database's file name in the work directory.
pub const DB_FILE: &str = "bench.db";
/// How long a connection waits for the database lock before `SQLITE_BUSY`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// pgbench's accounts per `scale`; tellers are 10 and branches 1 per `scale`.
const ACCOUNTS_PER_SCALE: u64 = 100_000;
const TELLERS_PER_SCALE: u64 = 10;
/// Largest `scale` (100,000 accounts of ~100 bytes each: 10 MB per unit).
const MAX_SCALE: u64 = 100_000;
/// Most connections.
const MAX_CONNECTIONS: u64 = 64;
/// Bytes of `v` in each row of `insert` and `read`.
const PAYLOAD: usize = 100;
/// Rows recorded together in `load`.
const LOAD_PIECE: u64 = 10_000;
/// Key of the random streams.
const TAG: u64 = 0x7371_6c69_7465_3430;

const PARAMS: &[ParamSpec] = &[
    param(
        "mode",
        ParamKind::Choice(&["tpcb", "insert", "read"]),
        "tpcb",
        "",
        "tpcb = pgbench's TPC-B-like script; insert = bulk inserts with one index; \
         read = point selects",
    ),
    param(
        "journal",
        ParamKind::Choice(&["wal", "delete", "truncate"]),
        "wal",
        "",
        "PRAGMA journal_mode (SQLite's own default is delete)",
    ),
    param(
        "synchronous",
        ParamKind::Choice(&["full", "normal", "off"]),
        "full",
        "",
        "PRAGMA synchronous (full is SQLite's default)",
    ),
    param(
        "page_size",
        ParamKind::Size,
        "4096",
        "bytes",
        "PRAGMA page_size: a power of two from 512 to 64KiB",
    ),
    param(
        "cache_size",
        ParamKind::Size,
        "2000KiB",
        "bytes",
        "page cache per connection, whole KiB (PRAGMA cache_size=-KiB; SQLite's default \
         -2000)",
    ),
    param(
        "scale",
        ParamKind::Count,
        "1",
        "×",
        "tpcb: pgbench's scale, 1 branch, 10 tellers and 100000 accounts each (≈10 MB)",
    ),
    param(
        "rows",
        ParamKind::Count,
        "100000",
        "rows",
        "insert: rows the run inserts; read: rows the load fills",
    ),
    param(
        "batch",
        ParamKind::Count,
        "1000",
        "rows",
        "insert (run) and read (load): rows per transaction",
    ),
    param(
        "transactions",
        ParamKind::Count,
        "1000",
        "tx",
        "tpcb and read: transactions per connection (pgbench -t); in read one point \
         select each",
    ),
    param(
        "connections",
        ParamKind::Count,
        "1",
        "connections",
        "threads, each with its own connection (busy_timeout 10 s), 1 to 64",
    ),
];

const LOAD: PhaseSpec = spec("load", PhaseKind::Write, Primary::OpsPerS, "rows/s");
/// `load` of `mode=insert`: one transaction creating the empty table, timed in seconds.
const LOAD_SCHEMA: PhaseSpec = spec("load", PhaseKind::Meta, Primary::Seconds, "tx/s");
const RUN: PhaseSpec = spec("run", PhaseKind::Write, Primary::OpsPerS, "tx/s");
/// `run` of `mode=read`: only reads, so `--cache warm` runs it once unmeasured first.
const RUN_READ: PhaseSpec = spec("run", PhaseKind::Read, Primary::OpsPerS, "tx/s");
const PHASES: &[PhaseSpec] = &[LOAD, RUN];

/// Fsyncs, the database's size, and what a run waited for.
pub const FIGURES: &[Figure] = &[
    Figure::neither("fsyncs", "fsyncs"),
    Figure::neither("fsyncs_per_tx", "fsyncs/tx"),
    Figure::neither("db_bytes", "bytes"),
    Figure::neither("sqlite_version_number", "version"),
    Figure::higher("rows_per_s", "rows/s").on(&["run"]),
    Figure::neither("fits_in_cache", "yes=1").on(&["run"]),
    Figure::neither("busy_retries", "retries").on(&["run"]),
];

/// The `sqlite` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "sqlite",
    about: "SQLite (linked): pgbench's TPC-B-like transactions, bulk inserts or point \
            selects; tx/s, commit latency, fsyncs per transaction",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: Some(param_applies),
    after_merge: None,
    resolve: None,
    database: Some(super::DatabaseRole::Engine("run")),
    programs: &[],
    phase_time_knobs: &[
        super::Knob::new("transactions", &["run"], 0.0),
        super::Knob::new("scale", &["load"], 0.0),
    ],
    build,
};

/// Whether parameter `name` applied to a trial with `params`: each mode reads only some
/// of `scale`, `rows`, `batch` and `transactions`.
pub fn param_applies(params: &std::collections::BTreeMap<String, String>, name: &str) -> bool {
    let mode = params.get("mode").map_or("tpcb", String::as_str);
    match name {
        "scale" => mode == "tpcb",
        "rows" | "batch" => mode != "tpcb",
        "transactions" => mode != "insert",
        _ => true,
    }
}

/// What the workload does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Tpcb,
    Insert,
    Read,
}

/// The validated `sqlite` configuration.
#[derive(Clone, Debug)]
pub struct Sqlite {
    mode: Mode,
    journal: String,
    synchronous: String,
    page_size: u64,
    cache_kib: u64,
    scale: u64,
    rows: u64,
    batch: u64,
    transactions: u64,
    connections: u64,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Sqlite::from_params(p)?))
}

impl Sqlite {
    /// Checks the parameters; a violation is a usage error (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        let count = |k| p.count(k).expect("counts have defaults");
        let mode = match p.choice("mode") {
            "insert" => Mode::Insert,
            "read" => Mode::Read,
            _ => Mode::Tpcb,
        };
        let page_size = p.bytes("page_size").expect("page_size has a default");
        let cache = p.bytes("cache_size").expect("cache_size has a default");
        let s = Self {
            mode,
            journal: p.choice("journal").to_string(),
            synchronous: p.choice("synchronous").to_string(),
            page_size,
            cache_kib: cache / 1024,
            scale: count("scale"),
            rows: count("rows"),
            batch: count("batch"),
            transactions: count("transactions"),
            connections: count("connections"),
        };
        let problem = if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
            format!("page_size={page_size}: give a power of two from 512 to 65536 bytes")
        } else if cache < 1024 || cache % 1024 != 0 {
            format!("cache_size={cache} bytes: give whole KiB, at least 1KiB")
        } else if s.scale == 0 || s.scale > MAX_SCALE {
            format!("scale={}: give 1 to {MAX_SCALE}", s.scale)
        } else if s.rows == 0 || s.batch == 0 || s.transactions == 0 {
            "rows, batch and transactions must be at least 1".to_string()
        } else if s.connections == 0 || s.connections > MAX_CONNECTIONS {
            format!(
                "connections={}: give 1 to {MAX_CONNECTIONS}",
                s.connections
            )
        } else if s.connections.checked_mul(s.transactions).is_none_or(|n| n > crate::workload::params::MAX_COUNT) {
            format!(
                "connections={} × transactions={}: at most 10^12 in all",
                s.connections, s.transactions
            )
        } else {
            return Ok(s);
        };
        Err(usage(format!("sqlite: {problem}")))
    }

    /// The engine as data: the bundled SQLite's version and the pragmas set that are not
    /// SQLite's defaults (`journal_mode=delete`, `synchronous=full`, `page_size=4096`,
    /// `cache_size=-2000`).
    fn engine(&self) -> crate::result::Engine {
        let mut e = crate::result::Engine {
            name: "SQLite".into(),
            version: rusqlite::version().to_string(),
            ..Default::default()
        };
        for (k, v, default) in [
            ("journal_mode", self.journal.clone(), "delete"),
            ("synchronous", self.synchronous.clone(), "full"),
            ("page_size", self.page_size.to_string(), "4096"),
            ("cache_size", format!("-{}", self.cache_kib), "-2000"),
        ] {
            if v != default {
                e.settings.insert(k.to_string(), v);
            }
        }
        // WAL with synchronous=normal syncs the WAL only at checkpoints: the last commits
        // may roll back at a power cut (SQLite's documentation of the pragma).
        if self.synchronous == "off" || (self.synchronous == "normal" && self.journal == "wal") {
            e.not_durable.push(format!("synchronous={}", self.synchronous));
        }
        e
    }

    /// A connection to `db` through the counting VFS, with the configured pragmas.
    fn open(&self, db: &Path) -> Result<Connection> {
        let c = Connection::open_with_flags_and_vfs(db, OpenFlags::default(), vfs::NAME)
            .with_context(|| format!("sqlite: opening {}", db.display()))?;
        c.busy_timeout(BUSY_TIMEOUT)?;
        c.pragma_update(None, "page_size", self.page_size as i64)?;
        // Before journal_mode: switching a new database to WAL writes it, synced as set.
        c.pragma_update(None, "synchronous", &self.synchronous)?;
        c.pragma_update(None, "cache_size", -(self.cache_kib as i64))?;
        let mode: String =
            c.query_row(&format!("PRAGMA journal_mode={}", self.journal), [], |r| {
                r.get(0)
            })?;
        if mode != self.journal {
            anyhow::bail!(
                "sqlite: journal_mode={} was not taken on {} (it is {mode})",
                self.journal,
                db.display()
            );
        }
        Ok(c)
    }

    /// Transactions the load commits.
    fn load_transactions(&self) -> u64 {
        match self.mode {
            Mode::Read => self.rows.div_ceil(self.batch),
            Mode::Tpcb | Mode::Insert => 1,
        }
    }

    /// Runs phase `spec` with one worker per connection, each opening its own (untimed,
    /// before [`Worker::ready`]) and handing it to `f`; the connections are closed after
    /// the phase, so the WAL checkpoint of the last close is not timed. Returns the fsyncs
    /// counted during the phase.
    fn phase_on<F>(
        &self,
        cx: &mut TrialContext,
        spec: &PhaseSpec,
        workers: u64,
        syncs: &vfs::SyncCounter,
        f: F,
    ) -> Result<u64>
    where
        F: Fn(&mut Worker, &Connection) -> Result<()> + Sync,
    {
        let db = cx.workdir().join(DB_FILE);
        let parked = Mutex::new(Vec::new());
        let before = syncs.get();
        let ran = cx.phase(spec, workers as usize, |w| {
            let conn = self.open(&db)?;
            let out = f(w, &conn);
            parked.lock().unwrap_or_else(|e| e.into_inner()).push(conn);
            out
        });
        let n = syncs.get() - before;
        drop(parked);
        ran.map(|_| n)
    }

    /// Notes what every phase gets: its fsyncs, per transaction, and the database's size.
    fn note_common(&self, cx: &mut TrialContext, phase: &str, fsyncs: u64, txs: u64) {
        cx.note_phase(phase, "fsyncs", fsyncs as f64);
        if txs > 0 {
            cx.note_phase(phase, "fsyncs_per_tx", fsyncs as f64 / txs as f64);
        }
        let db = cx.workdir().join(DB_FILE);
        if let Ok(m) = std::fs::metadata(&db) {
            cx.note_phase(phase, "db_bytes", m.len() as f64);
        }
        cx.note_phase(phase, "sqlite_version_number", f64::from(version_number()));
    }
}

/// The linked SQLite's version as a number (3053002 for 3.53.2).
pub fn version_number() -> i32 {
    // SAFETY: a pure function of the library, callable at any time.
    unsafe { rusqlite::ffi::sqlite3_libversion_number() }
}

impl Workload for Sqlite {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        cx.set_engine(self.engine());
        let syncs = vfs::SyncCounter::watch(&cx.workdir().join(DB_FILE))?;
        let seed = cx.seed();
        let load = if self.mode == Mode::Insert {
            &LOAD_SCHEMA
        } else {
            &LOAD
        };
        let n = self.phase_on(cx, load, 1, &syncs, |w, c| self.load(w, c, seed))?;
        self.note_common(cx, "load", n, self.load_transactions());
        let db_bytes = std::fs::metadata(cx.workdir().join(DB_FILE)).map_or(0, |m| m.len());
        let busy = AtomicU64::new(0);
        let dir = cx.workdir().to_path_buf();
        let (spec, run): (&PhaseSpec, RunFn) = match self.mode {
            Mode::Tpcb => (&RUN, Sqlite::tpcb),
            Mode::Insert => (&RUN, Sqlite::insert),
            Mode::Read => (&RUN_READ, Sqlite::select),
        };
        let workers = match self.mode {
            Mode::Insert => self.connections.min(self.rows.div_ceil(self.batch)),
            _ => self.connections,
        };
        let n = self.phase_on(cx, spec, workers, &syncs, |w, c| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(hash(seed ^ TAG, w.idx as u64));
            run(self, w, c, &mut rng, &busy, workers)?;
            if spec.kind == PhaseKind::Read {
                return Ok(());
            }
            w.end_fs(&dir).context("sqlite: syncfs at the end")
        })?;
        let txs = cx.phases().last().map_or(0, |p| p.ops);
        self.note_common(cx, "run", n, txs);
        let retries = busy.load(Ordering::Relaxed);
        if retries > 0 {
            cx.note("busy_retries", retries as f64);
        }
        match self.mode {
            Mode::Insert => {
                if let Some(s) = cx.phases().last().map(|p| p.wall_s).filter(|&s| s > 0.0) {
                    cx.note("rows_per_s", self.rows as f64 / s);
                }
            }
            Mode::Read => {
                let avail = crate::probe::sys::meminfo_bytes("MemAvailable");
                if let Some(avail) = avail {
                    cx.note("fits_in_cache", f64::from(u8::from(db_bytes < avail)));
                }
            }
            Mode::Tpcb => {}
        }
        Ok(())
    }

    fn data_bytes(&self) -> Option<u64> {
        // A lower bound: the rows' payload alone (pgbench's accounts ~100 bytes each).
        Some(match self.mode {
            Mode::Tpcb => self.scale * ACCOUNTS_PER_SCALE * 100,
            Mode::Insert | Mode::Read => self.rows * PAYLOAD as u64,
        })
    }
}

#[cfg(test)]
mod tests;
