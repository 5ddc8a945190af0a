//! Unit tests of `served`.

use super::*;
use crate::provision::fs::FakeHost;

#[test]
fn served_only_in_a_guest_and_says_what_is_missing() {
    let host = FakeHost {
        filesystems: "nodev\tnfsd\nnodev\tnfs\n",
        modules: "",
        programs: &["rpc.nfsd", "rpc.mountd", "exportfs", "rpcbind", "mount.nfs"],
    };
    let Support::No(why) = Protocol::Nfs4.support_on(&host, false) else {
        panic!("served on the host");
    };
    assert!(why.contains("only in a guest (run --kernel)"), "{why}");
    let Support::No(why) = Protocol::Nfs3.support_on(&host, true) else {
        panic!("no rpc.statd, yet supported");
    };
    assert!(why.ends_with("apt-get install nfs-common"), "{why}");
    let Support::No(why) = Protocol::Smb.support_on(&host, true) else {
        panic!("no cifs, yet supported");
    };
    assert!(
        why.contains("CIFS client") && why.contains("samba cifs-utils"),
        "{why}"
    );
}

#[test]
fn names_parse_both_ways() {
    for p in Protocol::ALL {
        assert_eq!(Protocol::parse(p.name()), Some(p));
    }
    assert_eq!(Protocol::parse("nfs4"), None);
}
