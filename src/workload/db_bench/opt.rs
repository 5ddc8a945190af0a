//! The user's own db_bench flags (`db_bench:opt='cache_size=8388608,bloom_bits=10'`): each
//! item `name=value` is passed as `--name=value` to every db_bench process of the trial,
//! and recorded in the trial's engine settings. Refused before anything runs: a malformed
//! item, a flag that would put the database's files (or read its options) elsewhere than
//! the target, and a flag fsarena sets itself. A name db_bench does not know is refused by
//! db_bench when the first phase starts (the error names it).

use crate::error::usage;
use crate::workload::params::echo;
use anyhow::Result;

/// One `name=value` item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opt {
    pub name: String,
    pub value: String,
}

impl Opt {
    /// The item as db_bench's argument, `--name=value`.
    pub fn arg(&self) -> String {
        format!("--{}={}", self.name, self.value)
    }

    /// Whether the item turns durability off: `disable_wal` (no WAL: the writes since the
    /// last flush are lost in a crash) and `manual_wal_flush` (the WAL stays in RocksDB's
    /// buffer until a flush db_bench never asks for), true as gflags reads a bool.
    pub fn not_durable(&self) -> bool {
        let truthy = ["true", "t", "yes", "y", "1"]
            .iter()
            .any(|t| self.value.eq_ignore_ascii_case(t));
        truthy && ["disable_wal", "manual_wal_flush"].contains(&self.name.as_str())
    }
}

/// Flags fsarena sets itself, with the parameter that sets them where there is one.
const OWNED: &[(&str, Option<&str>)] = &[
    ("benchmarks", Some("benchmarks")),
    ("num", Some("num")),
    ("value_size", Some("value_size")),
    ("threads", Some("threads")),
    ("sync", Some("sync")),
    ("use_existing_db", None),
    ("seed", None),
    ("histogram", None),
    ("statistics", None),
    ("report_interval_seconds", None),
    ("report_file", None),
];

/// Flags that would put files elsewhere than the target, or read the database's setup
/// from elsewhere than the spec.
const ELSEWHERE: &[(&str, &str)] = &[
    ("db", "it would put the database elsewhere than the target"),
    ("wal_dir", "it would put the WAL elsewhere than the target"),
    ("backup_dir", "it names a directory outside fsarena's work directory"),
    ("restore_dir", "it names a directory outside fsarena's work directory"),
    ("secondary_path", "it names a directory outside fsarena's work directory"),
    ("read_cache_path", "it would put a read cache elsewhere than the target"),
    ("trace_file", "it writes a file outside fsarena's work directory"),
    ("block_cache_trace_file", "it writes a file outside fsarena's work directory"),
    ("io_trace_file", "it writes a file outside fsarena's work directory"),
    ("simulate_hybrid_fs_file", "it names a file outside fsarena's work directory"),
    ("truth_db", "it names a database outside fsarena's work directory"),
    ("env_uri", "it would run RocksDB on another Env than the target's filesystem"),
    ("fs_uri", "it would run RocksDB on another filesystem than the target"),
    ("options_file", "its options would be neither checked nor recorded: give them as opt items"),
    ("flagfile", "its flags would be neither checked nor recorded: give them as opt items"),
    ("fromenv", "its flags would be neither checked nor recorded: give them as opt items"),
    ("tryfromenv", "its flags would be neither checked nor recorded: give them as opt items"),
];

/// Parses `opt`'s text: items `name=value` separated by commas (none when empty).
pub fn parse(text: &str) -> Result<Vec<Opt>> {
    let mut out: Vec<Opt> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let refuse = |why: &str| usage(format!("db_bench: opt item '{}': {why}", echo(item)));
        let Some((name, value)) = item.split_once('=') else {
            return Err(refuse("give name=value (it becomes db_bench's --name=value)"));
        };
        let name = name.trim_start_matches('-');
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(refuse(
                "a flag's name is lower-case letters, digits and '_' (as db_bench --help lists them)",
            ));
        }
        if let Some((_, param)) = OWNED.iter().find(|(n, _)| *n == name) {
            return Err(match param {
                Some(p) => refuse(&format!("fsarena sets --{name}: use the parameter {p}")),
                None => refuse(&format!("fsarena sets --{name} itself")),
            });
        }
        if let Some((_, why)) = ELSEWHERE.iter().find(|(n, _)| *n == name) {
            return Err(refuse(why));
        }
        let value_ok = |b: u8| b.is_ascii_alphanumeric() || b"_.+-:".contains(&b);
        if value.is_empty() || !value.bytes().all(value_ok) {
            return Err(refuse(
                "a value is letters, digits and '_ . + - :' (no spaces, quotes, paths or shell characters)",
            ));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(refuse(&format!("--{name} is given twice")));
        }
        out.push(Opt {
            name: name.to_string(),
            value: value.to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    #[test]
    fn items_become_flags() {
        let o = parse(" cache_size=8388608, bloom_bits=10,compression_type=zstd").unwrap();
        let args: Vec<String> = o.iter().map(Opt::arg).collect();
        assert_eq!(
            args,
            ["--cache_size=8388608", "--bloom_bits=10", "--compression_type=zstd"]
        );
        assert_eq!(parse("").unwrap(), []);
        assert_eq!(parse("open_files=-1").unwrap()[0].arg(), "--open_files=-1");
    }

    #[test]
    fn refuses_what_would_leave_the_target_or_is_fsarenas() {
        for (bad, says) in [
            ("cache_size", "name=value"),
            ("=1", "lower-case"),
            ("Cache=1", "lower-case"),
            ("cache_size=", "a value is"),
            ("cache_size=1;rm", "a value is"),
            ("cache_size=1 2", "a value is"),
            ("db=/tmp/x", "elsewhere than the target"),
            ("wal_dir=x", "the WAL elsewhere"),
            ("fs_uri=posix", "another filesystem"),
            ("options_file=x", "neither checked nor recorded"),
            ("num=5", "use the parameter num"),
            ("sync=1", "use the parameter sync"),
            ("statistics=0", "fsarena sets --statistics itself"),
            ("report_file=x", "fsarena sets --report_file"),
            ("bloom_bits=1,bloom_bits=2", "given twice"),
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{bad}");
            let text = format!("{e:#}");
            assert!(text.contains(says), "{bad}: {text}");
        }
    }

    #[test]
    fn durability_off_is_told() {
        let o = parse("disable_wal=true,manual_wal_flush=0,bloom_bits=10").unwrap();
        let off: Vec<&str> = o
            .iter()
            .filter(|o| o.not_durable())
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(off, ["disable_wal"]);
        assert!(parse("disable_wal=1").unwrap()[0].not_durable());
        assert!(parse("disable_wal=Yes").unwrap()[0].not_durable());
        assert!(!parse("disable_wal=false").unwrap()[0].not_durable());
    }
}
