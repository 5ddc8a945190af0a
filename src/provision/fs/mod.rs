//! Filesystem types fsarena can make on a loop image: mkfs, mount and fsck knowledge, and
//! whether this machine has the kernel support and the tools. One file per family, each
//! holding a [`Knowledge`] table (like fio's one engine per file), registered by one line
//! of the `filesystems!` list here; this file only looks them up.

mod host;

#[cfg(test)]
pub(crate) use host::fake::FakeHost;
pub use host::{kernel_lacks, planning_for_guest, with_guest_kernel, Host, LiveHost};
use serde::Serialize;

/// Declares each family's module and, from its [`Knowledge`] tables, the [`FsType`]
/// variants, [`FsType::ALL`] (in the order given: the order reports use) and
/// [`FsType::knowledge`]: adding a filesystem is its file plus one line here.
macro_rules! filesystems {
    ($(mod $module:ident { $($variant:ident = $knowledge:ident),+ $(,)? })+) => {
        $(mod $module;)+

        /// A filesystem type fsarena can make.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        pub enum FsType {
            $($($variant,)+)+
        }

        impl FsType {
            /// Every type, in the order reports use.
            pub const ALL: [FsType; [$($(FsType::$variant),+),+].len()] =
                [$($(FsType::$variant),+),+];

            /// What fsarena knows about this type.
            pub fn knowledge(self) -> &'static Knowledge {
                match self {
                    $($(FsType::$variant => &$module::$knowledge,)+)+
                }
            }
        }
    };
}

filesystems! {
    mod ext { Ext2 = EXT2, Ext3 = EXT3, Ext4 = EXT4 }
    mod xfs { Xfs = XFS }
    mod btrfs { Btrfs = BTRFS }
    mod f2fs { F2fs = F2FS }
    mod jfs { Jfs = JFS }
    mod reiserfs { Reiserfs = REISERFS }
    mod fat { Vfat = VFAT }
    mod exfat { Exfat = EXFAT }
    mod ntfs { Ntfs = NTFS }
    mod nilfs2 { Nilfs2 = NILFS2 }
    mod bcachefs { Bcachefs = BCACHEFS }
}

/// Whether this machine can make and mount a filesystem type, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    No(String),
}

/// What the kernel must offer for a filesystem type.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    /// The name in /proc/filesystems.
    pub fs: &'static str,
    /// The module that registers it (`fuse` registers `fuseblk`).
    pub module: &'static str,
    /// What it is, for messages (usually the name itself).
    pub what: &'static str,
}

impl Kernel {
    /// A filesystem whose module and /proc/filesystems entry carry its own name.
    pub const fn fs(name: &'static str) -> Kernel {
        Kernel {
            fs: name,
            module: name,
            what: name,
        }
    }
}

/// Everything fsarena knows about making, mounting and checking one filesystem type.
#[derive(Debug)]
pub struct Knowledge {
    /// The name users type (`--fs`) and reports show.
    pub name: &'static str,
    /// The mkfs program.
    pub mkfs: &'static str,
    /// fsarena's own mkfs options: non-interactive, no discard (it would punch holes back
    /// into the preallocated image), no lazy initialisation (it would run behind the
    /// benchmark). Each family's file says why each is there.
    pub mkfs_opts: &'static [&'static str],
    /// The type given to `mount -t`.
    pub mount_type: &'static str,
    /// A mount helper program `mount -t` needs (`mount.ntfs-3g`), if any.
    pub mount_helper: Option<&'static str>,
    /// The read-only check, the device appended; `None` when the tools have no checker.
    pub fsck: Option<&'static [&'static str]>,
    /// The Debian package of the mkfs, fsck and mount helper programs.
    pub package: &'static str,
    /// What the kernel must offer.
    pub kernel: Kernel,
    /// The smallest image mkfs accepts when that is above fsarena's 64 MiB floor; else 0.
    pub min_size_bytes: u64,
    /// Whether a run without `--fs` uses it (the Linux filesystems fsarena always had);
    /// the others are named explicitly.
    pub default_set: bool,
    /// A caveat `fsarena list` shows beside it.
    pub note: &'static str,
}

impl FsType {
    /// The name users type and reports show (the kernel's name, except `ntfs`).
    pub fn name(self) -> &'static str {
        self.knowledge().name
    }

    /// Parses a name; the error lists what is valid.
    pub fn parse(name: &str) -> Result<FsType, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let served = crate::provision::served::Protocol::ALL.map(|p| p.name());
                let names: Vec<_> = Self::ALL
                    .iter()
                    .map(|f| f.name())
                    .chain(["tmpfs"])
                    .chain(served)
                    .collect();
                format!(
                    "unknown filesystem '{}'{}; valid: {}",
                    crate::error::echo(name),
                    crate::error::did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                )
            })
    }

    /// The mkfs program.
    pub fn mkfs_program(self) -> &'static str {
        self.knowledge().mkfs
    }

    /// The type `mount -t` gets (`ntfs-3g` for ntfs).
    pub fn mount_type(self) -> &'static str {
        self.knowledge().mount_type
    }

    /// The Debian package that provides the mkfs program.
    pub fn package(self) -> &'static str {
        self.knowledge().package
    }

    /// Whether a run without `--fs` makes this type.
    pub fn in_default_set(self) -> bool {
        self.knowledge().default_set
    }

    /// The smallest image size mkfs accepts, when above fsarena's general floor.
    pub fn min_size_bytes(self) -> u64 {
        self.knowledge().min_size_bytes
    }

    /// fsarena's own mkfs options (see [`Knowledge::mkfs_opts`]).
    pub fn default_mkfs_opts(self) -> Vec<String> {
        self.knowledge()
            .mkfs_opts
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// The full mkfs argv for `device` with the user's extra options appended.
    pub fn mkfs_argv(self, device: &str, user_opts: &[String]) -> Vec<String> {
        let mut v = vec![self.mkfs_program().to_string()];
        v.extend(self.default_mkfs_opts());
        v.extend(user_opts.iter().cloned());
        v.push(device.to_string());
        v
    }

    /// The read-only check of an unmounted filesystem on `device` (`e2fsck -f -n`,
    /// `xfs_repair -n`, `btrfs check --readonly`, …), which exits non-zero when it finds
    /// damage; `None` when the type's tools have no checker (nilfs2).
    pub fn fsck_argv(self, device: &str) -> Option<Vec<String>> {
        let base = self.knowledge().fsck?;
        let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        v.push(device.to_string());
        Some(v)
    }

    /// Whether the kernel can mount this type and its mkfs is installed, on this machine.
    pub fn support(self) -> Support {
        self.support_on(&LiveHost)
    }

    /// [`Self::support`] on `host`: every reason it cannot, joined with "; ".
    pub fn support_on(self, host: &dyn Host) -> Support {
        let k = self.knowledge();
        let mut why = Vec::new();
        if let Some(no) = kernel_lacks(host, &k.kernel) {
            why.push(no);
        }
        for program in std::iter::once(k.mkfs).chain(k.mount_helper) {
            if !host.has_program(program) {
                why.push(missing(program, k.package));
            }
        }
        why.extend(missing_tools(host, LOOP_TOOLS));
        if why.is_empty() {
            Support::Yes
        } else {
            Support::No(why.join("; "))
        }
    }

    /// Whether the read-only checker ([`Self::fsck_argv`]) is installed, and if not, why.
    pub fn fsck_support(self) -> Support {
        self.fsck_support_on(&LiveHost)
    }

    /// [`Self::fsck_support`] on `host`.
    pub fn fsck_support_on(self, host: &dyn Host) -> Support {
        let k = self.knowledge();
        let Some(argv) = k.fsck else {
            return Support::No(format!(
                "{} has no read-only checker ({} ships none)",
                k.name, k.package
            ));
        };
        if host.has_program(argv[0]) {
            Support::Yes
        } else {
            Support::No(missing(argv[0], k.package))
        }
    }
}

/// The programs every loop-image target runs besides its own mkfs, with their Debian
/// package: attach, mount, unmount (detaching is `losetup -d`).
pub const LOOP_TOOLS: &[(&str, &str)] = &[
    ("losetup", "mount"),
    ("mount", "mount"),
    ("umount", "mount"),
];

/// The programs a tmpfs target runs.
pub const TMPFS_TOOLS: &[(&str, &str)] = &[("mount", "mount"), ("umount", "mount")];

/// "PROGRAM missing: apt-get install PACKAGE" for each of `tools` that `host` lacks.
fn missing_tools(host: &dyn Host, tools: &[(&str, &str)]) -> Vec<String> {
    tools
        .iter()
        .filter(|(program, _)| !host.has_program(program))
        .map(|(program, package)| missing(program, package))
        .collect()
}

/// Whether this machine can mount a tmpfs (kernel and `mount`), and if not, why.
pub fn tmpfs_support() -> Support {
    tmpfs_support_on(&LiveHost)
}

/// [`tmpfs_support`] on `host`.
pub fn tmpfs_support_on(host: &dyn Host) -> Support {
    let mut why = Vec::new();
    if !host::kernel_has(host, "tmpfs", "tmpfs") {
        why.push(format!("kernel {} has no tmpfs", host.kernel_release()));
    }
    why.extend(missing_tools(host, TMPFS_TOOLS));
    if why.is_empty() {
        Support::Yes
    } else {
        Support::No(why.join("; "))
    }
}

/// "PROGRAM missing: apt-get install PACKAGE".
fn missing(program: &str, package: &str) -> String {
    format!("{program} missing: apt-get install {package}")
}

/// Whether the kernel knows `fstype`: registered in /proc/filesystems, or available as a
/// module of that name.
pub fn kernel_supports(fstype: &str) -> bool {
    host::kernel_has(&LiveHost, fstype, fstype)
}

/// Refuses mkfs arguments or mount options (`words`: arguments, or comma-separated items)
/// that name a file or device: a word or a `key=value` value that starts with `/`, or a
/// word that is not an option (no leading `-`) and names an existing path. mkfs takes a
/// further device as its target (`mkfs.btrfs -f /dev/loop1 /dev/loopN` formats both),
/// xfs and ext4 take external log or journal devices (`-l logdev=`, `-J device=`), mount
/// `loop=`: any of them would format or write a disk that is not fsarena's image and
/// bypass every `--device` safeguard.
pub fn refuse_paths<S: AsRef<str>>(words: &[S]) -> Result<(), String> {
    for word in words.iter().map(AsRef::as_ref) {
        let values = word
            .split(',')
            .flat_map(|item| std::iter::once(item).chain(item.split_once('=').map(|(_, v)| v)));
        for v in values {
            let v = v.trim_matches(|c| c == '"' || c == '\'');
            let names_path = v.starts_with('/')
                || v.starts_with("./")
                || v.starts_with("../")
                || names_device(v)
                || (!word.starts_with('-') && !v.is_empty() && std::path::Path::new(v).exists());
            if names_path {
                return Err(format!(
                    "'{v}' names a file or device: options may not name one (mkfs and mount \
                     would write it; fsarena formats only its own image, or a --device you \
                     confirm)"
                ));
            }
        }
    }
    Ok(())
}

/// How blkid, mkfs and mount name a device without its path (`-J device=UUID=…`).
const DEVICE_TAGS: &[&str] = &["LABEL", "UUID", "PARTUUID", "PARTLABEL"];

/// Whether `v` (an option item or its value) names a device however spelled: a
/// `TAG=value` of [`DEVICE_TAGS`], or ext3/ext4's external journal by number or path
/// (`journal_dev=2049`, `journal_path=…`).
fn names_device(v: &str) -> bool {
    v.split_once('=').is_some_and(|(k, _)| {
        let k = k.trim();
        DEVICE_TAGS.contains(&k.to_ascii_uppercase().as_str())
            || k.ends_with("journal_dev")
            || k.ends_with("journal_path")
    })
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
mod tests;
