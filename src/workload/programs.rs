//! The programs a workload runs that are not part of fsarena — PostgreSQL's server and
//! pgbench, RocksDB's db_bench — with the Debian package that ships each.
//!
//! A workload declares them in [`WorkloadInfo::programs`](super::WorkloadInfo::programs);
//! `fsarena list` and `doctor` say which are missing, `fsarena setup --workload NAME`
//! installs their packages, and a run that asks for a workload whose program is missing is
//! refused when the plan is made, before anything is provisioned ([`check`]).

use std::path::PathBuf;

/// A program a workload runs, the package that has it, and how it is found.
pub struct Program {
    /// The program's name, as the user knows it (`postgres`, `db_bench`).
    pub name: &'static str,
    /// The Debian package that ships it.
    pub package: &'static str,
    /// Where it is on this machine, if anywhere.
    pub find: fn() -> Option<PathBuf>,
}

/// RocksDB's benchmark, from Debian's `rocksdb-tools`.
pub const DB_BENCH: Program = Program {
    name: "db_bench",
    package: "rocksdb-tools",
    find: || crate::cmd::which("db_bench"),
};

/// PostgreSQL's server with its `initdb`, `pg_ctl` and `pgbench`, from Debian's
/// `postgresql` (which puts them in `/usr/lib/postgresql/VERSION/bin`, off the PATH).
pub const POSTGRES: Program = Program {
    name: "postgres",
    package: "postgresql",
    find: || postgres_bin_dir().map(|d| d.join("postgres")),
};

/// The programs PostgreSQL's benchmark needs, all from one directory (one version): psql
/// reads `pg_stat_wal` around the run phase.
pub const POSTGRES_TOOLS: [&str; 5] = ["postgres", "initdb", "pg_ctl", "pgbench", "psql"];

/// The directory with PostgreSQL's server programs ([`POSTGRES_TOOLS`]): the PATH's, when
/// `postgres` is on it (Fedora, Arch), else Debian's newest `/usr/lib/postgresql/N/bin`
/// holding them all.
pub fn postgres_bin_dir() -> Option<PathBuf> {
    let complete = |d: &std::path::Path| {
        POSTGRES_TOOLS
            .iter()
            .all(|p| d.join(p).to_str().and_then(crate::cmd::which).is_some())
    };
    if let Some(dir) = crate::cmd::which("postgres").and_then(|p| p.parent().map(PathBuf::from)) {
        if complete(&dir) {
            return Some(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, d)| complete(d))
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d)
}

/// The programs of `programs` missing here.
pub fn missing(programs: &'static [Program]) -> Vec<&'static Program> {
    programs.iter().filter(|p| (p.find)().is_none()).collect()
}

/// Refuses workload `name` when a program it runs is missing, naming the package and the
/// command that installs it (exit code 2).
pub fn check(name: &str, programs: &'static [Program]) -> anyhow::Result<()> {
    let gone = missing(programs);
    if gone.is_empty() {
        return Ok(());
    }
    let what: Vec<String> = gone
        .iter()
        .map(|p| format!("{} (Debian package {})", p.name, p.package))
        .collect();
    Err(crate::error::usage(format!(
        "{name} runs {}, which is not installed here; `fsarena setup --workload {name}` \
         installs it (as root)",
        what.join(" and ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    static GONE: [Program; 1] = [Program {
        name: "no-such-engine",
        package: "no-such-package",
        find: || None,
    }];
    static HERE: [Program; 1] = [Program {
        name: "sh",
        package: "dash",
        find: || crate::cmd::which("sh"),
    }];

    /// A missing program refuses its workload as a usage error naming the package and the
    /// command that installs it; a present one passes.
    #[test]
    fn a_missing_program_is_named_with_its_package() {
        let e = check("engine", &GONE).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let text = format!("{e:#}");
        assert!(text.contains("no-such-package"), "{text}");
        assert!(text.contains("fsarena setup --workload engine"), "{text}");
        assert_eq!(missing(&GONE).len(), 1);
        check("engine", &HERE).unwrap();
        assert!(missing(&HERE).is_empty());
    }
}
