//! Network filesystems (NFS, SMB/CIFS, sshfs) as targets: fsarena cannot mkfs them, so it
//! mounts the given source under the image directory, works in a fresh subdirectory of
//! it for each trial (carrying fsarena's marker, removed after the trial) and unmounts
//! again. Each trial mounts afresh, so the client starts with empty caches; `reset`
//! remounts between phases. The figures include the network and the server.
//!
//! Mount points and work directories are recorded in the state file, so `fsarena
//! cleanup` undoes what a killed run left mounted.
//!
//! A CIFS password never reaches argv (every local user reads it in `ps`): fsarena runs
//! `mount.cifs` itself and hands it `password=` (or `pass=`, `passwd=`) in its `PASSWD`
//! variable; `credentials=FILE` is passed on (a warning when others may read the file).
//! Any other option named like a secret is refused, as it could only go through argv.
//! Reports see the options with secrets as `***` ([`crate::secret`]).

use super::{Env, Target};
use crate::cmd;
use crate::probe::sys;
use crate::provision::fs::{Host, Kernel, LiveHost, Support};
use crate::result::{Provision, TargetInfo};
use crate::state::{self, Resource};
use anyhow::{Context, Result};
use std::path::PathBuf;

mod target;

pub use target::NetTarget;

/// A kind of network filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetKind {
    /// NFS through the kernel client (`mount -t nfs`, helper `mount.nfs` from nfs-common).
    Nfs,
    /// SMB/CIFS through the kernel client (`mount -t cifs`, helper from cifs-utils).
    Cifs,
    /// SFTP over ssh through FUSE (`sshfs`).
    Sshfs,
}

impl NetKind {
    /// Every kind, in the order `fsarena list` shows them.
    pub const ALL: [NetKind; 3] = [NetKind::Nfs, NetKind::Cifs, NetKind::Sshfs];

    /// The name in `--net KIND=…`.
    pub fn name(self) -> &'static str {
        match self {
            NetKind::Nfs => "nfs",
            NetKind::Cifs => "cifs",
            NetKind::Sshfs => "sshfs",
        }
    }

    /// What a source looks like, for help and errors.
    pub fn example(self) -> &'static str {
        match self {
            NetKind::Nfs => "nfs=server:/export[,vers=4.2,...]",
            NetKind::Cifs => "cifs=//server/share[,credentials=/root/.smbcred,...]",
            NetKind::Sshfs => "sshfs=user@host:/path[,port=22,IdentityFile=/root/.ssh/id,...]",
        }
    }

    /// Parses a name; the error lists what is valid.
    pub fn parse(name: &str) -> Result<NetKind, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown network filesystem '{}'{}; valid: nfs, cifs, sshfs",
                    crate::error::echo(name),
                    crate::error::did_you_mean(name, Self::ALL.iter().map(|k| k.name()))
                )
            })
    }

    fn kernel(self) -> Kernel {
        match self {
            NetKind::Nfs => Kernel {
                what: "nfs client",
                ..Kernel::fs("nfs")
            },
            NetKind::Cifs => Kernel {
                what: "cifs client",
                ..Kernel::fs("cifs")
            },
            NetKind::Sshfs => Kernel {
                what: "FUSE (fuse), which sshfs needs",
                ..Kernel::fs("fuse")
            },
        }
    }

    /// The program mounting needs, and its Debian package.
    fn program(self) -> (&'static str, &'static str) {
        match self {
            NetKind::Nfs => ("mount.nfs", "nfs-common"),
            NetKind::Cifs => ("mount.cifs", "cifs-utils"),
            NetKind::Sshfs => ("sshfs", "sshfs"),
        }
    }

    /// Whether this machine can mount this kind, and if not, why.
    pub fn support(self) -> Support {
        self.support_on(&LiveHost)
    }

    /// [`Self::support`] on `host`.
    pub fn support_on(self, host: &dyn Host) -> Support {
        let mut why: Vec<String> = crate::provision::fs::kernel_lacks(host, &self.kernel())
            .into_iter()
            .collect();
        let (program, package) = self.program();
        if !host.has_program(program) {
            why.push(format!("{program} missing: apt-get install {package}"));
        }
        if why.is_empty() {
            Support::Yes
        } else {
            Support::No(why.join("; "))
        }
    }
}

/// A network source with its mount options, as given to `--net`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetSpec {
    pub kind: NetKind,
    /// `server:/export`, `//server/share` or `user@host:/path`.
    pub source: String,
    /// Mount options, comma-separated (for sshfs: sshfs and ssh `-o` options).
    pub opts: String,
}

/// Why `source` is no source of `kind`, or `None`. Mount helpers take an argument that
/// starts with `-` as an option (`sshfs=-oProxyCommand=…:/x` would run a command), so none
/// may; a host and an absolute path (a share for CIFS) must be there, in plain characters.
fn source_problem(kind: NetKind, source: &str) -> Option<&'static str> {
    if source.starts_with('-') {
        return Some("it starts with '-', which the mount helper would take as an option");
    }
    if source.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it has a space or control character");
    }
    let host_ok = |h: &str| {
        !h.is_empty()
            && !h.starts_with('-')
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_:[]%".contains(c))
    };
    match kind {
        NetKind::Nfs | NetKind::Sshfs => {
            let Some((host, _path)) = source.split_once(":/") else {
                return Some("no HOST:/PATH");
            };
            let host = match (kind, host.rsplit_once('@')) {
                (NetKind::Sshfs, Some((user, _))) if user.is_empty() || user.starts_with('-') => {
                    return Some("an empty or '-' user before '@'")
                }
                (NetKind::Sshfs, Some((_, h))) => h,
                _ => host,
            };
            if !host_ok(host) {
                return Some("no host, or a host with characters a host name has not");
            }
            None
        }
        NetKind::Cifs => {
            let Some(rest) = source.strip_prefix("//") else {
                return Some("no //HOST/SHARE");
            };
            let (host, share) = rest.split_once('/').unwrap_or((rest, ""));
            if !host_ok(host) {
                return Some("no host, or a host with characters a host name has not");
            }
            if share.trim_matches('/').is_empty() {
                return Some("no share after the host");
            }
            None
        }
    }
}

/// The ssh and sshfs options that run a program on this machine (or load code, or read
/// other configuration that may), each with why (`man ssh_config`, `man sshfs`, `man
/// mount.fuse3`). Lower case: ssh reads its keywords in any case, and sshfs hands any
/// `Keyword=value` it knows to ssh after comparing without case (`strncasecmp`).
pub const SSH_COMMAND_OPTIONS: &[(&str, &str)] = &[
    ("proxycommand", "ssh runs it as a command to connect"),
    ("proxyjump", "ssh runs another ssh for each jump host"),
    ("localcommand", "ssh runs it as a command after connecting"),
    ("permitlocalcommand", "it lets ssh run LocalCommand"),
    (
        "knownhostscommand",
        "ssh runs it as a command to list host keys",
    ),
    ("remotecommand", "ssh runs it on the server instead of sftp"),
    ("match", "its `exec` criterion runs a command"),
    (
        "include",
        "it reads another ssh configuration, which may run commands",
    ),
    ("pkcs11provider", "ssh loads it as a shared library"),
    ("securitykeyprovider", "ssh loads it as a shared library"),
    ("xauthlocation", "ssh runs the program it names"),
    ("forwardx11", "ssh runs xauth for it"),
    ("forwardx11trusted", "ssh runs xauth for it"),
    ("enablesshkeysign", "ssh runs the ssh-keysign helper"),
    ("proxyusefdpass", "it changes how ssh runs ProxyCommand"),
    ("ssh_command", "sshfs runs it instead of ssh"),
    ("ssh_cmd", "sshfs runs it instead of ssh"),
    (
        "sftp_server",
        "with a path, the server runs it as a command",
    ),
    (
        "modules",
        "FUSE loads each module it names as a shared library",
    ),
];

/// The first option of sshfs `opts` that runs a program (see [`SSH_COMMAND_OPTIONS`]):
/// its name as given and why. Every option item is cut at `=` and white space and each
/// word but a last value compared without case, so `SSHOPT=ProxyCommand=x`, `proxycommand x` and
/// ` ProxyCommand =x` are all found; an item starting with `-` (`-F FILE`, `-oKEY=…`) is
/// a command-line option in disguise. `sftp_server=NAME` without a `/` or a space names
/// a subsystem and is allowed.
pub fn ssh_command_option(opts: &str) -> Option<(String, &'static str)> {
    for item in opts.split(',') {
        let item = item.trim();
        if item.starts_with('-') {
            return Some((
                item.to_string(),
                "it is a command-line option of sshfs or ssh (such as -F FILE or \
                 -oProxyCommand=...), which may name a configuration or a command",
            ));
        }
        let words: Vec<&str> = item
            .split(|c: char| c == '=' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        for (i, word) in words.iter().enumerate() {
            // The last of several words is a value (`HostKeyAlias=match`), not a keyword.
            if i > 0 && i + 1 == words.len() {
                break;
            }
            let lower = word.to_ascii_lowercase();
            let Some((_, why)) = SSH_COMMAND_OPTIONS.iter().find(|(k, _)| *k == lower) else {
                continue;
            };
            if lower == "sftp_server" {
                let value = item.split_once('=').map_or("", |(_, v)| v).trim();
                if !value.contains('/') && !value.contains(char::is_whitespace) {
                    continue;
                }
            }
            return Some((word.to_string(), why));
        }
    }
    None
}

impl NetSpec {
    /// Parses `KIND=SOURCE[,OPTIONS]` (the source itself holds no comma), refusing every
    /// sshfs option that runs a program ([`Self::parse_allowing`] with `false`).
    pub fn parse(text: &str) -> Result<NetSpec, String> {
        Self::parse_allowing(text, false)
    }

    /// [`Self::parse`]; `allow_ssh_commands` (the user typed `--allow-ssh-commands`)
    /// lets sshfs options that run a program through ([`ssh_command_option`]).
    pub fn parse_allowing(text: &str, allow_ssh_commands: bool) -> Result<NetSpec, String> {
        let shown = crate::secret::redact_word(text);
        let (kind, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("--net '{shown}': expected KIND=SOURCE[,OPTIONS]"))?;
        let kind = NetKind::parse(kind.trim())?;
        let (source, opts) = rest.split_once(',').unwrap_or((rest, ""));
        let source = source.trim();
        if let Some(why) = source_problem(kind, source) {
            return Err(format!(
                "--net '{shown}': '{source}' is not a {} source ({why}); expected {}",
                kind.name(),
                kind.example()
            ));
        }
        let spec = NetSpec {
            kind,
            source: source.to_string(),
            opts: opts.trim().to_string(),
        };
        let (_, password) = spec.split_password();
        if let Some(p) = &password {
            crate::secret::remember(p);
        }
        if password.is_some() && kind != NetKind::Cifs {
            return Err(format!(
                "--net {shown}: a password cannot be passed to {} without showing it to \
                 every local user in `ps`; use a key or a credentials file",
                kind.name()
            ));
        }
        if spec.kind == NetKind::Sshfs && !allow_ssh_commands {
            if let Some((name, why)) = ssh_command_option(&spec.opts) {
                return Err(format!(
                    "--net {shown}: option '{name}' is refused: {why}, as root; \
                     add --allow-ssh-commands to run it if you trust it"
                ));
            }
        }
        if let Some(name) = spec.argv_secret() {
            return Err(format!(
                "--net {shown}: option '{name}' names a secret and would reach mount's \
                 argv, which every local user can read in `ps`; {}",
                match kind {
                    NetKind::Cifs =>
                        "give the password as password= (fsarena hands it to \
                                      mount.cifs in PASSWD) or in a credentials= file",
                    _ => "use a key or a credentials file",
                }
            ));
        }
        Ok(spec)
    }

    /// The options one by one. A doubled comma is a comma inside a CIFS password
    /// (`password=a,,b`), the only place the kernel's CIFS parser reads it so; anywhere
    /// else, and for NFS and sshfs, every comma separates options, as their parsers do —
    /// so `A=,,password=p` holds a password for each of them.
    fn options(&self) -> Vec<String> {
        let in_password = |item: &str| {
            self.kind == NetKind::Cifs
                && item
                    .split_once('=')
                    .is_some_and(|(k, _)| matches!(k.trim(), "password" | "pass" | "passwd"))
        };
        let mut items = vec![String::new()];
        let mut chars = self.opts.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                ',' if chars.peek() == Some(&',')
                    && in_password(items.last().map_or("", |s| s)) =>
                {
                    chars.next();
                    items.last_mut().unwrap_or(&mut String::new()).push(',');
                }
                ',' => items.push(String::new()),
                c => items.last_mut().unwrap_or(&mut String::new()).push(c),
            }
        }
        items.into_iter().filter(|o| !o.trim().is_empty()).collect()
    }

    /// The options without the password, and the password (`password=`, `pass=`,
    /// `passwd=` or after the `%` of `username=USER%PASSWORD`; the last one given counts).
    fn split_password(&self) -> (Vec<String>, Option<String>) {
        let mut rest = Vec::new();
        let mut password = None;
        for o in self.options() {
            match o.split_once('=') {
                Some((k, v)) if matches!(k.trim(), "password" | "pass" | "passwd") => {
                    password = Some(v.to_string())
                }
                // `username=USER%PASSWORD`: USER stays, the password goes.
                Some((k, v)) if crate::secret::is_user_name(k.trim()) && v.contains('%') => {
                    let (user, pass) = v.split_once('%').unwrap_or((v, ""));
                    rest.push(format!("{k}={user}"));
                    password = Some(pass.to_string());
                }
                _ => rest.push(o),
            }
        }
        (rest, password)
    }

    /// The first option left for argv whose name says it is a secret.
    fn argv_secret(&self) -> Option<String> {
        self.split_password()
            .0
            .iter()
            .filter_map(|o| o.split_once('=').map(|(k, _)| k.trim().to_string()))
            .find(|k| crate::secret::is_secret_name(k))
    }

    /// The credentials file of a CIFS source (`credentials=FILE` or `cred=FILE`).
    pub fn credentials_file(&self) -> Option<PathBuf> {
        if self.kind != NetKind::Cifs {
            return None;
        }
        self.options().iter().rev().find_map(|o| {
            let (k, v) = o.split_once('=')?;
            matches!(k.trim(), "credentials" | "cred").then(|| PathBuf::from(v.trim()))
        })
    }

    /// Checks the credentials file: an error when it cannot be read, a warning when
    /// group or others may read it (it holds a password).
    pub fn check_credentials(&self) -> Result<Option<String>, String> {
        let Some(path) = self.credentials_file() else {
            return Ok(None);
        };
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(&path).map_err(|e| {
            format!(
                "--net {}: credentials file {}: {e}",
                self.name(),
                path.display()
            )
        })?;
        let mode = meta.permissions().mode() & 0o777;
        Ok((mode & 0o077 != 0).then(|| {
            format!(
                "credentials file {} is readable by {} (mode {mode:o}): it holds a \
                 password; chmod 600 {}",
                path.display(),
                if mode & 0o007 != 0 {
                    "others"
                } else {
                    "its group"
                },
                path.display()
            )
        }))
    }

    /// The name reports use: `sshfs:root@host:/srv`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.kind.name(), self.source)
    }

    /// The name as a file name: `sshfs-root_127.0.0.1_tmp_x` (at most 64 bytes).
    pub fn slug(&self) -> String {
        let name: String = self
            .name()
            .replace(":/", "_")
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => c,
                ':' => '-',
                _ => '_',
            })
            .take(64)
            .collect();
        name
    }

    /// The mount command for `mountpoint`, and the environment it needs (a CIFS
    /// password, as `PASSWD`). CIFS is mounted by `mount.cifs` itself, the helper `mount -t
    /// cifs` would run, so that the variable surely reaches it. sshfs gets `BatchMode=yes`
    /// first: fsarena runs unattended, so ssh must fail rather than ask for a password or a
    /// host key.
    pub fn mount_command(&self, mountpoint: &str) -> (Vec<String>, Vec<(String, String)>) {
        let s = |x: &str| x.to_string();
        if self.kind == NetKind::Cifs {
            let (opts, password) = self.split_password();
            let mut v = vec![s("mount.cifs"), self.source.clone(), s(mountpoint)];
            if !opts.is_empty() {
                let opts: Vec<String> = opts.iter().map(|o| o.replace(',', ",,")).collect();
                v.extend([s("-o"), opts.join(",")]);
            }
            let env = password.map(|p| (s("PASSWD"), p)).into_iter().collect();
            return (v, env);
        }
        (self.mount_argv(mountpoint), Vec::new())
    }

    /// The argv of [`Self::mount_command`] for NFS and sshfs.
    fn mount_argv(&self, mountpoint: &str) -> Vec<String> {
        let s = |x: &str| x.to_string();
        match self.kind {
            NetKind::Nfs | NetKind::Cifs => {
                let mut v = vec![s("mount"), s("-t"), s(self.kind.name())];
                if !self.opts.is_empty() {
                    v.extend([s("-o"), self.opts.clone()]);
                }
                v.extend([self.source.clone(), s(mountpoint)]);
                v
            }
            NetKind::Sshfs => {
                let mut opts = s("BatchMode=yes");
                if !self.opts.is_empty() {
                    opts = format!("{opts},{}", self.opts);
                }
                vec![
                    s("sshfs"),
                    self.source.clone(),
                    s(mountpoint),
                    s("-o"),
                    opts,
                ]
            }
        }
    }
}

#[cfg(test)]
mod tests;
