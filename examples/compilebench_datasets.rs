//! Writes fsarena's synthetic compilebench datasets as compilebench dataset files, so that
//! the real compilebench can run the same files as `fsarena run compile:scale=SCALE`
//! (see bench/validate-compile.sh).
//!
//! usage: cargo run --release --example compilebench_datasets -- SCALE SEED DIR

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [scale, seed, dir] = args.as_slice() else {
        anyhow::bail!("usage: compilebench_datasets SCALE SEED DIR");
    };
    fsarena::workload::compile::write_compilebench_datasets(
        scale.parse()?,
        seed.parse()?,
        std::path::Path::new(dir),
    )
}
