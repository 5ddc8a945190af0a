//! `cargo +nightly fuzz run sizes`: see fsarena::fuzzing::sizes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::sizes(data));
