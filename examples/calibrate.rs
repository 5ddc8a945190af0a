//! Calibrates a fresh loop image of filesystem FS (512 MiB) COUNT times, as `fsarena run`
//! does once per loop target, and prints how long each calibration took (attaching and
//! detaching the image included) with the two cold read rates it measured — the figures
//! behind the calibration's cost in docs/validation.md. Needs root and loop devices.
//!
//! usage: cargo run --example calibrate -- FS COUNT IMAGE_DIR

use fsarena::provision::{self, fs::FsType, Env, TargetSpec};
use std::sync::Arc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fs, count, dir] = args.as_slice() else {
        anyhow::bail!("usage: calibrate FS COUNT IMAGE_DIR");
    };
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir)?;
    let env = Env {
        run_id: "calibrate".into(),
        image_dir: dir.to_path_buf(),
        state: Arc::new(fsarena::state::State::create(
            &dir.join("state"),
            "calibrate",
        )?),
    };
    let spec = TargetSpec::Loop {
        fs: FsType::parse(fs).map_err(anyhow::Error::msg)?,
        mkfs_opts: vec![],
        mount_opts: String::new(),
        size_bytes: 512 << 20,
    };
    for _ in 0..count.parse::<u32>()? {
        let mut t = provision::build(&spec, &env);
        let start = std::time::Instant::now();
        let res = t.calibrate();
        let took_s = start.elapsed().as_secs_f64();
        t.teardown()?;
        res?;
        let rate = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.0}"));
        println!(
            "{took_s:.2} s  direct {} MB/s  buffered {} MB/s",
            rate(t.info().device_read_mb_per_s),
            rate(t.info().device_buffered_read_mb_per_s)
        );
    }
    Ok(())
}
