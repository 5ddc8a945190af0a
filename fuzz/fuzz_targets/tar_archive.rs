//! `cargo +nightly fuzz run tar_archive`: see fsarena::fuzzing::tar_archive.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::tar_archive(data));
