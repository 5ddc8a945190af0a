//! Unit tests of `net`.

use super::*;

#[test]
fn sources_that_would_be_options_or_lack_a_host_are_refused() {
    for bad in [
        "sshfs=-oProxyCommand=reboot:/x",
        "nfs=-o:/x",
        "nfs=:/",
        "cifs=///",
        "cifs=//srv",
        "cifs=srv/share",
        "sshfs=@:/",
        "sshfs=-u@h:/p",
        "nfs=ho st:/x",
        "nfs=server",
    ] {
        assert!(NetSpec::parse(bad).is_err(), "{bad} accepted");
    }
    for good in [
        "nfs=server:/export,vers=4.2",
        "nfs=[fd00::1]:/export",
        "cifs=//srv/share/sub,credentials=/root/.smbcred",
        "sshfs=user@host:/path,port=22",
        "sshfs=127.0.0.1:/tmp",
    ] {
        assert!(NetSpec::parse(good).is_ok(), "{good} refused");
    }
}

/// Each option that runs a program, in the spellings sshfs and ssh accept: refused
/// without the flag, naming the option and the flag; accepted with it.
#[test]
fn ssh_options_that_run_a_program_need_the_flag() {
    let cases = [
        ("ProxyCommand=sh -c 'reboot'", "ProxyCommand"),
        ("proxycommand=reboot", "proxycommand"),
        ("PROXYCOMMAND = reboot", "PROXYCOMMAND"),
        ("ProxyCommand reboot", "ProxyCommand"),
        ("SSHOPT=ProxyCommand=reboot", "ProxyCommand"),
        ("ProxyJump=evil@jump", "ProxyJump"),
        ("LocalCommand=reboot", "LocalCommand"),
        ("PermitLocalCommand=yes", "PermitLocalCommand"),
        ("KnownHostsCommand=/bin/reboot", "KnownHostsCommand"),
        ("RemoteCommand=reboot", "RemoteCommand"),
        ("Match=exec reboot", "Match"),
        ("match exec reboot", "match"),
        ("Include=/tmp/evil.conf", "Include"),
        ("PKCS11Provider=/tmp/evil.so", "PKCS11Provider"),
        ("SecurityKeyProvider=/tmp/evil.so", "SecurityKeyProvider"),
        ("XAuthLocation=/tmp/evil", "XAuthLocation"),
        ("ForwardX11=yes", "ForwardX11"),
        ("ForwardX11Trusted=yes", "ForwardX11Trusted"),
        ("EnableSSHKeysign=yes", "EnableSSHKeysign"),
        ("ProxyUseFdpass=yes", "ProxyUseFdpass"),
        ("ssh_command=sh -c reboot", "ssh_command"),
        ("SSH_COMMAND=reboot", "SSH_COMMAND"),
        ("ssh_cmd=reboot", "ssh_cmd"),
        ("sftp_server=/tmp/evil", "sftp_server"),
        ("sftp_server=sh -c reboot", "sftp_server"),
        ("modules=evil", "modules"),
        ("-F /tmp/evil.conf", "-F /tmp/evil.conf"),
        ("-oProxyCommand=reboot", "-oProxyCommand=reboot"),
    ];
    for (opt, name) in cases {
        let text = format!("sshfs=u@h:/p,port=22,{opt}");
        let e = NetSpec::parse(&text).expect_err(&text);
        assert!(
            e.contains(&format!("'{name}'")) && e.contains("--allow-ssh-commands"),
            "{e}"
        );
        let spec = NetSpec::parse_allowing(&text, true).unwrap_or_else(|e| panic!("{e}"));
        assert!(spec.opts.ends_with(opt.trim()), "{spec:?}");
    }
    for fine in [
        "sshfs=u@h:/p,sftp_server=sftp",
        "sshfs=u@h:/p,HostKeyAlias=match,IdentityFile=/root/.ssh/id_include",
        "sshfs=u@h:/p,reconnect,ServerAliveInterval=15,port=2222",
        "nfs=srv:/x,proxycommand=x",
    ] {
        assert!(NetSpec::parse(fine).is_ok(), "{fine} refused");
    }
    for (key, _) in SSH_COMMAND_OPTIONS {
        assert_eq!(*key, key.to_ascii_lowercase());
        let text = format!("sshfs=u@h:/p,{}=/x", key.to_uppercase());
        assert!(NetSpec::parse(&text).is_err(), "{text} accepted");
    }
}

fn line(spec: &str) -> String {
    NetSpec::parse(spec)
        .unwrap()
        .mount_command("/mnt/x")
        .0
        .join(" ")
}

#[test]
fn mount_argv_per_kind() {
    assert_eq!(
        line("nfs=srv:/export,vers=4.2,proto=tcp"),
        "mount -t nfs -o vers=4.2,proto=tcp srv:/export /mnt/x"
    );
    assert_eq!(line("nfs=srv:/export"), "mount -t nfs srv:/export /mnt/x");
    assert_eq!(
        line("cifs=//srv/share,username=bench,vers=3.1.1"),
        "mount.cifs //srv/share /mnt/x -o username=bench,vers=3.1.1"
    );
    assert_eq!(
        line("sshfs=root@127.0.0.1:/tmp/x,port=2222,IdentityFile=/k"),
        "sshfs root@127.0.0.1:/tmp/x /mnt/x -o BatchMode=yes,port=2222,IdentityFile=/k"
    );
    let s = NetSpec::parse("sshfs=u@h:/p").unwrap();
    assert_eq!(s.name(), "sshfs:u@h:/p");
    assert_eq!(s.slug(), "sshfs-u_h_p");
    assert_eq!(s.opts, "");
}

#[test]
fn a_cifs_password_goes_to_the_environment_never_argv() {
    let spec = NetSpec::parse("cifs=//srv/share,username=u,password=a,,b,vers=3,pass=c d").unwrap();
    let (argv, env) = spec.mount_command("/mnt/x");
    assert_eq!(
        argv.join(" "),
        "mount.cifs //srv/share /mnt/x -o username=u,vers=3"
    );
    assert_eq!(env, [("PASSWD".to_string(), "c d".to_string())]);
    let (argv, env) = NetSpec::parse("cifs=//s/x,password=a,,b")
        .unwrap()
        .mount_command("/m");
    assert_eq!(argv.join(" "), "mount.cifs //s/x /m");
    assert_eq!(
        env[0].1, "a,b",
        "a doubled comma is a comma of the password"
    );
    let (argv, env) = NetSpec::parse("cifs=//s/x,user=dom/bench%p%q,ro")
        .unwrap()
        .mount_command("/m");
    assert_eq!(argv.join(" "), "mount.cifs //s/x /m -o user=dom/bench,ro");
    assert_eq!(env[0].1, "p%q");
    // What a report shows of the options.
    let dir = tempfile::tempdir().unwrap();
    let env = Env::for_test("t", dir.path(), &dir.path().join("state"));
    let t = NetTarget::new(&spec, &env);
    assert_eq!(
        t.info().requested_mount_opts,
        "username=u,password=***,vers=3,pass=***"
    );
}

#[test]
fn secrets_that_would_reach_argv_are_refused() {
    for bad in [
        "cifs=//s/x,password2=p",
        "nfs=srv:/x,password=p",
        "sshfs=u@h:/p,ssh_token=t",
    ] {
        let e = NetSpec::parse(bad).unwrap_err();
        assert!(
            e.contains("ps") && !e.contains("=p,") && !e.ends_with("=p"),
            "{e}"
        );
        assert!(!e.contains("=t"), "{e}");
    }
    // A doubled comma escapes only inside a CIFS password: after any other option it
    // separates, as sshfs, mount(8) and the kernel read it.
    for kind in ["sshfs=a@[0a]:/", "nfs=srv:/x"] {
        assert!(NetSpec::parse(&format!("{kind},A=,,password=aaaa")).is_err());
    }
    let (argv, env) = NetSpec::parse("cifs=//s/x,A=,,password=aaaa")
        .unwrap()
        .mount_command("/m");
    assert!(!argv.iter().any(|a| a.contains("aaaa")), "{argv:?}");
    assert_eq!(env[0].1, "aaaa");
}

#[test]
fn credentials_files_are_checked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cred");
    std::fs::write(&file, "username=u\npassword=p\n").unwrap();
    let spec = NetSpec::parse(&format!("cifs=//s/x,credentials={}", file.display())).unwrap();
    assert_eq!(spec.credentials_file(), Some(file.clone()));
    let (argv, env) = spec.mount_command("/m");
    assert!(argv
        .join(" ")
        .ends_with(&format!("-o credentials={}", file.display())));
    assert!(env.is_empty());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(spec.check_credentials(), Ok(None));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let w = spec.check_credentials().unwrap().expect("a warning");
    assert!(
        w.contains("readable by others") && w.contains("chmod 600"),
        "{w}"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let w = spec.check_credentials().unwrap().expect("a warning");
    assert!(w.contains("its group"), "{w}");
    let missing = NetSpec::parse("cifs=//s/x,cred=/no/such/file").unwrap();
    assert!(missing
        .check_credentials()
        .unwrap_err()
        .contains("/no/such/file"));
}

#[test]
fn bad_specs_say_what_is_valid() {
    let e = NetSpec::parse("nfs").unwrap_err();
    assert!(e.contains("KIND=SOURCE"), "{e}");
    let e = NetSpec::parse("afs=x:/y").unwrap_err();
    assert!(e.contains("valid: nfs, cifs, sshfs"), "{e}");
    let e = NetSpec::parse("cifs=srv:/share").unwrap_err();
    assert!(e.contains("//server/share"), "{e}");
    let e = NetSpec::parse("cifs=srv:/share,password=hunter2").unwrap_err();
    assert!(e.contains("password=***") && !e.contains("hunter2"), "{e}");
    let e = NetSpec::parse("nfs=srv").unwrap_err();
    assert!(e.contains("server:/export"), "{e}");
}

#[test]
fn support_says_why_not() {
    use crate::provision::fs::FakeHost;
    let h = FakeHost {
        filesystems: "nodev\tfuse\n\text4\n",
        modules: "",
        programs: &["sshfs"],
    };
    assert_eq!(NetKind::Sshfs.support_on(&h), Support::Yes);
    assert_eq!(
        NetKind::Nfs.support_on(&h),
        Support::No(
            "kernel 6.18.0-test has no nfs client (not in /proc/filesystems, no nfs \
                 module); mount.nfs missing: apt-get install nfs-common"
                .into()
        )
    );
    let with_module = FakeHost {
        filesystems: "",
        modules: "kernel/fs/smb/client/cifs.ko.xz: kernel/lib/x.ko",
        programs: &["mount.cifs"],
    };
    assert_eq!(NetKind::Cifs.support_on(&with_module), Support::Yes);
}
