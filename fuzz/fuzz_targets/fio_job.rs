//! `cargo +nightly fuzz run fio_job`: see fsarena::fuzzing::fio_job.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::fio_job(data));
