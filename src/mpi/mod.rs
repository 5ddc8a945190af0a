//! Several fsarena processes running one plan together (`run --mpi shared|fleet`), the
//! way IOR and mdtest run: one process per MPI rank, in lockstep phase by phase, rank 0
//! gathering the figures. docs/distributed.md says what is measured and why.
//!
//! The processes talk through a [`Transport`]: [`Local`] (one process, always compiled)
//! or MPI (cargo feature `mpi`). Every collective call of a trial is a [`Dist::sync`] (an
//! all-reduce of each rank's status), so that a rank that fails anywhere only has to make
//! one more sync — the one at the end of its trial — for every rank to learn of it at
//! the same collective: ranks never wait for a partner that has given up. Inside a
//! phase, a failing rank also sends the others a stop message, which a watcher thread
//! turns into the process's stop flag ([`crate::signals::STOP`]), so they stop at once
//! and tear down as after Ctrl-C.

#[cfg(feature = "mpi")]
mod libmpi;
pub mod merge;
pub mod shared;
mod transport;
pub mod wire;

pub use transport::{Local, Lost, Transport};

use crate::context::gate::{PhaseGate, Watch};
use crate::error::{exit, exit_code, usage, Error};
use crate::result::{MpiInfo, Trial};
use crate::signals::{check_stop, stop_requested, STOP};
use anyhow::{anyhow, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How the ranks of an MPI run share the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// All ranks work in one directory every rank sees (a shared filesystem).
    Shared,
    /// Every rank works on its own target on its own node; nodes are compared.
    Fleet,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "shared" => Ok(Mode::Shared),
            "fleet" => Ok(Mode::Fleet),
            other => Err(format!(
                "unknown MPI mode '{other}': expected shared or fleet"
            )),
        }
    }
}

impl Mode {
    /// `shared` or `fleet`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Fleet => "fleet",
        }
    }
}

/// What a rank says at a sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// It failed by itself (its own error).
    Failed,
    /// It got SIGINT/SIGTERM.
    Interrupted,
    /// It stopped because another rank failed.
    Stopped,
}

impl Status {
    /// The sync's code: the smallest code wins, so a real failure outranks an
    /// interruption, which outranks a consequential stop; the rank is in the code.
    fn code(self, rank: usize, size: usize) -> u64 {
        let (r, n) = (rank as u64, size as u64);
        match self {
            Status::Failed => r,
            Status::Interrupted => n + r,
            Status::Stopped => 2 * n + r,
            Status::Ok => u64::MAX,
        }
    }

    fn decode(code: u64, size: usize) -> Option<(Status, usize)> {
        let n = size as u64;
        let (st, r) = match code {
            u64::MAX => return None,
            c if c < n => (Status::Failed, c),
            c if c < 2 * n => (Status::Interrupted, c - n),
            c => (Status::Stopped, c.saturating_sub(2 * n)),
        };
        Some((st, r as usize))
    }
}

/// This rank stopped because rank `rank` failed or was interrupted.
#[derive(Debug, thiserror::Error)]
#[error("stopped because rank {rank} on {host} {what}")]
pub struct PeerStopped {
    pub rank: usize,
    pub host: String,
    /// `failed`, `was interrupted`, …
    pub what: String,
}

/// This rank gave up on the others: nothing was heard from rank `rank` within the timeout.
#[derive(Debug, thiserror::Error)]
#[error(
    "lost rank {rank} on {host}: nothing heard from it for {timeout_s:.0} s (it died, or its \
     host cannot be reached); every rank tore down its own; if {host} comes back, run \
     `fsarena cleanup` there"
)]
pub struct RankLost {
    pub rank: usize,
    pub host: String,
    pub timeout_s: f64,
}

/// The coordinator of one process of a run: which rank, which mode, and the syncs.
pub struct Dist {
    t: Arc<dyn Transport>,
    mode: Option<Mode>,
    stonewall: bool,
    hosts: Vec<String>,
    /// The first failure a sync reported; later syncs are skipped.
    failure: Mutex<Option<(Status, usize)>>,
    /// The rank whose stop message arrived (usize::MAX: none).
    peer_stop: Arc<AtomicUsize>,
    /// Why a collective was given up; no collective is made after that.
    gone: Mutex<Option<Lost>>,
}

impl Dist {
    /// One process alone (no `--mpi`).
    pub fn solo() -> Self {
        Self::with_transport(Arc::new(Local), None, false)
    }

    /// Ranks of a run in `mode` over transport `t` (tests use this with their own
    /// transports).
    pub fn with_transport(t: Arc<dyn Transport>, mode: Option<Mode>, stonewall: bool) -> Self {
        let hosts = vec![crate::host::host_info().hostname; t.size()];
        Self {
            t,
            mode,
            stonewall,
            hosts,
            failure: Mutex::new(None),
            peer_stop: Arc::new(AtomicUsize::new(usize::MAX)),
            gone: Mutex::new(None),
        }
    }

    /// The coordinator `run --mpi MODE` asks for: MPI is initialised here (with the
    /// feature); without the feature, an error that says how to build with it.
    /// A rank silent for `timeout_s` is lost, and an interrupted rank waits that long for
    /// the others at a collective.
    pub fn start(mode: Option<&str>, stonewall: bool, timeout_s: f64) -> Result<Self> {
        let Some(mode) = mode else {
            if stonewall {
                return Err(usage("--stonewall needs --mpi shared|fleet"));
            }
            return Ok(Self::solo());
        };
        let mode: Mode = mode
            .parse()
            .map_err(|e: String| usage(format!("--mpi: {e}")))?;
        Ok(Self::with_transport(
            mpi_transport(timeout_s)?,
            Some(mode),
            stonewall,
        ))
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.t.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.t.size()
    }

    /// The MPI mode; `None` for one process.
    pub fn mode(&self) -> Option<Mode> {
        self.mode
    }

    /// Whether several processes run together.
    pub fn is_multi(&self) -> bool {
        self.mode.is_some() && self.size() > 1
    }

    /// Whether `--mpi shared` with more than one rank.
    pub fn is_shared(&self) -> bool {
        self.is_multi() && self.mode == Some(Mode::Shared)
    }

    /// Whether the stonewall figures are wanted.
    pub fn stonewall(&self) -> bool {
        self.stonewall
    }

    /// The host of each rank (known after [`Self::handshake`]).
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// What the run records about its ranks; `None` without `--mpi`.
    pub fn info(&self) -> Option<MpiInfo> {
        self.mode.map(|m| MpiInfo {
            mode: m.name().to_string(),
            hosts: self.hosts.clone(),
            stonewall: self.stonewall,
        })
    }

    /// The transport, for the targets that take part in syncs ([`shared`]).
    pub fn transport(&self) -> Arc<dyn Transport> {
        Arc::clone(&self.t)
    }

    /// Checks that every rank runs the same fsarena and the same plan (`plan_hash`, or
    /// the error that building the plan gave), and learns every rank's host. All ranks
    /// fail alike, naming the odd ranks, when they differ.
    pub fn handshake(&mut self, plan_hash: Result<String, String>) -> Result<()> {
        if self.mode.is_none() {
            return Ok(());
        }
        let mine = wire::Hello {
            version: env!("CARGO_PKG_VERSION").to_string(),
            plan: plan_hash,
            mode: self.mode.map(|m| m.name().to_string()).unwrap_or_default(),
            stonewall: self.stonewall,
            host: crate::host::host_info().hostname,
        };
        let encoded = wire::encode(&mine)?;
        let all: Vec<wire::Hello> = self
            .collective(|t| t.all_gather(&encoded))?
            .iter()
            .map(|b| wire::decode(b))
            .collect::<Result<_>>()?;
        self.hosts = all.iter().map(|h| h.host.clone()).collect();
        wire::check_hellos(&all).map_err(usage)
    }

    /// Waits until every rank gets here: after the handshake failed, so that rank 0 has
    /// said why before any rank exits (mpirun ends the job at the first rank that exits
    /// with an error, and rank 0's message was lost when another rank got there first).
    pub fn barrier(&self) {
        if self.is_multi() {
            let _ = self.collective(|t| t.min_u64(0));
        }
    }

    /// Makes a collective call, unless one was given up before; a call given up is said
    /// as the error the run ends with.
    fn collective<T>(&self, f: impl FnOnce(&dyn Transport) -> Result<T, Lost>) -> Result<T> {
        let before = *self.gone.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lost) = before {
            return Err(self.lost_error(lost));
        }
        f(self.t.as_ref()).map_err(|lost| {
            let mut gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
            gone.get_or_insert(lost);
            self.lost_error(lost)
        })
    }

    fn lost_error(&self, lost: Lost) -> anyhow::Error {
        let timeout_s = self.t.timeout_s();
        match lost {
            Lost::Interrupted => anyhow::Error::new(Error::Interrupted).context(format!(
                "the other ranks did not come within {timeout_s:.0} s"
            )),
            Lost::Rank(rank) => RankLost {
                rank,
                host: self.hosts.get(rank).cloned().unwrap_or_default(),
                timeout_s,
            }
            .into(),
        }
    }

    /// Whether a collective was given up: this rank is on its own now.
    pub fn is_gone(&self) -> bool {
        self.gone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The error a run ends with after the failure a sync reported (`error`, the trial's
    /// own message): an interruption of any rank is an interruption of the run.
    pub fn run_error(&self, error: Option<String>) -> anyhow::Error {
        let seen = *self.failure.lock().unwrap_or_else(|e| e.into_inner());
        let gone = *self.gone.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(seen, Some((Status::Interrupted, _))) || gone == Some(Lost::Interrupted) {
            return Error::Interrupted.into();
        }
        anyhow!("{}", error.unwrap_or_else(|| "a rank failed".into()))
    }

    /// A sync at which this rank reports `st`: returns `Err` ([`PeerStopped`] or this
    /// rank's own status) when any rank reported a failure — then, and ever after, the
    /// trial is over for every rank.
    pub fn sync(&self, st: Status) -> Result<()> {
        if !self.is_multi() {
            return Ok(());
        }
        if let Some(seen) = *self.failure.lock().unwrap_or_else(|e| e.into_inner()) {
            return Err(self.peer_error(seen));
        }
        let code = self.collective(|t| t.min_u64(st.code(self.rank(), self.size())))?;
        match Status::decode(code, self.size()) {
            None => Ok(()),
            Some(seen) => {
                *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(seen);
                Err(self.peer_error(seen))
            }
        }
    }

    fn peer_error(&self, (st, rank): (Status, usize)) -> anyhow::Error {
        let what = match st {
            Status::Failed => "failed",
            Status::Interrupted => "was interrupted",
            Status::Stopped | Status::Ok => "stopped",
        };
        let peer = PeerStopped {
            rank,
            host: self.hosts.get(rank).cloned().unwrap_or_default(),
            what: what.to_string(),
        };
        match st {
            // Exit 130 on every rank, as for the interrupted one.
            Status::Interrupted => anyhow::Error::new(Error::Interrupted).context(peer),
            _ => peer.into(),
        }
    }

    /// A sync on a step every rank takes (opening the database, the state file): every
    /// rank gets `Err` when any failed (its own error, or which rank failed), so that no
    /// rank goes on to a collective call that a failed rank will never make.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        let synced = self.sync(if r.is_ok() {
            Status::Ok
        } else {
            Status::Failed
        });
        match (r, synced) {
            (Err(e), _) => Err(e),
            (Ok(_), Err(peer)) => Err(peer),
            (Ok(v), Ok(())) => Ok(v),
        }
    }

    /// Whether a sync has reported a failure: the run stops.
    pub fn failure_seen(&self) -> bool {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Before each trial: fails when this process was interrupted (alone) or any rank
    /// was, so that every rank stops at the same point.
    pub fn start_trial(&self) -> Result<()> {
        if !self.is_multi() {
            return check_stop();
        }
        let st = if stop_requested() {
            Status::Interrupted
        } else {
            Status::Ok
        };
        self.sync(st)?;
        check_stop()
    }

    /// How this rank's `e` counts at a sync.
    fn classify(&self, e: &anyhow::Error) -> Status {
        if e.chain().any(|c| c.downcast_ref::<PeerStopped>().is_some()) {
            Status::Stopped
        } else if exit_code(e) == exit::INTERRUPTED {
            if self.peer_stop.load(Ordering::Relaxed) != usize::MAX {
                Status::Stopped
            } else {
                Status::Interrupted
            }
        } else {
            Status::Failed
        }
    }

    /// At the end of a trial's work, before teardown: a rank that failed tells the others
    /// to stop, and every rank learns whether any failed (one sync, unless an earlier one
    /// already told). Returns this rank's own outcome, or the peer's failure when this
    /// rank itself was fine or only stopped because of it.
    pub fn end_trial(&self, outcome: Result<()>) -> Result<()> {
        if !self.is_multi() {
            return outcome;
        }
        let st = match &outcome {
            Ok(()) => Status::Ok,
            Err(e) => self.classify(e),
        };
        if st == Status::Failed || st == Status::Interrupted {
            self.t.send_stop();
        }
        let synced = self.sync(st);
        match (outcome, synced) {
            (Err(e), _) if st == Status::Failed || st == Status::Interrupted => Err(e),
            (_, Err(peer)) => Err(peer),
            (outcome, Ok(())) => outcome,
        }
    }

    /// The stop message watcher for one phase: while the returned guard lives, a stop
    /// message from another rank sets the process's stop flag. `None` for one process.
    pub fn watch(&self) -> Option<Watch> {
        if !self.is_multi() {
            return None;
        }
        let done = Arc::new(AtomicBool::new(false));
        let (t, d, peer) = (
            Arc::clone(&self.t),
            Arc::clone(&done),
            Arc::clone(&self.peer_stop),
        );
        let handle = std::thread::Builder::new()
            .name("fsarena-mpi-watch".into())
            .spawn(move || {
                while !d.load(Ordering::Relaxed) {
                    if let Some(r) = t.stop_received() {
                        peer.store(r, Ordering::Relaxed);
                        STOP.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            })
            .ok()?;
        Some(Watch {
            done,
            handle: Some(handle),
        })
    }

    /// Rank 0's aggregate of every rank's `trial` (with their figures in `ranks`); the
    /// other ranks get their own trial back. Collective.
    pub fn gather_trial(&self, trial: Trial) -> Result<Trial> {
        if !self.is_multi() {
            return Ok(trial);
        }
        if self.is_gone() {
            // On its own: rank 0 keeps its own figures.
            return Ok(trial);
        }
        let mine = wire::rank_trial(&trial, self.rank(), &self.hosts[self.rank()]);
        let encoded = wire::encode(&mine)?;
        let all = self.collective(|t| t.all_gather(&encoded))?;
        if self.rank() != 0 {
            return Ok(trial);
        }
        let ranks = all
            .iter()
            .map(|b| wire::decode(b))
            .collect::<Result<Vec<_>>>()?;
        Ok(merge::aggregate(trial, ranks, self.stonewall))
    }

    /// Rank 0's run id on every rank.
    pub fn agree_run_id(&self, mine: String) -> Result<String> {
        if !self.is_multi() {
            return Ok(mine);
        }
        String::from_utf8(self.collective(|t| t.broadcast(mine.as_bytes()))?)
            .map_err(|_| anyhow!("the run id rank 0 sent is not text"))
    }

    /// The name this rank gives its own resources (images, mount points, directories) in
    /// run `run_id`: ranks on one node must not collide.
    pub fn resource_id(&self, run_id: &str) -> String {
        if self.is_multi() {
            format!("{run_id}-r{}", self.rank())
        } else {
            run_id.to_string()
        }
    }

    /// The trial's directories on a prepared target: (this rank's work directory, the
    /// directory every rank sees). Under `--mpi shared` each rank works in its own
    /// `rank-N` subdirectory of the shared one, after a sync that says every rank sees it.
    pub fn workdirs(&self, prepared: PathBuf) -> Result<(PathBuf, PathBuf)> {
        if !self.is_shared() {
            return Ok((prepared.clone(), prepared));
        }
        self.sync(Status::Ok)?;
        let own = prepared.join(format!("rank-{}", self.rank()));
        std::fs::create_dir(&own)
            .map_err(|e| anyhow!("rank {}: creating {}: {e}", self.rank(), own.display()))?;
        Ok((own, prepared))
    }

    /// The exit code every rank ends with: the largest of theirs. Collective (the last
    /// one, after rank 0 has stored and printed everything, so that no rank's exit makes
    /// mpirun kill rank 0 half way).
    pub fn finish(&self, code: i32) -> i32 {
        if self.mode.is_none() {
            return code;
        }
        match self.collective(|t| t.min_u64(u64::MAX - code.max(0) as u64)) {
            Ok(min) => (u64::MAX - min) as i32,
            Err(_) => code.max(exit::FAILURE),
        }
    }

    /// Whether this process must exit without finalising MPI, after [`Self::finish`]
    /// gave `code`: a finalise waits for every rank and for mpirun, which may be gone (a
    /// collective was given up) or ending the job (an interrupted run: mpirun is being
    /// stopped). mpirun then says that a rank exited without finalising; every rank has
    /// torn down by then.
    pub fn must_skip_finalize(&self, code: i32) -> bool {
        self.mode.is_some() && (code == exit::INTERRUPTED || self.is_gone())
    }
}

impl PhaseGate for Dist {
    fn is_multi(&self) -> bool {
        Dist::is_multi(self)
    }
    fn barrier(&self) -> Result<()> {
        self.sync(Status::Ok)
    }
    fn watch(&self) -> Option<Watch> {
        Dist::watch(self)
    }
}

#[cfg(feature = "mpi")]
fn mpi_transport(timeout_s: f64) -> Result<Arc<dyn Transport>> {
    Ok(Arc::new(libmpi::MpiTransport::init(timeout_s)?))
}

#[cfg(not(feature = "mpi"))]
fn mpi_transport(_timeout_s: f64) -> Result<Arc<dyn Transport>> {
    Err(usage(
        "--mpi needs fsarena built with MPI: install an MPI and libclang (Debian: apt-get \
         install libopenmpi-dev openmpi-bin libclang-dev), then `cargo build --release \
         --features mpi`, and start it with `mpirun -np N fsarena run --mpi shared|fleet …` \
         (docs/distributed.md)",
    ))
}

#[cfg(test)]
mod tests;
