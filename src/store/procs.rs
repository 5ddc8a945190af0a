//! The per-rank figures of MPI runs (schema 5): beside each trial's aggregate phases
//! (table `phases`), every rank's own status and phases, and the run's MPI mode and hosts
//! (`runs.mpi`, JSON). With them a reader can check an aggregate against its parts:
//! `SELECT SUM(ops) FROM rank_phases WHERE trial_id = ? AND position = ?` equals the
//! aggregate phase's `ops`.

use super::{json, Store};
use crate::result::{MpiInfo, PhaseResult, RankTrial, Trial};
use anyhow::Result;
use rusqlite::{params, Connection, OptionalExtension};

/// The migration 4 → 5.
pub(super) const MIGRATION: &str = "ALTER TABLE runs ADD COLUMN mpi TEXT;
    CREATE TABLE rank_trials (
        trial_id INTEGER NOT NULL REFERENCES trials(id),
        rank INTEGER NOT NULL,
        host TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        elapsed_s REAL,
        PRIMARY KEY (trial_id, rank)
    );
    CREATE TABLE rank_phases (
        trial_id INTEGER NOT NULL REFERENCES trials(id),
        rank INTEGER NOT NULL,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        wall_s REAL NOT NULL,
        ops INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        ops_per_s REAL NOT NULL,
        mb_per_s REAL NOT NULL,
        result TEXT NOT NULL,
        PRIMARY KEY (trial_id, rank, position)
    );";

/// Stores the ranks of `trial`, stored as `trial_id`.
pub(super) fn save(conn: &Connection, trial_id: i64, trial: &Trial) -> Result<()> {
    for r in &trial.ranks {
        conn.execute(
            "INSERT INTO rank_trials (trial_id, rank, host, status, error, elapsed_s) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                trial_id,
                r.rank as i64,
                r.host,
                r.status,
                r.error,
                r.elapsed_s
            ],
        )?;
        for (i, p) in r.phases.iter().enumerate() {
            conn.execute(
                "INSERT INTO rank_phases (trial_id, rank, position, name, wall_s, ops, bytes, \
                 ops_per_s, mb_per_s, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    trial_id,
                    r.rank as i64,
                    i as i64,
                    p.name,
                    p.wall_s,
                    p.ops as i64,
                    p.bytes as i64,
                    p.ops_per_s,
                    p.mb_per_s,
                    serde_json::to_string(p)?,
                ],
            )?;
        }
    }
    Ok(())
}

/// Removes the rank rows of the trials `same` selects (with the same parameters).
pub(super) fn delete(conn: &Connection, same: &str, p: impl rusqlite::Params + Copy) -> Result<()> {
    conn.execute(
        &format!("DELETE FROM rank_phases WHERE trial_id IN ({same})"),
        p,
    )?;
    conn.execute(
        &format!("DELETE FROM rank_trials WHERE trial_id IN ({same})"),
        p,
    )?;
    Ok(())
}

/// The ranks of trial `trial_id` (none for a run without MPI).
pub(super) fn load(conn: &Connection, trial_id: i64) -> Result<Vec<RankTrial>> {
    let mut trials = conn.prepare_cached(
        "SELECT rank, host, status, error, elapsed_s FROM rank_trials WHERE trial_id = ?1 \
         ORDER BY rank",
    )?;
    let mut ranks: Vec<RankTrial> = trials
        .query_map([trial_id], |r| {
            Ok(RankTrial {
                rank: r.get::<_, i64>(0)? as usize,
                host: r.get(1)?,
                status: r.get(2)?,
                error: r.get(3)?,
                elapsed_s: r.get(4)?,
                phases: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut phases = conn.prepare_cached(
        "SELECT result FROM rank_phases WHERE trial_id = ?1 AND rank = ?2 ORDER BY position",
    )?;
    for r in &mut ranks {
        r.phases = phases
            .query_map(params![trial_id, r.rank as i64], |row| {
                json::<PhaseResult>(row, 0)
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(ranks)
}

impl Store {
    /// Records how the ranks of MPI run `run_id` worked together.
    pub fn set_mpi(&self, run_id: &str, mpi: &MpiInfo) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET mpi = ?2 WHERE id = ?1",
                params![run_id, serde_json::to_string(mpi)?],
            )
            .map_err(|e| self.explain(e.into()))?;
        Ok(())
    }

    /// The MPI side of stored run `id`, if it was an MPI run.
    pub(super) fn mpi_of(&self, id: &str) -> Result<Option<MpiInfo>> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT mpi FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .flatten();
        Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
    }
}
