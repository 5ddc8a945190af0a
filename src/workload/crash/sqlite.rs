//! The SQLite patterns of `crash`: transactions through the linked SQLite library (the
//! `sqlite` workload's), in WAL mode (`sqlite-wal`) or with a rollback journal
//! (`sqlite-rollback`, `journal_mode=DELETE`), each with the `synchronous` level SQLite
//! documents as making a transaction durable once its `COMMIT` returned: `FULL` in WAL
//! mode; `EXTRA` in DELETE mode, which also syncs the directory after the journal is
//! unlinked (the commit point). With `FULL` in DELETE mode, a power cut soon after a commit
//! can bring the journal back and roll the transaction back, as SQLite's documentation of
//! `PRAGMA synchronous` says; the checker finds exactly that (docs/durability.md).
//!
//! Each transaction inserts [`ROWS`] rows numbered on from the last, with seeded payloads;
//! a commit that returned is promised. In a crash state the database must pass
//! `PRAGMA integrity_check`, hold whole transactions only, each row with its own payload
//! (else **garbage**: a torn or corrupt database), and at least every promised
//! transaction (else **lost**; a database file gone or empty when something was promised
//! is **empty**).

use super::expect::Finding;
use super::patterns::{contents, sync_dir, Tape, Work};
use crate::probe::recorder::Op;
use anyhow::{Context, Result};
use rusqlite::Connection;
use std::path::Path;
use std::time::Instant;

/// Rows each transaction inserts.
pub const ROWS: u64 = 4;
/// Bytes of a row's payload.
const PAYLOAD: usize = 200;
/// The database's file name in the pattern's directory.
const DB: &str = "db.sqlite";

/// What the transactions were promised.
#[derive(Clone, Debug, Default)]
pub struct SqliteExpect {
    /// The log position at each commit's return.
    pub committed: Vec<u64>,
    pub seed: u64,
}

fn payload(seed: u64, id: u64) -> Vec<u8> {
    contents(seed, "row", id % 4096, PAYLOAD)
        .into_iter()
        .chain(id.to_le_bytes())
        .collect()
}

/// Runs `w.ops` transactions in `dir`, in WAL mode or with a rollback journal.
pub fn run(dir: &Path, w: &Work, wal: bool, tape: &mut dyn Tape) -> Result<SqliteExpect> {
    let c = Connection::open(dir.join(DB)).context("opening the SQLite database")?;
    let mode = if wal { "WAL" } else { "DELETE" };
    c.pragma_update(None, "journal_mode", mode)?;
    let level = w.synchronous.unwrap_or(if wal { "FULL" } else { "EXTRA" });
    c.pragma_update(None, "synchronous", level.to_uppercase())?;
    c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL)")?;
    sync_dir(dir, tape)?;
    let mut e = SqliteExpect {
        committed: Vec::new(),
        seed: w.seed,
    };
    let mut insert = c.prepare("INSERT INTO t(id, v) VALUES (?1, ?2)")?;
    for k in 0..w.ops {
        let t = Instant::now();
        c.execute_batch("BEGIN")?;
        for r in 0..ROWS {
            let id = k * ROWS + r + 1;
            insert.execute(rusqlite::params![id as i64, payload(w.seed, id)])?;
        }
        c.execute_batch("COMMIT")?;
        e.committed.push(tape.position()?);
        tape.done(Op::Transaction, t, ROWS * PAYLOAD as u64);
    }
    Ok(e)
}

impl SqliteExpect {
    /// The finding for the database under `dir` in a state standing for the crashes up to
    /// log position `to` ([`super::expect::Window`]): every commit that returned by then
    /// is promised.
    pub fn judge(&self, dir: &Path, to: u64) -> Finding {
        self.judge_lost(dir, to).0
    }

    /// [`Self::judge`], and the commits the state lost (indices into `committed`): those
    /// promised by `to` beyond the ones it holds (none for a sound or garbled database).
    pub fn judge_lost(&self, dir: &Path, to: u64) -> (Finding, std::ops::Range<usize>) {
        let promised = self.committed.iter().filter(|&&p| p <= to).count();
        let lost = |kept: u64| (kept as usize).min(promised)..promised;
        let path = dir.join(DB);
        // Never through a symlink: SQLite writes (recovers) the file it opens.
        let len = std::fs::symlink_metadata(&path).and_then(|m| match m.is_file() {
            true => Ok(m.len()),
            false => Err(std::io::Error::other("not a regular file")),
        });
        match len {
            Err(_) if promised > 0 => return (Finding::Lost, lost(0)),
            Ok(0) if promised > 0 => return (Finding::Empty, lost(0)),
            Err(_) | Ok(0) => return (Finding::Ok, 0..0),
            Ok(_) => {}
        }
        match self.rows(&path) {
            Ok(Some(rows)) if rows % ROWS == 0 && rows / ROWS >= promised as u64 => {
                (Finding::Ok, 0..0)
            }
            Ok(Some(rows)) if rows % ROWS == 0 => (Finding::Lost, lost(rows / ROWS)),
            // No table yet: lost when a commit was promised.
            Ok(None) if promised > 0 => (Finding::Lost, lost(0)),
            Ok(None) => (Finding::Ok, 0..0),
            _ => (Finding::Garbage, 0..0),
        }
    }

    /// The number of rows, when the database is sound and every row is the one written
    /// (ids 1..=n, each with its payload); `None` without the table; `Err` otherwise.
    fn rows(&self, path: &Path) -> Result<Option<u64>> {
        let c = Connection::open(path)?;
        let check: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        anyhow::ensure!(check == "ok", "integrity_check: {check}");
        let has_table: i64 = c.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 't'",
            [],
            |r| r.get(0),
        )?;
        if has_table == 0 {
            return Ok(None);
        }
        let mut q = c.prepare("SELECT id, v FROM t ORDER BY id")?;
        let mut rows = q.query([])?;
        let mut n = 0u64;
        while let Some(row) = rows.next()? {
            n += 1;
            let (id, v): (i64, Vec<u8>) = (row.get(0)?, row.get(1)?);
            anyhow::ensure!(id as u64 == n && v == payload(self.seed, n), "row {n} differs");
        }
        Ok(Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(u64);
    impl Tape for Count {
        fn done(&mut self, _: Op, _: Instant, _: u64) {}
        fn position(&mut self) -> Result<u64> {
            self.0 += 10;
            Ok(self.0)
        }
    }

    #[test]
    fn committed_transactions_are_checked_whole_and_in_number() {
        for wal in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let w = Work {
                ops: 5,
                size: 0,
                sync_every: 1,
                seed: 9,
                forget: 0,
                synchronous: None,
                ace: Vec::new(),
            };
            let e = run(dir.path(), &w, wal, &mut Count(0)).unwrap();
            assert_eq!(e.committed.len(), 5);
            assert_eq!(e.judge(dir.path(), 1000), Finding::Ok);
            // One more transaction promised than there is: lost.
            let mut more = e.clone();
            more.committed.push(60);
            assert_eq!(more.judge(dir.path(), 1000), Finding::Lost);
            // Which commit: the sixth, promised at 60; not yet promised before it.
            assert_eq!(more.judge_lost(dir.path(), 1000), (Finding::Lost, 5..6));
            assert_eq!(more.judge_lost(dir.path(), 59), (Finding::Ok, 0..0));
            // A row changed behind SQLite's back: garbage.
            let c = Connection::open(dir.path().join(DB)).unwrap();
            c.execute("UPDATE t SET v = x'00' WHERE id = 3", []).unwrap();
            drop(c);
            assert_eq!(e.judge(dir.path(), 1000), Finding::Garbage);
        }
    }
}
