//! The space of `ace` workloads: which can run, their names, and the ones a run picks.

use super::{Model, Step, CORES, PERSISTS};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The workloads of `seq` steps (1 or 2) that can run: a step that needs a name the
/// workload removed (a rename of an unlinked file) is left out.
pub fn space(seq: u64) -> Vec<Vec<Step>> {
    let steps: Vec<Step> = CORES
        .iter()
        .flat_map(|c| PERSISTS.iter().map(move |p| (c.0, p.0)))
        .collect();
    let mut all: Vec<Vec<Step>> = steps.iter().map(|&s| vec![s]).collect();
    for _ in 1..seq {
        all = all
            .iter()
            .flat_map(|w| steps.iter().map(move |&s| [w.as_slice(), &[s]].concat()))
            .collect();
    }
    all.retain(|w| valid(w));
    all
}

/// The workloads a run of `seq` steps with `ops` workloads runs: the whole space if it
/// holds no more, else `ops` of it chosen by `seed`.
pub fn chosen(seq: u64, ops: u64, seed: u64) -> Vec<Vec<Step>> {
    let mut all = space(seq);
    if all.len() as u64 > ops {
        all.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xace));
        all.truncate(ops as usize);
    }
    all
}

/// Whether workload `steps` can run.
pub fn valid(steps: &[Step]) -> bool {
    let mut m = Model::new(0, "w", 16 << 10);
    steps.iter().enumerate().all(|(k, s)| m.step(s.0, k).is_ok())
}

/// A workload's name: `CORE:PERSIST` steps joined by `+`.
pub fn name(steps: &[Step]) -> String {
    let step = |s: &Step| {
        let c = CORES.iter().find(|x| x.0 == s.0).map_or("?", |x| x.1);
        let p = PERSISTS.iter().find(|x| x.0 == s.1).map_or("?", |x| x.1);
        format!("{c}:{p}")
    };
    steps.iter().map(step).collect::<Vec<_>>().join("+")
}

/// Workloads by name ([`name`]), several joined by `/`.
pub fn parse(text: &str) -> Result<Vec<Vec<Step>>, String> {
    let step = |s: &str| -> Result<Step, String> {
        let (c, p) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?}: a step is CORE:PERSIST, as truncate0:fsync"))?;
        let core = CORES.iter().find(|x| x.1 == c).ok_or_else(|| {
            let names: Vec<&str> = CORES.iter().map(|x| x.1).collect();
            format!("{c:?}: not a core operation ({})", names.join(", "))
        })?;
        let persist = PERSISTS.iter().find(|x| x.1 == p).ok_or_else(|| {
            format!("{p:?}: not a persistence operation (fsync, fdatasync, fsyncdir)")
        })?;
        Ok((core.0, persist.0))
    };
    text.split('/')
        .map(|w| {
            let steps = w.split('+').map(step).collect::<Result<Vec<_>, _>>()?;
            match valid(&steps) {
                true => Ok(steps),
                false => Err(format!("{w:?}: a step needs a name an earlier one removed")),
            }
        })
        .collect()
}
