//! Tidy CSV export (`fsarena export RUN --csv`): one row per run × target × workload ×
//! repetition × phase × metric, in long format, so that pandas (`pd.read_csv`), R
//! (`read.csv`) and spreadsheets can filter and pivot it without knowing fsarena's JSON.
//!
//! The columns are [`COLUMNS`]; docs/export.md says what each holds. Fields are quoted as
//! RFC 4180 says (a field holding a comma, a double quote, CR or LF is put in double quotes,
//! its quotes doubled), because target names, parameters and error messages are user input.
//! Lines end with LF. Numbers keep full precision: integers as integers, floats in Rust's
//! shortest round-trip form (`{}`); a value that is NaN or infinite is left out (no row).
//!
//! Every trial is exported, whatever its status: the `trial_status` column tells which rows
//! come from a failed or interrupted trial (the summaries leave those out). Such a trial
//! also gets one row with metric `error` and its message in the `error` column.
//!
//! Kept by hand, not the `csv` crate: RFC 4180 quoting is one short function here, and
//! the writer needs nothing else.

use crate::figures::{self, Better};
use crate::result::{PhaseResult, RunResult, TargetInfo, Trial};
use crate::stats::METRICS;
use crate::workload::figures_of;
use anyhow::Result;

/// The header, in order.
pub const COLUMNS: &[&str] = &[
    "run_id",
    "started_at",
    "host",
    "kernel",
    "target",
    "fstype",
    "mkfs_opts",
    "mount_opts",
    "age",
    "workload",
    "params",
    "rep",
    "trial_status",
    "phase",
    "metric",
    "value",
    "unit",
    "better",
    "flags",
    "error",
    "engine",
    "engine_profile",
    "engine_settings",
    "engine_not_durable",
];

/// A value as written: integers stay integers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(u64),
    Float(f64),
}

impl Value {
    /// The text of the value, or `None` when it is NaN or infinite.
    pub fn text(self) -> Option<String> {
        match self {
            Value::Int(n) => Some(n.to_string()),
            Value::Float(x) if x.is_finite() => Some(format!("{x}")),
            Value::Float(_) => None,
        }
    }
}

/// One metric of one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: Value,
    pub unit: String,
    pub better: Better,
}

/// Figure `name` of phase `p` of workload `workload` with its value, and its unit and
/// better side as declared ([`crate::figures`]); `ops_per_s` takes the phase's own
/// operation unit (`seeks/s`).
fn metric(workload: &str, p: &PhaseResult, name: &str, value: Value) -> Metric {
    let unit = match name {
        "ops_per_s" if !p.ops_unit.is_empty() => p.ops_unit.as_str(),
        _ => figures::unit(figures_of(workload), &p.name, name),
    };
    Metric {
        name: name.to_string(),
        value,
        unit: unit.to_string(),
        better: figures::better(figures_of(workload), &p.name, name),
    }
}

/// Every metric of phase `p` of workload `workload` (its name, not its label), in export
/// order: [`crate::stats::METRICS`], then the other probe figures, then the workload's
/// extra figures (by name), then per operation kind its count and latency percentiles
/// (`ops:write`, `lat_p50_us:write`, …).
pub fn phase_metrics(workload: &str, p: &PhaseResult) -> Vec<Metric> {
    let mut out = Vec::new();
    for (name, get) in METRICS {
        if let Some(x) = get(p) {
            out.push(metric(workload, p, name, Value::Float(x)));
        }
    }
    let (lat, int, float) = (p.lat_us, Value::Int, Value::Float);
    let more: [(&str, Option<Value>); 19] = [
        ("lat_p90_us", lat.map(|l| float(l.p90))),
        ("lat_p999_us", lat.map(|l| float(l.p999))),
        ("ops", Some(int(p.ops))),
        ("bytes", Some(int(p.bytes))),
        ("bytes_read", Some(int(p.bytes_read))),
        ("bytes_written", Some(int(p.bytes_written))),
        ("cpu_user_s", Some(float(p.cpu_user_s))),
        ("cpu_sys_s", Some(float(p.cpu_sys_s))),
        ("dev_read_bytes", p.dev_read_bytes.map(int)),
        ("dev_write_bytes", p.dev_write_bytes.map(int)),
        ("dev_read_ios", p.dev_read_ios.map(int)),
        ("dev_write_ios", p.dev_write_ios.map(int)),
        ("dev_flushes", p.dev_flushes.map(int)),
        ("dev_discards", p.dev_discards.map(int)),
        ("dev_discard_bytes", p.dev_discard_bytes.map(int)),
        ("kernel_cpu_s", p.kernel_cpu_s.map(float)),
        ("space_used_bytes", p.space_used_bytes.map(int)),
        ("first_done_s", p.first_done_s.map(float)),
        ("last_done_s", p.last_done_s.map(float)),
    ];
    for (name, v) in more {
        if let Some(v) = v {
            out.push(metric(workload, p, name, v));
        }
    }
    for (name, x) in &p.extra {
        out.push(metric(workload, p, name, float(*x)));
    }
    for op in &p.lat_by_op {
        let l = op.lat_us;
        out.push(metric(
            workload,
            p,
            &format!("ops:{}", op.op),
            int(op.count),
        ));
        for (q, x) in [
            ("p50", l.p50),
            ("p90", l.p90),
            ("p99", l.p99),
            ("p999", l.p999),
            ("max", l.max),
        ] {
            out.push(metric(
                workload,
                p,
                &format!("lat_{q}_us:{}", op.op),
                float(x),
            ));
        }
    }
    out
}

/// Appends one field, quoted when RFC 4180 needs it.
pub fn push_field(line: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&field.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(field);
    }
}

/// One CSV line of `fields`, ending with LF.
pub fn line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut out = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(&mut out, f.as_ref());
    }
    out.push('\n');
    out
}

/// `k=v;k=v`, in key order.
pub fn params_text(t: &Trial) -> String {
    t.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The engine columns of a trial's rows (empty when it ran no database engine).
fn engine_fields(t: &Trial) -> [String; 4] {
    match &t.engine {
        Some(e) => [
            format!("{} {}", e.name, e.version),
            e.profile.clone().unwrap_or_default(),
            e.settings_text(),
            e.not_durable.join(" "),
        ],
        None => Default::default(),
    }
}

/// The columns that are the same for every row of a trial (up to `trial_status`).
fn trial_fields(run: &RunResult, t: &Trial) -> Vec<String> {
    let target = run.targets.iter().find(|x| x.name == t.target);
    let info = |f: fn(&TargetInfo) -> String| target.map(f).unwrap_or_default();
    vec![
        run.run_id.clone(),
        run.started_at.clone(),
        run.host.hostname.clone(),
        run.host.kernel.clone(),
        t.target.clone(),
        info(|x| x.fstype.clone()),
        info(|x| x.mkfs_opts.join(" ")),
        info(|x| x.mount_opts.clone()),
        info(|x| x.age.clone().unwrap_or_default()),
        t.label.clone(),
        params_text(t),
        t.rep.to_string(),
        t.status.clone(),
    ]
}

/// Reads CSV as [`export`] writes it (RFC 4180: quoted fields may hold commas, doubled
/// quotes and newlines; every record ends with LF) into records of fields.
pub fn read(text: &str) -> Result<Vec<Vec<String>>> {
    let mut records = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if quoted || !field.is_empty() || !record.is_empty() {
        anyhow::bail!("CSV must end with LF, outside quotes");
    }
    Ok(records)
}

/// `export --csv`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "csv",
    export: Some(
        "Tidy CSV with a header: one row per run × target × workload × repetition × phase × \
         metric, values in full precision, every trial (see its trial_status column). Columns \
         and metrics: docs/export.md",
    ),
    report: None,
    run: None,
    writes: super::Writes::Bytes(export),
};

/// One row per run × target × workload × repetition × phase × metric, with a header.
pub fn export(run: &RunResult) -> Result<Vec<u8>> {
    let mut out = line(COLUMNS);
    for t in &run.trials {
        let base = trial_fields(run, t);
        let engine = engine_fields(t);
        for p in &t.phases {
            let flags = p.flags.join(";");
            for m in phase_metrics(&t.workload, p) {
                let Some(value) = m.value.text() else {
                    continue;
                };
                let mut row = base.clone();
                row.extend([
                    p.name.clone(),
                    m.name,
                    value,
                    m.unit,
                    m.better.as_str().to_string(),
                    flags.clone(),
                    String::new(),
                ]);
                row.extend(engine.iter().cloned());
                out.push_str(&line(&row));
            }
        }
        if t.status != "ok" {
            let mut row = base;
            row.extend(["", "error", "", "", "", ""].map(String::from));
            row.push(t.error.clone().unwrap_or_else(|| t.status.clone()));
            row.extend(engine.iter().cloned());
            out.push_str(&line(&row));
        }
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::hist::Percentiles;
    use crate::report::fixture_with as run;
    use crate::result::OpLatency;

    fn pct(x: f64) -> Percentiles {
        Percentiles {
            p50: x,
            p90: x,
            p99: x,
            p999: x,
            max: x,
        }
    }

    fn trial(target: &str, status: &str, phases: Vec<PhaseResult>) -> Trial {
        Trial {
            target: target.into(),
            workload: "bonnie".into(),
            label: "bonnie".into(),
            params: [("size", "1MiB"), ("odd", "a,b=\"c\"")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            rep: 2,
            status: status.into(),
            error: (status != "ok").then(|| "disk full,\n\"ENOSPC\"".into()),
            provision: Default::default(),
            phases,
            peak_rss_bytes: 0,
            log: None,
            elapsed_s: None,
            ranks: Vec::new(),
            disturbance: None,
            engine: None,
        }
    }

    #[test]
    fn quoting_follows_rfc4180() {
        assert_eq!(line(&["a", "b c", ""]), "a,b c,\n");
        assert_eq!(line(&["x,y"]), "\"x,y\"\n");
        assert_eq!(line(&["say \"hi\""]), "\"say \"\"hi\"\"\"\n");
        assert_eq!(line(&["two\nlines", "cr\r"]), "\"two\nlines\",\"cr\r\"\n");
        let nasty = ["ext4,\"fast\"\nnew", "plain", "a\"b"];
        assert_eq!(read(&line(&nasty)).unwrap(), vec![nasty.to_vec()]);
        assert!(read("a,b").is_err(), "no final LF");
        assert!(read("\"open\n").is_err(), "unterminated quote");
    }

    #[test]
    fn numbers_keep_full_precision_and_skip_non_finite() {
        assert_eq!(
            Value::Float(0.1 + 0.2).text().unwrap(),
            "0.30000000000000004"
        );
        assert_eq!(
            Value::Float(15351962.106091501).text().unwrap(),
            "15351962.106091501"
        );
        assert_eq!(Value::Float(2.0).text().unwrap(), "2");
        assert_eq!(Value::Int(u64::MAX).text().unwrap(), "18446744073709551615");
        let x = 1.0 / 3.0;
        assert_eq!(Value::Float(x).text().unwrap().parse::<f64>().unwrap(), x);
        assert_eq!(Value::Float(f64::NAN).text(), None);
        assert_eq!(Value::Float(f64::INFINITY).text(), None);
    }

    #[test]
    fn metric_names_units_and_directions() {
        let p = PhaseResult {
            name: "seeks".into(),
            wall_s: 2.0,
            ops_per_s: 100.0,
            ops_unit: "seeks/s".into(),
            lat_us: Some(pct(5.0)),
            lat_by_op: vec![OpLatency {
                op: "seek".into(),
                count: 200,
                samples: 200,
                lat_us: pct(7.5),
                buckets: vec![],
            }],
            extra: [
                ("read_bytes_per_s".to_string(), 3.0),
                ("total_s".into(), f64::NAN),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let ms = phase_metrics("postmark", &p);
        let get = |n: &str| ms.iter().find(|m| m.name == n).unwrap().clone();
        assert_eq!(get("ops_per_s").unit, "seeks/s");
        assert_eq!(get("ops_per_s").better, Better::Higher);
        assert_eq!(get("wall_s").better, Better::Lower);
        assert_eq!(get("lat_p99_us").value, Value::Float(5.0));
        assert_eq!(get("ops:seek").value, Value::Int(200));
        assert_eq!(get("lat_max_us:seek").value, Value::Float(7.5));
        assert_eq!(get("lat_max_us:seek").unit, "us");
        assert_eq!(get("read_bytes_per_s").unit, "bytes/s");
        assert_eq!(
            (get("total_s").unit, get("total_s").better),
            ("s".into(), Better::Lower)
        );
        let plain = phase_metrics("bonnie", &PhaseResult::default());
        assert_eq!(
            plain.iter().find(|m| m.name == "ops_per_s").unwrap().unit,
            "ops/s"
        );
        // No write amplification when nothing was written: no row rather than an empty one.
        assert!(ms.iter().all(|m| m.name != "write_amplification"));
    }

    /// The units and sides the workloads declare, not what the names' endings suggest:
    /// `score_bw_gib_s` is a bandwidth, `children_cpu_user_s` CPU time.
    #[test]
    fn extra_figures_carry_their_declared_unit_and_side() {
        let phase = |name: &str, extra: &[(&str, f64)]| PhaseResult {
            name: name.into(),
            extra: extra.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Default::default()
        };
        let of = |workload: &str, p: &PhaseResult, n: &str| {
            let m = phase_metrics(workload, p);
            let m = m.iter().find(|m| m.name == n).unwrap();
            (m.unit.clone(), m.better)
        };
        let io500 = phase(
            "mdtest-hard-delete",
            &[
                ("score_bw_gib_s", 2.5),
                ("score_total", 1.2),
                ("io500_figure", 9.0),
            ],
        );
        let gib = ("GiB/s".to_string(), Better::Higher);
        assert_eq!(of("io500", &io500, "score_bw_gib_s"), gib);
        assert_eq!(of("io500", &io500, "score_total").1, Better::Higher);
        assert_eq!(of("io500", &io500, "io500_figure").0, "kIOPS");
        let write = phase("ior-easy-write", &[("io500_figure", 1.5)]);
        assert_eq!(of("io500", &write, "io500_figure"), gib);
        let cmd = phase("run", &[("children_cpu_user_s", 1.0), ("command_s", 2.0)]);
        let cpu = ("s".to_string(), Better::None);
        assert_eq!(of("command", &cmd, "children_cpu_user_s"), cpu);
        assert_eq!(
            of("command", &cmd, "command_s"),
            ("s".into(), Better::Lower)
        );
        let compile = phase("create", &[("compilebench_mb_per_s", 40.0)]);
        let mb = ("MB/s".to_string(), Better::Higher);
        assert_eq!(of("compile", &compile, "compilebench_mb_per_s"), mb);
    }

    #[test]
    fn rows_carry_trial_columns_and_failed_trials_say_why() {
        let phase = PhaseResult {
            name: "write_block".into(),
            wall_s: 1.5,
            flags: vec!["short".into(), "not-synced".into()],
            extra: [("nan_per_s".to_string(), f64::NAN)].into_iter().collect(),
            ..Default::default()
        };
        let r = run(vec![
            trial("ext4", "ok", vec![phase.clone()]),
            trial("my,dir", "failed", vec![phase]),
        ]);
        let text = String::from_utf8(export(&r).unwrap()).unwrap();
        let rows = read(&text).unwrap();
        assert_eq!(rows[0], COLUMNS);
        assert!(rows.iter().all(|r| r.len() == COLUMNS.len()));
        let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        let wall = rows.iter().find(|r| r[col("metric")] == "wall_s").unwrap();
        assert_eq!(wall[col("target")], "ext4");
        assert_eq!(wall[col("fstype")], "ext4");
        assert_eq!(wall[col("value")], "1.5");
        assert_eq!(wall[col("params")], "odd=a,b=\"c\";size=1MiB");
        assert_eq!(wall[col("rep")], "2");
        assert_eq!(wall[col("flags")], "short;not-synced");
        assert!(rows.iter().all(|r| r[col("metric")] != "nan_per_s"));
        let err: Vec<_> = rows
            .iter()
            .filter(|r| r[col("metric")] == "error")
            .collect();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0][col("target")], "my,dir");
        assert_eq!(err[0][col("trial_status")], "failed");
        assert_eq!(err[0][col("error")], "disk full,\n\"ENOSPC\"");
        assert_eq!(err[0][col("value")], "");
        // The failed trial's measured phase is still there, marked by its status.
        assert!(rows
            .iter()
            .any(|r| r[col("target")] == "my,dir" && r[col("metric")] == "wall_s"));
    }
}
