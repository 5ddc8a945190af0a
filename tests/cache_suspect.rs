//! The `cache-suspect` flag end to end on a real ext4 loop target: it must fire when a read
//! that claims to be cold is served from the page cache (the cold reset skipped through a
//! wrapping target, the test seam), and must not when the reset really ran (sync, umount,
//! drop caches, mount) and the device delivered the bytes.

mod common;

use anyhow::Result;
use fsarena::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use fsarena::data::DataPool;
use fsarena::policy::{CachePolicy, Policy};
use fsarena::probe::recorder::Op;
use fsarena::provision::fs::FsType;
use fsarena::provision::{self, Env, Target, TargetSpec};
use fsarena::result::{PhaseResult, Provision, TargetInfo};
use fsarena::state::State;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Bytes of the file read back.
const FILE_BYTES: usize = 128 << 20;
const CHUNK: usize = 1 << 20;

const READ: PhaseSpec = PhaseSpec {
    name: "read",
    kind: PhaseKind::Read,
    primary: Primary::MbPerS,
    ops_unit: "reads/s",
};

/// A target whose cold reset is skipped when `skip` is set: the caches stay as they are
/// while the cache policy says cold.
struct Seam {
    inner: Box<dyn Target>,
    skip: bool,
}

impl Target for Seam {
    fn info(&self) -> &TargetInfo {
        self.inner.info()
    }
    fn calibrate(&mut self) -> Result<()> {
        self.inner.calibrate()
    }
    fn prepare(&mut self) -> Result<PathBuf> {
        self.inner.prepare()
    }
    fn reset(&mut self) -> Result<()> {
        if self.skip {
            Ok(())
        } else {
            self.inner.reset()
        }
    }
    fn device_stat(&self) -> Option<PathBuf> {
        self.inner.device_stat()
    }
    fn provision(&self) -> Provision {
        self.inner.provision()
    }
    fn teardown(&mut self) -> Result<()> {
        self.inner.teardown()
    }
}

/// Writes a 128 MiB file on a fresh ext4 loop target, then reads it in a phase under
/// `--cache cold` with the reset done or skipped; the phase's result, or `None` (SKIP).
fn cold_read(test: &str, skip_reset: bool) -> Option<PhaseResult> {
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return None;
    }
    let dir = common::image_dir();
    let env = Env {
        run_id: "t".into(),
        image_dir: dir.path().to_path_buf(),
        state: Arc::new(State::create(&dir.path().join("state"), "t").unwrap()),
    };
    let spec = TargetSpec::Loop {
        fs: FsType::Ext4,
        mkfs_opts: vec![],
        mount_opts: String::new(),
        size_bytes: 512 << 20,
    };
    let mut t = Seam {
        inner: provision::build(&spec, &env),
        skip: skip_reset,
    };
    t.calibrate().unwrap();
    let work = t.prepare().unwrap();
    let path = work.join("f");
    let mut f = std::fs::File::create(&path).unwrap();
    let data = vec![0x5au8; CHUNK];
    for _ in 0..FILE_BYTES / CHUNK {
        f.write_all(&data).unwrap();
    }
    // On the device and clean in the page cache.
    f.sync_all().unwrap();
    drop(f);
    let policy = Policy {
        cache: CachePolicy::Cold,
        ..Default::default()
    };
    let pool = DataPool::new(policy.data, policy.seed);
    let mut cx = TrialContext::new(work, &policy, &mut t, pool, &|_| {});
    cx.phase(&READ, 1, |w| {
        let mut f = std::fs::File::open(&path)?;
        let mut buf = vec![0u8; CHUNK];
        for _ in 0..FILE_BYTES / CHUNK {
            let s = w.start();
            f.read_exact(&mut buf)?;
            w.done(Op::Read, s, CHUNK as u64);
        }
        Ok(())
    })
    .unwrap();
    let p = cx.into_phases().remove(0);
    t.teardown().unwrap();
    drop(t);
    common::assert_clean(dir.path());
    assert_eq!(p.bytes_read, FILE_BYTES as u64);
    assert!(
        !p.flags.iter().any(|f| f == "cold-unverifiable"),
        "a loop target can check: {:?}",
        p.flags
    );
    Some(p)
}

/// The reset skipped: the file is read from the page cache while the label says cold.
/// Another process dropping the machine's caches meanwhile (other fsarena runs on a shared
/// machine do) makes the read really cold; such an attempt is repeated.
#[test]
fn cache_suspect_fires_on_a_cached_read_labelled_cold() {
    let test = "cache_suspect_fires_on_a_cached_read_labelled_cold";
    let mut devs = Vec::new();
    for _ in 0..5 {
        let Some(p) = cold_read(test, true) else {
            return;
        };
        let dev = p.dev_read_bytes.unwrap();
        if dev < FILE_BYTES as u64 / 2 {
            let suspect = p.flags.iter().any(|f| f == "cache-suspect");
            assert!(suspect, "{:?}", p.flags);
            return;
        }
        devs.push(dev);
    }
    panic!("the page cache never held the file (device read {devs:?} bytes): dropped by another process?");
}

/// The reset done: the device delivers the file, and the flag stays off.
#[test]
fn cache_suspect_stays_off_on_a_real_cold_read() {
    let Some(p) = cold_read("cache_suspect_stays_off_on_a_real_cold_read", false) else {
        return;
    };
    let dev = p.dev_read_bytes.unwrap();
    assert!(dev >= FILE_BYTES as u64 * 9 / 10, "device read {dev} bytes");
    assert!(
        !p.flags.iter().any(|f| f == "cache-suspect"),
        "{:?}",
        p.flags
    );
}
