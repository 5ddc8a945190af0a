//! Reading stored runs back: `history`'s summaries, a `RUN` resolved to its id, a whole run
//! loaded, and the past trial and phase times estimates scale from. Only queries; the
//! report renders what they return.

use super::{procs, PhaseTime, RunSummary, Store, TrialTime};
use crate::error::usage;
use crate::result::{PhaseResult, RunResult, Trial};
use anyhow::Result;
use rusqlite::OptionalExtension;
use std::path::Path;

impl Store {
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
             can_drop_caches, pid, hostname, left_out, resumed_at, plan, notes FROM runs \
             WHERE id = ?1",
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
                    notes: json_or_default(r, 13)?,
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
             peak_rss_bytes, log, elapsed_s, disturbance, engine FROM trials WHERE run_id = ?1 \
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
                    engine: json_or_default(r, 13)?,
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
        result.summaries = crate::stats::summarize(&result.trials, crate::workload::figures_of);
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
pub(super) fn json<T: serde::de::DeserializeOwned>(
    r: &rusqlite::Row,
    i: usize,
) -> rusqlite::Result<T> {
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
