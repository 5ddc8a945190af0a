use super::*;

/// A trace line of `event` at `micros` µs after 10 s, `body` after the device.
fn line(micros: u64, event: &str, body: &str) -> String {
    format!("  kworker/u8:1-123     [001] .....  10.{micros:06}: block_{event}: 7,0 {body}")
}

fn issue(micros: u64, rwbs: &str, sector: u64, n: u64) -> String {
    line(
        micros,
        "rq_issue",
        &format!("{rwbs} {} () {sector} + {n} be,0,4 [kworker/u8:1]", n * 512),
    )
}

fn complete(micros: u64, rwbs: &str, sector: u64, n: u64) -> String {
    line(
        micros,
        "rq_complete",
        &format!("{rwbs} () {sector} + {n} be,0,4 [0]"),
    )
}

fn queue(micros: u64, rwbs: &str, sector: u64, n: u64) -> String {
    line(
        micros,
        "bio_queue",
        &format!("{rwbs} {sector} + {n} [jbd2/loop0-8]"),
    )
}

/// A log record: `W` at `sector` of `n` sectors, or `F`, served at `micros` µs after 10 s.
fn rec(kind: char, sector: u64, n: u64, micros: u64) -> Record {
    Record {
        kind: if kind == 'F' {
            Kind::Flush
        } else {
            Kind::Write
        },
        offset: sector * 512,
        len: n * 512,
        data_at: 0,
        at_ns: 10_000_000_000 + micros * 1000 + 300,
    }
}

fn trace(lines: &[String]) -> Trace {
    let mut text = String::from("# tracer: nop\n#\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    Trace::parse(&text)
}

#[test]
fn the_lines_of_a_trace_are_read_with_their_flags() {
    let t = trace(&[
        queue(1, "FWFSM", 100, 8),
        issue(2, "FF", 0, 0),
        complete(3, "WS", 2048, 1880),
        "  <idle>-0 [000] d.h.. 10.000004: block_rq_insert: 7,0 WS 4096 () 0 + 8 [x]".into(),
    ]);
    assert_eq!(t.events.len(), 3);
    let q = t.events[0];
    assert_eq!(
        (q.what, q.preflush, q.write, q.fua, q.flush),
        (What::Queue, true, true, true, false)
    );
    assert_eq!((q.sector, q.sectors, q.at_ns), (100, 8, 10_000_001_000));
    let f = t.events[1];
    assert_eq!(
        (f.what, f.flush, f.write, f.sectors),
        (What::Issue, true, false, 0)
    );
    let c = t.events[2];
    assert_eq!(
        (c.what, c.write, c.fua, c.preflush),
        (What::Complete, true, false, false)
    );
    assert_eq!((c.sector, c.sectors), (2048, 1880));
}

#[test]
fn a_write_in_flight_when_a_flush_was_issued_is_not_covered_by_it() {
    // Write A (sector 0) issued, then a flush; the recorder served A, then the flush;
    // A completed only after the flush was issued. Write B (sector 8) completed before.
    let t = trace(&[
        issue(10, "WS", 8, 8),
        complete(15, "WS", 8, 8),
        issue(20, "WS", 0, 8),
        queue(25, "FWS", 0, 0),
        issue(30, "FF", 0, 0),
        complete(45, "WS", 0, 8),
        complete(50, "FF", 0, 0),
        issue(60, "FF", 0, 0),
        complete(70, "FF", 0, 0),
    ]);
    let log = [
        rec('W', 8, 8, 12),
        rec('W', 0, 8, 40),
        rec('F', 0, 0, 41),
        rec('F', 0, 0, 65),
    ];
    let u = t.uncovered(&log).unwrap();
    assert_eq!(u.pending, BTreeMap::from([(3, vec![1])]));
    assert_eq!((u.flushes_in_flight, u.writes_in_flight), (1, 1));
    // The next flush was issued after A completed: nothing is left uncovered there.
    assert!(!u.pending.contains_key(&4));
}

/// A journal commit: its flush before (FF at 20), the commit block at sector 100 marked
/// FUA, and beside it a write at sector 500 that completed in between; then the block
/// layer's flush after the FUA write (FF at 60), with `meanwhile` queued before it; the
/// log as the recorder served it.
fn fua_commit(meanwhile: &[String]) -> (Vec<String>, Vec<Record>) {
    let mut lines = vec![
        queue(10, "FWFS", 100, 8),
        issue(20, "FF", 0, 0),
        complete(25, "FF", 0, 0),
        issue(30, "WS", 100, 8),
        issue(32, "WS", 500, 8),
        complete(40, "WS", 100, 8),
        complete(42, "WS", 500, 8),
    ];
    lines.extend_from_slice(meanwhile);
    lines.extend([issue(60, "FF", 0, 0), complete(70, "FF", 0, 0)]);
    let log = vec![
        rec('F', 0, 0, 22),
        rec('W', 100, 8, 35),
        rec('W', 500, 8, 38),
        rec('F', 0, 0, 65),
    ];
    (lines, log)
}

#[test]
fn the_flush_after_a_fua_write_covers_that_write_alone() {
    // On a FUA disk the flush at 60 would not be sent: sector 500 is not covered by it.
    let (mut lines, mut log) = fua_commit(&[]);
    // A flush asked for by the next fsync covers sector 500 at last.
    lines.extend([
        queue(80, "FWS", 0, 0),
        issue(90, "FF", 0, 0),
        complete(95, "FF", 0, 0),
    ]);
    log.push(rec('F', 0, 0, 92));
    let u = trace(&lines).uncovered(&log).unwrap();
    assert_eq!(u.pending, BTreeMap::from([(4, vec![2])]));
    assert_eq!((u.fua_writes, u.fua_flushes, u.beside_fua), (1, 1, 1));
    assert_eq!(u.writes_in_flight, 0);
}

#[test]
fn a_flush_that_also_serves_a_preflush_covers_everything_completed() {
    // Another bio asked for a flush before its data meanwhile: the flush at 60 is its
    // too, and covers every completed write.
    let (lines, log) = fua_commit(&[queue(50, "FWS", 900, 8)]);
    let u = trace(&lines).uncovered(&log).unwrap();
    assert!(u.pending.is_empty(), "{u:?}");
    assert_eq!(u.fua_flushes, 0);
}

#[test]
fn a_trace_that_does_not_match_the_log_is_refused() {
    let t = trace(&[issue(20, "FF", 0, 0), complete(30, "FF", 0, 0)]);
    // The log's only flush was served long after the traced one completed.
    let err = t.uncovered(&[rec('F', 0, 0, 500)]).unwrap_err();
    assert!(format!("{err:#}").contains("reached no flush"), "{err:#}");
    // A log flush the trace did not see covers everything before it.
    let t = trace(&[]);
    let u = t
        .uncovered(&[rec('W', 0, 8, 1), rec('F', 0, 0, 2)])
        .unwrap();
    assert_eq!(u, Uncovered::default());
}

#[test]
fn only_names_of_fsarenas_form_are_its_instances() {
    assert!(is_ours("fsarena-123-4"));
    for bad in [
        "fsarena-123",
        "fsarena-1-2-3",
        "other-1-2",
        "fsarena-1-x",
        "fsarena-../x-1",
        "",
    ] {
        assert!(!is_ours(bad), "{bad}");
    }
    assert!(remove("../../tracing_on").is_err());
}
