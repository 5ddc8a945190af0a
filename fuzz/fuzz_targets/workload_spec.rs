//! `cargo +nightly fuzz run workload_spec`: see fsarena::fuzzing::workload_spec.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsarena::fuzzing::workload_spec(data));
