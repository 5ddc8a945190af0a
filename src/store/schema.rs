//! Opening a result database and bringing its schema forward: what a file at the path is
//! before SQLite touches it, the migrations from each schema version to the next, and the
//! rollback journal and private mode a database is kept in.

use super::{fault, procs, Store};
use crate::error::usage;
use anyhow::{bail, Context, Result};
use rusqlite::Connection;
use std::path::Path;

/// The schema version this build writes.
pub(super) const SCHEMA_VERSION: i64 = 10;
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
    // 8 → 9: what the run said before it started (JSON list; an fio job file's mapping).
    "ALTER TABLE runs ADD COLUMN notes TEXT;",
    // 9 → 10: the database engine each trial ran, its version and settings (JSON).
    "ALTER TABLE trials ADD COLUMN engine TEXT;",
];

/// The (device, inode) of the file at `path`.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// What a file at a database path is, judged without writing anything.
#[derive(Debug, PartialEq)]
pub(super) enum Found {
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
pub(super) fn probe(path: &Path) -> Result<Found> {
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
pub(super) fn uri_path(path: &Path) -> String {
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
}
