//! fio's `rw` (`readwrite`) and its offset modifier `rw=…:N`.

use super::ini::Opt;
use super::options::{bytes_of, exact, Ctx};

/// `rw` (`readwrite`), and with `rw=read:N` on a sequential job the hole (or, negative,
/// the step back) after each request, as the job's `seq_add`.
pub(super) fn rw_of(cx: &mut Ctx, o: Option<Opt>) -> (String, Option<String>) {
    let Some(o) = o else {
        return ("read".into(), None);
    };
    let v = o.value.clone().unwrap_or_default();
    let (kind, add) = match v.split_once(':') {
        Some((k, n)) => (k.trim(), Some(n.trim())),
        None => (v.trim(), None),
    };
    let rw: String = match kind {
        r @ ("read" | "write" | "randread" | "randwrite" | "randrw") => r.into(),
        "rw" | "readwrite" => "rw".into(),
        t if t.contains("trim") => {
            cx.bad(
                &o,
                "fsarena's job engine has no trim (and fio's trim of a file fails: its \
                 BLKDISCARD is for devices, ENOTTY)",
            );
            "read".into()
        }
        _ => {
            cx.bad(
                &o,
                "not an rw fsarena's job engine runs (read, write, randread, randwrite, randrw)",
            );
            "read".into()
        }
    };
    let Some(add) = add else {
        return (rw, None);
    };
    if rw.starts_with("rand") {
        cx.bad(
            &o,
            "fsarena's job engine has no offset modifier for random jobs (rw=randread:N, \
             sequential runs of N requests from each random offset)",
        );
        return (rw, None);
    }
    if rw == "rw" {
        cx.bad(
            &o,
            "fsarena's job engine takes rw=…:N holes on read and write jobs, not on mixed ones",
        );
        return (rw, None);
    }
    let (neg, abs) = match add.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, add),
    };
    let add = bytes_of(cx, &o, abs, "a hole is a size, not a share")
        .map(|b| format!("{}{}", if neg { "-" } else { "" }, exact(b)));
    (rw, add)
}
