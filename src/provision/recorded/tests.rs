use super::*;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;

#[test]
fn a_sparse_copy_keeps_the_bytes_and_the_holes() {
    let tmp = tempfile::tempdir().unwrap();
    let from_path = tmp.path().join("from");
    let mut from = File::create(&from_path).unwrap();
    let len: u64 = 64 << 20;
    from.set_len(len).unwrap();
    for (at, byte) in [(0u64, 1u8), (8 << 20, 2), (len - 4096, 3)] {
        from.seek(SeekFrom::Start(at)).unwrap();
        from.write_all(&vec![byte; 4096]).unwrap();
    }
    from.sync_all().unwrap();
    let from = File::open(&from_path).unwrap();
    let to_path = tmp.path().join("to");
    let to = loopdev::create_image(&to_path).unwrap();
    sparse_copy(&from, &to, len).unwrap();
    assert_eq!(
        std::fs::read(&from_path).unwrap(),
        std::fs::read(&to_path).unwrap()
    );
    let used = to.metadata().unwrap().blocks() * 512;
    assert!(used < 8 << 20, "{used} bytes allocated for 12 KiB of data");
}

#[test]
fn a_recorder_record_reads_back_and_is_described() {
    let r = Resource::Recorder {
        mountpoint: "/var/tmp/img/ext4-recorded-9-1/fuse".into(),
        pid: Some(42),
    };
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"kind\":\"recorder\""), "{json}");
    assert_eq!(serde_json::from_str::<Resource>(&json).unwrap(), r);
    let without: Resource =
        serde_json::from_str(r#"{"kind":"recorder","mountpoint":"/var/tmp/img/x/fuse"}"#).unwrap();
    assert_eq!(
        without,
        Resource::Recorder {
            mountpoint: "/var/tmp/img/x/fuse".into(),
            pid: None
        }
    );
    assert_eq!(
        state::describe(&r),
        "write recorder (FUSE mount /var/tmp/img/ext4-recorded-9-1/fuse)"
    );
}

#[test]
fn stopping_a_recorder_that_is_not_there_does_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mp = tmp.path().join("fuse");
    // A process that is not a recorder, named by the record: left alone.
    let mut other = Command::new("sleep").arg("30").spawn().unwrap();
    let done = state::stop_recorder(&mp, Some(other.id() as i32)).unwrap();
    assert!(!done);
    assert!(
        other.try_wait().unwrap().is_none(),
        "another process was stopped"
    );
    other.kill().unwrap();
    other.wait().unwrap();
}
