//! The database engine a trial ran, as data: which engine, which version, which profile,
//! and every setting that differs from the engine's own default — so that two runs'
//! figures can be told to come from the same engine set the same way, and a run that
//! turned durability off says so in every report.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One trial's database engine (`pgbench`'s PostgreSQL, `db_bench`'s RocksDB, `sqlite`'s
/// SQLite).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Engine {
    /// `PostgreSQL`, `RocksDB` or `SQLite`.
    pub name: String,
    /// The version the engine reports (`postgres -C server_version`, db_bench's
    /// `RocksDB: version`, `sqlite3_libversion()`).
    pub version: String,
    /// The workload's profile (`commit-latency`, `steady`, `io-bound`), where it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Every setting fsarena or the user gave that is not the engine's default, by the
    /// engine's own name, with the value as the engine shows it.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// The settings among them that turn durability off (`fsync=off`,
    /// `synchronous_commit=off`, `disable_wal=true`): the trial's commits are not all
    /// on the disk when the engine says they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_durable: Vec<String>,
    /// The memory limit the engine's processes ran under, page cache included (a memory
    /// control group: the `io-bound` profiles'); absent when unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
}

impl Engine {
    /// `PostgreSQL 15.10, profile steady; fsync=off max_connections=110; not durable:
    /// fsync=off`: one line, as the reports show it.
    pub fn describe(&self) -> String {
        let mut s = format!("{} {}", self.name, self.version);
        if let Some(p) = &self.profile {
            s.push_str(&format!(", profile {p}"));
        }
        if let Some(m) = self.memory_limit_bytes {
            let m = crate::size::format_size_exact(m);
            s.push_str(&format!(", memory limit {m}"));
        }
        if self.settings.is_empty() {
            s.push_str("; default settings");
        } else {
            let set: Vec<String> = self
                .settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            s.push_str(&format!("; set {}", set.join(" ")));
        }
        if !self.not_durable.is_empty() {
            s.push_str(&format!("; NOT DURABLE ({})", self.not_durable.join(", ")));
        }
        s
    }

    /// The settings as `k=v k=v`, for one CSV field.
    pub fn settings_text(&self) -> String {
        let set: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        set.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_not_durable_engine_says_so_after_its_settings() {
        let mut e = Engine {
            name: "PostgreSQL".into(),
            version: "15.10".into(),
            profile: Some("steady".into()),
            ..Engine::default()
        };
        assert_eq!(
            e.describe(),
            "PostgreSQL 15.10, profile steady; default settings"
        );
        e.settings.insert("fsync".into(), "off".into());
        e.settings.insert("max_connections".into(), "110".into());
        e.not_durable.push("fsync=off".into());
        assert_eq!(
            e.describe(),
            "PostgreSQL 15.10, profile steady; set fsync=off max_connections=110; \
             NOT DURABLE (fsync=off)"
        );
        assert_eq!(e.settings_text(), "fsync=off max_connections=110");
    }
}
