//! Every external program a plan will run, said before anything is made (issue 43: a plan
//! is a program). Two groups: the plan's own commands — the lines of a `command` workload
//! and the sshfs options `--allow-ssh-commands` let through — which run as root exactly as
//! their author wrote them; and fsarena's own programs for the plan's targets and workloads
//! (mkfs, mount, the NFS server, …), each named in [`OWN_PROGRAMS`] with why. `plan check`
//! prints both, `plan check --json` gives them to machines, and `run` says the plan's own
//! commands in its header.

use crate::plan::Plan;
use crate::provision::fs::FsType;
use crate::provision::net::{NetKind, NetSpec};
use crate::provision::served::Protocol;
use crate::provision::TargetSpec;

/// Workload parameters whose value is a command line run with `/bin/sh -c`: the workload's
/// name and those parameters, in the order they run.
pub const COMMAND_PARAMS: &[(&str, &[&str])] = &[("command", &["setup", "run", "clean"])];

/// Every program fsarena itself may run for a plan, each with why (read from the callers
/// of [`crate::cmd`] and of `std::process::Command`). What a plan lists of fsarena's own
/// is always in here; `fuzzing::plan_toml` checks it.
pub const OWN_PROGRAMS: &[(&str, &str)] = &[
    ("mkfs.ext2", "makes each ext2 target"),
    ("mkfs.ext3", "makes each ext3 target"),
    (
        "mkfs.ext4",
        "makes each ext4 target (and a served or guest scratch ext4)",
    ),
    ("mkfs.xfs", "makes each xfs target"),
    ("mkfs.btrfs", "makes each btrfs target"),
    ("mkfs.f2fs", "makes each f2fs target"),
    ("mkfs.jfs", "makes each jfs target"),
    ("mkfs.reiserfs", "makes each reiserfs target"),
    ("mkfs.vfat", "makes each vfat target"),
    ("mkfs.exfat", "makes each exfat target"),
    ("mkfs.ntfs", "makes each ntfs target"),
    ("mkfs.nilfs2", "makes each nilfs2 target"),
    ("mkfs.bcachefs", "makes each bcachefs target"),
    (
        "e2fsck",
        "the provision workload's read-only check of ext2/3/4",
    ),
    (
        "xfs_repair",
        "the provision workload's read-only check of xfs",
    ),
    ("btrfs", "the provision workload's read-only check of btrfs"),
    (
        "fsck.f2fs",
        "the provision workload's read-only check of f2fs",
    ),
    (
        "jfs_fsck",
        "the provision workload's read-only check of jfs",
    ),
    (
        "reiserfsck",
        "the provision workload's read-only check of reiserfs",
    ),
    (
        "fsck.fat",
        "the provision workload's read-only check of vfat",
    ),
    (
        "fsck.exfat",
        "the provision workload's read-only check of exfat",
    ),
    (
        "ntfsfix",
        "the provision workload's read-only check of ntfs",
    ),
    (
        "bcachefs",
        "the provision workload's read-only check of bcachefs",
    ),
    ("mount.ntfs-3g", "mount's helper for ntfs"),
    ("mount", "mounts each target"),
    ("umount", "unmounts each target"),
    ("losetup", "detaches a loop device the kernel still holds"),
    (
        "blkid",
        "checks a device holds nothing before it is formatted",
    ),
    (
        "wipefs",
        "checks a device holds nothing before it is formatted",
    ),
    ("mount.nfs", "mount's helper for NFS"),
    ("mount.cifs", "mounts CIFS/SMB"),
    ("sshfs", "mounts sshfs"),
    ("ssh", "sshfs connects with it"),
    ("rpcbind", "the served NFS target's server"),
    ("rpcinfo", "waits for the served NFS target's rpcbind"),
    ("rpc.statd", "the served NFS target's server"),
    ("rpc.mountd", "the served NFS target's server"),
    ("rpc.nfsd", "the served NFS target's server"),
    ("exportfs", "exports the served NFS target"),
    ("smbd", "the served SMB target's server"),
    ("vng", "boots each guest kernel (virtme-ng)"),
    ("qemu-system-x86_64", "vng runs each guest kernel in it"),
    ("modprobe", "loads filesystem and loop drivers in a guest"),
    ("sh", "/bin/sh -c runs each line of a command workload"),
];

/// One command of the plan's own: where it comes from and the line as it will run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnCommand {
    /// `command:run` (workload and parameter) or `sshfs option`.
    pub from: String,
    pub line: String,
}

/// What a plan runs: its own commands, and fsarena's programs by name (sorted, each once).
#[derive(Clone, Debug, Default)]
pub struct Programs {
    pub commands: Vec<OwnCommand>,
    pub programs: Vec<&'static str>,
}

/// Why fsarena runs `name` ([`OWN_PROGRAMS`]), or `None` when it is not one of its own.
pub fn why(name: &str) -> Option<&'static str> {
    OWN_PROGRAMS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, w)| *w)
}

/// The commands and programs `plan` will run ([`Programs`]).
pub fn of(plan: &Plan) -> Programs {
    let mut commands = Vec::new();
    for w in &plan.workloads {
        for (workload, params) in COMMAND_PARAMS {
            if w.info.name != *workload {
                continue;
            }
            for p in *params {
                if let Some(line) = w.params.text(p) {
                    commands.push(OwnCommand {
                        from: format!("{workload}:{p}"),
                        line: line.to_string(),
                    });
                }
            }
        }
    }
    let mut programs: Vec<&'static str> = Vec::new();
    let provision = plan.workloads.iter().any(|w| w.info.name == "provision");
    let fs_tools = |fs: FsType, programs: &mut Vec<&'static str>| {
        let k = fs.knowledge();
        programs.extend([k.mkfs, "mount", "umount"]);
        programs.extend(k.mount_helper);
        if provision {
            programs.extend(k.fsck.and_then(|argv| argv.first().copied()));
        }
    };
    for t in &plan.targets {
        match &t.spec {
            TargetSpec::Loop { fs, .. } => {
                fs_tools(*fs, &mut programs);
                programs.push("losetup");
            }
            TargetSpec::Device { fs, .. } => {
                fs_tools(*fs, &mut programs);
                programs.extend(["blkid", "wipefs"]);
            }
            TargetSpec::Tmpfs { .. } => programs.extend(["mount", "umount"]),
            TargetSpec::Dir { .. } => {}
            TargetSpec::Net(net) => {
                programs.push("umount");
                match net.kind {
                    NetKind::Nfs => programs.extend(["mount", "mount.nfs"]),
                    NetKind::Cifs => programs.push("mount.cifs"),
                    NetKind::Sshfs => {
                        programs.extend(["sshfs", "ssh"]);
                        commands.extend(ssh_commands(net));
                    }
                }
            }
            TargetSpec::Served { proto, .. } => {
                programs.extend(["mkfs.ext4", "mount", "umount", "losetup"]);
                match proto {
                    Protocol::Nfs4 | Protocol::Nfs3 => programs.extend([
                        "rpcbind",
                        "rpcinfo",
                        "rpc.statd",
                        "rpc.mountd",
                        "rpc.nfsd",
                        "exportfs",
                        "mount.nfs",
                    ]),
                    Protocol::Smb => programs.extend(["smbd", "mount.cifs"]),
                }
            }
        }
    }
    if plan.guest.is_some() || plan.targets.iter().any(|t| t.kernel.is_some()) {
        programs.extend([
            "vng",
            "qemu-system-x86_64",
            "modprobe",
            "mkfs.ext4",
            "mount",
        ]);
    }
    if plan.workloads.iter().any(|w| w.info.name == "command") {
        programs.push("sh");
    }
    programs.sort_unstable();
    programs.dedup();
    Programs { commands, programs }
}

/// The options of an sshfs target that run a program (only there when the user typed
/// `--allow-ssh-commands`), one command each.
fn ssh_commands(net: &NetSpec) -> Vec<OwnCommand> {
    net.opts
        .split(',')
        .filter(|item| crate::provision::net::ssh_command_option(item).is_some())
        .map(|item| OwnCommand {
            from: "sshfs option".to_string(),
            line: item.trim().to_string(),
        })
        .collect()
}

/// The listing `plan check` prints: the plan's own commands first, marked as running as
/// root, then fsarena's programs with why; lines wrapped to `width` columns.
pub fn describe(p: &Programs, width: usize) -> String {
    let fit = |line: &str| crate::report::fit::wrap(line, width, 4);
    let mut out = String::new();
    if p.commands.is_empty() {
        out.push_str(&fit("commands from the plan: none"));
        out.push('\n');
    } else {
        out.push_str(&fit(
            "commands from the plan: runs as root, as written (read them first):",
        ));
        out.push('\n');
        for c in &p.commands {
            out.push_str(&fit(&format!("  {}: {}", c.from, c.line)));
            out.push('\n');
        }
    }
    out.push_str(&fit("fsarena's own programs for it:"));
    out.push('\n');
    for name in &p.programs {
        let line = format!(
            "  {name}: {}",
            why(name).unwrap_or("(not in fsarena's list)")
        );
        out.push_str(&fit(&line));
        out.push('\n');
    }
    out
}

/// The lines `run` says in its header, before anything is made: the plan's own commands,
/// or nothing when it has none.
pub fn run_notes(p: &Programs) -> Vec<String> {
    if p.commands.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["commands from the plan (run as root, as written):".to_string()];
    lines.extend(
        p.commands
            .iter()
            .map(|c| format!("  {}: {}", c.from, c.line)),
    );
    lines
}

/// `plan check --json`: `{"valid": true, "commands": [{"from", "line"}], "programs":
/// [{"name", "why"}]}`.
pub fn json(p: &Programs) -> serde_json::Value {
    serde_json::json!({
        "valid": true,
        "commands": p.commands.iter().map(|c| serde_json::json!({
            "from": c.from,
            "line": c.line,
        })).collect::<Vec<_>>(),
        "programs": p.programs.iter().map(|n| serde_json::json!({
            "name": n,
            "why": why(n),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filesystem_program_is_in_the_table() {
        for fs in FsType::ALL {
            let k = fs.knowledge();
            let mut names = vec![k.mkfs];
            names.extend(k.mount_helper);
            names.extend(k.fsck.and_then(|a| a.first().copied()));
            for n in names {
                assert!(why(n).is_some(), "{n} ({}) is not in OWN_PROGRAMS", k.name);
            }
        }
    }

    #[test]
    fn every_text_parameter_of_command_but_env_is_a_command() {
        let info = &crate::workload::command::INFO;
        let listed = COMMAND_PARAMS
            .iter()
            .find(|(w, _)| *w == info.name)
            .map(|(_, p)| *p)
            .unwrap();
        for p in info.params {
            assert_eq!(listed.contains(&p.name), p.name != "env", "{}", p.name);
        }
    }

    #[test]
    fn run_notes_say_the_plans_own_commands_only() {
        assert!(run_notes(&Programs::default()).is_empty());
        let p = Programs {
            commands: vec![OwnCommand {
                from: "command:run".into(),
                line: "make".into(),
            }],
            programs: vec!["sh"],
        };
        let notes = run_notes(&p);
        assert_eq!(notes.len(), 2);
        assert!(notes[1].ends_with("command:run: make"), "{notes:?}");
    }

    #[test]
    fn allowed_ssh_options_are_commands_of_the_plan() {
        let net = NetSpec::parse_allowing(
            "sshfs=u@h:/p,reconnect,ProxyCommand=sh -c 'x',IdentityFile=/k",
            true,
        )
        .unwrap();
        let c = ssh_commands(&net);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].line, "ProxyCommand=sh -c 'x'");
    }
}
