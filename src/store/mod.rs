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
//! * `runs.notes` (schema 9): what the run said before it started, such as how an fio
//!   job file was mapped (JSON list, [`RunResult::notes`]); NULL when nothing;
//! * `trials.engine` (schema 10): the database engine the trial ran, its version and
//!   settings (JSON, [`crate::result::Engine`]); NULL when it ran none;
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
//!
//! Here: the store and its writes. Opening a file and migrating its schema are
//! [`schema`]'s; reading runs back is [`query`]'s.

use crate::result::{RunResult, TargetInfo, Trial};
use anyhow::{bail, Result};
use rusqlite::{params, Connection};
use std::path::Path;

mod fault;
mod procs;
mod query;
mod resume;
mod schema;

use query::json;
use schema::identity;

/// The default database, relative to the working directory.
pub const DEFAULT_DB: &str = "fsarena.db";

/// An open result database.
pub struct Store {
    conn: Connection,
    /// Where it is, and its file's (device, inode) when opened: a database deleted or
    /// replaced during a run is told from one that kept what was written.
    path: std::path::PathBuf,
    identity: Option<(u64, u64)>,
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

impl Store {
    /// `e`, from a write, with the file and its cause ([`fault::explain`]).
    fn explain(&self, e: anyhow::Error) -> anyhow::Error {
        let seen = fault::Seen {
            opened: self.identity,
            errno: fault::os_errno(&self.conn),
        };
        fault::explain(&self.path, seen, e)
    }

    /// Records a run that starts (status `running`) with its targets.
    pub fn begin_run(&self, run: &RunResult, targets: &[TargetInfo]) -> Result<()> {
        self.begin_run_here(run, targets)
            .map_err(|e| self.explain(e))
    }

    fn begin_run_here(&self, run: &RunResult, targets: &[TargetInfo]) -> Result<()> {
        self.conn.execute(
            "INSERT INTO runs (id, started_at, status, fsarena_version, command_line, host, \
             policy, can_drop_caches, pid, hostname, left_out, resumed_at, notes) \
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
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
                (!run.notes.is_empty())
                    .then(|| serde_json::to_string(&run.notes))
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
             provision, peak_rss_bytes, log, elapsed_s, disturbance, engine) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
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
                trial
                    .engine
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
}

#[cfg(test)]
mod tests;
