//! The user's own server settings (`pgbench:set='name=value,…'`), checked before anything
//! runs: a setting that would move the cluster's data or logs off the target, open the
//! server to the network, run commands, or that fsarena owns, is refused; the rest are
//! passed to the server (`-c name=value`), which refuses an unknown name or a bad value
//! itself when fsarena reads the settings back (`postgres -C`), before the trial starts.
//! Settings that turn durability off are allowed and reported as "NOT DURABLE"
//! ([`super::NOT_DURABLE`]).

use crate::error::usage;
use anyhow::Result;

/// Settings refused, and why.
const REFUSED: &[(&str, &str)] = &[
    ("data_directory", "it would move the cluster off the target"),
    ("config_file", "it would read another configuration"),
    ("hba_file", "fsarena's authentication is the socket's"),
    ("ident_file", "fsarena's authentication is the socket's"),
    ("external_pid_file", "it would write outside the target"),
    ("listen_addresses", "fsarena's server listens on a Unix socket only"),
    ("port", "fsarena's server listens on a Unix socket only"),
    ("unix_socket_directories", "fsarena places the socket"),
    ("unix_socket_group", "fsarena places the socket"),
    ("unix_socket_permissions", "fsarena places the socket"),
    ("archive_mode", "archiving copies the WAL off the target"),
    ("archive_command", "archiving copies the WAL off the target"),
    ("archive_library", "archiving copies the WAL off the target"),
    ("restore_command", "it runs commands"),
    ("log_directory", "it would write the server's log elsewhere"),
    ("logging_collector", "the server's log is the trial's log"),
    ("stats_temp_directory", "it would write outside the target"),
    ("log_checkpoints", "fsarena sets it to time the checkpoints"),
    ("track_wal_io_timing", "fsarena sets it to time the WAL's syncs"),
];

/// Settings with a parameter of their own.
const OWN_PARAMETER: &[&str] = &[
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "shared_buffers",
    "full_page_writes",
];

/// Parses `set=`'s text: `name=value` items joined by commas; names as PostgreSQL spells
/// them (lower case, digits, `_` and `.` for an extension's).
pub fn set_settings(text: &str) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let shown = crate::workload::params::echo(item);
        let Some((name, value)) = item.split_once('=') else {
            return Err(usage(format!(
                "pgbench: set: {shown} is not name=value (e.g. set='checkpoint_timeout=1min')"
            )));
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        let well_formed = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.');
        if !well_formed || value.is_empty() || value.contains(['\n', '\r', '\0']) {
            return Err(usage(format!(
                "pgbench: set: {shown} is not name=value with a PostgreSQL setting's name"
            )));
        }
        if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
            return Err(usage(format!("pgbench: set: {name} is refused: {why}")));
        }
        if OWN_PARAMETER.contains(&name.as_str()) {
            return Err(usage(format!(
                "pgbench: set: {name} has a parameter of its own: give pgbench:{name}={value}"
            )));
        }
        if out.iter().any(|(n, _)| *n == name) {
            return Err(usage(format!("pgbench: set: {name} is given twice")));
        }
        out.push((name, value.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_pass_and_those_that_leave_the_target_are_refused() {
        assert_eq!(
            set_settings("checkpoint_timeout=1min, max_wal_size=4GB").unwrap(),
            [
                ("checkpoint_timeout".to_string(), "1min".to_string()),
                ("max_wal_size".to_string(), "4GB".to_string())
            ]
        );
        assert!(set_settings("").unwrap().is_empty());
        for bad in [
            "data_directory=/tmp/x",
            "listen_addresses=*",
            "archive_command=cp %p /x",
            "fsync=off",
            "checkpoint_timeout",
            "a b=1",
            "work_mem=1MB,work_mem=2MB",
        ] {
            let e = set_settings(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::exit::USAGE, "{bad}");
        }
    }
}
