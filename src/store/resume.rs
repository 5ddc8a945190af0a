//! The plan stored with a run, and taking a stored run up again (`run --plan --resume`).
//!
//! A run can be resumed when it was stored with a plan (schema 4), its process is not
//! running any more, and the plan given now expands to the same canonical text. Resuming
//! marks it `running` under the new process and records when (`runs.resumed_at`, schema
//! 7: reports say that its samples pool several invocations); the trials it keeps are its
//! successful ones
//! (failed and interrupted trials are run again and replace the stored ones, see
//! [`Store::add_trial`]).

use super::Store;
use crate::error::usage;
use crate::result::RunResult;
use anyhow::Result;
use rusqlite::params;

impl Store {
    /// Records the canonical text and hash of the run's expanded plan.
    pub fn set_plan(&self, run_id: &str, hash: &str, canonical: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET plan = ?2, plan_hash = ?3 WHERE id = ?1",
                params![run_id, canonical, hash],
            )
            .map_err(|e| self.explain(e.into()))?;
        Ok(())
    }

    /// The stored plan hash of a run, if it has one.
    pub fn plan_hash(&self, run: &str) -> Result<Option<String>> {
        let id = self.resolve(run)?;
        Ok(self
            .conn
            .query_row("SELECT plan_hash FROM runs WHERE id = ?1", [&id], |r| {
                r.get(0)
            })?)
    }

    /// Takes stored run `run` up again for the plan `canonical` (hash `hash`): refuses when
    /// it still runs or its plan differs; marks it `running` under this process and returns
    /// it as stored (with all its trials).
    pub fn resume_run(&self, run: &str, hash: &str, canonical: &str) -> Result<RunResult> {
        let id = self.resolve(run)?;
        let (stored, stored_hash): (Option<String>, Option<String>) = self.conn.query_row(
            "SELECT plan, plan_hash FROM runs WHERE id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let Some(stored) = stored else {
            return Err(usage(format!(
                "run {id} has no stored plan (it was made by an fsarena older than plan \
                 files); it cannot be resumed — start a new run"
            )));
        };
        if stored != canonical {
            return Err(usage(format!(
                "run {id} was made with plan {} and this plan is {hash}: {}. Resume only with \
                 the plan (and --reps/--cache/--sync/--data/--seed/--size) it was started \
                 with, or start a new run without --resume",
                stored_hash.unwrap_or_default(),
                differences(&stored, canonical)
            )));
        }
        let mut run = self.load(&id)?;
        if run.status == "running" {
            return Err(usage(format!(
                "run {id} is still running (its process is alive); wait for it or stop it first"
            )));
        }
        run.resumed_at.push(chrono::Utc::now().to_rfc3339());
        self.conn
            .execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, pid = ?2, hostname = ?3, \
             resumed_at = ?4 WHERE id = ?1",
                params![
                    id,
                    std::process::id(),
                    crate::host::host_info().hostname,
                    serde_json::to_string(&run.resumed_at)?
                ],
            )
            .map_err(|e| self.explain(e.into()))?;
        Ok(run)
    }
}

/// What differs between two canonical plans, said briefly.
fn differences(stored: &str, now: &str) -> String {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<serde_json::Value>(stored),
        serde_json::from_str::<serde_json::Value>(now),
    ) else {
        return "the plans differ".into();
    };
    let names = |v: &serde_json::Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .map(|xs| {
                xs.iter()
                    .map(|x| x["name"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for key in ["targets", "workloads"] {
        if a[key] != b[key] {
            let (na, nb) = (names(&a, key), names(&b, key));
            if na == nb {
                let changed: Vec<String> = a[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .zip(b[key].as_array().into_iter().flatten())
                    .filter(|(x, y)| x != y)
                    .map(|(x, y)| format!("{} was {x}, now {y}", x["name"]))
                    .collect();
                out.push(format!("{key} changed: {}", changed.join("; ")));
            } else {
                out.push(format!(
                    "{key} were [{}], now [{}]",
                    na.join(", "),
                    nb.join(", ")
                ));
            }
        }
    }
    if a["policy"] != b["policy"] {
        out.push(format!("policy was {}, now {}", a["policy"], b["policy"]));
    }
    if out.is_empty() {
        "the plans differ".into()
    } else {
        out.join("; ")
    }
}
