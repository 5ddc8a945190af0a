//! The `verify` pattern of the `job` workload: every 8-byte word of a file holds a keyed
//! hash (splitmix64) of the file's key and the word's byte position, so each block is its
//! own checksum — a block read back is right exactly when it equals the pattern for where
//! it lies, whatever size of writes put it there and however often it was rewritten.
//!
//! With `verify=true` the layout writes the pattern, the run's writes rewrite it, and the
//! `verify` phase reads every file back block by block and counts the blocks that differ.
//! Any difference fails the trial (corruption is an error, never a figure).

use anyhow::{anyhow, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Blocks compared (and counted) by [`check_file`].
pub const VERIFY_BLOCK: usize = 4096;

#[inline]
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of file `file` of job `job` in a run with `seed`.
pub fn file_key(seed: u64, job: usize, file: usize) -> u64 {
    splitmix(seed ^ splitmix(((job as u64) << 32) | file as u64))
}

/// Fills `buf` with the pattern for bytes `offset..offset + buf.len()` of the file keyed
/// `key` (`offset` and the length are multiples of 8).
pub fn fill(buf: &mut [u8], key: u64, offset: u64) {
    debug_assert!(offset % 8 == 0 && buf.len() % 8 == 0);
    for (i, word) in buf.chunks_exact_mut(8).enumerate() {
        let pos = offset + 8 * i as u64;
        word.copy_from_slice(&splitmix(key ^ pos).to_le_bytes());
    }
}

/// Whether `buf` holds the pattern for its place.
pub fn matches(buf: &[u8], key: u64, offset: u64) -> bool {
    buf.chunks_exact(8).enumerate().all(|(i, word)| {
        let pos = offset + 8 * i as u64;
        word == splitmix(key ^ pos).to_le_bytes()
    })
}

/// What reading a file back found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub blocks: u64,
    pub bad: u64,
    /// Byte offset of the first bad block.
    pub first_bad: Option<u64>,
}

/// Reads the first `len` bytes of `path` in `VERIFY_BLOCK`-byte blocks with `pread` and compares
/// each with the pattern keyed `key`. `buf` is the caller's scratch buffer (≥ one block).
pub fn check_file(path: &Path, key: u64, len: u64, buf: &mut [u8]) -> Result<Checked> {
    let f = File::open(path).map_err(|e| anyhow!("verify: open {}: {e}", path.display()))?;
    check_range(&f, path, key, 0, len, buf)
}

/// Like [`check_file`] for the `len` bytes at `base` of the open file `f` (named `path`):
/// a segment of a shared file, whose pattern runs from 0 at `base` (block positions
/// relative to the segment's start).
pub fn check_range(
    f: &File,
    path: &Path,
    key: u64,
    base: u64,
    len: u64,
    buf: &mut [u8],
) -> Result<Checked> {
    let mut c = Checked::default();
    let mut off = 0;
    while off < len {
        let n = (len - off).min(VERIFY_BLOCK as u64) as usize;
        let got = &mut buf[..n];
        f.read_exact_at(got, base + off)
            .map_err(|e| anyhow!("verify: read {} at {}: {e}", path.display(), base + off))?;
        c.blocks += 1;
        if !matches(&got[..n & !7], key, off) {
            c.bad += 1;
            c.first_bad.get_or_insert(base + off);
        }
        off += n as u64;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_positional_and_detects_corruption() {
        let key = file_key(1, 0, 0);
        let mut whole = vec![0u8; 3 * VERIFY_BLOCK];
        fill(&mut whole, key, 0);
        // The same bytes written in other pieces are the same pattern.
        let mut piece = vec![0u8; 1024];
        fill(&mut piece, key, 5120);
        assert_eq!(&whole[5120..6144], &piece[..]);
        assert!(matches(&whole[4096..], key, 4096));
        assert!(!matches(&whole[4096..], key, 0));
        assert!(
            !matches(&whole, file_key(1, 0, 1), 0),
            "other file, other key"
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &whole).unwrap();
        let mut buf = vec![0u8; VERIFY_BLOCK];
        let ok = check_file(&path, key, whole.len() as u64, &mut buf).unwrap();
        assert_eq!(
            ok,
            Checked {
                blocks: 3,
                bad: 0,
                first_bad: None
            }
        );
        whole[2 * VERIFY_BLOCK + 100] ^= 1;
        std::fs::write(&path, &whole).unwrap();
        let bad = check_file(&path, key, whole.len() as u64, &mut buf).unwrap();
        assert_eq!((bad.bad, bad.first_bad), (1, Some(8192)));
    }
}
