//! Writes a corpus as a tar stream on stdout — the archive `untar` generates — so that
//! other tools can be run on exactly the same files (see bench/validate-untar.sh).
//!
//! usage: cargo run --release --example corpus_tar -- PROFILE SCALE SEED DATA > out.tar
//!   DATA: random | zeros | text | compress:PCT (as --data)

use std::io::Write;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [profile, scale, seed, data] = args.as_slice() else {
        anyhow::bail!("usage: corpus_tar PROFILE SCALE SEED DATA");
    };
    let seed: u64 = seed.parse()?;
    let corpus = fsarena::corpus::Corpus::new(profile, scale.parse()?, seed)?;
    let policy: fsarena::policy::DataPolicy = data.parse().map_err(anyhow::Error::msg)?;
    let pool = fsarena::data::DataPool::new(policy, seed);
    let mut stream = fsarena::workload::untar::TarStream::new(&corpus, pool.source(0x7461));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    std::io::copy(&mut stream, &mut out)?;
    out.flush()?;
    Ok(())
}
