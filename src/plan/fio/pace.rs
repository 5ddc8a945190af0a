//! How much and at what pace a job runs: fio's `loops` and `io_size`, and its
//! `thinktime` pauses.

use super::ini::Opt;
use super::options::{bytes_of, count_of, exact, Ctx, Get, Params};
use super::units;

/// fio's `loops` and `io_size` (`io_limit`) of a size-based job whose files hold `size`
/// bytes: `loops` and `io_size` parameters where they change what it does; whether it
/// runs more than one loop; `moves`, the I/O of a `size` under `filesize` × `nrfiles`,
/// when no `io_size` is given. A time-based job runs for its `runtime` whatever they say,
/// in fio as here (stated).
pub(super) fn loops_of(
    cx: &mut Ctx,
    get: Get,
    time_based: bool,
    size: Option<u64>,
    moves: Option<u64>,
    p: &mut Params,
) -> bool {
    let mut more = false;
    if let Some(o) = get("loops") {
        match count_of(cx, &o) {
            Some(0) => cx.bad(&o, "give 1 or more"),
            Some(n) if n > 1 && time_based => cx.note(format!(
                "{}: {}: a time-based job runs for its runtime, as in fio",
                o.at,
                o.text()
            )),
            Some(n) if n > 1 => {
                p.push(("loops", n.to_string()));
                more = true;
            }
            _ => {}
        }
    }
    let io_size = get("io_size");
    if let Some(n) = moves.filter(|_| io_size.is_none() && !time_based) {
        p.push(("io_size", exact(n)));
    }
    if let Some(o) = io_size {
        let v = o.value.clone().unwrap_or_default();
        let why = "io_size=N% (a share of size) is not read; give bytes";
        match bytes_of(cx, &o, &v, why) {
            Some(0) => {}
            Some(_) if time_based => cx.note(format!(
                "{}: {}: a time-based job runs for its runtime, as in fio",
                o.at,
                o.text()
            )),
            Some(n) if Some(n) != size => p.push(("io_size", exact(n))),
            _ => {}
        }
    }
    more
}

/// fio's `thinktime`, `thinktime_spin` (microseconds when no unit is given) and
/// `thinktime_blocks`: the job's pause after every so many requests.
pub(super) fn think_of(cx: &mut Ctx, get: Get, p: &mut Params) {
    let micros = |cx: &mut Ctx, o: &Opt| -> Option<f64> {
        let v = o.value.clone().unwrap_or_default();
        let v = v.trim();
        let s = if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            v.parse::<f64>().map(|n| n / 1e6).map_err(|e| e.to_string())
        } else {
            units::seconds(v)
        };
        s.map_err(|e| cx.bad(o, e)).ok()
    };
    let Some(o) = get("thinktime") else {
        return;
    };
    let Some(total) = micros(cx, &o).filter(|&t| t > 0.0) else {
        return;
    };
    p.push(("thinktime", format!("{total}")));
    if let Some(o) = get("thinktime_spin") {
        match micros(cx, &o) {
            Some(s) if s > total => cx.bad(&o, "longer than thinktime"),
            Some(s) if s > 0.0 => p.push(("thinktime_spin", format!("{s}"))),
            _ => {}
        }
    }
    if let Some(o) = get("thinktime_blocks") {
        match count_of(cx, &o) {
            Some(0) => cx.bad(&o, "give 1 or more"),
            Some(n) if n > 1 => p.push(("thinktime_blocks", n.to_string())),
            _ => {}
        }
    }
}

/// fio's `number_ios`: a size-based job of one block size stops after N requests, when
/// that comes before its `size` (or what `moves` already says): the bytes it moves then.
pub(super) fn ios_of(
    cx: &mut Ctx,
    o: &Opt,
    time_based: bool,
    bs: &str,
    size: Option<u64>,
    moves: Option<u64>,
) -> Option<u64> {
    let n = count_of(cx, o)?;
    let block = crate::size::parse_size(bs).ok();
    match (block, size) {
        _ if n == 0 => moves,
        (_, _) if time_based => {
            cx.ignored(o, "a time-based job runs for its runtime");
            moves
        }
        (Some(b), Some(s)) => {
            let cap = n.saturating_mul(b);
            let now = moves.unwrap_or(s);
            if cap < now {
                cx.note(format!(
                    "{}: {}: the job stops after {} ({n} requests of {}), as fio's",
                    o.at,
                    o.text(),
                    exact(cap),
                    exact(b)
                ));
                Some(cap)
            } else {
                moves
            }
        }
        _ => {
            cx.ignored(
                o,
                "with several block sizes fsarena stops a job by bytes, not requests",
            );
            moves
        }
    }
}

/// fio's `buffer_compress_percentage` (with `buffer_compress_chunk`, and `buffer_pattern`
/// for the compressible part): the job's `compress` share of zeros in each 4 KiB.
pub(super) fn compress_of(cx: &mut Ctx, get: Get, p: &mut Params) {
    let pattern = get("buffer_pattern");
    let Some(o) = get("buffer_compress_percentage") else {
        if let Some(o) = pattern {
            cx.ignored(
                &o,
                "a job's buffers hold --data, not a pattern, unless compressible",
            );
        }
        return;
    };
    let pct = match count_of(cx, &o) {
        Some(n @ 0..=100) => n,
        Some(_) => return cx.bad(&o, "give 0 to 100"),
        None => return,
    };
    if pct == 0 {
        return;
    }
    p.push(("compress", pct.to_string()));
    let chunk = get("buffer_compress_chunk")
        .and_then(|c| bytes_of(cx, &c, c.value.as_deref().unwrap_or(""), "give bytes"))
        .unwrap_or(512);
    let mut how = format!("{pct}% of each 4 KiB written is zeros");
    if chunk != 4096 {
        how += &format!(
            " (fio: of each {}; the same share compresses alike)",
            exact(chunk)
        );
    }
    if pattern.is_some() {
        how += "; fio writes buffer_pattern there, fsarena zeros";
    }
    cx.note(format!("{}: {}: {how}", o.at, o.text()));
}
