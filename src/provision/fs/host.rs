//! What the machine offers, behind a trait so that detection can be tested with made-up
//! inputs: the kernel's registered filesystems (/proc/filesystems), the modules it could
//! load (/lib/modules/RELEASE/modules.dep and modules.builtin), and programs in PATH.

use super::Kernel;

/// The facts support detection reads.
pub trait Host {
    /// The text of /proc/filesystems.
    fn proc_filesystems(&self) -> String;
    /// The kernel release (`uname -r`), for messages and the module directory.
    fn kernel_release(&self) -> String;
    /// The text of modules.dep and modules.builtin of the running kernel ("" if absent).
    fn module_index(&self) -> String;
    /// Whether `program` is installed (PATH or root's sbin directories).
    fn has_program(&self, program: &str) -> bool;
}

/// This machine: its running kernel, or inside [`with_guest_kernel`] the guest kernel a
/// run will boot (its modules are on this machine, under /lib/modules/RELEASE, and its
/// userland is this machine's).
pub struct LiveHost;

thread_local! {
    static GUEST_RELEASE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with support detection ([`LiveHost`]) looking at guest kernel `release`
/// instead of the running one: what a `run --kernel` guest will be able to make.
pub fn with_guest_kernel<T>(release: &str, f: impl FnOnce() -> T) -> T {
    GUEST_RELEASE.with(|g| *g.borrow_mut() = Some(release.to_string()));
    let out = f();
    GUEST_RELEASE.with(|g| *g.borrow_mut() = None);
    out
}

/// Whether support detection is looking at a guest kernel ([`with_guest_kernel`]).
pub fn planning_for_guest() -> bool {
    GUEST_RELEASE.with(|g| g.borrow().is_some())
}

impl Host for LiveHost {
    fn proc_filesystems(&self) -> String {
        match GUEST_RELEASE.with(|g| g.borrow().clone()) {
            // Every guest virtme-ng boots has tmpfs (it mounts its own /tmp and /run); the
            // ext4 driver (loaded for the scratch disk) serves ext2 and ext3 when so built.
            Some(r) => {
                let config =
                    std::fs::read_to_string(format!("/boot/config-{r}")).unwrap_or_default();
                let mut fs = "nodev\ttmpfs\n".to_string();
                if config.lines().any(|l| l == "CONFIG_EXT4_USE_FOR_EXT2=y") {
                    fs.push_str("\text2\n\text3\n");
                }
                fs
            }
            None => std::fs::read_to_string("/proc/filesystems").unwrap_or_default(),
        }
    }
    fn kernel_release(&self) -> String {
        if let Some(r) = GUEST_RELEASE.with(|g| g.borrow().clone()) {
            return r;
        }
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string()
    }
    fn module_index(&self) -> String {
        let dir = std::path::Path::new("/lib/modules").join(self.kernel_release());
        ["modules.dep", "modules.builtin"]
            .iter()
            .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
            .collect::<Vec<_>>()
            .join("\n")
    }
    fn has_program(&self, program: &str) -> bool {
        crate::cmd::which(program).is_some()
    }
}

/// Whether `index` (modules.dep / modules.builtin lines, `kernel/fs/f2fs/f2fs.ko.xz: …`)
/// names module `module`.
fn index_has_module(index: &str, module: &str) -> bool {
    index.lines().any(|l| {
        let path = l.split(':').next().unwrap_or("");
        let file = path.rsplit('/').next().unwrap_or("");
        file.split(".ko").next() == Some(module) && file.contains(".ko")
    })
}

/// Whether `fstype` is in /proc/filesystems or `module` is among the kernel's modules.
pub fn kernel_has(host: &dyn Host, fstype: &str, module: &str) -> bool {
    let registered = host
        .proc_filesystems()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fstype));
    registered || index_has_module(&host.module_index(), module)
}

/// `None` when the kernel offers `k` (registered, or a module it could load), else why not.
pub fn kernel_lacks(host: &dyn Host, k: &Kernel) -> Option<String> {
    if kernel_has(host, k.fs, k.module) {
        return None;
    }
    Some(format!(
        "kernel {} has no {} (not in /proc/filesystems, no {} module)",
        host.kernel_release(),
        k.what,
        k.module
    ))
}

#[cfg(test)]
pub(crate) mod fake {
    use super::Host;

    /// A host made of given facts.
    pub struct FakeHost {
        pub filesystems: &'static str,
        pub modules: &'static str,
        pub programs: &'static [&'static str],
    }

    impl Host for FakeHost {
        fn proc_filesystems(&self) -> String {
            self.filesystems.to_string()
        }
        fn kernel_release(&self) -> String {
            "6.18.0-test".to_string()
        }
        fn module_index(&self) -> String {
            self.modules.to_string()
        }
        fn has_program(&self, program: &str) -> bool {
            self.programs.contains(&program)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_found_by_file_name() {
        let idx = "kernel/fs/f2fs/f2fs.ko.xz: kernel/lib/crc32.ko\nkernel/fs/fat/vfat.ko:\n\
                   kernel/fs/fuse/fuse.ko.zst:\n";
        assert!(index_has_module(idx, "f2fs"));
        assert!(index_has_module(idx, "vfat"));
        assert!(index_has_module(idx, "fuse"));
        assert!(!index_has_module(idx, "fat"));
        assert!(!index_has_module(idx, "crc"));
        assert!(!index_has_module(idx, "jfs"));
    }
}
