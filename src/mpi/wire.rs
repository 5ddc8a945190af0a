//! What ranks send each other, as JSON bytes: the hello every rank sends at the start
//! (version, plan hash, host) and each rank's trial at the end of the trial, with the
//! phase-wide latency buckets (`PhaseResult::lat_buckets`) that the aggregate merges.
//!
//! JSON because it already is how phases are stored: a rank's trial goes over the wire
//! exactly as it would go into the database, histograms as their HDR buckets.

use crate::result::{RankTrial, Trial};
use anyhow::{Context, Result};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// What each rank says first: who it is and what it is about to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// fsarena's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The hash of the expanded plan, or why the plan could not be built.
    pub plan: Result<String, String>,
    pub mode: String,
    pub stonewall: bool,
    pub host: String,
}

/// `value` as bytes.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).context("encoding a message for the other ranks")
}

/// Bytes from another rank as a `T`.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).context("decoding a message from another rank")
}

/// Whether every rank runs what rank 0 runs; else the message, naming the odd ranks.
pub fn check_hellos(all: &[Hello]) -> Result<(), String> {
    let Some(first) = all.first() else {
        return Ok(());
    };
    let who = |i: usize, h: &Hello| format!("rank {i} on {}", h.host);
    if let Some((i, h, e)) = all
        .iter()
        .enumerate()
        .find_map(|(i, h)| h.plan.as_ref().err().map(|e| (i, h, e)))
    {
        return Err(format!(
            "{} cannot build the plan, so no rank runs it: {e}",
            who(i, h)
        ));
    }
    let odd: Vec<String> = all
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, h)| {
            (&h.version, &h.plan, &h.mode, h.stonewall)
                != (&first.version, &first.plan, &first.mode, first.stonewall)
        })
        .map(|(i, h)| {
            format!(
                "{} runs fsarena {} with plan {} (--mpi {}{})",
                who(i, h),
                h.version,
                h.plan.as_deref().unwrap_or("?"),
                h.mode,
                if h.stonewall { " --stonewall" } else { "" }
            )
        })
        .collect();
    if odd.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the ranks do not run the same thing: {}, but {} runs fsarena {} with plan {} \
         (--mpi {}{}); every rank must run the same fsarena build with the same workloads, \
         targets and options (see `fsarena plan check` for a plan's hash)",
        odd.join("; "),
        who(0, first),
        first.version,
        first.plan.as_deref().unwrap_or("?"),
        first.mode,
        if first.stonewall { " --stonewall" } else { "" }
    ))
}

/// This rank's part of `trial`, to send to rank 0.
pub fn rank_trial(trial: &Trial, rank: usize, host: &str) -> RankTrial {
    RankTrial {
        rank,
        host: host.to_string(),
        status: trial.status.clone(),
        error: trial.error.clone(),
        elapsed_s: trial.elapsed_s,
        phases: trial.phases.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(plan: &str, host: &str) -> Hello {
        Hello {
            version: "0.1.0".into(),
            plan: Ok(plan.into()),
            mode: "shared".into(),
            stonewall: false,
            host: host.into(),
        }
    }

    #[test]
    fn the_odd_rank_is_named() {
        let all = [hello("aa", "n0"), hello("aa", "n1"), hello("bb", "n2")];
        let e = check_hellos(&all).unwrap_err();
        assert!(
            e.contains("rank 2 on n2 runs fsarena 0.1.0 with plan bb"),
            "{e}"
        );
        assert!(
            e.contains("rank 0 on n0 runs fsarena 0.1.0 with plan aa"),
            "{e}"
        );
        assert!(!e.contains("rank 1"), "{e}");
        assert!(check_hellos(&all[..2]).is_ok());
        let mut v = all[..2].to_vec();
        v[1].version = "0.2.0".into();
        assert!(check_hellos(&v)
            .unwrap_err()
            .contains("rank 1 on n1 runs fsarena 0.2.0"));
        v[1] = hello("aa", "n1");
        v[1].plan = Err("no such workload".into());
        assert!(check_hellos(&v)
            .unwrap_err()
            .contains("rank 1 on n1 cannot build the plan"));
    }

    #[test]
    fn hellos_round_trip() {
        let h = hello("aa", "n0");
        assert_eq!(decode::<Hello>(&encode(&h).unwrap()).unwrap(), h);
    }
}
