//! A user's archive decompressed in-process, by its name: `.tar` as is, `.tar.gz`/`.tgz`
//! by `flate2` (every gzip member, as `gzip -dc`), `.tar.xz`/`.txz` by `liblzma` (built
//! from its bundled source; every xz stream, as `xz -dc`) and `.tar.zst`/`.tzst` by `zstd`
//! (every frame, as `zstd -dc`). No decompressor binary is needed on the machine.
//!
//! The output is counted as it arrives, so a small archive that expands past the limit
//! stops there instead of filling memory.

use crate::error::usage;
use crate::workload::IoContext;
use anyhow::{anyhow, Result};
use std::io::{BufReader, Read};
use std::path::Path;

/// How an archive is compressed, by its name's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Compression {
    None,
    Gzip,
    Xz,
    Zstd,
}

impl Compression {
    /// The compression `path`'s name says; any other suffix is a usage error.
    pub(super) fn of(path: &Path) -> Result<Self> {
        let name = path.to_string_lossy();
        let ends = |suffixes: &[&str]| suffixes.iter().any(|s| name.ends_with(s));
        Ok(if ends(&[".tar"]) {
            Compression::None
        } else if ends(&[".tar.gz", ".tgz"]) {
            Compression::Gzip
        } else if ends(&[".tar.xz", ".txz"]) {
            Compression::Xz
        } else if ends(&[".tar.zst", ".tzst"]) {
            Compression::Zstd
        } else {
            return Err(usage(format!(
                "untar: archive={name}: not .tar, .tar.gz, .tar.xz or .tar.zst"
            )));
        })
    }

    /// The format's name in messages.
    fn name(self) -> &'static str {
        match self {
            Compression::None => "tar",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }

    /// The archive's uncompressed bytes, read into memory (untimed); more than
    /// `limit_bytes` is an error as soon as it is passed.
    pub(super) fn load(self, path: &Path, limit_bytes: u64) -> Result<Vec<u8>> {
        let file = BufReader::new(std::fs::File::open(path).on("open", path)?);
        let reader: Box<dyn Read> = match self {
            Compression::None => Box::new(file),
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(file)),
            Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(file)),
            Compression::Zstd => Box::new(
                zstd::stream::read::Decoder::with_buffer(file)
                    .map_err(|e| anyhow!("starting the zstd decoder: {e}"))?,
            ),
        };
        let mut bytes = Vec::new();
        let read = reader
            .take(limit_bytes.saturating_add(1))
            .read_to_end(&mut bytes);
        if bytes.len() as u64 > limit_bytes {
            return Err(anyhow!(
                "more than {limit_bytes} bytes uncompressed, more than half of the available \
                 memory; use a smaller archive"
            ));
        }
        match (read, self) {
            (Ok(_), _) => Ok(bytes),
            (Err(e), Compression::None) => Err(e).on("read", path),
            (Err(e), c) => Err(anyhow!(
                "not valid {} data: {e} (after {} bytes uncompressed)",
                c.name(),
                bytes.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Bytes that compress, with some structure: a tar stream's worth of text and zeros.
    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| match (i / 4096) % 3 {
                0 => 0,
                1 => b"abcdefghij\n"[i % 11],
                _ => (i.wrapping_mul(2_654_435_761) >> 13) as u8,
            })
            .collect()
    }

    /// `data` compressed as `c` by the crate's own encoder.
    fn compress(c: Compression, data: &[u8]) -> Vec<u8> {
        match c {
            Compression::None => data.to_vec(),
            Compression::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Compression::Xz => {
                let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Compression::Zstd => {
                // With a checksum of the content, as the `zstd` command writes by default.
                let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
                e.include_checksum(true).unwrap();
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
        }
    }

    const ALL: [(Compression, &str); 4] = [
        (Compression::None, "tar"),
        (Compression::Gzip, "tar.gz"),
        (Compression::Xz, "tar.xz"),
        (Compression::Zstd, "tar.zst"),
    ];

    #[test]
    fn names_choose_the_decompressor() {
        for (name, want) in [
            ("a.tar", Compression::None),
            ("a.tgz", Compression::Gzip),
            ("a.tar.gz", Compression::Gzip),
            ("a.txz", Compression::Xz),
            ("a.tar.xz", Compression::Xz),
            ("a.tzst", Compression::Zstd),
            ("a.tar.zst", Compression::Zstd),
        ] {
            assert_eq!(Compression::of(Path::new(name)).unwrap(), want, "{name}");
        }
        for bad in ["a.zip", "a.tar.bz2", "a.gz", "a"] {
            assert!(Compression::of(Path::new(bad)).is_err(), "{bad}");
        }
    }

    /// Each format gives back exactly the bytes compressed, also when the file holds
    /// several members/streams/frames one after the other (as `cat a.gz b.gz` makes).
    #[test]
    fn every_format_round_trips_whole_and_concatenated() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (sample(300_000), sample(70_001));
        for (c, ext) in ALL {
            let path = dir.path().join(format!("a.{ext}"));
            let mut file = compress(c, &a);
            std::fs::write(&path, &file).unwrap();
            assert!(c.load(&path, u64::MAX).unwrap() == a, "{ext}");
            file.extend(compress(c, &b));
            std::fs::write(&path, &file).unwrap();
            let got = c.load(&path, u64::MAX).unwrap();
            assert!(got.len() == a.len() + b.len() && got == [&a[..], &b[..]].concat());
        }
    }

    /// What the usual command-line tools make reads back identically (when they are here).
    #[test]
    fn files_made_by_gzip_xz_and_zstd_binaries_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let data = sample(200_000);
        let raw = dir.path().join("a.tar");
        std::fs::write(&raw, &data).unwrap();
        for (c, ext) in &ALL[1..] {
            let tool = c.name();
            let out = std::process::Command::new(tool)
                .arg("-c")
                .arg(&raw)
                .output();
            let Ok(out) = out
                .as_ref()
                .map_err(|_| ())
                .and_then(|o| match o.status.success() {
                    true => Ok(o),
                    false => Err(()),
                })
            else {
                eprintln!("SKIP files_made_by_{tool}: no {tool} binary");
                continue;
            };
            let path = dir.path().join(format!("b.{ext}"));
            std::fs::write(&path, &out.stdout).unwrap();
            assert!(c.load(&path, u64::MAX).unwrap() == data, "{tool}");
        }
    }

    /// A corrupt or truncated compressed file is an error naming the format.
    #[test]
    fn corrupt_and_truncated_files_say_which_format() {
        let dir = tempfile::tempdir().unwrap();
        let data = sample(100_000);
        for (c, ext) in &ALL[1..] {
            let good = compress(*c, &data);
            let mut flipped = good.clone();
            let mid = flipped.len() / 2;
            flipped[mid] ^= 0x5a;
            let cases = [
                ("plain", data[..20_000].to_vec()),
                ("cut", good[..good.len() / 2].to_vec()),
                ("flipped", flipped),
                ("empty", Vec::new()),
            ];
            for (what, bytes) in cases {
                let path = dir.path().join(format!("{what}.{ext}"));
                std::fs::write(&path, bytes).unwrap();
                let Err(e) = c.load(&path, u64::MAX) else {
                    panic!("{what}.{ext} was accepted");
                };
                let msg = format!("{e:#}");
                assert!(
                    msg.contains(&format!("not valid {} data", c.name())),
                    "{msg}"
                );
            }
        }
    }

    /// Issue 31 item 8: a small archive that expands past the limit stops at the limit
    /// instead of being read whole into memory first.
    #[test]
    fn decompression_stops_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let zeros = vec![0u8; 8 << 20];
        for (c, ext) in ALL {
            let path = dir.path().join(format!("zeros.{ext}"));
            let file = compress(c, &zeros);
            if c != Compression::None {
                assert!(file.len() < 100_000, "{ext}: {}", file.len());
            }
            std::fs::write(&path, file).unwrap();
            let e = c.load(&path, 1 << 20).unwrap_err().to_string();
            assert!(e.contains("more than 1048576 bytes uncompressed"), "{e}");
            assert_eq!(c.load(&path, 8 << 20).unwrap().len(), 8 << 20);
        }
    }
}
