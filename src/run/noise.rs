//! The noise probe at the start of a run with `--reps auto` or `--reps-for`: before the
//! first filesystem is made, the same small work is timed a few times — 16 MiB written and
//! fdatasync'ed into an unnamed file (O_TMPFILE) in the image directory, whose disk the
//! loop images live on, and a fixed computation — and the run says up front, from how much
//! those timings vary, what size of difference its repetitions can tell apart and what a
//! 10% difference would take. The phases' own spread, known only after their third
//! repetition, decides the verdict (its `Could tell:` line); the probe is the forecast a
//! person can act on before waiting (more time, fewer targets, a quieter machine).

use crate::result::NoiseProbe;
use crate::stats::power::{planned_detectable_log, reps_for};
use anyhow::{Context, Result};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// Measured rounds of each kind (after one unmeasured).
pub const ROUNDS: u32 = 6;
/// Bytes each write round writes and syncs.
pub const IO_BYTES: u64 = 16 << 20;

/// Times the probe's work in `dir` (see the module docs).
pub fn measure(dir: &Path) -> Result<NoiseProbe> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o600)
        .open(dir)
        .with_context(|| format!("an unnamed file in {}", dir.display()))?;
    let mut buf = vec![0u8; IO_BYTES as usize];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    let mut io = Vec::new();
    let mut cpu = Vec::new();
    for round in 0..=ROUNDS {
        let t = Instant::now();
        file.write_all_at(&buf, 0)?;
        file.sync_data()?;
        let io_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        std::hint::black_box(compute(&buf));
        let cpu_s = t.elapsed().as_secs_f64();
        if round > 0 {
            io.push(io_s);
            cpu.push(cpu_s);
        }
    }
    Ok(NoiseProbe {
        rounds: ROUNDS,
        io_bytes: IO_BYTES,
        io_cv: cv(&io),
        cpu_cv: cv(&cpu),
    })
}

/// A fixed computation over `buf`: four passes of a multiply-xor fold.
fn compute(buf: &[u8]) -> u64 {
    let mut h: u64 = 0;
    for _ in 0..4 {
        for w in buf.chunks_exact(8) {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            h = (h ^ v).wrapping_mul(0x100_0000_01b3).rotate_left(5);
        }
    }
    h
}

/// Standard deviation over mean.
fn cv(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

/// What a person reads of `probe` for a run whose verdict makes `tests` comparisons with
/// `reps` repetitions a target: the smallest difference told apart at 80% power if the
/// phases vary as much as the probe's writes (or its computation, if more), each test at
/// the level a first call of the verdict must pass (0.05/`tests`), and the repetitions a
/// 10% difference (1.11×) would take. `None` without a comparison to make.
pub fn forecast(probe: &NoiseProbe, tests: usize, reps: u32) -> Option<String> {
    if tests == 0 || reps < 2 {
        return None;
    }
    let cv = probe.io_cv.max(probe.cpu_cv);
    let var = (1.0 + cv * cv)
        .ln()
        .max(crate::stats::power::LOG_SD_FLOOR.powi(2));
    let alpha = 0.05 / tests as f64;
    let seen = planned_detectable_log(var, reps as usize, alpha).exp();
    let ten = match reps_for(var, var, 10.0, alpha) {
        Some(k) => format!("about {k}"),
        None => format!("more than {}", crate::stats::power::MAX_REPS_FOR),
    };
    // Beyond 10× a ratio is not printed as a number a reader would quote (as the
    // verdict's intervals).
    let told = match seen < 10.0 {
        true => format!(
            "tell apart differences of {} or more",
            crate::compare::rank::fmt_ratio(seen)
        ),
        false => "tell apart only differences over 10×".to_string(),
    };
    Some(format!(
        "Noise probe: {} timings of {} MiB written and fdatasync'ed beside the images vary by \
         {}% (CV), of a fixed computation by {}%. If the phases vary by {}%, \
         {reps} repetitions a target {told}, and 10% would take {ten} (80% power, each of \
         the {tests} tests at 0.05/{tests}).",
        probe.rounds,
        probe.io_bytes >> 20,
        pct(probe.io_cv),
        pct(probe.cpu_cv),
        pct(cv),
    ))
}

/// A coefficient of variation in percent, to two figures.
fn pct(cv: f64) -> String {
    crate::stats::precision::fmt_width_pct(cv * 100.0)
}

/// The comparisons the figures of `plan` take part in: every pair of its ranked targets
/// (the persistent ones when there are two or more, a tmpfs being shown beside them) in
/// each phase its workloads declare, or, when that is fewer, each target's phases against
/// another run's (a CI gate's) — as `--reps-for` counts them (`stats::precision::
/// detect_alpha`).
pub fn tests_of(plan: &crate::plan::Plan) -> usize {
    let phases: usize = plan.workloads.iter().map(|w| w.info.phases.len()).sum();
    let all = plan.targets.len();
    let persistent = plan
        .targets
        .iter()
        .filter(|t| !matches!(t.spec, crate::provision::TargetSpec::Tmpfs { .. }))
        .count();
    let k = if persistent >= 2 { persistent } else { all };
    phases * (k * k.saturating_sub(1) / 2).max(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_times_its_work_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let probe = measure(dir.path()).unwrap();
        assert_eq!((probe.rounds, probe.io_bytes), (ROUNDS, IO_BYTES));
        assert!(probe.io_cv.is_finite() && probe.io_cv >= 0.0, "{probe:?}");
        assert!(probe.cpu_cv.is_finite() && probe.cpu_cv >= 0.0, "{probe:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_forecast_follows_the_noise_the_tests_and_the_repetitions() {
        let probe = |io_cv| NoiseProbe {
            rounds: ROUNDS,
            io_bytes: IO_BYTES,
            io_cv,
            cpu_cv: 0.01,
        };
        let ratio = |line: &str| -> f64 {
            let at = line.find("differences of ").unwrap() + "differences of ".len();
            line[at..].split('×').next().unwrap().parse().unwrap()
        };
        let quiet = forecast(&probe(0.02), 6, 3).unwrap();
        // Past 10× no number is quoted.
        let wild = forecast(&probe(0.3), 90, 3).unwrap();
        assert!(
            wild.contains("tell apart only differences over 10×"),
            "{wild}"
        );
        let noisy = forecast(&probe(0.05), 6, 3).unwrap();
        let more = forecast(&probe(0.05), 6, 10).unwrap();
        let many = forecast(&probe(0.05), 30, 3).unwrap();
        assert!(ratio(&quiet) < ratio(&noisy), "{quiet}\n{noisy}");
        assert!(ratio(&more) < ratio(&noisy), "{more}\n{noisy}");
        assert!(ratio(&many) > ratio(&noisy), "{many}\n{noisy}");
        // The figure is the power rule's, at 0.05/6 for pairs of logs varying by 5%.
        let var = (1.0f64 + 0.05 * 0.05).ln();
        let k = reps_for(var, var, 10.0, 0.05 / 6.0).unwrap();
        assert!(
            noisy.contains(&format!("10% would take about {k} ")),
            "{noisy}"
        );
        assert_eq!(forecast(&probe(0.15), 0, 3), None);
    }
}
