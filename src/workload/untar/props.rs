//! Tests of the tar reader against hostile headers and properties of the reader and the
//! confinement policy over generated archives (the fuzzing's stable counterpart).

use super::format::{entry_headers, padding, ustar_header, Members, BLOCK};
use super::tests::try_extract;
use super::validate;
use crate::workload::confined::components;
use proptest::prelude::*;

/// A header for `name` of `kind` whose 12-byte size field is `field` (base-256 when its
/// first byte has the top bit), with the checksum made right.
fn header_with_size_field(name: &[u8], kind: u8, field: [u8; 12]) -> [u8; BLOCK] {
    let mut b = ustar_header(name, kind, 0, 0o644, 0, b"");
    b[124..136].copy_from_slice(&field);
    b[148..156].fill(b' ');
    let sum: u64 = b.iter().map(|&x| u64::from(x)).sum();
    b[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    b
}

/// 2^64−1 in GNU base-256.
const MAX_SIZE_FIELD: [u8; 12] = [
    0x80, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];

/// A regular file `name` holding `data`, as an archive member.
fn member(name: &str, kind: u8, data: &[u8], link: &str) -> Vec<u8> {
    let mut out = entry_headers(
        name.as_bytes(),
        kind,
        data.len() as u64,
        0o644,
        0,
        link.as_bytes(),
    );
    out.extend_from_slice(data);
    out.resize(out.len() + padding(data.len() as u64) as usize, 0);
    out
}

/// A size of 2^64−1 on a FIFO, on a global pax header or in a pax `size`
/// record made `size + padding` wrap to 0 (a panic in a debug build), and what followed
/// was read as headers.
#[test]
fn a_size_of_2_pow_64_minus_1_is_refused_not_wrapped() {
    let evil = member("evil", b'0', b"x", "");
    let fifo = header_with_size_field(b"fifo", b'6', MAX_SIZE_FIELD);
    let global = header_with_size_field(b"g", b'g', MAX_SIZE_FIELD);
    let rec = b"29 size=18446744073709551615\n";
    let mut pax = ustar_header(b"PaxHeader", b'x', rec.len() as u64, 0o644, 0, b"").to_vec();
    pax.extend_from_slice(rec);
    pax.resize(pax.len() + padding(rec.len() as u64) as usize, 0);
    pax.extend(ustar_header(b"f", b'0', 0, 0o644, 0, b""));
    for (what, head) in [
        ("fifo", fifo.to_vec()),
        ("global pax", global.to_vec()),
        ("pax size", pax),
    ] {
        let mut bytes = head;
        bytes.extend_from_slice(&evil);
        bytes.extend([0u8; 2 * BLOCK]);
        let err = format!("{:#}", validate(&bytes).expect_err(what));
        assert!(err.contains("more than any archive holds"), "{what}: {err}");
    }
}

/// `x -> .` then `y -> x/x/x/x/../../../..` (four levels above the
/// root, read lexically through `x`). Symlinks are made as they are, pointing anywhere
/// (docs: untar, confined): making one is harmless, following one is what writes outside.
/// So both are made, and every member that would go through either is refused.
#[test]
fn a_symlink_chain_through_dot_is_made_and_never_followed() {
    let links = [
        member("x", b'2', b"", "."),
        member("y", b'2', b"", "x/x/x/x/../../../.."),
    ];
    let mut ok = links.concat();
    ok.extend([0u8; 2 * BLOCK]);
    assert_eq!(validate(&ok).unwrap().symlinks, 2);
    let (res, outside) = try_extract(ok.clone());
    assert_eq!(res.unwrap().symlinks, 2);
    assert!(outside.is_empty(), "{outside:?}");
    let through = [
        member("y/evil", b'0', b"x", ""),
        member("x/evil", b'0', b"x", ""),
        member("x/x/x/x/evil", b'0', b"x", ""),
        member("y/d/", b'5', b"", ""),
        member("h", b'1', b"", "y/f"),
    ];
    for m in through {
        let mut bytes = links.concat();
        bytes.extend(m);
        bytes.extend([0u8; 2 * BLOCK]);
        let err = format!("{:#}", validate(&bytes).unwrap_err());
        assert!(err.contains("never followed"), "validate: {err}");
        let (res, outside) = try_extract(bytes.clone());
        let err = format!("{:#}", res.unwrap_err());
        assert!(err.contains("never followed"), "extract: {err}");
        assert!(outside.is_empty(), "wrote {outside:?} outside the root");
    }
}

/// Names of generated members: plain, with `.`/`..`, absolute, through earlier names.
fn name() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec!["a", "b", "c", ".", "..", "", "x/y"]);
    (prop::bool::weighted(0.1), prop::collection::vec(part, 1..4))
        .prop_map(|(abs, parts)| format!("{}{}", if abs { "/" } else { "" }, parts.join("/")))
}

/// A member: (name, kind, link).
fn entry() -> impl Strategy<Value = (String, u8, String)> {
    let kind = prop::sample::select(vec![b'0', b'5', b'2', b'1', b'6']);
    let link = prop_oneof![name(), Just("/tmp".to_string()), Just("..".to_string())];
    (name(), kind, link)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the members, extraction writes nothing outside its root, and what the
    /// validation refuses, the extraction refuses too.
    #[test]
    fn extraction_never_leaves_the_root(entries in prop::collection::vec(entry(), 1..7)) {
        let mut bytes: Vec<u8> = entries
            .iter()
            .flat_map(|(n, k, l)| member(n, *k, if *k == b'0' { b"data" } else { b"" }, l))
            .collect();
        bytes.extend([0u8; 2 * BLOCK]);
        let checked = validate(&bytes);
        let (res, outside) = try_extract(bytes.clone());
        prop_assert!(outside.is_empty(), "{entries:?} wrote {outside:?}");
        if checked.is_err() {
            prop_assert!(res.is_err(), "{entries:?}: validate refused, extract did not");
        }
    }
}

proptest! {
    /// A header written is read back the same: name (GNU long name past 100 bytes),
    /// kind, size, mode, mtime and link.
    #[test]
    fn headers_round_trip(
        name in "[a-z0-9._/-]{1,300}",
        kind in prop::sample::select(vec![b'0', b'5', b'2', b'1', b'6', b'3']),
        size in 0u64..4096,
        mode in 0u32..0o7777,
        mtime in 0i64..(1 << 33),
        link in "[a-z0-9./]{0,100}",
    ) {
        let data = vec![7u8; size as usize];
        let mut bytes = entry_headers(name.as_bytes(), kind, size, mode, mtime, link.as_bytes());
        bytes.extend_from_slice(&data);
        bytes.resize(bytes.len() + padding(size) as usize, 0);
        bytes.extend([0u8; 2 * BLOCK]);
        let mut m = Members::new(Box::new(&bytes[..]));
        let h = m.next().unwrap().expect("a member");
        prop_assert_eq!(&h.name, name.as_bytes());
        prop_assert_eq!((h.kind, h.size, h.mode, h.mtime), (kind, size, mode, mtime));
        prop_assert_eq!(&h.link, link.as_bytes());
        prop_assert!(m.next().unwrap().is_none());
    }

    /// A name accepted by the policy is relative, without `.`, `..` or empty parts.
    #[test]
    fn accepted_names_never_leave(name in prop::collection::vec(any::<u8>(), 0..40)) {
        if let Ok(Some(parts)) = components(&name, "file") {
            prop_assert!(name.first() != Some(&b'/'));
            for p in parts {
                prop_assert!(!p.is_empty() && p != b"." && p != b".." && !p.contains(&b'/'));
            }
        }
    }

    /// Arbitrary bytes, and a valid archive with arbitrary bytes written over part of it,
    /// are read or refused, never a panic; file data never exceeds the archive's length.
    #[test]
    fn corrupted_archives_are_errors_not_panics(
        at in 0usize..3 * BLOCK,
        junk in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let mut bytes = member(&"d".repeat(150), b'0', &[1u8; 700], "");
        bytes.extend(member("l", b'2', b"", "d"));
        bytes.extend([0u8; 2 * BLOCK]);
        let end = (at + junk.len()).min(bytes.len());
        bytes[at..end].copy_from_slice(&junk[..end - at]);
        if let Ok(c) = validate(&bytes) {
            prop_assert!(c.bytes <= bytes.len() as u64);
        }
        let _ = validate(&junk);
    }
}
