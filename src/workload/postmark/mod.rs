//! Postmark 1.5 (Jeffrey Katcher, NetApp TR3022, 1997; `postmark-1.51.c`, 2001): the
//! small-file workload of mail, news and web servers.
//!
//! Faithful: the algorithm and the random choices of postmark 1.51. The generator is its
//! Mersenne Twister with the 1999 `sgenrand` seeding, and RND(x) = genrand() mod x; the
//! 2 × `size_high`-byte source buffer is drawn first (`32 + RND(95)` per byte), so with the
//! same `seed` every name, size and choice is postmark's (checked against the Debian
//! binary with strace). A pool of `number` files named by a counter (`s<RND(subdirs)>/`
//! first when `subdirs` > 1, as postmark only uses subdirectories from 2 on), sizes
//! `size_low + RND(size_high - size_low)`, in a table of 2 × `number` slots filled from a
//! moving pointer; then `transactions`, each a read or append (`RND(10) < bias_read`; a
//! file is picked by probing random slots until one is in use; an append adds
//! `RND(size_high - size) + 1` bytes and is skipped when the file has reached
//! `size_high`) and a create or delete (`RND(10) < bias_create`); a bias of -1 disables
//! that half. Then every remaining file is deleted. Files are written from the start of
//! the source buffer in `write_block` pieces and read in `read_block` pieces; with
//! `buffering=true` through a stdio-like buffer of the file's `st_blksize` (glibc's
//! choice, 4 KiB here), so the system calls are 4 KiB reads and writes as postmark's; with
//! `false`, raw `read`/`write` of the block sizes. Opens are postmark's: `w`/`r`/`a`
//! stdio modes, or `O_RDWR|O_CREAT` 0644, `O_RDONLY`, `O_RDWR|O_APPEND` unbuffered. Like
//! postmark, a run that runs out of files stops and reports nothing (an error here).
//! Postmark opens and unlinks each file by its whole path (`location/s3/1234`); fsarena by
//! its name in its directory (`openat`/`unlinkat` on the directory, opened once per
//! phase), so that the kernel's walk of the path down to the work directory — the tool's
//! placement, one lookup per component per operation — is not counted as the workload's.
//!
//! Figures: phases `create` (files/s: postmark's "creation alone"), `transactions`
//! (transactions/s; each transaction is one operation, its read, append, create and delete
//! parts keep their own latency histograms) and `delete` (files/s: "deletion alone"). The
//! other rates postmark prints are extra figures: on `transactions` the per-second rates
//! over the transaction time (`read_per_s`, `appended_per_s`, `created_mixed_per_s`,
//! `deleted_mixed_per_s`, `transactions_per_s`); on `delete` those over the whole run
//! (create + transactions + delete: `created_per_s`, `deleted_per_s`,
//! `read_bytes_per_s`, `written_bytes_per_s`, `total_s`) and on `create`
//! `created_alone_per_s`.
//!
//! Differs: nanosecond timers instead of postmark's `time()`, whose 1-second resolution
//! makes any run under a few seconds meaningless (and whose `diff_time` turns 0 s into
//! 1 s). The overall "deleted" figure counts deleted files: postmark prints the created
//! count there. Postmark crashes (SIGFPE, `i % (transactions/10)`) with fewer than 10
//! transactions; fsarena does not. Contents follow `--data`: the source buffer is filled
//! from the data pool instead of printable random characters (the random draws are still
//! made, so the choices stay postmark's), and, as in postmark, every write starts at the
//! buffer's beginning. Postmark never syncs; under fsarena's default `--sync end` each
//! phase ends with a syncfs inside its timing, `--sync each` fsyncs every written file
//! and the directory after each create and delete, and `--sync none` is postmark.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::policy::SyncPolicy;
use crate::probe::recorder::Op;
use crate::workload::mt19937::Mt19937;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Result};
use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod table;

use table::State;

const BIASES: &[&str] = &["-1", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "number",
        kind: ParamKind::Count,
        default: "500",
        unit: "files",
        help: "files in the initial pool (set number)",
    },
    ParamSpec {
        name: "transactions",
        kind: ParamKind::Count,
        default: "500",
        unit: "transactions",
        help: "transactions after the pool is made (set transactions)",
    },
    ParamSpec {
        name: "size_low",
        kind: ParamKind::Size,
        default: "500",
        unit: "bytes",
        help: "smallest new file (set size LOW HIGH)",
    },
    ParamSpec {
        name: "size_high",
        kind: ParamKind::Size,
        default: "10000",
        unit: "bytes",
        help: "largest new file; appends stop at this size",
    },
    ParamSpec {
        name: "subdirs",
        kind: ParamKind::Count,
        default: "0",
        unit: "directories",
        help: "subdirectories s0..sN-1 (used from 2 on, as postmark)",
    },
    ParamSpec {
        name: "read_block",
        kind: ParamKind::Size,
        default: "512",
        unit: "bytes",
        help: "read size (set read)",
    },
    ParamSpec {
        name: "write_block",
        kind: ParamKind::Size,
        default: "512",
        unit: "bytes",
        help: "write size (set write)",
    },
    ParamSpec {
        name: "bias_read",
        kind: ParamKind::Choice(BIASES),
        default: "5",
        unit: "of 10",
        help: "chance of read over append; -1 disables reads and appends",
    },
    ParamSpec {
        name: "bias_create",
        kind: ParamKind::Choice(BIASES),
        default: "5",
        unit: "of 10",
        help: "chance of create over delete; -1 disables creates and deletes",
    },
    ParamSpec {
        name: "buffering",
        kind: ParamKind::Bool,
        default: "true",
        unit: "",
        help: "stdio-like buffered I/O (true) or raw read/write (false)",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Count,
        default: "42",
        unit: "",
        help: "postmark's random seed (set seed)",
    },
];

const fn phase(name: &'static str, kind: PhaseKind, unit: &'static str) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::OpsPerS,
        ops_unit: unit,
    }
}

const CREATE: PhaseSpec = phase("create", PhaseKind::Write, "files/s");
const TRANSACTIONS: PhaseSpec = phase("transactions", PhaseKind::Write, "transactions/s");
const DELETE: PhaseSpec = phase("delete", PhaseKind::Meta, "files/s");
const PHASES: &[PhaseSpec] = &[CREATE, TRANSACTIONS, DELETE];

/// Postmark's own report lines (rates over the phase they name, or over the whole run).
pub const FIGURES: &[Figure] = &[
    Figure::higher("created_alone_per_s", "files/s"),
    Figure::higher("transactions_per_s", "transactions/s"),
    Figure::higher("read_per_s", "files/s"),
    Figure::higher("appended_per_s", "files/s"),
    Figure::higher("created_mixed_per_s", "files/s"),
    Figure::higher("deleted_mixed_per_s", "files/s"),
    Figure::higher("deleted_alone_per_s", "files/s"),
    Figure::higher("created_per_s", "files/s"),
    Figure::higher("deleted_per_s", "files/s"),
    Figure::higher("read_bytes_per_s", "bytes/s"),
    Figure::higher("written_bytes_per_s", "bytes/s"),
    Figure::lower("total_s", "s"),
];

/// The `postmark` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "postmark",
    about: "Postmark 1.5 (Katcher, NetApp): a pool of small files, then transactions of \
            read-or-append and create-or-delete, then delete all",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: Some("Postmark"),
    param_applies: None,
    after_merge: None,
    resolve: None,
    // Its transactions create files as well, up to about half as many again.
    database: None,
    programs: &[],
    phase_time_knobs: &[
        super::Knob::new("number", &["create", "delete"], 1.5),
        super::Knob::new("transactions", &["transactions"], 0.0),
    ],
    build,
};

const MAX_FILES: u64 = 100_000_000;
const MAX_SIZE: u64 = 1 << 30;

#[derive(Clone, Debug)]
struct Config {
    number: u64,
    transactions: u64,
    low: u64,
    high: u64,
    subdirs: u64,
    read_block: usize,
    write_block: usize,
    bias_read: i32,
    bias_create: i32,
    buffered: bool,
    seed: u32,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let count = |k| p.count(k).expect("default");
    let bytes = |k| p.bytes(k).expect("default");
    let bias = |k| p.choice(k).parse::<i32>().expect("a listed bias");
    let cfg = Config {
        number: count("number"),
        transactions: count("transactions"),
        low: bytes("size_low"),
        high: bytes("size_high"),
        subdirs: count("subdirs"),
        read_block: bytes("read_block") as usize,
        write_block: bytes("write_block") as usize,
        bias_read: bias("bias_read"),
        bias_create: bias("bias_create"),
        buffered: p.flag("buffering"),
        seed: count("seed") as u32,
    };
    let problem = if cfg.number == 0 || cfg.number > MAX_FILES {
        format!("number={}: must be 1 to {MAX_FILES}", cfg.number)
    } else if cfg.low == 0 || cfg.low > cfg.high || cfg.high > MAX_SIZE {
        format!(
            "size_low={} size_high={}: need 1 ≤ size_low ≤ size_high ≤ 1GiB",
            cfg.low, cfg.high
        )
    } else if cfg.read_block == 0 || cfg.write_block == 0 {
        "read_block and write_block must be at least 1 byte".to_string()
    } else if cfg.read_block > 64 << 20 || cfg.write_block > 64 << 20 {
        "read_block and write_block must be at most 64MiB".to_string()
    } else if cfg.subdirs > 100_000 {
        format!("subdirs={}: at most 100000", cfg.subdirs)
    } else if p.count("seed").expect("default") > u64::from(u32::MAX) {
        "seed must fit 32 bits".to_string()
    } else {
        return Ok(Box::new(Postmark { cfg }));
    };
    Err(usage(format!("postmark: {problem}")))
}

struct Postmark {
    cfg: Config,
}

impl Workload for Postmark {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let cfg = &self.cfg;
        let root = cx.workdir().to_path_buf();
        let mut state = State::new(cfg, &root);
        state.source = vec![0; 2 * cfg.high as usize];
        cx.data().source(0).fill(&mut state.source);
        if cfg.subdirs > 1 {
            for s in 0..cfg.subdirs {
                let d = root.join(format!("s{s}"));
                fs::create_dir(&d).on("mkdir", &d)?;
            }
        }
        let state = Mutex::new(state);
        let number = cfg.number;
        cx.phase(&CREATE, 1, |w| {
            let mut s = state.lock().unwrap();
            s.open_dirs()?;
            for _ in 0..number {
                w.check()?;
                s.create(Some(w), false)?;
            }
            s.dirs.clear();
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let create_s = cx.phases().last().map_or(0.0, |p| p.wall_s);
        cx.note("created_alone_per_s", per_s(number, create_s));
        let transactions = cfg.transactions;
        let done = Mutex::new(0u64);
        cx.phase(&TRANSACTIONS, 1, |w| {
            let mut s = state.lock().unwrap();
            s.open_dirs()?;
            for _ in 0..transactions {
                w.check()?;
                if s.created == s.deleted {
                    let n = *done.lock().unwrap();
                    bail!(
                        "postmark: out of files after {n} of {transactions} transactions; \
                         increase number or decrease transactions (postmark reports nothing \
                         either)"
                    );
                }
                let t = w.start();
                s.transaction(Some(w))?;
                w.done(Op::Transaction, t, 0);
                *done.lock().unwrap() += 1;
            }
            s.dirs.clear();
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let t_s = cx.phases().last().map_or(0.0, |p| p.wall_s);
        let (created_pool, deleted_before) = {
            let s = state.lock().unwrap();
            let (created, deleted, read, appended) = (s.created, s.deleted, s.read, s.appended);
            drop(s);
            cx.note("transactions_per_s", per_s(transactions, t_s));
            cx.note("read_per_s", per_s(read, t_s));
            cx.note("appended_per_s", per_s(appended, t_s));
            cx.note("created_mixed_per_s", per_s(created - number, t_s));
            cx.note("deleted_mixed_per_s", per_s(deleted, t_s));
            (created, deleted)
        };
        cx.phase(&DELETE, 1, |w| {
            let mut s = state.lock().unwrap();
            s.open_dirs()?;
            for i in 0..s.table.len() {
                w.check()?;
                s.delete_file(Some(w), i, false)?;
            }
            s.dirs.clear();
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let delete_s = cx.phases().last().map_or(0.0, |p| p.wall_s);
        let s = state.into_inner().unwrap();
        let total_s = create_s + t_s + delete_s;
        cx.note(
            "deleted_alone_per_s",
            per_s(s.deleted - deleted_before, delete_s),
        );
        cx.note("created_per_s", per_s(created_pool, total_s));
        cx.note("deleted_per_s", per_s(s.deleted, total_s));
        cx.note(
            "read_bytes_per_s",
            s.bytes_read as f64 / total_s.max(f64::MIN_POSITIVE),
        );
        cx.note(
            "written_bytes_per_s",
            s.bytes_written as f64 / total_s.max(f64::MIN_POSITIVE),
        );
        cx.note("total_s", total_s);
        if cfg.subdirs > 1 {
            for sub in 0..cfg.subdirs {
                let d = root.join(format!("s{sub}"));
                fs::remove_dir(&d).on("rmdir", &d)?;
            }
        }
        Ok(())
    }
}

fn per_s(n: u64, s: f64) -> f64 {
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
