//! `cargo +nightly fuzz run plan_toml`: see fsarena::fuzzing::plan_toml.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::plan_toml(data));
