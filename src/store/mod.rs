//! The result store: every run in a SQLite database (`./fsarena.db` by default, `--db`).
//!
//! Schema (version in `PRAGMA user_version`, migrated forward on open):
//! * `runs`: id, times, status, fsarena version, command line, host, policy (JSON), the
//!   writing process's pid and host (to tell an interrupted run from a running one);
//! * `targets`: per run and target, the target's description (mkfs and mount options,
//!   device rate, …) as JSON;
//! * `trials`: per run, target, workload, repetition: status, error, parameters,
//!   provisioning figures, peak RSS, the path of its log file (schema 2), the trial's
//!   elapsed seconds (schema 3);
//! * `runs.plan` and `runs.plan_hash` (schema 4): the canonical text of the expanded plan
//!   and its hash ([`crate::plan::Plan::canonical`]), which `--resume` compares;
//! * `runs.resumed_at` (schema 7): when `--resume` took the run up again (JSON list);
//! * `trials.disturbance` (schema 8): what competed with the trial (JSON,
//!   [`crate::probe::disturb::Disturbance`]); NULL in older rows;
//! * `phases`: per trial and phase: the headline figures as columns (wall_s, ops, bytes,
//!   ops_per_s, mb_per_s, cpu_pct) and the whole phase result as JSON — per-operation HDR
//!   histogram buckets, the time series, device counters, flags and extra figures.
//!
//! Each trial is written in one transaction as soon as it finishes, so a run killed half
//! way keeps every completed trial; a run still marked `running` whose process is gone is
//! reported as `interrupted`.
//!
//! Journal: SQLite's rollback journal (`journal_mode=DELETE`), not WAL, and no memory
//! mapping. WAL's index is a file (`-shm`) every connection maps into memory; when that
//! file cannot be written through the mapping (`chattr +i`, truncated, a full
//! filesystem), the kernel kills the process with SIGBUS — a whole run lost to its
//! database. With a rollback journal every failure is an error a run survives (its trials
//! stay in the journal, [`crate::journal`]). Concurrency stays: writers take the lock for
//! one short transaction (`BEGIN IMMEDIATE`, waiting up to 30 s), readers wait only while
//! a trial commits. A database an older fsarena left in WAL mode is switched back when no
//! other process has it open.

use crate::error::usage;
use crate::result::{PhaseResult, RunResult, TargetInfo, Trial};
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

mod fault;
mod procs;
mod resume;

/// The default database, relative to the working directory.
pub const DEFAULT_DB: &str = "fsarena.db";

/// The schema version this build writes.
const SCHEMA_VERSION: i64 = 8;
const _: () = assert!(SCHEMA_VERSION as usize == MIGRATIONS.len());

const MIGRATIONS: &[&str] = &[
    // 0 → 1
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        fsarena_version TEXT NOT NULL,
        command_line TEXT NOT NULL,
        host TEXT NOT NULL,
        policy TEXT NOT NULL,
        can_drop_caches INTEGER NOT NULL,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL
    );
    CREATE TABLE targets (
        run_id TEXT NOT NULL REFERENCES runs(id),
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        info TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id),
        target TEXT NOT NULL,
        workload TEXT NOT NULL,
        label TEXT NOT NULL,
        params TEXT NOT NULL,
        rep INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        provision TEXT NOT NULL,
        peak_rss_bytes INTEGER NOT NULL
    );
    CREATE INDEX trials_by_run ON trials(run_id);
    CREATE TABLE phases (
        id INTEGER PRIMARY KEY,
        trial_id INTEGER NOT NULL REFERENCES trials(id),
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        wall_s REAL NOT NULL,
        ops INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        ops_per_s REAL NOT NULL,
        mb_per_s REAL NOT NULL,
        cpu_pct REAL NOT NULL,
        result TEXT NOT NULL
    );
    CREATE INDEX phases_by_trial ON phases(trial_id);",
    // 1 → 2: the trial's log file (the `command` workload's output).
    "ALTER TABLE trials ADD COLUMN log TEXT;",
    // 2 → 3: how long the whole trial took (suite estimates).
    "ALTER TABLE trials ADD COLUMN elapsed_s REAL;",
    // 3 → 4: the expanded plan, to resume a run with the same plan only.
    "ALTER TABLE runs ADD COLUMN plan TEXT; ALTER TABLE runs ADD COLUMN plan_hash TEXT;",
    // 4 → 5: MPI runs' mode and hosts, and each rank's figures.
    procs::MIGRATION,
    // 5 → 6: the filesystems of the suite this machine could not make, and why (JSON).
    "ALTER TABLE runs ADD COLUMN left_out TEXT;",
    // 6 → 7: when a run was resumed (JSON list of times).
    "ALTER TABLE runs ADD COLUMN resumed_at TEXT;",
    // 7 → 8: what competed with each trial (JSON, `busy` flag).
    "ALTER TABLE trials ADD COLUMN disturbance TEXT;",
];

/// An open result database.
pub struct Store {
    conn: Connection,
    /// Where it is, and its file's (device, inode) when opened: a database deleted or
    /// replaced during a run is told from one that kept what was written.
    path: std::path::PathBuf,
    identity: Option<(u64, u64)>,
}

/// The (device, inode) of the file at `path`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// How long one finished trial took, for duration estimates.
#[derive(Clone, Debug)]
pub struct TrialTime {
    pub target: String,
    pub workload: String,
    pub params: std::collections::BTreeMap<String, String>,
    pub elapsed_s: f64,
}

/// How long one phase of a stored trial took (`--phase-time` scales from these).
#[derive(Clone, Debug)]
pub struct PhaseTime {
    pub target: String,
    pub workload: String,
    pub params: std::collections::BTreeMap<String, String>,
    pub phase: String,
    pub wall_s: f64,
}

/// One line of `fsarena history`.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub id: String,
    pub started_at: String,
    pub hostname: String,
    pub status: String,
    pub targets: Vec<String>,
    pub workloads: Vec<String>,
    pub trials: u64,
}

/// What a file at a database path is, judged without writing anything.
#[derive(Debug, PartialEq)]
enum Found {
    /// No file: `run` creates one.
    Missing,
    /// A file of zero length: `run` may make it a database.
    Empty,
    /// An fsarena database of this schema version.
    Fsarena(i64),
}

/// Looks at `path` before SQLite touches it: a FIFO or device is not opened (it could
/// block), a file that is not an SQLite database or is another application's is refused
/// (opening it normally would add fsarena's tables, switch it to WAL, or leave `-wal` and
/// `-shm` files beside it). The identity check creates no file. Errors name the file and
/// are usage errors (exit 2).
fn probe(path: &Path) -> Result<Found> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                return Err(usage(format!(
                    "result database {shown}: the directory {} does not exist",
                    dir.display()
                )));
            }
            locks_work(path)?;
            return Ok(Found::Missing);
        }
        Err(e) => return Err(usage(format!("result database {shown}: {e}"))),
    };
    if !meta.is_file() {
        return Err(usage(format!(
            "result database {shown}: not a regular file (a directory, FIFO or device)"
        )));
    }
    locks_work(path)?;
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    let mut head = [0u8; 20];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| usage(format!("result database {shown}: {e}")))?;
    if read < 20 || &head[..16] != b"SQLite format 3\0" {
        return Err(usage(format!(
            "{shown} is not an SQLite database, so not fsarena's: give --db another file"
        )));
    }
    let foreign = |why: String| usage(format!("{shown} is {why}: give --db another file"));
    // A database in use in WAL mode has what a reader needs beside it, and the newest
    // tables may still be in its -wal file (a run that just made it): read it as any reader
    // would. A database with a rollback journal (bytes 18 and 19 of its header are 1) is
    // read under a shared lock, which creates no file. Otherwise the file alone holds
    // everything, read without locks or companions.
    let companion = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p).is_file()
    };
    let rollback = head[18] == 1 && head[19] == 1;
    let ro = format!("file:{}?mode=ro", uri_path(path));
    let immutable = format!("file:{}?immutable=1", uri_path(path));
    let uri = if (companion("-wal") && companion("-shm")) || rollback {
        &ro
    } else {
        &immutable
    };
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let look = |uri: &str| -> rusqlite::Result<(i64, bool)> {
        let conn = Connection::open_with_flags(uri, flags)?;
        // Under a shared lock: a run's commit may hold the file for a moment.
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let runs: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
            [],
            |r| r.get(0),
        )?;
        Ok((version, runs == 1))
    };
    // A `-journal` beside a rollback database is a live writer's (then the shared lock
    // waits for its commit) or a killed writer's, which a read-only connection cannot roll
    // back (SQLITE_READONLY_ROLLBACK): only then is the file read as it is, without locks.
    let (version, has_runs) = match look(uri) {
        Err(rusqlite::Error::SqliteFailure(e, _))
            if rollback && e.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK =>
        {
            look(&immutable)
        }
        other => other,
    }
    .map_err(|e| foreign(format!("not a readable SQLite database ({e})")))?;
    if !has_runs || version < 1 {
        return Err(foreign(format!(
            "an SQLite database of another application (no fsarena tables, schema version \
             {version})"
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(usage(format!(
            "{shown} has schema version {version}, newer than this fsarena knows \
             ({SCHEMA_VERSION}); use a newer fsarena"
        )));
    }
    Ok(Found::Fsarena(version))
}

/// Fails, naming the file, its filesystem and what to do, when files beside the database
/// cannot be locked as SQLite locks it ([`fault::locking_problem`]): without this, SQLite
/// says "disk I/O error", or "database is locked" after waiting its 30 s busy timeout.
fn locks_work(path: &Path) -> Result<()> {
    match fault::locking_problem(path) {
        Some(why) => Err(usage(format!("result database {}: {why}", path.display()))),
        None => Ok(()),
    }
}

/// `path` for an SQLite `file:` URI: absolute, with `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ if b.is_ascii() && !b.is_ascii_control() => out.push(*b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Store {
    /// Opens the database at `path` for `run`: creates it when missing (or an empty file),
    /// migrates an fsarena database of an older schema; refuses anything else untouched. A
    /// new database is created mode 0600 (its `-wal` and `-shm` files take the same mode):
    /// results say what was run where, and are no one else's to read.
    pub fn open(path: &Path) -> Result<Self> {
        probe(path)?;
        Self::connect(path)
    }

    /// Opens a file [`probe`] accepted.
    fn connect(path: &Path) -> Result<Self> {
        create_private(path);
        let conn = Connection::open(path).map_err(|e| {
            let seen = fault::Seen {
                opened: None,
                errno: None,
            };
            fault::explain(
                path,
                seen,
                anyhow::Error::from(e).context("opening the result database"),
            )
        })?;
        let setup = (|| -> Result<()> {
            rollback_journal(&conn)?;
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA mmap_size=0;")?;
            Ok(())
        })();
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
            identity: identity(path),
        };
        setup
            .and_then(|_| store.migrate().context("migrating the schema"))
            .map_err(|e| store.explain(e.context("opening the result database")))?;
        Ok(store)
    }

    /// `e`, from a write, with the file and its cause ([`fault::explain`]).
    fn explain(&self, e: anyhow::Error) -> anyhow::Error {
        let seen = fault::Seen {
            opened: self.identity,
            errno: fault::os_errno(&self.conn),
        };
        fault::explain(&self.path, seen, e)
    }

    /// Opens an existing database only to read it (the estimates of `list` and `plan
    /// check`): never creates, migrates or switches its journal. Fails when the file is
    /// missing or its schema is not this fsarena's.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        use rusqlite::OpenFlags;
        if probe(path)? != Found::Fsarena(SCHEMA_VERSION) {
            bail!(
                "{}: not an fsarena database of this version",
                path.display()
            );
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("opening the result database {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            bail!(
                "{}: schema version {version}, this fsarena reads {SCHEMA_VERSION}",
                path.display()
            );
        }
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            identity: identity(path),
        })
    }

    /// The elapsed time of every successful trial run on `hostname` that recorded one,
    /// newest first.
    pub fn trial_times(&self, hostname: &str) -> Result<Vec<TrialTime>> {
        let mut q = self.conn.prepare(
            "SELECT t.target, t.workload, t.params, t.elapsed_s FROM trials t \
             JOIN runs r ON r.id = t.run_id \
             WHERE r.hostname = ?1 AND t.status = 'ok' AND t.elapsed_s IS NOT NULL \
             ORDER BY t.id DESC",
        )?;
        let rows = q
            .query_map([hostname], |r| {
                Ok(TrialTime {
                    target: r.get(0)?,
                    workload: r.get(1)?,
                    params: json(r, 2)?,
                    elapsed_s: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Every phase of this host's successful trials, newest first.
    pub fn phase_times(&self, hostname: &str) -> Result<Vec<PhaseTime>> {
        let mut q = self.conn.prepare(
            "SELECT t.target, t.workload, t.params, p.name, p.wall_s FROM phases p \
             JOIN trials t ON t.id = p.trial_id JOIN runs r ON r.id = t.run_id \
             WHERE r.hostname = ?1 AND t.status = 'ok' ORDER BY t.id DESC, p.position",
        )?;
        let rows = q
            .query_map([hostname], |r| {
                Ok(PhaseTime {
                    target: r.get(0)?,
                    workload: r.get(1)?,
                    params: json(r, 2)?,
                    phase: r.get(3)?,
                    wall_s: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Opens the database at `path` for reading stored runs: unlike [`Self::open`], a missing
    /// file is an error (a reading command does not create databases), naming the path.
    /// A file of another application, or an empty one, is refused untouched; fsarena's own
    /// database of an older schema is migrated forward (the one change a reading command
    /// makes, to fsarena's file only).
    pub fn open_existing(path: &Path) -> Result<Self> {
        match probe(path)? {
            Found::Missing => Err(usage(format!(
                "no result database at {} (`fsarena run` creates it; --db names another)",
                path.display()
            ))),
            Found::Empty => Err(usage(format!(
                "{} is an empty file, not a result database (`fsarena run` makes one)",
                path.display()
            ))),
            Found::Fsarena(_) => Self::connect(path),
        }
    }

    /// Brings the schema to [`SCHEMA_VERSION`]. The version is read inside an immediate
    /// (write-locked) transaction, so two processes opening a new database at once — a run
    /// and a `history` — do not both create the tables.
    fn migrate(&mut self) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            bail!(
                "the database has schema version {version}, newer than this fsarena knows \
                 ({SCHEMA_VERSION}); use a newer fsarena"
            );
        }
        for v in version..SCHEMA_VERSION {
            tx.execute_batch(MIGRATIONS[v as usize])?;
            tx.pragma_update(None, "user_version", v + 1)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Records a run that starts (status `running`) with its targets.
    pub fn begin_run(&self, run: &RunResult, targets: &[TargetInfo]) -> Result<()> {
        self.begin_run_here(run, targets)
            .map_err(|e| self.explain(e))
    }

    fn begin_run_here(&self, run: &RunResult, targets: &[TargetInfo]) -> Result<()> {
        self.conn.execute(
            "INSERT INTO runs (id, started_at, status, fsarena_version, command_line, host, \
             policy, can_drop_caches, pid, hostname, left_out, resumed_at) \
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                run.run_id,
                run.started_at,
                run.fsarena_version,
                serde_json::to_string(&run.command_line)?,
                serde_json::to_string(&run.host)?,
                serde_json::to_string(&run.policy)?,
                run.can_drop_caches,
                std::process::id(),
                run.host.hostname,
                (!run.left_out.is_empty())
                    .then(|| serde_json::to_string(&run.left_out))
                    .transpose()?,
                (!run.resumed_at.is_empty())
                    .then(|| serde_json::to_string(&run.resumed_at))
                    .transpose()?,
            ],
        )?;
        self.save_targets_here(&run.run_id, targets)
    }

    /// Replaces the run's target descriptions (after calibration they know more).
    pub fn save_targets(&self, run_id: &str, targets: &[TargetInfo]) -> Result<()> {
        self.save_targets_here(run_id, targets)
            .map_err(|e| self.explain(e))
    }

    fn save_targets_here(&self, run_id: &str, targets: &[TargetInfo]) -> Result<()> {
        for (i, t) in targets.iter().enumerate() {
            self.conn.execute(
                "INSERT OR REPLACE INTO targets (run_id, position, name, info) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, i as i64, t.name, serde_json::to_string(t)?],
            )?;
        }
        Ok(())
    }

    /// Stores one finished trial and its phases in one transaction, replacing an earlier
    /// trial of the same target, workload label and repetition (a resumed run's rerun of a
    /// failed trial), so each trial is stored exactly once.
    pub fn add_trial(&mut self, run_id: &str, trial: &Trial) -> Result<()> {
        let stored = self.add_trial_here(run_id, trial);
        stored.map_err(|e| self.explain(e))
    }

    fn add_trial_here(&mut self, run_id: &str, trial: &Trial) -> Result<()> {
        // Immediate: the write lock is waited for at the start (the busy timeout), never
        // refused half way because another run's transaction began first.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let same =
            "SELECT id FROM trials WHERE run_id = ?1 AND target = ?2 AND label = ?3 AND rep = ?4";
        tx.execute(
            &format!("DELETE FROM phases WHERE trial_id IN ({same})"),
            params![run_id, trial.target, trial.label, trial.rep],
        )?;
        procs::delete(
            &tx,
            same,
            params![run_id, trial.target, trial.label, trial.rep],
        )?;
        tx.execute(
            "DELETE FROM trials WHERE run_id = ?1 AND target = ?2 AND label = ?3 AND rep = ?4",
            params![run_id, trial.target, trial.label, trial.rep],
        )?;
        tx.execute(
            "INSERT INTO trials (run_id, target, workload, label, params, rep, status, error, \
             provision, peak_rss_bytes, log, elapsed_s, disturbance) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run_id,
                trial.target,
                trial.workload,
                trial.label,
                serde_json::to_string(&trial.params)?,
                trial.rep,
                trial.status,
                trial.error,
                serde_json::to_string(&trial.provision)?,
                trial.peak_rss_bytes as i64,
                trial.log,
                trial.elapsed_s,
                trial
                    .disturbance
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
            ],
        )?;
        let trial_id = tx.last_insert_rowid();
        procs::save(&tx, trial_id, trial)?;
        for (i, p) in trial.phases.iter().enumerate() {
            tx.execute(
                "INSERT INTO phases (trial_id, position, name, wall_s, ops, bytes, ops_per_s, \
                 mb_per_s, cpu_pct, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    trial_id,
                    i as i64,
                    p.name,
                    p.wall_s,
                    p.ops as i64,
                    p.bytes as i64,
                    p.ops_per_s,
                    p.mb_per_s,
                    p.cpu_pct,
                    serde_json::to_string(p)?,
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Marks the run finished with `status`.
    pub fn finish_run(&self, run: &RunResult) -> Result<()> {
        (|| -> Result<()> {
            self.save_targets_here(&run.run_id, &run.targets)?;
            self.conn.execute(
                // The policy too: `--reps auto` knows its repetitions only at the end.
                "UPDATE runs SET status = ?2, finished_at = ?3, policy = ?4 WHERE id = ?1",
                params![
                    run.run_id,
                    run.status,
                    run.finished_at,
                    serde_json::to_string(&run.policy)?
                ],
            )?;
            Ok(())
        })()
        .map_err(|e| self.explain(e))
    }

    /// Ends run `run_id` as `status` when it is still recorded as running (its process was
    /// killed before it could say how it ended); whether it was.
    pub fn end_unfinished(&self, run_id: &str, status: &str) -> Result<bool> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1 AND status = 'running'",
                params![run_id, status, chrono::Utc::now().to_rfc3339()],
            )
            .map_err(|e| self.explain(e.into()))?;
        Ok(n > 0)
    }

    /// Stores a whole run at once (a journal or a `--json` document read back, test
    /// fixtures). A run already stored gains the trials it lacks and each trial is stored
    /// once: importing twice changes nothing.
    pub fn import(&mut self, run: &RunResult) -> Result<()> {
        let known: bool = self
            .conn
            .query_row(
                "SELECT count(*) > 0 FROM runs WHERE id = ?1",
                [&run.run_id],
                |r| r.get(0),
            )
            .map_err(|e| self.explain(e.into()))?;
        if known {
            self.save_targets(&run.run_id, &run.targets)?;
        } else {
            self.begin_run(run, &run.targets)?;
        }
        for t in &run.trials {
            self.add_trial(&run.run_id, t)?;
        }
        self.finish_run(run)
    }

    /// The database's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fails when the database file was deleted or replaced since it was opened: what was
    /// written since went to a file nobody can open again.
    pub fn still_there(&self) -> Result<()> {
        if self.identity.is_some() && identity(&self.path) != self.identity {
            bail!(
                "the database file {} was deleted or replaced during the run",
                self.path.display()
            );
        }
        Ok(())
    }

    /// The id a user's `RUN` names: `last`, an id, or a unique prefix of one, or else a
    /// unique end of one (`fe31`, as `compare` labels runs).
    pub fn resolve(&self, run: &str) -> Result<String> {
        if run == "last" {
            return self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| usage("the result database holds no runs yet"));
        }
        if run.trim().is_empty() {
            return Err(usage(
                "an empty run id matches every run; give a run id (see `fsarena history`) or last",
            ));
        }
        // A prefix of the id, or else its end (`fe31`, as `compare` labels runs).
        let mut ids: Vec<String> = Vec::new();
        for cond in [
            "substr(id, 1, length(?1)) = ?1",
            "substr(id, -length(?1)) = ?1",
        ] {
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT id FROM runs WHERE {cond} ORDER BY id"))?;
            ids = stmt
                .query_map([run], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            if !ids.is_empty() {
                break;
            }
        }
        match ids.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(usage(format!(
                "no run '{}' in the result database (see `fsarena history`)",
                crate::workload::params::echo(run)
            ))),
            many => Err(usage(format!(
                "'{run}' matches {} runs ({}); give more of the id",
                many.len(),
                many.join(", ")
            ))),
        }
    }

    /// A run's status as shown: `running` only while its process lives, else `interrupted`.
    fn shown_status(status: String, pid: i64, hostname: &str) -> String {
        if status != "running" {
            return status;
        }
        let here = crate::host::host_info().hostname == hostname;
        let alive = here && Path::new(&format!("/proc/{pid}")).exists();
        if alive {
            status
        } else {
            "interrupted".into()
        }
    }

    /// Every run, newest first.
    pub fn history(&self) -> Result<Vec<RunSummary>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, hostname, status, pid FROM runs ORDER BY started_at DESC, id DESC",
        )?;
        let stmt_cols = columns_of(&stmt);
        let rows: Vec<(String, String, String, String, i64)> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged("runs", &stmt_cols, e))?;
        let mut out = Vec::new();
        for (id, started_at, hostname, status, pid) in rows {
            let status = Self::shown_status(status, pid, &hostname);
            let targets = self.strings(
                "SELECT name FROM targets WHERE run_id = ?1 ORDER BY position",
                &id,
            )?;
            let workloads = self.strings(
                "SELECT label FROM trials WHERE run_id = ?1 GROUP BY label ORDER BY min(id)",
                &id,
            )?;
            let trials: i64 = self.conn.query_row(
                "SELECT count(*) FROM trials WHERE run_id = ?1",
                [&id],
                |r| r.get(0),
            )?;
            out.push(RunSummary {
                id,
                started_at,
                hostname,
                status,
                targets,
                workloads,
                trials: trials as u64,
            });
        }
        Ok(out)
    }

    fn strings(&self, sql: &str, arg: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(sql)?;
        let v = stmt
            .query_map([arg], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }

    /// Loads a stored run (`RUN` as for [`Self::resolve`]), summaries recomputed.
    pub fn load(&self, run: &str) -> Result<RunResult> {
        let id = self.resolve(run)?;
        let mut runs = self.conn.prepare(
            "SELECT started_at, finished_at, status, fsarena_version, command_line, host, policy, \
             can_drop_caches, pid, hostname, left_out, resumed_at, plan FROM runs WHERE id = ?1",
        )?;
        let runs_cols = columns_of(&runs);
        let (mut result, pid, hostname): (RunResult, i64, String) = runs
            .query_row([&id], |r| {
                let run = RunResult {
                    fsarena_version: r.get(3)?,
                    run_id: id.clone(),
                    started_at: r.get(0)?,
                    finished_at: r.get(1)?,
                    status: r.get(2)?,
                    command_line: json(r, 4)?,
                    host: json(r, 5)?,
                    policy: json(r, 6)?,
                    can_drop_caches: r.get(7)?,
                    targets: Vec::new(),
                    trials: Vec::new(),
                    summaries: Vec::new(),
                    mpi: None,
                    left_out: json_or_default(r, 10)?,
                    resumed_at: json_or_default(r, 11)?,
                    planned_trials: r
                        .get::<_, Option<String>>(12)?
                        .and_then(|p| planned_trials(&p)),
                };
                Ok((run, r.get(8)?, r.get(9)?))
            })
            .map_err(|e| self.damaged("runs", &runs_cols, e))?;
        result.status = Self::shown_status(std::mem::take(&mut result.status), pid, &hostname);
        // `--reps auto` planned at most `max_reps`; once it decided, the repetitions it ran
        // are the plan.
        if let (Some(planned), Some(d)) = (result.planned_trials, &result.policy.auto_reps) {
            if !d.outcome.is_empty() && d.max_reps > 0 {
                result.planned_trials = Some(planned / d.max_reps * result.policy.reps);
            }
        }
        result.mpi = self.mpi_of(&id)?;
        let mut targets = self
            .conn
            .prepare("SELECT info FROM targets WHERE run_id = ?1 ORDER BY position")?;
        let targets_cols = columns_of(&targets);
        result.targets = targets
            .query_map([&id], |r| json(r, 0))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged("targets", &targets_cols, e))?;
        let mut trials = self.conn.prepare(
            "SELECT id, target, workload, label, params, rep, status, error, provision, \
             peak_rss_bytes, log, elapsed_s, disturbance FROM trials WHERE run_id = ?1 \
             ORDER BY id",
        )?;
        let trials_cols = columns_of(&trials);
        let rows: Vec<(i64, Trial)> = trials
            .query_map([&id], |r| {
                let trial = Trial {
                    target: r.get(1)?,
                    workload: r.get(2)?,
                    label: r.get(3)?,
                    params: json(r, 4)?,
                    rep: r.get(5)?,
                    status: r.get(6)?,
                    error: r.get(7)?,
                    provision: json(r, 8)?,
                    phases: Vec::new(),
                    peak_rss_bytes: r.get::<_, i64>(9)? as u64,
                    log: r.get(10)?,
                    elapsed_s: r.get(11)?,
                    ranks: Vec::new(),
                    disturbance: json_or_default(r, 12)?,
                };
                Ok((r.get(0)?, trial))
            })?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged("trials", &trials_cols, e))?;
        let mut phases = self
            .conn
            .prepare("SELECT result FROM phases WHERE trial_id = ?1 ORDER BY position")?;
        let phases_cols = columns_of(&phases);
        for (trial_id, mut trial) in rows {
            trial.phases = phases
                .query_map([trial_id], |r| json::<PhaseResult>(r, 0))?
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.damaged("phases", &phases_cols, e))?;
            trial.ranks = procs::load(&self.conn, trial_id)?;
            result.trials.push(trial);
        }
        result.summaries = crate::stats::summarize(&result.trials);
        Ok(result)
    }
}

impl Store {
    /// A stored value that cannot be read as what fsarena wrote: a usage error (exit 2:
    /// the input is bad, nothing failed) naming the file, the table and the column.
    fn damaged(&self, table: &str, columns: &[String], e: rusqlite::Error) -> anyhow::Error {
        use rusqlite::Error as E;
        let (i, why) = match &e {
            E::FromSqlConversionFailure(i, ty, err) => (*i, format!("a {ty} value: {err}")),
            E::InvalidColumnType(i, _, ty) => (*i, format!("a {ty} value of the wrong type")),
            E::IntegralValueOutOfRange(i, v) => (*i, format!("{v}, out of range")),
            _ => return e.into(),
        };
        let column = columns.get(i).map_or("?", String::as_str);
        usage(format!(
            "result database {}: table {table}, column {column} holds {}; the file is damaged \
             or was not written by this fsarena",
            self.conn.path().unwrap_or("?"),
            crate::workload::params::echo(&why)
        ))
    }
}

/// The column names of a statement's result, for [`Store::damaged`].
fn columns_of(stmt: &rusqlite::Statement) -> Vec<String> {
    stmt.column_names().iter().map(|c| c.to_string()).collect()
}

/// Column `i` of a row, a JSON text, parsed.
fn json<T: serde::de::DeserializeOwned>(r: &rusqlite::Row, i: usize) -> rusqlite::Result<T> {
    let text: String = r.get(i)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Like [`json`], for a column that may be NULL (added by a later schema): the type's
/// default then.
fn json_or_default<T: serde::de::DeserializeOwned + Default>(
    r: &rusqlite::Row,
    i: usize,
) -> rusqlite::Result<T> {
    match r.get::<_, Option<String>>(i)? {
        None => Ok(T::default()),
        Some(_) => json(r, i),
    }
}

/// The trials a stored canonical plan ([`crate::plan::Plan::canonical`]) holds: targets ×
/// workloads × repetitions; `None` when it does not say.
fn planned_trials(plan: &str) -> Option<u32> {
    let v: serde_json::Value = serde_json::from_str(plan).ok()?;
    let n = |k: &str| v.get(k).and_then(|x| x.as_array()).map(Vec::len);
    let reps = v.pointer("/policy/reps")?.as_u64()?;
    u32::try_from(n("targets")? as u64 * n("workloads")? as u64 * reps).ok()
}

/// Puts the database in rollback-journal mode (see the module's header), which needs it
/// to be open nowhere else when it was in WAL mode: while an older fsarena holds it open
/// in WAL mode, this connection keeps WAL for now rather than wait.
fn rollback_journal(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_millis(200))?;
    match conn.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0)) {
        Ok(_) => Ok(()),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => Ok(()),
        Err(e) => Err(e).context("choosing the rollback journal"),
    }
}

/// Creates `path` empty with mode 0600 when it does not exist (SQLite takes an empty file
/// for a new database). Any failure is left for SQLite's open to report.
fn create_private(path: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{OpLatency, PhaseResult, Provision};

    fn sample_run(id: &str) -> RunResult {
        RunResult {
            fsarena_version: "0.1.0".into(),
            run_id: id.into(),
            started_at: format!("2026-11-23T00:00:0{}+00:00", id.len() % 10),
            finished_at: None,
            status: "running".into(),
            command_line: vec!["fsarena".into(), "run".into()],
            host: crate::host::host_info(),
            policy: Default::default(),
            can_drop_caches: true,
            targets: vec![TargetInfo {
                name: "ext4".into(),
                fstype: "ext4".into(),
                kind: "loop".into(),
                mkfs_opts: vec!["-F".into()],
                ..Default::default()
            }],
            trials: Vec::new(),
            summaries: Vec::new(),
            mpi: None,
            left_out: Vec::new(),
            resumed_at: Vec::new(),
            planned_trials: None,
        }
    }

    fn sample_trial(rep: u32) -> Trial {
        Trial {
            target: "ext4".into(),
            workload: "bonnie".into(),
            label: "bonnie".into(),
            params: [("size".to_string(), "1MiB".to_string())].into(),
            rep,
            status: "ok".into(),
            error: None,
            provision: Provision {
                mkfs_s: Some(0.5),
                ..Default::default()
            },
            phases: vec![PhaseResult {
                name: "write_block".into(),
                wall_s: 1.5,
                ops: 100,
                bytes: 1 << 20,
                mb_per_s: 100.0 + f64::from(rep),
                primary: "mb_per_s".into(),
                lat_by_op: vec![OpLatency {
                    op: "write".into(),
                    count: 100,
                    samples: 100,
                    lat_us: Default::default(),
                    buckets: vec![(1000, 60), (2047, 40)],
                }],
                ..Default::default()
            }],
            peak_rss_bytes: 1234,
            log: (rep == 2).then(|| "/var/tmp/fsarena/logs/x/ext4-bonnie-rep2.log".into()),
            elapsed_s: Some(1.5 * f64::from(rep)),
            ranks: Vec::new(),
            disturbance: (rep == 2).then(|| crate::probe::disturb::Disturbance {
                busy: true,
                reasons: vec!["cpu".into()],
                others_cpu_share: Some(0.5),
                ..Default::default()
            }),
        }
    }

    /// Issue 31 items 10 and 12: an empty run id matched the only run; a damaged row gave
    /// `Conversion error from type Text at index: 4` with exit 1.
    #[test]
    fn an_empty_id_and_a_damaged_row_are_clear_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.db");
        let mut s = Store::open(&path).unwrap();
        s.import(&sample_run("20260101-000000-abcd")).unwrap();
        for id in ["", " "] {
            let e = s.resolve(id).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().contains("empty run id"), "{e}");
        }
        assert!(s.load("2026").is_ok());
        s.conn
            .execute("UPDATE runs SET command_line = 'not json'", [])
            .unwrap();
        let e = s.load("2026").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
        let msg = format!("{e:#}");
        assert!(
            msg.contains(&path.display().to_string())
                && msg.contains("table runs, column command_line"),
            "{msg}"
        );
        s.conn
            .execute("UPDATE runs SET command_line = '[]', pid = 'x'", [])
            .unwrap();
        let msg = format!("{:#}", s.history().unwrap_err());
        assert!(msg.contains("table runs, column pid"), "{msg}");
    }

    #[test]
    fn a_new_database_is_private_and_has_no_shared_memory_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let s = Store::open(&path).unwrap();
        s.begin_run(&sample_run("p"), &[]).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let mode: String = s
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        for f in ["new.db-wal", "new.db-shm"] {
            assert!(!dir.path().join(f).exists(), "{f}");
        }
    }

    /// A run's commit holds the file for a moment: a reader opening it then waits, and
    /// does not take the locked file for a foreign one.
    #[test]
    fn a_database_locked_for_a_moment_is_waited_for_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.db");
        drop(Store::open(&path).unwrap());
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            holder.execute_batch("COMMIT").unwrap();
        });
        let opened = Store::open_existing(&path);
        t.join().unwrap();
        assert!(opened.is_ok(), "{:#}", opened.err().unwrap());
    }

    /// A database an older fsarena left in WAL mode is switched to the rollback journal
    /// when opened alone, and kept in WAL (no waiting, no error) while another connection
    /// holds it in WAL mode.
    #[test]
    fn a_wal_database_is_switched_to_the_rollback_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        drop(Store::open(&path).unwrap());
        let old = Connection::open(&path).unwrap();
        let wal: String = old
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(wal, "wal");
        let n: i64 = old
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
        let s = Store::open_existing(&path).unwrap();
        s.begin_run(&sample_run("w"), &[]).unwrap();
        drop((s, old));
        let head = std::fs::read(&path).unwrap();
        assert_eq!(
            head[18..20],
            [2, 2],
            "still WAL while the other connection had it"
        );
        let s = Store::open_existing(&path).unwrap();
        assert_eq!(s.history().unwrap().len(), 1);
        drop(s);
        let head = std::fs::read(&path).unwrap();
        assert_eq!(head[18..20], [1, 1], "a rollback journal now");
        assert!(!dir.path().join("old.db-shm").exists());
    }

    #[test]
    fn a_read_only_open_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        assert!(
            Store::open_read_only(&path).is_err(),
            "a missing file is not made"
        );
        assert!(!path.exists());
        std::fs::write(&path, b"").unwrap();
        assert!(
            Store::open_read_only(&path).is_err(),
            "an empty file is not migrated"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        drop(Store::open(&path).unwrap());
        let before = std::fs::read(&path).unwrap();
        let s = Store::open_read_only(&path).unwrap();
        assert!(s.trial_times("h").unwrap().is_empty());
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    /// Each `--resume` is recorded, so that the report can say the samples pool several
    /// invocations.
    #[test]
    fn resume_records_when_and_the_report_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("r.db")).unwrap();
        let mut run = sample_run("20261123-000000-resu");
        s.begin_run(&run, &run.targets.clone()).unwrap();
        s.set_plan(&run.run_id, "h", "{}").unwrap();
        run.status = "interrupted".into();
        s.finish_run(&run).unwrap();
        assert_eq!(
            crate::result::resumed_line(&s.load(&run.run_id).unwrap()),
            None
        );
        let resumed = s.resume_run(&run.run_id, "h", "{}").unwrap();
        assert_eq!(resumed.resumed_at.len(), 1);
        s.finish_run(&resumed).unwrap();
        let again = s.resume_run(&run.run_id, "h", "{}").unwrap();
        assert_eq!(again.resumed_at.len(), 2);
        let loaded = s.load(&run.run_id).unwrap();
        assert_eq!(loaded.resumed_at, again.resumed_at);
        let line = crate::result::resumed_line(&loaded).unwrap();
        assert!(line.contains("from 3 invocations"), "{line}");
    }

    #[test]
    fn migrates_an_empty_file_and_round_trips_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        std::fs::write(&path, b"").unwrap();
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        let mut run = sample_run("20261123-000000-abcd");
        s.begin_run(&run, &run.targets.clone()).unwrap();
        for rep in 1..=3 {
            s.add_trial(&run.run_id, &sample_trial(rep)).unwrap();
        }
        run.status = "complete".into();
        run.finished_at = Some("later".into());
        s.finish_run(&run).unwrap();
        drop(s);
        let s = Store::open(&path).unwrap();
        let back = s.load("2026").unwrap();
        assert_eq!(back.run_id, run.run_id);
        assert_eq!((back.status.as_str(), back.trials.len()), ("complete", 3));
        let p = &back.trials[2].phases[0];
        assert_eq!((p.mb_per_s, p.lat_by_op[0].buckets.len()), (103.0, 2));
        assert_eq!(back.trials[0].provision.mkfs_s, Some(0.5));
        assert_eq!(back.trials[0].log, None);
        assert!(back.trials[1].log.as_deref().unwrap().ends_with("rep2.log"));
        assert_eq!(back.trials[0].disturbance, None);
        assert_eq!(back.trials[1].disturbance, sample_trial(2).disturbance);
        assert_eq!(back.targets[0].mkfs_opts, ["-F"]);
        let med = back
            .summaries
            .iter()
            .find(|x| x.phase == "write_block" && x.metric == "mb_per_s")
            .unwrap();
        assert_eq!((med.stats.n, med.stats.median), (3, 102.0));
        assert_eq!(s.resolve("last").unwrap(), run.run_id);
        // Trial times for suite estimates: this host's, newest first.
        let times = s.trial_times(&back.host.hostname).unwrap();
        let secs: Vec<f64> = times.iter().map(|t| t.elapsed_s).collect();
        assert_eq!(secs, [4.5, 3.0, 1.5]);
        assert_eq!(times[0].params, back.trials[2].params);
        assert!(s.trial_times("elsewhere").unwrap().is_empty());
    }

    #[test]
    fn a_killed_writer_s_journal_is_read_past_and_a_live_one_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("live.db");
        let s = Store::open(&live).unwrap();
        let run = sample_run("20261125-010000-aaaa");
        s.begin_run(&run, &run.targets).unwrap();
        drop(s);
        // A writer in the middle of a transaction: its journal is on disk.
        let w = Connection::open(&live).unwrap();
        w.execute_batch(
            "PRAGMA cache_size = 1; BEGIN IMMEDIATE; \
             UPDATE runs SET status = 'half-written'; \
             CREATE TABLE filler AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL \
             SELECT i + 1 FROM n WHERE i < 20000) SELECT i, hex(randomblob(64)) FROM n;",
        )
        .unwrap();
        let mut journal = live.as_os_str().to_owned();
        journal.push("-journal");
        assert!(
            std::path::Path::new(&journal).is_file(),
            "the writer's journal"
        );
        // Copied with it, the journal is a killed writer's: no process holds its lock.
        let dead = dir.path().join("dead.db");
        std::fs::copy(&live, &dead).unwrap();
        let mut dead_journal = dead.as_os_str().to_owned();
        dead_journal.push("-journal");
        std::fs::copy(&journal, &dead_journal).unwrap();
        let ro = Connection::open_with_flags(
            format!("file:{}?mode=ro", uri_path(&dead)),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        let e = ro
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .unwrap_err();
        assert!(
            matches!(&e, rusqlite::Error::SqliteFailure(f, _)
                if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK),
            "a hot journal: {e}"
        );
        assert!(matches!(probe(&dead).unwrap(), Found::Fsarena(_)));
        // The live writer's database: the reader waits for its commit, then reads it whole.
        let reader =
            std::thread::spawn(move || probe(&live).map(|f| matches!(f, Found::Fsarena(_))));
        std::thread::sleep(std::time::Duration::from_millis(200));
        w.execute_batch("COMMIT").unwrap();
        assert!(reader.join().unwrap().unwrap());
    }

    #[test]
    fn prefixes_history_and_dead_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("h.db")).unwrap();
        for id in [
            "20261123-010000-aaaa",
            "20261123-010000-aabb",
            "20261123-020000-cccc",
        ] {
            let run = sample_run(id);
            s.begin_run(&run, &run.targets).unwrap();
        }
        s.add_trial("20261123-020000-cccc", &sample_trial(1))
            .unwrap();
        assert!(s.resolve("20261123-01").is_err(), "ambiguous");
        assert_eq!(
            s.resolve("20261123-010000-aab").unwrap(),
            "20261123-010000-aabb"
        );
        assert!(s.resolve("1999").is_err());
        // The end of an id, as `compare` labels runs, when no id starts so.
        assert_eq!(s.resolve("cccc").unwrap(), "20261123-020000-cccc");
        assert_eq!(s.resolve("abb").unwrap(), "20261123-010000-aabb");
        // This process is alive: its runs are still running.
        let h = s.history().unwrap();
        assert_eq!(h.len(), 3);
        assert!(h.iter().all(|r| r.status == "running"));
        let c = h.iter().find(|r| r.id.ends_with("cccc")).unwrap();
        assert_eq!(
            (c.trials, c.workloads.clone()),
            (1, vec!["bonnie".to_string()])
        );
        // A run written by a process that is gone is shown as interrupted.
        s.conn
            .execute("UPDATE runs SET pid = 999999999 WHERE id LIKE '%aaaa'", [])
            .unwrap();
        let h = s.history().unwrap();
        let a = h.iter().find(|r| r.id.ends_with("aaaa")).unwrap();
        assert_eq!(a.status, "interrupted");
        assert!(crate::report::history::render(&h).contains("interrupted"));
    }

    #[test]
    fn an_mpi_run_keeps_its_ranks_and_replacing_a_trial_replaces_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("m.db")).unwrap();
        let mut run = sample_run("20261123-000000-mpi0");
        run.mpi = Some(crate::result::MpiInfo {
            mode: "fleet".into(),
            hosts: vec!["n0".into(), "n1".into()],
            stonewall: true,
        });
        s.begin_run(&run, &run.targets).unwrap();
        s.set_mpi(&run.run_id, run.mpi.as_ref().unwrap()).unwrap();
        let mut t = sample_trial(1);
        t.ranks = (0..2)
            .map(|rank| crate::result::RankTrial {
                rank,
                host: format!("n{rank}"),
                status: "ok".into(),
                error: None,
                elapsed_s: Some(1.0 + rank as f64),
                phases: t.phases.clone(),
            })
            .collect();
        s.add_trial(&run.run_id, &t).unwrap();
        s.add_trial(&run.run_id, &t).unwrap();
        let back = s.load("last").unwrap();
        assert_eq!(back.mpi, run.mpi);
        let ranks = &back.trials[0].ranks;
        assert_eq!(ranks.len(), 2, "stored once although added twice");
        assert_eq!(
            (ranks[1].host.as_str(), ranks[1].elapsed_s),
            ("n1", Some(2.0))
        );
        assert_eq!(ranks[1].phases.len(), t.phases.len());
        let sum: i64 = s
            .conn
            .query_row(
                "SELECT SUM(ops) FROM rank_phases WHERE position = 0",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(sum as u64, 2 * t.phases[0].ops);
    }

    #[test]
    fn a_version_1_database_gains_the_new_columns_and_keeps_its_trials() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        {
            // A database as schema 1 left it: no log column.
            let mut s = Store::open(&path).unwrap();
            let run = sample_run("20261123-000000-v1v1");
            s.begin_run(&run, &run.targets).unwrap();
            s.add_trial(&run.run_id, &sample_trial(1)).unwrap();
            s.conn
                .execute_batch(
                    "ALTER TABLE trials DROP COLUMN log; ALTER TABLE trials DROP COLUMN elapsed_s; \
                     ALTER TABLE runs DROP COLUMN plan; ALTER TABLE runs DROP COLUMN plan_hash; \
                     ALTER TABLE runs DROP COLUMN mpi; DROP TABLE rank_phases; \
                     DROP TABLE rank_trials; ALTER TABLE runs DROP COLUMN left_out; \
                     ALTER TABLE runs DROP COLUMN resumed_at; \
                     ALTER TABLE trials DROP COLUMN disturbance; \
                     PRAGMA user_version = 1;",
                )
                .unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(
            s.plan_hash("last").unwrap(),
            None,
            "no plan stored before schema 4"
        );
        let run = s.load("last").unwrap();
        let t = &run.trials[0];
        assert_eq!(
            (
                run.trials.len(),
                t.log.clone(),
                t.elapsed_s,
                t.disturbance.clone()
            ),
            (1, None, None, None)
        );
    }

    #[test]
    fn newer_schemas_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("CREATE TABLE runs (id TEXT)").unwrap();
            c.pragma_update(None, "user_version", 99).unwrap();
        }
        let err = Store::open(&path).err().unwrap();
        assert!(format!("{err:#}").contains("newer"), "{err:#}");
    }
}
