//! The transactions of `sqlite`: each mode's `load` and its connections' share of `run`,
//! and the retry of a transaction that met `SQLITE_BUSY`.

use super::{Mode, Sqlite, ACCOUNTS_PER_SCALE, LOAD_PIECE, PAYLOAD, TAG, TELLERS_PER_SCALE};
use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::bonnie_files::hash;
use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode};
use std::sync::atomic::{AtomicU64, Ordering};

/// One connection's work in `run`: (config, worker, connection, its random numbers, the
/// shared count of busy retries, the number of connections).
pub(super) type RunFn =
    fn(&Sqlite, &mut Worker, &Connection, &mut Xoshiro256PlusPlus, &AtomicU64, u64) -> Result<()>;

/// Whether `e` is SQLite's "database is locked" (the busy timeout ran out).
fn is_busy(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
}

/// Runs `tx` (which begins and commits a transaction) until it does not fail with
/// `SQLITE_BUSY`, rolling back and counting each retry in `busy`.
fn retrying(c: &Connection, busy: &AtomicU64, mut tx: impl FnMut() -> Result<()>) -> Result<()> {
    loop {
        match tx() {
            Ok(()) => return Ok(()),
            Err(e) if e.downcast_ref().is_some_and(is_busy) => {
                if !c.is_autocommit() {
                    c.execute_batch("ROLLBACK")?;
                }
                busy.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => return Err(e),
        }
    }
}

const TPCB_SCHEMA: &str = "
    CREATE TABLE pgbench_branches(bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL,
        filler TEXT);
    CREATE TABLE pgbench_tellers(tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL,
        tbalance INTEGER NOT NULL, filler TEXT);
    CREATE TABLE pgbench_accounts(aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL,
        abalance INTEGER NOT NULL, filler TEXT);
    CREATE TABLE pgbench_history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER,
        mtime TEXT, filler TEXT);";

const ROWS_SCHEMA: &str = "
    CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v BLOB NOT NULL);
    CREATE INDEX t_k ON t(k);";

impl Sqlite {
    /// The `load` phase of each mode, on one connection.
    pub(super) fn load(&self, w: &mut Worker, c: &Connection, seed: u64) -> Result<()> {
        w.ready();
        match self.mode {
            Mode::Tpcb => self.load_tpcb(w, c),
            Mode::Insert => {
                let t = w.start();
                c.execute_batch(&format!("BEGIN IMMEDIATE; {ROWS_SCHEMA} COMMIT;"))?;
                w.done(Op::Create, t, 0);
                Ok(())
            }
            Mode::Read => self.load_rows(w, c, seed),
        }
    }

    /// `pgbench -i`: the four tables and their rows, in one transaction.
    fn load_tpcb(&self, w: &mut Worker, c: &Connection) -> Result<()> {
        let t = w.start();
        c.execute_batch(&format!("BEGIN IMMEDIATE; {TPCB_SCHEMA}"))?;
        let blank = |n| " ".repeat(n);
        let mut ins = c.prepare("INSERT INTO pgbench_branches VALUES (?, 0, ?)")?;
        for bid in 1..=self.scale {
            ins.execute(rusqlite::params![bid as i64, blank(88)])?;
        }
        let mut ins = c.prepare("INSERT INTO pgbench_tellers VALUES (?, ?, 0, ?)")?;
        for tid in 1..=self.scale * TELLERS_PER_SCALE {
            let bid = (tid - 1) / TELLERS_PER_SCALE + 1;
            ins.execute(rusqlite::params![tid as i64, bid as i64, blank(84)])?;
        }
        w.done_batch(Op::Write, t, self.scale * (1 + TELLERS_PER_SCALE), 0);
        let accounts = self.scale * ACCOUNTS_PER_SCALE;
        let filler = blank(84);
        let mut ins = c.prepare("INSERT INTO pgbench_accounts VALUES (?, ?, 0, ?)")?;
        let mut aid = 1;
        while aid <= accounts {
            w.check()?;
            let t = w.start();
            let end = (aid + LOAD_PIECE).min(accounts + 1);
            for a in aid..end {
                let bid = (a - 1) / ACCOUNTS_PER_SCALE + 1;
                ins.execute(rusqlite::params![a as i64, bid as i64, filler])?;
            }
            if end > accounts {
                c.execute_batch("COMMIT")?;
            }
            w.done_batch(Op::Write, t, end - aid, 0);
            aid = end;
        }
        Ok(())
    }

    /// `read`'s load: the table, then `rows` rows in transactions of `batch`.
    fn load_rows(&self, w: &mut Worker, c: &Connection, seed: u64) -> Result<()> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(hash(seed ^ TAG, u64::MAX));
        let mut t = w.start();
        c.execute_batch(&format!("BEGIN IMMEDIATE; {ROWS_SCHEMA}"))?;
        let mut ins = c.prepare("INSERT INTO t(id, k, v) VALUES (?, ?, ?)")?;
        let mut id = 1;
        while id <= self.rows {
            w.check()?;
            if id > 1 {
                t = w.start();
                c.execute_batch("BEGIN IMMEDIATE")?;
            }
            let end = (id + self.batch).min(self.rows + 1);
            let mut piece = (id, t);
            for r in id..end {
                let v = w.data().slice(PAYLOAD).to_vec();
                ins.execute(rusqlite::params![r as i64, rng.gen::<u32>(), v])?;
                if r + 1 - piece.0 == LOAD_PIECE && r + 1 < end {
                    w.done_batch(Op::Write, piece.1, LOAD_PIECE, LOAD_PIECE * PAYLOAD as u64);
                    piece = (r + 1, w.start());
                }
            }
            c.execute_batch("COMMIT")?;
            let n = end - piece.0;
            w.done_batch(Op::Write, piece.1, n, n * PAYLOAD as u64);
            id = end;
        }
        Ok(())
    }

    /// One connection's share of `tpcb`'s run: `transactions` of pgbench's script.
    pub(super) fn tpcb(
        &self,
        w: &mut Worker,
        c: &Connection,
        rng: &mut Xoshiro256PlusPlus,
        busy: &AtomicU64,
        _: u64,
    ) -> Result<()> {
        let mut acc = c.prepare(
            "UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2",
        )?;
        let mut get = c.prepare("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?;
        let mut tel =
            c.prepare("UPDATE pgbench_tellers SET tbalance = tbalance + ?1 WHERE tid = ?2")?;
        let mut bra =
            c.prepare("UPDATE pgbench_branches SET bbalance = bbalance + ?1 WHERE bid = ?2")?;
        let mut his = c.prepare(
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
             VALUES (?1, ?2, ?3, ?4, CURRENT_TIMESTAMP)",
        )?;
        w.ready();
        for _ in 0..self.transactions {
            w.check()?;
            let aid = rng.gen_range(1..=self.scale * ACCOUNTS_PER_SCALE) as i64;
            let bid = rng.gen_range(1..=self.scale) as i64;
            let tid = rng.gen_range(1..=self.scale * TELLERS_PER_SCALE) as i64;
            let delta: i64 = rng.gen_range(-5000..=5000);
            let t = w.start();
            retrying(c, busy, || {
                c.execute_batch("BEGIN IMMEDIATE")?;
                acc.execute((delta, aid))?;
                let _balance: i64 = get.query_row([aid], |r| r.get(0))?;
                tel.execute((delta, tid))?;
                bra.execute((delta, bid))?;
                his.execute((tid, bid, aid, delta))?;
                c.execute_batch("COMMIT")?;
                Ok(())
            })?;
            w.done(Op::Transaction, t, 0);
        }
        Ok(())
    }

    /// One connection's share of `insert`'s run: transactions `w.idx`, `w.idx + n`, …
    /// of the `rows / batch` (the last one shorter).
    pub(super) fn insert(
        &self,
        w: &mut Worker,
        c: &Connection,
        rng: &mut Xoshiro256PlusPlus,
        busy: &AtomicU64,
        n: u64,
    ) -> Result<()> {
        let mut ins = c.prepare("INSERT INTO t(k, v) VALUES (?, ?)")?;
        let txs = self.rows.div_ceil(self.batch);
        let mut v = vec![0u8; PAYLOAD];
        w.ready();
        for i in (w.idx as u64..txs).step_by(n as usize) {
            w.check()?;
            let rows = self.batch.min(self.rows - i * self.batch);
            let keys: Vec<u32> = (0..rows).map(|_| rng.gen()).collect();
            let t = w.start();
            retrying(c, busy, || {
                c.execute_batch("BEGIN IMMEDIATE")?;
                for &k in &keys {
                    w.data().fill(&mut v);
                    ins.execute(rusqlite::params![k, v])?;
                }
                c.execute_batch("COMMIT")?;
                Ok(())
            })?;
            w.done(Op::Transaction, t, rows * PAYLOAD as u64);
        }
        Ok(())
    }

    /// One connection's share of `read`'s run: `transactions` point selects.
    pub(super) fn select(
        &self,
        w: &mut Worker,
        c: &Connection,
        rng: &mut Xoshiro256PlusPlus,
        busy: &AtomicU64,
        _: u64,
    ) -> Result<()> {
        let mut get = c.prepare("SELECT k, v FROM t WHERE id = ?1")?;
        w.ready();
        for _ in 0..self.transactions {
            w.check()?;
            let id = rng.gen_range(1..=self.rows) as i64;
            let t = w.start();
            let mut got = 0;
            retrying(c, busy, || {
                got = get.query_row([id], |r| {
                    Ok(match r.get_ref(1)? {
                        ValueRef::Blob(b) => b.len(),
                        _ => 0,
                    })
                })?;
                Ok(())
            })?;
            w.done(Op::Transaction, t, got as u64);
        }
        Ok(())
    }
}

