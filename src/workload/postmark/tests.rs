//! Unit tests of `postmark`.

use super::table::{c_name, Half};
use super::*;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;

fn config(params: &str) -> Config {
    let spec = WorkloadSpec::parse(&format!("postmark:{params}")).unwrap();
    let (_, p) = (spec.info, spec.params);
    let count = |k| p.count(k).unwrap();
    Config {
        number: count("number"),
        transactions: count("transactions"),
        low: p.bytes("size_low").unwrap(),
        high: p.bytes("size_high").unwrap(),
        subdirs: count("subdirs"),
        read_block: p.bytes("read_block").unwrap() as usize,
        write_block: p.bytes("write_block").unwrap() as usize,
        bias_read: p.choice("bias_read").parse().unwrap(),
        bias_create: p.choice("bias_create").parse().unwrap(),
        buffered: p.flag("buffering"),
        seed: count("seed") as u32,
    }
}

/// The choices postmark 1.51 makes for seed 42 with its defaults: the pool's first
/// sizes (seen with strace of the Debian binary: 1390, 4732, 3583, 6507, 9640), and
/// the first transactions.
#[test]
fn choices_for_seed_42_are_postmarks() {
    let cfg = config("number=5,transactions=4");
    let mut s = State::new(&cfg, Path::new("/x"));
    for _ in 0..5 {
        s.create(None, false).unwrap();
    }
    let sizes: Vec<u64> = s.table[..5].iter().map(|x| x.size).collect();
    assert_eq!(sizes, [1390, 4732, 3583, 6507, 9640]);
    // strace of `postmark` (number 5, seed 42): the first transaction appends 586
    // bytes to file 2, then deletes file 5.
    let first = s.transaction(None).unwrap();
    assert_eq!(first, [Some(Half::Append(1, 586)), Some(Half::Delete(4))]);
    assert_eq!(s.table[1].size, 4732 + 586);
}

#[test]
fn subdirectories_from_two_on_and_table_of_twice_number() {
    let cfg = config("number=10,subdirs=1");
    let mut s = State::new(&cfg, Path::new("/x"));
    s.create(None, false).unwrap();
    assert_eq!(s.table.len(), 20);
    assert_eq!(s.path(&s.table[0]), Path::new("/x/1"));
    let cfg = config("number=10,subdirs=3");
    let mut s = State::new(&cfg, Path::new("/x"));
    s.create(None, false).unwrap();
    let p = s.path(&s.table[0]);
    assert!(p.starts_with("/x/s0") || p.starts_with("/x/s1") || p.starts_with("/x/s2"));
}

fn run(params: &str, sync: SyncPolicy) -> (Vec<PhaseResult>, Vec<PathBuf>) {
    let spec = WorkloadSpec::parse(&format!("postmark:{params}")).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, sync, |cx| {
        workload.run(cx).unwrap();
        let left = fs::read_dir(cx.workdir()).unwrap();
        let left = left.map(|e| e.unwrap().path()).collect();
        (cx.phases().to_vec(), left)
    })
}

#[test]
fn end_to_end_counts_add_up() {
    for buffering in ["true", "false"] {
        let params = format!("number=200,transactions=600,subdirs=4,buffering={buffering}");
        let (phases, left) = run(&params, SyncPolicy::End);
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["create", "transactions", "delete"]);
        let (c, t, d) = (&phases[0], &phases[1], &phases[2]);
        assert_eq!(c.ops, 200);
        assert_eq!(t.ops, 600);
        let ops = |p: &PhaseResult, op: &str| {
            p.lat_by_op
                .iter()
                .find(|o| o.op == op)
                .map_or(0, |o| o.count)
        };
        assert!(ops(t, "read") + ops(t, "append") <= 600);
        assert!(
            ops(t, "read") > 200 && ops(t, "append") > 100,
            "bias 5 of 10"
        );
        assert_eq!(ops(t, "create") + ops(t, "delete"), 600);
        // Every file created is deleted: pool + mixed creates = mixed + final deletes.
        assert_eq!(200 + ops(t, "create"), ops(t, "delete") + d.ops);
        assert_eq!(t.extra["transactions_per_s"], t.ops_per_s);
        assert!(d.extra["deleted_per_s"] > 0.0 && d.extra["written_bytes_per_s"] > 0.0);
        assert!(t.bytes_read > 0 && t.bytes_written > 0);
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

#[test]
fn running_out_of_files_is_an_error() {
    let spec = WorkloadSpec::parse("postmark:number=2,transactions=100,bias_create=0").unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    let err = in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        workload.run(cx).unwrap_err().to_string()
    });
    assert!(err.contains("out of files"), "{err}");
}

#[test]
fn file_names_are_the_counter_in_decimal() {
    let mut buf = [0u8; 24];
    for id in [0u64, 7, 10, 4096, 1234567, u64::MAX] {
        assert_eq!(c_name(id, &mut buf).to_str().unwrap(), id.to_string());
    }
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "number=0",
        "size_low=2000,size_high=1000",
        "size_low=0",
        "read_block=0",
        "bias_read=11",
        "bias_create=-2",
        "seed=5000000000",
        "subdirs=100001",
    ] {
        let err = WorkloadSpec::parse(&format!("postmark:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
}
