//! Whether the machine has room for a plan, checked once before anything is provisioned
//! (by `run` from flags, by plan files, and the same figures by `doctor`):
//! * the image directory must be writable and have, free to an unprivileged process
//!   (statvfs `f_bavail`, what `df` shows), the largest image plus a margin. Root could
//!   also use the blocks reserved for it, but filling them starves the machine. A
//!   filesystem that keeps no count (statvfs `f_blocks` 0: ramfs, FUSE mounts without
//!   statfs) cannot be checked and is not refused;
//! * a tmpfs lives in memory (and swap): one larger than what memory can hold now
//!   (`MemAvailable` + `SwapFree`) would push the machine into reclaim or the OOM killer
//!   long before it filled, so it is refused.

use crate::size::format_size;
use std::path::Path;

/// Free space kept beside the largest image (state files, logs, a second image's start).
pub(crate) const IMAGE_DIR_MARGIN: u64 = 64 << 20;

/// The nearest existing ancestor of `p` (where free space is to be measured).
pub(crate) fn existing_ancestor(p: &Path) -> &Path {
    p.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"))
}

/// Why `image_dir` cannot hold an image of `largest_bytes`, or `None` when it can. The
/// text starts with the directory; the caller names the option.
pub fn image_dir_problem(image_dir: &Path, largest_bytes: u64) -> Option<String> {
    let at = existing_ancestor(image_dir);
    let space = match crate::probe::sys::space(at) {
        Ok(s) => s,
        Err(e) => return Some(format!("{}: {e:#}", image_dir.display())),
    };
    space_problem(image_dir, at, &space, largest_bytes)
}

/// [`image_dir_problem`] on given statvfs figures of `at` (the directory or its nearest
/// existing ancestor).
pub fn space_problem(
    image_dir: &Path,
    at: &Path,
    space: &crate::probe::sys::Space,
    largest_bytes: u64,
) -> Option<String> {
    let where_ = if at == image_dir {
        image_dir.display().to_string()
    } else {
        format!("{} (measured on {})", image_dir.display(), at.display())
    };
    if space.read_only {
        return Some(format!(
            "{where_} is on a read-only filesystem: images cannot be made there; use another \
             --image-dir"
        ));
    }
    // ramfs (and FUSE mounts without statfs) report no size at all: nothing to check.
    if space.capacity_bytes == 0 {
        return None;
    }
    (space.avail_bytes < largest_bytes.saturating_add(IMAGE_DIR_MARGIN)).then(|| {
        format!(
            "{where_}: {} free, but the largest image needs {} (plus {} margin); use a \
             smaller size or another --image-dir",
            format_size(space.avail_bytes),
            format_size(largest_bytes),
            format_size(IMAGE_DIR_MARGIN)
        )
    })
}

/// Bytes a tmpfs may be given here: what memory and swap can hold now.
pub fn memory_for_tmpfs() -> Option<u64> {
    let avail = crate::probe::sys::meminfo_bytes("MemAvailable")?;
    Some(avail + crate::probe::sys::meminfo_bytes("SwapFree").unwrap_or(0))
}

/// Why a tmpfs of `size_bytes` cannot be had when `memory_bytes` can be held, or `None`.
pub fn tmpfs_problem(size_bytes: u64, memory_bytes: Option<u64>) -> Option<String> {
    let memory = memory_bytes?;
    (size_bytes > memory).then(|| {
        format!(
            "a tmpfs of {} lives in memory, and this machine can hold {} now (MemAvailable + \
             SwapFree); give tmpfs a smaller --size",
            format_size(size_bytes),
            format_size(memory)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::sys::Space;

    #[test]
    fn read_only_and_full_image_dirs_are_named() {
        let dir = Path::new("/mnt/ro/images");
        let ro = Space {
            capacity_bytes: 1 << 40,
            free_bytes: 1 << 39,
            avail_bytes: 1 << 39,
            read_only: true,
        };
        let why = space_problem(dir, Path::new("/mnt/ro"), &ro, 1 << 30).unwrap();
        assert!(why.contains("read-only"), "{why}");
        assert!(why.contains("measured on /mnt/ro"), "{why}");
        // Root's reserved blocks are not counted: free 10 GiB, available 0.5 GiB.
        let reserved = Space {
            capacity_bytes: 100 << 30,
            free_bytes: 10 << 30,
            avail_bytes: 512 << 20,
            read_only: false,
        };
        let why = space_problem(dir, dir, &reserved, 1 << 30).unwrap();
        assert!(why.starts_with("/mnt/ro/images: 512MiB free"), "{why}");
        assert_eq!(space_problem(dir, dir, &reserved, 256 << 20), None);
        // ramfs keeps no count (all zeroes): nothing to check, nothing refused.
        assert_eq!(space_problem(dir, dir, &Space::default(), 1 << 30), None);
    }

    #[test]
    fn a_tmpfs_larger_than_memory_is_refused() {
        let why = tmpfs_problem(1 << 40, Some(23 << 30)).unwrap();
        assert!(
            why.contains("of 1TiB") && why.contains("hold 23GiB"),
            "{why}"
        );
        assert_eq!(tmpfs_problem(1 << 30, Some(23 << 30)), None);
        assert_eq!(tmpfs_problem(1 << 40, None), None);
    }
}
