//! Scratch images: asking mkfs a question without making a target — "do you accept a
//! device of this size?" — for the `provision` workload's smallest-size search (the 2001
//! comparison noted that "make.Rfs apparently can't build a small filesystem (not under
//! about 100MB)", seed article 002, Jim Bray).
//!
//! A sparse file of the size, in the image directory and recorded in the state file while
//! it exists, created `O_CREAT|O_EXCL|O_NOFOLLOW`; mkfs runs on the file itself (mkfs
//! accepts a regular file: no loop device, no mount), given as `/proc/self/fd/N` of the
//! descriptor that created it, so a name swapped for a symlink since cannot send mkfs
//! elsewhere; the file is deleted again, also when mkfs fails or fsarena is interrupted
//! (`fsarena cleanup` removes what a killed run left).

use super::fs::FsType;
use super::loopdev;
use super::Env;
use crate::cmd;
use crate::error::Error;
use crate::state::{self, Resource};
use anyhow::{Context, Result};

/// Whether `mkfs` of `fs` with the extra options `user_mkfs` accepts a device of
/// `size_bytes`. `tag` names the scratch file (`<run>-<tag>-scratch.img`). A refusal is
/// `Ok(false)`; `Err` when the image could not be made or mkfs could not run at all.
pub fn mkfs_accepts(
    env: &Env,
    fs: FsType,
    user_mkfs: &[String],
    tag: &str,
    size_bytes: u64,
) -> Result<bool> {
    state::ensure_owned_dir(&env.image_dir)?;
    let image = env
        .image_dir
        .join(format!("{}-{tag}-scratch.img", env.run_id));
    let r = Resource::Image {
        path: image.clone(),
    };
    env.state.add(r.clone())?;
    let tried = (|| -> Result<bool> {
        let f = loopdev::create_image(&image)
            .with_context(|| format!("creating scratch image {}", image.display()))?;
        f.set_len(size_bytes)
            .with_context(|| format!("sizing {} to {size_bytes} bytes", image.display()))?;
        mkfs_on(fs, &f, user_mkfs)
    })();
    let removed = state::undo(&r).and_then(|_| env.state.remove(&r));
    let accepted = tried?;
    removed?;
    Ok(accepted)
}

/// Whether mkfs of `fs` accepts the open file `f` (see [`mkfs_accepts`]).
fn mkfs_on(fs: FsType, f: &std::fs::File, user_mkfs: &[String]) -> Result<bool> {
    let (inherited, path) = loopdev::for_child(f)?;
    let out = cmd::run_stoppable(&fs.mkfs_argv(&path, user_mkfs));
    drop(inherited);
    match out {
        Ok(_) => Ok(true),
        Err(e) if is_refusal(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether a command error is mkfs saying no (it ran and exited non-zero), as opposed to
/// mkfs not starting or being killed.
fn is_refusal(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<Error>(),
        Some(Error::Command { status, .. }) if status.parse::<i32>().is_ok()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_exits_not_failures_to_start() {
        let exit = cmd::run(&["sh", "-c", "exit 1"]).unwrap_err();
        assert!(is_refusal(&exit));
        let missing = cmd::run(&["/no/such/mkfs"]).unwrap_err();
        assert!(!is_refusal(&missing));
        assert!(!is_refusal(&anyhow::anyhow!("other")));
    }

    /// The scratch image's name swapped for a symlink to "the disk" after creation: mkfs
    /// formats the file created, the disk keeps its bytes.
    #[test]
    fn mkfs_goes_to_the_file_created_not_where_its_name_leads() {
        let Some(fs) = [FsType::Ext4, FsType::Ext2]
            .into_iter()
            .find(|f| f.support() == crate::provision::fs::Support::Yes)
        else {
            eprintln!("SKIP mkfs_goes_to_the_file_created_not_where_its_name_leads: no mkfs.ext4");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let disk = tmp.path().join("disk");
        std::fs::write(&disk, vec![0xAAu8; 1 << 20]).unwrap();
        let img = tmp.path().join("x.img");
        let f = loopdev::create_image(&img).unwrap();
        f.set_len(1 << 20).unwrap();
        let moved = tmp.path().join("moved.img");
        std::fs::rename(&img, &moved).unwrap();
        std::os::unix::fs::symlink(&disk, &img).unwrap();
        assert!(mkfs_on(fs, &f, &[]).unwrap());
        assert!(std::fs::read(&disk).unwrap().iter().all(|&b| b == 0xAA));
        let made = std::fs::read(&moved).unwrap();
        assert_eq!(&made[1080..1082], &[0x53, 0xEF], "no ext superblock magic");
    }

    #[test]
    fn scratch_image_is_gone_afterwards() {
        let Some(fs) = [FsType::Ext4, FsType::Ext2]
            .into_iter()
            .find(|f| f.support() == crate::provision::fs::Support::Yes)
        else {
            eprintln!("SKIP scratch_image_is_gone_afterwards: mkfs.ext4 is not installed");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let env = Env::for_test("t", &tmp.path().join("img"), &tmp.path().join("state"));
        // mke2fs makes a filesystem in a 1 MiB file and refuses a 4 KiB one.
        assert!(mkfs_accepts(&env, fs, &[], "ext", 1 << 20).unwrap());
        assert!(!mkfs_accepts(&env, fs, &[], "ext", 4096).unwrap());
        let left: Vec<_> = std::fs::read_dir(&env.image_dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "img"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
