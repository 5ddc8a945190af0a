//! db_bench's named profiles: each answers one question and sets the defaults of the
//! parameters not given (docs/databases.md, "db_bench's profiles"):
//! * **`commit-latency`** (the default): `sync=true`, an fsync of the WAL at every write
//!   (`--sync`), on 10,000 keys — what a durable commit costs on the filesystem. The old
//!   default (`sync=false`, 500,000 keys, below one 64 MiB memtable) was not that: its
//!   writes end in RocksDB's memory and the page cache, so it measured the CPU (tmpfs led
//!   ext4 by 3% on fillrandom, issue 56), and it is not kept under another name: `steady`
//!   is the no-sync question asked of a database that flushes and compacts. A synced write
//!   costs about 0.9 ms on ext4 over a loop device here (1,150 ops/s, 2-vCPU VM, busy), so
//!   10,000 keys take about 9 s a writing phase, a few times the old default's 3 s; fewer
//!   would leave p99.9 under ten samples.
//! * **`steady`**: 5,000,000 keys (about 580 MB of keys and values, nine 64 MiB memtables),
//!   so that memtable flushes and compactions happen again and again inside every phase, as
//!   on a database that has been up for hours; `sync=false`; the settling between phases as
//!   always. On ext4 over a loop device here (busy), fillrandom took 116 s (43,178 ops/s,
//!   293 MB written by compactions, `write_amp` 1.91) and overwrite 130 s; readrandom of all
//!   five million keys took 421 s (11,872 ops/s, from a cold cache), so the reading phases
//!   read one million of them (`reads=1000000`), under two minutes.
//! * **`io-bound`**: reads and background writes that bypass the page cache
//!   (`use_direct_reads=true`, `use_direct_io_for_flush_and_compaction=true`) and an 8 MiB
//!   block cache (`cache_size=8388608`, db_bench's default, recorded) over 1,000,000 keys
//!   (about 60 MB of SST files, seven times the cache), so that a read that misses the
//!   block cache reads the device: its `dev_read_bytes_per_op` shows it. The reading
//!   phases read 100,000 of the keys (`reads=100000`): a read from the device costs about
//!   0.3 ms on ext4 over a loop device here (3,367 ops/s, busy), so the million would take
//!   five minutes a phase. tmpfs accepts `O_DIRECT` since Linux 6.6 (its reads are then
//!   copies from memory, no device).
//!
//! A parameter given wins over its profile's default; an `opt` item naming a flag the
//! profile sets wins over the profile's; the parameters recorded with the trial (`opt`
//! with the profile's flags in it) are the ones that ran.

use crate::workload::params::Value;
use crate::workload::Params;
use anyhow::Result;

/// The profiles, by the names users type; the first is the default.
pub const PROFILES: &[&str] = &["commit-latency", "steady", "io-bound"];

/// A profile's defaults.
#[derive(Clone, Copy, Debug)]
struct Defaults {
    num: u64,
    sync: bool,
    /// db_bench flags it adds unless `opt` names them.
    flags: &'static [(&'static str, &'static str)],
}

/// The defaults of profile `name`.
fn defaults(name: &str) -> Defaults {
    match name {
        "steady" => Defaults {
            num: 5_000_000,
            sync: false,
            flags: &[("reads", "1000000")],
        },
        "io-bound" => Defaults {
            num: 1_000_000,
            sync: false,
            flags: &[
                ("use_direct_reads", "true"),
                ("use_direct_io_for_flush_and_compaction", "true"),
                ("cache_size", "8388608"),
                ("reads", "100000"),
            ],
        },
        _ => Defaults {
            num: 10_000,
            sync: true,
            flags: &[],
        },
    }
}

/// Fills the defaults the profile sets ([`crate::workload::WorkloadInfo::resolve`]): `num`
/// and `sync` when not given, and the profile's flags put before the user's `opt` items,
/// those the user names left out.
pub fn resolve(p: &mut Params) -> Result<()> {
    let d = defaults(p.choice("profile"));
    if !p.given("num") {
        p.set("num", Value::Count(d.num));
    }
    if !p.given("sync") {
        p.set("sync", Value::Bool(d.sync));
    }
    let given = p.text("opt").unwrap_or("").to_string();
    let named = |flag: &str| {
        given
            .split(',')
            .any(|g| g.trim().trim_start_matches('-').split('=').next() == Some(flag))
    };
    let mut items: Vec<String> = d
        .flags
        .iter()
        .filter(|(flag, _)| !named(flag))
        .map(|(flag, v)| format!("{flag}={v}"))
        .collect();
    if !given.trim().is_empty() {
        items.push(given.trim().to_string());
    }
    p.set("opt", Value::Text(items.join(",")));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(text: &str) -> Params {
        crate::workload::WorkloadSpec::parse(&format!("db_bench:{text}"))
            .unwrap()
            .params
    }

    #[test]
    fn each_profile_sets_its_defaults() {
        let c = resolved("");
        assert_eq!(c.choice("profile"), "commit-latency");
        assert_eq!((c.count("num"), c.flag("sync")), (Some(10_000), true));
        assert_eq!(c.text("opt").unwrap_or(""), "");
        let s = resolved("profile=steady");
        assert_eq!((s.count("num"), s.flag("sync")), (Some(5_000_000), false));
        assert_eq!(s.text("opt"), Some("reads=1000000"));
        let io = resolved("profile=io-bound");
        assert_eq!((io.count("num"), io.flag("sync")), (Some(1_000_000), false));
        assert_eq!(
            io.text("opt"),
            Some(
                "use_direct_reads=true,use_direct_io_for_flush_and_compaction=true,\
                 cache_size=8388608,reads=100000"
            )
        );
        // What the profile does not set keeps its default.
        for p in [&c, &s, &io] {
            assert_eq!(p.count("value_size"), Some(100));
            assert_eq!(p.count("threads"), Some(1));
        }
    }

    #[test]
    fn a_given_parameter_wins_and_is_recorded() {
        let c = resolved("sync=false,num=7");
        assert_eq!((c.count("num"), c.flag("sync")), (Some(7), false));
        let io = resolved("profile=io-bound,num=300,opt='cache_size=1048576,bloom_bits=10'");
        assert_eq!(io.count("num"), Some(300));
        let opt = io.text("opt").unwrap();
        assert_eq!(
            opt,
            "use_direct_reads=true,use_direct_io_for_flush_and_compaction=true,\
             reads=100000,cache_size=1048576,bloom_bits=10"
        );
        // The recorded parameters are the resolved ones, and resolving again changes
        // nothing (build resolves parameters that come without it).
        let rec = io.to_text_map();
        assert_eq!(rec["opt"], opt);
        assert_eq!(rec["num"], "300");
        assert_eq!(rec["sync"], "false");
        let mut again = io.clone();
        resolve(&mut again).unwrap();
        assert_eq!(again.to_text_map(), rec);
        // The user's flag, given with db_bench's dashes, still replaces the profile's.
        let dashed = resolved("profile=io-bound,opt='--use_direct_reads=false'");
        assert_eq!(
            dashed.text("opt"),
            Some(
                "use_direct_io_for_flush_and_compaction=true,cache_size=8388608,\
                 reads=100000,--use_direct_reads=false"
            )
        );
    }

    #[test]
    fn unknown_profiles_are_refused() {
        let e = crate::workload::WorkloadSpec::parse("db_bench:profile=fast")
            .map(|_| ())
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
    }
}
