//! Which kernel a guest boots: `--kernel` names a `vmlinuz` or a release under /boot; its
//! release is read from the image itself (the x86 boot header's version string), so a
//! renamed file still says what it is, and its modules must be on this machine
//! (/lib/modules/RELEASE) because the guest shares this machine's files.

use crate::error::usage;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A guest kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub path: PathBuf,
    /// `uname -r` of the guest (`6.1.0-56-amd64`).
    pub release: String,
}

impl Kernel {
    /// The release without the distribution's flavour and build tags, as target names
    /// carry it: `6.1.0-56-amd64` → `6.1.0-56`, `6.12.107+deb12-amd64` → `6.12.107`.
    pub fn short(&self) -> String {
        short_release(&self.release)
    }
}

/// See [`Kernel::short`].
pub fn short_release(release: &str) -> String {
    let mut r = release.split('+').next().unwrap_or(release).to_string();
    if let Some((head, tail)) = r.rsplit_once('-') {
        if ["amd64", "arm64", "generic", "686", "686-pae"].contains(&tail) {
            r = head.to_string();
        }
    }
    r
}

/// Resolves `--kernel TEXT`: a path to a kernel image, or a release whose image is
/// `/boot/vmlinuz-RELEASE`.
pub fn resolve(text: &str) -> Result<Kernel> {
    resolve_as(text, "--kernel")
}

/// The releases of the kernels under /boot a guest can boot (each with its modules),
/// sorted.
pub fn installed() -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir("/boot")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix("vmlinuz-").map(String::from)
                })
                .filter(|r| resolve(r).is_ok())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// [`resolve`], its errors naming `what` gave `text` (`--kernel`, or a plan's `kernel`).
pub fn resolve_as(text: &str, what: &str) -> Result<Kernel> {
    let path = if text.contains('/') {
        PathBuf::from(text)
    } else {
        Path::new("/boot").join(format!("vmlinuz-{text}"))
    };
    let bytes = std::fs::read(&path).map_err(|e| {
        usage(format!(
            "{what} {text}: cannot read {}: {e} (install a kernel, e.g. apt-get install \
             linux-image-amd64, or give the path of a vmlinuz)",
            path.display()
        ))
    })?;
    let release = release_of(&bytes)
        .or_else(|| {
            let name = path.file_name()?.to_str()?;
            name.strip_prefix("vmlinuz-").map(String::from)
        })
        .ok_or_else(|| {
            usage(format!(
                "{what} {text}: {} is not an x86 kernel image (no boot header)",
                path.display()
            ))
        })?;
    let modules = Path::new("/lib/modules").join(&release);
    if !modules.join("modules.dep").is_file() {
        return Err(usage(format!(
            "{what} {text}: no modules for {release} in {} (the guest loads them from \
             there): install the kernel's package, e.g. linux-image-{release}",
            modules.display()
        )));
    }
    let path = path.canonicalize().unwrap_or(path);
    Ok(Kernel { path, release })
}

/// The release in an x86 bzImage: the boot header ("HdrS" at 0x202) points at 0x20E to a
/// version string (`6.1.0-56-amd64 (debian-kernel@…) #1 SMP …`) 0x200 bytes further on.
pub fn release_of(image: &[u8]) -> Option<String> {
    if image.get(0x202..0x206)? != b"HdrS" {
        return None;
    }
    let at = u16::from_le_bytes([*image.get(0x20E)?, *image.get(0x20F)?]) as usize;
    if at == 0 {
        return None;
    }
    let text = image.get(at + 0x200..)?;
    let end = text.iter().position(|&b| b == 0 || b == b' ')?;
    let release = std::str::from_utf8(&text[..end]).ok()?;
    (!release.is_empty()).then(|| release.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_release_drops_flavour_and_build_tag() {
        assert_eq!(short_release("6.1.0-56-amd64"), "6.1.0-56");
        assert_eq!(short_release("6.12.107+deb12-amd64"), "6.12.107");
        assert_eq!(short_release("6.1.0-56-rt-amd64"), "6.1.0-56-rt");
        assert_eq!(short_release("6.18.0"), "6.18.0");
        assert_eq!(short_release("6.9.0-rc1"), "6.9.0-rc1");
    }

    #[test]
    fn release_is_read_from_the_boot_header() {
        let mut img = vec![0u8; 0x1000];
        img[0x202..0x206].copy_from_slice(b"HdrS");
        img[0x20E..0x210].copy_from_slice(&0x300u16.to_le_bytes());
        let v = b"6.1.0-56-amd64 (debian-kernel@lists.debian.org) #1\0";
        img[0x500..0x500 + v.len()].copy_from_slice(v);
        assert_eq!(release_of(&img).as_deref(), Some("6.1.0-56-amd64"));
        img[0x202] = b'X';
        assert_eq!(release_of(&img), None);
    }
}
