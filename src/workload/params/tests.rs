//! Unit tests of `params`.

use super::*;

const SPECS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        kind: ParamKind::Size,
        default: "1GiB",
        unit: "bytes",
        help: "",
    },
    ParamSpec {
        name: "seeks",
        kind: ParamKind::Count,
        default: "8192",
        unit: "",
        help: "",
    },
    ParamSpec {
        name: "mode",
        kind: ParamKind::Choice(&["stdio", "syscall"]),
        default: "stdio",
        unit: "",
        help: "",
    },
    ParamSpec {
        name: "char_size",
        kind: ParamKind::Size,
        default: "",
        unit: "bytes",
        help: "",
    },
    ParamSpec {
        name: "verify",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        help: "",
    },
];

#[test]
fn with_value_replaces_one_item_and_keeps_the_others_as_written() {
    assert_eq!(
        with_value("files=10,size_max=4KiB", "files", "200").unwrap(),
        "size_max=4KiB,files=200"
    );
    assert_eq!(
        with_value("run='a, files=1',x=2", "files", "3").unwrap(),
        "run='a, files=1',x=2,files=3"
    );
    assert_eq!(with_value("", "seeks", "8").unwrap(), "seeks=8");
    assert!(with_value("run='open", "seeks", "8").is_none());
}

#[test]
fn defaults_and_overrides() {
    let p = Params::parse("bonnie", SPECS, "size=512MiB, mode=syscall,verify=yes").unwrap();
    assert_eq!(p.bytes("size"), Some(512 << 20));
    assert_eq!(p.count("seeks"), Some(8192));
    assert_eq!(p.choice("mode"), "syscall");
    assert_eq!(p.bytes("char_size"), None);
    assert!(p.flag("verify"));
    assert_eq!(p.to_text_map()["size"], "512MiB");
}

#[test]
fn floats_texts_and_lists() {
    const MORE: &[ParamSpec] = &[
        ParamSpec {
            name: "files",
            kind: ParamKind::CountList,
            default: "1,10,100",
            unit: "MiB",
            help: "",
        },
        ParamSpec {
            name: "scale",
            kind: ParamKind::Float,
            default: "1.0",
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "archive",
            kind: ParamKind::Text,
            default: "",
            unit: "path",
            help: "",
        },
    ];
    let p = Params::parse("w", MORE, "").unwrap();
    assert_eq!(p.counts("files"), &[1, 10, 100]);
    assert_eq!((p.float("scale"), p.text("archive")), (Some(1.0), None));
    let p = Params::parse("w", MORE, "files=5,6,7,scale=0.25,archive=/a b.tar").unwrap();
    assert_eq!(p.counts("files"), &[5, 6, 7]);
    assert_eq!(p.float("scale"), Some(0.25));
    assert_eq!(p.text("archive"), Some("/a b.tar"));
    assert_eq!(p.to_text_map()["files"], "5,6,7");
    let p = Params::parse("w", MORE, "scale=2,files=9").unwrap();
    assert_eq!(p.counts("files"), &[9]);
    for bad in ["scale=-1", "scale=x", "files=1,x", "scale=1,2"] {
        assert!(Params::parse("w", MORE, bad).is_err(), "{bad}");
    }
}

#[test]
fn quoted_values_keep_their_commas() {
    const CMD: &[ParamSpec] = &[
        ParamSpec {
            name: "run",
            kind: ParamKind::Text,
            default: "",
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "env",
            kind: ParamKind::Text,
            default: "",
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "files",
            kind: ParamKind::CountList,
            default: "1",
            unit: "",
            help: "",
        },
    ];
    let text = |s: &str, k: &str| {
        let p = Params::parse("command", CMD, s).unwrap();
        p.text(k).map(str::to_string)
    };
    // What a shell leaves of command:run='make -j2',env='CC=cc;X=1'.
    assert_eq!(
        text("run=make -j2,env=CC=cc;X=1", "run").unwrap(),
        "make -j2"
    );
    assert_eq!(
        text("run=make -j2,env=CC=cc;X=1", "env").unwrap(),
        "CC=cc;X=1"
    );
    // A value that is one quoted string loses its quotes; commas inside are kept.
    assert_eq!(text("run='echo a,b',env=x", "run").unwrap(), "echo a,b");
    assert_eq!(
        text("run=\"a, \\\"b\\\" \\\\ c\"", "run").unwrap(),
        "a, \"b\" \\ c"
    );
    assert_eq!(text(" run = ' spaced ' ", "run").unwrap(), " spaced ");
    // Quotes inside a value stay, and protect commas, for the shell to see.
    assert_eq!(
        text("run=echo 'a,b' \"c,d\"", "run").unwrap(),
        "echo 'a,b' \"c,d\""
    );
    assert_eq!(text("run='a' 'b,c'", "run").unwrap(), "'a' 'b,c'");
    assert_eq!(
        text("run=printf '%s\\n' x", "run").unwrap(),
        "printf '%s\\n' x"
    );
    assert_eq!(text("run=''", "run"), None, "empty means not given");
    // Lists still work next to quoted values.
    let p = Params::parse("command", CMD, "files=1,2,3,run='x,y'").unwrap();
    assert_eq!(
        (p.counts("files"), p.text("run")),
        (&[1, 2, 3][..], Some("x,y"))
    );
    for bad in ["run='open", "run=echo \"a,b", "run=echo a,b", "env=\"x\\\""] {
        let e = Params::parse("command", CMD, bad).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
        let e = e.to_string();
        assert!(e.contains("quote"), "{bad}: {e}");
    }
}

#[test]
fn size_mixes() {
    const MIX: &[ParamSpec] = &[
        ParamSpec {
            name: "bs",
            kind: ParamKind::SizeMix,
            default: "4KiB",
            unit: "bytes",
            help: "",
        },
        ParamSpec {
            name: "n",
            kind: ParamKind::Count,
            default: "1",
            unit: "",
            help: "",
        },
    ];
    let w = |lo, hi, weight| SizeWeight { lo, hi, weight };
    let p = Params::parse("job", MIX, "").unwrap();
    assert_eq!(p.size_mix("bs"), &[w(4096, 4096, 1)]);
    let p = Params::parse("job", MIX, "bs=4KiB-64KiB,n=2").unwrap();
    assert_eq!(p.size_mix("bs"), &[w(4096, 65536, 1)]);
    assert_eq!(p.count("n"), Some(2));
    assert_eq!(p.to_text_map()["bs"], "4KiB-64KiB");
    let p = Params::parse("job", MIX, "bs=4KiB:60,64KiB:40,n=3").unwrap();
    assert_eq!(p.size_mix("bs"), &[w(4096, 4096, 60), w(65536, 65536, 40)]);
    assert_eq!(p.to_text_map()["bs"], "4KiB:60,64KiB:40");
    for bad in [
        "bs=0",
        "bs=8KiB-4KiB",
        "bs=4KiB:x",
        "bs=4KiB:0",
        "bs=4KiB,x=1",
    ] {
        assert!(Params::parse("job", MIX, bad).is_err(), "{bad}");
    }
}

#[test]
fn errors_name_the_valid_choices() {
    let e = Params::parse("bonnie", SPECS, "sise=1G")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown parameter 'sise'") && e.contains("size, seeks"),
        "{e}"
    );
    let e = Params::parse("bonnie", SPECS, "mode=fast")
        .unwrap_err()
        .to_string();
    assert!(e.contains("stdio, syscall"), "{e}");
    let e = Params::parse("bonnie", SPECS, "seeks=many")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a whole number"), "{e}");
    assert!(Params::parse("bonnie", SPECS, "size").is_err());
    let err = Params::parse("bonnie", SPECS, "size=1Q").unwrap_err();
    assert_eq!(crate::error::exit_code(&err), 2);
}

/// Issue 31 items 5, 9, 10 and 12: values that panicked, could never finish, were
/// silently overridden or flooded the terminal are refused at parse time (exit 2).
#[test]
fn hostile_values_are_refused_naming_the_parameter() {
    use crate::workload::WorkloadSpec;
    let refused = |spec: &str, needle: &str| {
        let e = WorkloadSpec::parse(spec)
            .err()
            .unwrap_or_else(|| panic!("{spec}: accepted"));
        assert_eq!(crate::error::exit_code(&e), 2, "{spec}");
        let msg = format!("{e:#}");
        assert!(msg.contains(needle), "{spec}: {msg}");
        msg
    };
    // Item 5: Duration::from_secs_f64 panicked above ~1.8e19 s.
    for spec in [
        "job:runtime=1e20",
        "job:ramp=1e300",
        "io500:stonewall=1e20",
        "io500:ior_easy_s=2592001",
    ] {
        let msg = refused(spec, "30 days");
        assert!(msg.contains("bad value for '"), "{msg}");
    }
    for spec in ["job:runtime=NaN", "job:runtime=inf", "job:ramp=-1"] {
        refused(spec, "is not a time: give seconds");
    }
    refused("dbrandom:scale=NaN", "not a non-negative number");
    assert!(WorkloadSpec::parse("job:runtime=2592000,size=1MiB").is_ok());
    // Item 9: counts and sizes that cannot finish or overflow.
    let max = u64::MAX.to_string();
    for key in ["bonnie:seeks", "postmark:transactions", "dbrandom:cycles"] {
        refused(&format!("{key}={max}"), "10^12");
    }
    refused("bonnie:size=16777215TiB", "at most 1024TiB");
    refused(&format!("job:bs=4KiB:{max},8KiB:{max}"), "weight");
    // Item 10: a duplicate key, NUL in text.
    refused("bonnie:size=1GiB,size=2GiB", "'size' is given twice");
    refused("command:run=true\0", "NUL");
    // Item 12: a 100 kB value is cut in the message.
    let long = "x".repeat(100_000);
    let msg = refused(&format!("bonnie:seeks={long}"), "…(100000 bytes)");
    assert!(msg.len() < 1000, "{} bytes", msg.len());
    let msg = refused(&format!("{long}:a=1"), "…(100000 bytes)");
    assert!(msg.len() < 2000, "{} bytes", msg.len());
}

proptest::proptest! {
    /// Any workload string ends in a workload or an error, never a panic: a known
    /// workload with arbitrary `key=value` text, and arbitrary text as a whole.
    #[test]
    fn workload_strings_never_panic(
        w in 0usize..64,
        // No value is `.` or `..` alone: a path parameter must not walk this tree.
        rest in "[a-z_]{0,12}=[-0-9a-zA-Z:,'\"= ]{0,40}(\\.[0-9]{1,3})?(,[a-z_]{1,12}=[-0-9eE:KMGTiB]{1,12}(\\.[0-9]{1,3})?){0,3}",
        any in "\\PC{0,80}",
    ) {
        let registry = crate::workload::registry();
        let name = registry[w % registry.len()].name;
        let _ = crate::workload::WorkloadSpec::parse(&format!("{name}:{rest}"));
        let _ = crate::workload::WorkloadSpec::parse(&any);
        let _ = parse_size_mix(&any);
        let _ = crate::size::parse_size(&any);
    }
}

/// What a trial records of its sizes reads back to the same bytes: `bs=4000` was recorded
/// as `3.9KiB` (3994 bytes).
#[test]
fn recorded_sizes_parse_back_to_the_same_bytes() {
    let specs = crate::workload::job::INFO.params;
    let given = "bs=4000,size=4000000,rate=1536,offset_align=4096";
    let p = Params::parse("job", specs, given).unwrap();
    let text = p.to_text_map();
    assert_eq!(text["bs"], "4000B");
    assert_eq!(text["offset_align"], "4KiB");
    for (k, want) in [("size", 4_000_000), ("rate", 1536), ("offset_align", 4096)] {
        assert_eq!(parse_size(&text[k]), Ok(want), "{k}={}", text[k]);
    }
    assert_eq!(parse_size_mix(&text["bs"]).unwrap(), p.size_mix("bs"));

    let mix = "bs=4000-10000:3,1536:1";
    let p = Params::parse("job", specs, mix).unwrap();
    let text = p.to_text_map();
    assert_eq!(text["bs"], "4000B-10000B:3,1536B:1");
    assert_eq!(parse_size_mix(&text["bs"]).unwrap(), p.size_mix("bs"));
}

proptest::proptest! {
    /// Any size is recorded as text that parses back to it.
    #[test]
    fn recorded_bytes_roundtrip(n in 0u64..1u64 << 50) {
        proptest::prop_assert_eq!(parse_size(&crate::size::format_size_exact(n)), Ok(n));
    }
}

/// A parameter in seconds takes fio's time units too; another number does not.
#[test]
fn times_take_fio_units() {
    const T: &[ParamSpec] = &[
        ParamSpec {
            name: "runtime",
            kind: ParamKind::Float,
            default: "0",
            unit: "s",
            help: "",
        },
        ParamSpec {
            name: "scale",
            kind: ParamKind::Float,
            default: "1",
            unit: "",
            help: "",
        },
    ];
    for (text, secs) in [
        ("5", 5.0),
        ("5s", 5.0),
        ("0.5s", 0.5),
        ("500ms", 0.5),
        ("250us", 0.00025),
        ("2m", 120.0),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("1d", 86400.0),
    ] {
        let p = Params::parse("w", T, &format!("runtime={text}")).unwrap();
        assert_eq!(p.float("runtime"), Some(secs), "{text}");
    }
    for bad in ["5x", "s", "-1s", "31d"] {
        assert!(
            Params::parse("w", T, &format!("runtime={bad}")).is_err(),
            "{bad}"
        );
    }
    assert!(Params::parse("w", T, "scale=2m").is_err());
}
