//! Filesystem types fsarena can make on a loop image: mkfs arguments, kernel support and
//! tools. One file per family.

mod btrfs;
mod ext;
mod xfs;

use serde::Serialize;

/// A filesystem type fsarena can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FsType {
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Btrfs,
}

/// Whether this machine can make and mount a filesystem type, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    No(String),
}

impl FsType {
    /// Every type, in the order reports use.
    pub const ALL: [FsType; 5] = [
        FsType::Ext2,
        FsType::Ext3,
        FsType::Ext4,
        FsType::Xfs,
        FsType::Btrfs,
    ];

    /// The kernel's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            FsType::Ext2 => "ext2",
            FsType::Ext3 => "ext3",
            FsType::Ext4 => "ext4",
            FsType::Xfs => "xfs",
            FsType::Btrfs => "btrfs",
        }
    }

    /// Parses a kernel name; the error lists what is valid.
    pub fn parse(name: &str) -> Result<FsType, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown filesystem '{name}'; valid: {}, tmpfs",
                    names.join(", ")
                )
            })
    }

    /// The mkfs program.
    pub fn mkfs_program(self) -> &'static str {
        match self {
            FsType::Ext2 => "mkfs.ext2",
            FsType::Ext3 => "mkfs.ext3",
            FsType::Ext4 => "mkfs.ext4",
            FsType::Xfs => "mkfs.xfs",
            FsType::Btrfs => "mkfs.btrfs",
        }
    }

    /// The Debian package that provides the mkfs program.
    pub fn package(self) -> &'static str {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => "e2fsprogs",
            FsType::Xfs => "xfsprogs",
            FsType::Btrfs => "btrfs-progs",
        }
    }

    /// fsarena's own mkfs options: no discard (it would punch holes back into the
    /// preallocated image) and no lazy initialisation (it would run behind the benchmark).
    pub fn default_mkfs_opts(self) -> Vec<String> {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => ext::default_opts(),
            FsType::Xfs => xfs::default_opts(),
            FsType::Btrfs => btrfs::default_opts(),
        }
    }

    /// The full mkfs argv for `device` with the user's extra options appended.
    pub fn mkfs_argv(self, device: &str, user_opts: &[String]) -> Vec<String> {
        let mut v = vec![self.mkfs_program().to_string()];
        v.extend(self.default_mkfs_opts());
        v.extend(user_opts.iter().cloned());
        v.push(device.to_string());
        v
    }

    /// The read-only check of an unmounted filesystem on `device`: `e2fsck -f -n`,
    /// `xfs_repair -n`, `btrfs check --readonly`. Each exits non-zero when it finds damage.
    pub fn fsck_argv(self, device: &str) -> Vec<String> {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => ext::fsck_argv(device),
            FsType::Xfs => xfs::fsck_argv(device),
            FsType::Btrfs => btrfs::fsck_argv(device),
        }
    }

    /// Whether the kernel can mount this type and its mkfs is installed.
    pub fn support(self) -> Support {
        if !kernel_supports(self.name()) {
            return Support::No(format!(
                "the running kernel has no {} support (not in /proc/filesystems, no module)",
                self.name()
            ));
        }
        if crate::cmd::which(self.mkfs_program()).is_none() {
            return Support::No(format!(
                "{} is not installed (Debian package {})",
                self.mkfs_program(),
                self.package()
            ));
        }
        Support::Yes
    }

    /// Whether the read-only checker ([`Self::fsck_argv`]) is installed, and if not, why.
    pub fn fsck_support(self) -> Support {
        let program = self.fsck_argv("")[0].clone();
        match crate::cmd::which(&program) {
            Some(_) => Support::Yes,
            None => Support::No(format!(
                "{program} is not installed (Debian package {})",
                self.package()
            )),
        }
    }
}

/// Whether the kernel knows `fstype`: registered in /proc/filesystems, or available as a
/// module that mount would load.
pub fn kernel_supports(fstype: &str) -> bool {
    let registered = std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fstype));
    if registered {
        return true;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let dir = std::path::Path::new("/lib/modules")
        .join(release.trim())
        .join("kernel/fs")
        .join(fstype);
    dir.is_dir()
}

/// Splits a user's option string (`"-d agcount=120 -i size=512"`) into arguments,
/// honouring single and double quotes.
pub fn split_opts(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unbalanced quote in '{text}'"));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_argv_per_type() {
        let user = split_opts("-d agcount=120").unwrap();
        assert_eq!(
            FsType::Xfs.mkfs_argv("/dev/loop0", &user).join(" "),
            "mkfs.xfs -f -K -d agcount=120 /dev/loop0"
        );
        assert_eq!(
            FsType::Ext4.mkfs_argv("/dev/loop0", &[]).join(" "),
            "mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/loop0"
        );
        assert_eq!(
            FsType::Btrfs.mkfs_argv("/dev/loop1", &[]).join(" "),
            "mkfs.btrfs -f -q -K /dev/loop1"
        );
    }

    #[test]
    fn fsck_argv_is_read_only_per_type() {
        let line = |f: FsType| f.fsck_argv("/dev/loop3").join(" ");
        assert_eq!(line(FsType::Ext4), "e2fsck -f -n /dev/loop3");
        assert_eq!(line(FsType::Ext2), "e2fsck -f -n /dev/loop3");
        assert_eq!(line(FsType::Xfs), "xfs_repair -n /dev/loop3");
        assert_eq!(line(FsType::Btrfs), "btrfs check --readonly /dev/loop3");
    }

    #[test]
    fn parse_and_split() {
        assert_eq!(FsType::parse("btrfs"), Ok(FsType::Btrfs));
        assert!(FsType::parse("zfs")
            .unwrap_err()
            .contains("ext2, ext3, ext4, xfs, btrfs"));
        assert_eq!(
            split_opts(" -L 'my label' -m 0 ").unwrap(),
            ["-L", "my label", "-m", "0"]
        );
        assert!(split_opts("-L 'x").is_err());
    }
}
