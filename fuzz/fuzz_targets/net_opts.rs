//! `cargo +nightly fuzz run net_opts`: see fsarena::fuzzing::net_opts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::net_opts(data));
